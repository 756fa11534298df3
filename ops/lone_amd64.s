#include "textflag.h"

// The fused lone-key loops (groupby_fused.go) in assembly, for integer
// keys of every width: the same operations in the same row order as the
// Go loops, so the same answers, float sums included. A key is loaded
// sign- or zero-extended to 64 bits (the macros' LD, with the key's size
// SC); its slot is that less m (the smallest key's sort key, with its top
// bit flipped for a signed key: sortKeyInt(v) - mn). A slot at or past the
// tables' length is a key written since the range was taken: bad is set
// and the row skipped, as the Go loops do.
//
// Why assembly: Go compiled these loops so that a row cost 2.3-2.5 ns
// where 1.6-1.7 do (10^7 int64 sums by 100 keys, one worker: 23-24 ms
// against 16.5-17; by int8 keys 26 against 17; q4's means 51-55 against
// 43-44).
// The compiler spilled registers in the loop, or laid it out so that one
// more operation a row (the sign OR) cost 8 ms; unrolling in Go did not
// help.
//
// The keys (ks, n of them), values and tables belong to the caller, which
// keeps them alive and sized: n values at least, every table of the same
// length. No pointer is stored, so no write barrier is needed. The loops
// are not preemptible: the Go side calls them on blocks of rows
// (loneAsmBlock), so that a garbage collection's stop waits for one block.

// SUMS: sm[slot] += x; sg |= x | (x-1). Two rows a turn.
// func(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
#define SUMS(LD, SC) \
	MOVQ ks+0(FP), SI \
	MOVQ n+8(FP), BX \
	MOVQ xs_base+16(FP), DI \
	MOVQ m+40(FP), R8 \
	MOVQ sm_base+48(FP), R10 \
	MOVQ sm_len+56(FP), R9 \
	XORQ CX, CX \
	XORQ R12, R12 \
	MOVB $0, bad+72(FP) \
	JMP  check \
	PCALIGN $32 \
pair: \
	LD   (SI)(CX*SC), AX \
	LD   SC(SI)(CX*SC), DX \
	SUBQ R8, AX \
	SUBQ R8, DX \
	CMPQ AX, R9 \
	JAE  one \
	CMPQ DX, R9 \
	JAE  one \
	MOVQ (DI)(CX*8), R11 \
	MOVQ 8(DI)(CX*8), R14 \
	ADDQ R11, (R10)(AX*8) \
	ADDQ R14, (R10)(DX*8) \
	LEAQ -1(R11), AX \
	ORQ  R11, AX \
	ORQ  AX, R12 \
	LEAQ -1(R14), DX \
	ORQ  R14, DX \
	ORQ  DX, R12 \
	ADDQ $2, CX \
check: \
	LEAQ 2(CX), AX \
	CMPQ AX, BX \
	JLE  pair \
	CMPQ CX, BX \
	JGE  done \
one: \
	LD   (SI)(CX*SC), AX \
	SUBQ R8, AX \
	MOVQ (DI)(CX*8), R11 \
	INCQ CX \
	CMPQ AX, R9 \
	JAE  outside \
	ADDQ R11, (R10)(AX*8) \
	LEAQ -1(R11), AX \
	ORQ  R11, AX \
	ORQ  AX, R12 \
	JMP  check \
outside: \
	MOVB $1, bad+72(FP) \
	JMP  check \
done: \
	MOVQ R12, sg+80(FP) \
	RET

// ROWS: sm[slot] += x; r[slot]++. With MEANS, also ma |= x ^ x>>63 (R13).
// Two rows a turn.
// func(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool[, ma uint64])
#define ROWS(LD, SC, MA0, MA1, MAONE, RESULT) \
	MOVQ ks+0(FP), SI \
	MOVQ n+8(FP), BX \
	MOVQ xs_base+16(FP), DI \
	MOVQ m+40(FP), R8 \
	MOVQ sm_base+48(FP), R10 \
	MOVQ sm_len+56(FP), R9 \
	MOVQ r_base+72(FP), R12 \
	XORQ CX, CX \
	XORQ R13, R13 \
	MOVB $0, bad+96(FP) \
	JMP  check \
	PCALIGN $32 \
pair: \
	LD   (SI)(CX*SC), AX \
	LD   SC(SI)(CX*SC), DX \
	SUBQ R8, AX \
	SUBQ R8, DX \
	CMPQ AX, R9 \
	JAE  one \
	CMPQ DX, R9 \
	JAE  one \
	MOVQ (DI)(CX*8), R11 \
	MOVQ 8(DI)(CX*8), R14 \
	INCQ (R12)(AX*8) \
	ADDQ R11, (R10)(AX*8) \
	INCQ (R12)(DX*8) \
	ADDQ R14, (R10)(DX*8) \
	MA0 \
	MA1 \
	ADDQ $2, CX \
check: \
	LEAQ 2(CX), AX \
	CMPQ AX, BX \
	JLE  pair \
	CMPQ CX, BX \
	JGE  done \
one: \
	LD   (SI)(CX*SC), AX \
	SUBQ R8, AX \
	MOVQ (DI)(CX*8), R11 \
	INCQ CX \
	CMPQ AX, R9 \
	JAE  outside \
	INCQ (R12)(AX*8) \
	ADDQ R11, (R10)(AX*8) \
	MAONE \
	JMP  check \
outside: \
	MOVB $1, bad+96(FP) \
	JMP  check \
done: \
	RESULT \
	RET

// The bound of MEANS: R13 |= x ^ x>>63, for x in R11 or R14 (AX, DX free).
#define MA_R11 MOVQ R11, AX; SARQ $63, AX; XORQ R11, AX; ORQ AX, R13
#define MA_R14 MOVQ R14, DX; SARQ $63, DX; XORQ R14, DX; ORQ DX, R13
#define MA_NONE
#define MA_STORE MOVQ R13, ma+104(FP)

// PAIR: r[slot]++; sa[slot] += a; sb[slot] += b; ma |= a ^ a>>63;
// mb |= b ^ b>>63. A row at a time (every register holds a pointer, a
// count or a bound; m and the slot count are read from the frame).
// func(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
#define PAIR(LD, SC) \
	MOVQ ks+0(FP), SI \
	MOVQ n+8(FP), BX \
	MOVQ xa_base+16(FP), DI \
	MOVQ xb_base+40(FP), DX \
	MOVQ sa_base+72(FP), R10 \
	MOVQ sb_base+96(FP), R11 \
	MOVQ r_base+120(FP), R12 \
	XORQ CX, CX \
	XORQ R13, R13 \
	XORQ R14, R14 \
	MOVB $0, bad+144(FP) \
	JMP  check \
	PCALIGN $32 \
row: \
	LD   (SI)(CX*SC), AX \
	SUBQ m+64(FP), AX \
	CMPQ AX, sa_len+80(FP) \
	JAE  outside \
	MOVQ (DI)(CX*8), R8 \
	MOVQ (DX)(CX*8), R9 \
	INCQ (R12)(AX*8) \
	ADDQ R8, (R10)(AX*8) \
	ADDQ R9, (R11)(AX*8) \
	MOVQ R8, AX \
	SARQ $63, AX \
	XORQ R8, AX \
	ORQ  AX, R13 \
	MOVQ R9, AX \
	SARQ $63, AX \
	XORQ R9, AX \
	ORQ  AX, R14 \
next: \
	INCQ CX \
check: \
	CMPQ CX, BX \
	JLT  row \
	MOVQ R13, ma+152(FP) \
	MOVQ R14, mb+160(FP) \
	RET \
outside: \
	MOVB $1, bad+144(FP) \
	JMP  next

// FLOATS: fs[slot].rows++; a value not NaN: fs[slot].s += x,
// fs[slot].n++. A row at a time: a group's sum is one chain of additions
// in row order.
// func(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)
#define FLOATS(LD, SC) \
	MOVQ ks+0(FP), SI \
	MOVQ n+8(FP), BX \
	MOVQ xs_base+16(FP), DI \
	MOVQ m+40(FP), R8 \
	MOVQ fs_base+48(FP), R10 \
	MOVQ fs_len+56(FP), R9 \
	XORQ CX, CX \
	MOVB $0, bad+72(FP) \
	JMP  check \
	PCALIGN $32 \
row: \
	LD   (SI)(CX*SC), AX \
	SUBQ R8, AX \
	CMPQ AX, R9 \
	JAE  outside \
	SHLQ $4, AX \
	MOVSD (DI)(CX*8), X0 \
	INCL 12(R10)(AX*1) \
	UCOMISD X0, X0 \
	JPS  next \
	MOVSD (R10)(AX*1), X1 \
	ADDSD X0, X1 \
	MOVSD X1, (R10)(AX*1) \
	INCL 8(R10)(AX*1) \
next: \
	INCQ CX \
check: \
	CMPQ CX, BX \
	JLT  row \
	RET \
outside: \
	MOVB $1, bad+72(FP) \
	JMP  next

TEXT ·loneSumsI64(SB), NOSPLIT, $0-88
	SUMS(MOVQ, 8)

TEXT ·loneRowsI64(SB), NOSPLIT, $0-97
	ROWS(MOVQ, 8, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansI64(SB), NOSPLIT, $0-112
	ROWS(MOVQ, 8, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairI64(SB), NOSPLIT, $0-168
	PAIR(MOVQ, 8)

TEXT ·loneFloatsI64(SB), NOSPLIT, $0-73
	FLOATS(MOVQ, 8)

TEXT ·loneSumsI32(SB), NOSPLIT, $0-88
	SUMS(MOVLQSX, 4)

TEXT ·loneRowsI32(SB), NOSPLIT, $0-97
	ROWS(MOVLQSX, 4, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansI32(SB), NOSPLIT, $0-112
	ROWS(MOVLQSX, 4, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairI32(SB), NOSPLIT, $0-168
	PAIR(MOVLQSX, 4)

TEXT ·loneFloatsI32(SB), NOSPLIT, $0-73
	FLOATS(MOVLQSX, 4)

TEXT ·loneSumsU32(SB), NOSPLIT, $0-88
	SUMS(MOVLQZX, 4)

TEXT ·loneRowsU32(SB), NOSPLIT, $0-97
	ROWS(MOVLQZX, 4, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansU32(SB), NOSPLIT, $0-112
	ROWS(MOVLQZX, 4, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairU32(SB), NOSPLIT, $0-168
	PAIR(MOVLQZX, 4)

TEXT ·loneFloatsU32(SB), NOSPLIT, $0-73
	FLOATS(MOVLQZX, 4)

TEXT ·loneSumsI16(SB), NOSPLIT, $0-88
	SUMS(MOVWQSX, 2)

TEXT ·loneRowsI16(SB), NOSPLIT, $0-97
	ROWS(MOVWQSX, 2, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansI16(SB), NOSPLIT, $0-112
	ROWS(MOVWQSX, 2, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairI16(SB), NOSPLIT, $0-168
	PAIR(MOVWQSX, 2)

TEXT ·loneFloatsI16(SB), NOSPLIT, $0-73
	FLOATS(MOVWQSX, 2)

TEXT ·loneSumsU16(SB), NOSPLIT, $0-88
	SUMS(MOVWQZX, 2)

TEXT ·loneRowsU16(SB), NOSPLIT, $0-97
	ROWS(MOVWQZX, 2, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansU16(SB), NOSPLIT, $0-112
	ROWS(MOVWQZX, 2, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairU16(SB), NOSPLIT, $0-168
	PAIR(MOVWQZX, 2)

TEXT ·loneFloatsU16(SB), NOSPLIT, $0-73
	FLOATS(MOVWQZX, 2)

TEXT ·loneSumsI8(SB), NOSPLIT, $0-88
	SUMS(MOVBQSX, 1)

TEXT ·loneRowsI8(SB), NOSPLIT, $0-97
	ROWS(MOVBQSX, 1, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansI8(SB), NOSPLIT, $0-112
	ROWS(MOVBQSX, 1, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairI8(SB), NOSPLIT, $0-168
	PAIR(MOVBQSX, 1)

TEXT ·loneFloatsI8(SB), NOSPLIT, $0-73
	FLOATS(MOVBQSX, 1)

TEXT ·loneSumsU8(SB), NOSPLIT, $0-88
	SUMS(MOVBQZX, 1)

TEXT ·loneRowsU8(SB), NOSPLIT, $0-97
	ROWS(MOVBQZX, 1, MA_NONE, MA_NONE, MA_NONE, MA_NONE)

TEXT ·loneMeansU8(SB), NOSPLIT, $0-112
	ROWS(MOVBQZX, 1, MA_R11, MA_R14, MA_R11, MA_STORE)

TEXT ·lonePairU8(SB), NOSPLIT, $0-168
	PAIR(MOVBQZX, 1)

TEXT ·loneFloatsU8(SB), NOSPLIT, $0-73
	FLOATS(MOVBQZX, 1)

// markInt64Keys' loops (groupby_int.go) for two and three int64 keys: each
// row's packed slot r0·s0 + r1 (+ r2 with r1·s1), where ri = key_i - mi,
// is written as its id and its bit set in the occupancy bitmap occ (tested
// first: most rows find it set). A key at or past its span ni sets bad and
// counts as slot 0, as the Go loop does. mi is the key's smallest sort key
// with its top bit flipped. The keys, ids and bitmap belong to the caller.
// The taxi grouping by pickup, drop-off and hour (7.7·10^6 rows, in
// process, BenchmarkTaxiGroupBy): 73-76 -> 65-66 ms on one worker, 41-42
// -> 38 on two; G1 q2's grouping and sum, 38-39 -> 35 ms (BenchmarkG1Q2).

// func markKeys2Asm(a, b unsafe.Pointer, n int, m0, m1, n0, n1, s0 uint64, ids, occ unsafe.Pointer) (bad bool)
TEXT ·markKeys2Asm(SB), NOSPLIT, $0-81
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), BX
	MOVQ n0+40(FP), R13
	MOVQ n1+48(FP), R14
	MOVQ s0+56(FP), R8
	MOVQ ids+64(FP), R10
	MOVQ occ+72(FP), R11
	XORQ CX, CX
	XORQ R12, R12
	JMP  mark2_check
	PCALIGN $32
mark2_row:
	MOVQ (SI)(CX*8), AX
	SUBQ m0+24(FP), AX
	MOVQ (DI)(CX*8), DX
	SUBQ m1+32(FP), DX
	CMPQ AX, R13
	JAE  mark2_bad
	CMPQ DX, R14
	JAE  mark2_bad
mark2_slot:
	IMULQ R8, AX
	ADDQ DX, AX
	MOVL AX, (R10)(CX*4)
	MOVQ AX, DX
	SHRQ $6, DX
	MOVQ (R11)(DX*8), R9
	BTQ  AX, R9
	JCS  mark2_next
	BTSQ AX, R9
	MOVQ R9, (R11)(DX*8)
mark2_next:
	INCQ CX
mark2_check:
	CMPQ CX, BX
	JLT  mark2_row
	MOVB R12, bad+80(FP)
	RET
mark2_bad:
	MOVQ $1, R12
	XORQ AX, AX
	XORQ DX, DX
	JMP  mark2_slot

// func markKeys3Asm(a, b, c unsafe.Pointer, n int, m0, m1, m2, n0, n1, n2, s0, s1 uint64, ids, occ unsafe.Pointer) (bad bool)
TEXT ·markKeys3Asm(SB), NOSPLIT, $0-113
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ c+16(FP), R12
	MOVQ n+24(FP), BX
	MOVQ s0+80(FP), R8
	MOVQ s1+88(FP), R14
	MOVQ ids+96(FP), R10
	MOVQ occ+104(FP), R11
	XORQ CX, CX
	MOVB $0, bad+112(FP)
	JMP  mark3_check
	PCALIGN $32
mark3_row:
	MOVQ (SI)(CX*8), AX
	SUBQ m0+32(FP), AX
	MOVQ (DI)(CX*8), DX
	SUBQ m1+40(FP), DX
	MOVQ (R12)(CX*8), R9
	SUBQ m2+48(FP), R9
	CMPQ AX, n0+56(FP)
	JAE  mark3_bad
	CMPQ DX, n1+64(FP)
	JAE  mark3_bad
	CMPQ R9, n2+72(FP)
	JAE  mark3_bad
mark3_slot:
	IMULQ R8, AX
	IMULQ R14, DX
	ADDQ DX, AX
	ADDQ R9, AX
	MOVL AX, (R10)(CX*4)
	MOVQ AX, DX
	SHRQ $6, DX
	MOVQ (R11)(DX*8), R9
	BTQ  AX, R9
	JCS  mark3_next
	BTSQ AX, R9
	MOVQ R9, (R11)(DX*8)
mark3_next:
	INCQ CX
mark3_check:
	CMPQ CX, BX
	JLT  mark3_row
	RET
mark3_bad:
	MOVB $1, bad+112(FP)
	XORQ AX, AX
	XORQ DX, DX
	XORQ R9, R9
	JMP  mark3_slot

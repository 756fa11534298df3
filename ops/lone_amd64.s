#include "textflag.h"

// The fused lone-key loops (groupby_fused.go) for int64 keys, in assembly:
// the same operations in the same row order as the Go loops, so the same
// answers, float sums included. A key's slot is uint64(key) - m, where m is
// the smallest key's sort key with its top bit flipped (sortKeyInt(v) - mn
// for a signed key); a slot at or past len(sm) is a key written since the
// range was taken: bad is set and the row skipped, as the Go loops do.
//
// Why assembly: Go compiled these loops so that a row cost 2.3-2.4 ns
// where 1.6-1.7 do (10^7 int64 sums by 100 keys, one worker: 23-24 ms
// against 16.5-17; q4's means 51-55 against 43-44). The compiler spilled
// registers in the loop, or laid it out so that one more operation a row
// (the sign OR) cost 8 ms; unrolling in Go did not help.
//
// The slices and tables belong to the caller, which keeps them alive and
// sized: len(xs) >= len(ks), every table of the same length. No pointer is
// stored, so no write barrier is needed. The loops are not preemptible:
// the Go side calls them on blocks of rows
// (loneAsmBlock), so that a garbage collection's stop waits for one block.

// func loneSumsAsm(ks, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
// sm[slot] += x; sg |= x | (x-1). Two rows a turn.
TEXT ·loneSumsAsm(SB), NOSPLIT, $0-96
	MOVQ ks_base+0(FP), SI
	MOVQ ks_len+8(FP), BX
	MOVQ xs_base+24(FP), DI
	MOVQ m+48(FP), R8
	MOVQ sm_base+56(FP), R10
	MOVQ sm_len+64(FP), R9
	XORQ CX, CX
	XORQ R12, R12
	MOVB $0, bad+80(FP)
	JMP  sums_check
	PCALIGN $32
sums_pair:
	MOVQ (SI)(CX*8), AX
	MOVQ 8(SI)(CX*8), DX
	SUBQ R8, AX
	SUBQ R8, DX
	CMPQ AX, R9
	JAE  sums_one
	CMPQ DX, R9
	JAE  sums_one
	MOVQ (DI)(CX*8), R11
	MOVQ 8(DI)(CX*8), R14
	ADDQ R11, (R10)(AX*8)
	ADDQ R14, (R10)(DX*8)
	LEAQ -1(R11), AX
	ORQ  R11, AX
	ORQ  AX, R12
	LEAQ -1(R14), DX
	ORQ  R14, DX
	ORQ  DX, R12
	ADDQ $2, CX
sums_check:
	LEAQ 2(CX), AX
	CMPQ AX, BX
	JLE  sums_pair
	CMPQ CX, BX
	JGE  sums_done
sums_one:
	// One row (the last, or a pair that holds a key outside the slots).
	MOVQ (SI)(CX*8), AX
	SUBQ R8, AX
	INCQ CX
	CMPQ AX, R9
	JAE  sums_outside
	MOVQ -8(DI)(CX*8), R11
	ADDQ R11, (R10)(AX*8)
	LEAQ -1(R11), AX
	ORQ  R11, AX
	ORQ  AX, R12
	JMP  sums_check
sums_outside:
	MOVB $1, bad+80(FP)
	JMP  sums_check
sums_done:
	MOVQ R12, sg+88(FP)
	RET

// func loneSumsRowsAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool)
// sm[slot] += x; r[slot]++. Two rows a turn.
TEXT ·loneSumsRowsAsm(SB), NOSPLIT, $0-105
	MOVQ ks_base+0(FP), SI
	MOVQ ks_len+8(FP), BX
	MOVQ xs_base+24(FP), DI
	MOVQ m+48(FP), R8
	MOVQ sm_base+56(FP), R10
	MOVQ sm_len+64(FP), R9
	MOVQ r_base+80(FP), R12
	XORQ CX, CX
	MOVB $0, bad+104(FP)
	JMP  rows_check
	PCALIGN $32
rows_pair:
	MOVQ (SI)(CX*8), AX
	MOVQ 8(SI)(CX*8), DX
	SUBQ R8, AX
	SUBQ R8, DX
	CMPQ AX, R9
	JAE  rows_one
	CMPQ DX, R9
	JAE  rows_one
	MOVQ (DI)(CX*8), R11
	MOVQ 8(DI)(CX*8), R14
	INCQ (R12)(AX*8)
	ADDQ R11, (R10)(AX*8)
	INCQ (R12)(DX*8)
	ADDQ R14, (R10)(DX*8)
	ADDQ $2, CX
rows_check:
	LEAQ 2(CX), AX
	CMPQ AX, BX
	JLE  rows_pair
	CMPQ CX, BX
	JGE  rows_done
rows_one:
	MOVQ (SI)(CX*8), AX
	SUBQ R8, AX
	INCQ CX
	CMPQ AX, R9
	JAE  rows_outside
	MOVQ -8(DI)(CX*8), R11
	INCQ (R12)(AX*8)
	ADDQ R11, (R10)(AX*8)
	JMP  rows_check
rows_outside:
	MOVB $1, bad+104(FP)
	JMP  rows_check
rows_done:
	RET

// func loneMeansAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
// sm[slot] += x; r[slot]++; ma |= x ^ x>>63. Two rows a turn.
TEXT ·loneMeansAsm(SB), NOSPLIT, $0-120
	MOVQ ks_base+0(FP), SI
	MOVQ ks_len+8(FP), BX
	MOVQ xs_base+24(FP), DI
	MOVQ m+48(FP), R8
	MOVQ sm_base+56(FP), R10
	MOVQ sm_len+64(FP), R9
	MOVQ r_base+80(FP), R12
	XORQ CX, CX
	XORQ R13, R13
	MOVB $0, bad+104(FP)
	JMP  means_check
	PCALIGN $32
means_pair:
	MOVQ (SI)(CX*8), AX
	MOVQ 8(SI)(CX*8), DX
	SUBQ R8, AX
	SUBQ R8, DX
	CMPQ AX, R9
	JAE  means_one
	CMPQ DX, R9
	JAE  means_one
	MOVQ (DI)(CX*8), R11
	MOVQ 8(DI)(CX*8), R14
	INCQ (R12)(AX*8)
	ADDQ R11, (R10)(AX*8)
	INCQ (R12)(DX*8)
	ADDQ R14, (R10)(DX*8)
	MOVQ R11, AX
	SARQ $63, AX
	XORQ R11, AX
	ORQ  AX, R13
	MOVQ R14, DX
	SARQ $63, DX
	XORQ R14, DX
	ORQ  DX, R13
	ADDQ $2, CX
means_check:
	LEAQ 2(CX), AX
	CMPQ AX, BX
	JLE  means_pair
	CMPQ CX, BX
	JGE  means_done
means_one:
	MOVQ (SI)(CX*8), AX
	SUBQ R8, AX
	INCQ CX
	CMPQ AX, R9
	JAE  means_outside
	MOVQ -8(DI)(CX*8), R11
	INCQ (R12)(AX*8)
	ADDQ R11, (R10)(AX*8)
	MOVQ R11, AX
	SARQ $63, AX
	XORQ R11, AX
	ORQ  AX, R13
	JMP  means_check
means_outside:
	MOVB $1, bad+104(FP)
	JMP  means_check
means_done:
	MOVQ R13, ma+112(FP)
	RET

// func loneFloatAsm(ks []int64, xs []float64, m uint64, fs []sumSlot) (bad bool)
// fs[slot].rows++; a value not NaN: fs[slot].s += x, fs[slot].n++. A row
// at a time: a group's sum is one chain of additions in row order.
TEXT ·loneFloatAsm(SB), NOSPLIT, $0-81
	MOVQ ks_base+0(FP), SI
	MOVQ ks_len+8(FP), BX
	MOVQ xs_base+24(FP), DI
	MOVQ m+48(FP), R8
	MOVQ fs_base+56(FP), R10
	MOVQ fs_len+64(FP), R9
	XORQ CX, CX
	MOVB $0, bad+80(FP)
	JMP  float_check
	PCALIGN $32
float_row:
	MOVQ (SI)(CX*8), AX
	SUBQ R8, AX
	CMPQ AX, R9
	JAE  float_outside
	SHLQ $4, AX                // a sumSlot is 16 bytes: s, then n and rows (int32)
	MOVSD (DI)(CX*8), X0
	INCL 12(R10)(AX*1)
	UCOMISD X0, X0
	JPS  float_next            // NaN: counted as a row only
	MOVSD (R10)(AX*1), X1
	ADDSD X0, X1               // s + x, in the Go loop's order
	MOVSD X1, (R10)(AX*1)
	INCL 8(R10)(AX*1)
float_next:
	INCQ CX
float_check:
	CMPQ CX, BX
	JLT  float_row
	RET
float_outside:
	MOVB $1, bad+80(FP)
	JMP  float_next

// func lonePairAsm(ks, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
// r[slot]++; sa[slot] += a; sb[slot] += b; ma |= a ^ a>>63; mb |= b ^ b>>63.
// A row at a time (every register holds a pointer, a count or a bound; m
// and the slot count are read from the frame).
TEXT ·lonePairAsm(SB), NOSPLIT, $0-176
	MOVQ ks_base+0(FP), SI
	MOVQ ks_len+8(FP), BX
	MOVQ xa_base+24(FP), DI
	MOVQ xb_base+48(FP), DX
	MOVQ sa_base+80(FP), R10
	MOVQ sb_base+104(FP), R11
	MOVQ r_base+128(FP), R12
	XORQ CX, CX
	XORQ R13, R13
	XORQ R14, R14
	MOVB $0, bad+152(FP)
	JMP  pair_check
	PCALIGN $32
pair_row:
	MOVQ (SI)(CX*8), AX
	SUBQ m+72(FP), AX
	CMPQ AX, sa_len+88(FP)
	JAE  pair_outside
	MOVQ (DI)(CX*8), R8
	MOVQ (DX)(CX*8), R9
	INCQ (R12)(AX*8)
	ADDQ R8, (R10)(AX*8)
	ADDQ R9, (R11)(AX*8)
	MOVQ R8, AX
	SARQ $63, AX
	XORQ R8, AX
	ORQ  AX, R13
	MOVQ R9, AX
	SARQ $63, AX
	XORQ R9, AX
	ORQ  AX, R14
pair_next:
	INCQ CX
pair_check:
	CMPQ CX, BX
	JLT  pair_row
	MOVQ R13, ma+160(FP)
	MOVQ R14, mb+168(FP)
	RET
pair_outside:
	MOVB $1, bad+152(FP)
	JMP  pair_next

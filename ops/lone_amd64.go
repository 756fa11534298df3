package ops

import "unsafe"

// The fused lone-key loops in assembly (lone_amd64.s), one set a key width
// and signedness (uint64 keys take the int64 set: the same load).

func loneSumsI64(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsI64(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansI64(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairI64(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsI64(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsI32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsI32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansI32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairI32(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsI32(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsU32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsU32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansU32(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairU32(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsU32(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsI16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsI16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansI16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairI16(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsI16(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsU16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsU16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansU16(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairU16(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsU16(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsI8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsI8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansI8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairI8(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsI8(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

func loneSumsU8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneRowsU8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansU8(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairU8(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatsU8(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) (bad bool)

// loneAsmBuilt: this architecture has the assembly loops.
const loneAsmBuilt = true

// loneKernelsBy are the loops by key kind (loneKind).
var loneKernelsBy = [...]loneKernels{
	{loneSumsI64, loneRowsI64, loneMeansI64, lonePairI64, loneFloatsI64},
	{loneSumsI32, loneRowsI32, loneMeansI32, lonePairI32, loneFloatsI32},
	{loneSumsU32, loneRowsU32, loneMeansU32, lonePairU32, loneFloatsU32},
	{loneSumsI16, loneRowsI16, loneMeansI16, lonePairI16, loneFloatsI16},
	{loneSumsU16, loneRowsU16, loneMeansU16, lonePairU16, loneFloatsU16},
	{loneSumsI8, loneRowsI8, loneMeansI8, lonePairI8, loneFloatsI8},
	{loneSumsU8, loneRowsU8, loneMeansU8, lonePairU8, loneFloatsU8},
}

// markInt64Keys' loops in assembly (lone_amd64.s).
func markKeys2Asm(a, b unsafe.Pointer, n int, m0, m1, n0, n1, s0 uint64, ids, occ unsafe.Pointer) (bad bool)
func markKeys3Asm(a, b, c unsafe.Pointer, n int, m0, m1, m2, n0, n1, n2, s0, s1 uint64, ids, occ unsafe.Pointer) (bad bool)

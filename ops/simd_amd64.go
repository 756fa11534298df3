//go:build goexperiment.simd && amd64

package ops

// AVX-512 kernels for the scans whose scalar Go loops run well below memory
// speed (10^7 float64 on one core of the 2-core VM, in process: a
// comparison into a bool array 11.5 -> 4.2-6.6 ms, numpy 3.8-5.1; a float64
// sum 7.5 -> 3.8 ms, numpy 6.0; bench/ops/results.md has the rest, through
// the server). Go has no auto-vectoriser; Go 1.26's
// experimental simd/archsimd package (GOEXPERIMENT=simd, which the Makefile
// sets) gives the vector instructions. A build without the experiment, or a
// CPU without AVX-512, takes the plain loops, which give the same bytes:
// ops tests run both and compare them bit for bit.

import (
	"simd/archsimd"

	"github.com/arktos-dev/arktos/pdarray"
)

const simdBuilt = true

// simdDone ends a vector kernel: it clears the vector registers' upper
// bits (VZEROUPPER; the Go compiler does not yet) and counts the call.
// Left dirty, they slowed this VM's later scalar code that mixes VEX and
// SSE encodings 30-fold: the float powers' math.FMA took 170 ns a call
// after one AVX-512 instruction, 5 ns before.
func simdDone() {
	archsimd.ClearAVXUpperBits()
	simdCalls.Add(1)
}

// simdEnd clears the upper bits after a loop of simdMaskBits calls.
func simdEnd() { archsimd.ClearAVXUpperBits() }

// simdCPU: AVX-512 F, BW, DQ, VL and CD, which every kernel here needs.
var simdCPU = archsimd.X86.AVX512()

// simdCompare returns the vector kernel of a comparison of two arrays of
// dtype dt into a bool array, or nil where there is none (another op or
// dtype, or no AVX-512); plain, the scalar loop of the same comparison,
// takes the last elements short of a block of 64. a > b runs as b < a and
// a >= b as b <= a: the same answer for every value, NaN included (false
// both ways).
func simdCompare(op string, dt pdarray.DType, plain func(d, a, b []byte)) func(d, a, b []byte) {
	if !simdOn() || plain == nil {
		return nil
	}
	var c cmpBits
	switch op {
	case "<", ">":
		c.lt = ^uint64(0)
	case "<=", ">=":
		c.lt, c.eq = ^uint64(0), ^uint64(0)
	case "==":
		c.eq = ^uint64(0)
	case "!=":
		c.eq, c.flip = ^uint64(0), ^uint64(0)
	default:
		return nil
	}
	swap := op == ">" || op == ">="
	switch dt {
	case dF64:
		return cmpKernel(swap, c, f64Cmp, plain)
	case dF32:
		return cmpKernel(swap, c, f32Cmp, plain)
	case dI64:
		return cmpKernel(swap, c, i64Cmp, plain)
	case dI32:
		return cmpKernel(swap, c, i32Cmp, plain)
	}
	return nil
}

// cmpBits makes every comparison of one block from its Less and Equal
// bits: (lt & less | eq & equal) ^ flip. != is the flip of ==, true for
// NaN as numpy's; <= is less or equal, false for NaN. The second vector
// compare costs about 10% (10^7 float64 in process: 4.3 -> 4.7 ms, most of
// it waiting on memory either way), for one loop per dtype instead of one
// per dtype and comparison.
type cmpBits struct{ lt, eq, flip uint64 }

// cmpKernel runs loop over whole blocks of 64 elements, then plain over the
// rest, on the bytes of a chunk.
func cmpKernel[T pdarray.Element](swap bool, c cmpBits, loop func(d []uint8, x, y []T, c cmpBits) int, plain func(d, a, b []byte)) func(d, a, b []byte) {
	return func(db, ab, bb []byte) {
		a, b := pdarray.BytesAs[T](ab), pdarray.BytesAs[T](bb)
		if swap {
			a, b = b, a
		}
		i := loop(db, a[:len(db)], b[:len(db)], c)
		simdDone()
		if i < len(db) {
			sz := len(ab) / max(len(db), 1)
			plain(db[i:], ab[i*sz:], bb[i*sz:])
		}
	}
}

// storeBools writes the 64 bits of w as bool bytes (bit j to d[j]) in one
// store.
func storeBools(d *[64]uint8, w uint64) {
	archsimd.BroadcastUint8x64(1).Masked(archsimd.Mask8x64FromBits(w)).Store(d)
}

// The loops, one per dtype, unrolled over a block's vectors (a loop over
// them, or a call per block through a function value, made the float64
// compare of 10^7 elements 20-40% slower). Each returns how many elements
// it did: the whole blocks of 64.

func f64Cmp(d []uint8, x, y []float64, c cmpBits) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float64)(x[i:i+64]), (*[64]float64)(y[i:i+64])
		var lt, eq uint64
		var va, vb archsimd.Float64x8
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[0:])), archsimd.LoadFloat64x8((*[8]float64)(b[0:]))
		lt |= uint64(va.Less(vb).ToBits()) << 0
		eq |= uint64(va.Equal(vb).ToBits()) << 0
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[8:])), archsimd.LoadFloat64x8((*[8]float64)(b[8:]))
		lt |= uint64(va.Less(vb).ToBits()) << 8
		eq |= uint64(va.Equal(vb).ToBits()) << 8
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[16:])), archsimd.LoadFloat64x8((*[8]float64)(b[16:]))
		lt |= uint64(va.Less(vb).ToBits()) << 16
		eq |= uint64(va.Equal(vb).ToBits()) << 16
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[24:])), archsimd.LoadFloat64x8((*[8]float64)(b[24:]))
		lt |= uint64(va.Less(vb).ToBits()) << 24
		eq |= uint64(va.Equal(vb).ToBits()) << 24
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[32:])), archsimd.LoadFloat64x8((*[8]float64)(b[32:]))
		lt |= uint64(va.Less(vb).ToBits()) << 32
		eq |= uint64(va.Equal(vb).ToBits()) << 32
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[40:])), archsimd.LoadFloat64x8((*[8]float64)(b[40:]))
		lt |= uint64(va.Less(vb).ToBits()) << 40
		eq |= uint64(va.Equal(vb).ToBits()) << 40
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[48:])), archsimd.LoadFloat64x8((*[8]float64)(b[48:]))
		lt |= uint64(va.Less(vb).ToBits()) << 48
		eq |= uint64(va.Equal(vb).ToBits()) << 48
		va, vb = archsimd.LoadFloat64x8((*[8]float64)(a[56:])), archsimd.LoadFloat64x8((*[8]float64)(b[56:]))
		lt |= uint64(va.Less(vb).ToBits()) << 56
		eq |= uint64(va.Equal(vb).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), (lt&c.lt|eq&c.eq)^c.flip)
	}
	return i
}

func f32Cmp(d []uint8, x, y []float32, c cmpBits) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float32)(x[i:i+64]), (*[64]float32)(y[i:i+64])
		var lt, eq uint64
		var va, vb archsimd.Float32x16
		va, vb = archsimd.LoadFloat32x16((*[16]float32)(a[0:])), archsimd.LoadFloat32x16((*[16]float32)(b[0:]))
		lt |= uint64(va.Less(vb).ToBits()) << 0
		eq |= uint64(va.Equal(vb).ToBits()) << 0
		va, vb = archsimd.LoadFloat32x16((*[16]float32)(a[16:])), archsimd.LoadFloat32x16((*[16]float32)(b[16:]))
		lt |= uint64(va.Less(vb).ToBits()) << 16
		eq |= uint64(va.Equal(vb).ToBits()) << 16
		va, vb = archsimd.LoadFloat32x16((*[16]float32)(a[32:])), archsimd.LoadFloat32x16((*[16]float32)(b[32:]))
		lt |= uint64(va.Less(vb).ToBits()) << 32
		eq |= uint64(va.Equal(vb).ToBits()) << 32
		va, vb = archsimd.LoadFloat32x16((*[16]float32)(a[48:])), archsimd.LoadFloat32x16((*[16]float32)(b[48:]))
		lt |= uint64(va.Less(vb).ToBits()) << 48
		eq |= uint64(va.Equal(vb).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), (lt&c.lt|eq&c.eq)^c.flip)
	}
	return i
}

func i64Cmp(d []uint8, x, y []int64, c cmpBits) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int64)(x[i:i+64]), (*[64]int64)(y[i:i+64])
		var lt, eq uint64
		var va, vb archsimd.Int64x8
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[0:])), archsimd.LoadInt64x8((*[8]int64)(b[0:]))
		lt |= uint64(va.Less(vb).ToBits()) << 0
		eq |= uint64(va.Equal(vb).ToBits()) << 0
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[8:])), archsimd.LoadInt64x8((*[8]int64)(b[8:]))
		lt |= uint64(va.Less(vb).ToBits()) << 8
		eq |= uint64(va.Equal(vb).ToBits()) << 8
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[16:])), archsimd.LoadInt64x8((*[8]int64)(b[16:]))
		lt |= uint64(va.Less(vb).ToBits()) << 16
		eq |= uint64(va.Equal(vb).ToBits()) << 16
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[24:])), archsimd.LoadInt64x8((*[8]int64)(b[24:]))
		lt |= uint64(va.Less(vb).ToBits()) << 24
		eq |= uint64(va.Equal(vb).ToBits()) << 24
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[32:])), archsimd.LoadInt64x8((*[8]int64)(b[32:]))
		lt |= uint64(va.Less(vb).ToBits()) << 32
		eq |= uint64(va.Equal(vb).ToBits()) << 32
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[40:])), archsimd.LoadInt64x8((*[8]int64)(b[40:]))
		lt |= uint64(va.Less(vb).ToBits()) << 40
		eq |= uint64(va.Equal(vb).ToBits()) << 40
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[48:])), archsimd.LoadInt64x8((*[8]int64)(b[48:]))
		lt |= uint64(va.Less(vb).ToBits()) << 48
		eq |= uint64(va.Equal(vb).ToBits()) << 48
		va, vb = archsimd.LoadInt64x8((*[8]int64)(a[56:])), archsimd.LoadInt64x8((*[8]int64)(b[56:]))
		lt |= uint64(va.Less(vb).ToBits()) << 56
		eq |= uint64(va.Equal(vb).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), (lt&c.lt|eq&c.eq)^c.flip)
	}
	return i
}

func i32Cmp(d []uint8, x, y []int32, c cmpBits) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int32)(x[i:i+64]), (*[64]int32)(y[i:i+64])
		var lt, eq uint64
		var va, vb archsimd.Int32x16
		va, vb = archsimd.LoadInt32x16((*[16]int32)(a[0:])), archsimd.LoadInt32x16((*[16]int32)(b[0:]))
		lt |= uint64(va.Less(vb).ToBits()) << 0
		eq |= uint64(va.Equal(vb).ToBits()) << 0
		va, vb = archsimd.LoadInt32x16((*[16]int32)(a[16:])), archsimd.LoadInt32x16((*[16]int32)(b[16:]))
		lt |= uint64(va.Less(vb).ToBits()) << 16
		eq |= uint64(va.Equal(vb).ToBits()) << 16
		va, vb = archsimd.LoadInt32x16((*[16]int32)(a[32:])), archsimd.LoadInt32x16((*[16]int32)(b[32:]))
		lt |= uint64(va.Less(vb).ToBits()) << 32
		eq |= uint64(va.Equal(vb).ToBits()) << 32
		va, vb = archsimd.LoadInt32x16((*[16]int32)(a[48:])), archsimd.LoadInt32x16((*[16]int32)(b[48:]))
		lt |= uint64(va.Less(vb).ToBits()) << 48
		eq |= uint64(va.Equal(vb).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), (lt&c.lt|eq&c.eq)^c.flip)
	}
	return i
}

// simdSumF64 is sum8plain of float64 with the eight accumulators in one
// vector: lane j adds x[j], x[j+8], ... in order, as a[j] does there, and
// the lanes are folded in the same order, so the sum has the same bits.
func simdSumF64(x []float64) (float64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Float64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8])))
	}
	s := fold8(acc)
	for ; i < len(x); i++ {
		s += x[i]
	}
	simdDone()
	return s, true
}

// simdSumI64 is the wrapping sum of x, eight lanes at a time.
func simdSumI64(x []int64) (int64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Int64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadInt64x8((*[8]int64)(x[i : i+8])))
	}
	s := fold8i(acc)
	for ; i < len(x); i++ {
		s += x[i]
	}
	simdDone()
	return s, true
}

// simdMinMaxF64 is the largest (isMax) or smallest element of x and whether
// any is NaN, eight lanes at a time. ok is false, and the caller's loop
// decides, when x is short or the answer is a zero: the loop keeps the
// first of -0 and +0, which lanes compared in another order may not.
func simdMinMaxF64(x []float64, isMax bool) (m float64, nan, ok bool) {
	if !simdOn() || len(x) < 64 {
		return 0, false, false
	}
	acc := archsimd.LoadFloat64x8((*[8]float64)(x[:8]))
	nans := acc.NotEqual(acc)
	i := 8
	if isMax {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8]))
			acc = acc.Max(v)
			nans = nans.Or(v.NotEqual(v))
		}
	} else {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8]))
			acc = acc.Min(v)
			nans = nans.Or(v.NotEqual(v))
		}
	}
	var a [8]float64
	acc.Store(&a)
	simdDone() // (after the lanes are stored)
	return foldExtreme(a[:], x[i:], nans.ToBits() != 0, isMax)
}

// simdMinMaxI64 is the largest (isMax) or smallest element of x, eight
// lanes at a time (ok false when x is short).
func simdMinMaxI64(x []int64, isMax bool) (m int64, ok bool) {
	if !simdOn() || len(x) < 64 {
		return 0, false
	}
	acc := archsimd.LoadInt64x8((*[8]int64)(x[:8]))
	i := 8
	if isMax {
		for ; i+8 <= len(x); i += 8 {
			acc = acc.Max(archsimd.LoadInt64x8((*[8]int64)(x[i : i+8])))
		}
	} else {
		for ; i+8 <= len(x); i += 8 {
			acc = acc.Min(archsimd.LoadInt64x8((*[8]int64)(x[i : i+8])))
		}
	}
	var a [8]int64
	acc.Store(&a)
	simdDone() // (after the lanes are stored)
	m = a[0]
	for _, part := range [][]int64{a[1:], x[i:]} {
		for _, v := range part {
			if isMax {
				m = max(m, v)
			} else {
				m = min(m, v)
			}
		}
	}
	return m, true
}

// simdArgMinMaxF64 is the index in x of the first largest (isMax) or
// smallest element: each lane keeps its first best and where it was, and
// the lanes' bests are compared last, ties to the smaller index. ok is false
// when x is short or holds a NaN (the caller's loop then finds the first
// NaN, numpy's answer).
func simdArgMinMaxF64(x []float64, isMax bool) (int, bool) {
	if !simdOn() || len(x) < 64 {
		return 0, false
	}
	best := archsimd.LoadFloat64x8((*[8]float64)(x[:8]))
	nans := best.NotEqual(best)
	idx := archsimd.LoadInt64x8(&[8]int64{0, 1, 2, 3, 4, 5, 6, 7})
	cur, eight := idx, archsimd.BroadcastInt64x8(8)
	i := 8
	if isMax {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8]))
			cur = cur.Add(eight)
			m := v.Greater(best)
			best, idx = v.Merge(best, m), cur.Merge(idx, m)
			nans = nans.Or(v.NotEqual(v))
		}
	} else {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8]))
			cur = cur.Add(eight)
			m := v.Less(best)
			best, idx = v.Merge(best, m), cur.Merge(idx, m)
			nans = nans.Or(v.NotEqual(v))
		}
	}
	if nans.ToBits() != 0 {
		simdDone()
		return 0, false
	}
	var bv [8]float64
	var bi [8]int64
	best.Store(&bv)
	idx.Store(&bi)
	simdDone() // (after the lanes are stored)
	b, at := bv[0], bi[0]
	for j := 1; j < 8; j++ {
		if (isMax && bv[j] > b) || (!isMax && bv[j] < b) || (bv[j] == b && bi[j] < at) {
			b, at = bv[j], bi[j]
		}
	}
	for ; i < len(x); i++ {
		v := x[i]
		if v != v {
			return 0, false
		}
		if (isMax && v > b) || (!isMax && v < b) {
			b, at = v, int64(i)
		}
	}
	return int(at), true
}

// simdArgMinMaxI64 is simdArgMinMaxF64 of int64 (ok false when x is short).
func simdArgMinMaxI64(x []int64, isMax bool) (int, bool) {
	if !simdOn() || len(x) < 64 {
		return 0, false
	}
	best := archsimd.LoadInt64x8((*[8]int64)(x[:8]))
	idx := archsimd.LoadInt64x8(&[8]int64{0, 1, 2, 3, 4, 5, 6, 7})
	cur, eight := idx, archsimd.BroadcastInt64x8(8)
	i := 8
	if isMax {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadInt64x8((*[8]int64)(x[i : i+8]))
			cur = cur.Add(eight)
			m := v.Greater(best)
			best, idx = v.Merge(best, m), cur.Merge(idx, m)
		}
	} else {
		for ; i+8 <= len(x); i += 8 {
			v := archsimd.LoadInt64x8((*[8]int64)(x[i : i+8]))
			cur = cur.Add(eight)
			m := v.Less(best)
			best, idx = v.Merge(best, m), cur.Merge(idx, m)
		}
	}
	var bv [8]int64
	var bi [8]int64
	best.Store(&bv)
	idx.Store(&bi)
	simdDone() // (after the lanes are stored)
	b, at := bv[0], bi[0]
	for j := 1; j < 8; j++ {
		if (isMax && bv[j] > b) || (!isMax && bv[j] < b) || (bv[j] == b && bi[j] < at) {
			b, at = bv[j], bi[j]
		}
	}
	for ; i < len(x); i++ {
		v := x[i]
		if (isMax && v > b) || (!isMax && v < b) {
			b, at = v, int64(i)
		}
	}
	return int(at), true
}

// simdRange is the smallest and largest element of x (ok false when x is
// short or its dtype has no vector loop here): a group-by's scan of its
// integer keys' range, both in one pass.
func simdRange[T Integer](x []T) (mn, mx T, ok bool) {
	if !simdOn() || len(x) < 128 {
		return 0, 0, false
	}
	switch v := any(x).(type) {
	case []int64:
		a, b := rangeI64(v)
		return T(a), T(b), true
	case []int32:
		a, b := rangeI32(v)
		return T(a), T(b), true
	case []int8:
		a, b := rangeI8(v)
		return T(a), T(b), true
	}
	return 0, 0, false
}

// foldRange finishes a vector range scan: the lanes' smallest and largest,
// then the elements past the last whole vector.
func foldRange[T Integer](los, his, tail []T) (mn, mx T) {
	mn, mx = los[0], his[0]
	for j := range los {
		mn, mx = min(mn, los[j]), max(mx, his[j])
	}
	for _, v := range tail {
		mn, mx = min(mn, v), max(mx, v)
	}
	return mn, mx
}

func rangeI64(x []int64) (int64, int64) {
	lo := archsimd.LoadInt64x8((*[8]int64)(x[:8]))
	hi := lo
	i := 8
	for ; i+8 <= len(x); i += 8 {
		v := archsimd.LoadInt64x8((*[8]int64)(x[i : i+8]))
		lo, hi = lo.Min(v), hi.Max(v)
	}
	var a, b [8]int64
	lo.Store(&a)
	hi.Store(&b)
	simdDone() // (after the lanes are stored)
	return foldRange(a[:], b[:], x[i:])
}

func rangeI32(x []int32) (int32, int32) {
	lo := archsimd.LoadInt32x16((*[16]int32)(x[:16]))
	hi := lo
	i := 16
	for ; i+16 <= len(x); i += 16 {
		v := archsimd.LoadInt32x16((*[16]int32)(x[i : i+16]))
		lo, hi = lo.Min(v), hi.Max(v)
	}
	var a, b [16]int32
	lo.Store(&a)
	hi.Store(&b)
	simdDone() // (after the lanes are stored)
	return foldRange(a[:], b[:], x[i:])
}

func rangeI8(x []int8) (int8, int8) {
	lo := archsimd.LoadInt8x64((*[64]int8)(x[:64]))
	hi := lo
	i := 64
	for ; i+64 <= len(x); i += 64 {
		v := archsimd.LoadInt8x64((*[64]int8)(x[i : i+64]))
		lo, hi = lo.Min(v), hi.Max(v)
	}
	var a, b [64]int8
	lo.Store(&a)
	hi.Store(&b)
	simdDone() // (after the lanes are stored)
	return foldRange(a[:], b[:], x[i:])
}

// unaryCodes numbers the unary ops with a vector loop (simdUnaryF64 and
// simdUnaryF32 switch on them).
var unaryCodes = map[string]int{"floor": 0, "ceil": 1, "trunc": 2, "round": 3, "abs": 4, "fabs": 4, "sqrt": 5}

// simdUnaryF64 returns the vector kernel of a float64 unary op, or nil:
// floor, ceil, trunc and round (VRNDSCALEPD, which keeps -0.0 and a NaN's
// bits as math's do), abs and fabs (the sign bit cleared), sqrt (correctly
// rounded, as math.Sqrt), and isnan into bools. plain, the scalar loop of
// the same op, takes the tail. Those loops made a call per element
// (floor of 10^7: 39 ms, numpy 11).
func simdUnaryF64(op string, plain func(d, a []byte)) func(d, a []byte) {
	if !simdOn() || plain == nil {
		return nil
	}
	if op == "isnan" {
		return func(db, ab []byte) {
			a := pdarray.BytesAs[float64](ab)[:len(db)]
			i := 0
			for ; i+64 <= len(db); i += 64 {
				x := (*[64]float64)(a[i : i+64])
				var w uint64
				for j := 0; j < 64; j += 8 { // (unrolled by hand it was no faster: memory-bound)
					v := archsimd.LoadFloat64x8((*[8]float64)(x[j : j+8]))
					w |= uint64(v.NotEqual(v).ToBits()) << j
				}
				storeBools((*[64]uint8)(db[i:i+64]), w)
			}
			simdDone()
			if i < len(db) {
				plain(db[i:], ab[8*i:])
			}
		}
	}
	code, ok := unaryCodes[op]
	if !ok {
		return nil
	}
	return func(db, ab []byte) {
		d, a := pdarray.BytesAs[float64](db), pdarray.BytesAs[float64](ab)
		a = a[:len(d)]
		absMask := archsimd.BroadcastUint64x8(1<<63 - 1)
		i := 0
		for ; i+8 <= len(d); i += 8 {
			v := archsimd.LoadFloat64x8((*[8]float64)(a[i : i+8]))
			switch code { // (one predictable branch per eight elements)
			case 0:
				v = v.FloorScaled(0)
			case 1:
				v = v.CeilScaled(0)
			case 2:
				v = v.TruncScaled(0)
			case 3:
				v = v.RoundToEvenScaled(0)
			case 4:
				v = v.AsUint64x8().And(absMask).AsFloat64x8()
			case 5:
				v = v.Sqrt()
			}
			v.Store((*[8]float64)(d[i : i+8]))
		}
		simdDone()
		if i < len(d) {
			plain(db[8*i:], ab[8*i:])
		}
	}
}

// simdUnaryF32 is simdUnaryF64 of float32, sixteen lanes at a time. The
// plain loops compute in float64 and round back, which for these ops (sqrt
// included: double holds more than twice float's precision) is the
// float32 answer itself, so the bits agree.
func simdUnaryF32(op string, plain func(d, a []byte)) func(d, a []byte) {
	if !simdOn() || plain == nil {
		return nil
	}
	if op == "isnan" {
		return func(db, ab []byte) {
			a := pdarray.BytesAs[float32](ab)[:len(db)]
			i := 0
			for ; i+64 <= len(db); i += 64 {
				x := (*[64]float32)(a[i : i+64])
				var w uint64
				for j := 0; j < 64; j += 16 {
					v := archsimd.LoadFloat32x16((*[16]float32)(x[j : j+16]))
					w |= uint64(v.NotEqual(v).ToBits()) << j
				}
				storeBools((*[64]uint8)(db[i:i+64]), w)
			}
			simdDone()
			if i < len(db) {
				plain(db[i:], ab[4*i:])
			}
		}
	}
	code, ok := unaryCodes[op]
	if !ok {
		return nil
	}
	return func(db, ab []byte) {
		d, a := pdarray.BytesAs[float32](db), pdarray.BytesAs[float32](ab)
		a = a[:len(d)]
		absMask := archsimd.BroadcastUint32x16(1<<31 - 1)
		i := 0
		for ; i+16 <= len(d); i += 16 {
			v := archsimd.LoadFloat32x16((*[16]float32)(a[i : i+16]))
			switch code {
			case 0:
				v = v.FloorScaled(0)
			case 1:
				v = v.CeilScaled(0)
			case 2:
				v = v.TruncScaled(0)
			case 3:
				v = v.RoundToEvenScaled(0)
			case 4:
				v = v.AsUint32x16().And(absMask).AsFloat32x16()
			case 5:
				v = v.Sqrt()
			}
			v.Store((*[16]float32)(d[i : i+16]))
		}
		simdDone()
		if i < len(d) {
			plain(db[4*i:], ab[4*i:])
		}
	}
}

// simdSumF32 is sum8plain of float32: each value widened to float64 and
// added into lane i%8, as a[i%8] += float64(x[i]) there, so the same bits.
func simdSumF32(x []float32) (float64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Float64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadFloat32x8((*[8]float32)(x[i : i+8])).ConvertToFloat64())
	}
	s := fold8(acc)
	for ; i < len(x); i++ {
		s += float64(x[i])
	}
	simdDone()
	return s, true
}

// simdSumI32 is the wrapping int64 sum of int32 values, each sign-extended.
func simdSumI32(x []int32) (int64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Int64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadInt32x8((*[8]int32)(x[i : i+8])).ExtendToInt64())
	}
	s := fold8i(acc)
	for ; i < len(x); i++ {
		s += int64(x[i])
	}
	simdDone()
	return s, true
}

// simdMinMaxF32 is simdMinMaxF64 of float32, sixteen lanes at a time.
func simdMinMaxF32(x []float32, isMax bool) (m float32, nan, ok bool) {
	if !simdOn() || len(x) < 64 {
		return 0, false, false
	}
	acc := archsimd.LoadFloat32x16((*[16]float32)(x[:16]))
	nans := acc.NotEqual(acc)
	i := 16
	if isMax {
		for ; i+16 <= len(x); i += 16 {
			v := archsimd.LoadFloat32x16((*[16]float32)(x[i : i+16]))
			acc = acc.Max(v)
			nans = nans.Or(v.NotEqual(v))
		}
	} else {
		for ; i+16 <= len(x); i += 16 {
			v := archsimd.LoadFloat32x16((*[16]float32)(x[i : i+16]))
			acc = acc.Min(v)
			nans = nans.Or(v.NotEqual(v))
		}
	}
	var a [16]float32
	acc.Store(&a)
	simdDone() // (after the lanes are stored)
	return foldExtreme(a[:], x[i:], nans.ToBits() != 0, isMax)
}

// foldExtreme finishes a vector min or max: the lanes' extremes, then the
// elements past the last whole vector, NaN noted; ok false (the caller's
// loop decides) for an answer of zero, whose sign the lanes' order may
// have changed.
func foldExtreme[T float32 | float64](lanes, tail []T, nan, isMax bool) (m T, anyNaN, ok bool) {
	m = lanes[0]
	for _, part := range [][]T{lanes[1:], tail} {
		for _, v := range part {
			nan = nan || v != v
			if (isMax && v > m) || (!isMax && v < m) {
				m = v
			}
		}
	}
	return m, nan, nan || m != 0
}

// simdExtremum returns the vector kernel of numpy's maximum, minimum, fmax
// or fmin, or of clip's steps against an array bound (clip_lo, clip_hi),
// of two float64 or int64 arrays, or nil. Each lane takes x where the
// plain loop does (maximum: x >= y or x is NaN; fmax: x >= y or y is NaN;
// minimum and fmin with <=; clip_lo and clip_hi with > and <), else y, so
// signed zeros and NaN bits come out as there. plain takes the tail.
func simdExtremum(op string, dt pdarray.DType, plain func(d, a, b []byte)) func(d, a, b []byte) {
	if !simdOn() || plain == nil {
		return nil
	}
	code, ok := map[string]int{"maximum": 0, "minimum": 1, "fmax": 2, "fmin": 3, "clip_lo": 4, "clip_hi": 5}[op]
	if !ok {
		return nil
	}
	switch dt {
	case dF64:
		return func(db, ab, bb []byte) {
			d, a, b := pdarray.BytesAs[float64](db), pdarray.BytesAs[float64](ab), pdarray.BytesAs[float64](bb)
			a, b = a[:len(d)], b[:len(d)]
			i := 0
			for ; i+8 <= len(d); i += 8 {
				x := archsimd.LoadFloat64x8((*[8]float64)(a[i : i+8]))
				y := archsimd.LoadFloat64x8((*[8]float64)(b[i : i+8]))
				var keep archsimd.Mask64x8
				switch code { // (one predictable branch per eight elements)
				case 0:
					keep = x.GreaterEqual(y).Or(x.IsNaN())
				case 1:
					keep = x.LessEqual(y).Or(x.IsNaN())
				case 2:
					keep = x.GreaterEqual(y).Or(y.IsNaN())
				case 3:
					keep = x.LessEqual(y).Or(y.IsNaN())
				case 4: // numpy's clip: a tie takes the bound
					keep = x.Greater(y).Or(x.IsNaN())
				case 5:
					keep = x.Less(y).Or(x.IsNaN())
				}
				x.Merge(y, keep).Store((*[8]float64)(d[i : i+8]))
			}
			simdDone()
			if i < len(d) {
				plain(db[8*i:], ab[8*i:], bb[8*i:])
			}
		}
	case dI64:
		return func(db, ab, bb []byte) {
			d, a, b := pdarray.BytesAs[int64](db), pdarray.BytesAs[int64](ab), pdarray.BytesAs[int64](bb)
			a, b = a[:len(d)], b[:len(d)]
			i := 0
			for ; i+8 <= len(d); i += 8 {
				x := archsimd.LoadInt64x8((*[8]int64)(a[i : i+8]))
				y := archsimd.LoadInt64x8((*[8]int64)(b[i : i+8]))
				if code%2 == 0 {
					x = x.Max(y)
				} else {
					x = x.Min(y)
				}
				x.Store((*[8]int64)(d[i : i+8]))
			}
			simdDone()
			if i < len(d) {
				plain(db[8*i:], ab[8*i:], bb[8*i:])
			}
		}
	}
	return nil
}

// simdFloorDivI64 writes floor(a[i] / s) (or the floor modulo, mod) into
// d for the whole blocks of eight it can, s > 1 (m and sh: its divConst's
// multiplier and shift, for floorDivMagic), and returns how many it
// did (0 without AVX-512). Below 2^52 in magnitude the quotient is
// estimated in float64, eight lanes at a time (VCVTQQ2PD, VRNDSCALEPD,
// VPMULLQ: AVX-512 DQ): x is exact there, and x * fl(1/s) is within
// 1/s of x/s, whose fraction is a multiple of 1/s. So the estimate is
// never above the floor, and is one below it only when x/s is an integer
// and the product rounds under it (about 1.5% of multiples of s near
// 2^52): one correction by the remainder. A block holding a larger value
// takes floorDivMagic lane by lane.
func simdFloorDivI64(d, a []int64, s int64, m uint64, sh uint, mod bool) int {
	if !simdOn() || len(d) < 8 {
		return 0
	}
	inv := archsimd.BroadcastFloat64x8(1 / float64(s))
	dv, one := archsimd.BroadcastInt64x8(s), archsimd.BroadcastInt64x8(1)
	lim, nlim := archsimd.BroadcastInt64x8(1<<52), archsimd.BroadcastInt64x8(-(1 << 52))
	i := 0
	for ; i+8 <= len(d); i += 8 {
		x := archsimd.LoadInt64x8((*[8]int64)(a[i : i+8]))
		if x.GreaterEqual(lim).Or(x.LessEqual(nlim)).ToBits() != 0 {
			for j := i; j < i+8; j++ {
				q := floorDivMagic(a[j], s, m, sh)
				if mod {
					q = a[j] - q*s
				}
				d[j] = q
			}
			continue
		}
		q := x.ConvertToFloat64().Mul(inv).FloorScaled(0).ConvertToInt64()
		r := x.Sub(q.Mul(dv))
		high := r.GreaterEqual(dv) // the estimate one too low
		q, r = q.Add(one).Merge(q, high), r.Sub(dv).Merge(r, high)
		if mod {
			r.Store((*[8]int64)(d[i : i+8]))
		} else {
			q.Store((*[8]int64)(d[i : i+8]))
		}
	}
	simdDone()
	return i
}

// simdSqDevF64 is sum8 of (x - mean)^2: lane j adds the squares of x[j],
// x[j+8], ... in order, folded as sum8 folds them: the same bits.
func simdSqDevF64(x []float64, mean float64) (float64, bool) {
	if !simdOn() {
		return 0, false
	}
	m := archsimd.BroadcastFloat64x8(mean)
	var acc archsimd.Float64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		d := archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8])).Sub(m)
		acc = acc.Add(d.Mul(d))
	}
	s := fold8(acc)
	for ; i < len(x); i++ {
		d := x[i] - mean
		s += d * d
	}
	simdDone()
	return s, true
}

// fold8 adds a vector's eight lanes as sum8 adds its accumulators.
func fold8(acc archsimd.Float64x8) float64 {
	var a [8]float64
	acc.Store(&a)
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// simdSelect64 is where(c, a, b) of 8-byte elements over the whole blocks
// of 64: the condition's bytes as one bit word, eight lanes merged at a
// time. It returns how many it did.
func simdSelect64(d []uint64, c []uint8, a, b []uint64) int {
	if !simdOn() {
		return 0
	}
	c, a, b = c[:len(d)], a[:len(d)], b[:len(d)]
	i := 0
	for ; i+64 <= len(d); i += 64 {
		w := simdMaskBits((*[64]uint8)(c[i : i+64]))
		for j := i; j < i+64; j += 8 {
			m := archsimd.Mask64x8FromBits(uint8(w >> (j - i)))
			x := archsimd.LoadUint64x8((*[8]uint64)(a[j : j+8]))
			x.Merge(archsimd.LoadUint64x8((*[8]uint64)(b[j:j+8])), m).Store((*[8]uint64)(d[j : j+8]))
		}
	}
	simdDone()
	return i
}

// fold8i adds a vector's eight int64 lanes (wrapping).
func fold8i(acc archsimd.Int64x8) int64 {
	var a [8]int64
	acc.Store(&a)
	return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
}

// simdMaskBits is maskBits by one vector compare: bit j set where m[j] != 0.
// Not inlined: inlined, the compiler hoisted its zero vector (an AVX-512
// instruction) to the caller's entry, ahead of the caller's simdOn() test,
// and a CPU without AVX-512 stopped there with SIGILL (ops TestNoSIMDCPU).
//
//go:noinline
func simdMaskBits(m *[64]uint8) uint64 {
	return archsimd.LoadUint8x64(m).NotEqual(archsimd.Uint8x64{}).ToBits()
}

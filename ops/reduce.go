package ops

import (
	"math"

	"github.com/arktos-dev/arktos/pdarray"
)

// ReduceOps lists the reductions Reduce accepts.
var ReduceOps = []string{"sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all", "count_nonzero"}

// sumBlock is the fixed block of float sums: each block is summed on its
// own, then the block sums are added in order, so a float sum does not
// depend on the number of workers.
const sumBlock = 1 << 13

// AccDType is the dtype of sum, prod, cumsum and cumprod of d (numpy's):
// int64 for bool and signed, uint64 for unsigned, d for floats.
func AccDType(d pdarray.DType) pdarray.DType {
	switch Kind(d) {
	case 'b', 'i':
		return dI64
	case 'u':
		return dU64
	}
	return d
}

// ReduceDType is the dtype of reduction op over d.
func ReduceDType(op string, d pdarray.DType) (pdarray.DType, error) {
	switch op {
	case "sum", "prod":
		return AccDType(d), nil
	case "min", "max":
		return d, nil
	case "mean", "var", "std":
		if Kind(d) == 'f' {
			return d, nil
		}
		return dF64, nil
	case "argmin", "argmax", "count_nonzero":
		return dI64, nil
	case "any", "all":
		return dBool, nil
	}
	return 0, errorf(ErrValue, "unknown reduction '%s'; reductions are %v", op, ReduceOps)
}

// Reduce computes reduction op of a. The value is int64, uint64, float64 or
// bool, of the dtype ReduceDType gives. ddof is used by var and std.
func Reduce(env Env, op string, a *pdarray.Array, ddof float64) (any, pdarray.DType, error) {
	rd, err := ReduceDType(op, a.DType())
	if err != nil {
		return nil, 0, err
	}
	n := a.Len()
	if n == 0 {
		switch op {
		case "min", "max":
			return nil, 0, errorf(ErrValue, "zero-size array to reduction operation %s which has no identity", map[string]string{"min": "minimum", "max": "maximum"}[op])
		case "argmin", "argmax":
			return nil, 0, errorf(ErrValue, "attempt to get %s of an empty sequence", op)
		}
	}
	if a.DType() == dBool && (op == "sum" || op == "count_nonzero") {
		// A stored bool is a byte 0 or 1: the sum is the count of ones,
		// 64 bytes at a time (10^7: 2.1 -> 0.4 ms through the server).
		return int64(CountTrue(env, a)), rd, nil
	}
	var v any
	switch a.DType() {
	case dI8:
		v = reduceT(env, op, pdarray.View[int8](a), ddof)
	case dI16:
		v = reduceT(env, op, pdarray.View[int16](a), ddof)
	case dI32:
		v = reduceT(env, op, pdarray.View[int32](a), ddof)
	case dI64:
		v = reduceT(env, op, pdarray.View[int64](a), ddof)
	case dU8:
		v = reduceT(env, op, pdarray.View[uint8](a), ddof)
	case dU16:
		v = reduceT(env, op, pdarray.View[uint16](a), ddof)
	case dU32:
		v = reduceT(env, op, pdarray.View[uint32](a), ddof)
	case dU64:
		v = reduceT(env, op, pdarray.View[uint64](a), ddof)
	case dF32:
		v = reduceT(env, op, pdarray.View[float32](a), ddof)
	case dF64:
		v = reduceT(env, op, pdarray.View[float64](a), ddof)
	case dBool:
		v = reduceT(env, op, pdarray.BytesAs[uint8](a.Bytes()), ddof)
	}
	// Normalise to the reply types of the result dtype.
	switch x := v.(type) {
	case int64:
		if rd == dU64 {
			v = uint64(x)
		}
	case uint64:
		if rd == dI64 {
			v = int64(x)
		}
	case float64:
		if rd == dF32 {
			v = float64(float32(x))
		} else if rd == dBool {
			v = x != 0
		}
	}
	if a.DType() == dBool && (op == "min" || op == "max") {
		v = v.(uint64) != 0
	}
	return v, rd, nil
}

func reduceT[T Number](env Env, op string, x []T, ddof float64) any {
	isFloat := isFloatT[T]()
	signed := T(0)-1 < 0 && !isFloat
	w := env.workers()
	switch op {
	case "sum":
		if isFloat {
			return plainSum(w, x)
		}
		if signed {
			return sumInts[T, int64](w, x)
		}
		return sumInts[T, uint64](w, x)
	case "prod":
		if isFloat {
			return blockProd(w, x)
		}
		if signed {
			return mergeInts(w, x, func(acc int64, v T) int64 { return acc * int64(v) }, 1, func(p, q int64) int64 { return p * q })
		}
		return mergeInts(w, x, func(acc uint64, v T) uint64 { return acc * uint64(v) }, 1, func(p, q uint64) uint64 { return p * q })
	case "min", "max":
		m := minMax(w, x, op == "max")
		if isFloat {
			return float64(m)
		}
		if signed {
			return int64(m)
		}
		return uint64(m)
	case "argmin", "argmax":
		return int64(argMinMax(w, x, op == "argmax"))
	case "mean", "var", "std":
		n := float64(len(x))
		mean := plainSum(w, x) / n
		if op == "mean" {
			return mean
		}
		ss := sqDevSum(w, x, mean)
		vr := ss / math.Max(n-ddof, 0)
		if op == "std" {
			return math.Sqrt(vr)
		}
		return vr
	case "any":
		return countNonzero(w, x, true) > 0
	case "all":
		return countNonzero(w, x, false) == len(x)
	case "count_nonzero":
		return int64(countNonzero(w, x, false))
	}
	return nil
}

// mergeInts folds x with one accumulator per worker and merges them (integer
// sums and products wrap, so any grouping gives the same result).
func mergeInts[T Number, A int64 | uint64](workers int, x []T, f func(A, T) A, id A, merge func(A, A) A) A {
	parts := make([]A, numWorkers(workers, len(x)))
	for i := range parts {
		parts[i] = id
	}
	parallel(workers, len(x), 1, func(w, lo, hi int) {
		acc := id
		for _, v := range x[lo:hi] {
			acc = f(acc, v)
		}
		parts[w] = acc
	})
	acc := id
	for _, p := range parts {
		acc = merge(acc, p)
	}
	return acc
}

// blockSum sums f(x[i]) in float64 over fixed blocks of sumBlock elements
// (eight accumulators each), then adds the block sums in order.
func blockSum[T Number](workers int, x []T, f func(T) float64) float64 {
	return inBlocks(workers, len(x), func(lo, hi int) float64 { return sum8(x[lo:hi], f) })
}

// inBlocks cuts [0, n) into the fixed blocks of sumBlock elements, has
// each summed by sum (on the workers), and adds the block sums in order:
// the same float sum at any worker count.
func inBlocks(workers, n int, sum func(lo, hi int) float64) float64 {
	parts := make([]float64, (n+sumBlock-1)/sumBlock)
	parallel(workers, n, sumBlock, func(_, lo, hi int) {
		for b := lo; b < hi; b += sumBlock {
			parts[b/sumBlock] = sum(b, min(hi, b+sumBlock))
		}
	})
	s := 0.0
	for _, p := range parts {
		s += p
	}
	return s
}

func sum8[T Number](x []T, f func(T) float64) float64 {
	var a [8]float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		a[0] += f(x[i])
		a[1] += f(x[i+1])
		a[2] += f(x[i+2])
		a[3] += f(x[i+3])
		a[4] += f(x[i+4])
		a[5] += f(x[i+5])
		a[6] += f(x[i+6])
		a[7] += f(x[i+7])
	}
	s := ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
	for ; i < len(x); i++ {
		s += f(x[i])
	}
	return s
}

// sumInts adds x in A with one wrapping accumulator per worker (plain loop,
// four lanes).
func sumInts[T Number, A int64 | uint64](workers int, x []T) A {
	parts := make([]A, numWorkers(workers, len(x)))
	parallel(workers, len(x), 1, func(w, lo, hi int) {
		s := x[lo:hi]
		switch v := any(s).(type) { // wrapping sums: any order gives the same bits
		case []int64:
			if t, ok := simdSumI64(v); ok {
				parts[w] = A(t)
				return
			}
		case []int32:
			if t, ok := simdSumI32(v); ok {
				parts[w] = A(t)
				return
			}
		}
		var a0, a1, a2, a3 A
		i := 0
		for ; i+4 <= len(s); i += 4 {
			a0 += A(s[i])
			a1 += A(s[i+1])
			a2 += A(s[i+2])
			a3 += A(s[i+3])
		}
		for ; i < len(s); i++ {
			a0 += A(s[i])
		}
		parts[w] = a0 + a1 + a2 + a3
	})
	var acc A
	for _, p := range parts {
		acc += p
	}
	return acc
}

// sqDevSum is blockSum of (x - mean)^2, the variance's numerator; float64
// blocks take the vector loop, which adds the same lanes in the same order
// (the square rounded, then added: Go does not fuse them into one FMA on
// amd64's default GOAMD64=v1, and the vector loop does not either).
func sqDevSum[T Number](workers int, x []T, mean float64) float64 {
	f, ok := any(x).([]float64)
	if !ok || !simdOn() {
		return blockSum(workers, x, func(v T) float64 { d := float64(v) - mean; return d * d })
	}
	return inBlocks(workers, len(x), func(lo, hi int) float64 {
		s, _ := simdSqDevF64(f[lo:hi], mean)
		return s
	})
}

// plainSum is blockSum of the values themselves, without a per-element call.
func plainSum[T Number](workers int, x []T) float64 {
	return inBlocks(workers, len(x), func(lo, hi int) float64 { return sum8plain(x[lo:hi]) })
}

// sum8plain must give the same bits as sum8 with the identity. The eight
// accumulators are variables, not an array: Go kept the array in memory,
// a load and a store per element (10^7 float64: 11 -> 7.5 ms). float64 on
// AVX-512 takes the vector loop, which adds the same lanes in the same order.
func sum8plain[T Number](x []T) float64 {
	switch v := any(x).(type) {
	case []float64:
		if s, ok := simdSumF64(v); ok {
			return s
		}
	case []float32:
		if s, ok := simdSumF32(v); ok {
			return s
		}
	}
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		y := x[i : i+8 : i+8]
		a0 += float64(y[0])
		a1 += float64(y[1])
		a2 += float64(y[2])
		a3 += float64(y[3])
		a4 += float64(y[4])
		a5 += float64(y[5])
		a6 += float64(y[6])
		a7 += float64(y[7])
	}
	s := ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
	for ; i < len(x); i++ {
		s += float64(x[i])
	}
	return s
}

// SumFloat64 is the float64 sum Reduce("sum") computes, for tests.
func SumFloat64(workers int, x []float64) float64 {
	return plainSum(workers, x)
}

func blockProd[T Number](workers int, x []T) float64 {
	nb := (len(x) + sumBlock - 1) / sumBlock
	parts := make([]float64, nb)
	parallel(workers, len(x), sumBlock, func(_, lo, hi int) {
		for b := lo; b < hi; b += sumBlock {
			p := 1.0
			for _, v := range x[b:min(hi, b+sumBlock)] {
				p *= float64(v)
			}
			parts[b/sumBlock] = p
		}
	})
	p := 1.0
	for _, q := range parts {
		p *= q
	}
	return p
}

// quietNaN is numpy's and pandas' NaN (0x7ff8000000000000; float32's
// conversion 0x7fc00000 is numpy's too): what numpy's max and min of an
// array with NaNs answer (its SIMD loops make it, whatever the array's
// NaNs' bits). Go's math.NaN() sets the lowest mantissa bit, so answers
// made with it differed from numpy's in their bits.
var quietNaN = math.Float64frombits(0x7ff8000000000000)

// minMax is the smallest (largest) element; NaN wins, as in numpy (its
// quiet NaN).
func minMax[T Number](workers int, x []T, isMax bool) T {
	nw := numWorkers(workers, len(x))
	parts := make([]T, nw)
	used := make([]bool, nw)
	parallel(workers, len(x), 1, func(w, lo, hi int) {
		seg := x[lo:hi]
		if f, ok := any(seg).([]float64); ok {
			if v, nan, ok := simdMinMaxF64(f, isMax); ok {
				if nan {
					v = quietNaN
				}
				parts[w], used[w] = any(v).(T), true
				return
			}
		}
		if f, ok := any(seg).([]float32); ok {
			if v, nan, ok := simdMinMaxF32(f, isMax); ok {
				if nan {
					v = float32(quietNaN)
				}
				parts[w], used[w] = any(v).(T), true
				return
			}
		}
		if f, ok := any(seg).([]int64); ok {
			if v, ok := simdMinMaxI64(f, isMax); ok {
				parts[w], used[w] = any(v).(T), true
				return
			}
		}
		m := seg[0]
		nan := false
		if isMax {
			for _, v := range seg {
				if v > m {
					m = v
				}
				nan = nan || v != v
			}
		} else {
			for _, v := range seg {
				if v < m {
					m = v
				}
				nan = nan || v != v
			}
		}
		if nan {
			m = T(quietNaN)
		}
		parts[w], used[w] = m, true
	})
	m := parts[0]
	for w := 1; w < nw; w++ {
		v := parts[w]
		if !used[w] || m != m {
			continue
		}
		if v != v || (isMax && v > m) || (!isMax && v < m) {
			m = v
		}
	}
	return m
}

// argMinMax is the index of the first smallest (largest) element, or of the
// first NaN.
func argMinMax[T Number](workers int, x []T, isMax bool) int {
	nw := numWorkers(workers, len(x))
	idx := make([]int, nw)
	for i := range idx {
		idx[i] = -1
	}
	better := func(v, m T) bool { // v replaces the current best m
		if m != m {
			return false
		}
		if v != v {
			return true
		}
		if isMax {
			return v > m
		}
		return v < m
	}
	parallel(workers, len(x), 1, func(w, lo, hi int) {
		if f, ok := any(x[lo:hi]).([]float64); ok {
			if j, ok := simdArgMinMaxF64(f, isMax); ok {
				idx[w] = lo + j
				return
			}
		}
		if f, ok := any(x[lo:hi]).([]int64); ok {
			if j, ok := simdArgMinMaxI64(f, isMax); ok {
				idx[w] = lo + j
				return
			}
		}
		best := lo
		for i := lo + 1; i < hi; i++ {
			if better(x[i], x[best]) {
				best = i
			}
		}
		idx[w] = best
	})
	best := idx[0]
	for _, i := range idx[1:] {
		if i >= 0 && better(x[i], x[best]) {
			best = i
		}
	}
	return best
}

// countNonzero counts elements != 0 (NaN counts); stopEarly lets each
// worker stop at its first hit (for any).
func countNonzero[T Number](workers int, x []T, stopEarly bool) int {
	parts := make([]int, numWorkers(workers, len(x)))
	parallel(workers, len(x), 1, func(w, lo, hi int) {
		c := 0
		for _, v := range x[lo:hi] {
			if v != 0 {
				c++
				if stopEarly {
					break
				}
			}
		}
		parts[w] = c
	})
	c := 0
	for _, p := range parts {
		c += p
	}
	return c
}

// Scan computes cumsum or cumprod of a into out (AccDType(a), a's length).
// Integer scans run in parallel (two passes; wrapping arithmetic makes any
// grouping exact); float scans run in one sequential pass, in numpy's order,
// so they match numpy bit for bit.
func Scan(env Env, op string, a, out *pdarray.Array) error {
	if op != "cumsum" && op != "cumprod" {
		return errorf(ErrValue, "unknown scan '%s'; scans are cumsum, cumprod", op)
	}
	prod := op == "cumprod"
	switch a.DType() {
	case dI8:
		scanInt(env, pdarray.View[int8](a), pdarray.View[int64](out), prod)
	case dI16:
		scanInt(env, pdarray.View[int16](a), pdarray.View[int64](out), prod)
	case dI32:
		scanInt(env, pdarray.View[int32](a), pdarray.View[int64](out), prod)
	case dI64:
		scanInt(env, pdarray.View[int64](a), pdarray.View[int64](out), prod)
	case dBool:
		scanInt(env, pdarray.BytesAs[uint8](a.Bytes()), pdarray.View[int64](out), prod)
	case dU8:
		scanInt(env, pdarray.View[uint8](a), pdarray.View[uint64](out), prod)
	case dU16:
		scanInt(env, pdarray.View[uint16](a), pdarray.View[uint64](out), prod)
	case dU32:
		scanInt(env, pdarray.View[uint32](a), pdarray.View[uint64](out), prod)
	case dU64:
		scanInt(env, pdarray.View[uint64](a), pdarray.View[uint64](out), prod)
	case dF32:
		scanSeq(pdarray.View[float32](a), pdarray.View[float32](out), prod)
	case dF64:
		scanSeq(pdarray.View[float64](a), pdarray.View[float64](out), prod)
	}
	return nil
}

func scanSeq[T Float](x, out []T, prod bool) {
	out = out[:len(x)]
	var acc T
	if prod {
		acc = 1
		for i, v := range x {
			acc *= v
			out[i] = acc
		}
		return
	}
	// -0.0, not 0: adding it changes no value, so a leading -0.0 stays
	// negative, as numpy's first element (copied, not added) does.
	acc = T(math.Copysign(0, -1))
	for i, v := range x {
		acc += v
		out[i] = acc
	}
}

func scanInt[T Integer, A int64 | uint64](env Env, x []T, out []A, prod bool) {
	out = out[:len(x)]
	nw := numWorkers(env.workers(), len(x))
	id := A(0)
	if prod {
		id = 1
	}
	op := func(p, q A) A {
		if prod {
			return p * q
		}
		return p + q
	}
	totals := make([]A, nw)
	env.parallel(len(x), 1, func(w, lo, hi int) {
		acc := id
		if prod {
			for _, v := range x[lo:hi] {
				acc *= A(v)
			}
		} else {
			for _, v := range x[lo:hi] {
				acc += A(v)
			}
		}
		totals[w] = acc
	})
	offs := make([]A, nw)
	acc := id
	for w := range totals {
		offs[w] = acc
		acc = op(acc, totals[w])
	}
	env.parallel(len(x), 1, func(w, lo, hi int) {
		acc := offs[w]
		if prod {
			for i := lo; i < hi; i++ {
				acc *= A(x[i])
				out[i] = acc
			}
			return
		}
		for i := lo; i < hi; i++ {
			acc += A(x[i])
			out[i] = acc
		}
	})
}

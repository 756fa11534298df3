package ops

// Integer-key fast paths of GroupBy: range scans and key packing read the
// typed key arrays directly instead of converting each chunk to sort keys
// in a buffer first (half the instructions, no scratch traffic), and integer
// keys never drop a row, so packing skips the drop checks.

import (
	"math"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// sortKeyInt is keyChunk's sort key of one integer.
func sortKeyInt[T Integer](v T) uint64 {
	if T(0)-1 < 0 { // signed
		return uint64(int64(v)) ^ (1 << 63)
	}
	return uint64(v)
}

// minMaxInt returns the sort keys of the smallest and largest of x
// (len(x) > 0); two independent pairs of accumulators halve the dependency
// chains.
func minMaxInt[T Integer](x []T) (uint64, uint64) {
	if mn, mx, ok := simdRange(x); ok {
		return sortKeyInt(mn), sortKeyInt(mx)
	}
	mn0, mx0 := x[0], x[0]
	mn1, mx1 := mn0, mx0
	i := 0
	for ; i+1 < len(x); i += 2 {
		a, b := x[i], x[i+1]
		mn0, mx0 = min(mn0, a), max(mx0, a)
		mn1, mx1 = min(mn1, b), max(mx1, b)
	}
	if i < len(x) {
		mn0, mx0 = min(mn0, x[i]), max(mx0, x[i])
	}
	return sortKeyInt(min(mn0, mn1)), sortKeyInt(max(mx0, mx1))
}

// intKeyRange is keyStatsOf's scan of an integer array: the sort keys of its
// smallest and largest values (ok false when a is empty).
func intKeyRange(env Env, a *pdarray.Array) (lo, hi uint64, ok bool) {
	switch a.DType() {
	case dI8:
		return intKeyRangeT(env, pdarray.View[int8](a))
	case dI16:
		return intKeyRangeT(env, pdarray.View[int16](a))
	case dI32:
		return intKeyRangeT(env, pdarray.View[int32](a))
	case dI64:
		return intKeyRangeT(env, pdarray.View[int64](a))
	case dU8, dBool:
		return intKeyRangeT(env, pdarray.BytesAs[uint8](a.Bytes())[:a.Len()])
	case dU16:
		return intKeyRangeT(env, pdarray.View[uint16](a))
	case dU32:
		return intKeyRangeT(env, pdarray.View[uint32](a))
	case dU64:
		return intKeyRangeT(env, pdarray.View[uint64](a))
	}
	panic("ops: intKeyRange of a non-integer array")
}

func intKeyRangeT[T Integer](env Env, x []T) (uint64, uint64, bool) {
	if len(x) == 0 {
		return 0, 0, false
	}
	nw := numWorkers(env.workers(), len(x))
	los, his := make([]uint64, nw), make([]uint64, nw)
	for w := range los {
		los[w] = math.MaxUint64
	}
	env.parallel(len(x), chunk, func(w, lo, hi int) {
		los[w], his[w] = minMaxInt(x[lo:hi])
	})
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for w := range los {
		lo, hi = min(lo, los[w]), max(hi, his[w])
	}
	return lo, hi, true
}

// packIntKey adds key s of rows [lo, hi) into p: p = (key-min)·stride for
// the first key, p += (key-min)·stride for the others. With a sink (a lone
// key of a dense grouping) it writes the sink's ids and occupancy instead.
func packIntKey(s *keySpec, first bool, lo, hi int, p []uint64, sink *denseSink) {
	if sink != nil {
		sink.lo, sink.hi = lo, hi
	}
	a := s.a
	switch a.DType() {
	case dI8:
		packIntT(pdarray.View[int8](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dI16:
		packIntT(pdarray.View[int16](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dI32:
		packIntT(pdarray.View[int32](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dI64:
		packIntT(pdarray.View[int64](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dU8, dBool:
		packIntT(pdarray.BytesAs[uint8](a.Bytes())[lo:hi], first, s.min, s.stride, p, sink)
	case dU16:
		packIntT(pdarray.View[uint16](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dU32:
		packIntT(pdarray.View[uint32](a)[lo:hi], first, s.min, s.stride, p, sink)
	case dU64:
		packIntT(pdarray.View[uint64](a)[lo:hi], first, s.min, s.stride, p, sink)
	default:
		panic("ops: packIntKey of a non-integer array")
	}
}

func packIntT[T Integer](x []T, first bool, mn, st uint64, p []uint64, sink *denseSink) {
	if sink != nil {
		markT(sink, x, mn)
		return
	}
	p = p[:len(x)]
	switch {
	case first && st == 1:
		for i, v := range x {
			p[i] = sortKeyInt(v) - mn
		}
	case first:
		for i, v := range x {
			p[i] = (sortKeyInt(v) - mn) * st
		}
	case st == 1:
		for i, v := range x {
			p[i] += sortKeyInt(v) - mn
		}
	default:
		for i, v := range x {
			p[i] += (sortKeyInt(v) - mn) * st
		}
	}
}

// denseSink is groupDense's fused pass for a lone integer key: each row's
// slot (key - min) goes straight into ids and the occupancy bitmap occ, with
// no packed-key buffer in between.
type denseSink struct {
	ids     []int32  // the rows' ids, indexed like the key array
	occ     []uint64 // this worker's occupancy bits
	total   uint64   // slots
	lo, hi  int      // the rows of this call (set by packIntKey)
	outside bool     // a key fell outside [min, min+total): it changed since its range was taken
}

// markT is denseSink's loop. A slot's bit is tested before it is set: the
// test is a load that almost always finds the bit set already, where an
// unconditional OR would chain every row through a store to the same few
// words of a small table (measured: 44-48 ms -> 31-38 ms for 10^7 rows into
// 100 slots, against 15-20 ms to write the ids alone).
func markT[T Integer](d *denseSink, x []T, mn uint64) {
	ids, occ, total := d.ids[d.lo:d.hi], d.occ, d.total
	ids = ids[:len(x)]
	for i, v := range x {
		k := sortKeyInt(v) - mn
		if k >= total {
			d.outside = true
			k = 0
		}
		ids[i] = int32(k)
		if w := occ[k>>6]; w&(1<<(k&63)) == 0 {
			occ[k>>6] = w | 1<<(k&63)
		}
	}
}

// markInt64Keys is denseSink's fused pass for two or three int64 keys (the
// usual multi-key case: zones, hours): each row's packed key is computed
// from the three arrays in registers and goes straight into ids and the
// occupancy bitmap occ. It reports whether a key fell outside its range.
func markInt64Keys(specs []keySpec, lo, hi int, ids []int32, occ []uint64) bool {
	start := lo
	out := ids[lo:hi]
	a := pdarray.View[int64](specs[0].a)[lo:hi]
	b := pdarray.View[int64](specs[1].a)[lo:hi]
	a, b = a[:len(out)], b[:len(out)]
	m0, m1, s0, s1 := specs[0].min, specs[1].min, specs[0].stride, specs[1].stride
	n0, n1 := specs[0].span, specs[1].span
	bad := false
	if loneAsmBuilt && !simdOff.Load() && len(out) > 0 {
		// The same loop in assembly (lone_amd64.s), in blocks (it cannot
		// be preempted); TestMarkInt64KeysAsGo holds it to this one.
		const flip = uint64(1) << 63
		asmBlocks(len(out), func(lo, hi int) {
			if len(specs) == 2 {
				bad = markKeys2Asm(unsafe.Pointer(&a[lo]), unsafe.Pointer(&b[lo]), hi-lo, m0^flip, m1^flip, n0, n1, s0,
					unsafe.Pointer(&out[lo]), unsafe.Pointer(&occ[0])) || bad
				return
			}
			c := pdarray.View[int64](specs[2].a)
			bad = markKeys3Asm(unsafe.Pointer(&a[lo]), unsafe.Pointer(&b[lo]), unsafe.Pointer(&c[start+lo]), hi-lo,
				m0^flip, m1^flip, specs[2].min^flip, n0, n1, specs[2].span, s0, s1,
				unsafe.Pointer(&out[lo]), unsafe.Pointer(&occ[0])) || bad
		})
		return bad
	}
	if len(specs) == 2 {
		for i := range out {
			r0, r1 := sortKeyInt(a[i])-m0, sortKeyInt(b[i])-m1
			if r0 >= n0 || r1 >= n1 {
				bad = true
				r0, r1 = 0, 0
			}
			k := r0*s0 + r1
			out[i] = int32(k)
			if w := occ[k>>6]; w&(1<<(k&63)) == 0 {
				occ[k>>6] = w | 1<<(k&63)
			}
		}
		return bad
	}
	c := pdarray.View[int64](specs[2].a)[lo:hi]
	c = c[:len(out)]
	m2, n2 := specs[2].min, specs[2].span
	for i := range out {
		r0, r1, r2 := sortKeyInt(a[i])-m0, sortKeyInt(b[i])-m1, sortKeyInt(c[i])-m2
		if r0 >= n0 || r1 >= n1 || r2 >= n2 {
			bad = true
			r0, r1, r2 = 0, 0, 0
		}
		k := r0*s0 + r1*s1 + r2
		out[i] = int32(k)
		if w := occ[k>>6]; w&(1<<(k&63)) == 0 {
			occ[k>>6] = w | 1<<(k&63)
		}
	}
	return bad
}

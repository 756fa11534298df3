package ops

// Per-group top k (db-benchmark's "largest two v3 by id6") and correlation
// of two value arrays per group ("r² of v1, v2 by id2, id4").

import (
	"math"
	"sync/atomic"

	"github.com/arktos-dev/arktos/pdarray"
)

// MaxTopK bounds k in GroupTopK: each group keeps k values per worker.
const MaxTopK = 1 << 16

// GroupTopK returns the k largest (largest true) or smallest non-NaN values
// of each group: groups in order, each group's values from the largest down
// (or the smallest up), in a new array of vals' dtype, and beside it the
// group (int64) of every element. A group with fewer than k values gives
// all it has. The values are compared as sort keys (sort.go), so every
// dtype keeps its exact values and order.
func GroupTopK(env Env, ids *pdarray.Array, ng, k int, largest bool, vals *pdarray.Array) (out, groups *pdarray.Array, err error) {
	if ids.DType() != pdarray.Int32 {
		return nil, nil, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	if vals.Len() != ids.Len() {
		return nil, nil, errorf(ErrValue, "values have %d elements but the group-by has %d rows", vals.Len(), ids.Len())
	}
	if Kind(vals.DType()) == 0 {
		return nil, nil, errorf(ErrType, "cannot take the largest or smallest of a %v array", vals.DType())
	}
	if k < 1 || k > MaxTopK {
		return nil, nil, errorf(ErrValue, "n must be between 1 and %d, got %d", MaxTopK, k)
	}
	gid := pdarray.View[int32](ids)
	n := len(gid)
	nw := rowSplit(env, n, ng)
	if nw > 1 && ng*k*nw > n/2 {
		nw = 1 // per-worker states would outweigh the rows
	}
	// State of group g on worker w: keys[(w*ng+g)*k:][:cnt[w*ng+g]], best first.
	keys, freeKeys, err := slotsOf[uint64](env, nw*ng*k)
	if err != nil {
		return nil, nil, err
	}
	defer freeKeys()
	cnt, freeCnt, err := slotsOf[int32](env, nw*ng)
	if err != nil {
		return nil, nil, err
	}
	defer freeCnt()
	isFloat := Kind(vals.DType()) == 'f'
	var flip uint64 // smallest: compare the complements
	if !largest {
		flip = math.MaxUint64
	}
	scan := func(w, lo, hi int, glo, ghi int32) {
		ks, cs := keys[w*ng*k:(w+1)*ng*k], cnt[w*ng:(w+1)*ng]
		span := uint32(ghi - glo)
		buf := make([]uint64, chunk)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			keyChunk(vals, c, e, buf)
			for i, key := range buf[:e-c] {
				g := gid[c+i]
				if uint32(g-glo) >= span || isFloat && key == nanKey {
					continue
				}
				topInsert(ks[int(g)*k:int(g)*k+k], &cs[g], key^flip)
			}
		}
	}
	if nw > 1 {
		env.parallel(n, chunk, func(w, lo, hi int) { scan(w, lo, hi, 0, int32(ng)) })
		for w := 1; w < nw; w++ { // merge into worker 0's states
			for g := 0; g < ng; g++ {
				src := keys[(w*ng+g)*k:][:cnt[w*ng+g]]
				for _, key := range src {
					topInsert(keys[g*k:g*k+k], &cnt[g], key)
				}
			}
		}
	} else {
		byGroups(env, n, ng, func(glo, ghi int32) { scan(0, 0, n, glo, ghi) })
	}
	total := 0
	for _, c := range cnt[:ng] {
		total += int(c)
	}
	flat, freeFlat, err := scratchOf[uint64](env, total)
	if err != nil {
		return nil, nil, err
	}
	defer freeFlat()
	if out, err = env.Alloc(vals.DType(), total); err != nil {
		return nil, nil, err
	}
	if groups, err = env.Alloc(dI64, total); err != nil {
		env.free(out)
		return nil, nil, err
	}
	gs := pdarray.View[int64](groups)
	j := 0
	for g, c := range cnt[:ng] {
		for _, key := range keys[g*k : g*k+int(c)] {
			flat[j], gs[j] = key^flip, int64(g)
			j++
		}
	}
	unpackAll(env, []keySpec{{a: vals, stride: 1, span: math.MaxUint64}}, flat, []*pdarray.Array{out}, nil)
	return out, groups, nil
}

// topInsert puts key into a group's best-first list s (*c of len(s) used)
// if it is among the len(s) largest so far.
func topInsert(s []uint64, c *int32, key uint64) {
	m := int(*c)
	if m == len(s) {
		if key <= s[m-1] {
			return
		}
		m-- // the smallest falls off
	} else {
		*c++
	}
	i := m
	for i > 0 && s[i-1] < key {
		s[i] = s[i-1]
		i--
	}
	s[i] = key
}

// corrSlot is one group's state for GroupCorr: pass one sums x and y over
// the rows where both are numbers; pass two adds the co-moments about the
// means.
type corrSlot struct {
	sx, sy     float64
	n          int64
	xx, yy, xy float64
}

// GroupCorr returns, in a new float64 array, the Pearson correlation of x
// and y within each group over the rows where both are numbers (pandas'
// pairwise-complete corr); NaN for a group with fewer than two such rows or
// a constant x or y. Two passes in row order (sums, then co-moments about
// the means), so the result is the same at any worker count.
func GroupCorr(env Env, ids *pdarray.Array, ng int, x, y *pdarray.Array) (*pdarray.Array, error) {
	if ids.DType() != pdarray.Int32 {
		return nil, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	for _, a := range []*pdarray.Array{x, y} {
		if a.Len() != ids.Len() {
			return nil, errorf(ErrValue, "values have %d elements but the group-by has %d rows", a.Len(), ids.Len())
		}
		if Kind(a.DType()) == 0 || a.DType() == dBool {
			return nil, errorf(ErrType, "corr needs numeric arrays, got %v", a.DType())
		}
	}
	gid := pdarray.View[int32](ids)
	n := len(gid)
	if isInt(x.DType()) && isInt(y.DType()) {
		out, ok, err := groupCorrInts(env, gid, ng, x, y)
		if err != nil || ok {
			return out, err
		}
	}
	st, freeSt, err := slotsOf[corrSlot](env, ng)
	if err != nil {
		return nil, err
	}
	defer freeSt()
	// Each worker owns a range of groups and reads every row in order.
	pass := func(second bool) {
		orderedScan(env, n, ng, func(glo, ghi int32) {
			span := uint32(ghi - glo)
			bx, by := make([]float64, chunk), make([]float64, chunk)
			for c := 0; c < n; c += chunk {
				e := min(n, c+chunk)
				xs, ys := chunkAs(x, c, e, bx), chunkAs(y, c, e, by)
				for i, g := range gid[c:e] {
					if uint32(g-glo) >= span {
						continue
					}
					a, b := xs[i], ys[i]
					if a != a || b != b {
						continue
					}
					s := &st[g]
					if !second {
						s.sx += a
						s.sy += b
						s.n++
						continue
					}
					dx, dy := a-s.sx, b-s.sy // sx, sy hold the means now
					s.xx += dx * dx
					s.yy += dy * dy
					s.xy += dx * dy
				}
			}
		})
	}
	pass(false)
	for g := range st {
		if st[g].n > 0 {
			st[g].sx /= float64(st[g].n)
			st[g].sy /= float64(st[g].n)
		}
	}
	pass(true)
	out, err := env.Alloc(dF64, ng)
	if err != nil {
		return nil, err
	}
	o := pdarray.View[float64](out)
	for g, s := range st {
		o[g] = quietNaN
		if d := math.Sqrt(s.xx * s.yy); s.n >= 2 && d > 0 {
			o[g] = s.xy / d
		}
	}
	return out, nil
}

// chunkAs returns a[lo:hi] as T: a view when a holds T, else converted
// into buf (uint64 above MaxInt64 wraps negative as int64, which the
// magnitude check of groupCorrInts then refuses).
func chunkAs[T int64 | float64](a *pdarray.Array, lo, hi int, buf []T) []T {
	d := pdarray.DTypeOf[T]()
	if a.DType() == d {
		return pdarray.View[T](a)[lo:hi]
	}
	sz := a.DType().Size()
	castBytes(d, pdarray.AsBytes(buf[:hi-lo]), a.DType(), a.Bytes()[lo*sz:hi*sz])
	return buf[:hi-lo]
}

// corrInts is one group's integer moments for groupCorrInts.
type corrInts struct{ n, sx, sy, sxx, syy, sxy int64 }

// corrIntPasses counts GroupCorr calls answered by groupCorrInts.
var corrIntPasses atomic.Uint64

// groupCorrInts is GroupCorr of two integer arrays in one pass: each worker
// sums n, x, y, x², y² and xy of its block of rows in int64, merged at the
// end, and each group's r comes from the exact integers
// n·Σxy − Σx·Σy, n·Σx² − (Σx)², n·Σy² − (Σy)², each rounded once to
// float64: as accurate as the two-pass float loop or more, and the same at
// any worker count. It needs rows² · max|x| · max|y| (and the squares) below
// 2^62 so nothing overflows; when a value breaks that (checked during the
// pass), ok is false and the float passes run instead.
func groupCorrInts(env Env, gid []int32, ng int, x, y *pdarray.Array) (out *pdarray.Array, ok bool, err error) {
	n := len(gid)
	nw := rowSplit(env, n, ng)
	parts, free, err := slotsOf[corrInts](env, nw*ng)
	if err != nil {
		return nil, false, err
	}
	defer free()
	mags := make([][2]uint64, nw)
	body := func(w, lo, hi int) {
		acc := parts[w*ng : (w+1)*ng]
		bx, by := make([]int64, chunk), make([]int64, chunk)
		var mx, my uint64
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			xs, ys := chunkAs(x, c, e, bx), chunkAs(y, c, e, by)
			ids := gid[c:e]
			xs, ys = xs[:len(ids)], ys[:len(ids)]
			for i, g := range ids {
				a, b := xs[i], ys[i]
				mx = max(mx, absU(a))
				my = max(my, absU(b))
				if uint32(g) < uint32(ng) {
					s := &acc[g]
					s.n++
					s.sx += a
					s.sy += b
					s.sxx += a * a
					s.syy += b * b
					s.sxy += a * b
				}
			}
		}
		mags[w] = [2]uint64{mx, my}
	}
	if nw > 1 {
		env.parallel(n, chunk, body)
	} else {
		body(0, 0, n)
	}
	var mx, my uint64
	for _, m := range mags {
		mx, my = max(mx, m[0]), max(my, m[1])
	}
	const limit = 1 << 62
	rows := uint64(max(n, 1))
	fits := func(a, b uint64) bool { // rows² · a · b < 2^62, without overflow
		if a == 0 || b == 0 {
			return true
		}
		return rows <= limit/rows && a <= limit/(rows*rows) && b <= limit/(rows*rows*a)
	}
	if !fits(mx, my) || !fits(mx, mx) || !fits(my, my) {
		return nil, false, nil
	}
	st := parts[:ng]
	for w := 1; w < nw; w++ {
		for g, p := range parts[w*ng : (w+1)*ng] {
			s := &st[g]
			s.n += p.n
			s.sx += p.sx
			s.sy += p.sy
			s.sxx += p.sxx
			s.syy += p.syy
			s.sxy += p.sxy
		}
	}
	if out, err = env.Alloc(dF64, ng); err != nil {
		return nil, false, err
	}
	o := pdarray.View[float64](out)
	for g, s := range st {
		o[g] = quietNaN
		cov := float64(s.n*s.sxy - s.sx*s.sy)
		vx, vy := float64(s.n*s.sxx-s.sx*s.sx), float64(s.n*s.syy-s.sy*s.sy)
		if d := math.Sqrt(vx * vy); s.n >= 2 && d > 0 {
			o[g] = cov / d
		}
	}
	corrIntPasses.Add(1)
	return out, true, nil
}

func absU(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

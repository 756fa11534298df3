package ops

// Group-by, step two: reductions of a value array over the group ids of
// GroupBy (int32, -1 for a dropped row). NaN values are skipped, as pandas'
// skipna does.
//
// Parallel work: operations whose result does not depend on the order rows
// are combined in (counts, integer sums and products, min, max, argmin,
// argmax, first, any, all) split the rows into contiguous blocks with one
// state per group per worker, merged in worker order, when the states fit
// (groups × workers ≤ rows/2); otherwise, and for every float sum, each
// worker owns a contiguous range of group ids and scans all rows in order,
// so a float sum is accumulated in row order within each group: bit-identical
// to a sequential loop whatever the worker count.

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// GroupAggOps lists the aggregations GroupAgg accepts.
var GroupAggOps = []string{"size", "count", "sum", "prod", "mean", "min", "max", "argmin", "argmax",
	"nunique", "first", "mode", "any", "all", "var", "std", "median", "or", "and", "xor"}

// GroupAggDType is the result dtype of aggregation op over values of dtype d.
func GroupAggDType(op string, d pdarray.DType) (pdarray.DType, error) {
	switch op {
	case "size", "count", "nunique", "argmin", "argmax":
		return dI64, nil
	case "sum", "prod":
		return AccDType(d), nil
	case "mean", "var", "std", "median":
		return dF64, nil
	case "min", "max", "first", "mode":
		return d, nil
	case "any", "all":
		return dBool, nil
	case "or", "and", "xor":
		if Kind(d) == 'f' {
			return 0, errorf(ErrType, "group-by aggregation '%s' is bitwise: it takes integer or bool values, not %v (cast them with astype first)", op, d)
		}
		return d, nil
	}
	return 0, errorf(ErrValue, "unknown group-by aggregation '%s'; aggregations are %v", op, GroupAggOps)
}

// GroupAgg returns, in a new array of ngroups elements from env, aggregation
// op of vals over the group ids (ids: int32 from GroupBy). vals may be nil
// for "size". ddof is used by var and std.
func GroupAgg(env Env, ids *pdarray.Array, ngroups int, op string, vals *pdarray.Array, ddof float64) (*pdarray.Array, error) {
	outs, err := GroupAggMany(env, ids, ngroups, []string{op}, vals, ddof)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// GroupAggMany returns aggregations ops of vals over the group ids, one new
// array per op. Aggregations that share a pass over the rows get it once:
// size, count, sum (of floats), mean, var and std all come from one pass
// that keeps a row count, a value count and a row-order float sum per
// group (var and std add a second pass for the squared deviations).
func GroupAggMany(env Env, ids *pdarray.Array, ngroups int, ops []string, vals *pdarray.Array, ddof float64) ([]*pdarray.Array, error) {
	return groupAggMany(env, ids, ngroups, ops, vals, ddof, nil)
}

// groupAggMany is GroupAggMany given, in pre when not nil, the shared sums
// pass of vals already made (groupFloatSumsCols).
func groupAggMany(env Env, ids *pdarray.Array, ngroups int, ops []string, vals *pdarray.Array, ddof float64, pre []sumSlot) ([]*pdarray.Array, error) {
	if ids.DType() != pdarray.Int32 {
		return nil, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	if len(ops) == 0 {
		return nil, errorf(ErrValue, "no aggregation asked for; aggregations are %v", GroupAggOps)
	}
	vd := dI64
	if vals != nil {
		vd = vals.DType()
		if vals.Len() != ids.Len() {
			return nil, errorf(ErrValue, "values have %d elements but the group-by has %d rows", vals.Len(), ids.Len())
		}
	}
	outs := make([]*pdarray.Array, len(ops))
	fail := func(err error) ([]*pdarray.Array, error) {
		env.free(outs...)
		return nil, err
	}
	for i, op := range ops {
		if vals == nil && op != "size" {
			return fail(errorf(ErrValue, "aggregation '%s' needs a values array", op))
		}
		rd, err := GroupAggDType(op, vd)
		if err != nil {
			return fail(err)
		}
		if outs[i], err = env.Alloc(rd, ngroups); err != nil {
			return fail(err)
		}
	}
	gid := pdarray.View[int32](ids)
	var err error
	if vals == nil {
		err = groupAggManyT(env, gid, ngroups, ops, []int64(nil), outs, ddof, pre)
	} else {
		switch vd {
		case dI8:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[int8](vals), outs, ddof, pre)
		case dI16:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[int16](vals), outs, ddof, pre)
		case dI32:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[int32](vals), outs, ddof, pre)
		case dI64:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[int64](vals), outs, ddof, pre)
		case dU8, dBool:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.BytesAs[uint8](vals.Bytes())[:vals.Len()], outs, ddof, pre)
		case dU16:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[uint16](vals), outs, ddof, pre)
		case dU32:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[uint32](vals), outs, ddof, pre)
		case dU64:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[uint64](vals), outs, ddof, pre)
		case dF32:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[float32](vals), outs, ddof, pre)
		case dF64:
			err = groupAggManyT(env, gid, ngroups, ops, pdarray.View[float64](vals), outs, ddof, pre)
		default:
			err = errorf(ErrType, "cannot aggregate a %v array", vd)
		}
	}
	if err != nil {
		return fail(err)
	}
	return outs, nil
}

// AggColumn is one value array (nil: only "size") and the aggregations
// asked of it.
type AggColumn struct {
	Values *pdarray.Array
	Ops    []string
}

// GroupAggColumns is GroupAggMany for several value arrays over one
// grouping, the results in the order of cols and of each column's ops.
// With several columns and several workers the columns run side by side,
// each with its share of the workers: a float sum over few groups runs on
// one worker whatever it is given (bit-exact row order), so three such
// columns on two workers take two column-times instead of three. Every
// result is the same as GroupAggMany's at any worker count.
func GroupAggColumns(env Env, ids *pdarray.Array, ngroups int, cols []AggColumn, ddof float64) ([][]*pdarray.Array, error) {
	outs := make([][]*pdarray.Array, len(cols))
	errs := make([]error, len(cols))
	w := env.workers()
	pre, free, err := groupFloatSumsCols(env, ids, ngroups, cols)
	if err != nil {
		return nil, err
	}
	defer free()
	// Arrays side by side when several need a pass of their own; a "size"
	// (no array), or an array whose sums the shared pass made, is cheap and
	// takes no worker share (taxi's sum, size and mean of one array got one
	// worker of two for its banded sums when "size" counted as a column).
	heavy := 0
	for i, c := range cols {
		if c.Values != nil && pre[i] == nil {
			heavy++
		}
	}
	if heavy <= 1 || w <= 1 {
		for i, c := range cols {
			if outs[i], errs[i] = groupAggMany(env, ids, ngroups, c.Ops, c.Values, ddof, pre[i]); errs[i] != nil {
				break
			}
		}
	} else {
		sideBySide.Add(1)
		per := max(1, w/heavy)
		sub := env
		sub.Workers = per
		slots := make(chan struct{}, max(1, w/per))
		var g par.Group
		for i, c := range cols {
			slots <- struct{}{}
			g.Go(func() {
				defer func() { <-slots }()
				outs[i], errs[i] = groupAggMany(sub, ids, ngroups, c.Ops, c.Values, ddof, pre[i])
			})
		}
		g.Wait()
	}
	for _, err := range errs {
		if err != nil {
			for _, o := range outs {
				env.free(o...)
			}
			return nil, err
		}
	}
	return outs, nil
}

// sideBySide counts GroupAggColumns calls that split the workers between
// arrays (tests check a lone array keeps them all).
var sideBySide atomic.Uint64

// fusedColsPasses counts groupFloatSumsCols passes (tests check the path).
var fusedColsPasses atomic.Uint64

// groupFloatSumsCols makes the sums pass of every column that needs one
// (mean, var, std; sum of floats) together, when two or more do and the
// groups' states stay in cache: the columns are dealt out to the workers
// (at most one bin per worker), and each bin's columns are added row-major
// in one read of the ids, up to three columns per loop, each column still
// in row order within each group (bit-identical to groupFloatSums). Values
// are converted to float64 a chunk at a time. pre[i] is nil for a column
// that needs no sums, and for all of them when the shared pass does not run
// (then each column runs its own pass).
//
// On several workers with int64 columns, intColSums shares the work out
// instead. Measured on G1 q4's aggregation (means of two int64 arrays and
// one float64 array over 100 groups, 10^7 rows, BenchmarkG1Q4/agg): on one
// worker one sumSlot pass per array took 85 ms, the shared sumSlot pass
// 150 ms (its row index spilled to the stack), these row-major loops
// 50-58 ms; on two workers 53 ms before intColSums, 35-40 ms with it.
func groupFloatSumsCols(env Env, ids *pdarray.Array, ng int, cols []AggColumn) (pre [][]sumSlot, free func(), err error) {
	pre = make([][]sumSlot, len(cols))
	var frees []func()
	free = func() {
		for _, f := range frees {
			f()
		}
	}
	var need []int
	for i, c := range cols {
		if c.Values == nil || c.Values.Len() != ids.Len() || ids.DType() != pdarray.Int32 || Kind(c.Values.DType()) == 0 {
			continue // GroupAggMany reports what is wrong
		}
		for _, op := range c.Ops {
			if op == "mean" || op == "var" || op == "std" || op == "sum" && Kind(c.Values.DType()) == 'f' {
				need = append(need, i)
				break
			}
		}
	}
	if len(need) < 2 || ng*int(unsafe.Sizeof(sumSlot{})) > bandedMinBytes || ids.Len() > math.MaxInt32 {
		return pre, free, nil
	}
	for _, i := range need {
		s, f, err := slotsOf[sumSlot](env, ng)
		if err != nil {
			free()
			return nil, nil, err
		}
		frees = append(frees, f)
		pre[i] = s
	}
	// int64 columns first, so that a bin's columns share a dtype (one loop).
	isI64 := func(i int) int {
		if cols[i].Values.DType() == dI64 {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(need, func(a, b int) int { return isI64(a) - isI64(b) })
	nI := 0
	for _, i := range need {
		nI += 1 - isI64(i)
	}
	w := env.workers()
	// Sums (float64) and NaN counts of each column; each bin's row counts
	// and, past three columns, a second row count nobody reads.
	sums, freeS, err := slotsOf[float64](env, len(need)*ng)
	if err != nil {
		free()
		return nil, nil, err
	}
	frees = append(frees, freeS)
	cnts, freeC, err := slotsOf[int32](env, (len(need)+2*(w+1))*ng)
	if err != nil {
		free()
		return nil, nil, err
	}
	frees = append(frees, freeC)
	fusedColsPasses.Add(1)
	gid := pdarray.View[int32](ids)
	// sumBin adds the columns need[j], j in js, over all rows in row order
	// with bin b's counts, and writes their sumSlots.
	sumBin := func(b int, js []int) {
		rows := cnts[(len(need)+2*b)*ng : (len(need)+2*b+1)*ng]
		spare := cnts[(len(need)+2*b+1)*ng : (len(need)+2*b+2)*ng]
		// int64 columns are read as they are, the others as float64
		// (converted a chunk at a time unless they are float64).
		var ints, flts []int
		for _, j := range js {
			if isI64(need[j]) == 0 {
				ints = append(ints, j)
			} else {
				flts = append(flts, j)
			}
		}
		bufs := make([][]float64, len(flts))
		for k := range bufs {
			bufs[k] = make([]float64, chunk)
		}
		iv := make([][]int64, len(ints))
		fv := make([][]float64, len(flts))
		for c := 0; c < len(gid); c += chunk {
			e := min(len(gid), c+chunk)
			g := gid[c:e]
			for k, j := range ints {
				iv[k] = pdarray.View[int64](cols[need[j]].Values)[c:e]
			}
			for k, j := range flts {
				fv[k] = chunkAs(cols[need[j]].Values, c, e, bufs[k])
			}
			addRowsCols(rows, spare, g, sums, cnts, ng, ints, iv)
			r := rows
			if len(ints) > 0 {
				r = spare
			}
			addRowsCols(r, spare, g, sums, cnts, ng, flts, fv)
		}
		for _, j := range js {
			p, sj, nj := pre[need[j]], sums[j*ng:(j+1)*ng], cnts[j*ng:(j+1)*ng]
			for g := range p {
				p[g] = sumSlot{s: sj[g], n: rows[g] - nj[g], rows: rows[g]}
			}
		}
	}
	if w == 1 || nI == 0 {
		// One bin per worker, a contiguous share of need each (int64
		// columns together, so they share loops).
		nb := min(w, len(need))
		parallelN(nb, func(b int) { sumBin(b, binOf(0, len(need), b, nb)) })
		return pre, free, nil
	}
	if !intColSums(env, gid, ng, cols, need[:nI], len(need)-nI, sumBin, pre) {
		sumBin(0, binOf(0, nI, 0, 1)) // a value too large for exact sums
	}
	return pre, free, nil
}

// binOf is bin b of nb contiguous bins over the indexes [lo, hi).
func binOf(lo, hi, b, nb int) []int {
	js := make([]int, 0, hi-lo)
	for j := lo + b*(hi-lo)/nb; j < lo+(b+1)*(hi-lo)/nb; j++ {
		js = append(js, j)
	}
	return js
}

// intSharedPasses counts intColSums calls that gave the sums (tests check
// the path is taken).
var intSharedPasses atomic.Uint64

// intColSums is groupFloatSumsCols on several workers with int64 columns
// (ints, need's first; the nF others, need[len(ints):], must each be summed
// on one worker in row order): the workers first take one bin of those each
// (sumBin), then blocks of rows
// of every int64 column, summed exactly in int64 into per-worker sums
// merged at the end. As exactIntSums, these equal the row-order float64
// sums when no value exceeds 2^53/rows in magnitude (checked on the way,
// from an OR of the magnitudes); when one does it returns false having
// written only flts' sums. G1 q4 (the means of two int64 arrays and one
// float64 array over 100 groups) then keeps both workers busy, where one
// bin each left the float bin's worker idle half the time.
func intColSums(env Env, gid []int32, ng int, cols []AggColumn, ints []int, nF int, sumBin func(b int, js []int), pre [][]sumSlot) bool {
	const block = 1 << 15 // rows a task: its ids stay in L2 for each loop
	w := env.workers()
	nI := len(ints)
	nf := min(w, nF)
	fbin := func(t int) { sumBin(1+t, binOf(nI, nI+nF, t, nf)) } // bin 0 is the fallback's
	parts, freeP, err := slotsOf[int64](env, w*nI*ng)
	if err == nil {
		defer freeP()
	}
	prows, freeR, err2 := slotsOf[int32](env, w*ng)
	if err2 == nil {
		defer freeR()
	}
	if err != nil || err2 != nil { // no room for the partials: ordered loops
		if nf > 0 {
			parallelN(nf, fbin)
		}
		return false
	}
	mags := make([]uint64, w)
	xs := make([][]int64, nI)
	for k, i := range ints {
		xs[k] = pdarray.View[int64](cols[i].Values)[:len(gid)]
	}
	nblk := (len(gid) + block - 1) / block
	var next atomic.Int64
	parallelN(w, func(wk int) {
		ps := parts[wk*nI*ng : (wk+1)*nI*ng]
		rows := prows[wk*ng : (wk+1)*ng]
		var mag uint64
		for {
			t := int(next.Add(1)) - 1
			env.check()
			if t < nf {
				fbin(t)
				continue
			}
			if t -= nf; t >= nblk {
				break
			}
			lo, hi := t*block, min(len(gid), (t+1)*block)
			g := gid[lo:hi]
			for k := 0; k < nI; k += 3 {
				r := rows
				if k > 0 { // counted by the first loop
					r = nil
				}
				s := func(k int) []int64 { return ps[k*ng : (k+1)*ng] }
				switch nI - k {
				case 1:
					mag |= addInts1(r, g, s(k), xs[k][lo:hi])
				case 2:
					mag |= addInts2(r, g, s(k), s(k+1), xs[k][lo:hi], xs[k+1][lo:hi])
				default:
					mag |= addInts3(r, g, s(k), s(k+1), s(k+2), xs[k][lo:hi], xs[k+1][lo:hi], xs[k+2][lo:hi])
				}
			}
		}
		mags[wk] = mag
	})
	var or uint64
	for _, m := range mags {
		or |= m
	}
	// or's bits cover every |value|: the largest is below 2^bits.Len64(or).
	if bits.Len64(or) > 53 || (uint64(1)<<bits.Len64(or)-1)*uint64(len(gid)) > 1<<53 {
		return false
	}
	for k, i := range ints {
		p := pre[i]
		for g := range p {
			var sum int64
			var rows int32
			for wk := 0; wk < w; wk++ {
				sum += parts[(wk*nI+k)*ng+g]
				rows += prows[wk*ng+g]
			}
			p[g] = sumSlot{s: float64(sum), n: rows, rows: rows} // exact: |sum| <= 2^53
		}
	}
	intSharedPasses.Add(1)
	return true
}

// absBits is |v| as a uint64 (for an OR of magnitudes).
func absBits(v int64) uint64 {
	s := v >> 63
	return uint64((v ^ s) - s)
}

// addInts1, addInts2 and addInts3 add one, two or three int64 columns into
// their exact sums s[g] and count each row in rows[g] (unless rows is nil);
// ids outside the sums are skipped. Each returns the OR of every value's
// magnitude.
//
//go:noinline
func addInts1(rows, g []int32, s0 []int64, x0 []int64) uint64 {
	x0 = x0[:len(g)]
	var m uint64
	for r, id := range g {
		a := x0[r]
		m |= absBits(a)
		if uint32(id) >= uint32(len(s0)) {
			continue
		}
		s0[id] += a
	}
	if rows != nil {
		countRows(rows, g)
	}
	return m
}

//go:noinline
func addInts2(rows, g []int32, s0, s1 []int64, x0, x1 []int64) uint64 {
	x0, x1 = x0[:len(g)], x1[:len(g)]
	s1 = s1[:len(s0)]
	var m uint64
	for r, id := range g {
		a, b := x0[r], x1[r]
		m |= absBits(a) | absBits(b)
		if uint32(id) >= uint32(len(s0)) {
			continue
		}
		s0[id] += a
		s1[id] += b
	}
	if rows != nil {
		countRows(rows, g)
	}
	return m
}

//go:noinline
func addInts3(rows, g []int32, s0, s1, s2 []int64, x0, x1, x2 []int64) uint64 {
	x0, x1, x2 = x0[:len(g)], x1[:len(g)], x2[:len(g)]
	s1, s2 = s1[:len(s0)], s2[:len(s0)]
	var m uint64
	for r, id := range g {
		a, b, c := x0[r], x1[r], x2[r]
		m |= absBits(a) | absBits(b) | absBits(c)
		if uint32(id) >= uint32(len(s0)) {
			continue
		}
		s0[id] += a
		s1[id] += b
		s2[id] += c
	}
	if rows != nil {
		countRows(rows, g)
	}
	return m
}

// countRows adds each row of g into rows[g] (ids outside rows skipped).
func countRows(rows, g []int32) {
	for _, id := range g {
		if uint32(id) < uint32(len(rows)) {
			rows[id]++
		}
	}
}

// addRowsCols adds one chunk of rows (ids g) of the columns xs, whose sums
// and NaN counts are sums[j*ng:] and nans[j*ng:] for j = js[k], three
// columns (or fewer) per loop; rows counts the chunk's rows once (the loops
// after the first count into spare, which nobody reads).
func addRowsCols[T int64 | float64](rows, spare, g []int32, sums []float64, nans []int32, ng int, js []int, xs [][]T) {
	sum := func(j int) []float64 { return sums[j*ng : (j+1)*ng] }
	nan := func(j int) []int32 { return nans[j*ng : (j+1)*ng] }
	for k := 0; k < len(js); k += 3 {
		r := rows
		if k > 0 {
			r = spare
		}
		switch j := js[k:]; len(j) {
		case 1:
			addRows1(r, g, sum(j[0]), nan(j[0]), xs[k])
		case 2:
			addRows2(r, g, sum(j[0]), sum(j[1]), nan(j[0]), nan(j[1]), xs[k], xs[k+1])
		default:
			addRows3(r, g, sum(j[0]), sum(j[1]), sum(j[2]), nan(j[0]), nan(j[1]), nan(j[2]), xs[k], xs[k+1], xs[k+2])
		}
	}
}

// addRows1, addRows2 and addRows3 add one row of one, two or three columns
// at a time: rows[g]++ and, for each column, x[r] into its sum s[g] in row
// order or, for a NaN, nan[g]++ (ids outside rows are skipped; every slice
// has len(rows) groups). Several columns per loop keep more independent
// updates in flight than one loop per column; each is its own function so
// its slices stay in registers (measured: 1.2-2 ns a row and column, against
// 2-3 ns for one sumSlot loop per column).
//
//go:noinline
func addRows1[T int64 | float64](rows, g []int32, s0 []float64, n0 []int32, x0 []T) {
	x0 = x0[:len(g)]
	s0, n0 = s0[:len(rows)], n0[:len(rows)]
	for r, id := range g {
		if uint32(id) >= uint32(len(rows)) {
			continue
		}
		rows[id]++
		if v := float64(x0[r]); v == v {
			s0[id] += v
		} else {
			n0[id]++
		}
	}
}

//go:noinline
func addRows2[T int64 | float64](rows, g []int32, s0, s1 []float64, n0, n1 []int32, x0, x1 []T) {
	x0, x1 = x0[:len(g)], x1[:len(g)]
	s0, s1 = s0[:len(rows)], s1[:len(rows)]
	n0, n1 = n0[:len(rows)], n1[:len(rows)]
	for r, id := range g {
		if uint32(id) >= uint32(len(rows)) {
			continue
		}
		rows[id]++
		if v := float64(x0[r]); v == v {
			s0[id] += v
		} else {
			n0[id]++
		}
		if v := float64(x1[r]); v == v {
			s1[id] += v
		} else {
			n1[id]++
		}
	}
}

//go:noinline
func addRows3[T int64 | float64](rows, g []int32, s0, s1, s2 []float64, n0, n1, n2 []int32, x0, x1, x2 []T) {
	x0, x1, x2 = x0[:len(g)], x1[:len(g)], x2[:len(g)]
	s0, s1, s2 = s0[:len(rows)], s1[:len(rows)], s2[:len(rows)]
	n0, n1, n2 = n0[:len(rows)], n1[:len(rows)], n2[:len(rows)]
	for r, id := range g {
		if uint32(id) >= uint32(len(rows)) {
			continue
		}
		rows[id]++
		if v := float64(x0[r]); v == v {
			s0[id] += v
		} else {
			n0[id]++
		}
		if v := float64(x1[r]); v == v {
			s1[id] += v
		} else {
			n1[id]++
		}
		if v := float64(x2[r]); v == v {
			s2[id] += v
		} else {
			n2[id]++
		}
	}
}

// usesSums reports whether op over values of type T is read from the shared
// sums pass (groupFloatSums) when that pass runs.
func usesSums[T Number](op string, shared bool) bool {
	switch op {
	case "mean", "var", "std":
		return true
	case "sum":
		return isFloatT[T]()
	case "size", "count":
		return shared // free when the pass runs anyway
	}
	return false
}

func groupAggManyT[T Number](env Env, gid []int32, ng int, ops []string, x []T, outs []*pdarray.Array, ddof float64, pre []sumSlot) error {
	// With a median, the values are gathered by group anyway: the means,
	// variances and standard deviations come from the gathered values too.
	done := make([]bool, len(ops))
	if x != nil && slices.Contains(ops, "median") {
		var gops []string
		var gouts [][]float64
		for i, op := range ops {
			if gatheredOp(op) {
				gops, gouts, done[i] = append(gops, op), append(gouts, pdarray.View[float64](outs[i])), true
			}
		}
		if err := groupGathered(env, gid, ng, x, gops, gouts, ddof); err != nil {
			return err
		}
	}
	shared := false
	for i, op := range ops {
		shared = shared || !done[i] && x != nil && usesSums[T](op, false)
	}
	s := pre
	if shared && s == nil {
		var free func()
		var err error
		if s, free, err = groupFloatSums(env, gid, ng, x, false); err != nil {
			return err
		}
		defer free()
	}
	for i, op := range ops {
		out := outs[i]
		if done[i] {
			continue
		}
		if !shared || !usesSums[T](op, true) {
			if op == "size" {
				if err := groupCount(env, gid, ng, []uint8(nil), pdarray.View[int64](out)); err != nil {
					return err
				}
				continue
			}
			if err := groupAggT(env, gid, ng, op, x, out, ddof); err != nil {
				return err
			}
			continue
		}
		switch op {
		case "size":
			o := pdarray.View[int64](out)
			for g := range o {
				o[g] = int64(s[g].rows)
			}
		case "count":
			o := pdarray.View[int64](out)
			for g := range o {
				o[g] = int64(s[g].n)
			}
		case "sum":
			writeF64(out, func(g int) float64 { return s[g].s })
		default: // mean, var, std
			if err := groupMeanVar(env, gid, ng, op, x, s, pdarray.View[float64](out), ddof); err != nil {
				return err
			}
		}
	}
	return nil
}

func isFloatT[T Number]() bool {
	var z T
	return any(z) == any(float32(0)) || any(z) == any(float64(0))
}

// rowSplit reports how many row blocks to use for order-free states of
// ngroups groups (1: use group ranges instead).
func rowSplit(env Env, n, ngroups int) int {
	nw := numWorkers(env.workers(), n)
	if nw > 1 && ngroups*nw <= n/2 {
		return nw
	}
	return 1
}

// byGroups runs f(glo, ghi) on contiguous ranges of group ids, one per
// worker; each f scans every row.
func byGroups(env Env, n, ngroups int, f func(glo, ghi int32)) {
	nw := numWorkers(env.workers(), n)
	nw = min(nw, max(ngroups, 1))
	if nw <= 1 {
		f(0, int32(ngroups))
		return
	}
	b := splitBounds(ngroups, nw, 1)
	var g par.Group
	for w := 0; w < nw; w++ {
		g.Go(func() { f(int32(b[w]), int32(b[w+1])) })
	}
	g.Wait()
}

// orderedScan runs f over ranges of group ids like byGroups, each range
// scanning every row in order, but on one worker when the states of all
// groups fit in cache (bandedMinBytes): then the scan is memory-bound, and
// the second reader of every row only halves each one's bandwidth
// (measured: 2 workers took 2-4 times as long as 1 on 265 groups).
func orderedScan(env Env, n, ngroups int, f func(glo, ghi int32)) {
	if ngroups*int(unsafe.Sizeof(sumSlot{})) <= bandedMinBytes {
		f(0, int32(ngroups))
		return
	}
	byGroups(env, n, ngroups, f)
}

func groupAggT[T Number](env Env, gid []int32, ng int, op string, x []T, out *pdarray.Array, ddof float64) error {
	isF := isFloatT[T]()
	signed := !isF && T(0)-1 < 0
	switch op {
	case "count":
		if !isF {
			return groupCount(env, gid, ng, []T(nil), pdarray.View[int64](out))
		}
		return groupCount(env, gid, ng, x, pdarray.View[int64](out))
	case "sum", "prod":
		prod := op == "prod"
		switch {
		case isF:
			s, free, err := groupFloatSums(env, gid, ng, x, prod)
			if err != nil {
				return err
			}
			defer free()
			writeF64(out, func(g int) float64 { return s[g].s })
		case signed || out.DType() == dI64: // bool sums are int64
			return groupIntFold(env, gid, ng, x, prod, pdarray.View[int64](out))
		default:
			return groupIntFold(env, gid, ng, x, prod, pdarray.View[uint64](out))
		}
	case "mean", "var", "std":
		s, free, err := groupFloatSums(env, gid, ng, x, false)
		if err != nil {
			return err
		}
		defer free()
		return groupMeanVar(env, gid, ng, op, x, s, pdarray.View[float64](out), ddof)
	case "min", "max", "argmin", "argmax", "first":
		return groupBest(env, gid, ng, op, x, out)
	case "any", "all":
		return groupAnyAll(env, gid, ng, op == "any", x, pdarray.BytesAs[uint8](out.Bytes()))
	case "median":
		return groupMedian(env, gid, ng, x, pdarray.View[float64](out))
	case "nunique", "mode":
		return groupSorted(env, gid, ng, op, x, out)
	case "or", "and", "xor":
		return groupBits(env, gid, ng, op, x, viewT[T](out)[:ng])
	}
	return nil
}

// groupMeanVar writes the mean, variance or standard deviation of each
// group into o from its sums s (groupFloatSums); var and std take a second
// pass over the rows for the squared deviations from the mean.
func groupMeanVar[T Number](env Env, gid []int32, ng int, op string, x []T, s []sumSlot, o []float64, ddof float64) error {
	for g := range o {
		o[g] = s[g].s / float64(s[g].n)
	}
	if op == "mean" {
		return nil
	}
	ss, freeSS, err := slotsOf[float64](env, ng)
	if err != nil {
		return err
	}
	defer freeSS()
	orderedScan(env, len(gid), ng, func(glo, ghi int32) {
		span := uint32(ghi - glo)
		for i, g := range gid {
			if uint32(g-glo) >= span {
				continue
			}
			v := float64(x[i])
			if v != v {
				continue
			}
			d := v - o[g]
			ss[g] += d * d
		}
	})
	for g := range o {
		d := float64(s[g].n) - ddof
		v := quietNaN
		if d > 0 {
			v = ss[g] / d
		}
		if op == "std" {
			v = math.Sqrt(v)
		}
		o[g] = v
	}
	return nil
}

// writeF64 writes f(g) for every group into out (float32 or float64).
func writeF64(out *pdarray.Array, f func(g int) float64) {
	if out.DType() == dF32 {
		o := pdarray.View[float32](out)
		for g := range o {
			o[g] = float32(f(g))
		}
		return
	}
	o := pdarray.View[float64](out)
	for g := range o {
		o[g] = f(g)
	}
}

// groupCount counts the rows of each group (x nil: all of them; else those
// whose value is not NaN).
func groupCount[T Number](env Env, gid []int32, ng int, x []T, out []int64) error {
	n := len(gid)
	nw := rowSplit(env, n, ng)
	if nw == 1 {
		clear(out)
		byGroups(env, n, ng, func(glo, ghi int32) {
			span := uint32(ghi - glo)
			for i, g := range gid {
				if uint32(g-glo) < span && (x == nil || x[i] == x[i]) {
					out[g]++
				}
			}
		})
		return nil
	}
	parts, free, err := slotsOf[int64](env, nw*ng)
	if err != nil {
		return err
	}
	defer free()
	env.parallel(n, chunk, func(w, lo, hi int) {
		c := parts[w*ng : (w+1)*ng]
		ids := gid[lo:hi]
		if x == nil {
			for _, g := range ids {
				if g >= 0 {
					c[g]++
				}
			}
			return
		}
		xs := x[lo:hi]
		xs = xs[:len(ids)]
		for i, g := range ids {
			if g >= 0 && xs[i] == xs[i] {
				c[g]++
			}
		}
	})
	mergeParts(parts, nw, ng, out, func(a, b int64) int64 { return a + b })
	return nil
}

func mergeParts[A any](parts []A, nw, ng int, out []A, f func(a, b A) A) {
	copy(out, parts[:ng])
	for w := 1; w < nw; w++ {
		p := parts[w*ng : (w+1)*ng]
		for g := range out {
			out[g] = f(out[g], p[g])
		}
	}
}

// groupIntFold sums or multiplies integers per group (wrapping, so any order
// gives the same result).
func groupIntFold[T Number, A int64 | uint64](env Env, gid []int32, ng int, x []T, prod bool, out []A) error {
	n := len(gid)
	id := A(0)
	if prod {
		id = 1
	}
	fold := func(acc []A, ids []int32, xs []T, glo int32, span uint32) {
		xs = xs[:len(ids)]
		if prod {
			for i, g := range ids {
				if uint32(g-glo) < span {
					acc[g] *= A(xs[i])
				}
			}
			return
		}
		for i, g := range ids {
			if uint32(g-glo) < span {
				acc[g] += A(xs[i])
			}
		}
	}
	nw := rowSplit(env, n, ng)
	if nw == 1 {
		for g := range out {
			out[g] = id
		}
		byGroups(env, n, ng, func(glo, ghi int32) { fold(out, gid, x, glo, uint32(ghi-glo)) })
		return nil
	}
	parts, free, err := slotsOf[A](env, nw*ng)
	if err != nil {
		return err
	}
	defer free()
	if prod {
		for i := range parts {
			parts[i] = 1
		}
	}
	env.parallel(n, chunk, func(w, lo, hi int) {
		fold(parts[w*ng:(w+1)*ng], gid[lo:hi], x[lo:hi], 0, math.MaxUint32>>1)
	})
	if prod {
		mergeParts(parts, nw, ng, out, func(a, b A) A { return a * b })
	} else {
		mergeParts(parts, nw, ng, out, func(a, b A) A { return a + b })
	}
	return nil
}

// groupBits folds each group's values with a bitwise or, and or xor
// (Arkouda's GroupBy.OR, AND and XOR) into out, of x's own dtype. The bits
// are folded in uint64 (a signed value sign-extended): bitwise operations
// commute with truncation, so out gets the fold in T's width, and any row
// order gives the same bits, so the rows split into blocks like the
// integer sums. A group with no row (ids a client made may have gaps)
// gets 0, as min and max give it: and marks the groups it meets, since its
// all-ones start would show there. GroupAggDType refuses float values
// first.
func groupBits[T Number](env Env, gid []int32, ng int, op string, x []T, out []T) error {
	isAnd := op == "and"
	// fold folds the rows of ids (values xs) whose group is in [glo,
	// glo+span) into acc (and: marking seen): one loop per operation, no
	// switch per row.
	fold := func(acc []uint64, seen []uint8, ids []int32, xs []T, glo int32, span uint32) {
		xs = xs[:len(ids)]
		switch op {
		case "or":
			for i, g := range ids {
				if uint32(g-glo) < span {
					acc[g] |= uint64(xs[i])
				}
			}
		case "and":
			for i, g := range ids {
				if uint32(g-glo) < span {
					acc[g] &= uint64(xs[i])
					seen[g] = 1
				}
			}
		default:
			for i, g := range ids {
				if uint32(g-glo) < span {
					acc[g] ^= uint64(xs[i])
				}
			}
		}
	}
	n := len(gid)
	nw := rowSplit(env, n, ng)
	parts, free, err := slotsOf[uint64](env, nw*ng)
	if err != nil {
		return err
	}
	defer free()
	var seen []uint8
	if isAnd {
		var freeSeen func()
		if seen, freeSeen, err = slotsOf[uint8](env, nw*ng); err != nil {
			return err
		}
		defer freeSeen()
		for i := range parts {
			parts[i] = ^uint64(0)
		}
	}
	if nw == 1 {
		byGroups(env, n, ng, func(glo, ghi int32) { fold(parts, seen, gid, x, glo, uint32(ghi-glo)) })
	} else {
		env.parallel(n, chunk, func(w, lo, hi int) {
			var sw []uint8
			if isAnd {
				sw = seen[w*ng : (w+1)*ng]
			}
			fold(parts[w*ng:(w+1)*ng], sw, gid[lo:hi], x[lo:hi], 0, math.MaxUint32>>1)
		})
		mergeParts(parts, nw, ng, parts[:ng], func(a, b uint64) uint64 {
			switch op {
			case "or":
				return a | b
			case "and":
				return a & b
			}
			return a ^ b
		})
		if isAnd {
			mergeParts(seen, nw, ng, seen[:ng], func(a, b uint8) uint8 { return a | b })
		}
	}
	for g := range out {
		out[g] = T(parts[g])
		if isAnd && seen[g] == 0 {
			out[g] = 0
		}
	}
	return nil
}

// sumsPasses counts groupFloatSums passes: tests check that GroupAggMany
// shares one.
var sumsPasses atomic.Uint64

// sumSlot is what a group accumulates for sum, prod, mean, count and size:
// 16 bytes, so a group's state is one access (GroupBy refuses more than
// MaxInt32 rows, so the counts fit int32).
type sumSlot struct {
	s    float64
	n    int32 // non-NaN values
	rows int32 // rows
}

// groupFloatSums adds (or multiplies) the non-NaN values of each group in
// float64, in row order, and counts them and the group's rows.
func groupFloatSums[T Number](env Env, gid []int32, ng int, x []T, prod bool) ([]sumSlot, func(), error) {
	sumsPasses.Add(1)
	if len(gid) > math.MaxInt32 {
		return nil, nil, errorf(ErrValue, "group-by of %d rows: at most %d rows are supported", len(gid), math.MaxInt32)
	}
	s, free, err := slotsOf[sumSlot](env, ng)
	if err != nil {
		return nil, nil, err
	}
	if prod {
		for g := range s {
			s[g].s = 1
		}
	}
	x = x[:len(gid)]
	if !prod && ng*int(unsafe.Sizeof(sumSlot{})) > bandedMinBytes {
		// Scatter buffers are written before they are read: not cleared.
		vbuf, freeV, err := scratchOf[float64](env, bandBlock(len(gid), ng))
		if err != nil {
			free()
			return nil, nil, err
		}
		defer freeV()
		lbuf, freeL, err := scratchOf[uint16](env, len(vbuf))
		if err != nil {
			free()
			return nil, nil, err
		}
		defer freeL()
		floatSumsBanded(env, gid, x, s, vbuf, lbuf)
		return s, free, nil
	}
	if !prod && !isFloatT[T]() && rowSplit(env, len(gid), ng) > 1 {
		ok, err := exactIntSums(env, gid, ng, x, s)
		if err != nil {
			free()
			return nil, nil, err
		}
		if ok {
			return s, free, nil
		}
	}
	orderedScan(env, len(gid), ng, func(glo, ghi int32) {
		span := uint32(ghi - glo)
		switch {
		case prod:
			for i, g := range gid {
				if uint32(g-glo) < span {
					p := &s[g]
					p.rows++
					if v := float64(x[i]); v == v {
						p.s *= v
						p.n++
					}
				}
			}
		case !isFloatT[T]():
			for i, g := range gid {
				if uint32(g-glo) < span {
					p := &s[g]
					p.s += float64(x[i])
					p.n++
					p.rows++
				}
			}
		default:
			for i, g := range gid {
				if uint32(g-glo) < span {
					p := &s[g]
					v := float64(x[i])
					p.rows++
					if v == v {
						p.s += v
						p.n++
					}
				}
			}
		}
	})
	return s, free, nil
}

// exactIntPasses counts exactIntSums calls that gave the sums (tests check
// the path is taken).
var exactIntPasses atomic.Uint64

// intSum is a worker's integer sum and row count of one group.
type intSum struct{ s, rows int64 }

// exactIntSums fills s (zeroed) with the sums and counts of integer values
// from contiguous blocks of rows, one per worker, merged at the end. The
// float sums must equal a row-order float64 loop bit for bit, and they do
// when no value exceeds 2^53 / rows in magnitude: every partial sum, in
// any order, is then an integer of at most 2^53, which float64 holds
// exactly. Each worker checks that bound on its block; when a value breaks
// it the result is false and s is left for the ordered float loop.
func exactIntSums[T Number](env Env, gid []int32, ng int, x []T, s []sumSlot) (bool, error) {
	n := len(gid)
	nw := rowSplit(env, n, ng)
	parts, free, err := slotsOf[intSum](env, nw*ng)
	if err != nil {
		return false, err
	}
	defer free()
	mags := make([]uint64, nw)
	signed := T(0)-1 < 0
	env.parallel(n, chunk, func(w, lo, hi int) {
		acc := parts[w*ng : (w+1)*ng]
		ids := gid[lo:hi]
		xs := x[lo:hi]
		xs = xs[:len(ids)]
		var mag uint64
		for i, g := range ids {
			v := xs[i]
			m := uint64(v)
			if signed && v < 0 {
				m = -uint64(int64(v))
			}
			mag = max(mag, m)
			if uint32(g) < uint32(ng) {
				a := &acc[g]
				a.s += int64(v)
				a.rows++
			}
		}
		mags[w] = mag
	})
	if slices.Max(mags) > (1<<53)/uint64(max(n, 1)) {
		return false, nil
	}
	for w := 0; w < nw; w++ {
		for g, a := range parts[w*ng : (w+1)*ng] {
			s[g].s += float64(a.s) // exact: |sum| <= 2^53
			s[g].rows += int32(a.rows)
		}
	}
	for g := range s {
		s[g].n = s[g].rows // integers are never NaN
	}
	exactIntPasses.Add(1)
	return true, nil
}

// Banded accumulation: when the groups' states are far larger than the L2
// cache, updating them in row order misses the caches and, in a VM, the
// TLB on almost every row. Instead each block of rows is first scattered
// into bands of bandGroups groups (a stable counting sort by band: rows
// keep their order within a band), then the bands are accumulated one after
// another, each band's states staying in L2. Rows of a group are still added
// in row order, so the sums are bit-identical to the direct loop. Measured
// on the taxi query (7.7 M rows, 1.3 M groups): 63 ms against 90–105 ms.
const (
	bandShift      = 16 // bands of 2^16 groups: 1 MiB of sumSlots
	bandGroups     = 1 << bandShift
	bandedMinBytes = 2 << 20 // states larger than this take the banded path
)

// bandBlock is how many rows floatSumsBanded scatters at a time: every block
// sweeps all the states once, so a block holds at least 8 rows per group
// (at most all rows), and at least 2^18.
func bandBlock(n, ng int) int {
	return max(min(n, 8*ng), min(n, 1<<18), 1)
}

// bandedPasses counts floatSumsBanded calls (tests check the path is taken).
var bandedPasses atomic.Uint64

// floatSumsBanded adds every row into s (len(s) groups), band by band;
// vbuf and lbuf hold one block of scattered rows: the value, and the group
// less its band (its low 16 bits: 10 bytes a row where a (value, group)
// pair took 16 with its padding). Per block, the workers count and then
// scatter their own contiguous part of it into band-major, worker-minor
// places (so a band holds worker 0's rows, then worker 1's: row order),
// then take whole bands to sum. Every row is read once, whatever the worker
// count.
func floatSumsBanded[T Number](env Env, gid []int32, x []T, s []sumSlot, vbuf []float64, lbuf []uint16) {
	bandedPasses.Add(1)
	nb := (len(s) + bandGroups - 1) >> bandShift
	isF := isFloatT[T]()
	lbuf = lbuf[:len(vbuf)]
	for lo := 0; lo < len(gid); lo += len(vbuf) {
		hi := min(len(gid), lo+len(vbuf))
		ids, xs := gid[lo:hi], x[lo:hi]
		xs = xs[:len(ids)]
		nw := numWorkers(env.workers(), len(ids))
		// Rows with id -1 (dropped) are in no band: g>>bandShift is -1, out
		// of range as a uint32. (Written as a test and not min(band, nb),
		// which compiled to a branchy loop 4x slower on the skewed taxi
		// ids.) Each worker's counts, then positions (written every row),
		// are a cache line and more away from the next worker's: sharing a
		// line with the other worker's hottest band had two workers count
		// no faster than one.
		st := nb + 8
		cnt := make([]int, nw*st)
		env.parallel(len(ids), chunk, func(w, a, b int) {
			c := cnt[w*st : w*st+nb]
			for _, g := range ids[a:b] {
				if band := uint32(g >> bandShift); band < uint32(len(c)) {
					c[band]++
				}
			}
		})
		start := make([]int, nb+1)
		o := 0
		for b := 0; b < nb; b++ {
			start[b] = o
			for w := 0; w < nw; w++ {
				c := cnt[w*st+b]
				cnt[w*st+b] = o
				o += c
			}
		}
		start[nb] = o
		env.parallel(len(ids), chunk, func(w, a, b int) {
			pos := cnt[w*st : w*st+nb]
			is, vs := ids[a:b], xs[a:b]
			vs = vs[:len(is)]
			for i, g := range is {
				if band := uint32(g >> bandShift); band < uint32(len(pos)) {
					p := pos[band]
					vbuf[p], lbuf[p] = float64(vs[i]), uint16(g)
					pos[band] = p + 1
				}
			}
		})
		var next atomic.Int32
		parallelN(min(env.workers(), nb), func(int) {
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				env.check()
				vs, ls := vbuf[start[b]:start[b+1]], lbuf[start[b]:start[b+1]]
				ls = ls[:len(vs)]
				st := s[b<<bandShift : min(len(s), (b+1)<<bandShift)]
				if !isF {
					for i, v := range vs {
						p := &st[ls[i]]
						p.s += v
						p.n++
						p.rows++
					}
					continue
				}
				for i, v := range vs {
					p := &st[ls[i]]
					p.rows++
					if v == v {
						p.s += v
						p.n++
					}
				}
			}
		})
	}
}

// bestSlot is the state of min, max, argmin, argmax and first: the best
// value so far and its row (-1: none yet).
type bestSlot[T Number] struct {
	v T
	i int64
}

func groupBest[T Number](env Env, gid []int32, ng int, op string, x []T, out *pdarray.Array) error {
	if op == "min" || op == "max" {
		// Integer values: no row to keep, no NaN (groupMinMaxInt).
		wantMax := op == "max"
		switch xs := any(x).(type) {
		case []int64:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[int64](out))
		case []int32:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[int32](out))
		case []int16:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[int16](out))
		case []int8:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[int8](out))
		case []uint64:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[uint64](out))
		case []uint32:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[uint32](out))
		case []uint16:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[uint16](out))
		case []uint8:
			return groupMinMaxInt(env, gid, ng, wantMax, xs, viewT[uint8](out))
		}
	}
	n := len(gid)
	wantMax := op == "max" || op == "argmax"
	first := op == "first"
	better := func(v, cur T) bool {
		if wantMax {
			return v > cur
		}
		return v < cur
	}
	scan := func(st []bestSlot[T], lo, hi int, glo int32, span uint32) {
		ids, xs := gid[lo:hi], x[lo:hi]
		xs = xs[:len(ids)]
		for j, g := range ids {
			if uint32(g-glo) >= span {
				continue
			}
			v := xs[j]
			if v != v {
				continue
			}
			p := &st[g]
			if p.i < 0 || (!first && better(v, p.v)) {
				p.v, p.i = v, int64(lo+j)
			}
		}
	}
	st, free, err := slotsOf[bestSlot[T]](env, ng)
	if err != nil {
		return err
	}
	defer free()
	for g := range st {
		st[g].i = -1
	}
	nw := rowSplit(env, n, ng)
	if nw == 1 {
		byGroups(env, n, ng, func(glo, ghi int32) { scan(st, 0, n, glo, uint32(ghi-glo)) })
	} else {
		parts, freeParts, err := slotsOf[bestSlot[T]](env, nw*ng)
		if err != nil {
			return err
		}
		defer freeParts()
		for i := range parts {
			parts[i].i = -1
		}
		env.parallel(n, chunk, func(w, lo, hi int) {
			scan(parts[w*ng:(w+1)*ng], lo, hi, 0, math.MaxUint32>>1)
		})
		// Merge in worker order: an earlier worker's rows come first, so
		// on ties (and for first) its state wins.
		for w := 0; w < nw; w++ {
			p := parts[w*ng : (w+1)*ng]
			for g := range st {
				q := p[g]
				if q.i >= 0 && (st[g].i < 0 || (!first && better(q.v, st[g].v))) {
					st[g] = q
				}
			}
		}
	}
	switch op {
	case "argmin", "argmax":
		o := pdarray.View[int64](out)
		for g := range o {
			o[g] = st[g].i
		}
	default:
		o := viewT[T](out)
		nan := T(0)
		if isFloatT[T]() {
			nan = T(quietNaN)
		}
		for g := range o {
			if st[g].i < 0 {
				o[g] = nan
			} else {
				o[g] = st[g].v
			}
		}
	}
	return nil
}

// minMaxIntRuns counts groupMinMaxInt calls (tests check the path).
var minMaxIntRuns atomic.Uint64

// groupMinMaxInt is groupBest for the max or min of integer values: a
// value a group (its type's smallest, or largest, to start) and an
// occupancy bitmap, mostly read, instead of a value and its row (16
// bytes) with a branch on every row; rows in blocks, a set of states per
// worker, when the groups are few enough (rowSplit), merged at the end
// (any order: no ties to break). An empty group's answer is 0, as
// groupBest's. The max of 10^7 values 1..5 by 10^5 groups, one worker: 56
// ms through groupBest's loop, 19 ms with 8-byte states alone (43 with a
// 16-byte state that also marks the group).
func groupMinMaxInt[T Integer](env Env, gid []int32, ng int, wantMax bool, x []T, out []T) error {
	minMaxIntRuns.Add(1)
	n := len(gid)
	x = x[:n]
	var lo T // the type's smallest and largest
	if T(0)-1 < 0 {
		lo = T(int64(-1) << (8*unsafe.Sizeof(lo) - 1))
	}
	hi := ^lo
	start := hi
	if wantMax {
		start = lo
	}
	nw := rowSplit(env, n, ng)
	words := (ng + 63) / 64
	vals, freeV, err := slotsOf[T](env, nw*ng)
	if err != nil {
		return err
	}
	defer freeV()
	occ, freeO, err := slotsOf[uint64](env, nw*words)
	if err != nil {
		return err
	}
	defer freeO()
	for i := range vals {
		vals[i] = start
	}
	parallel(nw, n, chunk, func(w, lo, hi int) {
		minMaxScan(gid[lo:hi], x[lo:hi], vals[w*ng:(w+1)*ng], occ[w*words:(w+1)*words], wantMax)
	})
	out = out[:ng]
	for g := range out {
		v, seen := start, false
		for w := range nw {
			if occ[w*words+g>>6]&(1<<(g&63)) != 0 {
				seen = true
				if x := vals[w*ng+g]; wantMax {
					v = max(v, x)
				} else {
					v = min(v, x)
				}
			}
		}
		if !seen {
			v = 0
		}
		out[g] = v
	}
	return nil
}

// minMaxScan is groupMinMaxInt's loop over a block of rows, a loop for
// each direction (no branch on the values).
func minMaxScan[T Integer](gid []int32, x []T, vals []T, occ []uint64, wantMax bool) {
	x = x[:len(gid)]
	if wantMax {
		for i, g := range gid {
			if uint32(g) >= uint32(len(vals)) { // a dropped row (-1)
				continue
			}
			vals[g] = max(vals[g], x[i])
			if b := occ[g>>6]; b&(1<<(g&63)) == 0 {
				occ[g>>6] = b | 1<<(g&63)
			}
		}
		return
	}
	for i, g := range gid {
		if uint32(g) >= uint32(len(vals)) {
			continue
		}
		vals[g] = min(vals[g], x[i])
		if b := occ[g>>6]; b&(1<<(g&63)) == 0 {
			occ[g>>6] = b | 1<<(g&63)
		}
	}
}

// viewT views out (whose dtype matches T, bool as uint8) as []T.
func viewT[T Number](out *pdarray.Array) []T {
	var z T
	switch any(z).(type) {
	case uint8:
		return any(pdarray.BytesAs[uint8](out.Bytes())).([]T)
	}
	return any(viewOf[T](out)).([]T)
}

func viewOf[T Number](a *pdarray.Array) []T {
	var z T
	switch any(z).(type) {
	case int8:
		return any(pdarray.View[int8](a)).([]T)
	case int16:
		return any(pdarray.View[int16](a)).([]T)
	case int32:
		return any(pdarray.View[int32](a)).([]T)
	case int64:
		return any(pdarray.View[int64](a)).([]T)
	case uint16:
		return any(pdarray.View[uint16](a)).([]T)
	case uint32:
		return any(pdarray.View[uint32](a)).([]T)
	case uint64:
		return any(pdarray.View[uint64](a)).([]T)
	case float32:
		return any(pdarray.View[float32](a)).([]T)
	case float64:
		return any(pdarray.View[float64](a)).([]T)
	}
	return nil
}

// anySlot counts a group's non-NaN values and the nonzero ones among them.
type anySlot struct{ nz, n int64 }

func groupAnyAll[T Number](env Env, gid []int32, ng int, isAny bool, x []T, out []uint8) error {
	n := len(gid)
	scan := func(st []anySlot, lo, hi int, glo int32, span uint32) {
		ids, xs := gid[lo:hi], x[lo:hi]
		xs = xs[:len(ids)]
		for j, g := range ids {
			v := xs[j]
			if uint32(g-glo) >= span || v != v {
				continue
			}
			p := &st[g]
			p.n++
			if v != 0 {
				p.nz++
			}
		}
	}
	st, free, err := slotsOf[anySlot](env, ng)
	if err != nil {
		return err
	}
	defer free()
	nw := rowSplit(env, n, ng)
	if nw == 1 {
		byGroups(env, n, ng, func(glo, ghi int32) { scan(st, 0, n, glo, uint32(ghi-glo)) })
	} else {
		parts, freeParts, err := slotsOf[anySlot](env, nw*ng)
		if err != nil {
			return err
		}
		defer freeParts()
		env.parallel(n, chunk, func(w, lo, hi int) {
			scan(parts[w*ng:(w+1)*ng], lo, hi, 0, math.MaxUint32>>1)
		})
		mergeParts(parts, nw, ng, st, func(a, b anySlot) anySlot { return anySlot{a.nz + b.nz, a.n + b.n} })
	}
	for g := range out {
		if isAny {
			out[g] = b2u(st[g].nz > 0)
		} else {
			out[g] = b2u(st[g].nz == st[g].n)
		}
	}
	return nil
}

// groupSorted computes nunique, mode and median from the rows sorted by
// (group, value) (coargsort; NaN values sort last in their group).
func groupSorted[T Number](env Env, gid []int32, ng int, op string, x []T, out *pdarray.Array) error {
	n := len(gid)
	perm, err := env.Alloc(dI64, n)
	if err != nil {
		return err
	}
	defer env.free(perm)
	ga, _ := pdarray.Wrap(pdarray.Int32, pdarray.AsBytes(gid))
	var va *pdarray.Array
	if _, ok := any(x).([]uint8); ok {
		va, _ = pdarray.Wrap(dU8, pdarray.AsBytes(any(x).([]uint8)))
	} else {
		va, _ = pdarray.Wrap(pdarray.DTypeOf[T](), pdarray.AsBytes(x))
	}
	if err := Coargsort(env, []*pdarray.Array{ga, va}, perm); err != nil {
		return err
	}
	p := pdarray.View[int64](perm)
	// Skip the dropped rows (id -1 sort first).
	start := 0
	for start < n && gid[p[start]] < 0 {
		start++
	}
	var nuniq []int64
	var med []float64
	var mode []T
	switch op {
	case "nunique":
		nuniq = pdarray.View[int64](out)
		clear(nuniq)
	case "median":
		med = pdarray.View[float64](out)
	case "mode":
		mode = viewT[T](out)
	}
	nan := T(0)
	if isFloatT[T]() {
		nan = T(quietNaN)
	}
	// Segments of the sorted rows are consecutive groups 0, 1, ...
	i := start
	for g := 0; g < ng; g++ {
		j := i
		for j < n && gid[p[j]] == int32(g) {
			j++
		}
		// Non-NaN values are p[i:m].
		m := j
		for m > i && x[p[m-1]] != x[p[m-1]] {
			m--
		}
		switch op {
		case "nunique":
			c := int64(0)
			for k := i; k < m; k++ {
				if k == i || x[p[k]] != x[p[k-1]] {
					c++
				}
			}
			nuniq[g] = c
		case "median":
			c := m - i
			switch {
			case c == 0:
				med[g] = quietNaN
			case c%2 == 1:
				med[g] = float64(x[p[i+c/2]])
			default:
				a, b := float64(x[p[i+c/2-1]]), float64(x[p[i+c/2]])
				med[g] = (a + b) / 2
			}
		case "mode":
			best, bestN := nan, 0
			for k := i; k < m; {
				e := k + 1
				for e < m && x[p[e]] == x[p[k]] {
					e++
				}
				if e-k > bestN {
					best, bestN = x[p[k]], e-k
				}
				k = e
			}
			mode[g] = best
		}
		i = j
	}
	return nil
}

// GroupSegments returns the rows of every group, groups in order and rows
// in order within a group (perm, int64, one per kept row), and where each
// group starts in perm (segs, int64, ngroups): a stable counting sort of the
// group ids.
func GroupSegments(env Env, ids *pdarray.Array, ngroups, kept int) (perm, segs *pdarray.Array, err error) {
	gid := pdarray.View[int32](ids)
	if perm, err = env.Alloc(dI64, kept); err != nil {
		return nil, nil, err
	}
	if segs, err = env.Alloc(dI64, ngroups); err != nil {
		env.free(perm)
		return nil, nil, err
	}
	gp, err := placeGroups(env, gid, ngroups, pdarray.View[int64](segs))
	if err != nil {
		env.free(perm, segs)
		return nil, nil, err
	}
	defer gp.free()
	if gp.kept != int64(kept) {
		env.free(perm, segs)
		return nil, nil, errorf(ErrValue, "group ids hold %d kept rows, not %d", gp.kept, kept)
	}
	pm := pdarray.View[int64](perm)
	gp.run(func(w, lo, hi int) {
		c := gp.next[w*ngroups : (w+1)*ngroups]
		for i := lo; i < hi; i++ {
			if g := gid[i]; g >= 0 {
				pm[c[g]] = int64(i)
				c[g]++
			}
		}
	})
	return perm, segs, nil
}

// groupPlaces is a stable counting sort of group ids, counted: each row's
// place in group order is, for a row of group g read by worker w in its
// block in order, next[w*ng+g], taken then incremented. run runs the
// pass that does so over the same row blocks as the count.
type groupPlaces struct {
	next []int64
	nw   int   // workers (row blocks): next holds nw sets of ng
	kept int64 // rows in a group
	run  func(f func(w, lo, hi int))
	free func()
}

// placeGroups counts the rows of each group of gid, per worker's block
// of rows, writes where each group starts in group order to starts (ng of
// them), and sets each worker's next places from there.
func placeGroups(env Env, gid []int32, ng int, starts []int64) (groupPlaces, error) {
	n := len(gid)
	nw := rowSplit(env, n, ng)
	cnt, free, err := slotsOf[int64](env, nw*ng)
	if err != nil {
		return groupPlaces{}, err
	}
	run := func(f func(w, lo, hi int)) {
		if nw == 1 {
			f(0, 0, n)
			return
		}
		env.parallel(n, chunk, f)
	}
	run(func(w, lo, hi int) {
		c := cnt[w*ng : (w+1)*ng]
		for _, g := range gid[lo:hi] {
			if g >= 0 {
				c[g]++
			}
		}
	})
	off := int64(0)
	for g := 0; g < ng; g++ {
		starts[g] = off
		for w := 0; w < nw; w++ {
			c := cnt[w*ng+g]
			cnt[w*ng+g] = off
			off += c
		}
	}
	return groupPlaces{next: cnt, nw: nw, kept: off, run: run, free: free}, nil
}

// GroupHeadTail returns the rows (int64) of the first n rows of every
// group, or with tail its last n (all of a group's rows when it has no
// more), groups in order and rows in order within a group: Arkouda's
// GroupBy.head and tail, the rows a stable sort by group would put first
// (or last) in each group, found without sorting: each row's place in
// its group comes from placeGroups' count, and the rows whose place is
// kept are written straight to theirs in the answer.
func GroupHeadTail(env Env, ids *pdarray.Array, ngroups, n int, tail bool) (*pdarray.Array, error) {
	if n < 0 {
		return nil, errorf(ErrValue, "head and tail take n >= 0 rows a group, got %d", n)
	}
	if ids.DType() != pdarray.Int32 {
		return nil, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	gid := pdarray.View[int32](ids)
	if len(gid) > math.MaxInt32 { // (the states below count rows in int32)
		return nil, errorf(ErrValue, "head and tail take at most 2^31-1 rows, as a group-by does; got %d", len(gid))
	}
	starts, freeSt, err := slotsOf[int64](env, ngroups)
	if err != nil {
		return nil, err
	}
	defer freeSt()
	gp, err := placeGroups(env, gid, ngroups, starts)
	if err != nil {
		return nil, err
	}
	defer gp.free()
	nw := gp.nw
	// Each worker's state of a group in one 12-byte slot, so that a row
	// touches one cache line, and 10^5 groups' slots stay in a 2 MiB L2:
	// r, the next row's place counted from the group's first kept place
	// (negative before it); keep, how many places are kept; base, where
	// the group's kept rows start in the answer. BenchmarkGroupHeadTail
	// (10^7 rows, 10^5 groups): four int64 arrays, a line each, 64 ms on
	// one worker and 36 on two; int64 slots 52 and 29; these 42 and 22.
	type headSlot struct{ r, keep, base int32 }
	hs, freeHs, err := slotsOf[headSlot](env, nw*ngroups)
	if err != nil {
		return nil, err
	}
	defer freeHs()
	total := int64(0)
	for g := range starts {
		end := gp.kept
		if g+1 < ngroups {
			end = starts[g+1]
		}
		k := min(end-starts[g], int64(n))
		first := starts[g]
		if tail {
			first = end - k
		}
		for w := range nw {
			hs[w*ngroups+g] = headSlot{r: int32(gp.next[w*ngroups+g] - first), keep: int32(k), base: int32(total)}
		}
		total += k
	}
	out, err := env.Alloc(dI64, int(total))
	if err != nil {
		return nil, err
	}
	o := pdarray.View[int64](out)
	gp.run(func(w, lo, hi int) {
		h := hs[w*ngroups : (w+1)*ngroups]
		for i := lo; i < hi; i++ {
			if g := gid[i]; g >= 0 {
				s := &h[g]
				if uint32(s.r) < uint32(s.keep) {
					o[int(s.base)+int(s.r)] = int64(i)
				}
				s.r++
			}
		}
	})
	return out, nil
}

// GroupBroadcast writes, for every row, its group's element of perGroup into
// out (perGroup's dtype, one per row); dropped rows get 0, NaN for floats,
// False for bools.
func GroupBroadcast(env Env, ids, perGroup, out *pdarray.Array) error {
	gid := pdarray.View[int32](ids)
	ng := perGroup.Len()
	bad := make([]bool, numWorkers(env.workers(), len(gid)))
	env.parallel(len(gid), chunk, func(w, lo, hi int) {
		for _, g := range gid[lo:hi] {
			if int(g) >= ng {
				bad[w] = true
			}
		}
	})
	if slices.Contains(bad, true) {
		return errorf(ErrValue, "per-group values have %d elements, fewer than the groups", ng)
	}
	switch perGroup.DType() {
	case dF32:
		bcast(env, gid, pdarray.View[float32](perGroup), pdarray.View[float32](out), float32(quietNaN))
	case dF64:
		bcast(env, gid, pdarray.View[float64](perGroup), pdarray.View[float64](out), quietNaN)
	default:
		switch perGroup.DType().Size() {
		case 1:
			bcast(env, gid, words[uint8](perGroup), words[uint8](out), 0)
		case 2:
			bcast(env, gid, words[uint16](perGroup), words[uint16](out), 0)
		case 4:
			bcast(env, gid, words[uint32](perGroup), words[uint32](out), 0)
		case 8:
			bcast(env, gid, words[uint64](perGroup), words[uint64](out), 0)
		}
	}
	return nil
}

func bcast[T any](env Env, gid []int32, pg, out []T, missing T) {
	env.parallel(len(gid), chunk, func(_, lo, hi int) {
		o := out[lo:hi]
		for i, g := range gid[lo:hi] {
			if g >= 0 {
				o[i] = pg[g]
			} else {
				o[i] = missing
			}
		}
	})
}

// CheckGroupIDs verifies that ids (from a client) is an int32 array of
// group ids below ngroups (or -1): the aggregations index by them.
func CheckGroupIDs(env Env, ids *pdarray.Array, ngroups int) error {
	if ids.DType() != pdarray.Int32 {
		return errorf(ErrType, "group ids must be an int32 array from groupby, got %v", ids.DType())
	}
	gid := pdarray.View[int32](ids)
	bad := make([]bool, numWorkers(env.workers(), len(gid)))
	env.parallel(len(gid), chunk, func(w, lo, hi int) {
		mx, mn := int32(-1), int32(-1)
		for _, g := range gid[lo:hi] {
			mx, mn = max(mx, g), min(mn, g)
		}
		bad[w] = int(mx) >= ngroups || mn < -1
	})
	if slices.Contains(bad, true) {
		return errorf(ErrValue, "group ids hold values outside [-1, %d): pass the ids and ngroups of one groupby", ngroups)
	}
	return nil
}

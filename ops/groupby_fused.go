package ops

// Grouping and aggregating in one read of the keys and values, for a
// client that asks for the aggregations with the grouping and not for its
// ids (docs/operations.md, "Group-by").
//
// A grouping followed by an aggregation reads the keys (8 bytes a row),
// writes the ids (4, and as much again for the cache lines the write first
// reads), then reads the ids back with the values (4 + 8): about 28 bytes a
// row where the query's own columns are 16. Both passes run near memory
// speed here, so that traffic is the time. Here one loop reads each row's
// key and value and updates the key's slot directly; nothing is written per
// row. Measured on G1 q1 (10^7 rows, 100 keys, sum of an int64 column;
// BenchmarkG1Q1): 21.3 ms fused, 30-32 ms grouped then summed, 19-20 ms to
// read the two columns once, on one worker; 15.2, 22-26 and 10.6-10.9 ms on
// two. A version that packed a chunk of slots first and then ran one loop
// per column was no faster than the two steps, nor was one whose loops sat
// in a closure (its variables spilled to the stack): the win is one tight
// loop.
//
// Three cases are fused, each with one value column (size, count and sum
// of int64 values; size, count, sum and mean of float64 values; or size
// alone): one integer key whose range spans at most fusedMaxSlots (the
// dense strategy's case, every slot's state in cache: fusedLone, which
// also takes several columns and int64 means); keys the two steps would
// hash, while one table holds them (fusedHash); and past that, by
// partitions as the two steps would (fusedPart). Everything else is
// grouped and then aggregated, with the same answers.

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// fusedMaxSlots bounds the key range of a fused grouping: a float64
// column's states are 16 bytes a slot (2 MiB here, bandedMinBytes), an
// int64 column's 8 (16 with counts) a slot per worker.
const fusedMaxSlots = bandedMinBytes / 16

// fusedPasses counts fused groupings (tests check the path).
var fusedPasses atomic.Uint64

// GroupByAgg groups by keys like GroupByWith and runs the aggregations of
// cols (as GroupAggColumns would over the grouping's ids) in one read of
// the rows, without making the ids. It reports false, having allocated
// nothing, where it does not apply (see above); the caller then groups and
// aggregates in two steps. The Grouping has no IDs; outs[c][i] is
// cols[c].Ops[i].
func GroupByAgg(env Env, keys []*pdarray.Array, dropna bool, strategy string, known []*KeyStats, cols []AggColumn) (Grouping, [][]*pdarray.Array, bool, error) {
	if strategy != "" && strategy != "auto" || len(keys) == 0 || len(cols) == 0 {
		return Grouping{}, nil, false, nil
	}
	n := keys[0].Len()
	if n > math.MaxInt32 {
		return Grouping{}, nil, false, nil // float states count rows in int32: the two steps say what fits
	}
	// One column: any strategy below. Several: only fusedLone's, whose
	// columns each take their own pass over the rows.
	single := len(cols) == 1 && fusable(cols[0], n)
	if !single && !(len(keys) == 1 && Kind(keys[0].DType()) != 'f' && loneFusable(cols, n)) {
		return Grouping{}, nil, false, nil
	}
	specs, stats, total, packable, err := keySpecs(env, keys, dropna, strategy, known)
	if err != nil || !packable {
		return Grouping{}, nil, false, err
	}
	if total > uint64(DenseMaxSlots) || total > uint64(8*n+65536) {
		if !single {
			return Grouping{}, nil, false, nil
		}
		// Where the two steps would hash: hashed and aggregated in one pass
		// while the keys stay few (fusedHash), else by partitions.
		g := Grouping{Stats: stats, Strategy: StrategyHash}
		var seen keySample
		outs, ok, err := fusedHash(env, specs, cols[0], &g, &seen)
		if err == nil && !ok {
			// Too many keys for one table: partitioned, as the two steps,
			// unless the groups will be nearly as many as the rows.
			if !partFusable(seen, n) {
				return Grouping{}, nil, false, nil
			}
			g.Strategy = StrategyPartitioned
			outs, err = fusedPart(env, specs, cols[0], &g, fusedFanOut(seen.distinct()))
		}
		if err != nil {
			g.Free(env)
			return Grouping{}, nil, true, err
		}
		fusedPasses.Add(1)
		return g, [][]*pdarray.Array{outs}, true, nil
	}
	if len(keys) != 1 {
		return Grouping{}, nil, false, nil
	}
	switch keys[0].DType() {
	case dI64, dI32, dI16, dI8, dU64, dU32, dU16, dU8:
	default:
		return Grouping{}, nil, false, nil
	}
	// The dense strategy's case, within fusedMaxSlots.
	if total > fusedMaxSlots {
		return Grouping{}, nil, false, nil
	}
	pair, passes := lonePlan(cols, int(total))
	if !pair && passes > 2 {
		// Many wide passes: grouped then aggregated, whose passes over the
		// ids keep their states in cache by bands (G1 q5, three sums by
		// 10^5 keys: 85-88 ms so, 116-125 ms fused, one thread).
		return Grouping{}, nil, false, nil
	}
	fusedPasses.Add(1)
	g := Grouping{Stats: stats, Strategy: StrategyDense}
	var outs [][]*pdarray.Array
	switch s := &specs[0]; s.a.DType() {
	case dI64:
		outs, err = fusedLone[int64](env, s, int(total), cols, pair, &g)
	case dI32:
		outs, err = fusedLone[int32](env, s, int(total), cols, pair, &g)
	case dI16:
		outs, err = fusedLone[int16](env, s, int(total), cols, pair, &g)
	case dI8:
		outs, err = fusedLone[int8](env, s, int(total), cols, pair, &g)
	case dU64:
		outs, err = fusedLone[uint64](env, s, int(total), cols, pair, &g)
	case dU32:
		outs, err = fusedLone[uint32](env, s, int(total), cols, pair, &g)
	case dU16:
		outs, err = fusedLone[uint16](env, s, int(total), cols, pair, &g)
	default:
		outs, err = fusedLone[uint8](env, s, int(total), cols, pair, &g)
	}
	if err != nil {
		g.Free(env)
		return Grouping{}, nil, true, err
	}
	return g, outs, true, nil
}

// fusable reports whether column c's aggregations have a fused kernel.
func fusable(c AggColumn, n int) bool {
	if len(c.Ops) == 0 {
		return false
	}
	if c.Values == nil {
		return !containsOtherThan(c.Ops, "size")
	}
	if c.Values.Len() != n {
		return false
	}
	switch c.Values.DType() {
	case dI64:
		return !containsOtherThan(c.Ops, "size", "count", "sum")
	case dF64:
		return !containsOtherThan(c.Ops, "size", "count", "sum", "mean")
	}
	return false
}

// loneFusable reports whether fusedLone takes cols (n rows each): fusable
// columns, or int64 columns asked for their mean too (exact in any order
// while the values are small: see loneCol.exactMean).
func loneFusable(cols []AggColumn, n int) bool {
	for _, c := range cols {
		if !fusable(c, n) && !(c.Values != nil && c.Values.Len() == n && c.Values.DType() == dI64 &&
			len(c.Ops) > 0 && !containsOtherThan(c.Ops, "size", "count", "sum", "mean")) {
			return false
		}
	}
	return true
}

func containsOtherThan(ops []string, allowed ...string) bool {
	for _, op := range ops {
		ok := false
		for _, a := range allowed {
			ok = ok || op == a
		}
		if !ok {
			return true
		}
	}
	return false
}

// fusedLone groups by the lone integer key of s (slot: its sort key less
// the smallest) and aggregates each of cols in one loop over the rows
// (keys and that column's values). States per slot: float64 values, a
// sumSlot (values added in row order on one worker, as groupFloatSums
// does: bit-identical sums); int64 values, an int64 sum per worker (added
// at the end: exact) and, for size, count or mean, a row count; size alone,
// a row count. A slot is a group when a row counted in it, or, for an
// int64 sum alone, when its bit is set in a bitmap (mostly read, not
// written, per row). Occupied slots, ascending, are the groups (the first
// column's states tell; every column sees every row).
//
// The columns' loops are tasks the workers take in turn: a float64
// column's all its rows (row order), then stretches of the other columns'
// rows, so that while one worker adds a float64 column the others get on
// with the rest. Two int64 columns take one loop when their states fit in
// cache (lonePlan, loneIntPair). G1 q4 (means of two int64 columns and a
// float64 one by 100 keys, 10^7 rows; BenchmarkG1Q4), in process: 93-97 ms
// grouped then aggregated on one worker, 51-55 on two; fused 54-57 and
// 28-29 ms.
func fusedLone[K Integer](env Env, s *keySpec, total int, cols []AggColumn, pair bool, g *Grouping) ([][]*pdarray.Array, error) {
	keys := pdarray.View[K](s.a)
	n, mn, tot := len(keys), s.min, uint64(total)
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	nw := max(1, numWorkers(env.workers(), n))
	words := (total + 63) / 64
	// Each worker's set is a cache line and more from the next one's: with
	// few slots, two workers' hottest slots would otherwise share a line.
	stride, wstride := total+8, words+8
	alloc := func(f func() (func(), error)) error {
		fr, err := f()
		if err == nil {
			frees = append(frees, fr)
		}
		return err
	}
	lc := make([]loneCol, len(cols))
	last := -1 // an int64 column not yet paired
	for i, col := range cols {
		c := &lc[i]
		c.col = col
		c.isF, c.isI, c.countRows = fusedKind(col)
		c.mean = c.isI && slices.Contains(col.Ops, "mean")
		c.maxAbs = make([]uint64, nw)
		c.pairB, c.pairA = -1, -1
		if c.isI && pair && last >= 0 {
			// Paired with the last: one loop adds both (the first's row
			// counts serve the two).
			c.pairA, lc[last].pairB, last = last, i, -1
		} else if c.isI {
			last = i
		}
	}
	for i := range lc {
		c := &lc[i]
		if c.pairA >= 0 || c.pairB >= 0 {
			c.countRows = true // its loop counts rows
		}
		var err error
		switch {
		case c.isF:
			err = alloc(func() (fr func(), err error) { c.fs, fr, err = slotsOf[sumSlot](env, total); return })
		}
		if err == nil && c.countRows && c.pairA < 0 {
			err = alloc(func() (fr func(), err error) { c.rows, fr, err = slotsOf[int64](env, nw*stride); return })
		}
		if err == nil && c.isI {
			err = alloc(func() (fr func(), err error) { c.sums, fr, err = slotsOf[int64](env, nw*stride); return })
		}
		if err != nil {
			return nil, err
		}
	}
	// Int64 sums alone keep no row counts: the first also says which slots
	// hold rows (loneIntSumsOcc, loneOccupied).
	if !slices.ContainsFunc(lc, func(c loneCol) bool { return c.isF || c.countRows }) {
		c := &lc[0]
		c.signs = make([]uint64, nw)
		if err := alloc(func() (fr func(), err error) { c.occ, fr, err = slotsOf[uint64](env, nw*wstride); return }); err != nil {
			return nil, err
		}
	}
	// The tasks: float64 columns whole first (the longest), then the
	// others' rows in stretches, a few a worker.
	type task struct{ c, lo, hi int }
	var tasks []task
	for i := range lc {
		if lc[i].isF {
			tasks = append(tasks, task{i, 0, n})
		}
	}
	step := max(1<<16, (n+4*nw-1)/(4*nw))
	if nw == 1 {
		step = max(n, 1)
	}
	for i := range lc {
		for lo := 0; lo < n && !lc[i].isF && lc[i].pairA < 0; lo += step {
			tasks = append(tasks, task{i, lo, min(n, lo+step)})
		}
	}
	outside := make([]bool, len(tasks))
	var next atomic.Int64
	parallelN(nw, func(w int) {
		for {
			t := int(next.Add(1)) - 1
			if t >= len(tasks) {
				return
			}
			env.check()
			c, lo, hi := &lc[tasks[t].c], tasks[t].lo, tasks[t].hi
			ks := keys[lo:hi]
			switch {
			case c.isF:
				outside[t] = loneFloatSums(ks, pdarray.View[float64](c.col.Values)[lo:hi], mn, tot, c.fs)
			case c.pairB >= 0:
				b := &lc[c.pairB]
				var ma, mb uint64
				outside[t], ma, mb = loneIntPair(ks, pdarray.View[int64](c.col.Values)[lo:hi], pdarray.View[int64](b.col.Values)[lo:hi],
					mn, tot, c.sums[w*stride:][:total], b.sums[w*stride:][:total], c.rows[w*stride:][:total])
				c.maxAbs[w] |= ma
				b.maxAbs[w] |= mb
			case c.mean:
				var m uint64
				outside[t], m = loneIntMeans(ks, pdarray.View[int64](c.col.Values)[lo:hi], mn, tot, c.sums[w*stride:][:total], c.rows[w*stride:][:total])
				c.maxAbs[w] |= m
			case c.isI && c.countRows:
				outside[t] = loneIntSumsRows(ks, pdarray.View[int64](c.col.Values)[lo:hi], mn, tot, c.sums[w*stride:][:total], c.rows[w*stride:][:total])
			case c.occ != nil:
				var sg uint64
				var marked bool
				outside[t], sg, marked = loneIntSumsOcc(ks, pdarray.View[int64](c.col.Values)[lo:hi], mn, tot, c.sums[w*stride:][:total], c.occ[w*wstride:][:words])
				if !marked {
					c.signs[w] |= sg
				}
			case c.isI:
				outside[t], _ = loneIntSums(ks, pdarray.View[int64](c.col.Values)[lo:hi], mn, tot, c.sums[w*stride:][:total])
			default: // size alone
				outside[t] = loneRows(ks, mn, tot, c.rows[w*stride:][:total])
			}
		}
	})
	for _, o := range outside {
		if o {
			return nil, errKeyWritten()
		}
	}
	for i := range lc {
		c := &lc[i]
		c.merge(nw, total, stride, words, wstride)
		if c.pairA >= 0 {
			c.rows = lc[c.pairA].rows[:total] // merged already: pairA < i
		}
		if c.mean && !c.exactMean(n) {
			// Values too large for float64 sums to be exact: added again as
			// float64, in row order (rare: |values|·rows past 2^53).
			err := alloc(func() (fr func(), err error) { c.fs, fr, err = slotsOf[sumSlot](env, total); return })
			if err != nil {
				return nil, err
			}
			if loneFloatSums(keys, pdarray.View[int64](c.col.Values), mn, tot, c.fs) {
				return nil, errKeyWritten()
			}
			loneInexactMeans.Add(1)
		}
	}
	// The groups: occupied slots, ascending. A float64 column's states or
	// a row count say which slots hold rows; int64 sums alone the first's
	// bitmap and sums.
	c0 := &lc[0]
	for i := range lc {
		if lc[i].isF || lc[i].rows != nil {
			c0 = &lc[i]
			break
		}
	}
	var occ []uint64
	if c0.occ != nil {
		occ = c0.occ[:words]
		if loneOccupied(env, keys, mn, total, nw, wstride, c0) {
			return nil, errKeyWritten()
		}
	}
	has := func(k int) bool {
		switch {
		case c0.isF:
			return c0.fs[k].rows > 0
		case c0.rows != nil:
			return c0.rows[k] > 0
		}
		return occ[k>>6]&(1<<(k&63)) != 0
	}
	ng := 0
	if occ != nil {
		for _, x := range occ {
			ng += bits.OnesCount64(x)
		}
	} else {
		for k := range total {
			if has(k) {
				ng++
			}
		}
	}
	uniq, fu, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, err
	}
	frees = append(frees, fu)
	u := 0
	for k := range total {
		if u < ng && has(k) {
			uniq[u] = uint64(k)
			u++
		}
	}
	g.NGroups, g.Kept = ng, n // an integer key drops no row
	a, err := env.Alloc(s.a.DType(), ng)
	if err != nil {
		return nil, err
	}
	g.Keys = []*pdarray.Array{a}
	unpackAll(env, []keySpec{*s}, uniq, g.Keys, nil)
	outs := make([][]*pdarray.Array, 0, len(lc))
	for i := range lc {
		c := &lc[i]
		o, err := fusedOuts(env, c.col, uniq, c.fs, c.sums, c.rows)
		if err != nil {
			freeOuts(env, outs)
			return nil, err
		}
		outs = append(outs, o)
	}
	if len(lc) > 1 {
		fusedMultiCols.Add(1)
	}
	if slices.ContainsFunc(lc, func(c loneCol) bool { return c.pairB >= 0 }) {
		lonePairs.Add(1)
	}
	return outs, nil
}

// fusedMultiCols counts fusedLone runs of several columns, lonePairs those
// that paired int64 columns, loneInexactMeans int64 means added again as
// float64 (tests check the paths).
var fusedMultiCols, lonePairs, loneInexactMeans atomic.Uint64

// loneOccPasses counts loneOccupied's passes over the keys, loneOccMarked
// the tasks of loneIntSumsOcc that met a value below 1 (tests check the
// paths).
var loneOccPasses, loneOccMarked atomic.Uint64

// lonePlan says whether fusedLone pairs int64 columns for total slots
// (while their three states a slot, 24 bytes, take at most a quarter of
// the L2 cache: paired at 10^5 slots, G1 q5's two sums took 82-93 ms of a
// worker against 71 as two passes, their states missing L2), and how many
// passes over the rows cols then take.
func lonePlan(cols []AggColumn, total int) (pair bool, passes int) {
	pair = total*24 <= l2Bytes()/4 || testPairAlways
	ints := 0
	for _, c := range cols {
		if _, isI, _ := fusedKind(c); isI {
			ints++
		} else {
			passes++ // float64 values, or size
		}
	}
	if pair {
		return true, passes + (ints+1)/2
	}
	return false, passes + ints
}

// testPairAlways makes lonePlan pair int64 columns at any slot count (tests).
var testPairAlways bool

// loneCol is one column's states in fusedLone: fs for float64 values (and
// for int64 values whose mean exactMean refused); nw sets of int64 sums
// and row counts (or sums alone) for the others, merged into the first
// set; maxAbs, each worker's bound on |value| for an int64 column asked
// for its mean (loneIntMeans).
type loneCol struct {
	col                       AggColumn
	isF, isI, countRows, mean bool
	pairA, pairB              int // the int64 column this one's loop is paired with (A: the one that runs it), or -1
	fs                        []sumSlot
	rows, sums                []int64
	occ                       []uint64 // int64 sums alone: nw bitmaps of the slots that hold rows (some)
	maxAbs                    []uint64
	signs                     []uint64 // with occ: each worker's OR of x | x-1 over the rows occ does not mark
}

// merge adds the workers' sets into the first.
func (c *loneCol) merge(nw, total, stride, words, wstride int) {
	for w := 1; w < nw; w++ {
		if c.rows != nil {
			for k, x := range c.rows[w*stride:][:total] {
				c.rows[k] += x
			}
		}
		if c.sums != nil {
			for k, x := range c.sums[w*stride:][:total] {
				c.sums[k] += x
			}
		}
	}
	c.mergeOcc(nw, words, wstride)
}

// mergeOcc ORs the workers' occupancy bitmaps into the first.
func (c *loneCol) mergeOcc(nw, words, wstride int) {
	for w := 1; w < nw && c.occ != nil; w++ {
		for j, x := range c.occ[w*wstride:][:words] {
			c.occ[j] |= x
		}
	}
}

// exactMean reports whether an int64 column's means may come from its
// exact sums: the two steps add each value as float64 in row order
// (groupFloatSums), and while n rows of values of at most 2^53/n in size
// are added, every partial sum is an integer below 2^53, exact in float64
// whatever the order; the float64 sum is then the exact sum. maxAbs holds
// each worker's loneIntMeans bound: |value| <= bound+1.
func (c *loneCol) exactMean(n int) bool {
	m := uint64(0)
	for _, a := range c.maxAbs {
		m |= a
	}
	hi, lo := bits.Mul64(m+1, uint64(n)) // m < 2^63: no overflow
	return hi == 0 && lo <= 1<<53
}

// fusedKind says which states a fused grouping keeps for col: a sumSlot
// (float64 values), an int64 sum (int64 values), a row count (size alone,
// or size or count of int64 values).
func fusedKind(col AggColumn) (isF, isI, countRows bool) {
	isF = col.Values != nil && col.Values.DType() == dF64
	isI = col.Values != nil && !isF
	return isF, isI, col.Values == nil || isI && containsOtherThan(col.Ops, "sum")
}

// fusedOuts allocates and writes col's aggregations from the states of a
// fused grouping (fs for float64 values, else sums and rows), group j's
// state being at[j] (a slot or a local id, in key order), or j when at is
// nil (then the groups are len of the states).
func fusedOuts[I uint64 | int64](env Env, col AggColumn, at []I, fs []sumSlot, sums, rows []int64) ([]*pdarray.Array, error) {
	vd := dI64
	if col.Values != nil {
		vd = col.Values.DType()
	}
	ng := len(at)
	if at == nil {
		ng = max(len(fs), len(sums), len(rows))
	}
	var outs []*pdarray.Array
	for _, op := range col.Ops {
		rd, err := GroupAggDType(op, vd)
		if err == nil {
			var out *pdarray.Array
			if out, err = env.Alloc(rd, ng); err == nil {
				outs = append(outs, out)
			}
		}
		if err != nil {
			env.free(outs...)
			return nil, err
		}
		out := outs[len(outs)-1]
		isF := vd == dF64
		switch {
		case isF && op == "size":
			fill(out, at, func(k I) int64 { return int64(fs[k].rows) })
		case isF && op == "count":
			fill(out, at, func(k I) int64 { return int64(fs[k].n) })
		case isF && op == "sum":
			fill(out, at, func(k I) float64 { return fs[k].s })
		case isF: // mean, as groupMeanVar
			fill(out, at, func(k I) float64 { return fs[k].s / float64(fs[k].n) })
		case op == "sum":
			fill(out, at, func(k I) int64 { return sums[k] })
		case op == "mean" && fs != nil: // int64 values, added as float64 in row order
			fill(out, at, func(k I) float64 { return fs[k].s / float64(fs[k].n) })
		case op == "mean": // int64 values whose float64 sums are exact (loneCol.exactMean)
			fill(out, at, func(k I) float64 { return float64(sums[k]) / float64(rows[k]) })
		default: // size, or count of int64 values (never NaN)
			fill(out, at, func(k I) int64 { return rows[k] })
		}
	}
	return outs, nil
}

// fill writes f of each group's state index into out (at nil: group j's
// state is j).
func fill[T int64 | float64, I uint64 | int64](out *pdarray.Array, at []I, f func(k I) T) {
	o := pdarray.View[T](out)
	if at == nil {
		for j := range o {
			o[j] = f(I(j))
		}
		return
	}
	for j, k := range at {
		o[j] = f(k)
	}
}

func freeOuts(env Env, outs [][]*pdarray.Array) {
	for _, o := range outs {
		env.free(o...)
	}
}

// The fused loops, one per kind of state, each in a function of its own
// (kept out of fusedLone's closure, the loop's variables stay in
// registers). Each returns whether a key fell outside the slots (a key
// written since its range was taken); such a row is skipped.
//
// On amd64 (unless --simd=false) the sums, sums with row counts, means,
// paired means and float sums run in assembly instead, for integer keys of
// every width (lone_amd64.s: the same additions in the same order; G1 q1's
// loop, 10^7 rows by 100 int64 keys, one worker, 23-24 ms in Go against
// 16.5; by int8 keys, a Categorical's codes, 26 against 17, and with row
// counts 23 against 16.5; float sums by int8 keys gain little, 25-28
// against 25).

// loneAsmBlock is how many rows one call of an assembly loop takes: the
// loops cannot be preempted, so a garbage collection's stop waits for at
// most one block (2^16 rows, about 0.1 ms).
const loneAsmBlock = 1 << 16

// loneAsmCalls counts the blocks the assembly loops took (tests check that
// integer keys take them).
var loneAsmCalls atomic.Uint64

// loneKernels are the assembly loops for one key kind (lone_amd64.s).
type loneKernels struct {
	sums   func(ks unsafe.Pointer, n int, xs []int64, m uint64, sm []int64) (bool, uint64)
	rows   func(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) bool
	means  func(ks unsafe.Pointer, n int, xs []int64, m uint64, sm, r []int64) (bool, uint64)
	pair   func(ks unsafe.Pointer, n int, xa, xb []int64, m uint64, sa, sb, r []int64) (bool, uint64, uint64)
	floats func(ks unsafe.Pointer, n int, xs []float64, m uint64, fs []sumSlot) bool
}

// loneAsm returns the assembly loops for keys like ks, and the bit that
// turns a sort key's smallest (mn) into the loops' m (the top bit for a
// signed key, whose loops sign-extend it): on amd64, with the kernels on
// (--simd=false, and the tests' second run, take the Go loops).
func loneAsm[K Integer](ks []K) (*loneKernels, uint64, bool) {
	if !loneAsmBuilt || simdOff.Load() {
		return nil, 0, false
	}
	i, flip := 0, uint64(1)<<63
	switch any(ks).(type) {
	case []int64:
	case []uint64:
		flip = 0
	case []int32:
		i = 1
	case []uint32:
		i, flip = 2, 0
	case []int16:
		i = 3
	case []uint16:
		i, flip = 4, 0
	case []int8:
		i = 5
	case []uint8:
		i, flip = 6, 0
	default:
		return nil, 0, false
	}
	return &loneKernelsBy[i], flip, true
}

// keysAt is the address of ks's first key, for the assembly loops.
func keysAt[K Integer](ks []K) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(ks)) }

// asmBlocks calls f on the blocks [lo, hi) of n rows, loneAsmBlock each.
func asmBlocks(n int, f func(lo, hi int)) {
	for lo := 0; lo < n; lo += loneAsmBlock {
		f(lo, min(n, lo+loneAsmBlock))
		loneAsmCalls.Add(1)
	}
}

func loneFloatSums[K Integer, V int64 | float64](ks []K, xs []V, mn, tot uint64, fs []sumSlot) bool {
	xs = xs[:len(ks)]
	bad := false
	if kern, flip, ok := loneAsm(ks); ok {
		if f64, ok := any(xs).([]float64); ok {
			fs, m := fs[:tot], mn^flip
			asmBlocks(len(ks), func(lo, hi int) { bad = kern.floats(keysAt(ks[lo:hi]), hi-lo, f64[lo:hi], m, fs) || bad })
			return bad
		}
	}
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= tot {
			bad = true
			continue
		}
		p := &fs[k]
		x := float64(xs[i])
		p.rows++
		if x == x {
			p.s += x
			p.n++
		}
	}
	return bad
}

// loneIntSumsRows adds xs into sm and counts rows into r by key, both
// sliced to tot so that their accesses need no bounds check (10^7 rows by
// 100 keys, one worker: 26-28 ms with the checks, 20-22 without; by 10^4
// within the noise).
func loneIntSumsRows[K Integer](ks []K, xs []int64, mn, tot uint64, sm, r []int64) bool {
	r = r[:tot]
	sm = sm[:len(r)]
	xs = xs[:len(ks)]
	bad := false
	if kern, flip, ok := loneAsm(ks); ok {
		m := mn ^ flip
		asmBlocks(len(ks), func(lo, hi int) { bad = kern.rows(keysAt(ks[lo:hi]), hi-lo, xs[lo:hi], m, sm, r) || bad })
		return bad
	}
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= uint64(len(r)) {
			bad = true
			continue
		}
		r[k]++
		sm[k] += xs[i]
	}
	return bad
}

// loneIntMeans is loneIntSumsRows that also returns the OR of every
// value's |value| or |value|-1 (x ^ x>>63, one operation a row: a bound
// for loneCol.exactMean; the largest |value| itself cost 50% more time).
// sm and r are sliced to tot so that their accesses need no bounds check.
func loneIntMeans[K Integer](ks []K, xs []int64, mn, tot uint64, sm, r []int64) (bool, uint64) {
	r = r[:tot]
	sm = sm[:len(r)]
	xs = xs[:len(ks)]
	bad := false
	var m uint64
	if kern, flip, ok := loneAsm(ks); ok {
		off := mn ^ flip
		asmBlocks(len(ks), func(lo, hi int) {
			b, a := kern.means(keysAt(ks[lo:hi]), hi-lo, xs[lo:hi], off, sm, r)
			bad, m = bad || b, m|a
		})
		return bad, m
	}
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= uint64(len(r)) {
			bad = true
			continue
		}
		x := xs[i]
		r[k]++
		sm[k] += x
		m |= uint64(x ^ (x >> 63))
	}
	return bad, m
}

// loneIntPair is loneIntMeans for two int64 columns, xa and xb, in one
// loop: the keys are read once, and one row count serves both (r; sa and
// sb their sums). G1 q4's two int64 means, 10^7 rows, one worker: 26 ms
// against 45 for two loneIntMeans.
func loneIntPair[K Integer](ks []K, xa, xb []int64, mn, tot uint64, sa, sb, r []int64) (bool, uint64, uint64) {
	r = r[:tot]
	sa, sb = sa[:len(r)], sb[:len(r)]
	xa, xb = xa[:len(ks)], xb[:len(ks)]
	bad := false
	var ma, mb uint64
	if kern, flip, ok := loneAsm(ks); ok {
		m := mn ^ flip
		asmBlocks(len(ks), func(lo, hi int) {
			b, a1, b1 := kern.pair(keysAt(ks[lo:hi]), hi-lo, xa[lo:hi], xb[lo:hi], m, sa, sb, r)
			bad, ma, mb = bad || b, ma|a1, mb|b1
		})
		return bad, ma, mb
	}
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= uint64(len(r)) {
			bad = true
			continue
		}
		a, b := xa[i], xb[i]
		r[k]++
		sa[k] += a
		sb[k] += b
		ma |= uint64(a ^ (a >> 63))
		mb |= uint64(b ^ (b >> 63))
	}
	return bad, ma, mb
}

// loneIntSums adds xs into sm by key, with no row counts and no
// occupancy; it returns the OR of every x | x-1 (sign bit clear when every
// value is at least 1).
func loneIntSums[K Integer](ks []K, xs []int64, mn, tot uint64, sm []int64) (bool, uint64) {
	sm = sm[:tot]
	xs = xs[:len(ks)]
	bad := false
	var sg uint64
	if kern, flip, ok := loneAsm(ks); ok {
		m := mn ^ flip
		asmBlocks(len(ks), func(lo, hi int) {
			b, s := kern.sums(keysAt(ks[lo:hi]), hi-lo, xs[lo:hi], m, sm)
			bad, sg = bad || b, sg|s
		})
		return bad, sg
	}
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= uint64(len(sm)) {
			bad = true
			continue
		}
		x := xs[i]
		sm[k] += x
		sg |= uint64(x | (x - 1))
	}
	return bad, sg
}

// loneBlock is how many rows loneIntSumsOcc adds before it looks at their
// values (a variable: tests make it small).
var loneBlock = 1 << 14

// loneIntSumsOcc is loneIntSums for the column whose states say which
// slots hold rows. While every value is at least 1 (and the sums cannot
// wrap: loneOccupied checks), a slot's sum is 0 exactly when it holds no
// row, and no bitmap is kept: a bitmap read and written for every row cost
// 1.3-2x the loop (G1 q1's 10^7 rows by 100 keys on one worker: 28 ms
// against 21; by 10^5 keys 48 against 24). Once a block holds a value
// below 1, its rows and those before are marked in o, and the rest are
// added with the bitmap (marked true; sg then says nothing).
func loneIntSumsOcc[K Integer](ks []K, xs []int64, mn, tot uint64, sm []int64, o []uint64) (bad bool, sg uint64, marked bool) {
	for lo := 0; lo < len(ks); lo += loneBlock {
		hi := min(len(ks), lo+loneBlock)
		b, s := loneIntSums(ks[lo:hi], xs[lo:hi], mn, tot, sm)
		bad, sg = bad || b, sg|s
		if sg>>63 != 0 {
			loneOccMarked.Add(1)
			b1 := loneOcc(ks[:hi], mn, tot, o)
			b2 := loneIntSumsBits(ks[hi:], xs[hi:], mn, tot, sm, o)
			return bad || b1 || b2, sg, true
		}
	}
	return bad, sg, false
}

// loneIntSumsBits adds xs into sm by key and marks each key's slot in o.
func loneIntSumsBits[K Integer](ks []K, xs []int64, mn, tot uint64, sm []int64, o []uint64) bool {
	sm = sm[:tot]
	xs = xs[:len(ks)]
	bad := false
	for i, v := range ks {
		k := sortKeyInt(v) - mn
		w := k >> 6
		if k >= uint64(len(sm)) || w >= uint64(len(o)) {
			bad = true
			continue
		}
		if b := o[w]; b&(1<<(k&63)) == 0 { // read, seldom written
			o[w] = b | 1<<(k&63)
		}
		sm[k] += xs[i]
	}
	return bad
}

// loneOccupied completes c's merged bitmap (c.occ, the slots that rows
// with a value below 1 fell in) with the slots whose merged sum is not 0.
// A slot neither marks is empty when the unmarked rows' values cannot add
// past 2^63 (at most n of them, each at most the OR of the workers'
// signs); else (rare: values near 2^63/n) one more pass over the keys
// marks every row's slot (loneOccPasses counts it). It reports a key
// outside the slots (written since the sums' pass).
func loneOccupied[K Integer](env Env, keys []K, mn uint64, total, nw, wstride int, c *loneCol) bool {
	words := (total + 63) / 64
	occ := c.occ[:words]
	empty := false
	for k, x := range c.sums[:total] {
		if x != 0 {
			occ[k>>6] |= 1 << (k & 63)
		} else if occ[k>>6]&(1<<(k&63)) == 0 {
			empty = true
		}
	}
	sg := uint64(0)
	for _, s := range c.signs {
		sg |= s
	}
	n := len(keys)
	if hi, lo := bits.Mul64(sg, uint64(n)); !empty || sg>>63 == 0 && hi == 0 && lo < 1<<63 {
		return false
	}
	clear(c.occ)
	outside := make([]bool, nw)
	parallel(nw, n, 1, func(w, lo, hi int) {
		outside[w] = loneOcc(keys[lo:hi], mn, uint64(total), c.occ[w*wstride:][:words])
	})
	c.mergeOcc(nw, words, wstride)
	loneOccPasses.Add(1)
	return slices.Contains(outside, true)
}

// loneOcc sets the bit of every key's slot in o; it reports a key outside
// the tot slots (written since the sums' pass).
func loneOcc[K Integer](ks []K, mn, tot uint64, o []uint64) bool {
	bad := false
	for _, v := range ks {
		k := sortKeyInt(v) - mn
		w := k >> 6
		if k >= tot || w >= uint64(len(o)) {
			bad = true
			continue
		}
		if b := o[w]; b&(1<<(k&63)) == 0 { // read, seldom written
			o[w] = b | 1<<(k&63)
		}
	}
	return bad
}

func loneRows[K Integer](ks []K, mn, tot uint64, r []int64) bool {
	r = r[:tot]
	bad := false
	for _, v := range ks {
		k := sortKeyInt(v) - mn
		if k >= uint64(len(r)) {
			bad = true
			continue
		}
		r[k]++
	}
	return bad
}

// fusedBlock is how many rows the fused hash path probes before adding
// their ids to the states (a block's ids stay in L2). A variable: tests
// make it small, so that a few thousand rows make many blocks.
var fusedBlock = 1 << 14

// fusedHashRuns counts fused hash groupings, parallel ones those probed on
// several goroutines, and fusedPending the rows whose keys such a probe
// did not find and its block's turn added (tests check the paths).
var fusedHashRuns, fusedParallel, fusedPending atomic.Uint64

// fusedHash groups by packed keys with one hash table, where the two steps
// would hash, and aggregates col in the same pass: a block of rows is
// packed and probed (ids numbered first seen), and its ids go straight to
// the states, which are indexed by those ids, while they are in cache.
//
// On two workers or more, after the first block, every worker probes every
// nth block against the one table, read-only (a read lock held for the
// block), and then, in block order, waits for its turn to add the block to
// the states: a float column's values must be added in row order, so the
// blocks are added one at a time, in order, but each is probed beside the
// others and added while the others are probed. A key the table does not
// hold yet is left pending and numbered on the block's turn, under the
// write lock; once the first blocks have seen every key (10^4 keys in 10^7
// rows) that never happens. (Until 2026-12-01 one goroutine probed every
// block while another added them, probing being the slower stage: hc k=1e4
// through the server on two threads took 0.084-0.094 s, now 0.055-0.066,
// bench/groupby runs 33-40.)
//
// The unique keys are then sorted and the states written out in their
// order. It gives up (ok false, holding nothing) past hashBigTable distinct
// keys, where the two steps partition.
func fusedHash(env Env, specs []keySpec, col AggColumn, g *Grouping, seen *keySample) (outs []*pdarray.Array, ok bool, err error) {
	n := specs[0].a.Len()
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	t, err := newHashTable(env, 12)
	if err != nil {
		return nil, true, err
	}
	defer t.release()
	var st fusedSets
	if err := st.alloc(env, col, hashBigTable); err != nil {
		return nil, true, err
	}
	defer st.release()
	fusedHashRuns.Add(1)
	pr := &fusedProbe{t: t, specs: specs, vals: valueWords(col), st: &st}
	pr.lone64, pr.mn = loneInt64(specs)
	gaveUp := false
	w0, s0 := new(fusedWorker), newFusedSlot()
	lo := 0
	for ; lo < n && err == nil; lo += fusedBlock {
		if lo > 0 && env.workers() >= 2 && n-lo > fusedBlock {
			break // the rest in parallel
		}
		hi := min(n, lo+fusedBlock)
		ids := s0.ids[:hi-lo]
		err = pr.probe(env, w0, ids, lo, hi)
		if gaveUp = len(t.order) > hashBigTable; gaveUp || err != nil {
			// The rows kept so far: the blocks added, and this one's.
			*seen = keySample{rows: pr.kept + hashRows(nil, ids), keys: len(t.order)}
			break
		}
		pr.add(lo, ids)
	}
	if lo < n && err == nil && !gaveUp {
		gaveUp, err = pr.parallel(env, lo, n, seen)
	}
	if err != nil || gaveUp {
		return nil, !gaveUp, err
	}
	kept := pr.kept
	// Rank the distinct keys: the states are written out in key order.
	ng := len(t.order)
	keys, fk, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, true, err
	}
	frees = append(frees, fk)
	kTmp, fkt, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, true, err
	}
	frees = append(frees, fkt)
	prov, fp, err := scratchOf[int64](env, 2*ng)
	if err != nil {
		return nil, true, err
	}
	frees = append(frees, fp)
	copy(keys, t.order)
	sk, sp := sortWithIndex(env, keys, kTmp, prov)
	g.NGroups, g.Kept = ng, kept
	for k := range specs {
		a, err := env.Alloc(specs[k].a.DType(), ng)
		if err != nil {
			return nil, true, err
		}
		g.Keys = append(g.Keys, a)
	}
	unpackAll(env, specs, sk, g.Keys, nil)
	outs, err = fusedOuts(env, col, sp, st.fs, st.sums, st.rows)
	return outs, true, err
}

// fusedProbe is fusedHash's pass: its table, keys and states.
type fusedProbe struct {
	t      *hashTable
	specs  []keySpec
	lone64 []int64 // a lone int64 key's values (probeLoneIDs), or nil
	mn     uint64
	vals   []uint64
	st     *fusedSets
	kept   int
	keys   []uint64 // settle's scratch: keys new to the table
	pids   []int32  // and their ids
}

// fusedWorker is one probing goroutine's scratch.
type fusedWorker struct {
	p, buf [chunk]uint64
	pb     probeBuf
}

// fusedSlot is a probed block: its rows' ids, and the rows whose keys the
// table lacked (their ids still to settle).
type fusedSlot struct {
	ids  []int32
	pend []int32
}

func newFusedSlot() *fusedSlot { return &fusedSlot{ids: make([]int32, fusedBlock)} }

// probe numbers rows [lo, hi) into ids, adding new keys to the table
// (unless w.pb.lookup).
func (fp *fusedProbe) probe(env Env, w *fusedWorker, ids []int32, lo, hi int) error {
	w.pb.base = 0
	if fp.lone64 != nil {
		return probeLoneIDs(env, fp.t, fp.lone64[lo:hi], fp.mn, ids, hashGrow, &w.pb)
	}
	for c := lo; c < hi; c += chunk {
		e := min(hi, c+chunk)
		packChunk(fp.specs, c, e, w.p[:], w.buf[:])
		w.pb.base = c - lo
		if err := probeIDs(env, fp.t, w.p[:e-c], 1, ids[c-lo:e-lo], hashGrow, &w.pb); err != nil {
			return err
		}
	}
	return nil
}

// lookup numbers rows [lo, hi) into b.ids without changing the table (the
// caller holds its read lock); the rows whose keys it lacks are listed in
// b.pend, their ids left to settle.
func (fp *fusedProbe) lookup(env Env, w *fusedWorker, b *fusedSlot, lo, hi int) {
	w.pb.lookup, w.pb.pend = true, b.pend[:0]
	fp.probe(env, w, b.ids[:hi-lo], lo, hi) // a lookup adds nothing, so fails on nothing
	b.pend, w.pb.lookup, w.pb.pend = w.pb.pend, false, nil
}

// settle numbers the keys of the rows lookup left pending in block b, of
// rows from lo (the caller holds the table's write lock; w is its scratch).
func (fp *fusedProbe) settle(env Env, w *fusedWorker, b *fusedSlot, lo int) error {
	fusedPending.Add(uint64(len(b.pend)))
	fp.keys, fp.pids = fp.keys[:0], fp.pids[:0]
	for _, r := range b.pend {
		i := lo + int(r)
		if fp.lone64 != nil {
			fp.keys = append(fp.keys, sortKeyInt(fp.lone64[i])-fp.mn)
		} else {
			packChunk(fp.specs, i, i+1, w.p[:], w.buf[:])
			fp.keys = append(fp.keys, w.p[0])
		}
		fp.pids = append(fp.pids, 0)
	}
	if err := tableIDs(env, fp.t, fp.keys, fp.pids, hashGrow); err != nil {
		return err
	}
	for j, r := range b.pend {
		b.ids[r] = fp.pids[j]
	}
	return nil
}

// add adds the block of rows from lo, numbered ids, to the states.
func (fp *fusedProbe) add(lo int, ids []int32) {
	var v []uint64
	if fp.vals != nil {
		v = fp.vals[lo : lo+len(ids)]
	}
	fp.kept += fp.st.add(ids, v, 1)
}

// parallel runs fusedHash's blocks from lo to n on every worker. The
// calling goroutine adds every block to the states, in order, and probes
// blocks whenever the next one to add is not probed yet; the other workers
// only probe, taking the next block not yet taken. Probes are read-only
// (under a read lock); the keys a probe did not find are numbered when its
// block is added (under the write lock). The states stay with the one
// goroutine: taking turns to add, every worker its own blocks, moved them
// between the cores' caches at every block, and ran 1.7-2.1x slower in
// process than the pipeline this replaced. It reports whether it gave up
// (past hashBigTable keys, with *seen set).
func (fp *fusedProbe) parallel(env Env, lo, n int, seen *keySample) (gaveUp bool, err error) {
	fusedParallel.Add(1)
	nw := env.workers()
	nb := (n - lo + fusedBlock - 1) / fusedBlock
	bounds := func(j int) (int, int) { return lo + j*fusedBlock, min(n, lo+(j+1)*fusedBlock) }
	// Block j is probed into slot j%ring, which is free again once block
	// j-ring is added.
	ring := 4 * nw
	slots := make([]*fusedSlot, ring)
	free, ready := make([]chan struct{}, ring), make([]chan struct{}, ring)
	for i := range slots {
		slots[i] = newFusedSlot()
		free[i], ready[i] = make(chan struct{}, 1), make(chan struct{}, 1)
		free[i] <- struct{}{}
	}
	var mu sync.RWMutex // the table
	probe := func(w *fusedWorker, j int, helper bool) {
		b, e := bounds(j)
		func() {
			mu.RLock()
			defer mu.RUnlock() // also if lookup panics: the caller still adds
			if testProbePanic != nil {
				testProbePanic(j, helper)
			}
			fp.lookup(env, w, slots[j%ring], b, e)
		}()
		ready[j%ring] <- struct{}{}
	}
	var next atomic.Int64 // the next block not taken
	// A block is taken only once the block ring before it is added (its
	// slot's token is then the one for it): added counts the blocks added,
	// and a helper whose next block lies past the window waits for the
	// caller's signal. (Taking tickets past the window let a helper's
	// block j+ring take the token meant for block j, which the caller had
	// just taken: a deadlock.)
	var added atomic.Int64
	var progMu sync.Mutex
	prog := sync.NewCond(&progMu)
	stopped := false
	take := func() (int, bool) {
		for {
			t := next.Load()
			if t >= int64(nb) {
				return 0, false
			}
			if t >= added.Load()+int64(ring) {
				progMu.Lock()
				for !stopped && t >= added.Load()+int64(ring) {
					prog.Wait()
				}
				s := stopped
				progMu.Unlock()
				if s {
					return 0, false
				}
				continue
			}
			if next.CompareAndSwap(t, t+1) {
				return int(t), true
			}
		}
	}
	quit := make(chan struct{})
	// A helper's panic (a bug) must not leave the caller waiting for the
	// block it took: dead tells the caller, which stops, and Wait raises
	// the helper's panic to the request (par).
	dead := make(chan struct{})
	var deadOnce sync.Once
	g := par.Group{OnPanic: func() { deadOnce.Do(func() { close(dead) }) }}
	for range nw - 1 {
		g.Go(func() {
			w := new(fusedWorker)
			for {
				j, ok := take()
				if !ok {
					return
				}
				select {
				case <-free[j%ring]:
				case <-quit:
					return
				}
				probe(w, j, true)
			}
		})
	}
	defer g.Wait()
	defer close(quit)
	defer func() {
		progMu.Lock()
		stopped = true
		prog.Broadcast()
		progMu.Unlock()
	}()
	w0 := new(fusedWorker)
	for j := 0; j < nb; j++ {
		for waiting := true; waiting; {
			select {
			case <-ready[j%ring]:
				waiting = false
				continue
			case <-dead:
				panic(errHelperDied) // the deferred Wait raises the helper's panic instead
			default:
			}
			// Block j is being probed: probe a later one meanwhile, if its
			// slot is free (all before j are added, so k < j+ring is).
			if k := next.Load(); k < int64(nb) && k < int64(j+ring) {
				if next.CompareAndSwap(k, k+1) {
					if testStealPause != nil {
						testStealPause()
					}
					<-free[int(k)%ring]
					probe(w0, int(k), false)
				}
				continue
			}
			select {
			case <-ready[j%ring]:
			case <-dead:
				panic(errHelperDied)
			}
			waiting = false
		}
		sl := slots[j%ring]
		b, e := bounds(j)
		if len(sl.pend) > 0 {
			mu.Lock()
			err = fp.settle(env, w0, sl, b)
			mu.Unlock()
		}
		ids := sl.ids[:e-b]
		if gaveUp = len(fp.t.order) > hashBigTable; gaveUp || err != nil {
			*seen = keySample{rows: fp.kept + hashRows(nil, ids), keys: len(fp.t.order)}
			return gaveUp, err
		}
		fp.add(b, ids)
		free[j%ring] <- struct{}{}
		added.Store(int64(j + 1))
		progMu.Lock()
		prog.Broadcast()
		progMu.Unlock()
	}
	return false, nil
}

// testStealPause, when set (tests), runs between the caller's taking a
// block and its wait for the block's slot.
var testStealPause func()

// testProbePanic, when set (tests), runs before block j is probed, by a
// helper or by the caller: a stand-in for a bug in lookup.
var testProbePanic func(j int, helper bool)

// errHelperDied stops parallel's caller when a helper panicked; the
// helper's own panic replaces it (par.Group.Wait, deferred).
var errHelperDied = errors.New("a fused probing helper panicked")

// The fused hash path's accumulating loops: each returns the rows it kept
// (id >= 0; a dropped row's id is -1). Row i's value is xs[i*stride]
// (stride 2: fusedPart's rows, each value beside its key).

func hashFloatSums(fs []sumSlot, ids []int32, xs []float64, stride int) int {
	kept := 0
	for i, id := range ids {
		if id < 0 {
			continue
		}
		kept++
		p := &fs[id]
		x := xs[i*stride]
		p.rows++
		if x == x {
			p.s += x
			p.n++
		}
	}
	return kept
}

func hashIntSums(sums, rows []int64, ids []int32, xs []int64, stride int) int {
	kept := 0
	for i, id := range ids {
		if id < 0 {
			continue
		}
		kept++
		sums[id] += xs[i*stride]
		if rows != nil {
			rows[id]++
		}
	}
	return kept
}

func hashRows(rows []int64, ids []int32) int {
	kept := 0
	for _, id := range ids {
		if id >= 0 {
			kept++
			if rows != nil {
				rows[id]++
			}
		}
	}
	return kept
}

// keySample is what fusedHash saw before it gave up: the rows it kept
// (not dropped) of those it probed, and their distinct keys.
type keySample struct{ rows, keys int }

// partFuseMaxShare: fusedPart is taken where the keys of n rows look drawn
// from at most partFuseMaxShare·n distinct values (then at most 43% of
// the rows are groups). Nearer one group a row, sorting the keys and
// moving the states (16 bytes a group, once more than the two steps) weigh
// more than the pass saved: 10^7 rows of keys from 10^7 values (6.3·10^6
// groups) took 1,085 ms fused against 937 ms in two steps (p50, 9
// interleaved rounds against the previous server), where 10^6 values took
// 340 against 398 ms. Tests raise it.
var partFuseMaxShare = 0.5

// partFusable reports whether the keys of n rows look drawn from few
// enough values for fusedPart, from the first rows fusedHash saw: among r
// rows drawn evenly from D values, about r²/2D repeat a key seen before.
func partFusable(s keySample, n int) bool {
	return s.distinct() <= partFuseMaxShare*float64(n)
}

// distinct estimates from s how many distinct values the keys are drawn
// from: among r rows drawn evenly from D values, about r²/2D repeat a key
// seen before. +Inf when no key repeated.
func (s keySample) distinct() float64 {
	if repeats := s.rows - s.keys; repeats > 0 {
		return float64(s.rows) * float64(s.rows) / (2 * float64(repeats))
	}
	return math.Inf(1)
}

// partFew is fusedPart's fan-out when the keys are few enough. Scattering
// rows into more than 32 partitions costs twice as much: each partition's
// next block is a page of its own, and past 32 (with the rows' two
// streams) the stores miss the first-level TLB. 10^7 rows with a value
// each, one worker, in process: 33 ms into 16 partitions, 40 into 32, 76
// into 64, 80 into 128 (a plain interleaving copy: 29). With 10^6 keys a
// partition's table (a quarter full) then takes 2 MiB instead of 512 KiB,
// and probing it costs more (fusedPartition 91 -> 127 ms), but less than
// the scatter saves: fused sum and size by 10^7 hashed int64 keys, one
// worker, p50 of 2-4 runs, 128 -> 32 partitions (ms): 3·10^5 keys 187 ->
// 126, 10^6 219 -> 185, 2·10^6 297 -> 268, 3·10^6 335 -> 331; on two
// workers, 10^6 keys: 127 -> 109. (64 partitions were slower than both at
// 10^6 keys: the scatter of 128, tables of 1 MiB.)
const partFew = 32

// fewPartsMaxTable is the largest table (bytes) a partition may need for
// fusedPart to take partFew partitions; 0 means twice the L2 cache (the
// crossover above came at 8 MiB tables with a 2 MiB L2). Tests set it.
var fewPartsMaxTable = 0

// testFanOut, when not 0, is the fan-out fusedFanOut returns (tests run
// both on the same keys).
var testFanOut = 0

// fewParts counts fusedPart runs with partFew partitions, loneScatters
// scatters of a lone int64 key by scatterLone (tests check the paths).
var fewParts, loneScatters atomic.Uint64

// fusedFanOut returns how many partitions fusedPart takes for keys drawn
// from about distinct values: partFew when a partition's table (a quarter
// full, as partTables.next sizes it) fits fewPartsMaxTable, else partP.
func fusedFanOut(distinct float64) int {
	if testFanOut != 0 {
		return testFanOut
	}
	limit := fewPartsMaxTable
	if limit == 0 {
		limit = 2 * l2Bytes()
	}
	per := distinct / partFew
	if !(per < 1<<40) { // +Inf, NaN or absurd
		return partP
	}
	slots := 1 << bits.Len(uint(4/partGrow*per))
	if slots*int(unsafe.Sizeof(hashSlot{})) > limit {
		return partP
	}
	return partFew
}

// fusedPartRuns counts fused partitioned groupings (tests check the path).
var fusedPartRuns atomic.Uint64

// fusedSets is one set of a fused grouping's states (those fusedKind
// names), indexed by local id; its memory comes from env.
type fusedSets struct {
	fs         []sumSlot
	sums, rows []int64
	keys       []uint64 // fusedPart's partitions: their distinct keys (allocKeys)
	frees      []func()
}

// allocKeys gives s room for n keys, freed with it.
func (s *fusedSets) allocKeys(env Env, n int) error {
	k, fk, err := scratchOf[uint64](env, n)
	if err == nil {
		s.keys = k
		s.frees = append(s.frees, fk)
	}
	return err
}

// alloc makes s a zeroed set of n states of col's kind (releasing any it held).
func (s *fusedSets) alloc(env Env, col AggColumn, n int) error {
	s.release()
	isF, isI, countRows := fusedKind(col)
	var err error
	add := func(fr func(), e error) {
		if err = e; e == nil {
			s.frees = append(s.frees, fr)
		}
	}
	switch {
	case isF:
		var fr func()
		s.fs, fr, err = slotsOf[sumSlot](env, n)
		add(fr, err)
	case countRows:
		var fr func()
		s.rows, fr, err = slotsOf[int64](env, n)
		add(fr, err)
	}
	if err == nil && isI {
		var fr func()
		s.sums, fr, err = slotsOf[int64](env, n)
		add(fr, err)
	}
	if err != nil {
		s.release()
	}
	return err
}

func (s *fusedSets) len() int { return max(len(s.fs), len(s.sums), len(s.rows)) }

// copyTo copies s's first n states to d at off.
func (s *fusedSets) copyTo(d *fusedSets, off, n int) {
	if s.fs != nil {
		copy(d.fs[off:], s.fs[:n])
	}
	if s.sums != nil {
		copy(d.sums[off:], s.sums[:n])
	}
	if s.rows != nil {
		copy(d.rows[off:], s.rows[:n])
	}
}

// gatherTo writes s's states at[0], at[1], ... to d's first len(at).
func (s *fusedSets) gatherTo(d *fusedSets, at []int64) {
	if s.fs != nil {
		o := d.fs[:len(at)]
		for j, k := range at {
			o[j] = s.fs[k]
		}
	}
	if s.sums != nil {
		o := d.sums[:len(at)]
		for j, k := range at {
			o[j] = s.sums[k]
		}
	}
	if s.rows != nil {
		o := d.rows[:len(at)]
		for j, k := range at {
			o[j] = s.rows[k]
		}
	}
}

// clearN zeroes s's first n states.
func (s *fusedSets) clearN(n int) {
	if s.fs != nil {
		clear(s.fs[:n])
	}
	if s.sums != nil {
		clear(s.sums[:n])
	}
	if s.rows != nil {
		clear(s.rows[:n])
	}
}

func (s *fusedSets) release() {
	for _, f := range s.frees {
		f()
	}
	*s = fusedSets{}
}

// add accumulates a block of rows into s by their local ids; row i's
// value is vals[i*stride] (a column's words, or fusedPart's rows' words
// from the first value on: stride 2), as s's kind needs. It returns the
// rows kept (id >= 0).
func (s *fusedSets) add(ids []int32, vals []uint64, stride int) int {
	switch {
	case s.fs != nil:
		return hashFloatSums(s.fs, ids, viewAs[float64](vals), stride)
	case s.sums != nil:
		return hashIntSums(s.sums, s.rows, ids, viewAs[int64](vals), stride)
	}
	return hashRows(s.rows, ids)
}

// valueWords is col's values as 8-byte words (int64 or float64, moved as
// they are), nil for size alone.
func valueWords(col AggColumn) []uint64 {
	if col.Values == nil {
		return nil
	}
	return pdarray.BytesAs[uint64](col.Values.Bytes())
}

// viewAs views words as as many Ts of eight bytes; both name the same
// memory, whose owner is the caller.
func viewAs[T int64 | float64](words []uint64) []T {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(words))), len(words))
}

// fusedPart groups by packed keys too many for fusedHash's one table and
// aggregates col in the same pass, with groupPartitioned's partitions
// (groupby_part.go): the rows' packed keys, each with its value beside it,
// are scattered into blocks of their partition (row order kept within
// each), and each block is probed in the partition's table, which stays in
// L2, and its values accumulated by their local ids into the worker's
// states, in cache. No ids are written per row nor read back, and the
// values are read once more from the blocks where the two steps read them
// by ids. Every group's rows are in one partition, in row order, so float
// sums are bit-identical to a sequential loop at any worker count, and
// partitions run on every worker. A range partition's keys are then sorted
// there and its states copied out in their order; hash partitions' states
// are copied out as they are, and written in the order of all their keys
// sorted together. The scatter takes a partition's next block as it fills
// the last, so no pass counts the rows first.
func fusedPart(env Env, specs []keySpec, col AggColumn, g *Grouping, fanOut int) (outs []*pdarray.Array, err error) {
	fusedPartRuns.Add(1)
	n := specs[0].a.Len()
	pf, ranged := partPlan(specs, n, fanOut)
	if pf.parts == partFew {
		fewParts.Add(1)
	}
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	isF, isI, _ := fusedKind(col)
	pb := partBlocks{stride: 1 + btoi(isF || isI), nw: numWorkers(env.workers(), n)}
	// Each worker's last block of each partition may be partly filled.
	nb := (n+partBlockRows-1)/partBlockRows + pb.nw*pf.parts
	var fw func()
	if pb.words, fw, err = scratchOf[uint64](env, nb*partBlockRows*pb.stride); err != nil {
		return nil, err
	}
	defer func() {
		if fw != nil {
			fw()
		}
	}()
	pb.scatter(env, specs, pf, valueWords(col))
	if pb.outside {
		return nil, errKeyWritten()
	}
	pt := newPartTables(env, ranged)
	defer pt.release()
	nt := len(pt.tables)
	work := make([]fusedSets, nt) // each worker's states, grown as needed
	bufs := make([]partBlock, nt)
	parts := make([]fusedSets, partP) // each partition's, copied out
	partUniq := make([][]uint64, partP)
	defer func() {
		for i := range work {
			work[i].release()
			bufs[i].release()
		}
		for i := range parts {
			parts[i].release()
		}
	}()
	errs := make([]error, partP)
	var failed atomic.Bool
	forPartitions(env, pf.parts, func(w, q int) {
		if failed.Load() {
			return
		}
		if err := fusedPartition(env, pt, w, q, &pb, ranged, &work[w], &bufs[w], col, &parts[q]); err != nil {
			errs[q] = err
			failed.Store(true)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	fw() // the rows are read: their memory goes back before the outputs are made
	fw = nil
	for q := range parts {
		partUniq[q] = parts[q].keys
	}
	// All the keys in order, and the states' order: partition after
	// partition (ranges, each sorted already), or by sorting them together.
	var keys []uint64
	var flat []int64 // nil: the states' own order
	base := make([]int, partP+1)
	if ranged {
		for q := range partP {
			base[q+1] = base[q] + len(partUniq[q])
		}
		var fk func()
		if keys, fk, err = scratchOf[uint64](env, base[partP]); err != nil {
			return nil, err
		}
		frees = append(frees, fk)
		for q := range partP {
			copy(keys[base[q]:], partUniq[q])
		}
	} else {
		var fk func()
		if keys, fk, flat, base, err = rankParts(env, partUniq, false, &frees); err != nil {
			return nil, err
		}
		frees = append(frees, fk)
	}
	ng := len(keys)
	var all fusedSets
	if err := all.alloc(env, col, ng); err != nil {
		return nil, err
	}
	defer all.release()
	for q := range parts {
		parts[q].copyTo(&all, base[q], base[q+1]-base[q])
		parts[q].release()
	}
	g.NGroups, g.Kept = ng, pb.kept
	for k := range specs {
		a, err := env.Alloc(specs[k].a.DType(), ng)
		if err != nil {
			return nil, err
		}
		g.Keys = append(g.Keys, a)
	}
	unpackAll(env, specs, keys, g.Keys, nil)
	return fusedOuts(env, col, flat, all.fs, all.sums, all.rows)
}

// partBlockRows is how many rows a block of fusedPart's partitions holds
// (16 KiB of keys and values).
const partBlockRows = 1024

// partBlocks are fusedPart's rows by partition: blocks of partBlockRows
// rows (stride words each: a packed key, and its value's bits when there
// is a value) in one arena, words, whose owner is fusedPart. A key and its
// value go side by side, one write stream a partition: with 64 partitions,
// in two streams a partition (128 in all) the scatter of 10^7 rows took
// about 130 ms on one worker, as pairs 60-85 ms.
type partBlocks struct {
	words  []uint64
	stride int
	nw     int       // workers that scattered
	lists  [][]int32 // lists[w*partP+q]: worker w's blocks of partition q, in row order
	fill   []int     // fill[w*partP+q]: rows in the last of them
	kept   int       // rows scattered (not dropped)
	// outside: a key fell past the partitions (written since its range was
	// taken); its row was not scattered.
	outside bool
}

// scatter writes each kept row's packed key (and vals' word of it) into
// its partition's current block, taking the arena's next block when that
// is full. Worker w scatters the w-th stretch of rows.
func (pb *partBlocks) scatter(env Env, specs []keySpec, pf partFunc, vals []uint64) {
	n := specs[0].a.Len()
	pb.lists, pb.fill = make([][]int32, pb.nw*partP), make([]int, pb.nw*partP)
	kept := make([]int, pb.nw)
	var next atomic.Int64
	stride := pb.stride
	bw := partBlockRows * stride
	words := pb.words
	lone, mn := loneInt64(specs)
	off := 1<<63 - mn // a lone int64 key's packed key is uint64(v) + off (see homeSlotsLone)
	if lone != nil {
		loneScatters.Add(1)
	}
	bad := make([]bool, pb.nw)
	env.parallel(n, chunk, func(w, lo, hi int) {
		var at, end [partP]int // next word and block end per partition; equal: take a block
		lists := pb.lists[w*partP : (w+1)*partP]
		take := func(q uint8) int {
			b := int(next.Add(1)) - 1
			lists[q] = append(lists[q], int32(b))
			end[q] = (b + 1) * bw
			return b * bw
		}
		if lone != nil {
			var v []uint64
			if vals != nil {
				v = vals[lo:hi]
			}
			bad[w] = scatterLone(lone[lo:hi], off, v, pf, words, &at, &end, take)
		} else {
			bad[w] = scatterPacked(specs, lo, hi, vals, pf, words, stride, &at, &end, take)
		}
		for q := range partP {
			if l := lists[q]; len(l) > 0 {
				r := (at[q] - int(l[len(l)-1])*bw) / pb.stride
				pb.fill[w*partP+q] = r
				kept[w] += (len(l)-1)*partBlockRows + r
			}
		}
	})
	for _, k := range kept {
		pb.kept += k
	}
	pb.outside = slices.Contains(bad, true)
}

// scatterPacked is scatter's loop for rows lo to hi of any keys, packed a
// chunk at a time by packChunk (dropped rows skipped); vals, when not nil,
// is every row's value. at, end and take are scatter's. It skips a row whose
// key falls past the partitions and returns whether there was one.
func scatterPacked(specs []keySpec, lo, hi int, vals []uint64, pf partFunc, words []uint64, stride int, at, end *[partP]int, take func(uint8) int) bool {
	bad := false
	p, buf := make([]uint64, chunk), make([]uint64, chunk)
	for x := lo; x < hi; x += chunk {
		e := min(hi, x+chunk)
		packChunk(specs, x, e, p, buf)
		var v []uint64
		if vals != nil {
			v = vals[x:e]
		}
		for i, k := range p[:e-x] {
			if k == dropKey {
				continue
			}
			h := pf.hi(k)
			if h >= uint64(pf.parts) {
				bad = true
				continue
			}
			q := uint8(h)
			j := at[q]
			if j == end[q] {
				j = take(q)
			}
			words[j] = k
			if v != nil {
				words[j+1] = v[i]
			}
			at[q] = j + stride
		}
	}
	return bad
}

// scatterLone is scatter's loop for a lone int64 key, x (a worker's
// stretch of rows), each packed as it is read (uint64(v) + off; never
// dropKey: a packable key spans less than 2^64-1 values) instead of first
// written to a chunk buffer by packChunk and read back. 10^7 rows with a
// value each into 128 range partitions, one worker, in process: 111 ->
// 84 ms. vals is nil when there are no values (stride 1); at, end and take
// are scatter's. Like scatterPacked it skips and reports a key past the
// partitions.
func scatterLone(x []int64, off uint64, vals []uint64, pf partFunc, words []uint64, at, end *[partP]int, take func(uint8) int) bool {
	stride := 1
	if vals != nil {
		vals, stride = vals[:len(x)], 2
	}
	bad := false
	for i, v := range x {
		k := uint64(v) + off
		h := pf.hi(k)
		if h >= uint64(pf.parts) {
			bad = true
			continue
		}
		q := uint8(h)
		j := at[q]
		if j == end[q] {
			j = take(q)
		}
		words[j] = k
		if vals != nil {
			words[j+1] = vals[i]
		}
		at[q] = j + stride
	}
	return bad
}

// rows returns partition q's row count.
func (pb *partBlocks) rows(q int) int {
	r := 0
	for w := range pb.nw {
		if l := pb.lists[w*partP+q]; len(l) > 0 {
			r += (len(l)-1)*partBlockRows + pb.fill[w*partP+q]
		}
	}
	return r
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// partBlock is a worker's scratch in fusedPart: a block's local ids, and
// room for a partition's distinct keys (from env, grown as needed).
type partBlock struct {
	ids       []int32
	order     []uint64
	freeOrder func()
}

// orderFor returns room for n distinct keys.
func (b *partBlock) orderFor(env Env, n int) ([]uint64, error) {
	if cap(b.order) < n {
		b.release()
		o, fo, err := scratchOf[uint64](env, max(n, 2*cap(b.order)))
		if err != nil {
			return nil, err
		}
		b.order, b.freeOrder = o, fo
	}
	return b.order[:0], nil
}

func (b *partBlock) release() {
	if b.freeOrder != nil {
		b.freeOrder()
	}
	b.order, b.freeOrder = nil, nil
}

// fusedPartition groups and aggregates partition q of pb on worker w: into
// its states ws (grown as needed, zeroed again once copied), then copied
// out to out with the partition's distinct keys (out.keys), sorted with
// their states when the partition is a range, else in first-seen order.
func fusedPartition(env Env, pt *partTables, w, q int, pb *partBlocks, ranged bool, ws *fusedSets, b *partBlock, col AggColumn, out *fusedSets) error {
	rows := pb.rows(q)
	t, err := pt.next(env, w, rows)
	if err != nil {
		return err
	}
	if b.ids == nil {
		b.ids = make([]int32, partBlockRows)
	}
	if t.order, err = b.orderFor(env, rows); err != nil {
		return err
	}
	bw := partBlockRows * pb.stride
	for v := range pb.nw {
		l := pb.lists[v*partP+q]
		for i, blk := range l {
			r := partBlockRows
			if i == len(l)-1 {
				r = pb.fill[v*partP+q]
			}
			words := pb.words[int(blk)*bw:][:r*pb.stride]
			ids := b.ids[:r]
			if err := probeIDs(env, t, words, pb.stride, ids, partGrow, &pt.bufs[w]); err != nil {
				return err
			}
			if len(t.order) > ws.len() {
				if err := ws.grow(env, col, len(t.order)); err != nil {
					return err
				}
			}
			ws.add(ids, words[pb.stride-1:], pb.stride) // a row's value, if any, is its second word
		}
	}
	nd := len(t.order)
	pt.done(w, rows, nd)
	defer ws.clearN(nd)
	if err := out.alloc(env, col, nd); err != nil {
		return err
	}
	if err := out.allocKeys(env, nd); err != nil {
		return err
	}
	if !ranged || nd < 2 {
		copy(out.keys, t.order)
		ws.copyTo(out, 0, nd)
		return nil
	}
	// Sort the range's keys with their local ids (in cache), and copy the
	// states out in that order.
	idx, fi, err := scratchOf[int64](env, 2*nd)
	if err != nil {
		return err
	}
	defer fi()
	for i := range nd {
		idx[i] = int64(i)
	}
	var h [1 << radixBits]int
	sk, sp := sortRun(t.order, out.keys, idx[:nd], idx[nd:], &h)
	if &sk[0] != &out.keys[0] {
		copy(out.keys, sk)
	}
	ws.gatherTo(out, sp)
	return nil
}

// grow makes s hold at least n states, keeping those it has.
func (s *fusedSets) grow(env Env, col AggColumn, n int) error {
	var d fusedSets
	if err := d.alloc(env, col, max(n, 2*s.len(), 1024)); err != nil {
		return err
	}
	s.copyTo(&d, 0, s.len())
	s.release()
	*s = d
	return nil
}

// loneInt64 returns the values of a lone int64 key and its min when its
// packed key is its sort key less min (what packChunk would write), for
// probeLoneIDs; nil otherwise.
func loneInt64(specs []keySpec) ([]int64, uint64) {
	if s := &specs[0]; len(specs) == 1 && !s.float && !s.ids && s.stride == 1 && s.a.DType() == dI64 {
		return pdarray.View[int64](s.a), s.min
	}
	return nil, 0
}

package ops

// Per-group medians without sorting: a stable counting sort by group id
// gathers each group's non-NaN values into one stretch of a scratch buffer
// (one pass to count, one to scatter), then a selection (quickselect) finds
// the middle of each stretch in place: O(rows) against the O(rows·log)
// coargsort of (id, value) it replaces.

import (
	"math"
	"sort"
	"sync/atomic"
)

// medianRuns counts groupMedian calls, gatheredParallel those whose
// counting sort ran on several workers, gatheredMoments those that also
// made means, variances or standard deviations (tests check the paths).
var medianRuns, gatheredParallel, gatheredMoments atomic.Uint64

// groupMedian writes each group's median of x into out.
func groupMedian[T Number](env Env, gid []int32, ng int, x []T, out []float64) error {
	return groupGathered(env, gid, ng, x, []string{"median"}, [][]float64{out}, 0)
}

// gatheredOp reports whether groupGathered makes op.
func gatheredOp(op string) bool {
	return op == "median" || op == "mean" || op == "var" || op == "std"
}

// groupGathered writes ops (each a gatheredOp) of x by groups into outs.
// Each group's non-NaN values are gathered, in row order, into a stretch
// of one scratch buffer; its mean, variance and standard deviation are
// then added up over the stretch in row order, as groupFloatSums and
// groupMeanVar add them over all rows (bit-identical), and its median
// selected in place. Where the groups are few enough for a count per
// worker and group (rowSplit), the counting and the scatter run on row
// blocks, one per worker (a group's rows from block w go after those from
// block w-1: row order kept); the groups are then shared among the
// workers by their values' count.
// So a median and a standard deviation of one column (G1 q6) take two
// passes over the rows, both on every worker, where they took four on
// one.
func groupGathered[T Number](env Env, gid []int32, ng int, x []T, ops []string, outs [][]float64, ddof float64) error {
	medianRuns.Add(1)
	n := len(gid)
	x = x[:n]
	nb := rowSplit(env, n, ng)
	if nb > 1 {
		gatheredParallel.Add(1)
	}
	// pos[b*ng+g]: where block b's next value of group g goes.
	pos, freePos, err := slotsOf[int64](env, nb*ng)
	if err != nil {
		return err
	}
	defer freePos()
	off, freeOff, err := slotsOf[int64](env, ng+1)
	if err != nil {
		return err
	}
	defer freeOff()
	isF := isFloatT[T]()
	// A group id outside 0..ng-1 (only a dropped row's -1 is one) is
	// skipped, and a group that got more values than it counted (ids
	// written between the passes) is an error: never an index out of
	// range in a worker.
	parallel(nb, n, 1, func(b, lo, hi int) {
		c := pos[b*ng : (b+1)*ng]
		for i, g := range gid[lo:hi] {
			if uint32(g) < uint32(ng) && (!isF || x[lo+i] == x[lo+i]) {
				c[g]++
			}
		}
	})
	at := int64(0)
	for g := range ng {
		off[g] = at
		for b := range nb {
			c := pos[b*ng+g]
			pos[b*ng+g] = at
			at += c
		}
	}
	off[ng] = at
	vals, freeVals, err := scratchOf[T](env, int(at))
	if err != nil {
		return err
	}
	defer freeVals()
	var bad atomic.Bool
	parallel(nb, n, 1, func(b, lo, hi int) {
		p := pos[b*ng : (b+1)*ng]
		xs := x[lo:hi]
		for i, g := range gid[lo:hi] {
			if uint32(g) < uint32(ng) && (!isF || xs[i] == xs[i]) {
				if p[g] >= off[g+1] {
					bad.Store(true)
					continue
				}
				vals[p[g]] = xs[i]
				p[g]++
			}
		}
	})
	if bad.Load() {
		return errorf(ErrValue, "the group ids were written while they were being aggregated (a concurrent setitem?); aggregate again")
	}
	var median, mean, vr, std []float64
	for i, op := range ops {
		switch op {
		case "median":
			median = outs[i]
		case "mean":
			mean = outs[i]
		case "var":
			vr = outs[i]
		case "std":
			std = outs[i]
		}
	}
	moments := mean != nil || vr != nil || std != nil
	if moments {
		gatheredMoments.Add(1)
	}
	// The groups split among the workers by their values (a few groups can
	// hold them all).
	nw := numWorkers(env.workers(), int(at))
	bounds := make([]int, nw+1)
	for w := 1; w < nw; w++ {
		bounds[w] = sort.Search(ng, func(g int) bool { return off[g] >= at*int64(w)/int64(nw) })
	}
	bounds[nw] = ng
	parallelN(nw, func(w int) {
		for g := bounds[w]; g < bounds[w+1]; g++ {
			a := vals[off[g]:off[g+1]]
			if moments {
				gatheredStats(a, g, ddof, mean, vr, std)
			}
			if median != nil {
				median[g] = medianOf(a)
			}
		}
	})
	return nil
}

// gatheredStats writes group g's mean, variance and standard deviation
// (each where its slice is not nil) from its values a, in row order, with
// groupFloatSums' and groupMeanVar's arithmetic.
func gatheredStats[T Number](a []T, g int, ddof float64, mean, vr, std []float64) {
	s := 0.0
	for _, v := range a {
		s += float64(v)
	}
	m := s / float64(len(a))
	if mean != nil {
		mean[g] = m
	}
	if vr == nil && std == nil {
		return
	}
	ss := 0.0
	for _, v := range a {
		d := float64(v) - m
		ss += d * d
	}
	v := quietNaN
	if d := float64(len(a)) - ddof; d > 0 {
		v = ss / d
	}
	if vr != nil {
		vr[g] = v
	}
	if std != nil {
		std[g] = math.Sqrt(v)
	}
}

// medianOf returns the median of a (no NaN; NaN when empty), reordering a.
func medianOf[T Number](a []T) float64 {
	c := len(a)
	if c == 0 {
		return quietNaN
	}
	k := c / 2
	selectNth(a, k)
	if c%2 == 1 {
		return float64(a[k])
	}
	lo := a[0]
	for _, v := range a[1:k] {
		lo = max(lo, v)
	}
	return (float64(lo) + float64(a[k])) / 2
}

// selectNth reorders a (no NaN) so that a[k] is the value a sorted a would
// hold there, with nothing larger before it and nothing smaller after it.
// Each round partitions around the median of three with no branch on the
// values (Lomuto's swap, the boundary moved by the comparison's 0 or 1):
// on random values a branch on each comparison mispredicts half the time,
// and Hoare's partitioning that did so took twice as long (10,000 groups
// of 1,000 float64 values: 117 -> 55 ms; 1,000 values of 1..5: 96 -> 43).
// When k is not below the pivot, a second such pass moves the pivot's
// equals first, so runs of duplicates end the search.
func selectNth[T Number](a []T, k int) {
	lo, hi := 0, len(a) // a[lo:hi] holds a[k]'s place
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		x, y, z := a[lo], a[mid], a[hi-1]
		if x > y {
			x, y = y, x
		}
		if y > z {
			y = z
			if x > y {
				y = x
			}
		}
		pivot := y
		s := a[lo:hi]
		j := 0 // s[:j] < pivot <= s[j:i]
		for i, v := range s {
			s[i] = s[j]
			s[j] = v
			j += btoi(v < pivot)
		}
		if k < lo+j {
			hi = lo + j
			continue
		}
		s = s[j:]
		e := 0 // s[:e] == pivot < s[e:i]
		for i, v := range s {
			s[i] = s[e]
			s[e] = v
			e += btoi(v == pivot)
		}
		if k < lo+j+e {
			return // all equal the pivot
		}
		lo += j + e
	}
	for i := lo + 1; i < hi; i++ { // insertion sort of the last few
		v := a[i]
		j := i
		for j > lo && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

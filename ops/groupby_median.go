package ops

// Per-group medians without sorting: a stable counting sort by group id
// gathers each group's non-NaN values into one stretch of a scratch buffer
// (one pass to count, one to scatter), then a selection (quickselect) finds
// the middle of each stretch in place: O(rows) against the O(rows·log)
// coargsort of (id, value) it replaces.

import (
	"math"
	"sync/atomic"
)

// medianRuns counts groupMedian calls (tests check the path is taken).
var medianRuns atomic.Uint64

func groupMedian[T Number](env Env, gid []int32, ng int, x []T, out []float64) error {
	medianRuns.Add(1)
	x = x[:len(gid)]
	off, freeOff, err := slotsOf[int64](env, ng+1)
	if err != nil {
		return err
	}
	defer freeOff()
	isF := isFloatT[T]()
	for i, g := range gid {
		if g >= 0 && (!isF || x[i] == x[i]) {
			off[g+1]++
		}
	}
	for g := 1; g <= ng; g++ {
		off[g] += off[g-1]
	}
	vals, freeVals, err := scratchOf[T](env, int(off[ng]))
	if err != nil {
		return err
	}
	defer freeVals()
	pos, freePos, err := scratchOf[int64](env, ng)
	if err != nil {
		return err
	}
	defer freePos()
	copy(pos, off[:ng])
	for i, g := range gid {
		if g >= 0 && (!isF || x[i] == x[i]) {
			vals[pos[g]] = x[i]
			pos[g]++
		}
	}
	parallel(env.workers(), ng, 64, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			a := vals[off[g]:off[g+1]]
			c := len(a)
			if c == 0 {
				out[g] = math.NaN()
				continue
			}
			k := c / 2
			selectNth(a, k)
			if c%2 == 1 {
				out[g] = float64(a[k])
				continue
			}
			lo := a[0]
			for _, v := range a[1:k] {
				lo = max(lo, v)
			}
			out[g] = (float64(lo) + float64(a[k])) / 2
		}
	})
	return nil
}

// selectNth reorders a (no NaN) so that a[k] is the value a sorted a would
// hold there, with nothing larger before it and nothing smaller after it.
// Hoare partitioning that stops on equal values keeps runs of duplicates
// from degrading it; the pivot is the median of three.
func selectNth[T Number](a []T, k int) {
	lo, hi := 0, len(a)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		x, y, z := a[lo], a[mid], a[hi]
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
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return // a[j+1:i] all equal the pivot
		}
	}
	for i := lo + 1; i <= hi; i++ { // insertion sort of the last few
		v := a[i]
		j := i
		for j > lo && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

package ops

// np.repeat: each element of a, counts[i] times (or count times each).

import (
	"math"
	"slices"

	"github.com/arktos-dev/arktos/pdarray"
)

// Repeat returns a new array of a's dtype holding a[i] counts[i] times, in
// order (counts: an integer array of a's length, none negative), or, with
// counts nil, each element count times. One pass sums the counts per block
// of elements; the output is then split evenly among the workers, each
// finding its first element by a binary search of the running counts and
// writing runs of equal words (every dtype is repeated as its bits).
func Repeat(env Env, a, counts *pdarray.Array, count int) (*pdarray.Array, error) {
	n := a.Len()
	if counts == nil {
		if count < 0 {
			return nil, errorf(ErrValue, "repeats may not contain negative values (got %d)", count)
		}
		if n > 0 && count > math.MaxInt64/n {
			return nil, errorf(ErrValue, "%d elements repeated %d times is too many", n, count)
		}
		out, err := env.Alloc(a.DType(), n*count)
		if err != nil {
			return nil, err
		}
		repeatWords(env, a, out, nil, count)
		return out, nil
	}
	if !isInt(counts.DType()) {
		return nil, errorf(ErrType, "repeat counts must be integers, got %v (cast them with astype)", counts.DType())
	}
	if counts.Len() != n {
		return nil, errorf(ErrValue, "repeat needs one count per element: %d counts for %d elements", counts.Len(), n)
	}
	ends, freeEnds, err := scratchOf[int64](env, n)
	if err != nil {
		return nil, err
	}
	defer freeEnds()
	var total int64
	switch counts.DType() {
	case dI8:
		total, err = runEnds(env, pdarray.View[int8](counts), ends)
	case dI16:
		total, err = runEnds(env, pdarray.View[int16](counts), ends)
	case dI32:
		total, err = runEnds(env, pdarray.View[int32](counts), ends)
	case dI64:
		total, err = runEnds(env, pdarray.View[int64](counts), ends)
	case dU8:
		total, err = runEnds(env, pdarray.View[uint8](counts), ends)
	case dU16:
		total, err = runEnds(env, pdarray.View[uint16](counts), ends)
	case dU32:
		total, err = runEnds(env, pdarray.View[uint32](counts), ends)
	case dU64:
		total, err = runEnds(env, pdarray.View[uint64](counts), ends)
	}
	if err != nil {
		return nil, err
	}
	out, err := env.Alloc(a.DType(), int(total))
	if err != nil {
		return nil, err
	}
	repeatWords(env, a, out, ends, 0)
	return out, nil
}

// runEnds writes the running sum of counts into ends (ends[i]: where the
// run of element i ends) and returns the total; a negative count, or a
// total past int64, fails.
func runEnds[T Integer](env Env, counts []T, ends []int64) (int64, error) {
	nw := numWorkers(env.workers(), len(counts))
	sums := make([]uint64, nw+1)
	bad := make([]int, nw) // the first bad count's element in each block, or -1
	for w := range bad {
		bad[w] = -1
	}
	env.parallel(len(counts), 1, func(w, lo, hi int) {
		var s uint64
		for i, c := range counts[lo:hi] {
			if c < 0 || uint64(c) > math.MaxInt64 {
				bad[w] = lo + i
				return
			}
			if s += uint64(c); s > math.MaxInt64 {
				bad[w] = lo + i
				return
			}
		}
		sums[w+1] = s
	})
	for w, b := range bad {
		if b >= 0 {
			if c := counts[b]; c < 0 {
				return 0, errorf(ErrValue, "repeats may not contain negative values (element %d's count is %d)", b, c)
			}
			return 0, errorf(ErrValue, "repeat counts add up past 2^63-1 (at element %d)", b)
		}
		if sums[w+1] += sums[w]; sums[w+1] > math.MaxInt64 {
			return 0, errorf(ErrValue, "repeat counts add up past 2^63-1")
		}
	}
	env.parallel(len(counts), 1, func(w, lo, hi int) {
		s := int64(sums[w])
		for i, c := range counts[lo:hi] {
			s += int64(c)
			ends[lo+i] = s
		}
	})
	return int64(sums[nw]), nil
}

func repeatWords(env Env, a, out *pdarray.Array, ends []int64, count int) {
	switch a.DType().Size() {
	case 1:
		repeatRuns(env, words[uint8](a), words[uint8](out), ends, count)
	case 2:
		repeatRuns(env, words[uint16](a), words[uint16](out), ends, count)
	case 4:
		repeatRuns(env, words[uint32](a), words[uint32](out), ends, count)
	case 8:
		repeatRuns(env, words[uint64](a), words[uint64](out), ends, count)
	}
}

// repeatRuns fills out with the runs of a: element i up to ends[i] (or, ends
// nil, up to (i+1)*count). Each worker takes an equal share of out.
func repeatRuns[W word](env Env, a, out []W, ends []int64, count int) {
	env.parallel(len(out), chunk, func(_, lo, hi int) {
		var i int
		if ends == nil {
			i = lo / count
		} else {
			i, _ = slices.BinarySearch(ends, int64(lo)+1) // the first run ending after lo
		}
		for at := lo; at < hi; i++ {
			end := (i + 1) * count
			if ends != nil {
				end = int(ends[i])
			}
			end = min(end, hi)
			v := a[i]
			for j := at; j < end; j++ {
				out[j] = v
			}
			at = max(at, end)
		}
	})
}

package ops

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// MaxRanks bounds the ranks one OrderStats call answers (its reply lists
// one value per rank).
const MaxRanks = 1 << 16

// OrderStats returns the elements of a at the given ranks of its sorted
// order (NaN last, as Sort puts them; a rank among the NaNs reads numpy's
// quiet NaN): what np.median and np.quantile read, found by selection in
// O(n) expected time rather than a sort (which costs several times more:
// docs/operations.md). Values come back as Reduce's do: int64, uint64 or
// float64 (bool arrays are refused, as numpy's quantiles refuse them).
// Ranks may repeat and come in any order; each must be below a.Len(). nans
// is how many elements are NaN (a caller learns whether the last rank is
// NaN without asking for it).
func OrderStats(env Env, a *pdarray.Array, ranks []int) (values []any, nans int, err error) {
	n := a.Len()
	if len(ranks) > MaxRanks {
		return nil, 0, errorf(ErrValue, "%d ranks asked for; at most %d in one request: ask in several", len(ranks), MaxRanks)
	}
	for _, r := range ranks {
		if r < 0 || r >= n {
			return nil, 0, errorf(ErrIndex, "rank %d is out of range for an array of %d elements (ranks are 0 to %d)", r, n, n-1)
		}
	}
	switch a.DType() {
	case dI8:
		return orderStats[int8, int64](env, a, ranks)
	case dI16:
		return orderStats[int16, int64](env, a, ranks)
	case dI32:
		return orderStats[int32, int64](env, a, ranks)
	case dI64:
		return orderStats[int64, int64](env, a, ranks)
	case dU8:
		return orderStats[uint8, uint64](env, a, ranks)
	case dU16:
		return orderStats[uint16, uint64](env, a, ranks)
	case dU32:
		return orderStats[uint32, uint64](env, a, ranks)
	case dU64:
		return orderStats[uint64, uint64](env, a, ranks)
	case dF32:
		return orderStats[float32, float64](env, a, ranks)
	case dF64:
		return orderStats[float64, float64](env, a, ranks)
	}
	return nil, 0, errorf(ErrType, "order statistics of a %v array are not supported (numpy refuses quantiles of bool too); cast it first with astype", a.DType())
}

// orderStats answers from brackets where it can (bracketStats), else from
// a scratch copy with its NaNs moved to the end, whose ranks that fall
// among the rest it selects; W is the reply type.
func orderStats[T Number, W int64 | uint64 | float64](env Env, a *pdarray.Array, ranks []int) ([]any, int, error) {
	x := pdarray.View[T](a)
	if len(ranks) == 0 { // (asked how many NaNs there are, only)
		nans := 0
		if isFloatT[T]() {
			counts := make([]int, numWorkers(env.workers(), len(x)))
			env.parallel(len(x), 1, func(w, lo, hi int) {
				c := 0
				for _, v := range x[lo:hi] {
					if v != v {
						c++
					}
				}
				counts[w] = c
			})
			for _, c := range counts {
				nans += c
			}
		}
		return []any{}, nans, nil
	}
	want := slices.Clone(ranks)
	slices.Sort(want)
	want = slices.Compact(want)
	byRank, nans, err := bracketStats(env, x, want)
	if err != nil {
		return nil, 0, err
	}
	if byRank == nil {
		if byRank, nans, err = copySelect(env, a, x, want); err != nil {
			return nil, 0, err
		}
		selectCopies.Add(1)
	}
	out := make([]any, len(ranks))
	for j, r := range ranks {
		out[j] = W(byRank[r])
	}
	return out, nans, nil
}

// selectCopies counts OrderStats calls answered by copySelect (tests:
// brackets must answer where they apply).
var selectCopies atomic.Uint64

// copySelect selects want (sorted, distinct) in a scratch copy of x.
func copySelect[T Number](env Env, a *pdarray.Array, x []T, want []int) (map[int]T, int, error) {
	buf, err := env.Alloc(a.DType(), len(x))
	if err != nil {
		return nil, 0, err
	}
	defer env.free(buf)
	s := pdarray.View[T](buf)
	m := len(x) // elements before the NaNs
	if isFloatT[T]() {
		m = 0
		k := len(x)
		for _, v := range x {
			if v == v {
				s[m] = v
				m++
			} else {
				k--
				s[k] = v
			}
		}
	} else {
		copy(s, x)
	}
	i := 0
	for i < len(want) && want[i] < m {
		i++
	}
	selectRanks(s[:m], want[:i], 2*bits.Len(uint(m)))
	byRank := make(map[int]T, len(want))
	for _, r := range want {
		if r >= m {
			byRank[r] = T(quietNaN) // (numpy's max and quantiles answer this NaN, not the array's own)
		} else {
			byRank[r] = s[r]
		}
	}
	return byRank, len(x) - m, nil
}

// Brackets: a sample of about n^(2/3) elements (at most 2^15), sorted,
// gives for each run of nearby ranks two values that hold it between them
// with near certainty (4·sqrt(sample) places either side: 8 standard
// deviations of a sample quantile's place or more). One pass over the
// array per run, on every worker, counts the elements below the bracket
// and keeps those inside it (4-12% of them), among which the ranks are
// selected: no copy of the array, and no branch on the common comparisons.
// Arrays under bracketMin elements, more than bracketRuns runs, a bracket
// that missed or overfilled (many equal values), or scratch beyond
// --max-memory take copySelect.
const (
	bracketMin  = 1 << 17
	bracketRuns = 4
)

// bracketStats returns want's elements (sorted, distinct ranks), or nil
// when brackets do not apply (copySelect then answers).
func bracketStats[T Number](env Env, x []T, want []int) (byRank map[int]T, nans int, err error) {
	n := len(x)
	if n < bracketMin || len(want) == 0 {
		return nil, 0, nil
	}
	size := min(int(math.Cbrt(float64(n))*math.Cbrt(float64(n))), 1<<15)
	margin := 4 * int(math.Sqrt(float64(size)))
	// Runs: ranks closer than the bracket's own width share a pass.
	span := int(int64(n) * int64(margin) / int64(size))
	var runs [][]int
	for i, r := range want {
		if i == 0 || r-want[i-1] > span {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], r)
	}
	if len(runs) > bracketRuns {
		return nil, 0, nil
	}
	// The sample, in sorted order with NaN last (a fixed seed: the same
	// array always takes the same path).
	rng := rand.New(rand.NewPCG(uint64(n), 0x5e1ec7))
	smp := make([]T, size)
	for i := range smp {
		smp[i] = x[rng.IntN(n)]
	}
	nn := 0 // non-NaN sample values, moved first
	for i, v := range smp {
		if v == v {
			smp[nn], smp[i] = v, smp[nn]
			nn++
		}
	}
	slices.Sort(smp[:nn])
	lowest, highest := bounds[T]()
	// Each worker keeps at most a quarter of its share: about n/4 in all,
	// whatever the worker count (a bracket holds 8/sqrt(sample) of the
	// elements: 12% at 2^17, 4.4% from 2^22 up).
	nw := numWorkers(env.workers(), n)
	capacity := max((n+nw-1)/nw/4, 4096)
	scratch, err := env.Alloc(pdarray.DTypeOf[T](), capacity*nw)
	if err != nil {
		return nil, 0, nil // (copySelect tries, and says what did not fit)
	}
	defer env.free(scratch)
	room := pdarray.View[T](scratch)
	byRank = make(map[int]T, len(want))
	for _, run := range runs {
		lo, hi := lowest, highest
		if k := int(int64(run[0])*int64(size)/int64(n)) - margin; nn == 0 {
			lo = highest // (likely all NaN: only infinities gathered)
		} else if k >= 0 {
			lo = smp[min(k, nn-1)] // (past the sample's last number: likely among the NaNs)
		}
		if k := int(int64(run[len(run)-1])*int64(size)/int64(n)) + margin; k < nn {
			hi = smp[k]
		}
		below, inside, nan, ok := bracketPass(env, x, lo, hi, room, capacity)
		if !ok {
			return nil, 0, nil
		}
		nans = nan
		m := n - nans
		var sel []int
		for _, r := range run {
			switch {
			case r >= m:
				byRank[r] = T(quietNaN)
			case r < below || r >= below+len(inside):
				return nil, 0, nil // (the sample misled: rare)
			default:
				sel = append(sel, r-below)
			}
		}
		selectRanks(inside, sel, 2*bits.Len(uint(len(inside))))
		for _, r := range sel {
			byRank[r+below] = inside[r]
		}
	}
	return byRank, nans, nil
}

// bracketPass counts x's elements below lo and NaNs, and gathers those in
// [lo, hi] into room (each worker capacity places of it, kept in worker
// order); ok is false when a worker's share overflowed its places.
func bracketPass[T Number](env Env, x []T, lo, hi T, room []T, capacity int) (below int, inside []T, nans int, ok bool) {
	nw := numWorkers(env.workers(), len(x))
	type part struct {
		below, nans, got int
		over             bool
	}
	parts := make([]part, nw)
	env.parallel(len(x), 1, func(w, a, b int) {
		p := &parts[w]
		mine := room[w*capacity : (w+1)*capacity]
		got, below, numbers := 0, 0, 0
		// The counts are conditional moves, not branches (half the
		// elements lie below a median: a branch on it mispredicts half
		// the time); only the rare element inside the bracket branches.
		for _, v := range x[a:b] {
			lt, le, num := 0, 0, 0
			if v < lo {
				lt = 1
			}
			if v <= hi {
				le = 1
			}
			if v == v {
				num = 1
			}
			below += lt
			numbers += num
			if le > lt {
				if got == len(mine) {
					p.over = true
					return
				}
				mine[got] = v
				got++
			}
		}
		p.below, p.got, p.nans = below, got, (b-a)-numbers
	})
	for w := range parts {
		p := &parts[w]
		if p.over {
			return 0, nil, 0, false
		}
		below += p.below
		nans += p.nans
		// Gathered into one run at the front of room (worker 0's is there).
		copy(room[len(inside):], room[w*capacity:w*capacity+p.got])
		inside = room[:len(inside)+p.got]
	}
	return below, inside, nans, true
}

// bounds are T's lowest and highest values (the infinities for floats): a
// bracket side with no sample value beyond it.
func bounds[T Number]() (T, T) {
	if isFloatT[T]() {
		return T(math.Inf(-1)), T(math.Inf(1))
	}
	var z T
	b := 8 * unsafe.Sizeof(z)
	if z-1 < 0 { // signed (the shifts wrap as intended for 64 bits)
		one := int64(1)
		return T(-one << (b - 1)), T(one<<(b-1) - 1)
	}
	one := uint64(1)
	return 0, T(one<<b - 1)
}

// selectRanks reorders s so that s[r] holds the element of rank r for each
// r in ranks (sorted, distinct, below len(s)), as a sort would: quickselect
// with a three-way partition (runs of equal keys, common in small ints, end
// in one step), recursing only into the parts that hold a rank. Past depth
// levels (a pivot sequence that keeps splitting badly) it sorts the part,
// so the worst case is O(n log n). s holds no NaN.
func selectRanks[T Number](s []T, ranks []int, depth int) {
	for len(ranks) > 0 {
		if len(s) <= 16 || depth == 0 {
			slices.Sort(s)
			return
		}
		depth--
		lt, gt := partition3(s, medianOf3(s))
		// s[:lt] < pivot, s[lt:gt] == pivot, s[gt:] > pivot: ranks in
		// [lt, gt) are done.
		i := 0
		for i < len(ranks) && ranks[i] < lt {
			i++
		}
		j := i
		for j < len(ranks) && ranks[j] < gt {
			j++
		}
		left, right := ranks[:i], ranks[j:]
		if len(left) > 0 && len(right) > 0 {
			// Both sides: recurse into the left, go on with the right.
			selectRanks(s[:lt], left, depth)
		} else if len(left) > 0 {
			s, ranks = s[:lt], left
			continue
		}
		shifted := make([]int, len(right))
		for k, r := range right {
			shifted[k] = r - gt
		}
		s, ranks = s[gt:], shifted
	}
}

// medianOf3 is the median of s's first, middle and last elements (ninther
// of nine spread ones for large s): a pivot that sorted or reversed input
// splits evenly.
func medianOf3[T Number](s []T) T {
	n := len(s)
	med := func(a, b, c T) T {
		if a > b {
			a, b = b, a
		}
		if b > c {
			b = c
		}
		if a > b {
			return a
		}
		return b
	}
	if n < 1024 {
		return med(s[0], s[n/2], s[n-1])
	}
	e := n / 8
	return med(med(s[0], s[e], s[2*e]), med(s[3*e], s[4*e], s[5*e]), med(s[6*e], s[7*e], s[n-1]))
}

// partition3 reorders s into elements below p, equal to p and above p
// (Dijkstra's three-way partition) and returns the bounds of the middle.
func partition3[T Number](s []T, p T) (lt, gt int) {
	lt, i, gt := 0, 0, len(s)
	for i < gt {
		v := s[i]
		switch {
		case v < p:
			s[i], s[lt] = s[lt], v
			lt++
			i++
		case v > p:
			gt--
			s[i], s[gt] = s[gt], v
		default:
			i++
		}
	}
	return lt, gt
}

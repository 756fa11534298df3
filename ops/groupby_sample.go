package ops

import (
	"math"
	"math/bits"
	"slices"

	"github.com/arktos-dev/arktos/pdarray"
)

// GroupSampleRows returns counts[g] rows of every group g drawn uniformly
// without replacement (counts: int64, one per group, each at most the
// group's rows), in row order, or with grouped group by group. It is
// Knuth's selection sampling (Algorithm S) in one pass over the rows: a
// row of a group with left rows not yet seen, need of which are still to
// be drawn, is taken with probability need/left; every subset of
// counts[g] rows of the group is equally likely. Grouped, each group's
// rows are then shuffled (the order drawn, as Arkouda's permute_samples).
// Row i's draw depends on seed and i alone, so the sample is the same at
// any worker count; the pass is one worker's (a group's draws depend on
// its earlier rows). GroupBy.sample took 1.2 s for 10^7 rows by sorting
// the rows by group and a random key on the server (bench/groupby run 83).
func GroupSampleRows(env Env, ids *pdarray.Array, ngroups int, counts *pdarray.Array, seed uint64, grouped bool) (*pdarray.Array, error) {
	if err := checkSampleArgs(ids, ngroups, counts); err != nil {
		return nil, err
	}
	gid := pdarray.View[int32](ids)
	// Each group's state in one slot: need, the rows still to draw; left,
	// its rows not yet seen; at, where its next drawn row goes (grouped).
	type sampleSlot struct{ need, left, at int64 }
	st, free, err := slotsOf[sampleSlot](env, ngroups)
	if err != nil {
		return nil, err
	}
	defer free()
	total, err := sampleSlots(env, gid, pdarray.View[int64](counts), func(g int, need, left, at int64) {
		st[g] = sampleSlot{need: need, left: left, at: at}
	})
	if err != nil {
		return nil, err
	}
	out, err := env.Alloc(dI64, int(total))
	if err != nil {
		return nil, err
	}
	o := pdarray.View[int64](out)
	k := 0
	for i, g := range gid {
		if g < 0 {
			continue
		}
		s := &st[g]
		if s.need > 0 {
			// a draw uniform in [0, left): the high word of a 64-bit random
			// number times left
			if r, _ := bits.Mul64(splitmix(seed, uint64(i)), uint64(s.left)); r < uint64(s.need) {
				if grouped {
					o[s.at] = int64(i)
					s.at++
				} else {
					o[k] = int64(i)
					k++
				}
				s.need--
			}
		}
		s.left--
	}
	if grouped {
		// Each group's rows in the order drawn, as Arkouda's
		// permute_samples gives them: a Fisher-Yates shuffle of each
		// group's stretch, its draws also the seed's and the place's.
		for g, c := range pdarray.View[int64](counts) {
			b := st[g].at - c
			for j := c - 1; j > 0; j-- {
				k, _ := bits.Mul64(splitmix(^seed, uint64(b+j)), uint64(j+1))
				o[b+j], o[b+int64(k)] = o[b+int64(k)], o[b+j]
			}
		}
	}
	return out, nil
}

// sampleSlots counts the rows of each group of gid, checks each group's
// count of samples against them, and gives set each group's need, left
// (its rows) and at (where its rows go, grouped); it returns the samples
// in all. The counts' scratch goes back before the caller allocates the
// answer.
func sampleSlots(env Env, gid []int32, counts []int64, set func(g int, need, left, at int64)) (int64, error) {
	sizes, free, err := slotsOf[int64](env, len(counts))
	if err != nil {
		return 0, err
	}
	defer free()
	if err := groupCount(env, gid, len(counts), []int64(nil), sizes); err != nil {
		return 0, err
	}
	return placeSamples(counts, sizes, "rows", func(g int, at int64) { set(g, counts[g], sizes[g], at) })
}

// checkSampleArgs checks a sample's group ids (int32) and counts (int64,
// one per group).
func checkSampleArgs(ids *pdarray.Array, ngroups int, counts *pdarray.Array) error {
	if ids.DType() != pdarray.Int32 {
		return errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	if counts.DType() != dI64 || counts.Len() != ngroups {
		return errorf(ErrValue, "sample counts must be int64, one per group (%d), got %d %v", ngroups, counts.Len(), counts.DType())
	}
	return nil
}

// placeSamples refuses a count of samples below 0 or above what its group
// has (avail: its rows, or its rows of positive weight), then gives set
// where each group's samples go in the answer (group by group); it
// returns the samples in all.
func placeSamples(counts, avail []int64, what string, set func(g int, at int64)) (int64, error) {
	for g, c := range counts {
		if c < 0 || c > avail[g] {
			return 0, errorf(ErrValue, "group %d has %d %s; %d samples of it without replacement cannot be drawn (0 to %d can)", g, avail[g], what, c, avail[g])
		}
	}
	total := int64(0)
	for g, c := range counts {
		set(g, total)
		total += c
	}
	return total, nil
}

// GroupSampleWeighted is GroupSampleRows with each row drawn with
// probability in proportion to its weight (float64, one per row, finite
// and not negative; a row of weight 0 is never drawn, so counts[g] is at
// most the group's rows of positive weight): Efraimidis and Spirakis'
// A-Res, each row keyed by -log(u)/w for a uniform u in (0, 1] (its draw
// depends on seed and the row alone, so any worker count gives the same
// sample), each group keeping its counts[g] smallest keys in a max-heap,
// in one pass (one worker's). Rows come in row order, or grouped: group
// by group, each group's in the order drawn (smallest key first). The
// same sample took a sort of all the rows by group and key (coargsort),
// 1.0 s for 10^7 rows in 10^5 groups.
func GroupSampleWeighted(env Env, ids *pdarray.Array, ngroups int, counts, weights *pdarray.Array, seed uint64, grouped bool) (*pdarray.Array, error) {
	if err := checkSampleArgs(ids, ngroups, counts); err != nil {
		return nil, err
	}
	if weights.DType() != dF64 || weights.Len() != ids.Len() {
		return nil, errorf(ErrValue, "sample weights must be float64, one per row (%d), got %d %v", ids.Len(), weights.Len(), weights.DType())
	}
	gid, ws, cnt := pdarray.View[int32](ids), pdarray.View[float64](weights), pdarray.View[int64](counts)
	ws = ws[:len(gid)]
	if len(gid) > math.MaxInt32 { // (the heaps' places are int32)
		return nil, errorf(ErrValue, "a weighted sample takes at most 2^31-1 rows, as a group-by does; got %d", len(gid))
	}
	// Each group's heap in one slot (a row touches one cache line): its
	// stretch [at, at+c) of keys and rows (the answer's own places), fill
	// of it in use, and top, its largest key once full (+Inf before; -Inf
	// for a group asked for no rows).
	type heapSlot struct {
		top         float64
		at, c, fill int32
	}
	st, freeSt, err := slotsOf[heapSlot](env, ngroups)
	if err != nil {
		return nil, err
	}
	defer freeSt()
	total, err := positiveRows(env, gid, ws, cnt, func(g int, at int64) {
		top := math.Inf(1)
		if cnt[g] == 0 {
			top = math.Inf(-1) // full from the start: no row beats it
		}
		st[g] = heapSlot{top: top, at: int32(at), c: int32(cnt[g])}
	})
	if err != nil {
		return nil, err
	}
	keys, freeKeys, err := scratchOf[float64](env, int(total))
	if err != nil {
		return nil, err
	}
	defer freeKeys()
	out, err := env.Alloc(dI64, int(total))
	if err != nil {
		return nil, err
	}
	rows := pdarray.View[int64](out)
	for i, g := range gid {
		w := ws[i]
		if g < 0 || !(w > 0) {
			continue
		}
		s := &st[g]
		u := (float64(splitmix(seed, uint64(i))>>11) + 1) * 0x1p-53 // (0, 1]
		// -log(u) >= 1-u: a row whose key cannot beat a full heap's top
		// is passed over without the logarithm (most rows, once full).
		if 1-u >= s.top*w {
			continue
		}
		key := -math.Log(u) / w
		hk, hr := keys[s.at:s.at+s.c], rows[s.at:s.at+s.c]
		switch {
		case s.fill < s.c:
			heapPush(hk[:s.fill+1], hr[:s.fill+1], key, int64(i))
			if s.fill++; s.fill == s.c {
				s.top = hk[0]
			}
		case key < s.top:
			hk[0], hr[0] = key, int64(i)
			heapDown(hk, hr, 0)
			s.top = hk[0]
		}
	}
	if !grouped {
		slices.Sort(rows)
		return out, nil
	}
	for g := range cnt {
		s := st[g]
		sortByKey(keys[s.at:s.at+s.c], rows[s.at:s.at+s.c])
	}
	return out, nil
}

// positiveRows checks the weights (finite, not negative: the first bad
// row is named), counts each group's rows of positive weight, checks the
// counts of samples against them, and gives set where each group's
// samples go; it returns the samples in all.
func positiveRows(env Env, gid []int32, ws []float64, counts []int64, set func(g int, at int64)) (int64, error) {
	pos, free, err := slotsOf[int64](env, len(counts))
	if err != nil {
		return 0, err
	}
	defer free()
	for i, g := range gid {
		w := ws[i]
		if !(w >= 0) || w > math.MaxFloat64 {
			return 0, errorf(ErrValue, "sample weights must be finite and not negative; row %d's is %v", i, w)
		}
		if g >= 0 && w > 0 {
			pos[g]++
		}
	}
	return placeSamples(counts, pos, "rows of positive weight", set)
}

// heapPush adds key (row r) as the last of the max-heap hk (rows hr
// beside it), whose other elements are a heap, and restores the order.
func heapPush(hk []float64, hr []int64, key float64, r int64) {
	j := len(hk) - 1
	for j > 0 {
		p := (j - 1) / 2
		if hk[p] >= key {
			break
		}
		hk[j], hr[j] = hk[p], hr[p]
		j = p
	}
	hk[j], hr[j] = key, r
}

// heapDown restores the max-heap hk (rows hr beside it) below j.
func heapDown(hk []float64, hr []int64, j int) {
	n := len(hk)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		if r := l + 1; r < n && hk[r] > hk[l] {
			l = r
		}
		if hk[j] >= hk[l] {
			return
		}
		hk[j], hk[l] = hk[l], hk[j]
		hr[j], hr[l] = hr[l], hr[j]
		j = l
	}
}

// sortByKey sorts a group's drawn rows by their keys, smallest first (a
// heap sort in place: the max-heap's largest moves to the end).
func sortByKey(hk []float64, hr []int64) {
	for n := len(hk) - 1; n > 0; n-- {
		hk[0], hk[n] = hk[n], hk[0]
		hr[0], hr[n] = hr[n], hr[0]
		heapDown(hk[:n], hr[:n], 0)
	}
}

// splitmix is the i-th output of the SplitMix64 generator seeded with
// seed: a counter-based draw, so any row's is had without the others'.
func splitmix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// GroupSampleReplace returns counts[g] rows of every group g drawn with
// replacement (counts: int64, one per group, not negative; a group asked
// for rows must have one): uniformly, or with weights (float64, one per
// row, finite and not negative; nil: uniform) each row in proportion to
// its weight, a group asked for rows needing one of positive weight. Rows
// come in row order (a row drawn twice, twice), or with grouped group by
// group, each group's in the order drawn (Arkouda's permute_samples).
//
// Draw p of the answer (group g's) is the seed's p-th number alone: a
// place k in the group (its k-th row), or a target t in [0, the group's
// total weight) (the row where the group's running sum of weights first
// passes t). Each group's draws are sorted by place or target; then one
// pass over the rows, keeping each group's count or running sum and its
// next draw, writes each drawn row as the pass meets it: no permutation
// of the rows is made or gathered through. Both passes split the rows
// into blocks fixed by the row and group counts (replBlocks), the workers
// taking whole blocks, so the sums' order of additions, and the sample,
// are the same at any worker count. Composed of server operations (a sum, the segments,
// gathers, a cumsum and a searchsorted), the weighted draw took 0.72 s for
// 5·10^5 draws of 10^7 rows (bench/groupby run 83).
func GroupSampleReplace(env Env, ids *pdarray.Array, ngroups int, counts, weights *pdarray.Array, seed uint64, grouped bool) (*pdarray.Array, error) {
	if err := checkSampleArgs(ids, ngroups, counts); err != nil {
		return nil, err
	}
	gid, cnt := pdarray.View[int32](ids), pdarray.View[int64](counts)
	var ws []float64
	if weights != nil {
		if weights.DType() != dF64 || weights.Len() != ids.Len() {
			return nil, errorf(ErrValue, "sample weights must be float64, one per row (%d), got %d %v", ids.Len(), weights.Len(), weights.DType())
		}
		ws = pdarray.View[float64](weights)[:len(gid)]
		if i := badWeight(env, ws); i >= 0 {
			return nil, errorf(ErrValue, "sample weights must be finite and not negative; row %d's is %v", i, ws[i])
		}
	}
	// The rows are cut into blocks by their count and the groups' alone
	// (replBlocks), never by the workers': each block's sum of weights (or
	// rows) per group is added in row order, then the blocks' sums block
	// after block, so every group's running sum, and so the sample, is
	// the same at any worker count.
	n := len(gid)
	nb := replBlocks(n, ngroups)
	pre, freePre, err := slotsOf[float64](env, nb*ngroups)
	if err != nil {
		return nil, err
	}
	defer freePre()
	forBlocks(env, n, nb, func(b, lo, hi int) {
		p := pre[b*ngroups : (b+1)*ngroups]
		for i, g := range gid[lo:hi] {
			if g >= 0 {
				if ws != nil {
					p[g] += ws[lo+i]
				} else {
					p[g]++
				}
			}
		}
	})
	// pre[b][g] becomes the sum of the blocks before b; size[g] of them all.
	size, freeSize, err := slotsOf[float64](env, ngroups)
	if err != nil {
		return nil, err
	}
	defer freeSize()
	for b := range nb {
		p := pre[b*ngroups : (b+1)*ngroups]
		for g, x := range p {
			p[g] = size[g]
			size[g] += x
		}
	}
	// where each group's draws start, and end (at[g+1])
	at, freeAt, err := slotsOf[int64](env, ngroups+1)
	if err != nil {
		return nil, err
	}
	defer freeAt()
	total := int64(0)
	for g, c := range cnt {
		switch {
		case c < 0:
			return nil, errorf(ErrValue, "group %d: %d samples cannot be drawn (a count is 0 or more)", g, c)
		case c > 0 && !(size[g] > 0) && ws == nil:
			return nil, errorf(ErrValue, "group %d has no rows; %d samples of it cannot be drawn", g, c)
		case c > 0 && !(size[g] > 0):
			return nil, errorf(ErrValue, "group %d has 0 rows of positive weight; %d samples of it cannot be drawn", g, c)
		case c > 0 && size[g] > math.MaxFloat64:
			return nil, errorf(ErrValue, "group %d's weights add up past the largest float64; scale the weights down", g)
		}
		if total += c; total < 0 {
			return nil, errorf(ErrValue, "sample counts add up past 2^63-1")
		}
		at[g+1] = total
	}
	// Each draw's target (a place, or a weight; float64 holds places below
	// 2^53 exactly) and its number, sorted by target within its group.
	tg, freeTg, err := scratchOf[float64](env, int(total))
	if err != nil {
		return nil, err
	}
	defer freeTg()
	dn, freeDn, err := scratchOf[int64](env, int(total))
	if err != nil {
		return nil, err
	}
	defer freeDn()
	groupStretches(env, at[:ngroups], int(total), func(glo, ghi int) {
		for g := glo; g < ghi; g++ {
			lo, hi := at[g], at[g+1]
			for p := lo; p < hi; p++ {
				r := splitmix(seed, uint64(p))
				if ws == nil {
					k, _ := bits.Mul64(r, uint64(size[g]))
					tg[p] = float64(k)
				} else {
					// in [0, total): a product rounded up to the total
					// becomes the largest float64 below it
					t := float64(r>>11) * 0x1p-53 * size[g]
					tg[p] = min(t, math.Nextafter(size[g], 0))
				}
				dn[p] = p
			}
			sortTargets(tg[lo:hi], dn[lo:hi])
		}
	})
	out, err := env.Alloc(dI64, int(total))
	if err != nil {
		return nil, err
	}
	o := pdarray.View[int64](out)
	// The pass: each worker takes whole blocks in order; a group's state
	// in a block starts at the sum of the blocks before, its next draw the
	// first whose target that sum does not pass (the earlier blocks took
	// the others), and in row order the block's rows go after all the
	// draws the earlier blocks took.
	type replSlot struct {
		pre, seen, nextT float64
		next, end        int64
	}
	nw := min(numWorkers(env.workers(), n), nb)
	st, freeSt, err := slotsOf[replSlot](env, nw*ngroups)
	if err != nil {
		env.free(out)
		return nil, err
	}
	defer freeSt()
	parallelN(nw, func(w int) {
		ss := st[w*ngroups : (w+1)*ngroups]
		for b := w * nb / nw; b < (w+1)*nb/nw; b++ {
			p := pre[b*ngroups : (b+1)*ngroups]
			k := int64(0) // draws the earlier blocks took
			for g := range ss {
				lo, hi := at[g], at[g+1]
				j, _ := slices.BinarySearch(tg[lo:hi], p[g])
				nx := lo + int64(j)
				ss[g] = replSlot{pre: p[g], next: nx, end: hi, nextT: math.Inf(1)}
				if nx < hi {
					ss[g].nextT = tg[nx]
				}
				k += nx - lo
			}
			lo, hi := blockBounds(n, nb, b)
			for i := lo; i < hi; i++ {
				g := gid[i]
				if g < 0 {
					continue
				}
				s := &ss[g]
				if ws != nil {
					s.seen += ws[i]
				} else {
					s.seen++
				}
				// a draw of place j takes the row after j rows; of target
				// t, the row whose running sum first passes t (a row of
				// weight > 0)
				for v := s.pre + s.seen; s.nextT < v; {
					if grouped {
						o[dn[s.next]] = int64(i)
					} else {
						o[k] = int64(i)
						k++
					}
					if s.next++; s.next < s.end {
						s.nextT = tg[s.next]
					} else {
						s.nextT = math.Inf(1)
					}
				}
			}
		}
	})
	return out, nil
}

// replBlocks is how many blocks GroupSampleReplace cuts n rows of ngroups
// groups into: a function of those alone, never of the worker count (the
// running sums' order of additions follows the blocks). Each block costs
// a pass over every group's state (its sum, its first draw), so a block
// is at least replBlockRows rows and 4 rows a group, and there are at
// most 16. (10^7 rows in 10^5 groups, in process: one block 120 ms at
// one or two workers; 9 blocks 137 ms at one, 74 at two.)
func replBlocks(n, ngroups int) int {
	return max(1, min(16, n/replBlockRows, n/(4*max(ngroups, 1))))
}

// replBlockRows is the smallest block of replBlocks (tests lower it).
var replBlockRows = 1 << 20

// blockBounds is block b's rows among nb blocks of n.
func blockBounds(n, nb, b int) (int, int) {
	return b * n / nb, (b + 1) * n / nb
}

// forBlocks runs f over the nb blocks of n rows, the workers taking whole
// blocks.
func forBlocks(env Env, n, nb int, f func(b, lo, hi int)) {
	nw := min(numWorkers(env.workers(), n), nb)
	parallelN(nw, func(w int) {
		for b := w * nb / nw; b < (w+1)*nb/nw; b++ {
			lo, hi := blockBounds(n, nb, b)
			f(b, lo, hi)
		}
	})
}

// sortTargets sorts a group's draws by target, smallest first, their
// numbers beside them: an insertion sort for a few, else a heap sort.
func sortTargets(k []float64, d []int64) {
	if len(k) > 32 {
		for j := len(k)/2 - 1; j >= 0; j-- {
			heapDown(k, d, j)
		}
		sortByKey(k, d)
		return
	}
	insertionSortPairs(k, d)
}

// groupStretches runs f over stretches of whole groups [glo, ghi), one a
// worker, balanced by their places (byGroups balances group ids): starts[g]
// is where group g's stretch begins in [0, n), ascending.
func groupStretches(env Env, starts []int64, n int, f func(glo, ghi int)) {
	ng := len(starts)
	nw := numWorkers(env.workers(), n)
	if nw <= 1 || ng < 2 {
		f(0, ng)
		return
	}
	cut := make([]int, nw+1)
	for w := 1; w < nw; w++ {
		cut[w], _ = slices.BinarySearch(starts, int64(w*n/nw))
	}
	cut[nw] = ng
	parallelN(nw, func(w int) {
		if lo, hi := cut[w], cut[w+1]; lo < hi {
			f(lo, hi)
		}
	})
}

// badWeight returns the first row whose weight is negative, NaN or
// infinite, or -1.
func badWeight(env Env, ws []float64) int {
	nw := numWorkers(env.workers(), len(ws))
	first := make([]int, nw)
	env.parallel(len(ws), chunk, func(w, lo, hi int) {
		first[w] = -1
		for i, x := range ws[lo:hi] {
			if !(x >= 0) || x > math.MaxFloat64 {
				first[w] = lo + i
				return
			}
		}
	})
	for _, i := range first {
		if i >= 0 {
			return i
		}
	}
	return -1
}

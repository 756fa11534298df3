package ops

// Each group's distinct values (Arkouda's GroupBy.unique, answered as a
// SegArray: segment starts and the values they index).

import (
	"math/bits"
	"slices"

	"github.com/arktos-dev/arktos/pdarray"
)

// The paths GroupUnique takes (GroupUniqueResult.Path): a bitmap of the
// packed (group, values) keys, a sort of them, or a grouping by (group,
// values) where they do not pack in 64 bits.
const (
	UniqueBitmap  = "bitmap"
	UniqueSort    = "sort"
	UniqueGrouped = "grouped"
)

// GroupUniqueResult is what GroupUnique returns; its arrays come from env
// and belong to the caller.
type GroupUniqueResult struct {
	Segments *pdarray.Array   // int64, one per group: where its values start
	Values   []*pdarray.Array // one per values array, in its dtype
	Path     string           // UniqueBitmap, UniqueSort or UniqueGrouped
}

// GroupUnique returns the distinct values of each group of ids (ngroups
// groups; ids in [-1, ngroups), as CheckGroupIDs checks them), sorted
// within a group, as one flat array per values array (vals[j]'s dtype),
// and where each group's values start in them (segs, int64, ngroups; a
// group with no values has an empty segment). With
// several values arrays a distinct value is a distinct tuple of them,
// element i of every output array making tuple i. NaN values are skipped
// (a tuple with a NaN in it), as the nunique aggregation skips them, so a
// segment's length is the group's nunique; dropped rows (id -1) are not in
// any group.
//
// The group id and the values pack into one 64-bit key, as a grouping's
// keys do, and only the distinct keys are wanted (no ids): a bitmap of the
// keys (one per worker, OR-ed, read in order) when the bitmaps take at most
// the 16 bytes a row the sort's scratch would, else a radix sort of the
// keys, deduplicated. Keys that do not pack are grouped by (id, values...)
// with the grouping's strategies.
func GroupUnique(env Env, ids *pdarray.Array, ngroups int, vals []*pdarray.Array) (GroupUniqueResult, error) {
	if ids.DType() != pdarray.Int32 {
		return GroupUniqueResult{}, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	if len(vals) == 0 {
		return GroupUniqueResult{}, errorf(ErrValue, "unique needs at least one values array")
	}
	for _, v := range vals {
		if v.Len() != ids.Len() {
			return GroupUniqueResult{}, errorf(ErrValue, "values have %d elements but the group-by has %d rows", v.Len(), ids.Len())
		}
	}
	vs, _, _, _, err := keySpecs(env, vals, true, "auto", nil)
	if err != nil {
		return GroupUniqueResult{}, err
	}
	// The ids as the first key: sort key 2^63+id, so that -1 drops the row
	// (ids the caller checked: no scan for their range).
	specs := append([]keySpec{{a: ids, ids: true, min: 1 << 63, span: uint64(max(ngroups, 1))}}, vs...)
	total, packable := setStrides(specs)
	if !packable {
		segs, out, err := groupUniqueGrouped(env, ids, ngroups, vals)
		return GroupUniqueResult{segs, out, UniqueGrouped}, err
	}
	n := ids.Len()
	var uniq []uint64
	var freeUniq func()
	path := UniqueSort
	if total <= max(uint64(128*n/numWorkers(env.workers(), n)), 1<<22) {
		path = UniqueBitmap
		uniq, freeUniq, err = uniqueBitmap(env, specs, total, n)
	} else {
		uniq, freeUniq, err = uniqueSorted(env, specs, total, n)
	}
	if err != nil {
		return GroupUniqueResult{}, err
	}
	defer freeUniq()
	// Unpack: the group of each distinct key (its slot in the ids key is
	// the id itself) and the values into their arrays.
	grp, freeGrp, err := scratchOf[uint64](env, len(uniq))
	if err != nil {
		return GroupUniqueResult{}, err
	}
	defer freeGrp()
	outs := make([]*pdarray.Array, len(specs))
	rels := make([][]uint64, len(specs))
	rels[0] = grp
	var segs *pdarray.Array
	fail := func(err error) (GroupUniqueResult, error) {
		env.free(outs...)
		env.free(segs)
		return GroupUniqueResult{}, err
	}
	for j, v := range vals {
		if outs[j+1], err = env.Alloc(v.DType(), len(uniq)); err != nil {
			return fail(err)
		}
	}
	if segs, err = env.Alloc(dI64, ngroups); err != nil {
		return fail(err)
	}
	unpackAll(env, specs, uniq, outs, rels)
	placeSegments(grp, pdarray.View[int64](segs))
	return GroupUniqueResult{segs, outs[1:], path}, nil
}

// placeSegments writes where each group g starts in grp, the ascending
// group of every distinct value (a group absent from it: an empty segment).
func placeSegments[T int32 | uint64](grp []T, sg []int64) {
	at := 0
	for g := range sg {
		for at < len(grp) && int64(grp[at]) < int64(g) {
			at++
		}
		sg[g] = int64(at)
	}
}

// uniqueSorted returns the distinct packed keys of the n rows of specs
// (kept rows only), ascending: packed, radix-sorted, deduplicated.
func uniqueSorted(env Env, specs []keySpec, total uint64, n int) ([]uint64, func(), error) {
	keys, freeKeys, err := scratchOf[uint64](env, n)
	if err != nil {
		return nil, nil, err
	}
	defer freeKeys()
	tmp, freeTmp, err := scratchOf[uint64](env, n)
	if err != nil {
		return nil, nil, err
	}
	defer freeTmp()
	packSortable(env, specs, total, keys, nil)
	sorted := keys
	if n > 1 {
		base, nbits := keyRange(env, keys)
		sorted = sortKeysOnly(env, keys, tmp, base, nbits)
	}
	kept, _ := slices.BinarySearch(sorted, total)
	// Each worker writes its block's first key of every run at its offset.
	starts := runOffsets(env, sorted[:kept])
	uniq, freeUniq, err := scratchOf[uint64](env, starts[len(starts)-1])
	if err != nil {
		return nil, nil, err
	}
	env.parallel(kept, 1, func(w, lo, hi int) {
		at := starts[w]
		for i := lo; i < hi; i++ {
			if i == 0 || sorted[i] != sorted[i-1] {
				uniq[at] = sorted[i]
				at++
			}
		}
	})
	return uniq, freeUniq, nil
}

// uniqueBitmap is uniqueSorted for keys of a small range (total): each
// worker marks its rows' keys in a bitmap of its own, the bitmaps are OR-ed
// word range by word range, and the set bits, read in order, are the keys.
func uniqueBitmap(env Env, specs []keySpec, total uint64, n int) ([]uint64, func(), error) {
	words := int((total + 63) / 64)
	nw := numWorkers(env.workers(), n)
	maps, freeMaps, err := slotsOf[uint64](env, nw*words)
	if err != nil {
		return nil, nil, err
	}
	defer freeMaps()
	env.parallel(n, chunk, func(w, lo, hi int) {
		m := maps[w*words : (w+1)*words]
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			packChunk(specs, c, e, p, buf)
			for _, k := range p[:e-c] {
				if k != dropKey {
					m[k>>6] |= 1 << (k & 63)
				}
			}
		}
	})
	// OR into the first bitmap and count its bits, per block of words.
	mw := numWorkers(env.workers(), words)
	starts := make([]int, mw+1)
	env.parallel(words, 1, func(b, lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			x := maps[i]
			for w := 1; w < nw; w++ {
				x |= maps[w*words+i]
			}
			maps[i] = x
			c += bits.OnesCount64(x)
		}
		starts[b+1] = c
	})
	for b := 1; b <= mw; b++ {
		starts[b] += starts[b-1]
	}
	uniq, freeUniq, err := scratchOf[uint64](env, starts[mw])
	if err != nil {
		return nil, nil, err
	}
	env.parallel(words, 1, func(b, lo, hi int) {
		at := starts[b]
		for i := lo; i < hi; i++ {
			for x := maps[i]; x != 0; x &= x - 1 {
				uniq[at] = uint64(i)<<6 | uint64(bits.TrailingZeros64(x))
				at++
			}
		}
	})
	return uniq, freeUniq, nil
}

// groupUniqueGrouped is GroupUnique for keys that do not pack into 64 bits
// (wide or float values beside many groups): it groups by (id, values...)
// with the grouping's own strategies (whose unique keys come back sorted,
// id first), reads the ids column once to place the segments, and cuts off
// the dropped rows' tuples, which sort first.
func groupUniqueGrouped(env Env, ids *pdarray.Array, ngroups int, vals []*pdarray.Array) (segs *pdarray.Array, out []*pdarray.Array, err error) {
	g, err := GroupByWith(env, append([]*pdarray.Array{ids}, vals...), true, "auto", nil)
	if err != nil {
		return nil, nil, err
	}
	env.free(g.IDs)
	gk := pdarray.View[int32](g.Keys[0])
	defer env.free(g.Keys[0])
	if segs, err = env.Alloc(dI64, ngroups); err != nil {
		env.free(g.Keys[1:]...)
		return nil, nil, err
	}
	skip := 0
	for skip < len(gk) && gk[skip] < 0 {
		skip++
	}
	placeSegments(gk[skip:], pdarray.View[int64](segs))
	out = g.Keys[1:]
	if skip == 0 {
		return segs, out, nil
	}
	cut := make([]*pdarray.Array, len(out))
	for j, u := range out {
		if cut[j], err = env.Alloc(u.DType(), u.Len()-skip); err != nil {
			env.free(cut[:j]...)
			env.free(out...)
			env.free(segs)
			return nil, nil, err
		}
		w := u.DType().Size()
		copy(cut[j].Bytes(), u.Bytes()[skip*w:])
	}
	env.free(out...)
	return segs, cut, nil
}

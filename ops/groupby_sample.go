package ops

import (
	"math/bits"

	"github.com/arktos-dev/arktos/pdarray"
)

// GroupSampleRows returns counts[g] rows of every group g drawn uniformly
// without replacement (counts: int64, one per group, each at most the
// group's rows), in row order, or with grouped group by group (row order
// within a group). It is Knuth's selection sampling (Algorithm S) in one
// pass over the rows: a row of a group with left rows not yet seen, need
// of which are still to be drawn, is taken with probability need/left;
// every subset of counts[g] rows of the group is equally likely. Grouped,
// each group's rows are then shuffled (the order drawn, as Arkouda's
// permute_samples). Row i's draw depends on seed and i alone, so the
// sample is the same at any worker count; the pass is one worker's (a
// group's draws depend on its earlier rows). GroupBy.sample took 1.2 s for 10^7 rows by sorting the
// rows by group and a random key on the server (bench/groupby run 83).
func GroupSampleRows(env Env, ids *pdarray.Array, ngroups int, counts *pdarray.Array, seed uint64, grouped bool) (*pdarray.Array, error) {
	if ids.DType() != pdarray.Int32 {
		return nil, errorf(ErrType, "group ids must be int32, got %v", ids.DType())
	}
	if counts.DType() != dI64 || counts.Len() != ngroups {
		return nil, errorf(ErrValue, "sample counts must be int64, one per group (%d), got %d %v", ngroups, counts.Len(), counts.DType())
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
	total := int64(0)
	for g, c := range counts {
		if c < 0 || c > sizes[g] {
			return 0, errorf(ErrValue, "group %d has %d rows; %d samples of it without replacement cannot be drawn (0 to %d can)", g, sizes[g], c, sizes[g])
		}
		set(g, c, sizes[g], total)
		total += c
	}
	return total, nil
}

// splitmix is the i-th output of the SplitMix64 generator seeded with
// seed: a counter-based draw, so any row's is had without the others'.
func splitmix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

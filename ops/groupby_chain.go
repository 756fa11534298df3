package ops

// The chained group-by: several keys whose ranges multiply past 2^64-2
// (G1 q10 at 10^8 rows: six keys, 68 bits) are grouped in stages, each one a
// packed grouping (dense, hash or partitioned). The leading keys that pack
// together are grouped first; their group ids number the distinct leading
// keys in ascending order, so packing (id, next keys) keeps lexicographic
// order and the next stage groups that. A key too wide to pack beside the
// ids of the keys before it is first grouped on its own, and its ids (at
// most 2^31 of them) stand in for it. The last stage's ids are the answer;
// the unique keys are unpacked stage by stage, back to front.
//
// Memory: one int32 id per row per stage alive at a time (two at most, plus
// one for a key grouped on its own) and each stage's distinct packed keys,
// where the coargsort of the wide strategy needed an int64 permutation, a
// gathered copy of each key and an int64 first row per group (about 6 GB
// beside 7.2 GB of data at 10^8 rows).

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/arktos-dev/arktos/pdarray"
)

// chainLimit bounds the product of the spans packed in one stage; tests
// lower it to chain small keys.
var chainLimit uint64 = math.MaxUint64

// chainStages counts the stages run by chained groupings (tests check the
// path is taken and how many stages it took).
var chainStages atomic.Uint64

// chainStage is one packed grouping of a chain.
type chainStage struct {
	specs []keySpec
	from  []int          // per column: -1 for the caller's key key[c], else the stage whose ids the column is
	key   []int          // per column: the caller's key index (from[c] < 0)
	ids   *pdarray.Array // int32 ids of the rows, until the next stage has read them (nil after)
	uniq  []uint64       // sorted distinct packed keys
	free  func()         // frees uniq
}

func (st *chainStage) add(s keySpec, from, key int) {
	st.specs = append(st.specs, s)
	st.from = append(st.from, from)
	st.key = append(st.key, key)
}

// idsSpec packs the ids of st as a key: sort keys 2^63+id, -1 drops the row.
func (st *chainStage) idsSpec() keySpec {
	return keySpec{a: st.ids, ids: true, min: 1 << 63, span: uint64(len(st.uniq))}
}

// chainFits reports whether total·span packs (below chainLimit and 2^64-1).
func chainFits(total, span uint64) bool {
	hi, lo := bits.Mul64(total, span)
	return hi == 0 && lo < chainLimit && lo != math.MaxUint64
}

func groupChained(env Env, specs []keySpec, g *Grouping) error {
	n := g.IDs.Len()
	var stages []*chainStage
	defer func() {
		for _, st := range stages {
			if st.ids != nil && st.ids != g.IDs {
				env.free(st.ids)
			}
			if st.free != nil {
				st.free()
			}
		}
	}()
	// run groups st into out (g.IDs for the last stage) and frees the ids
	// it read.
	run := func(st *chainStage, out *pdarray.Array) (int, error) {
		total := uint64(1)
		for c := len(st.specs) - 1; c >= 0; c-- {
			st.specs[c].stride = total
			total *= st.specs[c].span
		}
		st.ids = out
		stages = append(stages, st)
		uniq, free, kept, _, err := groupPacked(env, st.specs, total, "auto", pdarray.View[int32](out))
		if err != nil {
			return 0, err
		}
		chainStages.Add(1)
		st.uniq, st.free = uniq, free
		for _, f := range st.from {
			if f >= 0 {
				env.free(stages[f].ids)
				stages[f].ids = nil
			}
		}
		return kept, nil
	}
	newIDs := func() (*pdarray.Array, error) { return env.Alloc(pdarray.Int32, n) }
	kept, pos, prev := 0, 0, -1
	for pos < len(specs) {
		st := &chainStage{}
		total := uint64(1)
		if prev >= 0 {
			s := stages[prev].idsSpec()
			st.add(s, prev, -1)
			total = s.span
		}
		for pos < len(specs) {
			s := specs[pos]
			if chainFits(total, s.span) {
				st.add(s, -1, pos)
				total *= s.span
				pos++
				continue
			}
			if len(st.specs) > 0 && (prev < 0 || len(st.specs) > 1) {
				break // group what packs, then go on from its ids
			}
			// The key does not pack beside the ids before it: its own ids
			// (at most 2^31, as are those before) stand in for it.
			ids, err := newIDs()
			if err != nil {
				return err
			}
			one := &chainStage{}
			one.add(s, -1, pos)
			if _, err := run(one, ids); err != nil {
				return err
			}
			is := one.idsSpec()
			st.add(is, len(stages)-1, -1)
			total *= max(is.span, 1)
			pos++
		}
		out := g.IDs
		if pos < len(specs) {
			var err error
			if out, err = newIDs(); err != nil {
				return err
			}
		}
		var err error
		if kept, err = run(st, out); err != nil {
			return err
		}
		prev = len(stages) - 1
		if len(st.uniq) == 0 && pos < len(specs) { // every row dropped
			gids := pdarray.View[int32](g.IDs)
			for i := range gids {
				gids[i] = -1
			}
			break
		}
	}
	last := stages[prev]
	g.NGroups, g.Kept = len(last.uniq), kept // no groups: the last stage kept no row
	g.Keys = make([]*pdarray.Array, len(specs))
	for k := range specs {
		a, err := env.Alloc(specs[k].a.DType(), g.NGroups)
		if err != nil {
			return err
		}
		g.Keys[k] = a
	}
	if g.NGroups == 0 {
		return nil
	}
	return chainDecode(env, stages, prev, last.uniq, g.Keys)
}

// chainDecode unpacks the keys of stage s from packed keys u (one per final
// group) into keys, following id columns back to the stages they came from.
func chainDecode(env Env, stages []*chainStage, s int, u []uint64, keys []*pdarray.Array) error {
	st := stages[s]
	outs := make([]*pdarray.Array, len(st.specs))
	rels := make([][]uint64, len(st.specs))
	frees := make([]func(), len(st.specs))
	defer func() {
		for _, f := range frees {
			if f != nil {
				f()
			}
		}
	}()
	for c := range st.specs {
		if st.from[c] < 0 {
			outs[c] = keys[st.key[c]]
			continue
		}
		v, free, err := scratchOf[uint64](env, len(u))
		if err != nil {
			return err
		}
		rels[c], frees[c] = v, free
	}
	unpackAll(env, st.specs, u, outs, rels)
	for c, v := range rels {
		if v == nil {
			continue
		}
		// The column's ids are ranks into the earlier stage's distinct keys.
		// A rank past them comes only from a key written past its range
		// while it was grouped (its carry reached the ids' digit): an
		// error, not an index out of range in a worker.
		src := stages[st.from[c]].uniq
		var bad atomic.Bool
		env.parallel(len(v), chunk, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				if v[i] >= uint64(len(src)) {
					bad.Store(true)
					continue
				}
				v[i] = src[v[i]]
			}
		})
		if bad.Load() {
			return errKeyWritten()
		}
		if err := chainDecode(env, stages, st.from[c], v, keys); err != nil {
			return err
		}
		frees[c]() // before the next column's stages: one level's scratch at a time
		frees[c] = nil
	}
	return nil
}

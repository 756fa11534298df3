package ops

// Radix-partitioned hash grouping, for many groups. One big hash table
// misses the caches and (worse, in a VM) the TLB on nearly every row: about
// 70 ns a row measured here with a 64 MiB table for 10^6 keys. So the rows'
// packed keys are first scattered into partP partitions (a stable counting
// sort: each partition keeps worker 0's rows, then worker 1's, in row
// order), each partition is grouped with a hash table (one per worker,
// emptied for its next partition) that stays in L2, the distinct keys are
// ranked, and a last pass reads each row's id back
// from its partition's stream in row order.
//
// Partitions are ranges of the packed keys (their top bits) when a sample
// of rows shows the ranges even: then each partition's distinct keys are
// sorted on their own, in cache, and the partitions' ranks follow one
// another. Otherwise (skewed or clustered keys) partitions are by the top
// bits of a hash, and the distinct keys of all partitions are radix-sorted
// together to rank them.

import (
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"
)

const (
	// partBits: 128 partitions. With 64, a partition of 10^7 rows from 10^6
	// keys held 15,600 keys, whose table (2^16 slots, a quarter full) is
	// 1 MiB, twice this machine's L2; with 128 it is 512 KiB, and that pays
	// more than the scatter's extra write streams cost. In process, base
	// and new alternating (two runs each, ms): fused 10^6 keys 238-336 ->
	// 181-280 on one worker, 130-176 -> 101-152 on two; grouping 10^7
	// keys 1008-1050 -> 655-858 and 520-587 -> 400-449; G1 q10 (chained)
	// 1651-2592 -> 1474-1718 and 881-937 -> 738-894.
	partBits = 7
	partP    = 1 << partBits
	noPart   = 0xFF // partition byte of a dropped row
	// hashBigTable is the most keys one worker's table takes on the plain
	// hash path before the grouping switches to partitions.
	hashBigTable = 1 << 16
	// hashForcedMax is where the hash strategy, even when asked for, gives
	// up for the partitioned one: a table's key order (8 bytes a key,
	// grown by append) is Go memory outside --max-memory, 128 MiB a worker
	// here where 10^8 distinct keys would make it 0.8-1.6 GB.
	hashForcedMax = 1 << 24
	// hashGrow: the plain hash path's tables grow past hashGrow/4 full. At
	// 10^4 keys that keeps 2^14 slots (256 KiB, 61% full) where growing
	// past half full made 2^15 (512 KiB, all of L2 here): more rows miss
	// their home slot, but the table stays in L2 beside the states. 10^7
	// rows, float sum and size, fused, alternating in one process (25
	// rounds, two runs): p50 69.1 -> 62.5 ms on one worker, 50.3 -> 46.3
	// ms on two (99.8 -> 87.1 and 103.5 -> 80.7 in a noisier run).
	hashGrow = 3
	// partGrow: a partition's table grows past partGrow/4 full (a quarter),
	// and partTables.next sizes it to stay under that.
	partGrow = 1
	// partSamples rows are sampled to decide between range and hash
	// partitions.
	partSamples = 4096
)

// partitionedRuns counts groupPartitioned calls, rangedRuns those that
// partitioned by key ranges, probeRuns probeIDs calls (tests check the
// paths).
var partitionedRuns, rangedRuns, probeRuns atomic.Uint64

// loneProbes counts probeLoneIDs calls (tests check the path).
var loneProbes atomic.Uint64

// partFunc is a row's partition, the high word of (k*mul)·scale (hi): one loop
// serves both kinds (for hashes mul is hashMul and scale parts, so the
// partition is the hash's top bits; for ranges mul is 1 and scale
// 2^64·parts/total, so the partition is k's place in [0, total) scaled to
// [0, parts)). parts is partP, or partFew (fusedPart, few keys): the
// partitions from parts to partP are then empty.
type partFunc struct {
	mul, scale uint64
	parts      int
}

// hi is k's partition before it is narrowed to a byte: at least parts (and
// maybe more than a byte holds) for a range partition's key at or past
// the total, which only a key array written since its range was taken
// gives (such a row is reported, never placed: errKeyWritten).
func (f partFunc) hi(k uint64) uint64 {
	hi, _ := bits.Mul64(k*f.mul, f.scale)
	return hi
}

// errKeyWritten is the error of a grouping whose keys changed under it.
func errKeyWritten() error {
	return errorf(ErrValue, "a key array was written while it was being grouped (a concurrent setitem?); group again")
}

// rangeParts returns the range partitioning of packed keys below total when
// a sample of rows spreads over it evenly enough: no partition with more
// than twice its share of the sampled rows.
func rangeParts(specs []keySpec, n int, total uint64, parts int) (partFunc, bool) {
	if total <= 4*uint64(parts) || n < partSamples {
		return partFunc{}, false
	}
	scale, _ := bits.Div64(uint64(parts), 0, total) // parts < total: no overflow
	f := partFunc{mul: 1, scale: scale, parts: parts}
	var cnt [partP]int
	p, buf := make([]uint64, 1), make([]uint64, 1)
	got := 0
	for i := range partSamples {
		r := int(uint64(i) * uint64(n) / partSamples)
		packChunk(specs, r, r+1, p, buf)
		if p[0] == dropKey {
			continue
		}
		q := f.hi(p[0])
		if q >= uint64(parts) {
			continue // a key written past its range: partCount reports it
		}
		cnt[q]++
		got++
	}
	most := 0
	for _, c := range cnt {
		most = max(most, c)
	}
	return f, got >= partSamples/2 && most*parts <= 2*got
}

// probeBlock is how many rows probeIDs tries at a time before it settles
// the misses.
const probeBlock = 1024

// probeBuf is probeIDs' scratch (one per worker).
type probeBuf struct {
	miss [probeBlock]int32
	keys [probeBlock]uint64
	ids  [probeBlock]int32
	// With lookup set a probe leaves the table as it is: a row whose key
	// it lacks is listed in pend (counted base rows before the probe's
	// first row) instead of numbered.
	lookup bool
	base   int
	pend   []int32
}

// probeIDs is tableIDs in two loops a block at a time: every row first
// tries its key's home slot with no branch (an empty slot holds dropKey
// and id -1, so a dropped row finding one is done too), and only the rows
// that missed (a later slot, a new key) take tableIDs' probing loop. Most
// rows hit their home slot; without the branch that mispredicts for the
// others, the CPU keeps many rows' loads in flight (25-35% faster per row
// than tableIDs alone, measured at 10^4 keys). The misses are settled in
// row order, so ids are still numbered first seen, first numbered among the
// misses of each block; with stride 1, t.order may be keys[:0] as for
// tableIDs (a block's keys are all read before its misses are settled).
// Row i's key is keys[i*stride]: stride 2 reads fusedPart's rows, a value
// beside each key (whose values are read after, so not with t.order over
// them).
func probeIDs(env Env, t *hashTable, keys []uint64, stride int, out []int32, grow uint, b *probeBuf) error {
	probeRuns.Add(1)
	for lo := 0; lo < len(out); lo += probeBlock {
		hi := min(len(out), lo+probeBlock)
		var m int
		if stride == 2 {
			m = homeSlotsPairs(t.slots, t.mul, t.shift, keys[2*lo:2*hi], out[lo:hi], &b.miss)
		} else {
			m = homeSlots(t.slots, t.mul, t.shift, keys[lo:hi], out[lo:hi], &b.miss)
		}
		if m == 0 {
			continue
		}
		for j, i := range b.miss[:m] {
			b.keys[j] = keys[(lo+int(i))*stride]
		}
		if err := b.settle(env, t, m, out[lo:hi], grow, lo); err != nil {
			return err
		}
	}
	return nil
}

// settle numbers the m missed rows' keys (b.keys[:m]) through t and writes
// their ids to out at the rows b.miss lists; out starts lo rows into the
// probe. With b.lookup it only finds them (find).
func (b *probeBuf) settle(env Env, t *hashTable, m int, out []int32, grow uint, lo int) error {
	if b.lookup {
		b.find(t, m, out, b.base+lo)
		return nil
	}
	if err := tableIDs(env, t, b.keys[:m], b.ids[:m], grow); err != nil {
		return err
	}
	for j, i := range b.miss[:m] {
		out[i] = b.ids[j]
	}
	return nil
}

// find is settle for a read-only probe: tableIDs' probing loop without the
// insert. A row whose key the table lacks goes to b.pend (base: out's
// first row, counted from the probe's).
func (b *probeBuf) find(t *hashTable, m int, out []int32, base int) {
	slots, mask, mul, shift := t.slots, t.mask, t.mul, t.shift&63
	for j, i := range b.miss[:m] {
		k := b.keys[j]
		if k == dropKey {
			out[i] = -1
			continue
		}
		for h := (k * mul) >> shift; ; h = (h + 1) & mask {
			if s := &slots[h]; s.k == k {
				out[i] = s.v
				break
			} else if s.k == dropKey {
				b.pend = append(b.pend, int32(base)+i)
				break
			}
		}
	}
}

// homeBase is the first of slots, once it is checked that every home slot
// (k*mul)>>shift is in the table: it has 2^(64-shift) slots. The probing
// loops read slot h at base + h*16 with no bounds check, which frees the
// register the length took (see homeSlotsLone); the slots belong to the
// table, which outlives the probing call. (The read stays written out in
// each loop: as an inlined function it cost homeSlotsLone a spill a row.)
func homeBase(slots []hashSlot, shift uint) unsafe.Pointer {
	_ = slots[^uint64(0)>>(shift&63)]
	return unsafe.Pointer(unsafe.SliceData(slots))
}

// homeSlots writes each key's id as found in its home slot and lists the
// rows whose home slot holds another key (their ids are then wrong).
//
//go:noinline
func homeSlots(slots []hashSlot, mul uint64, shift uint, keys []uint64, out []int32, miss *[probeBlock]int32) int {
	shift &= 63
	base := homeBase(slots, shift)
	out = out[:len(keys)]
	m := 0
	for i, k := range keys {
		s := (*hashSlot)(unsafe.Add(base, ((k*mul)>>shift)*uint64(unsafe.Sizeof(hashSlot{}))))
		out[i] = s.v
		miss[m&(probeBlock-1)] = int32(i)
		if s.k != k {
			m++
		}
	}
	return m
}

// homeSlotsPairs is homeSlots for keys each followed by a value (words).
// It is a loop of its own: one homeSlots reading keys[i*stride] for both
// made hashed keys with 10^4 groups about 20% slower (median of five
// interleaved rounds of BenchmarkHighCard; this machine is noisy, but
// there was no sign of a gain to set against it).
//
//go:noinline
func homeSlotsPairs(slots []hashSlot, mul uint64, shift uint, words []uint64, out []int32, miss *[probeBlock]int32) int {
	shift &= 63
	base := homeBase(slots, shift)
	words = words[:2*len(out)]
	m := 0
	for i := range out {
		k := words[2*i]
		s := (*hashSlot)(unsafe.Add(base, ((k*mul)>>shift)*uint64(unsafe.Sizeof(hashSlot{}))))
		out[i] = s.v
		miss[m&(probeBlock-1)] = int32(i)
		if s.k != k {
			m++
		}
	}
	return m
}

// tableIDs numbers keys through t (first seen, first numbered), writing
// each key's id to out (-1 for dropKey); t.order may be keys[:0] (distinct
// keys written over keys already read). The table grows past grow/4
// full: short probe runs mispredict less. The loop keeps the table's fields
// in locals (a call in the loop would make the compiler reload them).
//
//go:noinline
func tableIDs(env Env, t *hashTable, keys []uint64, out []int32, grow uint) error {
	slots, mask, mul, shift := t.slots, t.mask, t.mul, t.shift&63
	order := t.order
	out = out[:len(keys)]
	for i, k := range keys {
		if k == dropKey {
			out[i] = -1
			continue
		}
		h := (k * mul) >> shift
		for {
			s := &slots[h]
			if s.k == k {
				out[i] = s.v
				break
			}
			if s.k == dropKey {
				id := int32(len(order))
				s.k, s.v = k, id
				order = append(order, k)
				out[i] = id
				if uint64(len(order))*4 > uint64(grow)*(mask+1) {
					t.order = order
					if err := t.grow(env); err != nil {
						return err
					}
					slots, mask, shift = t.slots, t.mask, t.shift&63
				}
				break
			}
			h = (h + 1) & mask
		}
	}
	t.order = order
	return nil
}

// groupPartitioned groups by partitions; it returns the distinct packed keys
// in ascending order and the number of rows kept.
func groupPartitioned(env Env, specs []keySpec, ids []int32) ([]uint64, func(), int, error) {
	partitionedRuns.Add(1)
	n := len(ids)
	pf, ranged := partPlan(specs, n, partP)
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	// Pass 1: each row's partition, counted per worker.
	qs, fq, err := scratchOf[uint8](env, n)
	if err != nil {
		return nil, nil, 0, err
	}
	frees = append(frees, fq)
	start, pos, kept, outside := partCount(env, specs, pf, qs)
	if outside {
		return nil, nil, 0, errKeyWritten()
	}
	// Pass 2: scatter the packed keys.
	pk, fpk, err := scratchOf[uint64](env, kept)
	if err != nil {
		return nil, nil, 0, err
	}
	frees = append(frees, fpk)
	if scatterPart(env, specs, pf, pos, qs, pk) {
		return nil, nil, 0, errKeyWritten()
	}
	// Pass 3: each partition's keys get local ids (first seen, first
	// numbered) from its worker's table.
	pid, fpid, err := scratchOf[int32](env, kept)
	if err != nil {
		return nil, nil, 0, err
	}
	frees = append(frees, fpid)
	partUniq := make([][]uint64, partP)
	pt := newPartTables(env, ranged)
	defer pt.release()
	errs := make([]error, partP)
	var failed atomic.Bool // a partition failed (memory): the rest are not worth doing
	forPartitions(env, partP, func(w, q int) {
		if failed.Load() {
			return
		}
		keys := pk[start[q]:start[q+1]]
		t, err := pt.next(env, w, len(keys))
		if err == nil {
			// The distinct keys go over the partition's own keys, in place:
			// the j-th distinct key is written after key j has been read, and
			// no partition has more distinct keys than rows (so no
			// unaccounted memory grows here).
			t.order = keys[:0]
			err = probeIDs(env, t, keys, 1, pid[start[q]:start[q+1]], partGrow, &pt.bufs[w])
		}
		if err != nil {
			errs[q] = err
			failed.Store(true)
			return
		}
		partUniq[q] = t.order
		pt.done(w, len(keys), len(t.order))
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, 0, err
		}
	}
	keys, fk, flat, base, err := rankParts(env, partUniq, ranged, &frees)
	if err != nil {
		return nil, nil, 0, err
	}
	ng := len(keys)
	rank, fr, err := scratchOf[int32](env, ng)
	if err != nil {
		fk()
		return nil, nil, 0, err
	}
	frees = append(frees, fr)
	if ranged { // a range's ranks and flat indices are its own stretch
		forPartitions(env, partP, func(_, q int) {
			for r := base[q]; r < base[q+1]; r++ {
				rank[flat[r]] = int32(r)
			}
		})
	} else {
		for r, p := range flat {
			rank[p] = int32(r)
		}
	}
	// Local ids become ranks, partition by partition (partition q's local
	// id l is flat index base[q]+l).
	forPartitions(env, partP, func(_, q int) {
		r := rank[base[q]:base[q+1]]
		out := pid[start[q]:start[q+1]]
		for i, l := range out {
			out[i] = r[l]
		}
	})
	// Pass 4: rows read their ids back from their partition's stream.
	env.parallel(n, chunk, func(w, lo, hi int) {
		ps := make([]int, partP)
		copy(ps, pos[w*partP:(w+1)*partP])
		out, q := ids[lo:hi], qs[lo:hi]
		q = q[:len(out)]
		for i, pq := range q {
			if pq == noPart {
				out[i] = -1
				continue
			}
			out[i] = pid[ps[pq]]
			ps[pq]++
		}
	})
	return keys, fk, kept, nil
}

// partPlan picks parts partitions (partP or partFew) of specs' packed keys
// (n rows): ranges of them when a sample shows those even (ranged), else
// the top bits of their hash.
func partPlan(specs []keySpec, n int, parts int) (partFunc, bool) {
	pf, ranged := rangeParts(specs, n, specs[0].span*specs[0].stride, parts)
	if ranged {
		rangedRuns.Add(1)
		return pf, true
	}
	return partFunc{mul: hashMul, scale: uint64(parts), parts: parts}, false
}

// partCount counts each worker's rows per partition and returns where
// each partition starts (start[partP] is the rows kept) and where each
// worker's rows of it go (pos[w*partP+q]): partition-major, worker-minor,
// so a partition keeps its rows in row order. It writes each row's
// partition to qs (noPart for a dropped row); outside says a key fell past
// the partitions (errKeyWritten).
func partCount(env Env, specs []keySpec, pf partFunc, qs []uint8) (start, pos []int, kept int, outside bool) {
	n := specs[0].a.Len()
	nw := numWorkers(env.workers(), n)
	cnt := make([]int, nw*partP)
	bad := make([]bool, nw)
	env.parallel(n, chunk, func(w, lo, hi int) {
		c := cnt[w*partP : (w+1)*partP]
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		for x := lo; x < hi; x += chunk {
			e := min(hi, x+chunk)
			packChunk(specs, x, e, p, buf)
			q := qs[x:e]
			for i, k := range p[:e-x] {
				if k == dropKey {
					q[i] = noPart
					continue
				}
				pq := pf.hi(k)
				if pq >= uint64(pf.parts) {
					q[i] = noPart
					bad[w] = true
					continue
				}
				q[i] = uint8(pq)
				c[pq]++
			}
		}
	})
	outside = slices.Contains(bad, true)
	start = make([]int, partP+1)
	pos = make([]int, nw*partP)
	for q := 0; q < partP; q++ {
		start[q] = kept
		for w := 0; w < nw; w++ {
			pos[w*partP+q] = kept
			kept += cnt[w*partP+q]
		}
	}
	start[partP] = kept
	return start, pos, kept, outside
}

// scatterPart writes each kept row's packed key to pk at its partition's
// next place (pos, from partCount: row order within a partition). A row
// goes where partCount counted it (qs), so a key written in between cannot
// push a partition past its place; it returns whether one was (its
// partition now another: errKeyWritten).
func scatterPart(env Env, specs []keySpec, pf partFunc, pos []int, qs []uint8, pk []uint64) bool {
	n := specs[0].a.Len()
	bad := make([]bool, numWorkers(env.workers(), n))
	env.parallel(n, chunk, func(w, lo, hi int) {
		ps := make([]int, partP)
		copy(ps, pos[w*partP:(w+1)*partP])
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		for x := lo; x < hi; x += chunk {
			e := min(hi, x+chunk)
			packChunk(specs, x, e, p, buf)
			qx := qs[x:e]
			for i, k := range p[:e-x] {
				q := qx[i]
				if q == noPart {
					continue
				}
				if k == dropKey || pf.hi(k) != uint64(q) {
					bad[w] = true
					continue
				}
				pk[ps[q]] = k
				ps[q]++
			}
		}
	})
	return slices.Contains(bad, true)
}

// partTables are the workers' hash tables for partitions: one per worker,
// emptied for each of its partitions. Allocating and growing a table per
// partition cost page faults (tables under the server's pooled size come
// fresh) and rehashes. A table starts at the size the worker's last
// partition would have needed for the next one's rows.
type partTables struct {
	ranged             bool
	tables             []*hashTable
	lastRows, lastKeys []int
	bufs               []probeBuf
}

func newPartTables(env Env, ranged bool) *partTables {
	nt := min(env.workers(), partP)
	return &partTables{ranged: ranged, tables: make([]*hashTable, nt), lastRows: make([]int, nt),
		lastKeys: make([]int, nt), bufs: make([]probeBuf, nt)}
}

// next returns worker w's table, emptied for a partition of rows rows.
func (pt *partTables) next(env Env, w, rows int) (*hashTable, error) {
	capPow := uint(10)
	if pt.lastRows[w] > 0 {
		est := rows * pt.lastKeys[w] / pt.lastRows[w]
		capPow = max(capPow, uint(bits.Len(uint(4/partGrow*est)))) // under partGrow/4 full: no growth
	}
	t := pt.tables[w]
	if t == nil {
		var err error
		if t, err = newHashTable(env, capPow); err != nil {
			return nil, err
		}
		pt.tables[w] = t
		if !pt.ranged {
			t.mul = hashMulPast(partBits) // the top bits are the partition's: index by the next ones
		}
		return t, nil
	}
	return t, t.reset(env, capPow)
}

// done records that worker w's partition of rows rows had keys distinct keys.
func (pt *partTables) done(w, rows, keys int) { pt.lastRows[w], pt.lastKeys[w] = rows, keys }

func (pt *partTables) release() {
	for _, t := range pt.tables {
		if t != nil {
			t.release()
		}
	}
}

// rankParts sorts the distinct keys of every partition (partUniq[q]) into
// one ascending array, keys, freed by fk; flat[r] is the r-th key's flat
// index, base[q]+l for partition q's l-th key. Range partitions' keys are
// ranges of their own, each sorted there (in cache), one after another;
// hash partitions' keys are sorted all together. Its other scratch goes to
// frees.
func rankParts(env Env, partUniq [][]uint64, ranged bool, frees *[]func()) (keys []uint64, fk func(), flat []int64, base []int, err error) {
	base = make([]int, partP+1)
	for q := 0; q < partP; q++ {
		base[q+1] = base[q] + len(partUniq[q])
	}
	ng := base[partP]
	keys, fk, err = scratchOf[uint64](env, ng)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var kTmp []uint64
	var prov []int64
	scratch := func(f func() (func(), error)) {
		if err == nil {
			var fr func()
			if fr, err = f(); err == nil {
				*frees = append(*frees, fr)
			}
		}
	}
	scratch(func() (fr func(), err error) { kTmp, fr, err = scratchOf[uint64](env, ng); return })
	scratch(func() (fr func(), err error) { prov, fr, err = scratchOf[int64](env, 2*ng); return })
	if err != nil {
		fk()
		return nil, nil, nil, nil, err
	}
	if !ranged {
		for q := 0; q < partP; q++ {
			copy(keys[base[q]:], partUniq[q])
		}
		sk, sp := sortWithIndex(env, keys, kTmp, prov)
		if ng > 0 && &sk[0] != &keys[0] {
			copy(keys, sk)
		}
		return keys, fk, sp, base, nil
	}
	forPartitions(env, len(partUniq), func(_, q int) {
		lo, hi := base[q], base[q+1]
		k, sp := keys[lo:hi], prov[lo:hi]
		copy(k, partUniq[q])
		for i := range sp {
			sp[i] = int64(lo + i)
		}
		var h [1 << radixBits]int
		sk, ss := sortRun(k, kTmp[lo:hi], sp, prov[ng+lo:ng+hi], &h)
		if len(k) > 0 && &sk[0] != &k[0] {
			copy(k, sk)
			copy(sp, ss)
		}
	})
	return keys, fk, prov[:ng], base, nil
}

// forPartitions runs f(w, q) on every partition q below parts, the workers
// w taking the next one as they finish (partitions differ in size when the
// keys are skewed).
func forPartitions(env Env, parts int, f func(w, q int)) {
	nw := min(env.workers(), parts)
	var next atomic.Int32
	parallelN(nw, func(w int) {
		for {
			q := int(next.Add(1)) - 1
			if q >= parts {
				return
			}
			env.check()
			f(w, q)
		}
	})
}

// sortRun sorts a short run of distinct keys (one partition's), with ids
// alongside, using the scratch slices of the same lengths; it returns the
// slices holding the result. One radix pass on the top digit of the run's
// range leaves buckets of a few keys, insertion-sorted in cache; a bucket
// too big for that (keys clustered) gets LSD passes of its own. Several
// LSD passes over the whole run cost a 2^radixBits histogram each, which
// for a run this short weighs more than the keys; a long run goes to
// sortLongRun.
func sortRun(keys, kTmp []uint64, ids, iTmp []int64, h *[1 << radixBits]int) ([]uint64, []int64) {
	if len(keys) < 2 {
		return keys, ids
	}
	mn, mx := keys[0], keys[0]
	for _, k := range keys {
		mn, mx = min(mn, k), max(mx, k)
	}
	if len(keys) > 16<<radixBits { // buckets would pass insertion sort's size
		return sortLongRun(keys, kTmp, ids, iTmp, mn, uint(bits.Len64(mx-mn)), h)
	}
	shift := uint(max(bits.Len64(mx-mn)-radixBits, 0))
	*h = [1 << radixBits]int{}
	countDigits(keys, mn, shift, h)
	sum := 0
	for d, c := range h {
		h[d] = sum
		sum += c
	}
	scatterPairs(keys, ids, kTmp, iTmp, mn, shift, h) // h[d]: end of bucket d
	sortBuckets(keys, kTmp, ids, iTmp, h[:], mn, shift, 32, nil)
	return kTmp, iTmp
}

// sortBuckets sorts each bucket of kTmp (ids in iTmp; ends[d]: the end of
// bucket d) on its bits below shift, keys and ids serving as scratch:
// insertion sort up to small keys, LSD passes (histogram h, allocated when
// nil and needed: clumps of keys are rare) above.
func sortBuckets(keys, kTmp []uint64, ids, iTmp []int64, ends []int, mn uint64, shift uint, small int, h *[1 << radixBits]int) {
	lo := 0
	for _, hi := range ends {
		switch b := hi - lo; {
		case b <= 1:
		case b <= small:
			insertionPairs(kTmp[lo:hi], iTmp[lo:hi])
		default:
			if h == nil {
				h = new([1 << radixBits]int)
			}
			k, i := lsdLocal(kTmp[lo:hi], keys[lo:hi], iTmp[lo:hi], ids[lo:hi], mn, shift, h)
			if &k[0] != &kTmp[lo] {
				copy(kTmp[lo:hi], k)
				copy(iTmp[lo:hi], i)
			}
		}
		lo = hi
	}
}

// longRuns counts runs sorted by sortLongRun's wide top pass (tests check
// the path is taken).
var longRuns atomic.Uint64

// sortLongRun is sortRun for a run of more than 2^15 keys (a partition of
// 10^7 distinct keys: 156,000): one radix pass on a top digit of up to 16
// bits, as wide as leaves about 8 keys a bucket, then insertion sorts, and
// LSD passes only for a bucket of clustered keys. Six LSD passes over the
// run (56-bit keys) took 38% of G1 q10's grouping at 10^7 rows.
func sortLongRun(keys, kTmp []uint64, ids, iTmp []int64, mn uint64, nbits uint, h *[1 << radixBits]int) ([]uint64, []int64) {
	tb := uint(min(max(bits.Len(uint(len(keys)/8)), radixBits), 16, int(nbits)))
	if tb <= radixBits {
		return lsdLocal(keys, kTmp, ids, iTmp, mn, nbits, h)
	}
	longRuns.Add(1)
	shift := nbits - tb
	hb := make([]int, 1<<tb) // 512 KiB at most, per run: small beside the run's keys
	mask := uint64(1)<<tb - 1
	for _, k := range keys {
		hb[((k-mn)>>shift)&mask]++
	}
	sum := 0
	for d, c := range hb {
		hb[d] = sum
		sum += c
	}
	scatterTop(keys, ids, kTmp, iTmp, mn, shift, mask, hb) // hb[d]: end of bucket d
	sortBuckets(keys, kTmp, ids, iTmp, hb, mn, shift, 48, h)
	return kTmp, iTmp
}

// scatterTop is scatterPairs with a digit of any width (mask).
func scatterTop(keys []uint64, idx []int64, kTmp []uint64, iTmp []int64, base uint64, shift uint, mask uint64, h []int) {
	idx = idx[:len(keys)]
	for i, k := range keys {
		d := ((k - base) >> (shift & 63)) & mask
		p := h[d]
		kTmp[p] = k
		iTmp[p] = idx[i]
		h[d] = p + 1
	}
}

// insertionPairs sorts a few keys, ids alongside.
func insertionPairs(keys []uint64, ids []int64) {
	ids = ids[:len(keys)]
	for i := 1; i < len(keys); i++ {
		k, id := keys[i], ids[i]
		j := i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j], ids[j] = keys[j-1], ids[j-1]
		}
		keys[j], ids[j] = k, id
	}
}

// probeLoneIDs is probeIDs for the rows of a lone int64 key x whose
// packed key is its sort key less mn (stride 1): the keys are packed as
// they are probed, not first written to a buffer and read back. Measured
// on 10^7 hashed int64 keys from 10^4 values, alternating with packChunk
// then probeIDs in one process (15-31 rounds, two to four runs): the
// grouping 60-66 -> 55-63 ms p50 on one worker, 43-51 -> 38-46 ms on two;
// the fused grouping with a float sum 58-81 -> 54-72 ms on two workers
// (on one, the min 70-77 -> 67-69 ms, the p50 within the noise).
func probeLoneIDs(env Env, t *hashTable, x []int64, mn uint64, out []int32, grow uint, b *probeBuf) error {
	probeRuns.Add(1)
	loneProbes.Add(1)
	x = x[:len(out)]
	for lo := 0; lo < len(out); lo += probeBlock {
		hi := min(len(out), lo+probeBlock)
		xs := x[lo:hi]
		m := homeSlotsLone(t.slots, t.mul, t.shift, xs, 1<<63-mn, out[lo:hi], &b.miss)
		if m == 0 {
			continue
		}
		for j, i := range b.miss[:m] {
			b.keys[j] = sortKeyInt(xs[i]) - mn
		}
		if err := b.settle(env, t, m, out[lo:hi], grow, lo); err != nil {
			return err
		}
	}
	return nil
}

// homeSlotsLone is homeSlots over a lone int64 key's values, each packed
// as it is read. It is a loop of its own, as homeSlotsPairs is: packing in
// the loop is what it is for.
//
// The loop is short of registers on amd64 (spilling six a row, it ran at
// 3.7 ns a row against 2.5 for homeSlots's shape in a bare copy), so it
// saves two: the packing is one add of off (sortKeyInt(v)-mn is uint64(v) +
// 2^63 - mn, modulo 2^64; computed by the caller, or the compiler puts the
// 2^63 back in the loop), and the slot is read through a pointer with no
// bounds check (homeBase), which needs no length.
//
//go:noinline
func homeSlotsLone(slots []hashSlot, mul uint64, shift uint, x []int64, off uint64, out []int32, miss *[probeBlock]int32) int {
	shift &= 63
	base := homeBase(slots, shift)
	out = out[:len(x)]
	m := 0
	for i, v := range x {
		k := uint64(v) + off
		s := (*hashSlot)(unsafe.Add(base, ((k*mul)>>shift)*uint64(unsafe.Sizeof(hashSlot{}))))
		out[i] = s.v
		miss[m&(probeBlock-1)] = int32(i)
		if s.k != k {
			m++
		}
	}
	return m
}

package ops

// Radix-partitioned hash grouping, for many groups. One big hash table
// misses the caches and (worse, in a VM) the TLB on nearly every row: about
// 70 ns a row measured here with a 64 MiB table for 10^6 keys. So the rows'
// packed keys are first scattered into partP partitions by the top bits of
// their hash (a stable counting sort: each partition keeps worker 0's rows,
// then worker 1's, in row order), each partition is grouped with a table of
// its own that stays in L2, the distinct keys of all partitions are
// radix-sorted to rank them, and a last pass reads each row's id back from
// its partition's stream in row order.

import "sync/atomic"

const (
	partBits = 6 // 64 partitions: few enough write streams for the scatter
	partP    = 1 << partBits
	noPart   = 0xFF // partition byte of a dropped row
	// hashBigTable is the most keys one worker's table takes on the plain
	// hash path before the grouping switches to partitions.
	hashBigTable = 1 << 16
)

// partitionedRuns counts groupPartitioned calls (tests check the path).
var partitionedRuns atomic.Uint64

func partOf(k uint64) uint8 { return uint8((k * 0x9E3779B97F4A7C15) >> (64 - partBits)) }

// groupPartitioned groups by partitions; it returns the distinct packed keys
// in ascending order and the number of rows kept.
func groupPartitioned(env Env, specs []keySpec, ids []int32) ([]uint64, func(), int, error) {
	partitionedRuns.Add(1)
	n := len(ids)
	nw := numWorkers(env.workers(), n)
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
	cnt := make([]int, nw*partP)
	parallel(env.workers(), n, chunk, func(w, lo, hi int) {
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
				pq := partOf(k)
				q[i] = pq
				c[pq]++
			}
		}
	})
	// Partition-major, worker-minor offsets keep row order within a partition.
	start := make([]int, partP+1)
	pos := make([]int, nw*partP)
	kept := 0
	for q := 0; q < partP; q++ {
		start[q] = kept
		for w := 0; w < nw; w++ {
			pos[w*partP+q] = kept
			kept += cnt[w*partP+q]
		}
	}
	start[partP] = kept
	// Pass 2: scatter the packed keys.
	pk, fpk, err := scratchOf[uint64](env, kept)
	if err != nil {
		return nil, nil, 0, err
	}
	frees = append(frees, fpk)
	parallel(env.workers(), n, chunk, func(w, lo, hi int) {
		ps := make([]int, partP)
		copy(ps, pos[w*partP:(w+1)*partP])
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		for x := lo; x < hi; x += chunk {
			e := min(hi, x+chunk)
			packChunk(specs, x, e, p, buf)
			for _, k := range p[:e-x] {
				if k == dropKey {
					continue
				}
				q := partOf(k)
				pk[ps[q]] = k
				ps[q]++
			}
		}
	})
	// Pass 3: a table per partition gives each key a local id (first seen,
	// first numbered).
	pid, fpid, err := scratchOf[int32](env, kept)
	if err != nil {
		return nil, nil, 0, err
	}
	frees = append(frees, fpid)
	partUniq := make([][]uint64, partP)
	errs := make([]error, partP)
	forPartitions(env, func(q int) {
		keys := pk[start[q]:start[q+1]]
		out := pid[start[q]:start[q+1]]
		t, err := newHashTable(env, 10)
		if err != nil {
			errs[q] = err
			return
		}
		defer t.release()
		t.pre = partBits // the top bits are the partition's: index by the next ones
		// The distinct keys go over the partition's own keys, in place: the
		// j-th distinct key is written after key j has been read, and no
		// partition has more distinct keys than rows (so no unaccounted
		// memory grows here).
		t.order = keys[:0]
		for i, k := range keys {
			h := t.hash(k)
			for t.slots[h].k != k && t.slots[h].k != dropKey {
				h = (h + 1) & t.mask
			}
			if sl := t.slots[h]; sl.k == k {
				out[i] = sl.v
				continue
			}
			id, err := t.insert(env, k)
			if err != nil {
				errs[q] = err
				return
			}
			out[i] = id
		}
		partUniq[q] = t.order
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, 0, err
		}
	}
	// Rank every distinct key: radix sort carrying (partition base + local id).
	base := make([]int, partP+1)
	for q := 0; q < partP; q++ {
		base[q+1] = base[q] + len(partUniq[q])
	}
	ng := base[partP]
	keys, fk, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, nil, 0, err
	}
	kTmp, fkt, err := scratchOf[uint64](env, ng)
	if err != nil {
		fk()
		return nil, nil, 0, err
	}
	frees = append(frees, fkt)
	prov, fp, err := scratchOf[int64](env, 2*ng)
	if err != nil {
		fk()
		return nil, nil, 0, err
	}
	frees = append(frees, fp)
	for q := 0; q < partP; q++ {
		copy(keys[base[q]:], partUniq[q])
	}
	for i := range ng {
		prov[i] = int64(i)
	}
	sk, sp := keys, prov[:ng]
	if ng > 1 {
		lo, nbits := keyRange(env, keys)
		sk, sp = radixSortMSD(env, keys, kTmp, prov[:ng], prov[ng:], lo, nbits)
	}
	rank, fr, err := scratchOf[int32](env, ng)
	if err != nil {
		fk()
		return nil, nil, 0, err
	}
	frees = append(frees, fr)
	for r, p := range sp {
		rank[p] = int32(r)
	}
	if ng > 0 && &sk[0] != &keys[0] {
		copy(keys, sk)
	}
	// Local ids become ranks, partition by partition (each partition's
	// ranks are one contiguous stretch of rank).
	forPartitions(env, func(q int) {
		r := rank[base[q]:base[q+1]]
		out := pid[start[q]:start[q+1]]
		for i, l := range out {
			out[i] = r[l]
		}
	})
	// Pass 4: rows read their ids back from their partition's stream.
	parallel(env.workers(), n, chunk, func(w, lo, hi int) {
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

// forPartitions runs f on every partition, the workers taking the next one
// as they finish (partitions differ in size when the keys are skewed).
func forPartitions(env Env, f func(q int)) {
	nw := min(env.workers(), partP)
	var next atomic.Int32
	parallelN(nw, func(int) {
		for {
			q := int(next.Add(1)) - 1
			if q >= partP {
				return
			}
			f(q)
		}
	})
}

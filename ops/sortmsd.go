package ops

import (
	"math/bits"
	"slices"
	"sync/atomic"
)

// Keys-only sort (Sort's values, not argsort's pairs), most significant
// digit first. The LSD radix sort moves every key across memory once a
// digit: 6 passes for float keys, each a 2048-way scatter over the whole
// array (a TLB miss a key on this VM's 4 KiB pages). This one scatters the
// whole array once, into buckets of a few thousand keys balanced by a
// histogram of the keys' top 16 bits, and then sorts each bucket while it
// sits in cache, workers taking buckets largest first. Within a bucket the
// digits are taken at the top of the bucket's own key range (so clustered
// keys, such as floats' exponents, cost no empty passes) until buckets of
// 16 keys or fewer are left to insertion sort. Equal keys are equal values
// here (keys are an exact bit map of the values), so stability is moot.

// msdPrefixBits is the width of the top-level histogram's prefix.
const msdPrefixBits = 16

// msdBucket is the key count the top level aims a bucket at: 32 KiB of
// keys, which the bucket's digit passes then work on in L1/L2 (past 2^24
// keys, n/4096: the number of buckets stays at most 8192).
const msdBucket = 4096

// msdMinKeys is the key count below which sortKeysOnly keeps to LSD passes.
const msdMinKeys = 1 << 12

// msdDirect is the key count below which the top level is skipped: one
// worker sorts the keys by msdSort alone.
const msdDirect = 1 << 16

// msdSorts counts top-level sorts by msdSortKeys (tests check the path).
var msdSorts atomic.Uint64

// msdScratch is one worker's digit histograms, one a recursion level: each
// level takes at least 4 bits of a 64-bit range, so 17 levels suffice.
type msdScratch [17][1<<11 + 1]int

// sortKeysOnly sorts keys ascending (tmp, of keys' length, is scratch) and
// returns the slice holding them: ranges of up to two LSD digits are one or
// two LSD passes (fewer than msdSortKeys' three), and so are a few keys
// (in cache anyway; msdSort's histograms would cost more than they), wider
// ones msdSortKeys.
func sortKeysOnly(env Env, keys, tmp []uint64, base uint64, nbits uint) []uint64 {
	if nbits <= 2*radixBits || len(keys) < msdMinKeys {
		keys, _ = radixSort(env, keys, tmp, nil, nil, base, nbits)
		return keys
	}
	msdSortKeys(env, keys, tmp, base, nbits)
	return keys
}

// msdSortKeys sorts keys ascending in place, with tmp (keys' length) as
// scratch; base and nbits are keyRange's (the smallest key, and the width
// of the range above it).
func msdSortKeys(env Env, keys, tmp []uint64, base uint64, nbits uint) {
	n := len(keys)
	if n < 2 || nbits == 0 {
		return
	}
	if n < msdDirect {
		msdSort(keys, tmp, false, new(msdScratch), 0)
		return
	}
	msdSorts.Add(1)
	p := planMSD(env, keys, base, nbits)
	env.parallel(n, 1, func(w, lo, hi int) {
		at := p.pos[w]
		env.chunks(lo, hi, func(lo, hi int) {
			for _, k := range keys[lo:hi] {
				b := p.bucketOf[(k-base)>>p.shift]
				tmp[at[b]] = k
				at[b]++
			}
		})
	})
	p.buckets(func(hs *msdScratch, lo, hi int) {
		msdSort(tmp[lo:hi], keys[lo:hi], true, hs, 0)
	})
}

// msdArgsort is msdSortKeys carrying each key's idx (stably: equal keys
// keep their order), for n of at least msdDirect; the result is in keys
// and idx.
func msdArgsort(env Env, keys, kTmp []uint64, idx, iTmp []int64, base uint64, nbits uint) {
	msdSorts.Add(1)
	p := planMSD(env, keys, base, nbits)
	env.parallel(len(keys), 1, func(w, lo, hi int) {
		at := p.pos[w]
		env.chunks(lo, hi, func(lo, hi int) {
			for i, k := range keys[lo:hi] {
				b := p.bucketOf[(k-base)>>p.shift]
				kTmp[at[b]] = k
				iTmp[at[b]] = idx[lo+i]
				at[b]++
			}
		})
	})
	p.buckets(func(hs *msdScratch, lo, hi int) {
		msdSortPairs(kTmp[lo:hi], keys[lo:hi], iTmp[lo:hi], idx[lo:hi], true, hs, 0)
	})
}

// msdPlan is the top level of an MSD sort: the buckets the keys' top
// msdPrefixBits (above base) fall in, each worker's place in each bucket
// (its share of the keys as parallel splits them), and where each bucket
// starts.
type msdPlan struct {
	env      Env // (its Stop, checked before each bucket)
	workers  int
	shift    uint
	bucketOf []uint16
	pos      [][]int
	start    []int
}

func planMSD(env Env, keys []uint64, base uint64, nbits uint) *msdPlan {
	n := len(keys)
	p := &msdPlan{env: env, workers: numWorkers(env.workers(), n)}
	if nbits > msdPrefixBits {
		p.shift = nbits - msdPrefixBits
	}
	np := 1 << min(nbits, msdPrefixBits)
	hist := make([][]int, p.workers)
	env.parallel(n, 1, func(w, lo, hi int) {
		h := make([]int, np)
		env.chunks(lo, hi, func(lo, hi int) {
			for _, k := range keys[lo:hi] {
				h[(k-base)>>p.shift]++
			}
		})
		hist[w] = h
	})
	// Prefixes in order fill buckets of about target keys; a prefix heavier
	// than that is a bucket of its own (its digit passes recurse further).
	target := max(msdBucket, n>>12)
	p.bucketOf = make([]uint16, np) // at most np buckets: ids fit
	nb, fill := 0, 0
	for x := range np {
		c := 0
		for w := range hist {
			c += hist[w][x]
		}
		if fill > 0 && fill+c > target {
			nb++
			fill = 0
		}
		p.bucketOf[x] = uint16(nb)
		fill += c
	}
	nb++
	// Each worker's place in each bucket: bucket-major, worker-minor (a
	// stable scatter).
	p.pos = make([][]int, p.workers)
	for w := range p.pos {
		p.pos[w] = make([]int, nb)
		for x, c := range hist[w] {
			p.pos[w][p.bucketOf[x]] += c
		}
	}
	p.start = make([]int, nb+1)
	sum := 0
	for b := range nb {
		p.start[b] = sum
		for w := range p.pos {
			c := p.pos[w][b]
			p.pos[w][b] = sum
			sum += c
		}
	}
	p.start[nb] = sum
	return p
}

// buckets runs sort on every non-empty bucket's range, workers taking the
// largest first, so that the last one taken is short.
func (p *msdPlan) buckets(sort func(hs *msdScratch, lo, hi int)) {
	nb := len(p.start) - 1
	order := make([]int32, 0, nb)
	for b := range nb {
		if p.start[b+1] > p.start[b] {
			order = append(order, int32(b))
		}
	}
	slices.SortFunc(order, func(x, y int32) int {
		return (p.start[y+1] - p.start[y]) - (p.start[x+1] - p.start[x])
	})
	var next atomic.Int64
	parallelN(p.workers, func(int) {
		hs := new(msdScratch)
		for {
			i := next.Add(1) - 1
			if i >= int64(len(order)) {
				return
			}
			p.env.check()
			b := order[i]
			sort(hs, p.start[b], p.start[b+1])
		}
	})
}

// msdSort sorts the keys in a on one worker; the result lands in t when
// intoT, else in a (the other is scratch of the same length).
func msdSort(a, t []uint64, intoT bool, hs *msdScratch, level int) {
	n := len(a)
	if n <= 16 {
		if intoT {
			copy(t, a)
			a = t
		}
		insertionSort(a)
		return
	}
	mn, mx := a[0], a[0]
	for _, k := range a {
		mn = min(mn, k)
		mx = max(mx, k)
	}
	if mn == mx {
		if intoT {
			copy(t, a)
		}
		return
	}
	// The digit: the top db bits of the range, fewer for fewer keys (about
	// four keys a bucket, left to insertion sort, so that clearing and
	// walking the histogram stay small).
	nbits := uint(bits.Len64(mx - mn))
	db := uint(min(11, max(4, bits.Len(uint(n))-2)))
	shift := uint(0)
	if nbits > db {
		shift = nbits - db
	} else {
		db = nbits
	}
	nd := 1 << db
	h := hs[level][:nd]
	clear(h)
	for _, k := range a {
		h[(k-mn)>>shift]++
	}
	sum := 0
	for d, c := range h {
		h[d] = sum
		sum += c
	}
	for _, k := range a {
		d := (k - mn) >> shift
		t[h[d]] = k
		h[d]++
	}
	// h[d] is now digit d's end. The keys are in t: a bucket of equal keys
	// (the last digit) or of one key is done there; the rest recurse with
	// the buffers' roles swapped.
	lo := 0
	for _, hi := range h {
		switch {
		case hi-lo > 1 && shift > 0:
			msdSort(t[lo:hi], a[lo:hi], !intoT, hs, level+1)
		case intoT || hi == lo:
		case hi-lo == 1:
			a[lo] = t[lo]
		default:
			copy(a[lo:hi], t[lo:hi])
		}
		lo = hi
	}
}

// msdSortPairs is msdSort carrying pa's idx (stable: scatters keep input
// order, and so does the insertion sort); pt is the idx scratch.
func msdSortPairs(a, t []uint64, pa, pt []int64, intoT bool, hs *msdScratch, level int) {
	n := len(a)
	if n <= 16 {
		if intoT {
			copy(t, a)
			copy(pt, pa)
			a, pa = t, pt
		}
		insertionSortPairs(a, pa)
		return
	}
	mn, mx := a[0], a[0]
	for _, k := range a {
		mn = min(mn, k)
		mx = max(mx, k)
	}
	if mn == mx {
		if intoT {
			copy(t, a)
			copy(pt, pa)
		}
		return
	}
	nbits := uint(bits.Len64(mx - mn))
	db := uint(min(11, max(4, bits.Len(uint(n))-2)))
	shift := uint(0)
	if nbits > db {
		shift = nbits - db
	} else {
		db = nbits
	}
	h := hs[level][:1<<db]
	clear(h)
	for _, k := range a {
		h[(k-mn)>>shift]++
	}
	sum := 0
	for d, c := range h {
		h[d] = sum
		sum += c
	}
	pa = pa[:len(a)]
	for i, k := range a {
		d := (k - mn) >> shift
		t[h[d]] = k
		pt[h[d]] = pa[i]
		h[d]++
	}
	lo := 0
	for _, hi := range h {
		switch {
		case hi-lo > 1 && shift > 0:
			msdSortPairs(t[lo:hi], a[lo:hi], pt[lo:hi], pa[lo:hi], !intoT, hs, level+1)
		case intoT || hi == lo:
		default:
			copy(a[lo:hi], t[lo:hi])
			copy(pa[lo:hi], pt[lo:hi])
		}
		lo = hi
	}
}

// insertionSortPairs sorts a few keys a ascending, stably, their payloads
// pa beside them.
func insertionSortPairs[K uint64 | float64](a []K, pa []int64) {
	pa = pa[:len(a)]
	for i := 1; i < len(a); i++ {
		k, p := a[i], pa[i]
		j := i
		for j > 0 && a[j-1] > k {
			a[j], pa[j] = a[j-1], pa[j-1]
			j--
		}
		a[j], pa[j] = k, p
	}
}

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		k := a[i]
		j := i
		for j > 0 && a[j-1] > k {
			a[j] = a[j-1]
			j--
		}
		a[j] = k
	}
}

package ops

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/arktos-dev/arktos/pdarray"
)

// radixBits is the digit width of the LSD radix sort: 2048 buckets per pass,
// so a worker's histogram and scatter cursors stay in L1/L2.
const radixBits = 11

// sortKey maps elements to uint64 keys whose unsigned order is numpy's sort
// order: signed ints flip the sign bit; floats flip all bits of negatives
// and the sign bit of positives, -0.0 sorts as +0.0 (numpy's comparisons tie
// them, so a stable sort keeps their order) and every NaN is the largest key
// (numpy sorts NaN last).
func keysOf(env Env, a *pdarray.Array, init []int64, keys []uint64) {
	switch a.DType() {
	case dI8:
		fillKeys(env, pdarray.View[int8](a), init, keys, signedKey[int8])
	case dI16:
		fillKeys(env, pdarray.View[int16](a), init, keys, signedKey[int16])
	case dI32:
		fillKeys(env, pdarray.View[int32](a), init, keys, signedKey[int32])
	case dI64:
		fillKeys(env, pdarray.View[int64](a), init, keys, signedKey[int64])
	case dU8, dBool:
		fillKeys(env, pdarray.BytesAs[uint8](a.Bytes()), init, keys, unsignedKey[uint8])
	case dU16:
		fillKeys(env, pdarray.View[uint16](a), init, keys, unsignedKey[uint16])
	case dU32:
		fillKeys(env, pdarray.View[uint32](a), init, keys, unsignedKey[uint32])
	case dU64:
		fillKeys(env, pdarray.View[uint64](a), init, keys, unsignedKey[uint64])
	case dF32:
		fillKeys(env, pdarray.View[float32](a), init, keys, floatKey[float32])
	case dF64:
		fillKeys(env, pdarray.View[float64](a), init, keys, floatKey[float64])
	}
}

func signedKey[T Signed](v T) uint64     { return uint64(int64(v)) ^ (1 << 63) }
func unsignedKey[T Unsigned](v T) uint64 { return uint64(v) }
func floatKey[T Float](v T) uint64 {
	f := float64(v)
	if f != f {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func fillKeys[T Number](env Env, x []T, init []int64, keys []uint64, key func(T) uint64) {
	env.parallel(len(keys), chunk, func(_, lo, hi int) {
		k := keys[lo:hi]
		if init == nil {
			xs := x[lo:hi]
			for i := range k {
				k[i] = key(xs[i])
			}
			return
		}
		in := init[lo:hi]
		for i := range k {
			k[i] = key(x[in[i]])
		}
	})
}

// keyRange returns the smallest key and the number of bits that vary above it.
func keyRange(env Env, keys []uint64) (uint64, uint) {
	nw := numWorkers(env.workers(), len(keys))
	los, his := make([]uint64, nw), make([]uint64, nw)
	env.parallel(len(keys), 1, func(w, lo, hi int) {
		mn, mx := keys[lo], keys[lo]
		for _, k := range keys[lo:hi] {
			mn = min(mn, k)
			mx = max(mx, k)
		}
		los[w], his[w] = mn, mx
	})
	mn, mx := los[0], his[0]
	for w := range los {
		mn, mx = min(mn, los[w]), max(mx, his[w])
	}
	return mn, uint(bits.Len64(mx - mn))
}

// radixSort sorts keys (and idx alongside, when not nil) stably by the bits
// above base, using the scratch slices of the same lengths; it returns the
// slices holding the result (either the inputs or the scratch).
func radixSort(env Env, keys, kTmp []uint64, idx, iTmp []int64, base uint64, nbits uint) ([]uint64, []int64) {
	n := len(keys)
	if n < 2 {
		return keys, idx
	}
	const nb = 1 << radixBits
	nw := numWorkers(env.workers(), n)
	hist := make([][nb]int, nw)
	for shift := uint(0); shift < nbits; shift += radixBits {
		for w := range hist {
			hist[w] = [nb]int{}
		}
		env.parallel(n, 1, func(w, lo, hi int) {
			env.chunks(lo, hi, func(lo, hi int) { countDigits(keys[lo:hi], base, shift, &hist[w]) })
		})
		// Offsets digit-major, worker-minor: stable.
		sum, skip := 0, false
		for d := 0; d < nb; d++ {
			for w := range hist {
				c := hist[w][d]
				if c == n {
					skip = true
				}
				hist[w][d] = sum
				sum += c
			}
		}
		if skip {
			continue // every key has the same digit here
		}
		env.parallel(n, 1, func(w, lo, hi int) {
			h := &hist[w]
			env.chunks(lo, hi, func(lo, hi int) {
				if idx == nil {
					for _, k := range keys[lo:hi] {
						d := ((k - base) >> shift) & (nb - 1)
						kTmp[h[d]] = k
						h[d]++
					}
					return
				}
				scatterPairs(keys[lo:hi], idx[lo:hi], kTmp, iTmp, base, shift, h)
			})
		})
		keys, kTmp = kTmp, keys
		idx, iTmp = iTmp, idx
	}
	return keys, idx
}

// countDigits adds to h the count of each key's digit at shift.
func countDigits(keys []uint64, base uint64, shift uint, h *[1 << radixBits]int) {
	for _, k := range keys {
		h[((k-base)>>shift)&(1<<radixBits-1)]++
	}
}

// scatterPairs moves each key and its idx to the next place of its digit
// at shift (h holds the places, advanced as they are used): one stable
// radix pass.
func scatterPairs(keys []uint64, idx []int64, kTmp []uint64, iTmp []int64, base uint64, shift uint, h *[1 << radixBits]int) {
	idx = idx[:len(keys)]
	for i, k := range keys {
		d := ((k - base) >> shift) & (1<<radixBits - 1)
		p := h[d]
		kTmp[p] = k
		iTmp[p] = idx[i]
		h[d] = p + 1
	}
}

// msdMin is the smallest key count radixSortMSD splits by its top digit:
// below it the global LSD passes are cache-resident anyway.
const msdMin = 1 << 17

// msdPasses counts radixSortMSD calls that split by the top digit (tests
// check the path is taken).
var msdPasses atomic.Uint64

// sortWithIndex sorts distinct keys ascending, carrying each one's index
// into keys: kTmp (len(keys)) and prov (2·len(keys)) are the scratch. It
// returns the slices holding the sorted keys and their indices (the
// grouping paths rank distinct keys with it).
func sortWithIndex(env Env, keys, kTmp []uint64, prov []int64) ([]uint64, []int64) {
	ng := len(keys)
	for i := range ng {
		prov[i] = int64(i)
	}
	if ng <= 1 {
		return keys, prov[:ng]
	}
	base, nbits := keyRange(env, keys)
	return radixSortMSD(env, keys, kTmp, prov[:ng], prov[ng:], base, nbits)
}

// radixSortMSD is radixSort for many keys with their idx (a group-by's
// distinct keys with their provenance): one stable pass scatters them by
// their top digit into 2^11 buckets, then each bucket (a few thousand keys,
// in L1/L2) is sorted on its remaining bits by local LSD passes, workers
// taking buckets in turn. The LSD sort's every pass scatters all keys
// across memory, which in this VM costs a TLB miss a key: 5 such passes for
// 55-bit keys took ~70 ms per 10^6 keys. It returns the slices holding the
// result, like radixSort.
func radixSortMSD(env Env, keys, kTmp []uint64, idx, iTmp []int64, base uint64, nbits uint) ([]uint64, []int64) {
	n := len(keys)
	if n < msdMin || nbits <= 2*radixBits {
		return radixSort(env, keys, kTmp, idx, iTmp, base, nbits)
	}
	msdPasses.Add(1)
	const nb = 1 << radixBits
	shift := nbits - radixBits
	nw := numWorkers(env.workers(), n)
	hist := make([][nb]int, nw)
	env.parallel(n, 1, func(w, lo, hi int) {
		env.chunks(lo, hi, func(lo, hi int) { countDigits(keys[lo:hi], base, shift, &hist[w]) })
	})
	var bucket [nb + 1]int
	sum := 0
	for d := 0; d < nb; d++ {
		bucket[d] = sum
		for w := range hist {
			c := hist[w][d]
			hist[w][d] = sum
			sum += c
		}
	}
	bucket[nb] = n
	env.parallel(n, 1, func(w, lo, hi int) {
		env.chunks(lo, hi, func(lo, hi int) { scatterPairs(keys[lo:hi], idx[lo:hi], kTmp, iTmp, base, shift, &hist[w]) })
	})
	// Buckets sorted in place in kTmp/iTmp, keys/idx their scratch.
	var next atomic.Int32
	parallelN(nw, func(int) {
		var h [nb]int
		for {
			d := int(next.Add(1)) - 1
			if d >= nb {
				return
			}
			env.check()
			lo, hi := bucket[d], bucket[d+1]
			if hi-lo < 2 {
				continue
			}
			k, i := lsdLocal(kTmp[lo:hi], keys[lo:hi], iTmp[lo:hi], idx[lo:hi], base, shift, &h)
			if &k[0] != &kTmp[lo] {
				copy(kTmp[lo:hi], k)
				copy(iTmp[lo:hi], i)
			}
		}
	})
	return kTmp, iTmp
}

// lsdLocal is radixSort on one worker for a small run (its bits below
// nbits, above base), with a caller's histogram buffer.
func lsdLocal(keys, kTmp []uint64, idx, iTmp []int64, base uint64, nbits uint, h *[1 << radixBits]int) ([]uint64, []int64) {
	const nb = 1 << radixBits
	n := len(keys)
	for shift := uint(0); shift < nbits; shift += radixBits {
		*h = [nb]int{}
		countDigits(keys, base, shift, h)
		sum := 0
		skip := false
		for d := range h {
			c := h[d]
			skip = skip || c == n
			h[d] = sum
			sum += c
		}
		if skip {
			continue
		}
		scatterPairs(keys, idx, kTmp, iTmp, base, shift, h)
		keys, kTmp = kTmp, keys
		idx, iTmp = iTmp, idx
	}
	return keys, idx
}

// sorted holds the result of a radix argsort: the permutation (in out) and
// the sorted keys, valid until release.
type sorted struct {
	keys    []uint64
	release func()
}

// argsortKeys writes into out the stable permutation that sorts a (or, with
// init, that sorts a[init] and composes with init: out[i] = init[p[i]]).
func argsortKeys(env Env, a *pdarray.Array, init []int64, out *pdarray.Array) (sorted, error) {
	n := a.Len()
	var scratch []*pdarray.Array
	release := func() { env.free(scratch...) }
	alloc := func(d pdarray.DType) ([]byte, error) {
		s, err := env.Alloc(d, n)
		if err != nil {
			release()
			return nil, err
		}
		scratch = append(scratch, s)
		return s.Bytes(), nil
	}
	kb, err := alloc(dU64)
	if err != nil {
		return sorted{}, err
	}
	k2, err := alloc(dU64)
	if err != nil {
		return sorted{}, err
	}
	i2, err := alloc(dI64)
	if err != nil {
		return sorted{}, err
	}
	keys, kTmp := pdarray.BytesAs[uint64](kb), pdarray.BytesAs[uint64](k2)
	idx, iTmp := pdarray.View[int64](out), pdarray.BytesAs[int64](i2)
	keysOf(env, a, init, keys)
	env.parallel(n, chunk, func(_, lo, hi int) {
		if init != nil {
			copy(idx[lo:hi], init[lo:hi])
			return
		}
		for i := lo; i < hi; i++ {
			idx[i] = int64(i)
		}
	})
	if n == 0 {
		return sorted{keys: keys, release: release}, nil
	}
	base, nbits := keyRange(env, keys)
	if n >= msdDirect && nbits > 2*radixBits {
		msdArgsort(env, keys, kTmp, idx, iTmp, base, nbits)
		return sorted{keys: keys, release: release}, nil
	}
	sk, si := radixSort(env, keys, kTmp, idx, iTmp, base, nbits)
	if &si[0] != &idx[0] {
		env.parallel(n, chunk, func(_, lo, hi int) { copy(idx[lo:hi], si[lo:hi]) })
	}
	return sorted{keys: sk, release: release}, nil
}

// Argsort writes the stable sorting permutation of a (NaN last) into out
// (int64, a's length). Scratch: 3 × 8 bytes per element, from env.
func Argsort(env Env, a, out *pdarray.Array) error {
	s, err := argsortKeys(env, a, nil, out)
	if err != nil {
		return err
	}
	s.release()
	return nil
}

// Coargsort writes into out the stable permutation that sorts by keys[0],
// then keys[1], ... (np.lexsort(keys[::-1])). All keys have out's length.
func Coargsort(env Env, keys []*pdarray.Array, out *pdarray.Array) error {
	if len(keys) == 0 {
		return errorf(ErrValue, "coargsort needs at least one array")
	}
	if err := Argsort(env, keys[len(keys)-1], out); err != nil {
		return err
	}
	if len(keys) == 1 {
		return nil
	}
	prev, err := env.Alloc(dI64, out.Len())
	if err != nil {
		return err
	}
	defer env.free(prev)
	for k := len(keys) - 2; k >= 0; k-- {
		copy(prev.Bytes(), out.Bytes())
		s, err := argsortKeys(env, keys[k], pdarray.View[int64](prev), out)
		if err != nil {
			return err
		}
		s.release()
	}
	return nil
}

// Sort writes a's elements in ascending order (NaN last) into out (not a),
// as a stable sort does (every bit kept: -0 and +0 and NaN payloads stay in
// input order). Integers and floats sort their keys alone and map them back
// (scratch 8 bytes per element, out the sort's second buffer, for 8-byte
// dtypes; 16 for narrower ones; floats see sortfloat.go).
func Sort(env Env, a, out *pdarray.Array) error {
	n := a.Len()
	if Kind(a.DType()) == 'f' {
		return sortFloat(env, a, out)
	}
	k1, err := env.Alloc(dU64, n)
	if err != nil {
		return err
	}
	defer env.free(k1)
	// out's bytes are the scratch while the keys sort; keysBack then
	// overwrites all of them (a chunk read before it is written, so keys
	// left in out map back in place).
	var tmp []uint64
	if out.DType().Size() == 8 {
		tmp = pdarray.BytesAs[uint64](out.Bytes())
	} else {
		k2, err := env.Alloc(dU64, n)
		if err != nil {
			return err
		}
		defer env.free(k2)
		tmp = pdarray.View[uint64](k2)
	}
	keys := pdarray.View[uint64](k1)
	keysOf(env, a, nil, keys)
	if n > 0 {
		base, nbits := keyRange(env, keys)
		keys = sortKeysOnly(env, keys, tmp, base, nbits)
	}
	keysBack(env, keys, out)
	return nil
}

// keysBack writes the integer values of keys into out.
func keysBack(env Env, keys []uint64, out *pdarray.Array) {
	od := out.DType()
	flip := uint64(0)
	if Kind(od) == 'i' {
		flip = 1 << 63
	}
	env.parallel(len(keys), chunk, func(_, lo, hi int) {
		buf := alignedBuf(chunk * 8)
		os := od.Size()
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			v := pdarray.BytesAs[uint64](buf[:(e-c)*8])
			for i := range v {
				v[i] = keys[c+i] ^ flip
			}
			src := dU64
			if flip != 0 {
				src = dI64
			}
			castBytes(od, out.Bytes()[c*os:e*os], src, buf[:(e-c)*8])
		}
	})
}

// UniqueResult holds unique's outputs, allocated from env and owned by the
// caller; Counts and Inverse are nil unless asked for.
type UniqueResult struct {
	Values, Counts, Inverse *pdarray.Array
}

// Unique returns a's sorted distinct values (NaNs collapse to one, as numpy
// 2's equal_nan), and optionally how often each occurs and, for each
// element of a, the index of its value.
func Unique(env Env, a *pdarray.Array, counts, inverse bool) (UniqueResult, error) {
	if !inverse {
		return uniqueBySort(env, a, counts)
	}
	n := a.Len()
	perm, err := env.Alloc(dI64, n)
	if err != nil {
		return UniqueResult{}, err
	}
	defer env.free(perm)
	s, err := argsortKeys(env, a, nil, perm)
	if err != nil {
		return UniqueResult{}, err
	}
	defer s.release()
	keys, p := s.keys, pdarray.View[int64](perm)
	base := runBases(env, keys)
	ng := base[len(base)-1]
	var res UniqueResult
	fail := func(err error) (UniqueResult, error) {
		env.free(res.Values, res.Counts, res.Inverse)
		return UniqueResult{}, err
	}
	if res.Values, err = env.Alloc(a.DType(), ng); err != nil {
		return fail(err)
	}
	starts, err := env.Alloc(dI64, ng+1)
	if err != nil {
		return fail(err)
	}
	defer func() { env.free(starts) }()
	st := pdarray.View[int64](starts)
	if inverse {
		if res.Inverse, err = env.Alloc(dI64, n); err != nil {
			return fail(err)
		}
	}
	firsts, err := env.Alloc(dI64, ng)
	if err != nil {
		return fail(err)
	}
	defer func() { env.free(firsts) }()
	fi := pdarray.View[int64](firsts)
	var inv []int64
	if inverse {
		inv = pdarray.View[int64](res.Inverse)
	}
	env.parallel(n, 1, func(w, lo, hi int) {
		g := base[w] - 1
		for i := lo; i < hi; i++ {
			if i == 0 || keys[i] != keys[i-1] {
				g++
				st[g] = int64(i)
				fi[g] = p[i]
			}
			if inv != nil {
				inv[p[i]] = int64(g)
			}
		}
	})
	st[ng] = int64(n)
	Take(env, a, firsts, res.Values)
	if counts {
		if res.Counts, err = env.Alloc(dI64, ng); err != nil {
			return fail(err)
		}
		c := pdarray.View[int64](res.Counts)
		for g := range c {
			c[g] = st[g+1] - st[g]
		}
	}
	return res, nil
}

// uniqueSorts counts Unique calls answered from a sort of the values
// (tests check the path).
var uniqueSorts atomic.Uint64

// uniqueBySort is Unique without the inverse: the values sorted (Sort:
// keys alone, 8 or 16 B/element of scratch besides the sorted copy, no
// permutation or gather), then each run of equal values (NaNs one run)
// gives its first element, which a stable sort makes the first in input
// order, as the permutation path picks: the same bits (-0.0 or 0.0, a NaN's
// payload).
func uniqueBySort(env Env, a *pdarray.Array, counts bool) (UniqueResult, error) {
	uniqueSorts.Add(1)
	sorted, err := env.Alloc(a.DType(), a.Len())
	if err != nil {
		return UniqueResult{}, err
	}
	defer env.free(sorted)
	if err := Sort(env, a, sorted); err != nil {
		return UniqueResult{}, err
	}
	switch a.DType() {
	case dI8:
		return uniqueRuns(env, pdarray.View[int8](sorted), a.DType(), counts)
	case dI16:
		return uniqueRuns(env, pdarray.View[int16](sorted), a.DType(), counts)
	case dI32:
		return uniqueRuns(env, pdarray.View[int32](sorted), a.DType(), counts)
	case dI64:
		return uniqueRuns(env, pdarray.View[int64](sorted), a.DType(), counts)
	case dU8, dBool:
		return uniqueRuns(env, pdarray.BytesAs[uint8](sorted.Bytes()), a.DType(), counts)
	case dU16:
		return uniqueRuns(env, pdarray.View[uint16](sorted), a.DType(), counts)
	case dU32:
		return uniqueRuns(env, pdarray.View[uint32](sorted), a.DType(), counts)
	case dU64:
		return uniqueRuns(env, pdarray.View[uint64](sorted), a.DType(), counts)
	case dF32:
		return uniqueRuns(env, pdarray.View[float32](sorted), a.DType(), counts)
	default:
		return uniqueRuns(env, pdarray.View[float64](sorted), a.DType(), counts)
	}
}

// uniqueRuns returns the first element of each run of equal elements of s
// (sorted; NaNs equal here) as an array of dtype d, and the runs' lengths.
func uniqueRuns[T Number](env Env, s []T, d pdarray.DType, counts bool) (UniqueResult, error) {
	n := len(s)
	base := runBases(env, s)
	ng := base[len(base)-1]
	var res UniqueResult
	var err error
	if res.Values, err = env.Alloc(d, ng); err != nil {
		return UniqueResult{}, err
	}
	var c []int64
	if counts {
		if res.Counts, err = env.Alloc(dI64, ng); err != nil {
			env.free(res.Values)
			return UniqueResult{}, err
		}
		c = pdarray.View[int64](res.Counts)
	}
	vals := pdarray.BytesAs[T](res.Values.Bytes())
	env.parallel(n, 1, func(w, lo, hi int) {
		g := base[w] - 1
		for i := lo; i < hi; i++ {
			if i == 0 || !sameOrNaN(s[i], s[i-1]) {
				g++
				vals[g] = s[i]
				if c != nil {
					c[g] = int64(i) // the run's start, for now
				}
			}
		}
	})
	// Starts to lengths, front to back (c[g+1] is still a start when read).
	for g := range c {
		next := int64(n)
		if g+1 < len(c) {
			next = c[g+1]
		}
		c[g] = next - c[g]
	}
	return res, nil
}

func sameOrNaN[T Number](x, y T) bool { return x == y || x != x && y != y }

// runBases counts the runs of equal elements (NaNs equal) of sorted s that
// start in each worker's share (as parallel splits s): base[w] is the
// number starting before worker w's, base[workers] the total.
func runBases[T Number](env Env, s []T) []int {
	n := len(s)
	base := make([]int, numWorkers(env.workers(), n)+1)
	env.parallel(n, 1, func(w, lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			if i == 0 || !sameOrNaN(s[i], s[i-1]) {
				c++
			}
		}
		base[w+1] = c
	})
	for w := 1; w < len(base); w++ {
		base[w] += base[w-1]
	}
	return base
}

// In1d writes into out (bool, a's length) whether each element of a is in b
// (compared in the promoted dtype; NaN is in nothing), negated with invert.
func In1d(env Env, a, b *pdarray.Array, invert bool, out *pdarray.Array) error {
	c := Promote(a.DType(), b.DType())
	if isInt(a.DType()) && isInt(b.DType()) && Kind(c) == 'f' {
		return in1dMixedInts(env, a, b, invert, out)
	}
	bc := b
	if b.DType() != c {
		t, err := env.Alloc(c, b.Len())
		if err != nil {
			return err
		}
		defer env.free(t)
		AsType(env, b, t)
		bc = t
	}
	bk, scratch, freeKeys, err := keyBufs(env, b.Len())
	if err != nil {
		return err
	}
	defer freeKeys()
	keysOf(env, bc, nil, bk)
	if len(bk) > 0 {
		bk, _ = radixSort(env, bk, scratch, nil, nil, 0, 64)
	}
	isFloat := Kind(c) == 'f'
	if isFloat && len(bk) > 0 && bk[len(bk)-1] == math.MaxUint64 {
		bk = bk[:len(bk)-1] // (b's NaNs: NaN is in nothing)
		for len(bk) > 0 && bk[len(bk)-1] == math.MaxUint64 {
			bk = bk[:len(bk)-1]
		}
	}
	set, release, err := newKeySet(env, bk)
	if err != nil {
		return err
	}
	defer release()
	o := pdarray.BytesAs[uint8](out.Bytes())
	flip := uint8(0)
	if invert {
		flip = 1
	}
	src := ArrayOperand(a)
	env.parallel(a.Len(), chunk, func(_, lo, hi int) {
		buf := alignedBuf(chunk * c.Size())
		ka := make([]uint64, chunk)
		for s := lo; s < hi; s += chunk {
			e := min(hi, s+chunk)
			av := load(src, c, s, e, buf)
			tmp, _ := pdarray.Wrap(c, av)
			if tmp == nil { // av is a view into a with an odd offset: copy
				copy(buf, av)
				tmp, _ = pdarray.Wrap(c, buf[:len(av)])
			}
			kk := ka[:e-s]
			keysOf(PlainEnv(1), tmp, nil, kk)
			if isFloat {
				for i, k := range kk {
					o[s+i] = set.has(k)&b2u(k != math.MaxUint64) ^ flip // (NaN: in nothing)
				}
			} else {
				for i, k := range kk {
					o[s+i] = set.has(k) ^ flip
				}
			}
		}
	})
	return nil
}

// keyBufs allocates In1d's set keys and their sort's scratch, n each.
func keyBufs(env Env, n int) (keys, scratch []uint64, free func(), err error) {
	k1, err := env.Alloc(dU64, n)
	if err != nil {
		return nil, nil, nil, err
	}
	k2, err := env.Alloc(dU64, n)
	if err != nil {
		env.free(k1)
		return nil, nil, nil, err
	}
	return pdarray.View[uint64](k1), pdarray.View[uint64](k2), func() { env.free(k1, k2) }, nil
}

// in1dMixedInts is In1d of a signed and an unsigned integer array, whose
// promotion is float64, where int64 and uint64 values near 2^63 round
// together: exact instead, as np.isin is, in uint64 keys. A negative value
// is in no unsigned array, and an unsigned one past MaxInt64 in no signed
// one (which its uint64 key cannot meet).
func in1dMixedInts(env Env, a, b *pdarray.Array, invert bool, out *pdarray.Array) error {
	wide := func(x *pdarray.Array) (*pdarray.Array, func(), error) {
		d := dU64
		if Kind(x.DType()) == 'i' {
			d = dI64
		}
		if x.DType() == d {
			return x, func() {}, nil
		}
		t, err := env.Alloc(d, x.Len())
		if err != nil {
			return nil, nil, err
		}
		AsType(env, x, t)
		return t, func() { env.free(t) }, nil
	}
	bw, freeB, err := wide(b)
	if err != nil {
		return err
	}
	defer freeB()
	bk, scratch, freeKeys, err := keyBufs(env, b.Len())
	if err != nil {
		return err
	}
	defer freeKeys()
	bk = bk[:0]
	if bw.DType() == dI64 {
		for _, v := range pdarray.View[int64](bw) {
			if v >= 0 {
				bk = append(bk, uint64(v))
			}
		}
	} else {
		bk = append(bk, pdarray.View[uint64](bw)...)
	}
	if len(bk) > 0 {
		bk, _ = radixSort(env, bk, scratch[:len(bk)], nil, nil, 0, 64)
	}
	set, release, err := newKeySet(env, bk)
	if err != nil {
		return err
	}
	defer release()
	aw, freeA, err := wide(a)
	if err != nil {
		return err
	}
	defer freeA()
	o := pdarray.BytesAs[uint8](out.Bytes())
	flip := uint8(0)
	if invert {
		flip = 1
	}
	env.parallel(a.Len(), chunk, func(_, lo, hi int) {
		if aw.DType() == dI64 {
			for i, v := range pdarray.View[int64](aw)[lo:hi] {
				o[lo+i] = set.has(uint64(v))&b2u(v >= 0) ^ flip
			}
			return
		}
		for i, v := range pdarray.View[uint64](aw)[lo:hi] {
			o[lo+i] = set.has(v) ^ flip
		}
	})
	return nil
}

// keySet answers membership of sort keys (keysOf) in a sorted set of them:
// a bitmap over their range when it is small (at most four words a key,
// or 32 KiB), else an open-addressing table (twice the keys in
// slots, empty slots holding MaxUint64; whether MaxUint64 itself is in
// the set is kept aside). Either answers a key in a few nanoseconds, where
// the binary search it replaced took one unpredictable branch a level
// (ak.in1d of 10^7 int64 in 334 values, one worker: 424 ms, numpy 62).
type keySet struct {
	lo, span uint64   // bitmap: keys lo..lo+span
	bits     []uint64 // the bitmap, or nil
	slots    []uint64 // the table, or nil
	shift    uint
	mask     uint64
	hasMax   bool
}

func newKeySet(env Env, sorted []uint64) (keySet, func(), error) {
	if len(sorted) == 0 {
		return keySet{span: 0, bits: []uint64{0}}, func() {}, nil // (nothing is in it)
	}
	lo, hi := sorted[0], sorted[len(sorted)-1]
	span := hi - lo
	if words := span/64 + 1; words <= max(4*uint64(len(sorted)), 1<<12) {
		b, err := env.Alloc(dU64, int(words))
		if err != nil {
			return keySet{}, nil, err
		}
		bits := pdarray.View[uint64](b)
		clear(bits)
		for _, k := range sorted {
			d := k - lo
			bits[d>>6] |= 1 << (d & 63)
		}
		return keySet{lo: lo, span: span, bits: bits}, func() { env.free(b) }, nil
	}
	nb := 1
	for 1<<nb < 2*len(sorted) {
		nb++
	}
	t, err := env.Alloc(dU64, 1<<nb)
	if err != nil {
		return keySet{}, nil, err
	}
	ks := keySet{slots: pdarray.View[uint64](t), shift: uint(64 - nb), mask: 1<<nb - 1}
	for i := range ks.slots {
		ks.slots[i] = math.MaxUint64
	}
	for i, k := range sorted {
		if i > 0 && k == sorted[i-1] {
			continue
		}
		if k == math.MaxUint64 {
			ks.hasMax = true
			continue
		}
		h := k * hashMul >> ks.shift
		for ks.slots[h] != math.MaxUint64 {
			h = (h + 1) & ks.mask
		}
		ks.slots[h] = k
	}
	return ks, func() { env.free(t) }, nil
}

// has is 1 when k is in the set, else 0.
func (ks *keySet) has(k uint64) uint8 {
	if ks.bits != nil {
		d := k - ks.lo
		if d > ks.span {
			return 0
		}
		return uint8(ks.bits[d>>6] >> (d & 63) & 1)
	}
	if k == math.MaxUint64 {
		return b2u(ks.hasMax)
	}
	for h := k * hashMul >> ks.shift; ; h = (h + 1) & ks.mask {
		switch ks.slots[h] {
		case k:
			return 1
		case math.MaxUint64:
			return 0
		}
	}
}

// HistogramResult holds histogram's outputs (owned by the caller).
type HistogramResult struct {
	Counts, Edges *pdarray.Array
}

// Histogram counts a's elements in bins equal bins over [lo, hi] (the data's
// range when hasRange is false), with numpy's bin-assignment recipe; edges
// are float64.
func Histogram(env Env, a *pdarray.Array, bins int, hasRange bool, lo, hi float64) (HistogramResult, error) {
	if bins < 1 {
		return HistogramResult{}, errorf(ErrValue, "`bins` must be positive, when an integer")
	}
	denom := 0.0
	if hasRange {
		if lo > hi {
			return HistogramResult{}, errorf(ErrValue, "max must be larger than min in range parameter.")
		}
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo != lo || hi != hi {
			return HistogramResult{}, errorf(ErrValue, "supplied range of [%s, %s] is not finite", pyFloat(lo), pyFloat(hi))
		}
	} else if a.Len() == 0 {
		lo, hi = 0, 1
	} else {
		mn, _, _ := Reduce(env, "min", a, 0)
		mx, _, _ := Reduce(env, "max", a, 0)
		lo, hi = toF64(mn), toF64(mx)
		if Kind(a.DType()) == 'f' && (math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo != lo || hi != hi) {
			return HistogramResult{}, errorf(ErrValue, "autodetected range of [%s, %s] is not finite", pyFloat(lo), pyFloat(hi))
		}
		if isInt(a.DType()) && lo != hi {
			// numpy subtracts integer edges in unsigned arithmetic
			denom = float64(toU64(mx) - toU64(mn))
		}
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
		denom = 0
	}
	if denom == 0 {
		denom = hi - lo
	}
	var res HistogramResult
	var err error
	if res.Counts, err = env.Alloc(dI64, bins); err != nil {
		return res, err
	}
	if res.Edges, err = env.Alloc(dF64, bins+1); err != nil {
		env.free(res.Counts)
		return HistogramResult{}, err
	}
	edges := pdarray.View[float64](res.Edges)
	linspaceInto(1, edges, lo, hi, true)
	for i := 1; i < len(edges); i++ {
		if !(edges[i-1] < edges[i]) {
			// numpy's check: a constant 1e17 or 1e308 has no room for ±0.5
			// (the bin index then divided by a zero width).
			env.free(res.Counts, res.Edges)
			return HistogramResult{}, errorf(ErrValue, "Too many bins for data range. Cannot create %d finite-sized bins.", bins)
		}
	}
	counts := pdarray.View[int64](res.Counts)
	clear(counts) // Env.Alloc may hand out old bytes
	nw := numWorkers(env.workers(), a.Len())
	// Worker 0 counts into the result; the others into scratch from env
	// (bins is the caller's: 10^8 bins are 800 MB a worker, accounted).
	parts := make([][]int64, nw)
	parts[0] = counts
	for w := 1; w < nw; w++ {
		p, free, err := scratchOf[int64](env, bins)
		if err != nil {
			env.free(res.Counts, res.Edges)
			return HistogramResult{}, err
		}
		defer free()
		clear(p)
		parts[w] = p
	}
	src := ArrayOperand(a)
	nf := float64(bins)
	env.parallel(a.Len(), chunk, func(w, l, h int) {
		cnt := parts[w]
		buf := alignedBuf(chunk * 8)
		for s := l; s < h; s += chunk {
			e := min(h, s+chunk)
			xs := pdarray.BytesAs[float64](load(src, dF64, s, e, buf))
			for _, x := range xs {
				if !(x >= lo && x <= hi) {
					continue
				}
				i := int(((x - lo) / denom) * nf)
				if i == bins {
					i--
				}
				if x < edges[i] {
					i--
				}
				if i != bins-1 && x >= edges[i+1] {
					i++
				}
				cnt[i]++
			}
		}
	})
	for _, p := range parts[1:] {
		for i, c := range p {
			counts[i] += c
		}
	}
	return res, nil
}

func toF64(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func toU64(v any) uint64 {
	switch x := v.(type) {
	case int64:
		return uint64(x)
	case uint64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func pyFloat(f float64) string {
	switch {
	case f != f:
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return ftoa(f)
}

// AdjacentEqual writes into mask (bool, len(s)-1) whether s[i] == s[i+1]
// (numpy's ==: NaN equals nothing, -0.0 equals 0.0).
func AdjacentEqual(env Env, s, mask *pdarray.Array) {
	m := pdarray.BytesAs[uint8](mask.Bytes())
	switch s.DType() {
	case dI8:
		adjEq(env, pdarray.View[int8](s), m)
	case dI16:
		adjEq(env, pdarray.View[int16](s), m)
	case dI32:
		adjEq(env, pdarray.View[int32](s), m)
	case dI64:
		adjEq(env, pdarray.View[int64](s), m)
	case dU8, dBool:
		adjEq(env, pdarray.BytesAs[uint8](s.Bytes()), m)
	case dU16:
		adjEq(env, pdarray.View[uint16](s), m)
	case dU32:
		adjEq(env, pdarray.View[uint32](s), m)
	case dU64:
		adjEq(env, pdarray.View[uint64](s), m)
	case dF32:
		adjEq(env, pdarray.View[float32](s), m)
	case dF64:
		adjEq(env, pdarray.View[float64](s), m)
	}
}

func adjEq[T Number](env Env, s []T, m []uint8) {
	env.parallel(len(m), chunk, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			m[i] = b2u(s[i] == s[i+1])
		}
	})
}

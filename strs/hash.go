package strs

import (
	"bytes"

	"github.com/arktos-dev/arktos/internal/par"
	"math/bits"

	"github.com/zeebo/xxh3"

	"github.com/arktos-dev/arktos/ops"
)

// Hash writes each string's 128-bit XXH3 hash, high and low halves
// (Arkouda's Strings.hash gives two uint64 arrays; its values are its own,
// SipHash's).
func Hash(env ops.Env, s Strs, hi64, lo64 []uint64) {
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			h := xxh3.Hash128(s.At(i))
			hi64[i], lo64[i] = h.Hi, h.Lo
		}
	})
}

// table is an open-addressing set of strings, stored as row numbers into
// one Strs with their 64-bit hashes; equal hashes are told apart by
// comparing the bytes, so membership is exact.
type table struct {
	s     Strs
	hash  []uint64 // of s's rows
	slots []int32  // row+1, 0 empty
	mask  uint64
}

func newTable(n int) *table {
	size := 1 << bits.Len(uint(2*n+1))
	return &table{slots: make([]int32, size), mask: uint64(size - 1)}
}

// insert returns the row holding s.At(row)'s string, inserting row if
// the string is new.
func (t *table) insert(row int) (int, bool) {
	h := t.hash[row]
	b := t.s.At(row)
	for k := h & t.mask; ; k = (k + 1) & t.mask {
		r := t.slots[k]
		if r == 0 {
			t.slots[k] = int32(row + 1)
			return row, true
		}
		if o := int(r - 1); t.hash[o] == h && bytes.Equal(t.s.At(o), b) {
			return o, false
		}
	}
}

// find returns the row of t holding b (hash h), or -1.
func (t *table) find(h uint64, b []byte) int {
	for k := h & t.mask; ; k = (k + 1) & t.mask {
		r := t.slots[k]
		if r == 0 {
			return -1
		}
		if o := int(r - 1); t.hash[o] == h && bytes.Equal(t.s.At(o), b) {
			return o
		}
	}
}

func hashes(env ops.Env, s Strs) []uint64 {
	h := make([]uint64, s.Len())
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			h[i] = xxh3.Hash(s.At(i))
		}
	})
	return h
}

// maxRows is the most strings a hash table here indexes (int32 rows).
const maxRows = 1<<31 - 2

// In1d writes whether each string of a is in b (exact).
func In1d(env ops.Env, a, b Strs, invert bool, out []bool) error {
	if b.Len() > maxRows {
		return errorf(ops.ErrValue, "in1d: the second array has %d strings, more than %d", b.Len(), maxRows)
	}
	t := newTable(b.Len())
	t.s, t.hash = b, hashes(env, b)
	for i := range b.Len() {
		t.insert(i)
	}
	envBlocks(env, a.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x := a.At(i)
			out[i] = (t.find(xxh3.Hash(x), x) >= 0) != invert
		}
	})
	return nil
}

// Factorize numbers the distinct strings of s: codes[i] is string i's
// number, first[k] the first row holding distinct string k, numbered in
// order of first appearance. Rows are split among workers by hash, each
// worker's table holding its share, so the build runs on every worker.
func Factorize(env ops.Env, s Strs, codes []int64) (first []int64, err error) {
	n := s.Len()
	if n > maxRows {
		return nil, errorf(ops.ErrValue, "unique: %d strings, more than %d", n, maxRows)
	}
	h := hashes(env, s)
	nw := nblocks(env.Workers, n)
	parts := 1
	for parts < nw {
		parts <<= 1
	}
	shift := uint(64 - bits.Len(uint(parts-1)))
	if parts == 1 {
		shift = 0
	}
	part := func(x uint64) int {
		if parts == 1 {
			return 0
		}
		return int(x >> shift)
	}
	// Each part's worker numbers its own strings locally, in row order.
	local := make([][]int64, parts) // part's distinct strings' first rows
	each(parts, func(p int) {
		t := newTable(n / parts)
		t.s, t.hash = s, h
		var firsts []int64
		for i := range n {
			if part(h[i]) != p {
				continue
			}
			r, isNew := t.insert(i)
			if isNew {
				codes[i] = int64(len(firsts))
				firsts = append(firsts, int64(i))
			} else {
				codes[i] = codes[r]
			}
		}
		local[p] = firsts
	})
	// Renumber in order of first appearance: sort the distinct strings'
	// first rows (a merge of the parts' ascending lists).
	total := 0
	for _, l := range local {
		total += len(l)
	}
	first = make([]int64, 0, total)
	pos := make([]int, parts)
	renum := make([][]int64, parts)
	for p := range parts {
		renum[p] = make([]int64, len(local[p]))
	}
	for len(first) < total {
		best := -1
		for p := range parts {
			if pos[p] < len(local[p]) && (best < 0 || local[p][pos[p]] < local[best][pos[best]]) {
				best = p
			}
		}
		renum[best][pos[best]] = int64(len(first))
		first = append(first, local[best][pos[best]])
		pos[best]++
	}
	envBlocks(env, n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			codes[i] = renum[part(h[i])][codes[i]]
		}
	})
	return first, nil
}

// each runs f(0) … f(k-1), one goroutine each.
func each(k int, f func(i int)) {
	if k == 1 {
		f(0)
		return
	}
	var g par.Group
	for i := range k {
		g.Go(func() { f(i) })
	}
	g.Wait()
}

// CountCodes adds up how often each code in [0, k) occurs into counts
// (len k): one count array per worker, merged, where k is small beside
// the rows; one pass otherwise.
func CountCodes(env ops.Env, codes []int64, k int, counts []int64) {
	nb := nblocks(env.Workers, len(codes))
	if nb == 1 || k > len(codes)/(4*nb) {
		for _, c := range codes {
			counts[c]++
		}
		return
	}
	local := make([][]int64, nb)
	envBlocks(env, len(codes), func(w, lo, hi int) {
		l := make([]int64, k)
		for _, c := range codes[lo:hi] {
			l[c]++
		}
		local[w] = l
	})
	for _, l := range local {
		for j, v := range l {
			counts[j] += v
		}
	}
}

package strs

import (
	"bytes"
	"cmp"
	"slices"
	"sync/atomic"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// prefix is 8 bytes of b from byte at, big-endian, zero-padded: keys that
// order as the bytes do (ties then compare the rest).
func prefix(b []byte, at int) uint64 {
	var k uint64
	for j := range 8 {
		k <<= 8
		if at+j < len(b) {
			k |= uint64(b[at+j])
		}
	}
	return k
}

// smallRun is the run length below which ties are sorted by comparing the
// strings whole.
const smallRun = 32

// Argsort writes into out (int64, s.Len()) the stable permutation that
// sorts s as Python sorts str (by code point, i.e. UTF-8 bytes). The first
// 8 bytes of every string are radix-sorted as one uint64 key (ops.Argsort,
// on all workers); each run of equal keys is then sorted by the next 8
// bytes, and so on, runs shared among workers.
func Argsort(env ops.Env, s Strs, out *pdarray.Array) error {
	n := s.Len()
	keysA, err := env.Alloc(pdarray.Uint64, n)
	if err != nil {
		return err
	}
	defer env.Free(keysA)
	keys := pdarray.View[uint64](keysA)
	envBlocks(env, n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			keys[i] = prefix(s.At(i), 0)
		}
	})
	if err := ops.Argsort(env, keysA, out); err != nil {
		return err
	}
	idx := pdarray.View[int64](out)
	// Runs of equal keys with a string longer than the key need more.
	type run struct{ lo, hi int }
	var runs []run
	for i := 0; i < n; {
		j := i + 1
		long := s.Off[idx[i]+1]-s.Off[idx[i]] > 8
		for j < n && keys[idx[j]] == keys[idx[i]] {
			long = long || s.Off[idx[j]+1]-s.Off[idx[j]] > 8
			j++
		}
		// Strings of 8 bytes or fewer with equal keys may still differ by
		// trailing NULs ("a" and "a\x00"); a whole compare settles those
		// (below, one worker: such runs are rare).
		switch {
		case j-i < 2:
		case long:
			runs = append(runs, run{i, j})
		case hasNUL(s, idx[i:j]):
			compareSort(s, idx[i:j])
		}
		i = j
	}
	// Workers take runs, longest first, off a shared counter.
	slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(b.hi-b.lo, a.hi-a.lo) })
	var next atomic.Int64
	take := func() (run, bool) {
		k := next.Add(1) - 1
		if int(k) >= len(runs) {
			return run{}, false
		}
		return runs[k], true
	}
	each(max(min(env.Workers, len(runs)), 1), func(int) {
		for {
			r, ok := take()
			if !ok {
				return
			}
			sortRun(s, idx[r.lo:r.hi], 8)
		}
	})
	return nil
}

func hasNUL(s Strs, rows []int64) bool {
	for _, r := range rows {
		if bytes.IndexByte(s.At(int(r)), 0) >= 0 {
			return true
		}
	}
	return false
}

type pair struct {
	key uint64
	row int64
}

// compareSort stably sorts rows by comparing their strings whole (the
// rows agree on a prefix, but one may be shorter than it: "a", "a\x00").
func compareSort(s Strs, rows []int64) {
	slices.SortStableFunc(rows, func(a, b int64) int { return bytes.Compare(s.At(int(a)), s.At(int(b))) })
}

// sortRun stably sorts rows, whose strings agree on their first depth
// bytes, by the rest.
func sortRun(s Strs, rows []int64, depth int) {
	if len(rows) <= smallRun {
		compareSort(s, rows)
		return
	}
	pairs := make([]pair, len(rows))
	for i, r := range rows {
		pairs[i] = pair{prefix(s.At(int(r)), depth), r}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.key, b.key) })
	for i, p := range pairs {
		rows[i] = p.row
	}
	for i := 0; i < len(rows); {
		j := i + 1
		long := s.Off[rows[i]+1]-s.Off[rows[i]] > int64(depth+8)
		for j < len(rows) && pairs[j].key == pairs[i].key {
			long = long || s.Off[rows[j]+1]-s.Off[rows[j]] > int64(depth+8)
			j++
		}
		switch {
		case j-i < 2:
		case long:
			sortRun(s, rows[i:j], depth+8)
		case hasNUL(s, rows[i:j]):
			compareSort(s, rows[i:j])
		}
		i = j
	}
}

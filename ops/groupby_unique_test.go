package ops

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestGroupUnique checks each group's distinct values (and pairs of
// values) against a map per group, sorted, at 1, 2 and 8 workers: few and
// many groups, empty groups, dropped rows (-1), NaN values skipped, and a
// value range wide enough that the inner grouping hashes or sorts.
func TestGroupUnique(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 50000
	type pair struct {
		a int64
		b float64
	}
	for _, c := range []struct {
		ng, span int
		path     string // of the values alone
	}{{1, 7, UniqueBitmap}, {5, 300, UniqueBitmap}, {30000, 4, UniqueBitmap}, {200, 1 << 40, UniqueSort},
		{40, 1 << 62, UniqueGrouped}, {30000, 1 << 20, UniqueSort}} {
		ids := randomIDs(r, n, c.ng)
		gid := pdarray.View[int32](ids)
		a := make([]int64, n)
		b := make([]float64, n)
		for i := range a {
			a[i] = r.Int64N(int64(c.span)) - int64(c.span/2)
			b[i] = float64(r.IntN(3))
			if r.IntN(20) == 0 {
				b[i] = math.NaN()
			}
		}
		// The reference: distinct a, and distinct (a, b) without NaN, per group.
		one := make([]map[int64]bool, c.ng)
		two := make([]map[pair]bool, c.ng)
		for g := range one {
			one[g], two[g] = map[int64]bool{}, map[pair]bool{}
		}
		for i, g := range gid {
			if g < 0 {
				continue
			}
			one[g][a[i]] = true
			if !math.IsNaN(b[i]) {
				two[g][pair{a[i], b[i]}] = true
			}
		}
		var wantSeg1, wantSeg2, wantA []int64
		var wantPairs []pair
		for g := range one {
			wantSeg1 = append(wantSeg1, int64(len(wantA)))
			wantA = append(wantA, slices.Sorted(func(yield func(int64) bool) {
				for v := range one[g] {
					if !yield(v) {
						return
					}
				}
			})...)
			wantSeg2 = append(wantSeg2, int64(len(wantPairs)))
			ps := make([]pair, 0, len(two[g]))
			for p := range two[g] {
				ps = append(ps, p)
			}
			slices.SortFunc(ps, func(x, y pair) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
			wantPairs = append(wantPairs, ps...)
		}
		av, bv := pdarray.FromSlice(a), pdarray.FromSlice(b)
		for _, w := range []int{1, 2, 8} {
			r, err := GroupUnique(PlainEnv(w), ids, c.ng, []*pdarray.Array{av})
			if err != nil {
				t.Fatal(err)
			}
			segs, out := r.Segments, r.Values
			if r.Path != c.path {
				t.Errorf("%d groups, span %d: path %s, want %s", c.ng, c.span, r.Path, c.path)
			}
			if !slices.Equal(pdarray.View[int64](segs), wantSeg1) || !slices.Equal(pdarray.View[int64](out[0]), wantA) {
				t.Fatalf("%d groups, span %d, %d workers: distinct values differ", c.ng, c.span, w)
			}
			r, err = GroupUnique(PlainEnv(w), ids, c.ng, []*pdarray.Array{av, bv})
			if err != nil {
				t.Fatal(err)
			}
			segs, out = r.Segments, r.Values
			ga, gb := pdarray.View[int64](out[0]), pdarray.View[float64](out[1])
			got := make([]pair, len(ga))
			for i := range ga {
				got[i] = pair{ga[i], gb[i]}
			}
			if !slices.Equal(pdarray.View[int64](segs), wantSeg2) || !slices.Equal(got, wantPairs) {
				t.Fatalf("%d groups, span %d, %d workers: distinct pairs differ", c.ng, c.span, w)
			}
		}
	}
	// No rows at all; values of another length; ids that are not int32.
	e, err := GroupUnique(PlainEnv(2), pdarray.FromSlice([]int32{}), 3, []*pdarray.Array{pdarray.FromSlice([]int64{})})
	if err != nil || !slices.Equal(pdarray.View[int64](e.Segments), []int64{0, 0, 0}) || e.Values[0].Len() != 0 {
		t.Fatalf("empty: %v", err)
	}
	if _, err := GroupUnique(PlainEnv(1), ids1(), 1, []*pdarray.Array{pdarray.FromSlice([]int64{1, 2})}); err == nil {
		t.Fatal("values of another length accepted")
	}
	if _, err := GroupUnique(PlainEnv(1), pdarray.FromSlice([]int64{0}), 1, []*pdarray.Array{pdarray.FromSlice([]int64{1})}); err == nil {
		t.Fatal("int64 ids accepted")
	}
	if _, err := GroupUnique(PlainEnv(1), ids1(), 1, nil); err == nil {
		t.Fatal("no values accepted")
	}
}

// BenchmarkGroupUnique: 10^7 rows, 10^5 groups, values from 1000 (about
// 95 distinct a group: the sort path) and from 50 (the bitmap path).
func BenchmarkGroupUnique(b *testing.B) {
	const n = 10_000_000
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(100_000))
	}
	ia := pdarray.FromSlice(ids)
	for _, span := range []int64{1000, 50} {
		v := make([]int64, n)
		for i := range v {
			v[i] = r.Int64N(span)
		}
		va := pdarray.FromSlice(v)
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("span=%d/workers=%d", span, w), func(b *testing.B) {
				b.SetBytes(n * 12)
				for b.Loop() {
					if _, err := GroupUnique(PlainEnv(w), ia, 100_000, []*pdarray.Array{va}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

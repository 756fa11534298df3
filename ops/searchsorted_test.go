package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestSearchSorted: each value's place in a sorted array (NaN last, ties
// to the left or right) equals a linear count, across a promotion
// (int32 values in float64 keys) and on a worker count that splits v.
func TestSearchSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	a := make([]float64, 1000)
	for i := range a {
		switch {
		case i%97 == 0:
			a[i] = math.NaN()
		default:
			a[i] = float64(r.IntN(50))
		}
	}
	sorted := slices.Clone(a)
	slices.SortFunc(sorted, func(x, y float64) int {
		switch {
		case x != x:
			if y != y {
				return 0
			}
			return 1
		case y != y:
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	v := make([]int32, 100_000)
	for i := range v {
		v[i] = int32(r.IntN(60) - 5)
	}
	for _, right := range []bool{false, true} {
		out, _ := pdarray.Alloc(pdarray.Int64, len(v))
		if err := SearchSorted(PlainEnv(4), pdarray.FromSlice(sorted), pdarray.FromSlice(v), right, out); err != nil {
			t.Fatal(err)
		}
		got := pdarray.View[int64](out)
		for i, x := range v {
			want := 0
			for _, y := range sorted { // numbers below x (or not above it, right); NaN is above all
				if y == y && (float64(x) > y || right && float64(x) == y) {
					want++
				}
			}
			if got[i] != int64(want) {
				t.Fatalf("right=%v: %d goes at %d, want %d", right, x, got[i], want)
			}
		}
	}
	nan, _ := pdarray.Alloc(pdarray.Int64, 1)
	if err := SearchSorted(PlainEnv(1), pdarray.FromSlice(sorted), pdarray.FromSlice([]float64{math.NaN()}), false, nan); err != nil ||
		pdarray.View[int64](nan)[0] != int64(len(sorted)-countNaN(pdarray.FromSlice(sorted))) {
		t.Errorf("NaN goes at %d (%v), want the first NaN's place", pdarray.View[int64](nan)[0], err)
	}
	if err := SearchSorted(PlainEnv(1), pdarray.FromSlice([]bool{true}), pdarray.FromSlice([]bool{true}), false, nan); err == nil {
		t.Error("bool arrays were not refused")
	}
}

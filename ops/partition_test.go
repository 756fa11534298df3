package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestRangePartition checks every row's range and order against a plain
// loop, for integer and float keys (NaN to the last range), over worker
// counts that split the rows differently, with a second array carried
// along.
func TestRangePartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, 100_003} {
		keys := make([]float64, n)
		for i := range keys {
			keys[i] = float64(rng.IntN(50))
			if i%11 == 0 {
				keys[i] = math.NaN()
			}
		}
		ikeys := make([]int16, n)
		rows := make([]int64, n)
		for i := range rows {
			rows[i] = int64(i)
			ikeys[i] = int16(rng.IntN(200) - 100)
		}
		for _, workers := range []int{1, 3, 8} {
			env := PlainEnv(workers)
			check := func(key *pdarray.Array, rangeOf func(i int) int, cuts []Scalar) {
				t.Helper()
				outs, err := RangePartition(env, key, cuts, []*pdarray.Array{pdarray.FromSlice(rows)})
				if err != nil {
					t.Fatal(err)
				}
				want := make([][]int64, len(cuts)+1)
				for i := range n {
					want[rangeOf(i)] = append(want[rangeOf(i)], int64(i))
				}
				for r := range want {
					got := pdarray.View[int64](outs[r][0])
					if !slices.Equal(got, want[r]) && !(len(got) == 0 && len(want[r]) == 0) {
						t.Fatalf("n=%d workers=%d range %d: %d rows, want %d", n, workers, r, len(got), len(want[r]))
					}
				}
			}
			fcuts := []float64{10, 10, 30}
			check(pdarray.FromSlice(keys), func(i int) int {
				r := 0
				for _, c := range fcuts {
					if !(keys[i] < c) {
						r++
					}
				}
				return r
			}, []Scalar{{K: 'f', F: 10}, {K: 'f', F: 10}, {K: 'f', F: 30}})
			check(pdarray.FromSlice(ikeys), func(i int) int {
				if ikeys[i] < -5 {
					return 0
				}
				return 1
			}, []Scalar{{K: 'i', I: -5}})
		}
	}
	if _, err := RangePartition(PlainEnv(1), pdarray.FromSlice([]bool{true}), nil, nil); err == nil {
		t.Error("a bool key was taken")
	}
}

// BenchmarkRangePartition: one locale's cut of 5·10^6 int64 rows (a key
// and a second array) into 2 ranges, on one worker, against a plain copy
// of the same bytes (the ceiling: every byte is read once and written
// once).
func BenchmarkRangePartition(b *testing.B) {
	const n = 5_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = rng.Int64()
	}
	key := pdarray.FromSlice(keys)
	vals := pdarray.FromSlice(slices.Clone(keys))
	c, _ := ScalarOf(int64(1 << 62))
	cuts := []Scalar{c}
	env := PlainEnv(1)
	b.Run("partition", func(b *testing.B) {
		b.SetBytes(2 * n * 8)
		for b.Loop() {
			if _, err := RangePartition(env, key, cuts, []*pdarray.Array{key, vals}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(2 * n * 8)
		for b.Loop() {
			_ = slices.Clone(keys)
			_ = slices.Clone(keys)
		}
	})
}

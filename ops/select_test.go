package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestOrderStats: every rank asked for equals the sorted array's element
// there (NaN last, as Sort), bit for bit, on shapes that trip selection up:
// sorted, reversed, all equal, few distinct values, organ pipes, NaNs.
func TestOrderStats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := map[string]func(n int) []float64{
		"random":   func(n int) []float64 { return randFloats(r, n, func() float64 { return r.NormFloat64() * 100 }) },
		"few":      func(n int) []float64 { return randFloats(r, n, func() float64 { return float64(r.IntN(3)) }) },
		"equal":    func(n int) []float64 { return randFloats(r, n, func() float64 { return 7 }) },
		"sorted":   func(n int) []float64 { return randFloats(r, n, nil) },
		"reversed": func(n int) []float64 { x := randFloats(r, n, nil); slices.Reverse(x); return x },
		"pipes": func(n int) []float64 {
			x := randFloats(r, n, nil)
			for i := n / 2; i < n; i++ {
				x[i] = float64(n - i)
			}
			return x
		},
		"nans": func(n int) []float64 {
			return randFloats(r, n, func() float64 {
				if r.IntN(4) == 0 {
					return math.NaN()
				}
				return r.NormFloat64()
			})
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{1, 2, 17, 1000, 100_001, 300_000} {
			x := shape(n)
			ranks := []int{0, n - 1, n / 2, (n - 1) / 2, n / 3, n / 2, 0}
			for range 20 {
				ranks = append(ranks, r.IntN(n))
			}
			check(t, name, pdarray.FromSlice(x), ranks)
			check(t, name, pdarray.FromSlice(x), nil) // (the NaN count only)
			// Few runs of ranks, as np.median and np.quantile ask: brackets.
			check(t, name, pdarray.FromSlice(x), []int{n / 2, (n - 1) / 2, n - 1})
			check(t, name, pdarray.FromSlice(x), []int{n / 10, min(n/10+1, n-1), 0, n - 1})
			check(t, name, pdarray.FromSlice(castSlice[float64, float32](x)), ranks)
			if name != "nans" {
				check(t, name, pdarray.FromSlice(castSlice[float64, int8](x)), ranks)
				check(t, name, pdarray.FromSlice(castSlice[float64, int64](x)), ranks)
				check(t, name, pdarray.FromSlice(castSlice[float64, uint16](x)), ranks)
			}
		}
	}
	// Brackets answer where they apply: a random float64 array of 300,000
	// and the median's ranks, with and without NaNs.
	for _, name := range []string{"random", "nans"} {
		copies := selectCopies.Load()
		n := 300_000
		check(t, name, pdarray.FromSlice(shapes[name](n)), []int{n/2 - 1, n / 2, n - 1})
		if selectCopies.Load() != copies {
			t.Errorf("%s: the median's ranks of %d float64 were answered by copySelect, not by brackets", name, n)
		}
	}
	// Sixteen workers keep about n/4 in all (a quarter of each share): a
	// limit of n/3 elements of scratch still lets brackets answer (it had
	// reserved n/8 for each worker: 2n).
	n := 300_000
	x := shapes["random"](n)
	env := PlainEnv(16)
	env.Alloc = func(d pdarray.DType, k int) (*pdarray.Array, error) {
		if k > n/3 {
			return nil, errorf(ErrValue, "test limit: %d elements", k)
		}
		return pdarray.Alloc(d, k)
	}
	copies := selectCopies.Load()
	got, _, err := OrderStats(env, pdarray.FromSlice(x), []int{n / 2})
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	if err != nil || got[0] != sorted[n/2] || selectCopies.Load() != copies {
		t.Errorf("16 workers, scratch limited to n/3: %v %v (copies %d), want %v by brackets", got, err, selectCopies.Load()-copies, sorted[n/2])
	}
	if _, _, err := OrderStats(PlainEnv(1), pdarray.FromSlice([]int64{1, 2}), []int{2}); err == nil {
		t.Error("a rank past the end was not refused")
	}
	if _, _, err := OrderStats(PlainEnv(1), pdarray.FromSlice([]bool{true}), []int{0}); err == nil {
		t.Error("a bool array was not refused")
	}
}

func randFloats(r *rand.Rand, n int, f func() float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		if f == nil {
			x[i] = float64(i)
		} else {
			x[i] = f()
		}
	}
	return x
}

func castSlice[F, T Number](x []F) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = T(v)
	}
	return out
}

// check compares OrderStats with Sort's answer at each rank.
func check(t *testing.T, name string, a *pdarray.Array, ranks []int) {
	t.Helper()
	env := PlainEnv(2)
	sorted, _ := env.Alloc(a.DType(), a.Len())
	if err := Sort(env, a, sorted); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(a.Bytes())
	got, nans, err := OrderStats(env, a, ranks)
	if err != nil {
		t.Fatalf("%s %v n=%d: %v", name, a.DType(), a.Len(), err)
	}
	if want := countNaN(a); nans != want {
		t.Fatalf("%s %v n=%d: %d NaNs, want %d", name, a.DType(), a.Len(), nans, want)
	}
	if !slices.Equal(a.Bytes(), before) {
		t.Fatalf("%s %v: the array was changed", name, a.DType())
	}
	for i, r := range ranks {
		if w := sortedAt(sorted, r); !same(got[i], w) {
			t.Fatalf("%s %v n=%d rank %d: %v, want %v", name, a.DType(), a.Len(), r, got[i], w)
		}
	}
}

// sortedAt reads sorted[r] as OrderStats replies it.
func sortedAt(sorted *pdarray.Array, r int) any {
	switch sorted.DType() {
	case pdarray.Float64:
		return pdarray.View[float64](sorted)[r]
	case pdarray.Float32:
		return float64(pdarray.View[float32](sorted)[r])
	case pdarray.Int8:
		return int64(pdarray.View[int8](sorted)[r])
	case pdarray.Int64:
		return pdarray.View[int64](sorted)[r]
	case pdarray.Uint16:
		return uint64(pdarray.View[uint16](sorted)[r])
	}
	panic("sortedAt: dtype not in the test")
}

func countNaN(a *pdarray.Array) int {
	n := 0
	switch a.DType() {
	case pdarray.Float64:
		for _, v := range pdarray.View[float64](a) {
			if v != v {
				n++
			}
		}
	case pdarray.Float32:
		for _, v := range pdarray.View[float32](a) {
			if v != v {
				n++
			}
		}
	}
	return n
}

func same(a, b any) bool {
	if x, ok := a.(float64); ok {
		y := b.(float64)
		return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y
	}
	return a == b
}

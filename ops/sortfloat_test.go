package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// stableRef sorts like np.sort(kind="stable"): NaN last, ties (-0 == +0)
// and NaNs in input order.
func stableRef(x []float64) []float64 {
	out := slices.Clone(x)
	slices.SortStableFunc(out, func(a, b float64) int {
		an, bn := a != a, b != b
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	return out
}

func floatSample(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	edge := []float64{math.NaN(), math.Float64frombits(0xfff8_0000_0000_0001), math.Float64frombits(0x7ff0_dead_beef_0001),
		math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64}
	x := make([]float64, n)
	for i := range x {
		switch r.IntN(6) {
		case 0:
			x[i] = edge[r.IntN(len(edge))]
		case 1:
			x[i] = float64(r.IntN(5) - 2) // many ties
		default:
			x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
		}
	}
	return x
}

// TestSortFloatsBitExact: the keys-only float sort equals a stable reference
// bit for bit (NaN payloads, signed zeros), for float64 and float32, at 1, 2
// and 8 workers and sizes around the parallel threshold.
func TestSortFloatsBitExact(t *testing.T) {
	before := msdSorts.Load()
	defer func() {
		if msdSorts.Load() == before {
			t.Error("no float sort took msdSortKeys' bucketed top level")
		}
	}()
	for _, n := range []int{0, 1, 2, 17, 1000, minPar + 3, 3 * minPar, 300_000} {
		x := floatSample(n, uint64(n))
		want := stableRef(x)
		for _, workers := range []int{1, 2, 8} {
			env := PlainEnv(workers)
			a := pdarray.FromSlice(x)
			out, _ := pdarray.Alloc(pdarray.Float64, n)
			if err := Sort(env, a, out); err != nil {
				t.Fatal(err)
			}
			got := pdarray.View[float64](out)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d workers=%d: element %d is %x, want %x", n, workers, i, math.Float64bits(got[i]), math.Float64bits(want[i]))
				}
			}
			x32 := make([]float32, n)
			for i, v := range x {
				x32[i] = float32(v)
			}
			want32 := make([]float64, n)
			for i, v := range x32 {
				want32[i] = float64(v)
			}
			ref := stableRef(want32)
			out32, _ := pdarray.Alloc(pdarray.Float32, n)
			if err := Sort(env, pdarray.FromSlice(x32), out32); err != nil {
				t.Fatal(err)
			}
			g32 := pdarray.View[float32](out32)
			for i := range ref {
				// NaN payloads survive float32 → float64 → compare as float32 bits.
				if math.Float32bits(g32[i]) != math.Float32bits(float32(ref[i])) && !(ref[i] != ref[i] && g32[i] != g32[i]) {
					t.Fatalf("float32 n=%d workers=%d: element %d is %v, want %v", n, workers, i, g32[i], ref[i])
				}
			}
		}
	}
}

// TestRadixSortMSD: the top-digit split with local LSD passes sorts keys
// and their idx exactly as the global LSD sort (stably), for uniform,
// skewed and duplicated keys, at several worker counts.
func TestRadixSortMSD(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	n := msdMin + 12345
	for _, c := range []string{"uniform55", "skewed", "dups", "narrow"} {
		keys := make([]uint64, n)
		for i := range keys {
			switch c {
			case "uniform55":
				keys[i] = r.Uint64() >> 9
			case "skewed": // most keys in the lowest top-digit bucket
				keys[i] = r.Uint64() >> uint(9+r.IntN(40))
			case "dups":
				keys[i] = uint64(r.IntN(1000)) << 30
			case "narrow":
				keys[i] = 1<<40 + uint64(r.IntN(1<<20))
			}
		}
		for _, w := range []int{1, 2, 8} {
			env := PlainEnv(w)
			base, nbits := keyRange(env, keys)
			idx := make([]int64, n)
			for i := range idx {
				idx[i] = int64(i)
			}
			wk, wi := radixSort(env, slices.Clone(keys), make([]uint64, n), slices.Clone(idx), make([]int64, n), base, nbits)
			before := msdPasses.Load()
			gk, gi := radixSortMSD(env, slices.Clone(keys), make([]uint64, n), slices.Clone(idx), make([]int64, n), base, nbits)
			if took := msdPasses.Load() != before; took != (nbits > 2*radixBits) {
				t.Fatalf("%s w=%d: MSD split taken %v with %d bits", c, w, took, nbits)
			}
			if !slices.Equal(gk, wk) || !slices.Equal(gi, wi) {
				t.Fatalf("%s w=%d: MSD sort differs from the LSD sort", c, w)
			}
		}
	}
}

// TestSortScratch: Sort takes 8 bytes a element of scratch for 8-byte
// dtypes (out is the sort's second buffer) and 16 for narrower ones, and
// its answer is still the stable reference's (keys left in out by the LSD
// passes map back in place: the narrow int64 range).
func TestSortScratch(t *testing.T) {
	n := 200_000
	r := rand.New(rand.NewPCG(3, 3))
	i64 := make([]int64, n)
	narrow := make([]int64, n)
	for i := range i64 {
		i64[i] = int64(r.Uint64())
		narrow[i] = int64(r.IntN(5000)) - 2500
	}
	f64 := floatSample(n, 9)
	f64n := make([]float64, n) // a range of 11 bits: one LSD pass, whose keys end in out
	for i := range f64n {
		f64n[i] = math.Float64frombits(math.Float64bits(1) + r.Uint64N(1<<11))
		if i%97 == 0 {
			f64n[i] = []float64{0, math.Copysign(0, -1), math.NaN()}[i%3]
		}
	}
	f32 := make([]float32, n)
	for i, v := range f64 {
		f32[i] = float32(v)
	}
	for _, c := range []struct {
		name    string
		a       *pdarray.Array
		scratch int64
	}{{"int64", pdarray.FromSlice(i64), 8}, {"int64-narrow", pdarray.FromSlice(narrow), 8},
		{"float64", pdarray.FromSlice(f64), 8}, {"float64-narrow", pdarray.FromSlice(f64n), 8}, {"float32", pdarray.FromSlice(f32), 16},
		{"int16", pdarray.FromSlice(make([]int16, n)), 16}} {
		var scratch int64
		out, _ := pdarray.Alloc(c.a.DType(), n)
		if err := Sort(countingEnv(&scratch), c.a, out); err != nil {
			t.Fatal(err)
		}
		if scratch != c.scratch*int64(n) {
			t.Errorf("%s: %d bytes of scratch, want %d a element", c.name, scratch, c.scratch)
		}
		switch c.name {
		case "int64", "int64-narrow":
			want := slices.Clone(pdarray.View[int64](c.a))
			slices.Sort(want)
			if !slices.Equal(pdarray.View[int64](out), want) {
				t.Errorf("%s: not sorted", c.name)
			}
		case "float64", "float64-narrow":
			want := stableRef(pdarray.View[float64](c.a))
			for i, v := range pdarray.View[float64](out) {
				if math.Float64bits(v) != math.Float64bits(want[i]) {
					t.Fatalf("%s: element %d is %v, want %v", c.name, i, v, want[i])
				}
			}
		}
	}
}

package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestLookup checks both paths against a map: tables of small and wide
// ranges (dense, hash), negative values, narrow and unsigned dtypes, keys
// missing from the table, at 1, 2 and 8 workers; a repeated table value is
// reported with its row, and mismatched dtypes are refused.
func TestLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name      string
		tableVals func(m int) []int64
		path      string
	}{
		{"dense", func(m int) []int64 { return permInts(rng, m, -50) }, LookupDense},
		{"hash", func(m int) []int64 {
			v := permInts(rng, m, 0)
			for i := range v {
				v[i] = v[i]*1_000_003 - 1<<40
			}
			return v
		}, LookupHash},
	} {
		for _, m := range []int{1, 265, 5000} {
			tv := c.tableVals(m)
			row := map[int64]int64{}
			for i, v := range tv {
				row[v] = int64(i)
			}
			n := minPar*2 + 11
			kv := make([]int64, n)
			for j := range kv {
				if rng.IntN(4) == 0 {
					kv[j] = tv[rng.IntN(m)] + 1 + int64(rng.IntN(3)) // mostly missing
				} else {
					kv[j] = tv[rng.IntN(m)]
				}
			}
			want := make([]int64, n)
			for j, k := range kv {
				if r, ok := row[k]; ok {
					want[j] = r
				} else {
					want[j] = -1
				}
			}
			for _, workers := range []int{1, 2, 8} {
				env := PlainEnv(workers)
				out, _ := pdarray.Alloc(dI64, n)
				res, err := Lookup(env, pdarray.FromSlice(kv), pdarray.FromSlice(tv), out)
				if err != nil || !res.Unique || (m > 1 && res.Path != c.path) {
					t.Fatalf("%s m=%d: %+v %v", c.name, m, res, err)
				}
				if got := pdarray.View[int64](out); !slices.Equal(got, want) {
					t.Fatalf("%s m=%d workers=%d: rows differ from the map's", c.name, m, workers)
				}
			}
		}
	}
	// narrow keys against an int64 table, and uint64 with uint64
	env := PlainEnv(2)
	out, _ := pdarray.Alloc(dI64, 4)
	if _, err := Lookup(env, pdarray.FromSlice([]int8{-1, 3, 7, -128}), pdarray.FromSlice([]int64{7, -1, -128}), out); err != nil ||
		!slices.Equal(pdarray.View[int64](out), []int64{1, -1, 0, 2}) {
		t.Errorf("int8 keys: %v %v", pdarray.View[int64](out), err)
	}
	out2, _ := pdarray.Alloc(dI64, 2)
	if _, err := Lookup(env, pdarray.FromSlice([]uint64{math.MaxUint64, 5}), pdarray.FromSlice([]uint64{5, math.MaxUint64}), out2); err != nil ||
		!slices.Equal(pdarray.View[int64](out2), []int64{1, 0}) {
		t.Errorf("uint64: %v %v", pdarray.View[int64](out2), err)
	}
	if _, err := Lookup(env, pdarray.FromSlice([]int64{1}), pdarray.FromSlice([]uint64{1}), out2); err == nil {
		t.Error("int64 keys in a uint64 table: no error")
	}
	if _, err := Lookup(env, pdarray.FromSlice([]float64{1}), pdarray.FromSlice([]int64{1}), out2); err == nil {
		t.Error("float keys: no error")
	}
	for _, tv := range [][]int64{{4, 9, 4}, {1 << 50, 3, 1 << 50}} {
		res, err := Lookup(env, pdarray.FromSlice([]int64{4}), pdarray.FromSlice(tv), out2)
		if err != nil || res.Unique || res.Dup != 2 {
			t.Errorf("table %v: %+v %v, want the repeat at row 2", tv, res, err)
		}
	}
	empty, _ := pdarray.Alloc(dI64, 3)
	if res, err := Lookup(env, pdarray.FromSlice([]int64{1, 2, 3}), pdarray.FromSlice([]int64{}), empty); err != nil || !res.Unique ||
		!slices.Equal(pdarray.View[int64](empty), []int64{-1, -1, -1}) {
		t.Errorf("empty table: %+v %v %v", res, err, pdarray.View[int64](empty))
	}
}

// permInts: m distinct values from base, shuffled.
func permInts(rng *rand.Rand, m int, base int64) []int64 {
	v := make([]int64, m)
	for i := range v {
		v[i] = base + int64(i)*2
	}
	rng.Shuffle(m, func(i, j int) { v[i], v[j] = v[j], v[i] })
	return v
}

// BenchmarkLookup: 10^7 int64 keys against a table of 265 zones (dense)
// and of 10^5 wide values (hash), one worker.
func BenchmarkLookup(b *testing.B) {
	const n = 10_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		m    int
		mul  int64
	}{{"dense-265", 265, 1}, {"hash-1e5", 100_000, 1_000_003}} {
		tv := permInts(rng, c.m, 1)
		for i := range tv {
			tv[i] *= c.mul
		}
		kv := make([]int64, n)
		for j := range kv {
			kv[j] = tv[rng.IntN(c.m)]
		}
		keys, table := pdarray.FromSlice(kv), pdarray.FromSlice(tv)
		out, _ := pdarray.Alloc(dI64, n)
		env := PlainEnv(1)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n * 8)
			for b.Loop() {
				if _, err := Lookup(env, keys, table, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLookupLarge: 10^7 int64 keys, 10% in no row, against a table
// of 10^6 distinct ids spread over 7·10^7 (merge2's), one worker.
func BenchmarkLookupLarge(b *testing.B) {
	const n, m = 10_000_000, 1_000_000
	rng := rand.New(rand.NewPCG(5, 6))
	tv := make([]int64, m)
	for i, v := range rng.Perm(70 * m)[:m] {
		tv[i] = int64(v)
	}
	kv := make([]int64, n)
	for j := range kv {
		if rng.IntN(10) == 0 {
			kv[j] = -1
		} else {
			kv[j] = tv[rng.IntN(m)]
		}
	}
	keys, table := pdarray.FromSlice(kv), pdarray.FromSlice(tv)
	out, _ := pdarray.Alloc(dI64, n)
	env := PlainEnv(1)
	b.SetBytes(n * 8)
	for b.Loop() {
		if _, err := Lookup(env, keys, table, out); err != nil {
			b.Fatal(err)
		}
	}
}

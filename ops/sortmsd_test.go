package ops

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// msdShapes are key sets that stress msdSortKeys' balance and recursion:
// float keys (clustered exponents), full-range and narrow integers, a few
// distinct values, one heavy prefix, presorted and reversed runs.
func msdShapes(n int, seed uint64) map[string][]uint64 {
	r := rand.New(rand.NewPCG(seed, 7))
	shapes := map[string][]uint64{}
	add := func(name string, f func(i int) uint64) {
		k := make([]uint64, n)
		for i := range k {
			k[i] = f(i)
		}
		shapes[name] = k
	}
	add("normal-floats", func(int) uint64 { return uint64(orderKey(math.Float64bits(r.NormFloat64()), 64)) })
	add("full-range", func(int) uint64 { return r.Uint64() })
	add("narrow", func(int) uint64 { return 1<<40 + r.Uint64N(1000) })
	add("three-values", func(int) uint64 { return []uint64{5, 1 << 63, math.MaxUint64}[r.IntN(3)] })
	add("all-equal", func(int) uint64 { return 42 })
	add("heavy-prefix", func(int) uint64 {
		if r.IntN(10) != 0 {
			return 1<<50 + r.Uint64N(1<<20) // 90% share their top bits
		}
		return r.Uint64()
	})
	add("sorted", func(i int) uint64 { return uint64(i) * 3 })
	add("reversed", func(i int) uint64 { return uint64(n-i) << 20 })
	return shapes
}

// TestMSDSortKeys: msdSortKeys sorts every shape at every size like
// slices.Sort, and arrays from msdDirect keys up take the bucketed top
// level (its counter moves).
func TestMSDSortKeys(t *testing.T) {
	for _, n := range []int{0, 1, 2, 17, 1000, msdDirect - 1, msdDirect, 300_000} {
		for name, keys := range msdShapes(n, uint64(n)) {
			for _, workers := range []int{1, 3} {
				want := slices.Clone(keys)
				slices.Sort(want)
				got, tmp := slices.Clone(keys), make([]uint64, n)
				before := msdSorts.Load()
				if n > 0 {
					base, nbits := keyRange(PlainEnv(workers), got)
					msdSortKeys(PlainEnv(workers), got, tmp, base, nbits)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s n=%d workers=%d: not sorted like slices.Sort", name, n, workers)
				}
				if took := msdSorts.Load() > before; took != (n >= msdDirect && name != "all-equal") {
					t.Errorf("%s n=%d: bucketed top level taken %v", name, n, took)
				}
			}
		}
	}
}

// TestMSDArgsort: Argsort of wide keys from msdDirect elements up takes
// msdArgsort, and its permutation is the stable one (equal keys in input
// order: the three-values and heavy-prefix shapes have many) for every
// shape, at 1 and 3 workers.
func TestMSDArgsort(t *testing.T) {
	for _, n := range []int{msdDirect, 200_000} {
		for name, keys := range msdShapes(n, uint64(n)+1) {
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			slices.SortStableFunc(want, func(x, y int64) int { return cmp.Compare(keys[x], keys[y]) })
			a := pdarray.FromSlice(keys)
			for _, workers := range []int{1, 3} {
				out, _ := pdarray.Alloc(pdarray.Int64, n)
				before := msdSorts.Load()
				if err := Argsort(PlainEnv(workers), a, out); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(pdarray.View[int64](out), want) {
					t.Fatalf("%s n=%d workers=%d: not the stable permutation", name, n, workers)
				}
				_, nbits := keyRange(PlainEnv(1), keys)
				if took := msdSorts.Load() > before; took != (nbits > 2*radixBits) {
					t.Errorf("%s n=%d: msdArgsort taken %v with a %d-bit range", name, n, took, nbits)
				}
			}
		}
	}
}

// BenchmarkSortKeys: the keys-only sorts Sort uses, on the same keys:
// the LSD radix sort (radixSort) and the MSD one (msdSortKeys).
func BenchmarkSortKeys(b *testing.B) {
	for _, n := range []int{1e6, 1e7} {
		for _, shape := range []string{"normal-floats", "full-range", "narrow"} {
			src := msdShapes(n, 1)[shape]
			keys, tmp := make([]uint64, n), make([]uint64, n)
			env := PlainEnv(runtime.NumCPU())
			for _, alg := range []string{"lsd", "msd"} {
				b.Run(fmt.Sprintf("%s/%s/n=%s", shape, alg, sizeName(n)), func(b *testing.B) {
					b.SetBytes(int64(8 * n))
					for b.Loop() {
						copy(keys, src)
						base, nbits := keyRange(env, keys)
						if alg == "lsd" {
							radixSort(env, keys, tmp, nil, nil, base, nbits)
						} else {
							msdSortKeys(env, keys, tmp, base, nbits)
						}
					}
				})
			}
		}
	}
}

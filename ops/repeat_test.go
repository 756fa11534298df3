package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestRepeat checks np.repeat's answer (a loop) for every element width,
// counts of several dtypes with zeros and long runs, a scalar count, and
// empty inputs, at 1, 2 and 8 workers; and its refusals.
func TestRepeat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 30000
	vals := make([]int64, n)
	cnt := make([]int64, n)
	for i := range vals {
		vals[i] = r.Int64()
		cnt[i] = int64(r.IntN(4))
		if r.IntN(1000) == 0 {
			cnt[i] = 5000 // a long run, split among workers
		}
	}
	cast := func(env Env, a *pdarray.Array, d pdarray.DType) *pdarray.Array {
		out, _ := pdarray.Alloc(d, a.Len())
		AsType(env, a, out)
		return out
	}
	want := func(v []int64, c []int64) []int64 {
		var out []int64
		for i, x := range v {
			for range c[i] {
				out = append(out, x)
			}
		}
		return out
	}
	for _, w := range []int{1, 2, 8} {
		env := PlainEnv(w)
		for _, d := range []pdarray.DType{dI64, dF32, dI16, dBool} {
			a := cast(env, pdarray.FromSlice(vals), d)
			for _, cd := range []pdarray.DType{dI64, dU8, dI32} {
				c := cast(env, pdarray.FromSlice(cnt), cd)
				got, err := Repeat(env, a, c, 0)
				if err != nil {
					t.Fatal(err)
				}
				// (uint8 counts wrap the long runs' 5000: the answer is of the counts as cast)
				exp := cast(env, pdarray.FromSlice(want(vals, pdarray.View[int64](cast(env, c, dI64)))), d)
				if !slices.Equal(got.Bytes(), exp.Bytes()) {
					t.Fatalf("%d workers, %v values, %v counts: differs", w, d, cd)
				}
			}
		}
		a := pdarray.FromSlice(vals)
		for _, k := range []int{0, 1, 3} {
			got, err := Repeat(env, a, nil, k)
			if err != nil {
				t.Fatal(err)
			}
			c := make([]int64, n)
			for i := range c {
				c[i] = int64(k)
			}
			if !slices.Equal(pdarray.View[int64](got), want(vals, c)) {
				t.Fatalf("%d workers, count %d: differs", w, k)
			}
		}
		if got, err := Repeat(env, pdarray.FromSlice([]int64{}), pdarray.FromSlice([]int64{}), 0); err != nil || got.Len() != 0 {
			t.Fatalf("empty: %v", err)
		}
	}
	env := PlainEnv(2)
	a := pdarray.FromSlice([]int64{1, 2, 3})
	for _, c := range []struct {
		counts *pdarray.Array
		count  int
	}{
		{pdarray.FromSlice([]int64{1, -1, 2}), 0},
		{pdarray.FromSlice([]int64{1, 2}), 0},
		{pdarray.FromSlice([]float64{1, 2, 3}), 0},
		{pdarray.FromSlice([]uint64{1, 1 << 63, 1}), 0},
		{pdarray.FromSlice([]int64{1 << 62, 1 << 62, 1 << 62}), 0},
		{nil, -1},
		{nil, 1 << 62},
	} {
		if _, err := Repeat(env, a, c.counts, c.count); err == nil {
			t.Errorf("repeat by %v / %d accepted", c.counts, c.count)
		}
	}
}

// BenchmarkRepeat: 10^5 int64 elements, counts 0..199 (10^7 out), and
// 10^7 elements each twice.
func BenchmarkRepeat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	few := make([]int64, 100_000)
	cnt := make([]int64, len(few))
	for i := range cnt {
		cnt[i] = int64(r.IntN(200))
	}
	many := make([]int64, 10_000_000)
	fa, ca, ma := pdarray.FromSlice(few), pdarray.FromSlice(cnt), pdarray.FromSlice(many)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("counts/workers=%d", w), func(b *testing.B) {
			b.SetBytes(8 * 10_000_000)
			for b.Loop() {
				if _, err := Repeat(PlainEnv(w), fa, ca, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("each2/workers=%d", w), func(b *testing.B) {
			b.SetBytes(8 * 20_000_000)
			for b.Loop() {
				if _, err := Repeat(PlainEnv(w), ma, nil, 2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

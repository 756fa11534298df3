package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

func TestGroupTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 60_000
	for _, ng := range []int{1, 7, 3000} {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(r.IntN(ng+1)) - 1
		}
		f := make([]float64, n)
		u := make([]uint64, n)
		for i := range f {
			f[i] = math.Round(r.NormFloat64()*1000) / 8 // ties happen
			if r.IntN(20) == 0 {
				f[i] = math.NaN()
			}
			u[i] = r.Uint64() >> uint(r.IntN(64))
		}
		for _, vals := range []*pdarray.Array{pdarray.FromSlice(f), pdarray.FromSlice(u), gbInts[int8](r, n, -100, 200)} {
			// Reference: each group's values sorted, smallest first and
			// largest first, once for every k and worker count.
			sorted := make([][]float64, ng)
			for i, g := range ids {
				if g < 0 {
					continue
				}
				v := elemF64(vals, i)
				if v == v {
					sorted[g] = append(sorted[g], v)
				}
			}
			reversed := make([][]float64, ng)
			for g := range sorted {
				slices.Sort(sorted[g])
				reversed[g] = slices.Clone(sorted[g])
				slices.Reverse(reversed[g])
			}
			for _, k := range []int{1, 2, 5} {
				for _, largest := range []bool{true, false} {
					want := sorted
					if largest {
						want = reversed
					}
					for w := range []int{1, 2, 8} {
						out, groups, err := GroupTopK(PlainEnv([]int{1, 2, 8}[w]), pdarray.FromSlice(ids), ng, k, largest, vals)
						if err != nil {
							t.Fatal(err)
						}
						if out.DType() != vals.DType() {
							t.Fatalf("dtype %v, want %v", out.DType(), vals.DType())
						}
						gs := pdarray.View[int64](groups)
						j := 0
						for g := range want {
							s := want[g][:min(k, len(want[g]))]
							for _, v := range s {
								if j >= len(gs) || gs[j] != int64(g) || elemF64(out, j) != v {
									t.Fatalf("ng=%d %v k=%d largest=%v: element %d wrong (group %d, want %v)", ng, vals.DType(), k, largest, j, g, v)
								}
								j++
							}
						}
						if j != len(gs) {
							t.Fatalf("%d elements, want %d", len(gs), j)
						}
					}
				}
			}
		}
	}
	ids := pdarray.FromSlice([]int32{0, 0})
	if _, _, err := GroupTopK(PlainEnv(1), ids, 1, 0, true, pdarray.FromSlice([]int64{1, 2})); err == nil {
		t.Fatal("k=0 accepted")
	}
}

// elemF64 is element i of a as float64 (exact for the test's values).
func elemF64(a *pdarray.Array, i int) float64 {
	buf := make([]float64, 1)
	return chunkAs(a, i, i+1, buf)[0]
}

// TestGroupCorr: bit-identical to a row-order two-pass loop at every worker
// count; NaN rows skipped pairwise; NaN for constant or one-row groups.
func TestGroupCorr(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const n = 80_000
	for _, ng := range []int{3, 50_000} {
		ids := make([]int32, n)
		x := make([]int64, n)
		y := make([]float64, n)
		for i := range ids {
			ids[i] = int32(r.IntN(ng+1)) - 1
			x[i] = r.Int64N(5) + 1
			y[i] = float64(x[i])*0.5 + r.NormFloat64()
			if r.IntN(30) == 0 {
				y[i] = math.NaN()
			}
		}
		sx, sy, c := make([]float64, ng), make([]float64, ng), make([]float64, ng)
		for i, g := range ids {
			if g >= 0 && y[i] == y[i] {
				sx[g] += float64(x[i])
				sy[g] += y[i]
				c[g]++
			}
		}
		xx, yy, xy := make([]float64, ng), make([]float64, ng), make([]float64, ng)
		for g := range sx {
			sx[g] /= c[g]
			sy[g] /= c[g]
		}
		for i, g := range ids {
			if g >= 0 && y[i] == y[i] {
				dx, dy := float64(x[i])-sx[g], y[i]-sy[g]
				xx[g] += dx * dx
				yy[g] += dy * dy
				xy[g] += dx * dy
			}
		}
		for _, w := range []int{1, 2, 8} {
			out, err := GroupCorr(PlainEnv(w), pdarray.FromSlice(ids), ng, pdarray.FromSlice(x), pdarray.FromSlice(y))
			if err != nil {
				t.Fatal(err)
			}
			o := pdarray.View[float64](out)
			for g := range o {
				want := math.NaN()
				if d := math.Sqrt(xx[g] * yy[g]); c[g] >= 2 && d > 0 {
					want = xy[g] / d
				}
				if math.Float64bits(o[g]) != math.Float64bits(want) && !(o[g] != o[g] && want != want) {
					t.Fatalf("ng=%d w=%d group %d: %v, want %v", ng, w, g, o[g], want)
				}
			}
		}
	}
	one := pdarray.FromSlice([]int32{0, 1, 1})
	out, err := GroupCorr(PlainEnv(1), one, 2, pdarray.FromSlice([]float64{1, 2, 2}), pdarray.FromSlice([]float64{3, 4, 5}))
	if err != nil {
		t.Fatal(err)
	}
	if o := pdarray.View[float64](out); o[0] == o[0] || o[1] == o[1] {
		t.Fatalf("one row and constant x: %v, want NaN NaN", o)
	}
}

// TestGroupCorrInts: two integer arrays take the one-pass integer path
// (the same bits at every worker count, within 1e-12 of the float passes);
// values too large for it fall back to the float passes.
func TestGroupCorrInts(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const n, ng = 50_000, 300
	ids := make([]int32, n)
	x := make([]int64, n)
	y := make([]int8, n)
	big := make([]int64, n)
	for i := range ids {
		ids[i] = int32(r.IntN(ng+1)) - 1
		x[i] = r.Int64N(5) + 1
		y[i] = int8(x[i]*3 + r.Int64N(40) - 20)
		big[i] = r.Int64N(1 << 40)
	}
	ia, xa, ya := pdarray.FromSlice(ids), pdarray.FromSlice(x), pdarray.FromSlice(y)
	yf := make([]float64, n)
	for i, v := range y {
		yf[i] = float64(v)
	}
	ref, err := GroupCorr(PlainEnv(1), ia, ng, xa, pdarray.FromSlice(yf)) // float passes
	if err != nil {
		t.Fatal(err)
	}
	var first []float64
	for _, w := range []int{1, 2, 8} {
		before := corrIntPasses.Load()
		out, err := GroupCorr(PlainEnv(w), ia, ng, xa, ya)
		if err != nil {
			t.Fatal(err)
		}
		if corrIntPasses.Load() == before {
			t.Fatalf("w=%d: integer path not taken", w)
		}
		o := pdarray.View[float64](out)
		if first == nil {
			first = slices.Clone(o)
		}
		for g, v := range o {
			want := pdarray.View[float64](ref)[g]
			if math.Float64bits(v) != math.Float64bits(first[g]) || math.Abs(v-want) > 1e-12*math.Abs(want) {
				t.Fatalf("w=%d group %d: %v (w=1: %v), float passes %v", w, g, v, first[g], want)
			}
		}
	}
	before := corrIntPasses.Load()
	if _, err := GroupCorr(PlainEnv(2), ia, ng, pdarray.FromSlice(big), pdarray.FromSlice(big)); err != nil {
		t.Fatal(err)
	}
	if corrIntPasses.Load() != before {
		t.Fatal("values near 2^40 took the integer path")
	}
}

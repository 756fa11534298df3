package ops

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// refGroups is a plain reference group-by: sort-key tuples of the kept rows,
// sorted and numbered.
func refGroups(keys []*pdarray.Array, dropna bool) (ids []int32, firsts []int) {
	n, nk := keys[0].Len(), len(keys)
	tuples := make([]uint64, n*nk) // row i's: tuples[i*nk:][:nk] (no allocation a row: -race's time)
	tuple := func(i int) []uint64 { return tuples[i*nk:][:nk] }
	col := make([]uint64, n)
	drop := make([]bool, n)
	for k, a := range keys {
		keyChunk(a, 0, n, col)
		for i, v := range col {
			tuples[i*nk+k] = v
			if Kind(a.DType()) == 'f' && v == nanKey && dropna {
				drop[i] = true
			}
		}
	}
	ids = make([]int32, n)
	rows := make([]int, 0, n)
	for i := range n {
		if drop[i] {
			ids[i] = -1
			continue
		}
		rows = append(rows, i)
	}
	// Stable: equal tuples in row order (a row tie-break, as a stable sort
	// orders them, in a fraction of its time).
	slices.SortFunc(rows, func(a, b int) int {
		if c := slices.Compare(tuple(a), tuple(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	g := -1
	for j, r := range rows {
		if j == 0 || slices.Compare(tuple(r), tuple(rows[j-1])) != 0 {
			g++
			firsts = append(firsts, r)
		}
		ids[r] = int32(g)
	}
	return ids, firsts
}

func sameBits(a, b *pdarray.Array) bool {
	return a.DType() == b.DType() && slices.Equal(a.Bytes(), b.Bytes())
}

type refGrouping struct {
	ids    []int32
	firsts []int
}

func checkGrouping(t *testing.T, env Env, keys []*pdarray.Array, dropna bool, strategy, want string, ref *refGrouping) Grouping {
	t.Helper()
	g, err := GroupBy(env, keys, dropna, strategy)
	if err != nil {
		t.Fatalf("GroupBy(%s): %v", strategy, err)
	}
	if want != "" && g.Strategy != want {
		t.Errorf("strategy %s, want %s", g.Strategy, want)
	}
	if ref.ids == nil {
		ref.ids, ref.firsts = refGroups(keys, dropna)
	}
	ids, firsts := ref.ids, ref.firsts
	if got := pdarray.View[int32](g.IDs); !slices.Equal(got, ids) {
		t.Fatalf("%s: ids differ: got %v want %v", g.Strategy, got[:min(20, len(got))], ids[:min(20, len(ids))])
	}
	if g.NGroups != len(firsts) {
		t.Fatalf("%s: %d groups, want %d", g.Strategy, g.NGroups, len(firsts))
	}
	kept := 0
	for _, id := range ids {
		if id >= 0 {
			kept++
		}
	}
	if g.Kept != kept {
		t.Errorf("kept %d, want %d", g.Kept, kept)
	}
	for k, a := range keys {
		want, _ := pdarray.Alloc(a.DType(), len(firsts))
		idx := make([]int64, len(firsts))
		for i, f := range firsts {
			idx[i] = int64(f)
		}
		Take(env, a, pdarray.FromSlice(idx), want)
		// -0.0 and 0.0 are one group; NaN payloads collapse: compare sort keys.
		wk, gk := make([]uint64, len(firsts)), make([]uint64, len(firsts))
		keyChunk(want, 0, len(firsts), wk)
		keyChunk(g.Keys[k], 0, len(firsts), gk)
		if !slices.Equal(wk, gk) {
			t.Fatalf("%s: unique keys %d differ: got %v want %v", g.Strategy, k, gk, wk)
		}
	}
	return g
}

type keyCase struct {
	name string
	keys func(r *rand.Rand, n int) []*pdarray.Array
	auto string // strategy auto picks
}

func gbInts[T Number](r *rand.Rand, n int, lo, span int64) *pdarray.Array {
	x := make([]T, n)
	for i := range x {
		x[i] = T(lo + r.Int64N(span))
	}
	return pdarray.FromSlice(x)
}

var keyCases = []keyCase{
	{"int64-small", func(r *rand.Rand, n int) []*pdarray.Array { return []*pdarray.Array{gbInts[int64](r, n, -50, 100)} }, StrategyDense},
	{"int64-medium", func(r *rand.Rand, n int) []*pdarray.Array {
		return []*pdarray.Array{gbInts[int64](r, n, -1<<40, 1<<41)}
	}, StrategyHash},
	{"int64-fewwide", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]int64, n)
		for i := range x {
			x[i] = int64(r.IntN(50)) * 1e12
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, StrategyHash},
	{"int8-minmax", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]int8, n)
		for i := range x {
			x[i] = []int8{math.MinInt8, math.MaxInt8, 0, -1}[r.IntN(4)]
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, StrategyDense},
	{"int64-minmax", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]int64, n)
		for i := range x {
			x[i] = []int64{math.MinInt64, math.MaxInt64, 0, 7}[r.IntN(4)]
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, StrategyWide},
	{"uint64-max", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]uint64, n)
		for i := range x {
			x[i] = []uint64{math.MaxUint64, 0, 3}[r.IntN(3)]
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, StrategyWide},
	{"float64-nan", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]float64, n)
		for i := range x {
			x[i] = []float64{math.NaN(), math.Copysign(0, -1), 0, 1.5, -2.25, math.Inf(1), math.Inf(-1)}[r.IntN(7)]
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, StrategyHash},
	{"float64-allnan", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.NaN()
		}
		return []*pdarray.Array{pdarray.FromSlice(x)}
	}, ""},
	{"bool", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]uint8, n)
		for i := range x {
			x[i] = uint8(r.IntN(2))
		}
		return []*pdarray.Array{boolArr(x)}
	}, StrategyDense},
	{"one-group", func(r *rand.Rand, n int) []*pdarray.Array { return []*pdarray.Array{gbInts[uint16](r, n, 7, 1)} }, StrategyDense},
	{"multi-dense", func(r *rand.Rand, n int) []*pdarray.Array {
		return []*pdarray.Array{gbInts[int32](r, n, 1, 30), gbInts[int64](r, n, 1, 30), gbInts[uint8](r, n, 0, 24)}
	}, StrategyDense},
	{"multi-float", func(r *rand.Rand, n int) []*pdarray.Array {
		f := make([]float32, n)
		for i := range f {
			f[i] = []float32{float32(math.NaN()), 1, 2}[r.IntN(3)]
		}
		return []*pdarray.Array{gbInts[int16](r, n, -3, 6), pdarray.FromSlice(f)}
	}, StrategyHash},
	{"multi-wide", func(r *rand.Rand, n int) []*pdarray.Array {
		x := make([]int64, n)
		for i := range x {
			x[i] = int64(r.Uint64() >> uint(r.IntN(2)*60))
		}
		return []*pdarray.Array{pdarray.FromSlice(x), gbInts[int64](r, n, 0, 3)}
	}, StrategyChained},
	{"multi-float-wide", func(r *rand.Rand, n int) []*pdarray.Array {
		f, h := make([]float64, n), make([]float64, n)
		for i := range f {
			f[i] = []float64{math.NaN(), -1e300, 0, 2.5, math.Inf(1)}[r.IntN(5)]
			h[i] = []float64{math.NaN(), -3, math.Inf(-1), 1e-300, 7}[r.IntN(5)]
		}
		return []*pdarray.Array{pdarray.FromSlice(f), gbInts[int8](r, n, -2, 3), pdarray.FromSlice(h)}
	}, StrategyChained},
}

func TestGroupByStrategies(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 20000} {
		for _, kc := range keyCases {
			r := rand.New(rand.NewPCG(uint64(n), 7))
			keys := kc.keys(r, n)
			packable := kc.auto != StrategyWide && kc.auto != StrategyChained
			for _, dropna := range []bool{true, false} {
				ref := &refGrouping{}
				for _, workers := range []int{1, 2, 8} {
					env := PlainEnv(workers)
					for _, st := range []string{"auto", StrategyDense, StrategyHash, StrategyPartitioned, StrategySort, StrategyWide, StrategyChained} {
						if !packable && n > 1 && (st == StrategyDense || st == StrategyHash || st == StrategyPartitioned) {
							continue
						}
						if st == StrategyDense && (kc.name == "int64-medium" || kc.name == "multi-float" || kc.name == "int64-minmax" || kc.name == "uint64-max" || kc.name == "int64-fewwide" || kc.name == "float64-nan") {
							continue // too many slots
						}
						name := fmt.Sprintf("n=%d/%s/w=%d/dropna=%v/%s", n, kc.name, workers, dropna, st)
						t.Run(name, func(t *testing.T) {
							want := ""
							if st != "auto" {
								want = st
								if !packable && n == 20000 {
									want = kc.auto // chained for several keys, wide for one
									if st == StrategyWide {
										want = StrategyWide
									}
								} else if !packable {
									want = ""
								}
								if st == StrategyChained && len(keys) < 2 {
									want = "" // one key: what auto picks
								}
							} else if n == 20000 && dropna {
								want = kc.auto
							}
							probes, lones := probeRuns.Load(), loneProbes.Load()
							g := checkGrouping(t, env, keys, dropna, st, want, ref)
							if g.Strategy == StrategyHash && g.Kept > 0 && probeRuns.Load() == probes {
								t.Fatal("the hash strategy did not probe through probeIDs")
							}
							if lone64 := len(keys) == 1 && keys[0].DType() == pdarray.Int64; g.Strategy == StrategyHash && g.Kept > 0 && lone64 && loneProbes.Load() == lones {
								t.Fatal("a lone int64 key was packed before it was probed (probeLoneIDs not taken)")
							}
							// Handing the key stats back gives the same grouping.
							known := make([]*KeyStats, len(g.Stats))
							for k := range g.Stats {
								known[k] = &g.Stats[k]
							}
							g2, err := GroupByWith(env, keys, dropna, st, known)
							if err != nil {
								t.Fatal(err)
							}
							if !sameBits(g.IDs, g2.IDs) || g2.NGroups != g.NGroups || g2.Kept != g.Kept {
								t.Fatal("GroupByWith the known stats differs")
							}
							g.Free(env)
							g2.Free(env)
						})
					}
				}
			}
		}
	}
}

func TestGroupByDenseTooBig(t *testing.T) {
	a := pdarray.FromSlice([]int64{0, 1 << 40})
	if _, err := GroupBy(PlainEnv(1), []*pdarray.Array{a}, true, StrategyDense); err == nil {
		t.Fatal("dense with 2^40 slots succeeded")
	}
}

// refAgg computes op over the groups the plain way: values of each group in
// row order, NaN skipped.
func refAgg(ids []int32, ng int, op string, x []float64, isF bool, ddof float64) []float64 {
	per := make([][]float64, ng)
	rows := make([][]int, ng)
	size := make([]int, ng)
	for i, g := range ids {
		if g < 0 {
			continue
		}
		size[g]++
		if x[i] != x[i] {
			continue
		}
		per[g] = append(per[g], x[i])
		rows[g] = append(rows[g], i)
	}
	out := make([]float64, ng)
	for g := range out {
		v := per[g]
		nan := math.NaN()
		if !isF {
			nan = 0
		}
		switch op {
		case "size":
			out[g] = float64(size[g])
		case "count":
			out[g] = float64(len(v))
		case "sum", "mean", "var", "std":
			s := 0.0
			for _, e := range v {
				s += e
			}
			out[g] = s
			if op == "sum" {
				break
			}
			m := s / float64(len(v))
			out[g] = m
			if op == "mean" {
				break
			}
			ss := 0.0
			for _, e := range v {
				ss += (e - m) * (e - m)
			}
			d := float64(len(v)) - ddof
			out[g] = math.NaN()
			if d > 0 {
				out[g] = ss / d
			}
			if op == "std" {
				out[g] = math.Sqrt(out[g])
			}
		case "prod":
			p := 1.0
			for _, e := range v {
				p *= e
			}
			out[g] = p
		case "min", "max", "argmin", "argmax", "first":
			best, bi := nan, -1
			for j, e := range v {
				if bi < 0 || (op == "min" || op == "argmin") && e < best || (op == "max" || op == "argmax") && e > best {
					if op == "first" && bi >= 0 {
						continue
					}
					best, bi = e, rows[g][j]
				}
			}
			out[g] = best
			if op == "argmin" || op == "argmax" {
				out[g] = float64(bi)
			}
		case "or", "and", "xor":
			var acc int64 // the integer values' bits, sign-extended
			for j, e := range v {
				switch x := int64(e); {
				case j == 0:
					acc = x
				case op == "or":
					acc |= x
				case op == "and":
					acc &= x
				default:
					acc ^= x
				}
			}
			out[g] = float64(acc)
		case "any", "all":
			nz := 0
			for _, e := range v {
				if e != 0 {
					nz++
				}
			}
			out[g] = b2f(op == "any" && nz > 0 || op == "all" && nz == len(v))
		case "nunique", "mode", "median":
			s := slices.Clone(v)
			slices.Sort(s)
			switch op {
			case "nunique":
				c := 0
				for j := range s {
					if j == 0 || s[j] != s[j-1] {
						c++
					}
				}
				out[g] = float64(c)
			case "median":
				c := len(s)
				switch {
				case c == 0:
					out[g] = math.NaN()
				case c%2 == 1:
					out[g] = s[c/2]
				default:
					out[g] = (s[c/2-1] + s[c/2]) / 2
				}
			case "mode":
				best, bn := nan, 0
				for j := 0; j < len(s); {
					e := j + 1
					for e < len(s) && s[e] == s[j] {
						e++
					}
					if e-j > bn {
						best, bn = s[j], e-j
					}
					j = e
				}
				out[g] = best
			}
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func asF64s(t *testing.T, a *pdarray.Array) []float64 {
	t.Helper()
	env := PlainEnv(1)
	f, _ := pdarray.Alloc(dF64, a.Len())
	AsType(env, a, f)
	return pdarray.View[float64](f)
}

func TestGroupAggAll(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 8000
	fv := make([]float64, n)
	for i := range fv {
		switch r.IntN(20) {
		case 0:
			fv[i] = math.NaN()
		case 1:
			fv[i] = 0
		default:
			fv[i] = math.Round(r.NormFloat64()*1e4) / 100
		}
	}
	iv := make([]int32, n)
	for i := range iv {
		iv[i] = int32(r.IntN(7) - 3)
	}
	bv := make([]uint8, n)
	for i := range bv {
		bv[i] = uint8(r.IntN(2))
	}
	ba := boolArr(bv)
	refCache := map[string][]float64{}
	values := map[string]*pdarray.Array{"float64": pdarray.FromSlice(fv), "int32": pdarray.FromSlice(iv), "bool": ba}
	xsOf := map[string][]float64{}
	for k, v := range values {
		xsOf[k] = asF64s(t, v)
	}
	for _, kc := range []keyCase{keyCases[0], keyCases[1], keyCases[6], keyCases[9]} {
		keys := kc.keys(r, n)
		// By dropna: the reference ids, the same for every strategy.
		refIDsOf, refGroupsOf := map[bool][]int32{}, map[bool]int{}
		for _, dropna := range []bool{true, false} {
			ids, firsts := refGroups(keys, dropna)
			refIDsOf[dropna], refGroupsOf[dropna] = ids, len(firsts)
		}
		aggregated := map[bool]bool{}
		for _, st := range []string{StrategyDense, StrategyHash, StrategySort} {
			if st == StrategyDense && kc.auto != StrategyDense {
				continue
			}
			for _, dropna := range []bool{true, false} {
				var ref *pdarray.Array
				refIDs := refIDsOf[dropna]
				// Every strategy's ids and group count are checked to be the
				// reference's: the aggregations over them, the same work
				// whatever the strategy, run for the first.
				agg := !aggregated[dropna]
				aggregated[dropna] = true
				for _, workers := range []int{1, 2, 8} {
					env := PlainEnv(workers)
					g, err := GroupBy(env, keys, dropna, st)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(pdarray.View[int32](g.IDs), refIDs) {
						t.Fatalf("%s/%s: ids differ", kc.name, st)
					}
					if g.NGroups != refGroupsOf[dropna] {
						t.Fatalf("%s/%s: %d groups, want %d", kc.name, st, g.NGroups, refGroupsOf[dropna])
					}
					if !agg {
						g.Free(env)
						continue
					}
					for vname, v := range values {
						isF := vname == "float64"
						xs := xsOf[vname]
						// Every aggregation at once (the shared sums pass) must
						// equal each one alone, bit for bit.
						aggOps := GroupAggOps
						if isF { // or, and, xor are bitwise: integer and bool values only
							aggOps = slices.DeleteFunc(slices.Clone(aggOps), func(op string) bool { return op == "or" || op == "and" || op == "xor" })
						}
						many, err := GroupAggMany(env, g.IDs, g.NGroups, aggOps, v, 1)
						if err != nil {
							t.Fatal(err)
						}
						for oi, op := range aggOps {
							name := fmt.Sprintf("%s/%s/dropna=%v/w=%d/%s/%s", kc.name, st, dropna, workers, vname, op)
							out, err := GroupAgg(env, g.IDs, g.NGroups, op, v, 1)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							wantD, _ := GroupAggDType(op, v.DType())
							if out.DType() != wantD || out.Len() != g.NGroups {
								t.Fatalf("%s: got %v[%d]", name, out.DType(), out.Len())
							}
							if !sameBits(out, many[oi]) {
								t.Fatalf("%s: GroupAggMany differs from GroupAgg", name)
							}
							got := asF64s(t, out)
							ck := fmt.Sprintf("%s/%v/%s/%s", kc.name, dropna, vname, op)
							want, ok := refCache[ck]
							if !ok {
								want = refAgg(refIDs, g.NGroups, op, xs, isF, 1)
								refCache[ck] = want
							}
							for i := range want {
								if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) && !(got[i] == 0 && want[i] == 0) {
									t.Fatalf("%s: group %d: got %v want %v", name, i, got[i], want[i])
								}
							}
						}
					}
					// size on float values: bit-identical float sums at every worker count.
					s, err := GroupAgg(env, g.IDs, g.NGroups, "sum", values["float64"], 0)
					if err != nil {
						t.Fatal(err)
					}
					if ref == nil {
						ref = s
					} else if !sameBits(ref, s) {
						t.Fatalf("%s/%s: float sums differ between 1 and %d workers", kc.name, st, workers)
					}
					g.Free(env)
				}
			}
		}
	}
}

func TestGroupAggEmptyAndErrors(t *testing.T) {
	env := PlainEnv(2)
	g, err := GroupBy(env, []*pdarray.Array{pdarray.FromSlice([]int64{})}, true, "auto")
	if err != nil || g.NGroups != 0 || g.Keys[0].Len() != 0 {
		t.Fatalf("empty: %v %+v", err, g)
	}
	for _, op := range GroupAggOps {
		vals := pdarray.FromSlice([]float64{})
		if op == "or" || op == "and" || op == "xor" {
			vals = pdarray.FromSlice([]int64{})
		}
		out, err := GroupAgg(env, g.IDs, 0, op, vals, 0)
		if err != nil || out.Len() != 0 {
			t.Fatalf("%s of empty: %v", op, err)
		}
	}
	if _, err := GroupAgg(env, g.IDs, 0, "nope", pdarray.FromSlice([]float64{}), 0); err == nil {
		t.Fatal("unknown op accepted")
	}
	if _, err := GroupAgg(env, g.IDs, 0, "sum", pdarray.FromSlice([]float64{1}), 0); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := GroupBy(env, []*pdarray.Array{pdarray.FromSlice([]int64{1}), pdarray.FromSlice([]int64{1, 2})}, true, "auto"); err == nil {
		t.Fatal("keys of different lengths accepted")
	}
}

func TestGroupSegmentsBroadcast(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 40000
	for _, workers := range []int{1, 2, 8} {
		env := PlainEnv(workers)
		f := make([]float64, n)
		for i := range f {
			f[i] = float64(r.IntN(300))
			if r.IntN(10) == 0 {
				f[i] = math.NaN()
			}
		}
		g, err := GroupBy(env, []*pdarray.Array{pdarray.FromSlice(f)}, true, "auto")
		if err != nil {
			t.Fatal(err)
		}
		ids := pdarray.View[int32](g.IDs)
		perm, segs, err := GroupSegments(env, g.IDs, g.NGroups, g.Kept)
		if err != nil {
			t.Fatal(err)
		}
		// perm equals a stable sort of the kept rows by id.
		var want []int64
		for i, id := range ids {
			if id >= 0 {
				want = append(want, int64(i))
			}
		}
		slices.SortStableFunc(want, func(a, b int64) int { return cmp.Compare(ids[a], ids[b]) })
		if !slices.Equal(pdarray.View[int64](perm), want) {
			t.Fatal("permutation differs")
		}
		sg := pdarray.View[int64](segs)
		for gi := range sg {
			if ids[want[sg[gi]]] != int32(gi) || (gi > 0 && ids[want[sg[gi]-1]] != int32(gi-1)) {
				t.Fatalf("segment %d starts at %d", gi, sg[gi])
			}
		}
		out, _ := pdarray.Alloc(dF64, n)
		if err := GroupBroadcast(env, g.IDs, g.Keys[0], out); err != nil {
			t.Fatal(err)
		}
		o := pdarray.View[float64](out)
		for i := range f {
			if math.Float64bits(o[i]) != math.Float64bits(f[i]) && !(f[i] != f[i] && o[i] != o[i]) {
				t.Fatalf("broadcast row %d: %v want %v", i, o[i], f[i])
			}
		}
		g.Free(env)
	}
}

func BenchmarkGroupBy(b *testing.B) {
	n := 1 << 22
	r := rand.New(rand.NewPCG(5, 6))
	zone := make([]int64, n)
	hour := make([]int64, n)
	drop := make([]int64, n)
	fare := make([]float64, n)
	for i := range zone {
		u := r.Float64()
		zone[i] = int64(265*u*u*u) + 1
		u = r.Float64()
		drop[i] = int64(265*u*u*u) + 1
		hour[i] = int64(r.IntN(24))
		fare[i] = math.Round(r.Float64()*5000) / 100
	}
	keys := []*pdarray.Array{pdarray.FromSlice(zone), pdarray.FromSlice(drop), pdarray.FromSlice(hour)}
	for _, workers := range []int{1, 2} {
		env := PlainEnv(workers)
		for _, nk := range []int{1, 3} {
			b.Run(fmt.Sprintf("keys=%d/w=%d", nk, workers), func(b *testing.B) {
				b.SetBytes(int64(n * 8 * (nk + 1)))
				for b.Loop() {
					g, _ := GroupBy(env, keys[:nk], true, "auto")
					GroupAgg(env, g.IDs, g.NGroups, "sum", pdarray.FromSlice(fare), 0)
				}
			})
		}
	}
}

func boolArr(x []uint8) *pdarray.Array {
	a, _ := pdarray.Alloc(pdarray.Bool, len(x))
	copy(a.Bytes(), x)
	return a
}

// TestGroupAggManySharesOnePass fails if size, count, sum and mean of floats
// stop sharing one pass over the rows.
func TestGroupAggManySharesOnePass(t *testing.T) {
	env := PlainEnv(2)
	keys := pdarray.FromSlice([]int64{3, 1, 3, 2, 1, 3})
	vals := pdarray.FromSlice([]float64{1.5, 2, math.NaN(), 4, 5, 6})
	g, err := GroupBy(env, []*pdarray.Array{keys}, true, "auto")
	if err != nil {
		t.Fatal(err)
	}
	before := sumsPasses.Load()
	outs, err := GroupAggMany(env, g.IDs, g.NGroups, []string{"sum", "size", "count", "mean"}, vals, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := sumsPasses.Load() - before; p != 1 {
		t.Fatalf("sum, size, count and mean took %d passes, want 1", p)
	}
	want := [][]float64{{7, 4, 7.5}, {2, 1, 3}, {2, 1, 2}, {3.5, 4, 3.75}}
	for i, w := range want {
		if got := asF64s(t, outs[i]); !slices.Equal(got, w) {
			t.Fatalf("op %d: got %v want %v", i, got, w)
		}
	}
}

// TestGroupSumsBanded covers the banded path (states past L2): float sums
// bit-identical to a sequential loop at 1, 2 and 8 workers, counts exact,
// and the path really taken.
func TestGroupSumsBanded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, span = 600_000, 300_000
	k := make([]int64, n)
	v := make([]float64, n)
	for i := range k {
		k[i] = int64(r.IntN(span)) * 3 // a gap per key: the hash or sort strategy
		v[i] = math.Round(r.NormFloat64()*1e6) / 100
		if r.IntN(50) == 0 {
			v[i] = math.NaN()
		}
	}
	keys := []*pdarray.Array{pdarray.FromSlice(k)}
	vals := pdarray.FromSlice(v)
	refIDs, _ := refGroups(keys, true)
	ng := int(slices.Max(refIDs)) + 1
	if ng*16 <= bandedMinBytes {
		t.Fatalf("%d groups do not reach the banded path", ng)
	}
	sum := make([]float64, ng)
	cnt, rows := make([]int64, ng), make([]int64, ng)
	for i, g := range refIDs {
		rows[g]++
		if v[i] == v[i] {
			sum[g] += v[i]
			cnt[g]++
		}
	}
	for _, w := range []int{1, 2, 8} {
		env := PlainEnv(w)
		g, err := GroupBy(env, keys, true, "auto")
		if err != nil {
			t.Fatal(err)
		}
		before := bandedPasses.Load()
		outs, err := GroupAggMany(env, g.IDs, g.NGroups, []string{"sum", "count", "size", "mean"}, vals, 0)
		if err != nil {
			t.Fatal(err)
		}
		if bandedPasses.Load() == before {
			t.Fatalf("w=%d: the banded path was not taken", w)
		}
		gs, gc, gr, gm := pdarray.View[float64](outs[0]), pdarray.View[int64](outs[1]), pdarray.View[int64](outs[2]), pdarray.View[float64](outs[3])
		for i := range sum {
			if math.Float64bits(gs[i]) != math.Float64bits(sum[i]) || gc[i] != cnt[i] || gr[i] != rows[i] ||
				math.Float64bits(gm[i]) != math.Float64bits(sum[i]/float64(cnt[i])) {
				t.Fatalf("w=%d group %d: got %v %d %d %v, want %v %d %d", w, i, gs[i], gc[i], gr[i], gm[i], sum[i], cnt[i], rows[i])
			}
		}
	}
}

// TestGroupByPartitioned: many distinct keys take the partitioned path on
// their own, with the ids of the reference grouping at every worker count,
// NaN keys dropped or kept. Evenly spread keys are partitioned by ranges,
// skewed ones by hashes.
func TestGroupByPartitioned(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 300_000
	k := make([]int64, n)
	f := make([]float64, n)
	clustered := make([]int64, n) // even ranges, each partition's keys in clumps of 100
	skewed := make([]int64, n)    // nine rows in ten in the lowest 150,000 of 2^50
	for i := range k {
		k[i] = int64(r.IntN(150_000)) * 1_000_003
		f[i] = float64(k[i]) / 7
		if r.IntN(10) == 0 {
			f[i] = math.NaN()
		}
		clustered[i] = int64(r.IntN(2000))<<30 | int64(r.IntN(100))
		skewed[i] = int64(r.IntN(150_000))
		if r.IntN(10) == 0 {
			skewed[i] = r.Int64N(1 << 50)
		}
	}
	for _, c := range []struct {
		keys   []*pdarray.Array
		ranged int // 1: partitions must be ranges, 0: hashes, -1: either
	}{
		{[]*pdarray.Array{pdarray.FromSlice(k)}, 1},
		{[]*pdarray.Array{pdarray.FromSlice(f)}, -1},
		{[]*pdarray.Array{pdarray.FromSlice(clustered)}, 1},
		{[]*pdarray.Array{pdarray.FromSlice(skewed)}, 0},
	} {
		keys := c.keys
		refIDs, _ := refGroups(keys, true)
		for _, dropna := range []bool{true, false} {
			if !dropna && slices.ContainsFunc(keys, func(a *pdarray.Array) bool { return Kind(a.DType()) == 'f' }) {
				refIDs, _ = refGroups(keys, dropna) // NaN a group: another reference (integer keys: the same)
			}
			for _, w := range []int{1, 2, 8} {
				env := PlainEnv(w)
				before, rangedBefore, probesBefore := partitionedRuns.Load(), rangedRuns.Load(), probeRuns.Load()
				st := "auto"
				if w == 8 {
					st = StrategyPartitioned // 37,500 rows a worker: each table stays small
				}
				g, err := GroupBy(env, keys, dropna, st)
				if err != nil {
					t.Fatal(err)
				}
				if g.Strategy != StrategyPartitioned || partitionedRuns.Load() != before+1 {
					t.Fatalf("%v w=%d: strategy %s, want partitioned", keys[0].DType(), w, g.Strategy)
				}
				if probeRuns.Load() == probesBefore {
					t.Fatalf("%v w=%d: the partitions' tables were not probed by probeIDs", keys[0].DType(), w)
				}
				if ranged := int(rangedRuns.Load() - rangedBefore); c.ranged >= 0 && ranged != c.ranged {
					t.Fatalf("%v w=%d: %d range-partitioned runs, want %d", keys[0].DType(), w, ranged, c.ranged)
				}
				if !slices.Equal(pdarray.View[int32](g.IDs), refIDs) {
					t.Fatalf("%v w=%d dropna=%v: ids differ from the reference", keys[0].DType(), w, dropna)
				}
				kept := 0
				for _, id := range refIDs {
					if id >= 0 {
						kept++
					}
				}
				if g.Kept != kept {
					t.Fatalf("kept %d, want %d", g.Kept, kept)
				}
				g.Free(env)
			}
		}
	}
}

// TestSortRun sorts short runs of distinct keys (spread, clumped, tiny and
// wide) with their ids, against a plain sort.
func TestSortRun(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var h [1 << radixBits]int
	long := longRuns.Load()
	defer func() {
		if longRuns.Load()-long < 8 {
			t.Errorf("%d long runs took sortLongRun, want 8 or more", longRuns.Load()-long)
		}
	}()
	for trial := range 200 {
		n := r.IntN(5000)
		if trial%50 >= 46 { // every kind of keys
			n = 40_000 + r.IntN(30_000) // past the one-pass size: sortLongRun
		}
		seen := map[uint64]bool{}
		keys := make([]uint64, 0, n)
		for len(keys) < n {
			var k uint64
			switch trial % 4 {
			case 0:
				k = r.Uint64()
			case 1:
				k = uint64(r.IntN(40))<<30 | uint64(r.IntN(200+n/10)) // clumps beyond insertion sort
			case 2:
				k = uint64(r.IntN(3 * n))
			default:
				k = 1<<63 + uint64(r.IntN(1<<20))
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		orig := slices.Clone(keys)
		sk, si := sortRun(keys, make([]uint64, n), ids, make([]int64, n), &h)
		if !slices.Equal(sk, want) {
			t.Fatalf("trial %d (n=%d): keys not sorted", trial, n)
		}
		for i, id := range si {
			if orig[id] != sk[i] {
				t.Fatalf("trial %d: id %d carried to key %d, not its own %d", trial, id, sk[i], orig[id])
			}
		}
	}
}

// TestSelectNth checks the selection against a sort, on random, sorted,
// reversed and duplicate-heavy inputs.
func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(400)
		a := make([]float64, n)
		for i := range a {
			switch trial % 4 {
			case 0:
				a[i] = r.NormFloat64()
			case 1:
				a[i] = float64(i)
			case 2:
				a[i] = float64(-i)
			default:
				a[i] = float64(r.IntN(3 - trial%8/4*2)) // 0..2, or all 0
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		k := r.IntN(n)
		selectNth(a, k)
		if a[k] != want[k] {
			t.Fatalf("trial %d: a[%d] = %v want %v", trial, k, a[k], want[k])
		}
		for i := range a {
			if (i < k && a[i] > a[k]) || (i > k && a[i] < a[k]) {
				t.Fatalf("trial %d: not partitioned around %d", trial, k)
			}
		}
		ints := make([]int64, n) // a few values: the pivot's equals end it
		for i := range ints {
			ints[i] = int64(r.IntN(5)) - 2
		}
		wantI := slices.Clone(ints)
		slices.Sort(wantI)
		if selectNth(ints, k); ints[k] != wantI[k] {
			t.Fatalf("trial %d: int64 a[%d] = %v want %v", trial, k, ints[k], wantI[k])
		}
	}
}

// TestGroupMedianPath fails if median stops using the counting sort and
// selection (groupMedian), and checks a small answer.
func TestGroupMedianPath(t *testing.T) {
	env := PlainEnv(2)
	g, err := GroupBy(env, []*pdarray.Array{pdarray.FromSlice([]int64{2, 1, 2, 1, 2, 3, 1})}, true, "auto")
	if err != nil {
		t.Fatal(err)
	}
	before := medianRuns.Load()
	out, err := GroupAgg(env, g.IDs, g.NGroups, "median", pdarray.FromSlice([]float64{5, 1, math.NaN(), 4, 1, math.NaN(), 2}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if medianRuns.Load() != before+1 {
		t.Fatal("median did not take groupMedian")
	}
	got := pdarray.View[float64](out)
	if got[0] != 2 || got[1] != 3 || got[2] == got[2] {
		t.Fatalf("medians %v, want [2 3 NaN]", got)
	}
}

// TestGroupByStaleStats: stats that no longer cover the keys (an array
// written since) give an error, never an index out of range.
func TestGroupByStaleStats(t *testing.T) {
	keys := []*pdarray.Array{pdarray.FromSlice([]int64{1, 2, 3, 50})}
	stale := &KeyStats{Lo: sortKeyInt(int64(1)), Hi: sortKeyInt(int64(3))}
	for _, w := range []int{1, 2} {
		_, err := GroupByWith(PlainEnv(w), keys, true, StrategyDense, []*KeyStats{stale})
		var oe *Error
		if !errors.As(err, &oe) || oe.Kind != ErrValue {
			t.Fatalf("w=%d: stale stats gave %v", w, err)
		}
	}
}

// TestGroupDenseLonePath: a lone integer key is grouped by the fused pass
// (ids and occupancy straight from the typed keys), several keys are not,
// and both give the reference grouping.
func TestGroupDenseLonePath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		keys []*pdarray.Array
		lone bool
	}{
		{[]*pdarray.Array{gbInts[int64](r, 50_000, -20, 300)}, true},
		{[]*pdarray.Array{gbInts[uint8](r, 50_000, 0, 200)}, true},
		{[]*pdarray.Array{gbInts[int32](r, 50_000, 1, 30), gbInts[int64](r, 50_000, 1, 30)}, false},
	} {
		for _, w := range []int{1, 2, 8} {
			before := denseLonePasses.Load()
			checkGrouping(t, PlainEnv(w), c.keys, true, "auto", StrategyDense, &refGrouping{})
			if took := denseLonePasses.Load() != before; took != c.lone {
				t.Fatalf("%d keys, w=%d: fused lone-key pass taken %v, want %v", len(c.keys), w, took, c.lone)
			}
		}
	}
	// Two and three int64 keys: the fused multi-key pass.
	for _, keys := range [][]*pdarray.Array{
		{gbInts[int64](r, 50_000, -5, 40), gbInts[int64](r, 50_000, 1000, 30)},
		{gbInts[int64](r, 50_000, 1, 265), gbInts[int64](r, 50_000, 1, 265), gbInts[int64](r, 50_000, 0, 24)},
	} {
		for _, w := range []int{1, 2, 8} {
			before := denseInt64Passes.Load()
			checkGrouping(t, PlainEnv(w), keys, true, StrategyDense, StrategyDense, &refGrouping{})
			if denseInt64Passes.Load() == before {
				t.Fatalf("%d int64 keys, w=%d: fused multi-key pass not taken", len(keys), w)
			}
			stale := make([]*KeyStats, len(keys))
			for k := range stale {
				stale[k] = &KeyStats{Lo: sortKeyInt(int64(1000)), Hi: sortKeyInt(int64(1001))}
			}
			var oe *Error
			if _, err := GroupByWith(PlainEnv(w), keys, true, StrategyDense, stale); !errors.As(err, &oe) || oe.Kind != ErrValue {
				t.Fatalf("%d int64 keys, w=%d: stale stats gave %v", len(keys), w, err)
			}
		}
	}
}

// TestExactIntSums: means and float sums of small integers come from
// per-worker integer sums when there are several workers, bit-identical to
// a row-order float64 loop; values too large for that bound take the
// ordered float loop and still match it.
func TestExactIntSums(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const n, ng = 200_000, 37
	ids := make([]int32, n)
	small := make([]int64, n)
	big := make([]int64, n)
	for i := range ids {
		ids[i] = int32(r.IntN(ng+1)) - 1 // -1: a dropped row
		small[i] = r.Int64N(2001) - 1000
		big[i] = r.Int64() >> 2 // sums lose bits: order matters
	}
	idArr := pdarray.FromSlice(ids)
	for _, c := range []struct {
		name  string
		x     []int64
		exact bool
	}{{"small", small, true}, {"big", big, false}} {
		want := make([]float64, ng)
		cnt := make([]float64, ng)
		for i, g := range ids {
			if g >= 0 {
				want[g] += float64(c.x[i])
				cnt[g]++
			}
		}
		for _, w := range []int{1, 2, 8} {
			before := exactIntPasses.Load()
			outs, err := GroupAggMany(PlainEnv(w), idArr, ng, []string{"mean", "size"}, pdarray.FromSlice(c.x), 0)
			if err != nil {
				t.Fatal(err)
			}
			if took := exactIntPasses.Load() != before; took != (c.exact && w > 1) {
				t.Fatalf("%s w=%d: integer sums taken %v", c.name, w, took)
			}
			m, sz := pdarray.View[float64](outs[0]), pdarray.View[int64](outs[1])
			for g := range want {
				if math.Float64bits(m[g]) != math.Float64bits(want[g]/cnt[g]) || float64(sz[g]) != cnt[g] {
					t.Fatalf("%s w=%d group %d: mean %v size %d, want %v %v", c.name, w, g, m[g], sz[g], want[g]/cnt[g], cnt[g])
				}
			}
		}
	}
}

// TestGroupAggColumns: several value arrays side by side give each
// column's GroupAggMany results bit for bit, at every worker count.
func TestGroupAggColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	const n, ng = 40_000, 90
	ids := make([]int32, n)
	f := make([]float64, n)
	f32 := make([]float32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(ng+1)) - 1
		f[i] = r.NormFloat64() * 1e6
		f32[i] = float32(r.NormFloat64())
		if r.IntN(25) == 0 {
			f[i], f32[i] = math.NaN(), float32(math.NaN())
		}
	}
	idArr := pdarray.FromSlice(ids)
	cols := []AggColumn{
		{Values: pdarray.FromSlice(f), Ops: []string{"sum", "mean", "size", "count"}},
		{Values: pdarray.FromSlice(f32), Ops: []string{"count", "mean"}},
		{Values: gbInts[int64](r, n, -50, 100), Ops: []string{"mean", "max"}},
		{Values: gbInts[int8](r, n, 0, 5), Ops: []string{"sum"}},
		{Ops: []string{"size"}},
		// More columns than one loop takes: a bin's int64 and other columns
		// run in loops of up to three, NaN counts kept per column.
		{Values: pdarray.FromSlice(slices.Concat(f[n/2:], f[:n/2])), Ops: []string{"var", "count"}},
		{Values: gbInts[int64](r, n, -1e6, 1e6), Ops: []string{"std", "size"}},
		{Values: gbInts[int32](r, n, -9, 9), Ops: []string{"mean"}},
		{Values: pdarray.FromSlice(slices.Concat(f[:n/4], f[n/4:])), Ops: []string{"sum", "mean"}},
		{Values: pdarray.FromSlice(slices.Concat(f32[n/2:], f32[:n/2])), Ops: []string{"sum"}},
	}
	for _, w := range []int{1, 2, 3, 8} {
		before, beforeInt := fusedColsPasses.Load(), intSharedPasses.Load()
		got, err := GroupAggColumns(PlainEnv(w), idArr, ng, cols, 0)
		if err != nil {
			t.Fatal(err)
		}
		if took := fusedColsPasses.Load() != before; !took {
			t.Fatalf("w=%d: one sums pass for all columns taken %v", w, took)
		}
		if took := intSharedPasses.Load() != beforeInt; took != (w > 1) {
			t.Fatalf("w=%d: exact int64 sums by blocks of rows taken %v", w, took)
		}
		for c, col := range cols {
			want, err := GroupAggMany(PlainEnv(1), idArr, ng, col.Ops, col.Values, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !sameBits(got[c][i], want[i]) {
					t.Fatalf("w=%d column %d %s differs from GroupAggMany", w, c, col.Ops[i])
				}
			}
		}
	}
	// int64 values past 2^53/rows: the exact sums are refused and every
	// column is still the row-order float loop's, bit for bit.
	big := make([]int64, n)
	for i := range big {
		big[i] = r.Int64() >> 2
	}
	cols = []AggColumn{{Values: pdarray.FromSlice(big), Ops: []string{"mean"}}, {Values: cols[2].Values, Ops: []string{"mean"}},
		{Values: pdarray.FromSlice(f), Ops: []string{"mean"}}}
	for _, w := range []int{2, 8} {
		beforeInt := intSharedPasses.Load()
		got, err := GroupAggColumns(PlainEnv(w), idArr, ng, cols, 0)
		if err != nil {
			t.Fatal(err)
		}
		if intSharedPasses.Load() != beforeInt {
			t.Fatalf("w=%d: exact int64 sums taken for values near 2^61", w)
		}
		for c, col := range cols {
			want, _ := GroupAggMany(PlainEnv(1), idArr, ng, col.Ops, col.Values, 0)
			if !sameBits(got[c][0], want[0]) {
				t.Fatalf("w=%d big column %d differs from GroupAggMany", w, c)
			}
		}
	}
	// One array and a size: the array keeps every worker (no split).
	before := sideBySide.Load()
	if _, err := GroupAggColumns(PlainEnv(2), idArr, ng, []AggColumn{{Values: pdarray.FromSlice(f), Ops: []string{"sum", "mean"}}, {Ops: []string{"size"}}}, 0); err != nil {
		t.Fatal(err)
	}
	if sideBySide.Load() != before {
		t.Fatal("one array and a size split the workers")
	}
	bad := []AggColumn{{Values: pdarray.FromSlice(f), Ops: []string{"sum"}}, {Values: pdarray.FromSlice(f), Ops: []string{"bogus"}}}
	if _, err := GroupAggColumns(PlainEnv(2), idArr, ng, bad, 0); err == nil {
		t.Fatal("an unknown op in one column was accepted")
	}
}

// TestProbeIDs: probeIDs numbers keys exactly as tableIDs does (first seen,
// first numbered), dropped rows -1, through table growth and blocks with
// no misses, with its two-loop path counted.
func TestProbeIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	env := PlainEnv(1)
	for _, nk := range []int{1, 7, 300, 5000, 70_000} {
		distinct := make([]uint64, nk)
		for i := range distinct {
			distinct[i] = r.Uint64() >> 2
		}
		keys := make([]uint64, 50_000)
		for i := range keys {
			keys[i] = distinct[r.IntN(nk)]
			if r.IntN(50) == 0 {
				keys[i] = dropKey
			}
		}
		for _, pre := range []uint{0, partBits} {
			want := make([]int32, len(keys))
			ref, _ := newHashTable(env, 4)
			ref.mul = hashMulPast(pre)
			if err := tableIDs(env, ref, keys, want, 1); err != nil {
				t.Fatal(err)
			}
			got := make([]int32, len(keys))
			tb, _ := newHashTable(env, 4)
			tb.mul = hashMulPast(pre)
			before := probeRuns.Load()
			if err := probeIDs(env, tb, slices.Clone(keys), 1, got, 2, new(probeBuf)); err != nil {
				t.Fatal(err)
			}
			if probeRuns.Load() != before+1 {
				t.Fatal("probeIDs did not count its run")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d keys pre=%d: ids differ from tableIDs'", nk, pre)
			}
			if !slices.Equal(tb.order, ref.order) {
				t.Fatalf("%d keys pre=%d: distinct keys differ from tableIDs'", nk, pre)
			}
			ref.release()
			tb.release()
		}
	}
}

// limitEnv fails an allocation once the bytes it holds would pass limit,
// poisons what it frees (a kernel that writes freed memory then breaks its
// own results or another buffer's), and reports what is still held.
func limitEnv(workers int, limit int64) (Env, func() int64) {
	var mu sync.Mutex
	held := map[*pdarray.Array]int64{}
	var used int64
	e := PlainEnv(workers)
	e.Alloc = func(d pdarray.DType, n int) (*pdarray.Array, error) {
		mu.Lock()
		defer mu.Unlock()
		nb := int64(n * d.Size())
		if used+nb > limit {
			return nil, errorf(ErrValue, "test limit: %d bytes more than the %d left", nb, limit-used)
		}
		a, err := pdarray.Alloc(d, n)
		if err == nil {
			used += nb
			held[a] = nb
		}
		return a, err
	}
	e.Free = func(a *pdarray.Array) {
		mu.Lock()
		defer mu.Unlock()
		nb, ok := held[a]
		if !ok {
			panic("freed twice, or not allocated here")
		}
		delete(held, a)
		used -= nb
		// By doubling copies: a byte at a time, -race's check of each
		// write was much of these tests' time.
		if b := a.Bytes(); len(b) > 0 {
			b[0] = 0xAB
			for j := 1; j < len(b); j *= 2 {
				copy(b[j:], b[:j])
			}
		}
	}
	return e, func() int64 { mu.Lock(); defer mu.Unlock(); return used }
}

// TestGroupByOutOfMemory: under every memory limit from too little for
// anything to enough, the hash and partitioned groupings either fail with an
// error or give the reference ids, and hold no memory afterwards but their
// results'.
func TestGroupByOutOfMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const n = 200_000
	spread, skewed := make([]int64, n), make([]int64, n)
	for i := range spread {
		spread[i] = int64(r.IntN(120_000)) * 7_919
		skewed[i] = int64(r.IntN(120_000))
		if r.IntN(10) == 0 {
			skewed[i] = r.Int64N(1 << 40)
		}
	}
	for _, k := range [][]int64{spread, skewed} {
		keys := []*pdarray.Array{pdarray.FromSlice(k)}
		refIDs, _ := refGroups(keys, true)
		for _, w := range []int{1, 2} {
			fails := 0
			for limit := int64(1 << 16); limit < 1<<26; limit = limit * 5 / 4 {
				env, used := limitEnv(w, limit)
				g, err := GroupBy(env, keys, true, "auto")
				if err != nil {
					fails++
					if u := used(); u != 0 {
						t.Fatalf("w=%d limit %d: %v, and %d bytes still held", w, limit, err, u)
					}
					continue
				}
				if !slices.Equal(pdarray.View[int32](g.IDs), refIDs) {
					t.Fatalf("w=%d limit %d: ids differ from the reference", w, limit)
				}
				g.Free(env)
				if u := used(); u != 0 {
					t.Fatalf("w=%d limit %d: %d bytes held after Free", w, limit, u)
				}
			}
			if fails == 0 {
				t.Fatalf("w=%d: no limit was too small", w)
			}
		}
	}
}

// TestGroupByChained groups several keys in stages (chainLimit lowered so
// small keys chain, with keys grouped on their own), against the plain
// reference, at 1, 2 and 8 workers, with NaN keys dropped or kept.
func TestGroupByChained(t *testing.T) {
	defer func(l uint64) { chainLimit = l }(chainLimit)
	for _, limit := range []uint64{math.MaxUint64, 64, 7} {
		chainLimit = limit
		for _, n := range []int{0, 1, 5000, 30000} {
			r := rand.New(rand.NewPCG(uint64(n), limit))
			f := make([]float64, n)
			for i := range f {
				f[i] = []float64{math.NaN(), -1e300, 0, 2.5, math.Inf(1), 1}[r.IntN(6)]
			}
			cases := map[string][]*pdarray.Array{
				"ints":       {gbInts[int64](r, n, -5, 9), gbInts[uint16](r, n, 0, 40), gbInts[int32](r, n, 3, 11)},
				"floats":     {gbInts[int8](r, n, 0, 4), pdarray.FromSlice(f), gbInts[int64](r, n, -1<<50, 1<<51)},
				"many-group": {gbInts[int64](r, n, 0, int64(n/3+1)), gbInts[int64](r, n, -1<<40, 1<<41), gbInts[uint8](r, n, 0, 5)},
			}
			for name, keys := range cases {
				for _, dropna := range []bool{true, false} {
					ref := &refGrouping{}
					for _, workers := range []int{1, 2, 8} {
						t.Run(fmt.Sprintf("limit=%d/n=%d/%s/dropna=%v/w=%d", limit, n, name, dropna, workers), func(t *testing.T) {
							before := chainStages.Load()
							g := checkGrouping(t, PlainEnv(workers), keys, dropna, StrategyChained, StrategyChained, ref)
							defer g.Free(PlainEnv(workers))
							stages := chainStages.Load() - before
							if limit < 64 && n > 1 && stages < 3 {
								t.Errorf("%d stages, want 3 or more", stages)
							}
						})
					}
				}
			}
		}
	}
}

// TestGroupByChainedOutOfMemory runs a chained grouping under a range of
// memory limits: each either fails, holding nothing, or gives the reference.
func TestGroupByChainedOutOfMemory(t *testing.T) {
	defer func(l uint64) { chainLimit = l }(chainLimit)
	chainLimit = 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	n := 50000
	keys := []*pdarray.Array{gbInts[int64](r, n, 0, 2000), gbInts[int64](r, n, 0, 2000), gbInts[int64](r, n, 0, 100)}
	ref := &refGrouping{}
	checkGrouping(t, PlainEnv(2), keys, true, StrategyChained, StrategyChained, ref)
	fits := 0
	defer func() {
		if fits == 0 {
			t.Error("no limit fitted the grouping")
		}
	}()
	for limit := int64(0); limit < 12<<20; limit += 1 << 19 {
		env, used := limitEnv(2, limit)
		g, err := GroupBy(env, keys, true, StrategyChained)
		if err != nil {
			if used := used(); used != 0 {
				t.Fatalf("limit %d: failed holding %d bytes", limit, used)
			}
			continue
		}
		if !slices.Equal(pdarray.View[int32](g.IDs), ref.ids) {
			t.Fatalf("limit %d: ids differ", limit)
		}
		fits++
		g.Free(env)
		if used := used(); used != 0 {
			t.Fatalf("limit %d: %d bytes held after Free", limit, used)
		}
	}
}

// TestDivPeel checks the float-estimated division against the hardware's.
func TestDivPeel(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for range 2000 {
		d := uint64(1) + r.Uint64N(uint64(1)<<r.UintN(63))
		u := make([]uint64, 64)
		for i := range u {
			switch i % 4 {
			case 0:
				u[i] = r.Uint64N(1 << 52)
			case 1: // next to a multiple of d
				u[i] = min((r.Uint64N(1<<52)/d)*d+r.Uint64N(3), 1<<52-1) - r.Uint64N(2)
			case 2:
				u[i] = r.Uint64()
			default:
				u[i] = 1<<52 - 1 - r.Uint64N(4)
			}
		}
		orig := slices.Clone(u)
		rem := make([]uint64, len(u))
		divPeel(u, rem, d)
		for i, x := range orig {
			if u[i] != x/d || rem[i] != x%d {
				t.Fatalf("%d / %d: got %d rem %d, want %d rem %d", x, d, u[i], rem[i], x/d, x%d)
			}
		}
	}
}

// TestGroupGathered: a median with means, variances and standard deviations
// of the same array (G1 q6) gathers the values by group once, on every
// worker where the groups are few, and gives bit for bit what each
// aggregation gives alone (groupFloatSums' and groupMeanVar's row-order
// loops) and a sequential loop; float64 values with NaN and int64 values,
// empty groups (ids -1 rows only), ddof 0 and 1, 1, 2 and 8 workers.
func TestGroupGathered(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 200_000
	for _, ng := range []int{1, 37, 5000, 150_000} {
		ids := make([]int32, n)
		f := make([]float64, n)
		iv := make([]int64, n)
		for i := range ids {
			ids[i] = int32(r.IntN(ng))
			if r.IntN(40) == 0 {
				ids[i] = -1
			}
			f[i] = r.NormFloat64() * 1e3
			if r.IntN(30) == 0 {
				f[i] = math.NaN()
			}
			iv[i] = r.Int64N(1<<40) - 1<<39
		}
		if ng > 1 {
			for i := range ids {
				if ids[i] == 1 {
					ids[i] = -1 // group 1 empty
				}
			}
		}
		gid := pdarray.FromSlice(ids)
		ops := []string{"std", "median", "count", "mean", "var", "size"}
		for _, vals := range []*pdarray.Array{pdarray.FromSlice(f), pdarray.FromSlice(iv)} {
			// A sequential loop for the standard deviation: the sums and
			// squares, whatever the ddof.
			s, c := make([]float64, ng), make([]float64, ng)
			x := func(i int) float64 {
				if vals.DType() == dF64 {
					return pdarray.View[float64](vals)[i]
				}
				return float64(pdarray.View[int64](vals)[i])
			}
			for i, g := range ids {
				if v := x(i); g >= 0 && v == v {
					s[g] += v
					c[g]++
				}
			}
			ss := make([]float64, ng)
			for i, g := range ids {
				if v := x(i); g >= 0 && v == v {
					d := v - s[g]/c[g]
					ss[g] += d * d
				}
			}
			for _, ddof := range []float64{0, 1} {
				// Each aggregation alone, on one worker: the same for every
				// worker count checked, so made once for them.
				alones := make([]*pdarray.Array, len(ops))
				for i, op := range ops {
					alone, err := GroupAgg(PlainEnv(1), gid, ng, op, vals, ddof)
					if err != nil {
						t.Fatal(err)
					}
					alones[i] = alone
				}
				for _, w := range []int{1, 2, 8} {
					env := PlainEnv(w)
					par, mom := gatheredParallel.Load(), gatheredMoments.Load()
					got, err := GroupAggMany(env, gid, ng, ops, vals, ddof)
					if err != nil {
						t.Fatal(err)
					}
					if gatheredMoments.Load() != mom+1 {
						t.Fatalf("ng %d, %v: the moments were not made from the gathered values", ng, vals.DType())
					}
					wantPar := rowSplit(env, n, ng) > 1
					if w == 2 && ng <= 5000 && !wantPar {
						t.Fatalf("ng %d, 2 workers: no row blocks", ng)
					}
					if (gatheredParallel.Load() > par) != wantPar {
						t.Fatalf("ng %d, %d workers: gathered on several workers %v, want %v", ng, w, gatheredParallel.Load() > par, wantPar)
					}
					for i, op := range ops {
						if alone := alones[i]; !bytes.Equal(got[i].Bytes(), alone.Bytes()) {
							t.Fatalf("ng %d, %v, ddof %v, %d workers: %s differs from its own pass: %v against %v", ng, vals.DType(), ddof, w, op, head(got[i]), head(alone))
						}
					}
					std := pdarray.View[float64](got[0])
					for g := range ng {
						want := math.NaN()
						if c[g]-ddof > 0 {
							want = math.Sqrt(ss[g] / (c[g] - ddof))
						}
						if math.Float64bits(std[g]) != math.Float64bits(want) && !(want != want && std[g] != std[g]) {
							t.Fatalf("ng %d, group %d: std %v, loop %v", ng, g, std[g], want)
						}
					}
				}
			}
		}
	}
}

// TestGroupMinMaxInt: max and min of integer values take groupMinMaxInt
// (every integer dtype and bool, dropped rows, empty groups, row blocks on
// several workers and not) and equal a sequential loop (an empty group: 0).
func TestGroupMinMaxInt(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 150_000
	for _, ng := range []int{1, 50, 40_000} {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(r.IntN(ng))
			if r.IntN(20) == 0 {
				ids[i] = -1
			}
			if ng > 1 && ids[i] == int32(ng-1) {
				ids[i] = -1 // the last group empty
			}
		}
		gid := pdarray.FromSlice(ids)
		for _, vals := range []*pdarray.Array{
			gbInts[int64](r, n, math.MinInt64/2, math.MaxInt64/2), gbInts[int32](r, n, math.MinInt32, math.MaxInt32),
			gbInts[int16](r, n, -1<<15, 1<<15), gbInts[int8](r, n, -128, 256), gbInts[uint64](r, n, 0, math.MaxInt64),
			gbInts[uint32](r, n, 0, 1<<32), gbInts[uint16](r, n, 0, 1<<16), gbInts[uint8](r, n, 0, 256),
			pdarray.FromSlice(gbBools(r, n)),
		} {
			for _, op := range []string{"max", "min"} {
				// The sequential loop, in int64 (or uint64) terms: once for
				// every worker count.
				want, seen := make([]uint64, ng), make([]bool, ng)
				for i, g := range ids {
					if g < 0 {
						continue
					}
					v := intAt(vals, i)
					if !seen[g] || (op == "max") == greater(vals.DType(), v, want[g]) && v != want[g] {
						want[g], seen[g] = v, true
					}
				}
				for _, w := range []int{1, 2, 8} {
					before := minMaxIntRuns.Load()
					got, err := GroupAgg(PlainEnv(w), gid, ng, op, vals, 0)
					if err != nil {
						t.Fatal(err)
					}
					if minMaxIntRuns.Load() != before+1 {
						t.Fatalf("%v %s: not groupMinMaxInt", vals.DType(), op)
					}
					for g := range ng {
						if have := intAt(got, g); have != want[g] {
							t.Fatalf("%v %s ng %d w %d group %d: %d, want %d (seen %v)", vals.DType(), op, ng, w, g, have, want[g], seen[g])
						}
					}
				}
			}
		}
	}
}

// intAt is a's element i as the bits of a uint64 (sign-extended for
// signed dtypes).
func intAt(a *pdarray.Array, i int) uint64 {
	switch a.DType() {
	case dI64:
		return uint64(pdarray.View[int64](a)[i])
	case dI32:
		return uint64(int64(pdarray.View[int32](a)[i]))
	case dI16:
		return uint64(int64(pdarray.View[int16](a)[i]))
	case dI8:
		return uint64(int64(pdarray.View[int8](a)[i]))
	case dU64:
		return pdarray.View[uint64](a)[i]
	case dU32:
		return uint64(pdarray.View[uint32](a)[i])
	case dU16:
		return uint64(pdarray.View[uint16](a)[i])
	}
	return uint64(a.Bytes()[i]) // uint8, bool
}

// greater compares two intAt values of dtype d.
func greater(d pdarray.DType, a, b uint64) bool {
	switch d {
	case dI64, dI32, dI16, dI8:
		return int64(a) > int64(b)
	}
	return a > b
}

// TestChainedKeyWritten: a key written one past its range (stale stats, as
// a concurrent setitem leaves them) on the row whose leading keys rank
// last carries into a chained stage's ids digit; decoding that stage ends
// the grouping with ErrValue, not an index out of range in a worker, for
// stages grouped by hash, by range partitions and by hash partitions.
func TestChainedKeyWritten(t *testing.T) {
	defer func(l uint64) { chainLimit = l }(chainLimit)
	for _, c := range []struct {
		name       string
		n          int
		s01, s2    int64
		limit      uint64
		skew, part bool
	}{
		{"hash", 5000, 100, 100, 1_000_000, false, false},
		{"range partitions", 300_000, 1000, 10, 5_000_000, false, true},
		{"hash partitions", 300_000, 1000, 100, 100_000_000, true, true},
	} {
		chainLimit = c.limit
		r := rand.New(rand.NewPCG(3, 4))
		k0, k1, k2 := make([]int64, c.n), make([]int64, c.n), make([]int64, c.n)
		for i := range k0 {
			k0[i], k1[i], k2[i] = r.Int64N(c.s01), r.Int64N(c.s01), r.Int64N(c.s2)
			if c.skew && r.IntN(4) != 0 {
				k0[i], k1[i] = 0, r.Int64N(50)
			}
		}
		k0[0], k1[0], k2[0] = c.s01-1, c.s01-1, c.s2-1 // the last (k0, k1) pair, and k2's max
		keys := []*pdarray.Array{pdarray.FromSlice(k0), pdarray.FromSlice(k1), pdarray.FromSlice(k2)}
		var st []*KeyStats
		for _, k := range keys {
			s := keyStatsOf(PlainEnv(1), k)
			st = append(st, &s)
		}
		pdarray.View[int64](keys[2])[0] = c.s2 // past the stats' maximum
		for _, w := range []int{1, 2} {
			pr := partitionedRuns.Load()
			_, err := GroupByWith(PlainEnv(w), keys, true, StrategyChained, st)
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrValue {
				t.Errorf("%s, %d workers: %v", c.name, w, err)
			}
			if w == 1 && (partitionedRuns.Load() > pr) != c.part {
				t.Errorf("%s: partitioned %v", c.name, partitionedRuns.Load() > pr)
			}
		}
	}
}

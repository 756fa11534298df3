package ops

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestGroupByAggFused: the fused grouping and aggregation gives, bit for
// bit, what GroupByWith then GroupAggColumns give (keys of every integer
// width, counts, int64 sums that wrap, float64 sums and means with NaN
// values), at 1, 2 and 8 workers, and takes the fused path exactly where it
// applies (one dense integer key, one column); the other cases check that
// it stays out of the way.
func TestGroupByAggFused(t *testing.T) {
	start, expected, piped := fusedPasses.Load(), uint64(0), fusedPipelined.Load()
	defer func() {
		if fusedPipelined.Load() == piped {
			t.Error("no fused hash grouping ran on two goroutines")
		}
		// 4 sizes × 4 dense lone integer keys, and 2 sizes × 2 hashed keys (at
		// 0 and 1 rows they are dense), × 4 lone columns × dropna × 3 worker
		// counts.
		if got := fusedPasses.Load() - start; got != expected || got != (16+4)*24 {
			t.Errorf("%d fused groupings, want %d = %d", got, expected, (16+4)*24)
		}
	}()
	for _, n := range []int{0, 1, 4097, 30000} {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		f := make([]float64, n)  // wide: never dense
		f2 := make([]float64, n) // neighbours and NaN: dense, NaN dropped or its own group
		v := make([]float64, n)
		for i := range f {
			f[i] = []float64{math.NaN(), -2.5, 0, 2.5, 1e300, 1}[r.IntN(6)]
			f2[i] = []float64{math.NaN(), 2.5, math.Nextafter(2.5, 3)}[r.IntN(3)]
			v[i] = r.NormFloat64() * 1e3
			if r.IntN(50) == 0 {
				v[i] = math.NaN()
			}
		}
		fv := pdarray.FromSlice(v)
		iv := gbInts[int64](r, n, math.MinInt64/2, math.MaxInt64/2) // sums wrap: exact either way
		keyCases := map[string][]*pdarray.Array{
			"one-int":    {gbInts[int64](r, n, 1, 101)},
			"one-int32":  {gbInts[int32](r, n, -1000, 3000)},
			"one-uint16": {gbInts[uint16](r, n, 7, 60000)},
			"one-int8":   {gbInts[int8](r, n, -128, 256)},
			"int-uint8":  {gbInts[int32](r, n, -50, 50), gbInts[uint8](r, n, 0, 7)},
			"float-int":  {pdarray.FromSlice(f), gbInts[int16](r, n, 0, 3)},
			"nan-int":    {pdarray.FromSlice(f2), gbInts[int16](r, n, 0, 3)},
			"float":      {pdarray.FromSlice(f)},                                          // hashed
			"wide-two":   {gbInts[int64](r, n, -1<<40, 1<<41), gbInts[uint8](r, n, 0, 3)}, // hashed
			"bool":       {pdarray.FromSlice(gbBools(r, n))},
		}
		colCases := map[string][]AggColumn{
			"int-sum":       {{Values: iv, Ops: []string{"sum", "count", "size"}}},
			"int-sum-alone": {{Values: iv, Ops: []string{"sum"}}}, // the occupancy bitmap, no row counts
			"float-all":     {{Values: fv, Ops: []string{"mean", "sum", "count", "size"}}},
			"mixed":         {{Values: iv, Ops: []string{"sum"}}, {Values: fv, Ops: []string{"mean"}}, {Ops: []string{"size"}}},
			"size-only":     {{Ops: []string{"size"}}},
			"not-fusable":   {{Values: fv, Ops: []string{"max"}}},
		}
		for kn, keys := range keyCases {
			for cn, cols := range colCases {
				for _, dropna := range []bool{true, false} {
					for _, w := range []int{1, 2, 8} {
						t.Run(fmt.Sprintf("n=%d/%s/%s/dropna=%v/w=%d", n, kn, cn, dropna, w), func(t *testing.T) {
							env := PlainEnv(w)
							want, err := GroupByWith(env, keys, dropna, "auto", nil)
							if err != nil {
								t.Fatal(err)
							}
							defer want.Free(env)
							wantOuts, err := GroupAggColumns(env, want.IDs, want.NGroups, cols, 0)
							if err != nil {
								t.Fatal(err)
							}
							before := fusedPasses.Load()
							g, outs, fused, err := GroupByAgg(env, keys, dropna, "auto", nil, cols)
							if err != nil {
								t.Fatal(err)
							}
							lone := len(keys) == 1 && Kind(keys[0].DType()) != 'f' && keys[0].DType() != pdarray.Bool
							expect := len(cols) == 1 && cn != "not-fusable" && (lone && want.Strategy == StrategyDense || want.Strategy == StrategyHash)
							if expect {
								expected++
							}
							if fused != expect || fused != (fusedPasses.Load() == before+1) {
								t.Fatalf("fused %v (counted %d)", fused, fusedPasses.Load()-before)
							}
							if !fused {
								return
							}
							defer g.Free(env)
							if g.IDs != nil || g.NGroups != want.NGroups || g.Kept != want.Kept || g.Strategy != want.Strategy {
								t.Fatalf("grouping: ngroups %d kept %d strategy %s, want %d %d %s", g.NGroups, g.Kept, g.Strategy, want.NGroups, want.Kept, want.Strategy)
							}
							for k := range keys {
								if !bytes.Equal(g.Keys[k].Bytes(), want.Keys[k].Bytes()) {
									t.Fatalf("unique keys %d differ", k)
								}
							}
							for c := range cols {
								for i, op := range cols[c].Ops {
									got, exp := outs[c][i], wantOuts[c][i]
									if got.DType() != exp.DType() || !bytes.Equal(got.Bytes(), exp.Bytes()) {
										t.Fatalf("column %d %s: %v %v, want %v %v", c, op, got.DType(), head(got), exp.DType(), head(exp))
									}
								}
							}
						})
					}
				}
			}
		}
	}
}

func head(a *pdarray.Array) string {
	if a.DType() == dF64 {
		v := pdarray.View[float64](a)
		return fmt.Sprint(v[:min(4, len(v))])
	}
	v := pdarray.View[int64](a)
	return fmt.Sprint(v[:min(4, len(v))])
}

func gbBools(r *rand.Rand, n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = r.IntN(3) == 0
	}
	return b
}

// TestGroupByAggFusedLimits: more distinct keys than one hash table takes,
// a forced strategy and unsupported dtypes or ops are not fused (nothing
// held); an out-of-memory failure holds nothing.
func TestGroupByAggFusedLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	v := gbInts[int64](r, n, 0, 100)
	cols := []AggColumn{{Values: v, Ops: []string{"sum"}}}
	env, used := limitEnv(2, 1<<30)
	for name, c := range map[string]struct {
		keys     []*pdarray.Array
		strategy string
		cols     []AggColumn
	}{
		"too-many": {[]*pdarray.Array{gbInts[int64](r, 3*hashBigTable, 0, 1<<40)}, "auto", []AggColumn{{Values: gbInts[int64](r, 3*hashBigTable, 0, 9), Ops: []string{"sum"}}}},
		"forced":   {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, StrategyDense, cols},
		"int32":    {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{{Values: gbInts[int32](r, n, 0, 9), Ops: []string{"sum"}}}},
		"int-mean": {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{{Values: v, Ops: []string{"mean"}}}},
		"short":    {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{{Values: gbInts[int64](r, n-1, 0, 9), Ops: []string{"sum"}}}},
	} {
		if _, _, fused, err := GroupByAgg(env, c.keys, true, c.strategy, nil, c.cols); fused || err != nil || used() != 0 {
			t.Errorf("%s: fused %v, err %v, %d bytes held", name, fused, err, used())
		}
	}
	keys := []*pdarray.Array{gbInts[int64](r, n, 0, 1000)}
	fits := 0
	for limit := int64(0); limit < 64<<10; limit += 4 << 10 {
		env, used := limitEnv(2, limit)
		g, outs, fused, err := GroupByAgg(env, keys, true, "auto", nil, cols)
		if !fused {
			t.Fatalf("limit %d: not fused", limit)
		}
		if err != nil {
			if used() != 0 {
				t.Fatalf("limit %d: failed holding %d bytes", limit, used())
			}
			continue
		}
		fits++
		g.Free(env)
		freeOuts(env, outs)
		if used() != 0 {
			t.Fatalf("limit %d: %d bytes held after Free", limit, used())
		}
	}
	if fits == 0 {
		t.Error("no limit fitted the fused grouping")
	}
}

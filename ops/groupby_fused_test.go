package ops

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// TestGroupByAggFused: the fused grouping and aggregation gives, bit for
// bit, what GroupByWith then GroupAggColumns give (keys of every integer
// width, counts, int64 sums that wrap, float64 sums and means with NaN
// values), at 1, 2 and 8 workers, and takes the fused path exactly where it
// applies (one dense integer key, one column); the other cases check that
// it stays out of the way.
func TestGroupByAggFused(t *testing.T) {
	// Blocks of 2048 rows: 30,000 rows make 15, probed on several workers.
	defer func(b int) { fusedBlock = b }(fusedBlock)
	fusedBlock = 2048
	defer func(p bool) { testPairAlways = p }(testPairAlways)
	testPairAlways = true // int64 columns paired at every key range (lonePlan: TestLonePlan)
	start, expected, piped, pending := fusedPasses.Load(), uint64(0), fusedParallel.Load(), fusedPending.Load()
	var multi, inexact uint64
	defer func() {
		if fusedParallel.Load() == piped {
			t.Error("no fused hash grouping was probed on several goroutines")
		}
		if fusedPending.Load() == pending {
			t.Error("no key new to the table was met by a parallel probe (wide keys are)")
		}
		// 4 sizes × 4 dense lone integer keys, 2 sizes × 3 hashed keys, and
		// the lone wide int64 key at 0 and 1 rows (dense there), × 6 lone
		// columns × dropna × 3 worker counts; and the 18 dense lone keys ×
		// 6 column cases only fusedLone takes (int64 means, several
		// columns) × dropna × 3 worker counts.
		if want := (16+6+2)*36 + 18*6*6; fusedPasses.Load()-start != expected || expected != uint64(want) {
			t.Errorf("%d fused groupings, want %d = %d", fusedPasses.Load()-start, expected, want)
		}
		if multi == 0 || inexact == 0 {
			t.Errorf("%d groupings of several columns, %d int64 means added as float64", multi, inexact)
		}
	}()
	for _, n := range []int{0, 1, 4097, 30000} {
		refs := refGroupings{} // (the same for all 13 column cases)
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
		sv := gbInts[int64](r, n, -1<<20, 1<<20)                    // means exact from int64 sums
		pv := gbInts[int64](r, n, 1, 1000)                          // at least 1: a sum of 0 is an empty slot
		zv := pdarray.FromSlice(make([]int64, n))                   // every sum 0: occupancy from the keys, in the loop
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
			"wide-int":   {gbInts[int64](r, n, -1<<40, 1<<41)},                            // hashed, probeLoneIDs
			"bool":       {pdarray.FromSlice(gbBools(r, n))},
		}
		colCases := map[string][]AggColumn{
			"int-sum":       {{Values: iv, Ops: []string{"sum", "count", "size"}}},
			"int-sum-alone": {{Values: iv, Ops: []string{"sum"}}}, // no row counts: occupancy from the sums, or a pass over the keys
			"pos-sums":      {{Values: pv, Ops: []string{"sum"}}}, // no pass over the keys
			"zero-sums":     {{Values: zv, Ops: []string{"sum"}}}, // slots marked as the values are added
			"float-all":     {{Values: fv, Ops: []string{"mean", "sum", "count", "size"}}},
			"mixed":         {{Values: iv, Ops: []string{"sum"}}, {Values: fv, Ops: []string{"mean"}}, {Ops: []string{"size"}}},
			"mixed-means":   {{Values: fv, Ops: []string{"mean", "size"}}, {Values: sv, Ops: []string{"mean", "sum"}}, {Values: fv, Ops: []string{"sum"}}, {Values: iv, Ops: []string{"count"}}},
			"int-mean":      {{Values: sv, Ops: []string{"mean", "count", "sum"}}},
			"int-mean-big":  {{Values: iv, Ops: []string{"size", "mean"}}},                            // added again as float64
			"int-pair-sums": {{Values: iv, Ops: []string{"sum"}}, {Values: sv, Ops: []string{"sum"}}}, // paired: row counts, no bitmap
			"three-ints":    {{Values: sv, Ops: []string{"sum"}}, {Values: iv, Ops: []string{"mean", "count"}}, {Values: sv, Ops: []string{"mean", "size"}}, {Ops: []string{"size"}}},
			"size-only":     {{Ops: []string{"size"}}},
			"not-fusable":   {{Values: fv, Ops: []string{"max"}}},
		}
		for kn, keys := range keyCases {
			for cn, cols := range colCases {
				for _, dropna := range []bool{true, false} {
					for _, w := range []int{1, 2, 8} {
						t.Run(fmt.Sprintf("n=%d/%s/%s/dropna=%v/w=%d", n, kn, cn, dropna, w), func(t *testing.T) {
							env := PlainEnv(w)
							want := refs.get(t, kn, keys, dropna, w)
							before, lones, mc, im, lp, op, om := fusedPasses.Load(), loneProbes.Load(), fusedMultiCols.Load(), loneInexactMeans.Load(), lonePairs.Load(), loneOccPasses.Load(), loneOccMarked.Load()
							g, outs, fused, err := GroupByAgg(env, keys, dropna, "auto", nil, cols)
							if err != nil {
								t.Fatal(err)
							}
							if fused && kn == "wide-int" && want.Strategy == StrategyHash && loneProbes.Load() == lones {
								t.Fatal("a lone int64 key was packed before it was probed (probeLoneIDs not taken)")
							}
							lone := len(keys) == 1 && Kind(keys[0].DType()) != 'f' && keys[0].DType() != pdarray.Bool
							onlyLone := cn == "mixed" || cn == "mixed-means" || cn == "int-mean" || cn == "int-mean-big" || cn == "int-pair-sums" || cn == "three-ints"
							expect := cn != "not-fusable" && (lone && want.Strategy == StrategyDense || !onlyLone && want.Strategy == StrategyHash)
							if expect {
								expected++
							}
							if fused != expect || fused != (fusedPasses.Load() == before+1) {
								t.Fatalf("fused %v (counted %d)", fused, fusedPasses.Load()-before)
							}
							multi += fusedMultiCols.Load() - mc
							inexact += loneInexactMeans.Load() - im
							if got := fusedMultiCols.Load() - mc; got != uint64(btoi(fused && len(cols) > 1)) {
								t.Fatalf("%d groupings of several columns counted", got)
							}
							if got, want := lonePairs.Load()-lp, btoi(fused && (cn == "mixed-means" || cn == "int-pair-sums" || cn == "three-ints")); got != uint64(want) {
								t.Fatalf("%d groupings with paired int64 columns, want %d", got, want)
							}
							if got, want := loneInexactMeans.Load()-im, btoi(fused && (cn == "int-mean-big" || cn == "three-ints") && n > 0); got != uint64(want) {
								t.Fatalf("%d int64 means added as float64", got)
							}
							passes, marked := loneOccPasses.Load()-op, loneOccMarked.Load()-om
							if cn == "pos-sums" && marked+passes != 0 || cn == "zero-sums" && fused && g.Strategy == StrategyDense && n > 0 && (passes != 0 || marked == 0) {
								t.Fatalf("%d passes over the keys for occupancy, %d tasks marked slots", passes, marked)
							}
							if !fused {
								return
							}
							defer g.Free(env)
							// The two steps' aggregation: only where there is a
							// fused answer to check against it.
							wantOuts, err := GroupAggColumns(env, want.IDs, want.NGroups, cols, 0)
							if err != nil {
								t.Fatal(err)
							}
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
		refs.free()
	}
}

// refGroupings holds the two steps' grouping (GroupByWith, "auto"), the
// fused tests' reference, by key case, dropna and workers: it does not
// depend on the columns, so it is made once for all of them (making it
// again for each was most of these tests' time under -race).
type refGroupings map[refGroupingKey]Grouping

type refGroupingKey struct {
	keys   string
	dropna bool
	w      int
}

func (r refGroupings) get(t *testing.T, name string, keys []*pdarray.Array, dropna bool, w int) Grouping {
	t.Helper()
	k := refGroupingKey{name, dropna, w}
	g, ok := r[k]
	if !ok {
		var err error
		if g, err = GroupByWith(PlainEnv(w), keys, dropna, "auto", nil); err != nil {
			t.Fatal(err)
		}
		r[k] = g
	}
	return g
}

func (r refGroupings) free() {
	for k, g := range r {
		g.Free(PlainEnv(k.w))
	}
}

// twoSteps is what a fused grouping is checked against: keys grouped, then
// cols aggregated over the ids (the caller frees both).
func twoSteps(t *testing.T, env Env, keys []*pdarray.Array, dropna bool, cols []AggColumn) (Grouping, [][]*pdarray.Array) {
	t.Helper()
	want, err := GroupByWith(env, keys, dropna, "auto", nil)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := GroupAggColumns(env, want.IDs, want.NGroups, cols, 0)
	if err != nil {
		want.Free(env)
		t.Fatal(err)
	}
	return want, outs
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

// TestGroupByAggFusedLimits: a forced strategy and unsupported dtypes or
// ops are not fused (nothing held); an out-of-memory failure, dense, hashed
// or partitioned, holds nothing.
func TestGroupByAggFusedLimits(t *testing.T) {
	defer func(s float64) { partFuseMaxShare = s }(partFuseMaxShare)
	partFuseMaxShare = math.Inf(1) // the partitioned case's keys are nearly all distinct
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
		"forced":   {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, StrategyDense, cols},
		"int32":    {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{{Values: gbInts[int32](r, n, 0, 9), Ops: []string{"sum"}}}},
		"int-mean": {[]*pdarray.Array{gbInts[int64](r, n, 0, 1<<40)}, "auto", []AggColumn{{Values: v, Ops: []string{"mean"}}}}, // hashed: dense keys only
		"two-cols": {[]*pdarray.Array{gbInts[int64](r, n, 0, 1<<40)}, "auto", []AggColumn{cols[0], cols[0]}},                   // likewise
		"two-keys": {[]*pdarray.Array{gbInts[int64](r, n, 0, 10), gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{cols[0], cols[0]}},
		"a-max":    {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{cols[0], {Values: v, Ops: []string{"max"}}}},
		"short":    {[]*pdarray.Array{gbInts[int64](r, n, 0, 10)}, "auto", []AggColumn{{Values: gbInts[int64](r, n-1, 0, 9), Ops: []string{"sum"}}}},
	} {
		if _, _, fused, err := GroupByAgg(env, c.keys, true, c.strategy, nil, c.cols); fused || err != nil || used() != 0 {
			t.Errorf("%s: fused %v, err %v, %d bytes held", name, fused, err, used())
		}
	}
	big := 150_000
	for _, c := range []struct {
		name       string
		keys       []*pdarray.Array
		cols       []AggColumn
		step, upTo int64
	}{
		{"dense", []*pdarray.Array{gbInts[int64](r, n, 0, 1000)}, cols, 4 << 10, 64 << 10},
		{"hash", []*pdarray.Array{gbInts[int64](r, n, 0, 1<<40)}, cols, 64 << 10, 4 << 20},
		{"partitioned", []*pdarray.Array{gbInts[int64](r, big, 0, 1<<40)},
			[]AggColumn{{Values: pdarray.FromSlice(make([]float64, big)), Ops: []string{"sum"}}}, 1 << 20, 24 << 20},
	} {
		fits, partFails := 0, 0
		for limit := int64(0); limit < c.upTo; limit += c.step {
			env, used := limitEnv(2, limit)
			before := fusedPartRuns.Load()
			g, outs, fused, err := GroupByAgg(env, c.keys, true, "auto", nil, c.cols)
			if !fused {
				t.Fatalf("%s, limit %d: not fused", c.name, limit)
			}
			if err != nil {
				if used() != 0 {
					t.Fatalf("%s, limit %d: failed holding %d bytes", c.name, limit, used())
				}
				if fusedPartRuns.Load() > before {
					partFails++
				}
				continue
			}
			fits++
			g.Free(env)
			freeOuts(env, outs)
			if used() != 0 {
				t.Fatalf("%s, limit %d: %d bytes held after Free", c.name, limit, used())
			}
		}
		if fits == 0 {
			t.Errorf("%s: no limit fitted the fused grouping", c.name)
		}
		if c.name == "partitioned" && partFails == 0 { // every allocation: TestGroupByAggFusedPartAllocs
			t.Error("partitioned: no limit failed inside fusedPart")
		}
	}
}

// TestGroupByAggFusedPart: keys too many for one hash table are grouped and
// aggregated in one pass by partitions (fusedPart), bit for bit as the two
// steps, with range partitions (even keys) and hash partitions (clustered
// keys), float keys with NaN both ways, two keys, at 1 and 2 workers (and
// 8 for float sums, whose order matters). Rows: enough that two workers'
// tables in the two steps pass hashBigTable keys, and no more (the race
// detector's time).
func TestGroupByAggFusedPart(t *testing.T) {
	defer func(s float64) { partFuseMaxShare = s }(partFuseMaxShare)
	partFuseMaxShare = math.Inf(1) // nearly every key distinct here: fused all the same
	n := 150_000
	r := rand.New(rand.NewPCG(3, 4))
	clustered := make([]int64, n) // most rows in one narrow range: hash partitions
	heavy := make([]int64, n)
	f := make([]float64, n)
	v := make([]float64, n)
	for i := range clustered {
		clustered[i] = r.Int64N(1 << 20)
		if r.IntN(10) == 0 {
			clustered[i] = r.Int64N(1 << 50)
		}
		heavy[i] = r.Int64N(1 << 50)
		if r.IntN(2) == 0 {
			heavy[i] = 42
		}
		f[i] = float64(r.Int64N(1<<30)) / 7
		if r.IntN(20) == 0 {
			f[i] = math.NaN()
		}
		v[i] = r.NormFloat64() * 1e3
		if r.IntN(50) == 0 {
			v[i] = math.NaN()
		}
	}
	fv := pdarray.FromSlice(v)
	iv := gbInts[int64](r, n, math.MinInt64/2, math.MaxInt64/2)
	keyCases := map[string][]*pdarray.Array{
		"even":      {gbInts[int64](r, n, -1<<40, 1<<41)},
		"clustered": {pdarray.FromSlice(clustered)},
		"float-nan": {pdarray.FromSlice(f)},
		"two":       {gbInts[int32](r, n, -1<<30, 1<<31), gbInts[uint8](r, n, 0, 3)},
		"heavy":     {pdarray.FromSlice(heavy)}, // one key in half the rows
	}
	colCases := map[string]AggColumn{
		"int-sum":       {Values: iv, Ops: []string{"sum", "count", "size"}},
		"int-sum-alone": {Values: iv, Ops: []string{"sum"}},
		"float-all":     {Values: fv, Ops: []string{"mean", "sum", "count", "size"}},
		"size-only":     {Ops: []string{"size"}},
	}
	defer func(f int) { testFanOut = f }(testFanOut)
	runs, ranged, expected := fusedPartRuns.Load(), rangedRuns.Load(), uint64(0)
	rangedSeen, hashedSeen := false, false
	// The two steps, the reference: the grouping once for all columns, and
	// a column's aggregation once for both fan-outs (testFanOut is
	// fusedPart's alone: the two steps' answer is the same).
	refs := refGroupings{}
	defer refs.free()
	for kn, keys := range keyCases {
		for cn, col := range colCases {
			for _, dropna := range []bool{true, false} {
				if !dropna && kn != "float-nan" || kn == "heavy" && cn != "float-all" {
					continue // no NaN: the same grouping; heavy: floats tell most
				}
				for _, w := range []int{1, 2, 8} {
					if w == 8 && cn != "float-all" {
						continue
					}
					var wantOuts [][]*pdarray.Array // the first fan-out's subtest makes them
					for _, fan := range []int{partP, partFew} {
						testFanOut = fan
						expected++
						t.Run(fmt.Sprintf("parts=%d/%s/%s/dropna=%v/w=%d", fan, kn, cn, dropna, w), func(t *testing.T) {
							env := PlainEnv(w)
							want := refs.get(t, kn, keys, dropna, w)
							// At 8 workers each worker's rows have few enough
							// distinct keys for the two steps' tables (at 2, the
							// heavy key's too).
							if want.Strategy != StrategyPartitioned && w < 8 && kn != "heavy" {
								t.Fatalf("the two steps used %s", want.Strategy)
							}
							if wantOuts == nil {
								var err error
								if wantOuts, err = GroupAggColumns(env, want.IDs, want.NGroups, []AggColumn{col}, 0); err != nil {
									t.Fatal(err)
								}
							}
							before, rb := fusedPartRuns.Load(), rangedRuns.Load()
							few, lone := fewParts.Load(), loneScatters.Load()
							g, outs, fused, err := GroupByAgg(env, keys, dropna, "auto", nil, []AggColumn{col})
							if err != nil || !fused || fusedPartRuns.Load() != before+1 {
								t.Fatalf("fused %v, err %v, %d partitioned runs", fused, err, fusedPartRuns.Load()-before)
							}
							if got := fewParts.Load() - few; got != uint64(btoi(fan == partFew)) {
								t.Fatalf("%d runs with %d partitions, want them with %d", got, partFew, fan)
							}
							if got, want := loneScatters.Load()-lone, len(keys) == 1 && keys[0].DType() == dI64; got != uint64(btoi(want)) {
								t.Fatalf("%d scatters of a lone int64 key (want %v)", got, want)
							}
							defer g.Free(env)
							defer freeOuts(env, outs)
							if rangedRuns.Load() > rb {
								rangedSeen = true
							} else {
								hashedSeen = true
							}
							if g.IDs != nil || g.NGroups != want.NGroups || g.Kept != want.Kept || g.Strategy != StrategyPartitioned {
								t.Fatalf("grouping: ngroups %d kept %d strategy %s, want %d %d partitioned", g.NGroups, g.Kept, g.Strategy, want.NGroups, want.Kept)
							}
							for k := range keys {
								if !bytes.Equal(g.Keys[k].Bytes(), want.Keys[k].Bytes()) {
									t.Fatalf("unique keys %d differ", k)
								}
							}
							for i, op := range col.Ops {
								got, exp := outs[0][i], wantOuts[0][i]
								if got.DType() != exp.DType() || !bytes.Equal(got.Bytes(), exp.Bytes()) {
									t.Fatalf("%s: %v %v, want %v %v", op, got.DType(), head(got), exp.DType(), head(exp))
								}
							}
						})
					}
					freeOuts(PlainEnv(w), wantOuts)
				}
			}
		}
	}
	if got := fusedPartRuns.Load() - runs; got != expected || got != 96 {
		t.Errorf("%d fused partitioned groupings, want %d = 96", got, expected)
	}
	if !rangedSeen || !hashedSeen || rangedRuns.Load() == ranged {
		t.Errorf("range partitions seen %v, hash partitions seen %v", rangedSeen, hashedSeen)
	}
}

// TestGroupByAggPartChoice: past one hash table, keys drawn from a third as
// many values as rows are grouped and aggregated by partitions in one pass;
// keys nearly all distinct, dropped rows aside, are left to the two steps
// (not fused, nothing held).
func TestGroupByAggPartChoice(t *testing.T) {
	defer func(b int) { testL2Bytes = b }(testL2Bytes)
	testL2Bytes = 2 << 20
	n := 300_000
	r := rand.New(rand.NewPCG(5, 6))
	cols := []AggColumn{{Values: gbInts[int64](r, n, 0, 100), Ops: []string{"sum"}}}
	for _, c := range []struct {
		name   string
		values int64
		fused  bool
	}{{"a third", int64(n / 3), true}, {"all distinct", 1 << 50, false}, {"half dropped, rest distinct", -1, false}} {
		var keys []*pdarray.Array
		if c.values > 0 {
			k := make([]int64, n)
			for i := range k {
				k[i] = r.Int64N(c.values) * 2654435761 // spread: hashed, not dense
			}
			keys = []*pdarray.Array{pdarray.FromSlice(k)}
		} else { // a dropped row is no repeat
			f := make([]float64, n)
			for i := range f {
				f[i] = float64(i)
				if r.IntN(2) == 0 {
					f[i] = math.NaN()
				}
			}
			keys = []*pdarray.Array{pdarray.FromSlice(f)}
		}
		env, used := limitEnv(1, 1<<30)
		before, few := fusedPartRuns.Load(), fewParts.Load()
		g, outs, fused, err := GroupByAgg(env, keys, true, "auto", nil, cols)
		if err != nil || fused != c.fused || fusedPartRuns.Load()-before != uint64(btoi(c.fused)) {
			t.Fatalf("%s: fused %v (want %v), err %v, %d partitioned runs", c.name, fused, c.fused, err, fusedPartRuns.Load()-before)
		}
		// 10^5 keys: 3,125 a partition of 32, a table of 256 KiB (under
		// twice any L2 this runs on), so the few partitions.
		if got := fewParts.Load() - few; got != uint64(btoi(c.fused)) {
			t.Errorf("%s: %d runs with %d partitions", c.name, got, partFew)
		}
		if fused {
			if g.Strategy != StrategyPartitioned {
				t.Errorf("%s: strategy %s", c.name, g.Strategy)
			}
			g.Free(env)
			freeOuts(env, outs)
		}
		if used() != 0 {
			t.Errorf("%s: %d bytes held", c.name, used())
		}
	}
}

// TestGroupByAggFusedPartAllocs: the k-th allocation of a fused
// partitioned grouping failing leaves nothing held, for the first 16 k and
// then k at even steps up to the grouping's allocation count (range
// partitions with a float column, hash partitions with size alone; the
// race detector makes every k too slow here).
func TestGroupByAggFusedPartAllocs(t *testing.T) {
	defer func(s float64) { partFuseMaxShare = s }(partFuseMaxShare)
	partFuseMaxShare = math.Inf(1)
	n := 80_000 // past one table's 2^16 keys
	r := rand.New(rand.NewPCG(9, 10))
	clustered := make([]int64, n)
	for i := range clustered {
		clustered[i] = r.Int64N(1 << 20)
		if r.IntN(10) == 0 {
			clustered[i] = r.Int64N(1 << 50)
		}
	}
	for _, c := range []struct {
		name string
		keys []*pdarray.Array
		col  AggColumn
	}{
		{"even/float", []*pdarray.Array{gbInts[int64](r, n, 0, 1<<40)}, AggColumn{Values: pdarray.FromSlice(make([]float64, n)), Ops: []string{"sum", "mean"}}},
		{"clustered/size", []*pdarray.Array{pdarray.FromSlice(clustered)}, AggColumn{Ops: []string{"size"}}},
	} {
		// run fails the k-th allocation (none for k < 0) and returns how
		// many allocations there were.
		run := func(k int) (int, error) {
			env, used := limitEnv(2, 1<<30)
			alloc := env.Alloc
			var calls atomic.Int64 // workers allocate at once: which one is k-th varies
			env.Alloc = func(d pdarray.DType, n int) (*pdarray.Array, error) {
				if calls.Add(1) == int64(k+1) {
					return nil, errorf(ErrValue, "allocation %d refused", k)
				}
				return alloc(d, n)
			}
			before := fusedPartRuns.Load()
			g, outs, fused, err := GroupByAgg(env, c.keys, true, "auto", nil, []AggColumn{c.col})
			// The first allocations are fusedHash's, before it gives up.
			if !fused || err == nil && fusedPartRuns.Load() != before+1 {
				t.Fatalf("%s, allocation %d refused: fused %v, %d partitioned runs", c.name, k, fused, fusedPartRuns.Load()-before)
			}
			if err == nil {
				g.Free(env)
				freeOuts(env, outs)
			}
			if used() != 0 {
				t.Fatalf("%s, allocation %d refused (%v): %d bytes held", c.name, k, err, used())
			}
			return int(calls.Load()), err
		}
		total, err := run(-1)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < total; k++ {
			if k >= 16 {
				k += total / 20
			}
			// A run may allocate less than the first did (the workers take
			// the partitions in another order, and grow their states
			// another number of times): where it never reached allocation
			// k, nothing was refused.
			if calls, err := run(k); err == nil && k < calls {
				t.Fatalf("%s: allocation %d of %d refused, and no error", c.name, k, calls)
			}
		}
	}
}

// TestFusedFanOut: fusedPart takes partFew partitions while a partition's
// table (a quarter full, 16-byte slots) fits fewPartsMaxTable, else partP.
func TestFusedFanOut(t *testing.T) {
	defer func(m int) { fewPartsMaxTable = m }(fewPartsMaxTable)
	fewPartsMaxTable = 4 << 20
	for _, c := range []struct {
		distinct float64
		want     int
	}{
		{1e5, partFew},
		{1e6, partFew},            // 31,250 keys a partition: 2^17 slots, 2 MiB
		{2.09e6, partFew},         // 65,312: 2^18 slots, 4 MiB
		{2.1e6, partP},            // 65,625: 2^19 slots, 8 MiB
		{3e6, partP},              //
		{math.Inf(1), partP},      // no key repeated in the sample
		{math.NaN(), partP},       //
		{float64(1 << 62), partP}, // absurd
	} {
		if got := fusedFanOut(c.distinct); got != c.want {
			t.Errorf("%g distinct keys: %d partitions, want %d", c.distinct, got, c.want)
		}
	}
	fewPartsMaxTable = 0 // twice the L2 cache, whatever it is here
	if got := fusedFanOut(1e3); got != partFew {
		t.Errorf("10^3 keys with the L2 cache (%d bytes): %d partitions", l2CacheBytes(), got)
	}
}

func TestParseCacheSize(t *testing.T) {
	for in, want := range map[string]int{"2048K": 2 << 20, "1M": 1 << 20, "512": 512, "48K": 48 << 10} {
		if got, ok := parseCacheSize(in); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "K", "x", "-4K", "0"} {
		if got, ok := parseCacheSize(in); ok {
			t.Errorf("%q: %d, want refused", in, got)
		}
	}
	if l2CacheBytes() <= 0 {
		t.Errorf("L2 cache %d bytes", l2CacheBytes())
	}
}

// TestLonePlan: several columns by a lone dense key are fused while int64
// columns pair up (their states in cache) or the passes are at most two;
// else grouped then aggregated. Either way the answers are the two steps'.
func TestLonePlan(t *testing.T) {
	defer func(b int) { testL2Bytes = b }(testL2Bytes)
	testL2Bytes = 2 << 20 // this VM's: pairs up to 21,845 slots
	r := rand.New(rand.NewPCG(9, 9))
	n := 300_000 // several stretches a worker: per-worker sets merged
	a, b, c := gbInts[int64](r, n, 0, 6), gbInts[int64](r, n, 0, 16), gbInts[int64](r, n, -9, 9)
	f := pdarray.FromSlice(make([]float64, n))
	threeSums := []AggColumn{{Values: a, Ops: []string{"sum"}}, {Values: b, Ops: []string{"sum"}}, {Values: f, Ops: []string{"sum"}}}
	for _, tc := range []struct {
		name          string
		span          int64
		cols          []AggColumn
		fused, paired bool
	}{
		{"q5 by 100", 100, threeSums, true, true},
		{"q5 by 10^5", 100_000, threeSums, false, false}, // three passes, states past L2
		{"q3 by 10^5", 100_000, []AggColumn{{Values: a, Ops: []string{"sum"}}, {Values: f, Ops: []string{"mean"}}}, true, false},
		{"two ints by 10^5", 100_000, []AggColumn{{Values: a, Ops: []string{"mean"}}, {Values: c, Ops: []string{"sum"}}}, true, false},
		{"three ints by 10^3", 1000, []AggColumn{{Values: a, Ops: []string{"mean"}}, {Values: b, Ops: []string{"sum"}}, {Values: c, Ops: []string{"count"}}}, true, true},
		{"q4 by 10^4", 10_000, []AggColumn{{Values: a, Ops: []string{"mean"}}, {Values: b, Ops: []string{"mean", "size"}}, {Values: f, Ops: []string{"mean"}}}, true, true},
	} {
		keys := []*pdarray.Array{gbInts[int64](r, n, 0, tc.span)}
		for _, w := range []int{1, 2, 8} {
			env := PlainEnv(w)
			pairs := lonePairs.Load()
			g, outs, fused, err := GroupByAgg(env, keys, true, "auto", nil, tc.cols)
			if err != nil || fused != tc.fused || (lonePairs.Load() > pairs) != tc.paired {
				t.Fatalf("%s, %d workers: fused %v (want %v), paired %v (want %v), err %v", tc.name, w, fused, tc.fused, lonePairs.Load() > pairs, tc.paired, err)
			}
			if !fused {
				continue
			}
			want, _ := GroupByWith(env, keys, true, "auto", nil)
			wantOuts, err := GroupAggColumns(env, want.IDs, want.NGroups, tc.cols, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(g.Keys[0].Bytes(), want.Keys[0].Bytes()) {
				t.Fatalf("%s: keys differ", tc.name)
			}
			for i := range tc.cols {
				for j := range tc.cols[i].Ops {
					if !bytes.Equal(outs[i][j].Bytes(), wantOuts[i][j].Bytes()) {
						t.Fatalf("%s: column %d %s differs", tc.name, i, tc.cols[i].Ops[j])
					}
				}
			}
		}
	}
}

// TestPartitionedKeyWritten: keys written past the range a grouping was
// told (stale stats, as a concurrent setitem leaves them) end a partitioned
// grouping, fused or not, with ErrValue, on one worker and several, with
// 32 partitions and 128: no row is lost silently, nothing panics, nothing
// is held.
func TestPartitionedKeyWritten(t *testing.T) {
	defer func(s float64, f int) { partFuseMaxShare, testFanOut = s, f }(partFuseMaxShare, testFanOut)
	partFuseMaxShare = math.Inf(1)
	r := rand.New(rand.NewPCG(21, 22))
	n := 200_000
	k := make([]int64, n)
	for i := range k {
		k[i] = r.Int64N(1 << 40) // even: range partitions
	}
	keys := []*pdarray.Array{pdarray.FromSlice(k)}
	st := keyStatsOf(PlainEnv(1), keys[0])
	wk := pdarray.View[int64](keys[0])
	for _, i := range []int{7, 99_999, 150_001, n - 1} {
		wk[i] = 1<<40 + int64(i) // past the stats' maximum
	}
	cols := []AggColumn{{Values: pdarray.FromSlice(make([]float64, n)), Ops: []string{"sum", "size"}}}
	for _, fan := range []int{partFew, partP} {
		testFanOut = fan
		for _, w := range []int{1, 2} {
			env, used := limitEnv(w, 1<<30)
			var e *Error
			_, _, fused, err := GroupByAgg(env, keys, true, "auto", []*KeyStats{&st}, cols)
			if !fused || !errors.As(err, &e) || e.Kind != ErrValue || used() != 0 {
				t.Errorf("fused, %d partitions, %d workers: fused %v, %v, %d bytes held", fan, w, fused, err, used())
			}
			if _, err := GroupByWith(env, keys, true, StrategyPartitioned, []*KeyStats{&st}); !errors.As(err, &e) || e.Kind != ErrValue || used() != 0 {
				t.Errorf("partitioned, %d workers: %v, %d bytes held", w, err, used())
			}
		}
	}
}

// TestRangeSampleKeyWritten: sampled rows whose keys were written past the
// range the stats say (by half a range: a partition past the 128) neither
// index past the sample's counts nor pass unseen: range partitions are
// still taken, and the grouping ends with ErrValue.
func TestRangeSampleKeyWritten(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n := 200_000
	k := make([]int64, n)
	for i := range k {
		k[i] = r.Int64N(1 << 40)
	}
	keys := []*pdarray.Array{pdarray.FromSlice(k)}
	st := keyStatsOf(PlainEnv(1), keys[0])
	wk := pdarray.View[int64](keys[0])
	for j := 0; j < partSamples; j += 10 {
		i := int(uint64(j) * uint64(n) / partSamples) // a sampled row
		wk[i] = 1<<40 + 1<<39
	}
	rr := rangedRuns.Load()
	_, err := GroupByWith(PlainEnv(1), keys, true, StrategyPartitioned, []*KeyStats{&st})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrValue || rangedRuns.Load() == rr {
		t.Errorf("%v, range partitions %v", err, rangedRuns.Load() > rr)
	}
}

// TestFusedProbeStealPause: the caller of the parallel probing paused
// between taking a block and waiting for its slot (the window in which a
// helper once took that slot's token for the block a ring later, and both
// waited forever) finishes, bit for bit as the two steps, at 2, 3 and 8
// workers.
func TestFusedProbeStealPause(t *testing.T) {
	defer func(b int) { fusedBlock = b }(fusedBlock)
	fusedBlock = 1024
	defer func() { testStealPause, testProbePanic = nil, nil }()
	var pauses atomic.Int64
	var took chan struct{}
	var tookOnce *sync.Once
	testStealPause = func() {
		tookOnce.Do(func() { close(took) })
		if pauses.Add(1) <= 40 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Helpers probe nothing until the caller has taken a block: else, with
	// every block holding keys to number under the write lock, the caller
	// waiting for that lock found the next block probed, in step with the
	// helpers, and on a loaded machine never took one (the pause untested).
	// A helper waits holding the read lock only, which the caller's probe
	// shares.
	testProbePanic = func(_ int, helper bool) {
		if helper {
			<-took
		}
	}
	keys, cols := probeCase(3, 9)
	for _, w := range []int{2, 3, 8} {
		took, tookOnce = make(chan struct{}), new(sync.Once)
		p0 := pauses.Load()
		env := PlainEnv(w)
		want, wantOuts := twoSteps(t, env, keys, true, cols)
		par := fusedParallel.Load()
		done := make(chan error, 1)
		var outs [][]*pdarray.Array
		go func() {
			var err error
			_, outs, _, err = GroupByAgg(env, keys, true, "auto", nil, cols)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("w=%d: the fused group-by hung", w)
		}
		if fusedParallel.Load() == par {
			t.Fatalf("w=%d: the parallel probing did not run", w)
		}
		if !bytes.Equal(outs[0][0].Bytes(), wantOuts[0][0].Bytes()) {
			t.Fatalf("w=%d: sums differ from the two steps", w)
		}
		if pauses.Load() == p0 {
			t.Fatalf("w=%d: the caller never took a block itself", w)
		}
		want.Free(env)
	}
}

// probeCase is the parallel probing tests' grouping: 40,000 rows of spread
// int64 keys (hashed, 40 blocks of 1,024 rows) and a float64 column to sum.
func probeCase(seed1, seed2 uint64) ([]*pdarray.Array, []AggColumn) {
	r := rand.New(rand.NewPCG(seed1, seed2))
	n := 40000
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	keys := []*pdarray.Array{gbInts[int64](r, n, -1<<40, 1<<41)}
	return keys, []AggColumn{{Values: pdarray.FromSlice(v), Ops: []string{"sum"}}}
}

// TestFusedProbeHelperPanic: a panic in a helper of the parallel probing
// (a bug in lookup) reaches GroupByAgg's caller as the helper's *par.Panic
// (the server answers it INTERNAL) at 2, 3 and 8 workers, instead of
// stopping the process or leaving the caller waiting for the block the
// helper took; one in the caller's own probing does too.
func TestFusedProbeHelperPanic(t *testing.T) {
	defer func(b int) { fusedBlock = b }(fusedBlock)
	fusedBlock = 1024
	defer func() { testProbePanic = nil }()
	keys, cols := probeCase(5, 11)
	// The caller's panic needs blocks the caller probes itself. With
	// probeCase's keys every block has keys to number under the write
	// lock, and the caller waiting for it finds the next block probed: in
	// step with the helpers, it probed no block past the fifth on a
	// loaded machine (CI, -race). Few keys need no numbering, and helpers
	// slowed by a millisecond a block leave it most blocks (and a caller
	// so slowed leaves the helpers theirs, which unscheduled helpers on
	// two busy cores might otherwise not reach).
	r := rand.New(rand.NewPCG(7, 13))
	few := make([]int64, keys[0].Len())
	for i := range few {
		few[i] = int64(r.IntN(64))<<35 - 1<<40 // spread: the hash path
	}
	callerHits := 0
	for _, byHelper := range []bool{true, false} {
		if !byHelper {
			keys = []*pdarray.Array{pdarray.FromSlice(few)}
		}
		for _, w := range []int{2, 3, 8} {
			var hit atomic.Bool
			testProbePanic = func(j int, helper bool) {
				if j >= 6 && helper == byHelper && hit.CompareAndSwap(false, true) {
					panic(fmt.Sprintf("test: a bug probing block %d", j))
				}
				if helper != byHelper {
					time.Sleep(time.Millisecond) // leave most blocks to the other side
				}
			}
			par0 := fusedParallel.Load()
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				GroupByAgg(PlainEnv(w), keys, true, "auto", nil, cols)
			}()
			select {
			case p := <-done:
				if fusedParallel.Load() == par0 {
					t.Fatalf("w=%d: the parallel probing did not run", w)
				}
				if !hit.Load() {
					if byHelper {
						t.Fatalf("w=%d: no helper probed a block past the fifth", w)
					}
					continue // the helpers probed every block
				}
				if !byHelper {
					callerHits++
				}
				pp, ok := p.(*par.Panic)
				if byHelper && (!ok || !strings.Contains(fmt.Sprint(pp.Value), "a bug probing")) {
					t.Fatalf("w=%d: GroupByAgg panicked with %v, want the helper's *par.Panic", w, p)
				}
				if !byHelper && !strings.Contains(fmt.Sprint(p), "a bug probing") {
					t.Fatalf("w=%d: GroupByAgg panicked with %v, want the caller's panic", w, p)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("w=%d, helper %v: the fused group-by hung after a panic", w, byHelper)
			}
		}
	}
	if callerHits == 0 {
		t.Fatal("the caller never probed a block past the fifth: its panic went untested")
	}
}

// TestLoneOccupied: int64 sums alone by a dense key find their groups from
// the sums while the values say a sum of 0 is an empty slot, mark the
// slots once a value below 1 is met (in its block: loneBlock is 2 rows
// here), and take one more pass over the keys where positive values may
// wrap to 0; bit for bit the two steps' answer.
func TestLoneOccupied(t *testing.T) {
	defer func(b int) { loneBlock = b }(loneBlock)
	loneBlock = 2
	const big = math.MaxInt64
	cases := []struct {
		name           string
		keys           []int64
		vals           []int64
		passes, marked uint64
	}{
		{"positive, holes", []int64{1, 5, 9, 5}, []int64{1, 2, 3, 4}, 0, 0},
		{"wraps to 0", []int64{5, 5, 5, 7, 9}, []int64{big, big, 2, 1, 1}, 1, 0},
		{"a zero", []int64{3, 1, 3}, []int64{0, 4, 0}, 0, 1},
		{"a late zero", []int64{1, 3, 5, 3, 7}, []int64{1, 2, 3, 0, 1}, 0, 1},
		{"a late zero, holes", []int64{1, 3, 5, 9, 7, 3, 1}, []int64{1, 2, 3, 4, 0, -2, 1}, 0, 1},
		{"both signs, sum 0", []int64{1, 2, 3, 2}, []int64{-1, 1, 1, -1}, 0, 1},
	}
	for _, tc := range cases {
		for _, w := range []int{1, 2} {
			env := PlainEnv(w)
			keys := []*pdarray.Array{pdarray.FromSlice(tc.keys)}
			cols := []AggColumn{{Values: pdarray.FromSlice(tc.vals), Ops: []string{"sum"}}}
			want, wantOuts := twoSteps(t, env, keys, true, cols)
			p, m := loneOccPasses.Load(), loneOccMarked.Load()
			g, outs, fused, err := GroupByAgg(env, keys, true, "auto", nil, cols)
			if err != nil || !fused || g.Strategy != StrategyDense {
				t.Fatalf("%s: fused %v strategy %s err %v", tc.name, fused, g.Strategy, err)
			}
			if p, m := loneOccPasses.Load()-p, loneOccMarked.Load()-m; p != tc.passes || m != tc.marked {
				t.Errorf("%s, %d workers: %d passes over the keys and %d tasks marking slots, want %d and %d", tc.name, w, p, m, tc.passes, tc.marked)
			}
			if !bytes.Equal(g.Keys[0].Bytes(), want.Keys[0].Bytes()) || !bytes.Equal(outs[0][0].Bytes(), wantOuts[0][0].Bytes()) {
				t.Errorf("%s, %d workers: keys %v sums %v, want %v %v", tc.name, w, head(g.Keys[0]), head(outs[0][0]), head(want.Keys[0]), head(wantOuts[0][0]))
			}
			g.Free(env)
			want.Free(env)
			freeOuts(env, outs)
			freeOuts(env, wantOuts)
		}
	}
}

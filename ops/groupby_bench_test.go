package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// poolEnv is an Env that, like the server's buffer pool, hands freed
// buffers back out (same byte size, dirty): benchmarks then measure the
// kernels, not the page faults of fresh memory.
func poolEnv(workers int) Env {
	var mu sync.Mutex
	pool := map[int][][]byte{}
	e := PlainEnv(workers)
	e.Alloc = func(d pdarray.DType, n int) (*pdarray.Array, error) {
		nb := n * d.Size()
		mu.Lock()
		defer mu.Unlock()
		if l := pool[nb]; len(l) > 0 {
			b := l[len(l)-1]
			pool[nb] = l[:len(l)-1]
			return pdarray.Wrap(d, b)
		}
		return pdarray.Alloc(d, n)
	}
	e.Free = func(a *pdarray.Array) {
		mu.Lock()
		defer mu.Unlock()
		pool[len(a.Bytes())] = append(pool[len(a.Bytes())], a.Bytes())
	}
	return e
}

// taxiCols builds bench/groupby's taxi columns in memory: skewed zones
// floor(265·u³)+1, hour 0..23, fare in cents.
func taxiCols(n int) (pickup, dropoff, hour, fare *pdarray.Array) {
	env := PlainEnv(runtime.NumCPU())
	zone := func(seed uint64) *pdarray.Array {
		u, _ := pdarray.Alloc(dF64, n)
		Uniform(env, u, 0, 1, seed)
		z, _ := pdarray.Alloc(dI64, n)
		uv, zv := pdarray.View[float64](u), pdarray.View[int64](z)
		for i, x := range uv {
			zv[i] = int64(math.Floor(x*x*x*265)) + 1
		}
		return z
	}
	pickup, dropoff = zone(1), zone(2)
	hour, _ = pdarray.Alloc(dI64, n)
	RandInt(env, hour, 0, 24, 3)
	fare, _ = pdarray.Alloc(dF64, n)
	Uniform(env, fare, 0, 10000, 4)
	for i, x := range pdarray.View[float64](fare) {
		pdarray.View[float64](fare)[i] = math.Round(x) / 100
	}
	return
}

// BenchmarkTaxi is bench/groupby's query in process: GroupBy then sum, size
// and mean of fare in one GroupAggMany.
func BenchmarkTaxi(b *testing.B) {
	const n = 7_700_000
	pu, do, hr, fare := taxiCols(n)
	for _, q := range []struct {
		name string
		keys []*pdarray.Array
	}{{"by3", []*pdarray.Array{pu, do, hr}}, {"by1", []*pdarray.Array{pu}}} {
		for _, w := range []int{1, 2} {
			b.Run(q.name+"/w="+string(rune('0'+w)), func(b *testing.B) {
				env := poolEnv(w)
				b.SetBytes(int64(n * 8 * (len(q.keys) + 1)))
				for b.Loop() {
					g, err := GroupBy(env, q.keys, true, "auto")
					if err != nil {
						b.Fatal(err)
					}
					outs, err := GroupAggMany(env, g.IDs, g.NGroups, []string{"sum", "size", "mean"}, fare, 0)
					if err != nil {
						b.Fatal(err)
					}
					g.Free(env)
					env.Free(outs[0])
					env.Free(outs[1])
					env.Free(outs[2])
				}
			})
		}
	}
}

// BenchmarkTaxiGroupBy is the grouping alone.
func BenchmarkTaxiGroupBy(b *testing.B) {
	const n = 7_700_000
	pu, do, hr, _ := taxiCols(n)
	for _, w := range []int{1, 2} {
		b.Run("by3/w="+string(rune('0'+w)), func(b *testing.B) {
			env := poolEnv(w)
			b.SetBytes(int64(n * 8 * 3))
			for b.Loop() {
				g, err := GroupBy(env, []*pdarray.Array{pu, do, hr}, true, "auto")
				if err != nil {
					b.Fatal(err)
				}
				g.Free(env)
			}
		})
	}
}

// BenchmarkHighCard groups 10^7 rows of int64 keys drawn from k distinct
// values spread over a wide range (not dense), then sums a float column
// (and, as /fused, does both in one pass); the key's stats are known, as on
// the server after a first grouping.
func BenchmarkHighCard(b *testing.B) {
	const n = 10_000_000
	env1 := PlainEnv(runtime.NumCPU())
	fare, _ := pdarray.Alloc(dF64, n)
	Uniform(env1, fare, 0, 100, 9)
	for _, k := range []int{10_000, 1_000_000, 10_000_000} {
		ids, _ := pdarray.Alloc(dI64, n)
		RandInt(env1, ids, 0, int64(k), 7)
		for i, v := range pdarray.View[int64](ids) {
			pdarray.View[int64](ids)[i] = v*2654435761 + 12345 // spread: no dense range
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("k=%d/w=%d", k, w), func(b *testing.B) {
				env := poolEnv(w)
				b.SetBytes(int64(n * 16))
				// The server keeps a key's stats between groupings (store.keyStats).
				st := keyStatsOf(env, ids)
				for b.Loop() {
					g, err := GroupByWith(env, []*pdarray.Array{ids}, true, "auto", []*KeyStats{&st})
					if err != nil {
						b.Fatal(err)
					}
					outs, err := GroupAggMany(env, g.IDs, g.NGroups, []string{"sum", "size"}, fare, 0)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(g.NGroups), "groups")
					b.Logf("%s", g.Strategy)
					g.Free(env)
					env.Free(outs[0])
					env.Free(outs[1])
				}
			})
			// The same in one pass (GroupByAgg: fusedHash, or fusedPart).
			b.Run(fmt.Sprintf("k=%d/w=%d/fused", k, w), func(b *testing.B) {
				env := poolEnv(w)
				b.SetBytes(int64(n * 16))
				st := keyStatsOf(env, ids)
				cols := []AggColumn{{Values: fare, Ops: []string{"sum", "size"}}}
				for b.Loop() {
					g, outs, fused, err := GroupByAgg(env, []*pdarray.Array{ids}, true, "auto", []*KeyStats{&st}, cols)
					if err != nil {
						b.Fatal(err)
					}
					if !fused { // near one group a row: two steps, by choice (partFusable)
						b.Skip("not fused")
					}
					g.Free(env)
					freeOuts(env, outs)
				}
			})
		}
	}
}

// BenchmarkDenseGroupBy is G1 q1's grouping (10^7 int64 keys in 1..100)
// beside a plain sum of the same keys (the scan floor).
func BenchmarkDenseGroupBy(b *testing.B) {
	const n = 10_000_000
	keys, _ := pdarray.Alloc(dI64, n)
	RandInt(PlainEnv(runtime.NumCPU()), keys, 1, 101, 1)
	pu, _, _, _ := taxiCols(n)
	for _, c := range []struct {
		name string
		keys *pdarray.Array
	}{{"g1id1", keys}, {"taxipickup", pu}} {
		for _, w := range []int{1, 2} {
			env := poolEnv(w)
			b.Run(fmt.Sprintf("%s/groupby/w=%d", c.name, w), func(b *testing.B) {
				b.SetBytes(n * 8)
				for b.Loop() {
					g, err := GroupBy(env, []*pdarray.Array{c.keys}, true, "auto")
					if err != nil {
						b.Fatal(err)
					}
					g.Free(env)
				}
			})
			b.Run(fmt.Sprintf("%s/scan/w=%d", c.name, w), func(b *testing.B) {
				b.SetBytes(n * 8)
				for b.Loop() {
					if _, _, err := Reduce(env, "sum", c.keys, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchInts is n int64 from lo to hi-1 (RandInt with seed), a benchmark's
// key or value column.
func benchInts(env Env, n int, lo, hi int64, seed uint64) *pdarray.Array {
	a, _ := pdarray.Alloc(dI64, n)
	RandInt(env, a, lo, hi, seed)
	return a
}

// BenchmarkG1Q4 is db-benchmark G1 q4 in process: group 10^7 rows by id4
// (int64 in 1..100), then the means of v1, v2 (int64) and v3 (float64) in
// one GroupAggColumns, as the server runs it; "agg" times the aggregation
// alone over a grouping made once.
func BenchmarkG1Q4(b *testing.B) {
	const n = 10_000_000
	env1 := PlainEnv(runtime.NumCPU())
	id4 := benchInts(env1, n, 1, 101, 1)
	v1 := benchInts(env1, n, 1, 6, 2)
	v2 := benchInts(env1, n, 1, 16, 3)
	v3, _ := pdarray.Alloc(dF64, n)
	Uniform(env1, v3, 0, 100, 4)
	cols := []AggColumn{{Values: v1, Ops: []string{"mean"}}, {Values: v2, Ops: []string{"mean"}}, {Values: v3, Ops: []string{"mean"}}}
	for _, w := range []int{1, 2} {
		env := poolEnv(w)
		b.Run(fmt.Sprintf("query/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 32)
			for b.Loop() {
				g, err := GroupBy(env, []*pdarray.Array{id4}, true, "auto")
				if err != nil {
					b.Fatal(err)
				}
				outs, err := GroupAggColumns(env, g.IDs, g.NGroups, cols, 1)
				if err != nil {
					b.Fatal(err)
				}
				g.Free(env)
				for _, o := range outs {
					for _, a := range o {
						env.Free(a)
					}
				}
			}
		})
		// The same in one request (GroupByAgg: fusedLone, a pass a column).
		st := keyStatsOf(env, id4)
		b.Run(fmt.Sprintf("fused/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 32)
			for b.Loop() {
				g, outs, fused, err := GroupByAgg(env, []*pdarray.Array{id4}, true, "auto", []*KeyStats{&st}, cols)
				if err != nil || !fused {
					b.Fatal(err, fused)
				}
				g.Free(env)
				freeOuts(env, outs)
			}
		})
		g, _ := GroupBy(env, []*pdarray.Array{id4}, true, "auto")
		b.Run(fmt.Sprintf("agg/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 28)
			for b.Loop() {
				outs, err := GroupAggColumns(env, g.IDs, g.NGroups, cols, 1)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range outs {
					for _, a := range o {
						env.Free(a)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("scan/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 32)
			for b.Loop() {
				for _, a := range []*pdarray.Array{id4, v1, v2, v3} {
					if _, _, err := Reduce(env, "sum", a, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkG1Q10 groups by the six keys of db-benchmark's G1 q10 (id1, id2,
// id4, id5 in 1..100; id3, id6 in 1..n/100): packed in one word at 10^7 rows
// (62 bits), chained (two stages) when forced or at 10^8 rows (68 bits;
// ARKTOS_BENCH_ROWS=1e8), and the coargsort of the wide strategy.
func BenchmarkG1Q10(b *testing.B) {
	n := benchRows(10_000_000)
	env1 := PlainEnv(runtime.NumCPU())
	keys := make([]*pdarray.Array, 6)
	for k := range keys {
		keys[k], _ = pdarray.Alloc(dI64, n)
		hi := int64(101)
		if k == 2 || k == 5 {
			hi = int64(n/100) + 1
		}
		RandInt(env1, keys[k], 1, hi, uint64(k+1))
	}
	for _, w := range []int{1, 2} {
		env := poolEnv(w)
		for _, st := range []string{"auto", StrategyChained, StrategyWide} {
			b.Run(fmt.Sprintf("%s/w=%d", st, w), func(b *testing.B) {
				b.SetBytes(int64(n) * 48)
				for b.Loop() {
					g, err := GroupBy(env, keys, true, st)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(g.NGroups), "groups")
					g.Free(env)
				}
			})
		}
	}
}

// benchRows is ARKTOS_BENCH_ROWS (e.g. 1e8) or def.
func benchRows(def int) int {
	if s := os.Getenv("ARKTOS_BENCH_ROWS"); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 1 {
			return int(f)
		}
	}
	return def
}

// BenchmarkG1Q1 is G1 q1 (sum of v1 by id1: 10^7 rows, 100 keys) grouped
// then aggregated, fused (GroupByAgg), and the scan of its two columns.
func BenchmarkG1Q1(b *testing.B) {
	const n = 10_000_000
	env1 := PlainEnv(runtime.NumCPU())
	id1 := benchInts(env1, n, 1, 101, 1)
	v1 := benchInts(env1, n, 1, 6, 2)
	st := keyStatsOf(env1, id1)
	keys, known := []*pdarray.Array{id1}, []*KeyStats{&st}
	cols := []AggColumn{{Values: v1, Ops: []string{"sum"}}}
	for _, w := range []int{1, 2} {
		env := poolEnv(w)
		b.Run(fmt.Sprintf("two-step/w=%d", w), func(b *testing.B) { twoStepsBench(b, env, keys, known, cols, n*16) })
		b.Run(fmt.Sprintf("fused/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 16)
			for b.Loop() {
				g, outs, _, err := GroupByAgg(env, keys, true, "auto", known, cols)
				if err != nil {
					b.Fatal(err)
				}
				g.Free(env)
				freeOuts(env, outs)
			}
		})
		b.Run(fmt.Sprintf("scan/w=%d", w), func(b *testing.B) {
			b.SetBytes(n * 16)
			for b.Loop() {
				Reduce(env, "sum", id1, 0)
				Reduce(env, "sum", v1, 0)
			}
		})
	}
}

// twoStepsBench times keys grouped (GroupByWith), then cols aggregated
// over the ids (GroupAggColumns), as the server runs an unfused query.
func twoStepsBench(b *testing.B, env Env, keys []*pdarray.Array, known []*KeyStats, cols []AggColumn, bytes int64) {
	b.SetBytes(bytes)
	for b.Loop() {
		g, err := GroupByWith(env, keys, true, "auto", known)
		if err != nil {
			b.Fatal(err)
		}
		outs, err := GroupAggColumns(env, g.IDs, g.NGroups, cols, 0)
		if err != nil {
			b.Fatal(err)
		}
		g.Free(env)
		freeOuts(env, outs)
	}
}

// BenchmarkG1Q2 is G1 q2 (sum of v1 by id1 and id2: 10^7 rows, 10^4
// groups) grouped (markInt64Keys) then aggregated, as the server runs it.
func BenchmarkG1Q2(b *testing.B) {
	const n = 10_000_000
	env1 := PlainEnv(runtime.NumCPU())
	id1 := benchInts(env1, n, 1, 101, 1)
	id2 := benchInts(env1, n, 1, 101, 3)
	v1 := benchInts(env1, n, 1, 6, 2)
	s1, s2 := keyStatsOf(env1, id1), keyStatsOf(env1, id2)
	keys, known := []*pdarray.Array{id1, id2}, []*KeyStats{&s1, &s2}
	cols := []AggColumn{{Values: v1, Ops: []string{"sum"}}}
	for _, w := range []int{1, 2} {
		env := poolEnv(w)
		b.Run(fmt.Sprintf("two-step/w=%d", w), func(b *testing.B) { twoStepsBench(b, env, keys, known, cols, n*24) })
	}
}

// BenchmarkProbeLone times the probing loop of the fused hash pass alone:
// a lone int64 key of 10^4 values spread over int64, 2^20 rows, probed
// into a table that already holds every key (its steady state).
func BenchmarkProbeLone(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]int64, n)
	for i := range x {
		x[i] = r.Int64N(10_000)*2654435761 + 12345
	}
	env := PlainEnv(1)
	t, err := newHashTable(env, 12)
	if err != nil {
		b.Fatal(err)
	}
	defer t.release()
	ids := make([]int32, n)
	pb := new(probeBuf)
	if err := probeLoneIDs(env, t, x, 0, ids, hashGrow, pb); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(8 * n)
	for b.Loop() {
		for lo := 0; lo < n; lo += fusedBlock {
			if err := probeLoneIDs(env, t, x[lo:lo+fusedBlock], 0, ids[lo:lo+fusedBlock], hashGrow, pb); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSelectNth is the median's selection: 10,000 groups of 1,000
// values each (G1 q6's shape), uniform float64 values, values 1..5, and
// groups already sorted.
func BenchmarkSelectNth(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const g, per = 10000, 1000
	for _, kind := range []string{"uniform", "ints5", "sorted"} {
		src := make([]float64, g*per)
		for i := range src {
			if kind == "ints5" {
				src[i] = float64(1 + r.IntN(5))
			} else {
				src[i] = float64(int(r.Float64()*1e8)) / 1e6
			}
		}
		if kind == "sorted" {
			for q := 0; q < g; q++ {
				slices.Sort(src[q*per : (q+1)*per])
			}
		}
		a := make([]float64, len(src))
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(src) * 8))
			for b.Loop() {
				copy(a, src)
				for q := 0; q < g; q++ {
					selectNth(a[q*per:(q+1)*per], per/2)
				}
			}
		})
	}
}

// BenchmarkLoneSums is a dense int64 key's int64 sums alone, fused: 10^7
// rows by 100, 10^4 and 6·10^4 keys, one and two workers, every key of the
// range met ("full") or the even keys of twice the range ("holes"). Values
// from 1 to 5 keep no occupancy bitmap; from 0 to 4 they do (marked
// once the first block shows a 0).
func BenchmarkLoneSums(b *testing.B) {
	const n = 10_000_000
	env1 := PlainEnv(runtime.NumCPU())
	for _, k := range []int64{100, 10_000, 60_000} {
		for _, c := range []struct {
			name  string
			holes bool
			lo    int64
		}{{"full", false, 1}, {"full", false, 0}, {"holes", true, 1}, {"holes", true, 0}} {
			keys, _ := pdarray.Alloc(dI64, n)
			RandInt(env1, keys, 1, k+1, 1)
			if c.holes {
				for i, x := range pdarray.View[int64](keys) {
					pdarray.View[int64](keys)[i] = 2 * x
				}
			}
			st := keyStatsOf(env1, keys)
			v, _ := pdarray.Alloc(dI64, n)
			RandInt(env1, v, c.lo, c.lo+5, 2)
			cols := []AggColumn{{Values: v, Ops: []string{"sum"}}}
			for _, w := range []int{1, 2} {
				env := poolEnv(w)
				b.Run(fmt.Sprintf("k=%d/%s/min=%d/w=%d", k, c.name, c.lo, w), func(b *testing.B) {
					b.SetBytes(n * 16)
					for b.Loop() {
						g, outs, _, err := GroupByAgg(env, []*pdarray.Array{keys}, true, "auto", []*KeyStats{&st}, cols)
						if err != nil {
							b.Fatal(err)
						}
						g.Free(env)
						freeOuts(env, outs)
					}
				})
			}
		}
	}
}

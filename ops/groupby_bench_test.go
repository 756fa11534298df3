package ops

import (
	"math"
	"runtime"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

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
// and mean of fare.
func BenchmarkTaxi(b *testing.B) {
	const n = 7_700_000
	pu, do, hr, fare := taxiCols(n)
	for _, q := range []struct {
		name string
		keys []*pdarray.Array
	}{{"by3", []*pdarray.Array{pu, do, hr}}, {"by1", []*pdarray.Array{pu}}} {
		for _, w := range []int{1, 2} {
			b.Run(q.name+"/w="+string(rune('0'+w)), func(b *testing.B) {
				env := PlainEnv(w)
				b.SetBytes(int64(n * 8 * (len(q.keys) + 1)))
				for b.Loop() {
					g, err := GroupBy(env, q.keys, true, "auto")
					if err != nil {
						b.Fatal(err)
					}
					for _, op := range []string{"sum", "size", "mean"} {
						if err := CheckGroupIDs(env, g.IDs, g.NGroups); err != nil {
							b.Fatal(err)
						}
						out, err := GroupAgg(env, g.IDs, g.NGroups, op, fare, 0)
						if err != nil {
							b.Fatal(err)
						}
						sink = out
					}
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
			env := PlainEnv(w)
			b.SetBytes(int64(n * 8 * 3))
			for b.Loop() {
				g, err := GroupBy(env, []*pdarray.Array{pu, do, hr}, true, "auto")
				if err != nil {
					b.Fatal(err)
				}
				sink = g
			}
		})
	}
}

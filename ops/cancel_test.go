package ops

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// cancelKernels are the long kernels a request's Stop must reach.
var cancelKernels = map[string]func(env Env, a *pdarray.Array) []*pdarray.Array{
	"argsort": func(env Env, a *pdarray.Array) []*pdarray.Array {
		out, _ := pdarray.Alloc(pdarray.Int64, a.Len())
		if err := Argsort(env, a, out); err != nil {
			panic(err)
		}
		return []*pdarray.Array{out}
	},
	"sort": func(env Env, a *pdarray.Array) []*pdarray.Array {
		out, _ := pdarray.Alloc(a.DType(), a.Len())
		if err := Sort(env, a, out); err != nil {
			panic(err)
		}
		return []*pdarray.Array{out}
	},
	"groupby": func(env Env, a *pdarray.Array) []*pdarray.Array {
		g, err := GroupBy(env, []*pdarray.Array{a}, false, "")
		if err != nil {
			panic(err)
		}
		return append([]*pdarray.Array{g.IDs}, g.Keys...)
	},
	"groupby_agg sum, mean": func(env Env, a *pdarray.Array) []*pdarray.Array {
		// Keys of a few thousand groups, float values: the fused and the
		// banded float-sum paths.
		k, _ := pdarray.Alloc(pdarray.Int64, a.Len())
		v, _ := pdarray.Alloc(pdarray.Float64, a.Len())
		kv, vv := pdarray.View[int64](k), pdarray.View[float64](v)
		for i, x := range pdarray.View[int64](a) {
			kv[i], vv[i] = x%5000, float64(x%1000003)/7
		}
		g, outs, _, err := GroupByAgg(env, []*pdarray.Array{k}, false, "auto", nil, []AggColumn{{Values: v, Ops: []string{"sum", "mean"}}})
		if err != nil {
			panic(err)
		}
		res := append([]*pdarray.Array{g.IDs}, g.Keys...)
		for _, o := range outs {
			res = append(res, o...)
		}
		return res
	},
}

func wideKeys(n int) *pdarray.Array {
	a, _ := pdarray.Alloc(pdarray.Int64, n)
	r := rand.New(rand.NewPCG(1, 2))
	x := pdarray.View[int64](a)
	for i := range x {
		x[i] = int64(r.Uint64() >> 2) // wide keys: the MSD and partitioned paths
	}
	return a
}

// TestKernelsStop: an armed Stop changes no answer (bit for bit), and a
// cancelled one unwinds each kernel with *par.Canceled, also when it
// comes in the middle of the work.
func TestKernelsStop(t *testing.T) {
	a := wideKeys(1 << 21)
	for name, run := range cancelKernels {
		env := PlainEnv(2)
		want := run(env, a)
		env.Stop = &par.Stop{}
		got := run(env, a)
		for i := range want {
			if (want[i] == nil) != (got[i] == nil) || want[i] != nil && !bytes.Equal(want[i].Bytes(), got[i].Bytes()) {
				t.Fatalf("%s: output %d differs with a Stop", name, i)
			}
		}
		for _, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
			env.Stop = &par.Stop{}
			if after == 0 {
				env.Stop.Cancel("before")
			} else {
				go func(st *par.Stop) { time.Sleep(after); st.Cancel("during") }(env.Stop)
			}
			func() {
				defer func() {
					p := recover()
					if p == nil && after > 0 {
						return // it finished first: allowed for a late cancel
					}
					if _, ok := par.AsCanceled(p); !ok {
						t.Fatalf("%s cancelled after %v: %v, want *par.Canceled", name, after, p)
					}
				}()
				run(env, a)
				if after == 0 {
					t.Fatalf("%s ran to its end with its Stop cancelled", name)
				}
			}()
		}
	}
}

// TestChunksOrder: chunks visits [lo, hi) in order, in pieces, without a
// Stop in one piece.
func TestChunksOrder(t *testing.T) {
	var seen []int
	Env{}.chunks(3, 3+3*cancelChunk+5, func(lo, hi int) { seen = append(seen, lo, hi) })
	if len(seen) != 2 {
		t.Fatalf("without a Stop: %v", seen)
	}
	seen = nil
	Env{Stop: &par.Stop{}}.chunks(3, 3+3*cancelChunk+5, func(lo, hi int) { seen = append(seen, lo, hi) })
	for i := 2; i < len(seen); i += 2 {
		if seen[i] != seen[i-1] {
			t.Fatalf("pieces not consecutive: %v", seen)
		}
	}
	if seen[0] != 3 || seen[len(seen)-1] != 3+3*cancelChunk+5 || len(seen) != 8 {
		t.Fatalf("pieces %v", seen)
	}
}

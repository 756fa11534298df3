package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestLoneAsmAsGo runs each assembly loop of the fused lone-key grouping
// and its Go loop on the same rows, for keys of every integer dtype, and
// wants the same tables bit for bit and the same returns: lengths around
// the two-row turn and the block, keys outside the slots (in a pair,
// alone, last, the dtype's extremes), negative and extreme values, NaN and
// infinities among float values.
func TestLoneAsmAsGo(t *testing.T) {
	if !loneAsmBuilt {
		t.Skip("no assembly loops on " + runtime.GOARCH)
	}
	if off := unsafe.Offsetof(sumSlot{}.n); off != 8 || unsafe.Offsetof(sumSlot{}.rows) != 12 || unsafe.Sizeof(sumSlot{}) != 16 {
		t.Fatalf("sumSlot's layout changed (n at %d): lone_amd64.s's FLOATS assumes s, n, rows at 0, 8, 12", off)
	}
	t.Run("int64", func(t *testing.T) { loneAsmAsGo[int64](t, -50, math.MinInt64, math.MaxInt64) })
	t.Run("uint64", func(t *testing.T) { loneAsmAsGo[uint64](t, 1<<40, 0, math.MaxUint64) })
	t.Run("int32", func(t *testing.T) { loneAsmAsGo[int32](t, -50, math.MinInt32, math.MaxInt32) })
	t.Run("uint32", func(t *testing.T) { loneAsmAsGo[uint32](t, 7, 0, math.MaxUint32) })
	t.Run("int16", func(t *testing.T) { loneAsmAsGo[int16](t, -50, math.MinInt16, math.MaxInt16) })
	t.Run("uint16", func(t *testing.T) { loneAsmAsGo[uint16](t, 7, 0, math.MaxUint16) })
	t.Run("int8", func(t *testing.T) { loneAsmAsGo[int8](t, -50, math.MinInt8, math.MaxInt8) })
	t.Run("uint8", func(t *testing.T) { loneAsmAsGo[uint8](t, 7, 0, math.MaxUint8) })
}

// loneAsmAsGo is TestLoneAsmAsGo for keys of type K: 100 slots from lo;
// kmin and kmax are K's extremes (keys outside the slots).
func loneAsmAsGo[K Integer](t *testing.T, lo, kmin, kmax K) {
	r := rand.New(rand.NewPCG(5, 6))
	const slots = 100
	for _, n := range []int{0, 1, 2, 3, 7, 64, loneAsmBlock - 1, loneAsmBlock, 2*loneAsmBlock + 3} {
		for _, kind := range []string{"plain", "outside", "extreme"} {
			ks := make([]K, n)
			xs := make([]int64, n)
			fx := make([]float64, n)
			for i := range ks {
				ks[i] = lo + K(r.IntN(slots))
				xs[i] = 1 + r.Int64N(5)
				fx[i] = math.Round(r.NormFloat64()*1e4) / 100
				switch {
				case kind == "outside" && r.IntN(5) == 0:
					ks[i] = []K{lo - 1, lo + slots, kmin, kmax}[r.IntN(4)]
				case kind == "extreme" && r.IntN(7) == 0:
					xs[i] = []int64{0, -1, math.MinInt64, math.MaxInt64, -3}[r.IntN(5)]
					fx[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e308}[r.IntN(6)]
				}
			}
			if kind == "outside" && n > 0 {
				ks[n-1] = lo + slots
			}
			mn := sortKeyInt(lo)
			type result struct {
				bad      bool
				m, m2    uint64
				sums, rs []int64
				fs       []sumSlot
			}
			run := func() map[string]result {
				out := map[string]result{}
				sm := make([]int64, slots)
				b, sg := loneIntSums(ks, xs, mn, slots, sm)
				out["sums"] = result{bad: b, m: sg, sums: sm}
				sm, rs := make([]int64, slots), make([]int64, slots)
				b = loneIntSumsRows(ks, xs, mn, slots, sm, rs)
				out["rows"] = result{bad: b, sums: sm, rs: rs}
				sm, rs = make([]int64, slots), make([]int64, slots)
				b, ma0 := loneIntMeans(ks, xs, mn, slots, sm, rs)
				out["means"] = result{bad: b, m: ma0, sums: sm, rs: rs}
				sa, sb, rs := make([]int64, slots), make([]int64, slots), make([]int64, slots)
				xb := slices.Clone(xs)
				slices.Reverse(xb)
				b, ma, mb := loneIntPair(ks, xs, xb, mn, slots, sa, sb, rs)
				out["pair"] = result{bad: b, m: ma, m2: mb, sums: append(sa, sb...), rs: rs}
				fs := make([]sumSlot, slots)
				b = loneFloatSums(ks, fx, mn, slots, fs)
				out["floats"] = result{bad: b, fs: fs}
				return out
			}
			calls := loneAsmCalls.Load()
			got := run()
			if n > 0 && loneAsmCalls.Load() == calls {
				t.Fatalf("n=%d: the keys did not take the assembly loops (loneAsmCalls unchanged)", n)
			}
			var want map[string]result
			withPlain(func() { want = run() })
			for name, w := range want {
				g := got[name]
				same := g.bad == w.bad && g.m == w.m && g.m2 == w.m2 && slices.Equal(g.sums, w.sums) && slices.Equal(g.rs, w.rs) &&
					len(g.fs) == len(w.fs)
				for i := range w.fs {
					a, b := g.fs[i], w.fs[i]
					same = same && math.Float64bits(a.s) == math.Float64bits(b.s) && a.n == b.n && a.rows == b.rows
				}
				if !same {
					t.Fatalf("n=%d %s: %s: the assembly loop differs from the Go loop (bad %v/%v, m %x/%x)", n, kind, name, g.bad, w.bad, g.m, w.m)
				}
				if kind == "outside" && n > 0 && !g.bad {
					t.Fatalf("n=%d: %s: a key outside the slots not reported", n, name)
				}
			}
		}
	}
}

// TestLoneAsmTaken fails if a grouping by an int64 key stops taking the
// assembly loops (G1 q1's sums, 1.5x faster there).
func TestLoneAsmTaken(t *testing.T) {
	if !loneAsmBuilt {
		t.Skip("no assembly loops on " + runtime.GOARCH)
	}
	keys := pdarray.FromSlice([]int64{3, 1, 2, 3, 3, 1})
	vals := pdarray.FromSlice([]int64{1, 2, 3, 4, 5, 6})
	env := PlainEnv(1)
	before := loneAsmCalls.Load()
	g, outs, fused, err := GroupByAgg(env, []*pdarray.Array{keys}, true, "auto", nil, []AggColumn{{Values: vals, Ops: []string{"sum"}}})
	if err != nil || !fused {
		t.Fatalf("fused %v, %v", fused, err)
	}
	defer g.Free(env)
	defer freeOuts(env, [][]*pdarray.Array{outs[0]})
	if loneAsmCalls.Load() == before {
		t.Fatal("a sum by an int64 key did not take the assembly loop (loneAsmCalls unchanged)")
	}
	if got := pdarray.View[int64](outs[0][0]); !slices.Equal(got, []int64{8, 3, 10}) {
		t.Fatalf("sums %v, want [8 3 10]", got)
	}
}

// TestMarkInt64KeysAsGo: markInt64Keys' assembly loops (two and three
// int64 keys) write the Go loop's ids and bitmap and report the same keys
// outside their spans, across blocks and at odd offsets.
func TestMarkInt64KeysAsGo(t *testing.T) {
	if !loneAsmBuilt {
		t.Skip("no assembly loops on " + runtime.GOARCH)
	}
	r := rand.New(rand.NewPCG(9, 10))
	const n = 2*loneAsmBlock + 77
	for _, nk := range []int{2, 3} {
		for _, outside := range []bool{false, true} {
			keys := make([]*pdarray.Array, nk)
			for k := range keys {
				x := make([]int64, n)
				for i := range x {
					x[i] = int64(k*1000) - 40 + r.Int64N(int64(13+k*7))
				}
				keys[k] = pdarray.FromSlice(x)
			}
			specs, _, total, ok, err := keySpecs(PlainEnv(1), keys, true, "auto", nil)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if outside { // written since the ranges were taken
				for _, i := range []int{0, 5, loneAsmBlock, n - 1} {
					pdarray.View[int64](keys[r.IntN(nk)])[i] = []int64{math.MinInt64, math.MaxInt64, 99999}[r.IntN(3)]
				}
			}
			words := (int(total) + 63) / 64
			run := func() ([]int32, []uint64, bool) {
				ids, occ := make([]int32, n), make([]uint64, words)
				bad := markInt64Keys(specs, 3, n, ids, occ)
				bad = markInt64Keys(specs, 0, 3, ids, occ) || bad
				return ids, occ, bad
			}
			ids, occ, bad := run()
			var wids []int32
			var wocc []uint64
			var wbad bool
			withPlain(func() { wids, wocc, wbad = run() })
			if !slices.Equal(ids, wids) || !slices.Equal(occ, wocc) || bad != wbad || bad != outside {
				t.Fatalf("%d keys, outside %v: the assembly loop differs from the Go loop (bad %v/%v)", nk, outside, bad, wbad)
			}
		}
	}
}

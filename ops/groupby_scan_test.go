package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestGroupScan checks every scan against a loop over each group's rows in
// row order, with dropped rows, NaN values and groups of no row, for int64
// and float64 values: floats bit for bit.
func TestGroupScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, ng = 5000, 40
	gid := make([]int32, n)
	xf := make([]float64, n)
	xi := make([]int64, n)
	for i := range gid {
		gid[i] = int32(rng.IntN(ng - 3)) // (the last groups have no row)
		if rng.IntN(20) == 0 {
			gid[i] = -1
		}
		xf[i] = math.Round(rng.NormFloat64()*100) / 8
		if rng.IntN(15) == 0 {
			xf[i] = math.NaN()
		}
		xi[i] = int64(rng.IntN(41) - 20)
	}
	ids := pdarray.FromSlice(gid)
	env := PlainEnv(2)
	for _, op := range GroupScanOps {
		for _, floats := range []bool{true, false} {
			var vals *pdarray.Array
			vdt := pdarray.Invalid
			if op != "cumcount" {
				if floats {
					vals = pdarray.FromSlice(xf)
				} else {
					vals = pdarray.FromSlice(xi)
				}
				vdt = vals.DType()
			}
			dt, err := GroupScanDType(op, vdt, HasDropped(env, ids))
			if err != nil || dt != dF64 {
				t.Fatalf("%s: dtype %v %v, want float64 (rows are dropped)", op, dt, err)
			}
			out, _ := pdarray.Alloc(dt, n)
			if err := GroupScan(env, ids, ng, op, vals, out); err != nil {
				t.Fatal(err)
			}
			got := pdarray.View[float64](out)
			want := scanLoop(op, gid, xf, xi, floats)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%s floats=%v row %d: %v, want %v", op, floats, i, got[i], want[i])
				}
			}
		}
	}
	// without dropped rows, integer scans stay int64
	kept := pdarray.FromSlice([]int32{0, 1, 0, 1, 0})
	vals := pdarray.FromSlice([]int64{5, -2, 7, 4, math.MaxInt64})
	for op, want := range map[string][]int64{"cumsum": {5, -2, 12, 2, math.MinInt64 + 11}, "cummax": {5, -2, 7, 4, math.MaxInt64},
		"cumprod": {5, -2, 35, -8, math.MaxInt64 - 34}, "cumcount": {0, 0, 1, 1, 2}} {
		v := vals
		if op == "cumcount" {
			v = nil
		}
		dt, _ := GroupScanDType(op, func() pdarray.DType {
			if v == nil {
				return pdarray.Invalid
			}
			return v.DType()
		}(), HasDropped(env, kept))
		out, _ := pdarray.Alloc(dt, 5)
		if err := GroupScan(env, kept, 2, op, v, out); err != nil || dt != dI64 {
			t.Fatalf("%s: %v %v", op, dt, err)
		}
		if got := pdarray.View[int64](out); !equalInts(got, want) {
			t.Errorf("%s = %v, want %v", op, got, want)
		}
	}
	if _, err := GroupScanDType("cumsum", dF32, false); err == nil {
		t.Error("float32 values: no error")
	}
	if _, err := GroupScanDType("rank", dF64, false); err == nil {
		t.Error("an unknown scan: no error")
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// scanLoop: each row's op over its group's rows so far, one group at a time.
func scanLoop(op string, gid []int32, xf []float64, xi []int64, floats bool) []float64 {
	out := make([]float64, len(gid))
	rows := map[int32][]int{}
	for i, g := range gid {
		if g < 0 {
			out[i] = math.NaN()
			continue
		}
		rows[g] = append(rows[g], i)
	}
	for _, rs := range rows {
		accF := map[string]float64{"cumsum": 0, "cumprod": 1, "cummax": math.Inf(-1), "cummin": math.Inf(1)}[op]
		accI := map[string]int64{"cumsum": 0, "cumprod": 1, "cummax": math.MinInt64, "cummin": math.MaxInt64}[op]
		for k, i := range rs {
			switch op {
			case "cumcount":
				out[i] = float64(k)
			case "diff", "shift":
				if k == 0 {
					out[i] = math.NaN()
				} else if p := rs[k-1]; floats {
					out[i] = map[bool]float64{true: xf[i] - xf[p], false: xf[p]}[op == "diff"]
				} else {
					out[i] = map[bool]float64{true: float64(xi[i] - xi[p]), false: float64(xi[p])}[op == "diff"]
				}
			default:
				if floats {
					if math.IsNaN(xf[i]) {
						out[i] = math.NaN()
						continue
					}
					switch op {
					case "cumsum":
						accF += xf[i]
					case "cumprod":
						accF *= xf[i]
					case "cummax":
						accF = max(accF, xf[i])
					case "cummin":
						accF = min(accF, xf[i])
					}
					out[i] = accF
				} else {
					switch op {
					case "cumsum":
						accI += xi[i]
					case "cumprod":
						accI *= xi[i]
					case "cummax":
						accI = max(accI, xi[i])
					case "cummin":
						accI = min(accI, xi[i])
					}
					out[i] = float64(accI)
				}
			}
		}
	}
	return out
}

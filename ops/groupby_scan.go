package ops

import (
	"math"
	"slices"

	"github.com/arktos-dev/arktos/pdarray"
)

// GroupScanOps are the running operations within each group (pandas'
// groupby cumsum, cumprod, cummax, cummin, cumcount, diff and shift).
var GroupScanOps = []string{"cumsum", "cumprod", "cummax", "cummin", "cumcount", "diff", "shift"}

// GroupScanDType is the dtype GroupScan writes for op over values of dtype
// dt (int64 or float64; none for cumcount), as pandas gives it: float64
// where a row can have no value (diff and shift, rows of a dropped key) or
// the values are floats, else int64.
func GroupScanDType(op string, dt pdarray.DType, dropped bool) (pdarray.DType, error) {
	switch op {
	case "cumcount":
		if dropped {
			return dF64, nil
		}
		return dI64, nil
	case "cumsum", "cumprod", "cummax", "cummin", "diff", "shift":
	default:
		return pdarray.Invalid, errorf(ErrValue, "unknown group scan '%s'; scans are %v", op, GroupScanOps)
	}
	if dt != dI64 && dt != dF64 {
		return pdarray.Invalid, errorf(ErrType, "a group %s takes int64 or float64 values, got %v (cast them first)", op, dt)
	}
	if dt == dF64 || dropped || op == "diff" || op == "shift" {
		return dF64, nil
	}
	return dI64, nil
}

// GroupScan writes op of each row's group's values up to and including it,
// in row order (out: GroupScanDType's dtype, one per row): running sums,
// products, maxima and minima (a NaN value gives NaN and is skipped, as
// pandas skips it), the row's place in its group (cumcount), its value
// less the group's previous row's (diff) or that previous value (shift),
// NaN for a group's first row. A dropped row (id -1) gets NaN. One pass in
// row order on one worker, with a running value per group: float sums and
// products are added in row order, as pandas' are, so they are bit for bit
// a sequential loop's.
func GroupScan(env Env, ids *pdarray.Array, ngroups int, op string, vals, out *pdarray.Array) error {
	gid := pdarray.View[int32](ids)
	st, err := env.Alloc(dF64, ngroups)
	if err != nil {
		return err
	}
	defer env.free(st)
	sb, err := env.Alloc(pdarray.Uint8, ngroups)
	if err != nil {
		return err
	}
	defer env.free(sb)
	seen := pdarray.BytesAs[uint8](sb.Bytes())
	clear(seen)
	state := pdarray.View[float64](st)
	if op == "cumcount" {
		counts := pdarray.BytesAs[int64](st.Bytes())
		clear(counts)
		if out.DType() == dF64 {
			cumcount(gid, counts, pdarray.View[float64](out))
		} else {
			cumcount(gid, counts, pdarray.View[int64](out))
		}
		return nil
	}
	if vals.DType() == dF64 {
		scanFloats(op, gid, pdarray.View[float64](vals), state, seen, pdarray.View[float64](out))
		return nil
	}
	acc := pdarray.BytesAs[int64](st.Bytes())
	x := pdarray.View[int64](vals)
	if out.DType() == dF64 {
		scanInts(op, gid, x, acc, seen, pdarray.View[float64](out))
	} else {
		scanInts(op, gid, x, acc, seen, pdarray.View[int64](out))
	}
	return nil
}

func cumcount[O int64 | float64](gid []int32, counts []int64, out []O) {
	out = out[:len(gid)]
	for i, g := range gid {
		if g < 0 {
			out[i] = O(math.NaN())
			continue
		}
		out[i] = O(counts[g])
		counts[g]++
	}
}

func scanFloats(op string, gid []int32, x, acc []float64, seen []uint8, out []float64) {
	x, out = x[:len(gid)], out[:len(gid)]
	nan := math.NaN()
	start := map[string]float64{"cumsum": 0, "cumprod": 1, "cummax": math.Inf(-1), "cummin": math.Inf(1)}[op]
	for g := range acc {
		acc[g] = start
	}
	switch op {
	case "cumsum":
		for i, g := range gid {
			if v := x[i]; g < 0 || v != v {
				out[i] = nan
			} else {
				acc[g] += v
				out[i] = acc[g]
			}
		}
	case "cumprod":
		for i, g := range gid {
			if v := x[i]; g < 0 || v != v {
				out[i] = nan
			} else {
				acc[g] *= v
				out[i] = acc[g]
			}
		}
	case "cummax":
		for i, g := range gid {
			if v := x[i]; g < 0 || v != v {
				out[i] = nan
			} else {
				acc[g] = max(acc[g], v)
				out[i] = acc[g]
			}
		}
	case "cummin":
		for i, g := range gid {
			if v := x[i]; g < 0 || v != v {
				out[i] = nan
			} else {
				acc[g] = min(acc[g], v)
				out[i] = acc[g]
			}
		}
	case "diff", "shift":
		diffShift(op == "diff", gid, x, acc, seen, out)
	}
}

func scanInts[O int64 | float64](op string, gid []int32, x, acc []int64, seen []uint8, out []O) {
	x, out = x[:len(gid)], out[:len(gid)]
	nan := O(math.NaN())
	start := map[string]int64{"cumsum": 0, "cumprod": 1, "cummax": math.MinInt64, "cummin": math.MaxInt64}[op]
	for g := range acc {
		acc[g] = start
	}
	code := map[string]int{"cumsum": 0, "cumprod": 1, "cummax": 2, "cummin": 3}[op] // (an int switch a row, not a string's)
	switch op {
	case "cumsum", "cumprod", "cummax", "cummin":
		for i, g := range gid {
			if g < 0 {
				out[i] = nan
				continue
			}
			v := x[i]
			switch code {
			case 0:
				acc[g] += v // (wraps, as numpy's int64)
			case 1:
				acc[g] *= v
			case 2:
				acc[g] = max(acc[g], v)
			default:
				acc[g] = min(acc[g], v)
			}
			out[i] = O(acc[g])
		}
	case "diff", "shift":
		diffShift(op == "diff", gid, x, acc, seen, out)
	}
}

// diffShift writes each row's value less its group's previous row's (diff)
// or that previous value (shift), NaN for a group's first row and for a
// dropped one; integers are made float, then subtracted, as pandas'
// groupby diff does (an int64 subtraction wrapped: max - min gave -1).
func diffShift[T int64 | float64, O int64 | float64](diff bool, gid []int32, x, last []T, seen []uint8, out []O) {
	nan := O(math.NaN())
	for i, g := range gid {
		if g < 0 {
			out[i] = nan
			continue
		}
		v := x[i]
		switch {
		case seen[g] == 0:
			out[i] = nan
		case diff:
			out[i] = O(float64(v) - float64(last[g]))
		default:
			out[i] = O(last[g])
		}
		last[g], seen[g] = v, 1
	}
}

// HasDropped says whether any row's group id is -1 (a dropped key).
func HasDropped(env Env, ids *pdarray.Array) bool {
	gid := pdarray.View[int32](ids)
	found := make([]bool, numWorkers(env.workers(), len(gid)))
	env.parallel(len(gid), chunk, func(w, lo, hi int) {
		for _, g := range gid[lo:hi] {
			if g < 0 {
				found[w] = true
				return
			}
		}
	})
	return slices.Contains(found, true)
}

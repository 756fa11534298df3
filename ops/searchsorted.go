package ops

import "github.com/arktos-dev/arktos/pdarray"

// SearchSorted writes into out (int64, v's length) where each element of v
// would go in a, which must be sorted ascending (NaN last, as Sort puts
// it; not checked, as numpy does not): the first place whose element is
// not less than it (right: greater than it), numpy's searchsorted. Both
// are compared in their promoted dtype; NaN sorts after every number and
// equal to NaN, as in numpy.
func SearchSorted(env Env, a, v *pdarray.Array, right bool, out *pdarray.Array) error {
	if a.DType() == dBool || v.DType() == dBool {
		return errorf(ErrType, "searchsorted of bool arrays is not supported; cast them first with astype")
	}
	c := Promote(a.DType(), v.DType())
	as, vs := a, v
	for _, x := range []**pdarray.Array{&as, &vs} {
		if (*x).DType() == c {
			continue
		}
		t, err := env.Alloc(c, (*x).Len())
		if err != nil {
			return err
		}
		defer env.free(t)
		AsType(env, *x, t)
		*x = t
	}
	o := pdarray.View[int64](out)
	switch c {
	case dI8:
		searchSorted(env, pdarray.View[int8](as), pdarray.View[int8](vs), right, o)
	case dI16:
		searchSorted(env, pdarray.View[int16](as), pdarray.View[int16](vs), right, o)
	case dI32:
		searchSorted(env, pdarray.View[int32](as), pdarray.View[int32](vs), right, o)
	case dI64:
		searchSorted(env, pdarray.View[int64](as), pdarray.View[int64](vs), right, o)
	case dU8:
		searchSorted(env, pdarray.View[uint8](as), pdarray.View[uint8](vs), right, o)
	case dU16:
		searchSorted(env, pdarray.View[uint16](as), pdarray.View[uint16](vs), right, o)
	case dU32:
		searchSorted(env, pdarray.View[uint32](as), pdarray.View[uint32](vs), right, o)
	case dU64:
		searchSorted(env, pdarray.View[uint64](as), pdarray.View[uint64](vs), right, o)
	case dF32:
		searchSorted(env, pdarray.View[float32](as), pdarray.View[float32](vs), right, o)
	case dF64:
		searchSorted(env, pdarray.View[float64](as), pdarray.View[float64](vs), right, o)
	default:
		return errorf(ErrType, "searchsorted is not supported for %v", c)
	}
	return nil
}

// searchSorted is a binary search for each value, on every worker.
func searchSorted[T Number](env Env, a, v []T, right bool, out []int64) {
	// less orders NaN after every number (and not before another NaN).
	less := func(x, y T) bool { return x < y || (x == x && y != y) }
	env.parallel(len(v), chunk, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x := v[i]
			l, h := 0, len(a)
			for l < h {
				m := int(uint(l+h) >> 1)
				// left: the first a[m] not less than x; right: the first greater.
				if right && !less(x, a[m]) || !right && less(a[m], x) {
					l = m + 1
				} else {
					h = m
				}
			}
			out[i] = int64(l)
		}
	})
}

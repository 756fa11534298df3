package ops

import (
	"strconv"

	"github.com/arktos-dev/arktos/pdarray"
)

func itoa(i int64) string  { return strconv.FormatInt(i, 10) }
func utoa(u uint64) string { return strconv.FormatUint(u, 10) }
func ftoa(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// castBytes converts the elements of src (dtype sd) into dst (dtype dd);
// dst holds exactly as many elements. Conversions are numpy's "unsafe"
// casts: integers wrap, floats truncate toward zero, anything nonzero (NaN
// included) is true.
func castBytes(dd pdarray.DType, dst []byte, sd pdarray.DType, src []byte) {
	if dd == sd {
		copy(dst, src)
		return
	}
	switch sd {
	case dI8:
		castFrom(dd, dst, pdarray.BytesAs[int8](src))
	case dI16:
		castFrom(dd, dst, pdarray.BytesAs[int16](src))
	case dI32:
		castFrom(dd, dst, pdarray.BytesAs[int32](src))
	case dI64:
		castFrom(dd, dst, pdarray.BytesAs[int64](src))
	case dU8, dBool:
		castFrom(dd, dst, pdarray.BytesAs[uint8](src))
	case dU16:
		castFrom(dd, dst, pdarray.BytesAs[uint16](src))
	case dU32:
		castFrom(dd, dst, pdarray.BytesAs[uint32](src))
	case dU64:
		castFrom(dd, dst, pdarray.BytesAs[uint64](src))
	case dF32:
		castFrom(dd, dst, pdarray.BytesAs[float32](src))
	case dF64:
		castFrom(dd, dst, pdarray.BytesAs[float64](src))
	}
}

func castFrom[S Number](dd pdarray.DType, dst []byte, src []S) {
	switch dd {
	case dI8:
		conv(pdarray.BytesAs[int8](dst), src)
	case dI16:
		conv(pdarray.BytesAs[int16](dst), src)
	case dI32:
		conv(pdarray.BytesAs[int32](dst), src)
	case dI64:
		conv(pdarray.BytesAs[int64](dst), src)
	case dU8:
		conv(pdarray.BytesAs[uint8](dst), src)
	case dU16:
		conv(pdarray.BytesAs[uint16](dst), src)
	case dU32:
		conv(pdarray.BytesAs[uint32](dst), src)
	case dU64:
		conv(pdarray.BytesAs[uint64](dst), src)
	case dF32:
		conv(pdarray.BytesAs[float32](dst), src)
	case dF64:
		conv(pdarray.BytesAs[float64](dst), src)
	case dBool:
		toBool(pdarray.BytesAs[uint8](dst), src)
	}
}

func conv[D, S Number](dst []D, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

func toBool[S Number](dst []uint8, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		if v != 0 {
			dst[i] = 1
		} else {
			dst[i] = 0
		}
	}
}

// AsType writes a cast to out's dtype (same length) into out.
func AsType(env Env, a, out *pdarray.Array) {
	sd, dd := a.DType(), out.DType()
	ss, ds := sd.Size(), dd.Size()
	src, dst := a.Bytes(), out.Bytes()
	env.parallel(a.Len(), chunk, func(_, lo, hi int) {
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			castBytes(dd, dst[c*ds:e*ds], sd, src[c*ss:e*ss])
		}
	})
}

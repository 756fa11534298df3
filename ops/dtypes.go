package ops

import (
	"math"

	"github.com/arktos-dev/arktos/pdarray"
)

// Type sets of the kernels. bool is viewed as uint8.
type (
	Signed interface {
		int8 | int16 | int32 | int64
	}
	Unsigned interface {
		uint8 | uint16 | uint32 | uint64
	}
	Integer interface{ Signed | Unsigned }
	Float   interface{ float32 | float64 }
	Number  interface{ Integer | Float }
)

// Short names for the dtypes.
const (
	dBool = pdarray.Bool
	dI8   = pdarray.Int8
	dI16  = pdarray.Int16
	dI32  = pdarray.Int32
	dI64  = pdarray.Int64
	dU8   = pdarray.Uint8
	dU16  = pdarray.Uint16
	dU32  = pdarray.Uint32
	dU64  = pdarray.Uint64
	dF32  = pdarray.Float32
	dF64  = pdarray.Float64
)

// Kind is numpy's dtype kind: 'b', 'u', 'i' or 'f'.
func Kind(d pdarray.DType) byte {
	switch d {
	case dBool:
		return 'b'
	case dI8, dI16, dI32, dI64:
		return 'i'
	case dU8, dU16, dU32, dU64:
		return 'u'
	case dF32, dF64:
		return 'f'
	}
	return 0
}

func isInt(d pdarray.DType) bool { k := Kind(d); return k == 'i' || k == 'u' }

func signedOfSize(size int) pdarray.DType {
	switch size {
	case 1:
		return dI8
	case 2:
		return dI16
	case 4:
		return dI32
	}
	return dI64
}

// Promote is numpy 2's result_type for two dtypes.
func Promote(a, b pdarray.DType) pdarray.DType {
	if a == b {
		return a
	}
	ka, kb := Kind(a), Kind(b)
	switch {
	case ka == 'b':
		return b
	case kb == 'b':
		return a
	case ka == 'f' && kb == 'f':
		if a.Size() > b.Size() {
			return a
		}
		return b
	case ka == 'f' || kb == 'f':
		f, o := a, b
		if kb == 'f' {
			f, o = b, a
		}
		if f == dF32 && o.Size() <= 2 {
			return dF32
		}
		return dF64
	case ka == kb:
		if a.Size() > b.Size() {
			return a
		}
		return b
	}
	s, u := a, b
	if ka == 'u' {
		s, u = b, a
	}
	if s.Size() > u.Size() {
		return s
	}
	if u.Size() == 8 {
		return dF64
	}
	return signedOfSize(2 * u.Size())
}

// CanCastSameKind is numpy's can_cast(from, to, "same_kind"): kinds may only
// go up bool < unsigned < signed < float.
func CanCastSameKind(from, to pdarray.DType) bool {
	rank := map[byte]int{'b': 0, 'u': 1, 'i': 2, 'f': 3}
	return rank[Kind(from)] <= rank[Kind(to)]
}

// Scalar is a scalar operand. A weak scalar (DType Invalid) is a Python
// bool, int or float, which takes the array's dtype as NEP 50 says; a strong
// one (a numpy scalar) promotes like a one-element array of DType.
type Scalar struct {
	K     byte // 'b', 'i' (I holds it), 'u' (U holds it, > MaxInt64), 'f'
	I     int64
	U     uint64
	F     float64
	B     bool
	DType pdarray.DType
}

// ScalarOf makes a weak scalar from a decoded msgpack value (bool, any
// integer type, float32 or float64); ok is false for any other value.
func ScalarOf(v any) (Scalar, bool) {
	switch x := v.(type) {
	case bool:
		return Scalar{K: 'b', B: x}, true
	case int8:
		return Scalar{K: 'i', I: int64(x)}, true
	case int16:
		return Scalar{K: 'i', I: int64(x)}, true
	case int32:
		return Scalar{K: 'i', I: int64(x)}, true
	case int64:
		return Scalar{K: 'i', I: x}, true
	case int:
		return Scalar{K: 'i', I: int64(x)}, true
	case uint8:
		return Scalar{K: 'i', I: int64(x)}, true
	case uint16:
		return Scalar{K: 'i', I: int64(x)}, true
	case uint32:
		return Scalar{K: 'i', I: int64(x)}, true
	case uint64:
		if x <= math.MaxInt64 {
			return Scalar{K: 'i', I: int64(x)}, true
		}
		return Scalar{K: 'u', U: x}, true
	case float32:
		return Scalar{K: 'f', F: float64(x)}, true
	case float64:
		return Scalar{K: 'f', F: x}, true
	}
	return Scalar{}, false
}

// Weak reports whether s is a Python scalar.
func (s Scalar) Weak() bool { return s.DType == pdarray.Invalid }

// weakKind is the NEP 50 kind of a weak scalar: 'b', 'i' or 'f'.
func (s Scalar) weakKind() byte {
	if s.K == 'u' {
		return 'i'
	}
	return s.K
}

// String formats the scalar's value as Python would.
func (s Scalar) String() string {
	switch s.K {
	case 'b':
		if s.B {
			return "True"
		}
		return "False"
	case 'i':
		return itoa(s.I)
	case 'u':
		return utoa(s.U)
	}
	return ftoa(s.F)
}

// fits reports whether the integer scalar s is in the range of integer dtype d.
func (s Scalar) fits(d pdarray.DType) bool {
	lo, hi := intRange(d)
	switch s.K {
	case 'i':
		if Kind(d) == 'u' {
			return s.I >= 0 && uint64(s.I) <= hi
		}
		return s.I >= lo && (s.I < 0 || uint64(s.I) <= hi)
	case 'u':
		return s.U <= hi && (Kind(d) == 'u' || hi == math.MaxUint64)
	}
	return true
}

// intRange returns the smallest and largest value of an integer dtype (the
// largest as uint64 so that uint64's fits).
func intRange(d pdarray.DType) (int64, uint64) {
	bits := uint(8 * d.Size())
	if Kind(d) == 'u' {
		if bits == 64 {
			return 0, math.MaxUint64
		}
		return 0, 1<<bits - 1
	}
	if d == dBool {
		return 0, 1
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// ScalarDType returns the dtype of a scalar operand combined with another
// operand of dtype other (NEP 50 for weak scalars).
func scalarWith(s Scalar, other pdarray.DType) pdarray.DType {
	if !s.Weak() {
		return Promote(s.DType, other)
	}
	switch s.weakKind() {
	case 'b':
		return other
	case 'i':
		if Kind(other) == 'b' {
			return dI64
		}
		return other
	}
	if Kind(other) == 'f' {
		return other
	}
	return dF64
}

// DefaultDType is the dtype numpy gives a lone Python scalar (np.asarray(x)).
func (s Scalar) DefaultDType() pdarray.DType {
	if !s.Weak() {
		return s.DType
	}
	switch s.K {
	case 'b':
		return dBool
	case 'i':
		return dI64
	case 'u':
		return dU64
	}
	return dF64
}

// checkFits returns an overflow error when a weak integer scalar does not fit
// the integer dtype it is converted to (numpy 2 raises OverflowError).
func checkFits(s Scalar, d pdarray.DType) error {
	if s.Weak() && (s.K == 'i' || s.K == 'u') && isInt(d) && !s.fits(d) {
		return errorf(ErrOverflow, "Python integer %s out of bounds for %v", s, d)
	}
	return nil
}

// putScalar writes s converted to dtype d into b (d.Size() bytes).
func putScalar(b []byte, d pdarray.DType, s Scalar) {
	switch d {
	case dI8:
		pdarray.BytesAs[int8](b)[0] = scalarAs[int8](s)
	case dI16:
		pdarray.BytesAs[int16](b)[0] = scalarAs[int16](s)
	case dI32:
		pdarray.BytesAs[int32](b)[0] = scalarAs[int32](s)
	case dI64:
		pdarray.BytesAs[int64](b)[0] = scalarAs[int64](s)
	case dU8:
		pdarray.BytesAs[uint8](b)[0] = scalarAs[uint8](s)
	case dU16:
		pdarray.BytesAs[uint16](b)[0] = scalarAs[uint16](s)
	case dU32:
		pdarray.BytesAs[uint32](b)[0] = scalarAs[uint32](s)
	case dU64:
		pdarray.BytesAs[uint64](b)[0] = scalarAs[uint64](s)
	case dF32:
		pdarray.BytesAs[float32](b)[0] = scalarAs[float32](s)
	case dF64:
		pdarray.BytesAs[float64](b)[0] = scalarAs[float64](s)
	case dBool:
		v := uint8(0)
		switch s.K {
		case 'b':
			if s.B {
				v = 1
			}
		case 'i':
			if s.I != 0 {
				v = 1
			}
		case 'u':
			v = 1
		default:
			if s.F != 0 {
				v = 1
			}
		}
		b[0] = v
	}
}

func scalarAs[T Number](s Scalar) T {
	switch s.K {
	case 'b':
		if s.B {
			return 1
		}
		return 0
	case 'i':
		return T(s.I)
	case 'u':
		return T(s.U)
	}
	return T(s.F)
}

// ScalarBytes returns s converted to dtype d as d.Size() bytes.
func ScalarBytes(s Scalar, d pdarray.DType) []byte {
	b := alignedBuf(8)[:d.Size()]
	putScalar(b, d, s)
	return b
}

// Value returns element i of a as a Go value for a reply: int64, uint64,
// float64 or bool.
func Value(a *pdarray.Array, i int) any {
	return bytesValue(a.DType(), a.Bytes()[i*a.DType().Size():])
}

func bytesValue(d pdarray.DType, b []byte) any {
	switch d {
	case dI8:
		return int64(int8(b[0]))
	case dI16:
		return int64(pdarray.BytesAs[int16](b[:2])[0])
	case dI32:
		return int64(pdarray.BytesAs[int32](b[:4])[0])
	case dI64:
		return pdarray.BytesAs[int64](b[:8])[0]
	case dU8:
		return uint64(b[0])
	case dU16:
		return uint64(pdarray.BytesAs[uint16](b[:2])[0])
	case dU32:
		return uint64(pdarray.BytesAs[uint32](b[:4])[0])
	case dU64:
		return pdarray.BytesAs[uint64](b[:8])[0]
	case dF32:
		return float64(pdarray.BytesAs[float32](b[:4])[0])
	case dF64:
		return pdarray.BytesAs[float64](b[:8])[0]
	case dBool:
		return b[0] != 0
	}
	return nil
}

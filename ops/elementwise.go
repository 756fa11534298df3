package ops

import (
	endian "encoding/binary"
	"math"
	"slices"
	"sync/atomic"

	"github.com/arktos-dev/arktos/pdarray"
)

// Operand is one input of an elementwise operation: an array, or a scalar
// broadcast to the other operand's length.
type Operand struct {
	Arr *pdarray.Array // nil for a scalar
	Sc  Scalar
}

// ArrayOperand wraps an array.
func ArrayOperand(a *pdarray.Array) Operand { return Operand{Arr: a} }

// ScalarOperand wraps a scalar.
func ScalarOperand(s Scalar) Operand { return Operand{Sc: s} }

func (o Operand) dtype() pdarray.DType {
	if o.Arr != nil {
		return o.Arr.DType()
	}
	return o.Sc.DType
}

// strongDType is the operand's dtype, or Invalid for a weak scalar.
func (o Operand) strongDType() pdarray.DType { return o.dtype() }

// BinOps lists the binary operators Binary accepts.
var BinOps = []string{"+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^", "<<", ">>", "maximum", "minimum",
	"fmax", "fmin", "fmod", "copysign", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside", "nextafter",
	"float_power", "logical_and", "logical_or", "logical_xor", "gcd", "lcm"}

func isCompare(op string) bool {
	switch op {
	case "<", "<=", ">", ">=", "==", "!=":
		return true
	}
	return false
}

// binPlan is a resolved binary operation: the loop's input and output dtypes,
// its kernel, and the scalar operands converted to the input dtypes.
type binPlan struct {
	inA, inB, out pdarray.DType
	kern          func(d, a, b []byte)
	sa, sb        []byte // scalar bytes in inA / inB, nil for arrays
	constant      int    // -1, or the constant bool result (0/1) of a comparison with an out-of-range Python int
}

// commonDType applies numpy 2 promotion, with NEP 50 for weak scalars.
func commonDType(a, b Operand) pdarray.DType {
	da, db := a.strongDType(), b.strongDType()
	switch {
	case da.Valid() && db.Valid():
		return Promote(da, db)
	case da.Valid():
		return scalarWith(b.Sc, da)
	case db.Valid():
		return scalarWith(a.Sc, db)
	}
	return Promote(a.Sc.DefaultDType(), b.Sc.DefaultDType())
}

// ResolveBinary returns the dtype of op(a, b), or a type error as numpy gives.
func ResolveBinary(op string, a, b Operand) (pdarray.DType, error) {
	if isClipOp(op) {
		return pdarray.Invalid, errorf(ErrValue, "unknown binary operator '%s'; operators are %v", op, BinOps)
	}
	p, err := planBinary(op, a, b)
	if err != nil {
		return pdarray.Invalid, err
	}
	return p.out, nil
}

func planBinary(op string, a, b Operand) (*binPlan, error) {
	c := commonDType(a, b)
	p := &binPlan{inA: c, inB: c, out: c, constant: -1}
	kc := Kind(c)
	unsupported := func() error {
		return errorf(ErrType, "operator '%s' is not supported for the input types (%v, %v); numpy raises the same error", op, describe(a), describe(b))
	}
	switch op {
	case "+", "*", "maximum", "minimum", "fmax", "fmin", "clip_lo", "clip_hi":
	case "copysign", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside", "nextafter":
		if kc != 'f' {
			// numpy's first float loop both operands cast to safely: float32
			// while neither is wider than 2 bytes (its float16 for 1-byte
			// ones: float32 here, as for sqrt), else float64.
			f := dF32
			for _, d := range []pdarray.DType{a.strongDType(), b.strongDType()} {
				if d.Valid() && d.Size() > 2 {
					f = dF64
				}
			}
			p.inA, p.inB, p.out = f, f, f
		}
	case "-":
		if kc == 'b' {
			return nil, errorf(ErrType, "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead")
		}
	case "/":
		if kc != 'f' {
			p.inA, p.inB, p.out = dF64, dF64, dF64
		}
	case "float_power": // numpy's only real loop is float64's
		p.inA, p.inB, p.out = dF64, dF64, dF64
	case "logical_and", "logical_or", "logical_xor":
		// (int64 with uint64 meet in float64: nonzero stays nonzero)
		p.out = dBool
	case "gcd", "lcm":
		if kc == 'f' || kc == 'b' {
			return nil, errorf(ErrType, "ufunc '%s' did not contain a loop with signature matching types (%v, %v); it takes integers, as numpy's", op, describe(a), describe(b))
		}
	case "//", "%", "**", "fmod":
		if kc == 'b' {
			p.inA, p.inB, p.out = dI8, dI8, dI8
		}
	case "<", "<=", ">", ">=", "==", "!=":
		p.out = dBool
		da, db := a.strongDType(), b.strongDType()
		if c == dF64 && isInt(da) && isInt(db) {
			// int64 against uint64: numpy compares exactly (loops qQ and Qq).
			p.inA, p.inB = wideInt(da), wideInt(db)
		}
	case "&", "|", "^":
		if kc == 'f' {
			return nil, unsupported()
		}
	case "<<", ">>":
		if kc == 'f' {
			return nil, unsupported()
		}
		if kc == 'b' {
			p.inA, p.inB, p.out = dI8, dI8, dI8
		}
	default:
		return nil, errorf(ErrValue, "unknown binary operator '%s'; operators are %v", op, BinOps)
	}
	if a.Arr == nil && !a.Sc.Weak() {
		a.Sc.DType = pdarray.Invalid // strong: value already fits its dtype; convert like a weak one
	}
	if b.Arr == nil && !b.Sc.Weak() {
		b.Sc.DType = pdarray.Invalid
	}
	for _, side := range []struct {
		o, other Operand
		in       pdarray.DType
		sb       *[]byte
		rv       bool
	}{{a, b, p.inA, &p.sa, false}, {b, a, p.inB, &p.sb, true}} {
		if side.o.Arr != nil {
			continue
		}
		s := side.o.Sc
		if err := checkFits(s, side.in); err != nil {
			// numpy 2 compares an integer array with any Python int exactly.
			if !isCompare(op) || !isInt(side.other.dtype()) {
				return nil, err
			}
			p.constant = outOfRangeCompare(op, s, side.rv)
		}
		*side.sb = ScalarBytes(s, side.in)
	}
	p.kern = binKernel(op, p.inA, p.inB)
	if p.kern == nil {
		return nil, unsupported()
	}
	return p, nil
}

func describe(o Operand) string {
	if o.Arr != nil {
		return o.Arr.DType().String()
	}
	if o.Sc.Weak() {
		return map[byte]string{'b': "Python bool", 'i': "Python int", 'u': "Python int", 'f': "Python float"}[o.Sc.K]
	}
	return o.Sc.DType.String() + " scalar"
}

func wideInt(d pdarray.DType) pdarray.DType {
	if Kind(d) == 'u' {
		return dU64
	}
	return dI64
}

// outOfRangeCompare is the result of comparing any array element with a
// Python int beyond the array's dtype (numpy 2 compares such ints exactly).
// scalarRight is true for `array op s`.
func outOfRangeCompare(op string, s Scalar, scalarRight bool) int {
	big := s.K == 'u' || s.I > 0 // the scalar is above every element
	if !scalarRight {
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
	}
	var r bool
	switch op {
	case "<", "<=":
		r = big
	case ">", ">=":
		r = !big
	case "==":
		r = false
	case "!=":
		r = true
	}
	if r {
		return 1
	}
	return 0
}

// Binary computes op(a, b) into out, which has n elements and the dtype
// ResolveBinary gave, or is an existing array for an in-place operation
// (out may be a itself; the caller checks the same_kind cast).
func Binary(env Env, op string, a, b Operand, out *pdarray.Array) error {
	if isClipOp(op) {
		return errorf(ErrValue, "unknown binary operator '%s'; operators are %v", op, BinOps)
	}
	return runBinary(env, op, a, b, out)
}

// isClipOp: np.clip's own maximum and minimum against an array of bounds
// (a tie takes the bound: clip(-0.0, [0.0], 1.0) is 0.0, where
// maximum(-0.0, 0.0) is -0.0), which Clip runs and the binop command does
// not offer.
func isClipOp(op string) bool { return op == "clip_lo" || op == "clip_hi" }

// runBinary is Binary with clip's steps allowed.
func runBinary(env Env, op string, a, b Operand, out *pdarray.Array) error {
	p, err := planBinary(op, a, b)
	if err != nil {
		return err
	}
	n := out.Len()
	if p.constant >= 0 {
		fillBytes(env, out, []byte{byte(p.constant)})
		return nil
	}
	if op == "**" && Kind(p.inB) == 'i' && hasNegative(b) {
		return errorf(ErrValue, "Integers to negative integer powers are not allowed.")
	}
	if k := intDivKernel(op, p, b); k != nil {
		p.kern = k
	}
	od, ls, os := out.DType(), p.out.Size(), out.DType().Size()
	dst := out.Bytes()
	env.parallel(n, chunk, func(_, lo, hi int) {
		var bufA, bufB, bufO []byte
		if a.Arr == nil || a.Arr.DType() != p.inA {
			bufA = alignedBuf(chunk * p.inA.Size())
			if a.Arr == nil {
				repeat(bufA, p.sa)
			}
		}
		if b.Arr == nil || b.Arr.DType() != p.inB {
			bufB = alignedBuf(chunk * p.inB.Size())
			if b.Arr == nil {
				repeat(bufB, p.sb)
			}
		}
		if od != p.out {
			bufO = alignedBuf(chunk * ls)
		}
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			av := load(a, p.inA, c, e, bufA)
			bv := load(b, p.inB, c, e, bufB)
			if bufO == nil {
				p.kern(dst[c*os:e*os], av, bv)
			} else {
				p.kern(bufO[:(e-c)*ls], av, bv)
				castBytes(od, dst[c*os:e*os], p.out, bufO[:(e-c)*ls])
			}
		}
	})
	return nil
}

// load returns elements [lo, hi) of o in dtype d: the array's own bytes
// when it already has dtype d, else a cast into buf (or buf itself, already
// filled, for a scalar).
func load(o Operand, d pdarray.DType, lo, hi int, buf []byte) []byte {
	sz := d.Size()
	if o.Arr == nil {
		return buf[:(hi-lo)*sz]
	}
	ad := o.Arr.DType()
	as := ad.Size()
	if ad == d {
		return o.Arr.Bytes()[lo*as : hi*as]
	}
	castBytes(d, buf[:(hi-lo)*sz], ad, o.Arr.Bytes()[lo*as:hi*as])
	return buf[:(hi-lo)*sz]
}

// repeat fills buf with copies of elem.
func repeat(buf, elem []byte) {
	if len(elem) == 0 {
		return
	}
	n := copy(buf, elem)
	for n < len(buf) {
		n += copy(buf[n:], buf[:n])
	}
}

// fillBytes sets every element of out to the element bytes elem.
func fillBytes(env Env, out *pdarray.Array, elem []byte) {
	sz := len(elem)
	dst := out.Bytes()
	zero := true
	for _, b := range elem {
		zero = zero && b == 0
	}
	env.parallel(out.Len(), chunk, func(_, lo, hi int) {
		d := dst[lo*sz : hi*sz]
		if zero {
			clear(d)
			return
		}
		repeat(d, elem)
	})
}

func hasNegative(o Operand) bool {
	if o.Arr == nil {
		return o.Sc.K == 'i' && o.Sc.I < 0
	}
	switch o.Arr.DType() {
	case dI8:
		return anyNeg(pdarray.View[int8](o.Arr))
	case dI16:
		return anyNeg(pdarray.View[int16](o.Arr))
	case dI32:
		return anyNeg(pdarray.View[int32](o.Arr))
	case dI64:
		return anyNeg(pdarray.View[int64](o.Arr))
	}
	return false
}

func anyNeg[T Signed](x []T) bool {
	for _, v := range x {
		if v < 0 {
			return true
		}
	}
	return false
}

// ---- kernels ----------------------------------------------------------

type loop[T, O pdarray.Element] func(d []O, a, b []T)

func (f loop[T, O]) bytes() func(d, a, b []byte) {
	return func(d, a, b []byte) {
		f(pdarray.BytesAs[O](d), pdarray.BytesAs[T](a), pdarray.BytesAs[T](b))
	}
}

func binKernel(op string, inA, inB pdarray.DType) func(d, a, b []byte) {
	if inA != inB {
		if inA == dI64 && inB == dU64 {
			return cmpIU(op, false)
		}
		if inA == dU64 && inB == dI64 {
			return cmpIU(op, true)
		}
		return nil
	}
	k := plainKernel(op, inA)
	if isCompare(op) {
		if v := simdCompare(op, inA, k); v != nil {
			return v
		}
	}
	if v := simdExtremum(op, inA, k); v != nil {
		return v
	}
	return k
}

// plainKernel is binKernel of two arrays of one dtype, in plain Go loops.
func plainKernel(op string, inA pdarray.DType) func(d, a, b []byte) {
	switch inA {
	case dBool:
		switch op {
		case "+", "|", "maximum":
			return boolOr
		case "*", "&", "minimum":
			return boolAnd
		case "^":
			return boolXor
		}
		return numKernel[uint8](op)
	case dI8:
		return intKernel[int8](op)
	case dI16:
		return intKernel[int16](op)
	case dI32:
		return intKernel[int32](op)
	case dI64:
		return intKernel[int64](op)
	case dU8:
		return intKernel[uint8](op)
	case dU16:
		return intKernel[uint16](op)
	case dU32:
		return intKernel[uint32](op)
	case dU64:
		return intKernel[uint64](op)
	case dF32:
		return floatKernel[float32](op)
	case dF64:
		return floatKernel[float64](op)
	}
	return nil
}

// numKernel has the operators that mean the same for every number type.
func numKernel[T Number](op string) func(d, a, b []byte) {
	switch op {
	case "+":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] + b[i]
			}
		}).bytes()
	case "-":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] - b[i]
			}
		}).bytes()
	case "*":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
		}).bytes()
	case "<":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] < b[i])
			}
		}).bytes()
	case "<=":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] <= b[i])
			}
		}).bytes()
	case ">":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] > b[i])
			}
		}).bytes()
	case ">=":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] >= b[i])
			}
		}).bytes()
	case "==":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] == b[i])
			}
		}).bytes()
	case "!=":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] != b[i])
			}
		}).bytes()
	case "maximum":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x >= y || x != x {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	case "minimum":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x <= y || x != x {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	case "clip_lo": // numpy's clip: NaN stays, a tie takes the bound
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x > y || x != x {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	case "clip_hi":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x < y || x != x {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	case "logical_and": // (NaN is nonzero: true, as numpy)
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] != 0) & b2u(b[i] != 0)
			}
		}).bytes()
	case "logical_or":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] != 0) | b2u(b[i] != 0)
			}
		}).bytes()
	case "logical_xor":
		return loop[T, uint8](func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] != 0) ^ b2u(b[i] != 0)
			}
		}).bytes()
	case "fmax": // (NaN loses: the other operand, as C's fmax)
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x >= y || y != y {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	case "fmin":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x <= y || y != y {
					d[i] = x
				} else {
					d[i] = y
				}
			}
		}).bytes()
	}
	return nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// The bool |, & and ^ run on eight bytes at a time as uint64 words (bytes
// 0 and 1 stay 0 and 1; the loads need no alignment), the bytes past the
// last whole word one by one.

func boolOr(d, a, b []byte) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+8 <= len(d); i += 8 {
		endian.LittleEndian.PutUint64(d[i:], endian.LittleEndian.Uint64(a[i:])|endian.LittleEndian.Uint64(b[i:]))
	}
	orLoop(d[i:], a[i:], b[i:])
}

func boolAnd(d, a, b []byte) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+8 <= len(d); i += 8 {
		endian.LittleEndian.PutUint64(d[i:], endian.LittleEndian.Uint64(a[i:])&endian.LittleEndian.Uint64(b[i:]))
	}
	andLoop(d[i:], a[i:], b[i:])
}

func boolXor(d, a, b []byte) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+8 <= len(d); i += 8 {
		endian.LittleEndian.PutUint64(d[i:], endian.LittleEndian.Uint64(a[i:])^endian.LittleEndian.Uint64(b[i:]))
	}
	xorLoop(d[i:], a[i:], b[i:])
}

func orLoop[T Integer](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] | b[i]
	}
}

func andLoop[T Integer](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] & b[i]
	}
}

func xorLoop[T Integer](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] ^ b[i]
	}
}

func intKernel[T Integer](op string) func(d, a, b []byte) {
	switch op {
	case "&":
		return loop[T, T](andLoop[T]).bytes()
	case "|":
		return loop[T, T](orLoop[T]).bytes()
	case "^":
		return loop[T, T](xorLoop[T]).bytes()
	case "<<":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] << uint64(b[i]) // a count >= the width (or negative) gives 0, as numpy
			}
		}).bytes()
	case ">>":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] >> uint64(b[i]) // sign fill past the width, as numpy
			}
		}).bytes()
	case "//":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if y == 0 {
					d[i] = 0 // numpy: 0 with a divide-by-zero warning
					continue
				}
				q := x / y // MinInt / -1 wraps to MinInt, as numpy
				if (x%y != 0) && ((x < 0) != (y < 0)) {
					q--
				}
				d[i] = q
			}
		}).bytes()
	case "%":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if y == 0 {
					d[i] = 0
					continue
				}
				r := x % y
				if r != 0 && ((r < 0) != (y < 0)) {
					r += y
				}
				d[i] = r
			}
		}).bytes()
	case "**":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ipow(a[i], uint64(b[i]))
			}
		}).bytes()
	case "fmod": // C's remainder: the dividend's sign; by zero 0, as numpy
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if b[i] == 0 {
					d[i] = 0
				} else {
					d[i] = a[i] % b[i]
				}
			}
		}).bytes()
	case "gcd":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = gcd(a[i], b[i])
			}
		}).bytes()
	case "lcm":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = lcm(a[i], b[i])
			}
		}).bytes()
	}
	return numKernel[T](op)
}

// uabs is |x| exactly, as an unsigned 64-bit integer (the smallest
// signed value too: -x as uint64 is its magnitude).
func uabs[T Integer](x T) uint64 {
	if x < 0 {
		return -uint64(int64(x))
	}
	return uint64(x)
}

func gcdU(a, b uint64) uint64 {
	for a != 0 {
		a, b = b%a, a
	}
	return b
}

// gcd is numpy's npy_gcd: Euclid on the exact absolute values in unsigned
// arithmetic, the result cast to T (gcd of int8 -128 and -128 is 128,
// which int8 holds as -128, as numpy's).
func gcd[T Integer](a, b T) T { return T(gcdU(uabs(a), uabs(b))) }

// lcm is numpy's npy_lcm: |a| / gcd · |b| in unsigned arithmetic, cast to T
// (lcm of int8 127 and 2 is 254: -2 as numpy's), 0 when both are 0.
func lcm[T Integer](a, b T) T {
	ua, ub := uabs(a), uabs(b)
	g := gcdU(ua, ub)
	if g == 0 {
		return 0
	}
	return T(ua / g * ub)
}

// ipow is numpy's integer power by squaring (wrapping); e >= 0.
func ipow[T Integer](base T, e uint64) T {
	if e == 0 || base == 1 {
		return 1
	}
	out := T(1)
	if e&1 != 0 {
		out = base
	}
	e >>= 1
	for e > 0 {
		base *= base
		if e&1 != 0 {
			out *= base
		}
		e >>= 1
	}
	return out
}

func floatKernel[T Float](op string) func(d, a, b []byte) {
	switch op {
	case "/":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		}).bytes()
	case "//":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = floorDiv(a[i], b[i])
			}
		}).bytes()
	case "%":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = fmodPy(a[i], b[i])
			}
		}).bytes()
	case "**":
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if i&63 == 0 {
					clearUpper() // (pow's FMA and math.Exp: see clearUpper)
				}
				d[i] = T(pow(float64(a[i]), float64(b[i])))
			}
		}).bytes()
	case "nextafter": // exact, in T's own precision
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = nextafter(a[i], b[i])
			}
		}).bytes()
	case "copysign": // exact; a NaN keeps its payload and takes y's sign
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(math.Copysign(float64(a[i]), float64(b[i])))
			}
		}).bytes()
	case "fmod", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside", "float_power":
		// (fmod and heaviside are exact; float32 through float64 too)
		f := map[string]func(x, y float64) float64{"fmod": math.Mod,
			"arctan2": math.Atan2, "hypot": math.Hypot, "logaddexp": logaddexp, "logaddexp2": logaddexp2,
			"heaviside": heaviside, "float_power": pow}[op]
		return loop[T, T](func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if i&63 == 0 {
					clearUpper() // (math.Exp and pow: see clearUpper)
				}
				r := f(float64(a[i]), float64(b[i]))
				if r != r {
					r = nanFrom2(float64(a[i]), float64(b[i])) // C's NaN bits, not Go's
				}
				d[i] = T(r)
			}
		}).bytes()
	}
	return numKernel[T](op)
}

// pow is powDD with C's NaN bits (a negative base to a fraction).
func pow(x, y float64) float64 {
	if r := powDD(x, y); r == r {
		return r
	}
	return nanFrom2(x, y)
}

// powDD is math.Pow with the integer part of the exponent taken by
// repeated squaring in double-double arithmetic. math.Pow squares in
// float64, and each squaring doubles the relative error: x**11091 came out
// 2975 ULP from glibc's (numpy's). Here the error stays near 2^-100 until
// the one final rounding, so an integer power is within an ULP of the
// exact one; a fractional part, exp(yf·log x) as math.Pow takes it, adds
// its ULP or two. Special operands (zeros, infinities, NaN, a negative
// base to a fraction, |y| past 2^63) are math.Pow's.
func powDD(x, y float64) float64 {
	yi, yf := math.Modf(math.Abs(y))
	if y == 0 || x == 1 || x != x || y != y || x == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) ||
		yi >= 1<<63 || (yf != 0 && x < 0) {
		return math.Pow(x, y)
	}
	ah, al, ae := 1.0, 0.0, 0 // the answer so far: (ah + al)·2^ae
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		ah = math.Exp(yf * math.Log(x))
	}
	xh, xe := math.Frexp(x)
	xl := 0.0
	for i := uint64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			ae += xe // past any float64: Ldexp overflows or underflows, as math.Pow
			break
		}
		if i&1 == 1 {
			ah, al = ddMul(ah, al, xh, xl)
			ae += xe
		}
		xh, xl = ddMul(xh, xl, xh, xl)
		xe <<= 1
		if xh < .5 {
			xh, xl = 2*xh, 2*xl
			xe--
		}
	}
	if y < 0 {
		ah, al = ddRecip(ah, al)
		ae = -ae
	}
	return math.Ldexp(ah+al, ae)
}

// ddMul is (ah + al)·(bh + bl) in double-double (normalized: |lo| at
// most half an ULP of hi), the product's error below 2^-100 relative.
func ddMul(ah, al, bh, bl float64) (float64, float64) {
	p := ah * bh
	e := math.FMA(ah, bh, -p) + (ah*bl + al*bh)
	s := p + e
	return s, e - (s - p)
}

// ddRecip is 1 / (ah + al) in double-double: one Newton step from 1/ah.
func ddRecip(ah, al float64) (float64, float64) {
	q := 1 / ah
	r := math.FMA(-q, ah, 1) - q*al // 1 - q·(ah + al)
	d := q * r
	s := q + d
	return s, d - (s - q)
}

// logaddexp is numpy's npy_logaddexp step for step: log(exp(x) + exp(y))
// without overflow; equal arguments (infinities too) give x + log 2.
func logaddexp(x, y float64) float64 {
	if x == y {
		return x + math.Ln2
	}
	switch t := x - y; {
	case t > 0:
		return x + math.Log1p(math.Exp(-t))
	case t <= 0:
		return y + math.Log1p(math.Exp(t))
	default:
		return t // NaN
	}
}

// logaddexp2 is numpy's npy_logaddexp2: log2(2^x + 2^y).
func logaddexp2(x, y float64) float64 {
	if x == y {
		return x + 1
	}
	switch t := x - y; {
	case t > 0:
		return x + math.Log1p(math.Exp2(-t))*math.Log2E
	case t <= 0:
		return y + math.Log1p(math.Exp2(t))*math.Log2E
	default:
		return t
	}
}

// heaviside is numpy's: 0 below zero, h0 at zero, 1 above, NaN itself.
func heaviside(x, h0 float64) float64 {
	switch {
	case x < 0:
		return 0
	case x == 0:
		return h0
	case x > 0:
		return 1
	}
	return x
}

// nextafter is C's nextafter in T's precision: y when x == y (so
// nextafter(0.0, -0.0) is -0.0, where Go's gives x), NaNs propagated as
// x + y (Go's makes a new NaN).
func nextafter[T Float](x, y T) T {
	switch {
	case x != x || y != y:
		return x + y
	case x == y:
		return y
	}
	if f, ok := any(x).(float32); ok {
		return T(math.Nextafter32(f, float32(y)))
	}
	return T(math.Nextafter(float64(x), float64(y)))
}

// divmod is numpy's npy_divmod: Python's floor division and remainder.
func divmod[T Float](a, b T) (T, T) {
	mod := T(fmod(float64(a), float64(b))) // fmod is exact, so float32 loses nothing
	if b == 0 {
		return a / b, mod
	}
	div := (a - mod) / b
	if mod != 0 {
		if (b < 0) != (mod < 0) {
			mod += b
			div -= 1
		}
	} else {
		mod = T(math.Copysign(0, float64(b)))
	}
	var fl T
	if div != 0 {
		fl = T(math.Floor(float64(div)))
		if div-fl > 0.5 {
			fl += 1
		}
	} else {
		fl = T(math.Copysign(0, float64(a/b)))
	}
	return fl, mod
}

func floorDiv[T Float](a, b T) T {
	if b == 0 {
		return a / b
	}
	q, _ := divmod(a, b)
	return q
}

func fmodPy[T Float](a, b T) T {
	if b == 0 {
		return T(fmod(float64(a), float64(b)))
	}
	_, m := divmod(a, b)
	return m
}

// cmpIU compares int64 with uint64 exactly (swap: uint64 with int64).
func cmpIU(op string, swap bool) func(d, a, b []byte) {
	// cmp returns -1, 0, 1 for s ? u.
	cmp := func(s int64, u uint64) int {
		if s < 0 || uint64(s) < u {
			return -1
		}
		if uint64(s) == u {
			return 0
		}
		return 1
	}
	test := map[string]func(int) bool{
		"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
		">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
		"==": func(c int) bool { return c == 0 }, "!=": func(c int) bool { return c != 0 },
	}[op]
	if test == nil {
		return nil
	}
	return func(d, a, b []byte) {
		dv := pdarray.BytesAs[uint8](d)
		if !swap {
			s, u := pdarray.BytesAs[int64](a), pdarray.BytesAs[uint64](b)
			for i := range dv {
				dv[i] = b2u(test(cmp(s[i], u[i])))
			}
			return
		}
		u, s := pdarray.BytesAs[uint64](a), pdarray.BytesAs[int64](b)
		for i := range dv {
			dv[i] = b2u(test(-cmp(s[i], u[i])))
		}
	}
}

// ResolveClip is the dtype of np.clip(a, lo, hi): the three operands
// promoted together, as numpy's ufunc does (clipDType; a nil bound is left
// out; at least one is given), then maximum with lo and minimum with hi.
func ResolveClip(a Operand, lo, hi *Operand) (pdarray.DType, error) {
	c, err := planClip(a, lo, hi)
	return c.out, err
}

// clipPlan is clip's two steps planned along their dtypes: a is cast to
// in first (when they differ), then k1 (nil without lo) takes it to mid,
// k2 (nil without hi) mid to out.
type clipPlan struct {
	k1, k2       *binPlan
	loOp, hiOp   string
	in, mid, out pdarray.DType
}

// clipDType is numpy's dtype for clip's operands together: the arrays' and
// numpy scalars' dtypes promoted, then each Python scalar's kind taken in.
// Step by step, a scalar lo met a alone: clip(int8, 300, int16 array) put
// 300 in int8's range (numpy: 300), clip(int8, 2.5, float32 array) gave
// float64 (numpy: float32).
func clipDType(a Operand, lo, hi *Operand) pdarray.DType {
	strong := []pdarray.DType{a.dtype()}
	for _, b := range []*Operand{lo, hi} {
		if b != nil && b.strongDType().Valid() {
			strong = append(strong, b.strongDType())
		}
	}
	d := promoteAll(strong)
	for _, b := range []*Operand{lo, hi} {
		if b != nil && !b.strongDType().Valid() {
			d = scalarWith(b.Sc, d)
		}
	}
	return d
}

// promoteAll is numpy's result_type of several dtypes, which is not
// pairwise left to right (int8, uint16, float32: float32, where int8 with
// uint16 is int32 and int32 with float32 float64): with a float among
// them it is the widest of each dtype's own float (an integer's the float
// it promotes to with float32), else the pairwise promotion. Checked
// against np.result_type for every pair and triple of dtypes.
func promoteAll(ds []pdarray.DType) pdarray.DType {
	if slices.ContainsFunc(ds, func(d pdarray.DType) bool { return Kind(d) == 'f' }) {
		w := dF32
		for _, d := range ds {
			if Kind(d) != 'f' {
				d = Promote(d, dF32)
			}
			if d.Size() > w.Size() {
				w = d
			}
		}
		return w
	}
	d := ds[0]
	for _, e := range ds[1:] {
		d = Promote(d, e)
	}
	return d
}

func planClip(a Operand, lo, hi *Operand) (clipPlan, error) {
	c := clipPlan{in: clipDType(a, lo, hi)}
	c.mid = c.in
	if c.in != a.dtype() {
		a = dtypeOnly(c.in)
	}
	c.loOp, c.hiOp = clipSteps(lo, hi)
	var err error
	if lo != nil {
		if c.k1, err = planBinary(c.loOp, a, *lo); err != nil {
			return c, err
		}
		c.mid = c.k1.out
	}
	c.out = c.mid
	if hi != nil {
		if c.k2, err = planBinary(c.hiOp, dtypeOnly(c.mid), *hi); err != nil {
			return c, err
		}
		c.out = c.k2.out
	}
	return c, nil
}

// dtypeOnly is an empty array operand of dtype d: planBinary reads only
// its dtype.
func dtypeOnly(d pdarray.DType) Operand {
	e, _ := pdarray.Alloc(d, 0)
	return ArrayOperand(e)
}

// Clip writes np.clip(a, lo, hi) into out (ResolveClip's dtype, a's
// length; a is an array): minimum(maximum(a, lo), hi), ties decided as
// numpy decides them (clipSteps), either bound nil for none. a is first
// cast to the operands' common dtype when it is not in it (an int array
// with a float bound). When neither step then changes the dtype both run
// on each chunk while it is in cache, one pass over memory where two
// binops made two (10^7 float64: 26.6 ms through the server as two
// requests); otherwise (a bound array of another dtype) the two steps run
// one after the other through an intermediate array of env's.
func Clip(env Env, a Operand, lo, hi *Operand, out *pdarray.Array) error {
	c, err := planClip(a, lo, hi)
	if err != nil {
		return err
	}
	if c.in != a.dtype() {
		// a in the operands' common dtype first, then the steps on it.
		ca, err := env.Alloc(c.in, out.Len())
		if err != nil {
			return err
		}
		defer env.free(ca)
		if a.Arr != nil {
			AsType(env, a.Arr, ca)
		} else {
			repeat(ca.Bytes(), ScalarBytes(a.Sc, c.in))
		}
		a = ArrayOperand(ca)
	}
	d, k1, k2 := a.dtype(), c.k1, c.k2
	fused := a.Arr != nil && out.DType() == d
	for _, p := range []*binPlan{k1, k2} {
		fused = fused && (p == nil || (p.inA == d && p.inB == d && p.out == d && p.constant < 0 && p.kern != nil))
	}
	if fused {
		clipFused.Add(1)
	} else {
		mid := out
		if lo != nil && hi != nil {
			if mid, err = env.Alloc(c.mid, out.Len()); err != nil {
				return err
			}
			defer env.free(mid)
		}
		x := a
		if lo != nil {
			if err := runBinary(env, c.loOp, a, *lo, mid); err != nil {
				return err
			}
			x = ArrayOperand(mid)
		}
		if hi != nil {
			return runBinary(env, c.hiOp, x, *hi, out)
		}
		return nil
	}
	sz := d.Size()
	dst := out.Bytes()
	env.parallel(out.Len(), chunk, func(_, l, h int) {
		buf := alignedBuf(chunk * sz)
		bufLo, bufHi := boundBuf(lo, k1, d), boundBuf(hi, k2, d)
		for c := l; c < h; c += chunk {
			e := min(h, c+chunk)
			x := load(a, d, c, e, nil)
			o := dst[c*sz : e*sz]
			if k1 != nil {
				t := o
				if k2 != nil {
					t = buf[:(e-c)*sz]
				}
				k1.kern(t, x, load(*lo, d, c, e, bufLo))
				x = t
			}
			if k2 != nil {
				k2.kern(o, x, load(*hi, d, c, e, bufHi))
			}
		}
	})
	return nil
}

// clipSteps are the ops of clip's two steps, as numpy 2 runs them: with a
// scalar bound its loop is maximum (then minimum), which keeps x on a tie
// (clip(-0.0, 0.0, 1.0) is -0.0); with an array bound it takes the bound
// (0.0 there): clip_lo and clip_hi.
func clipSteps(lo, hi *Operand) (loOp, hiOp string) {
	loOp, hiOp = "maximum", "minimum"
	if lo != nil && lo.Arr != nil {
		loOp = "clip_lo"
	}
	if hi != nil && hi.Arr != nil {
		hiOp = "clip_hi"
	}
	return loOp, hiOp
}

// clipFused counts the clips made in one pass (a test checks the path).
var clipFused atomic.Uint64

// boundBuf is a chunk buffer for a clip bound of dtype d (p its step's
// plan): its scalar repeated (as the plan converted it), or room for an
// array's cast (nil for no bound or an array of d).
func boundBuf(o *Operand, p *binPlan, d pdarray.DType) []byte {
	if o == nil || (o.Arr != nil && o.Arr.DType() == d) {
		return nil
	}
	b := alignedBuf(chunk * d.Size())
	if o.Arr == nil {
		repeat(b, p.sb)
	}
	return b
}

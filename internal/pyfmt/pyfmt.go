// Package pyfmt writes numbers as Python's str() and repr() write them, for
// every place the server turns numbers into text (string casts, CSV).
package pyfmt

import (
	"bytes"
	"math"
	"strconv"
)

// Float appends Python's repr of f (for bitSize 32, numpy's str
// of a float32: the shortest digits that read back as that float32): the
// shortest digits that round-trip, fixed-point from 1e-4 up to 1e16 with
// at least one decimal ("1.0"), scientific outside with a two-digit
// exponent at least ("1e+16", "1.5e-05"). It formats once, in 'e' form,
// and moves the point itself.
func Float(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize) // [-]d[.ddd]e±dd
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	k := bytes.IndexByte(e, 'e')
	mant, es := e[:k], e[k+1:]
	exp := 0
	for _, c := range es[1:] {
		exp = exp*10 + int(c-'0')
	}
	if es[0] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		// Go's exponent is Python's: a sign and two digits at least.
		dst = append(dst, mant...)
		dst = append(dst, 'e')
		return append(dst, es...)
	}
	var dbuf [24]byte
	digits := append(dbuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	switch {
	case exp < 0:
		dst = append(dst, "0."...)
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case len(digits) <= exp+1:
		dst = append(dst, digits...)
		for range exp + 1 - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	default:
		dst = append(dst, digits[:exp+1]...)
		dst = append(dst, '.')
		return append(dst, digits[exp+1:]...)
	}
}

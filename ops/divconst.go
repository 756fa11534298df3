package ops

import (
	endian "encoding/binary"
	"math/bits"

	"github.com/arktos-dev/arktos/pdarray"
)

// Floor division and modulo of int64 by a positive scalar, as numpy's //
// and %, by multiplying with the divisor's reciprocal instead of a
// hardware division per element (IDIV: about 40 cycles; 10^7 elements
// // 7 took 45 ms, numpy 12.6). Granlund and Montgomery's unsigned
// division by an invariant integer (1994, fig. 4.1): for d > 1, with
// l = ceil(log2 d) and m = floor(2^64 (2^l - d) / d) + 1,
//
//	u / d = (t + (u - t) >> 1) >> (l - 1),  t = mulhi(m, u),
//
// exact for every 64-bit u. The sign is taken off first (|MinInt64| is
// 2^63 as an unsigned) and put back, and a negative dividend with a
// remainder steps down once more: numpy's floor. No branch depends on the
// values.
type divConst struct {
	d     uint64
	m     uint64
	shift uint
}

func newDivConst(d uint64) divConst {
	if d == 1 {
		return divConst{d: 1}
	}
	l := uint(bits.Len64(d - 1)) // ceil(log2 d)
	var hi uint64
	if l < 64 {
		hi = 1<<l - d
	} else {
		hi = -d // 2^64 - d
	}
	q, _ := bits.Div64(hi, 0, d) // (hi < d: a valid division)
	return divConst{d: d, m: q + 1, shift: l - 1}
}

// quo is u / d, for every uint64 u.
func (c divConst) quo(u uint64) uint64 {
	if c.d == 1 {
		return u
	}
	t, _ := bits.Mul64(c.m, u)
	return (t + (u-t)>>1) >> c.shift
}

// intDivKernel returns the kernel of a // s or a % s (op) for int64 a and
// a scalar s > 0, or nil for anything else.
func intDivKernel(op string, p *binPlan, b Operand) func(d, a, b []byte) {
	if simdOff.Load() { // (tests compare with the plain loop)
		return nil
	}
	if (op != "//" && op != "%") || p.inA != dI64 || p.inB != dI64 || p.out != dI64 || b.Arr != nil || len(p.sb) != 8 {
		return nil
	}
	s := int64(endian.LittleEndian.Uint64(p.sb))
	if s <= 0 {
		return nil
	}
	c := newDivConst(uint64(s))
	if c.d == 1 { // x // 1 is x, x % 1 is 0
		return func(db, ab, _ []byte) {
			if op == "//" {
				copy(db, ab)
			} else {
				clear(db)
			}
		}
	}
	m, sh := c.m, c.shift&63 // (masked: no check for a shift past 63)
	mod := op == "%"
	return func(db, ab, _ []byte) {
		d, a := pdarray.BytesAs[int64](db), pdarray.BytesAs[int64](ab)
		a = a[:len(d)]
		i := simdFloorDivI64(d, a, s, m, sh, mod) // whole blocks of eight, where AVX-512 runs
		for j, x := range a[i:] {
			q := floorDivMagic(x, s, m, sh)
			if mod {
				q = x - q*s
			}
			d[i+j] = q
		}
	}
}

// floorDivMagic is floor(x / s) for s > 1 with s's divConst m and shift.
func floorDivMagic(x, s int64, m uint64, sh uint) int64 {
	neg := x >> 63               // -1 or 0
	u := uint64((x ^ neg) - neg) // |x| (MinInt64: 2^63)
	t, _ := bits.Mul64(m, u)
	qu := (t + (u-t)>>1) >> sh
	q := (int64(qu) ^ neg) - neg                 // the truncated quotient
	return q - int64(b2u(u != qu*uint64(s)))&neg // floor: one lower when negative with a remainder
}

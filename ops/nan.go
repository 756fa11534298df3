package ops

import "math"

// NaN bits, as numpy makes them. An invalid operation of the FPU (0/0,
// inf-inf, sqrt(-1)) answers its default NaN: 0xfff8000000000000 on x86,
// 0x7ff8000000000000 on arm64. C's libm answers that NaN for log(-1),
// fmod(inf, y), asin(2), sin(inf) ..., and a NaN argument's own bits
// (quieted) when it is given one, so numpy's answers carry them. Go's math
// answers math.NaN() (0x7ff8000000000001) in both cases instead, and
// numpy's bits differed from ours; the float kernels built on Go's math
// replace each NaN answer by nanFrom's or nanFrom2's (a branch that a
// kernel's loop takes only for NaN answers, so it is well predicted).

// zeroForNaN is a variable, not a constant, so that the FPU and not the
// compiler divides it by itself.
var zeroForNaN float64

// invalidNaN is this machine's default NaN.
var invalidNaN = zeroForNaN / zeroForNaN

const quietBit = 1 << 51

// nanFrom is the NaN C's libm answers for f(x): x's own bits, quieted,
// when x is a NaN, else the default NaN.
func nanFrom(x float64) float64 {
	if x != x {
		return math.Float64frombits(math.Float64bits(x) | quietBit)
	}
	return invalidNaN
}

// nanFrom2 is nanFrom for f(x, y): the first NaN argument, as x86's SSE
// and C's libm propagate it.
func nanFrom2(x, y float64) float64 {
	if x != x {
		return nanFrom(x)
	}
	return nanFrom(y)
}

// fmod is math.Mod with C's NaN bits (fmod(inf, y) and fmod(x, 0) answer
// the default NaN).
func fmod(x, y float64) float64 {
	if r := math.Mod(x, y); r == r {
		return r
	}
	return nanFrom2(x, y)
}

package csvio

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

// digitRun appends the digits of b from i on to man, eight at a time while
// they fit: it returns where they end, and ok false when they do not fit
// below 1e19 (man stays below 1e18 before each digit).
func digitRun(b []byte, i int, man uint64) (int, uint64, bool) {
	for ; i+8 <= len(b) && man < 1e11; i += 8 {
		v, ok := eightDigits(b[i:])
		if !ok {
			break
		}
		man = man*1e8 + v
	}
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		if man >= 1e18 {
			return i, man, false
		}
		man = man*10 + uint64(c)
	}
	return i, man, true
}

// parseDecimal reads the common float form, [sign] digits [. digits]
// [e [sign] digits] whose digits fit in a uint64, without strconv:
// strconv.ParseFloat spends most of its 70 ns on a 17-digit float (the
// shortest repr of most doubles, as Write and pandas write them) scanning
// the text. It gives the float strconv gives, or ok false where it cannot
// tell (another form, more digits, an exponent out of range, a halfway
// case): the caller then asks strconv, which also makes the errors.
func parseDecimal(b []byte) (f float64, ok bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i, neg = 1, b[0] == '-'
	}
	// man takes every digit (leading zeros add nothing); below 1e18 one
	// more always fits, below 1e11 eight more.
	var man uint64
	exp, start := 0, i
	if i, man, ok = digitRun(b, i, man); !ok {
		return 0, false
	}
	digits := i - start
	if i < len(b) && b[i] == '.' {
		frac := i + 1
		if i, man, ok = digitRun(b, frac, man); !ok {
			return 0, false
		}
		digits += i - frac
		exp = frac - i
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			i, eneg = i+1, b[i] == '-'
		}
		if i == len(b) {
			return 0, false
		}
		e := 0
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				return 0, false
			}
			if e < 100000 { // past it, out of range all the same
				e = e*10 + int(c)
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, false
	}
	if man == 0 {
		if neg {
			return math.Copysign(0, -1), true
		}
		return 0, true
	}
	// Clinger's fast path: man and 10^|exp| are exact floats, so one
	// multiplication or division rounds once, correctly.
	if man < 1<<53 && exp >= -22 && exp <= 22 {
		f = float64(man)
		if exp >= 0 {
			f *= exactPow10[exp]
		} else {
			f /= exactPow10[-exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	return eiselLemire64(man, exp, neg)
}

// eightDigits reads b[:8] as eight decimal digits at once (SWAR, as
// simdjson and fast_float do): a digit at a time is a chain of multiplies,
// four cycles a digit.
func eightDigits(b []byte) (uint64, bool) {
	v := binary.LittleEndian.Uint64(b)
	if v&0xF0F0F0F0F0F0F0F0|(v+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 != 0x3333333333333333 {
		return 0, false
	}
	v -= 0x3030303030303030
	v = v*10 + v>>8 // each byte pair: its two digits' value, in the low byte
	const mask = 0x000000FF000000FF
	return ((v&mask)*(100+1000000<<32) + (v>>16&mask)*(1+10000<<32)) >> 32, true
}

var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

const (
	pow10MinExp = -348
	pow10MaxExp = 347
)

// pow10Table holds, for 10^e (e from pow10MinExp), its 128 leading bits
// rounded down, as {low, high} words: Go's table for the Eisel-Lemire
// algorithm (internal/strconv/pow10tab.go), computed here with math/big
// rather than copied in (TestPow10Table checks entries against Go's).
var pow10Table = makePow10Table()

func makePow10Table() *[pow10MaxExp - pow10MinExp + 1][2]uint64 {
	var t [pow10MaxExp - pow10MinExp + 1][2]uint64
	ten := big.NewInt(10)
	var m, d big.Int
	for i := range t {
		e := i + pow10MinExp
		if e >= 0 {
			m.Exp(ten, big.NewInt(int64(e)), nil)
			if n := m.BitLen(); n > 128 {
				m.Rsh(&m, uint(n-128))
			} else {
				m.Lsh(&m, uint(128-n))
			}
		} else {
			// 2^s / 10^-e lies in (2^127, 2^128) for s = 127 + bits(10^-e).
			d.Exp(ten, big.NewInt(int64(-e)), nil)
			m.Lsh(big.NewInt(1), uint(127+d.BitLen()))
			m.Quo(&m, &d)
		}
		w := m.Bits() // little-endian words; 64-bit words on every GOARCH csvio runs on
		if bits.UintSize == 64 {
			t[i] = [2]uint64{uint64(w[0]), uint64(w[1])}
		} else {
			t[i] = [2]uint64{uint64(w[0]) | uint64(w[1])<<32, uint64(w[2]) | uint64(w[3])<<32}
		}
	}
	return &t
}

// eiselLemire64 is strconv's eiselLemire64 (internal/strconv/atofeisel.go, after
// Daniel Lemire's "Number Parsing at a Gigabyte per Second"): man·10^exp10
// correctly rounded, or ok false when 128 bits cannot decide it.
func eiselLemire64(man uint64, exp10 int, neg bool) (f float64, ok bool) {
	if exp10 < pow10MinExp || exp10 > pow10MaxExp {
		return 0, false
	}
	clz := bits.LeadingZeros64(man)
	man <<= uint(clz)
	const bias = 1023
	retExp2 := uint64(217706*exp10>>16+64+bias) - uint64(clz)
	p := &pow10Table[exp10-pow10MinExp]
	xHi, xLo := bits.Mul64(man, p[1])
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, p[0])
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}
	msb := xHi >> 63
	retMantissa := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb
	if xLo == 0 && xHi&0x1FF == 0 && retMantissa&3 == 1 {
		return 0, false // halfway between two floats
	}
	retMantissa += retMantissa & 1
	retMantissa >>= 1
	if retMantissa>>53 > 0 {
		retMantissa >>= 1
		retExp2++
	}
	if retExp2-1 >= 0x7FF-1 {
		return 0, false // subnormal, or past the largest float
	}
	retBits := retExp2<<52 | retMantissa&(1<<52-1)
	if neg {
		retBits |= 1 << 63
	}
	return math.Float64frombits(retBits), true
}

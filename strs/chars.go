package strs

import (
	"unicode"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/ops"
)

// Class is a character-class predicate of Python's str (isdigit, islower, ...).
type Class string

// The predicates, with Python's names less the "is".
const (
	IsAlnum   Class = "alnum"
	IsAlpha   Class = "alpha"
	IsDecimal Class = "decimal"
	IsDigit   Class = "digit"
	IsLower   Class = "lower"
	IsUpper   Class = "upper"
	IsTitle   Class = "title"
	IsSpace   Class = "space"
	IsEmpty   Class = "empty"
)

// Rune classes as Python's unicodeobject.c defines them, built from Go's
// tables (Go's Unicode version may be newer than a client's Python: a
// character added in between can differ).
func pyLower(r rune) bool { return unicode.IsLower(r) || unicode.Is(unicode.Other_Lowercase, r) }
func pyUpper(r rune) bool { return unicode.IsUpper(r) || unicode.Is(unicode.Other_Uppercase, r) }
func pyCased(r rune) bool { return pyLower(r) || pyUpper(r) || unicode.IsTitle(r) }

// pySpace is str.isspace's class: Unicode White_Space plus the four ASCII
// separators 0x1C-0x1F, which Python counts (bidirectional class B or S).
func pySpace(r rune) bool { return unicode.IsSpace(r) || (0x1c <= r && r <= 0x1f) }

// pyDigit is str.isdigit's class: decimal digits and the other characters
// with Numeric_Type=Digit (superscripts, subscripts, circled digits, ...),
// which Go has no table for; digitExtra lists them (Unicode 15).
func pyDigit(r rune) bool { return unicode.IsDigit(r) || unicode.Is(digitExtra, r) }

var digitExtra = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00b2, 0x00b3, 1}, {0x00b9, 0x00b9, 1}, {0x1369, 0x1371, 1}, {0x19da, 0x19da, 1},
		{0x2070, 0x2070, 1}, {0x2074, 0x2079, 1}, {0x2080, 0x2089, 1}, {0x2460, 0x2468, 1},
		{0x2474, 0x247c, 1}, {0x2488, 0x2490, 1}, {0x24ea, 0x24ea, 1}, {0x24f5, 0x24fd, 1},
		{0x24ff, 0x24ff, 1}, {0x2776, 0x277e, 1}, {0x2780, 0x2788, 1}, {0x278a, 0x2792, 1},
	},
	R32: []unicode.Range32{
		{0x10a40, 0x10a43, 1}, {0x10e60, 0x10e68, 1}, {0x11052, 0x1105a, 1}, {0x1f100, 0x1f10a, 1},
	},
}

// classTest returns the predicate over one string's bytes: an ASCII table
// walk for ASCII strings, runes otherwise.
func classTest(c Class) (func(b []byte) bool, error) {
	all := func(ascii func(byte) bool, uni func(rune) bool) func([]byte) bool {
		return func(b []byte) bool {
			if len(b) == 0 {
				return false
			}
			if isASCII(b) {
				for _, x := range b {
					if !ascii(x) {
						return false
					}
				}
				return true
			}
			for _, r := range string(b) {
				if !uni(r) {
					return false
				}
			}
			return true
		}
	}
	asciiDigit := func(x byte) bool { return '0' <= x && x <= '9' }
	asciiAlpha := func(x byte) bool { return 'a' <= x|0x20 && x|0x20 <= 'z' }
	switch c {
	case IsAlnum:
		return all(func(x byte) bool { return asciiDigit(x) || asciiAlpha(x) },
			func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }), nil
	case IsAlpha:
		return all(asciiAlpha, unicode.IsLetter), nil
	case IsDecimal:
		return all(asciiDigit, unicode.IsDigit), nil
	case IsDigit:
		return all(asciiDigit, pyDigit), nil
	case IsSpace:
		return all(func(x byte) bool { return x == ' ' || ('\t' <= x && x <= '\r') || (0x1c <= x && x <= 0x1f) }, pySpace), nil
	case IsEmpty:
		return func(b []byte) bool { return len(b) == 0 }, nil
	case IsLower, IsUpper:
		// Python: no character of the other case (or titlecase), and at
		// least one of this case.
		want, other := pyLower, pyUpper
		if c == IsUpper {
			want, other = pyUpper, pyLower
		}
		return func(b []byte) bool {
			cased := false
			for _, r := range string(b) {
				if other(r) || unicode.IsTitle(r) {
					return false
				}
				cased = cased || want(r)
			}
			return cased
		}, nil
	case IsTitle:
		return func(b []byte) bool {
			cased, prevCased := false, false
			for _, r := range string(b) {
				switch {
				case pyUpper(r) || unicode.IsTitle(r):
					if prevCased {
						return false
					}
					prevCased, cased = true, true
				case pyLower(r):
					if !prevCased {
						return false
					}
					prevCased, cased = true, true
				default:
					prevCased = false
				}
			}
			return cased
		}, nil
	}
	return nil, errorf(ops.ErrValue, "character class '%s' is not one of alnum, alpha, decimal, digit, lower, upper, title, space, empty", c)
}

// Is writes whether each string is of class c, as Python's str.is<c>()
// says (isempty: the string is "").
func Is(env ops.Env, s Strs, c Class, out []bool) error {
	test, err := classTest(c)
	if err != nil {
		return err
	}
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = test(s.At(i))
		}
	})
	return nil
}

// Side is which ends Strip trims.
type Side string

// Strip's sides: Python's strip, lstrip and rstrip.
const (
	Both  Side = "both"
	Left  Side = "left"
	Right Side = "right"
)

// Strip removes the leading and/or trailing characters that are in chars,
// as Python's str.strip(chars) does; with chars "" it strips whitespace
// (str.isspace's).
func Strip(env ops.Env, s Strs, chars string, side Side) (Arrays, error) {
	if side != Both && side != Left && side != Right {
		return Arrays{}, errorf(ops.ErrValue, "strip side '%s' is not one of both, left, right", side)
	}
	in := pySpace
	if chars != "" {
		set := []rune(chars)
		in = func(r rune) bool {
			for _, c := range set {
				if c == r {
					return true
				}
			}
			return false
		}
	}
	n := s.Len()
	lo, hi := make([]int64, n), make([]int64, n)
	envBlocks(env, n, func(_, a, b int) {
		for i := a; i < b; i++ {
			str := s.At(i)
			l, h := 0, len(str)
			if side != Right {
				for l < h {
					r, w := utf8.DecodeRune(str[l:h])
					if !in(r) {
						break
					}
					l += w
				}
			}
			if side != Left {
				for h > l {
					r, w := utf8.DecodeLastRune(str[l:h])
					if !in(r) {
						break
					}
					h -= w
				}
			}
			lo[i], hi[i] = s.Off[i]+int64(l), s.Off[i]+int64(h)
		}
	})
	return pieces(env, s, lo, hi)
}

// pieces builds string i as s.Data[lo[i]:hi[i]] (lo, hi are offsets into
// s.Data).
func pieces(env ops.Env, s Strs, lo, hi []int64) (Arrays, error) {
	return withASCII(s.ASCII)(build(env, len(lo),
		func(i int) int64 { return hi[i] - lo[i] },
		func(i int, dst []byte) { copy(dst, s.Data[lo[i]:hi[i]]) }))
}

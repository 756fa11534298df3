package strs

import (
	"bytes"
	"regexp"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/ops"
)

// PeelSpec is Arkouda's peel/rpeel: cut each string at its times-th
// delimiter (counted from the right with FromRight).
type PeelSpec struct {
	Delim     string
	Regex     bool
	Times     int
	Include   bool // keep the delimiter on the peeled field
	Partial   bool // keepPartial: where fewer than Times delimiters, the whole string goes to the other side
	FromRight bool
}

// Peel splits every string in two at its spec.Times-th delimiter (Arkouda's
// peel, or rpeel with FromRight): left is what comes before it, right what
// comes after; Include keeps the delimiter on the peeled field (left's end
// for peel, right's start for rpeel). A string with fewer delimiters goes
// whole to right for peel and to left for rpeel, or the other way with
// Partial.
func Peel(env ops.Env, s Strs, spec PeelSpec) (left, right Arrays, err error) {
	if spec.Times < 1 {
		return left, right, errorf(ops.ErrValue, "peel needs times >= 1, got %d", spec.Times)
	}
	if spec.Delim == "" {
		return left, right, errorf(ops.ErrValue, "peel needs a non-empty delimiter")
	}
	var re *regexp.Regexp
	if spec.Regex {
		if re, err = Compile(spec.Delim, Contains); err != nil {
			return left, right, err
		}
		if re.MatchString("") {
			return left, right, errorf(ops.ErrValue, "peel's delimiter %q matches the empty string; give one that matches at least one character", spec.Delim)
		}
	}
	d := []byte(spec.Delim)
	// find returns the chosen delimiter's [a, b) in str, or ok false.
	find := func(str []byte) (a, b int, ok bool) {
		switch {
		case re != nil:
			ms := re.FindAllIndex(str, -1)
			if len(ms) < spec.Times {
				return 0, 0, false
			}
			m := ms[spec.Times-1]
			if spec.FromRight {
				m = ms[len(ms)-spec.Times]
			}
			return m[0], m[1], true
		case spec.FromRight:
			end := len(str)
			for k := 0; k < spec.Times; k++ {
				j := bytes.LastIndex(str[:end], d)
				if j < 0 {
					return 0, 0, false
				}
				a, end = j, j
			}
			return a, a + len(d), true
		default:
			at := 0
			for k := 0; k < spec.Times; k++ {
				j := bytes.Index(str[at:], d)
				if j < 0 {
					return 0, 0, false
				}
				a, at = at+j, at+j+len(d)
			}
			return a, a + len(d), true
		}
	}
	n := s.Len()
	llo, lhi, rlo, rhi := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	envBlocks(env, n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			base, end := s.Off[i], s.Off[i+1]
			a, b, ok := find(s.At(i))
			llo[i], rhi[i] = base, end
			switch {
			case ok:
				lhi[i], rlo[i] = base+int64(a), base+int64(b)
				if spec.Include && !spec.FromRight {
					lhi[i] = base + int64(b)
				} else if spec.Include {
					rlo[i] = base + int64(a)
				}
			case spec.FromRight != spec.Partial: // whole string on the left
				lhi[i], rlo[i] = end, end
			default: // whole string on the right
				lhi[i], rlo[i] = base, base
			}
		}
	})
	if left, err = pieces(env, s, llo, lhi); err != nil {
		return left, right, err
	}
	if right, err = pieces(env, s, rlo, rhi); err != nil {
		env.Free(left.Offsets)
		env.Free(left.Bytes)
		return Arrays{}, right, err
	}
	return left, right, nil
}

// Affixes returns the n-character prefix (suffix with suffix) of each
// string that has at least n characters (more than n with proper), and
// which strings those were (Arkouda's get_prefixes / get_suffixes;
// characters are code points, as Python counts them).
func Affixes(env ops.Env, s Strs, n int, suffix, proper bool, origins []bool) (Arrays, error) {
	if n < 0 {
		return Arrays{}, errorf(ops.ErrValue, "a prefix or suffix length must be >= 0, got %d", n)
	}
	rows := s.Len()
	lo, hi := make([]int64, rows), make([]int64, rows)
	envBlocks(env, rows, func(_, a, b int) {
		for i := a; i < b; i++ {
			str := s.At(i)
			base := s.Off[i]
			// cut is the byte length of the first (last) n runes, or -1.
			cut := -1
			if isASCII(str) {
				if len(str) > n || (!proper && len(str) == n) {
					cut = n
				}
			} else {
				chars := utf8.RuneCount(str)
				if chars > n || (!proper && chars == n) {
					cut = 0
					for k := 0; k < n; k++ {
						var w int
						if suffix {
							_, w = utf8.DecodeLastRune(str[:len(str)-cut])
						} else {
							_, w = utf8.DecodeRune(str[cut:])
						}
						cut += w
					}
				}
			}
			origins[i] = cut >= 0
			switch {
			case cut < 0:
				lo[i], hi[i] = base, base
			case suffix:
				lo[i], hi[i] = s.Off[i+1]-int64(cut), s.Off[i+1]
			default:
				lo[i], hi[i] = base, base+int64(cut)
			}
		}
	})
	// Keep the rows that had one, in order.
	k := 0
	for i := range rows {
		if origins[i] {
			lo[k], hi[k] = lo[i], hi[i]
			k++
		}
	}
	return pieces(env, s, lo[:k], hi[:k])
}

package strs

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/arktos-dev/arktos/ops"
)

// CmpOp is a comparison: Arkouda's ==, !=, <, <=, >, >= on strings, which
// order as Python's str does (by code point, which UTF-8's byte order is).
type CmpOp string

// cmpTest maps bytes.Compare's -1/0/1 to the comparison's outcome.
func cmpTest(op CmpOp) (func(c int) bool, error) {
	switch op {
	case "==":
		return func(c int) bool { return c == 0 }, nil
	case "!=":
		return func(c int) bool { return c != 0 }, nil
	case "<":
		return func(c int) bool { return c < 0 }, nil
	case "<=":
		return func(c int) bool { return c <= 0 }, nil
	case ">":
		return func(c int) bool { return c > 0 }, nil
	case ">=":
		return func(c int) bool { return c >= 0 }, nil
	}
	return nil, errorf(ops.ErrValue, "string comparison '%s' is not one of ==, !=, <, <=, >, >=", op)
}

// CompareScalar writes s[i] op x into out.
func CompareScalar(env ops.Env, s Strs, op CmpOp, x []byte, out []bool) error {
	test, err := cmpTest(op)
	if err != nil {
		return err
	}
	eq := op == "==" || op == "!="
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if eq {
				// Lengths first: most unequal strings differ in length.
				out[i] = (s.Off[i+1]-s.Off[i] == int64(len(x)) && bytes.Equal(s.At(i), x)) == (op == "==")
				continue
			}
			out[i] = test(bytes.Compare(s.At(i), x))
		}
	})
	return nil
}

// Compare writes a[i] op b[i] into out (a and b of one length).
func Compare(env ops.Env, a, b Strs, op CmpOp, out []bool) error {
	test, err := cmpTest(op)
	if err != nil {
		return err
	}
	if a.Len() != b.Len() {
		return errorf(ops.ErrValue, "cannot compare %d strings with %d: lengths differ", a.Len(), b.Len())
	}
	envBlocks(env, a.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = test(bytes.Compare(a.At(i), b.At(i)))
		}
	})
	return nil
}

// Kind is what a search tests: Python's `in` (contains), startswith,
// endswith, re.search, re.match, re.fullmatch.
type Kind string

const (
	Contains   Kind = "contains"
	StartsWith Kind = "startswith"
	EndsWith   Kind = "endswith"
	Match      Kind = "match"
	FullMatch  Kind = "fullmatch"
)

// Compile compiles a regular expression with Go's RE2 syntax (Python's re
// without backreferences and lookaround), anchored for kind: startswith
// and match at the start, endswith at the end, fullmatch at both.
func Compile(pattern string, kind Kind) (*regexp.Regexp, error) {
	p := "(?:" + pythonClasses(pattern) + ")"
	switch kind {
	case StartsWith, Match:
		p = `\A` + p
	case EndsWith:
		p += `\z`
	case FullMatch:
		p = `\A` + p + `\z`
	case Contains, "search":
	default:
		return nil, errorf(ops.ErrValue, "string search '%s' is not one of contains, startswith, endswith, match, fullmatch", kind)
	}
	if _, err := syntax.Parse(pattern, syntax.Perl); err != nil {
		return nil, errorf(ops.ErrValue, "bad regular expression %q: %v (Arktos uses RE2 syntax: Python's re without backreferences or lookaround)", pattern, err)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, errorf(ops.ErrValue, "bad regular expression %q: %v", pattern, err)
	}
	return re, nil
}

// Python's \d, \w and \s match Unicode characters (str.isdecimal,
// isalnum or _, isspace); RE2's match ASCII only. pythonClasses rewrites
// them (and \D, \W, \S outside brackets) as the Unicode classes Python
// means. Word boundaries (\b) stay RE2's, ASCII.
const (
	pyDigitClass = `\p{Nd}`
	pyWordClass  = `\p{L}\p{N}_`
	pySpaceClass = `\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
)

func pythonClasses(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			e := p[i]
			in, out := map[byte]string{'d': pyDigitClass, 'w': pyWordClass, 's': pySpaceClass}[e], ""
			switch e {
			case 'D':
				out = `\P{Nd}`
			case 'W':
				out = "[^" + pyWordClass + "]"
			case 'S':
				out = "[^" + pySpaceClass + "]"
			}
			switch {
			case in != "" && inClass:
				b.WriteString(in)
			case in != "":
				b.WriteString("[" + in + "]")
			case out != "" && !inClass:
				b.WriteString(out)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal member.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && i+1 < len(p) && p[i+1] == ':':
			// A POSIX class ([:alpha:]) inside brackets: copied whole.
			end := strings.Index(p[i:], ":]")
			if end < 0 {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteString(p[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Search writes whether each string has pattern (a literal, or a regular
// expression with regex) the way kind says.
func Search(env ops.Env, s Strs, kind Kind, pattern string, regex bool, out []bool) error {
	if regex || kind == Match || kind == FullMatch {
		re, err := Compile(pattern, kind)
		if err != nil {
			return err
		}
		// A regex with a literal prefix and nothing else is a literal search.
		if lit, complete := re.LiteralPrefix(); complete && kind == Contains {
			return Search(env, s, Contains, lit, false, out)
		}
		test := re.Match
		if pre, exact := prefilter(pattern); pre != nil {
			FilterStats.Used.Add(1)
			test = func(b []byte) bool { return pre(b) && re.Match(b) }
			if exact && kind == Contains {
				FilterStats.Exact.Add(1) // literals only: no automaton at all
				test = pre
			}
		}
		envBlocks(env, s.Len(), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				out[i] = test(s.At(i))
			}
		})
		return nil
	}
	p := []byte(pattern)
	var test func([]byte) bool
	switch kind {
	case Contains:
		test = func(b []byte) bool { return bytes.Contains(b, p) }
	case StartsWith:
		test = func(b []byte) bool { return bytes.HasPrefix(b, p) }
	case EndsWith:
		test = func(b []byte) bool { return bytes.HasSuffix(b, p) }
	default:
		return errorf(ops.ErrValue, "string search '%s' is not one of contains, startswith, endswith, match, fullmatch", kind)
	}
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = test(s.At(i))
		}
	})
	return nil
}

// Split splits every string at each delimiter (a literal, or a regular
// expression with regex), as Python's str.split(sep) and re.split do
// (empty pieces kept; an empty match does not split), at the first
// maxsplit delimiters only where maxsplit > 0. It returns the
// pieces, all strings' in order, and segs (s.Len()+1 entries): string i's
// pieces are pieces[segs[i]:segs[i+1]].
func Split(env ops.Env, s Strs, delim string, regex bool, maxsplit int, segs []int64) (Arrays, error) {
	if maxsplit < 0 {
		return Arrays{}, errorf(ops.ErrValue, "maxsplit must be >= 0 (0: split at every delimiter), got %d", maxsplit)
	}
	limit := -1
	if maxsplit > 0 {
		limit = maxsplit
	}
	if delim == "" && !regex {
		return Arrays{}, errorf(ops.ErrValue, "split needs a non-empty delimiter")
	}
	var re *regexp.Regexp
	if regex {
		var err error
		if re, err = Compile(delim, Contains); err != nil {
			return Arrays{}, err
		}
	}
	d := []byte(delim)
	may := func([]byte) bool { return true }
	if re != nil {
		may = mayMatch(delim)
	}
	// cuts appends to dst the [start, end) of each delimiter in b.
	cuts := func(b []byte, dst [][2]int) [][2]int {
		if re != nil && !may(b) {
			return dst
		}
		if re != nil {
			for _, m := range re.FindAllIndex(b, -1) {
				if len(dst) == limit {
					break
				}
				if m[1] > m[0] {
					dst = append(dst, [2]int{m[0], m[1]})
				}
			}
			return dst
		}
		for at := 0; len(dst) != limit; {
			k := bytes.Index(b[at:], d)
			if k < 0 {
				return dst
			}
			dst = append(dst, [2]int{at + k, at + k + len(d)})
			at += k + len(d)
		}
		return dst
	}
	n := s.Len()
	// Pass 1: pieces per string, into segs[i+1], then their prefix sum.
	envBlocks(env, n, func(_, lo, hi int) {
		var buf [][2]int
		for i := lo; i < hi; i++ {
			buf = cuts(s.At(i), buf[:0])
			segs[i+1] = int64(len(buf) + 1)
		}
	})
	segs[0] = 0
	for i := range n {
		segs[i+1] += segs[i]
	}
	// Pass 2: each piece's bounds in s.Data, written once, then built.
	total := int(segs[n])
	bounds := make([][2]int64, total)
	envBlocks(env, n, func(_, lo, hi int) {
		var buf [][2]int
		for i := lo; i < hi; i++ {
			base := s.Off[i]
			buf = cuts(s.At(i), buf[:0])
			k, prev := segs[i], 0
			for _, c := range buf {
				bounds[k] = [2]int64{base + int64(prev), base + int64(c[0])}
				k, prev = k+1, c[1]
			}
			bounds[k] = [2]int64{base + int64(prev), s.Off[i+1]}
		}
	})
	return withASCII(s.ASCII)(build(env, total,
		func(i int) int64 { return bounds[i][1] - bounds[i][0] },
		func(i int, dst []byte) { copy(dst, s.Data[bounds[i][0]:bounds[i][1]]) }))
}

package strs

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/ops"
)

// charPos turns byte position k of b into a code-point position, as
// Python's re reports spans.
func charPos(b []byte, ascii bool, k int) int64 {
	if ascii {
		return int64(k)
	}
	return int64(utf8.RuneCount(b[:k]))
}

// Matches is MatchSpans' result: which strings matched, and for those (in
// order, origins their rows) the group's span in code points and its
// bytes' bounds in s.Data.
type Matches struct {
	Matched []bool
	Origins []int64
	Starts  []int64
	Ends    []int64
	Lo, Hi  []int64 // the group's text, as offsets into s.Data
	Groups  int     // capture groups in the pattern
}

// MatchSpans runs re.search / re.match / re.fullmatch (kind Contains, Match or
// FullMatch) on every string and reports group's span in each match
// (group 0: the whole match). A group that took no part in a match has
// span (-1, -1) and empty text, as Python's m.span(g) and m.group(g) or "".
func MatchSpans(env ops.Env, s Strs, pattern string, kind Kind, group int, matched []bool) (Matches, error) {
	re, err := Compile(pattern, kind)
	if err != nil {
		return Matches{}, err
	}
	if group < 0 || group > re.NumSubexp() {
		return Matches{}, errorf(ops.ErrValue, "group %d is not in the pattern %q, which has %d groups", group, pattern, re.NumSubexp())
	}
	n := s.Len()
	loc := make([][2]int, n) // the group's byte span, per matched row
	may := mayMatch(pattern)
	envBlocks(env, n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			var m []int
			if b := s.At(i); may(b) {
				m = re.FindSubmatchIndex(b)
			}
			matched[i] = m != nil
			if m != nil {
				loc[i] = [2]int{m[2*group], m[2*group+1]}
			}
		}
	})
	out := Matches{Matched: matched, Groups: re.NumSubexp()}
	for i := range n {
		if !matched[i] {
			continue
		}
		b, a := s.At(i), loc[i]
		out.Origins = append(out.Origins, int64(i))
		if a[0] < 0 {
			out.Starts, out.Ends = append(out.Starts, -1), append(out.Ends, -1)
			out.Lo, out.Hi = append(out.Lo, s.Off[i]), append(out.Hi, s.Off[i])
			continue
		}
		ascii := isASCII(b)
		out.Starts = append(out.Starts, charPos(b, ascii, a[0]))
		out.Ends = append(out.Ends, charPos(b, ascii, a[1]))
		out.Lo, out.Hi = append(out.Lo, s.Off[i]+int64(a[0])), append(out.Hi, s.Off[i]+int64(a[1]))
	}
	return out, nil
}

// Found is FindAll's result: counts[i] matches in string i, and for each
// match in order its span in code points, its row and its bytes' bounds.
type Found struct {
	Starts, Lengths, Origins []int64
	Lo, Hi                   []int64
}

// FindAll finds every non-overlapping match of pattern in each string
// (Arkouda's find_locations and findall; Python's re.finditer, except
// that, as in Go, an empty match right after a match is not reported).
// counts gets the number per string.
func FindAll(env ops.Env, s Strs, pattern string, counts []int64) (Found, error) {
	re, err := Compile(pattern, Contains)
	if err != nil {
		return Found{}, err
	}
	n := s.Len()
	nb := nblocks(env.Workers, n)
	parts := make([]Found, nb)
	may := mayMatch(pattern)
	envBlocks(env, n, func(w, lo, hi int) {
		var f Found
		for i := lo; i < hi; i++ {
			b := s.At(i)
			if !may(b) {
				counts[i] = 0
				continue
			}
			ms := re.FindAllIndex(b, -1)
			counts[i] = int64(len(ms))
			ascii := isASCII(b)
			for _, m := range ms {
				st := charPos(b, ascii, m[0])
				f.Starts = append(f.Starts, st)
				f.Lengths = append(f.Lengths, charPos(b, ascii, m[1])-st)
				f.Origins = append(f.Origins, int64(i))
				f.Lo, f.Hi = append(f.Lo, s.Off[i]+int64(m[0])), append(f.Hi, s.Off[i]+int64(m[1]))
			}
		}
		parts[w] = f
	})
	var all Found
	for _, f := range parts {
		all.Starts = append(all.Starts, f.Starts...)
		all.Lengths = append(all.Lengths, f.Lengths...)
		all.Origins = append(all.Origins, f.Origins...)
		all.Lo = append(all.Lo, f.Lo...)
		all.Hi = append(all.Hi, f.Hi...)
	}
	return all, nil
}

// Texts builds the strings s.Data[lo[i]:hi[i]] (a Match's or FindAll's
// matched text).
func Texts(env ops.Env, s Strs, lo, hi []int64) (Arrays, error) { return pieces(env, s, lo, hi) }

// Template turns a replacement in Python's re.sub syntax (\1, \g<1>,
// \g<name>, \n, \\ ...) into Go's regexp.Expand syntax ($1, ${name},
// a literal $ as $$). Like Python it refuses an unknown escape of an ASCII
// letter and a group the pattern does not have.
func Template(repl string, re *regexp.Regexp) (string, error) {
	var b strings.Builder
	group := func(name string) error {
		if name == "" {
			return errorf(ops.ErrValue, "replacement %q has an empty group reference \\g<>", repl)
		}
		if k, ok := atoi(name); ok {
			if k > re.NumSubexp() {
				return errorf(ops.ErrValue, "replacement %q refers to group %d; the pattern has %d", repl, k, re.NumSubexp())
			}
		} else if re.SubexpIndex(name) < 0 {
			return errorf(ops.ErrValue, "replacement %q refers to group %q, which the pattern does not name", repl, name)
		}
		b.WriteString("${" + name + "}")
		return nil
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c != '\\':
			b.WriteByte(c)
		case i+1 == len(repl):
			return "", errorf(ops.ErrValue, "replacement %q ends in a lone backslash (write \\\\ for one)", repl)
		default:
			i++
			e := repl[i]
			switch {
			case e == '0' || (isOct(e) && i+2 < len(repl) && isOct(repl[i+1]) && isOct(repl[i+2])):
				// An octal escape, as Python reads one: \0, \0NN or \NNN.
				j, v := i, 0
				for j < len(repl) && j < i+3 && isOct(repl[j]) {
					v, j = 8*v+int(repl[j]-'0'), j+1
				}
				if v > 0o377 {
					return "", errorf(ops.ErrValue, "replacement %q has the octal escape \\%s, above \\377", repl, repl[i:j])
				}
				b.WriteRune(rune(v))
				i = j - 1
			case '1' <= e && e <= '9':
				j := i + 1
				if j < len(repl) && '0' <= repl[j] && repl[j] <= '9' {
					j++
				}
				if err := group(repl[i:j]); err != nil {
					return "", err
				}
				i = j - 1
			case e == 'g':
				end := strings.IndexByte(repl[i:], '>')
				if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
					return "", errorf(ops.ErrValue, "replacement %q has \\g without a <group>", repl)
				}
				if err := group(repl[i+2 : i+end]); err != nil {
					return "", err
				}
				i += end
			default:
				if r, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'f': '\f', 'v': '\v', 'a': '\a', 'b': '\b', '\\': '\\'}[e]; ok {
					b.WriteByte(r)
				} else if 'a' <= e|0x20 && e|0x20 <= 'z' {
					return "", errorf(ops.ErrValue, "replacement %q has the unknown escape \\%c", repl, e)
				} else {
					b.WriteByte('\\')
					b.WriteByte(e)
				}
			}
		}
	}
	return b.String(), nil
}

func isOct(c byte) bool { return '0' <= c && c <= '7' }

func atoi(s string) (int, bool) {
	k := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		k = 10*k + int(c-'0')
	}
	return k, s != ""
}

// Sub replaces the first count non-overlapping matches of pattern in each
// string (all of them with count 0) by repl, in Python's re.sub syntax,
// and writes how many it replaced (Arkouda's sub and subn).
func Sub(env ops.Env, s Strs, pattern, repl string, count int, subs []int64) (Arrays, error) {
	if count < 0 {
		return Arrays{}, errorf(ops.ErrValue, "count must be >= 0 (0: replace all), got %d", count)
	}
	re, err := Compile(pattern, Contains)
	if err != nil {
		return Arrays{}, err
	}
	tmpl, err := Template(repl, re)
	if err != nil {
		return Arrays{}, err
	}
	limit := -1
	if count > 0 {
		limit = count
	}
	// The replaced string, appended to dst; subs[i] set on the way.
	may := mayMatch(pattern)
	replace := func(i int, dst []byte) []byte {
		b := s.At(i)
		if !may(b) {
			subs[i] = 0
			return append(dst, b...)
		}
		ms := re.FindAllSubmatchIndex(b, limit)
		subs[i] = int64(len(ms))
		prev := 0
		for _, m := range ms {
			dst = append(dst, b[prev:m[0]]...)
			dst = re.Expand(dst, []byte(tmpl), b, m)
			prev = m[1]
		}
		return append(dst, b[prev:]...)
	}
	// Pass one measures with a scratch buffer per string; pass two writes.
	return withASCII(s.ASCII && isASCII([]byte(tmpl)))(build(env, s.Len(),
		func(i int) int64 { return int64(len(replace(i, nil))) },
		// Capped at its own length: the append cannot reach the next string.
		func(i int, dst []byte) { replace(i, dst[:0:len(dst)]) }))
}

package strs

import (
	"encoding/binary"
	"testing"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// FuzzStrings: offsets and bytes as a client sends them (any values).
// Check must refuse what is not a string array without panicking, and
// every kernel must run on what it accepts.
func FuzzStrings(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, []byte("ab"), "a")
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, []byte("a\xc3\xa9"), "é")
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, []byte("x"), "(")
	f.Fuzz(func(t *testing.T, offBytes, data []byte, pattern string) {
		off := make([]int64, len(offBytes)/8)
		for i := range off {
			off[i] = int64(binary.LittleEndian.Uint64(offBytes[8*i:]))
		}
		s := Strs{Off: off, Data: data}
		env := ops.PlainEnv(2)
		if Check(env, s) != nil {
			return
		}
		n := s.Len()
		out, _ := pdarray.Alloc(pdarray.Int64, n)
		if err := Argsort(env, s, out); err != nil {
			t.Fatal(err)
		}
		codes := make([]int64, n)
		if _, err := Factorize(env, s, codes); err != nil {
			t.Fatal(err)
		}
		mask := make([]bool, n)
		_ = Search(env, s, Contains, pattern, true, mask)
		_ = Search(env, s, EndsWith, pattern, false, mask)
		_, _ = Split(env, s, pattern, false, 0, make([]int64, n+1))
		_, _ = Take(env, s, []int64{-1, 0, int64(n)})
		_, _ = ChangeCase(env, s, "upper")
		_, _ = Encode(env, s, "idna", true)
		f, _ := pdarray.Alloc(pdarray.Float64, n)
		_ = Parse(env, s, f)
		// The text kernels and regular expressions take any pattern; where
		// a prefilter says no, the pattern must not match.
		s.ASCII, _ = check(env, s)
		_, _ = ChangeCase(env, s, "lower")
		_, _ = ChangeCase(env, s, "title")
		_ = Is(env, s, IsTitle, mask)
		_, _ = Strip(env, s, pattern, Both)
		_, _, _ = Peel(env, s, PeelSpec{Delim: pattern, Times: 2, FromRight: true, Regex: len(pattern)%2 == 0})
		_, _ = Affixes(env, s, len(pattern), true, false, mask)
		counts := make([]int64, n)
		_, _ = FindAll(env, s, pattern, counts)
		_, _ = Sub(env, s, pattern, `<\g<0>>`, 1, counts)
		_, _ = MatchSpans(env, s, pattern, Match, 0, mask)
		if pre, _ := prefilter(pattern); pre != nil {
			if re, err := Compile(pattern, Contains); err == nil {
				for i := range n {
					if re.Match(s.At(i)) && !pre(s.At(i)) {
						t.Fatalf("prefilter of %q rules out %q, which matches", pattern, s.At(i))
					}
				}
			}
		}
	})
}

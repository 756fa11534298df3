package strs

import (
	"bytes"
	"regexp/syntax"
	"sync/atomic"
	"unicode/utf8"
)

// Go's regexp walks every byte of every string through its automaton,
// 5-10 times slower than a literal search; most patterns people write
// hold a literal that every match must contain ("org/api|net/api", "id=\d+").
// A prefilter tests for it first (bytes.Contains, itself SIMD), so the
// automaton runs only on strings that may match; a pattern that is only
// literals, for a search anywhere, needs no automaton at all.

// FilterStats counts kernel calls that used a prefilter, and those it
// answered alone (exact), for the tests: the fast path must stay taken.
var FilterStats struct{ Used, Exact atomic.Uint64 }

// maxAlternatives bounds the literals one prefilter tries per string.
const maxAlternatives = 8

// prefilter returns a test that is false only for strings no match of
// pattern can be in (nil when none is known), and whether it is exact for
// a search anywhere (the pattern is an alternation of literals).
func prefilter(pattern string) (func([]byte) bool, bool) {
	re, err := syntax.Parse(pythonClasses(pattern), syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	lits, exact := required(re)
	if len(lits) == 0 {
		return nil, false
	}
	for _, l := range lits {
		if len(l) == 0 {
			return nil, false // an empty literal rules nothing out
		}
	}
	if len(lits) == 1 {
		l := lits[0]
		return func(b []byte) bool { return bytes.Contains(b, l) }, exact
	}
	return func(b []byte) bool {
		for _, l := range lits {
			if bytes.Contains(b, l) {
				return true
			}
		}
		return false
	}, exact
}

// required gives literals one of which every match of re contains, and
// whether re matches exactly those literals (nothing else around them).
func required(re *syntax.Regexp) ([][]byte, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		b := make([]byte, 0, len(re.Rune))
		for _, r := range re.Rune {
			b = utf8.AppendRune(b, r)
		}
		return [][]byte{b}, true
	case syntax.OpCharClass: // a few characters, each a literal ([ab], or 日|ǅ as the parser makes it)
		var lits [][]byte
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				if len(lits) == maxAlternatives {
					return nil, false
				}
				lits = append(lits, utf8.AppendRune(nil, r))
			}
		}
		return lits, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		l, _ := required(re.Sub[0])
		return l, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			l, _ := required(re.Sub[0])
			return l, false
		}
	case syntax.OpConcat:
		// The child whose literals are the rarest: the longest shortest one.
		var best [][]byte
		score := 0
		for _, sub := range re.Sub {
			l, _ := required(sub)
			if s := shortest(l); s > score {
				best, score = l, s
			}
		}
		return best, false
	case syntax.OpAlternate:
		var all [][]byte
		exact := true
		for _, sub := range re.Sub {
			l, e := required(sub)
			if len(l) == 0 || len(all)+len(l) > maxAlternatives {
				return nil, false
			}
			all, exact = append(all, l...), exact && e
		}
		return all, exact
	}
	return nil, false
}

func shortest(lits [][]byte) int {
	if len(lits) == 0 {
		return 0
	}
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}

// mayMatch is pattern's prefilter, or a test that is always true.
func mayMatch(pattern string) func([]byte) bool {
	pre, _ := prefilter(pattern)
	if pre == nil {
		return func([]byte) bool { return true }
	}
	FilterStats.Used.Add(1)
	return pre
}

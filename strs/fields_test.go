package strs

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/pdarray"
)

// words is sample text with delimiters, cases and spaces for the field,
// case and regex kernels.
func words(n int, seed uint64) []string {
	ss := sample(n, seed)
	extra := []string{"", ".", "a.b", "c.d.e", "..", " x ", "\t y\n", "Hello World", "hELLO wORLD", "ÉCOLE été",
		"ǅemal", "x1.y2.z3", "２３", "²", "①", "٣", "abc", "ABC", "Abc Def", "aBC"}
	for i := range ss {
		if i%3 == 0 {
			ss[i] = extra[i/3%len(extra)]
		} else if i%3 == 1 {
			ss[i] = strings.ReplaceAll(ss[i], "_", ".")
		}
	}
	return ss
}

func TestPeelMatchesPartition(t *testing.T) {
	for _, env := range envs {
		ss := words(30000, 3)
		s := fromGo(ss)
		for _, spec := range []PeelSpec{
			{Delim: ".", Times: 1}, {Delim: ".", Times: 2}, {Delim: ".", Times: 2, Partial: true},
			{Delim: ".", Times: 1, Include: true}, {Delim: ".", Times: 1, FromRight: true},
			{Delim: ".", Times: 2, FromRight: true, Include: true}, {Delim: ".", Times: 2, FromRight: true, Partial: true},
			{Delim: `\.+`, Regex: true, Times: 1}, {Delim: `\.+`, Regex: true, Times: 2, FromRight: true},
		} {
			left, right, err := Peel(env, s, spec)
			if err != nil {
				t.Fatal(err)
			}
			gl, gr := toGo(left.Strs()), toGo(right.Strs())
			for i, w := range ss {
				wl, wr := refPeel(w, spec)
				if gl[i] != wl || gr[i] != wr {
					t.Fatalf("%+v %q: got (%q, %q), want (%q, %q)", spec, w, gl[i], gr[i], wl, wr)
				}
			}
		}
	}
}

// refPeel is peel one string at a time, from Arkouda's documented examples.
func refPeel(w string, spec PeelSpec) (string, string) {
	var ms [][]int
	if spec.Regex {
		ms = regexp.MustCompile(spec.Delim).FindAllStringIndex(w, -1)
	} else {
		for at := 0; ; {
			k := strings.Index(w[at:], spec.Delim)
			if k < 0 {
				break
			}
			ms = append(ms, []int{at + k, at + k + len(spec.Delim)})
			at += k + len(spec.Delim)
		}
		if spec.FromRight { // LastIndex from the right: the same cuts for "." but not for overlapping delimiters
			ms = nil
			for end := len(w); ; {
				k := strings.LastIndex(w[:end], spec.Delim)
				if k < 0 {
					break
				}
				ms = append([][]int{{k, k + len(spec.Delim)}}, ms...)
				end = k
			}
		}
	}
	if len(ms) < spec.Times {
		if spec.FromRight != spec.Partial {
			return w, ""
		}
		return "", w
	}
	m := ms[spec.Times-1]
	if spec.FromRight {
		m = ms[len(ms)-spec.Times]
	}
	switch {
	case spec.Include && !spec.FromRight:
		return w[:m[1]], w[m[1]:]
	case spec.Include:
		return w[:m[0]], w[m[0]:]
	}
	return w[:m[0]], w[m[1]:]
}

func TestAffixes(t *testing.T) {
	env := envs[1]
	ss := words(20000, 4)
	s := fromGo(ss)
	for _, suffix := range []bool{false, true} {
		for _, proper := range []bool{false, true} {
			origins := make([]bool, len(ss))
			out, err := Affixes(env, s, 2, suffix, proper, origins)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i, w := range ss {
				r := []rune(w)
				ok := len(r) > 2 || (!proper && len(r) == 2)
				if origins[i] != ok {
					t.Fatalf("origins[%d] for %q: %v", i, w, origins[i])
				}
				if ok && suffix {
					want = append(want, string(r[len(r)-2:]))
				} else if ok {
					want = append(want, string(r[:2]))
				}
			}
			if got := toGo(out.Strs()); !slices.Equal(got, want) {
				t.Fatalf("suffix=%v proper=%v: %d strings, want %d", suffix, proper, len(got), len(want))
			}
		}
	}
}

func TestStripAndClasses(t *testing.T) {
	env := envs[1]
	ss := words(20000, 5)
	s := fromGo(ss)
	out, err := Strip(env, s, "", Both)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range toGo(out.Strs()) {
		if want := strings.TrimFunc(ss[i], pySpace); got != want {
			t.Fatalf("strip %q: %q, want %q", ss[i], got, want)
		}
	}
	out, _ = Strip(env, s, "a.é", Left)
	for i, got := range toGo(out.Strs()) {
		if want := strings.TrimLeft(ss[i], "a.é"); got != want {
			t.Fatalf("lstrip %q: %q, want %q", ss[i], got, want)
		}
	}
	got := make([]bool, len(ss))
	if err := Is(env, s, IsAlpha, got); err != nil {
		t.Fatal(err)
	}
	for i, w := range ss {
		want := w != "" && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
		if got[i] != want {
			t.Fatalf("isalpha %q: %v", w, got[i])
		}
	}
	if err := Is(env, s, "bogus", got); err == nil || !strings.Contains(err.Error(), "alnum, alpha") {
		t.Fatalf("bad class: %v", err)
	}
	// Title case: the ASCII and rune paths agree on ASCII input.
	for _, w := range []string{"hello wORLD x1y", "a_b c-d", "", "ǅemal ÉCOLE"} {
		o, _ := ChangeCase(env, fromGo([]string{w}), "title")
		want := map[string]string{"hello wORLD x1y": "Hello World X1Y", "a_b c-d": "A_B C-D", "": "", "ǅemal ÉCOLE": "ǅemal École"}[w]
		if g := toGo(o.Strs())[0]; g != want {
			t.Errorf("title %q: %q, want %q", w, g, want)
		}
	}
}

func TestRegexKernels(t *testing.T) {
	env := envs[1]
	ss := words(20000, 6)
	s := fromGo(ss)
	re := regexp.MustCompile(pythonClasses(`([a-zé])\.(\w)`)) // Python's Unicode \w
	counts := make([]int64, len(ss))
	found, err := FindAll(env, s, re.String(), counts)
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for i, w := range ss {
		ms := re.FindAllStringIndex(w, -1)
		if int(counts[i]) != len(ms) {
			t.Fatalf("count %q: %d, want %d", w, counts[i], len(ms))
		}
		for _, m := range ms {
			if found.Starts[k] != int64(utf8.RuneCountInString(w[:m[0]])) || found.Origins[k] != int64(i) {
				t.Fatalf("match %d of %q: start %d", k, w, found.Starts[k])
			}
			k++
		}
	}
	subs := make([]int64, len(ss))
	out, err := Sub(env, s, re.String(), `\2-\g<1>$`, 1, subs)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range toGo(out.Strs()) {
		want, n := ss[i], int64(0)
		if m := re.FindStringSubmatchIndex(ss[i]); m != nil {
			want, n = ss[i][:m[0]]+ss[i][m[4]:m[5]]+"-"+ss[i][m[2]:m[3]]+"$"+ss[i][m[1]:], 1
		}
		if got != want || subs[i] != n {
			t.Fatalf("sub %q: %q (%d), want %q", ss[i], got, subs[i], want)
		}
	}
	for _, bad := range []string{`\3`, `\g<x>`, `\q`, `x\`} {
		if _, err := Sub(env, s, re.String(), bad, 0, subs); err == nil {
			t.Errorf("replacement %q: no error", bad)
		}
	}
	matched := make([]bool, len(ss))
	m, err := MatchSpans(env, s, `(\w)(x)?`, Match, 2, matched)
	if err != nil {
		t.Fatal(err)
	}
	for j, i := range m.Origins {
		if m.Starts[j] == -1 && m.Hi[j] != m.Lo[j] {
			t.Fatalf("row %d: a group that took no part has text", i)
		}
	}
}

func TestPythonClasses(t *testing.T) {
	for in, want := range map[string]string{
		`\d+`:       `[\p{Nd}]+`,
		`[\d.]`:     `[\p{Nd}.]`,
		`\\d`:       `\\d`,
		`[]\w]`:     `[]\p{L}\p{N}_]`,
		`[^]a]\D`:   `[^]a]\P{Nd}`,
		`[[:x:]\s]`: `[[:x:]` + pySpaceClass + `]`,
		`\W\.`:      `[^\p{L}\p{N}_]\.`,
	} {
		if got := pythonClasses(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	// Python's \w and \d take Unicode letters and digits; \s takes \v and 0x1c.
	re, err := Compile(`\A\w+\d\s\s\z`, Contains)
	if err != nil || !re.MatchString("été日٣\v\x1c") {
		t.Errorf("Unicode classes: %v", err)
	}
}

// TestASCIIFastPaths: View finds an all-ASCII array so, kernels keep the
// mark where their output is the input's bytes, and lower/upper of one
// map the whole buffer (counted) to what the per-string path gives.
func TestASCIIFastPaths(t *testing.T) {
	env := envs[1]
	var ascii []string
	for i := range 20000 {
		ascii = append(ascii, strings.Repeat("aZ_09@[`{", i%5)+string(rune('A'+i%60)))
	}
	offA, _ := pdarray.Alloc(pdarray.Int64, len(ascii)+1)
	s0 := fromGo(ascii)
	copy(pdarray.View[int64](offA), s0.Off)
	dataA, _ := pdarray.Alloc(pdarray.Uint8, len(s0.Data))
	copy(dataA.Bytes(), s0.Data)
	s, err := View(env, offA, dataA)
	if err != nil || !s.ASCII {
		t.Fatalf("View: ascii %v, %v", s.ASCII, err)
	}
	if u, _ := View(env, offA, dataA); !u.ASCII {
		t.Fatal("not ASCII the second time")
	}
	mixed := fromGo(append(slices.Clone(ascii[:10]), "é"))
	if ok, _ := check(env, mixed); ok {
		t.Fatal("é counted as ASCII")
	}
	for _, c := range []Case{"lower", "upper"} {
		before := CaseStats.ASCIIBuffers.Load()
		fast, err := ChangeCase(env, s, c)
		if err != nil || CaseStats.ASCIIBuffers.Load() != before+1 || !fast.ASCII {
			t.Fatalf("%s: the whole-buffer path was not taken (%v)", c, err)
		}
		slow, _ := ChangeCase(env, Strs{Off: s.Off, Data: s.Data}, c)
		if CaseStats.ASCIIBuffers.Load() != before+1 {
			t.Fatalf("%s: an array not known ASCII took the fast path", c)
		}
		if !slices.Equal(toGo(fast.Strs()), toGo(slow.Strs())) {
			t.Fatalf("%s: the fast path differs", c)
		}
		for i, w := range toGo(fast.Strs()) {
			want := strings.ToLower(ascii[i])
			if c == "upper" {
				want = strings.ToUpper(ascii[i])
			}
			if w != want {
				t.Fatalf("%s %q: %q", c, ascii[i], w)
			}
		}
	}
	took, _ := Take(env, s, []int64{3, 1})
	stripped, _ := Strip(env, s, "", Both)
	if !took.ASCII || !stripped.ASCII {
		t.Error("ASCII lost by take or strip")
	}
	lens := make([]int64, s.Len())
	CharLengths(env, s, lens)
	for i, w := range ascii {
		if lens[i] != int64(len(w)) {
			t.Fatalf("len %q: %d", w, lens[i])
		}
	}
}

// TestPrefilter: a prefilter never rules out a string the pattern
// matches; literal alternations are answered without the automaton, and
// the other patterns here are prefiltered (counted).
func TestPrefilter(t *testing.T) {
	env := envs[1]
	ss := words(30000, 9)
	s := fromGo(ss)
	for _, c := range []struct {
		pattern      string
		exact, known bool
	}{
		{`a\.b|c\.d`, true, true}, {`日|ǅ`, true, true}, {`x1\.y\d`, false, true}, {`(ab)?c.d`, false, true},
		{`(?i)abc`, false, false}, {`a*`, false, false}, {`Hel+o W`, false, true}, {`(x|ab)+Z`, false, true},
		{`[ab]c`, false, true}, {`[^a]b`, false, true}, {`[a-z]+`, false, false}, {`é(t|c)`, false, true},
	} {
		pre, exact := prefilter(c.pattern)
		if (pre != nil) != c.known || exact != c.exact {
			t.Errorf("%s: prefilter %v exact %v", c.pattern, pre != nil, exact)
		}
		re := regexp.MustCompile(pythonClasses(c.pattern))
		for _, w := range ss {
			if pre != nil && re.MatchString(w) && !pre([]byte(w)) {
				t.Fatalf("%s rules out %q, which matches", c.pattern, w)
			}
		}
		used, ex := FilterStats.Used.Load(), FilterStats.Exact.Load()
		got := make([]bool, len(ss))
		if err := Search(env, s, Contains, c.pattern, true, got); err != nil {
			t.Fatal(err)
		}
		for i, w := range ss {
			if got[i] != re.MatchString(w) {
				t.Fatalf("%s on %q: %v", c.pattern, w, got[i])
			}
		}
		if c.exact && FilterStats.Exact.Load() == ex {
			t.Errorf("%s: not answered by its literals", c.pattern)
		}
		if c.known && !c.exact && FilterStats.Used.Load() == used {
			t.Errorf("%s: not prefiltered", c.pattern)
		}
	}
}

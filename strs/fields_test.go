package strs

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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

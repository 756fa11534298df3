package strs

import (
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// fromGo packs Go strings (the reference) into a Strs.
func fromGo(ss []string) Strs {
	off := make([]int64, len(ss)+1)
	var data []byte
	for i, s := range ss {
		data = append(data, s...)
		off[i+1] = int64(len(data))
	}
	return Strs{Off: off, Data: data}
}

func toGo(s Strs) []string {
	out := make([]string, s.Len())
	for i := range out {
		out[i] = string(s.At(i))
	}
	return out
}

// sample makes n strings over an alphabet with shared prefixes, NULs,
// empties and multi-byte runes, so ties and long runs occur.
func sample(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	alpha := []string{"a", "b", "\x00", "é", "日", "Z", "_"}
	prefixes := []string{"", "https://example.com/", "abcdefgh", "a"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		b.WriteString(prefixes[r.IntN(len(prefixes))])
		for range r.IntN(12) {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		out[i] = b.String()
	}
	return out
}

var envs = []ops.Env{ops.PlainEnv(1), ops.PlainEnv(4)}

func TestCheckRejects(t *testing.T) {
	env := ops.PlainEnv(2)
	cases := map[string]Strs{
		"must start at 0":     {Off: []int64{1, 2}, Data: []byte("ab")},
		"byte count":          {Off: []int64{0, 1}, Data: []byte("ab")},
		"must not decrease":   {Off: []int64{0, 2, 1, 2}, Data: []byte("ab")},
		"not valid UTF-8":     {Off: []int64{0, 1, 3}, Data: []byte{'a', 0xff, 'b'}},
		"n+1 entries":         {Off: []int64{}, Data: nil},
		"not valid UTF-8 (1)": {Off: []int64{0, 1, 2}, Data: []byte{0xc3, 0xa9}}, // a rune split by a boundary
	}
	for want, s := range cases {
		err := Check(env, s)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(want, " (1)")) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if err := Check(env, fromGo(sample(50000, 1))); err != nil {
		t.Fatal(err)
	}
}

func TestArgsortMatchesGo(t *testing.T) {
	for _, env := range envs {
		for _, n := range []int{0, 1, 40, 50000} {
			ss := sample(n, uint64(n))
			out, _ := pdarray.Alloc(pdarray.Int64, n)
			if err := Argsort(env, fromGo(ss), out); err != nil {
				t.Fatal(err)
			}
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			slices.SortStableFunc(want, func(a, b int64) int { return strings.Compare(ss[a], ss[b]) })
			if got := pdarray.View[int64](out); !slices.Equal(got, want) {
				t.Fatalf("n=%d workers=%d: argsort differs from a stable sort", n, env.Workers)
			}
		}
	}
}

func TestFactorizeAndIn1d(t *testing.T) {
	for _, env := range envs {
		ss := sample(60000, 7)
		codes := make([]int64, len(ss))
		first, err := Factorize(env, fromGo(ss), codes)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int64{}
		var wantFirst []int64
		for i, s := range ss {
			c, ok := seen[s]
			if !ok {
				c = int64(len(wantFirst))
				seen[s] = c
				wantFirst = append(wantFirst, int64(i))
			}
			if codes[i] != c {
				t.Fatalf("row %d: code %d, want %d", i, codes[i], c)
			}
		}
		if !slices.Equal(first, wantFirst) {
			t.Fatal("first rows differ")
		}
		b := ss[:100]
		out := make([]bool, len(ss))
		if err := In1d(env, fromGo(ss), fromGo(b), false, out); err != nil {
			t.Fatal(err)
		}
		for i, s := range ss {
			if out[i] != slices.Contains(b, s) {
				t.Fatalf("in1d row %d", i)
			}
		}
	}
}

func TestSearchSplitCase(t *testing.T) {
	env := ops.PlainEnv(3)
	ss := sample(30000, 3)
	s := fromGo(ss)
	out := make([]bool, len(ss))
	check := func(what string, f func(string) bool) {
		for i, x := range ss {
			if out[i] != f(x) {
				t.Fatalf("%s: row %d (%q)", what, i, x)
			}
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(Search(env, s, Contains, "a_", false, out))
	check("contains", func(x string) bool { return strings.Contains(x, "a_") })
	must(Search(env, s, StartsWith, "https", false, out))
	check("startswith", func(x string) bool { return strings.HasPrefix(x, "https") })
	must(Search(env, s, EndsWith, "é", false, out))
	check("endswith", func(x string) bool { return strings.HasSuffix(x, "é") })
	re := regexp.MustCompile(`[bé]{2}`)
	must(Search(env, s, Contains, `[bé]{2}`, true, out))
	check("regex", re.MatchString)
	must(Search(env, s, FullMatch, `a.*`, true, out))
	check("fullmatch", regexp.MustCompile(`^(?:a.*)$`).MatchString)
	if err := Search(env, s, Contains, `(a`, true, out); err == nil || !strings.Contains(err.Error(), "bad regular expression") {
		t.Fatalf("bad regex: %v", err)
	}

	segs := make([]int64, len(ss)+1)
	pieces, err := Split(env, s, "_", false, 0, segs)
	must(err)
	got := toGo(pieces.Strs())
	for i, x := range ss {
		if want := strings.Split(x, "_"); !slices.Equal(got[segs[i]:segs[i+1]], want) {
			t.Fatalf("split row %d: %q, want %q", i, got[segs[i]:segs[i+1]], want)
		}
	}
	// (sample's text is not all ASCII: the string-by-string path, against
	// strings.ToUpper/ToLower, which map rune by rune the same way)
	mixed := append(slices.Clone(ss), "ΣΑΣ ǅ İ ß ꭰ", "ᲀ", "\u0345x")
	for _, c := range []Case{"upper", "lower"} {
		out, err := ChangeCase(env, fromGo(mixed), c)
		must(err)
		for i, x := range toGo(out.Strs()) {
			want := strings.ToUpper(mixed[i])
			if c == "lower" {
				want = strings.ToLower(mixed[i])
			}
			if x != want {
				t.Fatalf("%s %q: %q, want %q", c, mixed[i], x, want)
			}
		}
	}
}

func TestTakeCompressConcat(t *testing.T) {
	env := ops.PlainEnv(4)
	ss := sample(40000, 9)
	s := fromGo(ss)
	idx := []int64{3, -1, 0, 3}
	got, err := Take(env, s, idx)
	if err != nil {
		t.Fatal(err)
	}
	if g := toGo(got.Strs()); !slices.Equal(g, []string{ss[3], ss[len(ss)-1], ss[0], ss[3]}) {
		t.Fatalf("take: %q", g)
	}
	if _, err := Take(env, s, []int64{int64(len(ss))}); err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Fatalf("take out of bounds: %v", err)
	}
	mask := make([]bool, len(ss))
	var want []string
	for i := range mask {
		mask[i] = i%3 == 0
		if mask[i] {
			want = append(want, ss[i])
		}
	}
	c, err := Compress(env, s, mask)
	if err != nil || !slices.Equal(toGo(c.Strs()), want) {
		t.Fatalf("compress: %v", err)
	}
	cat, err := Concat(env, []Strs{s, fromGo(nil), fromGo([]string{"x"})})
	if err != nil || !slices.Equal(toGo(cat.Strs()), append(slices.Clone(ss), "x")) {
		t.Fatalf("concat: %v", err)
	}
}

func TestFormatParse(t *testing.T) {
	env := ops.PlainEnv(2)
	// Python's repr of each (checked against CPython 3.11).
	floats := map[float64]string{
		1: "1.0", 0.1: "0.1", math.Copysign(0, -1): "-0.0", 1e16: "1e+16", 1e15: "1000000000000000.0",
		1e-5: "1e-05", 0.0001: "0.0001", 123.456: "123.456", 1.5e300: "1.5e+300",
		math.Inf(1): "inf", math.NaN(): "nan", 2.5e-7: "2.5e-07",
	}
	for f, want := range floats {
		if got := string(PyFloat(nil, f, 64)); got != want {
			t.Errorf("repr(%v) = %q, want %q", f, got, want)
		}
	}
	ints := pdarray.FromSlice([]int64{0, -5, math.MaxInt64})
	out, err := Format(env, ints)
	if err != nil || !slices.Equal(toGo(out.Strs()), []string{"0", "-5", strconv.Itoa(math.MaxInt64)}) {
		t.Fatalf("format ints: %v", err)
	}
	f, _ := pdarray.Alloc(pdarray.Float64, 3)
	if err := Parse(env, fromGo([]string{" 1.5", "nan", "-2"}), f); err != nil {
		t.Fatal(err)
	}
	if v := pdarray.View[float64](f); v[0] != 1.5 || !math.IsNaN(v[1]) || v[2] != -2 {
		t.Fatalf("parse: %v", v)
	}
	if err := Parse(env, fromGo([]string{"1", "x"}), f); err == nil || !strings.Contains(err.Error(), `string 1, "x"`) {
		t.Fatalf("parse bad: %v", err)
	}
}

func TestRandomUniform(t *testing.T) {
	a, err := RandomUniform(ops.PlainEnv(1), 100000, 1, 16, Charsets["uppercase"], 42, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomUniform(ops.PlainEnv(4), 100000, 1, 16, Charsets["uppercase"], 42, true)
	if !slices.Equal(toGo(a.Strs()), toGo(b.Strs())) {
		t.Fatal("a seed's strings depend on the worker count")
	}
	for _, x := range toGo(a.Strs()) {
		if len(x) < 1 || len(x) >= 16 || strings.Trim(x, Charsets["uppercase"]) != "" {
			t.Fatalf("bad random string %q", x)
		}
	}
}

func TestStick(t *testing.T) {
	a, b := sample(20000, 4), sample(20000, 5)
	out, err := Stick(ops.PlainEnv(3), fromGo(a), fromGo(b), []byte("_é_"))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range toGo(out.Strs()) {
		if x != a[i]+"_é_"+b[i] {
			t.Fatalf("row %d: %q", i, x)
		}
	}
}

func TestEncodeIDNA(t *testing.T) {
	env := ops.PlainEnv(2)
	// Python 3.11's str.encode("idna") of each.
	in := []string{"abc", "ABC", "münchen", "a.b", "日本.jp", ""}
	want := []string{"abc", "ABC", "xn--mnchen-3ya", "a.b", "xn--wgv71a.jp", ""}
	out, err := Encode(env, fromGo(in), "idna", false)
	if err != nil || !slices.Equal(toGo(out.Strs()), want) {
		t.Fatalf("idna: %q %v", toGo(out.Strs()), err)
	}
	back, err := Encode(env, out.Strs(), "idna", true)
	if err != nil || !slices.Equal(toGo(back.Strs()), in) {
		t.Fatalf("idna decode: %q %v", toGo(back.Strs()), err)
	}
	if _, err := Encode(env, fromGo([]string{"a", "é"}), "ascii", false); err == nil || !strings.Contains(err.Error(), `string 1, "é"`) {
		t.Fatalf("ascii: %v", err)
	}
}

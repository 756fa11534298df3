package client_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// String arrays (strs.go) against a real server: every result compared
// with what Go's standard library computes from the same strings.

// strsCorpus is n random strings made of pieces that test the edges:
// empty strings, NUL bytes, multi-byte UTF-8 (2, 3 and 4 bytes), letters
// whose case maps change their length (İ), delimiters and regex
// metacharacters.
func strsCorpus(n int, seed uint64) []string {
	pieces := []string{"a", "b", "B", "Z", "ab", " ", ",", ";", ".", "\x00", "é", "É", "日", "本", "🎉", "ß", "İ", "Σ", "x,y"}
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for range r.IntN(7) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		out[i] = sb.String()
	}
	return out
}

// uploadStrs is client.UploadStrs that fails the test on an error.
func uploadStrs(t *testing.T, c *client.Client, values []string) *client.Strs {
	t.Helper()
	s, err := client.UploadStrs(ctxT(t), c, values)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// strsOf downloads s's strings, failing the test on an error.
func strsOf(t *testing.T, s *client.Strs) []string {
	t.Helper()
	got, err := s.Strings(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// fetch returns what downloads the array an operation stored, failing
// the test on the operation's error or the download's:
// fetch[int64](t, c)(s.Lengths(ctx)).
func fetch[T pdarray.Element](t *testing.T, c *client.Client) func(client.ArrayInfo, error) []T {
	return func(info client.ArrayInfo, err error) []T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.Download[T](ctxT(t), c, info.Name)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
}

// fetchStrs is fetch for an operation that stored strings.
func fetchStrs(t *testing.T) func(*client.Strs, error) []string {
	return func(s *client.Strs, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return strsOf(t, s)
	}
}

// mapStrs applies f to every value.
func mapStrs[T any](values []string, f func(string) T) []T {
	out := make([]T, len(values))
	for i, v := range values {
		out[i] = f(v)
	}
	return out
}

// firstDiff says where got and want first differ, for a failure message.
func firstDiff[T comparable](got, want []T) string {
	if len(got) != len(want) {
		return fmt.Sprintf("their lengths, %d and %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("element %d: %#v, want %#v", i, got[i], want[i])
		}
	}
	return "nothing"
}

func wantEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%q: differs from Go's at %s", what, firstDiff(got, want))
	}
}

// TestStrsRoundTrip: strings come back byte for byte (empty ones, NUL
// bytes, multi-byte UTF-8, none at all), over ZeroMQ frames and over the
// bulk stream or shared memory a local server offers, from both uploads;
// Delete frees both arrays.
func TestStrsRoundTrip(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	cases := map[string][]string{
		"edges":  {"", "a", "\x00", "a\x00b", "\x00\x00", "日本語", "émoji 🎉", "", strings.Repeat("ß", 1000), "\U0010FFFF", "\u0080"},
		"empty":  {},
		"blanks": {"", "", ""},
		"large":  strsCorpus(300_000, 1), // over StreamThreshold, and the download pool's poolMin
	}
	for _, transport := range []client.Transport{client.TransportAuto, client.TransportFrames} {
		c := dial(t, srv.URL, client.WithTransport(transport))
		before := len(arrayNames(t, c))
		for name, values := range cases {
			name = fmt.Sprintf("%s (transport %d)", name, transport)
			s := uploadStrs(t, c, values)
			if s.Len() != len(values) || s.Offsets.DType != pdarray.Int64 || s.Bytes.DType != pdarray.Uint8 || s.Offsets.Size != len(values)+1 {
				t.Fatalf("%s: Len %d (want %d), offsets %v, bytes %v", name, s.Len(), len(values), s.Offsets, s.Bytes)
			}
			got := strsOf(t, s)
			if got == nil || !slices.Equal(got, values) {
				t.Errorf("%s: round trip differs at %s", name, firstDiff(got, values))
			}
			off, data, err := s.Buffers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(off) != len(values)+1 || off[0] != 0 || string(data) != strings.Join(values, "") {
				t.Errorf("%s: buffers: %d offsets from %v, %d bytes", name, len(off), off[:1], len(data))
			}
			for i, v := range values {
				if off[i+1]-off[i] != int64(len(v)) {
					t.Fatalf("%s: offsets[%d:%d] = %d, %d for %q", name, i, i+2, off[i], off[i+1], v)
				}
			}
			// The same layout, uploaded as it is, and named by StrsOf.
			again, err := client.UploadStrsBuffers(ctx, c, off, data)
			if err != nil {
				t.Fatal(err)
			}
			if got := strsOf(t, again); !slices.Equal(got, values) {
				t.Errorf("%s: UploadStrsBuffers round trip differs at %s", name, firstDiff(got, values))
			}
			named, err := c.StrsOf(ctx, again.Offsets.Name, again.Bytes.Name)
			if err != nil {
				t.Fatal(err)
			}
			if named.Len() != len(values) || named.Offsets != again.Offsets || named.Bytes != again.Bytes {
				t.Errorf("%s: StrsOf described %v %v, want %v %v", name, named.Offsets, named.Bytes, again.Offsets, again.Bytes)
			}
			// The strings share the downloaded bytes: the buffer must not go
			// back to the download pool while they are alive, to be written
			// by the next download of its size.
			off, data = nil, nil
			runtime.GC()
			runtime.GC()
			for range 3 {
				if _, _, err := s.Buffers(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, values) {
				t.Errorf("%s: the downloaded strings changed under later downloads, at %s", name, firstDiff(got, values))
			}
			for _, x := range []*client.Strs{s, again} {
				if err := x.Delete(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := len(arrayNames(t, c)); n != before {
			t.Errorf("transport %d: %d arrays stored after deleting every string array, want %d", transport, n, before)
		}
	}
}

// TestStrsRefused: an upload the server's check refuses (text that is not
// UTF-8, offsets that do not fit the bytes) fails with ARGUMENT_VALUE saying
// which string and what is wrong, and leaves nothing stored.
func TestStrsRefused(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	before := arrayNames(t, c)
	left := func(what string) {
		t.Helper()
		if after := arrayNames(t, c); len(after) != len(before) {
			t.Errorf("%s: %d arrays left stored, want %d", what, len(after), len(before))
		}
	}
	for _, bad := range [][]string{
		{"ok", "fine", "caf\xe9", "x"}, // Latin-1, not UTF-8
		{"ok", "fine", "\xff"},
		{"ok", "fine", "\xe6\x97"},     // a rune cut short
		{"ok", "fine", "\xed\xa0\x80"}, // a surrogate
	} {
		_, err := client.UploadStrs(ctx, c, bad)
		wantCode(t, err, transfer.ArgumentValue, "string 2 is not valid UTF-8")
		left("invalid UTF-8")
	}
	// A rune may not straddle two strings, though their bytes together are UTF-8.
	_, err := client.UploadStrsBuffers(ctx, c, []int64{0, 1, 3}, []byte("日"))
	wantCode(t, err, transfer.ArgumentValue, "not valid UTF-8")
	left("a rune across two strings")
	for _, tc := range []struct {
		off  []int64
		data string
		msg  string
	}{
		{[]int64{}, "", "at least one"},
		{[]int64{1, 2}, "ab", "must start at 0"},
		{[]int64{0, 2, 1, 3}, "abc", "must not decrease"},
		{[]int64{0, 2}, "abc", "last offset must be its byte count 3"},
		{[]int64{0, 4}, "abc", "last offset must be its byte count 3"},
	} {
		_, err := client.UploadStrsBuffers(ctx, c, tc.off, []byte(tc.data))
		wantCode(t, err, transfer.ArgumentValue, tc.msg)
		left("offsets " + tc.msg)
	}
	// StrsOf refuses arrays of other dtypes, and keeps them.
	f, _ := client.Upload(ctx, c, []float64{0, 1})
	b, _ := client.Upload(ctx, c, []byte("a"))
	if _, err := c.StrsOf(ctx, f.Name, b.Name); err == nil || !strings.Contains(err.Error(), "offsets must be int64") {
		t.Errorf("StrsOf float64 offsets: %v", err)
	}
	if names := arrayNames(t, c); !names[f.Name] || !names[b.Name] {
		t.Error("StrsOf deleted the arrays it refused")
	}
}

// TestStrsOps: each operation's result equals Go's on the same strings
// (enough of them that the server splits the work between workers).
func TestStrsOps(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	values := strsCorpus(40_000, 2)
	values[0], values[1], values[2] = "", "\x00", "ab" // the scalar below is among them
	s := uploadStrs(t, c, values)
	n := len(values)

	t.Run("lengths", func(t *testing.T) {
		wantEqual(t, "Lengths", fetch[int64](t, c)(s.Lengths(ctx)), mapStrs(values, func(v string) int64 { return int64(len(v)) }))
		wantEqual(t, "CharLengths", fetch[int64](t, c)(s.CharLengths(ctx)), mapStrs(values, func(v string) int64 { return int64(utf8.RuneCountInString(v)) }))
	})

	t.Run("compare", func(t *testing.T) {
		other := slices.Clone(values)
		rand.New(rand.NewPCG(3, 3)).Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		copy(other, values[:n/10]) // some equal pairs
		o := uploadStrs(t, c, other)
		ops := map[string]func(a, b string) bool{
			"==": func(a, b string) bool { return a == b }, "!=": func(a, b string) bool { return a != b },
			"<": func(a, b string) bool { return a < b }, "<=": func(a, b string) bool { return a <= b },
			">": func(a, b string) bool { return a > b }, ">=": func(a, b string) bool { return a >= b },
		}
		for op, f := range ops {
			for _, scalar := range []string{"ab", "", "\x00", "日", "é,"} {
				want := mapStrs(values, func(v string) bool { return f(v, scalar) })
				wantEqual(t, "s "+op+" "+scalar, fetch[bool](t, c)(s.Compare(ctx, op, scalar)), want)
			}
			want := make([]bool, n)
			for i := range want {
				want[i] = f(values[i], other[i])
			}
			wantEqual(t, "s "+op+" other", fetch[bool](t, c)(s.CompareStrs(ctx, op, o)), want)
		}
		_, err := s.Compare(ctx, "<>", "a")
		wantCode(t, err, transfer.ArgumentValue, "not one of ==")
		short := uploadStrs(t, c, values[:5])
		_, err = s.CompareStrs(ctx, "==", short)
		wantCode(t, err, transfer.ArgumentValue, "lengths differ")
	})

	t.Run("search", func(t *testing.T) {
		for _, p := range []string{"a", "ab", "", ",", ".", "\x00", "日", "x,y", "🎉ß"} {
			wantEqual(t, "Contains "+p, fetch[bool](t, c)(s.Contains(ctx, p, false)), mapStrs(values, func(v string) bool { return strings.Contains(v, p) }))
			wantEqual(t, "StartsWith "+p, fetch[bool](t, c)(s.StartsWith(ctx, p, false)), mapStrs(values, func(v string) bool { return strings.HasPrefix(v, p) }))
			wantEqual(t, "EndsWith "+p, fetch[bool](t, c)(s.EndsWith(ctx, p, false)), mapStrs(values, func(v string) bool { return strings.HasSuffix(v, p) }))
		}
		for _, p := range []string{"a.b", "é+", "[,;]", `\x00`, "(?i)b", "日|🎉", "", "^$", "a(b|ß)*Z", `\s`, "ab"} {
			re := regexp.MustCompile(p)
			atEnd := regexp.MustCompile("(?:" + p + `)\z`)
			whole := regexp.MustCompile(`\A(?:` + p + `)\z`)
			// Leftmost-first: a match at the start, when there is one, is found first.
			atStart := func(v string) bool { loc := re.FindStringIndex(v); return loc != nil && loc[0] == 0 }
			wantEqual(t, "Contains regex "+p, fetch[bool](t, c)(s.Contains(ctx, p, true)), mapStrs(values, re.MatchString))
			wantEqual(t, "StartsWith regex "+p, fetch[bool](t, c)(s.StartsWith(ctx, p, true)), mapStrs(values, atStart))
			wantEqual(t, "Match "+p, fetch[bool](t, c)(s.Match(ctx, p)), mapStrs(values, atStart))
			wantEqual(t, "EndsWith regex "+p, fetch[bool](t, c)(s.EndsWith(ctx, p, true)), mapStrs(values, atEnd.MatchString))
			wantEqual(t, "FullMatch "+p, fetch[bool](t, c)(s.FullMatch(ctx, p)), mapStrs(values, whole.MatchString))
		}
		_, err := s.Contains(ctx, "a(", true)
		wantCode(t, err, transfer.ArgumentValue, "bad regular expression")
		_, err = s.Match(ctx, `(a)\1`) // a backreference: not RE2
		wantCode(t, err, transfer.ArgumentValue, "RE2")
		_, err = s.Search(ctx, "search", "a", false)
		wantCode(t, err, transfer.ArgumentValue, "not one of contains")
	})

	t.Run("take", func(t *testing.T) {
		r := rand.New(rand.NewPCG(4, 4))
		idx := make([]int64, 25_000)
		for i := range idx {
			idx[i] = int64(r.IntN(2*n) - n) // negative ones count from the end
		}
		ii, _ := client.Upload(ctx, c, idx)
		want := mapStrs(make([]string, len(idx)), func(string) string { return "" })
		for i, j := range idx {
			if j < 0 {
				j += int64(n)
			}
			want[i] = values[j]
		}
		wantEqual(t, "Take", fetchStrs(t)(s.Take(ctx, ii.Name)), want)
		empty, _ := client.Upload(ctx, c, []int64{})
		if got := fetchStrs(t)(s.Take(ctx, empty.Name)); len(got) != 0 {
			t.Errorf("Take of no indices: %d strings", len(got))
		}
		out, _ := client.Upload(ctx, c, []int64{0, int64(n)})
		_, err := s.Take(ctx, out.Name)
		wantCode(t, err, transfer.IndexOutOfRange, "out of bounds")
		i32, _ := client.Upload(ctx, c, []int32{0})
		_, err = s.Take(ctx, i32.Name)
		wantCode(t, err, transfer.UnsupportedDType, "must be int64")

		mask := make([]bool, n)
		var kept []string
		for i := range mask {
			if mask[i] = r.IntN(3) == 0; mask[i] {
				kept = append(kept, values[i])
			}
		}
		m, _ := client.Upload(ctx, c, mask)
		wantEqual(t, "Compress", fetchStrs(t)(s.Compress(ctx, m.Name)), kept)
		m5, _ := client.Upload(ctx, c, mask[:5])
		_, err = s.Compress(ctx, m5.Name)
		wantCode(t, err, transfer.ArgumentValue, "mask has 5 entries")
	})

	t.Run("case", func(t *testing.T) {
		wantEqual(t, "Lower", fetchStrs(t)(s.Lower(ctx)), mapStrs(values, strings.ToLower))
		wantEqual(t, "Upper", fetchStrs(t)(s.Upper(ctx)), mapStrs(values, strings.ToUpper))
	})

	t.Run("split", func(t *testing.T) {
		check := func(what string, pieces *client.Strs, segs client.ArrayInfo, err error, split func(string) []string) {
			t.Helper()
			got := fetchStrs(t)(pieces, err)
			seg := fetch[int64](t, c)(segs, nil)
			var want []string
			wantSeg := []int64{0}
			for _, v := range values {
				want = append(want, split(v)...)
				wantSeg = append(wantSeg, int64(len(want)))
			}
			wantEqual(t, what+" pieces", got, want)
			wantEqual(t, what+" segments", seg, wantSeg)
		}
		for _, d := range []string{",", "ab", "\x00", "日", "x,y"} {
			p, sg, err := s.Split(ctx, d, false)
			check("Split "+d, p, sg, err, func(v string) []string { return strings.Split(v, d) })
		}
		for _, d := range []string{"[,;]+", `\s*,\s*`, ",*", "é|ß", `\x00`} {
			re := regexp.MustCompile(d)
			p, sg, err := s.Split(ctx, d, true)
			check("Split regex "+d, p, sg, err, func(v string) []string {
				var out []string
				at := 0
				for _, m := range re.FindAllStringIndex(v, -1) {
					if m[1] > m[0] { // an empty match does not split
						out = append(out, v[at:m[0]])
						at = m[1]
					}
				}
				return append(out, v[at:])
			})
		}
		_, _, err := s.Split(ctx, "", false)
		wantCode(t, err, transfer.ArgumentValue, "non-empty delimiter")
	})

	t.Run("stick", func(t *testing.T) {
		other := slices.Clone(values)
		slices.Reverse(other)
		o := uploadStrs(t, c, other)
		for _, d := range []string{"", "-|-", "日\x00"} {
			want := make([]string, n)
			for i := range want {
				want[i] = values[i] + d + other[i]
			}
			wantEqual(t, "Stick "+d, fetchStrs(t)(s.Stick(ctx, o, d)), want)
		}
		_, err := s.Stick(ctx, uploadStrs(t, c, []string{"a"}), "")
		wantCode(t, err, transfer.ArgumentValue, "lengths differ")
	})

	t.Run("unique", func(t *testing.T) {
		count := map[string]int64{}
		for _, v := range values {
			count[v]++
		}
		distinct := make([]string, 0, len(count))
		for v := range count {
			distinct = append(distinct, v)
		}
		sort.Strings(distinct)
		wantCounts := mapStrs(distinct, func(v string) int64 { return count[v] })
		vals, counts, err := s.Unique(ctx)
		wantEqual(t, "Unique values", fetchStrs(t)(vals, err), distinct)
		wantEqual(t, "Unique counts", fetch[int64](t, c)(counts, nil), wantCounts)
		vals, inv, counts, err := s.UniqueInverse(ctx)
		wantEqual(t, "UniqueInverse values", fetchStrs(t)(vals, err), distinct)
		wantEqual(t, "UniqueInverse counts", fetch[int64](t, c)(counts, nil), wantCounts)
		wantEqual(t, "UniqueInverse inverse", fetch[int64](t, c)(inv, nil), mapStrs(values, func(v string) int64 {
			k, _ := slices.BinarySearch(distinct, v)
			return int64(k)
		}))
		back := fetchStrs(t)(vals.Take(ctx, inv.Name))
		wantEqual(t, "values.Take(inverse)", back, values)
	})

	t.Run("in1d", func(t *testing.T) {
		set := map[string]bool{}
		b := []string{"", "not in values 🎉🎉🎉🎉🎉🎉🎉🎉"}
		for i, v := range values {
			if i%7 == 0 {
				b = append(b, v)
			}
		}
		for _, v := range b {
			set[v] = true
		}
		bs := uploadStrs(t, c, b)
		wantEqual(t, "In1d", fetch[bool](t, c)(s.In1d(ctx, bs)), mapStrs(values, func(v string) bool { return set[v] }))
		none := uploadStrs(t, c, nil)
		wantEqual(t, "In1d of none", fetch[bool](t, c)(s.In1d(ctx, none)), make([]bool, n))
	})

	t.Run("argsort", func(t *testing.T) {
		want := make([]int64, n)
		for i := range want {
			want[i] = int64(i)
		}
		sort.SliceStable(want, func(i, j int) bool { return values[want[i]] < values[want[j]] })
		wantEqual(t, "Argsort", fetch[int64](t, c)(s.Argsort(ctx)), want)
	})

	t.Run("hash", func(t *testing.T) {
		hi, lo, err := s.Hash(ctx)
		gotHi, gotLo := fetch[uint64](t, c)(hi, err), fetch[uint64](t, c)(lo, nil)
		wantEqual(t, "Hash hi", gotHi, mapStrs(values, func(v string) uint64 { return xxh3.HashString128(v).Hi }))
		wantEqual(t, "Hash lo", gotLo, mapStrs(values, func(v string) uint64 { return xxh3.HashString128(v).Lo }))
	})

	t.Run("concat", func(t *testing.T) {
		a := uploadStrs(t, c, values[:100])
		none := uploadStrs(t, c, nil)
		b := uploadStrs(t, c, []string{"", "日本", "\x00"})
		want := append(append(append(slices.Clone(values[:100]), "", "日本", "\x00"), values[:100]...), values...)
		wantEqual(t, "ConcatStrs", fetchStrs(t)(c.ConcatStrs(ctx, a, none, b, a, s)), want)
		if got := fetchStrs(t)(c.ConcatStrs(ctx, none)); len(got) != 0 {
			t.Errorf("ConcatStrs of nothing: %q", got)
		}
		if _, err := c.ConcatStrs(ctx); err == nil {
			t.Error("ConcatStrs of no parts: no error")
		}
	})
}

// TestStrsCodecs: Encode/Decode, Parse and FormatStrs, as Python's
// str.encode, int()/float() and str() give them.
func TestStrsCodecs(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)

	hosts := uploadStrs(t, c, []string{"bücher.de", "example.com", "", "日本.jp"})
	enc := fetchStrs(t)(hosts.Encode(ctx, "idna"))
	wantEqual(t, "Encode idna", enc, []string{"xn--bcher-kva.de", "example.com", "", "xn--wgv71a.jp"})
	back := uploadStrs(t, c, enc)
	wantEqual(t, "Decode idna", fetchStrs(t)(back.Decode(ctx, "idna")), []string{"bücher.de", "example.com", "", "日本.jp"})
	wantEqual(t, "Encode utf-8", fetchStrs(t)(hosts.Encode(ctx, "utf-8")), []string{"bücher.de", "example.com", "", "日本.jp"})
	_, err := hosts.Encode(ctx, "ascii")
	wantCode(t, err, transfer.ArgumentValue, "")
	if !strings.Contains(err.Error(), "bücher") {
		t.Errorf("Encode ascii names no string: %v", err)
	}
	_, err = hosts.Encode(ctx, "latin-1")
	wantCode(t, err, transfer.ArgumentValue, "not one of idna")

	ints := uploadStrs(t, c, []string{"1", " -2 ", "+3", "9223372036854775807", "-9223372036854775808", "0"})
	wantEqual(t, "Parse int64", fetch[int64](t, c)(ints.Parse(ctx, pdarray.Int64)), []int64{1, -2, 3, math.MaxInt64, math.MinInt64, 0})
	floats := uploadStrs(t, c, []string{"1.5", "-2", "1e3", "inf", "-inf", " 0.1 "})
	wantEqual(t, "Parse float64", fetch[float64](t, c)(floats.Parse(ctx, pdarray.Float64)), []float64{1.5, -2, 1000, math.Inf(1), math.Inf(-1), 0.1})
	bools := uploadStrs(t, c, []string{"True", "False", " True"})
	wantEqual(t, "Parse bool", fetch[bool](t, c)(bools.Parse(ctx, pdarray.Bool)), []bool{true, false, true})
	_, err = uploadStrs(t, c, []string{"1", "x"}).Parse(ctx, pdarray.Int64)
	wantCode(t, err, transfer.ArgumentValue, `string 1, "x", is not a valid int64`)
	_, err = ints.Parse(ctx, pdarray.Int8)
	wantCode(t, err, transfer.UnsupportedDType, "cannot cast str to int8")

	for _, tc := range []struct {
		arr  func() (client.ArrayInfo, error)
		want []string
	}{
		{func() (client.ArrayInfo, error) { return client.Upload(ctx, c, []int64{1, -2, 0, math.MinInt64}) },
			[]string{"1", "-2", "0", "-9223372036854775808"}},
		{func() (client.ArrayInfo, error) { return client.Upload(ctx, c, []uint64{math.MaxUint64}) },
			[]string{"18446744073709551615"}},
		{func() (client.ArrayInfo, error) {
			return client.Upload(ctx, c, []float64{1, 0.1, 1e16, 1e15, 1e-5, 0.0001, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1.5e300, 123456789})
		}, []string{"1.0", "0.1", "1e+16", "1000000000000000.0", "1e-05", "0.0001", "-0.0", "inf", "-inf", "nan", "1.5e+300", "123456789.0"}},
		{func() (client.ArrayInfo, error) { return client.Upload(ctx, c, []bool{true, false}) },
			[]string{"True", "False"}},
	} {
		a, err := tc.arr()
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "FormatStrs "+a.DType.String(), fetchStrs(t)(c.FormatStrs(ctx, a.Name)), tc.want)
	}
}

// TestStrsRandom: RandomStrs' lengths and characters are in range, and a
// seed (any uint64) gives the same strings every time.
func TestStrsRandom(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	sets := map[string]string{"": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "uppercase": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"lowercase": "abcdefghijklmnopqrstuvwxyz", "numeric": "0123456789"}
	for chars, set := range sets {
		got := fetchStrs(t)(c.RandomStrs(ctx, 40_000, 2, 6, chars, 7))
		if len(got) != 40_000 {
			t.Fatalf("%q: %d strings", chars, len(got))
		}
		for i, v := range got {
			if len(v) < 2 || len(v) >= 6 || strings.Trim(v, set) != "" {
				t.Fatalf("%q: string %d is %q", chars, i, v)
			}
		}
	}
	same := func(seed ...uint64) []string {
		return fetchStrs(t)(c.RandomStrs(ctx, 30_000, 0, 9, "printable", seed...))
	}
	for _, seed := range []uint64{0, 1, 1<<63 + 5, math.MaxUint64} {
		a, b := same(seed), same(seed)
		wantEqual(t, "seeded RandomStrs", a, b)
		if seed == 1 && slices.Equal(a, same(2)) {
			t.Error("seeds 1 and 2 gave the same strings")
		}
	}
	if slices.Equal(same(), same()) {
		t.Error("two unseeded RandomStrs gave the same strings")
	}
	if got := fetchStrs(t)(c.RandomStrs(ctx, 0, 0, 1, "")); len(got) != 0 {
		t.Errorf("no strings: %q", got)
	}
	_, err := c.RandomStrs(ctx, 5, 3, 3, "")
	wantCode(t, err, transfer.ArgumentValue, "minlen < maxlen")
	_, err = c.RandomStrs(ctx, 5, 0, 3, "hex")
	wantCode(t, err, transfer.ArgumentValue, "not one of uppercase")
	if _, err := c.RandomStrs(ctx, 5, 0, 3, "", 1, 2); err == nil {
		t.Error("two seeds: no error")
	}
}

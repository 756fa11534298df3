package csvio

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/pdarray"
)

// read parses one file named t.csv.
func read(t *testing.T, data string, o ReadOptions) []Column {
	t.Helper()
	cols, err := Read([]File{{Name: "t.csv", Data: []byte(data)}}, o)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	checkColumns(t, cols)
	return cols
}

// checkColumns checks what Read promises of any result: equal lengths,
// offsets from 0 that never fall and end at the bytes' end, UTF-8.
func checkColumns(t testing.TB, cols []Column) {
	t.Helper()
	for i, c := range cols {
		if c.Rows() != cols[0].Rows() {
			t.Fatalf("column %q has %d rows, column %q %d", c.Name, c.Rows(), cols[0].Name, cols[0].Rows())
		}
		if c.Array != nil {
			if c.Offsets != nil || c.Bytes != nil {
				t.Fatalf("column %d: both an array and strings", i)
			}
			continue
		}
		off := c.Offsets
		if len(off) == 0 || off[0] != 0 || off[len(off)-1] != int64(len(c.Bytes)) {
			t.Fatalf("column %q: offsets %v for %d bytes", c.Name, off[:min(len(off), 4)], len(c.Bytes))
		}
		for j := 1; j < len(off); j++ {
			if off[j] < off[j-1] {
				t.Fatalf("column %q: offset %d falls", c.Name, j)
			}
			if !utf8.Valid(c.Bytes[off[j-1]:off[j]]) {
				t.Fatalf("column %q: string %d is not UTF-8", c.Name, j-1)
			}
		}
	}
}

// strCol is a string column made of ss.
func strCol(name string, ss []string) Column {
	c := Column{Name: name, Offsets: []int64{0}}
	for _, s := range ss {
		c.Bytes = append(c.Bytes, s...)
		c.Offsets = append(c.Offsets, int64(len(c.Bytes)))
	}
	return c
}

// stringsOf is a string column's values.
func stringsOf(c Column) []string {
	out := make([]string, c.Rows())
	for i := range out {
		out[i] = string(c.Bytes[c.Offsets[i]:c.Offsets[i+1]])
	}
	return out
}

// values is a column's name, kind and values, comparable with DeepEqual
// (floats by their bits, every NaN as one).
func values(c Column) []any {
	if c.Array == nil {
		return []any{c.Name, "str", stringsOf(c)}
	}
	var v any
	switch c.Array.DType() {
	case pdarray.Float64:
		f := pdarray.View[float64](c.Array)
		bits := make([]uint64, len(f))
		for i, x := range f {
			if bits[i] = math.Float64bits(x); x != x {
				bits[i] = 0x7ff8000000000001
			}
		}
		v = bits
	case pdarray.Int64:
		v = append([]int64{}, pdarray.View[int64](c.Array)...)
	case pdarray.Uint64:
		v = append([]uint64{}, pdarray.View[uint64](c.Array)...)
	case pdarray.Bool:
		v = append([]bool{}, pdarray.View[bool](c.Array)...)
	default:
		v = append([]byte{}, c.Array.Bytes()...)
	}
	return []any{c.Name, c.Array.DType().String(), v}
}

func sameColumns(t testing.TB, got, want []Column) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d columns, want %d", len(got), len(want))
	}
	for i := range got {
		if g, w := values(got[i]), values(want[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("column %d:\n got %.300v\nwant %.300v", i, g, w)
		}
	}
}

func write(t testing.TB, cols []Column, o WriteOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, cols, o); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

var edgeStrings = []string{"", "a", "é日本語", "with,comma", `a "quote"`, `"`, `""`, "line\nbreak", "cr\r", "\r\n",
	" spaced ", "\t", "semi;colon", "x|y", strings.Repeat("long", 30), "🙂", "\n", ",", `",`}

// everyDType is one column of each type of n rows with their edge values.
func everyDType(n int, rng *rand.Rand) []Column {
	ints := []int64{0, -1, 1, math.MinInt64, math.MaxInt64, 42}
	uints := []uint64{0, 1, math.MaxUint64, 1 << 63}
	floats := []float64{0, math.Copysign(0, -1), 0.1, 1e16, 1e-5, 1e-4, 5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), 1.5, 123456789.125, 2.5e15, 9999999999999998}
	i64, u64, f64, b := make([]int64, n), make([]uint64, n), make([]float64, n), make([]bool, n)
	ss := make([]string, n)
	for i := range n {
		i64[i], u64[i], f64[i] = int64(rng.Uint64()), rng.Uint64(), math.Float64frombits(rng.Uint64())
		if i%3 == 0 {
			f64[i] = rng.NormFloat64() * 1e6
		}
		b[i] = rng.IntN(2) == 1
		ss[i] = edgeStrings[rng.IntN(len(edgeStrings))]
		if i < len(ints) {
			i64[i] = ints[i]
		}
		if i < len(uints) {
			u64[i] = uints[i]
		}
		if i < len(floats) {
			f64[i] = floats[i]
		}
		if i < len(edgeStrings) {
			ss[i] = edgeStrings[i]
		}
	}
	return []Column{{Name: "i", Array: pdarray.FromSlice(i64)}, {Name: "u", Array: pdarray.FromSlice(u64)},
		{Name: "f", Array: pdarray.FromSlice(f64)}, {Name: "b", Array: pdarray.FromSlice(b)}, strCol("s é", ss)}
}

// TestRoundTripEveryDType: what Write writes, Read reads back bit for bit,
// for every type, on 1 and 4 workers, with each delimiter, and with spans
// of a byte or two (so that every row boundary is a span's).
func TestRoundTripEveryDType(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 19, 1000} {
		for _, delim := range []byte{0, ';', '\t', '|'} {
			cols := everyDType(n, rng)
			data := write(t, cols, WriteOptions{Delim: delim, Header: true, Workers: 3})
			for _, w := range []int{1, 4} {
				for _, minSpan := range []int{0, 1} {
					t.Run(fmt.Sprintf("n=%d/delim=%q/workers=%d/minSpan=%d", n, delim, w, minSpan), func(t *testing.T) {
						got := read(t, string(data), ReadOptions{Delim: delim, Workers: w, minSpan: minSpan})
						sameColumns(t, got, cols)
					})
				}
			}
		}
	}
}

// TestRoundTripWithoutQuotes: a file without a quote is split into spans
// (the quoted path above runs on one); the same values come back.
func TestRoundTripWithoutQuotes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cols := everyDType(5000, rng)
	plain := make([]string, 5000)
	for i := range plain {
		plain[i] = strings.Map(func(r rune) rune {
			if strings.ContainsRune(",\"\n\r", r) {
				return '_'
			}
			return r
		}, edgeStrings[rng.IntN(len(edgeStrings))])
	}
	cols[4] = strCol("s", plain)
	data := write(t, cols, WriteOptions{Header: true})
	if bytes.IndexByte(data, '"') >= 0 {
		t.Fatal("the file holds a quote")
	}
	for _, minSpan := range []int{1, 100, 0} {
		got := read(t, string(data), ReadOptions{Workers: 4, minSpan: minSpan})
		sameColumns(t, got, cols)
	}
}

// TestEmptyArrays: zero rows of every type, with and without the header.
func TestEmptyArrays(t *testing.T) {
	cols := everyDType(0, rand.New(rand.NewPCG(1, 1)))
	data := write(t, cols, WriteOptions{Header: true})
	if want := "**HEADER**\nint64,uint64,float64,bool,str\n*/HEADER/*\ni,u,f,b,s é\n"; string(data) != want {
		t.Fatalf("wrote %q, want %q", data, want)
	}
	got := read(t, string(data), ReadOptions{})
	sameColumns(t, got, cols)
	if len(got[4].Offsets) != 1 || len(got[4].Bytes) != 0 {
		t.Fatalf("empty string column: %v %v", got[4].Offsets, got[4].Bytes)
	}
	got = read(t, "a,b\n", ReadOptions{DTypes: map[string]string{"a": "float64"}})
	if got[0].Array.Len() != 0 || got[1].Rows() != 0 {
		t.Fatal("a names line alone is not zero rows")
	}
}

// TestWriteFormat: the text Write makes, by hand.
func TestWriteFormat(t *testing.T) {
	cols := []Column{
		{Name: "i", Array: pdarray.FromSlice([]int64{0, -7})},
		{Name: "f", Array: pdarray.FromSlice([]float64{1, math.NaN()})},
		{Name: "b", Array: pdarray.FromSlice([]bool{true, false})},
		strCol("s", []string{`say "hi", ok`, ""}),
		{Name: "u", Array: pdarray.FromSlice([]uint64{math.MaxUint64, 3})},
	}
	want := "**HEADER**\nint64,float64,bool,str,uint64\n*/HEADER/*\ni,f,b,s,u\n" +
		"0,1.0,True,\"say \"\"hi\"\", ok\",18446744073709551615\n-7,nan,False,,3\n"
	if got := write(t, cols, WriteOptions{Header: true}); string(got) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
	want = "i;f;b;s;u\n0;1.0;True;say \"\"hi\"\", ok;18446744073709551615\n-7;nan;False;;3\n"
	want = strings.Replace(want, `say ""hi"", ok`, `"say ""hi"", ok"`, 1)
	if got := write(t, cols, WriteOptions{Delim: ';'}); string(got) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
	// A delimiter that numbers can hold: those that hold it are quoted.
	if got := write(t, cols[:3], WriteOptions{Delim: 'e'}); string(got) != "i\x65f\x65b\n0e1.0e\"Tru\x65\"\n-7enane\"Fals\x65\"\n" {
		t.Fatalf("wrote %q", got)
	}
	back := read(t, string(write(t, cols, WriteOptions{Delim: '1', Header: true})), ReadOptions{Delim: '1'})
	sameColumns(t, back, cols)
	// A string with leading or trailing spaces is not quoted, and keeps them.
	if got := write(t, []Column{strCol("s", []string{" a ", "b,"})}, WriteOptions{Delim: ';'}); string(got) != "s\n a \nb,\n" {
		t.Fatalf("wrote %q", got)
	}
}

// TestWriteNarrowTypes: int8 ... uint32 and float32 are written typed as
// the int64, uint64 and float64 they read back as.
func TestWriteNarrowTypes(t *testing.T) {
	cols := []Column{
		{Name: "a", Array: pdarray.FromSlice([]int8{-128, 127})},
		{Name: "b", Array: pdarray.FromSlice([]int16{-1, 2})},
		{Name: "c", Array: pdarray.FromSlice([]int32{math.MinInt32, 5})},
		{Name: "d", Array: pdarray.FromSlice([]uint8{255, 0})},
		{Name: "e", Array: pdarray.FromSlice([]uint16{65535, 1})},
		{Name: "f", Array: pdarray.FromSlice([]uint32{math.MaxUint32, 9})},
		{Name: "g", Array: pdarray.FromSlice([]float32{0.1, 3e38})},
	}
	data := write(t, cols, WriteOptions{Header: true})
	want := "**HEADER**\nint64,int64,int64,uint64,uint64,uint64,float64\n*/HEADER/*\na,b,c,d,e,f,g\n" +
		"-128,-1,-2147483648,255,65535,4294967295,0.1\n127,2,5,0,1,9,3e+38\n"
	if string(data) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", data, want)
	}
	got := read(t, string(data), ReadOptions{})
	if v := pdarray.View[int64](got[2].Array); v[0] != math.MinInt32 {
		t.Fatal(v)
	}
	if v := pdarray.View[float64](got[6].Array); v[0] != 0.1 {
		t.Fatal(v)
	}
}

// pyFloatRef is Python's repr the plain way (strs.PyFloat's): format in
// 'e' to learn the exponent, then again in 'f'.
func pyFloatRef(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, bitSize)
	k := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[k+1:])
	if exp < -4 || exp >= 16 {
		m, x := e[:k], exp
		sign := "+"
		if x < 0 {
			sign, x = "-", -x
		}
		return fmt.Sprintf("%se%s%02d", m, sign, x)
	}
	s := strconv.FormatFloat(f, 'f', -1, bitSize)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// TestPyFloat: Python's repr of known floats, and the reference way on
// random ones.
func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 123456789012345678: "1.2345678901234568e+17",
		1e-4: "0.0001", 1e-5: "1e-05", 1.5e-5: "1.5e-05", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308",
		0.5: "0.5", 100: "100.0", 2.5e15: "2500000000000000.0", 9999999999999998: "9999999999999998.0",
		-0.001234: "-0.001234", 1e100: "1e+100", -2e-100: "-2e-100", 0: "0.0", 1.0 / 3: "0.3333333333333333",
		math.Inf(1): "inf", math.Inf(-1): "-inf", 12345.678: "12345.678",
	} {
		if got := string(appendPyFloat(nil, f, 64)); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
	if got := string(appendPyFloat(nil, math.Copysign(0, -1), 64)); got != "-0.0" {
		t.Errorf("-0.0 gave %q", got)
	}
	if got := string(appendPyFloat(nil, math.NaN(), 64)); got != "nan" {
		t.Errorf("nan gave %q", got)
	}
	if got := string(appendPyFloat(nil, float64(float32(0.1)), 32)); got != "0.1" {
		t.Errorf("float32 0.1 gave %q", got)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		f := math.Float64frombits(rng.Uint64())
		if rng.IntN(2) == 0 {
			f = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		}
		if got, want := string(appendPyFloat(nil, f, 64)), pyFloatRef(f, 64); got != want {
			t.Fatalf("pyFloat(%b) = %q, want %q", f, got, want)
		}
		f32 := float64(math.Float32frombits(rng.Uint32()))
		if got, want := string(appendPyFloat(nil, f32, 32)), pyFloatRef(f32, 32); got != want {
			t.Fatalf("pyFloat32(%b) = %q, want %q", f32, got, want)
		}
	}
}

// TestAgainstEncodingCSV: Go's RFC 4180 reader reads what Write writes as
// the same fields, and Read reads what Go's writer writes. (Strings
// without "\r": encoding/csv turns a quoted "\r\n" into "\n".)
func TestAgainstEncodingCSV(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var pool []string
	for _, s := range edgeStrings {
		if !strings.Contains(s, "\r") {
			pool = append(pool, s)
		}
	}
	const n = 3000
	rows := make([][]string, n)
	a, b := make([]string, n), make([]string, n)
	for i := range rows {
		a[i], b[i] = pool[rng.IntN(len(pool))], pool[rng.IntN(len(pool))]+pool[rng.IntN(len(pool))]
		rows[i] = []string{a[i], b[i]}
	}
	cols := []Column{strCol("a", a), strCol("b", b)}
	ours := write(t, cols, WriteOptions{Workers: 2})
	theirs, err := csv.NewReader(bytes.NewReader(ours)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(theirs, append([][]string{{"a", "b"}}, rows...)) {
		t.Fatal("encoding/csv reads other fields than csvio wrote")
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.WriteAll(append([][]string{{"a", "b"}}, rows...))
	got := read(t, buf.String(), ReadOptions{Workers: 3})
	sameColumns(t, got, cols)
}

// TestHandWritten: files typed by hand: without a header every column is
// str; DTypes types them; Columns picks and orders; CRLF, no final line
// end, blanks around numbers, Python's spellings.
func TestHandWritten(t *testing.T) {
	got := read(t, "x,y\r\n1,a\r\n2,b", ReadOptions{})
	sameColumns(t, got, []Column{strCol("x", []string{"1", "2"}), strCol("y", []string{"a", "b"})})

	got = read(t, "x,y,z\n 1 ,a,True\n-2,b,0\n+3,,false\n", ReadOptions{
		DTypes: map[string]string{"x": "int64", "z": "bool"}, Columns: []string{"z", "x", "y"}})
	sameColumns(t, got, []Column{
		{Name: "z", Array: pdarray.FromSlice([]bool{true, false, false})},
		{Name: "x", Array: pdarray.FromSlice([]int64{1, -2, 3})},
		strCol("y", []string{"a", "b", ""})})

	got = read(t, "**HEADER**\nfloat64, uint64\n*/HEADER/*\nf|u\nnan|1\n-INF|+2\nInfinity|18446744073709551615\n|0\n1e400|3\n-1e-400|4\n1.|5\n.5e1|6\n-nan|7\n",
		ReadOptions{Delim: '|'})
	want := []float64{math.NaN(), math.Inf(-1), math.Inf(1), math.NaN(), math.Inf(1), math.Copysign(0, -1), 1, 5, math.NaN()}
	sameColumns(t, got, []Column{{Name: "f", Array: pdarray.FromSlice(want)},
		{Name: "u", Array: pdarray.FromSlice([]uint64{1, 2, math.MaxUint64, 0, 3, 4, 5, 6, 7})}})

	// DTypes overrides a header: str read as numbers and numbers as str.
	got = read(t, "**HEADER**\nstr,int64\n*/HEADER/*\na,b\n1,2\n", ReadOptions{DTypes: map[string]string{"a": "float64", "b": "str"}})
	sameColumns(t, got, []Column{{Name: "a", Array: pdarray.FromSlice([]float64{1})}, strCol("b", []string{"2"})})

	// A one-column file: a blank line is an empty string (or NaN).
	got = read(t, "s\nx\n\ny\n\n", ReadOptions{})
	sameColumns(t, got, []Column{strCol("s", []string{"x", "", "y", ""})})
	got = read(t, "f\n1\n\n", ReadOptions{DTypes: map[string]string{"f": "float64"}})
	sameColumns(t, got, []Column{{Name: "f", Array: pdarray.FromSlice([]float64{1, math.NaN()})}})

	// Quoted names and fields, a quote inside an unquoted field, CRLF
	// inside quotes kept.
	got = read(t, "\"a,1\",b\n\"x\r\ny\",c\"d\n\"\",\"\"\"\"\r\n", ReadOptions{})
	sameColumns(t, got, []Column{strCol("a,1", []string{"x\r\ny", ""}), strCol("b", []string{`c"d`, `"`})})

	// Two files, their columns in other orders, one typed: rows of both.
	files := []File{{Name: "1.csv", Data: []byte("**HEADER**\nint64,str\n*/HEADER/*\nn,s\n1,a\n2,b\n")},
		{Name: "2.csv", Data: []byte("s,n\nc,3\n")}, {Name: "3.csv", Data: []byte("**HEADER**\nstr,int64\n*/HEADER/*\ns,n\n")},
		{Name: "4.csv", Data: []byte("**HEADER**\nstr,int64\n*/HEADER/*\ns,n\n\"d\",4")}}
	for _, w := range []int{1, 4} {
		cols, err := Read(files, ReadOptions{Workers: w, minSpan: 1})
		if err != nil {
			t.Fatal(err)
		}
		sameColumns(t, cols, []Column{{Name: "n", Array: pdarray.FromSlice([]int64{1, 2, 3, 4})}, strCol("s", []string{"a", "b", "c", "d"})})
	}
}

// TestPandasOutput: the text pandas' DataFrame.to_csv(index=False)
// writes (its floats are Python's repr, NaN an empty field, strings
// quoted when they must be), read with DTypes as pandas' read_csv would
// type it; and the same with Windows line ends.
func TestPandasOutput(t *testing.T) {
	const pandas = "i,f,s,b\n" +
		"0,0.1,a,True\n" +
		"1,1e-05,\"b,c\",False\n" +
		"2,,\"say \"\"hi\"\"\",True\n" +
		"3,1.5e+16,,False\n" +
		"-4,-inf,é,True\n"
	want := []Column{
		{Name: "i", Array: pdarray.FromSlice([]int64{0, 1, 2, 3, -4})},
		{Name: "f", Array: pdarray.FromSlice([]float64{0.1, 1e-05, math.NaN(), 1.5e16, math.Inf(-1)})},
		strCol("s", []string{"a", "b,c", `say "hi"`, "", "é"}),
		{Name: "b", Array: pdarray.FromSlice([]bool{true, false, true, false, true})},
	}
	types := map[string]string{"i": "int64", "f": "float64", "b": "bool"}
	for _, text := range []string{pandas, strings.ReplaceAll(pandas, "\n", "\r\n")} {
		got := read(t, text, ReadOptions{DTypes: types})
		sameColumns(t, got, want)
	}
	got := read(t, pandas, ReadOptions{})
	if s := stringsOf(got[1]); !reflect.DeepEqual(s, []string{"0.1", "1e-05", "", "1.5e+16", "-inf"}) {
		t.Fatalf("untyped f: %q", s)
	}
}

// TestErrors: every fault names its file, line and column and says what
// was wrong.
func TestErrors(t *testing.T) {
	const typed = "**HEADER**\nint64,str\n*/HEADER/*\na,b\n"
	long := strings.Repeat("z", 100)
	cases := []struct {
		name  string
		files []string
		o     ReadOptions
		kind  ErrKind
		want  string
	}{
		{"too few", []string{"a,b\n1,2\n3\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3 column "b": missing: the row has 1 fields but the file has 2 columns ("a", "b")`},
		{"too few, quoted", []string{"a,b\n\"1\n1\",2\n3\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 4 column "b": missing: the row has 1 fields`},
		{"too many", []string{"a,b\n1,2\n3,4,5\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3: more fields than the file's 2 columns ("a", "b"); a field that holds the delimiter ',' must be quoted`},
		{"too many, quoted", []string{"a,b\n1,\"2\"\n3,4,\"5\"\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3: more fields than the file's 2 columns`},
		{"bad int", []string{typed + "1,x\nzz,y\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 6 column "a": "zz" is not an int64 (a decimal integer from -9223372036854775808 to 9223372036854775807)`},
		{"int overflow", []string{typed + "9223372036854775808,x\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 5 column "a": "9223372036854775808" is not an int64`},
		{"long value", []string{typed + long + ",x\n"}, ReadOptions{}, ErrData,
			`line 5 column "a": "` + long[:40] + `"... is not an int64`},
		{"empty int", []string{typed + "1,x\n,y\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 6 column "a": empty value: a int64 column has no missing value (read it as float64, with DTypes, to get NaN)`},
		{"negative uint", []string{"u\n-1\n"}, ReadOptions{DTypes: map[string]string{"u": "uint64"}}, ErrData,
			`file "0.csv" line 2 column "u": "-1" is not a uint64`},
		{"hex float", []string{"f\n1.5\n0x1p3\n"}, ReadOptions{DTypes: map[string]string{"f": "float64"}}, ErrData,
			`file "0.csv" line 3 column "f": "0x1p3" is not a float64 (a decimal number, nan, inf or -inf; empty for NaN)`},
		{"bad float", []string{"f\n1..5\n"}, ReadOptions{DTypes: map[string]string{"f": "float64"}}, ErrData,
			`line 2 column "f": "1..5" is not a float64`},
		{"bad bool", []string{"b\nTrue\nyes\n"}, ReadOptions{DTypes: map[string]string{"b": "bool"}}, ErrData,
			`file "0.csv" line 3 column "b": "yes" is not a bool (True, False, true, false, 1 or 0)`},
		{"bad UTF-8", []string{"a,s\n1,ok\n2,\xff\xfe\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3 column "s": the string "\xff\xfe" is not valid UTF-8`},
		{"bad UTF-8, quoted", []string{"a,s\n\"1\",ok\n2,\"x\xc3\"\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3 column "s": the string "x\xc3" is not valid UTF-8`},
		// Valid together, each half of "é" alone is not.
		{"split rune", []string{"s\n\xc3\n\xa9\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 2 column "s": the string "\xc3" is not valid UTF-8`},
		{"bad UTF-8 name", []string{"a,\xff\n1,2\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 1: column name "\xff" is not valid UTF-8`},
		{"no header end", []string{"**HEADER**\nint64\na\n1\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3: the typing header that starts at line 1 has no */HEADER/* end line (found "a")`},
		{"header cut short", []string{"**HEADER**\nint64\n"}, ReadOptions{}, ErrData,
			`no */HEADER/* end line (found the end of the file)`},
		{"unknown type", []string{"**HEADER**\nint64,int65\n*/HEADER/*\na,b\n1,2\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 2: unknown type "int65" in the typing header; the types are int64, uint64, float64, bool or str`},
		{"type count", []string{"**HEADER**\nint64\n*/HEADER/*\na,b\n1,2\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 2: the typing header has 1 types but line 4 names 2 columns ("a", "b")`},
		{"no names", []string{typed[:strings.Index(typed, "a,b")]}, ReadOptions{}, ErrData,
			`file "0.csv" line 4: the file ends before its column names line`},
		{"empty file", []string{""}, ReadOptions{}, ErrData, `file "0.csv" is empty: it has no column names line`},
		{"duplicate name", []string{"a,b,a\n"}, ReadOptions{}, ErrData, `file "0.csv" line 1: column name "a" appears twice`},
		{"other columns", []string{"a,b\n1,2\n", "a,c\n1,2\n"}, ReadOptions{}, ErrData,
			`file "1.csv" has columns "a", "c" but file "0.csv" has "a", "b"; files read together must have the same columns`},
		{"other types", []string{typed, "**HEADER**\nfloat64,str\n*/HEADER/*\na,b\n"}, ReadOptions{}, ErrData,
			`column "a" is int64 in file "0.csv" but float64 in file "1.csv"; give its type in DTypes to read both`},
		{"DTypes column", []string{"a,b\n"}, ReadOptions{DTypes: map[string]string{"c": "int64"}}, ErrValue,
			`DTypes gives a type for column "c", which file "0.csv" does not have; its columns are "a", "b"`},
		{"DTypes type", []string{"a,b\n"}, ReadOptions{DTypes: map[string]string{"a": "complex128"}}, ErrValue,
			`DTypes gives column "a" type "complex128"; the types are int64, uint64, float64, bool or str`},
		{"Columns entry", []string{"a,b\n"}, ReadOptions{Columns: []string{"b", "x"}}, ErrValue,
			`column "x" is not in file "0.csv"; its columns are "a", "b"`},
		{"Columns twice", []string{"a,b\n"}, ReadOptions{Columns: []string{"b", "b"}}, ErrValue, `Columns lists column "b" twice`},
		{"no closing quote", []string{"a,b\n1,2\n3,\"x\ny\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 3: a quoted field has no closing quote`},
		{"after closing quote", []string{"a,b\n1,\"x\"y\n"}, ReadOptions{}, ErrData,
			`file "0.csv" line 2: "y" follows a quoted field's closing quote; a quote inside a quoted field is written ""`},
		{"delimiter", []string{"a\n"}, ReadOptions{Delim: '"'}, ErrValue,
			`the delimiter must be one ASCII byte other than a quote or a line end, got '"'`},
		{"no files", nil, ReadOptions{}, ErrValue, "no files to read"},
		{"second file", []string{"a\n1\n", "a\n2\nx\n"}, ReadOptions{DTypes: map[string]string{"a": "int64"}}, ErrData,
			`file "1.csv" line 3 column "a": "x" is not an int64`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := make([]File, len(c.files))
			for i, f := range c.files {
				files[i] = File{Name: fmt.Sprintf("%d.csv", i), Data: []byte(f)}
			}
			for _, w := range []int{1, 4} {
				o := c.o
				o.Workers, o.minSpan = w, 1
				_, err := Read(files, o)
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("workers=%d: error %v, want an *Error", w, err)
				}
				if e.Kind != c.kind || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "csvio: ") {
					t.Fatalf("workers=%d: error (kind %d)\n%v\nwant (kind %d) one that holds\n%s", w, e.Kind, err, c.kind, c.want)
				}
			}
		})
	}
}

// TestAllocError: Alloc's refusal is an ErrMemory error that wraps it.
func TestAllocError(t *testing.T) {
	limit := errors.New("the server's limit leaves 0 B free")
	_, err := Read([]File{{Name: "t.csv", Data: []byte("a\nx\n")}}, ReadOptions{
		Alloc: func(pdarray.DType, int) (*pdarray.Array, error) { return nil, limit }})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrMemory || !errors.Is(err, limit) ||
		err.Error() != `csvio: column "a": 2 elements of int64: the server's limit leaves 0 B free` {
		t.Fatalf("error %v", err)
	}
	var asked []string
	_, err = Read([]File{{Name: "t.csv", Data: []byte("a,b\nx,1\n")}}, ReadOptions{DTypes: map[string]string{"b": "float64"},
		Alloc: func(d pdarray.DType, n int) (*pdarray.Array, error) {
			asked = append(asked, fmt.Sprint(d, n))
			return pdarray.Alloc(d, n)
		}})
	if err != nil || !reflect.DeepEqual(asked, []string{"int64 2", "float64 1", "uint8 1"}) {
		t.Fatalf("%v: Alloc asked for %v", err, asked)
	}
}

// TestQuotedLines: line numbers count the line ends inside quoted fields.
func TestQuotedLines(t *testing.T) {
	data := "**HEADER**\nstr,int64\n*/HEADER/*\n\"s\nt\",n\n\"a\nb\nc\",1\nd,2\n\"e\",x\n"
	_, err := Read([]File{{Name: "q.csv", Data: []byte(data)}}, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), `file "q.csv" line 10 column "n": "x" is not an int64`) {
		t.Fatalf("error %v", err)
	}
}

// TestReadKeepsNoReference: the columns are the file's values after its
// bytes are overwritten.
func TestReadKeepsNoReference(t *testing.T) {
	for _, data := range []string{"s,n\nabc,1\n", "s,n\n\"a\"\"c\",1\n"} {
		b := []byte(data)
		cols, err := Read([]File{{Name: "t", Data: b}}, ReadOptions{DTypes: map[string]string{"n": "int64"}})
		if err != nil {
			t.Fatal(err)
		}
		clear(b)
		if s := stringsOf(cols[0]); s[0] != "abc" && s[0] != `a"c` {
			t.Fatalf("column changed with the file: %q", s)
		}
	}
}

// bigFile is a typed file of n rows: int64, float64, str, bool; bad, if
// >= 0, is a row whose int is not one.
func bigFile(n int, bad int) []byte {
	rng := rand.New(rand.NewPCG(9, 10))
	var b bytes.Buffer
	b.WriteString("**HEADER**\nint64,float64,str,bool\n*/HEADER/*\nid,x,name,ok\n")
	var line []byte
	for i := range n {
		line = strconv.AppendInt(line[:0], rng.Int64N(1<<40)-1<<39, 10)
		if i == bad {
			line = append(line, 'q')
		}
		line = append(line, ',')
		line = appendPyFloat(line, rng.NormFloat64()*1e3, 64)
		line = append(line, ",w"...)
		line = strconv.AppendInt(line, int64(rng.IntN(100000)), 36)
		if rng.IntN(2) == 0 {
			line = append(line, "é"...)
		}
		if rng.IntN(2) == 0 {
			line = append(line, ",True\n"...)
		} else {
			line = append(line, ",0\n"...)
		}
		b.Write(line)
	}
	return b.Bytes()
}

// TestWorkersSame: 200k rows read the same on 1, 2 and 4 workers (spans
// of the default size and of 4 KiB), and a fault far into the file is
// the same error.
func TestWorkersSame(t *testing.T) {
	data := bigFile(200000, -1)
	files := []File{{Name: "big.csv", Data: data}}
	want, err := Read(files, ReadOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkColumns(t, want)
	if want[0].Rows() != 200000 {
		t.Fatalf("%d rows", want[0].Rows())
	}
	for _, w := range []int{2, 4} {
		for _, ms := range []int{0, 4096} {
			got, err := Read(files, ReadOptions{Workers: w, minSpan: ms})
			if err != nil {
				t.Fatal(err)
			}
			sameColumns(t, got, want)
		}
	}
	// Two files: each is split, rows one after another.
	got, err := Read([]File{files[0], files[0]}, ReadOptions{Workers: 4, Columns: []string{"name", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Rows() != 400000 || !reflect.DeepEqual(stringsOf(got[0])[200000:], stringsOf(want[2])) {
		t.Fatal("two files are not the rows of each one after another")
	}
	bad := bigFile(200000, 150001)
	var msgs []string
	for _, w := range []int{1, 4} {
		_, err := Read([]File{{Name: "big.csv", Data: bad}}, ReadOptions{Workers: w, minSpan: 4096})
		if err == nil {
			t.Fatal("no error")
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] || !strings.Contains(msgs[0], `file "big.csv" line 150006 column "id"`) {
		t.Fatalf("errors %q", msgs)
	}
}

// TestWriteWorkersSame: Write's bytes do not depend on the workers, over
// several rounds of chunks.
func TestWriteWorkersSame(t *testing.T) {
	cols := everyDType(chunkRows*9+5, rand.New(rand.NewPCG(11, 12)))
	want := write(t, cols, WriteOptions{Header: true, Workers: 1})
	for _, w := range []int{2, 4} {
		if got := write(t, cols, WriteOptions{Header: true, Workers: w}); !bytes.Equal(got, want) {
			t.Fatalf("workers=%d wrote other bytes", w)
		}
	}
	got := read(t, string(want), ReadOptions{Workers: 4})
	sameColumns(t, got, cols)
}

type failWriter struct{ n int }

var errDiskFull = errors.New("no space left on device")

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errDiskFull
	}
	return len(p), nil
}

// TestWriteErrors: what Write refuses, and a failing writer.
func TestWriteErrors(t *testing.T) {
	i64 := Column{Name: "n", Array: pdarray.FromSlice([]int64{1, 2})}
	cases := []struct {
		name string
		cols []Column
		o    WriteOptions
		want string
	}{
		{"delimiter in name", []Column{{Name: "a,b", Array: i64.Array}}, WriteOptions{}, `column name "a,b" holds the delimiter ',', a quote or a line end`},
		{"other delimiter", []Column{{Name: "a;b", Array: i64.Array}}, WriteOptions{Delim: ';'}, `column name "a;b" holds the delimiter ';'`},
		{"quote in name", []Column{{Name: `a"`, Array: i64.Array}}, WriteOptions{}, `column name "a\"" holds`},
		{"newline in name", []Column{{Name: "a\n", Array: i64.Array}}, WriteOptions{}, `column name "a\n" holds`},
		{"twice", []Column{i64, i64}, WriteOptions{}, `two columns are named "n"`},
		{"lengths", []Column{i64, strCol("s", []string{"x"})}, WriteOptions{}, `column "s" has 1 rows but column "n" has 2`},
		{"offsets fall", []Column{{Name: "s", Offsets: []int64{0, 2, 1}, Bytes: []byte("abc")}}, WriteOptions{}, `column "s": offset 2 (1) is below offset 1 (2)`},
		{"offsets out", []Column{{Name: "s", Offsets: []int64{0, 4}, Bytes: []byte("abc")}}, WriteOptions{}, `column "s": offsets run from 0 to 4, outside its 3 bytes`},
		{"no columns", nil, WriteOptions{}, "no columns to write"},
		{"delim", []Column{i64}, WriteOptions{Delim: '\n'}, "the delimiter must be"},
		{"header name", []Column{{Name: "**HEADER**", Array: i64.Array}}, WriteOptions{}, "would read as one with it"},
	}
	for _, c := range cases {
		err := Write(io.Discard, c.cols, c.o)
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrValue || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
	big := everyDType(chunkRows*5, rand.New(rand.NewPCG(1, 3)))
	for n := range 4 {
		err := Write(&failWriter{n: n}, big, WriteOptions{Header: true, Workers: 2})
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrIO || !errors.Is(err, errDiskFull) {
			t.Errorf("after %d writes: error %v", n, err)
		}
	}
	// Offsets that do not start at 0 (a slice of a larger column) write.
	got := write(t, []Column{{Name: "s", Offsets: []int64{1, 2, 3}, Bytes: []byte("abc")}}, WriteOptions{})
	if string(got) != "s\nb\nc\n" {
		t.Fatalf("wrote %q", got)
	}
}

// TestPow10Table: entries of Go's own table (internal/strconv/pow10tab.go).
func TestPow10Table(t *testing.T) {
	for e, want := range map[int][2]uint64{
		-348: {0x1732C869CD60E453, 0xFA8FD5A0081C0288},
		0:    {0x0000000000000000, 0x8000000000000000},
		43:   {0x6D9CCD05D0000000, 0xE596B7B0C643C719},
		347:  {0x4B7195F2D2D1A9FB, 0xD13EB46469447567},
	} {
		if got := pow10Table[e-pow10MinExp]; got != want {
			t.Errorf("1e%d: %#x, want %#x", e, got, want)
		}
	}
}

// TestParseDecimal: the fast parser gives strconv's float, bit for bit,
// or leaves it to strconv; on random floats in every form and on the
// hard cases.
func TestParseDecimal(t *testing.T) {
	hard := []string{"9007199254740993", "9007199254740992.5", "2.2250738585072011e-308", "2.2250738585072014e-308",
		"4.9406564584124654e-324", "1e23", "8.41e21", "1.7976931348623157e308", "1.7976931348623159e308",
		"0.000000000000000000000000000000000000000000001", "123456789012345678901", "1e-400", "1e400", "-0",
		"0e999999", "1e-999999", "00000000000000000000000000001.5", "1.00000000000000011102230246251565404236316680908203125",
		"7.3177701707893310e+15", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", ".5", "5.", "+.5e+1"}
	rng := rand.New(rand.NewPCG(13, 14))
	for range 1000000 {
		f := math.Float64frombits(rng.Uint64())
		switch rng.IntN(4) {
		case 0:
			hard = append(hard, strconv.FormatFloat(f, 'e', -1, 64))
		case 1:
			hard = append(hard, strconv.FormatFloat(f, 'g', rng.IntN(20)+1, 64))
		case 2:
			hard = append(hard, strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(30)-15)), 'f', -1, 64))
		default:
			hard = append(hard, strconv.FormatUint(rng.Uint64()>>rng.IntN(64), 10)+"e"+strconv.Itoa(rng.IntN(700)-350))
		}
	}
	fast := 0
	for _, s := range hard {
		want, werr := strconv.ParseFloat(s, 64)
		got, ok := parseDecimal([]byte(s))
		if ok {
			fast++
			if werr != nil || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("parseDecimal(%q) = %v (%b), strconv %v (%b) %v", s, got, got, want, want, werr)
			}
		}
		if got, ok := parseFloat64([]byte(s)); !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFloat64(%q) = %v %v, want %v", s, got, ok, want)
		}
	}
	if fast < len(hard)*9/10 {
		t.Fatalf("the fast path read only %d of %d", fast, len(hard))
	}
}

// FuzzParseDecimal: on any text, the fast float parser agrees with
// strconv where it answers, and the integer parsers always do.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"1.5", "-0.0", "1e23", "9007199254740993", ".5e-3", "1_0", "0x1p3", "inf",
		"-9223372036854775808", "123456789012345678", "+00000000123", "18446744073709551615", "12345678.12345678e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, iok := parseInt64([]byte(s))
		if wi, err := strconv.ParseInt(s, 10, 64); iok != (err == nil) || iok && i != wi {
			t.Fatalf("parseInt64(%q) = %d %v, strconv %d %v", s, i, iok, wi, err)
		}
		u, uok := parseUint64([]byte(s))
		if wu, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 64); uok != (err == nil) || uok && u != wu {
			t.Fatalf("parseUint64(%q) = %d %v, strconv %d %v", s, u, uok, wu, err)
		}
		got, ok := parseDecimal([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseDecimal(%q) = %b, strconv %b %v", s, got, want, err)
		}
	})
}

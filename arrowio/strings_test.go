package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/arktos-dev/arktos/pdarray"
)

// stringFile writes a Parquet file of one string column "s" (optional when
// nulls is set: row i is null where nulls(i)) and an int64 column "i",
// in row groups of rg rows, dictionary-encoded or plain.
func stringFile(t testing.TB, vals []string, rg int, dict bool, nulls func(int) bool) []byte {
	t.Helper()
	rep := parquet.Repetitions.Required
	if nulls != nil {
		rep = parquet.Repetitions.Optional
	}
	s, err := schema.NewPrimitiveNodeLogical("s", rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{
		s, schema.NewInt64Node("i", parquet.Repetitions.Required, -1)}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict), parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDataPageSize(512)) // several pages a row group
	w := file.NewParquetWriter(&buf, root, file.WithWriterProps(props))
	for lo := 0; lo < len(vals); lo += rg {
		hi := min(lo+rg, len(vals))
		g, err := w.AppendRowGroupChecked()
		if err != nil {
			t.Fatal(err)
		}
		cw, err := g.NextColumn()
		if err != nil {
			t.Fatal(err)
		}
		var batch []parquet.ByteArray
		var defs []int16
		for i := lo; i < hi; i++ {
			if nulls != nil && nulls(i) {
				defs = append(defs, 0)
				continue
			}
			if nulls != nil {
				defs = append(defs, 1)
			}
			batch = append(batch, parquet.ByteArray(vals[i]))
		}
		if _, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(batch, defs, nil); err != nil {
			t.Fatal(err)
		}
		cw.Close()
		cw, _ = g.NextColumn()
		ids := make([]int64, hi-lo)
		for i := range ids {
			ids[i] = int64(lo + i)
		}
		cw.(*file.Int64ColumnChunkWriter).WriteBatch(ids, nil, nil)
		cw.Close()
		g.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadStrings: string columns come back as codes into their sorted
// distinct strings, for dictionary and plain pages, one or several row
// groups and files, 1 and 3 workers; units whose own numbering is not the
// sorted one are renumbered (counted), and nulls are refused by name.
// stringVals are the string readers' test rows: repeats, empties, NULs,
// multi-byte runes and one value larger than a page.
func stringVals() []string {
	words := []string{"Zoë", "JFK", "", "Midtown", "midtown", "日本", "a", "JFK ", "\x00x", "B"}
	vals := make([]string, 3000)
	for i := range vals {
		vals[i] = words[(i*7+i/13)%len(words)]
	}
	vals[2999] = strings.Repeat("long ", 400) // a value larger than a page
	return vals
}

// stringLayouts are the files the string readers are tested on: vals in
// dictionary and plain pages, one or several row groups and files.
var stringLayouts = []struct {
	name  string
	rg    int
	dict  bool
	files int
}{{"dict-1rg", 3000, true, 1}, {"dict-7rg", 430, true, 1}, {"plain-5rg", 600, false, 1}, {"two-files", 1000, true, 2}}

// stringSources writes vals as files of rg-row groups (dictionary pages
// with dict), split over files files.
func stringSources(t *testing.T, vals []string, rg int, dict bool, files int) []ParquetSource {
	var srcs []ParquetSource
	per := len(vals) / files
	for f := range files {
		b := stringFile(t, vals[f*per:(f+1)*per], rg, dict, nil)
		srcs = append(srcs, ParquetSource{Name: fmt.Sprintf("f%d", f), R: bytes.NewReader(b)})
	}
	return srcs
}

func TestReadStrings(t *testing.T) {
	vals := stringVals()
	for _, c := range stringLayouts {
		t.Run(c.name, func(t *testing.T) {
			srcs := stringSources(t, vals, c.rg, c.dict, c.files)
			p, err := OpenParquet(srcs, []string{"s", "i"}, NullPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if len(p.Strings) != 1 || len(p.Columns) != 1 || p.Strings[0].Rows != len(vals) {
				t.Fatalf("plan: %d strings, %d columns, rows %d", len(p.Strings), len(p.Columns), p.Strings[0].Rows)
			}
			if p.StringScratch(0) <= 0 {
				t.Errorf("scratch %d", p.StringScratch(0))
			}
			want := slices.Clone(vals)
			slices.Sort(want)
			want = slices.Compact(want)
			for _, workers := range []int{1, 3} {
				codes := make([]int32, len(vals))
				for i := range codes {
					codes[i] = -7 // every code is written
				}
				renumbered, hits := StringStats.Renumbered.Load(), StringStats.CacheHits.Load()
				cats, err := p.ReadStrings(0, codes, workers)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(cats, want) {
					t.Fatalf("categories %q, want %q", cats, want)
				}
				for i, code := range codes {
					if code < 0 || int(code) >= len(cats) || cats[code] != vals[i] {
						t.Fatalf("row %d: code %d, want %q", i, code, vals[i])
					}
				}
				if StringStats.Renumbered.Load() == renumbered {
					t.Error("no unit was renumbered: the units' first-seen order is not sorted here")
				}
				// Dictionary pages' values share their entry's address: the
				// cache answers most rows (plain pages' values seldom).
				if got := StringStats.CacheHits.Load() - hits; c.dict && got < uint64(len(vals))/2 {
					t.Errorf("the address cache answered %d of %d rows of dictionary pages", got, len(vals))
				}
			}
		})
	}
	// Nulls are refused, naming the column and what to do.
	b := stringFile(t, vals[:100], 100, true, func(i int) bool { return i%9 == 4 })
	p, err := OpenParquet([]ParquetSource{{Name: "nulls", R: bytes.NewReader(b)}}, []string{"s"}, NullPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.ReadStrings(0, make([]int32, 100), 2)
	var ae *Error
	if !errors.As(err, &ae) || ae.Kind != ErrData || !strings.Contains(ae.Msg, `string column "s" has nulls`) || !strings.Contains(ae.Msg, "null_string=") {
		t.Fatalf("nulls: %v", err)
	}
	// With a null string they are read as it (dictionary and plain pages,
	// row groups and batches cut across the nulls).
	for _, dict := range []bool{true, false} {
		isNull := func(i int) bool { return i%9 == 4 || i >= 300 && i < 310 }
		b := stringFile(t, vals[:500], 70, dict, isNull)
		na := "N/A"
		p, err := OpenParquet([]ParquetSource{{Name: "nulls", R: bytes.NewReader(b)}}, []string{"s"}, NullPolicy{NullString: &na})
		if err != nil {
			t.Fatal(err)
		}
		codes := make([]int32, 500)
		cats, err := p.ReadStrings(0, codes, 2)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range codes {
			want := vals[i]
			if isNull(i) {
				want = na
			}
			if cats[c] != want {
				t.Fatalf("dict %v: row %d read %q, want %q", dict, i, cats[c], want)
			}
		}
		if !slices.IsSorted(cats) || !slices.Contains(cats, na) {
			t.Errorf("categories %q", cats)
		}
	}
	if _, err := OpenParquet([]ParquetSource{{Name: "n", R: bytes.NewReader(b)}}, nil, NullPolicy{NullString: new("\xff")}); err == nil || !strings.Contains(err.Error(), "null_string") {
		t.Errorf("a null string that is not UTF-8: %v", err)
	}
	// A file whose "s" is not a string column cannot join a read of one.
	other := stringFile(t, vals[:10], 10, true, nil)
	_, err = OpenParquet([]ParquetSource{{Name: "a", R: bytes.NewReader(other)}, {Name: "b", R: openFixtures(t, "plain.parquet")[0].R}}, []string{"s"}, NullPolicy{})
	if !errors.As(err, &ae) || ae.Kind != ErrData {
		t.Fatalf("mixed files: %v", err)
	}
}

// TestReadManyStrings: a column of tens of thousands of distinct strings
// (the merge by hash shard, tables that grow, chunks filled and values of
// chunks of their own) reads as sort and compact give, whatever the
// strings' lengths and shared prefixes, at 1, 2 and 5 workers.
func TestReadManyStrings(t *testing.T) {
	var words []string
	for i := range 20000 {
		switch i % 5 {
		case 0:
			words = append(words, fmt.Sprintf("%d", i)) // short
		case 1:
			words = append(words, fmt.Sprintf("prefix00-%d", i)) // 8 bytes shared
		case 2:
			words = append(words, fmt.Sprintf("abcdefg%c", rune('a'+i%26))+strings.Repeat("x", i%40))
		case 3:
			words = append(words, strings.Repeat("\x00", i%9)+fmt.Sprint(i%3)) // NULs: "0" and "\x000" differ
		case 4:
			words = append(words, fmt.Sprintf("ü%05d", i))
		}
	}
	words = append(words, "", "a", "a\x00", "a\x00\x00", strings.Repeat("big", 20000)) // the last over strChunk/8
	vals := make([]string, 60000)
	for i := range vals {
		vals[i] = words[(i*7919)%len(words)]
	}
	want := slices.Compact(slices.Sorted(slices.Values(vals)))
	for _, dict := range []bool{true, false} {
		p, err := OpenParquet([]ParquetSource{{Name: "many", R: bytes.NewReader(stringFile(t, vals, 15000, dict, nil))}}, []string{"s"}, NullPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2, 5} {
			codes := make([]int32, len(vals))
			cats, err := p.ReadStrings(0, codes, workers)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cats, want) {
				t.Fatalf("dict %v, %d workers: %d categories, want %d", dict, workers, len(cats), len(want))
			}
			for i, c := range codes {
				if cats[c] != vals[i] {
					t.Fatalf("dict %v, %d workers: row %d is %q, want %q", dict, workers, i, cats[c], vals[i])
				}
			}
		}
		p.Close()
	}
}

// TestStrTable: strings of one hash are told apart by length, their first
// 8 bytes and the rest, and found again after the table grows.
func TestStrTable(t *testing.T) {
	strs := []string{"", "a", "a\x00", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefghj", "abcdefgi", strings.Repeat("z", 300), strings.Repeat("z", 301)}
	for i := range 3000 {
		strs = append(strs, fmt.Sprintf("abcdefgh-%d", i))
	}
	var set strSet
	var tb strTable
	tb.reset(0)
	const h = 0x1234_5678_9abc_def0 // every string's
	for i, s := range strs {
		key, pre := strKey(h, len(s)), prefix8(s)
		if id := tb.find(h, key, pre, s, set.str); id != -1 {
			t.Fatalf("%q found as %q before it was put", s, set.str(id))
		}
		id := set.add(s, h, pre)
		tb.put(h, key, pre, id, set.hashes)
		if int(id) != i {
			t.Fatalf("id %d, want %d", id, i)
		}
	}
	if len(tb.slots) < 2*len(strs) {
		t.Fatalf("%d slots for %d strings", len(tb.slots), len(strs))
	}
	for i, s := range strs {
		if id := tb.find(h, strKey(h, len(s)), prefix8(s), s, set.str); int(id) != i || set.str(id) != s {
			t.Fatalf("%q: id %d, want %d", s, id, i)
		}
	}
	if prefix8("a") >= prefix8("a\x00b") || prefix8("ab") >= prefix8("a\xff") {
		t.Error("prefix8 does not order as bytes")
	}
}

// TestStringFixture: the pyarrow-written fixture's "s" (s0..s199) is
// readable now, listed as a string column, beside its unsupported ones.
func TestStringFixture(t *testing.T) {
	p, err := OpenParquet(openFixtures(t, "unsupported.parquet"), []string{"s", "i64"}, NullPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	codes := make([]int32, p.Rows)
	cats, err := p.ReadStrings(0, codes, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range codes {
		if cats[c] != fmt.Sprintf("s%d", i) {
			t.Fatalf("row %d: %q", i, cats[c])
		}
	}
	_, err = OpenParquet(openFixtures(t, "unsupported.parquet"), nil, NullPolicy{})
	var ae *Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "s (string)") {
		t.Fatalf("the readable columns should list s (string): %v", err)
	}
}

// FuzzReadStrings: a string column's file with one byte changed is read
// or refused with an error, never a panic, a hang or a code out of range.
func FuzzReadStrings(f *testing.F) {
	words := []string{"Zoë", "JFK", "", "Midtown", "a"}
	vals := make([]string, 400)
	for i := range vals {
		vals[i] = words[i*3%len(words)]
	}
	f.Add(stringFile(f, vals, 150, true, nil), uint32(200), byte(0x55))
	f.Add(stringFile(f, vals, 400, false, nil), uint32(900), byte(1))
	f.Add(stringFile(f, vals, 100, true, func(i int) bool { return i%7 == 0 }), uint32(77), byte(0x80))
	if raw, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "unsupported.parquet")); err == nil {
		f.Add(raw, uint32(len(raw)/3), byte(0x20))
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint32, x byte) {
		if len(data) < 16 {
			return
		}
		d := bytes.Clone(data)
		d[4+int(at)%(len(d)-8)] ^= x // the magic bytes and footer length left alone
		na := "N/A"                  // (the nulls read too)
		p, err := OpenParquet([]ParquetSource{{Name: "fuzz", R: bytes.NewReader(d)}}, nil, NullPolicy{Mode: "mask", NullString: &na})
		if err != nil || p.Rows > 1<<20 {
			return
		}
		defer p.Close()
		for i := range p.Strings {
			codes := make([]int32, p.Strings[i].Rows)
			cats, err := p.ReadStrings(i, codes, 2)
			if err == nil {
				codesInRange(t, codes, len(cats))
			}
			// As it is (offsets and bytes): no panic, offsets in order.
			off := make([]int64, p.Strings[i].Rows+1)
			data, err := p.ReadStringsRaw(i, off, func(n int) ([]byte, error) { return make([]byte, n), nil },
				func(int64) error { return nil }, 2)
			if err == nil && (!slices.IsSorted(off) || off[len(off)-1] != int64(len(data))) {
				t.Fatalf("offsets out of order or not ending at %d", len(data))
			}
		}
	})
}

// catsOf gives the Categories of sorted distinct strings.
func catsOf(strs []string) *Categories {
	c := &Categories{Offsets: []int64{0}}
	for _, s := range strs {
		c.Bytes = append(c.Bytes, s...)
		c.Offsets = append(c.Offsets, int64(len(c.Bytes)))
	}
	return c
}

// TestWriteStrings: a string column written from codes and categories
// reads back as the same strings (by ReadStrings, and by arrow-go's own
// reader of the values), for every code dtype; a row group whose strings
// fit a dictionary page is dictionary-encoded with only the strings its
// rows use, one that does not (or dictionary "off") is plain.
func TestWriteStrings(t *testing.T) {
	var small []string
	for i := range 300 {
		small = append(small, fmt.Sprintf("zone_%03d", i))
	}
	small = append(small, "", "Zoë", "日本", "a\x00b")
	slices.Sort(small)
	var big []string // 40 KiB each: 30 of them overflow a dictionary page
	for i := range 60 {
		big = append(big, fmt.Sprintf("%02d", i)+strings.Repeat("x", 40<<10))
	}
	var wide []string // 2000 bytes each: a row group's pages are 2 MB raw
	for i := range 100 {
		wide = append(wide, fmt.Sprintf("w%02d", i)+strings.Repeat("y", 1997))
	}
	n := 5000
	for _, c := range []struct {
		name  string
		cats  []string
		dtype pdarray.DType
		dict  string
		plain bool
	}{{"int8-dict", small[:100], pdarray.Int8, "auto", false}, {"int16-dict", small, pdarray.Int16, "auto", false},
		{"int16-pages", wide, pdarray.Int16, "auto", false},
		{"int32-off", small, pdarray.Int32, "off", true}, {"uint16-dict", small, pdarray.Uint16, "auto", false},
		{"uint8-dict", small[:200], pdarray.Uint8, "on", false}, {"int64-big", big, pdarray.Int64, "on", true}} {
		t.Run(c.name, func(t *testing.T) {
			codes := make([]int64, n)
			for i := range codes {
				codes[i] = int64((i*37 + i/100) % len(c.cats))
			}
			if c.name == "int16-dict" {
				for i := range 1000 { // the first row group uses only a few strings
					codes[i] = int64(i % 3 * 50)
				}
			}
			a, err := pdarray.Alloc(c.dtype, n)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range codes {
				switch c.dtype {
				case pdarray.Int8:
					pdarray.View[int8](a)[i] = int8(v)
				case pdarray.Int16:
					pdarray.View[int16](a)[i] = int16(v)
				case pdarray.Int32:
					pdarray.View[int32](a)[i] = int32(v)
				case pdarray.Int64:
					pdarray.View[int64](a)[i] = v
				case pdarray.Uint8:
					pdarray.View[uint8](a)[i] = uint8(v)
				case pdarray.Uint16:
					pdarray.View[uint16](a)[i] = uint16(v)
				}
			}
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(i)
			}
			cols := []Column{{Name: "i", A: pdarray.FromSlice(ids)}, {Name: "s", A: a, Cats: catsOf(c.cats)}}
			if ParquetWriteScratch(cols, ParquetWriteOptions{RowGroupSize: 1000}) < int64(n)*4 {
				t.Error("the scratch estimate leaves out the string column")
			}
			dict0, plain0 := StringWriteStats.DictChunks.Load(), StringWriteStats.PlainChunks.Load()
			var buf bytes.Buffer
			if err := WriteParquet(&buf, cols, ParquetWriteOptions{RowGroupSize: 1000, Dictionary: c.dict, Workers: 2}); err != nil {
				t.Fatal(err)
			}
			dict, plain := StringWriteStats.DictChunks.Load()-dict0, StringWriteStats.PlainChunks.Load()-plain0
			if c.plain && (plain != 5 || dict != 0) || !c.plain && (dict != 5 || plain != 0) {
				t.Errorf("%d dictionary and %d plain chunks", dict, plain)
			}
			// arrow-go's reader of the values, row by row.
			fr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			row := 0
			for rg := range fr.NumRowGroups() {
				if c.name == "int16-dict" && rg == 0 {
					if d, ok := fr.MetaData().RowGroup(0).ColumnChunk(1); ok == nil {
						if st, _ := d.Statistics(); st != nil {
							if mn := string(st.(*metadata.ByteArrayStatistics).Min()); mn != c.cats[0] {
								t.Errorf("row group 0's min %q, want %q", mn, c.cats[0])
							}
						}
					}
				}
				checkPageStats(t, fr.RowGroup(rg), c.cats, codes[rg*1000:(rg+1)*1000], c.name == "int16-pages")
				cr, err := fr.RowGroup(rg).Column(1)
				if err != nil {
					t.Fatal(err)
				}
				vals := make([]parquet.ByteArray, 1000)
				got, _, err := cr.(*file.ByteArrayColumnChunkReader).ReadBatch(1000, vals, nil, nil)
				if err != nil || got != 1000 {
					t.Fatalf("row group %d: %d values, %v", rg, got, err)
				}
				for _, v := range vals {
					if string(v) != c.cats[codes[row]] {
						t.Fatalf("row %d: %.20q, want %.20q", row, v, c.cats[codes[row]])
					}
					row++
				}
			}
			fr.Close()
			// And ReadStrings: the codes back into the used strings.
			p, err := OpenParquet([]ParquetSource{{Name: "w", R: bytes.NewReader(buf.Bytes())}}, []string{"s"}, NullPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			back := make([]int32, n)
			cats, err := p.ReadStrings(0, back, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i, code := range back {
				if cats[code] != c.cats[codes[i]] {
					t.Fatalf("row %d read back as %.20q", i, cats[code])
				}
			}
		})
	}
	// Refusals name the column and what is wrong; nothing is written.
	codes := pdarray.FromSlice([]int32{0, 1, 2})
	for _, c := range []struct {
		col  Column
		want string
	}{
		{Column{Name: "s", A: codes, Cats: catsOf([]string{"a", "b"})}, "row 2 has code 2, outside its 2 categories"},
		{Column{Name: "s", A: pdarray.FromSlice([]int32{0, -1, 0}), Cats: catsOf([]string{"a"})}, "row 1 has code -1"},
		{Column{Name: "s", A: pdarray.FromSlice([]uint64{0, 1 << 63}), Cats: catsOf([]string{"a"})}, "row 1 has code"},
		{Column{Name: "s", A: pdarray.FromSlice([]uint8{0, 255}), Cats: catsOf([]string{"a"})}, "row 1 has code 255"},
		{Column{Name: "s", A: codes, Cats: &Categories{Bytes: []byte("abc"), Offsets: []int64{0, 1, 2, 4}}}, "do not add up"},
		{Column{Name: "s", A: codes, Cats: catsOf([]string{"a", "\xff", "c"})}, "category 1 is not UTF-8"},
		{Column{Name: "s", A: codes, Cats: catsOf([]string{"a", "c", "b"})}, `categories 1 and 2 ("c", "b") are not distinct and sorted`},
		{Column{Name: "s", A: codes, Cats: catsOf([]string{"a", "a", "b"})}, "not distinct and sorted"},
		{Column{Name: "s", A: pdarray.FromSlice([]float64{0, 1, 2}), Cats: catsOf([]string{"a", "b", "c"})}, "codes must be integers"},
	} {
		var buf bytes.Buffer
		err := WriteParquet(&buf, []Column{c.col}, ParquetWriteOptions{})
		var ae *Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, c.want) || !strings.Contains(ae.Msg, `"s"`) || buf.Len() != 0 {
			t.Errorf("want %q: %v (%d bytes written)", c.want, err, buf.Len())
		}
	}
}

// checkPageStats: every data page of a row group's string column (column
// 1) has the least and greatest strings of its own rows as min and max
// (the codes are sorted as the strings are), and the chunk those of all
// its rows; many asks for more than one data page.
func checkPageStats(t *testing.T, rg *file.RowGroupReader, cats []string, codes []int64, many bool) {
	t.Helper()
	want := func(codes []int64) (string, string) {
		return cats[slices.Min(codes)], cats[slices.Max(codes)]
	}
	cc, err := rg.MetaData().ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		t.Fatalf("no chunk statistics: %v", err)
	}
	lo, hi := want(codes)
	bs := st.(*metadata.ByteArrayStatistics)
	if len(lo) <= 4096 && (string(bs.Min()) != lo || string(bs.Max()) != hi) {
		t.Errorf("chunk min, max %.12q, %.12q, want %.12q, %.12q", bs.Min(), bs.Max(), lo, hi)
	}
	pr, err := rg.GetColumnPageReader(1)
	if err != nil {
		t.Fatal(err)
	}
	row, pages := 0, 0
	for pr.Next() {
		dp, ok := pr.Page().(file.DataPage)
		if !ok {
			continue
		}
		pages++
		n := int(dp.NumValues())
		lo, hi := want(codes[row : row+n])
		ps := dp.Statistics()
		if len(lo) <= 4096 && (!ps.HasMin || !ps.HasMax || string(ps.Min) != lo || string(ps.Max) != hi) {
			t.Errorf("page %d (rows %d:%d): min, max %.12q, %.12q, want %.12q, %.12q", pages, row, row+n, ps.Min, ps.Max, lo, hi)
		}
		row += n
	}
	if err := pr.Err(); err != nil {
		t.Fatal(err)
	}
	if row != len(codes) || many && pages < 2 {
		t.Errorf("%d pages of %d rows, want %d rows", pages, row, len(codes))
	}
}

// TestCompressionLevel: a level reaches the codec (zstd 19 writes a
// smaller file than 1 of the same compressible strings; both read back the
// same), and levels the codec lacks are refused naming the range.
func TestCompressionLevel(t *testing.T) {
	var strs []string
	for i := range 5000 {
		strs = append(strs, fmt.Sprintf("category-%06d-of-a-long-and-repetitive-name", i))
	}
	codes := make([]int32, 200_000)
	for i := range codes {
		codes[i] = int32(i * 7919 % len(strs))
	}
	cols := []Column{{Name: "s", A: pdarray.FromSlice(codes), Cats: catsOf(strs)}}
	size := func(level int) int {
		var buf bytes.Buffer
		if err := WriteParquet(&buf, cols, ParquetWriteOptions{Compression: "zstd", CompressionLevel: level, Dictionary: "off"}); err != nil {
			t.Fatal(err)
		}
		return buf.Len()
	}
	if fast, small := size(1), size(19); small >= fast {
		t.Errorf("zstd level 19 wrote %d bytes, level 1 %d", small, fast)
	}
	for _, c := range []struct {
		codec string
		level int
		want  string
	}{{"zstd", 23, "compression_level 23 is outside zstd's 1..22"}, {"gzip", -1, "outside gzip's 1..9"},
		{"snappy", 3, `compression "snappy" has no levels`}, {"none", 1, "has no levels"}} {
		err := WriteParquet(io.Discard, cols, ParquetWriteOptions{Compression: c.codec, CompressionLevel: c.level})
		var ae *Error
		if !errors.As(err, &ae) || ae.Kind != ErrValue || !strings.Contains(ae.Msg, c.want) {
			t.Errorf("%s level %d: %v", c.codec, c.level, err)
		}
	}
}

// ipcFile writes record batches of one column "s" (and "i", the row
// numbers) with arrow-go's own IPC writer.
func ipcFile(t testing.TB, typ arrow.DataType, batches ...arrow.Array) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: typ, Nullable: true}}, nil)
	var buf bytes.Buffer
	fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(sc))
	if err != nil {
		t.Fatal(err)
	}
	row := int64(0)
	for _, b := range batches {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		for range b.Len() {
			ib.Append(row)
			row++
		}
		ids := ib.NewArray()
		rec := array.NewRecordBatch(sc, []arrow.Array{ids, b}, int64(b.Len()))
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		ids.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readIPCStrings reads column "s" of an IPC file as codes and sorted
// strings, and gives each row's string.
func readIPCStrings(t *testing.T, raw []byte, policy ...NullPolicy) ([]string, error) {
	t.Helper()
	pol := NullPolicy{}
	if len(policy) > 0 {
		pol = policy[0]
	}
	p, err := OpenArrowIPC("t.arrow", bytes.NewReader(raw), []string{"s"}, pol, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if len(p.Strings) != 1 || len(p.Columns) != 0 || p.StringScratch(0) <= 0 {
		t.Fatalf("plan: %+v", p)
	}
	codes := make([]int32, p.Rows)
	cats, err := p.ReadStrings(0, codes, 2)
	if err != nil {
		return nil, err
	}
	if !slices.IsSorted(cats) || len(slices.Compact(slices.Clone(cats))) != len(cats) {
		t.Errorf("categories not sorted and distinct: %q", cats)
	}
	out := make([]string, len(codes))
	seen := make([]bool, len(cats))
	for i, c := range codes {
		out[i] = strings.Clone(cats[c])
		seen[c] = true
	}
	if i := slices.Index(seen, false); i >= 0 {
		t.Errorf("category %q is used by no row", cats[i])
	}
	return out, nil
}

// TestIPCStrings: utf8, large_utf8 and dictionary-encoded string columns
// (a dictionary unsorted, with repeats, shared by every batch; unsigned
// indices) read as codes into their sorted distinct strings; a Categorical
// written to IPC is a dictionary column of its categories, written once,
// that arrow-go reads as the same strings; nulls and bytes that are not
// UTF-8 are refused naming the column.
func TestIPCStrings(t *testing.T) {
	words := []string{"b", "", "Zoë", "a", "b", "日本", "a\x00b"}
	var want []string
	sb, lb := array.NewStringBuilder(memory.DefaultAllocator), array.NewLargeStringBuilder(memory.DefaultAllocator)
	var plain, large []arrow.Array
	for batch := range 3 {
		for j := range 1000 {
			w := words[(batch*1000+j)*7%len(words)]
			if j%20 == 0 { // (few distinct: numbered on the workers, then merged)
				w = fmt.Sprintf("u%d", batch*1000+j)
			}
			want = append(want, w)
			sb.Append(w)
			lb.Append(w)
		}
		plain, large = append(plain, sb.NewArray()), append(large, lb.NewArray())
	}
	for _, c := range []struct {
		name string
		typ  arrow.DataType
		bs   []arrow.Array
	}{{"utf8", arrow.BinaryTypes.String, plain}, {"large_utf8", arrow.BinaryTypes.LargeString, large}} {
		par0 := IPCStringStats.ParallelPlain.Load()
		got, err := readIPCStrings(t, ipcFile(t, c.typ, c.bs...))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v (%d rows)", c.name, err, len(got))
		}
		if IPCStringStats.ParallelPlain.Load() != par0+1 { // (3 batches, 2 workers)
			t.Errorf("%s: numbered on one worker", c.name)
		}
	}
	// A dictionary in no order, with a repeat, an entry no row uses and
	// uint16 indices.
	dict := []string{"b", "", "Zoë", "a", "b", "日本", "unused"}
	dictArr := func() arrow.Array {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		b.AppendValues(dict, nil)
		return b.NewArray()
	}()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.String}
	var dbs []arrow.Array
	want = want[:0]
	for batch := range 3 {
		ib := array.NewUint16Builder(memory.DefaultAllocator)
		for j := range 500 {
			k := (batch*500 + j*3) % (len(dict) - 1)
			ib.Append(uint16(k))
			want = append(want, dict[k])
		}
		dbs = append(dbs, array.NewDictionaryArray(dt, ib.NewArray(), dictArr))
	}
	if got, err := readIPCStrings(t, ipcFile(t, dt, dbs...)); err != nil || !slices.Equal(got, want) {
		t.Errorf("dictionary: %v (%d rows)", err, len(got))
	}
	// A Categorical written and read back; the dictionary goes once.
	strs := []string{"", "Zoë", "a", "b", "日本"}
	codes := make([]int16, 2500)
	want = want[:0]
	for i := range codes {
		codes[i] = int16(i * 3 % len(strs))
		want = append(want, strs[codes[i]])
	}
	var buf bytes.Buffer
	cols := []Column{{Name: "i", A: pdarray.FromSlice(make([]int64, len(codes)))}, {Name: "s", A: pdarray.FromSlice(codes), Cats: catsOf(strs)}}
	if err := WriteArrowIPC(&buf, cols, IPCWriteOptions{BatchRows: 1000, Compression: "zstd"}); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if fr.NumDictionaries() != 1 || fr.NumRecords() != 3 {
		t.Errorf("%d dictionaries, %d batches", fr.NumDictionaries(), fr.NumRecords())
	}
	for r := range fr.NumRecords() {
		rec, _ := fr.RecordBatchAt(r)
		d := rec.Column(1).(*array.Dictionary)
		for j := range d.Len() {
			if s := d.Dictionary().(*array.String).Value(d.GetValueIndex(j)); s != want[r*1000+j] {
				t.Fatalf("batch %d row %d: %q", r, j, s)
			}
		}
	}
	fr.Close()
	sorted0 := IPCStringStats.SortedDictionaries.Load()
	if got, err := readIPCStrings(t, buf.Bytes()); err != nil || !slices.Equal(got, want) {
		t.Errorf("written Categorical: %v", err)
	}
	if IPCStringStats.SortedDictionaries.Load() != sorted0+1 {
		t.Error("the written Categorical's sorted dictionary was hashed and sorted again")
	}
	// A sorted dictionary with entries no row uses: they are left out.
	sortedDict := func() arrow.Array {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		b.AppendValues([]string{"", "a", "b", "c", "d"}, nil)
		return b.NewArray()
	}()
	sdt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	ib := array.NewInt8Builder(memory.DefaultAllocator)
	ib.AppendValues([]int8{3, 1, 3, 4, 1}, nil)
	sorted0 = IPCStringStats.SortedDictionaries.Load()
	if got, err := readIPCStrings(t, ipcFile(t, sdt, array.NewDictionaryArray(sdt, ib.NewArray(), sortedDict))); err != nil ||
		!slices.Equal(got, []string{"c", "a", "c", "d", "a"}) || IPCStringStats.SortedDictionaries.Load() != sorted0+1 {
		t.Errorf("sorted dictionary with unused entries: %q %v", got, err)
	}
	// Refusals.
	nb := array.NewStringBuilder(memory.DefaultAllocator)
	nb.AppendValues([]string{"a", "b"}, nil)
	nb.AppendNull()
	withNulls := ipcFile(t, arrow.BinaryTypes.String, nb.NewArray())
	if _, err := readIPCStrings(t, withNulls); err == nil || !strings.Contains(err.Error(), `string column "s" has nulls`) {
		t.Errorf("nulls: %v", err)
	}
	// With a null string: plain, a null index, a null dictionary entry
	// (a null slot's bytes are not a category: every category is used).
	na := "N/A"
	readNA := func(raw []byte) []string {
		t.Helper()
		got, err := readIPCStrings(t, raw, NullPolicy{NullString: &na})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := readNA(withNulls); !slices.Equal(got, []string{"a", "b", "N/A"}) {
		t.Errorf("plain nulls read as %q", got)
	}
	ndict := func() arrow.Array {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		b.AppendValues([]string{"x", "y"}, nil)
		b.AppendNull()
		return b.NewArray()
	}()
	nib := array.NewInt8Builder(memory.DefaultAllocator)
	nib.AppendValues([]int8{0, 2, 1}, nil)
	nib.AppendNull()
	if got := readNA(ipcFile(t, sdt, array.NewDictionaryArray(sdt, nib.NewArray(), ndict))); !slices.Equal(got, []string{"x", "N/A", "y", "N/A"}) {
		t.Errorf("dictionary nulls read as %q", got)
	}
	// A batch whose column is longer than the batch is refused (it would
	// write into the next batch's rows).
	long := array.NewStringBuilder(memory.DefaultAllocator)
	long.AppendValues([]string{"a", "b", "c", "d"}, nil)
	la := long.NewArray()
	lsc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	var lbuf bytes.Buffer
	lw, _ := ipc.NewFileWriter(&lbuf, ipc.WithSchema(lsc))
	for range 2 {
		rec := array.NewRecordBatch(lsc, []arrow.Array{la}, 2)
		if err := lw.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	lw.Close()
	if _, err := OpenArrowIPC("long", bytes.NewReader(lbuf.Bytes()), nil, NullPolicy{}, 0); err == nil || !strings.Contains(err.Error(), "record batch 0 has 2 rows but its column \"s\" 4") {
		t.Errorf("a column longer than its batch: %v", err)
	}
	// A dictionary of many entries few rows use: its scratch counts them all.
	many := array.NewStringBuilder(memory.DefaultAllocator)
	for k := range 5000 {
		many.Append(fmt.Sprintf("c%05d", k))
	}
	mib := array.NewInt16Builder(memory.DefaultAllocator)
	mib.AppendValues([]int16{7, 4999}, nil)
	mdt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	manyDict, manyIdx := many.NewArray(), mib.NewArray()
	var batches []arrow.Array // three batches sharing the dictionary
	for range 3 {
		batches = append(batches, array.NewDictionaryArray(mdt, manyIdx, manyDict))
	}
	mp, err := OpenArrowIPC("many", bytes.NewReader(ipcFile(t, mdt, batches...)), []string{"s"}, NullPolicy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mp.StringScratch(0) < 5000*ipcStringBytes || mp.StringScratch(0) >= 2*5000*(ipcStringBytes+ipcUnitBytes) {
		t.Errorf("scratch %d for a dictionary of 5000 entries", mp.StringScratch(0))
	}
	dictBytes := dataBytes(manyDict.Data(), map[arrow.ArrayData]bool{})
	if mp.ScratchBytes < dictBytes/2 || mp.ScratchBytes >= 3*dictBytes/2 { // (once, not three times)
		t.Errorf("the held batches count %d bytes for a shared dictionary of %d", mp.ScratchBytes, dictBytes)
	}
	mp.Close()
	nb.AppendValues([]string{"a", "\xff\xfe"}, nil)
	if _, err := readIPCStrings(t, ipcFile(t, arrow.BinaryTypes.String, nb.NewArray())); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("not UTF-8: %v", err)
	}
}

// FuzzReadArrowStrings: an Arrow IPC file of string columns (plain and
// dictionary-encoded) with one byte changed is read or refused with an
// error, never a panic or a code out of range.
func FuzzReadArrowStrings(f *testing.F) {
	strs := []string{"", "Zoë", "a", "b", "日本"}
	codes := make([]int8, 300)
	for i := range codes {
		codes[i] = int8(i * 3 % len(strs))
	}
	var buf bytes.Buffer
	cols := []Column{{Name: "i", A: pdarray.FromSlice(make([]int64, len(codes)))}, {Name: "s", A: pdarray.FromSlice(codes), Cats: catsOf(strs)}}
	if err := WriteArrowIPC(&buf, cols, IPCWriteOptions{BatchRows: 100}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), uint32(300), byte(0x55))
	f.Add(buf.Bytes(), uint32(1200), byte(0x80))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range 200 {
		sb.Append(strs[i%len(strs)])
	}
	f.Add(ipcFile(f, arrow.BinaryTypes.String, sb.NewArray()), uint32(500), byte(1))
	f.Fuzz(func(t *testing.T, data []byte, at uint32, x byte) {
		if len(data) < 24 {
			return
		}
		d := bytes.Clone(data)
		d[8+int(at)%(len(d)-16)] ^= x // the magic bytes and footer length left alone
		na := "N/A"                   // (the nulls read too)
		p, err := OpenArrowIPC("fuzz", bytes.NewReader(d), nil, NullPolicy{Mode: "mask", NullString: &na}, 16<<20)
		if err != nil || p.Rows > 1<<20 || p.Rows < 0 {
			return
		}
		defer p.Close()
		for i := range p.Strings {
			codes := make([]int32, p.Rows)
			cats, err := p.ReadStrings(i, codes, 2)
			if err != nil {
				continue
			}
			codesInRange(t, codes, len(cats))
		}
	})
}

// TestIPCDamagedBytes: every byte of small IPC files (plain and zstd, a
// string and an int column) changed in turn gives a read or an error,
// never a crash: arrow-go would otherwise allocate what a damaged footer's
// vector length or a compressed buffer's size prefix claims (terabytes, a
// fatal out-of-memory no recover catches); checkIPCFooter and the bounded
// allocator refuse them.
func TestIPCDamagedBytes(t *testing.T) {
	strs := []string{"", "Zoë", "a", "b"}
	codes := make([]int8, 200)
	for i := range codes {
		codes[i] = int8(i % len(strs))
	}
	cols := []Column{{Name: "i", A: pdarray.FromSlice(make([]int64, len(codes)))}, {Name: "s", A: pdarray.FromSlice(codes), Cats: catsOf(strs)}}
	refused := 0
	for _, codec := range []string{"none", "zstd"} {
		var buf bytes.Buffer
		if err := WriteArrowIPC(&buf, cols, IPCWriteOptions{BatchRows: 100, Compression: codec}); err != nil {
			t.Fatal(err)
		}
		for at := 8; at < buf.Len()-8; at++ {
			for _, x := range []byte{0xff, 0x40} {
				d := bytes.Clone(buf.Bytes())
				d[at] ^= x
				p, err := OpenArrowIPC("damaged", bytes.NewReader(d), nil, NullPolicy{Mode: "mask"}, 16<<20)
				if err != nil {
					var ae *Error
					if !errors.As(err, &ae) {
						t.Fatalf("byte %d: an error of no kind: %v", at, err)
					}
					refused++
					continue
				}
				for i := range p.Strings {
					if p.Rows >= 0 && p.Rows < 1<<20 {
						p.ReadStrings(i, make([]int32, p.Rows), 2)
					}
				}
				p.Close()
			}
		}
	}
	if refused == 0 {
		t.Error("no damaged file was refused")
	}
}

// codesInRange fails t when a fuzzed read gave a code outside its strings.
func codesInRange(t *testing.T, codes []int32, n int) {
	t.Helper()
	for _, c := range codes {
		if c < 0 || int(c) >= n {
			t.Fatalf("code %d of %d strings", c, n)
		}
	}
}

// TestWriteNullStrings: a string column's null category is written as
// nulls (an optional column; dictionary and plain chunks, a chunk of
// nulls only; Parquet and IPC), which a read with that null string gives
// back as the same rows; statistics count the nulls and the values'
// min and max leave the null category out.
func TestWriteNullStrings(t *testing.T) {
	strs := []string{"", "N/A", "a", "b", "zz"}
	null := 1
	n := 3000
	codes := make([]int8, n)
	for i := range codes {
		codes[i] = int8(i * 7 % len(strs))
		if i >= 1000 && i < 2000 { // the second row group: nulls only
			codes[i] = int8(null)
		}
	}
	want := make([]string, n)
	for i, c := range codes {
		want[i] = strs[c]
	}
	cats := catsOf(strs)
	cats.Null = &null
	cols := []Column{{Name: "s", A: pdarray.FromSlice(codes), Cats: cats}}
	na := "N/A"
	for _, dict := range []string{"auto", "off"} {
		var buf bytes.Buffer
		if err := WriteParquet(&buf, cols, ParquetWriteOptions{RowGroupSize: 1000, Dictionary: dict}); err != nil {
			t.Fatal(err)
		}
		fr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for rg := range fr.NumRowGroups() {
			cc, _ := fr.MetaData().RowGroup(rg).ColumnChunk(0)
			st, _ := cc.Statistics()
			bs := st.(*metadata.ByteArrayStatistics)
			wantNulls := int64(0)
			for _, c := range codes[rg*1000 : (rg+1)*1000] {
				if int(c) == null {
					wantNulls++
				}
			}
			if bs.NullCount() != wantNulls || wantNulls < 1000 && (string(bs.Min()) != "" || string(bs.Max()) != "zz") {
				t.Errorf("%s: row group %d: %d nulls (want %d), min %q max %q", dict, rg, bs.NullCount(), wantNulls, bs.Min(), bs.Max())
			}
		}
		fr.Close()
		p, err := OpenParquet([]ParquetSource{{Name: "w", R: bytes.NewReader(buf.Bytes())}}, []string{"s"}, NullPolicy{NullString: &na})
		if err != nil {
			t.Fatal(err)
		}
		back := make([]int32, n)
		got, err := p.ReadStrings(0, back, 2)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range back {
			if got[c] != want[i] {
				t.Fatalf("%s: row %d read %q, want %q", dict, i, got[c], want[i])
			}
		}
		// Without a null string the read refuses the nulls.
		p, _ = OpenParquet([]ParquetSource{{Name: "w", R: bytes.NewReader(buf.Bytes())}}, []string{"s"}, NullPolicy{})
		if _, err := p.ReadStrings(0, back, 2); err == nil || !strings.Contains(err.Error(), "has nulls") {
			t.Errorf("%s: nulls read without a null string: %v", dict, err)
		}
		p.Close()
	}
	var buf bytes.Buffer
	if err := WriteArrowIPC(&buf, cols, IPCWriteOptions{BatchRows: 1000}); err != nil {
		t.Fatal(err)
	}
	if got, err := readIPCStrings(t, buf.Bytes(), NullPolicy{NullString: &na}); err != nil || !slices.Equal(got, want) {
		t.Errorf("IPC: %v", err)
	}
	bad := 9
	cats.Null = &bad
	if err := WriteParquet(io.Discard, cols, ParquetWriteOptions{}); err == nil || !strings.Contains(err.Error(), "null category 9 is outside") {
		t.Errorf("a null category outside: %v", err)
	}
}

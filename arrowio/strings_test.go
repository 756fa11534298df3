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
		g := w.AppendRowGroup()
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
func TestReadStrings(t *testing.T) {
	words := []string{"Zoë", "JFK", "", "Midtown", "midtown", "日本", "a", "JFK ", "\x00x", "B"}
	vals := make([]string, 3000)
	for i := range vals {
		vals[i] = words[(i*7+i/13)%len(words)]
	}
	vals[2999] = strings.Repeat("long ", 400) // a value larger than a page
	for _, c := range []struct {
		name  string
		rg    int
		dict  bool
		files int
	}{{"dict-1rg", 3000, true, 1}, {"dict-7rg", 430, true, 1}, {"plain-5rg", 600, false, 1}, {"two-files", 1000, true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			var srcs []ParquetSource
			per := len(vals) / c.files
			for f := range c.files {
				b := stringFile(t, vals[f*per:(f+1)*per], c.rg, c.dict, nil)
				srcs = append(srcs, ParquetSource{Name: fmt.Sprintf("f%d", f), R: bytes.NewReader(b)})
			}
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
	if !errors.As(err, &ae) || ae.Kind != ErrData || !strings.Contains(ae.Msg, `string column "s" has nulls`) {
		t.Fatalf("nulls: %v", err)
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
		p, err := OpenParquet([]ParquetSource{{Name: "fuzz", R: bytes.NewReader(d)}}, nil, NullPolicy{Mode: "mask"})
		if err != nil || p.Rows > 1<<20 {
			return
		}
		defer p.Close()
		for i := range p.Strings {
			codes := make([]int32, p.Strings[i].Rows)
			cats, err := p.ReadStrings(i, codes, 2)
			if err != nil {
				continue
			}
			for _, c := range codes {
				if c < 0 || int(c) >= len(cats) {
					t.Fatalf("code %d of %d strings", c, len(cats))
				}
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
	err := WriteArrowIPC(&bytes.Buffer{}, []Column{{Name: "s", A: codes, Cats: catsOf([]string{"a", "b", "c"})}}, IPCWriteOptions{})
	var ae *Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "write it with to_parquet") {
		t.Errorf("IPC: %v", err)
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

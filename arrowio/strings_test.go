package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
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

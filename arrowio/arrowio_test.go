package arrowio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/arktos-dev/arktos/pdarray"
)

// The fixtures in testdata/parquet are made by gen.py; their values are
// functions of the row index (keep want in step with gen.py's values()).
const fixtureRows = 200

func want(col string, i int) float64 {
	x := int64(i)
	switch col {
	case "i64":
		return float64(x*7919 - 500_000)
	case "f64":
		return float64(x)*0.25 - 3.0
	case "i32":
		return float64(x*31 - 7000)
	case "f32":
		return float64(float32(x) * 0.5)
	case "b":
		if i%3 == 0 {
			return 1
		}
		return 0
	case "i8":
		return float64(x%200 - 100)
	case "i16":
		return float64(x*13%60000 - 30000)
	case "u8":
		return float64(x % 250)
	case "u16":
		return float64(x * 61 % 65000)
	case "u32":
		return float64(x * 4_000_000 % 4_000_000_000)
	case "u64":
		return float64(uint64(x) * 90_000_000_000_000_000)
	case "key":
		return float64(x % 7)
	}
	panic(col)
}

var fixtureDTypes = map[string]pdarray.DType{
	"i64": pdarray.Int64, "f64": pdarray.Float64, "i32": pdarray.Int32, "f32": pdarray.Float32, "b": pdarray.Bool,
	"i8": pdarray.Int8, "i16": pdarray.Int16, "u8": pdarray.Uint8, "u16": pdarray.Uint16, "u32": pdarray.Uint32,
	"u64": pdarray.Uint64, "key": pdarray.Int64,
}

// at returns element i of a as float64 (exact for the fixtures' values).
func at(a *pdarray.Array, i int) float64 {
	switch a.DType() {
	case pdarray.Int8:
		return float64(pdarray.View[int8](a)[i])
	case pdarray.Int16:
		return float64(pdarray.View[int16](a)[i])
	case pdarray.Int32:
		return float64(pdarray.View[int32](a)[i])
	case pdarray.Int64:
		return float64(pdarray.View[int64](a)[i])
	case pdarray.Uint8:
		return float64(pdarray.View[uint8](a)[i])
	case pdarray.Uint16:
		return float64(pdarray.View[uint16](a)[i])
	case pdarray.Uint32:
		return float64(pdarray.View[uint32](a)[i])
	case pdarray.Uint64:
		return float64(pdarray.View[uint64](a)[i])
	case pdarray.Float32:
		return float64(pdarray.View[float32](a)[i])
	case pdarray.Float64:
		return pdarray.View[float64](a)[i]
	case pdarray.Bool:
		if pdarray.View[bool](a)[i] {
			return 1
		}
		return 0
	}
	panic(a.DType())
}

func openFixtures(t *testing.T, names ...string) []ParquetSource {
	t.Helper()
	var srcs []ParquetSource
	for _, n := range names {
		f, err := os.Open(filepath.Join("..", "testdata", "parquet", n))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		srcs = append(srcs, ParquetSource{Name: n, R: f})
	}
	return srcs
}

// dirtyAlloc fills a new array with 0xAB bytes, as a pooled buffer may be:
// the read must overwrite every byte.
func dirtyAlloc(t *testing.T, d pdarray.DType, n int) *pdarray.Array {
	t.Helper()
	a, err := pdarray.Alloc(d, n)
	if err != nil {
		t.Fatal(err)
	}
	b := a.Bytes()
	for i := range b {
		b[i] = 0xAB
	}
	if d == pdarray.Bool {
		clear(b) // bool views need 0/1 bytes to compare; masks are checked below
	}
	return a
}

func readAll(t *testing.T, srcs []ParquetSource, cols []string, pol NullPolicy, workers int) (*ParquetPlan, []*pdarray.Array, []*pdarray.Array, ReadReport, error) {
	t.Helper()
	p, err := OpenParquet(srcs, cols, pol)
	if err != nil {
		return nil, nil, nil, ReadReport{}, err
	}
	dst := make([]*pdarray.Array, len(p.Columns))
	masks := make([]*pdarray.Array, len(p.Columns))
	for i, c := range p.Columns {
		dst[i] = dirtyAlloc(t, c.DType, c.Rows)
		if c.Mask {
			masks[i] = dirtyAlloc(t, pdarray.Bool, c.Rows)
		}
	}
	rep, err := p.Read(dst, masks, workers)
	return p, dst, masks, rep, err
}

func TestReadCodecsAndEncodings(t *testing.T) {
	for _, name := range []string{"codec_none.parquet", "codec_snappy.parquet", "codec_gzip.parquet", "codec_zstd.parquet",
		"codec_brotli.parquet", "codec_lz4.parquet", "plain.parquet", "dict_v2.parquet", "delta_rle_bss.parquet"} {
		t.Run(name, func(t *testing.T) {
			p, dst, _, _, err := readAll(t, openFixtures(t, name), nil, NullPolicy{}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range p.Columns {
				if c.DType != fixtureDTypes[c.Name] || c.Rows != fixtureRows {
					t.Fatalf("column %s: %s × %d, want %s × %d", c.Name, c.DType, c.Rows, fixtureDTypes[c.Name], fixtureRows)
				}
				for r := 0; r < c.Rows; r++ {
					if got, w := at(dst[i], r), want(c.Name, r); got != w {
						t.Fatalf("column %s row %d: %v, want %v", c.Name, r, got, w)
					}
				}
			}
		})
	}
}

func TestReadManyFiles(t *testing.T) {
	srcs := openFixtures(t, "codec_zstd.parquet", "plain.parquet", "codec_snappy.parquet")
	p, dst, _, _, err := readAll(t, srcs, []string{"u64", "i8"}, NullPolicy{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rows != 3*fixtureRows || len(dst) != 2 {
		t.Fatalf("rows %d, columns %d", p.Rows, len(dst))
	}
	for r := 0; r < p.Rows; r++ {
		if at(dst[0], r) != want("u64", r%fixtureRows) || at(dst[1], r) != want("i8", r%fixtureRows) {
			t.Fatalf("row %d wrong", r)
		}
	}
}

// TestFastPath fails when 32/64-bit columns stop being decoded straight
// into the destination (no scratch copy, no arrow.Array) and bool columns
// stop going through the direct reader (as 32-bit words, then narrowed).
func TestFastPath(t *testing.T) {
	before := [2]uint64{Stats.DirectValues.Load(), Stats.ConvertedValues.Load()}
	cols := []string{"i64", "f64", "i32", "f32", "b", "u32", "u64", "key"}
	_, _, _, _, err := readAll(t, openFixtures(t, "codec_zstd.parquet"), cols, NullPolicy{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	direct := Stats.DirectValues.Load() - before[0]
	converted := Stats.ConvertedValues.Load() - before[1]
	if direct != uint64(len(cols)*fixtureRows) || converted != fixtureRows {
		t.Errorf("direct %d (want %d), converted %d (want %d: the bools)", direct, len(cols)*fixtureRows, converted, fixtureRows)
	}
	// arrow-go's reader (the fallback) reuses page buffers across column
	// chunks.
	disableFast = true
	defer func() { disableFast = false }()
	if _, _, _, _, err := readAll(t, openFixtures(t, "codec_zstd.parquet"), cols, NullPolicy{}, 2); err != nil {
		t.Fatal(err)
	}
	if Stats.PoolHits.Load() == 0 {
		t.Errorf("no page buffer was reused from the pool")
	}
}

func isNullRow(i int) bool { return i%10 == 3 }

func TestNulls(t *testing.T) {
	for _, file := range []string{"nulls.parquet", "nulls_nostats.parquet"} {
		t.Run(file, func(t *testing.T) {
			// Default: floats get NaN, other columns refuse nulls.
			_, dst, _, rep, err := readAll(t, openFixtures(t, file), []string{"f64"}, NullPolicy{}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Nulls[0] != fixtureRows/10 {
				t.Errorf("nulls %d", rep.Nulls[0])
			}
			for r := 0; r < fixtureRows; r++ {
				if got := at(dst[0], r); isNullRow(r) != math.IsNaN(got) || !isNullRow(r) && got != want("f64", r) {
					t.Fatalf("row %d: %v", r, got)
				}
			}
			_, _, _, _, err = readAll(t, openFixtures(t, file), []string{"f64", "i64"}, NullPolicy{}, 2)
			var ae *Error
			if !errors.As(err, &ae) || ae.Kind != ErrData || !strings.Contains(ae.Msg, `"i64"`) || !strings.Contains(ae.Msg, "nulls=\"mask\"") {
				t.Fatalf("default on an int column with nulls: %v", err)
			}
			_, _, _, _, err = readAll(t, openFixtures(t, file), []string{"f64"}, NullPolicy{Mode: "error"}, 2)
			if !errors.As(err, &ae) || ae.Kind != ErrData {
				t.Fatalf("nulls=error: %v", err)
			}
			// fill
			p, dst, _, _, err := readAll(t, openFixtures(t, file), nil, NullPolicy{Mode: "fill", Fill: int64(-1)}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range p.Columns {
				for r := 0; r < fixtureRows; r++ {
					w := want(c.Name, r)
					if isNullRow(r) {
						w = -1
						if c.Name == "b" {
							w = 1 // -1 does not fit a bool... see below
						}
					}
					if c.Name == "b" {
						continue
					}
					if got := at(dst[i], r); got != w {
						t.Fatalf("fill: %s row %d: %v want %v", c.Name, r, got, w)
					}
				}
			}
			if err := CheckFill(int64(-1), pdarray.Bool); err == nil {
				t.Error("fill -1 into a bool column was accepted")
			}
			if err := CheckFill(int64(300), pdarray.Int8); err == nil {
				t.Error("fill 300 into an int8 column was accepted")
			}
			if err := CheckFill(1.5, pdarray.Int64); err == nil {
				t.Error("fill 1.5 into an int64 column was accepted")
			}
			// mask
			p, dst, masks, rep, err := readAll(t, openFixtures(t, file), nil, NullPolicy{Mode: "mask"}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range p.Columns {
				if !c.Mask || masks[i] == nil {
					t.Fatalf("column %s has no mask", c.Name)
				}
				if rep.Nulls[i] != fixtureRows/10 {
					t.Errorf("%s: %d nulls", c.Name, rep.Nulls[i])
				}
				m := pdarray.View[bool](masks[i])
				for r := 0; r < fixtureRows; r++ {
					if m[r] != isNullRow(r) {
						t.Fatalf("mask %s row %d: %v", c.Name, r, m[r])
					}
					if !isNullRow(r) && at(dst[i], r) != want(c.Name, r) {
						t.Fatalf("mask %s row %d: %v", c.Name, r, at(dst[i], r))
					}
				}
			}
		})
	}
}

func TestUnsupportedColumns(t *testing.T) {
	_, err := OpenParquet(openFixtures(t, "unsupported.parquet"), nil, NullPolicy{})
	var ae *Error
	if !errors.As(err, &ae) || ae.Kind != ErrType {
		t.Fatalf("got %v", err)
	}
	for _, s := range []string{"s: ", "ts: ", "lst", "nested", "readable columns: i64 (int64)"} {
		if !strings.Contains(ae.Msg, s) {
			t.Errorf("message lacks %q: %s", s, ae.Msg)
		}
	}
	if _, _, _, _, err := readAll(t, openFixtures(t, "unsupported.parquet"), []string{"i64"}, NullPolicy{}, 1); err != nil {
		t.Errorf("the readable column alone: %v", err)
	}
	_, err = OpenParquet(openFixtures(t, "unsupported.parquet"), []string{"nope"}, NullPolicy{})
	if !errors.As(err, &ae) || ae.Kind != ErrValue || !strings.Contains(ae.Msg, "i64 (int64)") {
		t.Errorf("unknown column: %v", err)
	}
	_, err = OpenParquet([]ParquetSource{{Name: "x", R: bytes.NewReader([]byte("not parquet at all"))}}, nil, NullPolicy{})
	if !errors.As(err, &ae) || ae.Kind != ErrData {
		t.Errorf("garbage file: %v", err)
	}
}

func allDTypeColumns(n int) []Column {
	var cols []Column
	for _, d := range pdarray.DTypes() {
		a, _ := pdarray.Alloc(d, n)
		b := a.Bytes()
		for i := range b {
			b[i] = byte(i*7 + i/3)
		}
		if d == pdarray.Bool {
			for i := range b {
				b[i] &= 1
			}
		}
		if d == pdarray.Float32 || d == pdarray.Float64 {
			for i := 0; i < n; i++ {
				if d == pdarray.Float32 {
					pdarray.View[float32](a)[i] = float32(i) / 3
				} else {
					pdarray.View[float64](a)[i] = float64(i) / 7
				}
			}
		}
		cols = append(cols, Column{Name: d.String(), A: a})
	}
	return cols
}

func TestWriteParquetRoundTrip(t *testing.T) {
	const n = 5000
	cols := allDTypeColumns(n)
	for _, codec := range []string{"zstd", "snappy", "gzip", "none", "lz4"} {
		for _, dict := range []string{"auto", "on", "off"} {
			var buf bytes.Buffer
			if err := WriteParquet(&buf, cols, ParquetWriteOptions{Compression: codec, RowGroupSize: 1500, Dictionary: dict, Workers: 3}); err != nil {
				t.Fatal(codec, err)
			}
			p, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(buf.Bytes())}}, nil, NullPolicy{}, 2)
			if err != nil {
				t.Fatal(codec, err)
			}
			for i, c := range p.Columns {
				if c.DType != cols[i].A.DType() || !bytes.Equal(dst[i].Bytes(), cols[i].A.Bytes()) {
					t.Fatalf("%s/%s: column %s differs after a round trip", codec, dict, c.Name)
				}
			}
		}
	}
	if err := WriteParquet(&bytes.Buffer{}, cols, ParquetWriteOptions{Compression: "rar"}); err == nil || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("bad codec: %v", err)
	}
	short := []Column{cols[0], {Name: "x", A: pdarray.FromSlice([]int64{1})}}
	if err := WriteParquet(&bytes.Buffer{}, short, ParquetWriteOptions{}); err == nil {
		t.Error("columns of different lengths were written")
	}
}

// TestDictionaryDecision: a high-cardinality column is written plain
// without building a dictionary; a low-cardinality one gets a dictionary.
func TestDictionaryDecision(t *testing.T) {
	n := 1 << 18
	hi := make([]float64, n)
	lo := make([]int64, n)
	for i := range hi {
		hi[i] = float64(i) * 1.000001
		lo[i] = int64(i % 10)
	}
	if dictionaryPays(Column{Name: "hi", A: pdarray.FromSlice(hi)}, 0, n) {
		t.Error("a 262144-distinct float column was judged dictionary-friendly")
	}
	if !dictionaryPays(Column{Name: "lo", A: pdarray.FromSlice(lo)}, 0, n) {
		t.Error("a 10-distinct int column was judged not dictionary-friendly")
	}
	before := WriteStats.DictionarySkipped.Load()
	if err := WriteParquet(&bytes.Buffer{}, []Column{{Name: "hi", A: pdarray.FromSlice(hi)}, {Name: "lo", A: pdarray.FromSlice(lo)}}, ParquetWriteOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if WriteStats.DictionarySkipped.Load()-before != 1 {
		t.Error("the dictionary decision was not taken once")
	}
}

func TestArrowIPCRoundTrip(t *testing.T) {
	const n = 3000
	cols := allDTypeColumns(n)
	for _, codec := range []string{"none", "zstd", "lz4"} {
		var buf bytes.Buffer
		if err := WriteArrowIPC(&buf, cols, IPCWriteOptions{Compression: codec, BatchRows: 1000, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		p, err := OpenArrowIPC("mem", bytes.NewReader(buf.Bytes()), nil, NullPolicy{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]*pdarray.Array, len(p.Columns))
		for i, c := range p.Columns {
			dst[i] = dirtyAlloc(t, c.DType, c.Rows)
		}
		if _, err := p.Read(dst, make([]*pdarray.Array, len(dst)), 2); err != nil {
			t.Fatal(err)
		}
		p.Close()
		for i := range cols {
			if !bytes.Equal(dst[i].Bytes(), cols[i].A.Bytes()) {
				t.Fatalf("%s: column %s differs", codec, cols[i].Name)
			}
		}
	}
}

func TestChecksum(t *testing.T) {
	b := make([]byte, 40<<20+123)
	for i := range b {
		b[i] = byte(i * 31)
	}
	c1, c4 := Checksum(b, 1), Checksum(b, 4)
	if c1 != c4 {
		t.Fatal("checksum depends on the worker count")
	}
	b[len(b)-1] ^= 1
	if Checksum(b, 3) == c1 {
		t.Fatal("a flipped bit kept the checksum")
	}
	m := &Manifest{Arrays: []ManifestEntry{{Name: "a", DType: "int64", Size: 2, NBytes: 16, File: "0.bin", Checksum: "00"}}}
	if _, err := ParseManifest(EncodeManifest(m)); err != nil {
		t.Fatal(err)
	}
	m.Arrays[0].NBytes = 17
	if _, err := ParseManifest(EncodeManifest(m)); err == nil {
		t.Fatal("a manifest with wrong sizes was accepted")
	}
}

// TestTooManyUnits: a read whose files list more row groups × columns than
// one read takes (a crafted footer can list 10^6 row groups) is refused
// when planned, before anything is sized from them.
func TestTooManyUnits(t *testing.T) {
	defer func(m int) { maxReadUnits = m }(maxReadUnits)
	maxReadUnits = 3
	b := writeNullable(t, 1000, 0, compress.Codecs.Uncompressed, parquet.DataPageV1, true)
	_, err := OpenParquet([]ParquetSource{{Name: "x", R: bytes.NewReader(b)}}, nil, NullPolicy{})
	var ae *Error
	if !errors.As(err, &ae) || ae.Kind != ErrValue || !strings.Contains(ae.Msg, "row groups × columns, more than the 3 one read takes") {
		t.Fatalf("got %v", err)
	}
	maxReadUnits = 1 << 22
	if _, err := OpenParquet([]ParquetSource{{Name: "x", R: bytes.NewReader(b)}}, nil, NullPolicy{}); err != nil {
		t.Fatal(err)
	}
}

// TestTooManyRows: row counts from the files' footers are added with a
// bound (a crafted footer can say 2^62 rows per row group, and the outputs
// are sized from them): the row group that passes it is named, and nothing
// is sized.
func TestTooManyRows(t *testing.T) {
	defer func(m int64) { maxReadRows = m }(maxReadRows)
	b := writeNullable(t, 1000, 0, compress.Codecs.Uncompressed, parquet.DataPageV1, true) // row groups of 334, 334, 332
	open := func() error {
		_, err := OpenParquet([]ParquetSource{{Name: "x", R: bytes.NewReader(b)}}, nil, NullPolicy{})
		return err
	}
	maxReadRows = 900
	var ae *Error
	if err := open(); !errors.As(err, &ae) || ae.Kind != ErrData || !strings.Contains(ae.Msg, "x: row group 2 says 332 rows, past the 900 one read takes") {
		t.Fatalf("got %v", err)
	}
	maxReadRows = 1000
	if err := open(); err != nil {
		t.Fatal(err)
	}
}

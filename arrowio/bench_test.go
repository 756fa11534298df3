package arrowio

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"bytes"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/arktos-dev/arktos/pdarray"
)

// BenchmarkReadParquetFile reads the file named by ARKTOS_BENCH_PARQUET
// (skipped when unset) with ARKTOS_BENCH_WORKERS workers (default 1):
//
//	ARKTOS_BENCH_PARQUET=/tmp/one_zstd.parquet go test -run - -bench ReadParquetFile -cpuprofile cpu.out ./arrowio/
func BenchmarkReadParquetFile(b *testing.B) {
	path := os.Getenv("ARKTOS_BENCH_PARQUET")
	if path == "" {
		b.Skip("ARKTOS_BENCH_PARQUET is not set")
	}
	workers, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	workers = max(1, workers)
	// ARKTOS_BENCH_ARROWGO=1: arrow-go's reader only (A/B against the direct reader).
	disableFast = os.Getenv("ARKTOS_BENCH_ARROWGO") == "1"
	// ARKTOS_BENCH_NOAHEAD=1: no read-ahead of compressed chunks (A/B).
	disableAhead = os.Getenv("ARKTOS_BENCH_NOAHEAD") == "1"
	// ARKTOS_BENCH_NOSPAREP=1: no P lent to workers that call libzstd (A/B).
	disableSpareP = os.Getenv("ARKTOS_BENCH_NOSPAREP") == "1"
	defer func() { disableFast, disableAhead, disableSpareP = false, false, false }()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var dst []*pdarray.Array
	b.ReportAllocs()
	for b.Loop() {
		p, err := OpenParquet([]ParquetSource{{Name: path, R: f}}, nil, NullPolicy{})
		if err != nil {
			b.Fatal(err)
		}
		if dst == nil {
			n := 0
			for _, c := range p.Columns {
				a, err := pdarray.Alloc(c.DType, c.Rows)
				if err != nil {
					b.Fatal(err)
				}
				dst = append(dst, a)
				n += len(a.Bytes())
			}
			b.SetBytes(int64(n))
		}
		if _, err := p.Read(dst, make([]*pdarray.Array, len(dst)), workers); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

// BenchmarkWriteParquet writes bench/io's table (5e6 rows: int64 keys in
// 0..999, int64 ids, two float64 columns) to io.Discard with the codec in
// ARKTOS_BENCH_CODEC (default zstd) and ARKTOS_BENCH_WORKERS workers.
func BenchmarkWriteParquet(b *testing.B) {
	codec := os.Getenv("ARKTOS_BENCH_CODEC")
	if codec == "" {
		codec = "zstd"
	}
	workers, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	// ARKTOS_BENCH_NOSPAREP=1: no P lent to workers that call libzstd (A/B).
	disableSpareP = os.Getenv("ARKTOS_BENCH_NOSPAREP") == "1"
	defer func() { disableSpareP = false }()
	const n = 5_000_000
	rng := rand.New(rand.NewPCG(7, 7))
	keys, ids, x, y := make([]int64, n), make([]int64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		keys[i], ids[i], x[i], y[i] = rng.Int64N(1000), int64(i)*3+11, rng.NormFloat64(), rng.NormFloat64()
	}
	cols := []Column{{Name: "keys", A: pdarray.FromSlice(keys)}, {Name: "ids", A: pdarray.FromSlice(ids)}, {Name: "x", A: pdarray.FromSlice(x)}, {Name: "y", A: pdarray.FromSlice(y)}}
	b.SetBytes(n * 32)
	b.ReportAllocs()
	// ARKTOS_BENCH_FILE: write there through a 4 MiB bufio.Writer and
	// fsync, as the server does; else to io.Discard.
	path := os.Getenv("ARKTOS_BENCH_FILE")
	var encode, sync time.Duration
	for b.Loop() {
		t0 := time.Now()
		w, f := io.Writer(io.Discard), (*os.File)(nil)
		var bw *bufio.Writer
		if path != "" {
			var err error
			if f, err = os.Create(path); err != nil {
				b.Fatal(err)
			}
			bw = bufio.NewWriterSize(f, 4<<20)
			w = bw
		}
		if err := WriteParquet(w, cols, ParquetWriteOptions{Compression: codec, RowGroupSize: 1_000_000, Workers: max(1, workers)}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if f != nil {
			if err := bw.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		encode += t1.Sub(t0)
		sync += time.Since(t1)
	}
	b.ReportMetric(float64(encode.Milliseconds())/float64(b.N), "encode-ms/op")
	b.ReportMetric(float64(sync.Milliseconds())/float64(b.N), "flush+fsync-ms/op")
}

// BenchmarkReadStrings reads string column ARKTOS_BENCH_STRCOL (default
// "id") of the file named by ARKTOS_BENCH_PARQUET (skipped when unset) with
// ARKTOS_BENCH_WORKERS workers (default 1); bench/categorical/parquet.py
// writes such a file:
//
//	ARKTOS_BENCH_PARQUET=/tmp/s.parquet go test -run - -bench ReadStrings -cpuprofile cpu.out ./arrowio/
func BenchmarkReadStrings(b *testing.B) {
	path, col, workers, f := stringBenchFile(b)
	noShortHash = os.Getenv("ARKTOS_BENCH_NOSHORTHASH") == "1"
	defer func() { noShortHash = false }()
	var codes []int32
	b.ReportAllocs()
	for b.Loop() {
		p, err := OpenParquet([]ParquetSource{{Name: path, R: f}}, []string{col}, NullPolicy{})
		if err != nil {
			b.Fatal(err)
		}
		if codes == nil {
			codes = make([]int32, p.Strings[0].Rows)
			b.SetBytes(int64(4 * len(codes)))
		}
		if _, err := p.ReadStrings(0, codes, workers); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

// BenchmarkWriteStrings writes 10^7 rows of one string column from codes
// and sorted categories (ARKTOS_BENCH_NCAT distinct, default 10^6 "id…"
// strings, uniform: each row group of 10^6 uses about 630,000, too many
// for a dictionary page, so plain; 265 gives dictionary chunks), zstd,
// row groups of 10^6, to io.Discard; ARKTOS_BENCH_LEVEL: zstd's level.
func BenchmarkWriteStrings(b *testing.B) {
	workers, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	ncat, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_NCAT"))
	if ncat == 0 {
		ncat = 1_000_000
	}
	strs := make([]string, ncat)
	for i := range strs {
		strs[i] = "id" + strconv.Itoa(i)
	}
	slices.Sort(strs)
	const n = 10_000_000
	rng := rand.New(rand.NewPCG(7, 7))
	codes := make([]int32, n)
	var raw int64
	for i := range codes {
		codes[i] = int32(rng.IntN(ncat))
		raw += int64(len(strs[codes[i]]))
	}
	level, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_LEVEL")) // zstd's (0: 3)
	noPlainTouch = os.Getenv("ARKTOS_BENCH_NOTOUCH") == "1"
	defer func() { noPlainTouch = false }()
	col := Column{Name: "s", A: pdarray.FromSlice(codes), Cats: catsOf(strs)}
	b.SetBytes(raw)
	for b.Loop() {
		if err := WriteParquet(io.Discard, []Column{col}, ParquetWriteOptions{Compression: "zstd", CompressionLevel: level, RowGroupSize: 1_000_000, Workers: max(1, workers)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadArrowStrings reads a plain utf8 IPC column of 10^6 rows of
// ids drawn from 10^6 (about 632,000 distinct), in batches of 10^5, with
// OpenArrowIPC and ReadStrings; ARKTOS_BENCH_DICT=1 dictionary-encodes it
// first.
func BenchmarkReadArrowStrings(b *testing.B) {
	workers, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(7, 7))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	var raw int64
	noShortHash = os.Getenv("ARKTOS_BENCH_NOSHORTHASH") == "1"
	defer func() { noShortHash = false }()
	distinct, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_DISTINCT")) // ids drawn from (default 10^6)
	if distinct <= 0 {
		distinct = 1_000_000
	}
	for range n {
		s := "id" + strconv.Itoa(rng.IntN(distinct))
		raw += int64(len(s))
		sb.Append(s)
	}
	arr := arrow.Array(sb.NewArray())
	typ := arrow.DataType(arrow.BinaryTypes.String)
	if os.Getenv("ARKTOS_BENCH_DICT") == "1" {
		db := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
		for i := range arr.Len() {
			db.AppendString(arr.(*array.String).Value(i))
		}
		arr = db.NewArray()
		typ = arr.DataType()
	}
	var parts []arrow.Array // batches of 10^5 rows
	for lo := int64(0); lo < n; lo += 100_000 {
		parts = append(parts, array.NewSlice(arr, lo, lo+100_000))
	}
	file := ipcFile(b, typ, parts...)
	codes := make([]int32, n)
	b.SetBytes(raw)
	for b.Loop() {
		p, err := OpenArrowIPC("b", bytes.NewReader(file), []string{"s"}, NullPolicy{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.ReadStrings(0, codes, max(1, workers)); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

// BenchmarkReadStringsRaw reads a string column as it is (offsets and
// bytes, ReadStringsRaw), from the file ARKTOS_BENCH_PARQUET names
// (column ARKTOS_BENCH_STRCOL, default id; ARKTOS_BENCH_WORKERS workers).
func BenchmarkReadStringsRaw(b *testing.B) {
	path, col, workers, f := stringBenchFile(b)
	disableNativeZstd = os.Getenv("ARKTOS_BENCH_GOZSTD") == "1" // the A/B of libzstd
	defer func() { disableNativeZstd = false }()
	var off []int64
	var data []byte
	b.ReportAllocs()
	for b.Loop() {
		p, err := OpenParquet([]ParquetSource{{Name: path, R: f}}, []string{col}, NullPolicy{})
		if err != nil {
			b.Fatal(err)
		}
		if off == nil {
			off = make([]int64, p.Strings[0].Rows+1)
		}
		alloc := func(n int) ([]byte, error) {
			if cap(data) < n {
				data = make([]byte, n)
			}
			return data[:n], nil
		}
		got, err := p.ReadStringsRaw(0, off, alloc, func(int64) error { return nil }, workers)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(got) + 8*len(off)))
		p.Close()
	}
}

// stringBenchFile is the string benchmarks' file (ARKTOS_BENCH_PARQUET,
// skipped when unset), column (ARKTOS_BENCH_STRCOL, default id) and
// workers (ARKTOS_BENCH_WORKERS, default 1), opened until b ends.
func stringBenchFile(b *testing.B) (path, col string, workers int, f *os.File) {
	path = os.Getenv("ARKTOS_BENCH_PARQUET")
	if path == "" {
		b.Skip("ARKTOS_BENCH_PARQUET is not set")
	}
	col = os.Getenv("ARKTOS_BENCH_STRCOL")
	if col == "" {
		col = "id"
	}
	workers, _ = strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return path, col, max(1, workers), f
}

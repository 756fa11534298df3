package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// readBoth reads srcs with the direct page reader and with arrow-go's
// reader alone and fails unless values, masks and null counts agree.
func readBoth(t *testing.T, name string, srcs func() []ParquetSource, cols []string, pol NullPolicy, workers int) {
	t.Helper()
	type result struct {
		dst, masks []*pdarray.Array
		rep        ReadReport
		err        error
	}
	run := func(fast bool) result {
		disableFast = !fast
		defer func() { disableFast = false }()
		_, dst, masks, rep, err := readAll(t, srcs(), cols, pol, workers)
		return result{dst, masks, rep, err}
	}
	before := Stats.FallbackChunks.Load()
	a, b := run(true), run(false)
	if Stats.FallbackChunks.Load() != before {
		t.Errorf("%s: %d chunks fell back from the direct reader", name, Stats.FallbackChunks.Load()-before)
	}
	if (a.err == nil) != (b.err == nil) {
		t.Fatalf("%s: direct reader error %v, arrow-go error %v", name, a.err, b.err)
	}
	if a.err != nil {
		// Which column's error comes first depends on the workers.
		var ea, eb *Error
		if !errors.As(a.err, &ea) || !errors.As(b.err, &eb) || ea.Kind != eb.Kind {
			t.Errorf("%s: errors differ:\n%v\n%v", name, a.err, b.err)
		}
		return
	}
	for i := range a.dst {
		if !bytes.Equal(a.dst[i].Bytes(), b.dst[i].Bytes()) {
			t.Fatalf("%s: column %d differs between the direct reader and arrow-go", name, i)
		}
		if (a.masks[i] == nil) != (b.masks[i] == nil) || a.masks[i] != nil && !bytes.Equal(a.masks[i].Bytes(), b.masks[i].Bytes()) {
			t.Fatalf("%s: mask %d differs", name, i)
		}
		if a.rep.Nulls[i] != b.rep.Nulls[i] {
			t.Fatalf("%s: column %d: %d nulls vs %d", name, i, a.rep.Nulls[i], b.rep.Nulls[i])
		}
	}
}

// TestDirectReaderMatchesArrowGo: every fixture reads the same with the
// direct page reader as with arrow-go's reader.
func TestDirectReaderMatchesArrowGo(t *testing.T) {
	for _, name := range []string{"codec_none.parquet", "codec_snappy.parquet", "codec_gzip.parquet", "codec_zstd.parquet",
		"codec_brotli.parquet", "codec_lz4.parquet", "plain.parquet", "dict_v2.parquet", "delta_rle_bss.parquet"} {
		readBoth(t, name, func() []ParquetSource { return openFixtures(t, name) }, nil, NullPolicy{}, 3)
	}
	for _, name := range []string{"nulls.parquet", "nulls_nostats.parquet"} {
		for _, pol := range []NullPolicy{{}, {Mode: "mask"}, {Mode: "fill", Fill: int64(-1)}, {Mode: "error"}} {
			readBoth(t, name+"/"+pol.mode(), func() []ParquetSource { return openFixtures(t, name) }, []string{"f64", "i64"}, pol, 2)
			readBoth(t, name+"/"+pol.mode()+"/f64", func() []ParquetSource { return openFixtures(t, name) }, []string{"f64"}, pol, 2)
		}
	}
}

// writeNullable writes n rows of nullable int64, float64, int32 and
// float32 columns with arrow-go's writer: a null every nullEvery rows (0:
// none), values from a small range (dictionary-friendly) for the first
// half and distinct after, small pages and dictionary pages so that
// dictionaries overflow and the writer falls back to PLAIN mid-chunk.
// opts are added to the writer's properties (encodings).
func writeNullable(t testing.TB, n, nullEvery int, codec compress.Compression, v parquet.DataPageVersion, required bool, opts ...parquet.WriterProperty) []byte {
	t.Helper()
	rep := parquet.Repetitions.Optional
	if required {
		rep = parquet.Repetitions.Required
	}
	fields := schema.FieldList{
		schema.NewInt64Node("i64", rep, -1), schema.NewFloat64Node("f64", rep, -1),
		schema.NewInt32Node("i32", rep, -1), schema.NewFloat32Node("f32", rep, -1),
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(v),
		parquet.WithDataPageSize(3000), parquet.WithDictionaryPageSizeLimit(2000), parquet.WithMaxRowGroupLength(int64(n/3 + 1)),
		parquet.WithBatchSize(700)}, opts...)...)
	fw := file.NewParquetWriter(&buf, root, file.WithWriterProps(props))
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	i64 := make([]int64, n)
	f64 := make([]float64, n)
	i32 := make([]int32, n)
	f32 := make([]float32, n)
	def := make([]int16, n)
	for i := range n {
		x := rng.Int64()
		if i < n/2 {
			x %= 50
		}
		i64[i], f64[i], i32[i], f32[i] = x, float64(x)/3, int32(x), float32(x)/7
		def[i] = 1
		if nullEvery > 0 && (i%nullEvery == 0 || rng.IntN(nullEvery) == 0) {
			def[i] = 0
		}
	}
	rows := n/3 + 1
	for lo := 0; lo < n; lo += rows {
		hi := min(n, lo+rows)
		rgw, err := fw.AppendRowGroupChecked()
		if err != nil {
			t.Fatal(err)
		}
		var d []int16
		dense := func() []int { // the defined rows of [lo, hi)
			var ix []int
			for i := lo; i < hi; i++ {
				if required || def[i] == 1 {
					ix = append(ix, i)
				}
			}
			return ix
		}()
		if !required {
			d = def[lo:hi]
		}
		pick := func(f func(i, j int)) {
			for j, i := range dense {
				f(i, j)
			}
		}
		a := make([]int64, len(dense))
		pick(func(i, j int) { a[j] = i64[i] })
		cw, _ := rgw.NextColumn()
		if _, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(a, d, nil); err != nil {
			t.Fatal(err)
		}
		cw.Close()
		b := make([]float64, len(dense))
		pick(func(i, j int) { b[j] = f64[i] })
		cw, _ = rgw.NextColumn()
		cw.(*file.Float64ColumnChunkWriter).WriteBatch(b, d, nil)
		cw.Close()
		c := make([]int32, len(dense))
		pick(func(i, j int) { c[j] = i32[i] })
		cw, _ = rgw.NextColumn()
		cw.(*file.Int32ColumnChunkWriter).WriteBatch(c, d, nil)
		cw.Close()
		e := make([]float32, len(dense))
		pick(func(i, j int) { e[j] = f32[i] })
		cw, _ = rgw.NextColumn()
		cw.(*file.Float32ColumnChunkWriter).WriteBatch(e, d, nil)
		cw.Close()
		rgw.Close()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDirectReaderPages: nulls, dictionary fallback mid-chunk, data page
// v1 and v2, every codec, required and optional columns: the direct
// reader agrees with arrow-go and takes its fast paths.
func TestDirectReaderPages(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Gzip} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, nullEvery := range []int{0, 7, 1000} {
				for _, req := range []bool{false, true} {
					if req && nullEvery > 0 {
						continue
					}
					name := fmt.Sprintf("%s/v%d/nulls%d/required=%v", codec, v, nullEvery, req)
					data := writeNullable(t, 20000, nullEvery, codec, v, req)
					src := func() []ParquetSource { return []ParquetSource{{Name: name, R: bytes.NewReader(data)}} }
					d0, p0, s0 := Stats.DictDecodedPages.Load(), Stats.DirectPages.Load()+Stats.CopiedPages.Load(), Stats.ShiftedPages.Load()
					for _, pol := range []NullPolicy{{}, {Mode: "mask"}, {Mode: "fill", Fill: int64(9)}} {
						readBoth(t, name+"/"+pol.mode(), src, nil, pol, 2)
					}
					if Stats.DictDecodedPages.Load() == d0 || Stats.DirectPages.Load()+Stats.CopiedPages.Load()+Stats.ShiftedPages.Load() == p0+s0 {
						t.Errorf("%s: no dictionary or no plain page went through the direct reader", name)
					}
					// Optional columns without nulls in compressed v1 pages
					// (pyarrow's default files) decompress straight into the
					// destination.
					// (nullEvery 1000 leaves some pages without nulls: either.)
					can := !req && v == parquet.DataPageV1 && codec != compress.Codecs.Uncompressed
					if shift := Stats.ShiftedPages.Load() - s0; can && nullEvery == 0 && shift == 0 || (!can || nullEvery == 7) && shift > 0 {
						t.Errorf("%s: %d pages decompressed shifted", name, shift)
					}
				}
			}
		}
	}
}

// TestDirectPages fails when plain pages of required columns stop being
// read or decompressed straight into the destination (zstd: by libzstd
// and by klauspost's decoder, which needs spare room past the values).
func TestDirectPages(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, -1} {
		if codec == -1 {
			disableNativeZstd = true
			defer func() { disableNativeZstd = false }()
			codec = compress.Codecs.Zstd
		}
		g0 := Stats.GoZstdPages.Load()
		data := writeNullable(t, 30000, 0, codec, parquet.DataPageV1, true)
		before := [3]uint64{Stats.DirectPages.Load(), Stats.CopiedPages.Load(), Stats.FastChunks.Load()}
		_, _, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(data)}}, nil, NullPolicy{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		direct, copied := Stats.DirectPages.Load()-before[0], Stats.CopiedPages.Load()-before[1]
		if Stats.FastChunks.Load()-before[2] != 12 {
			t.Errorf("%s: %d of 12 chunks went through the direct reader", codec, Stats.FastChunks.Load()-before[2])
		}
		// Only the last page of a chunk may go through the page buffer
		// (zstd wants spare room past the values).
		if direct == 0 || (codec != compress.Codecs.Zstd || nativeZstdOK() && !disableNativeZstd) && copied != 0 || copied > 12 {
			t.Errorf("%s: %d pages direct, %d copied", codec, direct, copied)
		}
		if disableNativeZstd && Stats.GoZstdPages.Load() == g0 {
			t.Error("klauspost's decoder was not used")
		}
	}
}

// TestNativeZstd: libzstd (when the system has it) and klauspost's
// decoder read the same bytes, and zstd pages go through libzstd.
func TestNativeZstd(t *testing.T) {
	if !nativeZstdOK() {
		t.Skip("libzstd.so.1 is not loadable here: klauspost's decoder is used")
	}
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, req := range []bool{false, true} {
			nullEvery := 0
			if !req {
				nullEvery = 11
			}
			data := writeNullable(t, 30000, nullEvery, compress.Codecs.Zstd, v, req)
			src := []ParquetSource{{Name: "mem", R: bytes.NewReader(data)}}
			n0, g0 := Stats.NativeZstdPages.Load(), Stats.GoZstdPages.Load()
			_, a, _, _, err := readAll(t, src, nil, NullPolicy{Mode: "mask"}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if Stats.NativeZstdPages.Load() == n0 || Stats.GoZstdPages.Load() != g0 {
				t.Errorf("libzstd decoded %d pages, klauspost %d", Stats.NativeZstdPages.Load()-n0, Stats.GoZstdPages.Load()-g0)
			}
			disableNativeZstd = true
			_, b, _, _, err := readAll(t, src, nil, NullPolicy{Mode: "mask"}, 2)
			disableNativeZstd = false
			if err != nil {
				t.Fatal(err)
			}
			if Stats.GoZstdPages.Load() == g0 {
				t.Error("klauspost's decoder was not used when libzstd was turned off")
			}
			for i := range a {
				if !bytes.Equal(a[i].Bytes(), b[i].Bytes()) {
					t.Fatalf("column %d: libzstd and klauspost differ", i)
				}
			}
		}
	}
}

// TestNativeZstdWrite: with libzstd loaded, zstd pages are written by it
// and read back equal (by arrow-go's reader and the direct reader).
func TestNativeZstdWrite(t *testing.T) {
	if !nativeZstdOK() {
		t.Skip("libzstd.so.1 is not loadable here")
	}
	cols := allDTypeColumns(20000)
	before := Stats.NativeZstdEncodes.Load()
	var buf bytes.Buffer
	if err := WriteParquet(&buf, cols, ParquetWriteOptions{Compression: "zstd", RowGroupSize: 7000, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if Stats.NativeZstdEncodes.Load() == before {
		t.Error("no page was compressed by libzstd")
	}
	readBoth(t, "native zstd write", func() []ParquetSource { return []ParquetSource{{Name: "mem", R: bytes.NewReader(buf.Bytes())}} }, nil, NullPolicy{}, 2)
	_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(buf.Bytes())}}, nil, NullPolicy{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cols {
		if !bytes.Equal(dst[i].Bytes(), cols[i].A.Bytes()) {
			t.Fatalf("column %s differs after a round trip", cols[i].Name)
		}
	}
}

// encodeHybrid writes vals as Parquet's RLE/bit-packed hybrid of width w:
// runs of 8+ equal values as RLE runs, the rest bit-packed (groups of 8,
// the last group padded with zeros).
func encodeHybrid(vals []uint32, w uint) []byte {
	var out []byte
	putVarint := func(x uint64) {
		for x >= 0x80 {
			out = append(out, byte(x)|0x80)
			x >>= 7
		}
		out = append(out, byte(x))
	}
	for i := 0; i < len(vals); {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 {
			putVarint(uint64(j-i) << 1)
			for b := uint(0); b < (w+7)/8; b++ {
				out = append(out, byte(vals[i]>>(8*b)))
			}
			i = j
			continue
		}
		n := min(len(vals)-i, 8*(1+(len(vals)-i)%5))
		groups := (n + 7) / 8
		putVarint(uint64(groups)<<1 | 1)
		bitsBuf := make([]byte, groups*int(w))
		for k := 0; k < n; k++ {
			for b := uint(0); b < w; b++ {
				if vals[i+k]>>b&1 == 1 {
					pos := uint(k)*w + b
					bitsBuf[pos/8] |= 1 << (pos % 8)
				}
			}
		}
		out = append(out, bitsBuf...)
		i += n
	}
	return out
}

// TestHybridGather decodes random hybrid streams of every bit width.
func TestHybridGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for w := uint(0); w <= 32; w++ {
		for _, n := range []int{1, 7, 8, 9, 64, 1000, 4099} {
			vals := make([]uint32, n)
			size := min(uint64(1)<<w, 1<<20) // every index of widths up to 20
			for i := range vals {
				if i > 0 && rng.IntN(3) == 0 {
					vals[i] = vals[i-1] // some runs
				} else {
					vals[i] = uint32(rng.Uint64N(size))
				}
			}
			dict := make([]uint64, size)
			for i := range dict {
				dict[i] = rng.Uint64()
			}
			b := encodeHybrid(vals, w)
			got := make([]uint64, n)
			if err := hybridGather(b, w, dict, got); err != nil {
				t.Fatalf("w=%d n=%d: %v", w, n, err)
			}
			for i, v := range vals {
				if got[i] != dict[v] {
					t.Fatalf("w=%d n=%d: value %d is dict[?]=%x, want dict[%d]", w, n, i, got[i], v)
				}
			}
			if w == 1 {
				lv := []uint8{}
				def, levels, err := defLevels(b, n, &lv)
				want := 0
				for _, v := range vals {
					want += int(v)
				}
				if err != nil || def != want {
					t.Fatalf("defLevels n=%d: %d defined (want %d), %v", n, def, want, err)
				}
				for i, v := range vals {
					if levels != nil && uint32(levels[i]) != v || levels == nil && v != 1 {
						t.Fatalf("defLevels n=%d: level %d wrong", n, i)
					}
				}
			}
		}
	}
}

// TestDenseDictionary: integer columns of a small value range are
// dictionary-encoded without arrow-go's hash table, and the file reads
// back with the same values and the same statistics as arrow-go's own
// dictionary encoding.
func TestDenseDictionary(t *testing.T) {
	const n = 300_000
	rng := rand.New(rand.NewPCG(5, 6))
	i64, u64, i32, i8, u16 := make([]int64, n), make([]uint64, n), make([]int32, n), make([]int8, n), make([]uint16, n)
	for i := range n {
		i64[i] = rng.Int64N(1000) - 500
		u64[i] = 1<<63 + uint64(rng.IntN(3000))
		i32[i] = int32(rng.IntN(60000)) - 30000
		i8[i] = int8(rng.IntN(256) - 128)
		u16[i] = uint16(rng.IntN(65536))
	}
	cols := []Column{{Name: "i64", A: pdarray.FromSlice(i64)}, {Name: "u64", A: pdarray.FromSlice(u64)}, {Name: "i32", A: pdarray.FromSlice(i32)},
		{Name: "i8", A: pdarray.FromSlice(i8)}, {Name: "u16", A: pdarray.FromSlice(u16)}}
	write := func(dense bool) []byte {
		disableDenseDict = !dense
		defer func() { disableDenseDict = false }()
		var buf bytes.Buffer
		if err := WriteParquet(&buf, cols, ParquetWriteOptions{Compression: "snappy", RowGroupSize: 100_000, Dictionary: "on", Workers: 2}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	before := WriteStats.DenseDictChunks.Load()
	a, b := write(true), write(false)
	if got := WriteStats.DenseDictChunks.Load() - before; got != 15 {
		t.Errorf("%d of 15 chunks went through the dense dictionary", got)
	}
	stats := func(data []byte) (out []string) {
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			for c := 0; c < md.Schema.NumColumns(); c++ {
				cc, _ := md.RowGroup(rg).ColumnChunk(c)
				st, err := cc.Statistics()
				if err != nil || st == nil {
					t.Fatalf("row group %d column %d: no statistics (%v)", rg, c, err)
				}
				out = append(out, fmt.Sprintf("%d/%d: %x %x nulls=%d values=%d enc=%v dict=%v", rg, c, st.EncodeMin(), st.EncodeMax(),
					st.NullCount(), cc.NumValues(), cc.Encodings(), cc.HasDictionaryPage()))
			}
		}
		return out
	}
	sa, sb := stats(a), stats(b)
	for i := range sa {
		if sa[i] != sb[i] {
			t.Errorf("statistics differ:\n dense    %s\n arrow-go %s", sa[i], sb[i])
		}
	}
	for _, data := range [][]byte{a, b} {
		_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(data)}}, nil, NullPolicy{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cols {
			if !bytes.Equal(dst[i].Bytes(), cols[i].A.Bytes()) {
				t.Fatalf("column %s differs after a round trip", cols[i].Name)
			}
		}
	}
	readBoth(t, "dense dictionary", func() []ParquetSource { return []ParquetSource{{Name: "mem", R: bytes.NewReader(a)}} }, nil, NullPolicy{}, 2)
}

// FuzzDirectReader feeds damaged Parquet files to the direct page reader:
// it must return an error or values, never crash (its panics are
// recovered and fall back to arrow-go's reader).
func FuzzDirectReader(f *testing.F) {
	for _, name := range []string{"codec_zstd.parquet", "codec_snappy.parquet", "codec_none.parquet", "dict_v2.parquet", "nulls.parquet", "delta_rle_bss.parquet"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint32(len(data)/3), byte(0x55))
	}
	f.Add(writeNullable(f, 3000, 7, compress.Codecs.Zstd, parquet.DataPageV1, false), uint32(1000), byte(1))
	f.Fuzz(func(t *testing.T, data []byte, at uint32, x byte) {
		if len(data) < 16 {
			return
		}
		d := bytes.Clone(data)
		i := 4 + int(at)%(len(d)-8) // leave the magic bytes and footer length alone
		d[i] ^= x
		p, err := OpenParquet([]ParquetSource{{Name: "fuzz", R: bytes.NewReader(d)}}, nil, NullPolicy{Mode: "mask"})
		if err != nil {
			return
		}
		if p.Rows > 1<<20 {
			return
		}
		dst := make([]*pdarray.Array, len(p.Columns))
		masks := make([]*pdarray.Array, len(p.Columns))
		for i, c := range p.Columns {
			dst[i], _ = pdarray.Alloc(c.DType, c.Rows)
			if c.Mask {
				masks[i], _ = pdarray.Alloc(pdarray.Bool, c.Rows)
			}
		}
		p.Read(dst, masks, 2)
	})
}

// TestNarrowDirect: 8/16-bit integer columns go through the direct reader
// (decoded as INT32 and narrowed), not arrow-go's.
func TestNarrowDirect(t *testing.T) {
	f0, c0 := Stats.FastChunks.Load(), Stats.ConvertedValues.Load()
	cols := []string{"i8", "i16", "u8", "u16"}
	p, dst, _, _, err := readAll(t, openFixtures(t, "codec_zstd.parquet"), cols, NullPolicy{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rgs := uint64(p.files[0].MetaData().NumRowGroups())
	if got := Stats.FastChunks.Load() - f0; got != uint64(len(cols))*rgs {
		t.Errorf("%d of %d chunks went through the direct reader", got, uint64(len(cols))*rgs)
	}
	if got := Stats.ConvertedValues.Load() - c0; got != uint64(len(cols)*fixtureRows) {
		t.Errorf("%d values narrowed, want %d", got, len(cols)*fixtureRows)
	}
	for i, c := range cols {
		for r := 0; r < fixtureRows; r++ {
			if at(dst[i], r) != want(c, r) {
				t.Fatalf("%s row %d: %v", c, r, at(dst[i], r))
			}
		}
	}
}

// writeRowGroupsArrowGo writes as WriteParquet did before its pipeline:
// arrow-go's file writer, one buffered row group at a time, columns in
// order on one goroutine (the reference for TestPipelinedWriteSameBytes).
func writeRowGroupsArrowGo(w io.Writer, root *schema.GroupNode, props *parquet.WriterProperties, cols []Column, n, rgSize, _ int) error {
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(props))
	if err != nil {
		return err
	}
	var sc writeScratch
	for lo := 0; lo < n || lo == 0; lo += rgSize {
		hi := min(n, lo+rgSize)
		rgw, err := fw.AppendBufferedRowGroupChecked()
		if err != nil {
			return err
		}
		for i := range cols {
			cw, err := rgw.Column(i)
			if err != nil {
				return err
			}
			if err := writeChunk(cw, cols[i].A, lo, hi, &sc); err != nil {
				return err
			}
		}
		if err := rgw.Close(); err != nil {
			return err
		}
	}
	return fw.Close()
}

// TestPipelinedWriteSameBytes: the pipelined writer (row groups encoding
// ahead of the one being closed, chunks closed in file order) writes the
// very bytes arrow-go's own file writer writes, for every dtype, codec,
// dictionary choice, worker count and a short last row group; and the
// pipeline is taken (WriteStats.RowGroupsAhead).
func TestPipelinedWriteSameBytes(t *testing.T) {
	cols := allDTypeColumns(23000)
	rng := rand.New(rand.NewPCG(3, 4))
	keys, xs := make([]int64, 23000), make([]float64, 23000)
	for i := range keys {
		keys[i], xs[i] = rng.Int64N(1000), rng.NormFloat64()
	}
	cols = append(cols, Column{Name: "keys", A: pdarray.FromSlice(keys)}, Column{Name: "x", A: pdarray.FromSlice(xs)})
	write := func(fn func(io.Writer, *schema.GroupNode, *parquet.WriterProperties, []Column, int, int, int) error, cols []Column, o ParquetWriteOptions) []byte {
		t.Helper()
		writeRowGroupsFn = fn
		defer func() { writeRowGroupsFn = writeRowGroups }()
		var buf bytes.Buffer
		if err := WriteParquet(&buf, cols, o); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, codec := range []string{"zstd", "snappy", "none"} {
		for _, dict := range []string{"auto", "on", "off"} {
			for _, workers := range []int{1, 2, 3} {
				o := ParquetWriteOptions{Compression: codec, RowGroupSize: 5000, Dictionary: dict, Workers: workers}
				before := WriteStats.RowGroupsAhead.Load()
				got := write(writeRowGroups, cols, o)
				if WriteStats.RowGroupsAhead.Load()-before < 4 {
					t.Errorf("%s/%s/%d workers: %d row groups queued ahead, want 4 (5 row groups)", codec, dict, workers, WriteStats.RowGroupsAhead.Load()-before)
				}
				if want := write(writeRowGroupsArrowGo, cols, o); !bytes.Equal(got, want) {
					t.Fatalf("%s/%s/%d workers: pipelined file (%d bytes) differs from arrow-go's (%d bytes)", codec, dict, workers, len(got), len(want))
				}
			}
		}
	}
	empty := []Column{{Name: "e", A: pdarray.FromSlice([]int64{})}}
	if got, want := write(writeRowGroups, empty, ParquetWriteOptions{Workers: 2}), write(writeRowGroupsArrowGo, empty, ParquetWriteOptions{Workers: 2}); !bytes.Equal(got, want) {
		t.Fatalf("empty column: pipelined file differs from arrow-go's")
	}
}

// TestScratchKeptAcrossGC: workers' chunk and page buffers survive garbage
// collections between reads (a sync.Pool would drop them and the next read
// would allocate them again), and oversized buffers are not kept.
func TestScratchKeptAcrossGC(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParquet(&buf, allDTypeColumns(30000), ParquetWriteOptions{Compression: "zstd", RowGroupSize: 10000}); err != nil {
		t.Fatal(err)
	}
	src := func() []ParquetSource { return []ParquetSource{{Name: "mem", R: bytes.NewReader(buf.Bytes())}} }
	if _, _, _, _, err := readAll(t, src(), nil, NullPolicy{}, 2); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	before := Stats.ScratchReused.Load()
	if _, _, _, _, err := readAll(t, src(), nil, NullPolicy{}, 2); err != nil {
		t.Fatal(err)
	}
	if got := Stats.ScratchReused.Load() - before; got < 1 {
		t.Errorf("after two GCs no worker reused its buffers (ScratchReused +%d)", got)
	}
	sc := &scratch{}
	sc.fast.chunk, sc.fast.page = make([]byte, 10), make([]byte, 100)
	sc.trim(50)
	if sc.fast.chunk == nil || sc.fast.page != nil {
		t.Errorf("trim(50) kept %d and %d bytes, want the 10-byte buffer only", cap(sc.fast.chunk), cap(sc.fast.page))
	}
}

// writeBools writes n BOOLEAN values (runs and noise, so RLE has both
// kinds of runs) with arrow-go's writer: optional with a null every
// nullEvery rows (0: none) or required, in the given page version and
// value encoding (PLAIN or RLE).
func writeBools(t *testing.T, n, nullEvery int, codec compress.Compression, v parquet.DataPageVersion, required bool, enc parquet.Encoding) []byte {
	t.Helper()
	rep := parquet.Repetitions.Optional
	if required {
		rep = parquet.Repetitions.Required
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{schema.NewBooleanNode("b", rep, -1)}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithDataPageVersion(v), parquet.WithDictionaryDefault(false),
		parquet.WithEncoding(enc), parquet.WithDataPageSize(700), parquet.WithBatchSize(300), parquet.WithMaxRowGroupLength(int64(n/3+1)))
	fw := file.NewParquetWriter(&buf, root, file.WithWriterProps(props))
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	rows := n/3 + 1
	for lo := 0; lo < n; lo += rows {
		hi := min(n, lo+rows)
		var vals []bool
		var def []int16
		for i := lo; i < hi; i++ {
			null := nullEvery > 0 && (i%nullEvery == 0 || rng.IntN(nullEvery) == 0)
			if !required {
				def = append(def, map[bool]int16{true: 0, false: 1}[null])
			}
			if !null {
				vals = append(vals, i%1000 < 500 || rng.IntN(3) == 0)
			}
		}
		rgw, err := fw.AppendRowGroupChecked()
		if err != nil {
			t.Fatal(err)
		}
		cw, _ := rgw.NextColumn()
		if _, err := cw.(*file.BooleanColumnChunkWriter).WriteBatch(vals, def, nil); err != nil {
			t.Fatal(err)
		}
		if err := rgw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBoolDirect: BOOLEAN columns (PLAIN bits and RLE, data pages v1 and
// v2, every codec, required, optional with and without nulls, every null
// policy) go through the direct reader, with no fallback, and read the
// same values, masks and null counts as arrow-go's reader.
func TestBoolDirect(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, enc := range []parquet.Encoding{parquet.Encodings.Plain, parquet.Encodings.RLE} {
				for _, nullEvery := range []int{-1, 0, 7, 1000} {
					name := fmt.Sprintf("%s/v%d/%s/nulls%d", codec, v, enc, nullEvery)
					data := writeBools(t, 10000, max(0, nullEvery), codec, v, nullEvery < 0, enc)
					src := func() []ParquetSource { return []ParquetSource{{Name: name, R: bytes.NewReader(data)}} }
					b0, f0, fb0 := Stats.BoolPages.Load(), Stats.FastChunks.Load(), Stats.FallbackChunks.Load()
					for _, pol := range []NullPolicy{{Mode: "mask"}, {Mode: "fill", Fill: true}} {
						readBoth(t, name+"/"+pol.mode(), src, nil, pol, 2)
					}
					if Stats.BoolPages.Load() == b0 || Stats.FastChunks.Load()-f0 != 6 || Stats.FallbackChunks.Load() != fb0 {
						t.Errorf("%s: %d bool pages, %d of 6 chunks direct, %d fell back", name,
							Stats.BoolPages.Load()-b0, Stats.FastChunks.Load()-f0, Stats.FallbackChunks.Load()-fb0)
					}
				}
			}
		}
	}
}

// failAfter is a writer that fails once n bytes have gone through it.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestPipelinedWriteError: a file that cannot be written ends the write
// with an error naming the cause, whichever row group it happens in, and
// no worker is left behind.
func TestPipelinedWriteError(t *testing.T) {
	cols := allDTypeColumns(20000)
	g0 := runtime.NumGoroutine()
	for _, n := range []int{0, 3, 5000, 60000, 200000} {
		err := WriteParquet(&failAfter{n: n}, cols, ParquetWriteOptions{Compression: "snappy", RowGroupSize: 2000, Workers: 3})
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failing after %d bytes: err = %v", n, err)
		}
	}
	for i := 0; runtime.NumGoroutine() > g0 && i < 1000; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > g0 {
		t.Errorf("%d goroutines left after failed writes (%d before)", g, g0)
	}
}

// TestReadFailureArrowGoPath: a failed read of the file is reported as such
// (ErrIO, naming the file, row group, column and the OS error) when the
// chunk goes through arrow-go's reader too, and when the footer cannot be
// read; a truncated file is still corrupt data (ErrData).
func TestReadFailureArrowGoPath(t *testing.T) {
	disableFast = true
	defer func() { disableFast = false }()
	data := writeNullable(t, 30000, 7, compress.Codecs.Zstd, parquet.DataPageV1, false)
	var e *Error
	r := &flakyReader{Reader: bytes.NewReader(data), from: int64(len(data) / 2)}
	p, err := OpenParquet([]ParquetSource{{Name: "mem", R: r}}, nil, NullPolicy{Mode: "fill", Fill: int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dst := make([]*pdarray.Array, len(p.Columns))
	for i, c := range p.Columns {
		dst[i], _ = pdarray.Alloc(c.DType, c.Rows)
	}
	r.fails = 1 << 30
	fb := Stats.FallbackChunks.Load() + Stats.Chunks.Load()
	_, err = p.Read(dst, make([]*pdarray.Array, len(dst)), 2)
	if !errors.As(err, &e) || e.Kind != ErrIO || !strings.Contains(err.Error(), "injected read error") ||
		!strings.Contains(err.Error(), "mem: row group") || !strings.Contains(err.Error(), "column \"") {
		t.Errorf("failing reads through arrow-go's reader: %v", err)
	}
	if Stats.FallbackChunks.Load()+Stats.Chunks.Load() == fb {
		t.Error("no chunk went through arrow-go's reader")
	}
	// The footer (the file's end).
	r = &flakyReader{Reader: bytes.NewReader(data), from: 0, fails: 1 << 30}
	if _, err := OpenParquet([]ParquetSource{{Name: "mem", R: r}}, nil, NullPolicy{}); !errors.As(err, &e) || e.Kind != ErrIO || !strings.Contains(err.Error(), "reading mem") {
		t.Errorf("failing footer read: %v", err)
	}
	// Cut short: the bytes are missing, no read failed.
	if _, err := OpenParquet([]ParquetSource{{Name: "mem", R: bytes.NewReader(data[:len(data)-100])}}, nil, NullPolicy{}); !errors.As(err, &e) || e.Kind != ErrData {
		t.Errorf("truncated file: %v", err)
	}
}

// TestRecordingReader: a unit's error is put down to a failed read only
// when that read touched the unit's bytes and came after the unit began.
func TestRecordingReader(t *testing.T) {
	data := make([]byte, 1000)
	fr := &flakyReader{Reader: bytes.NewReader(data)}
	r := &recordingReader{ReaderAtSeeker: fr}
	b := make([]byte, 100)
	if _, err := r.ReadAt(b, 100); err != nil { // fine
		t.Fatal(err)
	}
	if _, err := r.ReadAt(b, 950); err == nil || r.seq.Load() != 0 { // the file's end: not a failure
		t.Fatalf("read past the end: %v, %d failures", err, r.seq.Load())
	}
	fr.from, fr.fails = 600, 1
	before := r.seq.Load()
	if _, err := r.ReadAt(b, 600); err == nil || r.seq.Load() != before+1 {
		t.Fatalf("failed read: %v, %d failures", err, r.seq.Load())
	}
	for _, c := range []struct {
		after  uint64
		lo, hi int64
		want   bool
	}{
		{before, 600, 700, true},
		{before, 650, 660, true},
		{before, 0, 600, false},   // before the failed bytes
		{before, 700, 900, false}, // after them
		{before + 1, 600, 700, false},
	} {
		if _, got := r.failed(c.after, c.lo, c.hi); got != c.want {
			t.Errorf("failed(%d, %d, %d) = %v, want %v", c.after, c.lo, c.hi, got, c.want)
		}
	}
}

// flakyReader fails every ReadAt that starts at or past from, the first
// `fails` times, then reads as r does.
type flakyReader struct {
	*bytes.Reader
	from  int64
	mu    sync.Mutex
	fails int
}

func (r *flakyReader) ReadAt(b []byte, off int64) (int, error) {
	r.mu.Lock()
	fail := off >= r.from && r.fails > 0
	if fail {
		r.fails--
	}
	r.mu.Unlock()
	if fail {
		return 0, errors.New("injected read error")
	}
	return r.Reader.ReadAt(b, off)
}

// TestReadAhead fails when compressed chunks stop being read ahead of the
// workers that decode them (parquet_ahead.go), at 1, 2 and 3 workers, or
// when uncompressed ones start to be (they are read straight into the
// destination); a chunk whose read ahead fails is read again by its worker,
// and an error that lasts ends the read with that error (ErrIO, naming the
// column; no hang). Workers wait for the reader here (aheadNoSteal), so that the
// counts are exact; TestReadAheadSteals lets them read what it has not.
// With as many workers as GOMAXPROCS nothing is read ahead (no core left).
func TestReadAhead(t *testing.T) {
	aheadNoSteal = true
	defer func() { aheadNoSteal = false }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	zstdFile := writeNullable(t, 30000, 0, compress.Codecs.Zstd, parquet.DataPageV1, true)
	plain := writeNullable(t, 30000, 0, compress.Codecs.Uncompressed, parquet.DataPageV1, true)
	mixed := writeNullable(t, 30000, 0, compress.Codecs.Zstd, parquet.DataPageV1, true,
		parquet.WithCompressionFor("i32", compress.Codecs.Uncompressed))
	read := func(r parquet.ReaderAtSeeker, workers int) (uint64, []*pdarray.Array, error) {
		t.Helper()
		a0 := Stats.AheadChunks.Load()
		_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: r}}, nil, NullPolicy{}, workers)
		return Stats.AheadChunks.Load() - a0, dst, err
	}
	_, want, err := read(bytes.NewReader(zstdFile), 1)
	if err != nil {
		t.Fatal(err)
	}
	same := func(dst []*pdarray.Array) bool {
		for i := range dst {
			if !bytes.Equal(dst[i].Bytes(), want[i].Bytes()) {
				return false
			}
		}
		return true
	}
	for _, workers := range []int{1, 2, 3} {
		if n, dst, err := read(bytes.NewReader(zstdFile), workers); err != nil || n != 12 || !same(dst) {
			t.Errorf("zstd, %d workers: %d of 12 chunks read ahead, same %v, %v", workers, n, err == nil && same(dst), err)
		}
		if n, _, err := read(bytes.NewReader(plain), workers); err != nil || n != 0 {
			t.Errorf("uncompressed, %d workers: %d chunks read ahead, %v", workers, n, err)
		}
		if n, dst, err := read(bytes.NewReader(mixed), workers); err != nil || n != 9 || !same(dst) {
			t.Errorf("one column uncompressed, %d workers: %d of 9 chunks read ahead, same %v, %v", workers, n, err == nil && same(dst), err)
		}
		// The footer sits past every chunk: fail reads from the middle of
		// the chunks on, once (read ahead) and then for good.
		from := int64(len(zstdFile) / 2)
		r := &flakyReader{Reader: bytes.NewReader(zstdFile), from: from}
		p, err := OpenParquet([]ParquetSource{{Name: "mem", R: r}}, nil, NullPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]*pdarray.Array, len(p.Columns))
		for i, c := range p.Columns {
			dst[i], _ = pdarray.Alloc(c.DType, c.Rows)
		}
		r.fails = 1
		a0 := Stats.AheadChunks.Load()
		if _, err := p.Read(dst, make([]*pdarray.Array, len(dst)), workers); err != nil || !same(dst) || Stats.AheadChunks.Load()-a0 != 11 {
			t.Errorf("%d workers, one failed read: same %v, %d chunks read ahead (want 11), %v", workers, err == nil && same(dst), Stats.AheadChunks.Load()-a0, err)
		}
		r.fails = 1 << 30
		var e *Error
		if _, err := p.Read(dst, make([]*pdarray.Array, len(dst)), workers); !errors.As(err, &e) || e.Kind != ErrIO || !strings.Contains(err.Error(), "injected read error") || !strings.Contains(err.Error(), "column \"") {
			t.Errorf("%d workers, failing reads: %v", workers, err)
		}
		p.Close()
	}
	// What the server reserves for it: the largest chunk read ahead, and
	// nothing when nothing is.
	chunk := func(data []byte, workers int) int64 {
		p, err := OpenParquet([]ParquetSource{{Name: "mem", R: bytes.NewReader(data)}}, nil, NullPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		return p.AheadChunk(workers)
	}
	if z, n := chunk(zstdFile, 1), chunk(plain, 1); z <= 0 || z > int64(len(zstdFile)) || n != 0 {
		t.Errorf("AheadChunk: zstd %d, uncompressed %d", z, n)
	}
	runtime.GOMAXPROCS(2)
	if n, dst, err := read(bytes.NewReader(zstdFile), 2); err != nil || n != 0 || !same(dst) {
		t.Errorf("2 workers with GOMAXPROCS 2: %d chunks read ahead (want 0), same %v, %v", n, err == nil && same(dst), err)
	}
	if z := chunk(zstdFile, 2); z != 0 {
		t.Errorf("AheadChunk with no core left: %d, want 0", z)
	}
}

// TestReadAheadSteals: workers read the chunks the reader has not reached
// themselves; whoever reads each chunk, several reads at once read the
// same bytes, and the reader's buffers go back to the kept ones.
func TestReadAheadSteals(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	zstdFile := writeNullable(t, 30000, 0, compress.Codecs.Zstd, parquet.DataPageV1, true)
	_, want, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(zstdFile)}}, nil, NullPolicy{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(zstdFile)}}, nil, NullPolicy{}, 1+g)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range dst {
					if !bytes.Equal(dst[i].Bytes(), want[i].Bytes()) {
						t.Errorf("%d workers: column %d differs", 1+g, i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	aheadMu.Lock()
	kept := len(aheadFree)
	aheadMu.Unlock()
	if kept == 0 || kept > maxKeptAhead {
		t.Errorf("%d read-ahead buffers kept, want 1 to %d", kept, maxKeptAhead)
	}
}

// TestReadAheadPanic: a panic in the read-ahead goroutine (a bug) fails the
// read and reaches Read's caller as a *par.Panic (the server answers it
// INTERNAL), with every worker done (none left waiting for the chunk the
// reader was reading), whether the reader was reading the first chunk, one
// in the middle or the last; a read after it is whole again.
func TestReadAheadPanic(t *testing.T) {
	aheadNoSteal = true // workers wait for the reader: the worst case
	defer func() { aheadNoSteal, testAheadPanic = false, nil }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	zstdFile := writeNullable(t, 30000, 0, compress.Codecs.Zstd, parquet.DataPageV1, true)
	_, want, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(zstdFile)}}, nil, NullPolicy{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 5, 11} {
		for _, workers := range []int{1, 3} {
			testAheadPanic = func(i int) {
				if i == at {
					panic(fmt.Sprintf("test: a bug reading chunk %d ahead", i))
				}
			}
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(zstdFile)}}, nil, NullPolicy{}, workers)
			}()
			select {
			case p := <-done:
				if pp, ok := p.(*par.Panic); !ok || !strings.Contains(fmt.Sprint(pp.Value), "a bug reading chunk") {
					t.Fatalf("chunk %d, %d workers: Read ended with %v, want the reader's *par.Panic", at, workers, p)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("chunk %d, %d workers: Read hung after the reader panicked", at, workers)
			}
		}
	}
	testAheadPanic = nil
	_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: bytes.NewReader(zstdFile)}}, nil, NullPolicy{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dst {
		if !bytes.Equal(dst[i].Bytes(), want[i].Bytes()) {
			t.Fatalf("column %d differs after the panics", i)
		}
	}
}

// procsReader records the most GOMAXPROCS any of its reads saw.
type procsReader struct {
	*bytes.Reader
	most atomic.Int32
}

func (r *procsReader) ReadAt(b []byte, off int64) (int, error) {
	for n := int32(runtime.GOMAXPROCS(0)); ; {
		m := r.most.Load()
		if n <= m || r.most.CompareAndSwap(m, n) {
			break
		}
	}
	return r.Reader.ReadAt(b, off)
}

// TestSparePRead: a read of zstd chunks with as many workers as Ps lends
// the scheduler one more P while it runs (its workers' reads see
// GOMAXPROCS 3 of 2) and gives it back, with the same bytes as one worker;
// fewer workers than Ps (the read-ahead's case) or an uncompressed file
// lend none.
func TestSparePRead(t *testing.T) {
	if !nativeZstdOK() {
		t.Skip("no libzstd: the reader makes no cgo calls")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	zstdFile := writeNullable(t, 30000, 0, compress.Codecs.Zstd, parquet.DataPageV1, true)
	plain := writeNullable(t, 30000, 0, compress.Codecs.Uncompressed, parquet.DataPageV1, true)
	read := func(file []byte, workers int) (lent uint64, most int32, dst []*pdarray.Array) {
		t.Helper()
		r := &procsReader{Reader: bytes.NewReader(file)}
		n0 := Stats.SparePReads.Load()
		_, dst, _, _, err := readAll(t, []ParquetSource{{Name: "mem", R: r}}, nil, NullPolicy{}, workers)
		if err != nil {
			t.Fatal(err)
		}
		if got := runtime.GOMAXPROCS(0); got != 2 {
			t.Fatalf("GOMAXPROCS %d after a read, want 2", got)
		}
		return Stats.SparePReads.Load() - n0, r.most.Load(), dst
	}
	_, most1, want := read(zstdFile, 1)
	lent, most, dst := read(zstdFile, 2)
	if lent != 1 || most != 3 || most1 != 2 {
		t.Fatalf("zstd: 2 workers lent %d Ps (reads saw GOMAXPROCS %d), 1 worker's reads saw %d; want 1, 3, 2", lent, most, most1)
	}
	for i := range dst {
		if !bytes.Equal(dst[i].Bytes(), want[i].Bytes()) {
			t.Fatalf("column %d differs from one worker's read", i)
		}
	}
	if lent, most, _ := read(plain, 2); lent != 0 || most != 2 {
		t.Fatalf("uncompressed: %d Ps lent, reads saw GOMAXPROCS %d; want 0 and 2", lent, most)
	}
}

// procsWriter records the most GOMAXPROCS any of its writes saw.
type procsWriter struct {
	bytes.Buffer
	most int
}

func (w *procsWriter) Write(b []byte) (int, error) {
	w.most = max(w.most, runtime.GOMAXPROCS(0))
	return w.Buffer.Write(b)
}

// TestSparePWrite: a zstd write with as many workers as Ps lends a P while
// it runs (its file writes see GOMAXPROCS 3 of 2) and writes the same
// bytes as one worker; one worker or snappy lend none.
func TestSparePWrite(t *testing.T) {
	if !nativeZstdOK() {
		t.Skip("no libzstd: the writer makes no cgo calls")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	n := 300_000
	x, k := make([]float64, n), make([]int64, n)
	for i := range x {
		x[i], k[i] = float64(i)*0.37, int64(i%977)
	}
	cols := []Column{{Name: "x", A: pdarray.FromSlice(x)}, {Name: "k", A: pdarray.FromSlice(k)}}
	write := func(codec string, workers int) (uint64, *procsWriter) {
		t.Helper()
		w := &procsWriter{}
		n0 := WriteStats.SparePWrites.Load()
		if err := WriteParquet(w, cols, ParquetWriteOptions{Compression: codec, RowGroupSize: 50_000, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		if got := runtime.GOMAXPROCS(0); got != 2 {
			t.Fatalf("GOMAXPROCS %d after a write, want 2", got)
		}
		return WriteStats.SparePWrites.Load() - n0, w
	}
	_, one := write("zstd", 1)
	lent, two := write("zstd", 2)
	if lent != 1 || two.most != 3 || one.most != 2 {
		t.Fatalf("zstd: 2 workers lent %d Ps (writes saw GOMAXPROCS %d), 1 worker's writes saw %d; want 1, 3, 2", lent, two.most, one.most)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatal("two workers wrote other bytes than one")
	}
	if lent, w := write("snappy", 2); lent != 0 || w.most != 2 {
		t.Fatalf("snappy: %d Ps lent, writes saw GOMAXPROCS %d; want 0 and 2", lent, w.most)
	}
}

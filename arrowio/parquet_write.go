package arrowio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// Column is a named array to write; with Cats, a string column whose A
// holds each row's code into them.
type Column struct {
	Name string
	A    *pdarray.Array
	Cats *Categories
}

// ParquetWriteOptions tune WriteParquet.
type ParquetWriteOptions struct {
	// Compression: "zstd" (default), "snappy", "gzip", "lz4", "brotli" or "none".
	Compression string
	// CompressionLevel is the codec's level (0: its default; zstd 1..22,
	// default 3 as arrow-go's, where pyarrow's is 1; gzip 1..9; brotli
	// 1..11); the other codecs have none.
	CompressionLevel int
	// RowGroupSize is the rows per row group (default DefaultRowGroupSize).
	RowGroupSize int
	// Dictionary: "auto" (default: dictionary-encode a column only when a
	// sample says its dictionary fits the 1 MiB dictionary page, so no
	// dictionary is built and thrown away), "on" or "off".
	Dictionary string
	// Workers encode the columns of a row group in parallel (default 1).
	Workers int
}

// codecLevels is the range of levels a codec takes (ok false: none).
func codecLevels(c compress.Compression) (lo, hi int, ok bool) {
	switch c {
	case compress.Codecs.Zstd:
		return 1, 22, true
	case compress.Codecs.Gzip:
		return 1, 9, true
	case compress.Codecs.Brotli:
		return 1, 11, true
	}
	return 0, 0, false
}

// DefaultRowGroupSize is the rows per row group when none is given (as
// pyarrow's default).
const DefaultRowGroupSize = 1 << 20

// Codecs lists the Parquet codecs WriteParquet accepts.
var Codecs = map[string]compress.Compression{
	"none": compress.Codecs.Uncompressed, "uncompressed": compress.Codecs.Uncompressed,
	"snappy": compress.Codecs.Snappy, "gzip": compress.Codecs.Gzip, "zstd": compress.Codecs.Zstd,
	"lz4": compress.Codecs.Lz4Raw, "brotli": compress.Codecs.Brotli,
}

func codecNames() string {
	names := make([]string, 0, len(Codecs))
	for n := range Codecs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// WriteStats count write-side decisions (tests check the fast paths).
var WriteStats struct {
	// DictionarySkipped counts column chunks written plain because the
	// sample said their dictionary would overflow.
	DictionarySkipped atomic.Uint64
	// ParallelRowGroups counts row groups whose columns were encoded
	// concurrently.
	ParallelRowGroups atomic.Uint64
	// RowGroupsAhead counts row groups whose columns were queued for the
	// workers before the row group before them was closed (the pipeline of
	// writeRowGroups).
	RowGroupsAhead atomic.Uint64
	// DenseDictChunks were dictionary-encoded through a dense table
	// (writeDenseDict), without arrow-go's hash table.
	DenseDictChunks atomic.Uint64
	// SparePWrites lent the scheduler a P while their workers compressed
	// with libzstd through cgo (par.SpareP, as reads do).
	SparePWrites atomic.Uint64
}

// checkColumns checks names and lengths and returns the common length.
func checkColumns(cols []Column) (int, error) {
	if len(cols) == 0 {
		return 0, errorf(ErrValue, "nothing to write: give at least one column")
	}
	seen := map[string]bool{}
	n := cols[0].A.Len()
	for _, c := range cols {
		if c.Name == "" {
			return 0, errorf(ErrValue, "a column needs a name")
		}
		if seen[c.Name] {
			return 0, errorf(ErrValue, "column %q is given twice", c.Name)
		}
		seen[c.Name] = true
		if c.A.Len() != n {
			return 0, errorf(ErrValue, "columns must have one length: %q has %d elements, %q has %d", cols[0].Name, n, c.Name, c.A.Len())
		}
		if c.Cats != nil {
			if err := checkStrings(c); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func parquetNode(c Column) (schema.Node, error) {
	req := parquet.Repetitions.Required
	if c.Cats != nil {
		if c.Cats.Null != nil {
			req = parquet.Repetitions.Optional
		}
		return schema.NewPrimitiveNodeLogical(c.Name, req, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	}
	intNode := func(width int8, signed bool, phys parquet.Type) (schema.Node, error) {
		return schema.NewPrimitiveNodeLogical(c.Name, req, schema.NewIntLogicalType(width, signed), phys, 0, -1)
	}
	switch c.A.DType() {
	case pdarray.Bool:
		return schema.NewPrimitiveNode(c.Name, req, parquet.Types.Boolean, -1, 0)
	case pdarray.Int8:
		return intNode(8, true, parquet.Types.Int32)
	case pdarray.Int16:
		return intNode(16, true, parquet.Types.Int32)
	case pdarray.Int32:
		return schema.NewPrimitiveNode(c.Name, req, parquet.Types.Int32, -1, 0)
	case pdarray.Int64:
		return schema.NewPrimitiveNode(c.Name, req, parquet.Types.Int64, -1, 0)
	case pdarray.Uint8:
		return intNode(8, false, parquet.Types.Int32)
	case pdarray.Uint16:
		return intNode(16, false, parquet.Types.Int32)
	case pdarray.Uint32:
		return intNode(32, false, parquet.Types.Int32)
	case pdarray.Uint64:
		return intNode(64, false, parquet.Types.Int64)
	case pdarray.Float32:
		return schema.NewPrimitiveNode(c.Name, req, parquet.Types.Float, -1, 0)
	case pdarray.Float64:
		return schema.NewPrimitiveNode(c.Name, req, parquet.Types.Double, -1, 0)
	}
	return nil, errorf(ErrType, "column %q: dtype %s cannot be written", c.Name, c.A.DType())
}

// dictPageLimit is arrow-go's default dictionary page size limit, past
// which it abandons the dictionary.
const dictPageLimit = 1 << 20

// otherNaNs says whether a float array holds a NaN whose bits are not the
// default quiet NaN's (a payload, the sign bit).
func otherNaNs(a *pdarray.Array) bool {
	switch a.DType() {
	case pdarray.Float64:
		for _, v := range pdarray.View[float64](a) {
			if v != v && math.Float64bits(v) != 0x7ff8000000000000 {
				return true
			}
		}
	case pdarray.Float32:
		for _, v := range pdarray.View[float32](a) {
			if v != v && math.Float32bits(v) != 0x7fc00000 {
				return true
			}
		}
	}
	return false
}

// dictionaryPays estimates, from a sample, whether a row group of rows
// values of c fits its dictionary in dictPageLimit. It hashes at most
// 4096 sampled values, never the column.
func dictionaryPays(c Column, lo, hi int) bool {
	const sample = 4096
	rows := hi - lo
	if rows == 0 {
		return true
	}
	if c.A.DType() == pdarray.Bool {
		return false // arrow-go never dictionary-encodes booleans
	}
	size := c.A.DType().Size()
	if size < 4 {
		size = 4 // stored as INT32
	}
	b := c.A.Bytes()
	isz := c.A.DType().Size()
	step := max(1, rows/sample)
	seen := make(map[string]struct{}, sample)
	taken := 0
	for i := lo; i < hi && taken < sample; i += step {
		seen[string(b[i*isz:(i+1)*isz])] = struct{}{}
		taken++
	}
	// Distinct values grow at most linearly with the rows: extrapolate
	// the sample's distinct ratio (an overestimate for repeated values,
	// which only makes "plain" more likely when it is close).
	est := float64(len(seen)) / float64(taken) * float64(rows)
	if len(seen) < taken/2 {
		est = float64(len(seen)) // few distinct values: the sample saw most of them
	}
	return est*float64(size) <= dictPageLimit*0.9
}

// WriteParquet writes cols as one Parquet file to w: required columns, the
// chosen codec, RowGroupSize rows per row group; the columns of each row
// group are encoded in parallel. w receives the file sequentially.
func WriteParquet(w io.Writer, cols []Column, o ParquetWriteOptions) (err error) {
	n, err := checkColumns(cols)
	if err != nil {
		return err
	}
	if o.Compression == "" {
		o.Compression = "zstd"
	}
	codec, ok := Codecs[strings.ToLower(o.Compression)]
	if !ok {
		return errorf(ErrValue, "compression %q is not supported; use one of %s", o.Compression, codecNames())
	}
	if o.CompressionLevel != 0 {
		lo, hi, ok := codecLevels(codec)
		if !ok {
			return errorf(ErrValue, "compression %q has no levels; give compression_level only with zstd, gzip or brotli", o.Compression)
		}
		if o.CompressionLevel < lo || o.CompressionLevel > hi {
			return errorf(ErrValue, "compression_level %d is outside %s's %d..%d", o.CompressionLevel, strings.ToLower(o.Compression), lo, hi)
		}
	}
	if o.RowGroupSize <= 0 {
		o.RowGroupSize = DefaultRowGroupSize
	}
	if o.Dictionary == "" {
		o.Dictionary = "auto"
	}
	if o.Dictionary != "auto" && o.Dictionary != "on" && o.Dictionary != "off" {
		return errorf(ErrValue, "dictionary must be \"auto\", \"on\" or \"off\", got %q", o.Dictionary)
	}
	fields := make(schema.FieldList, len(cols))
	for i, c := range cols {
		if fields[i], err = parquetNode(c); err != nil {
			return err
		}
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return errorf(ErrValue, "%v", err)
	}
	props := []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithMaxRowGroupLength(int64(o.RowGroupSize)),
		parquet.WithCreatedBy("arktos"), parquet.WithStats(true), parquet.WithAllocator(&poolAllocator{})}
	if o.CompressionLevel != 0 {
		props = append(props, parquet.WithCompressionLevel(o.CompressionLevel))
	}
	for _, c := range cols {
		dict := o.Dictionary == "on" || o.Dictionary == "auto" && dictionaryPays(c, 0, min(n, o.RowGroupSize))
		if c.Cats != nil {
			dict = o.Dictionary != "off" // each chunk's dictionary is known before it is written (writeStrings)
		} else if dict && otherNaNs(c.A) {
			// arrow-go's dictionary keeps one NaN, the default one: a NaN
			// with a payload or a sign bit would lose its bits.
			dict = false
		}
		if !dict {
			WriteStats.DictionarySkipped.Add(1)
		}
		props = append(props, parquet.WithDictionaryFor(c.Name, dict))
	}
	wp := parquet.NewWriterProperties(props...)
	workers := max(1, o.Workers)
	// Pages are compressed with libzstd through cgo, as Read decodes them.
	// BenchmarkWriteParquet, zstd, two workers on two cores: 167-191 ms a
	// write without the spare P, 130-172 with.
	if codec == compress.Codecs.Zstd && zstdWorkersNeedSpareP(workers) {
		defer par.SpareP()()
		WriteStats.SparePWrites.Add(1)
	}
	return writeRowGroupsFn(w, root, wp, cols, n, o.RowGroupSize, workers)
}

// writeRowGroupsFn is writeRowGroups; tests swap in arrow-go's own file
// writer to check that both write the same bytes.
var writeRowGroupsFn = writeRowGroups

// ParquetWriteScratch estimates the memory WriteParquet holds beside the
// columns: the encoded chunks of the row groups in flight (rowGroupsAhead,
// plus the one closing; an encoded chunk taken at its raw size, which a
// dictionary or a codec only shrinks, bar a few bytes) and each worker's
// 8 bytes a row of scratch. The server reserves it before writing.
func ParquetWriteScratch(cols []Column, opts ParquetWriteOptions) int64 {
	if len(cols) == 0 {
		return 0
	}
	rg := opts.RowGroupSize
	if rg <= 0 {
		rg = DefaultRowGroupSize
	}
	n := cols[0].A.Len()
	rows := int64(min(rg, n))
	var row, chunks, table int64
	for _, c := range cols {
		if c.Cats != nil {
			chunks += stringChunkBytes(c, rg)
			table = max(table, 4*int64(c.Cats.len())+2*rows) // (and a chunk's definition levels)
			continue
		}
		row += int64(c.A.DType().Size())
	}
	nrg := max(1, (n+rg-1)/rg)
	w := min(max(1, opts.Workers), nrg*len(cols)) // writeRowGroups' workers
	inFlight := int64(min(nrg, rowGroupsAhead(w, len(cols))+1))
	// A string column's chunk is counted at its largest plain size, and a
	// worker's table of its categories beside the 8 bytes a row.
	return inFlight*(rows*row+chunks) + int64(w)*(8*rows+table)
}

// rowGroupsAhead is how many row groups may be queued or encoding at once:
// enough for two units per worker past the row group being closed, and at
// least 3. It bounds the encoded chunks held in memory (each unit holds its
// chunk's pages until it is written out).
func rowGroupsAhead(workers, cols int) int {
	return max(2, (2*workers+cols-1)/cols) + 1
}

// deferredPager is a buffered page writer whose Close (which stamps the
// chunk's file offsets into its metadata and copies its pages to the
// file) is held back until closeInOrder: a worker can then finish a
// column chunk (last page, dictionary page, statistics, all compressed)
// without knowing where in the file the chunk will go.
type deferredPager struct {
	file.PageWriter
	hasDict, fallback, closed bool
}

func (p *deferredPager) Close(hasDict, fallback bool) error {
	p.hasDict, p.fallback, p.closed = hasDict, fallback, true
	return nil
}

func (p *deferredPager) closeInOrder() error {
	if !p.closed {
		return fmt.Errorf("column chunk was not finished")
	}
	return p.PageWriter.Close(p.hasDict, p.fallback)
}

// tellWriter counts what it wrote (arrow-go's page writers ask for the
// position).
type tellWriter struct {
	w   io.Writer
	pos int64
}

func (t *tellWriter) Tell() int64 { return t.pos }

func (t *tellWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.pos += int64(n)
	if err == nil && n != len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// pendingRowGroup is one row group whose (row group, column) units are
// queued or encoding.
type pendingRowGroup struct {
	meta    *metadata.RowGroupMetaDataBuilder
	writers []file.ColumnChunkWriter
	pagers  []*deferredPager
	done    []chan error
	rows    int
}

// writeUnit is one column chunk for a worker to encode and finish.
type writeUnit struct {
	cw     file.ColumnChunkWriter
	a      *pdarray.Array
	cats   *Categories // a string column's
	lo, hi int
	done   chan<- error
}

// writeRowGroups writes the file as arrow-go's buffered row-group writer
// would (the same bytes: TestPipelinedWriteSameBytes), but encodes
// (row group x column) units on workers goroutines across row groups:
// the row groups after the one being closed (rowGroupsAhead) are already
// encoding, so no worker waits at a row group's end for the
// slowest column. Closing (offsets, copying pages to w) is done here, in
// file order.
func writeRowGroups(w io.Writer, root *schema.GroupNode, props *parquet.WriterProperties, cols []Column, n, rgSize, workers int) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = errorf(ErrIO, "writing Parquet: %v", x)
		}
	}()
	sink := &tellWriter{w: w}
	if _, err := sink.Write([]byte("PAR1")); err != nil {
		return errorf(ErrIO, "writing Parquet: %v", err)
	}
	sc := schema.NewSchema(root)
	fmb := metadata.NewFileMetadataBuilder(sc, props, nil)
	nrg := max(1, (n+rgSize-1)/rgSize)
	ahead := rowGroupsAhead(workers, len(cols))
	work := make(chan writeUnit, ahead*len(cols))
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, nrg*len(cols)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch writeScratch // kept across units
			for u := range work {
				if failed.Load() {
					u.done <- fmt.Errorf("stopped: an earlier column failed")
					continue
				}
				u.done <- finishChunkCaught(u, &scratch)
			}
		}()
	}
	defer func() {
		if err != nil {
			failed.Store(true)
		}
		close(work)
		wg.Wait()
	}()
	pending := make([]*pendingRowGroup, 0, ahead)
	start := func(k int) error {
		lo, hi := k*rgSize, min(n, (k+1)*rgSize)
		rg := &pendingRowGroup{meta: fmb.AppendRowGroup(), rows: hi - lo}
		for i, c := range cols {
			colMeta := rg.meta.NextColumnChunk()
			path := colMeta.Descr().Path()
			pw, err := file.NewPageWriter(sink, props.CompressionFor(path), props.CompressionLevelFor(path), colMeta, int16(k), int16(i), props.Allocator(), true, nil, nil)
			if err != nil {
				return err
			}
			p := &deferredPager{PageWriter: pw}
			rg.pagers = append(rg.pagers, p)
			rg.writers = append(rg.writers, file.NewColumnChunkWriter(colMeta, p, props))
			rg.done = append(rg.done, make(chan error, 1))
			work <- writeUnit{cw: rg.writers[i], a: c.A, cats: c.Cats, lo: lo, hi: hi, done: rg.done[i]}
		}
		if len(pending) > 0 {
			WriteStats.RowGroupsAhead.Add(1)
		}
		pending = append(pending, rg)
		return nil
	}
	next := 0
	for k := range nrg {
		for ; next < nrg && next <= k+ahead-1; next++ {
			if err := start(next); err != nil {
				return errorf(ErrIO, "writing Parquet: %v", err)
			}
		}
		rg := pending[0]
		pending = pending[1:]
		var total int64
		for i := range cols {
			if e := <-rg.done[i]; e != nil {
				return errorf(ErrIO, "writing column %q: %v", cols[i].Name, e)
			}
			if e := rg.pagers[i].closeInOrder(); e != nil {
				return errorf(ErrIO, "writing column %q: %v", cols[i].Name, e)
			}
			total += rg.writers[i].TotalBytesWritten()
		}
		rg.meta.SetNumRows(rg.rows)
		if err := rg.meta.Finish(total, int16(k)); err != nil {
			return errorf(ErrIO, "writing Parquet: %v", err)
		}
		if workers > 1 && len(cols) > 1 {
			WriteStats.ParallelRowGroups.Add(1)
		}
	}
	fmd, err := fmb.Finish()
	if err != nil {
		return errorf(ErrIO, "writing Parquet: %v", err)
	}
	m, err := fmd.WriteTo(sink, nil)
	if err != nil {
		return errorf(ErrIO, "writing Parquet: %v", err)
	}
	if err := binary.Write(sink, binary.LittleEndian, uint32(m)); err != nil {
		return errorf(ErrIO, "writing Parquet: %v", err)
	}
	if _, err := sink.Write([]byte("PAR1")); err != nil {
		return errorf(ErrIO, "writing Parquet: %v", err)
	}
	return nil
}

// finishChunk writes rows lo:hi of a into cw and closes it: every page is
// encoded and compressed here, on the worker; only the deferred pager's
// close is left.
func finishChunk(cw file.ColumnChunkWriter, a *pdarray.Array, cats *Categories, lo, hi int, sc *writeScratch) (err error) {
	if cats != nil {
		err = writeStringChunk(cw, a, cats, lo, hi, sc)
	} else {
		err = writeChunk(cw, a, lo, hi, sc)
	}
	if err != nil {
		return err
	}
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("%v", x)
		}
	}()
	return cw.Close()
}

// writeScratch is one encoding goroutine's reusable buffers.
type writeScratch struct {
	wide  []int32             // 8/16-bit values widened to INT32
	idx   []int32             // dictionary indices
	table []int32             // value-min -> index+1 (writeDenseDict); category -> index (writeStrings)
	vals  []parquet.ByteArray // a plain string batch's values (writeStrings)
	defs  []int16             // a string chunk's definition levels (with a null category)
}

func writeChunk(cw file.ColumnChunkWriter, a *pdarray.Array, lo, hi int, sc *writeScratch) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("%v", x)
		}
	}()
	widen := func(conv func(dst []int32)) []int32 {
		if cap(sc.wide) < hi-lo {
			sc.wide = make([]int32, hi-lo)
		}
		t := sc.wide[:hi-lo]
		conv(t)
		return t
	}
	var i32 []int32
	var i64 []int64
	switch a.DType() {
	case pdarray.Bool:
		_, err = cw.(*file.BooleanColumnChunkWriter).WriteBatch(pdarray.View[bool](a)[lo:hi], nil, nil)
		return err
	case pdarray.Float32:
		_, err = cw.(*file.Float32ColumnChunkWriter).WriteBatch(pdarray.View[float32](a)[lo:hi], nil, nil)
		return err
	case pdarray.Float64:
		_, err = cw.(*file.Float64ColumnChunkWriter).WriteBatch(pdarray.View[float64](a)[lo:hi], nil, nil)
		return err
	case pdarray.Int32, pdarray.Uint32:
		i32 = pdarray.BytesAs[int32](a.Bytes())[lo:hi]
	case pdarray.Int64, pdarray.Uint64:
		i64 = pdarray.BytesAs[int64](a.Bytes())[lo:hi]
	case pdarray.Int8:
		i32 = widen(func(d []int32) { widenInto(d, pdarray.View[int8](a)[lo:hi]) })
	case pdarray.Int16:
		i32 = widen(func(d []int32) { widenInto(d, pdarray.View[int16](a)[lo:hi]) })
	case pdarray.Uint8:
		i32 = widen(func(d []int32) { widenInto(d, pdarray.View[uint8](a)[lo:hi]) })
	case pdarray.Uint16:
		i32 = widen(func(d []int32) { widenInto(d, pdarray.View[uint16](a)[lo:hi]) })
	default:
		return fmt.Errorf("dtype %s cannot be written", a.DType())
	}
	if i64 != nil {
		if ok, err := writeDenseDict(cw, i64, arrow.PrimitiveTypes.Int64, sc); ok || err != nil {
			return err
		}
		_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(i64, nil, nil)
		return err
	}
	if ok, err := writeDenseDict(cw, i32, arrow.PrimitiveTypes.Int32, sc); ok || err != nil {
		return err
	}
	_, err = cw.(*file.Int32ColumnChunkWriter).WriteBatch(i32, nil, nil)
	return err
}

// denseDictSpan is the widest value range writeDenseDict maps with a table.
const denseDictSpan = 1 << 16

// disableDenseDict makes writeDenseDict decline (tests compare both paths).
var disableDenseDict bool

// dictionaryEncoder is the part of arrow-go's dictionary encoder that
// writeDenseDict seeds (the column writer's CurrentEncoder).
type dictionaryEncoder interface {
	PutDictionary(arrow.Array) error
	NumEntries() int
	AddRawSize(int64)
}

// writeDenseDict writes a dictionary-encoded integer column chunk whose
// values span less than denseDictSpan: a table indexed by value-min gives
// each value its dictionary index (in order of first appearance, as
// arrow-go's hash table would), so no hash table is probed per value; the
// dictionary and the indices then go to arrow-go's writer as they are
// (pqarrow's path for dictionary arrays). It reports false, having written
// nothing, when the column is not dictionary-encoded or its range is wider.
func writeDenseDict[T int32 | int64](cw file.ColumnChunkWriter, vals []T, typ arrow.DataType, sc *writeScratch) (bool, error) {
	enc := cw.CurrentEncoder()
	de, ok := enc.(dictionaryEncoder)
	if disableDenseDict || !ok || enc.Encoding() != parquet.Encodings.PlainDict || len(vals) == 0 || de.NumEntries() != 0 {
		return false, nil
	}
	mn, mx := vals[0], vals[0]
	for _, v := range vals {
		mn, mx = min(mn, v), max(mx, v)
	}
	if int64(mx)-int64(mn) >= denseDictSpan || int64(mx)-int64(mn) < 0 {
		return false, nil
	}
	span := int(int64(mx)-int64(mn)) + 1
	if cap(sc.table) < span {
		sc.table = make([]int32, denseDictSpan)
	}
	table := sc.table[:span]
	clear(table)
	if cap(sc.idx) < len(vals) {
		sc.idx = make([]int32, len(vals))
	}
	idx := sc.idx[:len(vals)]
	var dict []T // fresh: the encoder may keep the dictionary array
	for i, v := range vals {
		s := &table[v-mn]
		if *s == 0 {
			dict = append(dict, v)
			*s = int32(len(dict))
		}
		idx[i] = *s - 1
	}
	dictArr := array.MakeFromData(array.NewData(typ, len(dict), []*memory.Buffer{nil, memory.NewBufferBytes(pdarray.AsBytes(dict))}, nil, 0, 0))
	defer dictArr.Release()
	if err := de.PutDictionary(dictArr); err != nil {
		return true, err
	}
	if de.NumEntries() != len(dict) {
		return true, fmt.Errorf("dictionary of %d values has %d entries", len(dict), de.NumEntries())
	}
	if st := cw.PageStatistics(); st != nil {
		st.IncNulls(0)
		st.IncNumValues(int64(len(vals)))
		if err := st.UpdateFromArrow(dictArr, false); err != nil {
			return true, err
		}
	}
	// Pages: arrow-go cuts a dictionary page when the raw size it has seen
	// passes the page size; indices do not count, so add each slice's raw
	// size after writing it (the next slice's first batch then cuts).
	size := int64(unsafe.Sizeof(T(0)))
	slice := max(1024, int(parquet.DefaultDataPageSize/size))
	for off := 0; off < len(idx); off += slice {
		part := idx[off:min(len(idx), off+slice)]
		ia := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int32, len(part), []*memory.Buffer{nil, memory.NewBufferBytes(pdarray.AsBytes(part))}, nil, 0, 0))
		err := cw.WriteDictIndices(ia, nil, nil)
		ia.Release()
		if err != nil {
			return true, err
		}
		de.AddRawSize(int64(len(part)) * size)
	}
	WriteStats.DenseDictChunks.Add(1)
	return true, nil
}

func widenInto[T narrowInt](dst []int32, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = int32(v)
	}
}

// finishChunkCaught is finishChunk whose panic (a bug) becomes a
// *par.Panic error: the writer waits on u.done, so a worker must answer.
func finishChunkCaught(u writeUnit, sc *writeScratch) (err error) {
	defer par.Catch(&err)
	return finishChunk(u.cw, u.a, u.cats, u.lo, u.hi, sc)
}

package arrowio

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// NullPolicy says what a read does with null values (see the package doc).
type NullPolicy struct {
	Mode string // "auto" (or ""), "fill", "mask", "error"
	// Fill is the value written into null slots with "fill" and "mask":
	// nil (0 for "mask"; "fill" requires one), bool, int64, uint64 or float64.
	Fill any
	// NullString is the string a string column's nulls are read as (one
	// more category, as Arkouda's NAvalue and pandas' fillna); nil refuses
	// a string column with nulls, whatever Mode says.
	NullString *string
}

// nullStringErr refuses a string column's nulls, saying how to read them.
func nullStringErr(where, column string) error {
	return errorf(ErrData, "%s: string column %q has nulls, which a Categorical cannot hold as such: pass null_string=\"N/A\" (any string) to read them as that string, or leave the column out with columns=[...]", where, column)
}

// NullModes lists the accepted NullPolicy modes, for messages.
var NullModes = []string{"auto", "fill", "mask", "error"}

func (p NullPolicy) mode() string {
	if p.Mode == "" {
		return "auto"
	}
	return p.Mode
}

func (p NullPolicy) check() error {
	if p.NullString != nil && !utf8.ValidString(*p.NullString) {
		return errorf(ErrValue, "null_string %q is not UTF-8", *p.NullString)
	}
	switch p.mode() {
	case "auto", "error", "mask":
		return nil
	case "fill":
		if p.Fill == nil {
			return errorf(ErrValue, "nulls=\"fill\" needs a fill_value")
		}
		return nil
	}
	return errorf(ErrValue, "nulls must be one of %s, got %q", strings.Join(NullModes, ", "), p.Mode)
}

// ReadStats counts how column chunks were decoded, process-wide; tests use
// them to prove that the fast path is taken.
type ReadStats struct {
	// DirectValues were decoded by arrow-go straight into the destination.
	DirectValues atomic.Uint64
	// ConvertedValues went through a scratch buffer (8/16-bit integers).
	ConvertedValues atomic.Uint64
	// SpreadValues were moved in place to make room for nulls.
	SpreadValues atomic.Uint64
	// Chunks decoded, and arrow-go page buffers served from the pool.
	Chunks, PoolHits atomic.Uint64
	// FastChunks were read by the direct page reader (parquet_fast.go),
	// FallbackChunks were eligible but went back to arrow-go's reader.
	FastChunks, FallbackChunks atomic.Uint64
	// Pages of the direct reader: DirectPages had their values read or
	// decompressed straight into the destination, CopiedPages were
	// decompressed into the page buffer and copied, DictDecodedPages were
	// gathered from the dictionary; DictPages are dictionaries read.
	// ShiftedPages are pages of optional columns without nulls that were
	// decompressed straight into the destination, level prefix and all
	// (fastUnit.shifted).
	DirectPages, CopiedPages, DictDecodedPages, DictPages, ShiftedPages atomic.Uint64
	// Zstd pages decoded by libzstd and by klauspost's Go decoder, and
	// pages written with libzstd.
	NativeZstdPages, GoZstdPages, NativeZstdEncodes atomic.Uint64
	// ScratchReused counts workers that started a read with buffers kept
	// from an earlier one (getScratch).
	ScratchReused atomic.Uint64
	// AheadChunks are compressed chunks the direct reader took from a
	// buffer read ahead (parquet_ahead.go) instead of reading them itself
	// (a chunk that then falls back to arrow-go's reader counts too).
	AheadChunks atomic.Uint64
	// SparePReads are reads that lent the scheduler a P while their
	// workers decoded zstd pages through cgo (par.SpareP).
	SparePReads atomic.Uint64
	// BoolPages are BOOLEAN data pages decoded by the direct reader.
	BoolPages atomic.Uint64
	// DeltaPages (DELTA_BINARY_PACKED) and SplitPages (BYTE_STREAM_SPLIT)
	// are data pages decoded by the direct reader.
	DeltaPages, SplitPages atomic.Uint64
}

// Stats are the process-wide read counters.
var Stats ReadStats

// ParquetSource is one Parquet file to read; Name is for messages. The
// plan reads R concurrently (ReadAt) and never closes it.
type ParquetSource struct {
	Name string
	R    parquet.ReaderAtSeeker
}

// PlanColumn is one output column of a read.
type PlanColumn struct {
	Name     string
	DType    pdarray.DType
	Rows     int
	Nullable bool  // the schema allows nulls
	Nulls    int64 // from the statistics; -1 when some chunk has none
	Mask     bool  // a bool mask array goes with it (policy "mask" and Nullable)
	index    int   // leaf index in the file schema
	phys     parquet.Type
}

// ParquetPlan is a planned read: metadata read, outputs sized, nothing
// decoded yet.
type ParquetPlan struct {
	Columns []PlanColumn
	// Strings are the string columns asked for, read with ReadStrings
	// (parquet_strings.go), not Read.
	Strings []StringColumn
	Rows    int
	policy  NullPolicy
	files   []*file.Reader
	srcs    []*recordingReader // the files' readers, which keep their failed reads (dataErr)
	names   []string
	offsets [][]int // offsets[f][rg]: first output row of row group rg of file f
	alloc   *poolAllocator
	// Stop, when set, cancels Read between column chunks: Read then
	// returns its *par.Canceled error.
	Stop *par.Stop
}

// WorkerScratch bounds, from the files' metadata, what one worker of Read
// holds at a time: a column chunk read whole (its compressed size), its
// pages decoded (at most its uncompressed size) and 4 bytes a row of the
// row group for 8- and 16-bit and bool columns. The server reserves it per
// worker while the read runs, with AheadChunk for the chunks read ahead:
// a file whose row groups are too large for the room left is refused
// before it is read.
func (p *ParquetPlan) WorkerScratch() int64 {
	var most int64
	for _, r := range p.files {
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			g := md.RowGroup(rg)
			for _, c := range p.Columns {
				cc, err := g.ColumnChunk(md.Schema.ColumnIndexByName(c.Name))
				if err != nil {
					continue
				}
				most = max(most, max(cc.TotalCompressedSize(), 0)+max(cc.TotalUncompressedSize(), 0)+4*max(g.NumRows(), 0))
			}
		}
	}
	return most
}

// Units is the number of (row group, column) units Read deals to workers.
func (p *ParquetPlan) Units() int {
	n := 0
	for _, r := range p.files {
		n += r.MetaData().NumRowGroups() * len(p.Columns)
	}
	return n
}

// columnDType maps a Parquet leaf to a pdarray dtype, or explains why not.
func columnDType(c *schema.Column) (pdarray.DType, string) {
	// Nested: a leaf under a group (its path has several parts), not a
	// top-level column whose name holds a dot ("price.usd").
	if c.MaxRepetitionLevel() > 0 || len(c.ColumnPath()) > 1 {
		return pdarray.Invalid, "nested (" + c.Path() + ")"
	}
	lt := c.LogicalType()
	plain := lt == nil || lt.Equals(schema.NoLogicalType{})
	switch c.PhysicalType() {
	case parquet.Types.Boolean:
		if plain {
			return pdarray.Bool, ""
		}
	case parquet.Types.Float:
		if plain {
			return pdarray.Float32, ""
		}
	case parquet.Types.Double:
		if plain {
			return pdarray.Float64, ""
		}
	case parquet.Types.Int32, parquet.Types.Int64:
		if plain {
			if c.PhysicalType() == parquet.Types.Int32 {
				return pdarray.Int32, ""
			}
			return pdarray.Int64, ""
		}
		if it, ok := lt.(*schema.IntLogicalType); ok {
			return intDType(it.BitWidth(), it.IsSigned())
		}
		if it, ok := lt.(schema.IntLogicalType); ok {
			return intDType(it.BitWidth(), it.IsSigned())
		}
	}
	what := strings.ToLower(c.PhysicalType().String())
	if !plain {
		what = lt.String() + " (" + what + ")"
	}
	return pdarray.Invalid, what
}

func intDType(width int8, signed bool) (pdarray.DType, string) {
	t := map[int8][2]pdarray.DType{8: {pdarray.Uint8, pdarray.Int8}, 16: {pdarray.Uint16, pdarray.Int16},
		32: {pdarray.Uint32, pdarray.Int32}, 64: {pdarray.Uint64, pdarray.Int64}}[width]
	if signed {
		return t[1], ""
	}
	return t[0], ""
}

// OpenParquet reads the footers of srcs and plans reading columns (all
// top-level columns when nil) from every file, in order, one after another.
func OpenParquet(srcs []ParquetSource, columns []string, policy NullPolicy) (plan *ParquetPlan, err error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, errorf(ErrValue, "no Parquet files to read")
	}
	p := &ParquetPlan{policy: policy, alloc: &poolAllocator{}}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	props := parquet.NewReaderProperties(p.alloc)
	// Read column chunks through a buffered section reader: no whole-chunk
	// copy into a fresh zeroed buffer.
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	for _, src := range srcs {
		rec := &recordingReader{ReaderAtSeeker: src.R}
		src.R = rec
		r, err := openParquetReader(src, props)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, r)
		p.srcs = append(p.srcs, rec)
		p.names = append(p.names, src.Name)
	}
	sc := p.files[0].MetaData().Schema
	allColumns := columns == nil
	if allColumns {
		root := sc.Root()
		for i := 0; i < root.NumFields(); i++ {
			columns = append(columns, root.Field(i).Name())
		}
	}
	var readable, unsupported []string
	for i := 0; i < sc.NumColumns(); i++ {
		c := sc.Column(i)
		if dt, why := columnDType(c); dt.Valid() {
			readable = append(readable, fmt.Sprintf("%s (%s)", c.Path(), dt))
		} else if isStringColumn(c) {
			readable = append(readable, fmt.Sprintf("%s (string)", c.Path()))
		} else {
			unsupported = append(unsupported, fmt.Sprintf("%s: %s", c.Path(), why))
		}
	}
	seen := map[string]bool{}
	var bad []string
	for _, name := range columns {
		inFile := 0
		for i := 0; i < sc.Root().NumFields(); i++ {
			if sc.Root().Field(i).Name() == name {
				inFile++
			}
		}
		if err := oneColumnNamed(p.names[0], name, inFile, seen); err != nil {
			return nil, err
		}
		idx := sc.ColumnIndexByName(name)
		if idx < 0 {
			// A nested group: its leaves are named parent.child.
			if n := sc.Root().FieldIndexByName(name); n >= 0 {
				bad = append(bad, fmt.Sprintf("%s: nested", name))
				continue
			}
			return nil, errorf(ErrValue, "%s has no column %q; its columns are: %s", p.names[0], name, strings.Join(readable, ", ")+unsupportedNote(unsupported))
		}
		c := sc.Column(idx)
		dt, why := columnDType(c)
		if !dt.Valid() && isStringColumn(c) {
			p.Strings = append(p.Strings, StringColumn{Name: name})
			continue
		}
		if !dt.Valid() {
			bad = append(bad, fmt.Sprintf("%s: %s", name, why))
			continue
		}
		p.Columns = append(p.Columns, PlanColumn{Name: name, DType: dt, Nullable: c.MaxDefinitionLevel() > 0, index: idx, phys: c.PhysicalType()})
	}
	if len(bad) > 0 {
		return nil, errorf(ErrType, "cannot read column(s) %s: no array dtype holds them yet; readable columns: %s (pass columns=[...] to pick them)",
			strings.Join(bad, "; "), orNone(readable))
	}
	if len(p.Columns)+len(p.Strings) == 0 {
		return nil, errorf(ErrValue, "no columns to read")
	}
	// Every other file must hold the same columns with the same types (and,
	// read whole, no others: a later file's extra column was dropped unsaid).
	for f := 1; f < len(p.files); f++ {
		fsc := p.files[f].MetaData().Schema
		if allColumns {
			for i := 0; i < fsc.Root().NumFields(); i++ {
				if name := fsc.Root().Field(i).Name(); !slices.Contains(columns, name) {
					return nil, errorf(ErrData, "%s has a column %q, which %s has not; read the files separately, or pass columns=[...] to read the ones they share", p.names[f], name, p.names[0])
				}
			}
		}
		for i := range p.Columns {
			pc := &p.Columns[i]
			idx := fsc.ColumnIndexByName(pc.Name)
			if idx < 0 {
				return nil, errorf(ErrData, "%s has no column %q, which %s has; read the files separately", p.names[f], pc.Name, p.names[0])
			}
			if dt, _ := columnDType(fsc.Column(idx)); dt != pc.DType {
				return nil, errorf(ErrData, "column %q is %s in %s but %s in %s; read the files separately", pc.Name, pc.DType, p.names[0], dtName(dt), p.names[f])
			}
			// Nullable in any file: the first's schema alone once decided,
			// and a later file's nulls became 0s with no mask.
			pc.Nullable = pc.Nullable || fsc.Column(idx).MaxDefinitionLevel() > 0
		}
		for _, sc := range p.Strings {
			idx := fsc.ColumnIndexByName(sc.Name)
			if idx < 0 {
				return nil, errorf(ErrData, "%s has no column %q, which %s has; read the files separately", p.names[f], sc.Name, p.names[0])
			}
			if !isStringColumn(fsc.Column(idx)) {
				return nil, errorf(ErrData, "column %q is a string column in %s but not in %s; read the files separately", sc.Name, p.names[0], p.names[f])
			}
		}
	}
	// Size the outputs from the metadata.
	total := int64(0)
	p.offsets = make([][]int, len(p.files))
	for f, r := range p.files {
		md := r.MetaData()
		p.offsets[f] = make([]int, md.NumRowGroups())
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			p.offsets[f][rg] = int(total)
			// Checked as added: the counts are the file's word (no overflow).
			if n := md.RowGroup(rg).NumRows(); n < 0 || n > maxReadRows-total {
				return nil, errorf(ErrData, "%s: row group %d says %d rows, past the %d one read takes", p.names[f], rg, n, int64(maxReadRows))
			}
			total += md.RowGroup(rg).NumRows()
		}
	}
	if nu := p.Units(); nu > maxReadUnits { // Read's work units, a row group and column each (32 bytes)
		return nil, errorf(ErrValue, "this read has %d row groups × columns, more than the %d one read takes; read fewer files or columns at a time", nu, maxReadUnits)
	}
	p.Rows = int(total)
	for i := range p.Strings {
		p.Strings[i].Rows = p.Rows
	}
	for i := range p.Columns {
		pc := &p.Columns[i]
		pc.Rows = p.Rows
		pc.Nulls = p.nullCount(pc)
		pc.Mask = policy.mode() == "mask" && pc.Nullable
		if pc.Nulls > 0 && !p.nullsAllowed(pc) {
			return nil, p.nullsErr(pc.Name, pc.Nulls)
		}
	}
	if err := maskNamesFree(p.Columns, p.Strings); err != nil {
		return nil, err
	}
	return p, nil
}

func openParquetReader(src ParquetSource, props *parquet.ReaderProperties) (r *file.Reader, err error) {
	// A read of the footer that failed is the cause (the file is opened by
	// one goroutine: any failure is this one's).
	ioFirst := func(e error) error {
		if rec, ok := src.R.(*recordingReader); ok {
			if f, ok := rec.failed(0, 0, math.MaxInt64); ok {
				return errorf(ErrIO, "reading %s: %v", src.Name, f)
			}
		}
		return e
	}
	defer func() {
		// arrow-go panics on some malformed footers.
		if x := recover(); x != nil {
			r, err = nil, ioFirst(errorf(ErrData, "%s is not a readable Parquet file: %v", src.Name, x))
		}
	}()
	r, err = file.NewParquetReader(src.R, file.WithReadProps(props))
	if err != nil {
		return nil, ioFirst(errorf(ErrData, "%s is not a readable Parquet file: %v", src.Name, err))
	}
	return r, nil
}

// recordingReader is a file's reader that keeps its last failed reads
// (not the file's end), so that a chunk arrow-go's reader gives up on
// because a read of its bytes failed is reported as that failed read
// (ErrIO), not as the corrupt chunk arrow-go's message makes of it.
type recordingReader struct {
	parquet.ReaderAtSeeker
	seq  atomic.Uint64 // failed reads so far
	mu   sync.Mutex
	last [8]failedRead // the last ones, by seq
}

type failedRead struct {
	seq uint64
	off int64
	n   int
	err error
}

func (r *recordingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.ReaderAtSeeker.ReadAt(b, off)
	if err != nil && n < len(b) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		r.mu.Lock()
		seq := r.seq.Add(1)
		r.last[seq%uint64(len(r.last))] = failedRead{seq, off, len(b), err}
		r.mu.Unlock()
	}
	return n, err
}

// failed returns a failed read, counted after the first `after`, that
// overlaps bytes [lo, hi) of the file, as a readError.
func (r *recordingReader) failed(after uint64, lo, hi int64) (readError, bool) {
	if r.seq.Load() == after {
		return readError{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.last {
		if f.seq > after && f.off < hi && f.off+int64(f.n) > lo {
			return readError{f.off, f.err}, true
		}
	}
	return readError{}, false
}

// dataErr is a unit's failure in arrow-go's reader (what: its error or a
// panic's value): ErrIO when a read of the unit's chunk (bytes [lo, hi))
// failed since the unit began (after that many failed reads of its file),
// else ErrData.
func (p *ParquetPlan) dataErr(f, rg int, col string, after uint64, lo, hi int64, what any) error {
	if re, ok := p.srcs[f].failed(after, lo, hi); ok {
		return errorf(ErrIO, "%s: row group %d, column %q: %v", p.names[f], rg, col, re)
	}
	return errorf(ErrData, "%s: row group %d, column %q: %v", p.names[f], rg, col, what)
}

func unsupportedNote(unsupported []string) string {
	if len(unsupported) == 0 {
		return ""
	}
	return "; not readable: " + strings.Join(unsupported, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func dtName(d pdarray.DType) string {
	if d.Valid() {
		return d.String()
	}
	return "an unsupported type"
}

// nullCount sums the null counts of a column's statistics, or -1.
func (p *ParquetPlan) nullCount(pc *PlanColumn) int64 {
	if !pc.Nullable {
		return 0
	}
	n := int64(0)
	for _, r := range p.files {
		md := r.MetaData()
		idx := md.Schema.ColumnIndexByName(pc.Name)
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			cc, err := md.RowGroup(rg).ColumnChunk(idx)
			if err != nil {
				return -1
			}
			if ok, err := cc.StatsSet(); !ok || err != nil {
				return -1
			}
			st, err := cc.Statistics()
			if err != nil || st == nil || !st.HasNullCount() {
				return -1
			}
			n += st.NullCount()
		}
	}
	return n
}

func (p *ParquetPlan) nullsAllowed(pc *PlanColumn) bool {
	switch p.policy.mode() {
	case "fill", "mask":
		return true
	case "auto":
		return pc.DType == pdarray.Float32 || pc.DType == pdarray.Float64
	}
	return false
}

func (p *ParquetPlan) nullsErr(col string, n int64) error {
	var cols []string
	for _, pc := range p.Columns {
		if pc.Name != col && pc.Nulls > 0 && !p.nullsAllowed(&pc) {
			cols = append(cols, pc.Name)
		}
	}
	count := fmt.Sprintf("%d nulls", n)
	if n < 0 {
		count = "nulls"
	}
	also := ""
	if len(cols) > 0 {
		also = " (so do " + strings.Join(cols, ", ") + ")"
	}
	how := "nulls=\"auto\" fills only float columns (with NaN)"
	if p.policy.mode() == "error" {
		how = "nulls=\"error\" refuses them"
	}
	return errorf(ErrData, "column %q holds %s%s and %s: pass nulls=\"fill\" with fill_value=..., or nulls=\"mask\" to also get a bool array %s_mask (true where null)",
		col, count, also, how, col)
}

// Close releases the file readers (not the sources).
func (p *ParquetPlan) Close() {
	p.files = nil
}

// ReadReport says what a read did.
type ReadReport struct {
	Nulls []int64 // per column: null slots filled
}

// Read decodes every planned column into dst[i] (Columns[i].Rows elements
// of Columns[i].DType; its bytes may be dirty: every one is written) and
// its mask into masks[i] when Columns[i].Mask, using workers goroutines.
func (p *ParquetPlan) Read(dst, masks []*pdarray.Array, workers int) (ReadReport, error) {
	if len(dst) != len(p.Columns) || len(masks) != len(p.Columns) {
		return ReadReport{}, errorf(ErrValue, "Read needs %d destination arrays and masks", len(p.Columns))
	}
	for i, pc := range p.Columns {
		if dst[i] == nil || dst[i].DType() != pc.DType || dst[i].Len() != pc.Rows {
			return ReadReport{}, errorf(ErrValue, "destination %d must be %d %s elements", i, pc.Rows, pc.DType)
		}
		if pc.Mask && (masks[i] == nil || masks[i].DType() != pdarray.Bool || masks[i].Len() != pc.Rows) {
			return ReadReport{}, errorf(ErrValue, "mask %d must be %d bool elements", i, pc.Rows)
		}
	}
	type unit = readUnitRef
	units := make([]unit, 0, p.Units()) // at most maxReadUnits: checked when planned
	zstdUnits := 0
	for f, r := range p.files {
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			for c := range p.Columns {
				// Cost: bytes to read plus a quarter of the bytes to produce.
				cost := int64(0)
				if cc, err := md.RowGroup(rg).ColumnChunk(md.Schema.ColumnIndexByName(p.Columns[c].Name)); err == nil {
					cost = cc.TotalCompressedSize() + cc.TotalUncompressedSize()/4
					if cc.Compression() == compress.Codecs.Zstd {
						zstdUnits++
					}
				}
				units = append(units, unit{f, rg, c, cost})
			}
		}
	}
	// Largest units first, so that no worker starts a big one while the
	// others run out of work (the read ends when its slowest worker does).
	if workers > 1 {
		slices.SortStableFunc(units, func(a, b unit) int { return cmp.Compare(b.cost, a.cost) })
	}
	workers = max(1, min(workers, len(units)))
	nulls := make([]atomic.Int64, len(p.Columns))
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var failed atomic.Bool
	ra := p.startReadAhead(units, workers, &failed)
	// Workers that decode zstd pages call libzstd through cgo (see
	// zstdWorkersNeedSpareP; 20-30% of a two-worker read on two cores).
	// Decided after the read-ahead, which counts the cores without it.
	if zstdUnits > 0 && !disableFast && zstdWorkersNeedSpareP(workers) {
		defer par.SpareP()()
		Stats.SparePReads.Add(1)
	}
	// A worker's panic (a bug) stops the others and reaches the caller.
	g := par.Group{OnPanic: func() { failed.Store(true) }}
	for w := 0; w < workers; w++ {
		g.Go(func() {
			sc := getScratch()
			defer func() {
				sc.fast.release()
				putScratch(sc)
			}()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(units) {
					return
				}
				if err := p.Stop.Err(); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
				u := units[i]
				n, err := func() (int64, error) {
					if ra != nil {
						ra.take(i, &sc.fast)
						defer ra.give(&sc.fast) // on a panic too: the read-ahead waits for it
					}
					return p.readUnit(u.f, u.rg, u.col, dst[u.col], masks[u.col], sc)
				}()
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
				nulls[u.col].Add(n)
			}
		})
	}
	defer func() {
		if ra != nil {
			ra.end()
		}
	}()
	g.Wait()
	if ra != nil {
		ra.end()
		p := ra.panicked
		ra = nil // ended
		if p != nil {
			panic(p) // the read-ahead's bug; it failed the read (failed)
		}
	}
	Stats.PoolHits.Store(p.alloc.hits.Load())
	if firstErr != nil {
		return ReadReport{}, firstErr
	}
	rep := ReadReport{Nulls: make([]int64, len(p.Columns))}
	for i := range nulls {
		rep.Nulls[i] = nulls[i].Load()
	}
	return rep, nil
}

// zstdWorkersNeedSpareP says whether workers goroutines that call libzstd
// through cgo (decoding or encoding zstd pages) should lend the scheduler a
// P for their work (par.SpareP): when libzstd is loaded and they are as many
// as the Ps, none of which would otherwise be idle for sysmon to see.
func zstdWorkersNeedSpareP(workers int) bool {
	return workers >= par.Procs() && !disableSpareP && nativeZstdOK()
}

// disableSpareP turns off the P lent to zstd reads and writes (benchmarks'
// A/B: ARKTOS_BENCH_NOSPAREP).
var disableSpareP bool

// readUnitRef is one unit of a Read: a column chunk, and its cost (bytes to
// read plus a quarter of the bytes to produce) for the largest-first order.
type readUnitRef struct {
	f, rg, col int
	cost       int64
}

// scratchFree keeps workers' buffers from one read to the next (Go memory
// only: fast.release hands C contexts back first). Not a sync.Pool: every
// garbage collection would empty it, and the next read would allocate
// (zero, and fault in) its chunk and page buffers again: +16% CPU per
// read measured on bench/io's zstd files after a GC. At most
// maxKeptScratch are kept, without buffers over maxKeptScratchBuf.
var (
	scratchMu   sync.Mutex
	scratchFree []*scratch
)

const (
	maxKeptScratch    = 64
	maxKeptScratchBuf = 64 << 20
)

func getScratch() *scratch {
	scratchMu.Lock()
	defer scratchMu.Unlock()
	if n := len(scratchFree); n > 0 {
		sc := scratchFree[n-1]
		scratchFree = scratchFree[:n-1]
		Stats.ScratchReused.Add(1)
		return sc
	}
	return new(scratch)
}

func putScratch(sc *scratch) {
	sc.trim(maxKeptScratchBuf)
	scratchMu.Lock()
	defer scratchMu.Unlock()
	if len(scratchFree) < maxKeptScratch {
		scratchFree = append(scratchFree, sc)
	}
}

// trim drops the buffers larger than limit bytes (a huge row group's chunk
// is not kept for ever).
func (sc *scratch) trim(limit int) {
	if cap(sc.def)*2 > limit {
		sc.def = nil
	}
	if cap(sc.i32)*4 > limit {
		sc.i32 = nil
	}
	f := &sc.fast
	for _, b := range []*[]byte{&f.chunk, &f.page, &f.peek, &f.body, &f.dict, &f.lvl, &f.wide} {
		if cap(*b) > limit {
			*b = nil
		}
	}
}

// scratch is one worker's reusable buffers.
type scratch struct {
	def  []int16
	i32  []int32
	fast fastScratch
}

// batchRows is how many rows one ReadBatch call decodes.
const batchRows = 64 << 10

func (p *ParquetPlan) readUnit(f, rg, col int, dst, mask *pdarray.Array, sc *scratch) (nulls int64, err error) {
	pc := &p.Columns[col]
	r := p.files[f]
	md := r.MetaData()
	idx := md.Schema.ColumnIndexByName(pc.Name)
	// The chunk's bytes, to tell a failed read of them (dataErr).
	after, lo, hi := p.srcs[f].seq.Load(), int64(0), int64(math.MaxInt64)
	if cc, err := md.RowGroup(rg).ColumnChunk(idx); err == nil {
		if start, n, ok := chunkRange(cc, 0); ok {
			lo, hi = start, start+n
		}
	}
	defer func() {
		if x := recover(); x != nil {
			err = p.dataErr(f, rg, pc.Name, after, lo, hi, x)
		}
	}()
	rgr := r.RowGroup(rg)
	rows := int(rgr.NumRows())
	off := p.offsets[f][rg]
	var m []bool
	if mask != nil {
		m = pdarray.View[bool](mask)[off : off+rows]
	}
	maxDef := md.Schema.Column(idx).MaxDefinitionLevel()
	if cc, err := md.RowGroup(rg).ColumnChunk(idx); err == nil && p.fastEligible(pc, cc, md, maxDef) {
		sz := pc.DType.Size()
		b := dst.Bytes()[off*sz : (off+rows)*sz : (off+rows)*sz]
		n, err := p.readUnitFast(pc, cc, maxDef, f, b, m, rows, &sc.fast)
		if err == nil {
			Stats.FastChunks.Add(1)
			return n, nil
		}
		if err == errNulls {
			return 0, p.nullsErr(pc.Name, -1)
		}
		if re := (readError{}); errors.As(err, &re) {
			return 0, errorf(ErrIO, "%s: row group %d, column %q: %v", p.names[f], rg, pc.Name, re)
		}
		Stats.FallbackChunks.Add(1)
	}
	cr, err := rgr.Column(idx)
	if err != nil {
		return 0, p.dataErr(f, rg, pc.Name, after, lo, hi, err)
	}
	defer cr.Close()
	Stats.Chunks.Add(1)
	maxDef = cr.Descriptor().MaxDefinitionLevel()
	if maxDef > 0 && len(sc.def) < batchRows {
		sc.def = make([]int16, batchRows)
	}
	u := unitCtx{rows: rows, maxDef: maxDef, mask: m, sc: sc, allowNulls: p.nullsAllowed(pc)}
	switch pc.DType {
	case pdarray.Int64:
		nulls, err = readSame(u, cr.(*file.Int64ColumnChunkReader), pdarray.View[int64](dst)[off:off+rows], fillAs[int64](p.policy))
	case pdarray.Uint64:
		nulls, err = readSame(u, cr.(*file.Int64ColumnChunkReader), pdarray.BytesAs[int64](pdarray.AsBytes(pdarray.View[uint64](dst)[off:off+rows])), int64(fillAs[uint64](p.policy)))
	case pdarray.Int32:
		nulls, err = readSame(u, cr.(*file.Int32ColumnChunkReader), pdarray.View[int32](dst)[off:off+rows], fillAs[int32](p.policy))
	case pdarray.Uint32:
		nulls, err = readSame(u, cr.(*file.Int32ColumnChunkReader), pdarray.BytesAs[int32](pdarray.AsBytes(pdarray.View[uint32](dst)[off:off+rows])), int32(fillAs[uint32](p.policy)))
	case pdarray.Float64:
		nulls, err = readSame(u, cr.(*file.Float64ColumnChunkReader), pdarray.View[float64](dst)[off:off+rows], fillAs[float64](p.policy))
	case pdarray.Float32:
		nulls, err = readSame(u, cr.(*file.Float32ColumnChunkReader), pdarray.View[float32](dst)[off:off+rows], fillAs[float32](p.policy))
	case pdarray.Bool:
		nulls, err = readSame(u, cr.(*file.BooleanColumnChunkReader), pdarray.View[bool](dst)[off:off+rows], fillAs[bool](p.policy))
	case pdarray.Int8:
		nulls, err = readNarrow(u, cr.(*file.Int32ColumnChunkReader), pdarray.View[int8](dst)[off:off+rows], fillAs[int8](p.policy))
	case pdarray.Int16:
		nulls, err = readNarrow(u, cr.(*file.Int32ColumnChunkReader), pdarray.View[int16](dst)[off:off+rows], fillAs[int16](p.policy))
	case pdarray.Uint8:
		nulls, err = readNarrow(u, cr.(*file.Int32ColumnChunkReader), pdarray.View[uint8](dst)[off:off+rows], fillAs[uint8](p.policy))
	case pdarray.Uint16:
		nulls, err = readNarrow(u, cr.(*file.Int32ColumnChunkReader), pdarray.View[uint16](dst)[off:off+rows], fillAs[uint16](p.policy))
	default:
		return 0, errorf(ErrType, "column %q: dtype %s has no reader", pc.Name, pc.DType)
	}
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			if ae.Kind == ErrData && strings.HasPrefix(ae.Msg, "nulls") {
				return 0, p.nullsErr(pc.Name, -1)
			}
			return 0, ae
		}
		return 0, p.dataErr(f, rg, pc.Name, after, lo, hi, err)
	}
	return nulls, nil
}

type unitCtx struct {
	rows       int
	maxDef     int16
	mask       []bool
	sc         *scratch
	allowNulls bool
}

type batchReader[P any] interface {
	ReadBatch(batchSize int64, values []P, defLvls, repLvls []int16) (int64, int, error)
}

var errNulls = errorf(ErrData, "nulls")

// readSame decodes a chunk whose physical type has the dtype's width
// straight into dst, then spreads the values in place around any nulls.
func readSame[P comparable](u unitCtx, cr batchReader[P], dst []P, fill P) (nulls int64, err error) {
	off := 0
	for off < u.rows {
		n := min(batchRows, u.rows-off)
		var def []int16
		if u.maxDef > 0 {
			def = u.sc.def[:n]
		}
		total, vals, err := cr.ReadBatch(int64(n), dst[off:off+n], def, nil)
		if err != nil {
			return 0, err
		}
		if total == 0 {
			return 0, fmt.Errorf("column chunk ended after %d of %d rows", off, u.rows)
		}
		Stats.DirectValues.Add(uint64(vals))
		t := int(total)
		if vals < t {
			if !u.allowNulls {
				return 0, errNulls
			}
			nulls += int64(t - vals)
			spread(dst[off:off+t], vals, def[:t], u.maxDef, fill)
			Stats.SpreadValues.Add(uint64(vals))
		}
		if u.mask != nil {
			markNulls(u.mask[off:off+t], def, u.maxDef, vals == t)
		}
		off += t
	}
	return nulls, nil
}

// spread moves the dense values d[:vals] to their rows in d (rows whose
// definition level is maxDef) and writes fill into the null rows. It walks
// backwards, so no value is overwritten before it moves.
func spread[P any, L int16 | uint8](d []P, vals int, def []L, maxDef L, fill P) {
	j := vals - 1
	for i := len(d) - 1; i >= 0; i-- {
		if def[i] == maxDef {
			d[i] = d[j]
			j--
		} else {
			d[i] = fill
		}
	}
}

func markNulls[L int16 | uint8](m []bool, def []L, maxDef L, none bool) {
	if none || def == nil {
		clear(m)
		return
	}
	for i := range m {
		m[i] = def[i] != maxDef
	}
}

type narrowInt interface{ int8 | int16 | uint8 | uint16 }

// readNarrow decodes an INT32 chunk into scratch and narrows it into dst.
func readNarrow[T narrowInt](u unitCtx, cr batchReader[int32], dst []T, fill T) (nulls int64, err error) {
	if len(u.sc.i32) < batchRows {
		u.sc.i32 = make([]int32, batchRows)
	}
	off := 0
	for off < u.rows {
		n := min(batchRows, u.rows-off)
		var def []int16
		if u.maxDef > 0 {
			def = u.sc.def[:n]
		}
		tmp := u.sc.i32[:n]
		total, vals, err := cr.ReadBatch(int64(n), tmp, def, nil)
		if err != nil {
			return 0, err
		}
		if total == 0 {
			return 0, fmt.Errorf("column chunk ended after %d of %d rows", off, u.rows)
		}
		Stats.ConvertedValues.Add(uint64(vals))
		t := int(total)
		d := dst[off : off+t]
		if vals == t {
			for i, v := range tmp[:t] {
				d[i] = T(v)
			}
		} else {
			if !u.allowNulls {
				return 0, errNulls
			}
			nulls += int64(t - vals)
			j := 0
			for i := range d {
				if def[i] == u.maxDef {
					d[i] = T(tmp[j])
					j++
				} else {
					d[i] = fill
				}
			}
		}
		if u.mask != nil {
			markNulls(u.mask[off:off+t], def, u.maxDef, vals == t)
		}
		off += t
	}
	return nulls, nil
}

// fillAs converts the policy's fill value to T: NaN for floats by default
// (policy "auto"), else the given value, else zero. The value was checked
// by CheckFill.
func fillAs[T pdarray.Element](p NullPolicy) T {
	var z T
	v := p.Fill
	if v == nil {
		// numpy's NaN bits (Go's math.NaN() has another payload).
		switch any(z).(type) {
		case float32:
			return any(math.Float32frombits(0x7fc00000)).(T)
		case float64:
			return any(math.Float64frombits(0x7ff8000000000000)).(T)
		}
		return z
	}
	t, _ := convertFill[T](v)
	return t
}

// CheckFill reports whether fill converts exactly to dtype d.
func CheckFill(fill any, d pdarray.DType) error {
	if fill == nil {
		return nil
	}
	var err error
	switch d {
	case pdarray.Int8:
		_, err = convertFill[int8](fill)
	case pdarray.Int16:
		_, err = convertFill[int16](fill)
	case pdarray.Int32:
		_, err = convertFill[int32](fill)
	case pdarray.Int64:
		_, err = convertFill[int64](fill)
	case pdarray.Uint8:
		_, err = convertFill[uint8](fill)
	case pdarray.Uint16:
		_, err = convertFill[uint16](fill)
	case pdarray.Uint32:
		_, err = convertFill[uint32](fill)
	case pdarray.Uint64:
		_, err = convertFill[uint64](fill)
	case pdarray.Float32:
		_, err = convertFill[float32](fill)
	case pdarray.Float64:
		_, err = convertFill[float64](fill)
	case pdarray.Bool:
		_, err = convertFill[bool](fill)
	}
	return err
}

func convertFill[T pdarray.Element](v any) (T, error) {
	var z T
	bad := func() (T, error) {
		return z, errorf(ErrValue, "fill_value %v does not fit a %s column", v, pdarray.DTypeOf[T]())
	}
	var f float64
	isFloat := false
	switch x := v.(type) {
	case bool:
		if _, ok := any(z).(bool); ok {
			return any(x).(T), nil
		}
		if x {
			f = 1
		}
	case int64:
		f = float64(x)
		if _, ok := any(z).(int64); ok {
			return any(x).(T), nil
		}
		if _, ok := any(z).(uint64); ok {
			if x < 0 {
				return bad()
			}
			return any(uint64(x)).(T), nil
		}
	case uint64:
		f = float64(x)
		if _, ok := any(z).(uint64); ok {
			return any(x).(T), nil
		}
		if _, ok := any(z).(int64); ok {
			if x > math.MaxInt64 {
				return bad()
			}
			return any(int64(x)).(T), nil
		}
	case float64:
		f, isFloat = x, true
	default:
		return bad()
	}
	switch any(z).(type) {
	case float64:
		return any(f).(T), nil
	case float32:
		return any(float32(f)).(T), nil
	case bool:
		if f == 0 || f == 1 {
			return any(f == 1).(T), nil
		}
		return bad()
	}
	if isFloat && (f != math.Trunc(f) || math.IsNaN(f)) {
		return bad()
	}
	lo, hi := intRange(pdarray.DTypeOf[T]())
	if f < lo || f > hi {
		return bad()
	}
	switch any(z).(type) {
	case int8:
		return any(int8(f)).(T), nil
	case int16:
		return any(int16(f)).(T), nil
	case int32:
		return any(int32(f)).(T), nil
	case int64:
		return any(int64(f)).(T), nil
	case uint8:
		return any(uint8(f)).(T), nil
	case uint16:
		return any(uint16(f)).(T), nil
	case uint32:
		return any(uint32(f)).(T), nil
	case uint64:
		return any(uint64(f)).(T), nil
	}
	return bad()
}

func intRange(d pdarray.DType) (float64, float64) {
	switch d {
	case pdarray.Int8:
		return math.MinInt8, math.MaxInt8
	case pdarray.Int16:
		return math.MinInt16, math.MaxInt16
	case pdarray.Int32:
		return math.MinInt32, math.MaxInt32
	case pdarray.Int64:
		return math.MinInt64, math.MaxInt64
	case pdarray.Uint8:
		return 0, math.MaxUint8
	case pdarray.Uint16:
		return 0, math.MaxUint16
	case pdarray.Uint32:
		return 0, math.MaxUint32
	case pdarray.Uint64:
		return 0, math.MaxUint64
	}
	return 0, 0
}

// Bounds on what a read takes from files' metadata before anything is
// reserved: rows (the outputs are sized from them) and work units (row
// groups × columns; a crafted 10 MB footer can list 10^6 row groups).
var (
	maxReadRows  = math.MaxInt32 * int64(1<<16)
	maxReadUnits = 1 << 22
) // tests lower them

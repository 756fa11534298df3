package arrowio

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

var arrowOf = map[pdarray.DType]arrow.DataType{
	pdarray.Int8: arrow.PrimitiveTypes.Int8, pdarray.Int16: arrow.PrimitiveTypes.Int16,
	pdarray.Int32: arrow.PrimitiveTypes.Int32, pdarray.Int64: arrow.PrimitiveTypes.Int64,
	pdarray.Uint8: arrow.PrimitiveTypes.Uint8, pdarray.Uint16: arrow.PrimitiveTypes.Uint16,
	pdarray.Uint32: arrow.PrimitiveTypes.Uint32, pdarray.Uint64: arrow.PrimitiveTypes.Uint64,
	pdarray.Float32: arrow.PrimitiveTypes.Float32, pdarray.Float64: arrow.PrimitiveTypes.Float64,
	pdarray.Bool: arrow.FixedWidthTypes.Boolean,
}

func dtypeOfArrow(t arrow.DataType) pdarray.DType {
	for d, at := range arrowOf {
		if arrow.TypeEqual(at, t) {
			return d
		}
	}
	return pdarray.Invalid
}

// IPCWriteOptions tune WriteArrowIPC.
type IPCWriteOptions struct {
	Compression string // "none" (default), "zstd" or "lz4"
	BatchRows   int    // rows per record batch (default DefaultRowGroupSize)
	Workers     int    // buffers compressed in parallel
}

// WriteArrowIPC writes cols as an Arrow IPC file (the "Feather v2" format)
// to w: non-nullable fields, record batches of BatchRows rows whose buffers
// are the arrays' own bytes (bool columns are bit-packed into new buffers);
// a string column is dictionary-encoded, its categories the dictionary
// (written once) and its codes the indices.
func WriteArrowIPC(w io.Writer, cols []Column, o IPCWriteOptions) (err error) {
	n, err := checkColumns(cols)
	if err != nil {
		return err
	}
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultRowGroupSize
	}
	fields := make([]arrow.Field, len(cols))
	dicts := make([]arrow.Array, len(cols)) // a string column's categories, one dictionary for every batch
	defer func() {
		for _, d := range dicts {
			if d != nil {
				d.Release()
			}
		}
	}()
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: arrowOf[c.A.DType()]}
		if c.Cats != nil {
			var dt *arrow.DictionaryType
			dt, dicts[i] = ipcStringArrays(c)
			fields[i].Type, fields[i].Nullable = dt, c.Cats.Null != nil
		}
	}
	sc := arrow.NewSchema(fields, nil)
	opts := []ipc.Option{ipc.WithSchema(sc), ipc.WithAllocator(memory.NewGoAllocator())}
	switch strings.ToLower(o.Compression) {
	case "", "none", "uncompressed":
	case "zstd":
		opts = append(opts, ipc.WithZstd(), ipc.WithCompressConcurrency(max(1, o.Workers)))
	case "lz4":
		opts = append(opts, ipc.WithLZ4(), ipc.WithCompressConcurrency(max(1, o.Workers)))
	default:
		return errorf(ErrValue, "Arrow IPC compression %q is not supported; use none, zstd or lz4", o.Compression)
	}
	defer func() {
		if x := recover(); x != nil {
			err = errorf(ErrIO, "writing Arrow IPC: %v", x)
		}
	}()
	fw, err := ipc.NewFileWriter(w, opts...)
	if err != nil {
		return errorf(ErrIO, "writing Arrow IPC: %v", err)
	}
	for lo := 0; lo < n || (n == 0 && lo == 0); lo += o.BatchRows {
		hi := min(n, lo+o.BatchRows)
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			arrs[i] = arrowSlice(c.A, lo, hi)
			if dicts[i] != nil {
				codes := arrs[i]
				if c.Cats.Null != nil {
					codes = withNullCodes(codes, c, lo, hi)
					arrs[i].Release()
				}
				arrs[i] = array.NewDictionaryArray(fields[i].Type, codes, dicts[i])
				codes.Release()
			}
		}
		rec := array.NewRecordBatch(sc, arrs, int64(hi-lo))
		err := fw.Write(rec)
		rec.Release()
		for _, a := range arrs {
			a.Release()
		}
		if err != nil {
			fw.Close()
			return errorf(ErrIO, "writing Arrow IPC: %v", err)
		}
		if n == 0 {
			break
		}
	}
	if err := fw.Close(); err != nil {
		return errorf(ErrIO, "writing Arrow IPC: %v", err)
	}
	return nil
}

// boundedAllocator is the Go allocator refusing, by a panic of an *Error
// (OpenArrowIPC's recover returns it), what would take its total past
// room: a damaged compressed buffer's claimed size is never allocated.
type boundedAllocator struct {
	memory.GoAllocator
	name       string
	used, room int64
	refused    *Error // the refusal, however arrow-go reports the panic
}

func (a *boundedAllocator) take(n int64) {
	if n > 0 && n > a.room-a.used {
		a.refused = errorf(ErrMemory, "%s: its record batches (every column's: an IPC file is read whole) take more than the %d bytes of room left (a buffer of %d bytes, %d taken so far); delete arrays or start the server with a larger --max-memory", a.name, a.room, n, a.used)
		panic(a.refused)
	}
	a.used += n
}

func (a *boundedAllocator) Allocate(size int) []byte {
	a.take(int64(size))
	return a.GoAllocator.Allocate(size)
}

func (a *boundedAllocator) Reallocate(size int, b []byte) []byte {
	a.take(int64(size) - int64(len(b)))
	return a.GoAllocator.Reallocate(size, b)
}

func (a *boundedAllocator) Free(b []byte) {
	a.used -= int64(len(b))
	a.GoAllocator.Free(b)
}

// withNullCodes gives rows lo:hi's codes (a, over the column's own bytes)
// with a validity bitmap: a row of the null category is null.
func withNullCodes(a arrow.Array, c Column, lo, hi int) arrow.Array {
	valid := make([]byte, bitutil.BytesForBits(int64(hi-lo)))
	nulls, j := 0, 0
	forCodes(c.A, lo, hi, func(code int) {
		if code == *c.Cats.Null {
			nulls++
		} else {
			bitutil.SetBit(valid, j)
		}
		j++
	})
	data := array.NewData(a.DataType(), hi-lo, []*memory.Buffer{memory.NewBufferBytes(valid), a.Data().Buffers()[1]}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// dataBytes is what an array's buffers hold, its dictionary's included
// unless seen (then marked seen).
func dataBytes(d arrow.ArrayData, seen map[arrow.ArrayData]bool) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c, seen)
	}
	if dd, ok := d.(*array.Data); ok {
		if dict, ok := dd.Dictionary().(*array.Data); ok && dict != nil && !seen[dict] { // (a nil *Data when none)
			seen[dict] = true
			n += dataBytes(dict, seen)
		}
	}
	return n
}

// arrowSlice wraps elements [lo, hi) of a as an arrow.Array over a's own
// bytes (bool: a bit-packed copy).
func arrowSlice(a *pdarray.Array, lo, hi int) arrow.Array {
	dt := a.DType()
	var values []byte
	if dt == pdarray.Bool {
		src := a.Bytes()[lo:hi]
		values = make([]byte, bitutil.BytesForBits(int64(hi-lo)))
		for i, b := range src {
			if b != 0 {
				bitutil.SetBit(values, i)
			}
		}
	} else {
		isz := dt.Size()
		values = a.Bytes()[lo*isz : hi*isz]
	}
	data := array.NewData(arrowOf[dt], hi-lo, []*memory.Buffer{nil, memory.NewBufferBytes(values)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// IPCPlan is an Arrow IPC file whose record batches are read and held
// until Read copies them into the destination arrays.
type IPCPlan struct {
	Columns []PlanColumn
	Rows    int
	// ScratchBytes is what the held record batches occupy until Close.
	ScratchBytes int64
	// Strings are the string columns (not in Columns), read by ReadStrings.
	Strings       []StringColumn
	policy        NullPolicy
	recs          []arrow.RecordBatch
	fields        []int
	stringFields  []int
	distinctBound []int  // a string column's most distinct strings: rows, or its dictionaries' entries
	plainStrings  []bool // a string column with no dictionary batch
	offsets       []int
}

// OpenArrowIPC reads the record batches of an Arrow IPC file and plans
// reading columns (all when nil). room bounds the bytes its batches may
// take (a compressed buffer claims its own uncompressed size): a file that
// needs more is refused, ErrMemory, before it is allocated; 0 is no bound.
func OpenArrowIPC(name string, r ipc.ReadAtSeeker, columns []string, policy NullPolicy, room int64) (plan *IPCPlan, err error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	p := &IPCPlan{policy: policy}
	defer func() {
		if x := recover(); x != nil {
			if e, ok := x.(*Error); ok {
				err = e
			} else {
				err = errorf(ErrData, "%s is not a readable Arrow IPC file: %v", name, x)
			}
		}
		if err != nil {
			p.Close()
		}
	}()
	if size, err := r.Seek(0, io.SeekEnd); err == nil {
		if err := checkIPCFooter(r, size); err != nil {
			return nil, errorf(ErrData, "%s is not a readable Arrow IPC file: %s", name, err.(*Error).Msg)
		}
	}
	if room <= 0 {
		room = math.MaxInt64
	}
	alloc := &boundedAllocator{name: name, room: room}
	defer func() {
		if alloc.refused != nil && err != nil {
			err = alloc.refused
		}
	}()
	fr, err := ipc.NewFileReader(r, ipc.WithAllocator(alloc))
	if err != nil {
		return nil, errorf(ErrData, "%s is not a readable Arrow IPC file: %v", name, err)
	}
	defer fr.Close()
	sc := fr.Schema()
	var readable, unsupported []string
	for _, f := range sc.Fields() {
		if d := dtypeOfArrow(f.Type); d.Valid() {
			readable = append(readable, fmt.Sprintf("%s (%s)", f.Name, d))
		} else if isArrowString(f.Type) {
			readable = append(readable, fmt.Sprintf("%s (string)", f.Name))
		} else {
			unsupported = append(unsupported, fmt.Sprintf("%s: %s", f.Name, f.Type))
		}
	}
	if columns == nil {
		for _, f := range sc.Fields() {
			columns = append(columns, f.Name)
		}
	}
	var bad []string
	seen := map[string]bool{}
	for _, c := range columns {
		idx := sc.FieldIndices(c)
		if len(idx) == 0 {
			return nil, errorf(ErrValue, "%s has no column %q; its columns are: %s", name, c, orNone(readable)+unsupportedNote(unsupported))
		}
		if err := oneColumnNamed(name, c, len(idx), seen); err != nil {
			return nil, err
		}
		f := sc.Field(idx[0])
		if isArrowString(f.Type) {
			p.Strings = append(p.Strings, StringColumn{Name: c})
			p.stringFields = append(p.stringFields, idx[0])
			continue
		}
		d := dtypeOfArrow(f.Type)
		if !d.Valid() {
			bad = append(bad, fmt.Sprintf("%s: %s", c, f.Type))
			continue
		}
		p.Columns = append(p.Columns, PlanColumn{Name: c, DType: d, Nullable: f.Nullable})
		p.fields = append(p.fields, idx[0])
	}
	if len(bad) > 0 {
		return nil, errorf(ErrType, "cannot read column(s) %s: no array dtype holds them yet; readable columns: %s (pass columns=[...] to pick them)",
			strings.Join(bad, "; "), orNone(readable))
	}
	seenDicts := map[arrow.ArrayData]bool{} // a dictionary the batches share is held once
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.RecordBatchAt(i)
		if err != nil {
			return nil, errorf(ErrData, "%s: record batch %d: %v", name, i, err)
		}
		p.recs = append(p.recs, rec)
		p.offsets = append(p.offsets, p.Rows)
		p.Rows += int(rec.NumRows())
		// A column longer than its batch (arrow-go refuses only shorter
		// ones) would write into the next batch's rows.
		for _, f := range slices.Concat(p.fields, p.stringFields) {
			if n := rec.Column(f).Len(); int64(n) != rec.NumRows() {
				return nil, errorf(ErrData, "%s: record batch %d has %d rows but its column %q %d; the file is damaged", name, i, rec.NumRows(), sc.Field(f).Name, n)
			}
		}
		for _, f := range slices.Concat(p.fields, p.stringFields) {
			p.ScratchBytes += dataBytes(rec.Column(f).Data(), seenDicts)
		}
	}
	p.distinctBound = make([]int, len(p.Strings))
	p.plainStrings = make([]bool, len(p.Strings))
	for i := range p.Strings {
		sc := &p.Strings[i]
		sc.Rows = p.Rows
		var dictOf arrow.ArrayData
		p.plainStrings[i] = true
		for r, rec := range p.recs {
			a := rec.Column(p.stringFields[i])
			if a.NullN() > 0 && policy.NullString == nil {
				return nil, nullStringErr(fmt.Sprintf("%s (record batch %d)", name, r), sc.Name)
			}
			if d, ok := a.(*array.Dictionary); ok {
				p.plainStrings[i] = false
				if dd := d.Dictionary().Data(); dd != dictOf {
					p.distinctBound[i] += dd.Len()
					dictOf = dd
				}
			} else {
				p.distinctBound[i] += a.Len()
			}
		}
		if p.plainStrings[i] { // (a dictionary's entries are numbered, used or not)
			p.distinctBound[i] = min(p.distinctBound[i], max(p.Rows, 0))
		}
	}
	for i := range p.Columns {
		pc := &p.Columns[i]
		pc.Rows = p.Rows
		for _, rec := range p.recs {
			pc.Nulls += int64(rec.Column(p.fields[i]).NullN())
		}
		pc.Nullable = pc.Nullable || pc.Nulls > 0
		pc.Mask = policy.mode() == "mask" && pc.Nullable
		if pc.Nulls > 0 && !nullsAllowed(policy, pc.DType) {
			return nil, errorf(ErrData, "column %q holds %d nulls and nulls=%q refuses them: pass nulls=\"fill\" with fill_value=..., or nulls=\"mask\" to also get a bool array %s_mask (true where null)",
				pc.Name, pc.Nulls, policy.mode(), pc.Name)
		}
	}
	if err := maskNamesFree(p.Columns, p.Strings); err != nil {
		return nil, err
	}
	return p, nil
}

// oneColumnNamed refuses a column name the file holds more than once (the
// arrays come back by name: one of them was lost) or that the read asks
// for twice.
func oneColumnNamed(file, c string, inFile int, seen map[string]bool) error {
	if inFile > 1 {
		return errorf(ErrValue, "%s has %d columns named %q; the arrays come back by name, so rename them in the file (or read the others with columns=[...])", file, inFile, c)
	}
	if seen[c] {
		return errorf(ErrValue, "column %q is asked for twice", c)
	}
	seen[c] = true
	return nil
}

// maskNamesFree refuses a read whose null mask of column c would take the
// name of a column it also reads, c_mask: the mask and the column came back
// under one name, and one of them was lost.
func maskNamesFree(cols []PlanColumn, strs []StringColumn) error {
	names := map[string]bool{}
	for _, c := range cols {
		names[c.Name] = true
	}
	for _, c := range strs {
		names[c.Name] = true
	}
	for _, c := range cols {
		if c.Mask && names[c.Name+"_mask"] {
			return errorf(ErrValue, "column %q's null mask would be named %q, like a column this read also takes; read %q without it (columns=[...]), or with nulls=\"fill\"", c.Name, c.Name+"_mask", c.Name)
		}
	}
	return nil
}

func nullsAllowed(p NullPolicy, d pdarray.DType) bool {
	switch p.mode() {
	case "fill", "mask":
		return true
	case "auto":
		return d == pdarray.Float32 || d == pdarray.Float64
	}
	return false
}

// Close releases the held record batches.
func (p *IPCPlan) Close() {
	for _, r := range p.recs {
		r.Release()
	}
	p.recs = nil
}

// Read copies every planned column into dst[i] (and masks[i] where
// Columns[i].Mask), one (record batch × column) unit per task.
func (p *IPCPlan) Read(dst, masks []*pdarray.Array, workers int) (ReadReport, error) {
	type unit struct{ rec, col int }
	var units []unit
	for r := range p.recs {
		for c := range p.Columns {
			units = append(units, unit{r, c})
		}
	}
	nulls := make([]atomic.Int64, len(p.Columns))
	var next atomic.Int64
	var g par.Group // a worker's panic reaches the caller
	for w := 0; w < max(1, min(workers, len(units))); w++ {
		g.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(units) {
					return
				}
				u := units[i]
				pc := &p.Columns[u.col]
				a := p.recs[u.rec].Column(p.fields[u.col])
				off := p.offsets[u.rec]
				var m []bool
				if pc.Mask {
					m = pdarray.View[bool](masks[u.col])[off : off+a.Len()]
				}
				nulls[u.col].Add(copyArrow(dst[u.col], off, a, m, p.policy))
			}
		})
	}
	g.Wait()
	rep := ReadReport{Nulls: make([]int64, len(p.Columns))}
	for i := range nulls {
		rep.Nulls[i] = nulls[i].Load()
	}
	return rep, nil
}

func copyArrow(dst *pdarray.Array, off int, a arrow.Array, mask []bool, pol NullPolicy) int64 {
	switch dst.DType() {
	case pdarray.Int8:
		return copyTyped(pdarray.View[int8](dst)[off:], a, mask, fillAs[int8](pol))
	case pdarray.Int16:
		return copyTyped(pdarray.View[int16](dst)[off:], a, mask, fillAs[int16](pol))
	case pdarray.Int32:
		return copyTyped(pdarray.View[int32](dst)[off:], a, mask, fillAs[int32](pol))
	case pdarray.Int64:
		return copyTyped(pdarray.View[int64](dst)[off:], a, mask, fillAs[int64](pol))
	case pdarray.Uint8:
		return copyTyped(pdarray.View[uint8](dst)[off:], a, mask, fillAs[uint8](pol))
	case pdarray.Uint16:
		return copyTyped(pdarray.View[uint16](dst)[off:], a, mask, fillAs[uint16](pol))
	case pdarray.Uint32:
		return copyTyped(pdarray.View[uint32](dst)[off:], a, mask, fillAs[uint32](pol))
	case pdarray.Uint64:
		return copyTyped(pdarray.View[uint64](dst)[off:], a, mask, fillAs[uint64](pol))
	case pdarray.Float32:
		return copyTyped(pdarray.View[float32](dst)[off:], a, mask, fillAs[float32](pol))
	case pdarray.Float64:
		return copyTyped(pdarray.View[float64](dst)[off:], a, mask, fillAs[float64](pol))
	case pdarray.Bool:
		d := pdarray.View[bool](dst)[off : off+a.Len()]
		if len(d) == 0 {
			// An empty batch may have no values buffer at all (a nil
			// dereference: the server's one panic on a file).
			return 0
		}
		bits := a.Data().Buffers()[1].Bytes()
		o := a.Data().Offset()
		for i := range d {
			d[i] = bitutil.BitIsSet(bits, o+i)
		}
		return applyValidity(d, a, mask, fillAs[bool](pol))
	}
	return 0
}

func copyTyped[T pdarray.Element](d []T, a arrow.Array, mask []bool, fill T) int64 {
	n := a.Len()
	d = d[:n]
	o := a.Data().Offset()
	if n > 0 {
		src := pdarray.BytesAs[T](a.Data().Buffers()[1].Bytes())
		copy(d, src[o:o+n])
	}
	return applyValidity(d, a, mask, fill)
}

func applyValidity[T any](d []T, a arrow.Array, mask []bool, fill T) int64 {
	if a.NullN() == 0 {
		clear(mask)
		return 0
	}
	for i := range d {
		null := a.IsNull(i)
		if null {
			d[i] = fill
		}
		if mask != nil {
			mask[i] = null
		}
	}
	return int64(a.NullN())
}

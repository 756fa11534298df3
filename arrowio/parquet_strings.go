package arrowio

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/arktos-dev/arktos/internal/par"
)

// String columns are read as a client's Categorical is made: an int32 code
// per row, the index of its string among the column's distinct strings,
// sorted bytewise (as Python and numpy order str), and those strings. Each
// (file, row group) unit numbers the strings it meets in a map of its own,
// writing codes into its rows as it decodes them; the units' strings are
// then merged and sorted once, and each unit's rows renumbered through a
// table from its numbering to the sorted one. The decoding is arrow-go's
// (dictionary and plain pages, every codec), a page at a time with the
// values aliasing its buffer; a string is copied only the first time its
// unit meets it.

// isStringColumn: a flat BYTE_ARRAY column of UTF-8 text (the String
// logical type, or the legacy UTF8 converted type).
func isStringColumn(c *schema.Column) bool {
	if c.PhysicalType() != parquet.Types.ByteArray || c.MaxRepetitionLevel() > 0 {
		return false
	}
	if _, ok := c.LogicalType().(schema.StringLogicalType); ok {
		return true
	}
	return c.ConvertedType() == schema.ConvertedTypes.UTF8
}

// StringColumn is a string column of a plan (ParquetPlan.Strings).
type StringColumn struct {
	Name string
	Rows int
}

// StringScratch bounds what ReadStrings holds for string column i beside
// its codes: the distinct strings in the units' maps, merged and sorted,
// at most the column chunks' uncompressed bytes, twice over, and 48 bytes
// of map and slice overhead for each row at most.
func (p *ParquetPlan) StringScratch(i int) int64 {
	var total int64
	sc := p.Strings[i]
	for _, r := range p.files {
		md := r.MetaData()
		idx := md.Schema.ColumnIndexByName(sc.Name)
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			if cc, err := md.RowGroup(rg).ColumnChunk(idx); err == nil {
				total = satAdd(total, 2*max(cc.TotalUncompressedSize(), 0))
			}
		}
	}
	return satAdd(total, 48*int64(sc.Rows))
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// StringStats counts string-column reads (tests): Units decoded,
// Renumbered the units whose codes needed a pass through the table (a
// unit whose own numbering is already the sorted one is left alone), and
// CacheHits the rows readStringUnit's address cache answered.
var StringStats struct{ Units, Renumbered, CacheHits atomic.Uint64 }

// ReadStrings reads string column i of the plan: codes (len = the column's
// rows) gets each row's code, and the sorted distinct strings are
// returned. A null refuses the read (ErrData), saying how to read around it.
func (p *ParquetPlan) ReadStrings(i int, codes []int32, workers int) (cats []string, err error) {
	sc := p.Strings[i]
	if len(codes) != sc.Rows {
		return nil, errorf(ErrValue, "ReadStrings needs %d codes", sc.Rows)
	}
	type unit struct {
		f, rg    int
		off, n   int
		distinct []string // in the unit's own numbering
	}
	var units []*unit
	for f, r := range p.files {
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			units = append(units, &unit{f: f, rg: rg, off: p.offsets[f][rg], n: int(md.RowGroup(rg).NumRows())})
		}
	}
	var next atomic.Int64
	var errOnce sync.Once
	var firstErr error
	var g par.Group
	for range max(1, min(workers, len(units))) {
		g.Go(func() {
			var vals []parquet.ByteArray
			var defs []int16
			for {
				k := int(next.Add(1)) - 1
				if k >= len(units) {
					return
				}
				u := units[k]
				d, err := p.readStringUnit(sc, u.f, u.rg, codes[u.off:u.off+u.n], &vals, &defs)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					next.Store(int64(len(units))) // the others stop
					return
				}
				u.distinct = d
				StringStats.Units.Add(1)
			}
		})
	}
	g.Wait() // re-panics a worker's panic here, where the server's recover is
	if firstErr != nil {
		return nil, firstErr
	}
	// Merge: the column's distinct strings in one map, sorted once (units
	// of a many-valued column share most of theirs: sorting them all, then
	// a binary search for each, took twice as long), then numbered
	// in the map by their sorted place.
	most := 0
	for _, u := range units {
		most = max(most, len(u.distinct))
	}
	global := make(map[string]int32, most)
	for _, u := range units {
		for _, s := range u.distinct {
			global[s] = 0
		}
	}
	cats = make([]string, 0, len(global))
	for s := range global {
		cats = append(cats, s)
	}
	slices.Sort(cats)
	if len(cats) > math.MaxInt32 {
		return nil, errorf(ErrValue, "string column %q has %d distinct values, more than int32 codes number", sc.Name, len(cats))
	}
	for _, c := range cats {
		if !utf8.ValidString(c) {
			return nil, errorf(ErrData, "string column %q holds bytes that are not UTF-8 (%q); its file is damaged or not text", sc.Name, c[:min(len(c), 40)])
		}
	}
	for i, s := range cats {
		global[s] = int32(i)
	}
	// Renumber each unit's rows, on the workers, largest units first (the
	// map is only read now).
	slices.SortStableFunc(units, func(a, b *unit) int { return cmp.Compare(b.n, a.n) })
	next.Store(0)
	for range max(1, min(workers, len(units))) {
		g.Go(func() {
			var table []int32
			for {
				k := int(next.Add(1)) - 1
				if k >= len(units) {
					return
				}
				u := units[k]
				table = table[:0]
				same := true
				for local, s := range u.distinct {
					at := global[s]
					table = append(table, at)
					same = same && int(at) == local
				}
				if same {
					continue
				}
				StringStats.Renumbered.Add(1)
				rows := codes[u.off : u.off+u.n]
				for j, c := range rows {
					rows[j] = table[c]
				}
			}
		})
	}
	g.Wait()
	return cats, nil
}

// stringCacheBits sizes readStringUnit's address cache (1024 slots).
const stringCacheBits = 10

// readStringUnit decodes one row group of a string column into rows (its
// codes, in the unit's numbering) and returns the unit's distinct strings.
func (p *ParquetPlan) readStringUnit(sc StringColumn, f, rg int, rows []int32, vals *[]parquet.ByteArray, defs *[]int16) (distinct []string, err error) {
	r := p.files[f]
	md := r.MetaData()
	idx := md.Schema.ColumnIndexByName(sc.Name) // (each file's own place for it)
	after, lo, hi := p.srcs[f].seq.Load(), int64(0), int64(math.MaxInt64)
	if cc, err := md.RowGroup(rg).ColumnChunk(idx); err == nil {
		if start, n, ok := chunkRange(cc, 0); ok {
			lo, hi = start, start+n
		}
	}
	defer func() {
		if x := recover(); x != nil {
			err = p.dataErr(f, rg, sc.Name, after, lo, hi, x)
		}
	}()
	cr, err := r.RowGroup(rg).Column(idx)
	if err != nil {
		return nil, p.dataErr(f, rg, sc.Name, after, lo, hi, err)
	}
	defer cr.Close()
	br, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return nil, errorf(ErrData, "%s: column %q is not byte arrays in row group %d", p.names[f], sc.Name, rg)
	}
	if cap(*vals) < batchRows {
		*vals = make([]parquet.ByteArray, batchRows)
	}
	maxDef := cr.Descriptor().MaxDefinitionLevel()
	var d []int16
	if maxDef > 0 {
		if cap(*defs) < batchRows {
			*defs = make([]int16, batchRows)
		}
		d = (*defs)[:batchRows]
	}
	seen := map[string]int32{}
	// A value of a dictionary-encoded page aliases its dictionary entry, so
	// equal values share an address: a small cache indexed by the address
	// answers most rows of such a column without hashing the bytes. A
	// slot answers only when its string equals the value (a page buffer
	// reused for other bytes at the same address does not fool it).
	var cache [1 << stringCacheBits]struct {
		s    string
		code int32
		ok   bool
	}
	done, hits := 0, 0
	defer func() { StringStats.CacheHits.Add(uint64(hits)) }()
	for done < len(rows) {
		want := min(batchRows, len(rows)-done)
		// Within a page: the values alias its buffer (or its dictionary)
		// until the next call, where ReadBatch would copy every one.
		levels, n, err := br.ReadBatchInPage(int64(want), (*vals)[:want], d, nil)
		if err != nil {
			return nil, p.dataErr(f, rg, sc.Name, after, lo, hi, err)
		}
		if int(levels) != n {
			return nil, errorf(ErrData, "%s: string column %q has nulls (row group %d), which a Categorical cannot hold yet; write the file with the nulls filled (e.g. pyarrow.compute.fill_null(col, \"N/A\")), or leave the column out with columns=[...]", p.names[f], sc.Name, rg)
		}
		if n == 0 {
			return nil, errorf(ErrData, "%s: row group %d of column %q ends after %d of its %d rows", p.names[f], rg, sc.Name, done, len(rows))
		}
		out := rows[done : done+n]
		for j, v := range (*vals)[:n] {
			slot := &cache[(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v))))*0x9E3779B97F4A7C15)>>(64-stringCacheBits)]
			if slot.ok && slot.s == string(v) {
				out[j] = slot.code
				hits++
				continue
			}
			code, ok := seen[string(v)] // (no allocation for the look-up)
			if !ok {
				code = int32(len(distinct))
				s := string(v)
				seen[s] = code
				distinct = append(distinct, s)
			}
			slot.s, slot.code, slot.ok = distinct[code], code, true
			out[j] = code
		}
		done += n
	}
	return distinct, nil
}

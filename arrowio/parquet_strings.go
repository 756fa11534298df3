package arrowio

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

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
	Name  string
	Rows  int
	index int
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

// StringStats counts string-column reads (tests): Units decoded, and
// Renumbered the units whose codes needed a pass through the table (a
// unit whose own numbering is already the sorted one is left alone).
var StringStats struct{ Units, Renumbered atomic.Uint64 }

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
	// Merge: every unit's strings, sorted, once each.
	total := 0
	for _, u := range units {
		total += len(u.distinct)
	}
	all := make([]string, 0, total)
	for _, u := range units {
		all = append(all, u.distinct...)
	}
	slices.Sort(all)
	cats = slices.Compact(all)
	if len(cats) > math.MaxInt32 {
		return nil, errorf(ErrValue, "string column %q has %d distinct values, more than int32 codes number", sc.Name, len(cats))
	}
	for _, c := range cats {
		if !utf8.ValidString(c) {
			return nil, errorf(ErrData, "string column %q holds bytes that are not UTF-8 (%q); its file is damaged or not text", sc.Name, c[:min(len(c), 40)])
		}
	}
	// Renumber each unit's rows, on the workers, largest units first.
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
					at, _ := slices.BinarySearch(cats, s)
					table = append(table, int32(at))
					same = same && at == local
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

// readStringUnit decodes one row group of a string column into rows (its
// codes, in the unit's numbering) and returns the unit's distinct strings.
func (p *ParquetPlan) readStringUnit(sc StringColumn, f, rg int, rows []int32, vals *[]parquet.ByteArray, defs *[]int16) (distinct []string, err error) {
	r := p.files[f]
	md := r.MetaData()
	after, lo, hi := p.srcs[f].seq.Load(), int64(0), int64(math.MaxInt64)
	if cc, err := md.RowGroup(rg).ColumnChunk(sc.index); err == nil {
		if start, n, ok := chunkRange(cc, 0); ok {
			lo, hi = start, start+n
		}
	}
	defer func() {
		if x := recover(); x != nil {
			err = p.dataErr(f, rg, sc.Name, after, lo, hi, x)
		}
	}()
	cr, err := r.RowGroup(rg).Column(sc.index)
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
	done := 0
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
			code, ok := seen[string(v)] // (no allocation for the look-up)
			if !ok {
				code = int32(len(distinct))
				s := string(v)
				seen[s] = code
				distinct = append(distinct, s)
			}
			out[j] = code
		}
		done += n
	}
	return distinct, nil
}

package arrowio

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// Arrow IPC string columns: utf8 and large_utf8, plain or dictionary-encoded
// (pyarrow writes a pandas category column so), read as a Categorical's
// parts as Parquet's are; a Categorical is written as a dictionary column
// whose dictionary is its categories and whose indices are its codes.
//
// The file's record batches are all in memory (OpenArrowIPC holds them),
// so a column is numbered on one goroutine with a Go map: a dictionary's
// entries once per dictionary (every batch of an IPC file shares its
// column's), a plain column's rows one by one.

// isArrowString tells whether t is a string column read as a Categorical.
func isArrowString(t arrow.DataType) bool {
	if dt, ok := t.(*arrow.DictionaryType); ok {
		t = dt.ValueType
		if !arrow.IsInteger(dt.IndexType.ID()) {
			return false
		}
	}
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

// ipcStringBytes is what ReadStrings holds a distinct string beside the
// batches (map entry and its string header, the first-seen list, the
// sort's order and rank, the sorted list).
const ipcStringBytes = 112

// StringScratch bounds what ReadStrings holds for string column i beside
// its codes (the strings' bytes stay in the held record batches).
func (p *IPCPlan) StringScratch(i int) int64 {
	return ipcStringBytes * int64(p.distinctBound[i])
}

// strAt gives string j of a utf8 or large_utf8 array (aliasing its buffer:
// valid while the batch is held).
func strAt(a arrow.Array, j int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(j)
	case *array.LargeString:
		return a.Value(j)
	}
	return ""
}

// ReadStrings writes each row's code into codes (Rows of them) and returns
// the column's distinct strings sorted bytewise, which alias the held
// record batches: copy them before Close.
func (p *IPCPlan) ReadStrings(i int, codes []int32, workers int) (_ []string, err error) {
	sc, f := p.Strings[i], p.stringFields[i]
	defer func() { // arrow-go's arrays of a damaged file may index past their buffers
		if x := recover(); x != nil {
			err = errorf(ErrData, "string column %q is not readable: %v; the file is damaged", sc.Name, x)
		}
	}()
	ids := make(map[string]int32)
	var strs []string
	var bad error
	id := func(s string) int32 {
		if k, ok := ids[s]; ok {
			return k
		}
		if !utf8.ValidString(s) && bad == nil {
			bad = errorf(ErrData, "string column %q holds bytes that are not UTF-8 (%q); its file is damaged or not text", sc.Name, s[:min(len(s), 40)])
		}
		k := int32(len(strs))
		ids[s] = k
		strs = append(strs, s)
		return k
	}
	var local []int32 // a dictionary's entries' ids (-1: a null entry)
	var dictOf arrow.ArrayData
	for r, rec := range p.recs {
		col := rec.Column(f)
		out := codes[p.offsets[r] : p.offsets[r]+col.Len()]
		switch a := col.(type) {
		case *array.Dictionary:
			d := a.Dictionary()
			if dd := d.Data(); dd != dictOf {
				local = local[:0]
				for j := range d.Len() {
					if d.IsNull(j) {
						local = append(local, -1)
						continue
					}
					local = append(local, id(strAt(d, j)))
				}
				dictOf = dd
			}
			if err := dictCodes(out, a.Indices(), local, sc.Name, r); err != nil {
				return nil, err
			}
		default:
			for j := range out {
				out[j] = id(strAt(col, j))
			}
		}
		if bad != nil {
			return nil, bad
		}
	}
	if len(strs) > math.MaxInt32 {
		return nil, errorf(ErrValue, "string column %q has %d distinct strings; a Categorical numbers at most 2^31-1", sc.Name, len(strs))
	}
	order := make([]int32, len(strs))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(strs[a], strs[b]) })
	rank := make([]int32, len(strs))
	cats := make([]string, len(strs))
	for r, k := range order {
		rank[k], cats[r] = int32(r), strs[k]
	}
	renumber(codes, rank, workers)
	return cats, nil
}

// dictCodes maps a batch's dictionary indices through local into out.
func dictCodes(out []int32, idx arrow.Array, local []int32, column string, batch int) error {
	switch idx := idx.(type) {
	case *array.Int8:
		return mapIndices(out, idx.Int8Values(), local, column, batch)
	case *array.Int16:
		return mapIndices(out, idx.Int16Values(), local, column, batch)
	case *array.Int32:
		return mapIndices(out, idx.Int32Values(), local, column, batch)
	case *array.Int64:
		return mapIndices(out, idx.Int64Values(), local, column, batch)
	case *array.Uint8:
		return mapIndices(out, idx.Uint8Values(), local, column, batch)
	case *array.Uint16:
		return mapIndices(out, idx.Uint16Values(), local, column, batch)
	case *array.Uint32:
		return mapIndices(out, idx.Uint32Values(), local, column, batch)
	case *array.Uint64:
		return mapIndices(out, idx.Uint64Values(), local, column, batch)
	}
	return errorf(ErrType, "string column %q: dictionary indices of type %s", column, idx.DataType())
}

func mapIndices[T codeInt](out []int32, idx []T, local []int32, column string, batch int) error {
	n := uint64(len(local))
	for j, v := range idx[:len(out)] {
		if v < 0 || uint64(v) >= n {
			return errorf(ErrData, "string column %q: record batch %d, row %d has dictionary index %d outside its %d entries; the file is damaged", column, batch, j, int64(v), n)
		}
		k := local[v]
		if k < 0 {
			return errorf(ErrData, "string column %q has nulls (record batch %d), which a Categorical cannot hold yet; write the file with the nulls filled (e.g. pyarrow.compute.fill_null(col, \"N/A\")), or leave the column out with columns=[...]", column, batch)
		}
		out[j] = k
	}
	return nil
}

// renumber replaces each code by its rank, on the workers.
func renumber(codes, rank []int32, workers int) {
	w := max(1, min(workers, len(codes)>>16))
	var g par.Group // a worker's panic reaches the caller
	for k := range w {
		lo, hi := len(codes)*k/w, len(codes)*(k+1)/w
		g.Go(func() {
			for j, c := range codes[lo:hi] {
				codes[lo+j] = rank[c]
			}
		})
	}
	g.Wait()
}

// ipcStringArrays makes a string column's dictionary type and its
// dictionary (the categories, over their own bytes; offsets narrowed to
// int32 when they fit, as utf8, else large_utf8).
func ipcStringArrays(c Column) (*arrow.DictionaryType, arrow.Array) {
	cats := c.Cats
	values := memory.NewBufferBytes(cats.Bytes)
	var dict arrow.Array
	if len(cats.Bytes) <= math.MaxInt32 {
		offs := make([]int32, len(cats.Offsets))
		for i, o := range cats.Offsets {
			offs[i] = int32(o)
		}
		dict = array.MakeFromData(array.NewData(arrow.BinaryTypes.String, cats.len(),
			[]*memory.Buffer{nil, memory.NewBufferBytes(pdarray.AsBytes(offs)), values}, nil, 0, 0))
	} else {
		dict = array.MakeFromData(array.NewData(arrow.BinaryTypes.LargeString, cats.len(),
			[]*memory.Buffer{nil, memory.NewBufferBytes(pdarray.AsBytes(cats.Offsets)), values}, nil, 0, 0))
	}
	return &arrow.DictionaryType{IndexType: arrowOf[c.A.DType()], ValueType: dict.DataType()}, dict
}

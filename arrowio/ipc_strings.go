package arrowio

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

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
// so a column is numbered on one goroutine, in the open-addressing table
// of Parquet's reader: a dictionary's entries once per dictionary (every
// batch of an IPC file shares its column's), a plain column's rows one by
// one; the distinct strings are sorted (by 8-byte prefix, in chunks on the
// workers) and the codes renumbered on the workers.

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
// batches: up to 64 in the table (16-byte slots, at most half full, 2x
// while it doubles), 32 for its header, hash and prefix, 64 for the sort's
// items and their merge copy, 4 for its rank and 16 in the sorted list.
const ipcStringBytes = 180

// StringScratch bounds what ReadStrings holds for string column i beside
// its codes (the strings' bytes stay in the held record batches).
func (p *IPCPlan) StringScratch(i int) int64 {
	per := int64(ipcStringBytes)
	if p.plainStrings[i] {
		per += ipcUnitBytes // the workers' own numberings, merged into one
	}
	return per * int64(p.distinctBound[i])
}

// ipcUnitBytes is what a worker's numbering holds a distinct string (a
// table's 64, 32 for its header, hash and prefix) and the merge's map 4.
const ipcUnitBytes = 100

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
	if d := p.sortedDictionary(i); d != nil {
		IPCStringStats.SortedDictionaries.Add(1)
		return p.readSortedDictionary(i, d, codes, workers)
	}
	// Plain columns are numbered on the workers, each its own range of
	// batches in a table of its own, then merged; a dictionary column on
	// one (its dictionary, shared by the batches, is hashed once).
	anyDict := false
	for _, rec := range p.recs {
		if _, ok := rec.Column(f).(*array.Dictionary); ok {
			anyDict = true
			break
		}
	}
	nw := max(1, min(workers, len(p.recs)))
	if anyDict {
		nw = 1
	}
	seed := maphash.MakeSeed()
	units := []*ipcNumbering{newNumbering(seed, sc.Name, p.distinctBound[i])}
	// The first batch tells: when an eighth of its rows or more are
	// distinct, merging the workers' numberings would cost more than it
	// saves (each would number most strings again): one worker goes on.
	first := 0
	if nw > 1 {
		if err := p.numberBatches(units[0], f, 0, 1, codes); err != nil {
			return nil, err
		}
		first = 1
		if rows := int(p.recs[0].NumRows()); 8*len(units[0].strs) > rows {
			nw = 1
		}
	}
	for len(units) < nw {
		units = append(units, newNumbering(seed, sc.Name, p.distinctBound[i]/nw))
	}
	// Worker w numbers batches first+rest*w/nw up to the next worker's;
	// rows[w] are the rows it numbered (worker 0's from batch 0).
	rest := len(p.recs) - first
	rowsOf := func(b int) int {
		if b < len(p.recs) {
			return p.offsets[b]
		}
		return p.Rows
	}
	errs := make([]error, nw)
	rows := make([][2]int, nw)
	var g par.Group // a worker's panic reaches the caller (and the recover above)
	for w := range nw {
		lo, hi := first+rest*w/nw, first+rest*(w+1)/nw
		rows[w] = [2]int{rowsOf(lo), rowsOf(hi)}
		g.Go(func() { errs[w] = p.numberBatches(units[w], f, lo, hi, codes) })
	}
	rows[0][0] = 0 // (and batch 0 before them, when first is 1)
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	u := units[0]
	if nw > 1 { // the units' strings into one numbering, their rows' codes mapped to it
		IPCStringStats.ParallelPlain.Add(1)
		u = newNumbering(seed, sc.Name, p.distinctBound[i])
		u.checked = true // (each unit checked its strings)
		maps := make([][]int32, nw)
		for w, x := range units {
			m := make([]int32, len(x.strs))
			for k, v := range x.strs {
				m[k] = u.id(v, x.hashes[k], x.pres[k])
			}
			maps[w], units[w] = m, nil
		}
		for w := range nw {
			g.Go(func() {
				lo, hi, m := rows[w][0], rows[w][1], maps[w]
				for j, c := range codes[lo:hi] {
					codes[lo+j] = m[c]
				}
			})
		}
		g.Wait()
	}
	strs, pres := u.strs, u.pres
	if len(strs) > math.MaxInt32 {
		return nil, errorf(ErrValue, "string column %q has %d distinct strings; a Categorical numbers at most 2^31-1", sc.Name, len(strs))
	}
	// A dictionary's entries no row uses (pandas keeps unused categories;
	// a null entry was numbered too) are left out: the categories are the
	// strings the column holds, as Parquet's read gives them.
	var used []bool
	if anyDict {
		used = make([]bool, len(strs))
		for _, c := range codes {
			used[c] = true
		}
	}
	items := make([]sortItem, 0, len(strs))
	for k, v := range strs {
		if used == nil || used[k] {
			items = append(items, sortItem{prefix: pres[k], s: v, gid: int32(k)})
		}
	}
	items = sortItems(items, max(1, workers))
	rank := make([]int32, len(strs))
	cats := make([]string, len(items))
	for r, it := range items {
		rank[it.gid], cats[r] = int32(r), it.s
	}
	renumber(codes, rank, workers)
	return cats, nil
}

// ipcNumbering numbers strings in the order met, in the open-addressing
// table Parquet's reader uses; the strings alias the held batches.
type ipcNumbering struct {
	strs         []string
	hashes, pres []uint64
	t            strTable
	seed         maphash.Seed
	column       string
	mix          uint64 // the seed's, for short strings' hashes
	checked      bool   // the strings come checked for UTF-8
	bad          error
	hs, ps       [stringBlock]uint64
	vs           [stringBlock]string
}

func newNumbering(seed maphash.Seed, column string, hint int) *ipcNumbering {
	u := &ipcNumbering{seed: seed, column: column, mix: seedMix(seed)}
	u.t.reset(min(hint, 4096)) // (grows: a large start is cleared in vain for few strings)
	return u
}

// nullID numbers the null string (given: the open refused nulls else).
func (u *ipcNumbering) nullID(s *string) int32 {
	if s == nil {
		panic("a null with no null string")
	}
	return u.id(*s, u.hash(*s, prefix8(*s)), prefix8(*s))
}

// hash is v's hash (strHash: the merge of the workers' numberings
// rehashes nothing, one seed giving each string one hash in all).
func (u *ipcNumbering) hash(v string, pre uint64) uint64 { return strHash(u.seed, u.mix, v, pre) }

// id numbers v (hash h, prefix8 pre).
func (u *ipcNumbering) id(v string, h, pre uint64) int32 {
	key := strKey(h, len(v))
	if k := u.t.find(h, key, pre, v, func(id int32) string { return u.strs[id] }); k >= 0 {
		return k
	}
	if !u.checked && !utf8.ValidString(v) && u.bad == nil {
		u.bad = errorf(ErrData, "string column %q holds bytes that are not UTF-8 (%q); its file is damaged or not text", u.column, v[:min(len(v), 40)])
	}
	k := int32(len(u.strs))
	u.strs, u.hashes, u.pres = append(u.strs, v), append(u.hashes, h), append(u.pres, pre)
	u.t.put(h, key, pre, k, u.hashes)
	return k
}

// number gives out[j] the id of string j of a (utf8 or large_utf8, len(out)
// of them); a null one is null's (nil: -1), its slot's bytes unread.
func (u *ipcNumbering) number(out []int32, a arrow.Array, null *string) {
	var isNull func(int) bool
	if a.NullN() > 0 {
		isNull = a.IsNull
	}
	switch a := a.(type) {
	case *array.String:
		numberOffsets(u, out, a.ValueBytes(), a.ValueOffsets(), isNull, null)
	case *array.LargeString:
		numberOffsets(u, out, a.ValueBytes(), a.ValueOffsets(), isNull, null)
	default:
		panic(fmt.Sprintf("string column of %s", a.DataType()))
	}
}

// numberOffsets numbers the strings data[offs[j]:offs[j+1]] (aliased, not
// copied): a block of stringBlock values is hashed and its home slots
// touched first (the misses overlap), then probed.
func numberOffsets[T int32 | int64](u *ipcNumbering, out []int32, data []byte, offs []T, isNull func(int) bool, null *string) {
	offs = offs[:len(out)+1]
	base := offs[0] // (ValueBytes starts at the first value's offset)
	var nulls [stringBlock]bool
	for lo := 0; lo < len(out); lo += stringBlock {
		blk := out[lo:min(len(out), lo+stringBlock)]
		for j := range blk {
			var v string
			if nulls[j] = isNull != nil && isNull(lo+j); nulls[j] {
				if null == nil {
					continue
				}
				v = *null
			} else if s, e := offs[lo+j]-base, offs[lo+j+1]-base; e > s {
				v = unsafe.String(&data[s:e][0], int(e-s)) // (bounds checked by the slice)
			}
			pre := prefix8(v)
			u.vs[j], u.hs[j], u.ps[j] = v, u.hash(v, pre), pre
			u.t.sink += u.t.slots[u.hs[j]&u.t.mask].meta
		}
		for j := range blk {
			if nulls[j] && null == nil {
				blk[j] = -1
				continue
			}
			blk[j] = u.id(u.vs[j], u.hs[j], u.ps[j])
		}
	}
}

// numberBatches numbers the rows of batches lo:hi of field f into codes
// (u's ids).
func (p *IPCPlan) numberBatches(u *ipcNumbering, f, lo, hi int, codes []int32) error {
	var local []int32 // a dictionary's entries' ids (-1: a null entry)
	var dictOf arrow.ArrayData
	for r := lo; r < hi; r++ {
		col := p.recs[r].Column(f)
		out := codes[p.offsets[r] : p.offsets[r]+col.Len()]
		switch a := col.(type) {
		case *array.Dictionary:
			d := a.Dictionary()
			if dd := d.Data(); dd != dictOf {
				local = slices.Grow(local[:0], d.Len())[:d.Len()]
				u.number(local, d, p.policy.NullString) // (a null entry: the null string's, else -1, refused where used)
				dictOf = dd
			}
			null := int32(-1) // a null index's (refused at the open unless a null string is given)
			if a.NullN() > 0 {
				null = u.nullID(p.policy.NullString)
			}
			if err := dictCodes(out, a.Indices(), local, null, u.column, r); err != nil {
				return err
			}
		default:
			u.number(out, col, p.policy.NullString) // (nulls: refused at the open unless a null string is given)
		}
		if u.bad != nil {
			return u.bad
		}
	}
	return nil
}

// IPCStringStats counts string columns read straight from a sorted
// dictionary, and plain ones numbered on more than one worker (tests).
var IPCStringStats struct{ SortedDictionaries, ParallelPlain atomic.Uint64 }

// sortedDictionary gives string column i's dictionary when every batch
// shares it and its entries are distinct, sorted bytewise, not null and
// UTF-8 (what to_arrow_file writes, and pandas for a category column of
// sorted categories); else nil.
func (p *IPCPlan) sortedDictionary(i int) arrow.Array {
	var d arrow.Array
	for _, rec := range p.recs {
		a, ok := rec.Column(p.stringFields[i]).(*array.Dictionary)
		if !ok || a.NullN() > 0 || d != nil && a.Dictionary().Data() != d.Data() {
			return nil
		}
		d = a.Dictionary()
	}
	if d == nil || d.NullN() > 0 {
		return nil
	}
	prev := ""
	for j := range d.Len() {
		v := strAt(d, j)
		if j > 0 && v <= prev || !utf8.ValidString(v) {
			return nil
		}
		prev = v
	}
	return d
}

// readSortedDictionary reads string column i, whose batches share the
// sorted dictionary d: a row's code is its index, less the entries below
// it that no row uses (pandas keeps unused categories); nothing is hashed
// or sorted.
func (p *IPCPlan) readSortedDictionary(i int, d arrow.Array, codes []int32, workers int) ([]string, error) {
	sc := p.Strings[i]
	local := make([]int32, d.Len())
	for j := range local {
		local[j] = int32(j)
	}
	for r, rec := range p.recs {
		a := rec.Column(p.stringFields[i]).(*array.Dictionary)
		if err := dictCodes(codes[p.offsets[r]:p.offsets[r]+a.Len()], a.Indices(), local, -1, sc.Name, r); err != nil { // (no nulls: sortedDictionary)
			return nil, err
		}
	}
	used := make([]bool, d.Len())
	for _, c := range codes {
		used[c] = true
	}
	var cats []string
	for j, u := range used {
		local[j] = int32(len(cats))
		if u {
			cats = append(cats, strAt(d, j))
		}
	}
	if len(cats) < d.Len() {
		renumber(codes, local, workers)
	}
	return cats, nil
}

// dictCodes maps a batch's dictionary indices through local into out; a
// null index's row gets null.
func dictCodes(out []int32, idx arrow.Array, local []int32, null int32, column string, batch int) error {
	var nulls arrow.Array // rows whose index is null
	if idx.NullN() > 0 {
		nulls = idx
	}
	switch idx := idx.(type) {
	case *array.Int8:
		return mapIndices(out, idx.Int8Values(), local, null, column, batch, nulls)
	case *array.Int16:
		return mapIndices(out, idx.Int16Values(), local, null, column, batch, nulls)
	case *array.Int32:
		return mapIndices(out, idx.Int32Values(), local, null, column, batch, nulls)
	case *array.Int64:
		return mapIndices(out, idx.Int64Values(), local, null, column, batch, nulls)
	case *array.Uint8:
		return mapIndices(out, idx.Uint8Values(), local, null, column, batch, nulls)
	case *array.Uint16:
		return mapIndices(out, idx.Uint16Values(), local, null, column, batch, nulls)
	case *array.Uint32:
		return mapIndices(out, idx.Uint32Values(), local, null, column, batch, nulls)
	case *array.Uint64:
		return mapIndices(out, idx.Uint64Values(), local, null, column, batch, nulls)
	}
	return errorf(ErrType, "string column %q: dictionary indices of type %s", column, idx.DataType())
}

func mapIndices[T codeInt](out []int32, idx []T, local []int32, null int32, column string, batch int, nulls arrow.Array) error {
	n := uint64(len(local))
	for j, v := range idx[:len(out)] {
		if nulls != nil && nulls.IsNull(j) {
			out[j] = null
			continue
		}
		if v < 0 || uint64(v) >= n {
			return errorf(ErrData, "string column %q: record batch %d, row %d has dictionary index %d outside its %d entries; the file is damaged", column, batch, j, int64(v), n)
		}
		k := local[v]
		if k < 0 {
			return nullStringErr(fmt.Sprintf("record batch %d", batch), column)
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

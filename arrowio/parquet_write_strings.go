package arrowio

import (
	"bytes"
	"fmt"
	"sort"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/arktos-dev/arktos/pdarray"
)

// String columns are written from a Categorical's two halves: a code per
// row (Column.A) and the distinct strings (Column.Cats), as ReadStrings
// gives them back. A row group's chunk is dictionary-encoded when the
// strings its rows use fit a dictionary page: its dictionary is those
// strings in their (sorted) order and its indices the codes renumbered
// through a table, so no string is hashed; otherwise the chunk is plain,
// each row's value aliasing its string's bytes.

// Categories are a string column's distinct strings: string i is
// Bytes[Offsets[i]:Offsets[i+1]], UTF-8, distinct and sorted bytewise (as
// ReadStrings gives them). The caller owns both and keeps
// them unchanged while the write runs (values alias Bytes).
type Categories struct {
	Bytes   []byte
	Offsets []int64 // len = strings+1, Offsets[0] = 0
	// Null, when not nil, is the category whose rows are written as nulls
	// (a client's null string; the column is then optional).
	Null *int
}

// Find gives the place of string s among the categories (sorted), or nil.
func (c *Categories) Find(s string) *int {
	i := sort.Search(c.len(), func(i int) bool { return string(c.at(i)) >= s })
	if i < c.len() && string(c.at(i)) == s {
		return &i
	}
	return nil
}

// isNull tells whether code c is written as a null.
func (c *Categories) isNull(code int) bool { return c.Null != nil && code == *c.Null }

func (c *Categories) len() int { return len(c.Offsets) - 1 }

func (c *Categories) at(i int) []byte { return c.Bytes[c.Offsets[i]:c.Offsets[i+1]] }

// checkStrings checks a string column: signed integer codes, each naming
// one of its strings, and distinct UTF-8 strings sorted bytewise (Unicode
// code point order), so that a page's least and greatest codes are its
// least and greatest strings.
func checkStrings(c Column) error {
	cats := c.Cats
	if len(cats.Offsets) == 0 || cats.Offsets[0] != 0 || cats.Offsets[len(cats.Offsets)-1] != int64(len(cats.Bytes)) {
		return errorf(ErrValue, "string column %q: its categories' lengths do not add up to their %d bytes", c.Name, len(cats.Bytes))
	}
	for i := range cats.len() {
		if cats.Offsets[i+1] < cats.Offsets[i] {
			return errorf(ErrValue, "string column %q: category %d has a negative length", c.Name, i)
		}
		s := cats.at(i)
		if !utf8.Valid(s) {
			return errorf(ErrValue, "string column %q: category %d is not UTF-8 (%q); Parquet strings are UTF-8", c.Name, i, s[:min(len(s), 40)])
		}
		if i > 0 && bytes.Compare(cats.at(i-1), s) >= 0 {
			return errorf(ErrValue, "string column %q: categories %d and %d (%q, %q) are not distinct and sorted bytewise; give them sorted (np.unique, ReadStrings and ak.Categorical do) with the codes renumbered", c.Name, i-1, i, clip(cats.at(i-1)), clip(s))
		}
	}
	n := int64(cats.len())
	if cats.Null != nil && (*cats.Null < 0 || int64(*cats.Null) >= n) {
		return errorf(ErrValue, "string column %q: its null category %d is outside its %d categories", c.Name, *cats.Null, n)
	}
	bad := func(row int, code int64) error {
		return errorf(ErrValue, "string column %q: row %d has code %d, outside its %d categories (0..%d)", c.Name, row, code, n, n-1)
	}
	switch c.A.DType() {
	case pdarray.Int8:
		return checkCodes(pdarray.View[int8](c.A), n, bad)
	case pdarray.Int16:
		return checkCodes(pdarray.View[int16](c.A), n, bad)
	case pdarray.Int32:
		return checkCodes(pdarray.View[int32](c.A), n, bad)
	case pdarray.Int64:
		return checkCodes(pdarray.View[int64](c.A), n, bad)
	case pdarray.Uint8:
		return checkCodes(pdarray.View[uint8](c.A), n, bad)
	case pdarray.Uint16:
		return checkCodes(pdarray.View[uint16](c.A), n, bad)
	case pdarray.Uint32:
		return checkCodes(pdarray.View[uint32](c.A), n, bad)
	case pdarray.Uint64:
		return checkCodes(pdarray.View[uint64](c.A), n, bad)
	}
	return errorf(ErrType, "string column %q: codes must be integers (int8..int64, uint8..uint64), not %s", c.Name, c.A.DType())
}

func clip(s []byte) []byte { return s[:min(len(s), 40)] }

// codeInt are the dtypes of a string column's codes.
type codeInt interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

func checkCodes[T codeInt](codes []T, n int64, bad func(int, int64) error) error {
	var lo, hi T
	for _, c := range codes { // (no branch a row: the range is checked once)
		lo, hi = min(lo, c), max(hi, c)
	}
	// (lo >= 0 makes hi >= 0: uint64(hi) is its value, for every T)
	if lo >= 0 && uint64(hi) < uint64(n) || len(codes) == 0 {
		return nil
	}
	for i, c := range codes {
		if c < 0 || uint64(c) >= uint64(n) {
			return bad(i, int64(c)) // (a uint64 past 2^63 shows negative)
		}
	}
	return nil
}

// stringChunkBytes is the most a row group of rg rows of string column c
// holds plain (a 4-byte length and the bytes a row): what its chunk takes
// at most before compression, dictionary or not.
func stringChunkBytes(c Column, rg int) int64 {
	most := int64(0)
	n := c.A.Len()
	for lo := 0; lo < n; lo += rg {
		hi := min(n, lo+rg)
		var sum int64
		forCodes(c.A, lo, hi, func(code int) {
			if code >= 0 && code < c.Cats.len() { // (the codes are checked later, by WriteParquet)
				sum += 4 + c.Cats.Offsets[code+1] - c.Cats.Offsets[code]
			}
		})
		most = max(most, sum)
	}
	return most
}

// forCodes calls f with each code of rows lo:hi of a (checked codes; a
// closure a row suits the estimates, not the writing).
func forCodes(a *pdarray.Array, lo, hi int, f func(int)) {
	switch a.DType() {
	case pdarray.Int8:
		for _, c := range pdarray.View[int8](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Int16:
		for _, c := range pdarray.View[int16](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Int32:
		for _, c := range pdarray.View[int32](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Int64:
		for _, c := range pdarray.View[int64](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Uint8:
		for _, c := range pdarray.View[uint8](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Uint16:
		for _, c := range pdarray.View[uint16](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Uint32:
		for _, c := range pdarray.View[uint32](a)[lo:hi] {
			f(int(c))
		}
	case pdarray.Uint64:
		for _, c := range pdarray.View[uint64](a)[lo:hi] {
			f(int(c))
		}
	}
}

// plainBatch is the rows of a plain string chunk handed to arrow-go at
// once: their strings' cache lines (at most 64 B each) fit L2.
const plainBatch = 4096

var stringTouch atomic.Uint32

var noPlainTouch bool // BenchmarkWriteStrings' A/B (ARKTOS_BENCH_NOTOUCH=1)

// StringWriteStats counts string column chunks (tests): written with a
// dictionary of their rows' strings, and plain.
var StringWriteStats struct{ DictChunks, PlainChunks atomic.Uint64 }

func writeStringChunk(cw file.ColumnChunkWriter, a *pdarray.Array, cats *Categories, lo, hi int, sc *writeScratch) error {
	bw, ok := cw.(*file.ByteArrayColumnChunkWriter)
	if !ok {
		return fmt.Errorf("string column chunk has a %T", cw)
	}
	switch a.DType() {
	case pdarray.Int8:
		return writeStrings(bw, pdarray.View[int8](a)[lo:hi], cats, sc)
	case pdarray.Int16:
		return writeStrings(bw, pdarray.View[int16](a)[lo:hi], cats, sc)
	case pdarray.Int32:
		return writeStrings(bw, pdarray.View[int32](a)[lo:hi], cats, sc)
	case pdarray.Int64:
		return writeStrings(bw, pdarray.View[int64](a)[lo:hi], cats, sc)
	case pdarray.Uint8:
		return writeStrings(bw, pdarray.View[uint8](a)[lo:hi], cats, sc)
	case pdarray.Uint16:
		return writeStrings(bw, pdarray.View[uint16](a)[lo:hi], cats, sc)
	case pdarray.Uint32:
		return writeStrings(bw, pdarray.View[uint32](a)[lo:hi], cats, sc)
	case pdarray.Uint64:
		return writeStrings(bw, pdarray.View[uint64](a)[lo:hi], cats, sc)
	}
	return fmt.Errorf("codes of dtype %s", a.DType())
}

// writeStrings writes one chunk of codes (checked by checkStrings).
func writeStrings[T codeInt](cw *file.ByteArrayColumnChunkWriter, codes []T, cats *Categories, sc *writeScratch) error {
	ncat := cats.len()
	if cap(sc.table) < ncat {
		sc.table = make([]int32, ncat)
	}
	table := sc.table[:ncat] // category -> dictionary index, -1 when unused
	for i := range table {
		table[i] = -1
	}
	for _, c := range codes {
		table[c] = 0
	}
	var defs []int16 // with a null category: 0 for its rows, 1 for the others
	if cats.Null != nil {
		if cap(sc.defs) < len(codes) {
			sc.defs = make([]int16, len(codes))
		}
		defs = sc.defs[:len(codes)]
		for j, c := range codes {
			defs[j] = 1
			if int(c) == *cats.Null {
				defs[j] = 0
			}
		}
		table[*cats.Null] = -1 // (not in the dictionary)
	}
	used, dictBytes := 0, 0
	for i, t := range table {
		if t == 0 {
			table[i] = int32(used)
			used++
			dictBytes += 4 + int(cats.Offsets[i+1]-cats.Offsets[i])
		}
	}
	enc := cw.CurrentEncoder()
	de, isDict := enc.(dictionaryEncoder)
	isDict = isDict && enc.Encoding() == parquet.Encodings.PlainDict && de.NumEntries() == 0
	if isDict && used > 0 && dictBytes <= dictPageLimit {
		StringWriteStats.DictChunks.Add(1)
		return writeStringDict(cw, de, codes, defs, cats, table, used, dictBytes, sc)
	}
	if isDict {
		cw.FallbackToPlain() // before any value: no dictionary page is written
	}
	StringWriteStats.PlainChunks.Add(1)
	if cap(sc.vals) < plainBatch {
		sc.vals = make([]parquet.ByteArray, plainBatch)
	}
	var touched byte
	for off := 0; off < len(codes); off += plainBatch {
		part := codes[off:min(len(codes), off+plainBatch)]
		vals := sc.vals[:0]
		for _, c := range part {
			if !cats.isNull(int(c)) {
				vals = append(vals, cats.at(int(c))) // copied by the encoder
			}
		}
		// Each string's first byte is loaded here, the loads independent
		// (their misses overlap), so the encoder's copy a row finds it in
		// cache: a batch's lines fit L2.
		for _, v := range vals {
			if len(v) > 0 && !noPlainTouch {
				touched |= v[0]
			}
		}
		var d []int16
		if defs != nil {
			d = defs[off : off+len(part)]
		}
		if _, err := cw.WriteBatch(vals, d, nil); err != nil {
			return err
		}
	}
	stringTouch.Store(uint32(touched)) // (keeps the loads)
	if len(codes) == 0 {
		_, err := cw.WriteBatch(nil, nil, nil)
		return err
	}
	return nil
}

// writeStringDict writes codes dictionary-encoded: the used categories (in
// order) are the dictionary, table renumbers the codes into its indices.
func writeStringDict[T codeInt](cw *file.ByteArrayColumnChunkWriter, de dictionaryEncoder, codes []T, defs []int16, cats *Categories, table []int32, used, dictBytes int, sc *writeScratch) error {
	data := make([]byte, 0, dictBytes-4*used) // fresh: the encoder may keep the dictionary
	offs := make([]int32, 1, used+1)
	for i, t := range table {
		if t >= 0 {
			data = append(data, cats.at(i)...)
			offs = append(offs, int32(len(data)))
		}
	}
	dictArr := array.MakeFromData(array.NewData(arrow.BinaryTypes.String, used,
		[]*memory.Buffer{nil, memory.NewBufferBytes(pdarray.AsBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0))
	defer dictArr.Release()
	if err := de.PutDictionary(dictArr); err != nil {
		return err
	}
	if de.NumEntries() != used {
		return fmt.Errorf("dictionary of %d strings has %d entries", used, de.NumEntries())
	}
	if cap(sc.idx) < len(codes) {
		sc.idx = make([]int32, len(codes))
	}
	idx := sc.idx[:len(codes)]
	var raw int64 // the chunk's plain size: pages are cut by it, as arrow-go does
	for _, c := range codes {
		if !cats.isNull(int(c)) {
			raw += 4 + cats.Offsets[int(c)+1] - cats.Offsets[c]
		}
	}
	// Pages of about a data page's raw bytes, each flushed here with its own
	// statistics: the categories are sorted, so a page's min and max are
	// the strings of its least and greatest codes. (arrow-go's
	// UpdateFromArrow would hash nothing but skips "", claiming a larger
	// min than a page holding "" has.)
	slice := max(128, int(int64(cw.Properties().DataPageSize())*int64(len(codes))/max(raw, 1)))
	for off := 0; off < len(idx); off += slice {
		end := min(len(idx), off+slice)
		part := codes[off:end]
		var lo, hi T
		values, partRaw := 0, int64(0)
		for i, c := range part {
			if cats.isNull(int(c)) {
				idx[off+i] = 0 // (a null's slot: any index)
				continue
			}
			idx[off+i] = table[c]
			if values == 0 {
				lo, hi = c, c
			}
			lo, hi = min(lo, c), max(hi, c)
			values++
			partRaw += 4 + cats.Offsets[int(c)+1] - cats.Offsets[c]
		}
		if st, ok := cw.PageStatistics().(*metadata.ByteArrayStatistics); ok {
			st.IncNumValues(int64(values))
			st.IncNulls(int64(len(part) - values))
			if values > 0 {
				// (SetMinMax ignores a nil slice: "" is given as an empty one.)
				st.SetMinMax(append(parquet.ByteArray{}, cats.at(int(lo))...), append(parquet.ByteArray{}, cats.at(int(hi))...))
			}
		}
		var d []int16
		var valid *memory.Buffer // (PutIndices skips the indices its bitmap says are null)
		if defs != nil {
			d = defs[off:end]
			bits := make([]byte, bitutil.BytesForBits(int64(len(d))))
			for j, l := range d {
				if l == 1 {
					bitutil.SetBit(bits, j)
				}
			}
			valid = memory.NewBufferBytes(bits)
		}
		ia := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int32, len(part), []*memory.Buffer{valid, memory.NewBufferBytes(pdarray.AsBytes(idx[off:end]))}, nil, len(part)-values, 0))
		err := cw.WriteDictIndices(ia, d, nil)
		ia.Release()
		if err != nil {
			return err
		}
		de.AddRawSize(partRaw)
		if err := cw.FlushCurrentPage(); err != nil {
			return err
		}
	}
	return nil
}

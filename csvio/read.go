package csvio

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// File is one CSV file's bytes, read by the caller (the server reads the
// files; csvio does no I/O). Name is only for messages. Read reads Data
// and keeps no reference to it once it returns: no column aliases it.
type File struct {
	Name string
	Data []byte
}

// Column is one column of a CSV file: Array for a number or bool column
// (int64, uint64, float64 or bool), nil for a string column, which is
// Offsets (Arrow large_string offsets, len rows+1, from 0) and Bytes (the
// UTF-8 text of every row, one after another).
//
// Read fills Offsets and Bytes with views of an Int64 and a Uint8 array
// that its Alloc made, whole (pdarray.Wrap(pdarray.Int64,
// pdarray.AsBytes(c.Offsets)) makes the array again without a copy).
// Write also takes the narrower dtypes (int8 ... uint32, float32) and
// Offsets that do not start at 0.
type Column struct {
	Name    string
	Array   *pdarray.Array
	Offsets []int64
	Bytes   []byte
}

// Rows is the column's length.
func (c *Column) Rows() int {
	if c.Array != nil {
		return c.Array.Len()
	}
	return max(len(c.Offsets)-1, 0)
}

// ReadOptions says how Read parses and where its memory comes from. The
// zero value reads every column, comma-delimited, on par.Procs() workers.
type ReadOptions struct {
	// Delim separates fields of the column-names line and of the rows
	// (',' when 0). The typing header's types line is always
	// comma-delimited, as Arkouda writes it.
	Delim byte
	// Columns lists the columns to return, in this order (nil or empty:
	// all, in the first file's order).
	Columns []string
	// DTypes maps a column name to "int64", "uint64", "float64", "bool" or
	// "str": it overrides the typing header, and types a column of a file
	// without one (whose columns are otherwise read as str).
	DTypes map[string]string
	// Workers is how many goroutines parse (par.Procs() when 0).
	Workers int
	// Alloc makes every column's memory (the server's accountant): numbers
	// and bools in their dtype; a string column's offsets as Int64 (rows+1)
	// and bytes as Uint8. Read writes every element before it returns the
	// columns, so Alloc may return memory that is not zeroed. nil:
	// pdarray.AllocUninit.
	Alloc func(d pdarray.DType, n int) (*pdarray.Array, error)

	minSpan int // tests: the fewest data bytes a span gets (0: defaultMinSpan)
}

// defaultMinSpan keeps small files on one worker: below it the goroutines
// and the strings' concatenation cost more than the parse.
const defaultMinSpan = 256 << 10

// kind is a column's type in a file: a CSV type name of Arkouda's.
type kind uint8

const (
	kindUntyped kind = iota // a file without a typing header: str unless DTypes says
	kindInt64
	kindUint64
	kindFloat64
	kindBool
	kindStr
)

var kindNames = [...]string{kindUntyped: "untyped", kindInt64: "int64", kindUint64: "uint64",
	kindFloat64: "float64", kindBool: "bool", kindStr: "str"}

var kindDTypes = [...]pdarray.DType{kindInt64: pdarray.Int64, kindUint64: pdarray.Uint64,
	kindFloat64: pdarray.Float64, kindBool: pdarray.Bool}

func (k kind) String() string { return kindNames[k] }

// parseKind maps a type name of the typing header (or of DTypes) to its kind.
func parseKind(s string) (kind, bool) {
	for k := kindInt64; k <= kindStr; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return kindUntyped, false
}

const typeList = "int64, uint64, float64, bool or str"

// head is what a file's first lines say: its columns and where its rows
// start.
type head struct {
	names []string
	types []kind // nil: no typing header
	data  int    // byte offset of the first row
	line  int    // line number (1-based) of the first row
}

const (
	headerStart = "**HEADER**"
	headerEnd   = "*/HEADER/*"
)

// nextLine returns the line at pos without its "\n" (and "\r" before it),
// and where the next one starts; ok is false at the end of data.
func nextLine(data []byte, pos int) (line []byte, next int, ok bool) {
	if pos >= len(data) {
		return nil, pos, false
	}
	line, next = data[pos:], len(data)
	if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
		line, next = line[:nl], pos+nl+1
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, next, true
}

// readHead parses a file's typing header, if it has one, and its
// column-names line.
func readHead(f File, delim byte) (head, error) {
	var h head
	data := f.Data
	pos, line := 0, 1
	first, next, ok := nextLine(data, 0)
	if !ok {
		return h, errorf(ErrData, "file %q is empty: it has no column names line", f.Name)
	}
	if string(first) == headerStart {
		types, next2, ok := nextLine(data, next)
		end, next3, ok3 := nextLine(data, next2)
		if !ok || !ok3 || string(end) != headerEnd {
			found := "the end of the file"
			if ok3 {
				found = quote(end)
			}
			return h, errorf(ErrData, "file %q line 3: the typing header that starts at line 1 has no %s end line (found %s); a header is %s, a line of comma-separated types, then %s",
				f.Name, headerEnd, found, headerStart, headerEnd)
		}
		for _, t := range bytes.Split(types, []byte{','}) {
			k, ok := parseKind(string(bytes.TrimSpace(t)))
			if !ok {
				return h, errorf(ErrData, "file %q line 2: unknown type %s in the typing header; the types are %s", f.Name, quote(t), typeList)
			}
			h.types = append(h.types, k)
		}
		pos, line = next3, 4
	}
	if pos >= len(data) {
		return h, errorf(ErrData, "file %q line %d: the file ends before its column names line", f.Name, line)
	}
	namesLine := line
	p := parser{delim: delim, file: f.Name}
	var err error
	pos, err = p.record(data, pos, &line, func(b []byte) error {
		if !utf8.Valid(b) {
			return p.errAt(namesLine, "column name %s is not valid UTF-8", quote(b))
		}
		h.names = append(h.names, string(b))
		return nil
	})
	if err != nil {
		return h, err
	}
	for i, n := range h.names {
		if slices.Index(h.names[:i], n) >= 0 {
			return h, errorf(ErrData, "file %q line %d: column name %q appears twice", f.Name, namesLine, n)
		}
	}
	if h.types != nil && len(h.types) != len(h.names) {
		return h, errorf(ErrData, "file %q line 2: the typing header has %d types but line %d names %d columns (%s)",
			f.Name, len(h.types), namesLine, len(h.names), nameList(h.names))
	}
	h.data, h.line = pos, line
	return h, nil
}

// nameList is names for a message.
func nameList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// span is a run of whole rows of one file that one worker parses: a
// range cut at line ends, or the whole of a file that holds a quote.
type span struct {
	file   int
	lo, hi int  // bytes of the file's data
	quoted bool // parse with the quote-aware tokenizer
	row0   int  // the span's first row in the output
	rows   int
	line0  int      // line number of the span's first row
	strs   [][]byte // per output column: the span's string bytes (str columns)
	err    error
}

// output is one output column being filled.
type output struct {
	name string
	kind kind
	arr  *pdarray.Array // numbers and bools
	i64  []int64
	u64  []uint64
	f64  []float64
	b    []bool
	off  []int64 // str: offsets; during the parse, into the span's bytes
	offA *pdarray.Array
}

// Read parses files (already in memory; see File) into columns, the rows
// of every file one after another. The files must have the same columns
// (in any order), of the same type where two typing headers give one.
// Bad input is an *Error naming the file, the line (1-based, header lines
// counted) and the column; Read never panics on input.
//
// Each file's rows are cut at line ends into about two spans per worker;
// pass 1 counts each span's rows (so each knows its first row), the
// columns are allocated, and pass 2 parses each span's fields straight
// into them. A file that holds a '"' is one span: a quoted field may hold
// a line end.
func Read(files []File, o ReadOptions) ([]Column, error) {
	delim := o.Delim
	if delim == 0 {
		delim = ','
	}
	if err := checkDelim(delim); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errorf(ErrValue, "no files to read")
	}
	workers := o.Workers
	if workers <= 0 {
		workers = par.Procs()
	}
	alloc := o.Alloc
	if alloc == nil {
		alloc = pdarray.AllocUninit
	}
	heads := make([]head, len(files))
	for i, f := range files {
		h, err := readHead(f, delim)
		if err != nil {
			return nil, err
		}
		heads[i] = h
	}
	all := heads[0].names
	for i := 1; i < len(files); i++ {
		h := heads[i]
		same := len(h.names) == len(all)
		for _, n := range h.names {
			same = same && slices.Contains(all, n)
		}
		if !same {
			return nil, errorf(ErrData, "file %q has columns %s but file %q has %s; files read together must have the same columns",
				files[i].Name, nameList(h.names), files[0].Name, nameList(all))
		}
	}
	keep := o.Columns
	if len(keep) == 0 {
		keep = all
	}
	for i, c := range keep {
		if !slices.Contains(all, c) {
			return nil, errorf(ErrValue, "column %q is not in file %q; its columns are %s", c, files[0].Name, nameList(all))
		}
		if slices.Index(keep[:i], c) >= 0 {
			return nil, errorf(ErrValue, "Columns lists column %q twice", c)
		}
	}
	override := map[string]kind{}
	for _, c := range slices.Sorted(maps.Keys(o.DTypes)) {
		if !slices.Contains(all, c) {
			return nil, errorf(ErrValue, "DTypes gives a type for column %q, which file %q does not have; its columns are %s", c, files[0].Name, nameList(all))
		}
		k, ok := parseKind(o.DTypes[c])
		if !ok {
			return nil, errorf(ErrValue, "DTypes gives column %q type %q; the types are %s", c, o.DTypes[c], typeList)
		}
		override[c] = k
	}
	outs := make([]output, len(keep))
	for k, c := range keep {
		outs[k] = output{name: c, kind: override[c]}
		if outs[k].kind != kindUntyped {
			continue
		}
		from := -1
		for i, h := range heads {
			if h.types == nil {
				continue
			}
			t := h.types[slices.Index(h.names, c)]
			if from >= 0 && t != outs[k].kind {
				return nil, errorf(ErrData, "column %q is %v in file %q but %v in file %q; give its type in DTypes to read both",
					c, outs[k].kind, files[from].Name, t, files[i].Name)
			}
			if from < 0 {
				from, outs[k].kind = i, t
			}
		}
		if outs[k].kind == kindUntyped {
			outs[k].kind = kindStr
		}
	}
	// outOf[i][j]: the output column of file i's field j, or -1.
	outOf := make([][]int, len(files))
	for i, h := range heads {
		outOf[i] = make([]int, len(h.names))
		for j, n := range h.names {
			outOf[i][j] = slices.Index(keep, n)
		}
	}
	r := &reader{files: files, heads: heads, outOf: outOf, outs: outs, delim: delim}
	r.split(workers, o.minSpan)
	return r.read(workers, alloc)
}

// checkDelim refuses a delimiter that a field could not be told from: a
// quote, a line end, or a byte of a multi-byte UTF-8 character.
func checkDelim(d byte) error {
	if d == '"' || d == '\n' || d == '\r' || d >= utf8.RuneSelf {
		return errorf(ErrValue, "the delimiter must be one ASCII byte other than a quote or a line end, got %q", d)
	}
	return nil
}

// reader is one Read's state, shared by its workers.
type reader struct {
	files []File
	heads []head
	outOf [][]int
	outs  []output
	delim byte
	spans []span
}

// split cuts every file's rows into spans of at least minSpan bytes, about
// two per worker over all the files (spans of unequal cost then even out).
func (r *reader) split(workers, minSpan int) {
	if minSpan <= 0 {
		minSpan = defaultMinSpan
	}
	total := 0
	for i, f := range r.files {
		total += len(f.Data) - r.heads[i].data
	}
	pieces := workers
	if workers > 1 {
		pieces = 2 * workers
	}
	target := max((total+pieces-1)/pieces, minSpan)
	for i, f := range r.files {
		data := f.Data[r.heads[i].data:]
		if bytes.IndexByte(data, '"') >= 0 {
			r.spans = append(r.spans, span{file: i, hi: len(data), quoted: true, line0: r.heads[i].line})
			continue
		}
		lo := 0
		for lo < len(data) {
			hi := len(data)
			if cut := lo + target; cut < len(data) {
				if nl := bytes.IndexByte(data[cut-1:], '\n'); nl >= 0 {
					hi = cut + nl
				}
			}
			r.spans = append(r.spans, span{file: i, lo: lo, hi: hi})
			lo = hi
		}
	}
}

// data is span s's bytes.
func (r *reader) data(s *span) []byte {
	return r.files[s.file].Data[r.heads[s.file].data:][s.lo:s.hi]
}

// run calls f on every span, on up to workers goroutines. Once a span
// fails, the spans after it are skipped but those before it all run, so
// the first error in file order is the one Read reports, whatever the
// number of workers.
func (r *reader) run(workers int, f func(i int, s *span) error) error {
	var next atomic.Int64
	var failed atomic.Int64
	failed.Store(int64(len(r.spans)))
	work := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(len(r.spans)) || i > failed.Load() {
				return
			}
			s := &r.spans[i]
			if s.err = f(int(i), s); s.err != nil {
				for {
					old := failed.Load()
					if i >= old || failed.CompareAndSwap(old, i) {
						break
					}
				}
			}
		}
	}
	var g par.Group
	for range min(workers, len(r.spans)) - 1 {
		g.Go(work)
	}
	work()
	g.Wait()
	for i := range r.spans {
		if r.spans[i].err != nil {
			return r.spans[i].err
		}
	}
	return nil
}

func (r *reader) read(workers int, alloc func(pdarray.DType, int) (*pdarray.Array, error)) ([]Column, error) {
	// Pass 1: rows per span.
	err := r.run(workers, func(_ int, s *span) error {
		if !s.quoted {
			d := r.data(s)
			s.rows = bytes.Count(d, []byte{'\n'})
			if len(d) > 0 && d[len(d)-1] != '\n' {
				s.rows++
			}
			return nil
		}
		p := r.parser(s, true)
		return p.quoted(r.data(s))
	})
	if err != nil {
		return nil, err
	}
	rows, fileRow0 := 0, -1
	for i := range r.spans {
		s := &r.spans[i]
		if i == 0 || s.file != r.spans[i-1].file {
			fileRow0 = rows
		}
		s.row0 = rows
		if !s.quoted { // one line a row
			s.line0 = r.heads[s.file].line + rows - fileRow0
		}
		rows += s.rows
	}
	for k := range r.outs {
		o := &r.outs[k]
		var err error
		if o.kind == kindStr {
			if o.offA, err = allocChecked(alloc, pdarray.Int64, rows+1, o.name); err != nil {
				return nil, err
			}
			o.off = pdarray.View[int64](o.offA)
			o.off[0] = 0
			continue
		}
		if o.arr, err = allocChecked(alloc, kindDTypes[o.kind], rows, o.name); err != nil {
			return nil, err
		}
		switch o.kind {
		case kindInt64:
			o.i64 = pdarray.View[int64](o.arr)
		case kindUint64:
			o.u64 = pdarray.View[uint64](o.arr)
		case kindFloat64:
			o.f64 = pdarray.View[float64](o.arr)
		case kindBool:
			o.b = pdarray.View[bool](o.arr)
		}
	}
	// Pass 2: the fields into the columns; strings into each span's bytes.
	err = r.run(workers, func(_ int, s *span) error {
		return r.parser(s, false).span(r.data(s))
	})
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(r.outs))
	for k := range r.outs {
		o := &r.outs[k]
		cols[k] = Column{Name: o.name, Array: o.arr}
		if o.kind != kindStr {
			continue
		}
		// The spans' bytes one after another, their offsets moved by as
		// much, on the workers.
		base := make([]int64, len(r.spans))
		n := int64(0)
		for i := range r.spans {
			base[i] = n
			n += int64(len(r.spans[i].strs[k]))
		}
		ba, err := allocChecked(alloc, pdarray.Uint8, int(n), o.name)
		if err != nil {
			return nil, err
		}
		text := pdarray.View[uint8](ba)
		_ = r.run(workers, func(i int, s *span) error {
			copy(text[base[i]:], s.strs[k])
			for j := range s.rows {
				o.off[s.row0+1+j] += base[i]
			}
			s.strs[k] = nil
			return nil
		})
		cols[k].Offsets, cols[k].Bytes = o.off, text
	}
	return cols, nil
}

// allocChecked calls the caller's Alloc and checks what it returned.
func allocChecked(alloc func(pdarray.DType, int) (*pdarray.Array, error), d pdarray.DType, n int, col string) (*pdarray.Array, error) {
	a, err := alloc(d, n)
	if err != nil {
		return nil, &Error{Kind: ErrMemory, Msg: fmt.Sprintf("column %q: %d elements of %v: %v", col, n, d, err), Err: err}
	}
	if a == nil || a.DType() != d || a.Len() != n {
		return nil, errorf(ErrValue, "column %q: Alloc(%v, %d) returned an array of another dtype or length", col, d, n)
	}
	return a, nil
}

package csvio

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/internal/pyfmt"
	"github.com/arktos-dev/arktos/pdarray"
)

// WriteOptions says how Write formats. The zero value writes
// comma-delimited, without the typing header, on par.Procs() workers.
type WriteOptions struct {
	// Delim separates the column names and the fields of a row (','
	// when 0).
	Delim byte
	// Header writes Arkouda's typing header first (callers that write
	// Arkouda's format set it; a file for other readers may leave it out).
	Header bool
	// Workers is how many goroutines format rows (par.Procs() when 0).
	Workers int
}

// chunkRows is how many rows a worker formats into one buffer: about a
// MiB of numbers, few enough that the buffers of two rounds stay small.
const chunkRows = 1 << 14

// Write writes cols (all of the same length; at least one) as one CSV
// file: the typing header if o.Header, the column names, then a line a
// row. Numbers are written as Python's str() writes them (floats the
// shortest text that reads back the same float: "1.0", "0.1", "1e+16",
// "nan", "inf"; bools "True"/"False"), strings as they are, in quotes
// (a quote doubled) only when they hold the delimiter, a quote or a line
// end; numbers too when the delimiter is a byte that a number can hold
// (a letter, a digit, '+', '-' or '.'). Rows are formatted on the
// workers, a chunk of rows per buffer, and the buffers written in order
// while the next round is formatted. A failed write of w is an ErrIO
// *Error that wraps w's error.
func Write(w io.Writer, cols []Column, o WriteOptions) error {
	delim := o.Delim
	if delim == 0 {
		delim = ','
	}
	if err := checkDelim(delim); err != nil {
		return err
	}
	workers := o.Workers
	if workers <= 0 {
		workers = par.Procs()
	}
	if len(cols) == 0 {
		return errorf(ErrValue, "no columns to write")
	}
	fs := make([]formatter, len(cols))
	rows := cols[0].Rows()
	for i := range cols {
		c := &cols[i]
		if err := checkName(cols, i, delim); err != nil {
			return err
		}
		if c.Rows() != rows {
			return errorf(ErrValue, "column %q has %d rows but column %q has %d; the columns of a file have the same length", c.Name, c.Rows(), cols[0].Name, rows)
		}
		f, err := formatterOf(c, delim)
		if err != nil {
			return err
		}
		if c.Array != nil && inNumbers(delim) {
			f.append = quoteHolding(f.append, delim)
		}
		fs[i] = f
	}
	var head []byte
	if o.Header {
		head = append(head, headerStart+"\n"...)
		for i := range fs {
			if i > 0 {
				head = append(head, ',')
			}
			head = append(head, fs[i].typ...)
		}
		head = append(head, "\n"+headerEnd+"\n"...)
	}
	names := head
	for i := range cols {
		if i > 0 {
			head = append(head, delim)
		}
		head = append(head, cols[i].Name...)
	}
	if !o.Header && string(head[len(names):]) == headerStart {
		return errorf(ErrValue, "a file without the typing header whose names line is %s would read as one with it; write the header", headerStart)
	}
	head = append(head, '\n')
	if _, err := w.Write(head); err != nil {
		return ioErr(err)
	}
	return writeRows(w, fs, rows, delim, workers)
}

// checkName refuses a column name that would not read back as itself.
func checkName(cols []Column, i int, delim byte) error {
	n := cols[i].Name
	if bytes.ContainsAny([]byte(n), string([]byte{delim, '"', '\n', '\r'})) {
		return errorf(ErrValue, "column name %q holds the delimiter %q, a quote or a line end, which Arkouda's names line cannot hold; rename the column", n, delim)
	}
	if !utf8.ValidString(n) {
		return errorf(ErrValue, "column name %q is not valid UTF-8", n)
	}
	if slices.IndexFunc(cols[:i], func(c Column) bool { return c.Name == n }) >= 0 {
		return errorf(ErrValue, "two columns are named %q; a file's column names must differ", n)
	}
	return nil
}

// formatter appends one column's field of row i.
type formatter struct {
	typ    string // the typing header's name
	append func(dst []byte, i int) []byte
}

// formatterOf picks a column's formatter once, from its dtype.
func formatterOf(c *Column, delim byte) (formatter, error) {
	if c.Array == nil {
		off, text := c.Offsets, c.Bytes
		if len(off) > 0 {
			if off[0] < 0 || off[len(off)-1] > int64(len(text)) {
				return formatter{}, errorf(ErrValue, "column %q: offsets run from %d to %d, outside its %d bytes", c.Name, off[0], off[len(off)-1], len(text))
			}
			for j := 1; j < len(off); j++ {
				if off[j] < off[j-1] {
					return formatter{}, errorf(ErrValue, "column %q: offset %d (%d) is below offset %d (%d)", c.Name, j, off[j], j-1, off[j-1])
				}
			}
		}
		var special [256]bool
		for _, b := range []byte{delim, '"', '\n', '\r'} {
			special[b] = true
		}
		return formatter{"str", func(dst []byte, i int) []byte {
			s := text[off[i]:off[i+1]]
			for _, b := range s {
				if special[b] {
					return appendQuoted(dst, s)
				}
			}
			return append(dst, s...)
		}}, nil
	}
	a := c.Array
	switch a.DType() {
	case pdarray.Int64:
		v := pdarray.View[int64](a)
		return formatter{"int64", func(dst []byte, i int) []byte { return strconv.AppendInt(dst, v[i], 10) }}, nil
	case pdarray.Int32:
		return intFormatter(pdarray.View[int32](a)), nil
	case pdarray.Int16:
		return intFormatter(pdarray.View[int16](a)), nil
	case pdarray.Int8:
		return intFormatter(pdarray.View[int8](a)), nil
	case pdarray.Uint64:
		v := pdarray.View[uint64](a)
		return formatter{"uint64", func(dst []byte, i int) []byte { return strconv.AppendUint(dst, v[i], 10) }}, nil
	case pdarray.Uint32:
		return uintFormatter(pdarray.View[uint32](a)), nil
	case pdarray.Uint16:
		return uintFormatter(pdarray.View[uint16](a)), nil
	case pdarray.Uint8:
		return uintFormatter(pdarray.View[uint8](a)), nil
	case pdarray.Float64:
		v := pdarray.View[float64](a)
		return formatter{"float64", func(dst []byte, i int) []byte { return appendPyFloat(dst, v[i], 64) }}, nil
	case pdarray.Float32:
		// numpy's str of a float32: its own shortest digits, read back
		// as the float64 nearest them.
		v := pdarray.View[float32](a)
		return formatter{"float64", func(dst []byte, i int) []byte { return appendPyFloat(dst, float64(v[i]), 32) }}, nil
	case pdarray.Bool:
		v := pdarray.View[bool](a)
		return formatter{"bool", func(dst []byte, i int) []byte {
			if v[i] {
				return append(dst, "True"...)
			}
			return append(dst, "False"...)
		}}, nil
	}
	return formatter{}, errorf(ErrValue, "column %q has dtype %v, which CSV cannot write", c.Name, a.DType())
}

// intFormatter writes a narrower signed column, typed int64 in the header.
func intFormatter[T int8 | int16 | int32](v []T) formatter {
	return formatter{"int64", func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(v[i]), 10) }}
}

// uintFormatter writes a narrower unsigned column, typed uint64.
func uintFormatter[T uint8 | uint16 | uint32](v []T) formatter {
	return formatter{"uint64", func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(v[i]), 10) }}
}

// inNumbers reports whether d can occur in a number or bool as Write
// writes it ("-1.5e+16", "nan", "inf", "True", "False").
func inNumbers(d byte) bool {
	return d >= '0' && d <= '9' || d|0x20 >= 'a' && d|0x20 <= 'z' || d == '+' || d == '-' || d == '.'
}

// quoteHolding wraps a number's formatter for a delimiter that a number
// can hold: a field that holds it is quoted, so that it reads back whole.
func quoteHolding(f func([]byte, int) []byte, delim byte) func([]byte, int) []byte {
	return func(dst []byte, i int) []byte {
		start := len(dst)
		dst = f(dst, i)
		if bytes.IndexByte(dst[start:], delim) < 0 {
			return dst
		}
		dst = append(dst, 0) // make room for the opening quote
		copy(dst[start+1:], dst[start:])
		dst[start] = '"'
		return append(dst, '"')
	}
}

// appendQuoted appends s in quotes, a quote in it doubled (RFC 4180).
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	for {
		q := bytes.IndexByte(s, '"')
		if q < 0 {
			break
		}
		dst = append(dst, s[:q+1]...)
		dst = append(dst, '"')
		s = s[q+1:]
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

// writeRows formats rounds of one chunk of rows per worker and writes
// each round's buffers in order while the workers format the next.
func writeRows(w io.Writer, fs []formatter, rows int, delim byte, workers int) error {
	chunks := (rows + chunkRows - 1) / chunkRows
	var bufs [2][][]byte
	bufs[0], bufs[1] = make([][]byte, workers), make([][]byte, workers)
	var ready [][]byte // the round formatted last, to write
	for c0, round := 0, 0; ; c0, round = c0+workers, round+1 {
		set := bufs[round%2]
		n := max(min(workers, chunks-c0), 0)
		var g par.Group
		for k := range n {
			g.Go(func() {
				lo := (c0 + k) * chunkRows
				hi := min(lo+chunkRows, rows)
				b := set[k][:0]
				for i := lo; i < hi; i++ {
					for j := range fs {
						if j > 0 {
							b = append(b, delim)
						}
						b = fs[j].append(b, i)
					}
					b = append(b, '\n')
				}
				set[k] = b
			})
		}
		var err error
		for _, b := range ready {
			if err == nil {
				_, err = w.Write(b)
			}
		}
		g.Wait()
		if err != nil {
			return ioErr(err)
		}
		if n == 0 {
			return nil
		}
		ready = set[:n]
	}
}

func ioErr(err error) error {
	return &Error{Kind: ErrIO, Msg: fmt.Sprintf("writing the file: %v", err), Err: err}
}

// appendPyFloat is Python's repr of f (pyfmt.Float).
func appendPyFloat(dst []byte, f float64, bitSize int) []byte { return pyfmt.Float(dst, f, bitSize) }

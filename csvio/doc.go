// Package csvio reads and writes CSV files in Arkouda's format, parsing
// and formatting on several workers, straight from and into pdarray
// buffers. It does no I/O of its own: the caller (the server) reads the
// files into memory, gives Read their bytes, and gives Write the writer.
//
// The format. A file Arkouda writes opens with a typing header:
//
//	**HEADER**
//	int64,str,float64
//	*/HEADER/*
//	ColA,ColB,ColC
//	0,ABC,3.14
//	1,DEF,5.56
//
// The types line is always comma-delimited; its names are int64, uint64,
// float64, bool and str. The column-names line and the rows use the
// column delimiter (',' by default). A file without the header (pandas'
// to_csv, say) starts with the column names, and its columns are read as
// str unless ReadOptions.DTypes types them. Lines end in "\n"; a "\r"
// before it is dropped. A blank line is a row (of one empty field): a
// one-column file of strings writes an empty string so.
//
// Fields follow RFC 4180: a field that starts with '"' is quoted, may hold
// the delimiter and line ends, and holds a quote as "". A quote elsewhere
// in a field is an ordinary byte (as Python's csv reads it). Write quotes
// a string only when it holds the delimiter, a quote, "\n" or "\r"; an
// empty string is written as nothing, and spaces are kept.
//
// Values. int64 and uint64: decimal, an optional sign ('+' only for
// uint64). float64: what strconv.ParseFloat reads except hexadecimal,
// "nan", "inf", "infinity" in any case and signed; empty is NaN (pandas
// writes NaN so); past the largest float is ±Inf, as Python reads it.
// bool: True, False, true, false, TRUE, FALSE, 1, 0. Blanks (spaces,
// tabs) around a number or bool are dropped, as Python's int() drops
// them; a string is kept byte for byte and must be valid UTF-8. Write
// writes numbers as Python's str() does (floats the shortest repr that
// reads back the same: "1.0", "0.1", "1e+16", "nan", "-inf"; bools
// "True"/"False"), so a file written and read back holds the same bits.
// It also writes int8 ... uint32 (typed int64 or uint64) and float32
// (typed float64, numpy's str of it).
//
// The API:
//
//	type File struct{ Name string; Data []byte }
//	type Column struct {
//		Name    string
//		Array   *pdarray.Array // int64, uint64, float64 or bool; nil for a string column
//		Offsets []int64        // a string column: Arrow large_string offsets (rows+1)
//		Bytes   []byte         // and its UTF-8 bytes
//	}
//	type ReadOptions struct {
//		Delim   byte              // ',' when 0
//		Columns []string          // the columns to return, in this order (nil: all)
//		DTypes  map[string]string // per column, a type that overrides the header
//		Workers int               // par.Procs() when 0
//		Alloc   func(d pdarray.DType, n int) (*pdarray.Array, error) // nil: pdarray.AllocUninit
//	}
//	func Read(files []File, o ReadOptions) ([]Column, error)
//	type WriteOptions struct{ Delim byte; Header bool; Workers int }
//	func Write(w io.Writer, cols []Column, o WriteOptions) error
//
// Reading in parallel. Each file's rows are cut at line ends into spans,
// about two per worker over all the files. Pass 1 counts each span's rows
// (bytes.Count of '\n'), so that each knows its first row; the columns
// are then allocated once, from Alloc; pass 2 parses each span's fields
// straight into the columns at its rows. Numbers are parsed without
// allocating: integers and the common float forms by csvio's own parsers
// (eight digits at a time; floats by Clinger's exact path, then Go's
// Eisel-Lemire, checked against strconv by tests and a fuzz target), the
// rest by strconv on an unsafe string view of the file's bytes (the view
// lives only for the call). A span's strings go into its own buffer
// (checked as valid UTF-8 as a whole, cheaply; a span that fails is parsed
// again string by string to name the bad one), the buffers are then
// copied one after another into the column's bytes and the offsets moved
// by as much, on the workers too. A quoted field may hold a line end,
// which splitting at line ends would cut, so a file that holds any '"'
// is one span, parsed on one worker: correct first, and fast in the
// common case of a file without quotes.
//
// Errors. Every fault is an *Error with a Kind (ErrValue: an argument;
// ErrData: the file; ErrIO: the writer; ErrMemory: Alloc refused) and a
// message that names the file, the line (1-based, the header lines
// counted) and the column, and says what was wrong: a row's field count,
// a value its column's type cannot read (quoting at most 40 bytes of
// it), a string that is not UTF-8, a header without its end or with an
// unknown type, files with different columns, a Columns or DTypes entry
// that names no column. Of several faults, Read reports the first in file
// order, whatever the number of workers. No input makes Read panic (a
// fuzz test checks).
//
// Memory. Read keeps no reference to the files' bytes: every column is
// new memory from Alloc, written whole before Read returns (so Alloc may
// hand out memory that is not zeroed). A span's string buffer, at most
// its column's share of the file, is the only other memory it holds.
// Write formats a chunk of rows per worker in two rounds of buffers, so
// it holds about 2 × workers × 16384 rows of text, not the file.
package csvio

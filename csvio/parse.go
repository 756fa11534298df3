package csvio

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// parser parses one span's rows into the output columns (or, counting,
// only counts them), or one file's column-names line.
type parser struct {
	delim byte
	file  string
	names []string // the file's columns, for messages
	outOf []int    // the output column of each field, or -1
	outs  []output
	s     *span
	count bool // pass 1: count the records of a quoted span, store nothing
	check bool // validate each string's UTF-8 alone (finds the bad one)
	// suspect: a string began with a UTF-8 continuation byte, so its
	// span's bytes being valid UTF-8 does not make each string valid.
	suspect bool
	line    int // the line of the field being stored, for messages
	row     int // the output row being stored
	scratch []byte
}

// parser returns a parser of span s.
func (r *reader) parser(s *span, count bool) *parser {
	p := &parser{delim: r.delim, file: r.files[s.file].Name, names: r.heads[s.file].names,
		outOf: r.outOf[s.file], outs: r.outs, s: s, count: count}
	if !count && s.strs == nil {
		s.strs = make([][]byte, len(r.outs))
		// About a column's share of the span: a string column of short
		// values then seldom grows its buffer.
		guess := (s.hi-s.lo)/max(len(p.outOf), 1) + 16
		for k := range r.outs {
			if r.outs[k].kind == kindStr {
				s.strs[k] = make([]byte, 0, guess)
			}
		}
	}
	return p
}

// errAt is an ErrData error at a line of the parser's file.
func (p *parser) errAt(line int, format string, args ...any) *Error {
	return errorf(ErrData, "file %q line %d: %s", p.file, line, fmt.Sprintf(format, args...))
}

// errCol is an ErrData error at a line and column of the parser's file.
func (p *parser) errCol(line int, col, format string, args ...any) *Error {
	return errorf(ErrData, "file %q line %d column %q: %s", p.file, line, col, fmt.Sprintf(format, args...))
}

// tooMany is the error for a row with a field past the file's columns.
func (p *parser) tooMany() error {
	return p.errAt(p.line, "more fields than the file's %d columns (%s); a field that holds the delimiter %q must be quoted",
		len(p.names), nameList(p.names), p.delim)
}

// tooFew is the error for a row of n fields, fewer than the columns.
func (p *parser) tooFew(n int) error {
	return p.errCol(p.line, p.names[n], "missing: the row has %d fields but the file has %d columns (%s)",
		n, len(p.names), nameList(p.names))
}

// span parses span s (its bytes d) into the columns; its strings go to
// s.strs, their offsets (into s.strs) to the columns' offsets.
func (p *parser) span(d []byte) error {
	parse := p.plain
	if p.s.quoted {
		parse = p.quoted
	}
	err := parse(d)
	// The strings stored (all, or those before a fault) are checked
	// together, which is cheap; a bad one comes before the fault, if any.
	bad := p.suspect
	for k := range p.outs {
		bad = bad || (p.outs[k].kind == kindStr && !utf8.Valid(p.s.strs[k]))
	}
	if bad {
		// Parse again checking every string: slower, and only for a span
		// that holds a bad one, which it then names.
		for k := range p.s.strs {
			p.s.strs[k] = p.s.strs[k][:0]
		}
		p.check = true
		if err := parse(d); err != nil {
			return err
		}
		panic("csvio: a span's strings are not valid UTF-8 but each one is")
	}
	if err != nil {
		return err
	}
	if p.row-p.s.row0 != p.s.rows {
		panic(fmt.Sprintf("csvio: a span of file %q parsed %d rows but counted %d", p.file, p.row-p.s.row0, p.s.rows))
	}
	return nil
}

// plain parses a span of a file without a quote: a row is a line.
func (p *parser) plain(d []byte) error {
	ncols := len(p.outOf)
	delim := p.delim
	p.line, p.row = p.s.line0, p.s.row0
	for pos := 0; pos < len(d); {
		ln := d[pos:]
		if nl := bytes.IndexByte(ln, '\n'); nl >= 0 {
			ln, pos = ln[:nl], pos+nl+1
		} else {
			pos = len(d)
		}
		if n := len(ln); n > 0 && ln[n-1] == '\r' {
			ln = ln[:n-1]
		}
		j := 0
		for {
			f := ln
			k := bytes.IndexByte(ln, delim)
			if k >= 0 {
				f = ln[:k]
			}
			if j == ncols {
				return p.tooMany()
			}
			if o := p.outOf[j]; o >= 0 {
				if err := p.store(o, f); err != nil {
					return err
				}
			}
			j++
			if k < 0 {
				break
			}
			ln = ln[k+1:]
		}
		if j < ncols {
			return p.tooFew(j)
		}
		p.row++
		p.line++
	}
	return nil
}

// quoted parses (or counts the records of) a span that may hold quoted
// fields (RFC 4180), which may hold the delimiter and line ends.
func (p *parser) quoted(d []byte) error {
	ncols := len(p.outOf)
	p.row = p.s.row0
	line := p.s.line0
	for pos := 0; pos < len(d); {
		for j := 0; ; j++ {
			p.line = line
			f, next, last, err := p.nextField(d, pos, &line)
			if err != nil {
				return err
			}
			pos = next
			if !p.count {
				if j == ncols {
					return p.tooMany()
				}
				if o := p.outOf[j]; o >= 0 {
					if err := p.store(o, f); err != nil {
						return err
					}
				}
			}
			if last {
				if !p.count && j+1 < ncols {
					return p.tooFew(j + 1)
				}
				break
			}
		}
		p.row++
	}
	if p.count {
		p.s.rows = p.row - p.s.row0
	}
	return nil
}

// record parses the record at pos (the column-names line), calling f on
// each field, and returns where the next record starts.
func (p *parser) record(d []byte, pos int, line *int, f func([]byte) error) (int, error) {
	for {
		start := *line
		b, next, last, err := p.nextField(d, pos, line)
		if err != nil {
			return 0, err
		}
		p.line = start
		if err := f(b); err != nil {
			return 0, err
		}
		pos = next
		if last {
			return pos, nil
		}
	}
}

// nextField reads the field at pos (pos <= len(d)): its bytes (a quoted
// one's without its quotes and with "" made ", in p.scratch), where the
// next field starts, and whether it ended its record (a line end or the
// end of d). *line counts the line ends it passes. A quote that does not
// start a field is a byte like another, as Python's csv reads it.
func (p *parser) nextField(d []byte, pos int, line *int) (f []byte, next int, last bool, err error) {
	delim := p.delim
	if pos < len(d) && d[pos] == '"' {
		start := pos + 1
		i := start
		escaped := false
		for {
			q := bytes.IndexByte(d[i:], '"')
			if q < 0 {
				return nil, 0, false, p.errAt(*line, "a quoted field has no closing quote")
			}
			i += q
			if i+1 < len(d) && d[i+1] == '"' {
				escaped = true
				i += 2
				continue
			}
			break
		}
		f = d[start:i]
		*line += bytes.Count(f, []byte{'\n'})
		pos = i + 1
		if escaped && !p.count {
			p.scratch = p.scratch[:0]
			for {
				q := bytes.IndexByte(f, '"')
				if q < 0 {
					break
				}
				p.scratch = append(p.scratch, f[:q+1]...)
				f = f[q+2:]
			}
			f = append(p.scratch, f...)
			p.scratch = f
		}
		if pos < len(d) && d[pos] == '\r' && (pos+1 == len(d) || d[pos+1] == '\n') {
			pos++
		}
		if pos < len(d) && d[pos] != delim && d[pos] != '\n' {
			return nil, 0, false, p.errAt(*line, "%s follows a quoted field's closing quote; a quote inside a quoted field is written \"\"",
				quote(d[pos:min(pos+1, len(d))]))
		}
	} else {
		e := pos
		for e < len(d) && d[e] != delim && d[e] != '\n' {
			e++
		}
		f = d[pos:e]
		if e == len(d) || d[e] == '\n' {
			if n := len(f); n > 0 && f[n-1] == '\r' {
				f = f[:n-1]
			}
		}
		pos = e
	}
	if pos >= len(d) {
		return f, pos, true, nil
	}
	if d[pos] == delim {
		return f, pos + 1, false, nil
	}
	*line++ // d[pos] == '\n'
	return f, pos + 1, true, nil
}

// store parses field f into output column k at p.row.
func (p *parser) store(k int, f []byte) error {
	o := &p.outs[k]
	switch o.kind {
	case kindStr:
		if p.check && !utf8.Valid(f) {
			return p.errCol(p.line, o.name, "the string %s is not valid UTF-8", quote(f))
		}
		if len(f) > 0 && f[0]&0xC0 == 0x80 {
			p.suspect = true
		}
		b := append(p.s.strs[k], f...)
		p.s.strs[k] = b
		o.off[p.row+1] = int64(len(b))
		return nil
	case kindInt64:
		v, ok := parseInt64(trimBlanks(f))
		if !ok {
			return p.badValue(o, f)
		}
		o.i64[p.row] = v
	case kindFloat64:
		v, ok := parseFloat64(trimBlanks(f))
		if !ok {
			return p.badValue(o, f)
		}
		o.f64[p.row] = v
	case kindUint64:
		v, ok := parseUint64(trimBlanks(f))
		if !ok {
			return p.badValue(o, f)
		}
		o.u64[p.row] = v
	case kindBool:
		v, ok := parseBool(trimBlanks(f))
		if !ok {
			return p.badValue(o, f)
		}
		o.b[p.row] = v
	}
	return nil
}

// badValue is the error for field f, which o's type does not read.
func (p *parser) badValue(o *output, f []byte) error {
	if len(trimBlanks(f)) == 0 {
		return p.errCol(p.line, o.name, "empty value: a %v column has no missing value (read it as float64, with DTypes, to get NaN)", o.kind)
	}
	want := map[kind]string{
		kindInt64:   "an int64 (a decimal integer from -9223372036854775808 to 9223372036854775807)",
		kindUint64:  "a uint64 (a decimal integer from 0 to 18446744073709551615)",
		kindFloat64: "a float64 (a decimal number, nan, inf or -inf; empty for NaN)",
		kindBool:    "a bool (True, False, true, false, 1 or 0)",
	}[o.kind]
	return p.errCol(p.line, o.name, "%s is not %s", quote(f), want)
}

// trimBlanks drops the spaces and tabs around a number, as Python's int()
// and float() do.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// unsafeString is b as a string without a copy, for strconv only: the
// string lives no longer than the call (strconv copies the text into the
// errors it returns), and the file's bytes do not change during Read.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// parseInt64 reads a decimal integer with an optional sign (Python's
// int() of the text, without underscores).
func parseInt64(b []byte) (int64, bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	if len(b)-i > 18 || len(b) == i { // may overflow (or is empty): strconv decides
		v, err := strconv.ParseInt(unsafeString(b), 10, 64)
		return v, err == nil
	}
	var v uint64
	if len(b)-i >= 8 {
		w, ok := eightDigits(b[i:])
		if !ok {
			return 0, false
		}
		v, i = w, i+8
	}
	for _, c := range b[i:] {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + uint64(c)
	}
	if b[0] == '-' {
		return -int64(v), true
	}
	return int64(v), true
}

// parseUint64 reads a decimal integer with an optional '+'.
func parseUint64(b []byte) (uint64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) > 19 || len(b) == 0 {
		v, err := strconv.ParseUint(unsafeString(b), 10, 64)
		return v, err == nil
	}
	var v uint64
	for _, c := range b {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + uint64(c)
	}
	return v, true
}

// parseFloat64 reads a float as Python's float() does: what
// strconv.ParseFloat reads but hexadecimal, with "nan", "inf", "infinity"
// in any case and signed; a value past the largest float is ±Inf. Empty
// is NaN, as pandas writes a missing value.
func parseFloat64(b []byte) (float64, bool) {
	if len(b) == 0 {
		return math.NaN(), true
	}
	i := 0
	if b[0] == '-' || b[0] == '+' {
		i = 1
	}
	if len(b) > i+1 && b[i] == '0' && b[i+1]|0x20 == 'x' {
		return 0, false
	}
	if v, ok := parseDecimal(b); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(unsafeString(b), 64)
	if err == nil {
		return v, true
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return v, true
	}
	if len(b) == i+3 && bytes.EqualFold(b[i:], []byte("nan")) { // "-nan", "+nan"
		return math.NaN(), true
	}
	return 0, false
}

// parseBool reads True/False as Python writes them, true/false and 1/0.
func parseBool(b []byte) (bool, bool) {
	switch string(b) {
	case "True", "true", "TRUE", "1":
		return true, true
	case "False", "false", "FALSE", "0":
		return false, true
	}
	return false, false
}

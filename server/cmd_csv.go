package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/arktos-dev/arktos/csvio"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/strs"
	"github.com/arktos-dev/arktos/transfer"
)

// CSV files (csvio) in Arkouda's format: read_csv parses files of the data
// directory on the server's workers into arrays and string arrays, to_csv
// writes arrays as one file. Paths are confined to --data-dir and writes
// are atomic, as Parquet's are.

// csvErr maps a csvio error to the registry's codes (as ioErr does
// arrowio's): bad arguments and bad files are the client's to fix.
func csvErr(err error) error {
	var ce *csvio.Error
	if !errors.As(err, &ce) {
		return ioErr(err)
	}
	code := map[csvio.ErrKind]transfer.Code{csvio.ErrValue: transfer.ArgumentValue, csvio.ErrData: transfer.ArgumentValue,
		csvio.ErrIO: transfer.Internal, csvio.ErrMemory: transfer.OutOfMemory}[ce.Kind]
	return transfer.Errorf(code, "%s", ce.Msg)
}

// cmdReadCSV reads "paths" (globs; one after another) into columns:
// numbers and bools as "arrays", text as "strings" ({column, offsets,
// bytes}, checked), as read_parquet answers with strings "strings".
func (s *Server) cmdReadCSV(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	paths := pathsArg(a)
	columns := optStringList(a, "columns")
	delim := a.OptString("delim", ",")
	typedCols, types := optStringList(a, "dtype_columns"), optStringList(a, "dtypes")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(delim) != 1 || delim == "\n" || delim == "\r" || delim == `"` {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_csv: the column delimiter must be one byte other than a quote or a line end, got %q", delim)
	}
	if len(typedCols) != len(types) {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_csv: dtype_columns has %d entries and dtypes %d; give one dtype per column", len(typedCols), len(types))
	}
	root, abs, err := s.dataRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	names, err := expandPaths(root, abs, paths)
	if err != nil {
		return nil, err
	}
	// The files are read whole, then parsed: their bytes are held while
	// the columns are made (reserved), and the columns at most 8 bytes a
	// field and the files' text again (reserved once the rows are known).
	files := make([]csvio.File, len(names))
	var held int64
	defer func() { s.store.release(held) }()
	for i, name := range names {
		fh, err := openFile(root, name, name, abs)
		if err != nil {
			return nil, err
		}
		st, err := fh.Stat()
		if err == nil {
			if err = s.store.reserve(st.Size(), fmt.Sprintf("read_csv: %s's %d bytes, held while parsed", name, st.Size())); err == nil {
				held += st.Size()
				var buf bytes.Buffer
				buf.Grow(int(st.Size()))
				_, err = io.Copy(&buf, fh)
				files[i] = csvio.File{Name: name, Data: buf.Bytes()}
			}
		}
		fh.Close()
		if err != nil {
			return nil, fileOrIOErr(name, abs, err)
		}
	}
	var rows, fields, text int64
	for _, f := range files {
		lines := int64(bytes.Count(f.Data, []byte{'\n'})) + 1
		rows += lines
		if nl := bytes.IndexByte(f.Data, '\n'); nl >= 0 || len(f.Data) > 0 {
			first := f.Data
			if nl >= 0 {
				first = f.Data[:nl]
			}
			fields = max(fields, int64(bytes.Count(first, []byte(delim)))+1)
		}
		text += int64(len(f.Data))
	}
	out, err := s.store.mulWithin(rows, 8*(fields+1), "read_csv's columns (8 bytes a field)")
	if err != nil {
		return nil, err
	}
	if out, err = s.store.addWithin(out, text, "read_csv's columns (8 bytes a field, and the text)"); err != nil {
		return nil, err
	}
	if err := s.store.reserve(out, "read_csv's columns (8 bytes a field, and the text)"); err != nil {
		return nil, err
	}
	held += out
	// Read's string columns are views of arrays its Alloc made: found again
	// by their first byte's address, they are stored without a copy.
	made := map[unsafe.Pointer]*pdarray.Array{}
	var mu sync.Mutex // (Alloc may be called from the workers)
	opts := csvio.ReadOptions{Delim: delim[0], Columns: columns, Workers: s.cfg.Workers,
		Alloc: func(d pdarray.DType, n int) (*pdarray.Array, error) {
			a, err := s.store.allocMayBeDirty(d, n)
			if err == nil && len(a.Bytes()) > 0 {
				mu.Lock()
				made[unsafe.Pointer(unsafe.SliceData(a.Bytes()))] = a
				mu.Unlock()
			}
			return a, err
		}}
	// arrayOf is the array under view v (its whole buffer), or a copy.
	arrayOf := func(d pdarray.DType, v []byte) (*pdarray.Array, error) {
		if a := made[unsafe.Pointer(unsafe.SliceData(v))]; a != nil && len(a.Bytes()) == len(v) && len(v) > 0 {
			return a, nil
		}
		a, err := s.store.allocMayBeDirty(d, len(v)/d.Size())
		if err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		copy(a.Bytes(), v)
		return a, nil
	}
	if len(typedCols) > 0 {
		opts.DTypes = map[string]string{}
		for i, c := range typedCols {
			opts.DTypes[c] = types[i]
		}
	}
	cols, err := csvio.Read(files, opts)
	if err != nil {
		return nil, csvErr(err)
	}
	// The text into stored arrays (checked: the cache then knows them).
	type strCol struct {
		name      string
		off, data *pdarray.Array
		ascii     bool
	}
	var texts []strCol
	for _, c := range cols {
		if c.Array != nil {
			continue
		}
		off, err := arrayOf(pdarray.Int64, pdarray.AsBytes(c.Offsets))
		if err != nil {
			return nil, err
		}
		data, err := arrayOf(pdarray.Uint8, c.Bytes)
		if err != nil {
			return nil, err
		}
		v, err := strs.View(ops.PlainEnv(s.cfg.Workers), off, data)
		if err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "read_csv: column '%s': %v", c.Name, opErr(err))
		}
		texts = append(texts, strCol{c.Name, off, data, v.ASCII})
	}
	// Stored only now, all or none: the arrays' bytes come out of the
	// reservation.
	result := map[string]any{"files": names, "seconds": time.Since(start).Seconds()}
	arrays, stringsOut := []any{}, []any{}
	nrows := 0
	for _, c := range cols {
		if c.Array == nil {
			continue
		}
		name, _ := s.store.put("", c.Array)
		held -= int64(c.Array.NBytes())
		info := arrayResult(name, c.Array)
		info["column"] = c.Name
		arrays = append(arrays, info)
		nrows = c.Array.Len()
	}
	for _, t := range texts {
		offName, _ := s.store.put("", t.off)
		dataName, _ := s.store.put("", t.data)
		held -= int64(t.off.NBytes() + t.data.NBytes())
		s.strs.remember([2]string{offName, dataName}, t.off, t.data, t.ascii, s.store)
		stringsOut = append(stringsOut, map[string]any{"column": t.name, "offsets": arrayResult(offName, t.off),
			"bytes": arrayResult(dataName, t.data)})
		nrows = t.off.Len() - 1
	}
	result["arrays"], result["strings"], result["rows"] = arrays, stringsOut, nrows
	if held < 0 { // (the reservation's bound covers what was stored)
		held = 0
	}
	return &response{result: result}, nil
}

// cmdToCSV writes "names" (arrays; for a string column its offsets, with
// its bytes in "bytes", "" for the others) as columns "columns" of one
// CSV file, with Arkouda's typing header unless "header" is false.
func (s *Server) cmdToCSV(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	p := a.String("path")
	names := a.StringList("names")
	columns := optStringList(a, "columns")
	bytesNames := optStringList(a, "bytes")
	delim := a.OptString("delim", ",")
	header := a.OptBool("header", true)
	overwrite := a.OptBool("overwrite", true)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if columns == nil {
		columns = names
	}
	if bytesNames == nil {
		bytesNames = make([]string, len(names))
	}
	if len(columns) != len(names) || len(bytesNames) != len(names) || len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "to_csv: give one column name and one bytes entry (\"\" for a column that is not text) per array; got %d arrays, %d names, %d bytes", len(names), len(columns), len(bytesNames))
	}
	if len(delim) != 1 || delim == "\n" || delim == "\r" || delim == `"` {
		return nil, transfer.Errorf(transfer.ArgumentValue, "to_csv: the column delimiter must be one byte other than a quote or a line end, got %q", delim)
	}
	o, env := s.opEnv(r.stop, "to_csv")
	defer o.done()
	cols := make([]csvio.Column, len(names))
	rows := -1
	for i, n := range names {
		if bytesNames[i] != "" {
			x, rel, err := s.acquireStrs(env, "names", [2]string{n, bytesNames[i]})
			if err != nil {
				return nil, err
			}
			defer rel()
			cols[i] = csvio.Column{Name: columns[i], Offsets: x.Off, Bytes: x.Data}
			if rows >= 0 && x.Len() != rows {
				return nil, transfer.Errorf(transfer.ArgumentValue, "to_csv: column '%s' has %d rows, the others %d", columns[i], x.Len(), rows)
			}
			rows = x.Len()
			continue
		}
		arr, rel, err := s.store.acquire(n)
		if err != nil {
			return nil, err
		}
		defer rel()
		if rows >= 0 && arr.Len() != rows {
			return nil, transfer.Errorf(transfer.ArgumentValue, "to_csv: column '%s' has %d rows, the others %d", columns[i], arr.Len(), rows)
		}
		rows = arr.Len()
		cols[i] = csvio.Column{Name: columns[i], Array: arr}
	}
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if !overwrite {
		if _, err := root.Stat(rel); err == nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "to_csv: %q exists in the data directory; pass overwrite=True to replace it", p)
		}
	}
	n, err := writeAtomic(root, rel, func(w io.Writer) error {
		return csvio.Write(w, cols, csvio.WriteOptions{Delim: delim[0], Header: header, Workers: s.cfg.Workers})
	})
	if err != nil {
		var ce *csvio.Error
		if errors.As(err, &ce) {
			return nil, csvErr(err)
		}
		return nil, fileOrIOErr(p, abs, err)
	}
	return &response{result: map[string]any{"path": rel, "file_bytes": n, "rows": rows,
		"seconds": time.Since(start).Seconds()}}, nil
}

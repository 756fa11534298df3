package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/arktos-dev/arktos/hdf5io"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/strs"
	"github.com/arktos-dev/arktos/transfer"
)

// HDF5 files (hdf5io) in Arkouda's layout: read_hdf reads datasets of one
// or more files (a file set's parts one after another) into arrays and
// string arrays, to_hdf writes arrays and strings as one file (a locale's
// part), ls_hdf lists a file's objects. Paths are confined to --data-dir;
// writes are atomic (an append copies the file, adds to the copy and
// renames it over the original).

// h5Err maps an hdf5io error: a file the library cannot read is the
// client's to fix (or not an HDF5 file); a failed write is the server's.
func h5Err(err error, writing bool) error {
	var te *transfer.Error
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, hdf5io.ErrNotHDF5) {
		return transfer.Errorf(transfer.ArgumentValue, "%v; name HDF5 files (ak.read_parquet, ak.read_csv and ak.read_arrow read the others)", err)
	}
	var he *hdf5io.Error
	if errors.As(err, &he) && !writing {
		return transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	return transfer.Errorf(transfer.Internal, "%v", err)
}

// h5Files is a set of files opened for reading.
type h5Files struct {
	names []string
	fhs   []*os.File
	hs    []*hdf5io.File
}

func (fs *h5Files) close() {
	for i := range fs.hs {
		fs.hs[i].Close()
		fs.fhs[i].Close()
	}
}

func (s *Server) openH5(paths []string) (*h5Files, error) {
	root, abs, err := s.dataRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	names, err := expandPaths(root, abs, paths)
	if err != nil {
		return nil, err
	}
	fs := &h5Files{names: names}
	for _, name := range names {
		fh, err := openFile(root, name, name, abs)
		if err != nil {
			fs.close()
			return nil, err
		}
		h, err := hdf5io.Open(fh, name)
		if err != nil {
			fh.Close()
			fs.close()
			return nil, h5Err(err, false)
		}
		fs.fhs, fs.hs = append(fs.fhs, fh), append(fs.hs, h)
	}
	return fs, nil
}

// h5Column is one dataset of a read: its object in every file.
type h5Column struct {
	name string
	objs []hdf5io.Object
}

// cmdReadHDF reads "datasets" (all of the first file's objects when not
// given) of "paths" (globs, sorted; one after another): pdarrays as
// "arrays", Strings as "strings" ({column, offsets, bytes}), as read_csv
// answers. A dataset must be in every file with one type.
func (s *Server) cmdReadHDF(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	paths := pathsArg(a)
	datasets := optStringList(a, "datasets")
	calcOffsets := a.OptBool("calc_string_offsets", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	fs, err := s.openH5(paths)
	if err != nil {
		return nil, err
	}
	defer fs.close()
	first, err := fs.hs[0].Objects()
	if err != nil {
		return nil, h5Err(err, false)
	}
	held := make([]string, len(first))
	for i, o := range first {
		held[i] = o.Name
	}
	if datasets == nil {
		datasets = held
		if len(datasets) == 0 {
			return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: %s holds no datasets", fs.names[0])
		}
	}
	cols := make([]h5Column, len(datasets))
	for i, d := range datasets {
		cols[i].name = d
		for fi, h := range fs.hs {
			if !h.Exists("/" + d) {
				return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: dataset %q is not in %s (%s holds %s); every file must hold every dataset read",
					d, fs.names[fi], fs.names[0], quoteList(held))
			}
			o, err := h.Object(d)
			if err != nil {
				return nil, h5Err(err, false)
			}
			if o.Err != nil {
				return nil, h5Err(o.Err, false)
			}
			if fi > 0 && (o.Type != cols[i].objs[0].Type || o.DType != cols[i].objs[0].DType) {
				return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: dataset %q is %s in %s but %s in %s; the files of one read must agree",
					d, describeObj(cols[i].objs[0]), fs.names[0], describeObj(o), fs.names[fi])
			}
			cols[i].objs = append(cols[i].objs, o)
		}
		switch t := cols[i].objs[0].Type; t {
		case hdf5io.ObjPdarray, hdf5io.ObjDatetime, hdf5io.ObjTimedelta, hdf5io.ObjIPv4, hdf5io.ObjStrings, hdf5io.ObjCategorical:
		default:
			return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: dataset %q of %s is a %v (ObjType %d); Arktos reads pdarrays, Strings and Categoricals from HDF5 so far: pass datasets= without it",
				d, fs.names[0], t, int64(t))
		}
	}
	// Everything is read before anything is stored: reserved up front
	// (the outputs, and the strings' Arkouda form while converted).
	var reserved int64
	defer func() { s.store.release(reserved) }()
	reserve := func(n int64, what string) error {
		if err := s.store.reserve(n, what); err != nil {
			return err
		}
		reserved += n
		return nil
	}
	type strOut struct {
		name      string
		off, data *pdarray.Array
		ascii     bool
	}
	var arrays []*pdarray.Array
	var arrayCols []string
	var texts []strOut
	allFast := true
	type catOut struct {
		name  string
		codes *pdarray.Array
		cats  *h5Strings
		na    int64
	}
	var cats []catOut
	for _, c := range cols {
		o0 := c.objs[0]
		switch o0.Type {
		case hdf5io.ObjStrings:
			t, err := s.readH5Strings(fs, c.name, calcOffsets, reserve)
			if err != nil {
				return nil, err
			}
			texts = append(texts, strOut{c.name, t.off, t.data, t.ascii})
		case hdf5io.ObjCategorical:
			ct, err := s.readH5Categorical(fs, c.name, reserve)
			if err != nil {
				return nil, err
			}
			cats = append(cats, catOut{c.name, ct.codes, ct.cats, ct.na})
		default:
			arr, fast, err := s.readH5Array(fs, "/"+c.name, o0.DType, reserve)
			if err != nil {
				return nil, err
			}
			allFast = allFast && fast
			arrays, arrayCols = append(arrays, arr), append(arrayCols, c.name)
		}
	}
	// Stored only now, all or none: the arrays' bytes come out of the
	// reservation.
	arraysOut, stringsOut := []any{}, []any{}
	for i, arr := range arrays {
		name, _ := s.store.put("", arr)
		reserved -= int64(arr.NBytes())
		info := arrayResult(name, arr)
		info["column"] = arrayCols[i]
		arraysOut = append(arraysOut, info)
	}
	for _, t := range texts {
		offName, _ := s.store.put("", t.off)
		dataName, _ := s.store.put("", t.data)
		reserved -= int64(t.off.NBytes() + t.data.NBytes())
		s.strs.remember([2]string{offName, dataName}, t.off, t.data, t.ascii, s.store)
		stringsOut = append(stringsOut, map[string]any{"column": t.name, "offsets": arrayResult(offName, t.off),
			"bytes": arrayResult(dataName, t.data)})
	}
	catsOut := []any{}
	for _, c := range cats {
		codesName, _ := s.store.put("", c.codes)
		offName, _ := s.store.put("", c.cats.off)
		dataName, _ := s.store.put("", c.cats.data)
		reserved -= int64(c.codes.NBytes() + c.cats.off.NBytes() + c.cats.data.NBytes())
		s.strs.remember([2]string{offName, dataName}, c.cats.off, c.cats.data, c.cats.ascii, s.store)
		catsOut = append(catsOut, map[string]any{"column": c.name, "codes": arrayResult(codesName, c.codes),
			"categories": map[string]any{"offsets": arrayResult(offName, c.cats.off), "bytes": arrayResult(dataName, c.cats.data)},
			"na_code":    c.na})
	}
	return &response{result: map[string]any{"arrays": arraysOut, "strings": stringsOut, "categoricals": catsOut, "columns": datasets,
		"files": fs.names, "fast": allFast, "seconds": time.Since(start).Seconds()}}, nil
}

// readH5Array reads dataset path of every file, one after another, as one
// array of dtype d (bools: any nonzero byte is True, as Arkouda reads
// them), and says whether every part took the fast path.
func (s *Server) readH5Array(fs *h5Files, path string, d pdarray.DType, reserve func(int64, string) error) (*pdarray.Array, bool, error) {
	what := fmt.Sprintf("read_hdf's %q", strings.TrimPrefix(path, "/"))
	total := 0
	dss := make([]*hdf5io.Dataset, len(fs.hs))
	for fi, h := range fs.hs {
		ds, err := h.Stat(path)
		if err != nil {
			return nil, false, h5Err(err, false)
		}
		if ds.DType.Size() != d.Size() {
			return nil, false, transfer.Errorf(transfer.ArgumentValue, "read_hdf: %s:%s is %v but %v in %s; the files of one read must agree", fs.names[fi], path, ds.DType, d, fs.names[0])
		}
		dss[fi] = ds
		total += ds.Len
	}
	nb, err := s.store.mulWithin(int64(total), int64(d.Size()), what)
	if err != nil {
		return nil, false, err
	}
	if err := reserve(nb, fmt.Sprintf("%s (%d elements)", what, total)); err != nil {
		return nil, false, err
	}
	arr, err := s.store.allocMayBeDirty(d, total)
	if err != nil {
		return nil, false, transfer.Errorf(transfer.ArgumentValue, "%s: %v", what, err)
	}
	buf, at, allFast := arr.Bytes(), 0, true
	for fi, h := range fs.hs {
		n := dss[fi].Len * d.Size()
		fast, err := h.Read(dss[fi], buf[at:at+n], s.cfg.Workers)
		if err != nil {
			return nil, false, h5Err(err, false)
		}
		allFast = allFast && fast
		at += n
	}
	if d == pdarray.Bool && pdarray.ValidateBools(buf) >= 0 {
		for i, b := range buf {
			if b != 0 {
				buf[i] = 1
			}
		}
	}
	return arr, allFast, nil
}

type h5Categorical struct {
	codes *pdarray.Array
	cats  *h5Strings
	na    int64
}

// readH5Categorical reads an Arkouda Categorical (a group of int64
// "codes", Strings "categories" and "NA_Codes", the N/A category's code)
// of every file: the parts of a file set concatenate (its categories are
// one distributed Strings, its codes index them). Codes are checked to
// index the categories.
func (s *Server) readH5Categorical(fs *h5Files, name string, reserve func(int64, string) error) (*h5Categorical, error) {
	for fi, h := range fs.hs {
		for _, part := range []string{"codes", "categories", "NA_Codes"} {
			if !h.Exists("/" + name + "/" + part) {
				return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: the Categorical %q of %s has no %q; Arkouda's Categoricals hold codes, categories and NA_Codes", name, fs.names[fi], part)
			}
		}
	}
	ds, err := fs.hs[0].Stat("/" + name + "/codes")
	if err != nil {
		return nil, h5Err(err, false)
	}
	if ds.DType != pdarray.Int64 && ds.DType != pdarray.Uint64 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: %s:%s/codes is %v; a Categorical's codes are int64", fs.names[0], name, ds.DType)
	}
	codes, _, err := s.readH5Array(fs, "/"+name+"/codes", pdarray.Int64, reserve)
	if err != nil {
		return nil, err
	}
	cats, err := s.readH5Strings(fs, name+"/categories", false, reserve)
	if err != nil {
		return nil, err
	}
	ncat := int64(cats.off.Len() - 1)
	for i, c := range pdarray.View[int64](codes) {
		if c < 0 || c >= ncat {
			return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: the Categorical %q's code %d (row %d) is not one of its %d categories' (a damaged file?)", name, c, i, ncat)
		}
	}
	nas, _, err := s.readH5Array(fs, "/"+name+"/NA_Codes", pdarray.Int64, reserve)
	if err != nil {
		return nil, err
	}
	na := int64(-1)
	if v := pdarray.View[int64](nas); len(v) > 0 && v[0] >= 0 && v[0] < ncat {
		na = v[0]
	}
	return &h5Categorical{codes, cats, na}, nil
}

type h5Strings struct {
	off, data *pdarray.Array
	ascii     bool
}

// readH5Strings reads the Strings group name of every file into Arrow's
// layout: each file's values and segments into scratch, then without the
// NULs into the output (checked as UTF-8 once, as uploads are).
func (s *Server) readH5Strings(fs *h5Files, name string, calcOffsets bool, reserve func(int64, string) error) (*h5Strings, error) {
	what := fmt.Sprintf("read_hdf's strings %q", name)
	parts := make([]hdf5io.StringsPart, len(fs.hs))
	names := make([]string, len(fs.hs))
	var scratch, values, nstr int64
	for fi, h := range fs.hs {
		names[fi] = fmt.Sprintf("read_hdf: %s:%s", fs.names[fi], name)
		vds, err := h.Stat("/" + name + "/values")
		if err != nil {
			return nil, h5Err(err, false)
		}
		if vds.DType != pdarray.Uint8 || vds.Enum {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%s/values is %v; Strings' values are unsigned bytes (uint8)", names[fi], vds.DType)
		}
		var sds *hdf5io.Dataset
		if !calcOffsets && h.Exists("/"+name+"/segments") {
			if sds, err = h.Stat("/" + name + "/segments"); err != nil {
				return nil, h5Err(err, false)
			}
			if sds.DType != pdarray.Int64 && sds.DType != pdarray.Uint64 {
				return nil, transfer.Errorf(transfer.ArgumentValue, "%s/segments is %v; Strings' segments are 8-byte integers (int64)", names[fi], sds.DType)
			}
		}
		if scratch, err = s.store.addWithin(scratch, int64(vds.Len), what); err != nil {
			return nil, err
		}
		values += int64(vds.Len)
		if err := reserve(int64(vds.Len), what+" (the file's bytes, while converted)"); err != nil {
			return nil, err
		}
		parts[fi].Values = pdarray.UninitBytes(vds.Len)
		if _, err := h.Read(vds, parts[fi].Values, s.cfg.Workers); err != nil {
			return nil, h5Err(err, false)
		}
		if sds != nil {
			if err := reserve(int64(sds.Len)*8, what+" (the file's segments, while converted)"); err != nil {
				return nil, err
			}
			parts[fi].Segments = make([]int64, sds.Len)
			if _, err := h.Read(sds, pdarray.AsBytes(parts[fi].Segments), s.cfg.Workers); err != nil {
				return nil, h5Err(err, false)
			}
		}
		nstr += int64(parts[fi].CountStrings())
	}
	if nstr > values {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: %q has %d segments but %d bytes of values; each string ends with a NUL byte", name, nstr, values)
	}
	offBytes, err := s.store.mulWithin(nstr+1, 8, what)
	if err != nil {
		return nil, err
	}
	if err := reserve(offBytes+values-nstr, what); err != nil {
		return nil, err
	}
	off, err := s.store.allocMayBeDirty(pdarray.Int64, int(nstr+1))
	if err != nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "%s: %v", what, err)
	}
	data, err := s.store.allocMayBeDirty(pdarray.Uint8, int(values-nstr))
	if err != nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "%s: %v", what, err)
	}
	if err := hdf5io.Unterminate(parts, names, pdarray.View[int64](off), data.Bytes(), s.cfg.Workers); err != nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	v, err := strs.View(ops.PlainEnv(s.cfg.Workers), off, data)
	if err != nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_hdf: strings %q: %v", name, opErr(err))
	}
	return &h5Strings{off, data, v.ASCII}, nil
}

func describeObj(o hdf5io.Object) string {
	if o.Type == hdf5io.ObjStrings {
		return "Strings"
	}
	if o.Type == hdf5io.ObjPdarray {
		return "a " + o.DType.String() + " pdarray"
	}
	return fmt.Sprintf("a %v of %v", o.Type, o.DType)
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "nothing"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// cmdLsHDF lists the objects of "path" (the first file a glob matches, in
// sorted order): name, Arkouda type, dtype and length of each.
func (s *Server) cmdLsHDF(r *request) (*response, error) {
	a := r.args
	p := a.String("path")
	if err := a.Done(); err != nil {
		return nil, err
	}
	fs, err := s.openFirstH5(p)
	if err != nil {
		return nil, err
	}
	defer fs.close()
	objs, err := fs.hs[0].Objects()
	if err != nil {
		return nil, h5Err(err, false)
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		e := map[string]any{"name": o.Name, "objtype": o.Type.String(), "size": o.Len}
		if o.Err != nil {
			e["error"] = o.Err.Error()
		}
		if o.Type != hdf5io.ObjStrings && o.DType != pdarray.Invalid {
			e["dtype"] = o.DType.String()
		}
		out[i] = e
	}
	format := int64(-1)
	if at, err := fs.hs[0].Attrs("/"); err == nil {
		if v, ok := at["File_Format"].(int64); ok {
			format = v
		}
	}
	return &response{result: map[string]any{"file": fs.names[0], "datasets": out, "file_format": format}}, nil
}

// openFirstH5 opens the first file (sorted) that p names.
func (s *Server) openFirstH5(p string) (*h5Files, error) {
	root, abs, err := s.dataRoot()
	if err != nil {
		return nil, err
	}
	names, err := expandPaths(root, abs, []string{p})
	root.Close()
	if err != nil {
		return nil, err
	}
	return s.openH5(names[:1])
}

// cmdToHDF writes "names" (arrays; for a Strings column its offsets, with
// its bytes in "bytes", "" for the others) as datasets "columns" of the
// HDF5 file "path" in Arkouda's layout. mode "truncate" makes a new file,
// "append" adds to the file there (a dataset already in it is refused
// unless "overwrite"); file_format is File_Format's value (1: a locale's
// part of a file set, 0: one file).
func (s *Server) cmdToHDF(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	p := a.String("path")
	names := a.StringList("names")
	columns := optStringList(a, "columns")
	bytesNames := optStringList(a, "bytes")
	mode := a.OptString("mode", "truncate")
	format := a.OptInt("file_format", hdf5io.FormatDistribute)
	overwrite := a.OptBool("overwrite", false)
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
		return nil, transfer.Errorf(transfer.ArgumentValue, "to_hdf: give one dataset name and one bytes entry (\"\" for a column that is not text) per array; got %d arrays, %d names, %d bytes", len(names), len(columns), len(bytesNames))
	}
	if mode != "truncate" && mode != "append" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "to_hdf: mode must be \"truncate\" (a new file) or \"append\" (add to the file), got %q", mode)
	}
	if format != hdf5io.FormatSingle && format != hdf5io.FormatDistribute {
		return nil, transfer.Errorf(transfer.ArgumentValue, "to_hdf: file_format must be 0 (single) or 1 (distribute), got %d", format)
	}
	for i, c := range columns {
		if c == "" || strings.ContainsAny(c, "/\x00") || c == "." {
			return nil, transfer.Errorf(transfer.ArgumentValue, "to_hdf: dataset name %q must be non-empty, without '/' or NUL", c)
		}
		if slices.Contains(columns[:i], c) {
			return nil, transfer.Errorf(transfer.ArgumentValue, "to_hdf: dataset name %q is given twice", c)
		}
	}
	o, env := s.opEnv(r.stop, "to_hdf")
	defer o.done()
	type col struct {
		arr *pdarray.Array
		str strs.Strs
		txt bool
	}
	cols := make([]col, len(names))
	var scratch int64
	for i, n := range names {
		if bytesNames[i] != "" {
			x, rel, err := s.acquireStrs(env, "names", [2]string{n, bytesNames[i]})
			if err != nil {
				return nil, err
			}
			defer rel()
			cols[i] = col{str: x, txt: true}
			scratch = max(scratch, int64(len(x.Data))+9*int64(x.Len()))
			continue
		}
		arr, rel, err := s.store.acquire(n)
		if err != nil {
			return nil, err
		}
		defer rel()
		cols[i] = col{arr: arr}
	}
	// The strings' Arkouda form (bytes and NULs, segments) is made in
	// scratch, one column at a time.
	if err := s.store.reserve(scratch, "to_hdf's strings in Arkouda's form (their bytes, a NUL and a segment each)"); err != nil {
		return nil, err
	}
	defer s.store.release(scratch)
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var from *os.File
	if mode == "append" {
		if from, err = root.Open(rel); err == nil {
			defer from.Close()
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fileErr(p, abs, err)
		}
	}
	fast := true
	size, err := writeAtomicFile(root, rel, func(f *os.File) error {
		if from != nil {
			if _, err := io.Copy(f, from); err != nil {
				return err
			}
		}
		h, err := hdf5io.Create(f, p, from != nil)
		if err != nil {
			return err
		}
		defer h.Close()
		if from == nil {
			if err := h.SetAttrInt("/", "File_Format", format); err != nil {
				return err
			}
		}
		for i, c := range cols {
			ds := "/" + columns[i]
			if h.Exists(ds) {
				if !overwrite {
					return transfer.Errorf(transfer.ArgumentValue, "to_hdf: dataset %q is already in %s; pass overwrite=True to replace it (ak.update_hdf does), or write another file", columns[i], p)
				}
				if err := h.Delete(ds); err != nil {
					return err
				}
			}
			if !c.txt {
				d := c.arr.DType()
				ok, err := h.Write(ds, d, c.arr.Bytes(), c.arr.Len(), s.cfg.Workers)
				if err != nil {
					return err
				}
				fast = fast && (ok || c.arr.Len() == 0)
				if err := h.WriteMeta(ds, hdf5io.ObjPdarray, d == pdarray.Bool, Version); err != nil {
					return err
				}
				continue
			}
			n := c.str.Len()
			values := pdarray.UninitBytes(len(c.str.Data) + n)
			segs := make([]int64, n)
			hdf5io.Terminate(c.str.Off, c.str.Data, values, segs, s.cfg.Workers)
			if err := h.CreateGroup(ds); err != nil {
				return err
			}
			if err := h.WriteMeta(ds, hdf5io.ObjStrings, false, Version); err != nil {
				return err
			}
			for _, part := range []struct {
				name string
				d    pdarray.DType
				b    []byte
				n    int
			}{{"values", pdarray.Uint8, values, len(values)}, {"segments", pdarray.Int64, pdarray.AsBytes(segs), n}} {
				ok, err := h.Write(ds+"/"+part.name, part.d, part.b, part.n, s.cfg.Workers)
				if err != nil {
					return err
				}
				fast = fast && (ok || part.n == 0)
				if err := h.WriteMeta(ds+"/"+part.name, hdf5io.ObjPdarray, false, Version); err != nil {
					return err
				}
			}
		}
		return h.Close()
	})
	if err != nil {
		var te *transfer.Error
		var he *hdf5io.Error
		switch {
		case errors.As(err, &te):
			return nil, te
		case errors.As(err, &he):
			// (a file there that will not open to append is the client's)
			return nil, h5Err(err, !strings.Contains(he.Op, "to append"))
		}
		return nil, fileOrIOErr(p, abs, err)
	}
	return &response{result: map[string]any{"path": rel, "file_bytes": size, "fast": fast,
		"seconds": time.Since(start).Seconds()}}, nil
}

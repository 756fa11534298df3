package hdf5io

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// Arkouda's layout (its server's HDF5Msg.chpl): every top-level object
// carries an int64 ObjType; a pdarray is a one-dimensional dataset (bools
// as uint8 with isBool=1); Strings are a group of "values" (each string's
// UTF-8 bytes and a NUL) and "segments" (int64 start of each string in
// values); a file of a distributed write holds its locale's slice, with
// segments local to the file. The root carries File_Format (0 single
// file, 1 one file per locale).

// ObjType is Arkouda's object type code (ServerConfig's enum ObjType).
type ObjType int64

const (
	ObjArrayView   ObjType = 0
	ObjPdarray     ObjType = 1
	ObjStrings     ObjType = 2
	ObjSegArray    ObjType = 3
	ObjCategorical ObjType = 4
	ObjGroupBy     ObjType = 5
	ObjDataFrame   ObjType = 6
	ObjDatetime    ObjType = 7
	ObjTimedelta   ObjType = 8
	ObjIPv4        ObjType = 9
	ObjBitVector   ObjType = 10
	ObjSeries      ObjType = 11
	ObjIndex       ObjType = 12
	ObjMultiIndex  ObjType = 13
)

var objNames = map[ObjType]string{ObjArrayView: "ArrayView", ObjPdarray: "pdarray", ObjStrings: "Strings",
	ObjSegArray: "SegArray", ObjCategorical: "Categorical", ObjGroupBy: "GroupBy", ObjDataFrame: "DataFrame",
	ObjDatetime: "Datetime", ObjTimedelta: "Timedelta", ObjIPv4: "IPv4", ObjBitVector: "BitVector",
	ObjSeries: "Series", ObjIndex: "Index", ObjMultiIndex: "MultiIndex"}

func (t ObjType) String() string {
	if n, ok := objNames[t]; ok {
		return n
	}
	return fmt.Sprintf("ObjType %d", int64(t))
}

// File_Format's values.
const (
	FormatSingle     = 0
	FormatDistribute = 1
)

// FileVersion is the file_version Arkouda writes (a float32).
const FileVersion = 2.0

// metaGroup is the legacy metadata group Arkouda's reader skips.
const metaGroup = "_arkouda_metadata"

// Object is a top-level object of a file as Arkouda's reader sees it.
type Object struct {
	Name  string
	Type  ObjType
	DType pdarray.DType // a pdarray's dtype as it loads (bool for isBool=1)
	Len   int           // elements (a pdarray) or strings (Strings)
	Err   error         // why it cannot be read (Objects lists it anyway)
}

// Objects lists the file's top-level objects in name order, typed as
// Arkouda's reader types them: ObjType when given, else a group with a
// "values" member is Strings and a dataset a pdarray. One that cannot be
// described is listed with its Err.
func (f *File) Objects() ([]Object, error) {
	ms, err := f.Members("/")
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(ms))
	for _, m := range ms {
		if m.Name == metaGroup || m.Kind == KindOther {
			continue
		}
		o, err := f.Object(m.Name)
		o.Err = err
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Object describes the top-level object name.
func (f *File) Object(name string) (Object, error) {
	p := "/" + name
	o := Object{Name: name, Type: -1}
	if !f.Exists(p) {
		return o, &Error{Op: "read " + f.name, Msg: fmt.Sprintf("no dataset %q in the file", name)}
	}
	at, err := f.Attrs(p)
	if err != nil {
		return o, err
	}
	if v, ok := at["ObjType"].(int64); ok {
		o.Type = ObjType(v)
	} else if f.Exists(p + "/values") {
		o.Type = ObjStrings
	} else {
		o.Type = ObjPdarray
	}
	switch o.Type {
	case ObjPdarray, ObjDatetime, ObjTimedelta, ObjIPv4:
		ds, err := f.Stat(p)
		if err != nil {
			return o, err
		}
		o.DType, o.Len = ds.DType, ds.Len
		if b, _ := at["isBool"].(int64); b == 1 || ds.Enum {
			o.DType = pdarray.Bool
		}
	case ObjStrings:
		if f.Exists(p + "/segments") {
			ds, err := f.Stat(p + "/segments")
			if err != nil {
				return o, err
			}
			o.Len = ds.Len
		} else {
			o.Len = -1 // counted from the values' NULs
		}
	}
	return o, nil
}

// WriteMeta sets Arkouda's attributes of the object at path.
func (f *File) WriteMeta(path string, t ObjType, isBool bool, version string) error {
	if err := f.SetAttrInt(path, "ObjType", int64(t)); err != nil {
		return err
	}
	if isBool {
		if err := f.SetAttrInt(path, "isBool", 1); err != nil {
			return err
		}
	}
	if err := f.SetAttrFloat32(path, "file_version", FileVersion); err != nil {
		return err
	}
	return f.SetAttrString(path, "arkouda_version", version)
}

// StringsPart is one file's share of a Strings object: its values (each
// string's bytes and a NUL) and segments (each string's start in values).
type StringsPart struct {
	Values   []byte
	Segments []int64 // nil: found from the NULs
}

// CountStrings is the number of strings a part holds.
func (p StringsPart) CountStrings() int {
	if p.Segments != nil {
		return len(p.Segments)
	}
	return bytes.Count(p.Values, []byte{0})
}

// Unterminate turns Arkouda's strings (parts, one after another) into
// Arrow's layout: off (one more than the strings) and data (the bytes
// without the NULs: len of all values less one byte per string). It checks
// that segments rise from 0 and that every string ends with its NUL.
func Unterminate(parts []StringsPart, names []string, off []int64, data []byte, workers int) error {
	base, nstr := int64(0), 0
	for pi, p := range parts {
		segs := p.Segments
		if segs == nil {
			segs = make([]int64, 0, p.CountStrings())
			start := 0
			for i, c := range p.Values {
				if c == 0 {
					segs = append(segs, int64(start))
					start = i + 1
				}
			}
			if start != len(p.Values) {
				return fmt.Errorf("%s: its values end with %d bytes after the last NUL; each string ends with a NUL byte", names[pi], len(p.Values)-start)
			}
		}
		n, nv := len(segs), int64(len(p.Values))
		if n > 0 && segs[0] != 0 {
			return fmt.Errorf("%s: its segments start at %d, not 0", names[pi], segs[0])
		}
		if n == 0 && nv != 0 {
			return fmt.Errorf("%s: %d bytes of values but no segments", names[pi], nv)
		}
		var g par.Group
		errs := make([]error, max(1, workers))
		step := (n + len(errs) - 1) / len(errs)
		for w := range errs {
			lo, hi := w*step, min(n, (w+1)*step)
			if lo >= hi {
				continue
			}
			g.Go(func() {
				for i := lo; i < hi; i++ {
					s, e := segs[i], nv
					if i+1 < n {
						e = segs[i+1]
					}
					if e <= s || e > nv || p.Values[e-1] != 0 {
						errs[w] = fmt.Errorf("%s: string %d (bytes %d to %d of %d) does not end with a NUL byte or its segments do not rise; Arkouda's Strings end each string with one", names[pi], i, s, e, nv)
						return
					}
					o := base + s - int64(i)
					off[nstr+i] = o
					copy(data[o:o+e-1-s], p.Values[s:e-1])
				}
			})
		}
		g.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		base += nv - int64(n)
		nstr += n
	}
	off[nstr] = base
	return nil
}

// Terminate is Unterminate's inverse for one file: values gets each
// string of (off, data; off[0] is 0) and a NUL (len(data) + strings
// bytes), segs each string's start in values.
func Terminate(off []int64, data []byte, values []byte, segs []int64, workers int) {
	n := len(off) - 1
	var g par.Group
	w := max(1, workers)
	step := (n + w - 1) / max(1, w)
	for k := 0; k < w; k++ {
		lo, hi := k*step, min(n, (k+1)*step)
		if lo >= hi {
			continue
		}
		g.Go(func() {
			for i := lo; i < hi; i++ {
				s := off[i] + int64(i)
				segs[i] = s
				l := off[i+1] - off[i]
				copy(values[s:s+l], data[off[i]:off[i+1]])
				values[s+l] = 0
			}
		})
	}
	g.Wait()
}

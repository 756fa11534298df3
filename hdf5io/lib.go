// Package hdf5io reads and writes HDF5 files, in Arkouda's layout, through
// libhdf5 (a thin cgo binding of the C library: no Go HDF5 module is served
// to this project, and libhdf5 is the reference implementation h5py and
// Arkouda's server use).
package hdf5io

/*
#cgo pkg-config: hdf5
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

// The library's predefined types are macros over global variables that
// cgo cannot name; these return them.
static hid_t h5t_native(int code) {
	switch (code) {
	case 1: return H5T_NATIVE_INT8;
	case 2: return H5T_NATIVE_INT16;
	case 3: return H5T_NATIVE_INT32;
	case 4: return H5T_NATIVE_INT64;
	case 5: return H5T_NATIVE_UINT8;
	case 6: return H5T_NATIVE_UINT16;
	case 7: return H5T_NATIVE_UINT32;
	case 8: return H5T_NATIVE_UINT64;
	case 9: return H5T_NATIVE_FLOAT;
	case 10: return H5T_NATIVE_DOUBLE;
	}
	return -1;
}
static hid_t h5t_std(int code) {
	switch (code) {
	case 1: return H5T_STD_I8LE;
	case 2: return H5T_STD_I16LE;
	case 3: return H5T_STD_I32LE;
	case 4: return H5T_STD_I64LE;
	case 5: return H5T_STD_U8LE;
	case 6: return H5T_STD_U16LE;
	case 7: return H5T_STD_U32LE;
	case 8: return H5T_STD_U64LE;
	case 9: return H5T_IEEE_F32LE;
	case 10: return H5T_IEEE_F64LE;
	}
	return -1;
}
static hid_t h5p_default(void) { return H5P_DEFAULT; }
static hid_t h5p_dataset_create(void) { return H5Pcreate(H5P_DATASET_CREATE); }
static hid_t h5p_link_create(void) { return H5Pcreate(H5P_LINK_CREATE); }
static hid_t h5s_all(void) { return H5S_ALL; }
static hid_t h5t_c_s1(void) { return H5T_C_S1; }
static hid_t h5e_default(void) { return H5E_DEFAULT; }
static haddr_t h5_haddr_undef(void) { return HADDR_UNDEF; }

// The library prints its error stack to stderr unless told not to; the
// binding reads the stack itself (h5_error) and says it in the error.
// The setting is per thread in a thread-safe libhdf5: each thread a call
// runs on is told once.
static __thread int h5_quieted;
static void h5_quiet(void) {
	if (!h5_quieted) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); h5_quieted = 1; }
}

typedef struct { char top[256]; char bottom[256]; } h5msg;
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data) {
	h5msg *m = data;
	const char *d = e->desc ? e->desc : "";
	if (n == 0) snprintf(m->top, sizeof m->top, "%s", d);
	snprintf(m->bottom, sizeof m->bottom, "%s", d);
	return 0;
}
// h5_error fills m with the outermost and innermost messages of this
// thread's error stack, then clears it.
static void h5_error(h5msg *m) {
	m->top[0] = 0; m->bottom[0] = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5_walk, m);
	H5Eclear2(H5E_DEFAULT);
}

// h5_read_vlen_attr reads a variable-length string attribute into a
// malloc'd copy (freed by the caller with free).
static char *h5_read_vlen_attr(hid_t attr, hid_t memtype) {
	char *s = NULL;
	if (H5Aread(attr, memtype, &s) < 0) return NULL;
	if (s == NULL) { char *e = malloc(1); e[0] = 0; return e; }
	char *out = strdup(s);
	H5free_memory(s);
	return out;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// Error is a failure of libhdf5 or of a file's content, with the library's
// own words where it gave any.
type Error struct {
	Op  string // what was being done, with the object's name
	Msg string // why
}

func (e *Error) Error() string { return e.Op + ": " + e.Msg }

// ErrNotHDF5 is wrapped by the error of Open for a file that is not HDF5.
var ErrNotHDF5 = errors.New("not an HDF5 file")

// lib runs f, which calls libhdf5, on one OS thread and turns a negative
// result into an Error with the thread's HDF5 error stack (the library
// keeps one per thread; a goroutine may change threads between calls).
func lib(op string, f func() C.long) (C.long, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.h5_quiet()
	r := f()
	if r >= 0 {
		return r, nil
	}
	var m C.h5msg
	C.h5_error(&m)
	top, bottom := C.GoString(&m.top[0]), C.GoString(&m.bottom[0])
	msg := top
	if bottom != "" && bottom != top {
		msg = top + ": " + bottom
	}
	if msg == "" {
		msg = "libhdf5 failed"
	}
	return r, &Error{Op: op, Msg: msg}
}

func hid(op string, f func() C.hid_t) (C.hid_t, error) {
	r, err := lib(op, func() C.long { return C.long(f()) })
	return C.hid_t(r), err
}

func herr(op string, f func() C.herr_t) error {
	_, err := lib(op, func() C.long { return C.long(f()) })
	return err
}

func closeID(id C.hid_t) {
	if id < 0 {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	switch C.H5Iget_type(id) {
	case C.H5I_FILE:
		C.H5Fclose(id)
	case C.H5I_GROUP:
		C.H5Gclose(id)
	case C.H5I_DATASET:
		C.H5Dclose(id)
	case C.H5I_DATASPACE:
		C.H5Sclose(id)
	case C.H5I_DATATYPE:
		C.H5Tclose(id)
	case C.H5I_ATTR:
		C.H5Aclose(id)
	case C.H5I_GENPROP_LST:
		C.H5Pclose(id)
	default:
		C.H5Oclose(id)
	}
	C.H5Eclear2(C.h5e_default())
}

func cstr(s string) (*C.char, func()) {
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// dtypeCode is h5t_native's and h5t_std's code of a dtype (bools are
// stored as uint8: Arkouda's layout, with an isBool attribute).
func dtypeCode(d pdarray.DType) C.int {
	switch d {
	case pdarray.Int8:
		return 1
	case pdarray.Int16:
		return 2
	case pdarray.Int32:
		return 3
	case pdarray.Int64:
		return 4
	case pdarray.Uint8, pdarray.Bool:
		return 5
	case pdarray.Uint16:
		return 6
	case pdarray.Uint32:
		return 7
	case pdarray.Uint64:
		return 8
	case pdarray.Float32:
		return 9
	case pdarray.Float64:
		return 10
	}
	return 0
}

// File is an open HDF5 file. libhdf5 opens the inode of the os.File it
// was given again through /proc/self/fd, so a path checked by os.Root
// cannot be swapped for another file between the check and the open; the
// fast paths read and write through that os.File. The caller owns it and
// closes it after the File.
type File struct {
	id   C.hid_t
	f    *os.File
	name string // as the client named it, for messages
}

// procPath names f's open file for libhdf5 (Linux).
func procPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }

// Open opens f (opened for reading) as an HDF5 file, read-only. name is
// the file as messages should call it.
func Open(f *os.File, name string) (*File, error) {
	p, free := cstr(procPath(f))
	defer free()
	is, err := lib("open "+name, func() C.long { return C.long(C.H5Fis_hdf5(p)) })
	if err != nil {
		return nil, err
	}
	if is == 0 {
		return nil, fmt.Errorf("%s: %w (no HDF5 signature)", name, ErrNotHDF5)
	}
	id, err := hid("open "+name, func() C.hid_t { return C.H5Fopen(p, C.H5F_ACC_RDONLY, C.h5p_default()) })
	if err != nil {
		return nil, err
	}
	return &File{id: id, f: f, name: name}, nil
}

// Create makes f (a new, empty file opened for writing) an HDF5 file, or
// with appendTo opens the HDF5 file f already holds for writing.
func Create(f *os.File, name string, appendTo bool) (*File, error) {
	p, free := cstr(procPath(f))
	defer free()
	var id C.hid_t
	var err error
	if appendTo {
		id, err = hid("open "+name+" to append", func() C.hid_t { return C.H5Fopen(p, C.H5F_ACC_RDWR, C.h5p_default()) })
	} else {
		id, err = hid("create "+name, func() C.hid_t {
			return C.H5Fcreate(p, C.H5F_ACC_TRUNC, C.h5p_default(), C.h5p_default())
		})
	}
	if err != nil {
		return nil, err
	}
	return &File{id: id, f: f, name: name}, nil
}

// Name is the file's name as the client gave it.
func (f *File) Name() string { return f.name }

// Close flushes and closes the file (not the os.File under it).
func (f *File) Close() error {
	if f.id < 0 {
		return nil
	}
	err := herr("close "+f.name, func() C.herr_t { return C.H5Fclose(f.id) })
	f.id = -1
	return err
}

// Kind is what a link of a group names.
type Kind int

const (
	KindOther Kind = iota
	KindGroup
	KindDataset
)

// Member is one link of a group.
type Member struct {
	Name string
	Kind Kind
}

// Members lists the links of the group at path ("/" for the root), in
// name order.
func (f *File) Members(path string) ([]Member, error) {
	op := "list " + f.name + ":" + path
	cp, free := cstr(path)
	defer free()
	g, err := hid(op, func() C.hid_t { return C.H5Gopen2(f.id, cp, C.h5p_default()) })
	if err != nil {
		return nil, err
	}
	defer closeID(g)
	var info C.H5G_info_t
	if err := herr(op, func() C.herr_t { return C.H5Gget_info(g, &info) }); err != nil {
		return nil, err
	}
	dot, freeDot := cstr(".")
	defer freeDot()
	out := make([]Member, 0, int(info.nlinks))
	for i := C.hsize_t(0); i < info.nlinks; i++ {
		n, err := lib(op, func() C.long {
			return C.long(C.H5Lget_name_by_idx(g, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, i, nil, 0, C.h5p_default()))
		})
		if err != nil {
			return nil, err
		}
		buf := make([]byte, n+1)
		if _, err := lib(op, func() C.long {
			return C.long(C.H5Lget_name_by_idx(g, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, i, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(n+1), C.h5p_default()))
		}); err != nil {
			return nil, err
		}
		name := string(buf[:n])
		m := Member{Name: name}
		cn, freeN := cstr(name)
		o, err := hid(op, func() C.hid_t { return C.H5Oopen(g, cn, C.h5p_default()) })
		freeN()
		if err == nil {
			switch C.H5Iget_type(o) {
			case C.H5I_GROUP:
				m.Kind = KindGroup
			case C.H5I_DATASET:
				m.Kind = KindDataset
			}
			closeID(o)
		}
		out = append(out, m)
	}
	return out, nil
}

// Exists says whether path names an object (each step of it a link).
func (f *File) Exists(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	cur := ""
	for _, p := range parts {
		cur += "/" + p
		cp, free := cstr(cur)
		r, err := lib("", func() C.long { return C.long(C.H5Lexists(f.id, cp, C.h5p_default())) })
		free()
		if err != nil || r <= 0 {
			return false
		}
	}
	return true
}

// open opens the object at path (a group or a dataset).
func (f *File) open(path string) (C.hid_t, error) {
	cp, free := cstr(path)
	defer free()
	return hid("open "+f.name+":"+path, func() C.hid_t { return C.H5Oopen(f.id, cp, C.h5p_default()) })
}

// Dataset describes a one-dimensional dataset.
type Dataset struct {
	Path   string
	DType  pdarray.DType // the array type it reads as (uint8 for 1-byte unsigned and enum bools)
	Len    int
	Enum   bool  // an HDF5 enum over 1-byte integers (h5py's bool)
	offset int64 // its bytes' place in the file for the fast read; -1: none
	Native bool  // stored exactly as DType's little-endian bytes, contiguous and unfiltered
	Rank   int
}

// Stat describes the dataset at path.
func (f *File) Stat(path string) (*Dataset, error) {
	op := "read " + f.name + ":" + path
	cp, free := cstr(path)
	defer free()
	d, err := hid(op, func() C.hid_t { return C.H5Dopen2(f.id, cp, C.h5p_default()) })
	if err != nil {
		return nil, err
	}
	defer closeID(d)
	ds := &Dataset{Path: path, offset: -1}
	sp, err := hid(op, func() C.hid_t { return C.H5Dget_space(d) })
	if err != nil {
		return nil, err
	}
	defer closeID(sp)
	rank, err := lib(op, func() C.long { return C.long(C.H5Sget_simple_extent_ndims(sp)) })
	if err != nil {
		return nil, err
	}
	ds.Rank = int(rank)
	if rank > 1 {
		return nil, &Error{Op: op, Msg: fmt.Sprintf("the dataset has %d dimensions; only one-dimensional datasets load as arrays", rank)}
	}
	ds.Len = 1
	if rank == 1 {
		var dim C.hsize_t
		if err := herr(op, func() C.herr_t { return C.herr_t(C.H5Sget_simple_extent_dims(sp, &dim, nil)) }); err != nil {
			return nil, err
		}
		if uint64(dim) > 1<<50 {
			return nil, &Error{Op: op, Msg: fmt.Sprintf("the dataset claims %d elements", uint64(dim))}
		}
		ds.Len = int(dim)
	}
	t, err := hid(op, func() C.hid_t { return C.H5Dget_type(d) })
	if err != nil {
		return nil, err
	}
	defer closeID(t)
	dt, enum, err := fileDType(op, t)
	if err != nil {
		return nil, err
	}
	ds.DType, ds.Enum = dt, enum
	// libhdf5 1.10 copies a compact dataset's bytes without checking that
	// the header's size matches the dataspace (a damaged file crashed it:
	// FuzzOpen); HDF5 2.0 checks, and so does this.
	if pl, err := hid(op, func() C.hid_t { return C.H5Dget_create_plist(d) }); err == nil {
		layout := C.H5Pget_layout(pl)
		closeID(pl)
		if layout == C.H5D_COMPACT {
			if got, want := uint64(C.H5Dget_storage_size(d)), uint64(ds.Len)*uint64(C.H5Tget_size(t)); got != want {
				return nil, &Error{Op: op, Msg: fmt.Sprintf("the compact dataset holds %d bytes but its %d elements need %d (a damaged file?)", got, ds.Len, want)}
			}
		}
	}
	// The fast read: bytes as the array holds them, in one extent.
	std := C.h5t_std(dtypeCode(dt))
	eq, _ := lib(op, func() C.long { return C.long(C.H5Tequal(t, std)) })
	if eq > 0 {
		pl, err := hid(op, func() C.hid_t { return C.H5Dget_create_plist(d) })
		if err == nil {
			layout := C.H5Pget_layout(pl)
			nf := C.H5Pget_nfilters(pl)
			closeID(pl)
			if layout == C.H5D_CONTIGUOUS && nf == 0 {
				runtime.LockOSThread()
				addr := C.H5Dget_offset(d)
				C.H5Eclear2(C.h5e_default())
				runtime.UnlockOSThread()
				if addr != C.h5_haddr_undef() && uint64(addr) < 1<<62 {
					ds.offset, ds.Native = int64(addr), true
				}
			}
		}
	}
	return ds, nil
}

// fileDType maps a dataset's file type to the dtype it reads as.
func fileDType(op string, t C.hid_t) (pdarray.DType, bool, error) {
	class := C.H5Tget_class(t)
	size := int(C.H5Tget_size(t))
	switch class {
	case C.H5T_INTEGER:
		signed := C.H5Tget_sign(t) == C.H5T_SGN_2
		m := map[int][2]pdarray.DType{1: {pdarray.Uint8, pdarray.Int8}, 2: {pdarray.Uint16, pdarray.Int16},
			4: {pdarray.Uint32, pdarray.Int32}, 8: {pdarray.Uint64, pdarray.Int64}}
		if p, ok := m[size]; ok {
			if signed {
				return p[1], false, nil
			}
			return p[0], false, nil
		}
	case C.H5T_FLOAT:
		switch size {
		case 4:
			return pdarray.Float32, false, nil
		case 8:
			return pdarray.Float64, false, nil
		}
	case C.H5T_ENUM:
		if size == 1 {
			return pdarray.Uint8, true, nil
		}
	}
	names := map[C.H5T_class_t]string{C.H5T_STRING: "string", C.H5T_COMPOUND: "compound", C.H5T_ENUM: "enum",
		C.H5T_OPAQUE: "opaque", C.H5T_ARRAY: "array", C.H5T_VLEN: "variable-length", C.H5T_REFERENCE: "reference",
		C.H5T_BITFIELD: "bitfield", C.H5T_TIME: "time", C.H5T_INTEGER: "integer", C.H5T_FLOAT: "float"}
	what, ok := names[class]
	if !ok {
		what = "unknown"
	}
	return 0, false, &Error{Op: op, Msg: fmt.Sprintf("the dataset's type is a %d-byte %s, which does not map to an array dtype", size, what)}
}

// Read reads ds's elements into dst (ds.Len elements of ds.DType's size,
// or of size 1 for an enum), with workers goroutines on the fast path. It
// says whether the fast path (positioned reads of the file's bytes) ran.
func (f *File) Read(ds *Dataset, dst []byte, workers int) (fast bool, err error) {
	if len(dst) != ds.Len*ds.DType.Size() {
		return false, &Error{Op: "read " + f.name + ":" + ds.Path, Msg: fmt.Sprintf("buffer of %d bytes for %d elements", len(dst), ds.Len)}
	}
	if ds.Len == 0 {
		return ds.Native, nil
	}
	if ds.Native {
		return true, preadAll(f.f, dst, ds.offset, workers, f.name)
	}
	op := "read " + f.name + ":" + ds.Path
	cp, free := cstr(ds.Path)
	defer free()
	d, err := hid(op, func() C.hid_t { return C.H5Dopen2(f.id, cp, C.h5p_default()) })
	if err != nil {
		return false, err
	}
	defer closeID(d)
	mem := C.h5t_native(dtypeCode(ds.DType))
	if ds.Enum {
		// An enum reads as its base integers.
		t, err := hid(op, func() C.hid_t { return C.H5Dget_type(d) })
		if err != nil {
			return false, err
		}
		defer closeID(t)
		mem, err = hid(op, func() C.hid_t { return C.H5Tget_super(t) })
		if err != nil {
			return false, err
		}
		defer closeID(mem)
	}
	return false, herr(op, func() C.herr_t {
		return C.H5Dread(d, mem, C.h5s_all(), C.h5s_all(), C.h5p_default(), unsafe.Pointer(&dst[0]))
	})
}

// chunk is the fast paths' unit of work: large enough to stream, small
// enough to share a file among workers.
const chunk = 8 << 20

// preadAll reads len(dst) bytes at off of f with workers goroutines.
func preadAll(f *os.File, dst []byte, off int64, workers int, name string) error {
	return parallelChunks(len(dst), workers, func(lo, hi int) error {
		n, err := f.ReadAt(dst[lo:hi], off+int64(lo))
		if n == hi-lo {
			return nil
		}
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("the file ends inside a dataset (truncated?)")
		}
		return &Error{Op: "read " + name, Msg: err.Error()}
	})
}

func pwriteAll(f *os.File, src []byte, off int64, workers int, name string) error {
	return parallelChunks(len(src), workers, func(lo, hi int) error {
		if _, err := f.WriteAt(src[lo:hi], off+int64(lo)); err != nil {
			return &Error{Op: "write " + name, Msg: err.Error()}
		}
		return nil
	})
}

// parallelChunks runs f over [0,n) in chunk-sized pieces on workers
// goroutines, and returns the first error.
func parallelChunks(n, workers int, f func(lo, hi int) error) error {
	pieces := (n + chunk - 1) / chunk
	workers = max(1, min(workers, pieces))
	if workers == 1 {
		for lo := 0; lo < n; lo += chunk {
			if err := f(lo, min(n, lo+chunk)); err != nil {
				return err
			}
		}
		return nil
	}
	var next, failed int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := failed != 0
				mu.Unlock()
				if stop || int(i) >= pieces {
					return
				}
				lo := int(i) * chunk
				if err := f(lo, min(n, lo+chunk)); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					failed = 1
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// CreateGroup makes a group at path (its parents must exist).
func (f *File) CreateGroup(path string) error {
	op := "write " + f.name + ":" + path
	cp, free := cstr(path)
	defer free()
	g, err := hid(op, func() C.hid_t { return C.H5Gcreate2(f.id, cp, C.h5p_default(), C.h5p_default(), C.h5p_default()) })
	if err != nil {
		return err
	}
	closeID(g)
	return nil
}

// Delete removes the link at path (mode "append" replaces a dataset).
func (f *File) Delete(path string) error {
	cp, free := cstr(path)
	defer free()
	return herr("delete "+f.name+":"+path, func() C.herr_t { return C.H5Ldelete(f.id, cp, C.h5p_default()) })
}

// Write makes a one-dimensional contiguous dataset at path holding src
// (n elements of d, bools as uint8) and says whether the fast path ran:
// the dataset's space is allocated at once, without fill, and its bytes
// are written by workers goroutines at their place in the file.
func (f *File) Write(path string, d pdarray.DType, src []byte, n int, workers int) (fast bool, err error) {
	op := "write " + f.name + ":" + path
	if len(src) != n*d.Size() {
		return false, &Error{Op: op, Msg: fmt.Sprintf("buffer of %d bytes for %d elements", len(src), n)}
	}
	cp, free := cstr(path)
	defer free()
	dim := C.hsize_t(n)
	sp, err := hid(op, func() C.hid_t { return C.H5Screate_simple(1, &dim, nil) })
	if err != nil {
		return false, err
	}
	defer closeID(sp)
	dcpl, err := hid(op, func() C.hid_t { return C.h5p_dataset_create() })
	if err != nil {
		return false, err
	}
	defer closeID(dcpl)
	if n > 0 {
		if err := herr(op, func() C.herr_t { return C.H5Pset_alloc_time(dcpl, C.H5D_ALLOC_TIME_EARLY) }); err != nil {
			return false, err
		}
		if err := herr(op, func() C.herr_t { return C.H5Pset_fill_time(dcpl, C.H5D_FILL_TIME_NEVER) }); err != nil {
			return false, err
		}
	}
	ds, err := hid(op, func() C.hid_t {
		return C.H5Dcreate2(f.id, cp, C.h5t_std(dtypeCode(d)), sp, C.h5p_default(), dcpl, C.h5p_default())
	})
	if err != nil {
		return false, err
	}
	defer closeID(ds)
	if n == 0 {
		return false, nil
	}
	runtime.LockOSThread()
	addr := C.H5Dget_offset(ds)
	C.H5Eclear2(C.h5e_default())
	runtime.UnlockOSThread()
	if addr != C.h5_haddr_undef() {
		return true, pwriteAll(f.f, src, int64(addr), workers, f.name)
	}
	return false, herr(op, func() C.herr_t {
		return C.H5Dwrite(ds, C.h5t_native(dtypeCode(d)), C.h5s_all(), C.h5s_all(), C.h5p_default(), unsafe.Pointer(&src[0]))
	})
}

// SetAttrInt sets an int64 attribute of the object at path.
func (f *File) SetAttrInt(path, name string, v int64) error {
	return f.setAttr(path, name, C.h5t_std(4), C.h5t_native(4), unsafe.Pointer(&v))
}

// SetAttrFloat32 sets a float32 attribute of the object at path.
func (f *File) SetAttrFloat32(path, name string, v float32) error {
	return f.setAttr(path, name, C.h5t_std(9), C.h5t_native(9), unsafe.Pointer(&v))
}

// SetAttrString sets a fixed-length (NUL-padded C string) attribute of the
// object at path, as Arkouda's server writes its string attributes.
func (f *File) SetAttrString(path, name, v string) error {
	op := "write " + f.name + ":" + path + " attribute " + name
	t, err := hid(op, func() C.hid_t { return C.H5Tcopy(C.h5t_c_s1()) })
	if err != nil {
		return err
	}
	defer closeID(t)
	size := max(1, len(v))
	if err := herr(op, func() C.herr_t { return C.H5Tset_size(t, C.size_t(size)) }); err != nil {
		return err
	}
	buf := make([]byte, size)
	copy(buf, v)
	return f.setAttr(path, name, t, t, unsafe.Pointer(&buf[0]))
}

func (f *File) setAttr(path, name string, ftype, mtype C.hid_t, v unsafe.Pointer) error {
	op := "write " + f.name + ":" + path + " attribute " + name
	o, err := f.open(path)
	if err != nil {
		return err
	}
	defer closeID(o)
	cn, free := cstr(name)
	defer free()
	if ex, _ := lib(op, func() C.long { return C.long(C.H5Aexists(o, cn)) }); ex > 0 {
		if err := herr(op, func() C.herr_t { return C.H5Adelete(o, cn) }); err != nil {
			return err
		}
	}
	sp, err := hid(op, func() C.hid_t { return C.H5Screate(C.H5S_SCALAR) })
	if err != nil {
		return err
	}
	defer closeID(sp)
	a, err := hid(op, func() C.hid_t { return C.H5Acreate2(o, cn, ftype, sp, C.h5p_default(), C.h5p_default()) })
	if err != nil {
		return err
	}
	defer closeID(a)
	return herr(op, func() C.herr_t { return C.H5Awrite(a, mtype, v) })
}

// Attr is an attribute's value: an int64, a float64, a string, or nil for
// a type this binding does not read.
type Attr any

// Attrs reads the scalar (or one-element) attributes of the object at
// path that are integers, floats or strings; others read as nil.
func (f *File) Attrs(path string) (map[string]Attr, error) {
	op := "read " + f.name + ":" + path + " attributes"
	o, err := f.open(path)
	if err != nil {
		return nil, err
	}
	defer closeID(o)
	var info C.H5O_info_t
	if err := herr(op, func() C.herr_t { return C.H5Oget_info2(o, &info, C.H5O_INFO_NUM_ATTRS) }); err != nil {
		return nil, err
	}
	out := map[string]Attr{}
	dot, freeDot := cstr(".")
	defer freeDot()
	for i := C.hsize_t(0); i < info.num_attrs; i++ {
		a, err := hid(op, func() C.hid_t {
			return C.H5Aopen_by_idx(o, dot, C.H5_INDEX_CRT_ORDER, C.H5_ITER_INC, i, C.h5p_default(), C.h5p_default())
		})
		if err != nil {
			// Attributes are not always tracked in creation order.
			a, err = hid(op, func() C.hid_t {
				return C.H5Aopen_by_idx(o, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, i, C.h5p_default(), C.h5p_default())
			})
			if err != nil {
				return nil, err
			}
		}
		name, v, err := readAttr(op, a)
		closeID(a)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func readAttr(op string, a C.hid_t) (string, Attr, error) {
	n, err := lib(op, func() C.long { return C.long(C.H5Aget_name(a, 0, nil)) })
	if err != nil {
		return "", nil, err
	}
	buf := make([]byte, n+1)
	if _, err := lib(op, func() C.long { return C.long(C.H5Aget_name(a, C.size_t(n+1), (*C.char)(unsafe.Pointer(&buf[0])))) }); err != nil {
		return "", nil, err
	}
	name := string(buf[:n])
	sp, err := hid(op, func() C.hid_t { return C.H5Aget_space(a) })
	if err != nil {
		return name, nil, err
	}
	defer closeID(sp)
	if np := C.H5Sget_simple_extent_npoints(sp); np != 1 {
		return name, nil, nil
	}
	t, err := hid(op, func() C.hid_t { return C.H5Aget_type(a) })
	if err != nil {
		return name, nil, err
	}
	defer closeID(t)
	switch C.H5Tget_class(t) {
	case C.H5T_INTEGER, C.H5T_ENUM:
		var v int64
		if err := herr(op, func() C.herr_t { return C.H5Aread(a, C.h5t_native(4), unsafe.Pointer(&v)) }); err != nil {
			return name, nil, err
		}
		return name, v, nil
	case C.H5T_FLOAT:
		var v float64
		if err := herr(op, func() C.herr_t { return C.H5Aread(a, C.h5t_native(10), unsafe.Pointer(&v)) }); err != nil {
			return name, nil, err
		}
		return name, v, nil
	case C.H5T_STRING:
		if C.H5Tis_variable_str(t) > 0 {
			runtime.LockOSThread()
			s := C.h5_read_vlen_attr(a, t)
			C.H5Eclear2(C.h5e_default())
			runtime.UnlockOSThread()
			if s == nil {
				return name, nil, &Error{Op: op, Msg: "cannot read string attribute " + name}
			}
			defer C.free(unsafe.Pointer(s))
			return name, C.GoString(s), nil
		}
		size := int(C.H5Tget_size(t))
		if size <= 0 || size > 1<<20 {
			return name, nil, nil
		}
		b := make([]byte, size)
		if err := herr(op, func() C.herr_t { return C.H5Aread(a, t, unsafe.Pointer(&b[0])) }); err != nil {
			return name, nil, err
		}
		if i := indexNUL(b); i >= 0 {
			b = b[:i]
		}
		return name, strings.TrimRight(string(b), " "), nil
	}
	return name, nil, nil
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

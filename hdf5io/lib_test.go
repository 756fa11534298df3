package hdf5io

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

func create(t *testing.T, name string) *File {
	t.Helper()
	fh, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	f, err := Create(fh, filepath.Base(name), false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func open(t *testing.T, name string) *File {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	f, err := Open(fh, filepath.Base(name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Every dtype round-trips bit for bit, through the fast paths both ways
// (a test that fails if positioned reads and writes stop being taken).
func TestRoundTripFastPaths(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.h5")
	f := create(t, name)
	want := map[string][]byte{}
	for _, d := range pdarray.DTypes() {
		n := 3*chunk/d.Size() + 17 // several chunks, a ragged tail
		if d == pdarray.Bool {
			n = 1000
		}
		b := make([]byte, n*d.Size())
		for i := range b {
			b[i] = byte(i*7 + int(d))
		}
		if d == pdarray.Bool {
			for i := range b {
				b[i] &= 1
			}
		}
		fast, err := f.Write("/"+d.String(), d, b, n, 4)
		if err != nil || !fast {
			t.Fatalf("write %s: fast %v, %v", d, fast, err)
		}
		want[d.String()] = b
	}
	if _, err := f.Write("/empty", pdarray.Int64, nil, 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := f.SetAttrInt("/int64", "ObjType", 1); err != nil {
		t.Fatal(err)
	}
	if err := f.SetAttrString("/", "arkouda_version", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	f = open(t, name)
	defer f.Close()
	ms, err := f.Members("/")
	if err != nil || len(ms) != len(want)+1 {
		t.Fatalf("members %v, %v", ms, err)
	}
	for _, d := range pdarray.DTypes() {
		ds, err := f.Stat("/" + d.String())
		if err != nil {
			t.Fatal(err)
		}
		wd := d
		if d == pdarray.Bool {
			wd = pdarray.Uint8
		}
		if ds.DType != wd || !ds.Native {
			t.Fatalf("%s: stat %+v", d, ds)
		}
		got := make([]byte, ds.Len*ds.DType.Size())
		fast, err := f.Read(ds, got, 4)
		if err != nil || !fast {
			t.Fatalf("read %s: fast %v, %v", d, fast, err)
		}
		if !bytes.Equal(got, want[d.String()]) {
			t.Fatalf("%s differs", d)
		}
	}
	ds, err := f.Stat("/empty")
	if err != nil || ds.Len != 0 {
		t.Fatalf("empty: %+v %v", ds, err)
	}
	if _, err := f.Read(ds, nil, 2); err != nil {
		t.Fatal(err)
	}
	at, err := f.Attrs("/int64")
	if err != nil || at["ObjType"] != int64(1) {
		t.Fatalf("attrs %v %v", at, err)
	}
	at, err = f.Attrs("/")
	if err != nil || at["arkouda_version"] != "v1" {
		t.Fatalf("attrs %v %v", at, err)
	}
	if f.Exists("/nope") || !f.Exists("/int64") {
		t.Fatal("Exists")
	}
	if _, err := f.Stat("/nope"); err == nil {
		t.Fatal("missing dataset read")
	}
}

func TestNotHDF5AndTruncated(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.h5")
	os.WriteFile(bad, []byte("this is not hdf5 at all, not even close............"), 0o644)
	fh, _ := os.Open(bad)
	defer fh.Close()
	if _, err := Open(fh, "bad.h5"); !errors.Is(err, ErrNotHDF5) {
		t.Fatalf("got %v", err)
	}
	name := filepath.Join(dir, "a.h5")
	f := create(t, name)
	b := make([]byte, 8<<20)
	if _, err := f.Write("/x", pdarray.Int64, b, len(b)/8, 2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	full, _ := os.ReadFile(name)
	for _, cut := range []int{len(full) / 2, 100, 1000} {
		os.WriteFile(name, full[:cut], 0o644)
		fh, _ := os.Open(name)
		f, err := Open(fh, "a.h5")
		if err != nil {
			fh.Close()
			continue // refused at the open: fine
		}
		ds, err := f.Stat("/x")
		if err == nil {
			_, err = f.Read(ds, make([]byte, ds.Len*8), 2)
		}
		f.Close()
		fh.Close()
		if err == nil {
			t.Fatalf("cut at %d: no error", cut)
		}
	}
}

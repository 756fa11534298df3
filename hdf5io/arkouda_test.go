package hdf5io

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

func TestTerminateRoundTrip(t *testing.T) {
	words := []string{"", "a", "é日本", strings.Repeat("x", 1000), "", "end"}
	off := []int64{0}
	var data []byte
	for _, w := range words {
		data = append(data, w...)
		off = append(off, int64(len(data)))
	}
	for _, workers := range []int{1, 3, 8} {
		values := make([]byte, len(data)+len(words))
		segs := make([]int64, len(words))
		Terminate(off, data, values, segs, workers)
		// Two files' parts: the reader rebases the second's segments.
		k := 2
		parts := []StringsPart{{Values: values[:segs[k]], Segments: segs[:k]},
			{Values: values[segs[k]:], Segments: append([]int64(nil), segs[k:]...)}}
		for i := range parts[1].Segments {
			parts[1].Segments[i] -= segs[k]
		}
		gotOff := make([]int64, len(off))
		gotData := make([]byte, len(data))
		if err := Unterminate(parts, []string{"p0", "p1"}, gotOff, gotData, workers); err != nil {
			t.Fatal(err)
		}
		if string(gotData) != string(data) || len(gotOff) != len(off) {
			t.Fatalf("workers %d: data differs", workers)
		}
		for i := range off {
			if gotOff[i] != off[i] {
				t.Fatalf("workers %d: offset %d: %d, want %d", workers, i, gotOff[i], off[i])
			}
		}
		// Offsets from the NULs alone.
		parts = []StringsPart{{Values: values}}
		if err := Unterminate(parts, []string{"p"}, gotOff, gotData, workers); err != nil || string(gotData) != string(data) {
			t.Fatalf("from NULs: %v", err)
		}
	}
	bad := []StringsPart{{Values: []byte("ab\x00c"), Segments: []int64{0, 3}}}
	if err := Unterminate(bad, []string{"f:s"}, make([]int64, 3), make([]byte, 2), 2); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("got %v", err)
	}
	bad = []StringsPart{{Values: []byte("ab\x00c\x00"), Segments: []int64{3, 0}}}
	if err := Unterminate(bad, []string{"f:s"}, make([]int64, 3), make([]byte, 3), 2); err == nil {
		t.Fatal("segments that do not start at 0 were taken")
	}
}

// FuzzOpen feeds libhdf5 damaged files (mutations of a small file in
// Arkouda's layout) through what read_hdf does: open, list, describe,
// read. Any error is fine; a crash or a hang is not.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	name := filepath.Join(dir, "seed.h5")
	fh, _ := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	h, err := Create(fh, "seed.h5", false)
	if err != nil {
		f.Fatal(err)
	}
	h.SetAttrInt("/", "File_Format", FormatDistribute)
	h.Write("/a", pdarray.Int64, make([]byte, 80), 10, 1)
	h.WriteMeta("/a", ObjPdarray, false, "test")
	h.CreateGroup("/s")
	h.WriteMeta("/s", ObjStrings, false, "test")
	h.Write("/s/values", pdarray.Uint8, []byte("ab\x00\x00"), 4, 1)
	h.Write("/s/segments", pdarray.Int64, pdarray.AsBytes([]int64{0, 3}), 2, 1)
	h.Close()
	fh.Close()
	seed, _ := os.ReadFile(name)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte("\x89HDF\r\n\x1a\n"))
	// A compact dataset whose header claims fewer bytes than its elements
	// need: libhdf5 1.10's H5Dread crashed on it (Stat now refuses it).
	if b, err := os.ReadFile("testdata/compact-size.h5"); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.h5")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		h, err := Open(fh, "f.h5")
		if err != nil {
			return
		}
		defer h.Close()
		h.Attrs("/")
		objs, err := h.Objects()
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.Err != nil {
				continue
			}
			for _, p := range []string{"/" + o.Name, "/" + o.Name + "/values", "/" + o.Name + "/segments"} {
				ds, err := h.Stat(p)
				if err != nil || ds.Len > 1<<20 {
					continue
				}
				h.Read(ds, make([]byte, ds.Len*ds.DType.Size()), 2)
			}
		}
	})
}

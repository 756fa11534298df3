package client

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestShmMapRefusedFallsBack: where this process can map no more segments
// (vm.max_map_count: 65,530 mappings by default), a private download still
// comes out of the segment, bit-exact, since it reads the segment without
// mapping it, and the segment lent for it goes back (the next upload of its
// size is lent it again once the array is deleted); a view, which only a
// mapping can give, fails saying why; and mapping works again afterwards.
func TestShmMapRefusedFallsBack(t *testing.T) {
	ctx, c := dialServer(t)
	x := make([]int64, ShmCopyMin/8+777)
	for i := range x {
		x[i] = int64(i) * 3
	}
	a := pdarray.FromSlice(x)
	info, err := UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	if c.StreamNetwork() != "unix" {
		t.Fatalf("stream network %q, want unix", c.StreamNetwork())
	}
	stats := func() map[string]int64 {
		s, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before, copies := stats(), ShmCopies()
	orig := mapSegment // unix.Munmap knows only unix.Mmap's mappings
	mapSegment = func(int, int64, int, int, int) ([]byte, error) { return nil, syscall.ENOMEM }
	got, err := Download[int64](ctx, c, info.Name)
	_, verr := DownloadView[int64](ctx, c, info.Name)
	mapSegment = orig
	if err != nil || !bytes.Equal(pdarray.AsBytes(got), a.Bytes()) {
		t.Fatal("download with mapping refused:", err)
	}
	if ShmCopies() != copies+1 {
		t.Fatalf("copy-outs %d, want 1", ShmCopies()-copies)
	}
	if !errors.Is(verr, errMapFailed) || !errors.Is(verr, syscall.ENOMEM) {
		t.Fatalf("view with mapping refused: %v", verr)
	}
	if d := stats()["bytes_stream_out"] - before["bytes_stream_out"]; d != 0 {
		t.Fatalf("%d bytes streamed out, want none", d)
	}
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	mid := stats()
	info2, err := UploadArray(ctx, c, a) // the deleted array's segment: nothing maps it
	if err != nil {
		t.Fatal(err)
	}
	if d := stats()["pool_hits"] - mid["pool_hits"]; d != 1 {
		t.Fatalf("segment lent again %d times, want 1 (a refused mapping kept it)", d)
	}
	v, err := DownloadView[int64](ctx, c, info2.Name)
	if err != nil || len(v.Data) != len(x) || v.Data[len(x)-1] != x[len(x)-1] {
		t.Fatal("view after:", err)
	}
	v.Close()
}

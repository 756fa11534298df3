package client_test

import (
	"bytes"
	"math/bits"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
)

// freshPool empties the download pool and restores the default limit when
// the test ends. Other tests' downloads may be garbage not yet found: it
// collects until three rounds in a row hand nothing back.
func freshPool(t *testing.T) {
	t.Helper()
	for same, rounds := 0, 0; same < 3 && rounds < 500; rounds++ {
		_, _, before := client.DownloadPoolStats()
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if _, _, after := client.DownloadPoolStats(); after == before {
			same++
		} else {
			same = 0
		}
	}
	client.SetDownloadPool(0)
	client.SetDownloadPool(1 << 30)
	t.Cleanup(func() { client.SetDownloadPool(1 << 30) })
}

// waitIdle collects garbage until the pool holds want idle bytes (the
// finalizers that return buffers run on their own goroutine, after a cycle).
func waitIdle(t *testing.T, want int64) {
	t.Helper()
	var idle int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		runtime.GC()
		if _, _, idle = client.DownloadPoolStats(); idle == want {
			return
		}
	}
	t.Fatalf("download pool holds %d idle bytes, want %d", idle, want)
}

// TestDownloadPoolReuse: on every download path an array of 256 KiB and
// more lands in a pooled buffer; once nothing refers to it (a sub-slice still does, so it
// stays out) the next download of its size gets the same memory back,
// already faulted in, and both downloads are bit-exact.
func TestDownloadPoolReuse(t *testing.T) {
	srv := testserver.Start(t)
	cases := []struct {
		name string
		n    int // float64 elements
		opts []client.Option
	}{
		{"stream-unix", 5<<17 + 3, nil},                    // 5 MiB: under ShmCopyMin, off the unix stream
		{"shm-copy-out", client.ShmCopyMin/8 + 4_321, nil}, // read out of the array's segment
		{"stream-tcp", 5<<17 + 3, []client.Option{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")}},
		{"frames", 5<<17 + 3, []client.Option{client.WithTransport(client.TransportFrames)}},
		{"zstd", 5<<17 + 3, []client.Option{client.WithCompression("zstd")}},
		{"lane", 1023<<7 - 3, nil}, // under 1 MiB: read off the request lane into its buffer
		{"stream-mid", 3<<17 + 3, []client.Option{client.WithSharedMemory(false)}}, // 3 MiB, off the bulk stream
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			freshPool(t)
			ctx := ctxT(t)
			c := dial(t, srv.URL, tc.opts...)
			x := randomArray(pdarray.Float64, tc.n, uint64(i))
			info, err := client.UploadArray(ctx, c, x)
			if err != nil {
				t.Fatal(err)
			}
			rounded := int64(poolSize(tc.n * 8))
			h0, m0, _ := client.DownloadPoolStats()
			direct := client.LaneDirectDownloads()
			got, err := client.Download[float64](ctx, c, info.Name)
			if err != nil || !bytes.Equal(pdarray.AsBytes(got), x.Bytes()) {
				t.Fatal("first download differs:", err)
			}
			if lane := client.LaneDirectDownloads() != direct; lane != (tc.name == "lane") {
				t.Fatalf("download read off the lane: %v", lane)
			}
			if h, m, _ := client.DownloadPoolStats(); h != h0 || m != m0+1 || cap(got) != len(got) {
				t.Fatalf("first download: pool hits %d, misses %d, cap %d; want 0, 1, %d", h-h0, m-m0, cap(got), len(got))
			}
			addr := uintptr(unsafe.Pointer(&got[0])) // not a pointer: it must not keep the buffer alive
			keep := got[100:110]
			want := append([]float64(nil), keep...)
			got = nil
			for range 3 {
				runtime.GC()
			}
			if _, _, idle := client.DownloadPoolStats(); idle != 0 {
				t.Fatalf("a sub-slice is alive, yet %d bytes went back to the pool", idle)
			}
			if !bytes.Equal(pdarray.AsBytes(keep), pdarray.AsBytes(want)) {
				t.Fatal("the sub-slice changed")
			}
			runtime.KeepAlive(keep)
			keep = nil
			waitIdle(t, rounded)
			again, err := client.Download[float64](ctx, c, info.Name)
			if err != nil || !bytes.Equal(pdarray.AsBytes(again), x.Bytes()) {
				t.Fatal("download into a pooled buffer differs:", err)
			}
			if h, m, idle := client.DownloadPoolStats(); h != h0+1 || m != m0+1 || idle != 0 || uintptr(unsafe.Pointer(&again[0])) != addr {
				t.Fatalf("second download: pool hits %d, misses %d, idle %d, same memory %v; want 1, 1, 0, true", h-h0, m-m0, idle, uintptr(unsafe.Pointer(&again[0])) == addr)
			}
			// It comes back again; turned off, the pool drops it, and
			// neither hands out nor keeps buffers.
			again = nil
			waitIdle(t, rounded)
			client.SetDownloadPool(0)
			off, err := client.Download[float64](ctx, c, info.Name)
			if err != nil || !bytes.Equal(pdarray.AsBytes(off), x.Bytes()) {
				t.Fatal("download with the pool off differs:", err)
			}
			if h, m, idle := client.DownloadPoolStats(); h != h0+1 || m != m0+1 || idle != 0 {
				t.Fatalf("pool off: hits %d, misses %d, idle %d; want 1, 1, 0", h-h0, m-m0, idle)
			}
		})
	}
}

// poolSize is the pool's rounding (client/bufpool.go), written out: whole
// 2 MiB from 4 MiB, else eighths of the power of two at or below n.
func poolSize(n int) int {
	step := 2 << 20
	if n < 4<<20 {
		step = 1 << (bits.Len(uint(n)) - 4)
	}
	return (n + step - 1) &^ (step - 1)
}

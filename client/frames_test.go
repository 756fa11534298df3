package client_test

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// TestFramesReuseMemory: arrays sent in ZeroMQ frames land in memory malloc
// kept from the previous message (zframe.TuneMalloc, in the server and in
// this process), not in pages the kernel faults in and zeroes afresh. Before
// the tuning every 64 MiB transfer in 16 MiB frames faulted in 12,000 to
// 16,000 pages on each side (bench/transfer: 0.1-0.4 GiB/s for a 256 MiB
// upload from Go, about 2 GiB/s after); with it, none once the first
// transfer has grown the heaps.
func TestFramesReuseMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the tuning is glibc's")
	}
	if v, ok := os.LookupEnv("ARKTOS_FRAME_HEAP"); ok {
		if n, err := transfer.ParseBytes(v); err != nil || n == 0 {
			t.Skipf("ARKTOS_FRAME_HEAP=%q turns the tuning off", v)
		}
	}
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL, client.WithTransport(client.TransportFrames))
	if h := c.Config().FrameHeap; h <= 0 {
		t.Fatalf("the server reports frame_heap %d: its malloc is not tuned (zframe.TuneMalloc)", h)
	}
	const n = 8 << 20 // 64 MiB of int64: four frames of the default 16 MiB
	src := make([]int64, n)
	dst := make([]int64, n) // faulted in here, before anything is counted
	for i := range src {
		src[i] = int64(i) * 7
		dst[i] = -1
	}
	pages := int64(n * 8 / os.Getpagesize())
	// settle waits until what the last round held is given back, so that
	// a round counts only memory that was not kept, never memory not yet
	// let go: the server has closed the upload's frames (stats'
	// frames_held as before any transfer; a worker closes them after its
	// reply) and pooled the deleted array's buffer (pooled; a download's
	// frames hold it until libzmq lets go of them), and libzmq has let go
	// of this process's zero-copy upload (zframe.RefsLive; each request
	// here collects its release). Under load any of these can come late,
	// and the next upload then faults in a frame or a whole array afresh.
	// Its requests go over ZeroMQ (not the lane), before a round's counts.
	serverCall := func(cmd string) map[string]any {
		t.Helper()
		rep, m, err := c.Call(ctx, cmd, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		if err := rep.Err(); err != nil {
			t.Fatal(err)
		}
		return rep.Result
	}
	held0, _ := transfer.AsInt(serverCall("stats")["frames_held"]) // the stats request's own
	refs0 := zframe.RefsLive()
	settle := func(wantPooled int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			held, _ := transfer.AsInt(serverCall("stats")["frames_held"])
			pooled, _ := transfer.AsInt(serverCall("mem_used")["pooled"])
			refs := zframe.RefsLive()
			if held <= held0 && pooled >= wantPooled && refs <= refs0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s the last round still holds memory: server frames_held %d (want %d), pooled %d bytes (want %d), zero-copy sends pinned here %d (want %d)",
					held, held0, pooled, wantPooled, refs, refs0)
			}
		}
	}
	// The first two transfers grow the heaps (and the server's array
	// pool). After them a transfer may still fault one frame in now and
	// then, but not every frame of every transfer, as before the tuning:
	// each side's faults over the eight rounds stay under one and a half
	// transfers' pages (untuned: at least two, one frame a round in the
	// luckiest client, every page a round in the server; settle changes
	// none of that, as untuned malloc gives freed frames back at once).
	const rounds, priming = 10, 2
	var server, self int64
	for round := range rounds {
		if round > 0 {
			settle(n * 8) // the last round's array, deleted, is pooled for this one
		}
		st0, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		self0 := ownMinorFaults(t)
		info, err := client.Upload(ctx, c, src)
		if err != nil {
			t.Fatal(err)
		}
		if k, err := client.DownloadInto(ctx, c, info.Name, dst); err != nil || k != n {
			t.Fatalf("DownloadInto: %d, %v", k, err)
		}
		mine := ownMinorFaults(t) - self0
		st1, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, info.Name); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pdarray.AsBytes(dst), pdarray.AsBytes(src)) {
			t.Fatal("round trip in frames is not bit-exact")
		}
		if d := st1["bytes_copied_in"] - st0["bytes_copied_in"]; d != n*8 {
			t.Fatalf("the server copied %d bytes in, want %d: the upload did not travel in frames", d, n*8)
		}
		theirs := st1["minor_faults"] - st0["minor_faults"]
		t.Logf("round %d: %d pages moved each way; minor faults: server %d, client %d", round, pages, theirs, mine)
		if round >= priming {
			server += theirs
			self += mine
		}
	}
	if limit := pages * 3 / 2; server > limit || self > limit {
		t.Errorf("over %d transfers in frames of %d pages each way, %d minor faults in the server and %d in this process (limit %d each): malloc does not keep freed frames (zframe.TuneMalloc)",
			rounds-priming, pages, server, self, limit)
	}
}

func ownMinorFaults(t testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// TestUploadFramesWithoutCopy: an upload's payload frames go to libzmq in
// place (zframe.Refs), not copied into messages malloc gives it; the server
// gets every byte, libzmq lets go of the frames (they are unpinned at a
// later request), and the caller's array is its own again once Upload has
// returned.
func TestUploadFramesWithoutCopy(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1MiB")
	ctx := ctxT(t)
	c := dial(t, srv.URL, client.WithTransport(client.TransportFrames))
	xs := make([]float64, 3_000_001) // 23 frames of 1 MiB and less, each over the zero-copy minimum
	for i := range xs {
		xs[i] = float64(i) / 7
	}
	want := slices.Clone(xs)
	live, byRef := zframe.RefsLive(), zframe.BytesSentByRef()
	info, err := client.Upload(ctx, c, xs)
	if err != nil {
		t.Fatal(err)
	}
	if got := zframe.BytesSentByRef() - byRef; got != int64(len(xs)*8) {
		t.Errorf("%d bytes sent without a copy, want all %d", got, len(xs)*8)
	}
	for i := range xs {
		xs[i] = -1
	}
	back, err := client.Download[float64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdarray.AsBytes(back), pdarray.AsBytes(want)) {
		t.Fatal("the uploaded array is not what the caller's slice held at the call")
	}
	// libzmq released the frames long ago; the next request unpins them.
	for deadline := time.Now().Add(10 * time.Second); zframe.RefsLive() != live; {
		if time.Now().After(deadline) {
			t.Fatalf("%d zero-copy sends still pinned", zframe.RefsLive()-live)
		}
		if _, m, err := c.Call(ctx, "get_config", nil, nil); err != nil { // over ZeroMQ, not the lane
			t.Fatal(err)
		} else {
			m.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDownloadFramesInPlace: the server sends a download's frames from the
// array's own buffer (libzmq reads it in place: bytes_zero_copy_out, nothing
// copied), for an array in the Go heap (uploaded in frames) and one in a
// shared-memory segment (uploaded by a local client); the client gets every
// byte, and once libzmq has let go the request's hold on the array ends (a
// deleted array's buffer goes back to the server's pool).
func TestDownloadFramesInPlace(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1MiB")
	ctx := ctxT(t)
	c := dial(t, srv.URL, client.WithTransport(client.TransportFrames))
	local := dial(t, srv.URL) // shared memory on one host: its upload's segment becomes the array
	xs := make([]int64, 3_000_001)
	for i := range xs {
		xs[i] = int64(i)*3 - 7
	}
	nb := int64(len(xs) * 8)
	for _, tc := range []struct {
		name string
		up   *client.Client
	}{{"heap", c}, {"segment", local}} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := client.Upload(ctx, tc.up, xs)
			if err != nil {
				t.Fatal(err)
			}
			st0, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			back, err := client.Download[int64](ctx, c, info.Name)
			if err != nil {
				t.Fatal(err)
			}
			st1, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pdarray.AsBytes(back), pdarray.AsBytes(xs)) {
				t.Fatal("download in frames is not bit-exact")
			}
			if in, cp := st1["bytes_zero_copy_out"]-st0["bytes_zero_copy_out"], st1["bytes_copied_out"]-st0["bytes_copied_out"]; in != nb || cp != 0 {
				t.Errorf("server sent %d bytes in place and copied %d; want %d and 0", in, cp, nb)
			}
			if err := c.Delete(ctx, info.Name); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The heap array's buffer is pooled once its download's hold ends.
	for deadline := time.Now().Add(10 * time.Second); ; {
		rep, m, err := c.Call(ctx, "mem_used", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		pooled, _ := transfer.AsInt(rep.Result["pooled"])
		if pooled >= nb {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pooled %d bytes, want at least %d: a download in frames still holds its deleted array", pooled, nb)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

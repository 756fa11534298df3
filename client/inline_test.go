package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
)

// counts returns a function giving how many requests the server took over
// ZeroMQ since now, and how many bytes it streamed out. The stats requests
// go over the lane; the first is counted in the second's requests and
// lane_requests alike, so the difference leaves both out.
func counts(t *testing.T, ctx context.Context, c *client.Client) func() (zmq, streamed int64) {
	t.Helper()
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return func() (int64, int64) {
		t.Helper()
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d := func(k string) int64 { return after[k] - before[k] }
		return d("requests") - d("lane_requests"), d("bytes_stream_out")
	}
}

// TestDownloadInline: a whole-array Download, whose size the client does
// not know, asks over the request lane: a small array comes back in the
// lane's reply and nothing goes over ZeroMQ; a large one, before the client
// has a stream, is described, a stream is opened for it (the one ZeroMQ
// request) and its bytes come on it; then large downloads take the lane and
// the stream only. Over shared memory alike (the copy-out's release is on
// ZeroMQ). Every result is bit-exact; errors come back over the lane and
// the client goes on.
func TestDownloadInline(t *testing.T) {
	srv := testserver.Start(t)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"tcp", []client.Option{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")}},
		{"shm", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dial(t, srv.URL, tc.opts...)
			if !c.Config().DownloadInline {
				t.Fatal("the server does not say download_inline")
			}
			small := randomArray(pdarray.Float64, 1000, 1)
			large := randomArray(pdarray.Float64, 3<<17+5, 2) // 3 MiB: streamed
			huge := randomArray(pdarray.Float64, client.ShmCopyMin/8+9, 3)
			var names []string
			for _, a := range []*pdarray.Array{small, large, huge} {
				info, err := client.UploadArray(ctx, c, a)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, info.Name)
			}
			c.Close() // a fresh client, with no stream yet
			c = dial(t, srv.URL, tc.opts...)

			check := func(what string, name string, want *pdarray.Array, wantZmq, wantStreamed int64) {
				t.Helper()
				n := counts(t, ctx, c)
				lanes := client.LaneDownloads()
				got, err := client.Download[float64](ctx, c, name)
				if err != nil || !bytes.Equal(pdarray.AsBytes(got), want.Bytes()) {
					t.Fatalf("%s: download differs: %v", what, err)
				}
				zmq, streamed := n()
				if zmq != wantZmq || client.LaneDownloads() == lanes || streamed != wantStreamed {
					t.Fatalf("%s: %d ZeroMQ requests, %d lane downloads, %d bytes streamed; want %d, at least 1, %d", what, zmq, client.LaneDownloads()-lanes, streamed, wantZmq, wantStreamed)
				}
			}
			check("small, no stream", names[0], small, 0, 0)
			check("large, no stream yet", names[1], large, 1, int64(large.NBytes())) // open_stream
			check("large", names[1], large, 0, int64(large.NBytes()))
			check("small, with a stream", names[0], small, 0, 0)
			if tc.name == "shm" {
				if c.StreamNetwork() != "unix" {
					t.Fatalf("stream network %q, want unix", c.StreamNetwork())
				}
				copies := client.ShmCopies()
				check("copy-out", names[2], huge, 1, 0) // shm_release
				if client.ShmCopies() != copies+1 {
					t.Fatal("the huge array was not copied out of its segment")
				}
			} else {
				// Over TCP it is large enough to open the stripes the next
				// one is split across (an open_stream each).
				check("huge", names[2], huge, client.DefaultStripes-1, int64(huge.NBytes()))
			}
			// Into a caller's buffer larger than the lane's payload.
			dst := make([]float64, large.Len()+3)
			if k, err := client.DownloadInto(ctx, c, names[1], dst); err != nil || k != large.Len() || !bytes.Equal(pdarray.AsBytes(dst[:k]), large.Bytes()) {
				t.Fatal("DownloadInto:", k, err)
			}
			// Errors come back over the lane; the lane and the stream go on.
			if _, err := client.Download[int64](ctx, c, names[0]); err == nil || !strings.Contains(err.Error(), "float64") {
				t.Fatalf("wrong dtype: %v", err)
			}
			lanes := client.LaneDownloads()
			if _, err := client.Download[float64](ctx, c, "no_such_array"); err == nil || !strings.Contains(err.Error(), "no_such_array") {
				t.Fatalf("missing array: %v", err)
			}
			if client.LaneDownloads() != lanes {
				t.Error("a refused download was counted as a lane download")
			}
			check("after errors", names[1], large, 0, int64(large.NBytes()))
		})
	}
}

// TestDownloadInlineRaw: inline_max over ZeroMQ, as any client may send it:
// an array over it, with no stream, is only described ("inline": false,
// its size and dtype, counted as no download); at or under it, it comes
// inline.
func TestDownloadInlineRaw(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	if _, err := client.Upload(ctx, c, make([]int32, 1000), client.WithName("x")); err != nil {
		t.Fatal(err)
	}
	d := statsDelta(t, ctx, c)
	for _, tc := range []struct {
		max    int
		inline bool
	}{{3999, false}, {4000, true}, {0, false}} {
		rep, err := c.SendRaw(ctx, [][]byte{header(t, 77, "download", map[string]any{"name": "x", "inline_max": tc.max})})
		if err != nil || rep.Err() != nil {
			t.Fatal(err, rep.Err())
		}
		r := rep.Result
		if r["inline"] != tc.inline || r["dtype"] != "int32" || fmt.Sprint(r["nbytes"]) != "4000" || fmt.Sprint(r["size"]) != "1000" {
			t.Fatalf("inline_max %d: %v; want inline %v, int32, 1000 elements, 4000 bytes", tc.max, r, tc.inline)
		}
	}
	if got := d("downloads"); got != 1 {
		t.Fatalf("%d downloads counted, want 1 (the inline one)", got)
	}
}

// TestDownloadInlineOlderServer: a server that does not say download_inline
// (ARKTOS_DEBUG_NO_DOWNLOAD_INLINE makes ours one) is never sent inline_max:
// whole downloads go over ZeroMQ as before, bit-exact.
func TestDownloadInlineOlderServer(t *testing.T) {
	t.Setenv("ARKTOS_DEBUG_NO_DOWNLOAD_INLINE", "1")
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	if c.Config().DownloadInline {
		t.Fatal("the server says download_inline")
	}
	for _, a := range []*pdarray.Array{randomArray(pdarray.Int64, 100, 1), randomArray(pdarray.Int64, 3<<17, 2)} {
		info, err := client.UploadArray(ctx, c, a)
		if err != nil {
			t.Fatal(err)
		}
		lanes := client.LaneDownloads()
		n := counts(t, ctx, c)
		got, err := client.Download[int64](ctx, c, info.Name)
		if err != nil || !bytes.Equal(pdarray.AsBytes(got), a.Bytes()) {
			t.Fatal("download differs:", err)
		}
		if zmq, _ := n(); zmq < 1 || client.LaneDownloads() != lanes {
			t.Fatalf("%d ZeroMQ requests, %d lane downloads; want the download on ZeroMQ", zmq, client.LaneDownloads()-lanes)
		}
	}
}

// TestStreamUploadOverLane: an upload whose bytes go on the bulk stream, or
// into a lent segment, sends its request over the lane: once the stream is
// open no ZeroMQ request is made (a lease is asked for on ZeroMQ), and the
// arrays come back bit-exact.
func TestStreamUploadOverLane(t *testing.T) {
	srv := testserver.Start(t)
	for _, tc := range []struct {
		name    string
		opts    []client.Option
		n       int
		wantZmq int64
	}{
		{"tcp", []client.Option{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")}, 3<<17 + 1, 0},
		{"shm", nil, client.ShmCopyMin/8 + 1, 1}, // shm_lease
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dial(t, srv.URL, tc.opts...)
			for i := range 3 {
				a := randomArray(pdarray.Float64, tc.n, uint64(i))
				n := counts(t, ctx, c)
				ups := client.LaneStreamUploads()
				info, err := client.UploadArray(ctx, c, a)
				if err != nil {
					t.Fatal(err)
				}
				zmq, _ := n()
				if i > 0 && (zmq != tc.wantZmq || client.LaneStreamUploads() != ups+1) {
					t.Fatalf("upload %d: %d ZeroMQ requests, %d over the lane; want %d, 1", i, zmq, client.LaneStreamUploads()-ups, tc.wantZmq)
				}
				back, err := client.DownloadArray(ctx, c, info.Name)
				if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
					t.Fatal("round trip differs:", err)
				}
			}
		})
	}
}

// TestLaneDeadlineLeavesNothing: requests over the lane cut short by their
// deadline fail with context.DeadlineExceeded (the lane connection's timer,
// set to the same deadline, may fire first), and the arrays their late
// replies name are deleted.
func TestLaneDeadlineLeavesNothing(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	src, err := c.Random(ctx, "uniform", 2<<20, 1, 0.0, 1.0)
	if err != nil {
		t.Fatal(err)
	}
	m0, err := c.MemUsed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		short, cancel := context.WithTimeout(ctx, 3*time.Millisecond)
		sorted, err := c.Sort(short, src.Name)
		cancel()
		if err == nil { // (in time on a fast machine: the count below is of the rest)
			if err := c.Delete(ctx, sorted.Name); err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a sort cut short by its deadline: %v, not context.DeadlineExceeded", err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		m1, err := c.MemUsed(ctx) // reads late replies, deletes what they named
		if err != nil {
			t.Fatal(err)
		}
		if m1.Arrays == m0.Arrays {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d arrays left after the cut-short sorts, want %d", m1.Arrays, m0.Arrays)
		}
	}
}

// TestDownloadIntoUnaligned: DownloadInto a destination that does not start
// on 8 bytes (a byte slice from an odd offset, an int32 slice from the
// second element) works over every path, small (lane) and streamed; it
// failed "buffer is not 8-byte aligned" where the download wrapped dst.
func TestDownloadIntoUnaligned(t *testing.T) {
	srv := testserver.Start(t)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"tcp", []client.Option{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")}},
		{"frames", []client.Option{client.WithSharedMemory(false), client.WithTransport(client.TransportFrames), client.WithLane(false)}},
		{"shm", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := dial(t, srv.URL, tc.opts...)
			for _, n := range []int{3, 1000, 3 << 18} {
				src := make([]int8, n)
				for i := range src {
					src[i] = int8(i*7 + 1)
				}
				info, err := client.Upload(ctx, c, src)
				if err != nil {
					t.Fatal(err)
				}
				buf := make([]int8, n+9)
				dst := buf[1 : n+1]
				got, err := client.DownloadInto(ctx, c, info.Name, dst)
				if err != nil || got != n || !slices.Equal(dst, src) || buf[0] != 0 || buf[n+1] != 0 {
					t.Fatalf("n=%d: %d, %v", n, got, err)
				}
				src32 := make([]int32, n)
				for i := range src32 {
					src32[i] = int32(i) - 5
				}
				info, err = client.Upload(ctx, c, src32)
				if err != nil {
					t.Fatal(err)
				}
				dst32 := make([]int32, n+1)[1:]
				if got, err := client.DownloadInto(ctx, c, info.Name, dst32); err != nil || got != n || !slices.Equal(dst32, src32) {
					t.Fatalf("int32 n=%d: %d, %v", n, got, err)
				}
				if _, err := client.DownloadInto(ctx, c, info.Name, dst32[:n-1]); err == nil || !strings.Contains(err.Error(), "more than") {
					t.Fatalf("a short unaligned destination: %v", err)
				}
			}
		})
	}
}

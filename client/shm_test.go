package client_test

import (
	"bytes"
	"context"
	"math"
	"net"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// statsDelta returns a function giving how much counter k grew since now.
func statsDelta(t *testing.T, ctx context.Context, c *client.Client) func(k string) int64 {
	t.Helper()
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return func(k string) int64 {
		t.Helper()
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return after[k] - before[k]
	}
}

// TestShmUploadAndView: with the server on this host an upload goes through
// a shared-memory segment that becomes the array (the server copies
// nothing), and a view of it maps that same segment (nothing copied again).
// Both are bit-exact.
func TestShmUploadAndView(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	a := randomArray(pdarray.Float64, 3_000_001, 5)
	d := statsDelta(t, ctx, c)
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	if d("shm_uploads") != 1 || d("bytes_copied_in") != 0 || d("bytes_stream_in") != 0 {
		t.Fatalf("upload: shm_uploads %d, copied in %d, streamed in %d; want 1, 0, 0", d("shm_uploads"), d("bytes_copied_in"), d("bytes_stream_in"))
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != int64(a.NBytes()) {
		t.Errorf("a segment-backed array counts %d bytes, want %d", mem.Used, a.NBytes())
	}
	v, err := client.DownloadView[float64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.Shared() || !bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()) {
		t.Fatalf("view: shared %v, bit-exact %v", v.Shared(), bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()))
	}
	if d("shm_views") != 1 || d("bytes_copied_out") != 0 || d("shm_adopted") != 0 {
		t.Fatalf("view: shm_views %d, copied out %d, adopted %d; want 1, 0, 0", d("shm_views"), d("bytes_copied_out"), d("shm_adopted"))
	}
	// The ordinary download stays a private, writable copy (copied out of the
	// segment: TestShmCopyOut).
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
		t.Fatal("download of a segment-backed array:", err)
	}
	// An operation reads the segment like any array.
	sum, _, err := c.Reduce(ctx, "sum", info.Name)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, x := range pdarray.View[float64](a) {
		want += x
	}
	if got, _ := sum.(float64); got-want > 1e-6*max(1, want) || want-got > 1e-6*max(1, want) {
		t.Errorf("sum over the segment %v, want about %v", sum, want)
	}
}

// TestShmViewSurvivesWriteAndDelete: a write into an array that a client
// views copies the array first (the view keeps the old bytes), and deleting
// the array leaves the view valid. The first view of an array made on the
// server copies it once into a segment; the next view copies nothing.
func TestShmViewSurvivesWriteAndDelete(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	info, err := c.Arange(ctx, 0, 1<<20, 1) // 8 MiB of int64, made by an operation
	if err != nil {
		t.Fatal(err)
	}
	d := statsDelta(t, ctx, c)
	v1, err := client.DownloadView[int64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer v1.Close()
	if d("shm_adopted") != 1 || d("bytes_copied_out") != int64(info.NBytes) {
		t.Fatalf("first view: adopted %d, copied out %d; want 1, %d", d("shm_adopted"), d("bytes_copied_out"), info.NBytes)
	}
	v2, err := client.DownloadView[int64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if d("shm_adopted") != 1 || d("bytes_copied_out") != int64(info.NBytes) || d("shm_views") != 2 {
		t.Fatalf("second view: adopted %d, copied out %d, views %d; want 1, %d, 2", d("shm_adopted"), d("bytes_copied_out"), d("shm_views"), info.NBytes)
	}
	if _, err := c.Op(ctx, "setitem", map[string]any{"a": info.Name, "index": 5, "value_scalar": -1}); err != nil {
		t.Fatal(err)
	}
	if err := c.BinopInPlace(ctx, "+", client.Arr(info.Name), client.Py(1), info.Name); err != nil {
		t.Fatal(err)
	}
	if d("shm_copies_on_write") != 1 {
		t.Errorf("copies on write %d, want 1 (the second write finds an ordinary buffer)", d("shm_copies_on_write"))
	}
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	// The views map the segment themselves: the server unmapping its own
	// mapping (delete, copy on write) leaves them intact.
	for i, x := range v1.Data {
		if x != int64(i) || v2.Data[i] != int64(i) {
			t.Fatalf("view element %d is %d / %d after setitem and delete, want %d", i, x, v2.Data[i], i)
		}
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != 0 {
		t.Errorf("server holds %d bytes after the delete, want 0", mem.Used)
	}
}

// TestShmViewAfterWrite: a view taken after a write sees the written bytes.
func TestShmViewAfterWrite(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	info, err := client.Upload(ctx, c, make([]int32, 1<<19))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Op(ctx, "setitem", map[string]any{"a": info.Name, "index": 7, "value_scalar": 42}); err != nil {
		t.Fatal(err)
	}
	v, err := client.DownloadView[int32](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.Shared() || v.Data[7] != 42 || v.Data[6] != 0 {
		t.Fatalf("view after setitem: shared %v, [6:8] = %v", v.Shared(), v.Data[6:8])
	}
}

// TestShmNeverOverTCP: a client whose stream is TCP (a remote server) never
// uses shared memory; its uploads stream and its views are private copies.
// WithSharedMemory(false) does the same on a unix stream.
func TestShmNeverOverTCP(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	for _, opts := range [][]client.Option{
		{client.WithStreamNetwork("tcp")},
		{client.WithSharedMemory(false)},
		{client.WithTransport(client.TransportFrames)},
	} {
		c := dial(t, srv.URL, opts...)
		a := randomArray(pdarray.Int64, 1<<18, 3)
		d := statsDelta(t, ctx, c)
		info, err := client.UploadArray(ctx, c, a)
		if err != nil {
			t.Fatal(err)
		}
		v, err := client.DownloadView[int64](ctx, c, info.Name)
		if err != nil {
			t.Fatal(err)
		}
		if v.Shared() || !bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()) {
			t.Fatalf("%d: view shared %v, bit-exact %v", len(opts), v.Shared(), bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()))
		}
		v.Close()
		if d("shm_uploads") != 0 || d("shm_views") != 0 {
			t.Fatalf("shm used: %d uploads, %d views", d("shm_uploads"), d("shm_views"))
		}
	}
}

// rawStream opens a unix bulk stream by hand and returns its id and socket.
func rawStream(t *testing.T, ctx context.Context, c *client.Client) (any, *net.UnixConn) {
	t.Helper()
	res, om, err := c.Call(ctx, "open_stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	om.Close()
	ticket, _ := res.Result["ticket"].([]byte)
	conn, err := net.Dial("unix", res.Result["unix"].(string))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.Write(append([]byte(transfer.StreamMagic), ticket...))
	conn.Read(make([]byte, 1))
	return res.Result["stream"], conn.(*net.UnixConn)
}

// rawCall sends one request and returns its reply's error.
func rawCall(t *testing.T, ctx context.Context, c *client.Client, cmd string, args map[string]any) error {
	t.Helper()
	rep, m, err := c.Call(ctx, cmd, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	return rep.Err()
}

// rawShmUpload sends an upload with shm=true over a unix stream by hand,
// passing fd (or no descriptor when fd < 0), and returns the reply's error.
func rawShmUpload(t *testing.T, ctx context.Context, c *client.Client, size int, fd int) error {
	t.Helper()
	id, conn := rawStream(t, ctx, c)
	go func() {
		if fd >= 0 {
			conn.WriteMsgUnix([]byte{'S'}, unix.UnixRights(fd), nil)
		} else {
			conn.CloseWrite()
		}
	}()
	return rawCall(t, ctx, c, "upload", map[string]any{"dtype": "int64", "size": size, "stream": id, "shm": true})
}

func memfd(t *testing.T, n int, seals int) int {
	t.Helper()
	fd, err := unix.MemfdCreate("test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		t.Fatal(err)
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
	}
	return fd
}

// TestShmBadSegments: a descriptor that is missing, not a memfd, unsealed
// or shorter than declared fails the upload with a clear error; the server
// keeps serving and keeps what it stored.
func TestShmBadSegments(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	keep, err := client.Upload(ctx, c, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	sealed := unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, tc := range []struct {
		name   string
		fd     int
		code   transfer.Code
		substr string
	}{
		{"no descriptor", -1, transfer.PayloadLength, "no descriptor arrived"},
		{"a pipe", int(pr.Fd()), transfer.InvalidData, "not a memfd"},
		{"unsealed", memfd(t, 1<<20, 0), transfer.InvalidData, "not sealed"},
		{"shorter than declared", memfd(t, 4096, sealed), transfer.InvalidData, "holds 4096 bytes but the upload declares 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, rawShmUpload(t, ctx, c, 1<<17, tc.fd), tc.code, tc.substr)
		})
	}
	got, err := client.Download[int64](ctx, c, keep.Name)
	if err != nil || len(got) != 3 || got[2] != 3 {
		t.Fatalf("stored array after bad segments: %v, %v", got, err)
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != 24 || mem.Arrays != 1 {
		t.Fatalf("server holds %d bytes in %d arrays, want 24 in 1", mem.Used, mem.Arrays)
	}
	// A good upload still works after all that.
	mustRoundTrip(t, ctx, c, randomArray(pdarray.Int64, 1<<18, 8))
}

// mustRoundTrip uploads a and checks that a download gives it back
// bit-exactly.
func mustRoundTrip(t *testing.T, ctx context.Context, c *client.Client, a *pdarray.Array) {
	t.Helper()
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
		t.Fatal("round trip is not bit-exact:", err)
	}
}

// TestShmLeasedSegmentsReused: a deleted array's leased segment is lent
// again for the next upload of about its size (its pages are in memory
// already, so the client copies into it through a mapping, where it writes
// a new segment's pages with pwrite), unless a client still maps a view of
// it: that view keeps its bytes while the next upload fills another
// segment. A closed view no longer holds the segment back.
func TestShmLeasedSegmentsReused(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	upload := func(seed uint64) (*pdarray.Array, client.ArrayInfo) {
		t.Helper()
		a := randomArray(pdarray.Int64, client.ShmThreshold/8, seed)
		info, err := client.UploadArray(ctx, c, a)
		if err != nil {
			t.Fatal(err)
		}
		return a, info
	}
	mapped := client.ShmMappedWrites()
	_, first := upload(1)
	if client.ShmMappedWrites() != mapped {
		t.Fatal("a new segment was written through a mapping")
	}
	if err := c.Delete(ctx, first.Name); err != nil {
		t.Fatal(err)
	}
	d := statsDelta(t, ctx, c)
	a, info := upload(2)
	if d("pool_hits") != 1 || d("shm_uploads") != 1 || client.ShmMappedWrites() != mapped+1 {
		t.Fatalf("second upload: pool hits %d, shm uploads %d, mapped writes %d; want 1, 1, 1", d("pool_hits"), d("shm_uploads"), client.ShmMappedWrites()-mapped)
	}
	v, err := client.DownloadView[int64](ctx, c, info.Name)
	if err != nil || !v.Shared() {
		t.Fatal("view:", err)
	}
	defer v.Close()
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	d = statsDelta(t, ctx, c)
	mustRoundTrip(t, ctx, c, randomArray(pdarray.Int64, client.ShmThreshold/8, 3))
	if d("pool_hits") != 0 {
		t.Fatalf("a segment a view maps was lent again (%d pool hits)", d("pool_hits"))
	}
	if !bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()) {
		t.Fatal("a view changed after its array was deleted and another uploaded")
	}
	// A view closed (released) before the delete lets the segment be lent again.
	_, info = upload(4)
	w, err := client.DownloadView[int64](ctx, c, info.Name)
	if err != nil || !w.Shared() {
		t.Fatal("view:", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	d = statsDelta(t, ctx, c)
	b, info := upload(5)
	if d("pool_hits") != 1 {
		t.Fatalf("a released segment was not lent again (%d pool hits)", d("pool_hits"))
	}
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), b.Bytes()) {
		t.Fatal("an upload into a pooled segment is not bit-exact:", err)
	}
}

// TestShmAdoptIntoPooledSegment: the first view of an array made on the
// server copies it into a segment; when a pooled one of its size is free
// the server copies through a mapping (shm_mapped_fills), and the view
// holds the array's bytes exactly.
func TestShmAdoptIntoPooledSegment(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	view := func(info client.ArrayInfo) *client.View[int64] {
		t.Helper()
		v, err := client.DownloadView[int64](ctx, c, info.Name)
		if err != nil || !v.Shared() {
			t.Fatal("view:", err)
		}
		return v
	}
	first, err := c.Arange(ctx, 0, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := statsDelta(t, ctx, c)
	if err := view(first).Close(); err != nil {
		t.Fatal(err)
	}
	if d("shm_adopted") != 1 || d("shm_mapped_fills") != 0 {
		t.Fatalf("first view: adopted %d, mapped fills %d; want 1, 0 (a new segment)", d("shm_adopted"), d("shm_mapped_fills"))
	}
	if err := c.Delete(ctx, first.Name); err != nil {
		t.Fatal(err)
	}
	second, err := c.Arange(ctx, 7, 7+3*(1<<20), 3)
	if err != nil {
		t.Fatal(err)
	}
	d = statsDelta(t, ctx, c)
	v := view(second)
	defer v.Close()
	if d("shm_adopted") != 1 || d("pool_hits") != 1 || d("shm_mapped_fills") != 1 {
		t.Fatalf("second view: adopted %d, pool hits %d, mapped fills %d; want 1, 1, 1", d("shm_adopted"), d("pool_hits"), d("shm_mapped_fills"))
	}
	for i, x := range v.Data {
		if x != int64(7+3*i) {
			t.Fatalf("view[%d] = %d, want %d", i, x, 7+3*i)
		}
	}
}

// TestShmLeaseEnds: a lent segment's bytes are reserved until its upload;
// a lease that is not used ends with its stream (close_stream), and an
// upload that does not match its lease is refused and ends it.
func TestShmLeaseEnds(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	used := func() int64 {
		t.Helper()
		mem, err := c.MemUsed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return mem.Used
	}
	id, _ := rawStream(t, ctx, c)
	wantCode(t, rawCall(t, ctx, c, "upload", map[string]any{"dtype": "int64", "size": 4, "stream": id, "lease": true}),
		transfer.ArgumentValue, "needs a segment leased on stream")
	id, _ = rawStream(t, ctx, c)
	if err := rawCall(t, ctx, c, "shm_lease", map[string]any{"stream": id, "nbytes": 4 << 20}); err != nil {
		t.Fatal(err)
	}
	if got := used(); got != 4<<20 {
		t.Fatalf("a lease reserves %d bytes, want %d", got, 4<<20)
	}
	if err := rawCall(t, ctx, c, "close_stream", map[string]any{"stream": id}); err != nil {
		t.Fatal(err)
	}
	if got := used(); got != 0 {
		t.Fatalf("%d bytes still reserved after the lease's stream closed", got)
	}
	id, _ = rawStream(t, ctx, c)
	if err := rawCall(t, ctx, c, "shm_lease", map[string]any{"stream": id, "nbytes": 4 << 20}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, rawCall(t, ctx, c, "upload", map[string]any{"dtype": "int64", "size": 1, "stream": id, "lease": true}),
		transfer.ArgumentValue, "holds 4194304 bytes but the upload declares 8")
	if got := used(); got != 0 {
		t.Fatalf("%d bytes still reserved after a refused lease upload", got)
	}
	id, _ = rawStream(t, ctx, c)
	wantCode(t, rawCall(t, ctx, c, "shm_lease", map[string]any{"stream": id, "nbytes": 0}), transfer.ArgumentValue, "nbytes must be")
}

// TestShmServerWithoutMemfd: a server that can make no shared-memory
// segment (out of descriptors or memory) lends none and answers views over
// the stream: uploads stream, views are private copies, and nothing fails.
func TestShmServerWithoutMemfd(t *testing.T) {
	t.Setenv("ARKTOS_DEBUG_NO_MEMFD", "1")
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	a := randomArray(pdarray.Int64, client.ShmThreshold/8, 4)
	d := statsDelta(t, ctx, c)
	mustRoundTrip(t, ctx, c, a)
	info, err := c.Arange(ctx, 0, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.DownloadView[int64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v.Shared() || len(v.Data) != 1<<20 || v.Data[12345] != 12345 {
		t.Fatalf("view without memfd: shared %v, %d elements", v.Shared(), len(v.Data))
	}
	v.Close()
	if d("shm_uploads") != 0 || d("shm_views") != 0 || d("bytes_stream_in") != int64(a.NBytes()) {
		t.Fatalf("shm uploads %d, views %d, streamed in %d", d("shm_uploads"), d("shm_views"), d("bytes_stream_in"))
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != int64(a.NBytes()+info.NBytes) {
		t.Fatalf("server holds %d bytes, want %d", mem.Used, a.NBytes()+info.NBytes)
	}
}

// TestShmCopyOut: a private download of 16 MiB or more from a server on this
// host reads the array's segment (ShmCopies counts it);
// smaller arrays, ranges, a wrong dtype and clients without shared memory
// take the stream or frames. Every result is bit-exact and writable.
func TestShmCopyOut(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	big := randomArray(pdarray.Float64, client.ShmCopyMin/8+12_345, 9)
	info, err := client.UploadArray(ctx, c, big) // lent segment: a read-only view, released after
	if err != nil {
		t.Fatal(err)
	}
	if c.StreamNetwork() != "unix" {
		t.Fatalf("stream network %q, want unix", c.StreamNetwork())
	}
	copies, uninit := client.ShmCopies(), pdarray.UninitAllocs.Load()
	bufHits, _, _ := client.DownloadPoolStats()
	d := statsDelta(t, ctx, c)
	got, err := client.Download[float64](ctx, c, info.Name)
	if err != nil || !bytes.Equal(pdarray.AsBytes(got), big.Bytes()) {
		t.Fatal("copy-out download differs:", err)
	}
	if h, _, _ := client.DownloadPoolStats(); pdarray.UninitAllocs.Load() == uninit && h == bufHits {
		t.Error("the copy-out download cleared its new memory before copying over it")
	}
	got[0] = 42 // private and writable
	if client.ShmCopies() != copies+1 || d("shm_views") != 1 {
		t.Fatalf("copy-outs %d, shm_views %d; want 1, 1", client.ShmCopies()-copies, d("shm_views"))
	}
	// Into a caller's buffer, longer than the array.
	dst := make([]float64, big.Len()+10)
	if n, err := client.DownloadInto(ctx, c, info.Name, dst); err != nil || n != big.Len() || !bytes.Equal(pdarray.AsBytes(dst[:n]), big.Bytes()) {
		t.Fatal("copy-out DownloadInto:", n, err)
	}
	// An array made on the server is copied once into a segment, then out.
	neg, err := c.Unop(ctx, "neg", info.Name)
	if err != nil {
		t.Fatal(err)
	}
	back, err := client.DownloadArray(ctx, c, neg.Name)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range pdarray.View[float64](back) {
		if math.Float64bits(x) != math.Float64bits(-pdarray.View[float64](big)[i]) {
			t.Fatalf("element %d: %v, want %v", i, x, -pdarray.View[float64](big)[i])
		}
	}
	if client.ShmCopies() != copies+3 || d("shm_adopted") != 1 {
		t.Fatalf("copy-outs %d, adopted %d; want 3, 1", client.ShmCopies()-copies, d("shm_adopted"))
	}
	// A wrong dtype is refused, and the client goes on.
	if _, err := client.Download[int64](ctx, c, info.Name); err == nil || !strings.Contains(err.Error(), "ask for []float64") {
		t.Fatalf("wrong dtype: %v", err)
	}
	// Both downloads released the lent segment (one copied out, one
	// refused): deleted, the array's segment is pooled, and the next upload
	// of its size fills it.
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	hits := d("pool_hits")
	if info, err = client.UploadArray(ctx, c, big); err != nil {
		t.Fatal(err)
	}
	if d("pool_hits") != hits+1 {
		t.Fatalf("the next upload took %d pooled segments, want 1: a download kept the segment from the pool", d("pool_hits")-hits)
	}
	// Under ShmCopyMin, and ranges: over the stream, no segment.
	small := randomArray(pdarray.Int64, (client.ShmCopyMin-8)/8, 4)
	sinfo, err := client.UploadArray(ctx, c, small)
	if err != nil {
		t.Fatal(err)
	}
	views := d("shm_views")
	if xs, err := client.Download[int64](ctx, c, sinfo.Name); err != nil || !bytes.Equal(pdarray.AsBytes(xs), small.Bytes()) {
		t.Fatal("small download:", err)
	}
	if xs, err := client.DownloadRange[float64](ctx, c, info.Name, 5, big.Len()); err != nil || !bytes.Equal(pdarray.AsBytes(xs), big.Bytes()[40:]) {
		t.Fatal("range download:", err)
	}
	if client.ShmCopies() != copies+3 || d("shm_views") != views {
		t.Fatalf("small and range downloads used shared memory: %d copy-outs, %d views", client.ShmCopies()-copies-3, d("shm_views")-views)
	}
	// A client without shared memory reads the stream.
	c2 := dial(t, srv.URL, client.WithSharedMemory(false))
	if _, err := client.UploadArray(ctx, c2, small); err != nil { // opens its stream
		t.Fatal(err)
	}
	if xs, err := client.Download[float64](ctx, c2, info.Name); err != nil || !bytes.Equal(pdarray.AsBytes(xs), big.Bytes()) {
		t.Fatal("download without shared memory:", err)
	}
	if client.ShmCopies() != copies+3 {
		t.Fatal("a client without shared memory copied out of a segment")
	}
}

// TestShmOneOffCounted: a view that needs a one-off copy in a fresh segment
// (here: the array cannot be adopted, the server being nearly full) takes
// it only when --max-memory has room for it; otherwise the bytes stream.
// Either way the view is bit-exact and nothing stays reserved.
func TestShmOneOffCounted(t *testing.T) {
	srv := testserver.Start(t, "--max-memory", "10MiB")
	ctx := ctxT(t)
	plain := dial(t, srv.URL, client.WithSharedMemory(false))
	a := randomArray(pdarray.Float64, 6<<20/8, 6) // 6 MiB, an ordinary buffer
	info, err := client.UploadArray(ctx, plain, a)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.URL)
	d := statsDelta(t, ctx, c)
	v, err := client.DownloadView[float64](ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v.Shared() || !bytes.Equal(pdarray.AsBytes(v.Data), a.Bytes()) || d("shm_views") != 0 || d("shm_adopted") != 0 {
		t.Fatalf("view with no room for a copy: shared %v, views %d, adopted %d (want streamed)", v.Shared(), d("shm_views"), d("shm_adopted"))
	}
	v.Close()
	if mem, _ := c.MemUsed(ctx); mem.Used != int64(a.NBytes()) {
		t.Fatalf("used %d after the view, want %d", mem.Used, a.NBytes())
	}
}

// TestShmCopyOutOlderServer: a server older than download's shm_min refuses
// it as an unknown argument (ARKTOS_DEBUG_NO_SHM_MIN makes ours do so); the
// client then downloads as before, over the stream, stays on that path for
// later downloads, and every result is bit-exact.
func TestShmCopyOutOlderServer(t *testing.T) {
	t.Setenv("ARKTOS_DEBUG_NO_SHM_MIN", "1")
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	big := randomArray(pdarray.Float64, client.ShmCopyMin/8+777, 5)
	info, err := client.UploadArray(ctx, c, big)
	if err != nil {
		t.Fatal(err)
	}
	copies := client.ShmCopies()
	d := statsDelta(t, ctx, c)
	for i := range 2 {
		got, err := client.Download[float64](ctx, c, info.Name)
		if err != nil || !bytes.Equal(pdarray.AsBytes(got), big.Bytes()) {
			t.Fatalf("download %d from an older server: %v", i, err)
		}
	}
	if client.ShmCopies() != copies {
		t.Fatalf("%d downloads were copied out of a segment; the server takes no shm_min", client.ShmCopies()-copies)
	}
	// One refusal (the first download), then the stream for both.
	if d("errors") != 1 || d("bytes_stream_out") != 2*int64(big.NBytes()) {
		t.Fatalf("errors %d, streamed out %d; want 1, %d", d("errors"), d("bytes_stream_out"), 2*big.NBytes())
	}
}

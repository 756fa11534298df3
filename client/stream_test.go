package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestStreamRefusedUpload: an upload over a stream that the server refuses
// (over the memory limit) reports the server's error, and the next upload
// opens a new stream and works.
func TestStreamRefusedUpload(t *testing.T) {
	srv := testserver.Start(t, "--max-memory", "8MiB")
	c := dial(t, srv.URL, client.WithTransport(client.TransportStream))
	ctx := ctxT(t)
	_, err := client.Upload(ctx, c, make([]float64, 2<<20)) // 16 MiB
	wantCode(t, err, transfer.OutOfMemory, "needs 16.0 MiB")
	a := randomArray(pdarray.Int64, 500_000, 9)
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal("upload after a refused stream upload:", err)
	}
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
		t.Fatal("round trip after a refused stream upload:", err)
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != int64(a.NBytes()) {
		t.Fatalf("used %d, want %d", mem.Used, a.NBytes())
	}
}

// TestStreamAbandonedUpload: a client that stops mid-upload (its deadline
// passes while it writes) leaves no memory held on the server.
func TestStreamAbandonedUpload(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL, client.WithTransport(client.TransportStream))
	ctx := ctxT(t)
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	_, err := client.Upload(short, c, make([]int64, 64<<20)) // 512 MiB
	cancel()
	if err == nil {
		t.Skip("a 512 MiB upload finished within 5ms")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mem, err := c.MemUsed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mem.Used == 0 && mem.Arrays == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server still holds %d bytes after an abandoned upload", mem.Used)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := client.Upload(ctx, c, []int64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
}

// TestStreamBadTickets: a stream connection with a wrong ticket is closed
// unanswered; an upload naming a stream that is not open is refused.
func TestStreamBadTickets(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	rep, m, err := c.Call(ctx, "open_stream", nil, nil)
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	m.Close()
	port := rep.Result["port"]
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(int(must(transfer.AsInt(port))))))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(append([]byte(transfer.StreamMagic), bytes.Repeat([]byte{7}, transfer.TicketSize)...))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("a wrong ticket got %d bytes, %v; want the connection closed", n, err)
	}
	rep, m, err = c.Call(ctx, "upload", map[string]any{"dtype": "int8", "size": 3, "stream": 999}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	wantCode(t, rep.Err(), transfer.ArgumentValue, "no open stream 999")
}

func must(i int64, ok bool) int64 {
	if !ok {
		panic("not an integer")
	}
	return i
}

// TestZstdCompression: compressed transfers are bit-exact both ways, and the
// server's counters show compressible data crossed the wire much smaller.
func TestZstdCompression(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1MiB")
	c := dial(t, srv.URL, client.WithCompression("zstd"))
	ctx := ctxT(t)
	xs := make([]int64, 3_000_001) // compressible: small repeating values
	for i := range xs {
		xs[i] = int64(i % 100)
	}
	before, _ := c.Stats(ctx)
	info, err := client.Upload(ctx, c, xs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := client.Download[int64](ctx, c, info.Name)
	if err != nil || !bytes.Equal(pdarray.AsBytes(back), pdarray.AsBytes(xs)) {
		t.Fatal("compressed round trip is not bit-exact:", err)
	}
	after, _ := c.Stats(ctx)
	in := after["bytes_compressed_in"] - before["bytes_compressed_in"]
	out := after["bytes_compressed_out"] - before["bytes_compressed_out"]
	if in == 0 || out == 0 || in > int64(len(xs)) || out > int64(len(xs)) {
		t.Fatalf("compressed bytes in %d, out %d for %d raw bytes", in, out, 8*len(xs))
	}
	// arrays whose last frame is under 256 bytes (3 elements; 1 MiB + 8
	// bytes): such a zstd frame once declared no size, and was refused
	for _, n := range []int{3, 1<<17 + 1} {
		small := make([]int64, n)
		for i := range small {
			small[i] = int64(i * 3)
		}
		info, err := client.Upload(ctx, c, small)
		if err != nil {
			t.Fatalf("%d elements up: %v", n, err)
		}
		if back, err := client.Download[int64](ctx, c, info.Name); err != nil || !slices.Equal(back, small) {
			t.Fatalf("%d elements down: %v", n, err)
		}
	}
	random := randomArray(pdarray.Float64, 500_000, 3)
	info, err = client.UploadArray(ctx, c, random)
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := c.MemUsed(ctx)
	if b, err := client.DownloadArray(ctx, c, info.Name); err != nil || !bytes.Equal(b.Bytes(), random.Bytes()) {
		t.Fatal("compressed round trip of random data:", err)
	}
	// The compressed copies were counted while sent, and are released. The
	// release runs once the reply has gone into libzmq, so the client can
	// have the reply (and ask again) a moment before it.
	waitFor(t, "the compressed download's copies to be released", func() bool {
		m2, err := c.MemUsed(ctx)
		return err == nil && m2.Used == mem.Used
	})
	// A corrupt compressed frame is refused with a clear error.
	rep, m, err := c.Call(ctx, "upload", map[string]any{"dtype": "int8", "size": 10, "frame_size": 1024, "compression": "zstd"}, [][]byte{[]byte("garbage")})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	wantCode(t, rep.Err(), transfer.InvalidData, "compressed upload: frame 0: not a zstd frame")
}

// TestStreamBelongsToItsClient: a client cannot name another client's
// stream to read its bytes or write into it.
func TestStreamBelongsToItsClient(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	a := dial(t, srv.URL, client.WithTransport(client.TransportStream), client.WithStreamNetwork("tcp"))
	if _, err := client.Upload(ctx, a, []int64{1, 2, 3}, client.WithName("x")); err != nil {
		t.Fatal(err)
	}
	b := dial(t, srv.URL)
	for id := 1; id <= 3; id++ {
		rep, m, err := b.Call(ctx, "download", map[string]any{"name": "x", "stream": id}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		wantCode(t, rep.Err(), transfer.ArgumentValue, "no open stream")
	}
	if got, err := client.Download[int64](ctx, a, "x"); err != nil || len(got) != 3 {
		t.Fatal("the owner's stream stopped working:", err)
	}
}

// TestZstdDownloadCounted: a compressed download's copies count against
// --max-memory: when the array fits but its copy does not, the download is
// refused with a clear error, and a plain download still works.
func TestZstdDownloadCounted(t *testing.T) {
	srv := testserver.Start(t, "--max-memory", "12MiB")
	plain := dial(t, srv.URL)
	ctx := ctxT(t)
	random := randomArray(pdarray.Float64, 1<<20, 4) // 8 MiB
	info, err := client.UploadArray(ctx, plain, random)
	if err != nil {
		t.Fatal(err)
	}
	z := dial(t, srv.URL, client.WithCompression("zstd"))
	_, err = client.DownloadArray(ctx, z, info.Name)
	wantCode(t, err, transfer.OutOfMemory, "the compressed reply of '"+info.Name+"' needs")
	if b, err := client.DownloadArray(ctx, plain, info.Name); err != nil || !bytes.Equal(b.Bytes(), random.Bytes()) {
		t.Fatal("plain download after the refused one:", err)
	}
}

// TestStreamAfterServerPanic: a download whose handler panics on the server
// after taking the stream (ARKTOS_DEBUG_PANIC_WITH_STREAM) is answered
// INTERNAL, and the server closes the stream; the client closes its end
// too, so the next download opens another and succeeds, bit-exact (before,
// it kept the dead stream and every later stream download failed with "no
// open stream"). Over TCP and the unix socket (shared memory there).
func TestStreamAfterServerPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"tcp", []client.Option{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")}},
		{"unix-shm", []client.Option{client.WithStreamNetwork("unix")}},
		{"stream-only", []client.Option{client.WithTransport(client.TransportStream), client.WithSharedMemory(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ARKTOS_DEBUG_PANIC_WITH_STREAM", "download")
			srv := testserver.Start(t)
			ctx := ctxT(t)
			c := dial(t, srv.URL, tc.opts...)
			a := randomArray(pdarray.Float64, 3<<17, 7) // 3 MiB: over the stream
			info, err := client.UploadArray(ctx, c, a)
			if err != nil {
				t.Fatal(err)
			}
			_, err = client.Download[float64](ctx, c, info.Name)
			var te *transfer.Error
			if !errors.As(err, &te) || te.Code != transfer.Internal {
				t.Fatalf("first download: %v, want INTERNAL", err)
			}
			for i := range 2 {
				got, err := client.Download[float64](ctx, c, info.Name)
				if err != nil || !bytes.Equal(pdarray.AsBytes(got), a.Bytes()) {
					t.Fatalf("download %d after the panic: %v", i+2, err)
				}
			}
		})
	}
}

package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// recorder is a TCP relay that keeps every byte it passes, both ways.
type recorder struct {
	at   string
	mu   sync.Mutex
	seen bytes.Buffer
}

func record(t *testing.T, target string) *recorder {
	t.Helper()
	r := &recorder{}
	r.at = testserver.Relay(t, target, func(dst, src net.Conn, _ bool) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				r.mu.Lock()
				r.seen.Write(buf[:n])
				r.mu.Unlock()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return r
}

func (r *recorder) addr() string { return r.at }

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.seen.Bytes())
}

// TestEncryptedLinksCarryNothingInClear: with the server's socket
// encrypted (CurveZMQ), its TCP bulk streams and request lanes are TLS,
// pinned to the certificate open_stream names over that socket. Every byte
// between client and server goes through recording proxies (the ZeroMQ
// port and the stream port): neither the token nor any run of the array's
// bytes nor the ticket appears in them, while the array round-trips whole
// over a TLS stream and requests take the TLS lane.
func TestEncryptedLinksCarryNothingInClear(t *testing.T) {
	const token = "tok-7f3c9a1e-must-never-travel-in-clear"
	keyFile := filepath.Join(t.TempDir(), "server_key")
	streamPort := testserver.FreePort(t)
	srv := testserver.Start(t, "--encrypt", "on", "--server-key-file", keyFile, "--token", token,
		"--stream-port", fmt.Sprint(streamPort))
	pub, err := os.ReadFile(keyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	ctrl := record(t, strings.TrimPrefix(srv.URL, "tcp://"))
	streams := record(t, fmt.Sprintf("127.0.0.1:%d", streamPort))
	streamDialHook = func(string) string { return streams.addr() }
	t.Cleanup(func() { streamDialHook = nil })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, "tcp://"+ctrl.addr(), WithServerKey(strings.TrimSpace(string(pub))), WithToken(token),
		WithStreamNetwork("tcp"), WithSharedMemory(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tlsBefore, batchesBefore := LinksTLS(), transfer.LinkBatches()

	// A recognisable pattern: a 16-byte marker in every 64-byte run.
	const n = 3 << 20 // int64s: 24 MiB, above the stripes' threshold too
	a := pdarray.FromSlice(make([]int64, n))
	raw := a.Bytes()
	marker := []byte("ARRAY-IN-CLEAR!!")
	for off := 0; off+len(marker) <= len(raw); off += 64 {
		copy(raw[off:], marker)
		binary.LittleEndian.PutUint64(raw[off+16:], uint64(off))
	}
	info, err := UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	// The upload's records went out gathered (WriteBatched), not a
	// system call per 16 KiB record; the download's on the server too.
	if got := transfer.LinkBatches() - batchesBefore; got < uint64(len(raw)/(1<<20)) {
		t.Fatalf("%d gathered writes for a %d-byte upload over TLS: the records went out one by one", got, len(raw))
	}
	back, err := DownloadArray(ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), raw) {
		t.Fatal("the array came back changed over the TLS stream")
	}
	for range 5 { // small requests: the lane's
		if _, err := c.GetConfig(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.lane == nil {
		t.Fatal("no request lane opened on the encrypted server")
	}
	if got := LinksTLS() - tlsBefore; got < 2 {
		t.Fatalf("%d links opened with TLS, want the stream and the lane at least", got)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st["stream_tls"] < 2 || st["stream_tls_batches"] < int64(len(raw)/(1<<20)) {
		t.Fatalf("the server counts %d TLS streams and lanes and %d gathered writes: %v", st["stream_tls"], st["stream_tls_batches"], st)
	}
	seenStreams := streams.bytes()
	if len(seenStreams) < len(raw) {
		t.Fatalf("only %d bytes went through the stream proxy: the array (%d bytes) did not take the stream", len(seenStreams), len(raw))
	}
	for what, seen := range map[string][]byte{"the ZeroMQ port": ctrl.bytes(), "the stream port": seenStreams} {
		if bytes.Contains(seen, []byte(token)) {
			t.Errorf("the token travels in clear on %s", what)
		}
		if bytes.Contains(seen, marker) {
			t.Errorf("the array's bytes travel in clear on %s", what)
		}
		if bytes.Contains(seen, []byte(transfer.StreamMagic)) || bytes.Contains(seen, []byte(transfer.LaneMagic)) {
			t.Errorf("a stream's handshake (magic and ticket) travels in clear on %s", what)
		}
	}
}

// TestEncryptedLinkPinned: a stream port that answers with another
// certificate (here another encrypted server's) is refused before the
// ticket or a byte of data goes to it, and the transfer takes the
// encrypted ZeroMQ socket instead.
func TestEncryptedLinkPinned(t *testing.T) {
	dir := t.TempDir()
	impostorPort := testserver.FreePort(t)
	srv := testserver.Start(t, "--encrypt", "on", "--server-key-file", filepath.Join(dir, "a"))
	testserver.Start(t, "--encrypt", "on", "--server-key-file", filepath.Join(dir, "b"), "--stream-port", fmt.Sprint(impostorPort))
	pub, err := os.ReadFile(filepath.Join(dir, "a.pub"))
	if err != nil {
		t.Fatal(err)
	}
	streamDialHook = func(string) string { return fmt.Sprintf("127.0.0.1:%d", impostorPort) }
	t.Cleanup(func() { streamDialHook = nil })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, srv.URL, WithServerKey(strings.TrimSpace(string(pub))), WithStreamNetwork("tcp"), WithSharedMemory(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.dialStream(ctx, transfer.StreamMagic)
	if !errors.Is(err, transfer.ErrLinkPin) {
		t.Fatalf("a stream answered with another certificate: %v, want ErrLinkPin", err)
	}
	a := pdarray.FromSlice(make([]float64, 1<<18))
	for i := range a.Len() {
		binary.LittleEndian.PutUint64(a.Bytes()[8*i:], uint64(i)*0x9E3779B97F4A7C15)
	}
	info, err := UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
		t.Fatalf("the array over the socket instead: %v", err)
	}
}

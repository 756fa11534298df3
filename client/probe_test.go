package client_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// wantNotListening checks a Dial error says nothing listens at url and how
// to start a server there.
func wantNotListening(t *testing.T, err error, url string) {
	t.Helper()
	if !errors.Is(err, client.ErrNotListening) {
		t.Fatalf("Dial %s: %v, want ErrNotListening", url, err)
	}
	for _, want := range []string{url, "make serve", "arktos-server --addr " + url} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestDialNotListeningFailsFast: Dial to a loopback port where nothing
// listens fails at once (it waited the 10 s connect timeout before), with
// the address and how to start a server, and the refusal as its cause.
func TestDialNotListeningFailsFast(t *testing.T) {
	url := "tcp://127.0.0.1:" + itoa(testserver.FreePort(t))
	var took []time.Duration
	for range 10 {
		start := time.Now()
		c, err := client.Dial(context.Background(), url)
		took = append(took, time.Since(start))
		if err == nil {
			c.Close()
			t.Fatal("Dial to no server succeeded")
		}
		wantNotListening(t, err, url)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("error %v does not wrap ECONNREFUSED", err)
		}
	}
	slices.Sort(took)
	if took[len(took)-1] > time.Second {
		t.Errorf("Dial took %v, want under 1 s", took)
	}
	t.Logf("refused Dial: p50 %v, p90 %v", took[len(took)/2], took[len(took)*9/10])
}

// TestDialLocalhostNotListening: a name (localhost: 127.0.0.1 and maybe
// ::1) fails fast when all its addresses refuse.
func TestDialLocalhostNotListening(t *testing.T) {
	url := "tcp://localhost:" + itoa(testserver.FreePort(t))
	_, err := client.Dial(context.Background(), url)
	wantNotListening(t, err, url)
}

// TestDialIPCNotListening: an ipc:// address with no socket file, or a
// socket file nothing listens on (a crashed server's), fails fast.
func TestDialIPCNotListening(t *testing.T) {
	dir := t.TempDir()
	url := "ipc://" + filepath.Join(dir, "none.sock")
	_, err := client.Dial(context.Background(), url)
	wantNotListening(t, err, url)
	if !strings.Contains(err.Error(), "no socket file") {
		t.Errorf("error %q does not say the socket file is missing", err)
	}
	stale := filepath.Join(dir, "stale.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: stale}); err != nil { // bound, never listening
		t.Fatal(err)
	}
	_, err = client.Dial(context.Background(), "ipc://"+stale)
	wantNotListening(t, err, "ipc://"+stale)
}

// TestDialServerStillConnects: the probe leaves a real server, over TCP
// and ipc://, to connect as before.
func TestDialServerStillConnects(t *testing.T) {
	ipc := "ipc://" + filepath.Join(t.TempDir(), "arktos.sock")
	for _, url := range []string{testserver.Start(t).URL, testserver.Start(t, "--addr", ipc).URL} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := client.Dial(ctx, url)
		if err != nil {
			cancel()
			t.Fatalf("Dial %s: %v", url, err)
		}
		if _, err := c.List(ctx); err != nil {
			t.Errorf("List on %s: %v", url, err)
		}
		c.Close()
		cancel()
	}
}

// TestDialSilentListenerWaits: something that accepts TCP connections but
// never speaks ZeroMQ (a server still starting, or too busy) gets Dial's
// whole deadline, not the fast failure.
func TestDialSilentListenerWaits(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url := "tcp://" + l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = client.Dial(ctx, url)
	took := time.Since(start)
	if errors.Is(err, client.ErrNotListening) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial %s: %v, want the deadline's error", url, err)
	}
	if took < 550*time.Millisecond || took > 5*time.Second {
		t.Errorf("Dial gave up after %v, want its 600 ms deadline", took)
	}
}

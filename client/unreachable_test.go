package client_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// blackhole returns a port on 127.0.0.1 whose connection attempts hang, as
// through a firewall that drops them: a listener with a backlog of 0 and
// its queue full, so the kernel drops further SYNs.
func blackhole(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*unix.SockaddrInet4).Port
	for range 8 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 300*time.Millisecond)
		if err != nil {
			return port // the queue is full: this one hung
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatal("the listener's queue never filled")
	return 0
}

// behindProxy starts a server on 127.0.0.2 whose stream port is port, and
// returns the URL of a proxy to its ZeroMQ port on 127.0.0.1: a client
// there dials the stream port on 127.0.0.1, as one reaching a server
// through a forwarded port dials the stream port where the forward is.
func behindProxy(t *testing.T, port int) string {
	t.Helper()
	srv := testserver.Start(t, "--addr", fmt.Sprintf("tcp://127.0.0.2:%d", testserver.FreePort(t)), "--stream-port", fmt.Sprint(port))
	return "tcp://" + slowProxy(t, srv.URL[len("tcp://"):], nil, nil)
}

// TestStreamPortUnreachable: a client whose server's stream port drops its
// connection attempts (a firewall that passes only the ZeroMQ port) waits
// for one dial to time out, then sends everything over ZeroMQ for its
// life, whether a large transfer's stream or a small request's lane met it
// first. Before, each large transfer and each lane retry waited for the
// caller's whole deadline (for ever without one: the kernel's two minutes
// of SYN retries), and the transfer failed when the deadline passed.
func TestStreamPortUnreachable(t *testing.T) {
	defer func(d time.Duration) { *client.ConnectTimeout = d }(*client.ConnectTimeout)
	*client.ConnectTimeout = time.Second
	// No pause after a failed dial either: only giving the port up keeps
	// the client from dialling it again.
	defer func(d time.Duration) { *client.RetryFirst = d }(*client.RetryFirst)
	*client.RetryFirst = time.Millisecond
	url := behindProxy(t, blackhole(t))
	x := make([]int64, 1<<18) // 2 MiB: a stream's
	for i := range x {
		x[i] = int64(i) * 31
	}
	t.Run("caller's deadline", func(t *testing.T) {
		// A dial cut short by the caller's ctx says nothing of the port.
		c := dial(t, url, client.WithStreamNetwork("tcp"), client.WithLane(false))
		gaveUp := client.StreamPortsUnreachable()
		short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		client.Upload(short, c, x) // (fails: the dial takes the ctx's time)
		if client.StreamPortsUnreachable() != gaveUp {
			t.Fatal("a dial cut short by the caller's deadline gave streams up")
		}
	})
	for _, first := range []string{"stream", "lane"} {
		t.Run(first, func(t *testing.T) {
			c := dial(t, url, client.WithStreamNetwork("tcp"), client.WithLane(first == "lane"))
			ctx := ctxT(t)
			gaveUp := client.StreamPortsUnreachable()
			start := time.Now()
			if first == "lane" {
				if _, err := c.List(ctx); err != nil {
					t.Fatal(err)
				}
			} else if _, err := client.Upload(ctx, c, x, client.WithName("x_"+first)); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < *client.ConnectTimeout || took > 5**client.ConnectTimeout {
				t.Fatalf("the first %s took %v; want the dial's timeout, %v", first, took, *client.ConnectTimeout)
			}
			// No dial again: each would first ask for a ticket
			// (open_stream), so the server counts only these requests
			// (counted, not timed: on a busy machine under -race a round
			// may take as long as a dial's timeout).
			before, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				name := fmt.Sprint("x_", first, "_", time.Now().UnixNano())
				if _, err := client.Upload(ctx, c, x, client.WithName(name)); err != nil {
					t.Fatal(err)
				}
				y, err := client.Download[int64](ctx, c, name)
				if err != nil || !slices.Equal(x, y) {
					t.Fatalf("download: %v", err)
				}
				if _, err := c.List(ctx); err != nil {
					t.Fatal(err)
				}
			}
			after, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := after["requests"] - before["requests"]; n != 3*3+1 {
				t.Errorf("%d requests for 3 uploads, downloads and lists and a stats; want 10: a stream or lane was asked for again", n)
			}
			if n := client.StreamPortsUnreachable() - gaveUp; n != 1 {
				t.Errorf("StreamPortsUnreachable grew by %d, want 1", n)
			}
		})
	}
}

// TestStreamPortRefused: where the stream port refuses connections (a
// forwarded ZeroMQ port alone: nothing listens at the stream port there),
// large transfers go in frames and ask for a stream again only after a
// pause, not at each transfer (an open_stream round trip each, over what
// may be a far link).
func TestStreamPortRefused(t *testing.T) {
	defer func(d time.Duration) { *client.RetryFirst = d }(*client.RetryFirst)
	// (The count below must not see the pause pass.)
	*client.RetryFirst = time.Minute
	url := behindProxy(t, testserver.FreePort(t)) // (free on 127.0.0.1: refused)
	c := dial(t, url, client.WithStreamNetwork("tcp"), client.WithLane(false))
	ctx := ctxT(t)
	x := make([]int64, 1<<18)
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := client.Upload(ctx, c, x, client.WithName(fmt.Sprint("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Five uploads, one open_stream and this stats, all within the
	// first pause.
	if n := after["requests"] - before["requests"]; n != 7 {
		t.Errorf("%d requests for 5 uploads; want 7: the stream was asked for again at each", n)
	}
}

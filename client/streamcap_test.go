package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestMaxStreamsFallsBack: a server at its --max-streams refuses a second
// client's lane and bulk stream with TOO_MANY_STREAMS; that client's
// requests go over ZeroMQ and its arrays in frames, bit-exact, without
// asking again on every request; once the first client has gone it opens
// both after the pause. Before, a refused lane was never asked
// for again (about 3× the small-request latency for the client's
// lifetime), and the server had no cap at all.
func TestMaxStreamsFallsBack(t *testing.T) {
	// A pause the rounds below cannot outlast on a busy machine (they
	// count refusals within it), short enough to wait out.
	defer func(d time.Duration) { *client.RetryFirst = d }(*client.RetryFirst)
	*client.RetryFirst = 3 * time.Second
	srv := testserver.Start(t, "--max-streams", "2")
	ctx := ctxT(t)
	big := make([]int64, 300_000) // 2.3 MiB: over StreamThreshold
	for i := range big {
		big[i] = int64(i) * 7
	}
	a := dial(t, srv.URL, client.WithSharedMemory(false))
	if _, err := client.Upload(ctx, a, big, client.WithName("a")); err != nil || a.StreamNetwork() == "" {
		t.Fatalf("first client's upload: %v, stream %q", err, a.StreamNetwork())
	}
	if st, err := a.Stats(ctx); err != nil || st["lanes_open"] != 1 || st["streams_open"] != 1 {
		t.Fatalf("server full? %v %v", st, err)
	}

	b := dial(t, srv.URL, client.WithSharedMemory(false))
	for round := range 3 {
		name := fmt.Sprint("b", round)
		if _, err := client.Upload(ctx, b, big, client.WithName(name)); err != nil {
			t.Fatal(err)
		}
		got, err := client.Download[int64](ctx, b, name)
		if err != nil || !slices.Equal(got, big) {
			t.Fatalf("round %d: download over frames: %v (equal %v)", round, err, slices.Equal(got, big))
		}
		if b.StreamNetwork() != "" {
			t.Fatalf("round %d: a stream opened past --max-streams", round)
		}
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One refusal for the lane (at b's first request) and one for the
	// stream (its first large upload): neither was asked for again within
	// the pause, though each of the 3 rounds made requests and transfers.
	if st["streams_refused"] != 2 {
		t.Errorf("streams_refused %d, want 2 (one lane, one stream; not asked again within the pause)", st["streams_refused"])
	}

	a.Close()
	time.Sleep(*client.RetryFirst + 100*time.Millisecond) // past the first pause
	// This opens b's lane (the lane of a closed client ends at once).
	before, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, err := b.Stats(ctx)
	if err != nil || after["lane_requests"] <= before["lane_requests"] || after["lanes_open"] != 1 {
		t.Fatalf("after the first client left: lane requests %d then %d, lanes_open %d (%v): b did not open its lane",
			before["lane_requests"], after["lane_requests"], after["lanes_open"], err)
	}
	if _, err := client.Upload(ctx, b, big, client.WithName("b-stream")); err != nil || b.StreamNetwork() == "" {
		t.Fatalf("after the first client left: upload %v over %q, want a stream", err, b.StreamNetwork())
	}
	if st, _ := b.Stats(ctx); st["streams_reaped"] != 1 {
		t.Errorf("streams_reaped %d, want 1 (the first client's stream)", st["streams_reaped"])
	}

	// Asked for a stream outright, a full server's refusal says what to do.
	c := dial(t, srv.URL, client.WithTransport(client.TransportStream), client.WithSharedMemory(false))
	_, err = client.Upload(ctx, c, big)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.TooManyStreams || !strings.Contains(err.Error(), "--max-streams") {
		t.Fatalf("TransportStream on a full server: %v, want TOO_MANY_STREAMS naming --max-streams", err)
	}
}

// TestStreamsAfterFdExhaustion: a server out of file descriptors fails to
// accept stream connections; once they close it accepts again. Before, the
// first failed accept ended the listener's loop: no stream or lane opened
// for the rest of the server's life (a dial reached the kernel's backlog,
// and the handshake was never answered).
func TestStreamsAfterFdExhaustion(t *testing.T) {
	port := testserver.FreePort(t)
	srv := testserver.Start(t, "--stream-port", fmt.Sprint(port))
	c := dial(t, srv.URL, client.WithStreamNetwork("tcp"), client.WithSharedMemory(false), client.WithLane(false))
	ctx := ctxT(t)
	if _, err := c.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	pid := srv.Cmd.Process.Pid
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	limit := uint64(len(fds) + 4)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Skip("cannot lower the server's RLIMIT_NOFILE: ", err)
	}
	var conns []net.Conn
	for range 16 {
		conn, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", port))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	// The server accepts until it is out of descriptors; the next accept fails.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); uint64(len(fds)) >= limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not run out of descriptors")
		}
	}
	time.Sleep(100 * time.Millisecond)
	for _, conn := range conns {
		conn.Close()
	}
	// Room for the backlog's connections as the server accepts and drops
	// them (a handshake that reads EOF), then for the stream.
	big := make([]float64, 300_000)
	for i := range big {
		big[i] = float64(i) / 3
	}
	up, cancel := context.WithTimeout(ctx, 10*time.Second) // (the old server never answered the handshake)
	defer cancel()
	if _, err := client.Upload(up, c, big, client.WithName("after")); err != nil || c.StreamNetwork() != "tcp" {
		t.Fatalf("upload after the descriptors came back: %v over %q, want a TCP stream", err, c.StreamNetwork())
	}
	got, err := client.Download[float64](ctx, c, "after")
	if err != nil || !slices.Equal(got, big) {
		t.Fatalf("download: %v (equal %v)", err, slices.Equal(got, big))
	}
}

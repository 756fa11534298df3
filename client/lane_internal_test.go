package client

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestLaneReplyOutlivesContext: a context that ends once the reply to a
// lane request has begun does not cut the reply short: the request's
// answer comes back, and the lane stays usable. The reply (a list of 3,000
// arrays) is larger than the lane's read buffer, so most of it is read
// from the socket after the context ended.
func TestLaneReplyOutlivesContext(t *testing.T) {
	ctx, c := dialServer(t)
	if _, err := c.GetConfig(ctx); err != nil { // opens the lane
		t.Fatal(err)
	}
	if c.lane == nil {
		t.Fatal("no lane")
	}
	const n = 3000
	for range n {
		if _, err := c.Full(ctx, 1, pdarray.Int64, int64(7)); err != nil {
			t.Fatal(err)
		}
	}
	reqCtx, cancel := context.WithCancel(ctx)
	laneReplyHook = func() {
		cancel()
		time.Sleep(20 * time.Millisecond) // let context.AfterFunc run
	}
	defer func() { laneReplyHook = nil }()
	infos, err := c.List(reqCtx)
	laneReplyHook = nil
	if err != nil {
		t.Fatalf("reply cut short by the context: %v", err)
	}
	if len(infos) != n || c.lane == nil {
		t.Fatalf("%d arrays listed, want %d; lane %v", len(infos), n, c.lane)
	}
	if _, err := c.GetConfig(ctx); err != nil {
		t.Fatalf("the lane after: %v", err)
	}
}

// dialServer starts a server for t and dials it; both end with the test,
// and so does the context (at most a minute).
func dialServer(t *testing.T) (context.Context, *Client) {
	t.Helper()
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	c, err := Dial(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ctx, c
}

// TestLaneSpin: lane replies are read while polling (transfer.SpinReader),
// on the client's side and on the server's (the next request), and
// counted; WithLaneSpin(0) and --lane-spin 0 turn each side off; a bad
// ARKTOS_LANE_SPIN or WithLaneSpin is refused by name (the variable is not
// read with WithLane(false)). A poll that finds the CPU taken (go test runs
// packages side by side) ends early and counts as busy, not as a hit; a
// few of those say the poll was taken as well as a hit does.
func TestLaneSpin(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: lanes do not poll")
	}
	for _, serverSpin := range []string{"200us", "0"} {
		srv := testserver.Start(t, "--lane-spin", serverSpin)
		for _, spin := range []time.Duration{transfer.DefaultLaneSpin, 0} {
			laneSpinRound(t, srv.URL, serverSpin, spin)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, d := range []time.Duration{-time.Microsecond, transfer.MaxLaneSpin + 1} {
		if _, err := Dial(ctx, "tcp://127.0.0.1:1", WithLaneSpin(d)); err == nil || !strings.Contains(err.Error(), "WithLaneSpin") {
			t.Fatalf("WithLaneSpin(%v): %v", d, err)
		}
	}
	srv := testserver.Start(t) // (before the variable: the server reads it too)
	t.Setenv("ARKTOS_LANE_SPIN", "fast")
	c, err := Dial(ctx, srv.URL, WithLane(false))
	if err != nil {
		t.Fatalf("WithLane(false) with a bad ARKTOS_LANE_SPIN: %v", err)
	}
	c.Close()
	if _, err := Dial(ctx, "tcp://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "ARKTOS_LANE_SPIN") {
		t.Fatalf("bad ARKTOS_LANE_SPIN: %v", err)
	}
}

// laneSpinRound sends 300 lane requests from a client polling for spin to
// a server started with --lane-spin serverSpin, and checks what each side
// counted.
func laneSpinRound(t *testing.T, url, serverSpin string, spin time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, url, WithLaneSpin(spin))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, err := c.Stats(ctx) // opens the lane
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for range n {
		if _, err := c.GetConfig(ctx); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hits, busy, polls := c.laneSpinStats.Hits.Load(), c.laneSpinStats.Busy.Load(), c.laneSpinStats.Polls.Load()
	d := func(k string) int64 { return after[k] - before[k] }
	srvHits, srvBusy, srvPolls := d("lane_spin_hits"), d("lane_spin_busy"), d("lane_spin_polls")
	t.Logf("server %s, client %v: %d of %d replies read while polling, %d polls found the CPU busy, %d polls; server: %d, %d and %d",
		serverSpin, spin, hits, n, busy, polls, srvHits, srvBusy, srvPolls)
	// Whether a poll finds the reply, or the CPU taken, depends on the
	// machine's load; that reads poll does not (a reply takes the server
	// some µs, so a read at once finds nothing in nearly every round trip).
	if spin > 0 && polls == 0 {
		t.Errorf("server %s: no read of a lane reply polled: the poll is not taken", serverSpin)
	}
	if spin == 0 && hits+busy+polls != 0 {
		t.Errorf("WithLaneSpin(0): %d replies counted as read while polling, %d busy polls, %d polls", hits, busy, polls)
	}
	// The server polls for the next request.
	if serverSpin != "0" && srvPolls == 0 {
		t.Errorf("client %v: the server polled for no request", spin)
	}
	if serverSpin == "0" && srvHits+srvBusy+srvPolls != 0 {
		t.Errorf("--lane-spin 0: the server counted %d requests read while polling, %d busy polls, %d polls", srvHits, srvBusy, srvPolls)
	}
}

// TestDialNoServer: Dial with a context without a deadline, to a port that
// accepts connections but never answers (ZeroMQ's connect does not fail,
// and the probe sees a listener), gives up after connectTimeout with an
// error that says what to do (start a server, or give a later deadline),
// instead of waiting forever. (Where nothing listens Dial fails at once:
// probe_test.go.)
func TestDialNoServer(t *testing.T) {
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = 300 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // listening, never accepting: the kernel completes the connects
	url := "tcp://" + l.Addr().String()
	start := time.Now()
	c, err := Dial(context.Background(), url)
	if err == nil {
		c.Close()
		t.Fatal("Dial to no server succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "is arktos-server running") || !strings.Contains(err.Error(), url[len("tcp://"):]) || !strings.Contains(err.Error(), "later deadline") {
		t.Errorf("error %q: want DeadlineExceeded naming the address and what to do", err)
	} else {
		t.Log(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Dial gave up after %v, want about %v", took, connectTimeout)
	}
}

// TestTCPKeepAlive: a TCP lane's and bulk stream's keep-alives and
// TCP_USER_TIMEOUT follow WithHeartbeat (keepAlive, userTimeout), so a
// vanished host fails a request on them within about as long as the
// ZeroMQ socket's heartbeats would (Go's defaults took about 2.5 minutes
// for an idle connection, 15 retransmissions for unacknowledged bytes).
func TestTCPKeepAlive(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, srv.URL, WithStreamNetwork("tcp"), WithHeartbeat(8*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetConfig(ctx); err != nil { // opens the lane
		t.Fatal(err)
	}
	if _, err := Upload(ctx, c, make([]int64, StreamThreshold/8)); err != nil { // and the stream
		t.Fatal(err)
	}
	for what, conn := range map[string]net.Conn{"lane": c.lane.s.conn, "stream": c.stream.conn} {
		raw, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		raw.Control(func(fd uintptr) {
			for _, o := range []struct {
				name       string
				level, opt int
				want       int
			}{
				{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
				{"TCP_KEEPIDLE", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 2},
				{"TCP_KEEPINTVL", unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 2},
				{"TCP_KEEPCNT", unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 4},
				{"TCP_USER_TIMEOUT", unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, 8000},
			} {
				if v, err := unix.GetsockoptInt(int(fd), o.level, o.opt); err != nil || v != o.want {
					t.Errorf("%s: %s %d (%v), want %d", what, o.name, v, err, o.want)
				}
			}
		})
	}
}

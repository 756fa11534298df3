package client

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

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
// ARKTOS_LANE_SPIN is refused by name.
func TestLaneSpin(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: lanes do not poll")
	}
	for _, serverSpin := range []string{"200us", "0"} {
		srv := testserver.Start(t, "--lane-spin", serverSpin)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, spin := range []time.Duration{transfer.DefaultLaneSpin, 0} {
			c, err := Dial(ctx, srv.URL, WithLaneSpin(spin))
			if err != nil {
				t.Fatal(err)
			}
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
			c.Close()
			hits, srvHits := c.laneSpinHits.Load(), after["lane_spin_hits"]-before["lane_spin_hits"]
			t.Logf("server %s, client %v: %d of %d replies read while polling; server: %d requests", serverSpin, spin, hits, n, srvHits)
			if spin > 0 && hits == 0 {
				t.Errorf("server %s: no lane reply read while polling: the poll is not taken", serverSpin)
			}
			if spin == 0 && hits != 0 {
				t.Errorf("WithLaneSpin(0): %d replies counted as read while polling", hits)
			}
			// The server polls for the next request, which comes within
			// the client's own turnaround (tens of µs).
			if serverSpin != "0" && srvHits == 0 {
				t.Errorf("client %v: the server read no request while polling", spin)
			}
			if serverSpin == "0" && srvHits != 0 {
				t.Errorf("--lane-spin 0: the server counted %d requests read while polling", srvHits)
			}
		}
	}
	t.Setenv("ARKTOS_LANE_SPIN", "fast")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Dial(ctx, "tcp://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "ARKTOS_LANE_SPIN") {
		t.Fatalf("bad ARKTOS_LANE_SPIN: %v", err)
	}
}

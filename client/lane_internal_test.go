package client

import (
	"context"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
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

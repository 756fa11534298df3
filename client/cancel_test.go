package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
)

// TestCtxCancelStopsServerWork: a call whose ctx ends before its reply
// sends cancel, and the server stops the argsort it was running, stores
// nothing and gives its memory back (docs/protocol.md, "Cancel").
func TestCtxCancelStopsServerWork(t *testing.T) {
	srv := testserver.Start(t, "--workers", "2")
	c := dial(t, srv.URL)
	watch := dial(t, srv.URL)
	ctx := ctxT(t)
	const n = 20_000_000 // an argsort of about a second on 2 cores
	a := randomArray(pdarray.Int64, n, 5)
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	mem0, err := watch.MemUsed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st0, err := watch.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := client.CancelsSent()
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = c.Argsort(short, info.Name)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("argsort with a 150 ms ctx: %v, want the deadline", err)
	}
	if client.CancelsSent() != sent+1 {
		t.Fatalf("cancels sent %d, want %d", client.CancelsSent(), sent+1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := watch.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st["running"] == 0 {
			if st["canceled"] != st0["canceled"]+1 {
				t.Fatalf("the server cancelled %d requests, want %d", st["canceled"], st0["canceled"]+1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server still runs the cancelled argsort")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mem, err := watch.MemUsed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Used != mem0.Used || mem.Arrays != mem0.Arrays {
		t.Fatalf("after the cancel the server holds %d bytes in %d arrays, before %d in %d", mem.Used, mem.Arrays, mem0.Used, mem0.Arrays)
	}
	// The connection goes on: the late CANCELED reply is read and dropped.
	if _, err := c.MemUsed(ctx); err != nil {
		t.Fatal(err)
	}
}

package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestLane: requests with no payload either way go over the request lane
// (the server counts them) once the client is up, errors included, and a
// dead line is reopened; WithLane(false) keeps them on ZeroMQ.
func TestLane(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	for _, on := range []bool{true, false} {
		c := dial(t, srv.URL, client.WithLane(on))
		before, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if cfg, err := c.GetConfig(ctx); err != nil || cfg.ProtocolVersion != transfer.Version {
				t.Fatal(cfg, err)
			}
		}
		_, err = c.Info(ctx, "no_such")
		var te *transfer.Error
		if !errors.As(err, &te) || te.Code != transfer.UnknownArray {
			t.Fatalf("info of a missing array over the lane: %v", err)
		}
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if on {
			want = 12 // the first Stats opened the lane and went over it
		}
		if got := after["lane_requests"] - before["lane_requests"]; got != want {
			t.Fatalf("lane %v: %d requests over the lane, want %d", on, got, want)
		}
	}
	// A request whose context ends on the lane closes it; the next one
	// opens another.
	c := dial(t, srv.URL)
	if _, err := c.GetConfig(ctx); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.MemUsed(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("request with a cancelled context: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if _, err := c.MemUsed(short); err != nil {
		t.Fatal(err)
	}
}

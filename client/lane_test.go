package client_test

import (
	"context"
	"errors"
	"math"
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

// TestSmallArraysOverLane: an upload of fewer than LanePayloadMax bytes,
// a small range and a download into a small buffer go over the request
// lane (the server counts them), in several frames from a server of 1 KiB
// frames, bit for bit; larger ones and WithLane(false) stay on ZeroMQ.
func TestSmallArraysOverLane(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1024")
	ctx := ctxT(t)
	x := make([]float64, 3000) // 24,000 bytes: 24 frames
	for i := range x {
		x[i] = float64(i)*1.25 - 7
	}
	for _, on := range []bool{true, false} {
		c := dial(t, srv.URL, client.WithLane(on))
		if !c.Config().LanePayload {
			t.Fatal("the server does not say it takes payloads over lanes")
		}
		before, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := client.Upload(ctx, c, x)
		if err != nil {
			t.Fatal(err)
		}
		part, err := client.DownloadRange[float64](ctx, c, info.Name, 10, 20)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, len(x))
		n, err := client.DownloadInto(ctx, c, info.Name, dst)
		if err != nil || n != len(x) {
			t.Fatal(n, err)
		}
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Float64bits(dst[i]) != math.Float64bits(x[i]) {
				t.Fatalf("element %d: %v, want %v", i, dst[i], x[i])
			}
		}
		for i, v := range part {
			if v != x[10+i] {
				t.Fatalf("range element %d: %v, want %v", i, v, x[10+i])
			}
		}
		want := int64(0)
		if on {
			want = 4 // upload, range, download, and the last stats
		}
		if got := after["lane_requests"] - before["lane_requests"]; got != want {
			t.Fatalf("lane %v: %d requests over the lane, want %d", on, got, want)
		}
		// At LanePayloadMax bytes and more: not over the lane.
		big := make([]int64, client.LanePayloadMax/8)
		before = after
		info, err = client.Upload(ctx, c, big)
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.Download[int64](ctx, c, info.Name)
		if err != nil || len(got) != len(big) {
			t.Fatal(len(got), err)
		}
		if after, err = c.Stats(ctx); err != nil {
			t.Fatal(err)
		}
		// The download asks over the lane (its size unknown), which only
		// describes the array; then its bytes come over ZeroMQ.
		if on && after["lane_requests"]-before["lane_requests"] != 2 { // and the stats request
			t.Fatalf("a %d-byte array went over the lane", client.LanePayloadMax)
		}
	}
}

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
		direct := client.LaneDirectDownloads()
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
		// Both downloads read their frames from the lane straight into
		// their result (the range's new memory, dst).
		if got, want := client.LaneDirectDownloads()-direct, map[bool]uint64{true: 2, false: 0}[on]; got != want {
			t.Fatalf("lane %v: %d downloads read straight into their result, want %d", on, got, want)
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
		// describes the array (256 frames of 1 KiB do not fit a lane
		// reply); then its bytes come over ZeroMQ.
		if on && after["lane_requests"]-before["lane_requests"] != 2 { // and the stats request
			t.Fatalf("a %d-byte array went over the lane", client.LanePayloadMax)
		}
	}
}

// TestDownloadsOverLaneStraightIn: a whole download of fewer than
// LaneDownloadMax bytes (LanePayloadMax once a stream is open) comes inline
// over the lane and is read straight into its result (new memory, or the
// destination given), bit for bit; a larger one does not. A destination of the wrong dtype, or
// too small, is refused and left as it was.
func TestDownloadsOverLaneStraightIn(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	sentinel := math.Float64frombits(0x7ff8dead_beef0001)
	for _, tc := range []struct {
		shm, open bool // open: a bulk stream is open before
		nb        int
	}{
		{false, false, 8}, {false, false, 255 << 10}, {false, false, 256 << 10}, {false, false, 700 << 10},
		{false, false, client.LaneDownloadMax - 8}, {false, false, client.LaneDownloadMax},
		// With shared memory on (downloadCopyOut's shm_min once a unix
		// stream is open).
		{true, false, client.LaneDownloadMax}, {true, false, 256 << 10}, {true, false, 8},
		// With a stream open, LanePayloadMax bytes and more go on it.
		{false, true, client.LanePayloadMax - 8}, {false, true, client.LanePayloadMax}, {false, true, 700 << 10},
		{true, true, client.LanePayloadMax - 8}, {true, true, client.LanePayloadMax},
	} {
		c, nb := dial(t, srv.URL, client.WithSharedMemory(tc.shm)), tc.nb
		if tc.open {
			big, err := client.Upload(ctx, c, make([]byte, client.StreamThreshold))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Download[byte](ctx, c, big.Name); err != nil {
				t.Fatal(err)
			}
		}
		x := make([]float64, nb/8)
		for i := range x {
			x[i] = float64(i)*0.75 - 3
		}
		x[0] = math.Copysign(0, -1)
		info, err := client.Upload(ctx, c, x)
		if err != nil {
			t.Fatal(err)
		}
		direct := client.LaneDirectDownloads()
		before, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.Download[float64](ctx, c, info.Name)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, len(x)+5)
		for i := range dst {
			dst[i] = sentinel
		}
		n, err := client.DownloadInto(ctx, c, info.Name, dst)
		if err != nil || n != len(x) {
			t.Fatal(n, err)
		}
		for i := range x {
			if math.Float64bits(got[i]) != math.Float64bits(x[i]) || math.Float64bits(dst[i]) != math.Float64bits(x[i]) {
				t.Fatalf("%d bytes, element %d: %v and %v, want %v", nb, i, got[i], dst[i], x[i])
			}
		}
		for i := len(x); i < len(dst); i++ {
			if math.Float64bits(dst[i]) != math.Float64bits(sentinel) {
				t.Fatalf("%d bytes: element %d past the array was written", nb, i)
			}
		}
		want, most := uint64(2), client.LaneDownloadMax
		if tc.open {
			most = client.LanePayloadMax
		}
		if nb >= most {
			want = 0
		}
		if d := client.LaneDirectDownloads() - direct; d != want {
			t.Fatalf("shm %v, %d bytes: %d downloads read straight into their result, want %d", tc.shm, nb, d, want)
		}
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The server wrote large inline replies from the array in one
		// gathering write (counted zero-copy), small ones through the
		// lane's buffer.
		zc, cp := after["bytes_zero_copy_out"]-before["bytes_zero_copy_out"], after["bytes_copied_out"]-before["bytes_copied_out"]
		if want > 0 && nb >= 16<<10 && (zc != int64(2*nb) || cp != 0) {
			t.Fatalf("%d bytes: %d bytes sent gathered and %d copied, want %d and 0", nb, zc, cp, 2*nb)
		}
		if want > 0 && nb < 16<<10 && (zc != 0 || cp != int64(2*nb)) {
			t.Fatalf("%d bytes: %d bytes sent gathered and %d copied, want 0 and %d", nb, zc, cp, 2*nb)
		}
		// Refused, and nothing written: the wrong dtype, or too small.
		wrong := make([]int64, len(x))
		for i := range wrong {
			wrong[i] = -77
		}
		if _, err := client.DownloadInto(ctx, c, info.Name, wrong); err == nil {
			t.Fatalf("%d bytes: a float64 array downloaded into []int64", nb)
		}
		small := make([]float64, len(x)-1)
		for i := range small {
			small[i] = sentinel
		}
		if _, err := client.DownloadInto(ctx, c, info.Name, small); err == nil && len(x) > 1 {
			t.Fatalf("%d bytes: downloaded into a destination one element short", nb)
		}
		for i := range wrong {
			if wrong[i] != -77 {
				t.Fatalf("%d bytes: the refused []int64 destination was written at %d", nb, i)
			}
		}
		for i := range small {
			if math.Float64bits(small[i]) != math.Float64bits(sentinel) {
				t.Fatalf("%d bytes: the refused short destination was written at %d", nb, i)
			}
		}
	}
}

// TestCommandTableRead: Dial reads the server's command table (the lane
// tests above show the lane carrying what it allows).
func TestCommandTableRead(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	cmds := c.Config().Commands
	if len(cmds) < 50 {
		t.Fatalf("get_config's command table has %d rows", len(cmds))
	}
	if up := cmds["upload"]; !up.Creates || !up.Lane || !up.LanePayload || !up.Payload || up.Distribution != "scatter" {
		t.Errorf("upload's row: %+v", up)
	}
	if cmds["shutdown"].Lane || cmds["open_stream"].Lane || !cmds["binop"].Lane {
		t.Errorf("lane rows: shutdown %+v, open_stream %+v, binop %+v", cmds["shutdown"], cmds["open_stream"], cmds["binop"])
	}
	if w := cmds["setitem"].Writes; len(w) != 1 || w[0] != "a" {
		t.Errorf("setitem writes %v, want [a]", w)
	}
}

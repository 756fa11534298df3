package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// TestDialWaitsForRestore: a server started on a checkpoint answers at
// once but serves the arrays only once they are back; Dial waits for that
// (ARKTOS_DEBUG_RESTORE_DELAY holds the restore), and a ctx that ends
// first gets an error that says what the server is doing.
func TestDialWaitsForRestore(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	first := testserver.Start(t, "--checkpoint", ckpt)
	c := dial(t, first.URL)
	if _, err := client.Upload(ctxT(t), c, []int64{7, 8, 9}, client.WithName("kept")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	first.Cmd.Process.Signal(syscall.SIGTERM) // a clean stop saves the checkpoint
	if err, ok := first.Wait(20 * time.Second); !ok || err != nil {
		t.Fatalf("first server: exit %v (exited %v)\n%s", err, ok, first.Log.String())
	}

	t.Setenv("ARKTOS_DEBUG_RESTORE_DELAY", "1500ms")
	start := time.Now() // before the server: the delay counts from its start, however slow
	srv := testserver.Start(t, "--checkpoint", ckpt)
	c = dial(t, srv.URL)
	if waited := time.Since(start); waited < 1500*time.Millisecond || c.Config().Restoring != nil {
		t.Errorf("Dial returned after %v, restoring %+v: it did not wait for the restore", waited, c.Config().Restoring)
	}
	before, err := c.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(ctxT(t), "kept"); err != nil || info.Size != 3 {
		t.Fatalf("restored array: %+v %v", info, err)
	}
	// The polls during the restore did not cost the client its lane.
	if after, err := c.Stats(ctxT(t)); err != nil || after["lane_requests"] <= before["lane_requests"] {
		t.Errorf("lane requests %d then %d (%v): the lane was not used after the restore", before["lane_requests"], after["lane_requests"], err)
	}

	t.Setenv("ARKTOS_DEBUG_RESTORE_DELAY", "1h")
	slow := testserver.Start(t, "--checkpoint", ckpt)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c2, err := client.Dial(ctx, slow.URL)
	if err == nil {
		c2.Close()
		t.Fatal("Dial to a server restoring for an hour returned")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "still restoring its checkpoint") || !strings.Contains(err.Error(), "later deadline") {
		t.Errorf("error %q: want DeadlineExceeded saying the server restores and what to do", err)
	}
}

// TestRequestsAfterARestart: a client made before its server restarted on
// a checkpoint goes on: its idle lane and its bulk stream, closed by the old
// server, are replaced before a request goes out on them (unix and TCP),
// and a request or download the new server refuses while it restores waits
// for the restore and is sent again.
func TestRequestsAfterARestart(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		ckpt := filepath.Join(t.TempDir(), "ckpt")
		first := testserver.Start(t, "--checkpoint", ckpt)
		c := dial(t, first.URL, client.WithStreamNetwork(network))
		if _, err := client.Upload(ctxT(t), c, []int64{7, 8, 9}, client.WithName("kept")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Info(ctxT(t), "kept"); err != nil { // over the lane
			t.Fatal(err)
		}
		// A large array opens the bulk stream.
		large := make([]int64, client.StreamThreshold/8)
		for i := range large {
			large[i] = int64(i) * 3
		}
		if _, err := client.Upload(ctxT(t), c, large, client.WithName("large")); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Download[int64](ctxT(t), c, "large"); err != nil {
			t.Fatal(err)
		}
		closed, streams := client.LanesClosedByPeer(), client.StreamsClosedByPeer()
		log := testserver.RestartRestoring(t, first, ckpt, "1s")
		// A download first: over a stream the old server held, refused
		// while the new one restores.
		got, err := client.Download[int64](ctxT(t), c, "large")
		if err != nil || len(got) != len(large) || got[len(got)-1] != large[len(large)-1] {
			t.Fatalf("%s lane: download after the restart: %d elements, %v\n%s", network, len(got), err, log.String())
		}
		if d := client.StreamsClosedByPeer() - streams; d != 1 {
			t.Errorf("%s lane: %d closed streams found before use, want 1", network, d)
		}
		info, err := c.Info(ctxT(t), "kept")
		if err != nil || info.Size != 3 {
			t.Fatalf("%s lane: info after the restart: %+v %v\n%s", network, info, err, log.String())
		}
		if got := client.LanesClosedByPeer() - closed; got != 1 {
			t.Errorf("%s lane: %d closed lanes found before sending, want 1", network, got)
		}
		got, err = client.Download[int64](ctxT(t), c, "kept")
		if err != nil || len(got) != 3 || got[2] != 9 {
			t.Fatalf("%s lane: download after the restart: %v %v", network, got, err)
		}
		before, err := c.Stats(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Info(ctxT(t), "kept"); err != nil {
			t.Fatal(err)
		}
		if after, err := c.Stats(ctxT(t)); err != nil || after["lane_requests"] <= before["lane_requests"] {
			t.Errorf("%s lane: lane requests %d then %d (%v): no lane after the restart", network, before["lane_requests"], after["lane_requests"], err)
		}
	}
}

// TestUploadsAfterARestart: clients made before their server restarted on
// a checkpoint upload (over the lane, a bulk stream and a shared-memory
// lease) and view an array while the new server restores; each is refused
// with RESTORING once, waits for the restore and is sent again, and the
// server holds each upload once.
func TestUploadsAfterARestart(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	first := testserver.Start(t, "--checkpoint", ckpt)
	small, large, leased := []int64{1, 2, 3}, make([]int64, client.StreamThreshold/8), make([]int64, client.ShmThreshold/8)
	for i := range large {
		large[i] = int64(i)*7 + 1
	}
	for i := range leased {
		leased[i] = int64(i) ^ 0x55
	}
	opts := [][]client.Option{nil, {client.WithSharedMemory(false)}, nil, nil}
	cs := make([]*client.Client, len(opts))
	for i, o := range opts {
		cs[i] = dial(t, first.URL, o...)
		// Each opens its lane, and its bulk stream (a unix one: the server
		// is on this host), before the restart.
		if _, err := client.Upload(ctxT(t), cs[i], large, client.WithName(fmt.Sprint("before", i))); err != nil {
			t.Fatal(err)
		}
	}
	retries := client.RestoreRetries()
	log := testserver.RestartRestoring(t, first, ckpt, "1500ms")
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	var view *client.View[int64]
	for i, f := range []func() error{
		func() error { _, err := client.Upload(ctxT(t), cs[0], small, client.WithName("small")); return err },
		func() error { _, err := client.Upload(ctxT(t), cs[1], large, client.WithName("large")); return err },
		func() error { _, err := client.Upload(ctxT(t), cs[2], leased, client.WithName("leased")); return err },
		func() (err error) { view, err = client.DownloadView[int64](ctxT(t), cs[3], "before3"); return err },
	} {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d after the restart: %v\n%s", i, err, log.String())
		}
	}
	if got := client.RestoreRetries() - retries; got != uint64(len(cs)) {
		t.Errorf("%d requests sent again after RESTORING, want %d: each was refused once", got, len(cs))
	}
	if !view.Shared() || !slices.Equal(view.Data, large) {
		t.Errorf("view after the restart: shared %v, equal %v", view.Shared(), slices.Equal(view.Data, large))
	}
	view.Close()
	for name, want := range map[string][]int64{"small": small, "large": large, "leased": leased} {
		got, err := client.Download[int64](ctxT(t), cs[0], name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s after the restart: %d elements, equal %v, %v", name, len(got), slices.Equal(got, want), err)
		}
	}
	infos, err := cs[0].List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range infos {
		names = append(names, a.Name)
	}
	if want := []string{"before0", "before1", "before2", "before3", "large", "leased", "small"}; !slices.Equal(names, want) {
		t.Errorf("arrays %v, want %v: a refused upload stored something", names, want)
	}
}

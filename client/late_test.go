package client

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestLateReply: the late reply to an abandoned array-making request queues
// the arrays it names for deletion; an error, an in-place ("out") request,
// a non-making command or an unknown id queues nothing.
func TestLateReply(t *testing.T) {
	info := func(n string) map[string]any {
		return map[string]any{"name": n, "dtype": "int64", "nbytes": 8, "size": 1}
	}
	// As a server's get_config says (its command table).
	c := &Client{config: ServerConfig{Commands: map[string]CommandInfo{
		"binop": {Creates: true, Writes: []string{"out"}}, "info": {},
		"groupby_topk": {Creates: true}, "upload": {Creates: true, Writes: []string{"name"}},
	}}}
	c.abandon(1, "binop", map[string]any{})
	c.abandon(2, "binop", map[string]any{"out": "x"})
	c.abandon(3, "info", map[string]any{})
	c.abandon(4, "groupby_topk", map[string]any{})
	c.abandon(5, "upload", map[string]any{})
	if !c.owesLate() {
		t.Fatal("no late reply owed after abandoning requests")
	}
	c.lateReply(&transfer.Reply{ID: 1, Result: info("a")})
	c.lateReply(&transfer.Reply{ID: 2, Result: info("x")})
	c.lateReply(&transfer.Reply{ID: 3, Result: info("b")})
	c.lateReply(&transfer.Reply{ID: 4, Result: map[string]any{"keys": []any{info("k1"), info("k2")}, "values": info("v")}})
	c.lateReply(&transfer.Reply{ID: 5, Status: 1, Code: transfer.OutOfMemory})
	c.lateReply(&transfer.Reply{ID: 9, Result: info("c")})
	got := slices.Clone(c.pendingDeletes)
	slices.Sort(got)
	if want := []string{"a", "k1", "k2", "v"}; !slices.Equal(got, want) {
		t.Fatalf("pending deletes %v, want %v", got, want)
	}
	if len(c.abandoned) != 0 || c.owesLate() {
		t.Fatalf("%d abandoned requests left", len(c.abandoned))
	}
}

// TestDropForgetsOwed: once a drop is seen (at any request), requests
// abandoned on ZeroMQ before it are no longer waited for (their replies
// went with the connection); before, every lane request looked for them
// for good.
func TestDropForgetsOwed(t *testing.T) {
	c := &Client{}
	c.abandon(1, "binop", map[string]any{})
	if !c.owesLate() {
		t.Fatal("no late reply owed after abandoning a request")
	}
	testDrop = func() bool { return true }
	defer func() { testDrop = nil }()
	if !c.dropped() || c.owesLate() {
		t.Fatalf("after a drop: owes %v", c.owesLate())
	}
	if _, ok := c.abandoned[1]; !ok {
		t.Fatal("the request was forgotten: a late reply after all would leave its array")
	}
}

// TestDeletesAfterARestart: names a late reply left to delete are kept when
// the delete is refused with RESTORING by a restarted server (whose
// checkpoint holds those arrays too), and deleted once it has restored.
// Before, the refused delete dropped them: the array stayed for good.
func TestDeletesAfterARestart(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	first := testserver.Start(t, "--checkpoint", ckpt)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, first.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"late", "kept"} {
		if _, err := Upload(ctx, c, []int64{1, 2, 3}, WithName(name)); err != nil {
			t.Fatal(err)
		}
	}
	testserver.RestartRestoring(t, first, ckpt, "1s")
	// As lateReply leaves it: "late" was made by a request given up on.
	c.mu.Lock()
	c.pendingDeletes = append(c.pendingDeletes, "late")
	c.mu.Unlock()
	retries := RestoreRetries()
	if info, err := c.Info(ctx, "kept"); err != nil || info.Size != 3 {
		t.Fatalf("kept after the restart: %+v %v", info, err)
	}
	if RestoreRetries() == retries {
		t.Fatal("the request was not refused with RESTORING: the restore ended before it")
	}
	var te *transfer.Error
	if _, err := c.Info(ctx, "late"); !errors.As(err, &te) || te.Code != transfer.UnknownArray {
		t.Fatalf("the late array after the restore: %v, want UNKNOWN_ARRAY (deleted)", err)
	}
	if len(c.pendingDeletes) != 0 {
		t.Fatalf("pending deletes left: %v", c.pendingDeletes)
	}
}

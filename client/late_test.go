package client

import (
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/transfer"
)

// TestLateReply: the late reply to an abandoned array-making request queues
// the arrays it names for deletion; an error, an in-place ("out") request,
// a non-making command or an unknown id queues nothing.
func TestLateReply(t *testing.T) {
	info := func(n string) map[string]any {
		return map[string]any{"name": n, "dtype": "int64", "nbytes": 8, "size": 1}
	}
	c := &Client{}
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

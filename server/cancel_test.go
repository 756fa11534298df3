package server

import (
	"testing"
	"time"
)

// TestCancelsRegistry: a cancel reaches a running request; one that comes
// before its request (a lane's request read after the cancel sent on
// ZeroMQ) makes it start cancelled; a finished one is "unknown".
func TestCancelsRegistry(t *testing.T) {
	var c cancels
	peer := []byte("peer-a")
	st := c.begin(peer, 1, "argsort", 0)
	if state, cmd := c.cancel([]byte("peer-b"), 1, "x"); state != "unknown" || cmd != "" {
		t.Fatalf("another peer's cancel: %s %s", state, cmd)
	}
	if st.Stopped() {
		t.Fatal("another peer's cancel stopped this request")
	}
	if state, cmd := c.cancel(peer, 1, "the client cancelled it"); state != "canceled" || cmd != "argsort" || !st.Stopped() {
		t.Fatalf("cancel of a running request: %s %s %v", state, cmd, st.Stopped())
	}
	c.end(peer, 1, st)
	if c.count() != 0 {
		t.Fatalf("%d registered after end", c.count())
	}
	if state, _ := c.cancel(peer, 2, "early"); state != "unknown" {
		t.Fatalf("early cancel: %s", state)
	}
	st2 := c.begin(peer, 2, "groupby", 0)
	if !st2.Stopped() {
		t.Fatal("a request cancelled before it came did not start cancelled")
	}
	c.end(peer, 2, st2)
	c.cancel(peer, 9, "stale")
	c.early[cancelKey{string(peer), 9}] = time.Now().Add(-2 * earlyKeep) // kept past earlyKeep
	if st9 := c.begin(peer, 9, "argsort", 0); st9.Stopped() {
		t.Fatal("a cancel older than earlyKeep stopped a request")
	} else {
		c.end(peer, 9, st9)
	}
	st3 := c.begin(peer, 3, "setitem", 0)
	st3.Disarm()
	if state, _ := c.cancel(peer, 3, "late"); state != "finishing" || st3.Stopped() {
		t.Fatalf("cancel of a disarmed request: %s", state)
	}
	c.end(peer, 3, st3)
	for i := range uint64(2 * earlyMax) { // a client's stray cancels stay bounded
		c.cancel(peer, 1000+i, "stray")
	}
	if len(c.early) > earlyMax {
		t.Fatalf("%d early cancels kept, at most %d", len(c.early), earlyMax)
	}
}

func TestWritesGiven(t *testing.T) {
	if !commands["setitem"].writesGiven(map[string]any{"a": "x"}) || commands["argsort"].writesGiven(map[string]any{"a": "x"}) {
		t.Fatal("writesGiven")
	}
	if !commands["load_all"].writesGiven(nil) {
		t.Fatal("load_all may replace any array")
	}
}

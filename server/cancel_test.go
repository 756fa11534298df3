package server

import "testing"

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
	if !writesGiven(commands["setitem"], map[string]any{"a": "x"}) || writesGiven(commands["argsort"], map[string]any{"a": "x"}) {
		t.Fatal("writesGiven")
	}
	if !writesGiven(commands["load_all"], nil) {
		t.Fatal("load_all may replace any array")
	}
}

package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestMaxStreams: open bulk streams, lanes and unused tickets together stay
// within --max-streams; past it open_stream is refused with
// TOO_MANY_STREAMS and a message that says what to do. A slot comes back
// when a lane's client closes it, when a stream's client has gone (found
// at the next open_stream: nothing else reads an idle stream), and when a
// ticket expires; an idle stream whose client is still there is kept.
func TestMaxStreams(t *testing.T) {
	s := startServer(t, Config{Workers: 2, StreamPort: testserver.FreePort(t), MaxStreams: 3})
	d := dealer(t, s.cfg.Addr)
	var id uint64
	next := func() uint64 { id++; return id }
	openStream := func() *transfer.Reply {
		t.Helper()
		sendRequest(t, d, next(), "open_stream", nil)
		rep := recvReply(t, d, 5*time.Second)
		if rep == nil {
			t.Fatal("open_stream: no reply")
		}
		return rep
	}
	stat := func(name string) int64 {
		t.Helper()
		sendRequest(t, d, next(), "stats", nil)
		rep := recvReply(t, d, 5*time.Second)
		if rep == nil || rep.Status != 0 {
			t.Fatalf("stats: %+v", rep)
		}
		return transfer.NewArgs("stats", rep.Result).Int(name)
	}
	refused := func(why string) {
		t.Helper()
		rep := openStream()
		if rep.Status == 0 || rep.Code != transfer.TooManyStreams || !strings.Contains(rep.Message, "--max-streams") || !strings.Contains(rep.Message, "close the clients") {
			t.Fatalf("open_stream %s: %+v; want TOO_MANY_STREAMS naming --max-streams and what to do", why, rep)
		}
	}
	granted := func(why string) {
		t.Helper()
		if rep := openStream(); rep.Status != 0 {
			t.Fatalf("open_stream %s: %+v; want a ticket", why, rep)
		}
	}

	_, streamA := openTestConn(t, d, next(), transfer.StreamMagic)
	_, laneB := openTestConn(t, d, next(), transfer.LaneMagic)
	granted("for a third, unused ticket")
	refused("with a stream, a lane and a ticket held")
	if n, l, r := stat("streams_open"), stat("lanes_open"), stat("streams_refused"); n != 1 || l != 1 || r != 1 {
		t.Fatalf("stats: streams_open %d, lanes_open %d, streams_refused %d; want 1, 1, 1", n, l, r)
	}

	laneB.Close()
	eventually(t, func() bool { return stat("lanes_open") == 0 }, "the closed lane did not end")
	granted("after a lane's client closed it")

	streamA.Close() // its client leaves without close_stream
	granted("after a stream's client left")
	if n, r := stat("streams_open"), stat("streams_reaped"); n != 0 || r != 1 {
		t.Fatalf("streams_open %d, streams_reaped %d after the open: want 0, 1", n, r)
	}

	// Three tickets out: one dropped, to make room for an idle stream whose
	// client stays.
	st := s.streams
	st.mu.Lock()
	for k := range st.tickets {
		delete(st.tickets, k)
		break
	}
	st.mu.Unlock()
	sidC, streamC := openTestConn(t, d, next(), transfer.StreamMagic)
	refused("with an idle stream whose client is there, and two tickets")
	if r := stat("streams_reaped"); r != 1 {
		t.Fatalf("streams_reaped %d: a live client's idle stream was dropped", r)
	}

	st.mu.Lock()
	for k, tk := range st.tickets {
		tk.expires = time.Now().Add(-time.Second)
		st.tickets[k] = tk
	}
	st.mu.Unlock()
	granted("after the tickets expired")
	granted("after the tickets expired (the second)")
	refused("full again")

	// The idle stream kept open still carries an upload.
	body := make([]byte, 800)
	for i := range body {
		body[i] = byte(i)
	}
	sendRequest(t, d, next(), "upload", map[string]any{"dtype": "int64", "size": 100, "stream": sidC, "name": "kept"})
	if _, err := streamC.Write(body); err != nil {
		t.Fatal(err)
	}
	if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
		t.Fatalf("upload over the kept stream: %+v", rep)
	}
	if arr, err := s.store.get("kept"); err != nil || !bytes.Equal(arr.Bytes(), body) {
		t.Fatalf("the upload over the kept stream: %v", err)
	}
}

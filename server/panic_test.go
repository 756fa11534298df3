package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/transfer"
)

// test_panic_stream takes stream "stream" and panics in its handler
// ("where": "handler") or in its after function ("after"): stand-ins for a
// bug in a transfer's handler.
func init() {
	register("test_panic_stream", command{run: func(s *Server, r *request) (*response, error) {
		id := r.args.Uint("stream")
		where := r.args.String("where")
		if err := r.args.Done(); err != nil {
			return nil, err
		}
		x, err := s.takeStream(id, r)
		if err != nil {
			return nil, err
		}
		if where == "handler" {
			panic("test: a handler's bug")
		}
		return &response{result: map[string]any{}, after: func() {
			panic(fmt.Sprintf("test: a bug after the reply, stream %d held", x.id))
		}}, nil
	}})
}

// test_panic_worker panics in one of its worker goroutines, as a kernel's
// bug would.
func init() {
	register("test_panic_worker", command{run: func(s *Server, r *request) (*response, error) {
		err := transfer.ParallelFrames(8, 2, func(i int) error {
			if i == 5 {
				var m map[int]int
				m[i] = 1 // a nil map write
			}
			return nil
		})
		return &response{result: map[string]any{}}, err
	}})
}

// TestWorkerPanicIsInternal: a panic in a goroutine a handler started is
// answered INTERNAL and the server goes on (before internal/par, such a
// panic stopped the server with every array it held).
func TestWorkerPanicIsInternal(t *testing.T) {
	s := startServer(t, Config{Workers: 2})
	d := dealer(t, s.cfg.Addr)
	sendRequest(t, d, 1, "test_panic_worker", nil)
	rep := recvReply(t, d, 10*time.Second)
	if rep == nil || rep.Code != transfer.Internal || !strings.Contains(rep.Message, "nil map") {
		t.Fatalf("reply %+v, want INTERNAL naming the worker's panic", rep)
	}
	sendRequest(t, d, 2, "get_config", nil)
	if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
		t.Fatalf("get_config after the panic: %+v", rep)
	}
}

// openTestStream opens a bulk stream over TCP as a client does: its id, and
// the client's end of the connection.
func openTestStream(t *testing.T, d *zmq.Socket, id uint64) (uint64, net.Conn) {
	t.Helper()
	sendRequest(t, d, id, "open_stream", nil)
	rep := recvReply(t, d, 5*time.Second)
	if rep == nil || rep.Status != 0 {
		t.Fatalf("open_stream: %+v", rep)
	}
	res := transfer.NewArgs("open_stream", rep.Result)
	sid, port := res.Uint("stream"), res.Uint("port")
	tk, ok := rep.Result["ticket"].([]byte)
	if !ok || sid == 0 || port == 0 {
		t.Fatalf("open_stream's result: %v", rep.Result)
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.FormatUint(port, 10)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(append([]byte(transfer.StreamMagic), tk...)); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(c, one); err != nil || one[0] != 1 {
		t.Fatalf("stream handshake: %v %v", one, err)
	}
	return sid, c
}

// closedByServer says whether the server closed c (a read sees EOF).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

// TestPanicDropsHeldStream: a panic in a transfer's handler, or in what
// runs after its reply, is answered (INTERNAL) or logged, never stops the
// server, and closes the bulk stream the request held, whose byte position
// is lost: a request naming it is refused at once, and what was stored is
// still there. Before, a panic after the reply stopped the server (nothing
// recovered it), one in a handler left its stream locked for good (the next
// request naming it held a worker forever: this test hangs), and one in
// upload left the stream open at a wrong byte position.
func TestPanicDropsHeldStream(t *testing.T) {
	testUploadPanic = func(name string) {
		if name == "lost" {
			panic("test: upload's bug")
		}
	}
	t.Cleanup(func() { testUploadPanic = nil }) // after the server stops (cleanups run last first)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := startServer(t, Config{Workers: 2, StreamPort: port})
	d := dealer(t, s.cfg.Addr)
	// A stored array that must outlive the panics.
	body := make([]byte, 800)
	for i := range body {
		body[i] = byte(i)
	}
	hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: 1, Cmd: "upload",
		Args: map[string]any{"dtype": "int64", "size": 100, "name": "kept", "frame_size": 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendMessage(hdr, body); err != nil {
		t.Fatal(err)
	}
	if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
		t.Fatalf("upload of kept: %+v", rep)
	}
	var id uint64 = 10
	for _, where := range []string{"handler", "after", "upload"} {
		t.Run(where, func(t *testing.T) {
			id++
			sid, c := openTestStream(t, d, id)
			id++
			if where == "upload" {
				sendRequest(t, d, id, "upload", map[string]any{"dtype": "int64", "size": 100, "stream": sid, "name": "lost"})
			} else {
				sendRequest(t, d, id, "test_panic_stream", map[string]any{"stream": sid, "where": where})
			}
			rep := recvReply(t, d, 5*time.Second)
			switch {
			case rep == nil:
				t.Fatal("no reply")
			case where == "after" && rep.Status != 0:
				t.Fatalf("reply %+v, want success (the panic comes after it)", rep)
			case where != "after" && rep.Code != transfer.Internal:
				t.Fatalf("reply %+v, want INTERNAL", rep)
			}
			if !closedByServer(c) {
				t.Error("the stream's connection is still open")
			}
			// The stream is gone: a request naming it is refused at once
			// (not left waiting for a lock nobody will release).
			id++
			sendRequest(t, d, id, "close_stream", map[string]any{"stream": sid})
			if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Code != transfer.ArgumentValue {
				t.Fatalf("close_stream after the panic: %+v, want ARGUMENT_VALUE (no open stream)", rep)
			}
			id++
			sendRequest(t, d, id, "get_config", nil)
			if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
				t.Fatalf("get_config after the panic: %+v", rep)
			}
		})
	}
	if s.store.has("lost") {
		t.Error("the upload that panicked stored its array")
	}
	arr, err := s.store.get("kept")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(arr.Bytes(), body) {
		t.Error("the array stored before the panics changed")
	}
}

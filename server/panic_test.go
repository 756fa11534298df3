package server

import (
	"bufio"
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

	"github.com/arktos-dev/arktos/internal/testserver"
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
				//lint:ignore SA5000 the nil map write is the runtime panic under test
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
	return openTestConn(t, d, id, transfer.StreamMagic)
}

// openTestConn takes a ticket (open_stream) and connects with it as a bulk
// stream (magic transfer.StreamMagic) or a request lane (LaneMagic).
func openTestConn(t testing.TB, d *zmq.Socket, id uint64, magic string) (uint64, net.Conn) {
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
	if _, err := c.Write(append([]byte(magic), tk...)); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(c, one); err != nil || one[0] != 1 {
		t.Fatalf("handshake: %v %v", one, err)
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
	testPanic = func(where, name string) {
		if where == "upload" && name == "lost" {
			panic("test: upload's bug")
		}
	}
	t.Cleanup(func() { testPanic = nil }) // after the server stops (cleanups run last first)
	s := startServer(t, Config{Workers: 2, StreamPort: testserver.FreePort(t)})
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

// TestPanicReleasesReservation: a handler that panics while it holds a
// reservation (an upload's bytes; a compressed download's copies) gives it
// back: the server answers INTERNAL, keeps what it stored, and its memory
// is whole again. Before, each such panic kept its bytes reserved until a
// restart: three panicked uploads of 400 KiB here would have left a 1 MiB
// server refusing the next upload of 400 KiB as OUT_OF_MEMORY.
func TestPanicReleasesReservation(t *testing.T) {
	testPanic = func(where, name string) {
		if name == "lost" || where == "download_zstd" {
			panic("test: a bug in " + where)
		}
	}
	t.Cleanup(func() { testPanic = nil })
	s := startServer(t, Config{Workers: 2, MaxMemory: 1 << 20})
	d := dealer(t, s.cfg.Addr)
	id := uint64(0)
	upload := func(name string, n int) *transfer.Reply {
		t.Helper()
		id++
		hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: "upload",
			Args: map[string]any{"dtype": "int64", "size": n, "name": name, "frame_size": 1 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.SendMessage(hdr, make([]byte, 8*n)); err != nil {
			t.Fatal(err)
		}
		rep := recvReply(t, d, 10*time.Second)
		if rep == nil {
			t.Fatal("no reply")
		}
		return rep
	}
	if rep := upload("kept", 1000); rep.Status != 0 {
		t.Fatalf("upload of kept: %+v", rep)
	}
	used := func() int64 {
		u, _, _, _ := s.store.usage()
		return u
	}
	want := used()
	for range 3 {
		if rep := upload("lost", 50_000); rep.Code != transfer.Internal {
			t.Fatalf("upload that panics: %+v, want INTERNAL", rep)
		}
		id++
		sendRequest(t, d, id, "download", map[string]any{"name": "kept", "compression": "zstd"})
		if rep := recvReply(t, d, 10*time.Second); rep == nil || rep.Code != transfer.Internal {
			t.Fatalf("compressed download that panics: %+v, want INTERNAL", rep)
		}
		if got := used(); got != want {
			t.Fatalf("%d bytes reserved after the panics, want %d (the kept array's)", got, want)
		}
	}
	if rep := upload("fits", 50_000); rep.Status != 0 {
		t.Fatalf("an upload the limit has room for: %+v", rep)
	}
	id++
	sendRequest(t, d, id, "download", map[string]any{"name": "kept"})
	if rep := recvReply(t, d, 10*time.Second); rep == nil || rep.Status != 0 {
		t.Fatalf("download of kept: %+v", rep)
	}
}

// TestPanicOutsideHandlers: a bug outside a handler (where runRecovered does
// not reach) ends only its own work: building the reply on the I/O
// goroutine (an inline command) or on a worker loses that one reply, and
// one on a request lane closes that lane; each is counted in stats'
// "panics", and the server goes on answering, on ZeroMQ and on a new lane.
// Before, each of these panics stopped the server (this test's process).
func TestPanicOutsideHandlers(t *testing.T) {
	testPanic = func(where, cmd string) {
		if (where == "reply" || where == "lane") && cmd == "list" || where == "reply" && cmd == "arange" {
			panic("test: a bug in the " + where + " of " + cmd)
		}
	}
	t.Cleanup(func() { testPanic = nil })
	s := startServer(t, Config{Workers: 2, StreamPort: testserver.FreePort(t)})
	d := dealer(t, s.cfg.Addr)
	// list runs on the I/O goroutine, arange on a worker: neither replies.
	sendRequest(t, d, 1, "list", nil)
	sendRequest(t, d, 2, "arange", map[string]any{"start": 0, "stop": 10, "step": 1, "dtype": "int64"})
	// Wait for both panics to be counted (the worker's may come late on a
	// loaded machine), then for a reply that should not come: each panic
	// happens before its reply is sent, so once both are counted a reply
	// would be on its way already. A stray reply that comes later still
	// fails the check of get_config's id below.
	for deadline := time.Now().Add(10 * time.Second); s.stats.Panics.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stats' panics = %d after 10 s, want 2", s.stats.Panics.Load())
		}
	}
	if rep := recvReply(t, d, 200*time.Millisecond); rep != nil {
		t.Fatalf("a reply whose sending panicked came: %+v", rep)
	}
	if n := s.stats.Panics.Load(); n != 2 {
		t.Fatalf("stats' panics = %d, want 2", n)
	}
	sendRequest(t, d, 3, "get_config", nil)
	if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 || rep.ID != 3 {
		t.Fatalf("get_config after the panics: %+v", rep)
	}
	lane := func(id uint64) (net.Conn, *bufio.Reader, *bufio.Writer) {
		_, c := openTestConn(t, d, id, transfer.LaneMagic)
		return c, bufio.NewReader(c), bufio.NewWriter(c)
	}
	ask := func(w *bufio.Writer, id uint64, cmd string) {
		hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: cmd})
		if err != nil {
			t.Fatal(err)
		}
		if err := transfer.WriteLane(w, hdr); err != nil {
			t.Fatal(err)
		}
	}
	c, _, w := lane(10)
	ask(w, 20, "list")
	if !closedByServer(c) {
		t.Fatal("the lane whose request panicked outside its handler is still open")
	}
	if n := s.stats.Panics.Load(); n != 3 {
		t.Fatalf("stats' panics = %d, want 3", n)
	}
	_, r, w := lane(30)
	ask(w, 40, "get_config")
	frames, err := transfer.ReadLane(r)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := transfer.DecodeReply(frames[0]); err != nil || rep.Status != 0 || rep.ID != 40 {
		t.Fatalf("get_config over a new lane: %+v %v", rep, err)
	}
}

package server

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/transfer"
)

// hold is a registered command that holds the worker running it: each run
// says so on started, then waits until release is closed. A test arms it
// for itself (fresh channels), so it runs again under -count.
type hold struct {
	mu               sync.Mutex
	started, release chan struct{}
}

func registerHold(name string) *hold {
	h := &hold{}
	h.arm()
	register(name, command{run: func(s *Server, r *request) (*response, error) {
		h.mu.Lock()
		started, release := h.started, h.release
		h.mu.Unlock()
		started <- struct{}{}
		<-release
		return &response{result: map[string]any{}}, nil
	}})
	return h
}

// arm gives the command fresh channels, for a test that starts its own server.
func (h *hold) arm() (started, release chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started, h.release = make(chan struct{}, 1), make(chan struct{})
	return h.started, h.release
}

// test_block holds the worker that runs it until the test lets it go.
var testBlock = registerHold("test_block")

// startServer runs a real Server on a loopback port until the test ends.
func startServer(t testing.TB, cfg Config) (s *Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "tcp://" + l.Addr().String() // loopback: no token
	l.Close()
	if cfg.TokenFile == "" {
		cfg.TokenFile = filepath.Join(t.TempDir(), "token")
	}
	if cfg.StreamPort == 0 {
		cfg.StreamPort = -1 // no bulk streams unless the test names a port
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

func dealer(t testing.TB, endpoint string) *zmq.Socket {
	t.Helper()
	d, err := zmq.NewSocket(zmq.DEALER)
	if err != nil {
		t.Fatal(err)
	}
	d.SetLinger(0)
	if err := d.Connect(endpoint); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func sendRequest(t testing.TB, d *zmq.Socket, id uint64, cmd string, args map[string]any) {
	t.Helper()
	hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: cmd, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendBytes(hdr, 0); err != nil {
		t.Fatal(err)
	}
}

// recvReply returns the next reply's header, or nil when none comes within wait.
func recvReply(t testing.TB, d *zmq.Socket, wait time.Duration) *transfer.Reply {
	t.Helper()
	d.SetRcvtimeo(wait)
	frames, err := d.RecvMessageBytes(0)
	if err != nil {
		return nil
	}
	rep, err := transfer.DecodeReply(frames[0])
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestInlineCommandsSkipTheWorkers: with the only worker busy, every inline
// command is still answered (by the I/O goroutine, with no hand-off), and a
// worker command waits for the worker.
func TestInlineCommandsSkipTheWorkers(t *testing.T) {
	blockStarted, blockRelease := testBlock.arm()
	s := startServer(t, Config{Workers: 1, MaxMemory: 1 << 20})
	d := dealer(t, s.Endpoint())
	sendRequest(t, d, 1, "test_block", nil)
	select {
	case <-blockStarted:
	case <-time.After(10 * time.Second):
		t.Fatalf("test_block never started; reply %+v", recvReply(t, d, time.Second))
	}
	released := false
	defer func() {
		if !released {
			close(blockRelease)
		}
	}()

	var inline []string
	for name, c := range commands {
		if c.inline {
			inline = append(inline, name)
		}
	}
	slices.Sort(inline)
	if !slices.Contains(inline, "get_config") {
		t.Fatalf("get_config is not inline (inline: %v)", inline)
	}
	small := opPut(t, s, make([]int64, inlineSmallBytes/8))
	big := opPut(t, s, make([]int64, inlineSmallBytes/8+1))
	args := map[string]map[string]any{
		"info":        {"name": "nope"},
		"delete":      {"names": []any{"nope"}, "missing_ok": true},
		"rename":      {"name": "nope", "new_name": "other"},
		"shm_release": {"segments": []any{uint64(99)}},
		"cancel":      {"id": uint64(999)},
	}
	for i, name := range inline {
		id := uint64(10 + i)
		sendRequest(t, d, id, name, args[name])
		rep := recvReply(t, d, 10*time.Second)
		if rep == nil || rep.ID != id {
			t.Fatalf("%s was not answered while the worker was busy (reply %+v)", name, rep)
		}
		if name != "info" && name != "rename" && rep.Status != 0 { // (no array "nope")
			t.Errorf("%s failed: %s", name, rep.Message)
		}
	}
	// A reduction of a small array is inline too.
	sendRequest(t, d, 3, "reduce", map[string]any{"op": "sum", "a": small})
	if rep := recvReply(t, d, 10*time.Second); rep == nil || rep.ID != 3 || rep.Status != 0 {
		t.Fatalf("reduce of %d bytes was not answered while the worker was busy (reply %+v)", inlineSmallBytes, rep)
	}

	// Worker commands queue behind test_block: a reduction of a larger
	// array, and another test_block.
	sendRequest(t, d, 4, "reduce", map[string]any{"op": "sum", "a": big})
	sendRequest(t, d, 2, "test_block", nil)
	if rep := recvReply(t, d, 100*time.Millisecond); rep != nil {
		t.Fatalf("got reply %d while the only worker was busy", rep.ID)
	}
	released = true
	close(blockRelease)
	<-blockStarted // the second test_block runs once the first is done
	var ids []uint64
	for range 3 {
		rep := recvReply(t, d, 10*time.Second)
		if rep == nil {
			t.Fatal("no reply after the worker was released")
		}
		ids = append(ids, rep.ID)
	}
	if slices.Sort(ids); !slices.Equal(ids, []uint64{1, 2, 4}) {
		t.Fatalf("replies %v, want 1, 2 and 4", ids)
	}
}

// TestQueuedUploadsCounted: uploads waiting for the only (busy) worker hold
// their frames in memory; they are reserved against --max-memory while they
// wait, so once the queue holds the limit the next upload is refused at
// once (OUT_OF_MEMORY, naming the upload as its handler would), and the
// rest are stored when the worker is free, with nothing left reserved.
func TestQueuedUploadsCounted(t *testing.T) {
	const limit, each = 8 << 20, 3 << 20 // two uploads fit in the queue, not three
	holdStarted, holdRelease := testBlock.arm()
	s := startServer(t, Config{Workers: 1, MaxMemory: limit})
	d := dealer(t, s.Endpoint())
	sendRequest(t, d, 1, "test_block", nil)
	select {
	case <-holdStarted:
	case <-time.After(10 * time.Second):
		t.Fatalf("test_block never started; reply %+v", recvReply(t, d, time.Second))
	}
	released := false
	defer func() {
		if !released {
			close(holdRelease)
		}
	}()
	body := make([]byte, each)
	for i := range body {
		body[i] = byte(i)
	}
	upload := func(id uint64) {
		hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: "upload",
			Args: map[string]any{"dtype": "uint8", "size": each, "frame_size": 1 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		msg := []any{hdr}
		for lo := 0; lo < each; lo += 1 << 20 {
			msg = append(msg, body[lo:lo+1<<20])
		}
		if _, err := d.SendMessage(msg...); err != nil {
			t.Fatal(err)
		}
	}
	upload(2)
	upload(3)
	upload(4) // no room left while 2 and 3 wait
	rep := recvReply(t, d, 10*time.Second)
	if rep == nil || rep.ID != 4 || rep.Code != transfer.OutOfMemory {
		t.Fatalf("third queued upload: reply %+v, want OUT_OF_MEMORY for request 4 at once", rep)
	}
	for _, want := range []string{"upload of 3145728 uint8 elements needs 3.0 MiB", "--max-memory"} {
		if !strings.Contains(rep.Message, want) {
			t.Errorf("message %q does not say %q", rep.Message, want)
		}
	}
	if q := s.store.queuedBytes.Load(); q != 2*each {
		t.Errorf("queued payload bytes %d, want %d", q, 2*each)
	}
	released = true
	close(holdRelease)
	var ids []uint64
	for range 3 {
		rep := recvReply(t, d, 10*time.Second)
		if rep == nil {
			t.Fatal("no reply after the worker was released")
		}
		if rep.Status != 0 {
			t.Fatalf("request %d failed: %s", rep.ID, rep.Message)
		}
		ids = append(ids, rep.ID)
	}
	if slices.Sort(ids); !slices.Equal(ids, []uint64{1, 2, 3}) {
		t.Fatalf("replies %v, want 1, 2 and 3", ids)
	}
	used, _, _, n := s.store.usage()
	if q := s.store.queuedBytes.Load(); q != 0 || used != 2*each || n != 2 {
		t.Fatalf("after the uploads: queued %d, used %d in %d arrays; want 0, %d in 2", q, used, n, 2*each)
	}
}

// TestAddressInUse: a second server on an address another one holds fails
// at once, naming the address; before, New hung for good (zmq_ctx_term
// waited for the router socket it had not closed), a server that never
// said a word. It leaves the first server's token file alone (it used to
// write its own token there before trying the address).
func TestAddressInUse(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	s := startServer(t, Config{Workers: 1, Auth: true, TokenFile: tokenFile})
	before, err := os.ReadFile(tokenFile)
	if err != nil || len(before) == 0 {
		t.Fatalf("the first server's token file: %q, %v", before, err)
	}
	done := make(chan error, 1)
	go func() {
		cfg := Config{Addr: s.Endpoint(), Workers: 1, StreamPort: -1, Auth: true, TokenFile: tokenFile, Logger: slog.New(slog.DiscardHandler)}
		s2, err := New(cfg)
		if err == nil {
			s2.router.Close()
			s2.pull.Close()
			s2.zctx.Term()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), s.Endpoint()) || !strings.Contains(err.Error(), "another arktos-server") {
			t.Fatalf("second server on %s: %v, want an error naming the address", s.Endpoint(), err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("New on a taken address did not return")
	}
	if after, err := os.ReadFile(tokenFile); err != nil || string(after) != string(before) {
		t.Errorf("the token file changed: %q, was %q (%v)", after, before, err)
	}
}

// TestCreatingCommandsClassified: every command is either one that stores
// new arrays (creates, listed by get_config's "creating", whose results a
// client deletes when it gave the request up) or one of these. A new
// command must be put on one side: six that create arrays (clip, lookup,
// take_many, compress_many, searchsorted, groupby_scan) were once missing
// from the clients' own lists, and their abandoned results stayed stored.
func TestCreatingCommandsClassified(t *testing.T) {
	keeps := map[string]bool{
		"get_config": true, "noop": true, "commands": true, "download": true, "info": true, "list": true, "delete": true, "rename": true,
		"mem_used": true, "stats": true, "shutdown": true, "open_stream": true, "close_stream": true,
		"reduce": true, "getitem": true, "setitem": true, "order_stats": true, "to_parquet": true, "to_csv": true,
		"to_arrow_file": true, "save_all": true, "checkpoint": true, "shm_lease": true, "shm_release": true,
		"to_hdf": true, "ls_hdf": true,
		"str_check": true, "cancel": true,
		// (locale_push stores its copy on another locale, whose coordinator
		// records it; locale_peers stores nothing.)
		"locale_peers": true, "locale_push": true, "locate": true,
	}
	for name, c := range commands {
		if strings.HasPrefix(name, "test_") {
			continue
		}
		if c.creates == keeps[name] {
			t.Errorf("command %q: creates %v; mark it creates (it stores new arrays) or list it here", name, c.creates)
		}
	}
	for _, must := range []string{"clip", "lookup", "take_many", "compress_many", "searchsorted", "groupby_scan", "upload", "load_all"} {
		if !slices.Contains(creatingCommands(), must) {
			t.Errorf("%s is not in get_config's creating list", must)
		}
	}
}

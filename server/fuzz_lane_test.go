package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// FuzzLane writes the fuzzer's bytes to a request lane of a real server
// (opened with a ticket, as a client opens one) and ends its side. Whatever
// they are, the server answers with whole lane messages and closes the
// lane once its input ends (within 5 s: no read waits forever), and goes on
// answering on ZeroMQ. FuzzDispatch covers the handlers; this covers the
// lane's framing and decoding in front of them, over a real socket.
//
//	go test -run '^$' -fuzz FuzzLane -fuzztime 2m ./server
func FuzzLane(f *testing.F) {
	msg := func(frames ...[]byte) []byte {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		transfer.WriteLane(w, frames...)
		return b.Bytes()
	}
	req := func(id uint64, cmd string, args map[string]any) []byte {
		hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: cmd, Args: args})
		if err != nil {
			f.Fatal(err)
		}
		return hdr
	}
	getConfig := msg(req(1, "get_config", nil))
	f.Add(getConfig)
	f.Add(append(slices.Clone(getConfig), msg(req(2, "info", map[string]any{"name": "kept"}))...))
	f.Add(msg(req(3, "upload", map[string]any{"dtype": "int16", "size": 3, "frame_size": 4}), []byte{1, 0, 2, 0}, []byte{3, 0}))
	f.Add(msg(req(4, "download", map[string]any{"name": "kept", "inline_max": 1 << 20})))
	f.Add(msg(req(5, "shutdown", nil)))
	f.Add(msg([]byte{0xc1}))
	f.Add(getConfig[:7])
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 1, 0, 0, 0, 0x80, 0xf0, 0xff, 0xff, 3, 1, 2, 3})
	f.Add([]byte{65, 0, 0, 0})

	s := startServer(f, Config{Workers: 2, MaxMemory: 64 << 20, StreamPort: testserver.FreePort(f)})
	d := dealer(f, s.cfg.Addr)
	kept := []int64{7, -1, 1 << 40}
	putKept := func(t testing.TB) {
		a := pdarray.FromSlice(kept)
		if err := s.store.reserve(int64(a.NBytes()), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.store.put("kept", a); err != nil {
			t.Fatal(err)
		}
	}
	putKept(f)
	var mu sync.Mutex // one lane at a time, one dealer
	id := uint64(100)
	f.Fuzz(func(t *testing.T, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		id++
		_, c := openTestConn(t, d, id, transfer.LaneMagic)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		// Write while reading: the server answers as requests come, and
		// must not stall on replies nobody reads.
		werr := make(chan error, 1)
		go func() {
			_, err := c.Write(data)
			if err == nil {
				err = c.(*net.TCPConn).CloseWrite()
			}
			werr <- err
		}()
		r := bufio.NewReader(c)
		for {
			frames, err := transfer.ReadLane(r)
			if errors.Is(err, io.EOF) {
				break // the server closed the lane
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the lane was not closed 5 s after its input (%d bytes) ended", len(data))
			}
			if err != nil {
				// A reset (the server closed with our bytes unread) ends it too.
				if errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("the server ended a reply midway: %v", err)
				}
				break
			}
			if _, err := transfer.DecodeReply(frames[0]); err != nil {
				t.Fatalf("a reply on the lane does not decode: %v", err)
			}
		}
		<-werr // (an error: the server closed first, as it may)
		id++
		sendRequest(t, d, id, "get_config", nil)
		if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.ID != id || rep.Status != 0 {
			t.Fatalf("no answer on ZeroMQ after the lane: %+v", rep)
		}
		// A valid request among the bytes may have changed or deleted the
		// array: put it back as it was for the next input.
		if x, err := s.store.get("kept"); err != nil || !slices.Equal(pdarray.View[int64](x), kept) {
			if err == nil {
				s.store.delete([]string{"kept"}, true)
			}
			putKept(t)
		}
	})
}

package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/transfer"
)

// Request lanes (transfer/lane.go, docs/protocol.md "Request lanes"): a
// connection opened with an open_stream ticket and transfer.LaneMagic
// carries whole requests. Its goroutine reads one, runs it through
// dispatch as the ZeroMQ path does (the same checks: version, token,
// command, shutting down), and writes the reply: no hand-off between
// goroutines or threads on the server's side, so a small request's round
// trip is the socket's plus the work. Requests on one lane run one at a
// time, in order; a lane's request is not queued for the workers, as a
// client has one request in flight at a time anyway.

// serveLane answers requests on c until the peer closes it, it breaks the
// framing, or the server shuts down (closeStreams closes c).
func (s *Server) serveLane(c net.Conn, owner []byte) {
	defer s.endLane(c)
	// A bug outside a handler (runRecovered) ends this lane, not the server.
	defer par.Recover(s.logPanic("panic on a request lane"))
	rd := transfer.SpinLink(c, s.cfg.LaneSpin, &s.stats.LaneSpin) // (a TLS lane polls under its records)
	r, w := bufio.NewReaderSize(rd, 64<<10), bufio.NewWriterSize(c, 64<<10)
	for {
		frames, err := transfer.ReadLane(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("request lane closed", "remote", c.RemoteAddr(), "err", err)
				// A framing error is answered (id 0) before the lane is closed.
				var te *transfer.Error
				if errors.As(err, &te) {
					s.stats.Errors.Add(1)
					s.writeLaneReply(w, &transfer.Reply{V: transfer.Version, Status: 1, Code: te.Code, Error: te.Code.String(), Message: te.Message}, nil)
				}
			}
			return
		}
		if !s.laneRequest(w, c, frames, owner) {
			return
		}
	}
}

func (s *Server) endLane(c net.Conn) {
	c.Close()
	st := s.streams
	st.mu.Lock()
	delete(st.lanes, c)
	st.mu.Unlock()
	st.laneWG.Done()
}

// laneRequest runs one request read from a lane and writes its reply; false
// when the reply could not be written (the lane is then closed).
func (s *Server) laneRequest(w *bufio.Writer, c net.Conn, frames [][]byte, owner []byte) bool {
	start := time.Now()
	defer s.store.grace.exit(s.store.grace.enter())
	req, err := transfer.DecodeRequest(frames[0])
	if testPanic != nil && err == nil {
		testPanic("lane", req.Cmd)
	}
	var resp *response
	if c, ok := commands[req.Cmd]; err == nil && ok && !c.lane {
		err = transfer.Errorf(transfer.UnknownCommand, "command '%s' is not taken over a request lane; send it on the ZeroMQ socket", req.Cmd)
	}
	if err == nil {
		resp, err = s.runRecovered(req, frames[1:], owner)
	}
	if err == nil {
		// A reply must fit a lane message (a client would refuse a larger
		// one and lose the lane): a download of more goes over ZeroMQ or
		// a bulk stream.
		total := 0
		for _, f := range resp.frames {
			total += len(f)
		}
		if total > transfer.MaxLaneBytes-4096 || len(resp.frames) >= transfer.MaxLaneFrames {
			if resp.after != nil {
				resp.after()
			}
			resp, err = nil, transfer.Errorf(transfer.ArgumentValue, "a reply of %d payload bytes in %d frames does not fit a request lane (at most %d bytes in %d frames); send this %s over ZeroMQ or a bulk stream, or with a larger frame_size", total, len(resp.frames), transfer.MaxLaneBytes-4096, transfer.MaxLaneFrames-1, req.Cmd)
		}
	}
	reply, out := s.replyTo(req, resp, err)
	cmd := ""
	if req != nil {
		cmd = req.Cmd
	}
	s.stats.LaneRequests.Add(1)
	var sent uint64
	for _, f := range out {
		sent += uint64(len(f))
	}
	hdr, out := s.encodeReply(reply, out)
	// A large reply (an inline download) goes from the array's memory to
	// the kernel in one gathering write, counted as ZeroMQ's frames sent in
	// place are; a small one is copied into the lane's writer.
	gathered, werr := transfer.WriteLaneTo(w, c, append([][]byte{hdr}, out...)...)
	if gathered {
		s.stats.BytesZeroCopyOut.Add(sent)
	} else {
		s.stats.BytesCopiedOut.Add(sent)
	}
	ok := werr == nil
	if err == nil && resp.after != nil {
		resp.after()
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("request", "cmd", cmd, "id", reply.ID, "lane", true, "frames_in", len(frames)-1, "frames_out", len(out), "took", time.Since(start))
	}
	return ok
}

func (s *Server) writeLaneReply(w *bufio.Writer, reply *transfer.Reply, frames [][]byte) bool {
	hdr, frames := s.encodeReply(reply, frames)
	return transfer.WriteLane(w, append([][]byte{hdr}, frames...)...) == nil
}

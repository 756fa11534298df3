package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arktos-dev/arktos/transfer"
)

var lanesClosedByPeer atomic.Uint64

// LanesClosedByPeer returns how many idle lanes this process found closed
// by their server (restarted) and replaced before sending on them (tests
// check the path).
func LanesClosedByPeer() uint64 { return lanesClosedByPeer.Load() }

// A request lane (docs/protocol.md, "Request lanes"; transfer/lane.go): a
// plain socket beside the ZeroMQ one, opened like a bulk stream, that
// carries whole requests and replies. Requests with no payload either way
// (the typed methods' c.call) take it once the connection is up: their
// round trip then skips libzmq's I/O threads on both sides.
type reqLane struct {
	s    *bulkStream
	r    *bufio.Reader
	w    *bufio.Writer
	used time.Time // when its last reply was read
}

// laneIdleCheck: a lane idle this long is checked for a close by its peer
// before a request goes out on it (a server restarted meanwhile): a request
// written to a closed unix lane failed, and one on a TCP lane read the
// close where its reply should be. Busy lanes skip the check's system call.
const laneIdleCheck = 20 * time.Millisecond

// closedByPeer reports whether the server has closed lane l (or sent bytes
// no request asked for), without blocking.
func (l *reqLane) closedByPeer() bool {
	return l.r.Buffered() > 0 || connClosedByPeer(l.s.conn)
}

// connClosedByPeer reports whether the peer closed conn, or sent bytes
// nothing asked for (a lane or stream between requests), without blocking.
func connClosedByPeer(conn net.Conn) bool {
	closed, pending := transfer.PeekIdle(conn)
	return closed || pending
}

// WithLane(false) keeps every request on the ZeroMQ socket.
func WithLane(on bool) Option { return func(o *options) { o.noLane = !on } }

// WithLaneSpin sets how long a lane request polls its socket for the reply
// before it blocks (transfer.SpinReader; default transfer.DefaultLaneSpin,
// 0 turns polling off): a reply that comes within it is read without the
// wake-up a blocked read waits for.
func WithLaneSpin(d time.Duration) Option { return func(o *options) { o.laneSpin = &d } }

// laneFor returns the lane to send a small request on, opening it on first
// use; nil when there is none (WithLane(false), or the server offers no
// streams). c.mu must be held.
func (c *Client) laneFor(ctx context.Context, cmd string) *reqLane {
	if c.noLane || c.laneFailed || !c.ready || !c.config.Commands[cmd].Lane {
		return nil
	}
	if c.owesLate() {
		c.readLate() // (a request on the lane would not read them)
	}
	if c.lane != nil && time.Since(c.lane.used) > laneIdleCheck && c.lane.closedByPeer() {
		c.closeLane()
		lanesClosedByPeer.Add(1)
	}
	if c.lane == nil {
		if c.laneRetry.early(time.Now()) {
			return nil
		}
		s, err := c.dialStream(ctx, transfer.LaneMagic)
		if refusedRestoring(err) {
			return nil // a restarted server: ZeroMQ says so, and the lane opens once it is back
		}
		if err != nil {
			// A server without streams has no lanes either; any other
			// failure (the server at --max-streams, shutting down, a dial
			// that failed) may pass: ZeroMQ carries the requests meanwhile.
			c.laneFailed = offersNoStreams(err)
			if errors.Is(err, errStreamPortUnreachable) {
				c.unreachable()
			}
			c.laneRetry.failed(time.Now())
			return nil
		}
		c.laneRetry = retryAfter{}
		rd := transfer.SpinLink(s.conn, c.laneSpin, &c.laneSpinStats) // (a TLS lane polls under its records)
		c.lane = &reqLane{s: s, r: bufio.NewReaderSize(rd, 64<<10), w: bufio.NewWriterSize(s.conn, 64<<10)}
	}
	return c.lane
}

// closeLane forgets the lane (after an error, or on Close). c.mu must be held.
func (c *Client) closeLane() {
	if c.lane != nil {
		c.lane.s.conn.Close()
		c.lane = nil
	}
}

// ctxEnded returns why ctx has ended, or nil: ctx.Err(), or
// context.DeadlineExceeded when err is the connection's timer (set to ctx's
// deadline) firing just before ctx reports it.
func ctxEnded(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// laneCall sends one request on the lane and reads its reply. A request cut
// short (ctx done, the server gone) closes the lane: a late reply has no
// place on it; the next request opens another.
func (c *Client) laneCall(ctx context.Context, l *reqLane, id uint64, hdr []byte, cmd string, args map[string]any, payload [][]byte, whileWaiting func(), place *transfer.LanePlace) (*transfer.Reply, [][]byte, error) {
	conn := l.s.conn
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Time{})
	}
	var mu sync.Mutex
	handedOff := false // to drainLane, which sets its own deadline
	begun := false     // the reply has begun: ctx's end gives it laneReplyWait more
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case handedOff:
		case begun:
			conn.SetDeadline(time.Now().Add(laneReplyWait))
		default:
			conn.SetDeadline(time.Now())
		}
	})
	defer stop()
	fail := func(err error) (*transfer.Reply, [][]byte, error) {
		c.closeLane()
		if ctxErr := ctxEnded(ctx, err); ctxErr != nil {
			err = ctxErr
		}
		return nil, nil, fmt.Errorf("client: %s on %s: %w (is arktos-server running? %s)", cmd, c.url, err, startHint(c.url))
	}
	if _, err := transfer.WriteLaneTo(l.w, l.s.conn, append([][]byte{hdr}, payload...)...); err != nil {
		return fail(err)
	}
	if whileWaiting != nil {
		whileWaiting()
	}
	if _, err := l.r.Peek(1); err != nil {
		ctxErr := ctxEnded(ctx, err) // ended: its late reply is owed
		if ctxErr == nil {
			return fail(err)
		}
		// Given up on before any byte of the reply came: the request may
		// still make arrays. This lane is left to a goroutine that reads
		// the late reply (freeing what it made); the next request opens
		// another lane.
		mu.Lock()
		handedOff = true
		mu.Unlock()
		c.lane = nil
		c.abandon(id, cmd, args)
		a := c.abandoned[id]
		a.onLane = true
		c.abandoned[id] = a
		c.sendCancel(id) // (on ZeroMQ, from the same routing id the lane was opened for)
		go c.drainLane(l, id)
		return nil, nil, fmt.Errorf("client: %s on %s: %w", cmd, c.url, ctxErr)
	}
	// The reply has begun: if ctx ends (or its deadline passes) before it
	// is whole, it still gets laneReplyWait to arrive. Cut short
	// mid-frame, it would be lost with the lane, and with it the names of
	// the arrays the request made, left on the server.
	mu.Lock()
	begun = true
	if dl, ok := ctx.Deadline(); ok || ctx.Err() != nil {
		until := time.Now().Add(laneReplyWait)
		if ok && dl.After(until) {
			until = dl
		}
		conn.SetDeadline(until) // also overrides the end ctx's AfterFunc may have set
	}
	mu.Unlock()
	if laneReplyHook != nil {
		laneReplyHook()
	}
	frames, err := transfer.ReadLaneInto(l.r, place)
	if err != nil {
		return fail(err)
	}
	l.used = time.Now()
	rep, err := transfer.DecodeReply(frames[0])
	if err != nil {
		c.closeLane()
		return nil, nil, fmt.Errorf("client: reply to %s: %w", cmd, err)
	}
	return rep, frames[1:], nil
}

// LanePayloadMax: uploads (and ranged downloads) of fewer bytes take the
// request lane, in frames, where the server takes them there (its config's
// LanePayload): a small array's round trip skips libzmq (Python's
// LANE_PAYLOAD_MAX, which see for the measurements).
const LanePayloadMax = 256 << 10

// LaneDownloadMax: while the client has no bulk stream open, downloads of
// fewer bytes come back over the request lane, inline in its reply, where
// the server takes them there; larger ones over ZeroMQ (and a stream opens
// for the next). The lane reads a reply's bytes straight into the array
// (transfer.ReadLaneInto): from 256 KiB up to StreamThreshold that took
// 0.3-0.5x the time of asking on the lane and then on ZeroMQ. With a stream
// open, downloads of LanePayloadMax and more go on it, as before: inline
// was no faster there (BenchmarkMidDownload's open-into).
const LaneDownloadMax = StreamThreshold

// downloadMax is the most bytes (exclusive) a download takes inline over
// the lane now (c.mu held).
func (c *Client) downloadMax() int {
	if c.stream != nil {
		return LanePayloadMax
	}
	return LaneDownloadMax
}

// laneForPayload returns the lane for an upload or download of nbytes in
// frames of fs bytes, or nil where it may not take one. c.mu must be held.
func (c *Client) laneForPayload(ctx context.Context, cmd string, nbytes, fs int) *reqLane {
	most := LanePayloadMax
	if cmd == "download" {
		most = c.downloadMax()
	}
	if nbytes <= 0 || nbytes >= most || c.compression != "" || c.transport != TransportAuto ||
		!c.config.LanePayload || transfer.NumFrames(nbytes, fs) >= transfer.MaxLaneFrames {
		return nil
	}
	return c.laneFor(ctx, cmd)
}

// callLane runs cmd on lane l with payload frames (c.mu held), as callLocked
// does on ZeroMQ, whileWaiting (when not nil) once the request is sent
// (an upload's bytes on the bulk stream); it returns the reply and its
// payload frames, read into place's buffer where it gives one.
func (c *Client) callLane(ctx context.Context, l *reqLane, cmd string, args map[string]any, payload [][]byte, whileWaiting func(), place *transfer.LanePlace) (*transfer.Reply, [][]byte, error) {
	c.flushDeletes()
	c.nextID++
	hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: c.nextID, Token: c.token, Cmd: cmd, Args: args})
	if err != nil {
		return nil, nil, fmt.Errorf("client: encode %s request: %w", cmd, err)
	}
	return c.laneCall(ctx, l, c.nextID, hdr, cmd, args, payload, whileWaiting, place)
}

// laneReplyWait is how long a lane reply that has begun may take to
// finish once its request's context has ended (a 64 MiB reply, the most a
// lane carries, crosses a 100 Mbit/s link in about 5 s). Other requests
// wait for it: the client sends one request at a time.
const laneReplyWait = 10 * time.Second

// laneReplyHook, when set (tests), runs once a lane reply has begun.
var laneReplyHook func()

// drainLane reads the late reply to request id on lane l (given up on),
// queues the deletion of the arrays it made, and closes l.
func (c *Client) drainLane(l *reqLane, id uint64) {
	defer l.s.conn.Close()
	l.s.conn.SetDeadline(time.Now().Add(10 * time.Minute))
	frames, err := transfer.ReadLane(l.r)
	if err != nil {
		return
	}
	rep, err := transfer.DecodeReply(frames[0])
	if err != nil || rep.ID != id {
		return
	}
	c.mu.Lock()
	c.lateReply(rep)
	c.mu.Unlock()
}

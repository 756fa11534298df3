package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/transfer"
)

// Transport chooses how array bytes travel.
type Transport int

const (
	// TransportAuto sends arrays of StreamThreshold bytes or more over a
	// bulk stream when the server offers one, and smaller ones in frames.
	TransportAuto Transport = iota
	// TransportFrames always sends arrays in ZeroMQ frames.
	TransportFrames
	// TransportStream always uses a bulk stream (an error if there is none).
	TransportStream
)

// StreamThreshold is the array size from which TransportAuto streams: below
// it one ZeroMQ message is as fast and saves the stream's extra syscalls.
const StreamThreshold = 1 << 20

// WithTransport picks how array bytes travel (default TransportAuto).
func WithTransport(t Transport) Option { return func(o *options) { o.transport = t } }

// WithCompression compresses array frames with "zstd" both ways (for slow,
// remote links; it costs CPU and pays only on compressible data). Arrays
// then travel in frames, never over a bulk stream.
func WithCompression(codec string) Option { return func(o *options) { o.compression = codec } }

// WithStreamNetwork restricts bulk streams to "tcp" or "unix" (default: unix
// when the server is on this host, else tcp).
func WithStreamNetwork(network string) Option { return func(o *options) { o.streamNetwork = network } }

// bulkStream is this client's open stream: a plain socket to the server
// that carries array bytes only (docs/protocol.md, "Bulk streams").
type bulkStream struct {
	id      uint64
	conn    net.Conn
	network string // "unix" or "tcp", for benchmarks and tests
	// More TCP streams a large transfer is striped over (stripesFor),
	// opened when one first needs them; closed with the stream.
	stripes []*bulkStream
}

// DefaultStripes is how many TCP bulk streams a transfer of StripeThreshold
// bytes or more is split across unless WithStripes says otherwise: one
// loopback TCP connection moved 2.2-2.5 GiB/s here, three 3.4-3.8 (the
// kernel's work for one connection runs mostly on one core).
const DefaultStripes = 3

// StripeThreshold is the array size from which transfers over TCP streams
// are striped: below it the goroutines cost more than they save.
const StripeThreshold = 16 << 20

// WithStripes sets how many TCP bulk streams a large transfer is split
// across (docs/protocol.md, "Bulk streams"); 1 keeps one stream. Unix
// streams and shared memory always take one.
func WithStripes(n int) Option { return func(o *options) { o.stripes = &n } }

func stripesOpt(p *int) int {
	if p == nil {
		return DefaultStripes
	}
	return min(max(*p, 1), transfer.MaxStripes+1)
}

// stripesFor returns the ids of the stripes a transfer of nbytes over st
// is split across, opening them when first needed: none below
// StripeThreshold, over a unix stream, or with one stripe. A stripe that
// cannot be opened leaves the transfer on those open, and none is asked
// for again before a pause. c.mu must be held.
func (c *Client) stripesFor(ctx context.Context, st *bulkStream, nbytes int) []uint64 {
	if st == nil || st.network != "tcp" || c.stripes <= 1 || nbytes < StripeThreshold {
		return nil
	}
	for len(st.stripes) < c.stripes-1 && !c.stripeRetry.early(time.Now()) {
		x, err := c.dialStream(ctx, transfer.StreamMagic)
		if err != nil || x.network != "tcp" {
			if x != nil {
				x.conn.Close()
			}
			c.stripeRetry.failed(time.Now())
			break
		}
		st.stripes = append(st.stripes, x)
	}
	return st.stripeIDs()
}

func (st *bulkStream) stripeIDs() []uint64 {
	ids := make([]uint64, len(st.stripes))
	for i, x := range st.stripes {
		ids[i] = x.id
	}
	return ids
}

// striped reads b from (or writes it to) st and its stripes at once
// (transfer.Striped), within ctx. A connection that fails closes the
// others, ending their waits: the stream's position is lost (the caller
// closes it).
func (st *bulkStream) striped(ctx context.Context, b []byte, read bool) error {
	conns := []net.Conn{st.conn}
	for _, x := range st.stripes {
		conns = append(conns, x.conn)
	}
	dl, _ := ctx.Deadline()
	return transfer.Striped(conns, b, func(conn net.Conn, p []byte) error {
		conn.SetDeadline(dl)
		// A cancelled ctx (not only its deadline) stops the transfer.
		stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
		defer stop()
		var err error
		if read {
			_, err = io.ReadFull(conn, p)
		} else {
			_, err = transfer.WriteBatched(conn, p) // (a TLS link's records gathered)
		}
		return err
	})
}

// StreamNetwork returns "unix" or "tcp" for an open bulk stream, "" when none
// is open.
func (c *Client) StreamNetwork() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream == nil {
		return ""
	}
	return c.stream.network
}

// useStream reports whether an array of nbytes goes over a stream, opening
// one if needed. c.mu must be held.
func (c *Client) useStream(ctx context.Context, nbytes int) (*bulkStream, error) {
	if c.compression != "" {
		return nil, nil
	}
	switch c.transport {
	case TransportFrames:
		return nil, nil
	case TransportAuto:
		if nbytes < StreamThreshold || c.noStream {
			return nil, nil
		}
	}
	if c.liveStream() != nil {
		return c.stream, nil
	}
	if c.transport == TransportAuto && c.streamRetry.early(time.Now()) {
		return nil, nil
	}
	st, err := c.openStream(ctx)
	if err != nil && c.transport == TransportAuto && !refusedRestoring(err) {
		// The server offers none, or it cannot be reached: frames work.
		// A server that refused (it offers no streams, or does not know
		// open_stream) is not asked again, nor one whose stream port a
		// dial timed out on; a passing refusal (shutting down, out of
		// memory) is tried again next time, and a server at its
		// --max-streams or a failed dial or handshake after a pause. A
		// restarted server's RESTORING goes back to the caller, which
		// waits for the restore and has the stream then.
		c.noStream = offersNoStreams(err)
		if errors.Is(err, errStreamPortUnreachable) {
			c.unreachable()
		}
		// A server at its --max-streams, or a dial that failed (a port
		// not forwarded: a second each time), waits a pause.
		var te *transfer.Error
		if !errors.As(err, &te) || te.Code == transfer.TooManyStreams {
			c.streamRetry.failed(time.Now())
		}
		return nil, nil
	}
	if err == nil {
		c.streamRetry = retryAfter{}
	}
	c.stream = st
	return st, err
}

// offersNoStreams reports whether open_stream's err says the server has no
// bulk streams (--stream-port -1), hence no lanes, or predates them.
func offersNoStreams(err error) bool {
	var te *transfer.Error
	return errors.As(err, &te) && (te.Code == transfer.ArgumentValue || te.Code == transfer.UnknownCommand)
}

// retryAfter spaces out the opening of a lane or stream after a failure
// that may pass (the server at its --max-streams, a failed dial): a second
// at first, doubling to a minute while it fails. Each try costs an
// open_stream round trip (and, for a lane, a dial) beside a request.
type retryAfter struct {
	at   time.Time
	wait time.Duration
}

const retryMost = time.Minute

// retryFirst is the first pause (a variable for tests that must not see
// it pass while they count requests).
var retryFirst = time.Second

func (r *retryAfter) failed(now time.Time) {
	r.wait = min(max(2*r.wait, retryFirst), retryMost)
	r.at = now.Add(r.wait)
}

func (r *retryAfter) early(now time.Time) bool { return now.Before(r.at) }

// liveStream returns the client's bulk stream, or nil: none, or one its
// server closed (restarted), which is dropped. A stream carries only the
// transfers asked for, each whole, so between them it has nothing to read;
// the check is one system call beside a transfer of a MiB or more. c.mu
// must be held.
func (c *Client) liveStream() *bulkStream {
	if c.stream != nil && (connClosedByPeer(c.stream.conn) || slices.ContainsFunc(c.stream.stripes, func(x *bulkStream) bool { return connClosedByPeer(x.conn) })) {
		c.closeStream()
		streamsClosedByPeer.Add(1)
	}
	return c.stream
}

var streamsClosedByPeer atomic.Uint64

// StreamsClosedByPeer returns how many bulk streams this process found
// closed by their (restarted) server and dropped before using them (tests
// check the path).
func StreamsClosedByPeer() uint64 { return streamsClosedByPeer.Load() }

// openStream asks for a ticket and connects: over the unix socket when the
// server is on this host, else over TCP to the control host.
func (c *Client) openStream(ctx context.Context) (*bulkStream, error) {
	return c.dialStream(ctx, transfer.StreamMagic)
}

// errStreamPortUnreachable: a dial to the server's stream port timed out
// on its own (a firewall that passes only the ZeroMQ port, most likely).
// That does not pass by itself, so the client stops opening streams and
// lanes for its life and sends everything over ZeroMQ (useStream,
// laneFor), rather than wait connectTimeout again and again.
var errStreamPortUnreachable = errors.New("the server's stream port is unreachable from here (a firewall that passes only the ZeroMQ port?); open it to this client for bulk streams and request lanes, or use TransportFrames and WithLane(false)")

var streamPortsUnreachable atomic.Uint64

// StreamPortsUnreachable is how many of this process's clients gave up
// bulk streams and request lanes because a dial to the server's stream
// port timed out (errStreamPortUnreachable): they send everything over
// ZeroMQ, large arrays more slowly. Python warns instead.
func StreamPortsUnreachable() uint64 { return streamPortsUnreachable.Load() }

// unreachable gives up streams and lanes for c's life (c.mu held).
func (c *Client) unreachable() {
	if !c.noStream || !c.laneFailed {
		streamPortsUnreachable.Add(1)
	}
	c.noStream, c.laneFailed = true, true
}

// dialStream asks for a ticket (open_stream), connects (unix on this host,
// else tcp) and hands the server magic + ticket: a bulk stream
// (transfer.StreamMagic) or a request lane (transfer.LaneMagic).
func (c *Client) dialStream(ctx context.Context, magic string) (*bulkStream, error) {
	rep, m, err := c.callLocked(ctx, "open_stream", nil, nil, nil)
	if err != nil {
		return nil, err
	}
	m.Close()
	if err := rep.Err(); err != nil {
		return nil, err
	}
	res := rep.Result
	ticket, _ := res["ticket"].([]byte)
	id := uint64(asInt(res["stream"]))
	port := int(asInt(res["port"]))
	unixPath := asString(res["unix"])
	host := controlHost(c.url)
	d := net.Dialer{Timeout: connectTimeout, KeepAliveConfig: keepAlive(c.heartbeat), Control: userTimeout(c.heartbeat)}
	var conn net.Conn
	network := "unix"
	if unixPath != "" && isLoopbackHost(host) && c.streamNetwork != "tcp" {
		conn, err = d.DialContext(ctx, "unix", unixPath)
	}
	tcpTimedOut := false
	if conn == nil && port > 0 && c.streamNetwork != "unix" {
		network = "tcp"
		addr := net.JoinHostPort(host, fmt.Sprint(port))
		if streamDialHook != nil {
			addr = streamDialHook(addr)
		}
		conn, err = d.DialContext(ctx, "tcp", addr)
		var ne net.Error
		dl, ok := ctx.Deadline()
		// The dial's own timeout, not the caller's ctx (whose deadline
		// the dial takes when it comes first, and may report a moment
		// before ctx does). (A unix dial times out only when the server
		// is not accepting: that passes.)
		tcpTimedOut = err != nil && ctx.Err() == nil && !(ok && !time.Now().Before(dl)) && errors.As(err, &ne) && ne.Timeout()
	}
	if conn == nil {
		if err == nil {
			err = fmt.Errorf("server offered no reachable stream endpoint")
		}
		if tcpTimedOut {
			return nil, fmt.Errorf("client: open stream: %w (%w)", err, errStreamPortUnreachable)
		}
		return nil, fmt.Errorf("client: open stream: %w", err)
	}
	deadline := time.Now().Add(connectTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline) // (a server that never answers the handshake)
	if network == "tcp" {
		if conn, err = c.linkTLS(ctx, conn, res["tls"]); err != nil {
			return nil, err
		}
	}
	if streamTicketHook != nil {
		ticket = streamTicketHook(ticket)
	}
	if err := streamHandshake(conn, magic, ticket); err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	return &bulkStream{id: id, conn: conn, network: network}, nil
}

// linkTLS starts TLS on a TCP stream or lane of an encrypted server, its
// certificate pinned to the fingerprint open_stream sent over the CURVE
// socket (transfer/tlslink.go). A client with a server key never sends on
// a plain TCP stream: a server that names no certificate is refused.
func (c *Client) linkTLS(ctx context.Context, conn net.Conn, pin any) (net.Conn, error) {
	fp, _ := pin.([]byte)
	if fp == nil {
		if !c.encrypted {
			return conn, nil
		}
		conn.Close()
		return nil, errors.New("client: the server's socket is encrypted but its open_stream names no TLS certificate for the TCP stream; " +
			"nothing is sent on it in clear: upgrade the server, or use TransportFrames and WithLane(false)")
	}
	t := tls.Client(transfer.NewPollConn(conn), transfer.ClientLinkConfig(fp))
	if err := t.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("client: TLS handshake on the bulk stream: %w", err)
	}
	linksTLS.Add(1)
	return t, nil
}

var linksTLS atomic.Uint64

// LinksTLS is how many bulk streams and request lanes this process's
// clients opened with TLS (tests check the path).
func LinksTLS() uint64 { return linksTLS.Load() }

// streamHandshake hands the server magic + ticket and reads its one-byte
// acknowledgement. A server that does not know the ticket (unknown or
// expired) closes the connection without one: that reads as io.EOF.
func streamHandshake(conn net.Conn, magic string, ticket []byte) error {
	ack := make([]byte, 1)
	_, err := conn.Write(append([]byte(magic), ticket...))
	if err == nil {
		_, err = io.ReadFull(conn, ack)
	}
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("client: stream handshake refused: the server closed the connection (an unknown or expired ticket): %w", err)
	case err != nil:
		return fmt.Errorf("client: stream handshake failed: %w", err)
	case ack[0] != 1:
		return fmt.Errorf("client: stream handshake refused: the server answered %d, not 1", ack[0])
	}
	return nil
}

// streamTicketHook, when set (tests), replaces the ticket dialStream hands
// the server.
var streamTicketHook func(ticket []byte) []byte

// streamDialHook, when set (tests), replaces the TCP address dialStream
// dials (a recording proxy, another server).
var streamDialHook func(addr string) string

// closeStream forgets the stream after a failed transfer. c.mu must be held.
func (c *Client) closeStream() {
	if c.stream != nil {
		c.stream.conn.Close()
		for _, x := range c.stream.stripes {
			x.conn.Close()
		}
		c.stream = nil
	}
}

// closeStreamIfInternal closes the stream after an error reply to a request
// that named it when the error is INTERNAL: a handler's bug, after which the
// server closes any stream the request held. Other refusals come before the
// server touches the stream, which stays usable.
func (c *Client) closeStreamIfInternal(err error) {
	var te *transfer.Error
	if errors.As(err, &te) && te.Code == transfer.Internal {
		c.closeStream()
	}
}

func controlHost(endpoint string) string {
	rest := endpoint[strings.Index(endpoint, "://")+3:]
	host, _, err := net.SplitHostPort(rest)
	if err != nil {
		return rest
	}
	return host
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// deadline applies ctx's deadline to the stream's socket.
func (st *bulkStream) deadline(ctx context.Context) {
	dl, _ := ctx.Deadline()
	st.conn.SetDeadline(dl)
}

// WithSharedMemory(false) keeps arrays off shared memory: uploads then
// stream their bytes even when the server is on this host, and DownloadView
// returns a private copy. The default (true) uploads arrays of
// ShmThreshold bytes or more through a shared-memory segment whenever the
// bulk stream is a unix socket (the server on this host), and DownloadView
// maps the array's segment; over TCP neither is attempted.
func WithSharedMemory(on bool) Option { return func(o *options) { o.noShm = !on } }

// ShmThreshold is the array size from which uploads go through shared
// memory over a unix stream: below it the lease's extra round trip costs
// more than it saves (measured when the segment was still mapped and
// copied into: 1 MiB 0.64 against 1.02 GiB/s over the stream, 8 MiB even,
// 64 MiB 3.7 against 2.5).
const ShmThreshold = 16 << 20

// useShm reports whether an upload of nbytes over st passes a segment.
func (c *Client) useShm(st *bulkStream, nbytes int) bool {
	return st != nil && st.network == "unix" && !c.noShm && nbytes >= ShmThreshold
}

// fillLease asks the server to lend a shared-memory segment of len(body)
// bytes on st (shm_lease) and writes body into it: the next
// upload with lease=true stores it with no copy on the server. A pooled
// segment's pages are already in memory, so this costs one copy and no page
// allocation. It returns false when the server could make no segment, or
// (with the stream closed) when this side cannot write it; an error is the
// server's refusal. c.mu must be held.
func (c *Client) fillLease(ctx context.Context, st *bulkStream, body []byte) (bool, error) {
	rep, m, err := c.callLocked(ctx, "shm_lease", map[string]any{"stream": st.id, "nbytes": len(body)}, nil, nil)
	if err != nil {
		c.closeStream() // abandoned: the descriptor may still come
		return false, err
	}
	m.Close()
	if err := rep.Err(); err != nil {
		c.closeStreamIfInternal(err)
		return false, err
	}
	if leased, _ := rep.Result["leased"].(bool); !leased {
		return false, nil // the server could make no segment: the bytes stream
	}
	st.deadline(ctx)
	fd, err := st.recvFD()
	if err != nil {
		c.endLease(ctx, st)
		return false, nil
	}
	defer unix.Close(fd)
	// Written on every core, through a mapping where the segment's pages
	// exist (a pooled one), else with pwrite; this side keeps nothing of
	// the segment once written.
	mapped, err := transfer.WriteSegment(fd, body, runtime.GOMAXPROCS(0))
	if err != nil {
		c.endLease(ctx, st)
		return false, nil
	}
	if mapped {
		shmMappedWrites.Add(1)
	}
	return true, nil
}

// endLease closes st on both sides, which ends its lease and frees the
// segment's reserved bytes at once (the server would otherwise wait a
// minute for the upload). Best effort. c.mu must be held.
func (c *Client) endLease(ctx context.Context, st *bulkStream) {
	if _, m, err := c.callLocked(ctx, "close_stream", map[string]any{"stream": st.id}, nil, nil); err == nil {
		m.Close()
	}
	c.closeStream()
}

// recvFD reads the one byte and one descriptor the server sends after a
// download with shm=true.
func (st *bulkStream) recvFD() (int, error) {
	uc, ok := st.conn.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("descriptors travel only over a unix stream")
	}
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := uc.ReadMsgUnix(b[:], oob)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("the server sent no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("the server sent %d descriptors, want 1", len(fds))
	}
	return fds[0], nil
}

package server

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/transfer"
)

// Bulk streams: a plain TCP (or unix) connection beside the ZeroMQ socket
// that carries array bytes only. The kernel copies them straight from the
// sender's buffer into the receiver's final buffer: no libzmq message, no
// user-space copy, the same path as the raw-socket ceiling.
//
// A client asks for a ticket with open_stream (an authenticated ZeroMQ
// request), connects to stream_port or stream_unix, and sends
// transfer.StreamMagic followed by the 16-byte ticket; the server answers one
// byte (1) and the connection becomes stream <id>. Then upload and download
// requests that name stream <id> move their bytes over it, in request order.
// A stream whose transfer fails half-way is closed (its byte position is
// lost); the client opens another.

const (
	ticketTTL        = 30 * time.Second
	handshakeTimeout = 5 * time.Second
	// A transfer fails when the peer moves no byte for this long.
	streamIdle = 60 * time.Second
)

type stream struct {
	id    uint64
	owner []byte // routing id of the client that asked for its ticket
	conn  net.Conn
	mu    sync.Mutex // one transfer at a time
	lease *lease     // a segment lent for the next upload (shm.go); guarded by mu
	// holder is the request that holds mu, set by takeStream after locking
	// and cleared before unlocking (unlock, dropStream), so a request whose
	// handler panics can tell the streams it still holds (see held).
	holder atomic.Pointer[held]
}

// held lists the streams one request took; it outlives the handler, since
// a response's after function may release them.
type held struct{ streams []*stream }

// unlock ends the transfer that holds x, leaving the stream open.
func (x *stream) unlock() {
	x.holder.Store(nil)
	x.mu.Unlock()
}

// dropHeld closes every stream h still holds: a request that panicked
// left each one at an unknown byte position (the client opens another).
func (s *Server) dropHeld(h *held) {
	for _, x := range h.streams {
		if x.holder.Load() == h {
			s.log.Error("stream dropped after a panic", "stream", x.id)
			s.dropStream(x)
		}
	}
}

type streams struct {
	mu      sync.Mutex
	tickets map[string]ticket
	open    map[uint64]*stream
	lanes   map[net.Conn]struct{} // request lanes (lane.go)
	laneWG  sync.WaitGroup        // their goroutines
	closed  bool                  // closeStreams ran: no new lane
	nextID  uint64
	tcp     net.Listener
	unix    net.Listener
	unixDir string
}

type ticket struct {
	id      uint64
	owner   []byte
	expires time.Time
}

// listenStreams opens the stream listeners: TCP on the control address's
// host (port from cfg.StreamPort, 0 for any), and a unix socket when the
// server is local.
func (s *Server) listenStreams() error {
	s.streams = &streams{tickets: map[string]ticket{}, open: map[uint64]*stream{}, lanes: map[net.Conn]struct{}{}}
	if s.cfg.StreamPort < 0 {
		return nil
	}
	u, err := url.Parse(s.cfg.Addr)
	if err != nil || u.Scheme != "tcp" {
		return nil // ipc:// and inproc:// servers offer the unix stream only
	}
	host := u.Hostname()
	if host == "*" {
		host = ""
	}
	s.streams.tcp, err = net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(s.cfg.StreamPort)))
	if err != nil {
		return fmt.Errorf("server: stream listener on %s port %d: %w (pick another --stream-port, or -1 to disable streams)", host, s.cfg.StreamPort, err)
	}
	if IsLocalAddr(s.cfg.Addr) {
		dir, err := os.MkdirTemp("", "arktos-stream-")
		if err == nil {
			s.streams.unixDir = dir
			s.streams.unix, err = net.Listen("unix", filepath.Join(dir, "stream.sock"))
		}
		if err != nil {
			s.log.Warn("no unix stream socket", "err", err)
		}
	}
	if s.streams.tcp != nil {
		go s.acceptStreams(s.streams.tcp, s.link) // (TLS when the socket is encrypted)
	}
	if s.streams.unix != nil {
		go s.acceptStreams(s.streams.unix, nil) // never leaves the host
	}
	return nil
}

func (s *Server) closeStreams() {
	st := s.streams
	if st == nil {
		return
	}
	if st.tcp != nil {
		st.tcp.Close()
	}
	if st.unix != nil {
		st.unix.Close()
		os.RemoveAll(st.unixDir)
	}
	st.mu.Lock()
	st.closed = true
	for _, x := range st.open {
		x.conn.Close()
	}
	for c := range st.lanes {
		// A lane's request in progress still finishes. Close waits for a
		// read that is polling (within --lane-spin): the lanes close side
		// by side, not one poll after another.
		go c.Close()
	}
	st.mu.Unlock()
	st.laneWG.Wait()
}

// acceptStreams takes l's connections; with link, each opens with a TLS
// handshake (transfer/tlslink.go) before the magic and ticket.
func (s *Server) acceptStreams(l net.Listener, link *transfer.LinkCert) {
	defer par.Recover(s.logPanic("panic accepting bulk streams (no new stream is accepted on this listener)"))
	var pause time.Duration
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors (EMFILE, ENFILE) or kernel memory
			// passes once connections close: pause and accept again, as
			// net/http does; returning would end every new stream and lane
			// for the server's lifetime.
			if pause == 0 {
				s.log.Warn("stream accept failed; trying again", "err", err)
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			time.Sleep(pause)
			continue
		}
		pause = 0
		go s.handshake(c, link)
	}
}

// handshake reads magic + ticket and registers the connection, after a
// TLS handshake with link.
func (s *Server) handshake(c net.Conn, link *transfer.LinkCert) {
	defer par.Recover(func(p *par.Panic) {
		s.logPanic("panic in a stream's handshake")(p)
		c.Close()
	})
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if link != nil {
		t := tls.Server(transfer.NewPollConn(c), link.Server)
		if err := t.Handshake(); err != nil {
			s.log.Debug("stream TLS handshake refused", "remote", c.RemoteAddr(), "err", err)
			s.stats.StreamTLSRefused.Add(1)
			c.Close()
			return
		}
		s.stats.StreamTLS.Add(1)
		c = t
	}
	buf := make([]byte, len(transfer.StreamMagic)+transfer.TicketSize)
	_, err := io.ReadFull(c, buf)
	magic := string(buf[:len(transfer.StreamMagic)])
	if err != nil || magic != transfer.StreamMagic && magic != transfer.LaneMagic {
		s.log.Debug("stream handshake refused", "remote", c.RemoteAddr(), "err", err)
		c.Close()
		return
	}
	tk := buf[len(transfer.StreamMagic):]
	st := s.streams
	st.mu.Lock()
	var found *ticket
	now := time.Now()
	for k, t := range st.tickets {
		if now.After(t.expires) {
			delete(st.tickets, k)
			continue
		}
		if subtle.ConstantTimeCompare([]byte(k), tk) == 1 {
			t := t
			found = &t
			delete(st.tickets, k)
		}
	}
	if found == nil {
		st.mu.Unlock()
		s.log.Debug("stream handshake with an unknown or expired ticket", "remote", c.RemoteAddr())
		c.Close()
		return
	}
	if magic == transfer.LaneMagic {
		if st.closed {
			st.mu.Unlock()
			c.Close()
			return
		}
		st.lanes[c] = struct{}{}
		st.laneWG.Add(1) // under mu, before closeStreams can wait (it sets closed under mu)
		st.mu.Unlock()
		c.SetDeadline(time.Time{})
		if _, err := c.Write([]byte{1}); err != nil {
			s.endLane(c)
			return
		}
		go s.serveLane(c, found.owner)
		return
	}
	st.open[found.id] = &stream{id: found.id, owner: found.owner, conn: c}
	st.mu.Unlock()
	c.SetDeadline(time.Time{})
	c.Write([]byte{1})
}

func (s *Server) cmdOpenStream(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	st := s.streams
	if st.tcp == nil && st.unix == nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "this server offers no bulk streams (--stream-port -1); transfer arrays in frames")
	}
	tk := make([]byte, transfer.TicketSize)
	if _, err := rand.Read(tk); err != nil {
		return nil, transfer.Errorf(transfer.Internal, "ticket: %v", err)
	}
	limit := s.cfg.MaxStreams
	st.mu.Lock()
	if st.heldLocked() >= limit {
		st.mu.Unlock()
		s.reapStreams()
		st.mu.Lock()
	}
	if n := st.heldLocked(); n >= limit {
		st.mu.Unlock()
		s.stats.StreamsRefused.Add(1)
		return nil, transfer.Errorf(transfer.TooManyStreams, "the server holds %d bulk streams and request lanes (with tickets handed out for them), its --max-streams; "+
			"close the clients you no longer use (each holds at most one stream and one lane), or start the server with a larger --max-streams. "+
			"Transfers and requests go on over ZeroMQ meanwhile", n)
	}
	st.nextID++
	id := st.nextID
	st.tickets[string(tk)] = ticket{id: id, owner: append([]byte(nil), r.peer...), expires: time.Now().Add(ticketTTL)}
	st.mu.Unlock()
	res := map[string]any{"stream": id, "ticket": tk, "port": 0, "unix": ""}
	if st.tcp != nil {
		res["port"] = st.tcp.Addr().(*net.TCPAddr).Port
	}
	if st.unix != nil {
		res["unix"] = st.unix.Addr().String()
	}
	if s.link != nil {
		// The pin of the TCP stream's certificate: this reply came over
		// the CURVE socket, so it is the server's own (transfer/tlslink.go).
		res["tls"] = s.link.Fingerprint
	}
	return &response{result: res}, nil
}

func (s *Server) cmdCloseStream(r *request) (*response, error) {
	id := r.args.Uint("stream")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	x, err := s.takeStream(id, r)
	if err != nil {
		return nil, err
	}
	s.dropStream(x)
	return &response{result: map[string]any{}}, nil
}

// heldLocked counts what --max-streams bounds: open bulk streams and
// lanes, and tickets not yet used (each may become one). st.mu must be held.
func (st *streams) heldLocked() int { return len(st.open) + len(st.lanes) + len(st.tickets) }

// reapStreams frees what a new stream can take: expired tickets, and idle
// bulk streams whose client has gone (it closed the connection, or its
// host stopped answering TCP keep-alives). A stream's socket is read only
// during a transfer, so nothing else notices its client leave; lanes end
// when their goroutine reads the close.
func (s *Server) reapStreams() {
	st := s.streams
	st.mu.Lock()
	now := time.Now()
	for k, t := range st.tickets {
		if now.After(t.expires) {
			delete(st.tickets, k)
		}
	}
	open := make([]*stream, 0, len(st.open))
	for _, x := range st.open {
		open = append(open, x)
	}
	st.mu.Unlock()
	for _, x := range open {
		if !x.mu.TryLock() {
			continue // in a transfer: its client is there
		}
		if _, ok := st.lookup(x.id); ok && gone(x.conn) {
			s.log.Debug("bulk stream closed by its client; dropped", "stream", x.id)
			s.dropStream(x)
			s.stats.StreamsReaped.Add(1)
			continue
		}
		x.mu.Unlock()
	}
}

// gone reports whether the client of an idle stream closed it or the
// connection broke. Bytes waiting to be read (an upload's, sent before its
// request took the stream) mean a live client.
func gone(c net.Conn) bool {
	closed, _ := transfer.PeekIdle(c)
	return closed
}

// lookup returns open stream id, whoever owns it.
func (st *streams) lookup(id uint64) (*stream, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	x, ok := st.open[id]
	return x, ok
}

// takeStream returns stream id, locked for request r's transfer. A stream
// serves only the peer that opened it: to any other it does not exist.
func (s *Server) takeStream(id uint64, r *request) (*stream, error) {
	lookup := func() (*stream, bool) {
		x, ok := s.streams.lookup(id)
		return x, ok && bytes.Equal(x.owner, r.peer) // (owner never changes)
	}
	x, ok := lookup()
	if ok {
		x.mu.Lock()
		// A request that waited for the lock behind one that failed finds
		// the stream closed (dropStream forgot it).
		if _, ok = lookup(); !ok {
			x.mu.Unlock()
		}
	}
	if !ok {
		return nil, transfer.Errorf(transfer.ArgumentValue, "no open stream %d (it was closed after a failed transfer, or never connected); open another with open_stream", id)
	}
	if r.held != nil {
		x.holder.Store(r.held)
		r.held.streams = append(r.held.streams, x)
	}
	if c := s.panicCmd.Load(); c != nil && *c == r.Cmd && s.panicCmd.CompareAndSwap(c, nil) {
		panic("ARKTOS_DEBUG_PANIC_WITH_STREAM: a stand-in for a bug in " + r.Cmd)
	}
	return x, nil
}

// dropStream closes a locked stream and forgets it, ending its lease.
func (s *Server) dropStream(x *stream) {
	s.endLease(x)
	x.conn.Close()
	s.streams.mu.Lock()
	delete(s.streams.open, x.id)
	s.streams.mu.Unlock()
	x.unlock()
}

// readFull reads len(b) bytes with an idle timeout that restarts as bytes
// arrive, so a slow but live peer is never cut off mid-transfer.
func readFull(c net.Conn, b []byte) error {
	const chunk = 64 << 20
	for off := 0; off < len(b); {
		c.SetReadDeadline(time.Now().Add(streamIdle))
		n, err := io.ReadFull(c, b[off:min(off+chunk, len(b))])
		off += n
		if err != nil {
			return fmt.Errorf("stream ended after %d of %d bytes: %w", off, len(b), err)
		}
	}
	return nil
}

func writeFull(c net.Conn, b []byte) error {
	const chunk = 64 << 20
	for off := 0; off < len(b); {
		c.SetWriteDeadline(time.Now().Add(streamIdle))
		n, err := transfer.WriteBatched(c, b[off:min(off+chunk, len(b))]) // (a TLS link's records gathered)
		off += n
		if err != nil {
			return fmt.Errorf("stream write stopped after %d of %d bytes: %w", off, len(b), err)
		}
	}
	return nil
}

// takeStreams takes, for request r, a transfer's stream main and its
// stripes (docs/protocol.md, "Bulk streams"), each locked as takeStream
// locks it, in ascending id order (two requests naming the same streams
// in another order cannot each hold what the other waits for). It returns
// them in the transfer's order, main first; with an error, those it took:
// an upload's bytes are already on the way on them, so the caller drops
// them; a download's are not, so it unlocks them.
func (s *Server) takeStreams(main uint64, stripes []uint64, r *request) ([]*stream, error) {
	if err := checkStripes(stripes, main); err != nil {
		return nil, err
	}
	ids := append([]uint64{main}, stripes...)
	order := slices.Clone(ids)
	slices.Sort(order)
	byID := make(map[uint64]*stream, len(ids))
	var taken []*stream
	for _, id := range order {
		x, err := s.takeStream(id, r)
		if err != nil {
			return taken, err
		}
		byID[id] = x
		taken = append(taken, x)
	}
	xs := make([]*stream, len(ids))
	for i, id := range ids {
		xs[i] = byID[id]
	}
	return xs, nil
}

// checkStripes checks a transfer's stripes beside its stream main: at most
// transfer.MaxStripes, each named once, none of them main.
func checkStripes(ids []uint64, main uint64) error {
	if len(ids) > transfer.MaxStripes {
		return transfer.Errorf(transfer.ArgumentValue, "stripes names %d streams; a transfer stripes over at most %d besides its own", len(ids), transfer.MaxStripes)
	}
	seen := map[uint64]bool{main: true}
	for _, id := range ids {
		if seen[id] {
			return transfer.Errorf(transfer.ArgumentValue, "stripes names stream %d twice, or the transfer's own 'stream'; name each other open stream once", id)
		}
		seen[id] = true
	}
	return nil
}

func errStripesAlone() error {
	return transfer.Errorf(transfer.MissingArgument, "'stripes' split a transfer over bulk streams and need the transfer's own 'stream'; name one, or drop 'stripes'")
}

func errStripesShm() error {
	return transfer.Errorf(transfer.ArgumentValue, "'stripes' split bytes over bulk streams; a shared-memory transfer (shm, lease) moves none: drop one of them")
}

// dropStreams drops every stream of a failed striped transfer.
func (s *Server) dropStreams(xs []*stream) {
	for _, x := range xs {
		s.dropStream(x)
	}
}

func unlockAll(xs []*stream) {
	for _, x := range xs {
		x.unlock()
	}
}

// readStriped reads b from the streams xs, stripe i from xs[i]
// (transfer.Striped): one loopback TCP connection moved 2.2-2.5 GiB/s
// here, three 3.4-3.8 (the kernel's work for one connection runs mostly on
// one core). A stream that fails closes the others, ending their waits.
func readStriped(xs []*stream, b []byte) error {
	return striped(xs, b, readFull)
}

// writeStriped writes b to the streams xs, as readStriped reads.
func writeStriped(xs []*stream, b []byte) error {
	return striped(xs, b, writeFull)
}

func striped(xs []*stream, b []byte, move func(net.Conn, []byte) error) error {
	conns := make([]net.Conn, len(xs))
	for i, x := range xs {
		conns[i] = x.conn
	}
	return transfer.Striped(conns, b, move)
}

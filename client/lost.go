package client

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"
	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/transfer"
)

// A request sent over ZeroMQ waits for its reply on a DEALER socket that
// reconnects by itself: a server that stopped or crashed mid-request (the
// kernel killed it for memory, say) left the caller waiting until its ctx
// ended, for ever without a deadline, and a host that vanished without
// closing the connection likewise. So the client watches its socket's
// connection (a libzmq socket monitor reporting disconnects) and sends
// heartbeats (ZMTP PING, which the server's libzmq I/O thread answers
// however long its handlers run): a request whose connection dropped while
// it waited fails with ErrConnectionLost. Lanes and bulk streams are plain
// sockets, which report a closed connection themselves; on TCP their
// keep-alives and TCP_USER_TIMEOUT follow the heartbeat (keepAlive), so a
// vanished host fails them within about as long.

// ErrConnectionLost is wrapped by the error of a request whose connection
// to the server dropped while it waited for the reply: the server stopped,
// crashed or restarted, or answered no heartbeat (WithHeartbeat). Whether
// the request ran is not known; the client connects again by itself.
var ErrConnectionLost = errors.New("connection to the server lost")

// DefaultHeartbeat is how long a server may leave heartbeats unanswered
// before its connection counts as lost (WithHeartbeat).
const DefaultHeartbeat = 30 * time.Second

// WithHeartbeat sets how long the server may leave the client's heartbeats
// unanswered before the connection counts as lost and a request waiting on
// it fails with ErrConnectionLost (default DefaultHeartbeat; pings go out
// at a quarter of it; 0 sends none, and then only a closed connection is
// noticed). A host that vanished is found this way; a server process that
// stopped is found at once. TCP lanes and bulk streams set their
// keep-alives and TCP_USER_TIMEOUT from it too (0: Go's defaults).
func WithHeartbeat(d time.Duration) Option { return func(o *options) { o.heartbeat = &d } }

// A heartbeat's timeout is cancelled only by a whole ZeroMQ frame
// received (libzmq decodes a PONG, like any message, only after the frame
// the server is sending; zeromq/libzmq#2709): a download over ZeroMQ whose
// frame took longer than the heartbeat to arrive, over a slow link such as
// a far SSH tunnel, counted as lost while its bytes flowed. So such a
// download asks for frames that take about an eighth of the heartbeat at
// the rate the last one came at (linkFrameSize): pings go out at a
// quarter, so the link may slow several times over between downloads. A
// link that slowed more fails one download with ErrConnectionLost, and
// the next starts again from assumedLinkRate. Uploads need nothing here:
// the client's pings wait behind the bytes in flight, but the server pings
// every client each 500 ms on the idle direction, which ends the wait.
const (
	assumedLinkRate = 1 << 20  // bytes a second before a download was measured
	minLinkFrame    = 64 << 10 // smaller frames would cost more than they save
	linkSample      = 1 << 20  // smaller downloads say more about latency than rate
)

// linkFrameSize is the frame size for a download over ZeroMQ: the server's
// largest where the link is fast or there are no heartbeats (c.mu held).
func (c *Client) linkFrameSize() int {
	largest := c.config.MaxFrameSize
	if c.heartbeat <= 0 {
		return largest
	}
	rate := c.linkRate
	if rate <= 0 {
		rate = assumedLinkRate
	}
	fs := rate * c.heartbeat.Seconds() / 8
	if fs >= float64(largest) {
		return largest
	}
	// Whole pages, so no frame splits an element.
	return min(max(int(fs)&^4095, minLinkFrame), largest)
}

// measureLink notes the rate a download over ZeroMQ of n payload bytes
// came at, taking took from request to reply (c.mu held). The server's own
// time counts as the link's: the rate is, if anything, too low.
func (c *Client) measureLink(n int, took time.Duration) {
	if n >= linkSample && took > 0 {
		c.linkRate = float64(n) / took.Seconds()
	}
}

var monitorSeq atomic.Uint64

// watchConnection starts the socket monitor and the heartbeats (Dial).
func (c *Client) watchConnection(heartbeat time.Duration) error {
	if heartbeat > 0 {
		if err := c.sock.SetHeartbeatIvl(max(heartbeat/4, time.Millisecond)); err != nil {
			return fmt.Errorf("client: heartbeat: %w", err)
		}
		if err := c.sock.SetHeartbeatTimeout(heartbeat); err != nil {
			return fmt.Errorf("client: heartbeat: %w", err)
		}
	}
	addr := fmt.Sprintf("inproc://arktos-client-monitor-%d", monitorSeq.Add(1))
	if err := c.sock.Monitor(addr, zmq.EVENT_DISCONNECTED|zmq.EVENT_HANDSHAKE_SUCCEEDED|zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL|zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL|zmq.EVENT_HANDSHAKE_FAILED_AUTH); err != nil {
		return fmt.Errorf("client: monitor: %w", err)
	}
	mon, err := zmq.NewSocket(zmq.PAIR)
	if err != nil {
		return fmt.Errorf("client: monitor: %w", err)
	}
	mon.SetLinger(0)
	// No limit on the queue: libzmq's sending side blocks its I/O thread
	// when it is full (events are tens of bytes, read at each request on
	// ZeroMQ).
	mon.SetRcvhwm(0)
	if err := mon.Connect(addr); err != nil {
		mon.Close()
		return fmt.Errorf("client: monitor: %w", err)
	}
	c.mon = mon
	return nil
}

// dropped reads the monitor's events and reports whether the connection
// dropped since the last call, without blocking (c.mu held). Called before
// a request goes out (what came before is not about it) and while its
// reply is late.
func (c *Client) dropped() bool {
	gone := c.monitorDropped()
	if gone {
		c.forgetOwed()
	}
	return gone
}

func (c *Client) monitorDropped() bool {
	if testDrop != nil && testDrop() {
		return true
	}
	if c.mon == nil {
		return false
	}
	gone := false
	for {
		// (Asking first costs no allocation when there is none, the usual case.)
		if st, err := c.mon.GetEvents(); err != nil || st&zmq.POLLIN == 0 {
			return gone
		}
		ev, _, _, err := c.mon.RecvEvent(zmq.DONTWAIT)
		if err != nil {
			return gone
		}
		// (A connection whose handshake failed carried no request: its end
		// is not a drop, and ZeroMQ tries again.)
		gone = gone || ev == zmq.EVENT_DISCONNECTED && c.handshakeFailures == 0
		switch {
		case ev&(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL|zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL|zmq.EVENT_HANDSHAKE_FAILED_AUTH) != 0:
			c.handshakeFailures++
		case ev == zmq.EVENT_HANDSHAKE_SUCCEEDED:
			c.handshakeFailures, c.handshakeOK = 0, true
		}
	}
}

// handshakeFailed says whether the server refuses this client's handshake:
// a CURVE key or mechanism the server does not share fails each time.
// Before any handshake succeeded one failure says so; after, twice in a row
// (ZeroMQ retries in ~0.2 s), as once can be a server that stopped
// mid-handshake.
func (c *Client) handshakeFailed() bool {
	return c.handshakeFailures >= 2 || c.handshakeFailures > 0 && !c.handshakeOK
}

// testDrop, when set (tests only: export_test.go), reports a drop at the
// calls where it returns true, as if the monitor had.
var testDrop func() bool

var connectionsLost atomic.Uint64

// ConnectionsLost is how many requests this process's clients failed with
// ErrConnectionLost (tests check the path).
func ConnectionsLost() uint64 { return connectionsLost.Load() }

func (c *Client) lostError(cmd string) error {
	if c.handshakeFailed() {
		// ZeroMQ retries a failed handshake for ever, quietly: say why.
		why := "the server encrypts its socket (CurveZMQ) and this client has no server key: pass client.WithServerKey (the key the server printed at start, in its ~/.arktos/server_key.pub) or set ARKTOS_SERVER_KEY"
		if c.encrypted {
			why = "the server key given is not this server's (read it again from the server's log or its ~/.arktos/server_key.pub), or the server does not encrypt its socket (--encrypt off: dial without a server key)"
		}
		return transfer.Errorf(transfer.AuthFailed, "the ZeroMQ handshake with %s failed: %s", c.url, why)
	}
	connectionsLost.Add(1)
	why := "the server stopped, crashed or restarted"
	if c.heartbeat > 0 {
		why += fmt.Sprintf(", or answered no heartbeat within %v", c.heartbeat)
	}
	return fmt.Errorf("client: %s on %s: the connection dropped while the request waited for its reply (%s); whether it ran is not known, and the next request connects again: %w",
		cmd, c.url, why, ErrConnectionLost)
}

// keepAlive is a TCP lane's or stream's keep-alive for heartbeat: probes
// from a quarter of it on an idle connection (a lane waiting for a reply
// is one), and four unanswered ones drop it. 0 leaves Go's defaults (15 s
// idle, then 9 probes 15 s apart).
func keepAlive(heartbeat time.Duration) net.KeepAliveConfig {
	if heartbeat <= 0 {
		return net.KeepAliveConfig{}
	}
	step := max(heartbeat/4, time.Second) // (the kernel counts whole seconds)
	return net.KeepAliveConfig{Enable: true, Idle: step, Interval: step, Count: 4}
}

// userTimeout sets TCP_USER_TIMEOUT to heartbeat on TCP connections: bytes
// sent and never acknowledged (a request written to a vanished host) fail
// the connection then, not after the kernel's 15 retransmissions.
func userTimeout(heartbeat time.Duration) func(network, address string, rc syscall.RawConn) error {
	if heartbeat <= 0 {
		return nil
	}
	return func(network, _ string, rc syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil
		}
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(heartbeat.Milliseconds()))
		}); err != nil {
			return err
		}
		return serr
	}
}

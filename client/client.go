// Package client is the Go client of arktos-server.
//
//	c, err := client.Dial(ctx, "tcp://127.0.0.1:5555")
//	info, err := client.Upload(ctx, c, []float64{1, 2, 3})
//	xs, err := client.Download[float64](ctx, c, info.Name)
//
// A Client is safe for concurrent use; its requests are sent one at a time
// over one ZeroMQ DEALER socket. Deadlines and cancellation come from each
// call's context: a call abandoned that way leaves the connection usable
// (its late reply is recognised by request id and dropped).
package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// DefaultURL is used when Dial gets "" and ARKTOS_URL is unset.
const DefaultURL = "tcp://localhost:5555"

// Client is a connection to one arktos-server.
type Client struct {
	mu            sync.Mutex
	sock          *zmq.Socket
	rcvTimeout    time.Duration // the socket's ZMQ_RCVTIMEO, set by recv
	mon           *zmq.Socket   // the socket monitor's events (lost.go); guarded by mu
	heartbeat     time.Duration // WithHeartbeat (lost.go)
	linkRate      float64       // bytes a second the last measured ZeroMQ download came at; 0: none (lost.go); guarded by mu
	url           string
	token         string
	nextID        uint64
	config        ServerConfig
	transport     Transport
	streamNetwork string
	compression   string
	noShm         bool               // WithSharedMemory(false)
	stripes       int                // WithStripes
	stripeRetry   retryAfter         // a stripe that could not be opened waits a pause
	noShmMin      bool               // the server refused download's shm_min (an older server)
	noStream      bool               // a stream could not be opened (TransportAuto): frames from then on
	stream        *bulkStream        // nil until the first large transfer; guarded by mu
	noLane        bool               // WithLane(false)
	laneSpin      time.Duration      // WithLaneSpin; 0: none
	laneSpinStats transfer.SpinStats // what the lane's polling reads did (tests)
	lane          *reqLane           // nil until the first small request (lane.go); guarded by mu
	laneFailed    bool               // the server offers no lane: do not ask again
	laneRetry     retryAfter         // a lane open failed for a passing reason: not again before then
	streamRetry   retryAfter         // open_stream refused with TOO_MANY_STREAMS: frames until then
	ready         bool               // Dial's get_config went through (no lane before)
	// Requests given up on, and arrays their late replies made (late.go).
	abandoned map[uint64]abandonedReq
	// encrypted: dialled with a server key (CurveZMQ). handshakeFailures:
	// handshakes the monitor saw fail in a row (a key or mechanism that does
	// not match), since the last that succeeded; handshakeOK: one has.
	encrypted         bool
	handshakeFailures int
	handshakeOK       bool
	pendingDeletes    []string
	// refs: payload frames sent without a copy that libzmq may still hold
	// (sendParts); guarded by mu.
	refs []*zframe.Refs
	// opts: Dial's, for the links to the other locales of a server that
	// spreads its arrays (locales.go).
	opts    options
	locales localeLinks
}

// ServerConfig is what get_config reports.
type ServerConfig struct {
	ProtocolVersion int
	ServerVersion   string
	MaxFrameSize    int
	MaxMemory       int64
	Workers         int
	Auth            bool
	DTypes          []string
	LanePayload     bool // takes small uploads and downloads over a request lane
	DownloadInline  bool // download takes inline_max: small arrays inline in the reply
	// FrameHeap: bytes of freed ZeroMQ frames the server keeps resident
	// for the next message (0: its malloc is not tuned; --frame-heap).
	FrameHeap int64
	// Restoring: a server started with --checkpoint still bringing its
	// arrays back (nil once it has); Dial waits until it has.
	Restoring *RestoreProgress
	// Creating: the commands that store new arrays (nil from a server that
	// does not say).
	Creating []string
	// CommandTable: the server sends its command table (the commands
	// command); Commands is that table, read at Dial (nil from a server
	// older than it, whose requests then stay off the lane).
	CommandTable bool
	Commands     map[string]CommandInfo
	// NumLocales: the server processes every array is spread over (1: a
	// lone server; docs/locales.md).
	NumLocales int
}

// CommandInfo is a row of the server's command table (docs/protocol.md,
// "The command table"): what a client needs to know to send the command.
type CommandInfo struct {
	Creates     bool     // stores new arrays, named in its result
	Writes      []string // the arguments naming arrays it may change ("*": any)
	Lane        bool     // may go over a request lane
	LanePayload bool     // with payload frames too (request or reply)
	Payload     bool     // the request carries payload frames
	// Distribution: how it spreads over several server processes
	// (local, every, elementwise, reduce, exchange, gather, scatter).
	Distribution string
}

// RestoreProgress is get_config's "restoring": how far a server's restore
// of its --checkpoint is.
type RestoreProgress struct {
	Arrays, ArraysDone int
	Bytes, BytesDone   int64
	Seconds            float64
}

// ArrayInfo describes a stored array.
type ArrayInfo struct {
	Name   string
	DType  pdarray.DType
	Size   int
	NBytes int
}

// MemInfo is the server's memory accounting.
type MemInfo struct {
	Used, Limit, Free int64
	Arrays            int
}

type options struct {
	token         string
	transport     Transport
	streamNetwork string
	compression   string
	noShm         bool
	noLane        bool
	stripes       *int           // WithStripes; nil: DefaultStripes
	laneSpin      *time.Duration // WithLaneSpin; nil: transfer.DefaultLaneSpin
	heartbeat     *time.Duration // WithHeartbeat; nil: DefaultHeartbeat
	serverKey     string         // WithServerKey; "": $ARKTOS_SERVER_KEY, else none
}

// Option configures Dial.
type Option func(*options)

// WithToken sets the access token (it wins over the URL and the environment).
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithServerKey is the public CURVE key of a server that encrypts its
// socket (CurveZMQ; a server on an address other hosts can reach, by
// default): the 40 Z85 characters it printed at start and wrote to its
// ~/.arktos/server_key.pub. Without it, $ARKTOS_SERVER_KEY. The client makes
// a throwaway key pair of its own for the connection.
func WithServerKey(key string) Option { return func(o *options) { o.serverKey = key } }

// defaultFrameHeap is how much freed ZeroMQ message memory a client process
// keeps resident for its next message unless ARKTOS_FRAME_HEAP says
// otherwise (as much as the download pool keeps: defaultPoolBytes).
const defaultFrameHeap = 1 << 30

func init() { tuneMalloc() }

// tuneMalloc lets libzmq reuse its frames' memory in this process (see
// zframe.TuneMalloc). It runs when the package is initialised, before the
// program can make its first ZeroMQ socket (libzmq's I/O threads start with
// it, and a thread keeps the malloc arena it first took); the settings are
// process-wide. Arrays in ZeroMQ frames (where
// no stream or shared memory is used) are copied into messages malloc gives
// libzmq, and received into such messages: by default each is faulted in
// afresh, which made a 256 MiB upload in frames run at 0.4 GiB/s against
// about 2 GiB/s tuned (bench/transfer). ARKTOS_FRAME_HEAP=0 leaves malloc
// as it is; another size sets what is kept (at most 1 GiB).
func tuneMalloc() {
	keep := int64(defaultFrameHeap)
	if v, ok := os.LookupEnv("ARKTOS_FRAME_HEAP"); ok {
		n, err := transfer.ParseBytes(v)
		if err != nil || n < 0 {
			keep = 0 // a typo must not fail Dial; the server refuses it loudly
		} else {
			keep = n
		}
	}
	zframe.TuneMalloc(keep)
}

// connectTimeout bounds Dial's first request when ctx has no deadline, as
// Python's connect (CONNECT_TIMEOUT), and a stream's or lane's dial and
// handshake (dialStream): without it a stream port whose packets a
// firewall drops held each large transfer and a lane's first request for
// the caller's whole ctx, or the kernel's two minutes of retries without
// one. A variable for the tests.
var connectTimeout = 10 * time.Second

// Dial connects to url ("" means ARKTOS_URL, else DefaultURL) and checks the
// server answers get_config before ctx is done (within 10 s when ctx has
// no deadline); where nothing listens at url (the connection refused, or
// an ipc:// socket file missing) it fails at once with an error wrapping
// ErrNotListening. A server still restoring its --checkpoint answers at once
// but runs other requests only once its arrays are back: Dial waits for
// that as long as ctx allows (no limit of its own). The token comes from
// WithToken, the URL's ?token=, ARKTOS_TOKEN, the file ARKTOS_TOKEN_FILE
// names, or, when the server asks for one, ~/.arktos/token.
func Dial(ctx context.Context, rawURL string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if rawURL == "" {
		rawURL = os.Getenv("ARKTOS_URL")
	}
	if rawURL == "" {
		rawURL = DefaultURL
	}
	endpoint, urlToken, err := splitURL(rawURL)
	if err != nil {
		return nil, err
	}
	token, fromHomeFile := o.token, false
	for _, t := range []func() string{
		func() string { return urlToken },
		func() string { return os.Getenv("ARKTOS_TOKEN") },
		func() string { return readTokenFile(os.Getenv("ARKTOS_TOKEN_FILE")) },
	} {
		if token == "" {
			token = t()
		}
	}
	laneSpin := transfer.DefaultLaneSpin
	if o.laneSpin != nil {
		laneSpin = *o.laneSpin
		if laneSpin < 0 || laneSpin > transfer.MaxLaneSpin {
			return nil, fmt.Errorf("client: WithLaneSpin(%v): use a duration from 0 (no polling) to %v", laneSpin, transfer.MaxLaneSpin)
		}
	} else if v := os.Getenv("ARKTOS_LANE_SPIN"); v != "" && !o.noLane { // (read only where a lane may open)
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > transfer.MaxLaneSpin {
			return nil, fmt.Errorf("client: ARKTOS_LANE_SPIN=%q: use a duration such as 200us (at most %v), or 0 to turn polling off", v, transfer.MaxLaneSpin)
		}
		laneSpin = d
	}
	if err := probe(ctx, endpoint); err != nil {
		return nil, err
	}
	sock, err := zmq.NewSocket(zmq.DEALER)
	if err != nil {
		return nil, fmt.Errorf("client: socket: %w", err)
	}
	sock.SetLinger(0)
	serverKey := o.serverKey
	if serverKey == "" {
		serverKey = os.Getenv("ARKTOS_SERVER_KEY")
	}
	if err := useCurve(sock, serverKey); err != nil {
		sock.Close()
		return nil, err
	}
	heartbeat := DefaultHeartbeat
	if o.heartbeat != nil {
		if heartbeat = *o.heartbeat; heartbeat < 0 {
			sock.Close()
			return nil, fmt.Errorf("client: WithHeartbeat(%v): use a positive duration, or 0 for no heartbeats", heartbeat)
		}
	}
	c := &Client{opts: o, sock: sock, rcvTimeout: -1, url: endpoint, token: token, transport: o.transport, streamNetwork: o.streamNetwork, compression: o.compression, noShm: o.noShm, noLane: o.noLane, stripes: stripesOpt(o.stripes),
		laneSpin: laneSpin, heartbeat: heartbeat, encrypted: serverKey != ""}
	if err := c.watchConnection(heartbeat); err != nil {
		c.closeSockets()
		return nil, err
	}
	if err := sock.Connect(endpoint); err != nil {
		c.closeSockets()
		return nil, fmt.Errorf("client: connect %s: %w", endpoint, err)
	}
	// ZeroMQ connects lazily (a server that is not running is not an
	// error), so a ctx without a deadline waits connectTimeout at most.
	cctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, connectTimeout)
		defer cancel()
	}
	for {
		err = c.loadConfig(cctx)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("client: no answer within %v (Dial's limit when ctx has no deadline: give Dial a ctx with a later deadline to wait longer): %w", connectTimeout, err)
		}
		var te *transfer.Error
		if err != nil && errors.As(err, &te) && te.Code == transfer.AuthFailed && token == "" && !fromHomeFile {
			fromHomeFile = true
			if home, herr := os.UserHomeDir(); herr == nil {
				if t := readTokenFile(filepath.Join(home, ".arktos", "token")); t != "" {
					c.token, token = t, t
					continue
				}
			}
		}
		break
	}
	if err == nil {
		err = c.awaitRestore(ctx)
	}
	if err != nil {
		c.closeSockets()
		return nil, err
	}
	return c, nil
}

// closeSockets closes the ZeroMQ socket and its monitor's, the monitor
// stopped first: libzmq sends its events blocking, from its I/O thread, so
// an event for a socket whose monitor peer is gone (the server dropping as
// the client closes) blocked that thread for good, and with it every
// client of the process.
func (c *Client) closeSockets() error {
	if c.mon != nil {
		c.sock.Monitor("", 0)
		c.mon.Close()
		c.mon = nil
	}
	return c.sock.Close()
}

// restorePoll is how often Dial asks a restoring server how far it is.
var restorePoll = 50 * time.Millisecond

// awaitRestore polls get_config while the server restores its checkpoint,
// until it has or ctx is done (each poll waits connectTimeout at most).
func (c *Client) awaitRestore(ctx context.Context) error {
	still := func(p *RestoreProgress) error {
		return fmt.Errorf("client: the server at %s is still restoring its checkpoint (%d of %d arrays, %d of %d bytes, for %.0f s); give Dial (or the request) a ctx with a later deadline to wait for it: %w",
			c.url, p.ArraysDone, p.Arrays, p.BytesDone, p.Bytes, p.Seconds, ctx.Err())
	}
	for c.Config().Restoring != nil {
		p := c.Config().Restoring
		select {
		case <-ctx.Done():
			return still(p)
		case <-time.After(restorePoll):
		}
		// Each poll within connectTimeout: a server that stops (a damaged
		// checkpoint) is reported, not waited for.
		pctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err := c.loadConfig(pctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return still(p) // ctx ended during this poll: say what is known
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readTokenFile(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// splitURL separates the ?token= query from a ZeroMQ endpoint.
func splitURL(raw string) (endpoint, token string, err error) {
	endpoint, query, _ := strings.Cut(raw, "?")
	if !strings.Contains(endpoint, "://") {
		return "", "", fmt.Errorf("client: %q is not a ZeroMQ endpoint; write it like tcp://host:5555 or ipc:///path", raw)
	}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return "", "", fmt.Errorf("client: query of %q: %w", raw, err)
		}
		token = q.Get("token")
	}
	return endpoint, token, nil
}

func (c *Client) loadConfig(ctx context.Context) error {
	res, err := c.call(ctx, "get_config", nil)
	if err != nil {
		return err
	}
	cfg, err := parseConfig(res)
	if err != nil {
		return fmt.Errorf("client: server at %s: %w", c.url, err)
	}
	if cfg.CommandTable {
		// The command table, once per connect (not in get_config, which
		// stays a small request).
		res, err := c.call(ctx, "commands", nil)
		if err != nil {
			return err
		}
		cfg.Commands = parseCommands(res)
	}
	// Under c.mu: after a server restart this runs beside requests that
	// read the configuration (a data race before).
	c.mu.Lock()
	defer c.mu.Unlock()
	c.config = cfg
	// The lane may be opened now that a request went through, unless the
	// server is restoring its checkpoint (it would refuse to open one, and
	// the client would not ask again).
	c.ready = c.config.Restoring == nil
	return nil
}

func parseConfig(res map[string]any) (ServerConfig, error) {
	cfg := ServerConfig{
		ProtocolVersion: int(asInt(res["protocol_version"])),
		ServerVersion:   asString(res["server_version"]),
		MaxFrameSize:    int(asInt(res["max_frame_size"])),
		MaxMemory:       asInt(res["max_memory"]),
		Workers:         int(asInt(res["workers"])),
		Auth:            res["auth"] == true,
		LanePayload:     res["lane_payload"] == true,
		DownloadInline:  res["download_inline"] == true,
		FrameHeap:       asInt(res["frame_heap"]),
	}
	if l, ok := res["dtypes"].([]any); ok {
		for _, d := range l {
			cfg.DTypes = append(cfg.DTypes, asString(d))
		}
	}
	if l, ok := res["creating"].([]any); ok {
		for _, d := range l {
			cfg.Creating = append(cfg.Creating, asString(d))
		}
	}
	cfg.CommandTable = res["command_table"] == true
	cfg.NumLocales = max(int(asInt(res["num_locales"])), 1)
	parseRestoring(res, &cfg)
	if cfg.MaxFrameSize <= 0 {
		return cfg, fmt.Errorf("reported max_frame_size %d", cfg.MaxFrameSize)
	}
	return cfg, nil
}

// parseCommands reads the commands command's table.
func parseCommands(res map[string]any) map[string]CommandInfo {
	var out map[string]CommandInfo
	if m, ok := res["commands"].(map[string]any); ok {
		out = make(map[string]CommandInfo, len(m))
		for name, v := range m {
			row, _ := v.(map[string]any)
			info := CommandInfo{Creates: row["creates"] == true, Lane: row["lane"] == true,
				LanePayload: row["lane_payload"] == true, Payload: row["payload"] == true,
				Distribution: asString(row["distribution"])}
			if l, ok := row["writes"].([]any); ok {
				for _, w := range l {
					info.Writes = append(info.Writes, asString(w))
				}
			}
			out[name] = info
		}
	}
	return out
}

func parseRestoring(res map[string]any, cfg *ServerConfig) {
	if r, ok := res["restoring"].(map[string]any); ok {
		secs, _ := r["seconds"].(float64)
		cfg.Restoring = &RestoreProgress{Arrays: int(asInt(r["arrays"])), ArraysDone: int(asInt(r["arrays_done"])),
			Bytes: asInt(r["bytes"]), BytesDone: asInt(r["bytes_done"]), Seconds: secs}
	}
}

// Config returns the server configuration read at Dial (or since, after a
// restart of the server).
func (c *Client) Config() ServerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.config
}

// URL returns the endpoint this client is connected to.
func (c *Client) URL() string { return c.url }

// Close closes the connection. The server keeps the arrays.
func (c *Client) Close() error {
	c.closeLocales()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sock == nil {
		return nil
	}
	c.closeStream()
	c.closeLane()
	err := c.closeSockets()
	for _, r := range c.refs {
		r.Leak() // kept pinned until libzmq drops the closed socket's messages
	}
	c.refs = nil
	c.sock = nil
	return err
}

// Call sends one request and returns the reply header and its payload
// frames, which the caller must Close. It is the low-level door the typed
// methods use; tests use it to send malformed requests.
func (c *Client) Call(ctx context.Context, cmd string, args map[string]any, payload [][]byte) (*transfer.Reply, *zframe.Multipart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callLocked(ctx, cmd, args, payload, nil)
}

// callLocked sends a request, runs whileWaiting (a stream upload's bytes)
// and returns the reply. c.mu must be held.
func (c *Client) callLocked(ctx context.Context, cmd string, args map[string]any, payload [][]byte, whileWaiting func()) (*transfer.Reply, *zframe.Multipart, error) {
	if c.sock == nil {
		return nil, nil, errors.New("client: connection is closed")
	}
	if cmd != "delete" {
		c.flushDeletes()
	}
	c.nextID++
	id := c.nextID
	hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Token: c.token, Cmd: cmd, Args: args})
	if err != nil {
		return nil, nil, fmt.Errorf("client: encode %s request: %w", cmd, err)
	}
	c.dropped() // a drop before this request is not about it
	if err := c.sendParts(hdr, payload); err != nil {
		return nil, nil, err
	}
	if whileWaiting != nil {
		whileWaiting()
	}
	for {
		m, err := c.recv(ctx, cmd)
		if err != nil {
			if !errors.Is(err, ErrConnectionLost) {
				c.abandon(id, cmd, args) // its reply comes later: see late.go
				c.sendCancel(id)         // and the server stops its work
			} else if _, named := args["name"]; !named {
				// Its reply comes only where the drop was an earlier
				// connection's, reported late (the request went on the
				// new one): then what it made is deleted, as an abandoned
				// request's is; a name the caller gave is kept (found by
				// it; whether the request ran is not known).
				c.abandonLost(id, cmd, args)
			}
			return nil, nil, err
		}
		if m.Len() == 0 {
			m.Close()
			continue
		}
		rep, err := transfer.DecodeReply(m.Frame(0))
		if err != nil {
			m.Close()
			return nil, nil, fmt.Errorf("client: reply to %s: %w", cmd, err)
		}
		if rep.ID != id {
			c.lateReply(rep) // a late reply to an abandoned request
			m.Close()
			continue
		}
		c.sweepRefs() // the server had every byte: libzmq has likely let go
		return rep, m, nil
	}
}

// SendRaw sends frames exactly as given (no header is built) and returns the
// next reply. Only for tests of the server's handling of malformed input.
func (c *Client) SendRaw(ctx context.Context, frames [][]byte) (*transfer.Reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.sendParts(frames[0], frames[1:]); err != nil {
		return nil, err
	}
	m, err := c.recv(ctx, "raw")
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return transfer.DecodeReply(m.Frame(0))
}

// sweepRefs unpins the zero-copy sends libzmq has let go of (c.mu held).
func (c *Client) sweepRefs() {
	if len(c.refs) > 0 {
		c.refs = slices.DeleteFunc(c.refs, (*zframe.Refs).Done)
	}
}

// sendParts sends one request. Payload frames of zframe.ZeroCopyMin bytes
// and more are handed to libzmq in place (zframe.SendParts) instead of
// copied into messages malloc gives it: an upload's frames are the caller's
// array. The caller must not write them until the reply has come (the
// server replies only once it has every byte, so libzmq no longer reads
// them); libzmq's release of them is collected at the next request
// (c.refs).
func (c *Client) sendParts(hdr []byte, payload [][]byte) error {
	c.sweepRefs()
	refs, err := zframe.SendParts(c.sock, append([][]byte{hdr}, payload...), 1)
	if refs != nil {
		c.refs = append(c.refs, refs)
	}
	if err != nil {
		return fmt.Errorf("client: send to %s: %w", c.url, err)
	}
	return nil
}

// recv waits for one message until ctx is done. It blocks in libzmq's
// receive with ZMQ_RCVTIMEO (at most 100 ms, to look at ctx in between):
// a zmq_poll before a non-blocking receive cost four more system calls per
// round trip, since zmq_poll first polls with no timeout and then asks each
// socket for its events before and after it sleeps.
func (c *Client) recv(ctx context.Context, cmd string) (*zframe.Multipart, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("client: %s on %s: %w (is arktos-server running? %s)", cmd, c.url, err, startHint(c.url))
		}
		wait := 100 * time.Millisecond
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, max(time.Until(dl), time.Millisecond))
		}
		wait = wait.Truncate(time.Millisecond)
		if wait != c.rcvTimeout {
			if err := c.sock.SetRcvtimeo(wait); err != nil {
				return nil, fmt.Errorf("client: set receive timeout: %w", err)
			}
			c.rcvTimeout = wait
		}
		m, err := zframe.Recv(c.sock, false)
		if errors.Is(err, syscall.EAGAIN) {
			if c.dropped() || c.handshakeFailed() {
				return nil, c.lostError(cmd)
			}
			continue // timed out: look at ctx again
		}
		if err != nil {
			return nil, fmt.Errorf("client: receive from %s: %w", c.url, err)
		}
		return m, nil
	}
}

// call runs a command that has no payload either way and returns its
// result, over the request lane when there is one (lane.go).
func (c *Client) call(ctx context.Context, cmd string, args map[string]any) (res map[string]any, err error) {
	if cmd == "get_config" { // (what awaitRestarted itself asks)
		return c.callOnce(ctx, cmd, args)
	}
	err = c.afterRestore(ctx, func() error {
		res, err = c.callOnce(ctx, cmd, args)
		return err
	})
	return res, err
}

// restoreRetries counts requests, downloads and uploads sent again after
// a RESTORING refusal (RestoreRetries).
var restoreRetries atomic.Uint64

// RestoreRetries is how many requests, downloads and uploads this process's
// clients sent again after the server refused them with RESTORING (it had
// restarted since Dial and was restoring its checkpoint).
func RestoreRetries() uint64 { return restoreRetries.Load() }

// refusedRestoring reports whether err is the server's RESTORING refusal:
// the request was not run, and runs once the restore is over.
func refusedRestoring(err error) bool {
	var te *transfer.Error
	return errors.As(err, &te) && te.Code == transfer.Restoring
}

// afterRestore runs f; when the server refuses it with RESTORING (it
// restarted since Dial and restores its checkpoint; nothing was run), it
// waits for the restore as Dial does, within ctx, then runs f once more.
// f must not hold c.mu across the wait (lockedAfterRestore).
func (c *Client) afterRestore(ctx context.Context, f func() error) error {
	err := f()
	if !refusedRestoring(err) {
		return err
	}
	if err := c.awaitRestarted(ctx); err != nil {
		return err
	}
	restoreRetries.Add(1)
	return f()
}

// lockedAfterRestore is afterRestore with c.mu held during each run of f,
// released while it waits. For downloads and uploads: the caller's data is
// still in hand, and a refused upload's stream was closed on both sides (f
// opens another).
func (c *Client) lockedAfterRestore(ctx context.Context, f func() error) error {
	return c.afterRestore(ctx, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return f()
	})
}

// awaitRestarted reads the configuration of a server that refused a
// request with RESTORING (restarted since Dial: it may differ) and waits
// for its restore as Dial does, within ctx.
func (c *Client) awaitRestarted(ctx context.Context) error {
	if err := c.loadConfig(ctx); err != nil {
		return err
	}
	return c.awaitRestore(ctx)
}

// callOnce is call without the wait for a restore.
func (c *Client) callOnce(ctx context.Context, cmd string, args map[string]any) (map[string]any, error) {
	if err := ctx.Err(); err != nil { // as on ZeroMQ: a done context sends nothing over the lane
		return nil, fmt.Errorf("client: %s on %s: %w", cmd, c.url, err)
	}
	c.mu.Lock()
	if l := c.laneFor(ctx, cmd); l != nil && c.sock != nil {
		defer c.mu.Unlock()
		rep, _, err := c.callLane(ctx, l, cmd, args, nil, nil, nil)
		if err != nil {
			return nil, err
		}
		if err := rep.Err(); err != nil {
			return nil, err
		}
		return rep.Result, nil
	}
	c.mu.Unlock()
	rep, m, err := c.Call(ctx, cmd, args, nil)
	if err != nil {
		return nil, err
	}
	m.Close()
	if err := rep.Err(); err != nil {
		return nil, err
	}
	return rep.Result, nil
}

// GetConfig asks the server for its configuration again (Config returns
// what Dial learnt).
func (c *Client) GetConfig(ctx context.Context) (ServerConfig, error) {
	res, err := c.call(ctx, "get_config", nil)
	if err != nil {
		return ServerConfig{}, err
	}
	return parseConfig(res)
}

// Info describes the array stored under name.
func (c *Client) Info(ctx context.Context, name string) (ArrayInfo, error) {
	res, err := c.call(ctx, "info", map[string]any{"name": name})
	if err != nil {
		return ArrayInfo{}, err
	}
	return parseInfo(res)
}

// List describes every stored array, sorted by name.
func (c *Client) List(ctx context.Context) ([]ArrayInfo, error) {
	res, err := c.call(ctx, "list", nil)
	if err != nil {
		return nil, err
	}
	return parseInfos(res["arrays"])
}

// parseInfos reads a result's list of array descriptions.
func parseInfos(v any) ([]ArrayInfo, error) {
	raw, _ := v.([]any)
	out := make([]ArrayInfo, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		info, err := parseInfo(m)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Delete frees the named arrays, all or none.
func (c *Client) Delete(ctx context.Context, names ...string) error {
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = n
	}
	_, err := c.call(ctx, "delete", map[string]any{"names": list})
	return err
}

// Rename stores the array name under newName (Arkouda's register): the
// array, its bytes and everything made from it stay as they are; only its
// name changes. A newName already taken fails with NAME_IN_USE and
// renames nothing.
func (c *Client) Rename(ctx context.Context, name, newName string) (ArrayInfo, error) {
	res, err := c.call(ctx, "rename", map[string]any{"name": name, "new_name": newName})
	if err != nil {
		return ArrayInfo{}, err
	}
	return parseInfo(res)
}

// MemUsed returns the server's memory accounting.
func (c *Client) MemUsed(ctx context.Context) (MemInfo, error) {
	res, err := c.call(ctx, "mem_used", nil)
	if err != nil {
		return MemInfo{}, err
	}
	return MemInfo{Used: asInt(res["used"]), Limit: asInt(res["limit"]), Free: asInt(res["free"]), Arrays: int(asInt(res["arrays"]))}, nil
}

// Stats returns the server's counters (requests, bytes copied, ...).
func (c *Client) Stats(ctx context.Context) (map[string]int64, error) {
	res, err := c.call(ctx, "stats", nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(res))
	for k, v := range res {
		out[k] = asInt(v)
	}
	return out, nil
}

// Shutdown asks the server to stop. The connection is unusable afterwards.
func (c *Client) Shutdown(ctx context.Context) error {
	_, err := c.call(ctx, "shutdown", nil)
	return err
}

func parseInfo(m map[string]any) (ArrayInfo, error) {
	dt, err := pdarray.ParseDType(asString(m["dtype"]))
	if err != nil {
		return ArrayInfo{}, fmt.Errorf("client: server described an array with %w", err)
	}
	return ArrayInfo{Name: asString(m["name"]), DType: dt, Size: int(asInt(m["size"])), NBytes: int(asInt(m["nbytes"]))}, nil
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// asInt reads any msgpack integer; 0 for anything else.
func asInt(v any) int64 {
	i, _ := transfer.AsInt(v)
	return i
}

// useCurve makes sock a CurveZMQ client of the server whose public key is
// serverKey ("": none), with a throwaway key pair (before Connect).
func useCurve(sock *zmq.Socket, serverKey string) error {
	if serverKey == "" {
		return nil
	}
	if len(serverKey) != 40 {
		return fmt.Errorf("client: the server key must be 40 Z85 characters (a CURVE public key, printed by the server at start), got %d", len(serverKey))
	}
	if !zmq.HasCurve() {
		return errors.New("client: a server key needs libzmq with CURVE (libsodium); this one has none: install Debian's libzmq5")
	}
	pub, secret, err := zmq.NewCurveKeypair()
	if err != nil {
		return fmt.Errorf("client: make a CURVE key pair: %w", err)
	}
	if err := sock.SetCurveServerkey(serverKey); err != nil {
		return fmt.Errorf("client: set ZMQ_CURVE_SERVERKEY: %w", err)
	}
	if err := sock.SetCurvePublickey(pub); err != nil {
		return fmt.Errorf("client: set ZMQ_CURVE_PUBLICKEY: %w", err)
	}
	if err := sock.SetCurveSecretkey(secret); err != nil {
		return fmt.Errorf("client: set ZMQ_CURVE_SECRETKEY: %w", err)
	}
	return nil
}

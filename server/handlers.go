package server

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// request is what a handler sees. payload aliases libzmq's buffers and is
// valid only while the handler runs.
type request struct {
	*transfer.Request
	args    *transfer.Args
	payload [][]byte
	peer    []byte // the client's ZeroMQ routing id: bulk streams belong to one peer
	held    *held  // the bulk streams this request took (takeStream)
	// stop cancels the request (cancel.go); nil for inline commands and in
	// tests that call dispatch, and disarmed for in-place writes.
	stop *par.Stop
}

// response is what a handler returns: the result map and payload frames,
// which may alias a stored array's buffer (stored arrays are immutable).
type response struct {
	result map[string]any
	frames [][]byte
	after  func() // runs once the reply is sent
}

// inlineSmallBytes: a command with inlineSmall arguments runs on the I/O
// goroutine when the arrays they name hold this many bytes or fewer.
const inlineSmallBytes = 64 << 10

// smallEnough says whether req is a command with inlineSmall arguments on
// small enough arrays. An argument that is missing, not a string or names
// no array makes the command fail at once, which is cheap too.
func (s *Server) smallEnough(req *transfer.Request, cmd command) bool {
	if len(cmd.inlineSmall) == 0 {
		return false
	}
	var total int64
	for _, k := range cmd.inlineSmall {
		name, _ := req.Args[k].(string)
		n, _ := s.store.nbytes(name)
		total += n
	}
	return total <= inlineSmallBytes
}

// runsInline says whether the I/O goroutine runs req itself. A
// coordinator of locales (locales.go) runs only its own commands there:
// the rest wait on other processes.
func (s *Server) runsInline(req *transfer.Request, cmd command) bool {
	if s.loc != nil && cmd.dist != distLocal && req.Cmd != "cancel" {
		return false
	}
	return cmd.inline || s.smallEnough(req, cmd)
}

// job is a received request, decoded by the I/O goroutine.
type job struct {
	m        *zframe.Multipart
	identity []byte
	req      *transfer.Request
	err      error // decoding failed: answer it
	start    time.Time
	// queued: the payload bytes reserved against --max-memory while the job
	// waits for a worker (route), released when it starts (complete).
	queued int64
}

// worker handles queued requests until the queue is closed.
func (s *Server) worker() {
	for j := range s.jobs {
		s.complete(nil, j)
	}
}

// route is called by the I/O goroutine for each received request. It
// decodes the header, then answers on the spot what is cheap (config,
// metadata, errors: the round trip then skips two thread hand-offs), hands a
// transfer over a bulk stream, whose pace is the client's, to a goroutine of
// its own so it never holds a worker, and queues the rest for the workers.
func (s *Server) route(m *zframe.Multipart) {
	j := job{m: m, start: time.Now()}
	// Frame 0 is the peer identity the ROUTER added; copy it, m goes away.
	j.identity = append([]byte(nil), m.Frame(0)...)
	if m.Len() < 2 {
		j.err = transfer.Errorf(transfer.MalformedRequest, "a request needs a header frame; got an empty message")
	} else {
		j.req, j.err = transfer.DecodeRequest(m.Frame(1))
	}
	var cmd command
	if j.err == nil {
		cmd = commands[j.req.Cmd]
	}
	switch {
	case j.err != nil || cmd.run == nil || s.runsInline(j.req, cmd):
		s.complete(s.router, j)
	case cmd.detached || cmd.onStream && j.req.Args["stream"] != nil:
		s.repliesDue++
		s.inflight.Add(1)
		go func() {
			defer s.inflight.Done()
			s.complete(nil, j)
		}()
	default:
		// A queued request's payload frames (an upload's bytes, up to a
		// 1,024-deep queue of them) are held in memory until a worker takes
		// it: counted against --max-memory meanwhile, so a burst of uploads
		// is refused while they wait instead of piling up past the limit.
		if n := payloadBytes(m); n > 0 {
			if err := s.store.reserve(n, queuedDesc(j.req, m.Len()-2)); err != nil {
				j.err = err
				s.complete(s.router, j)
				return
			}
			j.queued = n
			s.store.queuedBytes.Add(n)
		}
		s.repliesDue++
		s.jobs <- j
	}
}

// uploadDesc names an upload in errors.
func uploadDesc(name string, size uint64, dt string) string {
	if name != "" {
		return fmt.Sprintf("upload of '%s' (%d %s elements)", name, size, dt)
	}
	return fmt.Sprintf("upload of %d %s elements", size, dt)
}

// queuedDesc names a queued request's payload in errors: an upload as its
// handler would (its uncompressed frames are its bytes), anything else by
// command and frame count.
func queuedDesc(req *transfer.Request, frames int) string {
	if req.Cmd == "upload" {
		name, _ := req.Args["name"].(string)
		dt, _ := req.Args["dtype"].(string)
		size, _ := transfer.AsUint(req.Args["size"])
		if c, _ := req.Args["compression"].(string); c == "" {
			return uploadDesc(name, size, dt)
		}
		return uploadDesc(name, size, dt) + "'s compressed frames, waiting for a worker,"
	}
	return fmt.Sprintf("a queued '%s' request's payload (%d frame(s), waiting for a worker)", req.Cmd, frames)
}

// payloadBytes is the size of m's payload frames (after identity and header).
func payloadBytes(m *zframe.Multipart) int64 {
	var n int64
	for i := 2; i < m.Len(); i++ {
		n += int64(m.FrameSize(i))
	}
	return n
}

// replySocket lends a PUSH socket connected to the I/O goroutine's PULL.
// A socket is used by one goroutine at a time; the channel hand-off orders
// its use across goroutines, as libzmq requires.
func (s *Server) replySocket() (*zmq.Socket, error) {
	// A socket that cannot be made (the process out of descriptors, say:
	// they come back as connections close) is tried again for a while, or
	// a pooled one taken when it comes back, rather than the reply dropped
	// and its client left waiting.
	deadline := time.Now().Add(replySocketWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		select {
		case p := <-s.pushPool:
			return p, nil
		default:
		}
		p, err := s.newReplySocket()
		if err == nil || zmq.AsErrno(err) == zmq.ETERM || time.Now().After(deadline) {
			return p, err
		}
		select {
		case p := <-s.pushPool:
			return p, nil
		case <-time.After(wait):
		}
	}
}

// replySocketWait is how long replySocket tries to make a socket.
const replySocketWait = 10 * time.Second

func (s *Server) newReplySocket() (*zmq.Socket, error) {
	p, err := s.zctx.NewSocket(zmq.PUSH)
	if err != nil {
		return nil, err
	}
	p.SetSndhwm(0) // never block: the I/O goroutine always drains
	p.SetLinger(-1)
	if err := p.Connect(s.replyEP); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (s *Server) returnReplySocket(p *zmq.Socket) {
	select {
	case s.pushPool <- p:
	default:
		p.Close()
	}
}

// complete runs a decoded request (or answers its decoding error), sends
// the reply on sock (nil: a pooled reply socket) and closes j.m.
func (s *Server) complete(sock *zmq.Socket, j job) {
	// runRecovered answers a handler's panic; one here (building or sending
	// the reply, or in what runs after it) loses this reply only, not the
	// goroutine that called complete: the I/O loop, a worker, a stream's.
	defer par.Recover(s.logPanic("panic while completing a request"))
	m, req, decodeErr, start := j.m, j.req, j.err, j.start
	defer m.Close()
	if j.queued > 0 {
		// The handler reserves what it keeps (the stored array) itself; the
		// frames it reads from are freed when it returns, and at most one
		// request per worker holds them uncounted.
		s.store.release(j.queued)
		s.store.queuedBytes.Add(-j.queued)
	}
	// Shared-memory segments dropped from the store meanwhile are unmapped
	// only after this request (reply and after included) ends: see grace.
	// A reply whose frames libzmq reads in place ends when it lets go.
	tok, handedOff := s.store.grace.enter(), false
	defer func() {
		if !handedOff {
			s.store.grace.exit(tok)
		}
	}()
	var resp *response
	err := decodeErr
	if err == nil {
		payload := make([][]byte, m.Len()-2)
		for i := range payload {
			payload[i] = m.Frame(i + 2)
		}
		resp, err = s.runRecovered(req, payload, j.identity)
	}
	reply, frames := s.replyTo(req, resp, err)
	cmd := ""
	if req != nil {
		cmd = req.Cmd
	}
	if testPanic != nil {
		testPanic("reply", cmd)
	}
	after := func() {
		if err == nil && resp.after != nil {
			resp.after() // e.g. a download's bytes, after the header that announces them; or its array's release
		}
	}
	if refs := s.send(sock, j.identity, reply, frames); refs != nil {
		handedOff = true
		s.inPlace.add(refs, func() {
			defer par.Recover(s.logPanic("panic after a reply sent in place"))
			after()
			s.store.grace.exit(tok)
		})
	} else {
		after()
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("request", "cmd", cmd, "id", reply.ID, "frames_in", m.Len()-2, "frames_out", len(frames), "took", time.Since(start))
	}
	if cmd == "shutdown" && err == nil {
		s.Stop()
	}
}

// send sends a reply on sock: the ROUTER itself from the I/O goroutine, or
// (sock nil) a pooled PUSH socket whose messages the I/O goroutine forwards.
// Payload frames of zframe.ZeroCopyMin bytes and more go to libzmq in place (a
// download's are the stored array's own bytes): the returned Refs, when not
// nil, tells when libzmq has let go of them, and until then the memory must
// stay allocated and unchanged by the request (complete hands its release
// to sentInPlace). Smaller frames are copied.
func (s *Server) send(sock *zmq.Socket, identity []byte, reply *transfer.Reply, frames [][]byte) *zframe.Refs {
	if sock == nil {
		push, err := s.replySocket()
		if err != nil {
			s.log.Error("reply socket", "err", err)
			return nil
		}
		defer s.returnReplySocket(push)
		sock = push
	}
	hdr, frames := s.encodeReply(reply, frames)
	// Counted before the reply leaves: the client's next request may be
	// stats, answered inline, possibly before this goroutine runs again.
	var copied, inPlace uint64
	for _, f := range frames {
		if len(f) >= zframe.ZeroCopyMin {
			inPlace += uint64(len(f))
		} else {
			copied += uint64(len(f))
		}
	}
	s.stats.BytesCopiedOut.Add(copied)
	s.stats.BytesZeroCopyOut.Add(inPlace)
	refs, err := zframe.SendParts(sock, append([][]byte{identity, hdr}, frames...), 2)
	if err != nil {
		s.stats.BytesCopiedOut.Add(-copied)
		s.stats.BytesZeroCopyOut.Add(-inPlace)
		s.log.Error("send reply", "err", err)
	}
	return refs // on an error too: what was queued is still read in place
}

// runRecovered dispatches req, turning a panic in its handler into an
// INTERNAL error (the ZeroMQ path and request lanes alike), and a panic in
// the response's after function into a log line: neither stops the server.
// A bulk stream the request still holds after either panic is closed (its
// byte position is unknown); the client opens another.
func (s *Server) runRecovered(req *transfer.Request, payload [][]byte, peer []byte) (resp *response, err error) {
	h := &held{}
	// recovered logs panic p (with the stack of the goroutine where it
	// happened) and closes the streams the request still holds.
	recovered := func(what string, p any) {
		stack := debug.Stack()
		if wp, ok := p.(*par.Panic); ok {
			stack = wp.Stack // the worker goroutine's, where the bug is
		}
		s.stats.Panics.Add(1)
		s.log.Error(what, "cmd", req.Cmd, "panic", p, "stack", string(stack))
		s.dropHeld(h)
	}
	// A request that may take a while can be cancelled (cancel.go): its
	// Stop reaches the kernels through the request and its opEnv.
	var stop *par.Stop
	if cmd, ok := commands[req.Cmd]; ok && !cmd.inline {
		stop = s.cancels.begin(peer, req.ID, req.Cmd, s.cfg.MaxRequestTime)
		defer s.cancels.end(peer, req.ID, stop)
		if cmd.writesGiven(req.Args) {
			// Writes in place: not stopped once it starts. (Disarm fails
			// only for a cancel that came first, answered below.)
			stop.Disarm()
		}
	}
	defer func() {
		if p := recover(); p != nil {
			if c, ok := par.AsCanceled(p); ok {
				s.dropHeld(h)
				resp, err = nil, s.canceled(c, req.Cmd)
				return
			}
			recovered("panic in request handler", p)
			resp, err = nil, transfer.Errorf(transfer.Internal, "internal error: %v (a bug: please report it with the server log)", p)
		}
	}()
	if c, ok := par.AsCanceled(stop.Err()); ok {
		return nil, s.canceled(c, req.Cmd) // cancelled while it waited: nothing ran
	}
	resp, err = s.dispatchStop(req, payload, peer, h, stop)
	if c, ok := par.AsCanceled(err); ok {
		return nil, s.canceled(c, req.Cmd) // (returned by a handler, or a pipeline's stage that caught the unwinding)
	}
	if err == nil && resp.after != nil {
		after := resp.after
		resp.after = func() {
			defer func() {
				if p := recover(); p != nil {
					recovered("panic after a reply", p)
				}
			}()
			after()
		}
	}
	return resp, err
}

// logPanic is par.Recover's report for the server's own goroutines: the
// bug is logged with the stack where it happened, and counted (stats'
// "panics", which also counts the panics runRecovered answers).
func (s *Server) logPanic(what string) func(*par.Panic) {
	return func(p *par.Panic) {
		s.stats.Panics.Add(1)
		s.log.Error(what, "panic", p.Value, "stack", string(p.Stack))
	}
}

// replyTo builds the reply to req (nil: its header could not be read) from
// what its handler returned, and counts it (before it is sent: the client's
// next request may be stats).
func (s *Server) replyTo(req *transfer.Request, resp *response, err error) (*transfer.Reply, [][]byte) {
	reply := &transfer.Reply{V: transfer.Version}
	cmd := ""
	if req != nil {
		reply.ID, cmd = req.ID, req.Cmd
	}
	s.stats.Requests.Add(1)
	if err == nil {
		reply.Result = resp.result
		return reply, resp.frames
	}
	s.stats.Errors.Add(1)
	te, ok := err.(*transfer.Error)
	if !ok {
		te = transfer.Errorf(transfer.Internal, "%v", err)
	}
	reply.Status, reply.Code, reply.Error, reply.Message = 1, te.Code, te.Code.String(), te.Message
	s.log.Debug("request failed", "cmd", cmd, "id", reply.ID, "code", te.Code.String(), "msg", te.Message)
	return reply, nil
}

// encodeReply encodes reply's header; one that cannot be encoded becomes an
// INTERNAL error with no frames.
func (s *Server) encodeReply(reply *transfer.Reply, frames [][]byte) ([]byte, [][]byte) {
	hdr, err := transfer.EncodeReply(reply)
	if err != nil {
		s.log.Error("encode reply", "err", err)
		hdr, _ = transfer.EncodeReply(&transfer.Reply{V: transfer.Version, ID: reply.ID, Status: 1, Code: transfer.Internal,
			Error: transfer.Internal.String(), Message: fmt.Sprintf("internal error: cannot encode the reply: %v", err)})
		frames = nil
	}
	return hdr, frames
}

func (s *Server) dispatch(req *transfer.Request, payload [][]byte, peer []byte, h *held) (*response, error) {
	return s.dispatchStop(req, payload, peer, h, nil)
}

// dispatchStop is dispatch of a request that stop may cancel (nil: none).
func (s *Server) dispatchStop(req *transfer.Request, payload [][]byte, peer []byte, h *held, stop *par.Stop) (*response, error) {
	if req.V != transfer.Version {
		return nil, transfer.Errorf(transfer.UnsupportedVersion, "protocol version %d is not supported; this server (%s) speaks version %d: upgrade the client", req.V, Version, transfer.Version)
	}
	if s.cfg.Auth && subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		what := "a wrong token"
		if req.Token == "" {
			what = "no token"
		}
		hint := "pass token= to connect(), put it in the URL (?token=...) or set ARKTOS_TOKEN"
		if s.cfg.TokenFile != "" {
			hint += fmt.Sprintf("; the server wrote it to %s", s.cfg.TokenFile)
		}
		return nil, transfer.Errorf(transfer.AuthFailed, "this server requires an access token and the request carried %s: %s", what, hint)
	}
	cmd, ok := commands[req.Cmd]
	if !ok {
		return nil, transfer.Errorf(transfer.UnknownCommand, "unknown command '%s'; commands are: %s", req.Cmd, commandNames())
	}
	if s.closing.Load() && req.Cmd != "shutdown" {
		return nil, transfer.Errorf(transfer.ShuttingDown, "the server is shutting down and takes no new work")
	}
	if st := s.restore.Load(); st != nil && !cmd.whileRestoring {
		return nil, st.refusal(req.Cmd, s.cfg.Checkpoint)
	}
	if !cmd.payload && len(payload) > 0 {
		return nil, transfer.Errorf(transfer.FrameCount, "command '%s' takes no payload frames, got %d", req.Cmd, len(payload))
	}
	r := &request{Request: req, args: transfer.NewArgs(req.Cmd, req.Args), payload: payload, peer: peer, held: h, stop: stop}
	if s.loc != nil {
		if run := s.loc.distributedRun(req.Cmd, cmd); run != nil {
			return run(s.loc, r)
		}
	}
	return cmd.run(s, r)
}

func (s *Server) cmdGetConfig(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"protocol_version": transfer.Version,
		// This connection's ZeroMQ routing id: another socket names it in
		// cancel's "peer" (a client's cancel from another thread).
		"peer":           hex.EncodeToString(r.peer),
		"server_version": Version,
		"max_frame_size": s.cfg.FrameSize,
		"max_memory":     s.cfg.MaxMemory,
		"workers":        s.cfg.Workers,
		"auth":           s.cfg.Auth,
		"dtypes":         pdarray.DTypeNames(),
		"lane_payload":   true, // uploads and downloads in frames over a request lane (lane.go)
		"simd":           simdMode(),
		// "curve": the socket is encrypted with CurveZMQ and server_key is
		// its public key (curve.go); "none": plain TCP or IPC.
		"encryption": map[bool]string{true: "curve", false: "none"}[s.serverKey != ""],
		"server_key": s.serverKey,
		// pid: which process answers (a locale's, to tests that stop one);
		// locale_rank: its rank in a set of locales (locales.go), 0 alone.
		"pid":         os.Getpid(),
		"locale_rank": s.cfg.LocaleRank,
		"num_locales": 1,
	}
	// frame_heap: bytes of freed ZeroMQ frames kept resident for the next
	// message (zframe.TuneMalloc); 0 where glibc did not take the settings.
	cfg["frame_heap"] = int64(0)
	if s.mallocTuned {
		cfg["frame_heap"] = min(s.cfg.FrameHeap, zframe.MaxMallocKeep)
	}
	if !s.noInline {
		cfg["download_inline"] = true // download takes inline_max (cmdDownload)
	}
	cfg["creating"] = creatingCommands()
	cfg["command_table"] = true // the commands command sends the table (commands.go)
	s.arkoudaConfig(cfg)
	if st := s.restore.Load(); st != nil {
		cfg["restoring"] = st.progress() // --checkpoint's arrays are coming back
	}
	return &response{result: cfg}, nil
}

// checkName refuses names a user could not type back or that break logs.
func checkName(name string) error {
	if len(name) == 0 || len(name) > 256 {
		return transfer.Errorf(transfer.ArgumentValue, "array name must be 1 to 256 bytes, got %d", len(name))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' {
			return transfer.Errorf(transfer.ArgumentValue, "array name %q has byte 0x%02x at %d; use printable ASCII without spaces", name, c, i)
		}
	}
	return nil
}

func (s *Server) frameSizeArg(a *transfer.Args, required bool) int {
	var fs uint64
	if required {
		fs = a.Uint("frame_size")
	} else {
		fs = a.OptUint("frame_size", uint64(s.cfg.FrameSize))
	}
	if fs == 0 || fs > uint64(s.cfg.FrameSize) {
		a.Fail(transfer.Errorf(transfer.ArgumentValue, "frame_size must be between 1 and the server's max_frame_size %d, got %d", s.cfg.FrameSize, fs))
	}
	return int(fs)
}

func (s *Server) compressionArg(a *transfer.Args) string {
	c := a.OptString("compression", transfer.CompressionNone)
	if c != transfer.CompressionNone && c != transfer.CompressionZstd {
		a.Fail(transfer.Errorf(transfer.ArgumentValue, "compression must be \"zstd\" or absent, got %q", c))
	}
	return c
}

func (s *Server) cmdUpload(r *request) (resp *response, err error) {
	a := r.args
	streamID := a.OptUint("stream", 0)
	if streamID != 0 {
		// The client is already writing the bytes: if anything fails, the
		// stream's position is lost, so it is closed (with its stripes).
		var stripes []uint64
		if a.Has("stripes") {
			stripes = a.UintList("stripes")
		}
		xs, serr := s.takeStreams(streamID, stripes, r)
		if serr != nil {
			s.dropStreams(xs)
			return nil, serr
		}
		// Not deferred: a panic leaves xs held, and runRecovered drops them.
		if resp, err = s.upload(r, xs); err != nil {
			s.dropStreams(xs)
		} else {
			unlockAll(xs)
		}
		return resp, err
	}
	if a.Has("stripes") {
		return nil, errStripesAlone()
	}
	return s.upload(r, nil)
}

// testPanic, when a test sets it (before its server starts), runs at these
// points with where and a name: where a handler holds a reservation
// ("upload": an upload's bytes, once its arguments are checked;
// "download_zstd": a compressed reply's copies; with the array's name), and
// outside any handler ("reply": complete, once the reply is built; "lane":
// a lane's request, once decoded; with the command): a stand-in for a bug.
var testPanic func(where, name string)

// upload stores an array whose bytes come in r's payload frames, or from
// the streams xs when there are any (xs[0] the request's stream, the rest
// its stripes).
func (s *Server) upload(r *request, xs []*stream) (*response, error) {
	a := r.args
	var x *stream
	if len(xs) > 0 {
		x = xs[0]
	}
	dtypeName := a.String("dtype")
	size := a.Uint("size")
	frameSize := 0
	compression := transfer.CompressionNone
	shm, leased := false, false
	if x == nil {
		frameSize = s.frameSizeArg(a, true)
		compression = s.compressionArg(a)
	} else {
		shm = a.OptBool("shm", false)
		leased = a.OptBool("lease", false)
	}
	name := a.OptString("name", "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	dt, err := pdarray.ParseDType(dtypeName)
	if err != nil {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "dtype '%s' is not supported; supported dtypes: %s", dtypeName, strings.Join(pdarray.DTypeNames(), ", "))
	}
	nbytes, err := dt.NBytes(size)
	if err != nil || int64(nbytes) < 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "size %d of %s is too large", size, dt)
	}
	if name != "" {
		if err := checkName(name); err != nil {
			return nil, err
		}
		if s.store.has(name) {
			return nil, errNameInUse(name)
		}
	}
	if x != nil {
		if len(r.payload) > 0 {
			return nil, transfer.Errorf(transfer.FrameCount, "an upload over stream %d carries no payload frames, got %d", x.id, len(r.payload))
		}
	} else if compression == transfer.CompressionZstd {
		// Sizes are checked as each frame decompresses into its place.
		if want := transfer.NumFrames(nbytes, frameSize); len(r.payload) != want {
			return nil, transfer.Errorf(transfer.FrameCount, "%d bytes at frame_size %d travel in %d compressed frames, got %d", nbytes, frameSize, want, len(r.payload))
		}
	} else {
		sizes := make([]int, len(r.payload))
		for i, f := range r.payload {
			sizes[i] = len(f)
		}
		if err := transfer.CheckFrames(sizes, nbytes, frameSize, fmt.Sprintf("%d %s elements", size, dt)); err != nil {
			return nil, err
		}
	}
	if (shm || leased) && len(xs) > 1 {
		return nil, errStripesShm()
	}
	if leased {
		// The segment lent by shm_lease, filled by the client, becomes
		// the array's buffer: no copy, and its bytes are reserved already.
		return s.leaseUpload(x, dt, nbytes, name)
	}
	if err := s.store.reserve(int64(nbytes), uploadDesc(name, size, dt.String())); err != nil {
		return nil, err
	}
	// The reservation goes to the stored array, or back to the store on
	// any other way out: an error, or a panic (a bug) that runRecovered
	// answers INTERNAL.
	stored := false
	defer func() {
		if !stored {
			s.store.release(int64(nbytes))
		}
	}()
	if testPanic != nil {
		testPanic("upload", name)
	}
	if shm {
		// The client's segment becomes the array's buffer: no copy.
		arr, g, err := s.shmUpload(x, dt, nbytes)
		if err != nil {
			return nil, err
		}
		resp, err := s.storeUpload(name, arr, g)
		stored = err == nil
		return resp, err
	}
	// Every byte is overwritten below, so a pooled (dirty) buffer will do.
	arr, err := s.store.allocMayBeDirty(dt, int(size))
	if err != nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	dst := arr.Bytes()
	if x != nil {
		// The kernel copies the bytes straight into the final buffer.
		if err := readStriped(xs, dst); err != nil {
			return nil, transfer.Errorf(transfer.PayloadLength, "upload over stream %d: %v", x.id, err)
		}
		s.stats.BytesStreamIn.Add(uint64(len(dst)))
		if len(xs) > 1 {
			s.stats.StripedIn.Add(1)
		}
	} else if compression == transfer.CompressionZstd {
		// Each frame decompresses straight into its place, in parallel.
		err := transfer.ParallelFrames(len(r.payload), s.cfg.Workers, func(i int) error {
			lo, hi := transfer.FrameBounds(i, nbytes, frameSize)
			if err := transfer.DecompressFrame(dst[lo:hi], r.payload[i]); err != nil {
				return fmt.Errorf("frame %d: %v", i, err)
			}
			return nil
		})
		if err != nil {
			return nil, transfer.Errorf(transfer.InvalidData, "compressed upload: %v", err)
		}
		var in uint64
		for _, f := range r.payload {
			in += uint64(len(f))
		}
		s.stats.BytesCompressedIn.Add(in)
	} else {
		// The one copy: libzmq's frames → the array's final aligned buffer.
		off := 0
		for _, f := range r.payload {
			off += copy(dst[off:], f)
		}
		s.stats.BytesCopiedIn.Add(uint64(off))
	}
	resp, err := s.storeUpload(name, arr, nil)
	stored = err == nil
	return resp, err
}

// storeUpload checks an uploaded array's bools and stores it under name;
// its bytes are reserved, and stay the caller's to release on error. g is
// the segment backing it, or nil: freed on error.
func (s *Server) storeUpload(name string, arr *pdarray.Array, g *segment) (*response, error) {
	fail := func(err error) (*response, error) {
		if g != nil {
			g.free() // never stored: nobody else maps it
		}
		return nil, err
	}
	if arr.DType() == pdarray.Bool {
		if i := pdarray.ValidateBools(arr.Bytes()); i >= 0 {
			return fail(transfer.Errorf(transfer.InvalidData, "bool element %d is byte %d; bool elements must be 0 or 1", i, arr.Bytes()[i]))
		}
	}
	stored, err := s.store.putSegment(name, arr, g)
	if err != nil {
		return fail(err)
	}
	s.stats.Uploads.Add(1)
	if g != nil {
		s.stats.ShmUploads.Add(1)
	}
	return &response{result: arrayResult(stored, arr)}, nil
}

func arrayResult(name string, a *pdarray.Array) map[string]any {
	return map[string]any{"name": name, "dtype": a.DType().String(), "size": a.Len(), "nbytes": a.NBytes()}
}

func (s *Server) cmdDownload(r *request) (*response, error) {
	a := r.args
	name := a.String("name")
	start := a.OptUint("start", 0)
	stop := a.OptUint("stop", 1<<63)
	streamID := a.OptUint("stream", 0)
	var stripes []uint64
	if a.Has("stripes") {
		stripes = a.UintList("stripes")
	}
	stripeMin := a.OptUint("stripe_min", 0)
	shm := a.OptBool("shm", false)
	shmMin := uint64(0)
	if !s.noShmMin {
		shmMin = a.OptUint("shm_min", 0)
	}
	inline, inlineMax := false, uint64(0)
	if !s.noInline {
		inline = a.Has("inline_max")
		inlineMax = a.OptUint("inline_max", 0)
	}
	frameSize := s.frameSizeArg(a, false)
	compression := s.compressionArg(a)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if shm && streamID == 0 {
		return nil, transfer.Errorf(transfer.MissingArgument, "download with shm=true needs the unix 'stream' its descriptor travels on")
	}
	if compression != transfer.CompressionNone && streamID != 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "compression applies to frames, not to a bulk stream; drop one of them")
	}
	if len(stripes) > 0 && streamID == 0 {
		return nil, errStripesAlone()
	}
	if len(stripes) > 0 && shm {
		return nil, errStripesShm()
	}
	if err := checkStripes(stripes, streamID); err != nil {
		return nil, err
	}
	arr, release, err := s.store.acquire(name)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			release()
		}
	}()
	n := uint64(arr.Len())
	if stop == 1<<63 {
		stop = n
	}
	if start > stop || stop > n {
		return nil, transfer.Errorf(transfer.IndexOutOfRange, "range [%d, %d) is outside array '%s' of length %d; need start <= stop <= %d", start, stop, name, n, n)
	}
	isz := uint64(arr.DType().Size())
	body := arr.Bytes()[start*isz : stop*isz]
	result := map[string]any{"name": name, "dtype": arr.DType().String(), "size": stop - start, "nbytes": len(body), "frame_size": frameSize}
	if inline {
		// inline_max (get_config's download_inline): a client that does not
		// know the array's size asks over its request lane; bytes up to
		// inline_max come back in the reply's frames, whatever stream and
		// shm say (the stream is not touched); more go the way those say,
		// or, without a stream, not at all: the reply describes the array
		// ("inline": false) and the client asks again the way it wants.
		result["inline"] = uint64(len(body)) <= inlineMax
		if uint64(len(body)) <= inlineMax {
			streamID, shm, stripes = 0, false, nil
		} else if streamID == 0 {
			return &response{result: result}, nil
		}
	}
	s.stats.Downloads.Add(1)
	if streamID != 0 {
		// Nothing is written before the reply, so a failure up to here
		// leaves the stream usable.
		if uint64(len(body)) < stripeMin {
			stripes = nil
		}
		xs, err := s.takeStreams(streamID, stripes, r)
		if err != nil {
			unlockAll(xs) // nothing written yet: they stay usable
			return nil, err
		}
		x := xs[0]
		if len(stripes) > 0 {
			result["stripes"] = stripes
		}
		result["stream"] = streamID
		ok = true
		if shm && uint64(len(body)) >= shmMin {
			// nil: no segment could be made; the bytes stream instead.
			if resp, err := s.shmDownload(x, name, arr, body, start == 0 && stop == n, shmMin == 0, result, release); resp != nil || err != nil {
				return resp, err
			}
		}
		return &response{result: result, after: func() {
			defer release()
			// Counted before the client can have the bytes (see send).
			s.stats.BytesStreamOut.Add(uint64(len(body)))
			// Straight from the array's own buffer into the kernel.
			if err := writeStriped(xs, body); err != nil {
				s.stats.BytesStreamOut.Add(-uint64(len(body)))
				s.log.Debug("download stream failed", "stream", x.id, "err", err)
				s.dropStreams(xs)
				return
			}
			if len(xs) > 1 {
				s.stats.StripedOut.Add(1)
			}
			unlockAll(xs)
		}}, nil
	}
	nf := transfer.NumFrames(len(body), frameSize)
	if nf > maxReplyFrames { // each frame costs a slice here and a message in libzmq
		return nil, transfer.Errorf(transfer.ArgumentValue, "frame_size %d would send these %d bytes in %d frames, more than the %d a reply may have; use a frame_size of at least %d",
			frameSize, len(body), nf, maxReplyFrames, (len(body)+maxReplyFrames-1)/maxReplyFrames)
	}
	frames := make([][]byte, nf)
	for i := range frames {
		lo, hi := transfer.FrameBounds(i, len(body), frameSize)
		frames[i] = body[lo:hi]
	}
	if compression == transfer.CompressionZstd {
		// The compressed copies (at most about the array's size, random
		// data) count against --max-memory until the reply is sent.
		held := int64(len(body)) + int64(len(frames))*64
		if err := s.store.reserve(held, fmt.Sprintf("the compressed reply of '%s'", name)); err != nil {
			return nil, err
		}
		handed := false // to the reply's after, which releases it once sent
		defer func() {
			if !handed { // an error, or a panic
				s.store.release(held)
			}
		}()
		if testPanic != nil {
			testPanic("download_zstd", name)
		}
		err := transfer.ParallelFrames(len(frames), s.cfg.Workers, func(i int) error {
			var err error
			frames[i], err = transfer.CompressFrameAppend(nil, frames[i])
			return err
		})
		if err != nil {
			return nil, transfer.Errorf(transfer.Internal, "compress: %v", err)
		}
		var out uint64
		for _, f := range frames {
			out += uint64(len(f))
		}
		s.stats.BytesCompressedOut.Add(out)
		result["compression"] = compression
		// The compressed frames are copies: the deferred release lets the array go.
		handed = true
		return &response{result: result, frames: frames, after: func() { s.store.release(held) }}, nil
	}
	ok = true
	// The frames alias the array until send has copied them into libzmq.
	return &response{result: result, frames: frames, after: release}, nil
}

func (s *Server) cmdInfo(r *request) (*response, error) {
	name := r.args.String("name")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	arr, release, err := s.store.acquire(name)
	if err != nil {
		return nil, err
	}
	defer release()
	return &response{result: arrayResult(name, arr)}, nil
}

func (s *Server) cmdList(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	infos := s.store.list()
	out := make([]any, len(infos))
	for i, in := range infos {
		out[i] = arrayResult(in.name, in.a)
	}
	return &response{result: map[string]any{"arrays": out}}, nil
}

func (s *Server) cmdDelete(r *request) (*response, error) {
	names := r.args.StringList("names")
	missingOK := r.args.OptBool("missing_ok", false)
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	deleted, freed, err := s.store.delete(names, missingOK)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"deleted": deleted, "freed": freed}}, nil
}

// cmdRename stores an array under another name (a client's register):
// only the table changes, so it runs inline.
func (s *Server) cmdRename(r *request) (*response, error) {
	name := r.args.String("name")
	newName := r.args.String("new_name")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	res, err := s.store.rename(name, newName)
	if err != nil {
		return nil, err
	}
	return &response{result: res}, nil
}

func (s *Server) cmdMemUsed(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	used, limit, pooled, n := s.store.usage()
	return &response{result: map[string]any{"used": used, "limit": limit, "free": limit - used, "arrays": n, "pooled": pooled}}, nil
}

func (s *Server) cmdStats(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	st := &s.stats
	s.streams.mu.Lock()
	streamsOpen, lanesOpen := len(s.streams.open), len(s.streams.lanes)
	s.streams.mu.Unlock()
	return &response{result: map[string]any{
		"requests":                st.Requests.Load(),
		"canceled":                st.Canceled.Load(), // requests cancelled before they stored anything
		"running":                 s.cancels.count(),  // requests received and not answered yet (inline ones aside)
		"errors":                  st.Errors.Load(),
		"uploads":                 st.Uploads.Load(),
		"downloads":               st.Downloads.Load(),
		"bytes_copied_in":         st.BytesCopiedIn.Load(),
		"bytes_copied_out":        st.BytesCopiedOut.Load(),
		"bytes_zero_copy_out":     st.BytesZeroCopyOut.Load(),
		"panics":                  st.Panics.Load(),     // bugs caught and logged (see Stats.Panics)
		"partial_replies":         zframe.PartialEnds(), // replies cut short by a failed send or a panic, ended early
		"bytes_stream_in":         st.BytesStreamIn.Load(),
		"striped_in":              st.StripedIn.Load(),
		"striped_out":             st.StripedOut.Load(),
		"bytes_stream_out":        st.BytesStreamOut.Load(),
		"frames_held":             zframe.Live(),
		"pool_hits":               s.store.poolHits(),
		"group_id_checks_skipped": s.store.groupIDChecksSkipped.Load(),
		"string_checks_skipped":   s.strs.skipped.Load(),
		"key_scans_skipped":       s.store.keyScansSkipped.Load(),
		"scratch_recycled":        s.store.scratchRecycled.Load(),
		"shm_views":               st.ShmViews.Load(),
		"shm_uploads":             st.ShmUploads.Load(),
		"shm_adopted":             st.ShmAdopted.Load(),
		"shm_mapped_fills":        st.ShmMappedFills.Load(),
		"shm_copies_on_write":     s.store.copiesOnWrite.Load(),
		"bytes_compressed_in":     st.BytesCompressedIn.Load(),
		"bytes_compressed_out":    st.BytesCompressedOut.Load(),
		"lane_requests":           st.LaneRequests.Load(),
		"lane_spin_hits":          st.LaneSpin.Hits.Load(),
		"lane_spin_busy":          st.LaneSpin.Busy.Load(),
		"lane_spin_polls":         st.LaneSpin.Polls.Load(),
		"queued_payload_bytes":    s.store.queuedBytes.Load(),
		"groupby_fused":           st.GroupByFused.Load(),
		"unique_bitmap":           st.UniqueBitmap.Load(),
		"unique_sort":             st.UniqueSort.Load(),
		"unique_grouped":          st.UniqueGrouped.Load(),
		"compress_gathered":       st.CompressGathered.Load(),
		"lookup_dense":            st.LookupDense.Load(),
		"lookup_hash":             st.LookupHash.Load(),
		"simd_kernels":            ops.SIMDCalls(), // chunks done by the AVX-512 kernels (ops/simd_amd64.go)
		"minor_faults":            minorFaults(),
		"streams_open":            streamsOpen,
		"lanes_open":              lanesOpen,
		"streams_refused":         st.StreamsRefused.Load(),
		"streams_reaped":          st.StreamsReaped.Load(),
		"stream_tls":              st.StreamTLS.Load(),
		"stream_tls_refused":      st.StreamTLSRefused.Load(),
		"stream_tls_batches":      transfer.LinkBatches(),
	}}, nil
}

// simdMode says which comparison and sum kernels this server runs: "avx512"
// (built with GOEXPERIMENT=simd, as the Makefile builds, on a CPU with
// AVX-512), "off-cpu" (built so, but this CPU lacks AVX-512), "off-build"
// (built without the experiment) or "off-flag" (--simd=false): the plain
// loops, which give the same answers more slowly.
func simdMode() string {
	switch built, cpu := ops.SIMDAvailable(); {
	case !built:
		return "off-build"
	case !cpu:
		return "off-cpu"
	case !ops.SIMDOn():
		return "off-flag"
	}
	return "avx512"
}

// minorFaults is the server process's minor page faults so far: pages the
// kernel mapped and zeroed on first touch (tests check that frames reuse
// resident memory: zframe.TuneMalloc).
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Minflt
}

func (s *Server) cmdShutdown(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	s.log.Info("shutdown requested by a client")
	return &response{result: map[string]any{}}, nil
}

// maxReplyFrames bounds the frames of one download reply: a client asking
// for frame_size 1 would otherwise have the server build 8·10^8 frames for
// a 10^8-element float64 array (19 GB of slices, and a libzmq message each).
const maxReplyFrames = 1 << 20

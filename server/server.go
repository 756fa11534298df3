// Package server is arktos-server: a ZeroMQ ROUTER socket, a pool of worker
// goroutines, and the table of named arrays.
//
// Threading: one I/O goroutine owns the ROUTER socket. It receives each
// request whole (frames stay in libzmq's buffers, see transfer/zframe) and
// decodes its header. Cheap commands (metadata, reductions of small arrays:
// handlers.go) it runs itself and answers on the ROUTER at once, which makes
// their round trip the ZeroMQ floor plus the header codec. The rest it
// queues for the workers, which run the command and send the reply on their
// own inproc PUSH socket; the I/O goroutine forwards replies to the ROUTER
// without copying them. So a long request occupies one worker, never the
// socket, and many clients are served at once.
//
// Copies: an upload's bytes are copied once, from libzmq's receive buffers
// into the array's final aligned buffer (counted in Stats.BytesCopiedIn); a
// download's frames of 64 KiB and more are sent by libzmq from the array's
// own buffer in place (Stats.BytesZeroCopyOut; zerocopy.go), smaller ones
// copied into libzmq's messages (Stats.BytesCopiedOut). No per-element
// decode happens anywhere.
// Over a bulk stream nothing is copied in user space; over shared memory
// (shm.go) an upload's segment becomes the array and a view passes the
// array's own segment, so neither copies at all.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// Version is the server's release version, reported by get_config.
const Version = "0.1.0"

// Server serves named arrays over ZeroMQ. Make one with New, then Run it.
type Server struct {
	cfg   Config
	log   *slog.Logger
	token string
	store *store
	zctx  *zmq.Context
	// swapMu: one saveAll at a time swaps its directory in (two at one
	// path raced: a rename onto the other's new directory failed).
	swapMu sync.Mutex
	// ckptMu: one checkpoint of --checkpoint at a time (checkpoint.go);
	// ckptLast is the last one this process saved (guarded by ckptMu),
	// what the next links unchanged arrays from.
	ckptMu    sync.Mutex
	ckptLast  *savedSet
	ckptCount atomic.Uint64
	// serverKey is the public CURVE key clients connect with ("": the
	// socket is not encrypted).
	serverKey string
	// link: with serverKey, the throwaway certificate of the TCP bulk
	// streams and request lanes (transfer/tlslink.go); nil: they are plain.
	link *transfer.LinkCert
	// cancels: the requests a client's cancel or a deadline may stop.
	cancels cancels
	// loc: this process coordinates a set of locales (locales.go); nil
	// for a lone server.
	loc *locales
	// peers: a locale's links to the others (locale_peer.go).
	peers peerLinks
	// strs remembers string arrays already checked (cmd_strings.go).
	strs strChecks
	// mallocTuned: zframe.TuneMalloc took cfg.FrameHeap (glibc), so frames
	// reuse resident memory; reported by get_config.
	mallocTuned bool
	// inPlace holds replies whose frames libzmq reads in place (send).
	inPlace  *sentInPlace
	router   *zmq.Socket
	pull     *zmq.Socket
	replyEP  string
	endpoint string
	jobs     chan job
	// repliesDue counts requests handed to workers or stream goroutines
	// whose replies (one message each, through pull) are not forwarded yet.
	// Only the I/O goroutine touches it. A reply that is never sent (a
	// failed send) leaves it too high, which only costs polling pull.
	repliesDue int
	pushPool   chan *zmq.Socket // reply sockets, see replySocket
	inflight   sync.WaitGroup   // stream transfers running off the worker pool
	streams    *streams
	stopOnce   sync.Once
	stopped    chan struct{}
	closing    atomic.Bool
	// restore is the --checkpoint restore Run runs while it serves (nil:
	// none, or it is over); restorePending says it has not succeeded yet,
	// so a shutdown must not save over the checkpoint.
	restore        atomic.Pointer[restoreState]
	restorePending atomic.Bool
	stats          Stats
	// noShmMin: download takes no shm_min argument, as a server older than
	// it (ARKTOS_DEBUG_NO_SHM_MIN=1, for the clients' fallback tests).
	noShmMin bool
	// noInline: download takes no inline_max and get_config does not say
	// download_inline, as a server older than it
	// (ARKTOS_DEBUG_NO_DOWNLOAD_INLINE=1, for the clients' tests).
	noInline bool
	// panicCmd: the first request of this command to take a bulk stream
	// panics there (ARKTOS_DEBUG_PANIC_WITH_STREAM=download, say: a
	// stand-in for a handler's bug, for the clients' tests).
	panicCmd atomic.Pointer[string]
}

// Stats are counters exposed by the stats command; tests use them to prove
// that fast paths are taken.
type Stats struct {
	Requests     atomic.Uint64
	Canceled     atomic.Uint64 // requests cancelled (cancel, Ctrl-C, --max-request-time) before they stored anything
	GroupByFused atomic.Uint64 // groupby requests grouped and aggregated in one pass (ops.GroupByAgg)
	// groupby_unique requests by ops.GroupUnique's path: a bitmap or a
	// sort of packed keys, or a grouping (keys too wide to pack).
	UniqueBitmap, UniqueSort, UniqueGrouped atomic.Uint64
	// compresses (compress, compress_many and the set operations' own)
	// that gathered the arrays by the mask's positions (ops.CompressMany)
	// instead of compressing each.
	CompressGathered atomic.Uint64
	// lookup requests by ops.Lookup's path: a slot per value of the
	// table's range, or a hash table.
	LookupDense, LookupHash atomic.Uint64
	Errors                  atomic.Uint64
	BytesCopiedIn           atomic.Uint64 // bytes copied from received frames into arrays
	BytesCopiedOut          atomic.Uint64 // bytes copied from arrays into sent frames
	// BytesZeroCopyOut: reply frames libzmq sent from the array in place,
	// or a request lane wrote from it in one gathering write.
	BytesZeroCopyOut atomic.Uint64
	BytesStreamIn    atomic.Uint64 // bytes read from a bulk stream straight into arrays
	StripedIn        atomic.Uint64 // uploads striped over several bulk streams
	StripedOut       atomic.Uint64 // downloads striped over several bulk streams
	BytesStreamOut   atomic.Uint64 // bytes written to a bulk stream straight from arrays
	ShmViews         atomic.Uint64 // downloads answered with a shared-memory segment
	ShmUploads       atomic.Uint64 // uploads whose segment became the array's buffer (no copy)
	ShmAdopted       atomic.Uint64 // arrays copied into a segment by a view, which then backs them
	ShmMappedFills   atomic.Uint64 // of those, copies into a pooled segment through a mapping (transfer.WriteSegment)
	// compressed bytes received and sent (zstd frames)
	BytesCompressedIn, BytesCompressedOut atomic.Uint64
	Uploads                               atomic.Uint64
	LaneRequests                          atomic.Uint64      // requests answered over a request lane (lane.go)
	LaneSpin                              transfer.SpinStats // what the request lanes' polling reads did (transfer.SpinReader)
	Downloads                             atomic.Uint64
	StreamsRefused                        atomic.Uint64 // open_stream refused at --max-streams
	StreamsReaped                         atomic.Uint64 // idle bulk streams dropped after their client left (reapStreams)
	StreamTLS, StreamTLSRefused           atomic.Uint64 // TLS handshakes of TCP streams and lanes done and refused (an encrypted server's)
	// Panics: bugs caught (in a handler, its worker goroutines, a lane's
	// or stream's goroutine, a reply's sending) and logged instead of
	// stopping the server. Anything but 0 is a bug worth reporting.
	Panics atomic.Uint64
}

// pingEvery is how often the server pings each client over ZeroMQ (New).
const pingEvery = 500 * time.Millisecond

// hardFrameCap is the largest frame libzmq accepts at all (ZMQ_MAXMSGSIZE):
// past it libzmq drops the peer instead of buffering an unbounded frame.
func hardFrameCap(frameSize int) int64 {
	return max(4*int64(frameSize), 64<<20)
}

// New checks cfg, binds the sockets and prepares the token. Nothing is
// served until Run.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ops.SetSIMD(!cfg.NoSIMD)
	s := &Server{cfg: cfg, log: cfg.Logger, store: newStore(cfg.MaxMemory), stopped: make(chan struct{}), inPlace: newSentInPlace()}
	s.store.poison = os.Getenv("ARKTOS_DEBUG_POISON") == "1"
	s.store.grace.report = s.logPanic("panic freeing shared-memory segments")
	if os.Getenv("ARKTOS_DEBUG_NO_MEMFD") == "1" {
		memfdDisabled.Store(true)
	}
	s.noShmMin = os.Getenv("ARKTOS_DEBUG_NO_SHM_MIN") == "1"
	s.noInline = os.Getenv("ARKTOS_DEBUG_NO_DOWNLOAD_INLINE") == "1"
	if c := os.Getenv("ARKTOS_DEBUG_PANIC_WITH_STREAM"); c != "" {
		s.panicCmd.Store(&c)
	}
	// Before the first socket and its libzmq I/O threads. (The one malloc
	// arena was asked for when the program was loaded: zframe's constructor.)
	s.mallocTuned = zframe.TuneMalloc(cfg.FrameHeap)
	var err error
	if s.zctx, err = zmq.NewContext(); err != nil {
		return nil, fmt.Errorf("server: zmq context: %w", err)
	}
	// fail closes what was opened: zmq_ctx_term waits for every socket of
	// the context to be closed, so a socket left open would hang New (it
	// did, silently, when --addr was taken by another server).
	fail := func(err error) (*Server, error) {
		s.closeStreams() // nil-safe: the listeners, if opened
		for _, sock := range []*zmq.Socket{s.router, s.pull} {
			if sock != nil {
				sock.Close()
			}
		}
		s.zctx.Term()
		return nil, err
	}
	if s.router, err = s.zctx.NewSocket(zmq.ROUTER); err != nil {
		return fail(fmt.Errorf("server: router socket: %w", err))
	}
	s.router.SetLinger(0)
	if err := s.router.SetMaxmsgsize(hardFrameCap(cfg.FrameSize)); err != nil {
		return fail(fmt.Errorf("server: set ZMQ_MAXMSGSIZE: %w", err))
	}
	// Pings to every client: a client's heartbeat timeout ends only with a
	// whole message received, and while it uploads over a slow link its
	// own pings wait behind the bytes in flight (megabytes in its socket
	// buffer), so their answers came too late and the upload counted as
	// lost. These cross the idle direction at once. Clients that do not
	// answer for an hour are dropped: a frame takes at most that over a
	// link of 20 KiB/s; a host that vanished holds a connection no longer.
	every := pingEvery
	// ARKTOS_DEBUG_PING_EVERY (a duration, for the clients' slow-link
	// tests: pings well inside their 1 s heartbeat on a busy machine).
	if d, err := time.ParseDuration(os.Getenv("ARKTOS_DEBUG_PING_EVERY")); err == nil && d > 0 {
		every = d
	}
	if err := s.router.SetHeartbeatIvl(every); err != nil {
		return fail(fmt.Errorf("server: set ZMQ_HEARTBEAT_IVL: %w", err))
	}
	if err := s.router.SetHeartbeatTimeout(time.Hour); err != nil {
		return fail(fmt.Errorf("server: set ZMQ_HEARTBEAT_TIMEOUT: %w", err))
	}
	if cfg.Encrypt == EncryptOn {
		pub, secret, file, err := curveKeys(cfg.ServerKeyFile)
		if err != nil {
			return fail(err)
		}
		s.cfg.ServerKeyFile = file
		if err := s.router.SetCurveServer(1); err != nil {
			return fail(fmt.Errorf("server: set ZMQ_CURVE_SERVER: %w", err))
		}
		if err := s.router.SetCurveSecretkey(secret); err != nil {
			return fail(fmt.Errorf("server: set ZMQ_CURVE_SECRETKEY: %w", err))
		}
		s.serverKey = pub
		if s.link, err = transfer.NewLinkCert(); err != nil {
			return fail(fmt.Errorf("server: %w", err))
		}
	}
	if err := s.router.Bind(cfg.Addr); err != nil {
		return fail(fmt.Errorf("server: cannot bind %s: %w (is another arktos-server running there, or one still stopping? pick another --addr, or stop it)", cfg.Addr, err))
	}
	s.endpoint, _ = s.router.GetLastEndpoint()
	if s.pull, err = s.zctx.NewSocket(zmq.PULL); err != nil {
		return fail(fmt.Errorf("server: reply socket: %w", err))
	}
	s.pull.SetRcvhwm(0) // unlimited: workers must never block on a reply
	s.pull.SetLinger(0)
	s.replyEP = fmt.Sprintf("inproc://arktos-replies-%p", s)
	if err := s.pull.Bind(s.replyEP); err != nil {
		return fail(fmt.Errorf("server: bind %s: %w", s.replyEP, err))
	}
	s.pushPool = make(chan *zmq.Socket, 4*cfg.Workers+16)
	if err := s.listenStreams(); err != nil {
		return fail(err)
	}
	// Only once every address is ours: a server that cannot bind must not
	// overwrite the token file of the one that holds the address, nor load
	// a checkpoint for nothing.
	if err := s.setupToken(); err != nil {
		return fail(err)
	}
	// Checkpoint (cmd_io.go): the arrays saved at the last clean shutdown
	// come back while Run serves: until they have, get_config and stats
	// answer (with the restore's progress) and other requests are refused
	// with RESTORING; clients wait in Dial and connect.
	if err := s.prepareRestore(); err != nil {
		return fail(err)
	}
	if len(cfg.Peers) > 0 {
		if s.loc, err = newLocales(s, cfg.Peers); err != nil {
			return fail(err)
		}
		s.log.Info("coordinating locales", "locales", s.loc.count())
	}
	return s, nil
}

// Endpoint returns the endpoint actually bound (with the port resolved).
func (s *Server) Endpoint() string { return s.endpoint }

// Token returns the token requests must carry, or "" when none is needed.
func (s *Server) Token() string { return s.token }

func (s *Server) setupToken() error {
	if !s.cfg.Auth {
		return nil
	}
	if s.cfg.Token != "" {
		s.token = s.cfg.Token
		return nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("server: generate token: %w", err)
	}
	s.token = hex.EncodeToString(b)
	path := s.cfg.TokenFile
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("server: no home directory for the token file; pass --token-file: %w", err)
		}
		path = filepath.Join(home, ".arktos", "token")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("server: token file: %w", err)
	}
	if err := os.WriteFile(path, []byte(s.token+"\n"), 0o600); err != nil {
		return fmt.Errorf("server: write token file %s: %w", path, err)
	}
	s.cfg.TokenFile = path
	s.log.Info("generated an access token", "token_file", path)
	return nil
}

// Stop asks Run to return; requests in flight finish first.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.closing.Store(true)
		close(s.stopped)
	})
}

// Run serves until ctx is done, Stop is called, or a client sends shutdown.
func (s *Server) Run(ctx context.Context) error {
	// The I/O goroutine owns the ROUTER and PULL sockets for its lifetime.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	s.jobs = make(chan job, 1024)
	var wg sync.WaitGroup
	for i := 0; i < s.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker()
		}()
	}
	go s.inPlace.run(s.stopped)
	if s.cfg.Checkpoint != "" && s.cfg.CheckpointInterval > 0 {
		go s.checkpointEvery(ctx, s.cfg.CheckpointInterval)
	}
	var restoreErr error
	restoreDone := make(chan struct{})
	if st := s.restore.Load(); st != nil {
		go func() {
			defer close(restoreDone)
			defer par.Recover(func(p *par.Panic) {
				s.logPanic("panic restoring the checkpoint")(p)
				restoreErr = fmt.Errorf("server: cannot restore --checkpoint %s: internal error %v (a bug: please report it with the server log)", s.cfg.Checkpoint, p.Value)
				s.Stop()
			})
			if restoreErr = s.restoreCheckpoint(st); restoreErr != nil {
				s.log.Error("checkpoint restore failed: stopping", "err", restoreErr)
				s.Stop()
			}
		}()
	} else {
		close(restoreDone)
	}
	s.log.Info("arktos-server listening", "addr", s.endpoint, "workers", s.cfg.Workers,
		"max_memory", s.cfg.MaxMemory, "frame_size", s.cfg.FrameSize, "auth", s.cfg.Auth, "version", Version, "simd", simdMode(), "encrypted", s.serverKey != "")
	if s.serverKey != "" {
		s.log.Info("the ZeroMQ socket is encrypted (CurveZMQ): clients connect with this server key (server_key=, ARKTOS_SERVER_KEY); TCP bulk streams and request lanes are TLS 1.3, pinned over it", "server_key", s.serverKey, "key_file", s.cfg.ServerKeyFile+".pub")
	}

	// Replies from workers come through the PULL socket, so it is polled
	// while any is due; otherwise the ROUTER alone is (zmq_poll asks every
	// socket for its events around each sleep: two system calls per socket).
	both := zmq.NewPoller()
	both.Add(s.router, zmq.POLLIN)
	both.Add(s.pull, zmq.POLLIN)
	routerOnly := zmq.NewPoller()
	routerOnly.Add(s.router, zmq.POLLIN)
	var loopErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-s.stopped:
			break loop
		default:
		}
		poller := routerOnly
		if s.repliesDue > 0 {
			poller = both
		}
		polled, err := poller.Poll(50 * time.Millisecond)
		if err != nil {
			if errors.Is(err, zmq.ETERM) {
				break
			}
			loopErr = fmt.Errorf("server: poll: %w", err)
			break
		}
		for _, p := range polled {
			switch p.Socket {
			case s.router:
				// Take a bounded batch so replies are forwarded in between.
				for i := 0; i < 64; i++ {
					m, err := zframe.Recv(s.router, true)
					if err != nil {
						if !errors.Is(err, syscall.EAGAIN) {
							s.log.Warn("receive failed", "err", err)
						}
						break
					}
					s.route(m)
				}
			case s.pull:
				s.forwardReplies()
			}
		}
	}
	s.Stop()
	<-restoreDone // a restore stops early at a stop, between arrays
	if restoreErr != nil && loopErr == nil {
		loopErr = restoreErr
	}
	close(s.jobs)
	wg.Wait() // workers finish what is queued (answering SHUTTING_DOWN)
	if s.loc != nil {
		s.loc.close()
	}
	s.closeStreams()
	s.inflight.Wait()
	s.forwardReplies()
	for len(s.pushPool) > 0 {
		(<-s.pushPool).Close()
	}
	// Give the last replies (the shutdown reply among them) time to leave.
	s.router.SetLinger(2 * time.Second)
	s.router.Close()
	s.pull.Close()
	s.zctx.Term()
	s.inPlace.drain() // every message is destroyed now: let their arrays go
	// Checkpoint (cmd_io.go): save every array now that no request runs.
	if err := s.saveCheckpoint(); err != nil && loopErr == nil {
		loopErr = err
	}
	used, _, _, n := s.store.usage()
	s.log.Info("arktos-server stopped", "arrays", n, "bytes", used)
	return loopErr
}

// forwardReplies moves every queued reply from the workers to the ROUTER.
func (s *Server) forwardReplies() {
	for {
		if err := zframe.Forward(s.pull, s.router, true); err != nil {
			if !errors.Is(err, syscall.EAGAIN) {
				s.log.Warn("forward reply failed", "err", err)
			}
			return
		}
		if s.repliesDue > 0 {
			s.repliesDue--
		}
	}
}

// MaxMemory is the memory the stored arrays may hold (--max-memory, or its
// default).
func (s *Server) MaxMemory() int64 { return s.cfg.MaxMemory }

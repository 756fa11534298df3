package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// Config is the server's configuration; cmd/arktos-server fills it from
// flags and ARKTOS_* environment variables.
type Config struct {
	Addr      string // ZeroMQ endpoint to bind, e.g. tcp://127.0.0.1:5555
	MaxMemory int64  // bytes the stored arrays may hold in all
	Token     string // required token; "" with Auth generates one
	Auth      bool   // require a token even on a loopback address
	TokenFile string // where a generated token is written
	// Encrypt is EncryptAuto (""), EncryptOn or EncryptOff: CurveZMQ on the
	// ZeroMQ socket (curve.go); auto turns it on for an address other
	// hosts can reach. ServerKeyFile holds the server's secret key
	// (default ~/.arktos/server_key; the public key goes to <file>.pub).
	Encrypt       string
	ServerKeyFile string
	Workers       int // request-handling goroutines (and kernel width)
	FrameSize     int // largest payload frame accepted and sent
	// StreamPort is the TCP port of bulk streams (0: any free port, -1: no
	// streams; then arrays travel in ZeroMQ frames only).
	StreamPort int
	Logger     *slog.Logger
	// DataDir is where client paths of read_parquet, to_parquet, ... and
	// save_all/load_all resolve ("" : DefaultDataDir in the working
	// directory); nothing outside it is reachable (cmd_io.go).
	DataDir string
	// Checkpoint, when set, is a directory every array is saved to on a
	// clean shutdown and restored from at start (cmd_io.go).
	Checkpoint string
	// CheckpointInterval, with Checkpoint, saves it this often too while
	// any array changed (0: at shutdown and on request only), so a crash
	// loses at most one interval's work.
	CheckpointInterval time.Duration
	// LaneSpin is how long a request lane's read polls for the next
	// request before it blocks (transfer.SpinReader; 0:
	// transfer.DefaultLaneSpin, negative: no polling).
	LaneSpin time.Duration
	// MaxRequestTime cancels a request that runs longer (cancel.go), as a
	// client's cancel would; 0: no limit.
	MaxRequestTime time.Duration
	// NoSIMD turns the AVX-512 kernels off for the process (ops.SetSIMD):
	// every operation takes its plain loop, with the same answers.
	NoSIMD bool
	// FrameHeap is how many bytes of freed ZeroMQ message buffers malloc
	// keeps resident for the next message (zframe.TuneMalloc; 0:
	// DefaultFrameHeap, negative: glibc's own settings, which fault every
	// frame in afresh). It is outside MaxMemory, like libzmq's queues.
	FrameHeap int64
	// MaxStreams bounds the bulk streams and request lanes open at once,
	// with the tickets handed out for them and not yet used (0:
	// DefaultMaxStreams); open_stream past it is refused with
	// TOO_MANY_STREAMS.
	MaxStreams int
	// Peers are the URLs (tcp://host:port?token=...) of locales 1..L-1 in
	// rank order: this process is then locale 0 of L = len(Peers)+1, the
	// coordinator that spreads every array over them (locales.go). Empty:
	// one locale, the server as it always was.
	Peers []string
	// LocaleRank is this process's rank when a coordinator started it
	// (get_config reports it); 0 for a coordinator or a lone server.
	LocaleRank int
	// PeerWait is how long a coordinator waits for each locale to listen
	// (0: a minute).
	PeerWait time.Duration
}

// DefaultMaxStreams is MaxStreams when none is given. Each stream holds a
// socket, and each lane 128 KiB of buffers and a goroutine (128 MiB for
// 1024 lanes); a client holds at most one of each, so this is room for
// 512 clients.
const DefaultMaxStreams = 1024

// DefaultFrameHeap is the FrameHeap used when none is given: an eighth of
// the arrays' limit, at most zframe.MaxMallocKeep (1 GiB).
func DefaultFrameHeap(maxMemory int64) int64 {
	return min(maxMemory/8, zframe.MaxMallocKeep)
}

// DefaultLaneSpin is how long a request lane polls for the next request
// before it blocks (--lane-spin; transfer.SpinReader).
const DefaultLaneSpin = transfer.DefaultLaneSpin

// DefaultAddr is the embedded default endpoint.
const DefaultAddr = "tcp://127.0.0.1:5555"

// DefaultMaxMemory returns half of physical memory (a share that leaves room
// for libzmq's message buffers and the OS), or 4 GiB when it is unknown.
func DefaultMaxMemory() int64 {
	if n := physicalMemory(); n > 0 {
		return n / 2
	}
	return 4 << 30
}

// physicalMemory is the machine's memory in bytes (/proc/meminfo's
// MemTotal), 0 when it cannot be read.
func physicalMemory() int64 {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// ParseBytes parses a size like "8GiB", "512MiB", "1.5GB", "64k" or "1024"
// (transfer.ParseBytes, which the clients share, for cmd/arktos-server).
var ParseBytes = transfer.ParseBytes

// validate fills defaults and checks the configuration.
func (c *Config) validate() error {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory()
	}
	if c.MaxMemory < 0 {
		return fmt.Errorf("server: --max-memory must be positive, got %d", c.MaxMemory)
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.LaneSpin == 0 {
		c.LaneSpin = DefaultLaneSpin
	}
	if c.LaneSpin > transfer.MaxLaneSpin {
		return fmt.Errorf("server: --lane-spin must be at most %v (it keeps a core busy while a lane waits), got %v", transfer.MaxLaneSpin, c.LaneSpin)
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.MaxStreams < 0 {
		return fmt.Errorf("server: --max-streams must be positive, got %d (use --stream-port -1 for no streams)", c.MaxStreams)
	}
	if c.FrameSize == 0 {
		c.FrameSize = transfer.DefaultFrameSize
	}
	if c.FrameHeap == 0 {
		c.FrameHeap = DefaultFrameHeap(c.MaxMemory)
	}
	if c.FrameSize < 1024 || c.FrameSize > 1<<30 {
		return fmt.Errorf("server: --frame-size must be between 1KiB and 1GiB, got %d", c.FrameSize)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if !IsLocalAddr(c.Addr) {
		c.Auth = true
	}
	switch c.Encrypt {
	case "", EncryptAuto:
		c.Encrypt = EncryptOff
		if !IsLocalAddr(c.Addr) {
			c.Encrypt = EncryptOn
		}
	case EncryptOn, EncryptOff:
	default:
		return fmt.Errorf("server: --encrypt must be auto, on or off, got %q", c.Encrypt)
	}
	if c.Token != "" {
		c.Auth = true
	}
	return nil
}

// IsLocalAddr reports whether endpoint is reachable only from this host: a
// loopback tcp address, ipc:// or inproc://. Anything else needs a token.
func IsLocalAddr(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "ipc", "inproc":
		return true
	case "tcp":
		host := u.Hostname()
		if host == "localhost" {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

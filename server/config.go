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
)

// Config is the server's configuration; cmd/arktos-server fills it from
// flags and ARKTOS_* environment variables.
type Config struct {
	Addr      string // ZeroMQ endpoint to bind, e.g. tcp://127.0.0.1:5555
	MaxMemory int64  // bytes the stored arrays may hold in all
	Token     string // required token; "" with Auth generates one
	Auth      bool   // require a token even on a loopback address
	TokenFile string // where a generated token is written
	Workers   int    // request-handling goroutines (and kernel width)
	FrameSize int    // largest payload frame accepted and sent
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
	// LaneSpin is how long a request lane's read polls for the next
	// request before it blocks (transfer.SpinReader; 0:
	// transfer.DefaultLaneSpin, negative: no polling).
	LaneSpin time.Duration
}

// DefaultLaneSpin is how long a request lane polls for the next request
// before it blocks (--lane-spin; transfer.SpinReader).
const DefaultLaneSpin = transfer.DefaultLaneSpin

// DefaultAddr is the embedded default endpoint.
const DefaultAddr = "tcp://127.0.0.1:5555"

// DefaultMaxMemory returns half of physical memory (a share that leaves room
// for libzmq's message buffers and the OS), or 4 GiB when it is unknown.
func DefaultMaxMemory() int64 {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					return kb * 1024 / 2
				}
			}
		}
	}
	return 4 << 30
}

// ParseBytes parses a size like "8GiB", "512MiB", "1.5GB", "64k" or "1024".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q is not a number with an optional unit (e.g. 8GiB, 512MiB, 1048576)", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1e12, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q has unknown unit %q; use B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB)", s, unit)
	}
	n := v * mult
	if n > 1<<62 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}

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
	if c.FrameSize == 0 {
		c.FrameSize = transfer.DefaultFrameSize
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

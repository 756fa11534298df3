//go:build unix

package transfer

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spinning reads (docs/protocol.md, "Request lanes"). On the 2-core VM a
// process blocked in a socket read is woken some 130-170 µs after the
// peer's write (the idle vCPU halts; waking it goes through the host): a
// raw TCP echo between two processes took 172-178 µs p50 from Go, 136 µs
// from Python. Polling the socket without blocking keeps the CPU awake for
// a reply about to come: 12-23 µs from Go, 13 µs from Python, with both
// sides polling. A lane reads this way: the client while it waits for a
// reply, the server while it waits for the next request. Each poll also
// yields the CPU to any other thread that wants it (sched_yield): without
// that, Go's lane round trips in bench/transfer took 19-24 µs p50 but
// 85-484 µs p90 (a poller keeping the thread it waits for off the CPU),
// with it 32-51 and 67-134 µs (runs alternating). The poll is bounded
// (then the read blocks as usual), so an idle lane costs a moment of one
// core after each message; none on a machine of one core, where it would
// only keep the peer from running.

// DefaultLaneSpin is how long a lane read polls before it blocks.
const DefaultLaneSpin = 200 * time.Microsecond

// SpinReader reads a socket, polling it (non-blocking reads) for up to
// spin before it waits in the runtime's poller as net.Conn's Read does.
// Deadlines and Close act as on the connection, but on a read that is
// polling only once the poll ends (within spin).
type SpinReader struct {
	raw  syscall.RawConn
	spin time.Duration
	hits *atomic.Uint64
}

// NewSpinReader returns a reader of c that polls for up to spin, counting
// in hits (if not nil) the reads whose bytes came while polling (tests
// check the path). It returns c itself where there is nothing to poll:
// spin <= 0, one CPU, or a connection without a descriptor.
func NewSpinReader(c net.Conn, spin time.Duration, hits *atomic.Uint64) io.Reader {
	sc, ok := c.(syscall.Conn)
	if spin <= 0 || runtime.NumCPU() < 2 || !ok {
		return c
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &SpinReader{raw: raw, spin: spin, hits: hits}
}

// Read reads into p as net.Conn's Read does (io.EOF when the peer closed).
func (s *SpinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n      int
		rerr   error
		start  time.Time
		tries  int
		polled bool // the poll is over: each later call reads once
	)
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			n, rerr = unix.Read(int(fd), p)
			if rerr == unix.EINTR {
				continue
			}
			if rerr != unix.EAGAIN {
				return true
			}
			if polled {
				return false
			}
			if tries++; tries == 1 {
				start = time.Now()
			} else if time.Since(start) >= s.spin {
				polled = true
				return false // wait in the poller
			}
			// Give the CPU to any other thread that wants it (a worker, the
			// peer): polling must not delay the reply it waits for.
			yieldCPU()
		}
	})
	switch {
	case err != nil: // a deadline, or the connection closed
		return 0, err
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: "spin", Err: os.NewSyscallError("read", rerr)}
	case n == 0:
		return 0, io.EOF
	}
	if tries > 0 && !polled && s.hits != nil {
		s.hits.Add(1)
	}
	return n, nil
}

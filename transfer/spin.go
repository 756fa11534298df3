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

// Spinning reads (docs/protocol.md, "Polling"). On some 2-core VMs a process
// blocked in a socket read is woken some 130-170 µs after the peer's write
// (the idle vCPU halts; waking it goes through the host): a raw TCP echo
// between two processes took 172-178 µs p50 from Go, 136 µs from Python.
// Polling the socket without blocking keeps the CPU awake for a reply about
// to come: 12-23 µs from Go, 13 µs from Python, with both sides polling. A
// lane reads this way: the client while it waits for a reply, the server
// while it waits for the next request.
//
// Each poll offers the CPU to other threads (sched_yield): without that,
// Go's lane round trips in bench/transfer took 19-24 µs p50 but 85-484 µs
// p90, with it 32-51 and 67-134 µs (runs alternating). The scheduler need
// not take the offer, though, and a thread that polls loses the priority
// the kernel gives a thread that wakes from a wait: on a machine with more
// runnable threads than CPUs, polling made round trips a hundred times
// slower (Go get_config 1.8 ms p50, 4.0 ms p90, with two busy loops beside
// it; 18-20 µs p50 with blocking reads). So a poll step that comes back
// late (busyGap: the yield gave the CPU to a thread that kept it), or bytes
// found after one, ends the poll, and the following reads (Read calls)
// block without polling: 4, 8, ... up to 256 reads, a poll that runs
// undisturbed halving that. The poll is bounded (then the read blocks as
// usual), so an idle lane costs a moment of one core after each message;
// none with one CPU or GOMAXPROCS 1, where it would only keep the peer or
// the process's other goroutines from running.

// DefaultLaneSpin is how long a lane read polls before it blocks.
const DefaultLaneSpin = 200 * time.Microsecond

// MaxLaneSpin is the longest poll a server or client accepts.
const MaxLaneSpin = 100 * time.Millisecond

// busyGap: a poll step (a read and a yield) that took longer than this was
// off the CPU while another thread ran; a step alone takes about a
// microsecond.
const busyGap = 50 * time.Microsecond

// maxSpinBackoff is the most reads that skip polling after a busy poll.
const maxSpinBackoff = 256

// SpinStats counts what polling reads did; get_stats shows the server's,
// and tests check the paths with them.
type SpinStats struct {
	Hits atomic.Uint64 // reads whose bytes came while polling
	Busy atomic.Uint64 // polls cut short because another thread had the CPU
	// Polls: reads that found nothing at once and polled (tests check the
	// path: a count that does not hang on who had the CPU when).
	Polls atomic.Uint64
}

// SpinReader reads a socket, polling it (non-blocking reads) for up to
// spin before it waits in the runtime's poller as net.Conn's Read does.
// Deadlines and Close act as on the connection, but on a read that is
// polling only once the poll ends (within spin). One goroutine reads at a
// time (the back-off state is not locked).
type SpinReader struct {
	conn net.Conn // for errors' addresses
	raw  syscall.RawConn
	spin time.Duration
	gap  time.Duration // busyGap (tests shorten it)
	st   *SpinStats

	skip    int // reads left that block without polling (a busy machine)
	backoff int // the next busy poll's skip is twice this; an undisturbed poll halves it
}

// NewSpinReader returns a reader of c that polls for up to spin, counting
// in st (if not nil). It returns c itself where there is nothing to poll:
// spin <= 0, one CPU or GOMAXPROCS 1, or a connection without a descriptor.
func NewSpinReader(c net.Conn, spin time.Duration, st *SpinStats) io.Reader {
	sc, ok := c.(syscall.Conn)
	if spin <= 0 || runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 || !ok {
		return c
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	if st == nil {
		st = new(SpinStats)
	}
	return &SpinReader{conn: c, raw: raw, spin: min(spin, MaxLaneSpin), gap: busyGap, st: st}
}

// Read reads into p as net.Conn's Read does (io.EOF when the peer closed).
func (s *SpinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n       int
		rerr    error
		start   time.Time
		last    time.Time
		tries   int
		busy    bool
		polled  = s.skip > 0 // the poll is over (or skipped): each later call reads once
		skipped = polled
	)
	if skipped {
		s.skip--
	}
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			n, rerr = unix.Read(int(fd), p)
			if rerr == unix.EINTR {
				continue
			}
			if rerr != unix.EAGAIN {
				// Bytes found after a step off the CPU may have waited there.
				if tries > 0 && !polled && time.Since(last) > s.gap {
					busy = true
				}
				return true
			}
			if polled {
				return false
			}
			now := time.Now()
			if tries++; tries == 1 {
				start = now
			} else if now.Sub(last) > s.gap {
				busy, polled = true, true
				return false // another thread has this CPU: wait in the poller
			} else if now.Sub(start) >= s.spin {
				polled = true
				return false // wait in the poller
			}
			last = now
			yieldCPU()
			if tries%16 == 0 {
				runtime.Gosched() // this process's other goroutines, too
			}
		}
	})
	if tries > 0 && !skipped {
		s.st.Polls.Add(1)
	}
	if busy {
		s.backoff = min(max(2*s.backoff, 4), maxSpinBackoff)
		s.skip = s.backoff
		s.st.Busy.Add(1)
	} else if tries > 0 && !skipped {
		// A poll ran undisturbed: the next busy one backs off half as long
		// (under steady load polls still find the CPU taken now and then, and
		// the back-off stays near its top).
		s.backoff /= 2
		if !polled && err == nil && rerr == nil && n > 0 { // bytes, not a hang-up
			s.st.Hits.Add(1)
		}
	}
	switch {
	case err != nil: // a deadline, or the connection closed
		return 0, err
	case rerr != nil:
		la := s.conn.LocalAddr()
		network := "spin"
		if la != nil {
			network = la.Network()
		}
		return 0, &net.OpError{Op: "read", Net: network, Source: la, Addr: s.conn.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

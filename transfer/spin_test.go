package transfer

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestSpinReader: a polling read returns what a plain read would (bytes,
// io.EOF, a deadline's error), counts the replies that came while it
// polled (an echo's, nearly all of them), and still blocks for bytes that
// come after its poll ended (not counted).
func TestSpinReader(t *testing.T) {
	skipOneCPU(t)
	a, b := tcpPair(t)
	if r := NewSpinReader(a, 0, nil); r != io.Reader(a) {
		t.Fatal("spin 0: want the connection itself")
	}
	st := new(SpinStats)
	hits := &st.Hits
	r := NewSpinReader(a, 5*time.Millisecond, st)
	sr, ok := r.(*SpinReader)
	if !ok {
		t.Fatalf("got %T, want a *SpinReader", r)
	}
	// Under load (go test runs packages side by side) a poll may find the
	// CPU taken and back off; that path has its own test.
	sr.gap = time.Hour
	go func() { // echo, 30 µs late: the reader finds nothing at first
		buf := make([]byte, 64)
		for {
			n, err := b.Read(buf)
			if err != nil {
				return
			}
			for t0 := time.Now(); time.Since(t0) < 30*time.Microsecond; {
			}
			b.Write(buf[:n])
		}
	}()
	buf := make([]byte, 64)
	const rounds = 200
	for i := range rounds {
		msg := []byte{byte(i), 1, 2, 3}
		if _, err := a.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := 0
		for got < len(msg) {
			n, err := r.Read(buf[got:])
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		if buf[0] != byte(i) || buf[3] != 3 {
			t.Fatalf("round %d: read %v", i, buf[:4])
		}
	}
	// Every echo comes within the 5 ms poll, and (unless the reader was
	// held up for 30 µs after its write) is read there: 199-200 of 200
	// here, 10-200 under -race, whose scheduling sometimes finds every
	// echo already there; without the poll none is counted.
	if h := hits.Load(); h == 0 {
		t.Fatalf("%d of %d replies read while polling; the poll is not being taken", h, rounds)
	}
	// Bytes after the poll ended: the read blocks for them, as a plain one.
	before := hits.Load()
	a2, b2 := tcpPair(t)
	r2 := NewSpinReader(a2, 100*time.Microsecond, st)
	go func() { time.Sleep(30 * time.Millisecond); b2.Write([]byte("late")) }()
	n, err := r2.Read(buf)
	if err != nil || string(buf[:n]) != "late" {
		t.Fatalf("late bytes: %q, %v", buf[:n], err)
	}
	if hits.Load() != before {
		t.Fatal("bytes that came after the poll counted as a hit")
	}
	// A deadline ends a read, polling or blocked.
	a2.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r2.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	a2.SetReadDeadline(time.Time{})
	// The peer closing is io.EOF.
	b2.Close()
	if _, err := r2.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	// Close from another goroutine ends a blocked read.
	a3, _ := tcpPair(t)
	r3 := NewSpinReader(a3, 100*time.Microsecond, nil)
	go func() { time.Sleep(20 * time.Millisecond); a3.Close() }()
	if _, err := r3.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v", err)
	}
}

// skipOneCPU skips where SpinReader does not poll, and checks that it then
// hands back the connection itself.
func skipOneCPU(t *testing.T) {
	t.Helper()
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		a, _ := tcpPair(t)
		if r := NewSpinReader(a, time.Millisecond, nil); r != io.Reader(a) {
			t.Fatalf("one CPU or GOMAXPROCS 1: got %T, want the connection itself", r)
		}
		t.Skip("one CPU or GOMAXPROCS 1: SpinReader does not poll")
	}
}

// spyRaw is a SpinReader's socket seen by a test: how many times the
// reader's function ran (none: the read's deadline passed before it looked
// at the socket), and onWait, run once when the function first sends the
// read to wait in the poller.
type spyRaw struct {
	syscall.RawConn
	calls  int
	onWait func()
}

func (s *spyRaw) Read(f func(fd uintptr) bool) error {
	return s.RawConn.Read(func(fd uintptr) bool {
		s.calls++
		done := f(fd)
		if !done && s.onWait != nil {
			s.onWait()
			s.onWait = nil
		}
		return done
	})
}

// TestSpinReaderBacksOff: a poll that finds the CPU taken by another thread
// (here every poll step counts as that: gap 0) ends, and the next 4, then
// 8, 16 ... reads block without polling; a poll that runs undisturbed
// halves the back-off. No bytes come until the end: each read ends at its
// deadline, so a read that polls when it should not is seen (it counts as
// busy) however late the test's goroutine runs.
func TestSpinReaderBacksOff(t *testing.T) {
	skipOneCPU(t)
	a, b := tcpPair(t)
	st := new(SpinStats)
	r := NewSpinReader(a, 3*time.Millisecond, st).(*SpinReader)
	r.gap = 0
	spy := &spyRaw{RawConn: r.raw}
	r.raw = spy
	buf := make([]byte, 1)
	read := func() {
		t.Helper()
		for try := 0; ; try++ {
			polls, calls := r.skip == 0, spy.calls
			a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read: %v, want the deadline's error", err)
			}
			// A read meant to poll whose deadline passed before it looked
			// at the socket (this goroutine off the CPU for 20 ms) did
			// nothing, back-off included: read again. One meant to skip
			// the poll has used up its skip either way.
			if !polls || spy.calls > calls {
				return
			}
			if try == 50 {
				t.Fatal("50 reads in a row ended at their deadline without looking at the socket")
			}
		}
	}
	for round, skip := range []int{4, 8, 16} {
		read() // polls, finds the CPU busy, blocks
		if got := st.Busy.Load(); got != uint64(round+1) || r.skip != skip {
			t.Fatalf("round %d: %d busy polls, skip %d; want %d and %d", round, got, r.skip, round+1, skip)
		}
		for range skip {
			read() // blocks without polling
		}
		if got := st.Busy.Load(); got != uint64(round+1) || r.skip != 0 {
			t.Fatalf("round %d: after the skipped reads %d busy polls (want %d), skip %d", round, got, round+1, r.skip)
		}
	}
	r.backoff = maxSpinBackoff
	read()
	if r.skip != maxSpinBackoff {
		t.Fatalf("skip %d, want at most %d", r.skip, maxSpinBackoff)
	}
	r.skip, r.gap = 0, time.Hour
	read() // polls its 3 ms undisturbed: the back-off halves
	if r.backoff != maxSpinBackoff/2 || r.skip != 0 || st.Busy.Load() != 4 || st.Hits.Load() != 0 {
		t.Fatalf("undisturbed poll: backoff %d, skip %d, %d busy polls, %d hits; want %d, 0, 4, 0", r.backoff, r.skip, st.Busy.Load(), st.Hits.Load(), maxSpinBackoff/2)
	}
	// Bytes that come after a busy poll are no hit. The byte is written
	// once the poll has ended (busy) and the read goes to wait for it.
	r.gap = 0
	spy.onWait = func() {
		if _, err := b.Write([]byte{1}); err != nil {
			t.Error(err)
		}
	}
	a.SetReadDeadline(time.Time{})
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	if spy.onWait != nil {
		t.Fatal("the read found no empty socket to wait on: it did not poll")
	}
	if st.Hits.Load() != 0 {
		t.Fatalf("bytes after a busy poll: %d hits, want 0", st.Hits.Load())
	}
	if st.Busy.Load() != 5 || r.skip != maxSpinBackoff {
		t.Fatalf("busy poll: %d busy polls, skip %d; want 5 and %d", st.Busy.Load(), r.skip, maxSpinBackoff)
	}
}

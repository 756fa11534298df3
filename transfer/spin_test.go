package transfer

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
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
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: SpinReader does not poll")
	}
	a, b := tcpPair(t)
	if r := NewSpinReader(a, 0, nil); r != io.Reader(a) {
		t.Fatal("spin 0: want the connection itself")
	}
	var hits atomic.Uint64
	r := NewSpinReader(a, 5*time.Millisecond, &hits)
	if _, ok := r.(*SpinReader); !ok {
		t.Fatalf("got %T, want a *SpinReader", r)
	}
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
	r2 := NewSpinReader(a2, 100*time.Microsecond, &hits)
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

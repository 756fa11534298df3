package testserver

import (
	"net"
	"sync"
	"testing"
)

// Relay listens on a free loopback port and forwards each connection to
// target (host:port), moving each direction with pipe(dst, src, up) (up:
// client to server) on a goroutine of its own, then closing dst. It
// returns the relay's address; everything stops when the test ends.
func Relay(t testing.TB, target string, pipe func(dst, src net.Conn, up bool)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { pipe(out, in, true); out.Close() })
			wg.Go(func() { pipe(in, out, false); in.Close() })
		}
	})
	return ln.Addr().String()
}

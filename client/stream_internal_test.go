package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestStreamHandshakeRefusedSaysWhy: a server that refuses a stream's
// handshake (here an unknown ticket: it closes the connection) is reported
// with what happened, over unix and tcp streams and for lanes; the error
// once read "stream handshake refused: <nil>" (a shadowed err).
func TestStreamHandshakeRefusedSaysWhy(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	streamTicketHook = func(tk []byte) []byte {
		bad := append([]byte(nil), tk...)
		for i := range bad {
			bad[i] ^= 0xff
		}
		return bad
	}
	defer func() { streamTicketHook = nil }()
	for _, network := range []string{"unix", "tcp"} {
		for _, magic := range []string{transfer.StreamMagic, transfer.LaneMagic} {
			c, err := Dial(ctx, srv.URL, WithStreamNetwork(network), WithLane(false))
			if err != nil {
				t.Fatal(err)
			}
			c.mu.Lock()
			st, err := c.dialStream(ctx, magic)
			c.mu.Unlock()
			c.Close()
			if st != nil {
				t.Fatalf("%s %q: a stream with a wrong ticket", network, magic)
			}
			if err == nil || strings.Contains(err.Error(), "<nil>") || !errors.Is(err, io.EOF) ||
				!strings.Contains(err.Error(), "closed the connection") {
				t.Errorf("%s %q: error %v, want the server's refusal (io.EOF) named", network, magic, err)
			}
		}
	}
}

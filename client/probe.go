// probe.go: a quick look, before ZeroMQ connects, at whether anything
// listens at the server's address.

package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrNotListening is wrapped by Dial's error when nothing listens at the
// address (every address the host resolves to refused the connection, or
// an ipc:// socket file is missing or refuses it). ZeroMQ connects lazily
// and retries for ever, so Dial waited for its whole timeout (10 s without
// a ctx deadline) before it said so.
var ErrNotListening = errors.New("no arktos-server listens")

// probeTimeout bounds the probe's connect: a refusal comes back within a
// round trip, and a connect that takes longer (a firewall dropping it, a
// slow link) leaves the verdict to the handshake and its full timeout.
const probeTimeout = time.Second

// probe returns an error wrapping ErrNotListening when nothing listens at a
// tcp:// or ipc:// endpoint, and nil when something does or when that
// cannot be told (a timeout, an unreachable host, a name that does not
// resolve: the handshake then waits as before).
func probe(ctx context.Context, endpoint string) error {
	hint := startHint(endpoint)
	d := net.Dialer{Timeout: probeTimeout}
	if path, ok := strings.CutPrefix(endpoint, "ipc://"); ok {
		if strings.HasPrefix(path, "@") { // Linux's abstract namespace: no file to look at
			return nil
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("client: %w at %s (no socket file %s): %s", ErrNotListening, endpoint, path, hint)
		}
		conn, err := d.DialContext(ctx, "unix", path)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("client: %w at %s (%w): %s", ErrNotListening, endpoint, syscall.ECONNREFUSED, hint)
		}
		if err == nil {
			conn.Close()
		}
		return nil
	}
	hostPort, ok := strings.CutPrefix(endpoint, "tcp://")
	if !ok {
		return nil
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil // (ZeroMQ's connect says what is wrong with it)
	}
	lctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(lctx, host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	// Fail fast only when every address refuses: one that accepts, times
	// out or cannot be reached leaves it to the handshake.
	for _, addr := range addrs {
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, port))
		if err == nil {
			conn.Close()
			return nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
	}
	return fmt.Errorf("client: %w at %s (%w): %s", ErrNotListening, endpoint, syscall.ECONNREFUSED, hint)
}

// startHint says how to start a server at endpoint, for the errors of
// Dials and requests that found none.
func startHint(endpoint string) string {
	return fmt.Sprintf("start one with `make serve` in a checkout of arktos, or run `arktos-server --addr %s`", endpoint)
}

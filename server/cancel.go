package server

// Cancelling requests (docs/protocol.md, "Cancel"): every request that a
// worker, a stream goroutine or a lane runs is registered under its
// client's ZeroMQ routing id and request id with a par.Stop, from the moment
// it is received until its reply is built. The cancel command (inline, so
// it is answered at once even while every worker is busy) sets that Stop;
// so does --max-request-time's timer. A queued request that was cancelled
// never starts; a running one stops at its kernel's next block boundary
// (ops.Env.Stop), its opEnv's deferred done releasing what it had reserved.
// A request stops only before it stores anything: opEnv.keep disarms the
// Stop, and a command that writes a stored array in place (the table's
// writes) is disarmed when it starts, so a cancel never leaves an array
// half-written or a result stored under a name nobody was told.

import (
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/transfer"
)

// cancelKey names a request: its client's routing id and its id.
type cancelKey struct {
	peer string
	id   uint64
}

type cancelEntry struct {
	stop  *par.Stop
	cmd   string
	timer *time.Timer // --max-request-time's, stopped at the end
}

// cancels is the registry of the requests that may be cancelled.
type cancels struct {
	mu      sync.Mutex
	running map[cancelKey]*cancelEntry
	// early: cancels that came before their request (a lane's request may
	// be read after the cancel the client sent on ZeroMQ), kept a while so
	// the request starts cancelled.
	early map[cancelKey]time.Time
}

// earlyKeep is how long a cancel for a request not yet seen is kept, and
// earlyMax how many such cancels at most (a client's mistakes cannot grow it).
const (
	earlyKeep = 10 * time.Second
	earlyMax  = 4096
)

// begin registers the request id of peer and returns its Stop, already
// cancelled when a cancel for it came first; with maxTime > 0 the Stop
// fires after that long. end must follow.
func (c *cancels) begin(peer []byte, id uint64, cmd string, maxTime time.Duration) *par.Stop {
	st := &par.Stop{}
	k := cancelKey{string(peer), id}
	e := &cancelEntry{stop: st, cmd: cmd}
	if maxTime > 0 {
		e.timer = time.AfterFunc(maxTime, func() {
			st.Cancel(fmt.Sprintf("'%s' ran past the server's --max-request-time of %v; ask the operator for a longer one, or split the work", cmd, maxTime))
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == nil {
		c.running = map[cancelKey]*cancelEntry{}
	}
	if t, ok := c.early[k]; ok {
		delete(c.early, k)
		if time.Since(t) <= earlyKeep {
			st.Cancel("the client cancelled it before it started")
		}
	}
	c.running[k] = e
	return st
}

// end unregisters a request that begin registered.
func (c *cancels) end(peer []byte, id uint64, st *par.Stop) {
	k := cancelKey{string(peer), id}
	c.mu.Lock()
	e, ok := c.running[k]
	if ok && e.stop == st {
		delete(c.running, k)
	}
	c.mu.Unlock()
	if ok && e.timer != nil {
		e.timer.Stop()
	}
}

// cancel sets the Stop of request id of peer: "canceled" when it will stop,
// "finishing" when it is already storing its results (or writes in place)
// and will complete, "unknown" when no such request runs (it may have
// finished, or not arrived yet: then it starts cancelled).
func (c *cancels) cancel(peer []byte, id uint64, why string) (state, cmd string) {
	k := cancelKey{string(peer), id}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.running[k]; ok {
		if e.stop.Cancel(why) || e.stop.Stopped() {
			return "canceled", e.cmd
		}
		return "finishing", e.cmd
	}
	now := time.Now()
	if len(c.early) >= earlyMax {
		for ek, t := range c.early {
			if now.Sub(t) > earlyKeep || len(c.early) >= earlyMax {
				delete(c.early, ek)
			}
		}
	}
	if c.early == nil {
		c.early = map[cancelKey]time.Time{}
	}
	c.early[k] = now
	return "unknown", ""
}

// count is the number of registered requests (stats' "running").
func (c *cancels) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.running)
}

// cmdCancel cancels a request of this client, or of the connection whose
// routing id "peer" names (ak.cancel() from another thread sends it on a
// socket of its own).
func (s *Server) cmdCancel(r *request) (*response, error) {
	a := r.args
	id := a.Uint("id")
	peerHex := a.OptString("peer", "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	peer := r.peer
	if peerHex != "" {
		p, err := hex.DecodeString(peerHex)
		if err != nil || len(p) == 0 {
			return nil, transfer.Errorf(transfer.ArgumentValue, "cancel: peer '%s' is not a connection's routing id in hex (get_config's \"peer\" on that connection)", peerHex)
		}
		peer = p
	}
	state, cmd := s.cancels.cancel(peer, id, "the client cancelled it")
	if state == "canceled" {
		s.log.Info("request cancelled by its client", "cmd", cmd, "id", id)
	}
	return &response{result: map[string]any{"id": id, "state": state}}, nil
}

// canceled counts a cancelled request and makes its CANCELED error.
func (s *Server) canceled(c *par.Canceled, cmd string) *transfer.Error {
	s.stats.Canceled.Add(1)
	return transfer.Errorf(transfer.Canceled, "'%s' was cancelled: %s; nothing was stored, and every stored array is as it was", cmd, c.Why)
}

// writesGiven says whether args name an array the command writes in place
// (its writes): such a request is not stopped once it starts.
func (cmd command) writesGiven(args map[string]any) bool {
	for _, k := range cmd.writes {
		if k == anyArray {
			return true
		}
		if v, ok := args[k]; ok && v != nil {
			return true
		}
	}
	return false
}

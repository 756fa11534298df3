package server

// locale_peer.go: what a locale (a process a coordinator started, rank ≥ 1)
// does for its coordinator beyond the ordinary commands: it learns its
// peers (locale_peers) and sends one of its arrays straight to another
// locale's bulk stream (locale_push), so an exchange's rows do not pass
// through the coordinator.

import (
	"context"
	"errors"
	"sync"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// peerLinks are a locale's links to the other locales, dialled at first
// use.
type peerLinks struct {
	mu    sync.Mutex
	urls  []string // by rank; "" for this one and the coordinator
	conns map[int]*client.Client
}

// notLocale refuses a locale command on a server that is not a locale:
// only a coordinator's locales take them (they make the server connect
// where it is told).
func (s *Server) notLocale(cmd string) error {
	if s.cfg.LocaleRank > 0 {
		return nil
	}
	return transfer.Errorf(transfer.ArgumentValue, "'%s' is for the locales a coordinator started (--locales), and this server is not one", cmd)
}

func (s *Server) cmdLocalePeers(r *request) (*response, error) {
	urls := r.args.StringList("urls")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	if err := s.notLocale("locale_peers"); err != nil {
		return nil, err
	}
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	for _, c := range s.peers.conns {
		c.Close()
	}
	s.peers.urls, s.peers.conns = urls, map[int]*client.Client{}
	return &response{result: map[string]any{"locales": len(urls)}}, nil
}

// peer is the link to locale rank, dialled now if it is not yet.
func (s *Server) peer(ctx context.Context, rank int) (*client.Client, error) {
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	if rank <= 0 || rank >= len(s.peers.urls) || s.peers.urls[rank] == "" || rank == s.cfg.LocaleRank {
		return nil, transfer.Errorf(transfer.ArgumentValue, "locale_push: no locale %d to push to (this is locale %d of %d)", rank, s.cfg.LocaleRank, len(s.peers.urls))
	}
	if c := s.peers.conns[rank]; c != nil {
		return c, nil
	}
	c, err := client.Dial(ctx, s.peers.urls[rank], s.peerOptions()...)
	if err != nil {
		return nil, transfer.Errorf(transfer.LocaleFailed, "locale %d cannot reach locale %d: %v", s.cfg.LocaleRank, rank, err)
	}
	s.peers.conns[rank] = c
	return c, nil
}

// cmdLocalePush uploads array "name" to locale "to" and answers with the
// array it became there (its name on that locale).
func (s *Server) cmdLocalePush(r *request) (*response, error) {
	name := r.args.String("name")
	to := int(r.args.Uint("to"))
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	if err := s.notLocale("locale_push"); err != nil {
		return nil, err
	}
	arr, release, err := s.store.acquire(name)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx := context.Background()
	c, err := s.peer(ctx, to)
	if err != nil {
		return nil, err
	}
	info, err := client.UploadArray(ctx, c, arr)
	if err != nil {
		var te *transfer.Error
		if errors.As(err, &te) {
			return nil, transfer.Errorf(te.Code, "locale %d: %s", to, te.Message)
		}
		return nil, transfer.Errorf(transfer.LocaleFailed, "locale %d cannot send to locale %d: %v", s.cfg.LocaleRank, to, err)
	}
	return &response{result: map[string]any{"name": info.Name, "dtype": info.DType.String(), "size": info.Size}}, nil
}

// cmdRangePartition cuts the rows of arrays by key's value into
// len(cuts)+1 ranges (ops.RangePartition) and stores each range's rows of
// each array: "parts"[d][j] is range d of arrays[j]. A coordinator's
// exchange runs it on every locale (cmd_locales_exchange.go).
func (s *Server) cmdRangePartition(r *request) (*response, error) {
	a := r.args
	keyName := a.String("key")
	names := a.StringList("arrays")
	raw := a.ScalarList("cuts")
	if err := a.Done(); err != nil {
		return nil, err
	}
	cuts := make([]ops.Scalar, len(raw))
	for i, v := range raw {
		cuts[i], _ = ops.ScalarOf(v)
	}
	key, relKey, err := s.store.acquire(keyName)
	if err != nil {
		return nil, err
	}
	defer relKey()
	xs, release, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer release()
	o, env := s.opEnv(r.stop, "range_partition by '%s'", keyName)
	defer o.done()
	outs, err := ops.RangePartition(env, key, cuts, xs)
	if err != nil {
		return nil, opErr(err)
	}
	var flat []*pdarray.Array
	for _, row := range outs {
		flat = append(flat, row...)
	}
	res, err := keepMany(o, flat, nil, "")
	if err != nil {
		return nil, err
	}
	infos := res.result["arrays"].([]any)
	parts := make([]any, len(outs))
	for d := range outs {
		parts[d] = infos[d*len(xs) : (d+1)*len(xs)]
	}
	return &response{result: map[string]any{"parts": parts}}, nil
}

// cmdLocate on a server of one locale: every array is one block, here.
func (s *Server) cmdLocate(r *request) (*response, error) {
	r.args.OptString("name", "")
	r.args.OptUint("size", 0)
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"num_locales": 1}}, nil
}

func (s *Server) cmdAdopt(r *request) (*response, error) {
	return nil, transfer.Errorf(transfer.ArgumentValue, "adopt records blocks stored on several locales, and this server is one locale (start it with --locales to spread arrays)")
}

package server

// locales.go makes this process locale 0, the coordinator, of a set of L
// server processes (locales) that every array is spread over
// (docs/locales.md).
//
// Layout: an array of n elements is L contiguous blocks, block r holding
// rows [n*r/L, n*(r+1)/L) on locale r, so arrays of equal length are
// aligned block by block and elementwise work never moves a row. Locale 0
// keeps its block in its own store under the array's own name; locales
// 1..L-1 are ordinary arktos-server processes that hold theirs under names
// of their own, which only the coordinator knows (distArray.parts). The
// coordinator holds the names and the metadata; a client talks to it alone.
//
// A command the coordinator knows how to spread (distCommands) runs on
// every locale's block at once and the coordinator combines the replies;
// any other is refused with NOT_DISTRIBUTED, never answered from block 0
// alone. A locale that stops answering fails the commands that need it
// with LOCALE_FAILED naming it; membership is fixed at start, as in
// Arkouda, so it is not replaced.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// locales is the coordinator's view of its set (nil on a lone server).
type locales struct {
	s     *Server
	peers []*peer // peers[i] is locale i+1
	mu    sync.RWMutex
	dist  map[string]*distArray // by the name clients use (parts[0])
	// What exchanges did (stats): how many, the bytes moved between
	// locales, and the wall time of their move phases, for bench/locales.
	exchanges, exchangeBytes, exchangeNanos atomic.Uint64
	// combinedGroupBys: group-bys that exchanged partial results, not rows.
	combinedGroupBys atomic.Uint64
	// chainedGroupBys: group-bys whose locales took turns (float sums by
	// few keys).
	chainedGroupBys atomic.Uint64
}

// peer is one of the other locales, reached as any client reaches a
// server: requests over ZeroMQ, array bytes over its bulk streams.
type peer struct {
	rank    int
	url     string // without its token, for messages
	fullURL string // with it: what locate gives a client
	c       *client.Client
	// lost is why the locale is gone, once it is (it is not replaced).
	lost atomic.Pointer[string]
	// raw is what its get_config said at start.
	raw map[string]any
	// ctx is every request to the locale's: cancelled when it is lost, so
	// a request waiting on a dead process fails instead of waiting for a
	// reconnect that never comes.
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// markLost records why the locale is gone and fails its requests.
func (p *peer) markLost(why string) {
	if p.lost.CompareAndSwap(nil, &why) {
		p.cancel(errors.New(why))
	}
}

// watchEvery: how often the coordinator checks that each locale's address
// still takes connections. A killed process's port refuses at once (a
// request sent before the kill was noticed waits for a reconnect, which
// the heartbeat does not cover: there is no connection to beat on).
const watchEvery = 250 * time.Millisecond

// watch marks p lost when its address refuses connections twice running.
func (l *locales) watch(p *peer, hostport string) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	fails := 0
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		c, err := net.DialTimeout("tcp", hostport, time.Second)
		if err != nil {
			if fails++; fails >= 2 {
				p.markLost("its address " + hostport + " refuses connections (" + err.Error() + ")")
				l.s.log.Error("locale lost", "locale", p.rank, "addr", hostport, "err", err)
				return
			}
			continue
		}
		c.Close()
		fails = 0
	}
}

// distArray is an array spread over the locales.
type distArray struct {
	dtype pdarray.DType
	n     int
	parts []string // parts[r]: block r's name on locale r
	// bounds: block r is rows [bounds[r], bounds[r+1]). Uploads and
	// creation make them l.bounds(n); an exchange's results (a sort, a
	// group-by) have blocks of the sizes they came out at. Arrays with
	// equal bounds are aligned.
	bounds []int
}

func (d *distArray) result(name string) map[string]any {
	return map[string]any{"name": name, "dtype": d.dtype.String(), "size": d.n, "nbytes": d.n * d.dtype.Size()}
}

// peerHeartbeat: a locale whose libzmq leaves pings unanswered this long
// counts as lost (a killed process is seen at once: its socket closes).
const peerHeartbeat = 5 * time.Second

// newLocales connects to locales 1..L-1 at urls, waiting up to a minute
// for each to start listening.
func newLocales(s *Server, urls []string) (*locales, error) {
	l := &locales{s: s, dist: map[string]*distArray{}}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(s.cfg.PeerWait, time.Minute))
	defer cancel()
	for i, u := range urls {
		p := &peer{rank: i + 1, url: strings.SplitN(u, "?", 2)[0], fullURL: u}
		for {
			c, err := client.Dial(ctx, u, s.peerOptions()...)
			if err == nil {
				p.c = c
				break
			}
			if ctx.Err() != nil {
				l.close()
				return nil, fmt.Errorf("server: locale %d at %s did not start: %w", p.rank, p.url, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		res, err := p.c.Op(ctx, "get_config", map[string]any{})
		if err != nil {
			p.c.Close() // (not in l.peers yet)
			l.close()
			return nil, fmt.Errorf("server: locale %d at %s: get_config: %w", p.rank, p.url, err)
		}
		p.raw = res
		// A set a resource manager started wires ranks from its own
		// environment: a locale answering with another rank means two
		// tasks disagree on the layout.
		if got := asI64(res["locale_rank"]); got != int64(p.rank) {
			p.c.Close()
			l.close()
			return nil, fmt.Errorf("server: the locale at %s says it is rank %d, where rank %d was expected: every locale must be started the same way (one srun step with the default block distribution, or one StatefulSet)", p.url, got, p.rank)
		}
		p.ctx, p.cancel = context.WithCancelCause(context.Background())
		l.peers = append(l.peers, p)
		if hp, ok := strings.CutPrefix(p.url, "tcp://"); ok {
			go l.watch(p, hp)
		}
	}
	// Each locale learns the others, to send exchanged rows straight there.
	peerURLs := append([]string{""}, urls...)
	for _, p := range l.peers {
		if _, err := p.c.Op(ctx, "locale_peers", map[string]any{"urls": peerURLs}); err != nil {
			l.close()
			return nil, fmt.Errorf("server: locale %d at %s: locale_peers: %w", p.rank, p.url, err)
		}
	}
	return l, nil
}

// peerOptions are the options of a link to another locale of the set. An
// encrypting locale's peers share its server key (one --server-key-file
// for the set), so the links use this process's own public key.
func (s *Server) peerOptions() []client.Option {
	opts := []client.Option{client.WithHeartbeat(peerHeartbeat)}
	if s.serverKey != "" {
		opts = append(opts, client.WithServerKey(s.serverKey))
	}
	return opts
}

// close ends the links to the locales (their watchers too); the
// locales' processes are their launcher's to stop.
func (l *locales) close() {
	for _, p := range l.peers {
		if p.cancel != nil {
			p.cancel(errors.New("the coordinator stopped"))
		}
		if p.c != nil {
			p.c.Close()
		}
	}
}

// count is L, the number of locales.
func (l *locales) count() int { return len(l.peers) + 1 }

// bounds are the block boundaries of an array of n elements: block r is
// [b[r], b[r+1]).
func (l *locales) bounds(n int) []int {
	L := l.count()
	b := make([]int, L+1)
	for r := range b {
		b[r] = int(int64(n) * int64(r) / int64(L))
	}
	return b
}

// sized is the bounds of blocks of these sizes, in rank order.
func sized(sizes []int) []int {
	b := make([]int, len(sizes)+1)
	for r, n := range sizes {
		b[r+1] = b[r] + n
	}
	return b
}

func (l *locales) get(name string) (*distArray, error) {
	l.mu.RLock()
	d, ok := l.dist[name]
	l.mu.RUnlock()
	if !ok {
		return nil, transfer.Errorf(transfer.UnknownArray, "no array named '%s'", name)
	}
	return d, nil
}

func (l *locales) put(name string, d *distArray) {
	l.mu.Lock()
	l.dist[name] = d
	l.mu.Unlock()
}

// call runs cmd with args on locale r: in this process for r = 0 (the
// command's handler itself, not the distribution below), on its peer
// otherwise. A peer's error keeps its code and names the locale.
func (l *locales) call(r int, cmd string, args map[string]any) (map[string]any, error) {
	if r == 0 {
		c, ok := commands[cmd]
		if !ok {
			return nil, transfer.Errorf(transfer.Internal, "locales: no command %q", cmd)
		}
		// The arguments go through the wire codec, as a peer's do: the
		// handlers read msgpack's types, not Go's.
		hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, Cmd: cmd, Args: args})
		if err != nil {
			return nil, transfer.Errorf(transfer.Internal, "locales: encode %s: %v", cmd, err)
		}
		req, err := transfer.DecodeRequest(hdr)
		if err != nil {
			return nil, transfer.Errorf(transfer.Internal, "locales: decode %s: %v", cmd, err)
		}
		resp, err := c.run(l.s, &request{Request: req, args: transfer.NewArgs(cmd, req.Args)})
		if err != nil {
			return nil, err
		}
		if resp.after != nil {
			resp.after()
		}
		return resp.result, nil
	}
	p := l.peers[r-1]
	if why := p.lost.Load(); why != nil {
		return nil, p.failed(*why)
	}
	res, err := p.c.Op(p.ctx, cmd, args)
	return res, p.wrap(err)
}

// wrap names the locale in err; a lost connection marks it lost for good.
func (p *peer) wrap(err error) error {
	if err == nil {
		return nil
	}
	var te *transfer.Error
	if errors.As(err, &te) {
		if te.Code == transfer.ShuttingDown {
			p.markLost("it is shutting down")
			return p.failed("it is shutting down")
		}
		return transfer.Errorf(te.Code, "locale %d: %s", p.rank, te.Message)
	}
	if why := p.lost.Load(); why != nil {
		return p.failed(*why)
	}
	why := err.Error()
	if errors.Is(err, client.ErrConnectionLost) {
		p.markLost(why)
	}
	return p.failed(why)
}

func (p *peer) failed(why string) error {
	return transfer.Errorf(transfer.LocaleFailed, "locale %d (%s) failed: %s; the other locales keep their arrays, but arrays with a block there cannot be used: save what you need and restart the set of locales", p.rank, p.url, why)
}

// each runs f for every locale at once and returns the error of the
// lowest-ranked locale that failed (a locale's own error before the
// LOCALE_FAILED of another, so the message is about the input when it can
// be).
func (l *locales) each(f func(r int) error) error {
	errs := make([]error, l.count())
	var wg sync.WaitGroup
	for r := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r)
		}()
	}
	wg.Wait()
	var failed error
	for _, err := range errs {
		var te *transfer.Error
		if err == nil {
			continue
		}
		if errors.As(err, &te) && te.Code == transfer.LocaleFailed {
			failed = cmp.Or(failed, err)
			continue
		}
		return err
	}
	return failed
}

// dropParts deletes blocks on their locales (parts[r] on locale r, ""
// for none): what a failed command made, or a deleted array's.
func (l *locales) dropParts(parts []string) {
	for r, name := range parts {
		if name != "" {
			l.dropOn(r, name)
		}
	}
}

// dropOn deletes arrays of locale r. A peer's delete runs in the
// background (a delete is answered at once, as on one server); a lost
// locale's are skipped.
func (l *locales) dropOn(r int, names ...string) {
	if len(names) == 0 {
		return
	}
	if r == 0 {
		_, _, _ = l.s.store.delete(names, true)
		return
	}
	p := l.peers[r-1]
	if p.lost.Load() != nil {
		return
	}
	go func() {
		if err := p.c.Delete(p.ctx, names...); err != nil && p.lost.Load() == nil {
			l.s.log.Warn("locales: delete blocks", "locale", p.rank, "names", names, "err", err)
		}
	}()
}

// distCommands are the commands the coordinator spreads over the locales;
// the rest are refused (notDistributed) unless they are about this
// process or connection only (distLocal).
var distCommands map[string]func(*locales, *request) (*response, error)

func init() {
	distCommands = map[string]func(*locales, *request) (*response, error){
		"get_config": (*locales).getConfig,
		"info":       (*locales).info,
		"list":       (*locales).list,
		"delete":     (*locales).delete,
		"rename":     (*locales).rename,
		"mem_used":   (*locales).memUsed,
		"stats":      (*locales).stats,
		"cancel":     localOnly,
		"shutdown":   (*locales).shutdown,
		"upload":     (*locales).upload,
		"locate":     (*locales).locate,
		"adopt":      (*locales).adopt,
		"download":   (*locales).download,
		"binop":      elementwise("a", "b", "out"),
		"unop":       elementwise("a", "out"),
		"astype":     elementwise("a"),
		"where":      elementwise("cond", "a", "b"),
		"clip":       elementwise("a", "lo", "hi"),
		"reduce":     (*locales).reduce,
		"sort":       (*locales).sortValues,
		"argsort":    (*locales).argsort,
		"groupby":    (*locales).groupBy,
		"take":       (*locales).take,
		"compress":   (*locales).compress,
		"full":       (*locales).full,
		"arange":     (*locales).arange,
	}
}

// stats are the coordinator's own counters and its exchanges'.
func (l *locales) stats(r *request) (*response, error) {
	resp, err := l.s.cmdStats(r)
	if err != nil {
		return nil, err
	}
	resp.result["exchanges"] = l.exchanges.Load()
	resp.result["exchange_bytes"] = l.exchangeBytes.Load()
	resp.result["exchange_ns"] = l.exchangeNanos.Load()
	resp.result["groupby_combined"] = l.combinedGroupBys.Load()
	resp.result["groupby_chained"] = l.chainedGroupBys.Load()
	return resp, nil
}

// shutdown stops every locale, then this one: a set that a resource
// manager started (srun, a StatefulSet) ends when its coordinator is told
// to stop. A locale that does not answer within 5 s is left to its
// manager (or, on one machine, to the SIGTERM this process's launcher
// sends after it).
func (l *locales) shutdown(r *request) (*response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range l.peers {
		if p.lost.Load() != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.c.Op(ctx, "shutdown", map[string]any{}); err != nil {
				l.s.log.Warn("a locale did not take the shutdown", "locale", p.rank, "addr", p.url, "err", err)
			}
			p.markLost("it was shut down")
		}()
	}
	wg.Wait()
	return commands[r.Cmd].run(l.s, r)
}

// localOnly runs a command on this process alone: its counters, a cancel
// of one of its requests, its shutdown (which stops the locales it
// started).
func localOnly(l *locales, r *request) (*response, error) {
	return commands[r.Cmd].run(l.s, r)
}

func notDistributed(cmd string) error {
	names := slices.Sorted(maps.Keys(distCommands))
	return transfer.Errorf(transfer.NotDistributed, "'%s' does not run yet on a server with several locales; on --locales the commands that do are: %s (docs/locales.md); start one locale for the rest", cmd, strings.Join(names, ", "))
}

// distributedRun is how dispatch runs cmd on a coordinator: nil where the
// command is this process's own (distLocal) and runs as on a lone server.
func (l *locales) distributedRun(name string, cmd command) func(*locales, *request) (*response, error) {
	if run, ok := distCommands[name]; ok {
		return run
	}
	if cmd.dist == distLocal {
		return nil
	}
	return func(*locales, *request) (*response, error) { return nil, notDistributed(name) }
}

func (l *locales) getConfig(r *request) (*response, error) {
	resp, err := l.s.cmdGetConfig(r)
	if err != nil {
		return nil, err
	}
	cfg := resp.result
	mem := l.s.cfg.MaxMemory
	workers := l.s.cfg.Workers
	locs := []any{map[string]any{"rank": 0, "endpoint": l.s.endpoint, "max_memory": l.s.cfg.MaxMemory, "workers": l.s.cfg.Workers, "pid": cfg["pid"], "state": "up"}}
	arkLocs, _ := cfg["LocaleConfigs"].([]any)
	for _, p := range l.peers {
		state := "up"
		if why := p.lost.Load(); why != nil {
			state = "lost: " + *why
		}
		pm, pw := asI64(p.raw["max_memory"]), asI64(p.raw["workers"])
		mem += pm
		workers += int(pw)
		locs = append(locs, map[string]any{"rank": p.rank, "endpoint": p.url, "max_memory": pm, "workers": pw, "pid": p.raw["pid"], "state": state})
		if pl, ok := p.raw["LocaleConfigs"].([]any); ok && len(pl) == 1 {
			if m, ok := pl[0].(map[string]any); ok {
				m = maps.Clone(m)
				m["id"] = p.rank
				arkLocs = append(arkLocs, m)
			}
		}
	}
	cfg["num_locales"] = l.count()
	cfg["locales"] = locs
	cfg["max_memory"] = mem
	cfg["workers"] = workers
	cfg["numLocales"] = l.count()
	cfg["maxTaskPar"] = l.s.cfg.Workers
	cfg["LocaleConfigs"] = arkLocs
	return resp, nil
}

func (l *locales) info(r *request) (*response, error) {
	name := r.args.String("name")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	d, err := l.get(name)
	if err != nil {
		return nil, err
	}
	return &response{result: d.result(name)}, nil
}

func (l *locales) list(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	l.mu.RLock()
	names := slices.Sorted(maps.Keys(l.dist))
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = l.dist[n].result(n)
	}
	l.mu.RUnlock()
	return &response{result: map[string]any{"arrays": out}}, nil
}

func (l *locales) delete(r *request) (*response, error) {
	names := r.args.StringList("names")
	missingOK := r.args.OptBool("missing_ok", false)
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	if !missingOK {
		for _, n := range names {
			if _, ok := l.dist[n]; !ok {
				l.mu.Unlock()
				return nil, transfer.Errorf(transfer.UnknownArray, "no array named '%s'; nothing was deleted", n)
			}
		}
	}
	var gone []*distArray
	for _, n := range names {
		if d, ok := l.dist[n]; ok {
			gone = append(gone, d)
			delete(l.dist, n)
		}
	}
	l.mu.Unlock()
	freed := 0
	for _, d := range gone {
		freed += d.n * d.dtype.Size()
		l.dropParts(d.parts)
	}
	return &response{result: map[string]any{"deleted": len(gone), "freed": freed}}, nil
}

func (l *locales) rename(r *request) (*response, error) {
	name := r.args.String("name")
	newName := r.args.String("new_name")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.dist[name]
	if !ok {
		return nil, transfer.Errorf(transfer.UnknownArray, "no array named '%s'", name)
	}
	if _, err := l.s.store.rename(name, newName); err != nil {
		return nil, err
	}
	delete(l.dist, name)
	nd := *d
	nd.parts = slices.Clone(d.parts)
	nd.parts[0] = newName
	l.dist[newName] = &nd
	return &response{result: nd.result(newName)}, nil
}

func (l *locales) memUsed(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	used, limit, pooled, _ := l.s.store.usage()
	var mu sync.Mutex
	uses := make([][2]int64, l.count())
	uses[0] = [2]int64{used, limit}
	err := l.each(func(r int) error {
		if r == 0 {
			return nil
		}
		res, err := l.call(r, "mem_used", map[string]any{})
		if err != nil {
			return err
		}
		mu.Lock()
		uses[r] = [2]int64{asI64(res["used"]), asI64(res["limit"])}
		pooled += asI64(res["pooled"])
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	var perLocale []any
	var tu, tl int64
	for r, u := range uses {
		tu += u[0]
		tl += u[1]
		perLocale = append(perLocale, map[string]any{"rank": r, "used": u[0], "limit": u[1]})
	}
	l.mu.RLock()
	n := len(l.dist)
	l.mu.RUnlock()
	return &response{result: map[string]any{"used": tu, "limit": tl, "free": tl - tu, "arrays": n, "pooled": pooled, "locales": perLocale}}, nil
}

// asI64 reads a msgpack number (any width; a uint64 past MaxInt64 wraps)
// or a Go int.
func asI64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	}
	i, _ := transfer.AsInt(v)
	return i
}

// asF64 reads a msgpack number as a float64.
func asF64(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return float64(asI64(v))
}

// asU64 reads a msgpack number as a uint64 (two's complement for negatives).
func asU64(v any) uint64 {
	if x, ok := v.(uint64); ok {
		return x
	}
	return uint64(asI64(v))
}

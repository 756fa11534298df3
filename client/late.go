package client

import (
	"context"
	"errors"
	"time"

	"github.com/arktos-dev/arktos/transfer"
)

// Requests given up on (their context ended after they were sent): their
// replies still come, later, on the ZeroMQ socket. An array such a reply
// says was made would be left on the server for good, so its name joins
// pendingDeletes, deleted before the next request. Until every such reply
// is read, requests stay on the ZeroMQ socket (not the lane), so that the
// late replies are read soon. As the Python client does (_late_reply).

// creating lists the commands whose result names new arrays.
var creating = map[string]bool{
	"upload": true, "full": true, "arange": true, "linspace": true, "random": true, "concatenate": true,
	"binop": true, "unop": true, "astype": true, "where": true, "scan": true, "slice": true, "take": true,
	"compress": true, "getitem": true, "sort": true, "argsort": true, "coargsort": true, "unique": true,
	"in1d": true, "setop": true, "histogram": true, "reduce": true, "groupby": true, "groupby_agg": true,
	"groupby_segments": true, "groupby_broadcast": true, "groupby_topk": true, "groupby_corr": true,
	"read_parquet": true, "read_arrow": true, "load_all": true,
}

type abandonedReq struct {
	cmd    string
	inOut  bool // an operation into an existing array ("out"): nothing to free
	at     time.Time
	onLane bool // its reply is read by drainLane, not on ZeroMQ
	lost   bool // failed with ErrConnectionLost: its reply is not expected (abandonLost)
}

// owesLate says whether a late reply is due on the ZeroMQ socket from a
// request given up on in the last 30 s (older ones are not waited for).
func (c *Client) owesLate() bool {
	for _, a := range c.abandoned {
		if !a.onLane && !a.lost && time.Since(a.at) < 30*time.Second {
			return true
		}
	}
	return false
}

// abandon records request id, sent but not answered. c.mu must be held.
func (c *Client) abandon(id uint64, cmd string, args map[string]any) {
	if c.abandoned == nil {
		c.abandoned = map[uint64]abandonedReq{}
	}
	if len(c.abandoned) >= 1000 { // a server that never answers
		for k := range c.abandoned {
			delete(c.abandoned, k)
			break
		}
	}
	_, out := args["out"]
	c.abandoned[id] = abandonedReq{cmd: cmd, inOut: out, at: time.Now()}
}

// abandonLost records request id, failed with ErrConnectionLost: should
// its reply come after all, what it made is deleted, but requests do not
// wait for it on ZeroMQ (it seldom comes). c.mu must be held.
func (c *Client) abandonLost(id uint64, cmd string, args map[string]any) {
	c.abandon(id, cmd, args)
	a := c.abandoned[id]
	a.lost = true
	c.abandoned[id] = a
}

// lateReply handles the reply to an abandoned request. c.mu must be held.
func (c *Client) lateReply(rep *transfer.Reply) {
	a, ok := c.abandoned[rep.ID]
	if !ok {
		return
	}
	delete(c.abandoned, rep.ID)
	if rep.Err() != nil || !creating[a.cmd] || a.inOut {
		return
	}
	c.pendingDeletes = append(c.pendingDeletes, arrayNames(rep.Result)...)
}

// arrayNames lists the arrays a creating command's result describes.
func arrayNames(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		if name, ok := x["name"].(string); ok {
			if _, d := x["dtype"]; d {
				if _, n := x["nbytes"]; n {
					return []string{name}
				}
			}
		}
		var out []string
		for _, e := range x {
			out = append(out, arrayNames(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, arrayNames(e)...)
		}
		return out
	}
	return nil
}

// flushDeletes deletes the arrays late replies named (best effort, 2 s at
// most: a failure leaves them for the next request). c.mu must be held.
func (c *Client) flushDeletes() {
	if len(c.pendingDeletes) == 0 {
		return
	}
	names := c.pendingDeletes
	c.pendingDeletes = nil
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rep, m, err := c.callLocked(ctx, "delete", map[string]any{"names": list, "missing_ok": true}, nil, nil)
	if err == nil {
		m.Close()
		err = rep.Err()
	}
	if err != nil && (!errors.As(err, new(*transfer.Error)) || refusedRestoring(err)) {
		// Not sent, or refused by a restarted server restoring its
		// checkpoint (which holds these arrays too): next time.
		c.pendingDeletes = append(c.pendingDeletes, names...)
	}
}

package client

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// Requests given up on (their context ended after they were sent): their
// replies still come, later, on the ZeroMQ socket. An array such a reply
// says was made would be left on the server for good, so its name joins
// pendingDeletes, deleted before the next request. A request on ZeroMQ
// reads them while it waits; one on the lane first reads those already
// come (readLate). As the Python client does (_late_reply, _read_late).

// creates says whether cmd stores new arrays, as the server's command
// table says (or its older "creating" list). c.mu must be held.
func (c *Client) creates(cmd string) bool {
	if row, ok := c.config.Commands[cmd]; ok {
		return row.Creates
	}
	return slices.Contains(c.config.Creating, cmd)
}

type abandonedReq struct {
	cmd    string
	inOut  bool // an operation into an existing array ("out"): nothing to free
	onLane bool // its reply is read by drainLane, not on ZeroMQ
	lost   bool // failed with ErrConnectionLost (or its connection dropped since): its reply is not expected
}

// owesLate says whether a late reply is due on the ZeroMQ socket.
func (c *Client) owesLate() bool {
	for _, a := range c.abandoned {
		if !a.onLane && !a.lost {
			return true
		}
	}
	return false
}

// readLate reads, without waiting, the late replies already come on the
// ZeroMQ socket, before a request on the lane (which would not read them:
// what they made would stay on the server until the next request on
// ZeroMQ). Once the connection has dropped the rest will not come. c.mu
// must be held, so no request waits on ZeroMQ: every message there is a
// late reply.
func (c *Client) readLate() {
	if c.sock == nil {
		return
	}
	for {
		if st, err := c.sock.GetEvents(); err != nil || st&zmq.POLLIN == 0 {
			break
		}
		m, err := zframe.Recv(c.sock, true)
		if err != nil {
			break
		}
		if m.Len() > 0 {
			if rep, err := transfer.DecodeReply(m.Frame(0)); err == nil {
				c.lateReply(rep)
			}
		}
		m.Close()
	}
	c.dropped() // (a drop forgets the rest: forgetOwed)
}

// forgetOwed marks the requests abandoned on ZeroMQ lost once the
// connection has dropped: their replies went with it, and requests stop
// looking for them (owesLate). Should one come after all (a drop reported
// late), it is still handled. c.mu must be held.
func (c *Client) forgetOwed() {
	for id, a := range c.abandoned {
		if !a.onLane && !a.lost {
			a.lost = true
			c.abandoned[id] = a
		}
	}
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
	c.abandoned[id] = abandonedReq{cmd: cmd, inOut: out}
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
	if rep.Err() != nil || !c.creates(a.cmd) || a.inOut {
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

// sendCancel asks the server to stop request id, abandoned because its
// ctx ended, without waiting (docs/protocol.md, "Cancel"): the server
// stops the work at its next block boundary, storing nothing, and the
// cancel's reply and the request's own (CANCELED, or its result when it
// was already storing it, freed as an abandoned request's) are read as late
// replies. A server without the cancel command lets the work run. c.mu
// must be held.
func (c *Client) sendCancel(id uint64) {
	if _, ok := c.config.Commands["cancel"]; !ok || c.sock == nil {
		return
	}
	c.nextID++
	cid := c.nextID
	hdr, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: cid, Token: c.token, Cmd: "cancel", Args: map[string]any{"id": id}})
	if err != nil {
		return
	}
	if c.sendParts(hdr, nil) != nil {
		return // the connection is going, and the request's reply with it
	}
	c.abandon(cid, "cancel", nil)
	cancelsSent.Add(1)
}

var cancelsSent atomic.Uint64

// CancelsSent returns how many cancels this process sent for requests
// whose ctx ended before their reply came (tests check that a cancelled
// ctx stops the server's work).
func CancelsSent() uint64 { return cancelsSent.Load() }

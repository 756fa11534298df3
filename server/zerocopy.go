package server

import (
	"sync"
	"time"

	"github.com/arktos-dev/arktos/transfer/zframe"
)

// sentInPlace holds the replies whose frames libzmq still reads in place: a
// download's frames are the stored array's own bytes, so what the request
// holds (its acquire of the array, a compressed reply's reservation, the
// grace period that keeps shared-memory segments mapped) is let go only once
// libzmq has destroyed every message (zframe.Refs.Done): once the bytes are
// written to the client's socket, or dropped with a closed socket.
type sentInPlace struct {
	mu      sync.Mutex
	pending []inPlace
	wake    chan struct{} // one pending signal: the sweeper has work
}

type inPlace struct {
	refs   *zframe.Refs
	finish func() // the request's after, then its grace exit
}

func newSentInPlace() *sentInPlace {
	return &sentInPlace{wake: make(chan struct{}, 1)}
}

// add hands r's release to the sweeper; finish runs once libzmq lets go.
func (p *sentInPlace) add(r *zframe.Refs, finish func()) {
	p.mu.Lock()
	p.pending = append(p.pending, inPlace{r, finish})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// sweep runs the finish of every reply libzmq has let go of and reports
// how many are still out.
func (p *sentInPlace) sweep() int {
	p.mu.Lock()
	var done []func()
	kept := p.pending[:0]
	for _, x := range p.pending {
		if x.refs.Done() {
			done = append(done, x.finish)
		} else {
			kept = append(kept, x)
		}
	}
	clear(p.pending[len(kept):])
	p.pending = kept
	n := len(kept)
	p.mu.Unlock()
	for _, f := range done {
		f() // recovers its own panic (complete's finish)
	}
	return n
}

// run sweeps while replies are out, every millisecond (an array is let go
// at most that late; a slow client's download is not polled thousands of
// times a second), and sleeps on wake otherwise, until stop is closed.
func (p *sentInPlace) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-p.wake:
		}
		for p.sweep() > 0 {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// drain finishes what libzmq has let go of once every socket is closed
// (zmq_ctx_term destroyed their messages); a reply still out then (none
// should be) stays pinned for good (zframe.Refs.Leak) and its finish does
// not run.
func (p *sentInPlace) drain() {
	p.sweep()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.pending {
		x.refs.Leak()
	}
	p.pending = nil
}

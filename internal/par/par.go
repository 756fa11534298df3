// Package par runs fork-join goroutines whose panics reach the goroutine
// that waits for them. A panic in a goroutine of its own stops the whole
// process; carried to Wait, a bug in one worker of a server's kernel
// becomes that request's INTERNAL error (the server's handler recovers it)
// and the server, with every array it holds, goes on.
package par

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Group is a sync.WaitGroup for goroutines started with Go. The zero value
// is ready; OnPanic, if set before the first Go, runs (on the worker) when a
// worker panics, so a pipeline can tell its other goroutines to stop.
type Group struct {
	OnPanic func()
	wg      sync.WaitGroup
	mu      sync.Mutex
	first   *Panic
}

// Panic is the first worker panic of a Group, raised again by Wait.
type Panic struct {
	Value any
	Stack []byte // the worker's stack when it panicked
}

// Error says what the worker panicked with (not its stack: the message may
// reach a client; servers log Stack).
func (p *Panic) Error() string { return fmt.Sprintf("in a worker goroutine: %v", p.Value) }

// Go runs f on a new goroutine.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				g.mu.Lock()
				if g.first == nil {
					g.first = &Panic{Value: r, Stack: debug.Stack()}
				}
				g.mu.Unlock()
				if g.OnPanic != nil {
					g.OnPanic()
				}
			}
		}()
		f()
	}()
}

// Wait waits for every goroutine started with Go, then panics with the
// first one's *Panic if any panicked.
func (g *Group) Wait() {
	g.wg.Wait()
	if g.first != nil {
		panic(g.first)
	}
}

// Catch, deferred, turns a panic of its function into a *Panic in *errp:
// for a worker that must answer (a pipeline's stage whose consumer waits
// for its result) rather than return to a Wait.
func Catch(errp *error) {
	if r := recover(); r != nil {
		*errp = &Panic{Value: r, Stack: debug.Stack()}
	}
}

// Recover, deferred first thing in a goroutine that is not waited for (a
// connection's, a sweeper's, a server's worker), hands a panic of that
// goroutine to report as a *Panic instead of letting it stop the process:
// the bug then ends only that goroutine's work (report logs it, and closes
// what the goroutine owned).
func Recover(report func(*Panic)) {
	if r := recover(); r != nil {
		report(&Panic{Value: r, Stack: debug.Stack()})
	}
}

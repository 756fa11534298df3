// Package par runs fork-join goroutines whose panics reach the goroutine
// that waits for them. A panic in a goroutine of its own stops the whole
// process; carried to Wait, a bug in one worker of a server's kernel
// becomes that request's INTERNAL error (the server's handler recovers it)
// and the server, with every array it holds, goes on.
package par

import (
	"fmt"
	"runtime"
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

// SpareP raises GOMAXPROCS by one until the returned function is called
// (concurrent callers share one raise; the last to finish lowers it), for
// as many workers as Ps that spend their time in cgo calls (libzstd). A
// cgo call is a syscall to Go's scheduler: with every P in one and none
// idle, sysmon takes the P of any call longer than its 20 µs tick and
// hands it to a thread that spins, finds nothing to run and sleeps again,
// thousands of times a second, on the cores the workers need
// (golang/go#58492). With one P idle it leaves a syscall's P alone for
// 10 ms. Measured on a 2-core VM, a two-worker read of a 5·10^7-row zstd
// Parquet file: 0.79-0.93 s and about 6,000 context switches a read
// without, 0.70-0.73 s and half the switches with (bench/io/results.md).
//
// Lowering it calls runtime.GOMAXPROCS, which ends Go's automatic updates
// of GOMAXPROCS (from a container's CPU limit) for the process: a server
// whose worker count is fixed at start loses nothing by it. Procs reports
// the value without the spare.
func SpareP() (done func()) {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.n == 0 {
		spare.base = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(spare.base + 1)
	}
	spare.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			spare.mu.Lock()
			defer spare.mu.Unlock()
			if spare.n--; spare.n == 0 {
				runtime.GOMAXPROCS(spare.base)
			}
		})
	}
}

var spare struct {
	mu   sync.Mutex
	n    int // SpareP callers not done
	base int // GOMAXPROCS before the raise
}

// Procs is GOMAXPROCS without the spare P that SpareP may have added: the
// cores a caller sizing its workers should count.
func Procs() int {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.n > 0 {
		return spare.base
	}
	return runtime.GOMAXPROCS(0)
}

// Package par runs fork-join goroutines whose panics reach the goroutine
// that waits for them. A panic in a goroutine of its own stops the whole
// process; carried to Wait, a bug in one worker of a server's kernel
// becomes that request's INTERNAL error (the server's handler recovers it)
// and the server, with every array it holds, goes on.
package par

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
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

// Stop is one request's cancellation, set by whoever cancels it (a client's
// cancel, a deadline) and read by its work at block boundaries, where
// Check unwinds the work with a *Canceled panic (the server answers it as
// CANCELED; what the request had allocated is released by its handler's
// deferred clean-up). Disarm marks the point after which the work must
// finish: once a request begins to store its results, a cancel arriving
// later does nothing, so a request is either cancelled with nothing stored
// or completes. A nil *Stop never stops: kernels called without one (tests,
// in-place writes) run to the end.
type Stop struct {
	state atomic.Int32 // stopArmed, stopCanceled or stopDisarmed
	why   atomic.Pointer[string]
}

const (
	stopArmed int32 = iota
	stopCanceled
	stopDisarmed
)

// Canceled is what Check panics with, and the error a cancelled request
// ends with: Why says who cancelled it.
type Canceled struct{ Why string }

func (c *Canceled) Error() string { return "canceled: " + c.Why }

// Cancel stops the work at its next check, saying why; it reports whether
// it did (false: already cancelled, disarmed, or s is nil).
func (s *Stop) Cancel(why string) bool {
	if s == nil {
		return false
	}
	s.why.Store(&why)
	return s.state.CompareAndSwap(stopArmed, stopCanceled)
}

// Disarm makes later Cancels do nothing; it reports false when the work
// was cancelled first (it must then stop, storing nothing).
func (s *Stop) Disarm() bool {
	if s == nil {
		return true
	}
	return s.state.CompareAndSwap(stopArmed, stopDisarmed) || s.state.Load() == stopDisarmed
}

// Stopped says whether the work was cancelled (one atomic load).
func (s *Stop) Stopped() bool { return s != nil && s.state.Load() == stopCanceled }

// Err is the *Canceled of a cancelled Stop, else nil.
func (s *Stop) Err() error {
	if !s.Stopped() {
		return nil
	}
	why := "canceled"
	if p := s.why.Load(); p != nil {
		why = *p
	}
	return &Canceled{Why: why}
}

// Check unwinds the work with a *Canceled panic when it was cancelled.
func (s *Stop) Check() {
	if s.Stopped() {
		panic(s.Err())
	}
}

// AsCanceled finds the *Canceled in a recovered panic value or an error
// (a worker's, carried as a *Panic).
func AsCanceled(v any) (*Canceled, bool) {
	for {
		switch x := v.(type) {
		case *Canceled:
			return x, true
		case *Panic:
			v = x.Value
		default:
			if err, ok := v.(error); ok {
				var c *Canceled
				if errors.As(err, &c) {
					return c, true
				}
			}
			return nil, false
		}
	}
}

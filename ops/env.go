package ops

import (
	"fmt"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// Env is what a kernel needs from its caller: a worker count and a memory
// accountant. Alloc returns an array whose bytes are already accounted for;
// they may hold old data (a recycled buffer), so kernels write every byte of
// what they allocate before reading it. Free hands back the accounting of a
// scratch array the kernel no longer uses (the array must not be touched
// afterwards).
//
// Stop, when set, is the request's cancellation: kernels check it before
// each parallel pass (Env.parallel) and in the chunks of their longest
// loops, and unwind with its *par.Canceled panic. It is checked only before
// a pass writes anything, so a kernel writing into a caller's array never
// stops halfway through a pass (the server gives no Stop to requests that
// write stored arrays in place anyway).
type Env struct {
	Workers int
	Alloc   func(d pdarray.DType, n int) (*pdarray.Array, error)
	Free    func(a *pdarray.Array)
	Stop    *par.Stop
}

// PlainEnv is an Env without a memory limit, for tests and benchmarks.
func PlainEnv(workers int) Env {
	return Env{
		Workers: max(workers, 1),
		Alloc:   pdarray.Alloc,
		Free:    func(*pdarray.Array) {},
	}
}

func (e Env) workers() int { return max(e.Workers, 1) }

func (e Env) free(as ...*pdarray.Array) {
	for _, a := range as {
		if a != nil && e.Free != nil {
			e.Free(a)
		}
	}
}

// ErrKind classifies an *Error; the server maps it to a wire error code.
type ErrKind uint8

const (
	ErrType     ErrKind = iota + 1 // the dtypes do not support the operation (numpy's TypeError)
	ErrValue                       // an argument's value is invalid (numpy's ValueError)
	ErrIndex                       // an index is out of range (numpy's IndexError)
	ErrOverflow                    // a Python integer does not fit the dtype (numpy's OverflowError)
)

// Error is a user-facing kernel failure.
type Error struct {
	Kind ErrKind
	Msg  string
}

func (e *Error) Error() string { return "ops: " + e.Msg }

func errorf(k ErrKind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// minPar is the smallest element count worth splitting across goroutines.
const minPar = 1 << 15

// chunk is the element count kernels process per step (buffers for casts
// and broadcast scalars hold one chunk).
const chunk = 4096

// parallel runs f over contiguous blocks [lo, hi) covering [0, n), one per
// worker (fewer for small n); block boundaries are multiples of align.
// f(w, lo, hi) gets its worker index w.
func parallel(workers, n, align int, f func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	nw := numWorkers(workers, n)
	if nw == 1 {
		f(0, 0, n)
		return
	}
	bounds := splitBounds(n, nw, align)
	var g par.Group // a worker's panic reaches the caller (a request's INTERNAL error), not the process
	for w := 0; w < len(bounds)-1; w++ {
		lo, hi := bounds[w], bounds[w+1]
		if lo == hi {
			continue
		}
		g.Go(func() { f(w, lo, hi) })
	}
	g.Wait()
}

// parallel is parallel over e's workers, after a cancellation check.
func (e Env) parallel(n, align int, f func(w, lo, hi int)) {
	e.Stop.Check()
	parallel(e.workers(), n, align, f)
}

// check unwinds the kernel when its request was cancelled (see Env.Stop).
func (e Env) check() { e.Stop.Check() }

// cancelChunk is how many elements a long loop takes between cancellation
// checks: well under a millisecond of a pass's work, and one atomic load
// per 65,536 elements.
const cancelChunk = 1 << 16

// chunks runs f over [lo, hi) in consecutive pieces of cancelChunk, checking
// for cancellation before each (in order: a loop carrying state from one
// element to the next, such as a scatter's digit positions, gives the same
// result). Without a Stop it is f(lo, hi).
func (e Env) chunks(lo, hi int, f func(lo, hi int)) {
	if e.Stop == nil {
		f(lo, hi)
		return
	}
	for c := lo; c < hi; c += cancelChunk {
		e.Stop.Check()
		f(c, min(hi, c+cancelChunk))
	}
}

// splitBounds returns nw+1 boundaries splitting [0, n) into contiguous
// blocks aligned to align (the last block takes the remainder).
func splitBounds(n, nw, align int) []int {
	if align < 1 {
		align = 1
	}
	b := make([]int, nw+1)
	per := (n + nw - 1) / nw
	per = (per + align - 1) / align * align
	for w := 1; w <= nw; w++ {
		b[w] = min(n, b[w-1]+per)
	}
	b[nw] = n
	return b
}

// numWorkers returns how many blocks parallel will use for n elements.
func numWorkers(workers, n int) int {
	if n < minPar || workers <= 1 {
		return 1
	}
	return max(1, min(workers, n/(minPar/4)))
}

// alignedBuf returns a scratch byte buffer of n bytes aligned to 8.
func alignedBuf(n int) []byte { return pdarray.AlignedBytes(n) }

package ops

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arktos-dev/arktos/internal/par"
)

// TestParallelWorkerPanic: a panic in one of parallel's workers (a bug in
// a kernel) reaches the caller as a *par.Panic once every worker is done,
// where the server's handler turns it into the request's INTERNAL error;
// on a goroutine of its own it would stop the server.
func TestParallelWorkerPanic(t *testing.T) {
	var ran atomic.Int32
	defer func() {
		p, ok := recover().(*par.Panic)
		if !ok || !strings.Contains(p.Error(), "index out of range") {
			t.Fatalf("recovered %v, want a *par.Panic with the worker's index error", p)
		}
		if ran.Load() < 2 {
			t.Errorf("%d workers ran, want them all to finish first", ran.Load())
		}
	}()
	xs := make([]int, 4*minPar)
	parallel(4, len(xs), 1, func(w, lo, hi int) {
		ran.Add(1)
		if w == 1 {
			_ = xs[hi+len(xs)] // out of range
		}
	})
	t.Fatal("parallel returned")
}

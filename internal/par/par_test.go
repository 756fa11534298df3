package par

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPanicReachesWait: a worker's panic does not stop the process; Wait
// raises it (the first one, with the worker's stack) after every worker is
// done, and OnPanic runs.
func TestPanicReachesWait(t *testing.T) {
	var done, told atomic.Int32
	g := Group{OnPanic: func() { told.Add(1) }}
	for i := range 8 {
		g.Go(func() {
			if i == 3 {
				var m map[string]int
				//lint:ignore SA5000 the nil map write is the runtime panic under test
				m["x"] = 1 // a nil map write: a runtime panic
			}
			done.Add(1)
		})
	}
	defer func() {
		r := recover()
		p, ok := r.(*Panic)
		if !ok {
			t.Fatalf("Wait panicked with %#v, want *Panic", r)
		}
		var err error = p
		if !strings.Contains(err.Error(), "nil map") || !strings.Contains(string(p.Stack), "par_test.go") {
			t.Errorf("panic %q, stack %q", err, p.Stack)
		}
		if strings.Contains(err.Error(), "goroutine") && strings.Contains(err.Error(), ".go:") {
			t.Error("Error() carries the stack")
		}
		if done.Load() != 7 || told.Load() != 1 {
			t.Errorf("%d workers finished, OnPanic ran %d times; want 7 and 1", done.Load(), told.Load())
		}
		if !errors.As(err, &p) {
			t.Error("not an error")
		}
	}()
	g.Wait()
	t.Fatal("Wait returned")
}

func TestNoPanic(t *testing.T) {
	var g Group
	var n atomic.Int32
	for range 4 {
		g.Go(func() { n.Add(1) })
	}
	g.Wait()
	if n.Load() != 4 {
		t.Fatal(n.Load())
	}
}

// TestRecover: a goroutine nobody waits for hands its panic to report (the
// value and that goroutine's stack) and the process goes on.
func TestRecover(t *testing.T) {
	got := make(chan *Panic, 1)
	go func() {
		defer Recover(func(p *Panic) { got <- p })
		var s []int
		_ = s[3] // an index out of range: a runtime panic
	}()
	p := <-got
	if !strings.Contains(p.Error(), "index out of range") || !strings.Contains(string(p.Stack), "par_test.go") {
		t.Fatalf("panic %q, stack %q", p, p.Stack)
	}
	func() {
		defer Recover(func(*Panic) { t.Error("report ran without a panic") })
	}()
}

// TestSpareP: GOMAXPROCS is one more while any SpareP caller is not done,
// back to what it was after the last; Procs says the value without the
// spare all along; done twice is done once.
func TestSpareP(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	d1 := SpareP()
	d2 := SpareP()
	if got := runtime.GOMAXPROCS(0); got != base+1 || Procs() != base {
		t.Fatalf("GOMAXPROCS %d, Procs %d during; want %d and %d", got, Procs(), base+1, base)
	}
	d1()
	d1()
	if got := runtime.GOMAXPROCS(0); got != base+1 {
		t.Fatalf("GOMAXPROCS %d with one caller left, want %d", got, base+1)
	}
	d2()
	if got := runtime.GOMAXPROCS(0); got != base || Procs() != base {
		t.Fatalf("GOMAXPROCS %d, Procs %d after; want %d", got, Procs(), base)
	}
}

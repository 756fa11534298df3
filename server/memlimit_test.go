package server

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitMemory: the Go heap's soft limit is --max-memory plus slack, less
// the segments mapped, and follows them as they come and go.
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer func() {
		memLimit.Lock()
		memLimit.base = 0
		memLimit.Unlock()
		debug.SetMemoryLimit(math.MaxInt64)
	}()
	const max = 4 << 30
	LimitMemory(max)
	base := int64(max + max/8 + 256<<20)
	// Segments other tests left may be freed at any time (their grace
	// period ends): read the limit and the segments' bytes under the lock
	// that changes both.
	check := func(what string, minSegs int64) {
		t.Helper()
		memLimit.Lock()
		got, segs := goMemoryLimit(), memLimit.segs
		memLimit.Unlock()
		if got != base-segs || segs < minSegs {
			t.Fatalf("%s: limit %d with %d bytes of segments, want %d with at least %d", what, got, segs, base-segs, minSegs)
		}
	}
	check("at first", 0)
	g, err := newLeaseSegment(8<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	check("with an 8 MiB segment", 8<<20)
	g.free()
	check("after the segment", 0)
}

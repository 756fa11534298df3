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
	memLimit.Lock()
	segs := memLimit.segs // segments other tests left mapped, if any
	memLimit.Unlock()
	if got := goMemoryLimit(); got != base-segs {
		t.Fatalf("limit %d, want %d", got, base-segs)
	}
	g, err := newLeaseSegment(8<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := goMemoryLimit(); got != base-segs-8<<20 {
		t.Fatalf("with an 8 MiB segment: limit %d, want %d", got, base-segs-8<<20)
	}
	g.free()
	if got := goMemoryLimit(); got != base-segs {
		t.Fatalf("after the segment: limit %d, want %d", got, base-segs)
	}
}

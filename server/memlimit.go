package server

import (
	"os"
	"runtime/debug"
	"sync"
)

// The Go heap holds most arrays, and garbage too: buffers evicted from the
// pool, arrays deleted or replaced, the scratch of finished requests. By
// default the collector runs when the heap has doubled, so next to 10 GB of
// arrays up to 10 GB more of garbage could wait for it, outside what
// --max-memory counts: during G1 q10 at 10^8 rows the kernel's OOM killer
// stopped the server that way. A soft limit (runtime/debug.SetMemoryLimit)
// makes the collector run before the process passes --max-memory plus a
// slack. Shared-memory segments hold arrays outside the Go heap, counted in
// --max-memory too, so the Go heap's limit is what they leave.

var memLimit struct {
	sync.Mutex
	base int64 // --max-memory plus slack; 0: no limit set (LimitMemory not called)
	segs int64 // bytes mapped by live segments
}

// LimitMemory makes the garbage collector keep the Go heap, with the
// shared-memory segments, within maxMemory plus 1/8 and 256 MiB. A
// GOMEMLIMIT in the environment wins. arktos-server calls it at start;
// tests that run servers in process do not.
func LimitMemory(maxMemory int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	memLimit.Lock()
	defer memLimit.Unlock()
	memLimit.base = maxMemory + maxMemory/8 + 256<<20
	setGoLimitLocked()
}

// segmentBytes records n bytes of segments mapped (negative: unmapped).
func segmentBytes(n int64) {
	memLimit.Lock()
	defer memLimit.Unlock()
	memLimit.segs += n
	setGoLimitLocked()
}

func setGoLimitLocked() {
	if b := memLimit.base; b > 0 {
		debug.SetMemoryLimit(max(b-memLimit.segs, b/4))
	}
}

// goMemoryLimit returns the Go heap's limit now (tests).
func goMemoryLimit() int64 { return debug.SetMemoryLimit(-1) }

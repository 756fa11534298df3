package pdarray

import (
	"runtime"
	"testing"
)

// TestParallelPopulate: a large new buffer is pre-faulted on several threads
// (when there are several) and comes back zeroed and writable, its length
// exact whatever its alignment.
func TestParallelPopulate(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one thread: nothing to split")
	}
	before := ParallelPopulates.Load()
	for _, n := range []int{64 << 20, 64<<20 + 12345} {
		b := AlignedBytes(n)
		if len(b) != n {
			t.Fatalf("len %d, want %d", len(b), n)
		}
		for i := 0; i < n; i += 4093 {
			if b[i] != 0 {
				t.Fatalf("byte %d of a new buffer is %d", i, b[i])
			}
			b[i] = 1
		}
	}
	if got := ParallelPopulates.Load() - before; got != 2 {
		t.Fatalf("%d of 2 buffers were pre-faulted on several threads", got)
	}
	AlignedBytes(8 << 20) // one piece: one thread
	if ParallelPopulates.Load()-before != 2 {
		t.Fatal("an 8 MiB buffer was split between threads")
	}
}

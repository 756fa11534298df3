package pdarray

import (
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"
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

// TestPopulateSkipsResident: pre-faulting leaves pages already mapped alone
// (ResidentPages counts them) and maps the missing ones.
func TestPopulateSkipsResident(t *testing.T) {
	n := 16 << 20
	fresh, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(fresh)
	// 4 KiB pages only, so that touching the first half maps just that half
	// even where transparent huge pages are always on.
	if err := syscall.Madvise(fresh, syscall.MADV_NOHUGEPAGE); err != nil {
		t.Log("MADV_NOHUGEPAGE:", err)
	}
	ps := syscall.Getpagesize()
	resident := func() int {
		vec := make([]byte, n/ps)
		if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&fresh[0])), uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatal("mincore:", e)
		}
		k := 0
		for _, v := range vec {
			k += int(v & 1)
		}
		return k
	}
	for i := 0; i < n/2; i += ps { // the first half is mapped
		fresh[i] = 1
	}
	if got := resident(); got != n/2/ps {
		t.Fatalf("%d pages resident before, want %d", got, n/2/ps)
	}
	before := ResidentPages.Load()
	adviseHugePages(fresh) // it pre-faults the 2 MiB-aligned interior only
	skipped := int(ResidentPages.Load() - before)
	if got := resident(); got < n/ps-2*hugePage/ps {
		t.Fatalf("%d of %d pages resident after pre-faulting", got, n/ps)
	}
	if skipped < n/2/ps-2*hugePage/ps || skipped > n/2/ps {
		t.Fatalf("%d resident pages left alone, want about %d", skipped, n/2/ps)
	}
	for i := 0; i < n; i += ps {
		if want := byte(0); i < n/2 {
			want = 1
			if fresh[i] != want {
				t.Fatalf("page %d lost its byte", i/ps)
			}
		} else if fresh[i] != want {
			t.Fatalf("page %d is not zero", i/ps)
		}
	}
}

// TestUninitBytes: large buffers come back aligned and unzeroed (the heap's
// last contents when it reuses memory), small ones zeroed.
func TestUninitBytes(t *testing.T) {
	if b := UninitBytes(100); len(b) != 100 || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		t.Fatal("small buffer: wrong length or alignment")
	}
	// With the collector off (but for runtime.GC), the scavenger keeps freed
	// memory: otherwise it may return it to the kernel, whose fresh pages
	// read as zero whatever UninitBytes does.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	n := 4 << 20
	for try := 0; try < 50; try++ {
		before := UninitAllocs.Load()
		addr := fillAndDrop(t, n)
		if UninitAllocs.Load() != before+1 {
			t.Fatal("a large buffer was not counted")
		}
		runtime.GC() // frees the buffer
		c := UninitBytes(n)
		if uintptr(unsafe.Pointer(&c[0])) != addr {
			continue // the heap gave other memory: try again
		}
		for i := 1; i < n; i += 4093 { // byte 0 is written by UninitBytes
			if c[i] != 0xa5 {
				t.Fatalf("byte %d of reused memory is %#x: UninitBytes cleared it", i, c[i])
			}
		}
		return
	}
	t.Skip("the heap never reused a freed buffer's memory in 50 tries")
}

// fillAndDrop fills a new buffer of n bytes with 0xa5 and returns its address
// only, so that nothing keeps it alive.
//
//go:noinline
func fillAndDrop(t *testing.T, n int) uintptr {
	b := UninitBytes(n)
	if len(b) != n || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		t.Fatal("large buffer: wrong length or alignment")
	}
	for i := range b {
		b[i] = 0xa5
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

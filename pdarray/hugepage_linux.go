package pdarray

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// populatePiece is the least a thread pre-faults when adviseHugePages
// splits a buffer between threads.
const populatePiece = 16 << 20

// ParallelPopulates counts buffers pre-faulted on several threads (tests
// check the path).
var ParallelPopulates atomic.Uint64

// ResidentPages counts pages adviseHugePages found already mapped and left
// alone (tests check the path).
var ResidentPages atomic.Uint64

// adviseHugePages pre-faults b's 2 MiB-aligned interior with
// MADV_POPULATE_WRITE instead of one page fault per 4 KiB page when it is
// first written, which is most of the cost of receiving into new memory.
// A buffer of two pieces or more is split between up to GOMAXPROCS threads:
// the kernel zeroes and maps each thread's pages on its own core (256 MiB of
// fresh memory here: 86 ms on one thread, 55-69 ms on two, 113 ms faulted
// in as written).
// It deliberately does not ask for huge pages (MADV_HUGEPAGE): with THP
// defrag in "madvise" mode that made the kernel compact memory
// synchronously, and measured allocations of 256 MiB stalled for 0.6–0.9 s.
// Errors are ignored: this is an optimisation only.
func adviseHugePages(b []byte) { adviseHugePagesUntil(b, nil) }

// adviseHugePagesUntil is adviseHugePages that stops pre-faulting, between
// pieces of populatePiece bytes, once stop (when not nil) says so: the
// pages left are faulted in as they are written, if ever (a cancelled
// request's buffer is dropped unwritten).
func adviseHugePagesUntil(b []byte, stop func() bool) {
	if len(b) < 2*hugePage {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + uintptr(len(b))) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	nw := min(runtime.GOMAXPROCS(0), int((hi-lo)/populatePiece))
	if nw <= 1 {
		populateUntil(b[lo-start:hi-start], stop)
		return
	}
	ParallelPopulates.Add(1)
	per := ((hi-lo)/uintptr(nw) + hugePage - 1) &^ (hugePage - 1)
	var wg sync.WaitGroup
	for a := lo; a < hi; a += per {
		e := min(hi, a+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			populateUntil(b[a-start:e-start], stop)
		}()
	}
	wg.Wait()
}

// populateUntil is populateMissing in pieces of populatePiece (page-aligned
// as p is), stopping before a piece once stop says so.
func populateUntil(p []byte, stop func() bool) {
	if stop == nil {
		populateMissing(p)
		return
	}
	for off := 0; off < len(p) && !stop(); off += populatePiece {
		populateMissing(p[off:min(len(p), off+populatePiece)])
	}
}

// populateMissing pre-faults the pages of p (page-aligned) that are not
// mapped yet. Memory the Go heap reuses mostly is (it was cleared or
// written before), and MADV_POPULATE_WRITE still walks every present page:
// 4.3-8.5 ms for 64 MiB all present here, where mincore takes 0.07-0.2 ms
// to say which pages are missing. Runs of missing pages less than a huge
// page apart are populated with one call.
func populateMissing(p []byte) {
	ps := syscall.Getpagesize()
	n := len(p) / ps
	vec := make([]byte, n) // one byte a page: 16 KiB for 64 MiB
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&p[0])), uintptr(n*ps), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		syscall.Madvise(p, 23 /* MADV_POPULATE_WRITE */)
		return
	}
	gap := hugePage / ps
	resident := 0 // pages skipped
	for i := 0; i < n; {
		if vec[i]&1 != 0 {
			resident++
			i++
			continue
		}
		last := i // the run's last missing page
		for j := i + 1; j < n && j-last <= gap; j++ {
			if vec[j]&1 == 0 {
				last = j
			}
		}
		syscall.Madvise(p[i*ps:(last+1)*ps], 23 /* MADV_POPULATE_WRITE */)
		i = last + 1
	}
	ResidentPages.Add(uint64(resident))
}

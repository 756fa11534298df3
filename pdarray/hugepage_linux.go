package pdarray

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// adviseHugePages asks the kernel to back b's 2 MiB-aligned interior with
// transparent huge pages (THP "madvise" mode is the common default). A fresh
// 256 MiB buffer then takes 128 page faults instead of 65,536 when it is first
// written, which is most of the cost of receiving into new memory. Errors
// are ignored: the advice is an optimisation only.
func adviseHugePages(b []byte) {
	if len(b) < 2*hugePage {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + uintptr(len(b))) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	syscall.Madvise(b[lo-start:hi-start], 23 /* MADV_POPULATE_WRITE */)
}

package transfer

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// segmentBlock is the piece of a segment one pread, pwrite or copy moves;
// the pieces are shared out between the workers.
const segmentBlock = 4 << 20

// ReadSegment fills dst from the start of the file fd (a shared-memory
// segment) with pread, on up to workers goroutines. Unlike mapping the
// segment and copying out of the mapping, it builds no page tables for the
// segment's pages and leaves no mapping to undo: 256 MiB measured 37-38 ms
// on two threads here, against 67-70 ms mapped with MAP_POPULATE and copied
// on two.
func ReadSegment(fd int, dst []byte, workers int) error {
	return segmentIO(fd, dst, workers, unix.Pread, "read")
}

// WriteSegment copies src to the start of the file fd (a shared-memory
// segment) on up to workers goroutines, and reports whether it went through
// a mapping. How depends on whether the segment's pages exist:
//
//   - All of them (a pooled segment lent again): mapped with MAP_POPULATE,
//     which builds the page tables in one walk, then copied; pwrite instead
//     goes through the page cache a page at a time. 256 MiB on two threads:
//     37-39 ms mapped (8-9 of them populating, 6 unmapping) against 73-75 ms
//     with pwrite (the sixteenth session's VM; 49-63 ms each on an earlier
//     one).
//   - Some missing (a new segment): pwrite, with which the kernel allocates
//     each page as it is written and does not zero the pages written whole:
//     134-143 ms against 291-295 ms mapped and copied.
//
// It maps only a segment sealed against shrinking (F_SEAL_SHRINK): the
// file can then never become shorter than the mapping, so no access falls
// past its end, which would be a fault (SIGBUS) that kills the process. (A
// page punched out meanwhile would read back as zeros: the peer's own
// doing.) Where the mapping is refused (out of mappings or address space,
// or a segment sealed against writes) it writes with pwrite.
//
// The mapping is this call's alone: nothing touches it after the copy, and
// a goroutine unmaps it while the caller goes on (the upload's request;
// the munmap of 256 MiB takes 6 ms here). So after a mapped write a
// writable shared mapping may outlive the call for a few milliseconds, and
// sealing the segment against writes (F_SEAL_WRITE) then would fail with
// EBUSY; a segment that is not sealed against shrinking is never mapped,
// which is how newly made ones, sealed only once filled, stay clear of it.
// The mapping is made and undone with MmapPtr and MunmapPtr, not Mmap and
// Munmap, whose process-wide lock the munmap would hold for its duration.
func WriteSegment(fd int, src []byte, workers int) (mapped bool, err error) {
	if len(src) > 0 && resident(fd, len(src)) {
		p, err := unix.MmapPtr(fd, 0, nil, uintptr(len(src)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err == nil {
			m := unsafe.Slice((*byte)(p), len(src)) // the mapping: not Go memory, dropped before the munmap
			n := (len(src) + segmentBlock - 1) / segmentBlock
			ParallelFrames(n, workers, func(i int) error {
				lo, hi := i*segmentBlock, min((i+1)*segmentBlock, len(src))
				copy(m[lo:hi], src[lo:hi])
				return nil
			})
			size := uintptr(len(src))
			go unix.MunmapPtr(p, size) // fails only for a bad address or length, and these are the mapping's own
			return true, nil
		}
	}
	return false, segmentIO(fd, src, workers, unix.Pwrite, "write")
}

// resident reports whether the segment fd is sealed against shrinking and
// holds pages for all of its first n bytes (no hole before byte n).
func resident(fd int, n int) bool {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&unix.F_SEAL_SHRINK == 0 {
		return false
	}
	hole, err := unix.Seek(fd, 0, unix.SEEK_HOLE)
	return err == nil && hole >= int64(n)
}

func segmentIO(fd int, b []byte, workers int, op func(int, []byte, int64) (int, error), what string) error {
	n := (len(b) + segmentBlock - 1) / segmentBlock
	return ParallelFrames(n, workers, func(i int) error {
		lo, hi := i*segmentBlock, min((i+1)*segmentBlock, len(b))
		for lo < hi {
			k, err := op(fd, b[lo:hi], int64(lo))
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				return fmt.Errorf("%s the shared-memory segment at byte %d: %w", what, lo, err)
			case k == 0:
				return fmt.Errorf("%s the shared-memory segment at byte %d: it ends there, short of %d bytes", what, lo, len(b))
			}
			lo += k
		}
		return nil
	})
}

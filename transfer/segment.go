package transfer

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// segmentBlock is the piece of a segment one pread or pwrite moves; the
// pieces are shared out between the workers.
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
// segment) with pwrite, on up to workers goroutines. Into a new segment the
// kernel allocates each page as it is written, without zeroing the pages
// written whole: 256 MiB measured 134-143 ms on two threads, against
// 291-295 ms mapped with MAP_POPULATE and copied on two (into a segment
// whose pages exist, both took 49-63 ms).
func WriteSegment(fd int, src []byte, workers int) error {
	return segmentIO(fd, src, workers, unix.Pwrite, "write")
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

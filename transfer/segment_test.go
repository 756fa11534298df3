package transfer

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSegmentIO: bytes written to a memfd with WriteSegment read back
// exactly with ReadSegment, whatever the worker count and however the
// length falls on the blocks; reading past the segment's end is an error
// that says so.
func TestSegmentIO(t *testing.T) {
	for _, n := range []int{0, 1, segmentBlock, 2*segmentBlock + 12345} {
		for _, workers := range []int{1, 3} {
			fd, err := unix.MemfdCreate("segment-test", unix.MFD_CLOEXEC)
			if err != nil {
				t.Skip("no memfd here:", err)
			}
			src := make([]byte, n)
			rand.NewChaCha8([32]byte{byte(n), byte(workers)}).Read(src)
			if err := WriteSegment(fd, src, workers); err != nil {
				t.Fatalf("write %d bytes on %d workers: %v", n, workers, err)
			}
			dst := make([]byte, n)
			if err := ReadSegment(fd, dst, workers); err != nil || !bytes.Equal(dst, src) {
				t.Fatalf("read %d bytes on %d workers: equal %v, %v", n, workers, bytes.Equal(dst, src), err)
			}
			err = ReadSegment(fd, make([]byte, n+10), workers)
			if err == nil || !strings.Contains(err.Error(), "it ends there") {
				t.Fatalf("read past the end of %d bytes: %v", n, err)
			}
			unix.Close(fd)
		}
	}
}

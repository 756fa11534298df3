package transfer

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSegmentIO: bytes written to a memfd with WriteSegment read back
// exactly with ReadSegment (with pwrite: the memfd is not sealed), whatever the worker count and however the
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
			if mapped, err := WriteSegment(fd, src, workers); err != nil || mapped {
				t.Fatalf("write %d bytes on %d workers into an unsealed memfd: mapped %v, %v", n, workers, mapped, err)
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

// TestWriteSegmentMaps: WriteSegment copies through a mapping exactly where
// the segment is sealed against shrinking and every page it writes exists
// already (a pooled segment lent again), and writes the same bytes either
// way; pwrite everywhere else.
func TestWriteSegmentMaps(t *testing.T) {
	const size = 2*segmentBlock + 3*4096
	segment := func(seals int) int {
		t.Helper()
		fd, err := unix.MemfdCreate("segment-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		if err != nil {
			t.Skip("no memfd here:", err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		if err := unix.Ftruncate(fd, size); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
		return fd
	}
	rng := rand.NewChaCha8([32]byte{7})
	write := func(fd, n, workers int, wantMapped bool) {
		t.Helper()
		src := make([]byte, n)
		rng.Read(src)
		mapped, err := WriteSegment(fd, src, workers)
		if err != nil || mapped != wantMapped {
			t.Fatalf("write %d bytes on %d workers: mapped %v, want %v; %v", n, workers, mapped, wantMapped, err)
		}
		dst := make([]byte, n)
		if err := ReadSegment(fd, dst, 2); err != nil || !bytes.Equal(dst, src) {
			t.Fatalf("read back %d bytes: equal %v, %v", n, bytes.Equal(dst, src), err)
		}
	}
	shrink := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW
	fd := segment(shrink)
	write(fd, segmentBlock+100, 1, false) // new pages: pwrite
	write(fd, segmentBlock+100, 3, true)  // its pages exist now
	write(fd, 12345, 2, true)
	write(fd, size, 2, false) // past the pages written so far: a hole
	write(fd, size, 2, true)
	write(fd, size-5, 1, true)
	// A hole in the middle (punched out) sends it back to pwrite. (Where
	// shared memory takes huge pages, punching 4 KiB may zero it in place
	// and leave no hole.)
	if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, segmentBlock, 4096); err != nil {
		t.Fatal(err)
	}
	if hole, err := unix.Seek(fd, 0, unix.SEEK_HOLE); err == nil && hole < size {
		write(fd, size, 2, false)
		write(fd, size, 2, true)
	} else {
		t.Log("punching 4 KiB left no hole here (huge pages?); that step is skipped")
	}

	// Not sealed against shrinking: the pages could go under the copy.
	fd = segment(unix.F_SEAL_GROW)
	write(fd, size, 2, false)
	write(fd, size, 2, false)

	// Sealed against writes: the mapping is refused, and so is pwrite.
	fd = segment(shrink)
	write(fd, size, 2, false)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE); err != nil {
		t.Fatal(err)
	}
	if mapped, err := WriteSegment(fd, make([]byte, size), 2); mapped || err == nil || !strings.Contains(err.Error(), "write the shared-memory segment") {
		t.Fatalf("write into a write-sealed segment: mapped %v, %v", mapped, err)
	}
}

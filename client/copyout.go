package client

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/pdarray"
)

// ShmCopyMin is the size from which a private download (Download,
// DownloadInto, DownloadArray) from a server on this host maps the array's
// shared-memory segment and copies it out on several threads, instead of
// reading it off the unix stream on one: into a reused buffer 0.69-1.02x
// memcpy against 0.45-0.64x off the stream (bench/transfer/results-3.md, 64
// and 256 MiB). Into new memory both are bound by the cost of fresh pages
// (0.24-0.44x). Smaller arrays still come over the stream (the server is
// asked for shm with shm_min, and sends the bytes when the array is
// smaller).
const ShmCopyMin = 16 << 20

var shmCopies atomic.Uint64

// ShmCopies returns how many downloads this process copied out of a mapped
// segment (tests check that the path is taken).
func ShmCopies() uint64 { return shmCopies.Load() }

// downloadCopyOut downloads the whole array name through the unix stream
// st: mapped and copied out when it is ShmCopyMin bytes or more, else read
// off the stream. c.mu is held.
func (c *Client) downloadCopyOut(ctx context.Context, st *bulkStream, name string, want pdarray.DType, into []byte) (*pdarray.Array, error) {
	mem, info, segment, _, err := c.downloadShmLocked(ctx, st, name, want, ShmCopyMin, into, true)
	if err != nil {
		return nil, err
	}
	if segment == copiedNotMapped { // the bytes came over the stream into mem
		return pdarray.Wrap(info.DType, mem)
	}
	a, err := result(info, into)
	if err == nil && len(mem) > 0 {
		parallelCopy(a.Bytes(), mem)
		shmCopies.Add(1)
	}
	if mem != nil {
		if uerr := unix.Munmap(mem); uerr != nil && err == nil {
			err = fmt.Errorf("client: unmap the shared-memory segment of '%s': %w", name, uerr)
		}
	}
	// A lent segment is not lent again until the client says it no longer
	// maps it (docs/protocol.md, "View").
	c.releaseSegmentLocked(ctx, segment)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// parallelCopy copies src into dst (as long) on up to GOMAXPROCS threads,
// one piece of about n/threads each, with a thread for every 4 MiB at most.
func parallelCopy(dst, src []byte) {
	n := len(src)
	nw := min(runtime.GOMAXPROCS(0), max(n>>22, 1), 16)
	if nw <= 1 {
		copy(dst, src)
		return
	}
	per := (n/nw + 4095) &^ 4095
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}

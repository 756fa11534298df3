package client

import (
	"context"
	"sync/atomic"

	"github.com/arktos-dev/arktos/pdarray"
)

// ShmCopyMin is the size from which a private download (Download,
// DownloadInto, DownloadArray) from a server on this host reads the array
// out of its shared-memory segment on several threads (pread on the
// segment's descriptor: nothing is mapped), instead of off the unix stream
// on one. Smaller arrays still come over the stream (the server is asked
// for shm with shm_min, and sends the bytes when the array is smaller).
const ShmCopyMin = 16 << 20

var shmCopies atomic.Uint64

// ShmCopies returns how many downloads this process copied out of a
// segment (tests check that the path is taken).
func ShmCopies() uint64 { return shmCopies.Load() }

var shmMappedWrites atomic.Uint64

// ShmMappedWrites returns how many uploads this process copied into a lent
// segment through a mapping, the way taken when the segment is a pooled
// one whose pages exist (tests check that the path is taken).
func ShmMappedWrites() uint64 { return shmMappedWrites.Load() }

// downloadCopyOut downloads the whole array name through the unix stream
// st: read out of its segment (pread, on several threads) when it is
// ShmCopyMin bytes or more, else off the stream. c.mu is held.
func (c *Client) downloadCopyOut(ctx context.Context, st *bulkStream, name string, want pdarray.DType, into []byte, extra map[string]any) (*pdarray.Array, error) {
	mem, info, _, _, err := c.downloadShmLocked(ctx, st, name, want, ShmCopyMin, into, true, extra)
	if err != nil {
		return nil, err
	}
	if mem == nil { // an empty array
		return result(info, into)
	}
	return pdarray.Wrap(info.DType, mem)
}

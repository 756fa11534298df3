package server

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/transfer"
)

// Shared-memory views: a download with shm=true over a unix bulk stream
// copies the array once into a fresh memfd segment and passes its
// descriptor (SCM_RIGHTS) after the reply; the client maps it read-only and
// uses the mapping as its array, with no copy on its side. The segment is
// the client's from then on: the server closes its descriptor and mapping
// at once, and the memory goes away when the client unmaps it.
//
// The bytes are not counted against --max-memory: they belong to the
// client's mapping, as a downloaded copy in its own memory would.

// shmSegment makes a memfd holding a copy of body and returns its
// descriptor, which the caller must close.
func shmSegment(body []byte) (int, error) {
	fd, err := unix.MemfdCreate("arktos-view", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("memfd_create: %w", err)
	}
	if len(body) == 0 {
		return fd, nil
	}
	if err := unix.Ftruncate(fd, int64(len(body))); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("ftruncate %d: %w", len(body), err)
	}
	// MAP_POPULATE faults the pages in with one call rather than one trap
	// per page during the copy.
	m, err := unix.Mmap(fd, 0, len(body), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("mmap %d: %w", len(body), err)
	}
	copy(m, body)
	unix.Munmap(m)
	return fd, nil
}

// sendFD passes fd over a unix stream with one byte of payload.
func sendFD(c net.Conn, fd int) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("descriptors travel only over a unix stream")
	}
	_, _, err := uc.WriteMsgUnix([]byte{'S'}, unix.UnixRights(fd), nil)
	return err
}

// shmDownload answers download with shm=true: checked before the reply, the
// segment made and its descriptor sent after it.
func (s *Server) shmDownload(x *stream, body []byte, result map[string]any, release func()) (*response, error) {
	if _, ok := x.conn.(*net.UnixConn); !ok {
		x.mu.Unlock()
		release()
		return nil, transfer.Errorf(transfer.ArgumentValue, "shm needs a unix bulk stream (a client on the server's host); stream %d is TCP", x.id)
	}
	fd, err := shmSegment(body)
	if err != nil {
		x.mu.Unlock()
		release()
		return nil, transfer.Errorf(transfer.OutOfMemory, "cannot make a shared-memory segment of %d bytes: %v", len(body), err)
	}
	release() // the segment holds its own copy
	result["shm"] = true
	return &response{result: result, after: func() {
		defer unix.Close(fd)
		// Counted before the client can see the segment, so that a stats
		// request it sends next (answered at once) sees the view.
		s.stats.BytesCopiedOut.Add(uint64(len(body)))
		s.stats.ShmViews.Add(1)
		if err := sendFD(x.conn, fd); err != nil {
			s.stats.BytesCopiedOut.Add(-uint64(len(body)))
			s.stats.ShmViews.Add(^uint64(0))
			s.log.Debug("shm descriptor not sent", "stream", x.id, "err", err)
			s.dropStream(x)
			return
		}
		x.mu.Unlock()
	}}, nil
}

package server

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// Shared-memory transfers, for clients on the server's host (a unix bulk
// stream, over which descriptors travel with SCM_RIGHTS; docs/protocol.md,
// "Shared memory"):
//
//   - Upload with a lent segment (what the clients do): shm_lease lends a
//     memfd (a pooled one, whose pages are in memory already, or a new one),
//     the client copies the elements in, and upload with lease=true makes
//     the server's mapping of it the array's buffer. The server copies
//     nothing.
//   - Upload with the client's own sealed memfd (shm=true): the same, the
//     descriptor coming with the upload.
//   - View (download with shm=true): the server passes the descriptor of the
//     array's segment (read-only) and the client maps it. An array that is
//     not in a segment yet (made by an operation) is copied into one once,
//     which then becomes its buffer, so later views copy nothing either.
//
// Ownership of a segment (its pages live while any descriptor or mapping of
// it does):
//
//   - The server holds one descriptor and one mapping per segment-backed
//     array (segment.fd, segment.mem). They are the store entry's: only the
//     store lets go of them, when the array is deleted or its bytes are
//     copied out for a write (copy on write), and only after every request
//     that could still read the mapping has ended (store.grace). Then a lent
//     segment with no view left unreleased goes to the segment pool, still
//     mapped, for the next lease; any other is unmapped and closed
//     (segment.free). Segments
//     never go to the buffer pool nor to the garbage collector: Go does not
//     know about the mapping.
//   - A lent segment, before its upload, is the stream's (stream.lease): the
//     lease ends, and the segment is freed (the client may still map it, so
//     it is not lent again), when the stream closes, the client hangs up, or
//     leaseTTL passes.
//   - A client's view maps its own descriptor's file: it outlives the array
//     on the server (delete), and never changes: a write copies the array out
//     first, and a segment is lent again only once every view of it was
//     released (shm_release; a client that says so while still mapping it
//     sees the next upload's bytes, its own doing).
//   - Every segment is sealed against shrinking and growing, so the server
//     never faults (SIGBUS) on a truncated one; a client's own segment and
//     the server's view copies are sealed against writes too, and a lent
//     segment's views get a read-only descriptor.
//
// A segment's bytes count against --max-memory as long as its array is
// stored (or its lease lasts), like any array; pooled segments count as
// pooled bytes; a view that outlives its array is the client's memory.

// segment is a memfd (sealed as the ownership notes above say) and the
// server's mapping of its first len(mem) bytes, backing one stored array,
// lent for an upload, or pooled.
type segment struct {
	fd  int
	mem []byte // the server's mapping: all of the segment for a leased one
	// leased: made by shm_lease, unsealed against writes, so it can be lent
	// again once its array is gone, unless a client still maps a view of it
	// (the next borrower would write into that view): views counts the
	// views handed out and not yet released (shm_release), and a segment
	// recycled while it is above zero is freed, never lent again. views is
	// guarded by store.mu.
	leased bool
	views  int
	id     uint64 // names a leased segment in view replies and shm_release
}

// free unmaps and closes the segment. Only the store calls it, through its
// grace period (see store.retire).
func (g *segment) free() {
	if len(g.mem) > 0 {
		unix.Munmap(g.mem)
		segmentBytes(-int64(len(g.mem)))
	}
	unix.Close(g.fd)
}

// requiredSeals are the seals a segment must carry before the server maps it.
const requiredSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW

// minAdopt is the smallest array a view turns into a segment-backed one:
// below it a one-off copy per view costs less than a descriptor and a
// mapping kept for the array's lifetime.
const minAdopt = 1 << 20

// errNoMapping marks a refused mmap (out of mappings or address space), as
// opposed to a bad segment.
var errNoMapping = errors.New("mmap refused")

// checkSegment checks that fd is a sealed memfd of at least nbytes bytes.
func checkSegment(fd int, nbytes int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat: %v", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("the descriptor is not a memfd (file mode %#o)", st.Mode)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return fmt.Errorf("the descriptor is not a sealable memfd (F_GET_SEALS: %v); create it with memfd_create(MFD_ALLOW_SEALING)", err)
	}
	if seals&requiredSeals != requiredSeals {
		return fmt.Errorf("the segment is not sealed (seals %#x); seal it with F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW once written and unmapped", seals)
	}
	if st.Size < int64(nbytes) {
		return fmt.Errorf("the segment holds %d bytes but the upload declares %d", st.Size, nbytes)
	}
	return nil
}

// mapSegment maps the first nbytes of the checked segment fd (page aligned,
// so 8-byte aligned for any dtype) and takes ownership of fd, except when
// the mmap is refused (errNoMapping): fd is then still the caller's.
// readOnly maps it read-only (tests: a write that bypasses copy-on-write
// faults loudly); otherwise it is mapped read-write MAP_PRIVATE, so a stray
// write dirties a private page of the server's instead of crashing it, and
// never reaches the segment that clients map.
func mapSegment(fd int, nbytes int, readOnly bool) (*segment, error) {
	g := &segment{fd: fd}
	if nbytes == 0 {
		return g, nil
	}
	prot := unix.PROT_READ | unix.PROT_WRITE
	if readOnly {
		prot = unix.PROT_READ
	}
	var err error
	g.mem, err = unix.Mmap(fd, 0, nbytes, prot, unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("%w: %d bytes: %v", errNoMapping, nbytes, err)
	}
	segmentBytes(int64(nbytes))
	return g, nil
}

// memfdDisabled makes every memfd_create fail (ARKTOS_DEBUG_NO_MEMFD=1, for
// tests of the fallbacks: a server out of descriptors or memory).
var memfdDisabled atomic.Bool

func memfdCreate(name string) (int, error) {
	if memfdDisabled.Load() {
		return -1, errors.New("memfd_create: disabled by ARKTOS_DEBUG_NO_MEMFD")
	}
	return unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
}

// newSegment makes a sealed memfd holding a copy of body and maps it like
// mapSegment.
func newSegment(body []byte, readOnly bool) (*segment, error) {
	fd, err := memfdCreate("arktos-array")
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	if len(body) > 0 {
		if err := unix.Ftruncate(fd, int64(len(body))); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("ftruncate %d: %w", len(body), err)
		}
		// Written with pwrite, never mapped (WriteSegment maps only a
		// segment sealed against shrinking, and these seals come after):
		// F_SEAL_WRITE needs no writable shared mapping left.
		if _, err := fillShared(fd, body); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, requiredSeals|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("seal: %w", err)
	}
	g, err := mapSegment(fd, len(body), readOnly)
	if err != nil {
		unix.Close(fd)
	}
	return g, err
}

// fillShared copies body to the start of the memfd fd on every core
// (transfer.WriteSegment: with pwrite into new pages, which are then not
// zeroed, and through a mapping into a pooled segment's), and reports
// whether it mapped the segment.
func fillShared(fd int, body []byte) (mapped bool, err error) {
	return transfer.WriteSegment(fd, body, runtime.GOMAXPROCS(0))
}

// array wraps the first nbytes of the segment's mapping as an array of dt.
func (g *segment) array(dt pdarray.DType, nbytes int) (*pdarray.Array, error) {
	if nbytes == 0 {
		return pdarray.Wrap(dt, []byte{})
	}
	return pdarray.Wrap(dt, g.mem[:nbytes])
}

// newLeaseSegment makes a segment of n bytes for a client to fill (leased):
// sealed against shrinking and growing only, so that the server can never
// fault on it, and lent again after its array is deleted. The server maps
// all of it at once.
func newLeaseSegment(n int, readOnly bool) (*segment, error) {
	fd, err := memfdCreate("arktos-lease")
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("ftruncate %d: %w", n, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("seal: %w", err)
	}
	g, err := mapSegment(fd, n, readOnly)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	g.leased = true
	g.id = segmentIDs.Add(1)
	return g, nil
}

var segmentIDs atomic.Uint64

// leaseTTL is how long a lent segment waits for its upload.
const leaseTTL = streamIdle

// lease is a segment lent on a stream for the client's next upload; its
// bytes are reserved. Guarded by the stream's mutex.
type lease struct {
	g      *segment
	nbytes int
}

// cmdShmRelease: the client no longer maps the views of the named segments
// (one name per view), so a segment whose views are all released can be lent
// again once its array is gone. Unknown names are skipped: the segment may
// be gone already.
func (s *Server) cmdShmRelease(r *request) (*response, error) {
	ids := r.args.UintList("segments")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"released": s.store.releaseViews(ids)}}, nil
}

// cmdShmLease lends a segment of nbytes bytes on a unix stream: the reply
// (leased: true), then its read-write descriptor on the stream; or, when no
// segment can be made, leased: false and nothing more. The client fills it and
// uploads with lease=true; a pooled segment's pages are already in memory,
// so filling it costs a copy and no page allocation. One lease per stream:
// asking again, or closing the stream, ends the earlier one.
func (s *Server) cmdShmLease(r *request) (*response, error) {
	id := r.args.Uint("stream")
	n := r.args.Uint("nbytes")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	if n == 0 || n > 1<<62 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "nbytes must be between 1 and 2^62, got %d", n)
	}
	x, err := s.takeStream(id, r)
	if err != nil {
		return nil, err
	}
	if _, ok := x.conn.(*net.UnixConn); !ok {
		x.unlock()
		return nil, transfer.Errorf(transfer.ArgumentValue, "shm_lease needs a unix bulk stream (a client on the server's host); stream %d is TCP: upload over the stream instead", x.id)
	}
	s.endLease(x)
	if err := s.store.reserve(int64(n), fmt.Sprintf("a shared-memory segment of %s for an upload", transfer.FormatBytes(int64(n)))); err != nil {
		x.unlock()
		return nil, err
	}
	g, err := s.store.lendSegment(int(n), s.store.poison)
	if err != nil {
		// No segment (out of descriptors, mappings or memory): nothing is
		// lent, and the client streams the bytes instead.
		s.log.Debug("no shared-memory segment to lend", "nbytes", n, "err", err)
		s.store.release(int64(n))
		x.unlock()
		return &response{result: map[string]any{"nbytes": n, "leased": false}}, nil
	}
	l := &lease{g: g, nbytes: int(n)}
	x.lease = l
	go func() {
		defer par.Recover(s.logPanic("panic watching a shared-memory lease"))
		s.watchLease(x, l)
	}()
	return &response{result: map[string]any{"nbytes": n, "leased": true}, after: func() {
		if err := sendFD(x.conn, g.fd); err != nil {
			s.log.Debug("lease descriptor not sent", "stream", x.id, "err", err)
			s.dropStream(x) // ends the lease
			return
		}
		x.unlock()
	}}, nil
}

// watchLease ends lease l if its client never uploads: when the stream's
// peer hangs up (the client died or dropped the stream), or after leaseTTL.
// It polls the socket for a hang-up without reading from it.
func (s *Server) watchLease(x *stream, l *lease) {
	var rc syscall.RawConn
	if sc, ok := x.conn.(syscall.Conn); ok {
		rc, _ = sc.SyscallConn()
	}
	for deadline := time.Now().Add(leaseTTL); ; {
		hup := false
		if rc == nil {
			time.Sleep(100 * time.Millisecond)
		} else {
			rc.Control(func(fd uintptr) {
				fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
				if n, _ := unix.Poll(fds, 100); n > 0 {
					hup = fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
				}
			})
		}
		x.mu.Lock()
		if x.lease != l {
			x.unlock() // uploaded, or ended
			return
		}
		if hup {
			s.log.Debug("shm lease's stream closed by the client", "stream", x.id)
			s.dropStream(x) // ends the lease, unlocks
			return
		}
		if time.Now().After(deadline) {
			s.log.Debug("unused shm lease ended", "stream", x.id, "nbytes", l.nbytes)
			s.endLease(x)
			x.unlock()
			return
		}
		x.unlock()
	}
}

// endLease ends stream x's unused lease, if any: its reservation goes, and
// its segment is freed (the client may still map it, so it is not lent
// again). x.mu must be held.
func (s *Server) endLease(x *stream) {
	if l := x.lease; l != nil {
		x.lease = nil
		s.store.release(int64(l.nbytes))
		l.g.free()
	}
}

// leaseUpload stores the segment leased on stream x, which the client has
// filled, as an array of nbytes bytes of dt: no copy.
func (s *Server) leaseUpload(x *stream, dt pdarray.DType, nbytes int, name string) (*response, error) {
	l := x.lease
	if l == nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "an upload with lease=true needs a segment leased on stream %d first (shm_lease)", x.id)
	}
	if l.nbytes != nbytes {
		return nil, transfer.Errorf(transfer.ArgumentValue, "the segment leased on stream %d holds %d bytes but the upload declares %d", x.id, l.nbytes, nbytes)
	}
	x.lease = nil // its reservation and segment go to the array
	stored := false
	defer func() {
		if !stored { // an error, or a panic
			s.store.release(int64(nbytes))
		}
	}()
	arr, err := l.g.array(dt, nbytes)
	if err != nil {
		l.g.free()
		return nil, transfer.Errorf(transfer.Internal, "%v", err)
	}
	resp, err := s.storeUpload(name, arr, l.g)
	stored = err == nil
	return resp, err
}

// readOnlyFD opens the file of fd again, read-only, for a view of a leased
// segment: its descriptor can write, a view's must not be able to.
func readOnlyFD(fd int) (int, error) {
	return unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// sendFD passes fd over a unix stream with one byte of payload.
func sendFD(c net.Conn, fd int) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("descriptors travel only over a unix stream")
	}
	uc.SetWriteDeadline(time.Now().Add(streamIdle))
	_, _, err := uc.WriteMsgUnix([]byte{'S'}, unix.UnixRights(fd), nil)
	return err
}

// recvFD reads the one byte and one descriptor a client sends after an
// upload with shm=true. Any extra descriptor is closed.
func recvFD(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("descriptors travel only over a unix stream")
	}
	uc.SetReadDeadline(time.Now().Add(streamIdle))
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(b[:], oob)
	if err != nil {
		return -1, fmt.Errorf("no descriptor arrived: %w", err)
	}
	var fds []int
	if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	for _, fd := range fds[min(len(fds), 1):] {
		unix.Close(fd)
	}
	if n != 1 || len(fds) == 0 {
		if len(fds) > 0 {
			unix.Close(fds[0])
		}
		return -1, fmt.Errorf("the stream carried %d byte(s) and %d descriptor(s) where one byte with one memfd descriptor was due", n, len(fds))
	}
	return fds[0], nil
}

// shmUpload receives the segment of an upload with shm=true over stream x
// and returns the array mapped onto it and the segment; the bytes (nbytes)
// are already reserved. When the server may not map it (out of mappings)
// the bytes are read into an ordinary buffer instead: one copy, counted in
// bytes_copied_in, and a nil segment.
func (s *Server) shmUpload(x *stream, dt pdarray.DType, nbytes int) (*pdarray.Array, *segment, error) {
	if _, ok := x.conn.(*net.UnixConn); !ok {
		return nil, nil, transfer.Errorf(transfer.ArgumentValue, "shm needs a unix bulk stream (a client on the server's host); stream %d is TCP: upload over the stream without shm", x.id)
	}
	fd, err := recvFD(x.conn)
	if err != nil {
		return nil, nil, transfer.Errorf(transfer.PayloadLength, "upload with shm over stream %d: %v", x.id, err)
	}
	if err := checkSegment(fd, nbytes); err != nil {
		unix.Close(fd)
		return nil, nil, transfer.Errorf(transfer.InvalidData, "upload with shm over stream %d: %v", x.id, err)
	}
	g, err := mapSegment(fd, nbytes, s.store.poison)
	if err == nil {
		arr, err := g.array(dt, nbytes)
		if err != nil {
			g.free()
			return nil, nil, transfer.Errorf(transfer.Internal, "%v", err)
		}
		return arr, g, nil
	}
	defer unix.Close(fd)
	s.log.Debug("shm upload read into a buffer", "err", err)
	arr, err := s.store.allocMayBeDirty(dt, nbytes/dt.Size())
	if err != nil {
		return nil, nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	dst := arr.Bytes()
	for off := 0; off < len(dst); {
		n, err := unix.Pread(fd, dst[off:], int64(off))
		if err != nil || n == 0 {
			return nil, nil, transfer.Errorf(transfer.PayloadLength, "upload with shm over stream %d: segment read stopped at %d of %d bytes: %v", x.id, off, len(dst), err)
		}
		off += n
	}
	s.stats.BytesCopiedIn.Add(uint64(len(dst)))
	return arr, nil, nil
}

// shmDownload answers download with shm=true: checked before the reply,
// the descriptor sent after it. It returns nil and no error, with x still
// locked and the array held, when no segment can be made: the caller then
// streams the bytes, and the reply, without shm, says so. whole says the range is the whole array
// stored under name (arr, held through release): its segment is passed as
// is, or made once and adopted as the array's buffer. A part of an array,
// or a small one, travels as a one-off copy in a fresh segment, if oneOff
// (else the bytes stream).
func (s *Server) shmDownload(x *stream, name string, arr *pdarray.Array, body []byte, whole, oneOff bool, result map[string]any, release func()) (*response, error) {
	if _, ok := x.conn.(*net.UnixConn); !ok {
		x.unlock()
		release()
		return nil, transfer.Errorf(transfer.ArgumentValue, "shm needs a unix bulk stream (a client on the server's host); stream %d is TCP: download over the stream without shm", x.id)
	}
	var g *segment
	owned := false // g is this request's alone: free it once sent
	copied := 0
	fd := -1 // the descriptor to send: g's, or a read-only one to close
	if whole {
		g = s.store.segmentOf(name, arr)
		if g == nil && len(body) >= minAdopt {
			// Copied once into a segment (a pooled one when there is one:
			// its pages are in memory already) that becomes the array's.
			var err error
			fill := func() (*segment, error) {
				g, mapped, err := s.store.lendFilled(body)
				if mapped {
					s.stats.ShmMappedFills.Add(1)
				}
				return g, err
			}
			if g, err = s.store.adopt(name, arr, fill); err != nil {
				s.log.Debug("array not adopted into a segment; a one-off copy is sent", "name", name, "err", err)
				g = nil
			} else {
				copied = len(body)
				s.stats.ShmAdopted.Add(1)
			}
		}
		if g != nil && g.leased {
			// A lent segment's own descriptor can write: send a read-only
			// one, and lend the segment again only once the client
			// releases the view.
			var err error
			if fd, err = readOnlyFD(g.fd); err != nil {
				s.log.Debug("no read-only descriptor; a one-off copy is sent", "name", name, "err", err)
				g, copied = nil, 0
			} else {
				s.store.addView(g)
				result["segment"] = g.id
			}
		}
	}
	if g == nil && !oneOff {
		// The client wants a copy (shm_min): a one-off segment would be a
		// second copy of the array that --max-memory does not count, and
		// the stream moves the bytes with none.
		return nil, nil
	}
	held := int64(0) // the one-off segment's reservation, released once it is freed
	if g == nil {
		// A second copy of the bytes while the server maps it: counted, and
		// without room the bytes stream instead (no copy at all).
		if err := s.store.reserve(int64(len(body)), fmt.Sprintf("a one-off shared-memory copy of '%s'", name)); err != nil {
			s.log.Debug("no room for a one-off segment; the bytes stream", "name", name, "err", err)
			return nil, nil
		}
		var err error
		if g, err = newSegment(body, true); err != nil {
			// No segment (out of descriptors, mappings or memory): the
			// reply says no shm and the bytes travel over the stream.
			s.store.release(int64(len(body)))
			s.log.Debug("no shared-memory segment for a view; the bytes stream", "name", name, "err", err)
			return nil, nil
		}
		owned, copied, held = true, len(body), int64(len(body))
	}
	send := g.fd
	if fd >= 0 {
		send = fd
	}
	result["shm"] = true
	return &response{result: result, after: func() {
		// The array is held (release) until its descriptor is sent: the
		// store cannot free the segment while the request runs.
		defer release()
		if owned {
			defer s.store.release(held)
			defer g.free()
		}
		if fd >= 0 {
			defer unix.Close(fd)
		}
		// Counted before the client can see the segment, so that a stats
		// request it sends next (answered at once) sees the view.
		s.stats.BytesCopiedOut.Add(uint64(copied))
		s.stats.ShmViews.Add(1)
		if err := sendFD(x.conn, send); err != nil {
			s.stats.BytesCopiedOut.Add(-uint64(copied))
			s.stats.ShmViews.Add(^uint64(0))
			s.log.Debug("shm descriptor not sent", "stream", x.id, "err", err)
			s.dropStream(x)
			return
		}
		x.unlock()
	}}, nil
}

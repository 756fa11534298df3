package zframe

/*
#include <zmq.h>
#include <errno.h>
#include <stdlib.h>

// ax_refs counts the messages libzmq holds that point into memory it does
// not own (C memory, so libzmq's threads may write it while Go runs).
typedef struct {
	int pending;
} ax_refs;

static ax_refs *ax_refs_new(void) { return (ax_refs *)calloc(1, sizeof(ax_refs)); }
static int ax_refs_pending(ax_refs *r) { return __atomic_load_n(&r->pending, __ATOMIC_ACQUIRE); }

// ax_released is libzmq's free function for a message made by ax_send_ref:
// called once, from whichever thread destroys the message, when libzmq no
// longer reads its bytes.
static void ax_released(void *data, void *hint) {
	(void)data;
	__atomic_fetch_sub(&((ax_refs *)hint)->pending, 1, __ATOMIC_RELEASE);
}

// ax_send_ref sends n bytes at data as one frame without copying them:
// libzmq keeps the pointer until it calls ax_released. Returns 0, or -1 with
// the errno (EINTR is retried; the message is released on failure).
static int ax_send_ref(void *sock, void *data, size_t n, int flags, ax_refs *r, int *err) {
	zmq_msg_t m;
	__atomic_fetch_add(&r->pending, 1, __ATOMIC_RELAXED);
	if (zmq_msg_init_data(&m, data, n, ax_released, r) != 0) {
		*err = zmq_errno();
		__atomic_fetch_sub(&r->pending, 1, __ATOMIC_RELEASE);
		return -1;
	}
	int rc;
	do {
		rc = zmq_msg_send(&m, sock, flags);
	} while (rc < 0 && zmq_errno() == EINTR);
	if (rc < 0) {
		*err = zmq_errno();
		zmq_msg_close(&m); // calls ax_released
		return -1;
	}
	return 0;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	zmq "github.com/pebbe/zmq4"
)

// Refs sends frames without copying them: libzmq reads them straight from
// the caller's memory (zmq_msg_init_data) instead of from a malloc'd copy.
//
// Ownership: every frame given to Send is pinned (runtime.Pinner: C may
// hold a Go pointer only while it is pinned, and the Pinner's references
// keep the memory alive) and must not be written until Done has returned
// true: libzmq may still be reading it. Done is true once libzmq has
// destroyed every message (sent, or dropped when the socket closed); it then
// unpins the frames and frees the C counter. A Refs whose socket is closed
// before it is Done goes to Leak, which keeps it pinned and reachable until
// it is, rather than let the garbage collector free memory libzmq might
// read. One goroutine at a time may use a Refs (its owner's lock: the
// client's mutex, the server's sentInPlace, the leaked list's).
type Refs struct {
	c    *C.ax_refs
	pin  runtime.Pinner
	done bool
}

var (
	refsLive   atomic.Int64 // Refs made and not Done (tests)
	leakedMu   sync.Mutex
	leakedRefs []*Refs
)

var bytesByRef atomic.Int64

// BytesSentByRef returns the bytes Refs.Send has handed libzmq without a
// copy (tests check that uploads take the path).
func BytesSentByRef() int64 { return bytesByRef.Load() }

// RefsLive returns how many Refs are not Done yet.
func RefsLive() int64 { return refsLive.Load() }

// NewRefs returns an empty Refs.
func NewRefs() *Refs {
	c := C.ax_refs_new()
	if c == nil {
		panic("zframe: out of C memory for a Refs")
	}
	refsLive.Add(1)
	sweepLeaked()
	return &Refs{c: c}
}

// sweepLeaked forgets leaked Refs that libzmq has let go of since.
func sweepLeaked() {
	leakedMu.Lock()
	defer leakedMu.Unlock()
	leakedRefs = slices.DeleteFunc(leakedRefs, (*Refs).Done)
}

// Send sends b as one frame of a multipart message (more: frames follow)
// without copying it. b must not be empty.
func (r *Refs) Send(s *zmq.Socket, b []byte, more bool) error {
	if len(b) == 0 || r.done {
		panic("zframe: Refs.Send of an empty frame, or after Done")
	}
	r.pin.Pin(&b[0])
	var flags C.int
	if more {
		flags = C.ZMQ_SNDMORE
	}
	var errno C.int
	if C.ax_send_ref(raw(s), unsafe.Pointer(&b[0]), C.size_t(len(b)), flags, r.c, &errno) != 0 {
		return fmt.Errorf("zframe: send: %w", syscall.Errno(errno))
	}
	bytesByRef.Add(int64(len(b)))
	return nil
}

// Done reports whether libzmq has let go of every frame sent; the first
// time it has, it unpins them and frees the counter.
func (r *Refs) Done() bool {
	if r.done {
		return true
	}
	if C.ax_refs_pending(r.c) != 0 {
		return false
	}
	r.pin.Unpin()
	C.free(unsafe.Pointer(r.c))
	r.c = nil
	r.done = true
	refsLive.Add(-1)
	return true
}

// Leak hands r to a package list that keeps it pinned and reachable until
// libzmq lets go of its frames (looked at whenever a Refs is made): for a
// socket closed while libzmq may still hold them (a Pinner collected while
// pinned would crash the runtime; unpinned memory could be freed under
// libzmq).
func (r *Refs) Leak() {
	if r.Done() {
		return
	}
	leakedMu.Lock()
	leakedRefs = append(leakedRefs, r)
	leakedMu.Unlock()
}

// ZeroCopyMin is the least frame SendParts hands libzmq in place: below it
// libzmq's copy costs less than pinning the frame and waiting for its
// release.
const ZeroCopyMin = 64 << 10

// SendParts sends parts as one multipart message on s. Parts from index
// first on of ZeroCopyMin bytes and more go in place (Refs.Send: the caller
// must keep them allocated and unwritten until the returned Refs is Done);
// the others, and every part before first, are copied into libzmq's
// messages. The Refs (nil when nothing went in place) comes back on an error
// too: what was queued is still read in place.
//
// A message cut short (a send that fails, or a panic, after a part went
// with more to follow) is ended with an empty frame: left open, the next
// message's frames on s would join it, and its reader would take them for
// this one's. The reader gets a message with other frames than its header
// announces and refuses it (PartialEnds counts these). After a panic the
// Refs is leaked (Refs.Leak: kept pinned until libzmq lets go), and the
// panic goes on.
func SendParts(s *zmq.Socket, parts [][]byte, first int) (*Refs, error) {
	var refs *Refs
	open := false     // a part went with more to follow, and the message is not ended
	returned := false // false in the deferred call: a panic
	defer func() {
		if open {
			s.SendBytes(nil, 0) // best effort: a socket that failed may fail again
			partialEnds.Add(1)
		}
		if !returned && refs != nil {
			refs.Leak() // the caller never sees it
		}
	}()
	for i, p := range parts {
		if testSendPart != nil {
			testSendPart(i)
		}
		more := i < len(parts)-1
		if i >= first && len(p) >= ZeroCopyMin {
			if refs == nil {
				refs = NewRefs()
			}
			if err := refs.Send(s, p, more); err != nil {
				returned = true
				return refs, err
			}
			open = more
			continue
		}
		flag := zmq.Flag(0)
		if more {
			flag = zmq.SNDMORE
		}
		if _, err := s.SendBytes(p, flag); err != nil { // a copy into a libzmq message
			returned = true
			return refs, err
		}
		open = more
	}
	returned = true
	return refs, nil
}

// partialEnds counts the messages SendParts ended early.
var partialEnds atomic.Int64

// PartialEnds is how many messages SendParts ended with an empty frame
// after a failed send or a panic (the server's stats report it).
func PartialEnds() int64 { return partialEnds.Load() }

// testSendPart, when set, runs before SendParts sends part i (tests panic
// or fail there).
var testSendPart func(i int)

// Package zframe is Arktos' small cgo layer beside github.com/pebbe/zmq4. It
// receives a whole multipart message as libzmq messages held in C memory, so
// payload frames can be read in place (and copied once, straight into an
// array's final buffer) instead of being copied into a fresh Go slice per
// frame as zmq4's RecvBytes does; and it forwards a multipart message from
// one socket to another without copying its bytes.
//
// Ownership: a Multipart owns its zmq_msg_t array (C memory) and every frame
// in it. Frame(i) returns a slice that aliases libzmq's buffer: it is valid
// only until Close, and must not be retained or written. Close is idempotent;
// a Multipart that is not closed leaks its frames (tests check Live() == 0).
//
// Sockets are zmq4 sockets; the raw libzmq handle is read from the first field
// of zmq4.Socket (pinned zmq4 v1.4.0; TestRawHandle breaks loudly if the
// layout ever changes). The same one-goroutine-per-socket rule as zmq4 holds.
package zframe

/*
#cgo !windows pkg-config: libzmq
#include <zmq.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	zmq_msg_t *msgs;
	int n;
	int cap;
} ax_multipart;

// ax_recv receives every frame of one multipart message into mp. flags apply
// to the first frame only (ZMQ_DONTWAIT from a poller loop); the other frames
// are already queued, since libzmq delivers multipart messages atomically.
// Returns 0, or -1 with the errno (EINTR is retried here).
static int ax_recv(void *sock, ax_multipart *mp, int flags, int *err) {
	for (;;) {
		if (mp->n == mp->cap) {
			int ncap = mp->cap ? mp->cap * 2 : 8;
			zmq_msg_t *nm = (zmq_msg_t *)malloc(sizeof(zmq_msg_t) * (size_t)ncap);
			if (!nm) { *err = ENOMEM; return -1; }
			for (int i = 0; i < mp->n; i++) {
				zmq_msg_init(&nm[i]);
				zmq_msg_move(&nm[i], &mp->msgs[i]);
				zmq_msg_close(&mp->msgs[i]);
			}
			free(mp->msgs);
			mp->msgs = nm;
			mp->cap = ncap;
		}
		zmq_msg_t *m = &mp->msgs[mp->n];
		zmq_msg_init(m);
		int rc;
		do {
			rc = zmq_msg_recv(m, sock, mp->n == 0 ? flags : 0);
		} while (rc < 0 && zmq_errno() == EINTR);
		if (rc < 0) {
			*err = zmq_errno();
			zmq_msg_close(m);
			return -1;
		}
		mp->n++;
		if (!zmq_msg_more(m)) return 0;
	}
}

static void ax_close(ax_multipart *mp) {
	for (int i = 0; i < mp->n; i++) zmq_msg_close(&mp->msgs[i]);
	free(mp->msgs);
	mp->msgs = NULL;
	mp->n = mp->cap = 0;
}

static void *ax_data(ax_multipart *mp, int i) { return zmq_msg_data(&mp->msgs[i]); }
static size_t ax_size(ax_multipart *mp, int i) { return zmq_msg_size(&mp->msgs[i]); }

// ax_forward moves one whole multipart message from src to dst without
// copying frame bytes. The first frame is received with flags.
static int ax_forward(void *src, void *dst, int flags, int *err) {
	zmq_msg_t m;
	int first = 1;
	for (;;) {
		zmq_msg_init(&m);
		int rc;
		do {
			rc = zmq_msg_recv(&m, src, first ? flags : 0);
		} while (rc < 0 && zmq_errno() == EINTR);
		if (rc < 0) { *err = zmq_errno(); zmq_msg_close(&m); return -1; }
		first = 0;
		int more = zmq_msg_more(&m);
		do {
			rc = zmq_msg_send(&m, dst, more ? ZMQ_SNDMORE : 0);
		} while (rc < 0 && zmq_errno() == EINTR);
		if (rc < 0) {
			*err = zmq_errno();
			zmq_msg_close(&m);
			// Drain the rest of this message so src stays aligned on
			// message boundaries.
			while (more) {
				zmq_msg_init(&m);
				if (zmq_msg_recv(&m, src, 0) < 0) { zmq_msg_close(&m); break; }
				more = zmq_msg_more(&m);
				zmq_msg_close(&m);
			}
			return -1;
		}
		if (!more) return 0;
	}
}
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	zmq "github.com/pebbe/zmq4"
)

var live atomic.Int64

// Live returns how many Multiparts are received and not yet closed.
func Live() int64 { return live.Load() }

// raw returns the libzmq socket handle inside a zmq4 Socket.
func raw(s *zmq.Socket) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(s))
}

// Multipart is one received multipart message whose frames stay in libzmq's
// buffers until Close.
type Multipart struct {
	mp C.ax_multipart
}

// Recv receives one whole multipart message from s. With dontWait it returns
// an error wrapping syscall.EAGAIN when nothing is queued.
func Recv(s *zmq.Socket, dontWait bool) (*Multipart, error) {
	m := &Multipart{}
	var flags C.int
	if dontWait {
		flags = C.ZMQ_DONTWAIT
	}
	var errno C.int
	if C.ax_recv(raw(s), &m.mp, flags, &errno) != 0 {
		C.ax_close(&m.mp)
		return nil, fmt.Errorf("zframe: recv: %w", syscall.Errno(errno))
	}
	live.Add(1)
	return m, nil
}

// Len returns the number of frames.
func (m *Multipart) Len() int { return int(m.mp.n) }

// Frame returns frame i in place. The slice aliases C memory owned by m: it
// is valid until m.Close and must not be retained or written.
func (m *Multipart) Frame(i int) []byte {
	if i < 0 || i >= int(m.mp.n) {
		panic(fmt.Sprintf("zframe: frame %d of %d", i, m.mp.n))
	}
	n := int(C.ax_size(&m.mp, C.int(i)))
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(C.ax_data(&m.mp, C.int(i))), n)
}

// FrameSize returns the length of frame i without making a slice.
func (m *Multipart) FrameSize(i int) int { return int(C.ax_size(&m.mp, C.int(i))) }

// Close frees every frame. It is safe to call more than once.
func (m *Multipart) Close() {
	if m == nil || m.mp.msgs == nil {
		return
	}
	C.ax_close(&m.mp)
	live.Add(-1)
}

// Forward moves one whole multipart message from src to dst without copying
// its bytes. With dontWait it returns an error wrapping syscall.EAGAIN when
// src has nothing queued.
func Forward(src, dst *zmq.Socket, dontWait bool) error {
	var flags C.int
	if dontWait {
		flags = C.ZMQ_DONTWAIT
	}
	var errno C.int
	if C.ax_forward(raw(src), raw(dst), flags, &errno) != 0 {
		return fmt.Errorf("zframe: forward: %w", syscall.Errno(errno))
	}
	return nil
}

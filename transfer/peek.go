//go:build unix

package transfer

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// PeekIdle looks at a connection that should have nothing to read (a lane
// or bulk stream between transfers) without blocking or consuming a byte:
// closed when its peer closed it or it broke, pending when bytes wait.
// Connections without a file descriptor report neither.
func PeekIdle(conn net.Conn) (closed, pending bool) {
	sc, ok := Underlying(conn).(syscall.Conn) // (a TLS link: its socket)
	if !ok {
		return false, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed, pending = n == 0, n > 0 // 0 bytes: the close
		case err != unix.EAGAIN && err != unix.EINTR:
			closed = true // a broken connection
		}
		return true
	})
	return closed, pending
}

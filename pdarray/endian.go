package pdarray

import "unsafe"

// nativeLittleEndian is checked once: the wire is little-endian and the
// zero-decode path (reinterpreting bytes as []T) is only right on such hosts.
var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func init() {
	if !nativeLittleEndian {
		panic("pdarray: Arktos requires a little-endian host (amd64, arm64, ...)")
	}
}

//go:build !amd64

package ops

import "unsafe"

// Other architectures run the Go loops.
const loneAsmBuilt = false

var loneKernelsBy [7]loneKernels

func markKeys2Asm(a, b unsafe.Pointer, n int, m0, m1, n0, n1, s0 uint64, ids, occ unsafe.Pointer) (bad bool) {
	panic("no assembly")
}

func markKeys3Asm(a, b, c unsafe.Pointer, n int, m0, m1, m2, n0, n1, n2, s0, s1 uint64, ids, occ unsafe.Pointer) (bad bool) {
	panic("no assembly")
}

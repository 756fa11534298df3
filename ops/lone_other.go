//go:build !amd64

package ops

// Other architectures run the Go loops.
const loneAsmBuilt = false

var loneKernelsBy [7]loneKernels

package ops

import "sync/atomic"

// simdCalls counts the calls of the vector kernels (simd_amd64.go), for
// tests that fail if a fast path silently stops being taken.
var simdCalls atomic.Uint64

// simdOff turns the vector kernels off, for tests that compare them with
// the plain loops.
var simdOff atomic.Bool

// SetSIMD turns the vector kernels on or off for this process (they are on
// where SIMDAvailable says so): off, every operation takes its plain loop,
// which gives the same answers; arktos-server --simd=false, and tests of
// the plain loops through a real server.
func SetSIMD(on bool) { simdOff.Store(!on) }

// SIMDCalls is how many times a vector kernel ran in this process.
func SIMDCalls() uint64 { return simdCalls.Load() }

// SIMDAvailable says whether this build has the vector kernels
// (GOEXPERIMENT=simd on amd64) and this CPU can run them (AVX-512).
func SIMDAvailable() (built, cpu bool) { return simdBuilt, simdCPU }

func simdOn() bool { return simdBuilt && simdCPU && !simdOff.Load() }

// SIMDOn says whether the vector kernels run now (built, this CPU, not
// turned off).
func SIMDOn() bool { return simdOn() }

//go:build !(goexperiment.simd && amd64)

package ops

import "github.com/arktos-dev/arktos/pdarray"

// Without GOEXPERIMENT=simd (or off amd64) there are no vector kernels:
// every caller takes its plain loop.

const simdBuilt = false

const simdCPU = false

func simdDone() { simdCalls.Add(1) }

func simdEnd() {}

func simdCompare(string, pdarray.DType, func(d, a, b []byte)) func(d, a, b []byte) { return nil }

func simdSumF64([]float64) (float64, bool) { return 0, false }

func simdSumI64([]int64) (int64, bool) { return 0, false }

func simdMinMaxF64([]float64, bool) (float64, bool, bool) { return 0, false, false }

func simdMinMaxI64([]int64, bool) (int64, bool) { return 0, false }

func simdArgMinMaxF64([]float64, bool) (int, bool) { return 0, false }

func simdArgMinMaxI64([]int64, bool) (int, bool) { return 0, false }

func simdRange[T Integer]([]T) (T, T, bool) { return 0, 0, false }

func simdUnaryF64(string, func(d, a []byte)) func(d, a []byte) { return nil }

func simdSumF32([]float32) (float64, bool) { return 0, false }

func simdSumI32([]int32) (int64, bool) { return 0, false }

func simdMinMaxF32([]float32, bool) (float32, bool, bool) { return 0, false, false }

func simdExtremum(string, pdarray.DType, func(d, a, b []byte)) func(d, a, b []byte) { return nil }

func simdFloorDivI64(d, a []int64, s int64, m uint64, sh uint, mod bool) int { return 0 }

func simdSqDevF64([]float64, float64) (float64, bool) { return 0, false }

func simdSelect64(d []uint64, c []uint8, a, b []uint64) int { return 0 }

func simdUnaryF32(string, func(d, a []byte)) func(d, a []byte) { return nil }

func simdMaskBits(m *[64]uint8) uint64 { return maskBits(m[:]) }

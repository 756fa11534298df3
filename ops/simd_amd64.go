//go:build goexperiment.simd && amd64

package ops

// AVX-512 kernels for the scans whose scalar Go loops run well below memory
// speed (10^7 float64 on one core of the 2-core VM, go test -bench SIMD):
// a comparison into a bool array 11.5 -> 5.3 ms (numpy 3.9), a float64 sum
// 7.5 -> 3.8 ms (numpy 6.0). Go has no auto-vectoriser; Go 1.26's
// experimental simd/archsimd package (GOEXPERIMENT=simd, which the Makefile
// sets) gives the vector instructions. A build without the experiment, or a
// CPU without AVX-512, takes the plain loops, which give the same bytes:
// ops tests run both and compare them bit for bit.

import (
	"simd/archsimd"

	"github.com/arktos-dev/arktos/pdarray"
)

const simdBuilt = true

// simdCPU: AVX-512 F, BW, DQ, VL and CD, which every kernel here needs.
var simdCPU = archsimd.X86.AVX512()

// simdCompare returns the vector kernel of a comparison of two arrays of
// dtype dt into a bool array, or nil where there is none (another op or
// dtype, or no AVX-512); plain, the scalar loop of the same comparison,
// takes the last elements short of a block of 64. a > b runs as b < a and
// a >= b as b <= a: the same answer for every value, NaN included (false
// both ways).
func simdCompare(op string, dt pdarray.DType, plain func(d, a, b []byte)) func(d, a, b []byte) {
	if !simdOn() || plain == nil {
		return nil
	}
	swap := op == ">" || op == ">="
	var k int // 0 <, 1 <=, 2 ==, 3 !=
	switch op {
	case "<", ">":
	case "<=", ">=":
		k = 1
	case "==":
		k = 2
	case "!=":
		k = 3
	default:
		return nil
	}
	switch dt {
	case dF64:
		return cmpKernel(swap, [4]func(d []uint8, x, y []float64) int{f64Less, f64LessEq, f64Eq, f64Ne}[k], plain)
	case dF32:
		return cmpKernel(swap, [4]func(d []uint8, x, y []float32) int{f32Less, f32LessEq, f32Eq, f32Ne}[k], plain)
	case dI64:
		return cmpKernel(swap, [4]func(d []uint8, x, y []int64) int{i64Less, i64LessEq, i64Eq, i64Ne}[k], plain)
	case dI32:
		return cmpKernel(swap, [4]func(d []uint8, x, y []int32) int{i32Less, i32LessEq, i32Eq, i32Ne}[k], plain)
	}
	return nil
}

// cmpKernel runs loop over whole blocks of 64 elements, then plain over the
// rest, on the bytes of a chunk.
func cmpKernel[T pdarray.Element](swap bool, loop func(d []uint8, x, y []T) int, plain func(d, a, b []byte)) func(d, a, b []byte) {
	return func(db, ab, bb []byte) {
		a, b := pdarray.BytesAs[T](ab), pdarray.BytesAs[T](bb)
		if swap {
			a, b = b, a
		}
		i := loop(db, a[:len(db)], b[:len(db)])
		simdCalls.Add(1)
		if i < len(db) {
			sz := len(ab) / max(len(db), 1)
			plain(db[i:], ab[i*sz:], bb[i*sz:])
		}
	}
}

// storeBools writes the 64 bits of w as bool bytes (bit j to d[j]) in one
// store.
func storeBools(d *[64]uint8, w uint64) {
	archsimd.BroadcastUint8x64(1).Masked(archsimd.Mask8x64FromBits(w)).Store(d)
}

// The loops: one function per dtype and comparison, so that the vector
// compare is inlined and unrolled (a call per block through a function value, or
// a loop over the block's vectors, made the float64 compare of 10^7
// elements 20-40% slower). Each returns how many
// elements it did: the whole blocks of 64.

func f64Less(d []uint8, x, y []float64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float64)(x[i:i+64]), (*[64]float64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[0:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[8:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[16:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[24:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[32:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[40:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[48:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[56:])).Less(archsimd.LoadFloat64x8((*[8]float64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f64LessEq(d []uint8, x, y []float64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float64)(x[i:i+64]), (*[64]float64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[0:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[8:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[16:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[24:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[32:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[40:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[48:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[56:])).LessEqual(archsimd.LoadFloat64x8((*[8]float64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f64Eq(d []uint8, x, y []float64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float64)(x[i:i+64]), (*[64]float64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[0:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[8:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[16:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[24:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[32:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[40:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[48:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[56:])).Equal(archsimd.LoadFloat64x8((*[8]float64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f64Ne(d []uint8, x, y []float64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float64)(x[i:i+64]), (*[64]float64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[0:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[8:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[16:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[24:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[32:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[40:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[48:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadFloat64x8((*[8]float64)(a[56:])).NotEqual(archsimd.LoadFloat64x8((*[8]float64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f32Less(d []uint8, x, y []float32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float32)(x[i:i+64]), (*[64]float32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[0:])).Less(archsimd.LoadFloat32x16((*[16]float32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[16:])).Less(archsimd.LoadFloat32x16((*[16]float32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[32:])).Less(archsimd.LoadFloat32x16((*[16]float32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[48:])).Less(archsimd.LoadFloat32x16((*[16]float32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f32LessEq(d []uint8, x, y []float32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float32)(x[i:i+64]), (*[64]float32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[0:])).LessEqual(archsimd.LoadFloat32x16((*[16]float32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[16:])).LessEqual(archsimd.LoadFloat32x16((*[16]float32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[32:])).LessEqual(archsimd.LoadFloat32x16((*[16]float32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[48:])).LessEqual(archsimd.LoadFloat32x16((*[16]float32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f32Eq(d []uint8, x, y []float32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float32)(x[i:i+64]), (*[64]float32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[0:])).Equal(archsimd.LoadFloat32x16((*[16]float32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[16:])).Equal(archsimd.LoadFloat32x16((*[16]float32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[32:])).Equal(archsimd.LoadFloat32x16((*[16]float32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[48:])).Equal(archsimd.LoadFloat32x16((*[16]float32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func f32Ne(d []uint8, x, y []float32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]float32)(x[i:i+64]), (*[64]float32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[0:])).NotEqual(archsimd.LoadFloat32x16((*[16]float32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[16:])).NotEqual(archsimd.LoadFloat32x16((*[16]float32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[32:])).NotEqual(archsimd.LoadFloat32x16((*[16]float32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadFloat32x16((*[16]float32)(a[48:])).NotEqual(archsimd.LoadFloat32x16((*[16]float32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i64Less(d []uint8, x, y []int64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int64)(x[i:i+64]), (*[64]int64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[0:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[8:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[16:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[24:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[32:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[40:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[48:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[56:])).Less(archsimd.LoadInt64x8((*[8]int64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i64LessEq(d []uint8, x, y []int64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int64)(x[i:i+64]), (*[64]int64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[0:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[8:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[16:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[24:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[32:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[40:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[48:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[56:])).LessEqual(archsimd.LoadInt64x8((*[8]int64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i64Eq(d []uint8, x, y []int64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int64)(x[i:i+64]), (*[64]int64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[0:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[8:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[16:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[24:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[32:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[40:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[48:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[56:])).Equal(archsimd.LoadInt64x8((*[8]int64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i64Ne(d []uint8, x, y []int64) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int64)(x[i:i+64]), (*[64]int64)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[0:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[8:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[8:]))).ToBits()) << 8
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[16:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[24:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[24:]))).ToBits()) << 24
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[32:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[40:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[40:]))).ToBits()) << 40
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[48:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[48:]))).ToBits()) << 48
		w |= uint64(archsimd.LoadInt64x8((*[8]int64)(a[56:])).NotEqual(archsimd.LoadInt64x8((*[8]int64)(b[56:]))).ToBits()) << 56
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i32Less(d []uint8, x, y []int32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int32)(x[i:i+64]), (*[64]int32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[0:])).Less(archsimd.LoadInt32x16((*[16]int32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[16:])).Less(archsimd.LoadInt32x16((*[16]int32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[32:])).Less(archsimd.LoadInt32x16((*[16]int32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[48:])).Less(archsimd.LoadInt32x16((*[16]int32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i32LessEq(d []uint8, x, y []int32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int32)(x[i:i+64]), (*[64]int32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[0:])).LessEqual(archsimd.LoadInt32x16((*[16]int32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[16:])).LessEqual(archsimd.LoadInt32x16((*[16]int32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[32:])).LessEqual(archsimd.LoadInt32x16((*[16]int32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[48:])).LessEqual(archsimd.LoadInt32x16((*[16]int32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i32Eq(d []uint8, x, y []int32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int32)(x[i:i+64]), (*[64]int32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[0:])).Equal(archsimd.LoadInt32x16((*[16]int32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[16:])).Equal(archsimd.LoadInt32x16((*[16]int32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[32:])).Equal(archsimd.LoadInt32x16((*[16]int32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[48:])).Equal(archsimd.LoadInt32x16((*[16]int32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

func i32Ne(d []uint8, x, y []int32) int {
	i := 0
	for ; i+64 <= len(d); i += 64 {
		a, b := (*[64]int32)(x[i:i+64]), (*[64]int32)(y[i:i+64])
		var w uint64
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[0:])).NotEqual(archsimd.LoadInt32x16((*[16]int32)(b[0:]))).ToBits()) << 0
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[16:])).NotEqual(archsimd.LoadInt32x16((*[16]int32)(b[16:]))).ToBits()) << 16
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[32:])).NotEqual(archsimd.LoadInt32x16((*[16]int32)(b[32:]))).ToBits()) << 32
		w |= uint64(archsimd.LoadInt32x16((*[16]int32)(a[48:])).NotEqual(archsimd.LoadInt32x16((*[16]int32)(b[48:]))).ToBits()) << 48
		storeBools((*[64]uint8)(d[i:i+64]), w)
	}
	return i
}

// simdSumF64 is sum8plain of float64 with the eight accumulators in one
// vector: lane j adds x[j], x[j+8], ... in order, as a[j] does there, and
// the lanes are folded in the same order, so the sum has the same bits.
func simdSumF64(x []float64) (float64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Float64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadFloat64x8((*[8]float64)(x[i : i+8])))
	}
	var a [8]float64
	acc.Store(&a)
	s := ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
	for ; i < len(x); i++ {
		s += x[i]
	}
	simdCalls.Add(1)
	return s, true
}

// simdSumI64 is the wrapping sum of x, eight lanes at a time.
func simdSumI64(x []int64) (int64, bool) {
	if !simdOn() {
		return 0, false
	}
	var acc archsimd.Int64x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Add(archsimd.LoadInt64x8((*[8]int64)(x[i : i+8])))
	}
	var a [8]int64
	acc.Store(&a)
	s := a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
	for ; i < len(x); i++ {
		s += x[i]
	}
	simdCalls.Add(1)
	return s, true
}

// simdMaskBits is maskBits by one vector compare: bit j set where m[j] != 0.
func simdMaskBits(m *[64]uint8) uint64 {
	return archsimd.LoadUint8x64(m).NotEqual(archsimd.Uint8x64{}).ToBits()
}

package pdarray

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Array is a 1-D array that owns one 8-byte-aligned buffer.
type Array struct {
	dtype DType
	n     int
	buf   []byte // len == n*dtype.Size(); the Array owns it
}

// Alloc returns a zeroed array of n elements. It does not check any memory
// limit: the caller (the server's accountant) reserves the bytes first.
func Alloc(d DType, n int) (*Array, error) {
	return alloc(d, n, AlignedBytes)
}

// alloc makes an array of n elements of d in bytes(nbytes).
func alloc(d DType, n int, bytes func(int) []byte) (*Array, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("pdarray: invalid dtype %v", d)
	}
	if n < 0 {
		return nil, fmt.Errorf("pdarray: negative length %d", n)
	}
	nb, err := d.NBytes(uint64(n))
	if err != nil {
		return nil, err
	}
	return &Array{dtype: d, n: n, buf: bytes(nb)}, nil
}

// AlignedBytes returns a zeroed byte slice of length n whose first byte is
// 8-byte aligned (it is carved out of a []uint64), so typed views never
// straddle alignment.
func AlignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
	adviseHugePages(b)
	return b
}

// AllocUninit is Alloc for a caller that writes every byte before anything
// reads one (a download's destination): the bytes are not zeroed, so memory
// the Go heap reuses is neither cleared nor faulted in again.
func AllocUninit(d DType, n int) (*Array, error) {
	return alloc(d, n, UninitBytes)
}

// uninitMin is the least UninitBytes leaves unzeroed: below it clearing
// costs little, and the runtime's small size classes are not all 8-byte
// aligned.
const uninitMin = 64 << 10

// UninitAllocs counts buffers UninitBytes returned unzeroed (tests check
// that downloads take the path).
var UninitAllocs atomic.Uint64

// UninitBytes returns n bytes, 8-byte aligned, whose contents are undefined
// (what the Go heap last held there). Clearing 256 MiB the heap reuses costs
// as much as copying into it, so a download into new memory that must clear
// it first runs at half the speed of one into a reused buffer.
//
// Go has no public call for unzeroed memory; strings.Builder.Grow makes its
// buffer with the runtime's MakeNoZero (bytealg), so the buffer is taken
// from a Builder. The memory is an ordinary noscan heap object: the slice's
// pointer keeps it alive and the garbage collector frees it; the string the
// Builder made of it is dropped at once, so no string ever sees the bytes
// change. Were Grow ever to zero, this would only be slower (a test checks).
// Byte 0 is zero (written through the Builder).
func UninitBytes(n int) []byte { return uninitBytesUntil(n, nil) }

// AllocUninitUntil is AllocUninit whose pre-faulting of a large buffer
// stops early once stop returns true (a cancelled request's allocation:
// faulting in 400 MB takes a few hundred ms on a small VM); the array is
// valid either way.
func AllocUninitUntil(d DType, n int, stop func() bool) (*Array, error) {
	return alloc(d, n, func(nb int) []byte { return uninitBytesUntil(nb, stop) })
}

func uninitBytesUntil(n int, stop func() bool) []byte {
	if n < uninitMin {
		return AlignedBytes(n)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0) // so that String has a data pointer
	b := unsafe.Slice(unsafe.StringData(sb.String()), n)
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 { // large objects start on a page
		return AlignedBytes(n)
	}
	UninitAllocs.Add(1)
	adviseHugePagesUntil(b, stop)
	return b
}

// FromSlice copies data into a new Array.
func FromSlice[T Element](data []T) *Array {
	a, err := Alloc(DTypeOf[T](), len(data))
	if err != nil {
		panic(err) // unreachable: the dtype is valid and len(data) fits
	}
	copy(View[T](a), data)
	return a
}

// DType returns the array's element type.
func (a *Array) DType() DType { return a.dtype }

// Len returns the number of elements.
func (a *Array) Len() int { return a.n }

// NBytes returns the size of the element bytes.
func (a *Array) NBytes() int { return len(a.buf) }

// Bytes returns the array's own buffer (little-endian elements), not a copy.
// The caller must not keep it beyond the Array's lifetime assumptions of its
// owner and must not write to a stored (published) array.
func (a *Array) Bytes() []byte { return a.buf }

// View reinterprets the array's buffer as []T without copying. It panics when
// T does not match the array's dtype: that is a bug in the caller, which picks
// T from the dtype.
func View[T Element](a *Array) []T {
	if d := DTypeOf[T](); d != a.dtype {
		panic(fmt.Sprintf("pdarray: View[%v] of a %v array", d, a.dtype))
	}
	return BytesAs[T](a.buf)
}

// BytesAs reinterprets b as []T. b must be aligned for T and a whole number
// of elements long; the result aliases b.
func BytesAs[T Element](b []byte) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b) == 0 {
		return []T{}
	}
	if len(b)%size != 0 || uintptr(unsafe.Pointer(&b[0]))%uintptr(size) != 0 {
		panic(fmt.Sprintf("pdarray: %d bytes at %p are not a whole aligned number of %d-byte elements", len(b), &b[0], size))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
}

// AsBytes reinterprets data as its little-endian bytes without copying. The
// result aliases data.
func AsBytes[T Element](data []T) []byte {
	if len(data) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z)))
}

// Wrap makes an Array that takes ownership of buf, which must be aligned to
// 8 bytes (as AlignedBytes makes it) and exactly n*d.Size() long.
func Wrap(d DType, buf []byte) (*Array, error) {
	size := d.Size()
	if size == 0 {
		return nil, fmt.Errorf("pdarray: invalid dtype %v", d)
	}
	if len(buf)%size != 0 {
		return nil, fmt.Errorf("pdarray: %d bytes is not a whole number of %d-byte %v elements", len(buf), size, d)
	}
	if len(buf) > 0 && uintptr(unsafe.Pointer(&buf[0]))%8 != 0 {
		return nil, fmt.Errorf("pdarray: buffer is not 8-byte aligned")
	}
	return &Array{dtype: d, n: len(buf) / size, buf: buf}, nil
}

// ValidateBools reports the index of the first byte of b that is neither 0
// nor 1, or -1 when all are valid bool bytes.
func ValidateBools(b []byte) int {
	for i, v := range b {
		if v > 1 {
			return i
		}
	}
	return -1
}

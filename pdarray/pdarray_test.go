package pdarray

import (
	"math"
	"testing"
	"unsafe"
)

func TestDTypeTable(t *testing.T) {
	for _, d := range DTypes() {
		back, err := ParseDType(d.String())
		if err != nil || back != d {
			t.Fatalf("%v does not round-trip its name: %v", d, err)
		}
	}
	if _, err := ParseDType("complex64"); err == nil {
		t.Fatal("complex64 accepted")
	}
	sizes := map[DType]uintptr{
		Int8: unsafe.Sizeof(int8(0)), Int16: 2, Int32: 4, Int64: 8, Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
		Float32: 4, Float64: 8, Bool: unsafe.Sizeof(false),
	}
	for d, s := range sizes {
		if uintptr(d.Size()) != s {
			t.Errorf("%v size %d, want %d", d, d.Size(), s)
		}
	}
	if DTypeOf[float32]() != Float32 || DTypeOf[bool]() != Bool || DTypeOf[uint16]() != Uint16 {
		t.Fatal("DTypeOf")
	}
	if _, err := Int64.NBytes(math.MaxUint64 / 4); err == nil {
		t.Fatal("NBytes overflow not caught")
	}
}

func TestAlignmentAndViews(t *testing.T) {
	for n := 0; n < 40; n++ {
		a, err := Alloc(Float64, n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && uintptr(unsafe.Pointer(&a.Bytes()[0]))%8 != 0 {
			t.Fatalf("n=%d: buffer not 8-byte aligned", n)
		}
		v := View[float64](a)
		if len(v) != n || a.NBytes() != 8*n || a.Len() != n {
			t.Fatalf("n=%d: lengths %d %d", n, len(v), a.NBytes())
		}
		for i := range v {
			v[i] = float64(i) + 0.5
		}
		// The view aliases the buffer: no copy was made.
		if n > 0 && &AsBytes(v)[0] != &a.Bytes()[0] {
			t.Fatal("View copied")
		}
	}
	a := FromSlice([]int16{1, -2, 3})
	if got := BytesAs[int16](a.Bytes()); got[1] != -2 {
		t.Fatal(got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("View with the wrong type must panic")
		}
	}()
	View[int32](a)
}

func TestWrapAndBools(t *testing.T) {
	if _, err := Wrap(Int32, AlignedBytes(6)); err == nil {
		t.Fatal("6 bytes accepted as int32")
	}
	b := AlignedBytes(16)
	if _, err := Wrap(Int32, b[1:5]); err == nil {
		t.Fatal("misaligned buffer accepted")
	}
	a, err := Wrap(Uint16, b)
	if err != nil || a.Len() != 8 {
		t.Fatal(err)
	}
	if ValidateBools([]byte{0, 1, 1, 0}) != -1 || ValidateBools([]byte{0, 1, 2}) != 2 {
		t.Fatal("ValidateBools")
	}
}

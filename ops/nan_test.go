package ops

import (
	"math"
	"runtime"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestNaNBitsAsLibm: the float kernels built on Go's math answer NaN with
// C's bits (numpy's), not math.NaN()'s 0x7ff8000000000001: the FPU's
// default NaN for an invalid operation, a NaN argument's own bits.
func TestNaNBitsAsLibm(t *testing.T) {
	if runtime.GOARCH == "amd64" && math.Float64bits(invalidNaN) != 0xfff8000000000000 {
		t.Fatalf("default NaN %#x, want x86's 0xfff8000000000000", math.Float64bits(invalidNaN))
	}
	def := math.Float64bits(invalidNaN)
	payload := math.Float64frombits(0x7ff8000000000123)
	goNaN := math.NaN() // an argument with Go's own bits keeps them
	inf := math.Inf(1)
	unary := map[string][]float64{ // invalid arguments of each function
		"log": {-1}, "log1p": {-2}, "log2": {-1}, "log10": {-1}, "sin": {inf}, "cos": {-inf},
		"tan": {inf}, "arcsin": {2}, "arccos": {-2}, "arccosh": {0}, "arctanh": {2},
	}
	for op, bad := range unary {
		in := append(bad, payload, goNaN)
		want := []uint64{def, 0x7ff8000000000123, math.Float64bits(goNaN)}
		for _, f32 := range []bool{false, true} {
			got := unaryBits(t, op, in, f32)
			for i, w := range want {
				if f32 {
					w = uint64(math.Float32bits(float32(math.Float64frombits(w))))
				}
				if got[i] != w {
					t.Errorf("%s(%v) float32=%v: bits %#x, want %#x", op, in[i], f32, got[i], w)
				}
			}
		}
	}
	// Binary: fmod, %, // and ** of invalid operands; a NaN operand's bits,
	// the first one's when both are NaN; copysign keeps the payload.
	negPayload := math.Float64frombits(0xfff8000000000456)
	cases := []struct {
		op   string
		x, y float64
		want uint64
	}{
		{"fmod", inf, 3, def}, {"fmod", 3, 0, def}, {"%", inf, 3, def}, {"%", 3, 0, def},
		{"//", inf, 3, def}, {"**", -2, 0.3, def}, {"float_power", -2, 0.3, def},
		{"arctan2", payload, 1, 0x7ff8000000000123}, {"hypot", 1, negPayload, 0xfff8000000000456},
		{"fmod", payload, negPayload, 0x7ff8000000000123}, {"arctan2", negPayload, payload, 0xfff8000000000456},
		{"copysign", payload, -1, 0xfff8000000000123},
	}
	for _, c := range cases {
		got := binary[float64, float64](t, c.op, []float64{c.x}, []float64{c.y})
		if b := math.Float64bits(got[0]); b != c.want {
			t.Errorf("%v %s %v: bits %#x, want %#x", c.x, c.op, c.y, b, c.want)
		}
	}
}

func unaryBits(t *testing.T, op string, in []float64, f32 bool) []uint64 {
	t.Helper()
	var x *pdarray.Array
	if f32 {
		v := make([]float32, len(in))
		for i, f := range in {
			v[i] = float32(f)
		}
		x = pdarray.FromSlice(v)
	} else {
		x = pdarray.FromSlice(in)
	}
	rd, err := ResolveUnary(op, x.DType())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := pdarray.Alloc(rd, len(in))
	if err := Unary(PlainEnv(1), op, x, out); err != nil {
		t.Fatal(err)
	}
	bits := make([]uint64, len(in))
	for i := range bits {
		if f32 {
			bits[i] = uint64(math.Float32bits(pdarray.View[float32](out)[i]))
		} else {
			bits[i] = math.Float64bits(pdarray.View[float64](out)[i])
		}
	}
	return bits
}

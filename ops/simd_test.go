package ops

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// withPlain runs f with the vector kernels off: the plain loops' answer.
func withPlain(f func()) {
	simdOff.Store(true)
	defer simdOff.Store(false)
	f()
}

// TestSIMDTaken fails if the vector kernels silently stop running: when
// ARKTOS_REQUIRE_SIMD=1 (make test sets it, as make builds with
// GOEXPERIMENT=simd) the build must have them, and on a CPU with AVX-512 a
// comparison, a float64 sum, a mask count and a compress must each add to
// SIMDCalls.
func TestSIMDTaken(t *testing.T) {
	built, cpu := SIMDAvailable()
	if os.Getenv("ARKTOS_REQUIRE_SIMD") == "1" && !built {
		t.Fatal("built without the vector kernels: build and test with GOEXPERIMENT=simd (the Makefile does)")
	}
	if !built || !cpu {
		t.Skipf("vector kernels: built %v, AVX-512 %v; the plain loops run", built, cpu)
	}
	env := PlainEnv(2)
	x := pdarray.FromSlice(make([]float64, 100_000))
	out, _ := pdarray.Alloc(pdarray.Bool, x.Len())
	for _, step := range []struct {
		name string
		run  func()
	}{
		{"compare", func() { _ = Binary(env, ">", ArrayOperand(x), ScalarOperand(Scalar{K: 'f', F: 0.5}), out) }},
		{"sum", func() { _ = SumFloat64(2, pdarray.View[float64](x)) }},
		{"max", func() { _, _, _ = Reduce(env, "max", x, 0) }},
		{"argmin", func() { _, _, _ = Reduce(env, "argmin", x, 0) }},
		{"key range", func() { _, _, _ = intKeyRange(env, pdarray.FromSlice(make([]int64, 1000))) }},
		{"floor", func() { o, _ := pdarray.Alloc(pdarray.Float64, x.Len()); _ = Unary(env, "floor", x, o) }},
		{"where", func() {
			o, _ := pdarray.Alloc(pdarray.Float64, x.Len())
			_ = Where(env, out, ArrayOperand(x), ArrayOperand(x), o)
		}},
		{"int sum", func() { _, _, _ = Reduce(env, "sum", pdarray.FromSlice(make([]int64, 1000)), 0) }},
		{"count", func() { CountTrue(env, out) }},
		{"compress", func() {
			o, _ := pdarray.Alloc(pdarray.Float64, CountTrue(env, out))
			CompressWith(env, x, out, []int{0, o.Len()}, o)
		}},
	} {
		before := SIMDCalls()
		step.run()
		if SIMDCalls() == before {
			t.Errorf("%s: no vector kernel ran (SIMDCalls unchanged)", step.name)
		}
	}
}

// TestSIMDCompareAsLoops checks every vector comparison against the plain
// loop byte for byte: four dtypes, six operators, array against array and
// against a scalar, NaN, infinities, signed zeros and the integer extremes,
// lengths around the 64-element block and the 4096-element chunk, 1 and 2
// workers.
func TestSIMDCompareAsLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 63, 64, 65, 200, 4096 + 77, 3*minPar + 5} {
		for _, dt := range []pdarray.DType{pdarray.Float64, pdarray.Float32, pdarray.Int64, pdarray.Int32, pdarray.Uint64, pdarray.Int8} {
			a, b := specialArray(rng, dt, n), specialArray(rng, dt, n)
			var s Scalar
			if Kind(dt) == 'f' {
				s = Scalar{K: 'f', F: 0.5}
			} else {
				s = Scalar{K: 'i', I: 3}
			}
			for _, op := range []string{"<", "<=", ">", ">=", "==", "!="} {
				for _, sc := range []bool{false, true} {
					for _, w := range []int{1, 2} {
						bo := ArrayOperand(b)
						if sc {
							bo = ScalarOperand(s)
						}
						got, _ := pdarray.Alloc(pdarray.Bool, n)
						want, _ := pdarray.Alloc(pdarray.Bool, n)
						if err := Binary(PlainEnv(w), op, ArrayOperand(a), bo, got); err != nil {
							t.Fatal(err)
						}
						withPlain(func() { _ = Binary(PlainEnv(w), op, ArrayOperand(a), bo, want) })
						if !slices.Equal(got.Bytes(), want.Bytes()) {
							t.Fatalf("%v %s (scalar %v) n=%d workers=%d: the vector kernel differs from the loop", dt, op, sc, n, w)
						}
					}
				}
			}
		}
	}
}

// specialArray is n random values of dt, a third of them the dtype's
// special values (NaN, +-Inf, +-0, extremes) and many repeated, so that
// every comparison meets equal, NaN and boundary pairs.
func specialArray(rng *rand.Rand, dt pdarray.DType, n int) *pdarray.Array {
	a, _ := pdarray.Alloc(dt, n)
	switch dt {
	case pdarray.Float64:
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.5, math.MaxFloat64, -math.SmallestNonzeroFloat64}
		for i, x := range pdarray.View[float64](a) {
			_ = x
			pdarray.View[float64](a)[i] = pick(rng, specials, float64(rng.IntN(5))/2)
		}
	case pdarray.Float32:
		specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 0.5, math.MaxFloat32}
		for i := range pdarray.View[float32](a) {
			pdarray.View[float32](a)[i] = pick(rng, specials, float32(rng.IntN(5))/2)
		}
	case pdarray.Int64:
		specials := []int64{math.MinInt64, math.MaxInt64, 0, -1, 3}
		for i := range pdarray.View[int64](a) {
			pdarray.View[int64](a)[i] = pick(rng, specials, int64(rng.IntN(7))-3)
		}
	case pdarray.Int32:
		specials := []int32{math.MinInt32, math.MaxInt32, 0, -1, 3}
		for i := range pdarray.View[int32](a) {
			pdarray.View[int32](a)[i] = pick(rng, specials, int32(rng.IntN(7))-3)
		}
	case pdarray.Uint64:
		specials := []uint64{math.MaxUint64, 1 << 63, 0, 3}
		for i := range pdarray.View[uint64](a) {
			pdarray.View[uint64](a)[i] = pick(rng, specials, uint64(rng.IntN(7)))
		}
	case pdarray.Int8:
		specials := []int8{math.MinInt8, math.MaxInt8, 0, 3}
		for i := range pdarray.View[int8](a) {
			pdarray.View[int8](a)[i] = pick(rng, specials, int8(rng.IntN(7))-3)
		}
	}
	return a
}

func pick[T any](rng *rand.Rand, specials []T, other T) T {
	if rng.IntN(3) == 0 {
		return specials[rng.IntN(len(specials))]
	}
	return other
}

// TestSIMDSumAsLoop checks the vector float64 sum against the plain
// eight-accumulator loop bit for bit (lengths off the 8-lane and the block
// boundaries, values of mixed magnitude whose sum depends on the order of
// the additions), and both against sum8, the reference of the sums' order.
func TestSIMDSumAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 1000, sumBlock - 1, sumBlock*3 + 5, 200_003} {
		x := make([]float64, n)
		for i := range x {
			x[i] = (rng.Float64() - 0.3) * math.Pow(10, float64(rng.IntN(30)-15))
		}
		for _, w := range []int{1, 2, 8} {
			got := SumFloat64(w, x)
			var want float64
			withPlain(func() { want = SumFloat64(w, x) })
			ref := 0.0
			for b := 0; b < n; b += sumBlock {
				ref += sum8(x[b:min(n, b+sumBlock)], func(v float64) float64 { return v })
			}
			if math.Float64bits(got) != math.Float64bits(want) || math.Float64bits(want) != math.Float64bits(ref) {
				t.Fatalf("n=%d workers=%d: vector %v, loop %v, reference %v", n, w, got, want, ref)
			}
		}
	}
	for _, n := range []int{0, 7, 9, 100_003} { // int64 sums wrap: the vector lanes must too
		x := make([]int64, n)
		for i := range x {
			x[i] = int64(rng.Uint64())
		}
		var want int64
		for _, v := range x {
			want += v
		}
		for _, w := range []int{1, 2} {
			got, _, err := Reduce(PlainEnv(w), "sum", pdarray.FromSlice(x), 0)
			if err != nil || got != want {
				t.Fatalf("int64 sum n=%d workers=%d: %v (%v), want %d", n, w, got, err, want)
			}
		}
	}
	for _, n := range []int{0, 7, 9, 1000, sumBlock*2 + 3, 100_003} { // float32 and int32, widened
		f := make([]float32, n)
		i32 := make([]int32, n)
		for i := range f {
			f[i] = float32((rng.Float64() - 0.3) * math.Pow(10, float64(rng.IntN(20)-10)))
			i32[i] = int32(rng.Uint32())
		}
		if n > 5 {
			f[3], f[4] = float32(math.Inf(1)), math.MaxFloat32
		}
		for _, a := range []*pdarray.Array{pdarray.FromSlice(f), pdarray.FromSlice(i32)} {
			for _, w := range []int{1, 2} {
				got, _, err := Reduce(PlainEnv(w), "sum", a, 0)
				var want any
				withPlain(func() { want, _, _ = Reduce(PlainEnv(w), "sum", a, 0) })
				if g, ok := got.(float64); ok {
					if err != nil || math.Float64bits(g) != math.Float64bits(want.(float64)) {
						t.Fatalf("%v sum n=%d workers=%d: %v, loop %v", a.DType(), n, w, got, want)
					}
				} else if err != nil || got != want {
					t.Fatalf("%v sum n=%d workers=%d: %v, loop %v", a.DType(), n, w, got, want)
				}
			}
		}
	}
	for _, n := range []int{1, 9, sumBlock + 5, 100_003} { // var and std: the squared deviations' sums
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()*1e3 + 7
		}
		for _, w := range []int{1, 2} {
			for _, op := range []string{"var", "std"} {
				got, _, _ := Reduce(PlainEnv(w), op, pdarray.FromSlice(x), 1)
				var want any
				withPlain(func() { want, _, _ = Reduce(PlainEnv(w), op, pdarray.FromSlice(x), 1) })
				if math.Float64bits(got.(float64)) != math.Float64bits(want.(float64)) && !(n == 1 && math.IsNaN(got.(float64))) {
					t.Fatalf("%s n=%d workers=%d: %v, loop %v", op, n, w, got, want)
				}
			}
		}
	}
	nan := []float64{1, math.NaN(), 2, 3, 4, 5, 6, 7, 8}
	if got := SumFloat64(1, nan); !math.IsNaN(got) {
		t.Fatalf("a sum with NaN gave %v", got)
	}
}

// TestSIMDMinMaxAsLoop checks min, max, argmin and argmax of float64 and
// float32 (NaN anywhere, signed zeros, infinities, ties) and int64 (ties)
// with the
// vector kernels against the plain loops, bit for bit and index for index,
// at 1 and 2 workers.
func TestSIMDMinMaxAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 63, 64, 65, 1000, 3*minPar + 9} {
		for trial := 0; trial < 6; trial++ {
			f := make([]float64, n)
			for i := range f {
				f[i] = rng.NormFloat64()
			}
			switch trial {
			case 1:
				f[rng.IntN(n)] = math.NaN()
			case 2: // zeros of both signs are the extremes
				for i := range f {
					f[i] = math.Copysign(0, float64(rng.IntN(2))-0.5)
				}
			case 3:
				f[rng.IntN(n)] = math.Inf(1)
				f[rng.IntN(n)] = math.Inf(-1)
			case 4: // -0 and +0 beside negatives (max) and positives (min)
				for i := range f {
					f[i] = -math.Abs(f[i]) - 1
				}
				f[rng.IntN(n)], f[rng.IntN(n)] = 0, math.Copysign(0, -1)
			}
			ints := make([]int64, n)
			for i := range ints {
				ints[i] = int64(rng.Uint64())
				if trial >= 4 { // few values: ties for the first occurrence
					ints[i] = int64(rng.IntN(5)) - 2
				}
			}
			for _, w := range []int{1, 2} {
				for _, op := range []string{"min", "max", "argmin", "argmax"} {
					f32 := make([]float32, n)
					for i, v := range f {
						f32[i] = float32(v)
					}
					for _, a := range []*pdarray.Array{pdarray.FromSlice(f), pdarray.FromSlice(ints), pdarray.FromSlice(f32)} {
						got, _, err := Reduce(PlainEnv(w), op, a, 0)
						var want any
						withPlain(func() { want, _, _ = Reduce(PlainEnv(w), op, a, 0) })
						gf, isF := got.(float64)
						if err != nil || (isF && math.Float64bits(gf) != math.Float64bits(want.(float64))) || (!isF && got != want) {
							t.Fatalf("%s of %v n=%d trial %d workers=%d: %v, loop %v (%v)", op, a.DType(), n, trial, w, got, want, err)
						}
					}
				}
			}
		}
	}
}

// TestSIMDRangeAsLoop checks a group-by's key range scan (minMaxInt) with
// the vector loops against the plain one: int64, int32 and int8 (the
// dtypes with a vector loop) and uint8 (without), extremes anywhere,
// lengths around the vector widths.
func TestSIMDRangeAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 127, 128, 129, 1000, 4099} {
		for _, dt := range []pdarray.DType{pdarray.Int64, pdarray.Int32, pdarray.Int8, pdarray.Uint8} {
			a := specialArray(rng, dt, n)
			if dt == pdarray.Uint8 {
				for i := range pdarray.View[uint8](a) {
					pdarray.View[uint8](a)[i] = uint8(rng.IntN(256))
				}
			}
			var lo, hi, wlo, whi uint64
			var ok, wok bool
			lo, hi, ok = intKeyRange(PlainEnv(1), a)
			withPlain(func() { wlo, whi, wok = intKeyRange(PlainEnv(1), a) })
			if lo != wlo || hi != whi || ok != wok {
				t.Fatalf("%v n=%d: range %d..%d, loop %d..%d", dt, n, lo, hi, wlo, whi)
			}
		}
	}
}

// TestSIMDMaskAsLoop checks the mask's count and the trues' positions with
// the vector kernels against the plain loops, including bool bytes past
// the last whole block.
func TestSIMDMaskAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 5, 64, 130, 3*minPar + 17} {
		m := make([]bool, n)
		for i := range m {
			m[i] = rng.IntN(4) == 0
		}
		mask := pdarray.FromSlice(m)
		for _, w := range []int{1, 2} {
			env := PlainEnv(w)
			offs := MaskOffsets(env, mask)
			var wantOffs []int
			withPlain(func() { wantOffs = MaskOffsets(env, mask) })
			if !slices.Equal(offs, wantOffs) {
				t.Fatalf("n=%d: offsets %v, loop %v", n, offs, wantOffs)
			}
			got, _ := pdarray.Alloc(pdarray.Int64, offs[len(offs)-1])
			want, _ := pdarray.Alloc(pdarray.Int64, offs[len(offs)-1])
			CompressPositions(env, mask, offs, got)
			withPlain(func() { CompressPositions(env, mask, offs, want) })
			if !slices.Equal(pdarray.View[int64](got), pdarray.View[int64](want)) {
				t.Fatalf("n=%d workers=%d: positions differ", n, w)
			}
		}
	}
}

// TestBoolWordsAsLoop checks the bool |, & and ^ eight bytes at a time
// against numpy's truth tables, at lengths off the word.
func TestBoolWordsAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 3, 8, 13, 4096 + 5} {
		x, y := make([]bool, n), make([]bool, n)
		for i := range x {
			x[i], y[i] = rng.IntN(2) == 0, rng.IntN(2) == 0
		}
		for _, op := range []string{"|", "&", "^", "+", "*"} {
			out, _ := pdarray.Alloc(pdarray.Bool, n)
			if err := Binary(PlainEnv(1), op, ArrayOperand(pdarray.FromSlice(x)), ArrayOperand(pdarray.FromSlice(y)), out); err != nil {
				t.Fatal(err)
			}
			for i, v := range pdarray.View[bool](out) {
				want := map[string]bool{"|": x[i] || y[i], "+": x[i] || y[i], "&": x[i] && y[i], "*": x[i] && y[i], "^": x[i] != y[i]}[op]
				if v != want || out.Bytes()[i] > 1 {
					t.Fatalf("%s n=%d at %d: %v", op, n, i, v)
				}
			}
		}
	}
}

// TestSIMDUnaryAsLoop checks the float64 and float32 vector unary kernels
// against the plain loops bit for bit: halves (round to even), signed zeros,
// infinities, the largest and smallest values, negatives under sqrt, and
// quiet NaNs with payloads and either sign.
func TestSIMDUnaryAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	specials := []float64{math.NaN(), math.Float64frombits(0x7ff8000000000abc), math.Float64frombits(0xfff8000000000001),
		math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.5, -0.5, 1.5, 2.5, -2.5, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, 4503599627370495.5, -1e-300, 1 << 53}
	for _, n := range []int{1, 7, 8, 9, 64, 65, 4096 + 3} {
		x := make([]float64, n)
		for i := range x {
			if rng.IntN(3) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			} else {
				x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-5))
			}
		}
		x32 := make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		for _, a := range []*pdarray.Array{pdarray.FromSlice(x), pdarray.FromSlice(x32)} {
			for _, op := range []string{"floor", "ceil", "trunc", "round", "abs", "fabs", "sqrt", "isnan"} {
				od, err := ResolveUnary(op, a.DType())
				if err != nil {
					t.Fatal(op, err)
				}
				got, _ := pdarray.Alloc(od, n)
				want, _ := pdarray.Alloc(od, n)
				if err := Unary(PlainEnv(1), op, a, got); err != nil {
					t.Fatal(err)
				}
				withPlain(func() { _ = Unary(PlainEnv(1), op, a, want) })
				if !slices.Equal(got.Bytes(), want.Bytes()) {
					for i := range n {
						if od.Size() == 8 && pdarray.View[uint64](got)[i] != pdarray.View[uint64](want)[i] {
							t.Fatalf("%s(%v) n=%d: vector %v, loop %v", op, x[i], n, pdarray.View[float64](got)[i], pdarray.View[float64](want)[i])
						}
					}
					t.Fatalf("%s of %v n=%d: the vector kernel differs from the loop", op, a.DType(), n)
				}
			}
		}
	}
}

// TestSIMDExtremumAsLoop checks maximum, minimum, fmax and fmin of float64
// and int64 arrays (with each other and with a scalar) against the plain
// loops bit for bit: NaN on either side, signed zeros, infinities.
func TestSIMDExtremumAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 8, 9, 64, 4096 + 5} {
		for _, dt := range []pdarray.DType{pdarray.Float64, pdarray.Int64} {
			a, b := specialArray(rng, dt, n), specialArray(rng, dt, n)
			for _, op := range []string{"maximum", "minimum", "fmax", "fmin", "clip_lo", "clip_hi"} {
				for _, bo := range []Operand{ArrayOperand(b), ScalarOperand(Scalar{K: 'i', I: 0})} {
					p, err := planBinary(op, ArrayOperand(a), bo)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := pdarray.Alloc(p.out, n)
					want, _ := pdarray.Alloc(p.out, n)
					if err := runBinary(PlainEnv(1), op, ArrayOperand(a), bo, got); err != nil {
						t.Fatal(err)
					}
					withPlain(func() { _ = runBinary(PlainEnv(1), op, ArrayOperand(a), bo, want) })
					if !slices.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("%s of %v n=%d (scalar %v): the vector kernel differs from the loop", op, dt, n, bo.Arr == nil)
					}
				}
			}
		}
	}
}

// TestWhereAsLoop checks where(c, a, b) for 1-, 2-, 4- and 8-byte
// elements (arrays and scalars on either side) against a plain loop, with
// the vector kernels on and off, at lengths around the 64-element block
// and the chunk, and conditions random, all true and all false.
func TestWhereAsLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{1, 63, 64, 65, 4096 + 130, 3*minPar + 7} {
		for _, dt := range []pdarray.DType{pdarray.Int8, pdarray.Int16, pdarray.Float32, pdarray.Float64, pdarray.Int64} {
			for _, density := range []int{0, 1, 2} {
				c := make([]bool, n)
				for i := range c {
					c[i] = density == 2 || (density == 1 && rng.IntN(2) == 0)
				}
				cond := pdarray.FromSlice(c)
				a, b := specialArray(rng, dt, n), specialArray(rng, dt, n)
				for _, ops := range [][2]Operand{{ArrayOperand(a), ArrayOperand(b)}, {ArrayOperand(a), ScalarOperand(Scalar{K: 'i', I: 3})},
					{ScalarOperand(Scalar{K: 'i', I: -2}), ArrayOperand(b)}} {
					for _, plain := range []bool{false, true} {
						got, _ := pdarray.Alloc(dt, n)
						run := func() {
							if err := Where(PlainEnv(2), cond, ops[0], ops[1], got); err != nil {
								t.Fatal(err)
							}
						}
						if plain {
							withPlain(run)
						} else {
							run()
						}
						sz := dt.Size()
						for i := range n {
							var want []byte
							if c[i] {
								want = elemBytes(ops[0], dt, i)
							} else {
								want = elemBytes(ops[1], dt, i)
							}
							if !slices.Equal(got.Bytes()[i*sz:(i+1)*sz], want) {
								t.Fatalf("%v n=%d plain=%v at %d: %v, want %v", dt, n, plain, i, got.Bytes()[i*sz:(i+1)*sz], want)
							}
						}
					}
				}
			}
		}
	}
}

// elemBytes is element i of an operand (an array of dtype dt, or a scalar
// converted to it) as bytes.
func elemBytes(o Operand, dt pdarray.DType, i int) []byte {
	if o.Arr == nil {
		return ScalarBytes(o.Sc, dt)
	}
	sz := dt.Size()
	return o.Arr.Bytes()[i*sz : (i+1)*sz]
}

// TestClipAsBinops checks the one-pass Clip against its two steps run one
// after the other (clip_lo, then clip_hi) bit for bit: float64 and int64 arrays with NaN and
// extremes, scalar and array bounds, either bound absent, bounds that
// promote (a float bound on an int array: cast to float64 first, then one
// pass), 1 and 2 workers.
func TestClipAsBinops(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	n := 3*minPar + 77
	for _, dt := range []pdarray.DType{pdarray.Float64, pdarray.Int64, pdarray.Int32} {
		a := specialArray(rng, dt, n)
		lob, hib := specialArray(rng, dt, n), specialArray(rng, dt, n)
		bounds := []struct {
			name   string
			lo, hi *Operand
		}{
			{"scalars", &Operand{Sc: Scalar{K: 'i', I: -1}}, &Operand{Sc: Scalar{K: 'i', I: 2}}},
			{"lo only", &Operand{Sc: Scalar{K: 'i', I: 0}}, nil},
			{"hi only", nil, &Operand{Sc: Scalar{K: 'i', I: 0}}},
			{"arrays", &Operand{Arr: lob}, &Operand{Arr: hib}},
			{"float bounds", &Operand{Sc: Scalar{K: 'f', F: -0.5}}, &Operand{Sc: Scalar{K: 'f', F: math.NaN()}}},
		}
		for _, bd := range bounds {
			for _, w := range []int{1, 2} {
				env := PlainEnv(w)
				rd, err := ResolveClip(ArrayOperand(a), bd.lo, bd.hi)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := pdarray.Alloc(rd, n)
				before := clipFused.Load()
				if err := Clip(env, ArrayOperand(a), bd.lo, bd.hi, got); err != nil {
					t.Fatal(err)
				}
				if fused := clipFused.Load() > before; !fused {
					t.Errorf("%v %s: not one pass", dt, bd.name)
				}
				x := ArrayOperand(a)
				loOp, hiOp := clipSteps(bd.lo, bd.hi)
				if bd.lo != nil {
					p1, _ := planBinary(loOp, x, *bd.lo)
					m, _ := pdarray.Alloc(p1.out, n)
					_ = runBinary(env, loOp, x, *bd.lo, m)
					x = ArrayOperand(m)
				}
				if bd.hi != nil {
					p2, _ := planBinary(hiOp, x, *bd.hi)
					m, _ := pdarray.Alloc(p2.out, n)
					_ = runBinary(env, hiOp, x, *bd.hi, m)
					x = ArrayOperand(m)
				}
				if x.Arr.DType() != rd || !slices.Equal(got.Bytes(), x.Arr.Bytes()) {
					t.Fatalf("%v %s workers=%d: clip differs from maximum then minimum (%v, %v)", dt, bd.name, w, rd, x.Arr.DType())
				}
			}
		}
	}
}

// TestClipPromotesTogether checks clip's dtype and values where the
// operands promote only together (numpy's three-operand ufunc), and its
// OverflowError for an integer bound past the common dtype.
func TestClipPromotesTogether(t *testing.T) {
	env := PlainEnv(2)
	i8, _ := pdarray.Alloc(pdarray.Int8, 3)
	copy(pdarray.View[int8](i8), []int8{1, 100, -5})
	i16, _ := pdarray.Alloc(pdarray.Int16, 3)
	copy(pdarray.View[int16](i16), []int16{400, 500, 250})
	f32, _ := pdarray.Alloc(pdarray.Float32, 3)
	copy(pdarray.View[float32](f32), []float32{50, 0.5, 2})
	weak := func(i int64) *Operand { return &Operand{Sc: Scalar{K: 'i', I: i}} }
	for _, c := range []struct {
		name   string
		lo, hi *Operand
		want   pdarray.DType
		vals   []float64
		err    bool
	}{
		{"int8, 300, int16", weak(300), &Operand{Arr: i16}, pdarray.Int16, []float64{300, 300, 250}, false},
		{"int8, 2.5, float32", &Operand{Sc: Scalar{K: 'f', F: 2.5}}, &Operand{Arr: f32}, pdarray.Float32, []float64{2.5, 0.5, 2}, false},
		{"int8, -300, 300", weak(-300), weak(300), pdarray.Int8, nil, true},
		{"int8, 300, none", weak(300), nil, pdarray.Int8, nil, true},
		{"int8, none, -300", nil, weak(-300), pdarray.Int8, nil, true},
	} {
		d, err := ResolveClip(ArrayOperand(i8), c.lo, c.hi)
		if err == nil {
			var out *pdarray.Array
			out, _ = pdarray.Alloc(d, 3)
			if err = Clip(env, ArrayOperand(i8), c.lo, c.hi, out); err == nil {
				got := make([]float64, 3)
				f64, _ := pdarray.Alloc(pdarray.Float64, 3)
				AsType(env, out, f64)
				copy(got, pdarray.View[float64](f64))
				if d != c.want || !slices.Equal(got, c.vals) {
					t.Errorf("%s: %v %v, want %v %v", c.name, d, got, c.want, c.vals)
				}
			}
		}
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want error %v", c.name, err, c.err)
		}
	}
}

// TestPromoteAll checks promoteAll against np.result_type where pairwise
// promotion differs.
func TestPromoteAll(t *testing.T) {
	for _, c := range []struct {
		ds   []pdarray.DType
		want pdarray.DType
	}{
		{[]pdarray.DType{pdarray.Int8, pdarray.Uint16, pdarray.Float32}, pdarray.Float32},
		{[]pdarray.DType{pdarray.Int32, pdarray.Float32}, pdarray.Float64},
		{[]pdarray.DType{pdarray.Bool, pdarray.Uint8, pdarray.Float32}, pdarray.Float32},
		{[]pdarray.DType{pdarray.Int8, pdarray.Uint64}, pdarray.Float64},
		{[]pdarray.DType{pdarray.Int8, pdarray.Uint16, pdarray.Int16}, pdarray.Int32},
	} {
		if got := promoteAll(c.ds); got != c.want {
			t.Errorf("%v: %v, want %v", c.ds, got, c.want)
		}
	}
}

package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

func TestPromote(t *testing.T) {
	cases := []struct{ a, b, want pdarray.DType }{
		{dBool, dI8, dI8}, {dI8, dU8, dI16}, {dU16, dI16, dI32}, {dU32, dI32, dI64}, {dU64, dI64, dF64},
		{dU64, dI8, dF64}, {dI16, dF32, dF32}, {dI32, dF32, dF64}, {dU8, dF32, dF32}, {dF32, dF64, dF64},
		{dU8, dU64, dU64}, {dI8, dI64, dI64}, {dBool, dBool, dBool},
	}
	for _, c := range cases {
		if got := Promote(c.a, c.b); got != c.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Promote(c.b, c.a); got != c.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func binary[T, R pdarray.Element](t *testing.T, op string, a, b []T) []R {
	t.Helper()
	x, y := pdarray.FromSlice(a), pdarray.FromSlice(b)
	rd, err := ResolveBinary(op, ArrayOperand(x), ArrayOperand(y))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := pdarray.Alloc(rd, len(a))
	if err := Binary(PlainEnv(3), op, ArrayOperand(x), ArrayOperand(y), out); err != nil {
		t.Fatal(err)
	}
	return pdarray.View[R](out)
}

func TestIntegerDivisionEdges(t *testing.T) {
	a := []int64{math.MinInt64, 7, -7, 7, -7, 5, 0}
	b := []int64{-1, 2, 2, -2, -2, 0, 0}
	if got, want := binary[int64, int64](t, "//", a, b), []int64{math.MinInt64, 3, -4, -4, 3, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("// = %v, want %v", got, want)
	}
	if got, want := binary[int64, int64](t, "%", a, b), []int64{0, 1, 1, -1, -1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("%% = %v, want %v", got, want)
	}
	if got, want := binary[int8, int8](t, "+", []int8{127, -128}, []int8{1, -1}), []int8{-128, 127}; !slices.Equal(got, want) {
		t.Errorf("int8 + wraps: %v, want %v", got, want)
	}
	if got, want := binary[int64, int64](t, "<<", []int64{1, 1, 3}, []int64{64, -1, 1}), []int64{0, 0, 6}; !slices.Equal(got, want) {
		t.Errorf("<< = %v, want %v", got, want)
	}
	if got, want := binary[int64, int64](t, ">>", []int64{-5, -5, 5}, []int64{64, -1, 100}), []int64{-1, -1, 0}; !slices.Equal(got, want) {
		t.Errorf(">> = %v, want %v", got, want)
	}
	if got, want := binary[int64, float64](t, "/", []int64{1, -1, 0}, []int64{0, 0, 0}), []float64{math.Inf(1), math.Inf(-1), math.NaN()}; got[0] != want[0] || got[1] != want[1] || !math.IsNaN(got[2]) {
		t.Errorf("/ = %v, want %v", got, want)
	}
}

func TestFloatFloorDivMod(t *testing.T) {
	negZero := math.Copysign(0, -1)
	a := []float64{-7, 7, 0, negZero, 5, negZero}
	b := []float64{2, 0, 0, -3, -3, 2}
	q := binary[float64, float64](t, "//", a, b)
	m := binary[float64, float64](t, "%", a, b)
	if q[0] != -4 || !math.IsInf(q[1], 1) || !math.IsNaN(q[2]) || q[3] != 0 || math.Signbit(q[3]) || q[4] != -2 {
		t.Errorf("// = %v", q)
	}
	if m[0] != 1 || !math.IsNaN(m[1]) || m[4] != -1 || m[5] != 0 || math.Signbit(m[5]) {
		t.Errorf("%% = %v", m)
	}
}

func TestCompareInt64Uint64Exact(t *testing.T) {
	x := pdarray.FromSlice([]int64{-1, 5, math.MaxInt64})
	y := pdarray.FromSlice([]uint64{0, 5, math.MaxUint64})
	out, _ := pdarray.Alloc(dBool, 3)
	if err := Binary(PlainEnv(1), "<", ArrayOperand(x), ArrayOperand(y), out); err != nil {
		t.Fatal(err)
	}
	if got := out.Bytes(); !slices.Equal(got, []byte{1, 0, 1}) {
		t.Errorf("int64 < uint64 = %v", got)
	}
}

func TestWeakScalarOverflow(t *testing.T) {
	x := pdarray.FromSlice([]uint8{1, 2})
	_, err := ResolveBinary("+", ArrayOperand(x), ScalarOperand(Scalar{K: 'i', I: -1}))
	var oe *Error
	if !errors.As(err, &oe) || oe.Kind != ErrOverflow {
		t.Fatalf("uint8 + -1: %v, want an overflow error", err)
	}
	d, err := ResolveBinary("+", ArrayOperand(x), ScalarOperand(Scalar{K: 'f', F: 1.5}))
	if err != nil || d != dF64 {
		t.Fatalf("uint8 + 1.5 = %v, %v; want float64", d, err)
	}
	if _, err := ResolveBinary("-", ArrayOperand(pdarray.FromSlice([]bool{true})), ScalarOperand(Scalar{K: 'b', B: true})); err == nil {
		t.Fatal("bool - bool must fail")
	}
}

func TestFloatSumDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 300_000)
	for i := range x {
		x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(12)))
	}
	// Serial reference with the same fixed blocks.
	ref := 0.0
	for b := 0; b < len(x); b += sumBlock {
		ref += sum8(x[b:min(len(x), b+sumBlock)], func(v float64) float64 { return v })
	}
	a := pdarray.FromSlice(x)
	for _, w := range []int{1, 2, 3, 8} {
		v, d, err := Reduce(PlainEnv(w), "sum", a, 0)
		if err != nil || d != dF64 {
			t.Fatal(err)
		}
		if math.Float64bits(v.(float64)) != math.Float64bits(ref) {
			t.Errorf("workers=%d: sum %v, serial reference %v", w, v, ref)
		}
	}
}

func TestReductionsEmptyAndNaN(t *testing.T) {
	empty := pdarray.FromSlice([]float64{})
	if v, _, _ := Reduce(PlainEnv(2), "sum", empty, 0); v.(float64) != 0 {
		t.Errorf("sum of empty = %v", v)
	}
	if v, _, _ := Reduce(PlainEnv(2), "prod", pdarray.FromSlice([]int32{}), 0); v.(int64) != 1 {
		t.Errorf("prod of empty = %v", v)
	}
	for _, op := range []string{"min", "max", "argmin", "argmax"} {
		if _, _, err := Reduce(PlainEnv(2), op, empty, 0); err == nil {
			t.Errorf("%s of empty did not fail", op)
		}
	}
	x := make([]float64, 100_000)
	x[70_000] = math.NaN()
	x[80_000] = -5
	a := pdarray.FromSlice(x)
	if v, _, _ := Reduce(PlainEnv(4), "min", a, 0); !math.IsNaN(v.(float64)) {
		t.Errorf("min with NaN = %v", v)
	}
	if v, _, _ := Reduce(PlainEnv(4), "argmin", a, 0); v.(int64) != 70_000 {
		t.Errorf("argmin with NaN = %v, want the NaN's index", v)
	}
	if v, _, _ := Reduce(PlainEnv(4), "count_nonzero", a, 0); v.(int64) != 2 {
		t.Errorf("count_nonzero = %v", v)
	}
	// numpy's max and min of an array with NaNs answer its quiet NaN
	// (0x7ff8000000000000), whatever the array's NaNs' bits; Go's
	// math.NaN() is 0x7ff8000000000001.
	x[70_000] = math.Float64frombits(0xfff8000000000000) // -nan, as numpy's -np.nan
	x[90_000] = math.Float64frombits(0x7ff8000000000001)
	a = pdarray.FromSlice(x)
	for _, op := range []string{"min", "max"} {
		if v, _, _ := Reduce(PlainEnv(4), op, a, 0); math.Float64bits(v.(float64)) != 0x7ff8000000000000 {
			t.Errorf("%s with NaN = %#x, want numpy's 0x7ff8000000000000", op, math.Float64bits(v.(float64)))
		}
	}
}

func TestScanParallelMatchesSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]int32, 200_000)
	for i := range x {
		x[i] = int32(r.Uint32())
	}
	out, _ := pdarray.Alloc(dI64, len(x))
	if err := Scan(PlainEnv(5), "cumsum", pdarray.FromSlice(x), out); err != nil {
		t.Fatal(err)
	}
	acc := int64(0)
	for i, v := range pdarray.View[int64](out) {
		acc += int64(x[i])
		if v != acc {
			t.Fatalf("cumsum[%d] = %d, want %d", i, v, acc)
		}
	}
}

func TestArgsortStableNaNLast(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 100_000} {
		x := make([]float64, n)
		for i := range x {
			switch r.IntN(10) {
			case 0:
				x[i] = math.NaN()
			case 1:
				x[i] = math.Copysign(0, -1)
			case 2:
				x[i] = math.Inf(-1)
			default:
				x[i] = float64(r.IntN(50)) - 25
			}
		}
		want := make([]int64, n)
		for i := range want {
			want[i] = int64(i)
		}
		less := func(a, b float64) bool { return a < b || (a == a && b != b) }
		sort.SliceStable(want, func(i, j int) bool { return less(x[want[i]], x[want[j]]) })
		for _, w := range []int{1, 3} {
			out, _ := pdarray.Alloc(dI64, n)
			if err := Argsort(PlainEnv(w), pdarray.FromSlice(x), out); err != nil {
				t.Fatal(err)
			}
			if got := pdarray.View[int64](out); !slices.Equal(got, want) {
				t.Fatalf("n=%d workers=%d: argsort differs from a stable sort", n, w)
			}
		}
	}
}

func TestSortInts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := make([]int16, 50_000)
	for i := range x {
		x[i] = int16(r.Uint32())
	}
	out, _ := pdarray.Alloc(dI16, len(x))
	if err := Sort(PlainEnv(2), pdarray.FromSlice(x), out); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(x)
	slices.Sort(want)
	if !slices.Equal(pdarray.View[int16](out), want) {
		t.Fatal("sort of int16 differs from slices.Sort")
	}
}

func TestUniqueAndIn1d(t *testing.T) {
	x := pdarray.FromSlice([]int64{5, 3, 5, -1, 3, 3})
	res, err := Unique(PlainEnv(2), x, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := pdarray.View[int64](res.Values); !slices.Equal(got, []int64{-1, 3, 5}) {
		t.Errorf("unique = %v", got)
	}
	if got := pdarray.View[int64](res.Counts); !slices.Equal(got, []int64{1, 3, 2}) {
		t.Errorf("counts = %v", got)
	}
	if got := pdarray.View[int64](res.Inverse); !slices.Equal(got, []int64{2, 1, 2, 0, 1, 1}) {
		t.Errorf("inverse = %v", got)
	}
	out, _ := pdarray.Alloc(dBool, 6)
	if err := In1d(PlainEnv(2), x, pdarray.FromSlice([]int8{3, 9}), false, out); err != nil {
		t.Fatal(err)
	}
	if got := out.Bytes(); !slices.Equal(got, []byte{0, 1, 0, 0, 1, 1}) {
		t.Errorf("in1d = %v", got)
	}
}

// TestUniqueBySort: Unique without the inverse (a sort of the values, then
// runs) gives the permutation path's values bit for bit (the first -0.0 or
// 0.0 in input order, the first NaN's payload) and counts, for floats with
// edge values, ints and bools, at 1 and 3 workers past the parallel
// threshold; and it is the path taken.
func TestUniqueBySort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	n := 3*minPar + 11
	f := floatSample(n, 4)
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(r.IntN(2000)) - 1000
	}
	bools := make([]bool, n)
	for i := range bools {
		bools[i] = r.IntN(3) == 0
	}
	f32 := make([]float32, n)
	for i, v := range f {
		f32[i] = float32(v)
	}
	for _, a := range []*pdarray.Array{pdarray.FromSlice(f), pdarray.FromSlice(f32), pdarray.FromSlice(ints),
		pdarray.FromSlice(bools), pdarray.FromSlice([]int8{}), pdarray.FromSlice([]uint16{7})} {
		for _, workers := range []int{1, 3} {
			env := PlainEnv(workers)
			before := uniqueSorts.Load()
			got, err := Unique(env, a, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if uniqueSorts.Load() == before {
				t.Fatal("Unique without the inverse did not sort the values")
			}
			want, err := Unique(env, a, true, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Values.Bytes(), want.Values.Bytes()) || !slices.Equal(got.Counts.Bytes(), want.Counts.Bytes()) {
				t.Fatalf("%v workers=%d: values or counts differ from the permutation path's", a.DType(), workers)
			}
		}
	}
}

func TestIndexing(t *testing.T) {
	a := pdarray.FromSlice([]float32{10, 11, 12, 13, 14})
	idx := pdarray.FromSlice([]int64{4, -1, 0})
	if err := CheckIndices(PlainEnv(1), idx, 5); err != nil {
		t.Fatal(err)
	}
	out, _ := pdarray.Alloc(dF32, 3)
	Take(PlainEnv(1), a, idx, out)
	if got := pdarray.View[float32](out); !slices.Equal(got, []float32{14, 14, 10}) {
		t.Errorf("take = %v", got)
	}
	err := CheckIndices(PlainEnv(1), pdarray.FromSlice([]int64{0, 5}), 5)
	if err == nil || err.Error() != "ops: index 5 is out of bounds for axis 0 with size 5" {
		t.Errorf("bad index: %v", err)
	}
	if err := CheckIndices(PlainEnv(1), pdarray.FromSlice([]int64{}), 0); err != nil {
		t.Errorf("empty index array: %v", err)
	}
	n := SliceLen(4, -1, -2)
	sl, _ := pdarray.Alloc(dF32, n)
	Slice(PlainEnv(1), a, 4, -2, sl)
	if got := pdarray.View[float32](sl); !slices.Equal(got, []float32{14, 12, 10}) {
		t.Errorf("a[::-2] = %v", got)
	}
	mask := pdarray.FromSlice([]bool{true, false, true, false, true})
	cm, _ := pdarray.Alloc(dF32, CountTrue(PlainEnv(1), mask))
	Compress(PlainEnv(1), a, mask, cm)
	if got := pdarray.View[float32](cm); !slices.Equal(got, []float32{10, 12, 14}) {
		t.Errorf("a[mask] = %v", got)
	}
	// Repeated indices: the last write wins.
	if err := Scatter(PlainEnv(2), a, pdarray.FromSlice([]int64{1, 1, -4}), ArrayOperand(pdarray.FromSlice([]float64{7, 8, 9}))); err != nil {
		t.Fatal(err)
	}
	if got := pdarray.View[float32](a)[1]; got != 9 {
		t.Errorf("scatter last write: %v", got)
	}
}

func TestRandomIndependentOfWorkers(t *testing.T) {
	var prev []int64
	for _, w := range []int{1, 2, 5} {
		out, _ := pdarray.Alloc(dI64, 300_000)
		RandInt(PlainEnv(w), out, -3, 10, 99)
		got := pdarray.View[int64](out)
		if prev != nil && !slices.Equal(prev, got) {
			t.Fatalf("workers=%d changed randint's values", w)
		}
		prev = slices.Clone(got)
	}
	for _, v := range prev {
		if v < -3 || v >= 10 {
			t.Fatalf("randint value %d outside [-3, 10)", v)
		}
	}
}

func TestHistogram(t *testing.T) {
	a := pdarray.FromSlice([]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	res, err := Histogram(PlainEnv(2), a, 5, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := pdarray.View[int64](res.Counts); !slices.Equal(got, []int64{2, 2, 2, 2, 3}) {
		t.Errorf("counts = %v", got)
	}
	if got := pdarray.View[float64](res.Edges); !slices.Equal(got, []float64{0, 2, 4, 6, 8, 10}) {
		t.Errorf("edges = %v", got)
	}
}

func TestArangeLinspace(t *testing.T) {
	n, err := ArangeLen(Scalar{K: 'f', F: 0}, Scalar{K: 'f', F: 1}, Scalar{K: 'f', F: 0.1})
	if err != nil || n != 10 {
		t.Fatalf("len(arange(0, 1, 0.1)) = %d, %v", n, err)
	}
	out, _ := pdarray.Alloc(dF64, n)
	Arange(PlainEnv(1), out, Scalar{K: 'f', F: 0}, Scalar{K: 'f', F: 0.1})
	if v := pdarray.View[float64](out)[3]; v != 0.30000000000000004 {
		t.Errorf("arange(0, 1, 0.1)[3] = %v, numpy gives 0.30000000000000004", v)
	}
	if n, _ := ArangeLen(Scalar{K: 'i', I: 10}, Scalar{K: 'i', I: -3}, Scalar{K: 'i', I: -2}); n != 7 {
		t.Errorf("len(arange(10, -3, -2)) = %d, want 7", n)
	}
}

// TestHistogramWorkers: every worker count gives the one-worker counts, the
// workers' counts come from env (a limit too small for them is an error that
// holds nothing), and only the result is left held.
func TestHistogramWorkers(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	xs := make([]float64, 300_000)
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	a := pdarray.FromSlice(xs)
	const bins = 1000
	want, err := Histogram(PlainEnv(1), a, bins, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 8} {
		env, used := limitEnv(w, 1<<30)
		res, err := Histogram(env, a, bins, false, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pdarray.View[int64](res.Counts), pdarray.View[int64](want.Counts)) {
			t.Fatalf("w=%d: counts differ from one worker's", w)
		}
		if u := used(); u != int64(bins*8+(bins+1)*8) {
			t.Fatalf("w=%d: %d bytes held, want the result's %d", w, u, bins*8+(bins+1)*8)
		}
		env, used = limitEnv(w, int64(bins*8+(bins+1)*8)) // room for the result only
		if _, err := Histogram(env, a, bins, false, 0, 0); err == nil || used() != 0 {
			t.Fatalf("w=%d: no room for the workers' counts gave err %v, %d bytes held", w, err, used())
		}
	}
}

// TestIn1dSets checks in1d's key sets (a bitmap over a small range, a
// hash table over a wide one, MaxUint64's key kept aside, NaN in nothing,
// -0.0 in {0.0}) against a map, with invert, at 1 and 2 workers.
func TestIn1dSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	n := 3*minPar + 5
	for _, c := range []struct {
		name string
		b    func() *pdarray.Array
		a    func() *pdarray.Array
		want func(a, b *pdarray.Array, i int) bool
	}{
		{"int64 narrow (bitmap)", func() *pdarray.Array { return pdarray.FromSlice(permInts(rng, 334, -100)) },
			func() *pdarray.Array {
				x := make([]int64, n)
				for i := range x {
					x[i] = int64(rng.IntN(1000)) - 120
				}
				return pdarray.FromSlice(x)
			}, nil},
		{"int64 wide (hash), extremes", func() *pdarray.Array {
			v := permInts(rng, 5000, 0)
			for i := range v {
				v[i] = v[i]*1_000_003 - 1<<40
			}
			v[0], v[1] = math.MaxInt64, math.MinInt64
			return pdarray.FromSlice(v)
		}, nil, nil},
		{"uint64 with MaxUint64 (hash)", func() *pdarray.Array { return pdarray.FromSlice([]uint64{math.MaxUint64, 7, 1 << 60}) },
			func() *pdarray.Array {
				x := make([]uint64, n)
				for i := range x {
					x[i] = []uint64{math.MaxUint64, 7, 1 << 60, 8, 0, math.MaxUint64 - 1}[rng.IntN(6)]
				}
				return pdarray.FromSlice(x)
			}, nil},
		{"float64 with NaN and zeros (hash)", func() *pdarray.Array {
			return pdarray.FromSlice([]float64{0, math.NaN(), 1.5, math.Inf(-1), 1e300})
		}, func() *pdarray.Array {
			x := make([]float64, n)
			for i := range x {
				x[i] = []float64{math.Copysign(0, -1), 0, math.NaN(), 1.5, 2.5, math.Inf(-1), math.Inf(1), 1e300}[rng.IntN(8)]
			}
			return pdarray.FromSlice(x)
		}, nil},
		{"empty set", func() *pdarray.Array { return pdarray.FromSlice([]int64{}) }, nil, nil},
	} {
		b := c.b()
		a := c.a
		if a == nil {
			a = func() *pdarray.Array { // half from b, half not
				x := make([]int64, n)
				bv := pdarray.View[int64](b)
				for i := range x {
					if len(bv) > 0 && rng.IntN(2) == 0 {
						x[i] = bv[rng.IntN(len(bv))]
					} else {
						x[i] = int64(rng.Uint64())
					}
				}
				return pdarray.FromSlice(x)
			}
		}
		av := a()
		want := make([]bool, n)
		switch av.DType() {
		case pdarray.Float64:
			in := map[float64]bool{}
			for _, v := range pdarray.View[float64](b) {
				in[v] = true // (NaN never matches a map key)
			}
			for i, v := range pdarray.View[float64](av) {
				want[i] = in[v]
			}
		case pdarray.Uint64:
			in := map[uint64]bool{}
			for _, v := range pdarray.View[uint64](b) {
				in[v] = true
			}
			for i, v := range pdarray.View[uint64](av) {
				want[i] = in[v]
			}
		default:
			in := map[int64]bool{}
			for _, v := range pdarray.View[int64](b) {
				in[v] = true
			}
			for i, v := range pdarray.View[int64](av) {
				want[i] = in[v]
			}
		}
		bk := make([]uint64, b.Len())
		keysOf(PlainEnv(1), b, nil, bk)
		slices.Sort(bk)
		set, release, _ := newKeySet(PlainEnv(1), bk)
		if wide := strings.Contains(c.name, "hash"); (set.slots != nil) != wide {
			t.Errorf("%s: the set is a bitmap %v, a table %v", c.name, set.bits != nil, set.slots != nil)
		}
		release()
		for _, w := range []int{1, 2} {
			for _, invert := range []bool{false, true} {
				out, _ := pdarray.Alloc(pdarray.Bool, n)
				if err := In1d(PlainEnv(w), av, b, invert, out); err != nil {
					t.Fatal(err)
				}
				for i, g := range pdarray.View[bool](out) {
					if g != (want[i] != invert) {
						t.Fatalf("%s workers=%d invert=%v at %d: %v", c.name, w, invert, i, g)
					}
				}
			}
		}
	}
}

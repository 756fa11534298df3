package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestCompressMasks checks the bit-word compress and the positions of the
// trues against a plain loop: masks from none to all true (with runs of all
// true, which take the block copy), lengths off the 64-element blocks, four
// element sizes and 1, 2 and 8 workers.
func TestCompressMasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, minPar*3 + 77} {
		for _, density := range []float64{0, 0.07, 0.5, 0.97, 1, -1} {
			m := make([]bool, n)
			for i := range m {
				if density < 0 { // runs: all-true and all-false blocks of 64 and more
					m[i] = (i/150)%2 == 0
				} else {
					m[i] = rng.Float64() < density
				}
			}
			mask := pdarray.FromSlice(m)
			var wantPos []int64
			for i, v := range m {
				if v {
					wantPos = append(wantPos, int64(i))
				}
			}
			for _, workers := range []int{1, 2, 8} {
				env := PlainEnv(workers)
				if got := CountTrue(env, mask); got != len(wantPos) {
					t.Fatalf("n=%d density=%v workers=%d: CountTrue = %d, want %d", n, density, workers, got, len(wantPos))
				}
				offs := MaskOffsets(env, mask)
				pos, _ := pdarray.Alloc(pdarray.Int64, len(wantPos))
				CompressPositions(env, mask, offs, pos)
				if got := pdarray.View[int64](pos); !slices.Equal(got, wantPos) && len(wantPos) > 0 {
					t.Fatalf("n=%d density=%v workers=%d: positions differ", n, density, workers)
				}
				checkMany(t, env, rng, mask, offs, wantPos)
				checkCompress[uint8](t, env, rng, mask, offs, wantPos)
				checkCompress[uint16](t, env, rng, mask, offs, wantPos)
				checkCompress[uint32](t, env, rng, mask, offs, wantPos)
				checkCompress[float64](t, env, rng, mask, offs, wantPos)
			}
		}
	}
}

func checkCompress[T uint8 | uint16 | uint32 | float64](t *testing.T, env Env, rng *rand.Rand, mask *pdarray.Array, offs []int, pos []int64) {
	t.Helper()
	x := make([]T, mask.Len())
	for i := range x {
		x[i] = T(rng.Uint32())
	}
	want := make([]T, len(pos))
	for k, i := range pos {
		want[k] = x[i]
	}
	a := pdarray.FromSlice(x)
	out, _ := pdarray.Alloc(a.DType(), len(pos))
	CompressWith(env, a, mask, offs, out)
	if got := pdarray.View[T](out); !slices.Equal(got, want) && len(want) > 0 {
		t.Fatalf("%v n=%d workers=%d: compress differs from the loop", a.DType(), mask.Len(), env.Workers)
	}
}

// BenchmarkCompress: 10^7 float64 by a random mask of 7% and 50% trues
// (bytes of values and mask read a second), one worker: a compress walking
// the mask, and CompressMany's two passes (positions, then a gather).
func BenchmarkCompress(b *testing.B) {
	const n = 10_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()
	}
	a := pdarray.FromSlice(x)
	for _, density := range []float64{0.07, 0.5} {
		m := make([]bool, n)
		for i := range m {
			m[i] = rng.Float64() < density
		}
		mask := pdarray.FromSlice(m)
		env := PlainEnv(1)
		out, _ := pdarray.Alloc(a.DType(), CountTrue(env, mask))
		name := map[float64]string{0.07: "7pct", 0.5: "50pct"}[density]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(n * 9))
			for b.Loop() {
				Compress(env, a, mask, out)
			}
		})
		offs := MaskOffsets(env, mask)
		pos, _ := pdarray.Alloc(pdarray.Int64, offs[len(offs)-1])
		b.Run(name+"-positions", func(b *testing.B) { // the trues' positions alone (one CompressMany's first pass)
			b.SetBytes(int64(n))
			for b.Loop() {
				CompressPositions(env, mask, offs, pos)
			}
		})
		b.Run(name+"-gather", func(b *testing.B) { // one array gathered by those positions
			b.SetBytes(int64(n * 8))
			for b.Loop() {
				Take(env, a, pos, out)
			}
		})
	}
}

// checkMany runs CompressMany on one array and on three, with and without
// the positions asked for, against the loop, and checks which path it took:
// gathering by positions unless one array is compressed alone with more
// than a quarter of the rows true, or there is no room for the positions.
func checkMany(t *testing.T, env Env, rng *rand.Rand, mask *pdarray.Array, offs []int, pos []int64) {
	t.Helper()
	n := len(pos)
	for _, k := range []int{1, 3} {
		for _, withPos := range []bool{false, true} {
			as := make([]*pdarray.Array, k)
			outs := make([]*pdarray.Array, k)
			wants := make([][]uint32, k)
			for i := range as {
				x := make([]uint32, mask.Len())
				for j := range x {
					x[j] = rng.Uint32()
				}
				as[i] = pdarray.FromSlice(x)
				outs[i], _ = pdarray.Alloc(as[i].DType(), n)
				for _, p := range pos {
					wants[i] = append(wants[i], x[p])
				}
			}
			var p *pdarray.Array
			if withPos {
				p, _ = pdarray.Alloc(pdarray.Int64, n)
			}
			gathered := CompressMany(env, as, mask, offs, outs, p)
			if want := withPos || k > 1 || 4*n <= mask.Len(); gathered != want {
				t.Errorf("n=%d trues=%d arrays=%d positions=%v: gathered %v, want %v", mask.Len(), n, k, withPos, gathered, want)
			}
			for i := range as {
				if got := pdarray.View[uint32](outs[i]); n > 0 && !slices.Equal(got, wants[i]) {
					t.Fatalf("n=%d arrays=%d positions=%v: array %d differs from the loop", mask.Len(), k, withPos, i)
				}
			}
			if withPos && n > 0 && !slices.Equal(pdarray.View[int64](p), pos) {
				t.Fatalf("n=%d: positions differ", mask.Len())
			}
		}
	}
}

// TestTakeMany: several arrays of four element sizes gathered by one index
// array (negative indices from the end, int32 and int64 indices) equal
// each one's Take, at 1, 2 and 8 workers, over more than one block; arrays
// in cache together (a block of indices at a time for all) and larger.
func TestTakeMany(t *testing.T) {
	for _, m := range []int{1000, takeCached / 8} {
		testTakeMany(t, m)
	}
}

func testTakeMany(t *testing.T, m int) {
	rng := rand.New(rand.NewPCG(7, 8))
	n := minPar*2 + takeBlock + 5
	x8 := make([]uint8, m)
	x16 := make([]int16, m)
	x32 := make([]float32, m)
	x64 := make([]float64, m)
	for i := range x8 {
		x8[i], x16[i], x32[i], x64[i] = uint8(i), int16(-i), float32(i)/3, float64(i)*1.5
	}
	as := []*pdarray.Array{pdarray.FromSlice(x8), pdarray.FromSlice(x16), pdarray.FromSlice(x32), pdarray.FromSlice(x64)}
	i64 := make([]int64, n)
	i32 := make([]int32, n)
	for j := range i64 {
		i64[j] = int64(rng.IntN(2*m) - m)
		i32[j] = int32(i64[j])
	}
	for _, idx := range []*pdarray.Array{pdarray.FromSlice(i64), pdarray.FromSlice(i32)} {
		for _, workers := range []int{1, 2, 8} {
			env := PlainEnv(workers)
			outs := make([]*pdarray.Array, len(as))
			for i, a := range as {
				outs[i], _ = pdarray.Alloc(a.DType(), n)
			}
			TakeMany(env, as, idx, outs)
			for i, a := range as {
				want, _ := pdarray.Alloc(a.DType(), n)
				for j := range i64 {
					k := int(i64[j])
					if k < 0 {
						k += m
					}
					sz := a.DType().Size()
					copy(want.Bytes()[j*sz:(j+1)*sz], a.Bytes()[k*sz:(k+1)*sz])
				}
				if !slices.Equal(outs[i].Bytes(), want.Bytes()) {
					t.Fatalf("%v by %v, %d workers: differs from the loop", a.DType(), idx.DType(), workers)
				}
			}
		}
	}
}

// TestCompressManyWithoutRoom: when the positions' scratch cannot be had,
// CompressMany compresses each array instead, with the same answer.
func TestCompressManyWithoutRoom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	n := minPar*2 + 100
	m := make([]bool, n)
	x := make([]float64, n)
	var want []float64
	for i := range m {
		m[i], x[i] = rng.IntN(10) == 0, rng.Float64()
		if m[i] {
			want = append(want, x[i])
		}
	}
	env := PlainEnv(2)
	env.Alloc = func(pdarray.DType, int) (*pdarray.Array, error) { return nil, errors.New("no room") }
	mask := pdarray.FromSlice(m)
	offs := MaskOffsets(env, mask)
	outs := []*pdarray.Array{pdarray.FromSlice(make([]float64, len(want))), pdarray.FromSlice(make([]float64, len(want)))}
	a := pdarray.FromSlice(x)
	if CompressMany(env, []*pdarray.Array{a, a}, mask, offs, outs, nil) {
		t.Error("gathered without room for the positions")
	}
	for _, o := range outs {
		if !slices.Equal(pdarray.View[float64](o), want) {
			t.Fatal("the compress without positions differs from the loop")
		}
	}
}

// BenchmarkFilterTable: df[df.fare > 40] of bench/groupby/dataframe.py's
// five taxi columns (10^7 rows; 7% true) on one worker, in its pieces: the
// mask, the mask's offsets, the trues' positions, the gathers, and all of
// CompressMany (outputs allocated beforehand).
func BenchmarkFilterTable(b *testing.B) {
	const n = 10_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	pick, drop, fare, dist := make([]int64, n), make([]int64, n), make([]float64, n), make([]float64, n)
	hour := make([]int8, n)
	m := make([]bool, n)
	for i := range pick {
		pick[i] = int64(265*math.Pow(rng.Float64(), 3)) + 1
		drop[i] = int64(265*math.Pow(rng.Float64(), 3)) + 1
		hour[i] = int8(rng.IntN(24))
		fare[i] = math.Round(rng.ExpFloat64()*1500) / 100
		dist[i] = math.Round(rng.ExpFloat64()*300) / 100
		m[i] = fare[i] > 40
	}
	as := []*pdarray.Array{pdarray.FromSlice(pick), pdarray.FromSlice(drop), pdarray.FromSlice(hour), pdarray.FromSlice(fare), pdarray.FromSlice(dist)}
	mask := pdarray.FromSlice(m)
	env := PlainEnv(1)
	offs := MaskOffsets(env, mask)
	k := offs[len(offs)-1]
	outs := make([]*pdarray.Array, 5)
	for i, a := range as {
		outs[i], _ = pdarray.Alloc(a.DType(), k)
	}
	b.Run("prealloc", func(b *testing.B) {
		for b.Loop() {
			CompressMany(env, as, mask, MaskOffsets(env, mask), outs, nil)
		}
	})
	b.Run("offsets", func(b *testing.B) {
		for b.Loop() {
			MaskOffsets(env, mask)
		}
	})
	pos, _ := pdarray.Alloc(pdarray.Int64, k)
	b.Run("positions", func(b *testing.B) {
		for b.Loop() {
			CompressPositions(env, mask, offs, pos)
		}
	})
	b.Run("takemany", func(b *testing.B) {
		for b.Loop() {
			TakeMany(env, as, pos, outs)
		}
	})
	b.Run("mask", func(b *testing.B) {
		fa := pdarray.FromSlice(fare)
		out, _ := pdarray.Alloc(pdarray.Bool, n)
		for b.Loop() {
			Binary(env, ">", ArrayOperand(fa), ScalarOperand(Scalar{K: 'f', F: 40}), out)
		}
	})
}

package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestDivConst checks the reciprocal division against Go's for divisors
// 1..2000, powers of two and their neighbours, and the extremes, on
// dividends at the edges (0, ±1, the extremes, multiples of d and their
// neighbours) and random ones.
func TestDivConst(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	ds := []uint64{math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, 1<<63 + 1, 3, 7, 10, 1000000007}
	for d := uint64(1); d <= 2000; d++ {
		ds = append(ds, d)
	}
	for k := 1; k < 64; k++ {
		ds = append(ds, 1<<k, 1<<k-1, 1<<k+1)
	}
	for _, d := range ds {
		c := newDivConst(d)
		us := []uint64{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, math.MaxUint64 / d * d, math.MaxUint64/d*d - 1}
		for range 200 {
			us = append(us, rng.Uint64(), rng.Uint64()>>rng.IntN(64))
		}
		for _, u := range us {
			if got := c.quo(u); got != u/d {
				t.Fatalf("%d / %d: %d, want %d", u, d, got, u/d)
			}
		}
	}
}

// TestIntDivByScalar checks int64 // s and % s for s > 0 against floor
// division and the plain loop: values anywhere (the reciprocal lane by
// lane) and values below 2^52 (the vector estimate and its correction:
// multiples of s and their neighbours, the bound's edges), signs, divisors
// up to MaxInt64, at lengths around the chunk.
func TestIntDivByScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const lim = 1 << 52 // the vector path's bound: blocks with a value past it go lane by lane
	for _, s := range []int64{1, 2, 3, 7, 10, 3600, 1 << 32, 1000000007, lim - 1, lim, lim + 1, 1 << 60, math.MaxInt64, math.MaxInt64 - 1} {
		for _, wide := range []bool{true, false} {
			n := 4096 + 77
			x := make([]int64, n)
			for i := range x {
				switch k := rng.IntN(4); {
				case wide && k == 0:
					x[i] = []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, 0, -1, 1, s, -s, s - 1, -s + 1, s + 1, -s - 1}[rng.IntN(12)]
				case wide && k == 1:
					x[i] = int64(rng.IntN(1000)) - 500
				case wide:
					x[i] = int64(rng.Uint64())
				case k == 0: // below the bound: multiples of s and their neighbours, the bound's edges
					q := rng.Int64N(lim/max(s, 1)+1) * s
					x[i] = []int64{q, q - 1, q + 1, -q, -q - 1, -q + 1, lim - 1, -(lim - 1), 0, -1}[rng.IntN(10)]
				case k == 1:
					x[i] = int64(rng.IntN(1000)) - 500
				default:
					x[i] = rng.Int64N(2*lim-1) - (lim - 1)
				}
				if !wide && (x[i] >= lim || x[i] <= -lim) {
					x[i] = 0
				}
			}
			a := pdarray.FromSlice(x)
			for _, op := range []string{"//", "%"} {
				sc := ScalarOperand(Scalar{K: 'i', I: s})
				got, _ := pdarray.Alloc(dI64, n)
				if err := Binary(PlainEnv(2), op, ArrayOperand(a), sc, got); err != nil {
					t.Fatal(err)
				}
				want := make([]int64, n)
				for i, v := range x {
					q := v / s
					if v%s != 0 && v < 0 {
						q--
					}
					if op == "//" {
						want[i] = q
					} else {
						want[i] = v - q*s
					}
				}
				loop, _ := pdarray.Alloc(dI64, n)
				withPlain(func() { _ = Binary(PlainEnv(2), op, ArrayOperand(a), sc, loop) })
				if !slices.Equal(pdarray.View[int64](loop), want) {
					t.Fatalf("%s %d: the plain loop differs from floor division", op, s)
				}
				if !slices.Equal(pdarray.View[int64](got), want) {
					for i := range want {
						if pdarray.View[int64](got)[i] != want[i] {
							t.Fatalf("%d %s %d: %d, want %d", x[i], op, s, pdarray.View[int64](got)[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestFloorDivEstimates checks // and % by a scalar where the float64
// estimate of the quotient is off by one (it is for about 1.5% of values
// near multiples of the divisor, more for divisors past 10^5): the
// correction by the remainder must bring every one back. It fails if no
// such value was met (the test would then check nothing).
func TestFloorDivEstimates(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	off := 0
	for trial := 0; trial < 300; trial++ {
		s := int64(rng.IntN(100000) + 2)
		if trial%3 == 0 {
			s = int64(rng.Uint64()>>12) + 2
		}
		inv := 1 / float64(s)
		x := make([]int64, 0, 800)
		for len(x) < 800 {
			q := rng.Int64N((1<<52)/s + 1)
			for _, v := range []int64{q * s, q*s - 1, q*s + s - 1, -q * s, -q*s - 1, -q*s + 1} {
				if v < 1<<52 && v > -(1<<52) {
					x = append(x, v)
				}
			}
		}
		x = x[:800]
		want := make([][]int64, 2)
		for _, v := range x {
			q := v / s
			if v%s != 0 && v < 0 {
				q--
			}
			if int64(math.Floor(float64(v)*inv)) != q {
				off++
			}
			want[0], want[1] = append(want[0], q), append(want[1], v-q*s)
		}
		for k, op := range []string{"//", "%"} {
			got, _ := pdarray.Alloc(dI64, len(x))
			if err := Binary(PlainEnv(1), op, ArrayOperand(pdarray.FromSlice(x)), ScalarOperand(Scalar{K: 'i', I: s}), got); err != nil {
				t.Fatal(err)
			}
			for i, g := range pdarray.View[int64](got) {
				if g != want[k][i] {
					t.Fatalf("%d %s %d: %d, want %d", x[i], op, s, g, want[k][i])
				}
			}
		}
	}
	if off == 0 {
		t.Fatal("no value whose float estimate is off: the corrections went untested")
	}
}

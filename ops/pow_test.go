package ops

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestPowIntegerExponents checks powDD against x^n computed in 256-bit
// big.Float arithmetic: within 1 ULP for integer exponents up to 2^14,
// where math.Pow (float64 squaring) drifts by thousands of ULP; and the
// case a differential run against numpy found (2975 ULP off before).
func TestPowIntegerExponents(t *testing.T) {
	exact := func(x float64, n int64) float64 {
		b := new(big.Float).SetPrec(256).SetFloat64(x)
		r := new(big.Float).SetPrec(256).SetFloat64(1)
		neg := n < 0
		if neg {
			n = -n
		}
		for ; n > 0; n >>= 1 {
			if n&1 == 1 {
				r.Mul(r, b)
			}
			b.Mul(b, b)
		}
		if neg {
			r.Quo(new(big.Float).SetPrec(256).SetFloat64(1), r)
		}
		f, _ := r.Float64()
		return f
	}
	ulps := func(a, b float64) int64 {
		d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
		return max(d, -d)
	}
	if got, want := powDD(-0.9677450778523389, 11091), exact(-0.9677450778523389, 11091); got != want {
		t.Fatalf("(-0.9677450778523389)^11091 = %v, want %v", got, want)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	worst := int64(0)
	for range 20000 {
		x := (rng.Float64()*4 - 2)
		n := rng.Int64N(1<<14) - 1<<12
		want := exact(x, n)
		if math.IsInf(want, 0) || want == 0 || math.Abs(want) < 0x1p-1022 {
			continue // (overflow, underflow and subnormals: math.Pow's own)
		}
		worst = max(worst, ulps(powDD(x, float64(n)), want))
	}
	if worst > 1 {
		t.Fatalf("integer powers up to %d ULP from the exact", worst)
	}
	// special operands are math.Pow's
	for _, c := range [][2]float64{{0, -1}, {math.Copysign(0, -1), 3}, {math.Inf(-1), 3}, {-2, 0.5}, {math.NaN(), 0}, {1, math.NaN()}, {-1, math.Inf(1)}, {2, 1e300}, {0.5, -1e300}} {
		got, want := powDD(c[0], c[1]), math.Pow(c[0], c[1])
		if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Errorf("pow(%v, %v) = %v, want %v", c[0], c[1], got, want)
		}
	}
}

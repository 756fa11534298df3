package ops

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// Run: go test -run '^$' -bench . -benchtime 5x ./ops/
// Each benchmark reports bytes/s over the bytes it reads and writes, and
// scratch-B/elem: what it takes from Env.Alloc beyond its output (the
// output itself is allocated once, outside the timed loop).

var sink any

var benchSizes = []int{1e7, 1e8}

func sizeName(n int) string {
	if n == 1e8 {
		return "1e8"
	}
	return fmt.Sprintf("%.0e", float64(n))
}

// countingEnv counts what kernels take from Alloc.
func countingEnv(scratch *int64) Env {
	e := PlainEnv(runtime.NumCPU())
	e.Alloc = func(d pdarray.DType, n int) (*pdarray.Array, error) {
		*scratch += int64(n * d.Size())
		return pdarray.Alloc(d, n)
	}
	return e
}

func randInts(n int, hi int64) *pdarray.Array {
	a, _ := pdarray.Alloc(dI64, n)
	RandInt(PlainEnv(runtime.NumCPU()), a, 0, hi, 1)
	return a
}

func BenchmarkAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("dtype=int64/n="+sizeName(n), func(b *testing.B) {
			x, y := randInts(n, 1<<40), randInts(n, 1<<40)
			out, _ := pdarray.Alloc(dI64, n)
			var scratch int64
			env := countingEnv(&scratch)
			b.SetBytes(int64(24 * n))
			b.ReportAllocs()
			for b.Loop() {
				if err := Binary(env, "+", ArrayOperand(x), ArrayOperand(y), out); err != nil {
					b.Fatal(err)
				}
			}
			sink = out
			b.ReportMetric(float64(scratch)/float64(b.N)/float64(n), "scratch-B/elem")
		})
	}
}

func BenchmarkSum(b *testing.B) {
	for _, n := range benchSizes {
		for _, d := range []pdarray.DType{dI64, dF64} {
			b.Run(fmt.Sprintf("dtype=%v/n=%s", d, sizeName(n)), func(b *testing.B) {
				x := randInts(n, 1<<40)
				if d == dF64 {
					f, _ := pdarray.Alloc(dF64, n)
					AsType(PlainEnv(runtime.NumCPU()), x, f)
					x = f
				}
				var scratch int64
				env := countingEnv(&scratch)
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					v, _, err := Reduce(env, "sum", x, 0)
					if err != nil {
						b.Fatal(err)
					}
					sink = v
				}
				b.ReportMetric(float64(scratch)/float64(b.N)/float64(n), "scratch-B/elem")
			})
		}
	}
}

func BenchmarkGather(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("dtype=int64/n="+sizeName(n), func(b *testing.B) {
			x := randInts(n, 1<<40)
			idx := randInts(n, int64(n))
			out, _ := pdarray.Alloc(dI64, n)
			var scratch int64
			env := countingEnv(&scratch)
			b.SetBytes(int64(24 * n))
			b.ReportAllocs()
			for b.Loop() {
				if err := CheckIndices(env, idx, n); err != nil {
					b.Fatal(err)
				}
				Take(env, x, idx, out)
			}
			sink = out
			b.ReportMetric(float64(scratch)/float64(b.N)/float64(n), "scratch-B/elem")
		})
	}
}

func BenchmarkArgsort(b *testing.B) {
	for _, n := range benchSizes {
		for _, keys := range []struct {
			name string
			hi   int64
		}{{"int64-range2^32", 1 << 32}, {"int64-full", -1}, {"float64-normal", 0}} {
			b.Run(fmt.Sprintf("dtype=%s/n=%s", keys.name, sizeName(n)), func(b *testing.B) {
				var x *pdarray.Array
				switch {
				case keys.hi > 0:
					x = randInts(n, keys.hi)
				case keys.hi == 0:
					x, _ = pdarray.Alloc(dF64, n)
					v := pdarray.View[float64](x)
					r := rand.New(rand.NewPCG(1, 2))
					for i := range v {
						v[i] = r.NormFloat64()
					}
				default:
					x, _ = pdarray.Alloc(dI64, n)
					v := pdarray.View[int64](x)
					r := rand.New(rand.NewPCG(1, 1))
					for i := range v {
						v[i] = int64(r.Uint64())
					}
				}
				out, _ := pdarray.Alloc(dI64, n)
				var scratch int64
				env := countingEnv(&scratch)
				b.SetBytes(int64(16 * n))
				b.ReportAllocs()
				for b.Loop() {
					if err := Argsort(env, x, out); err != nil {
						b.Fatal(err)
					}
				}
				sink = out
				b.ReportMetric(float64(scratch)/float64(b.N)/float64(n), "scratch-B/elem")
			})
		}
	}
}

// BenchmarkOrderStats: the median's two ranks of float64 normals by
// selection (OrderStats), beside a whole Sort of the same array (what the
// Python client's np.median used before selection): bytes are the array's.
func BenchmarkOrderStats(b *testing.B) {
	for _, n := range []int{1e6, 1e7} {
		x, _ := pdarray.Alloc(dF64, n)
		v := pdarray.View[float64](x)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range v {
			v[i] = r.NormFloat64()
		}
		b.Run(fmt.Sprintf("select/n=%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				got, _, err := OrderStats(PlainEnv(runtime.NumCPU()), x, []int{n/2 - 1, n / 2})
				if err != nil {
					b.Fatal(err)
				}
				sink = got
			}
		})
		b.Run(fmt.Sprintf("sort/n=%s", sizeName(n)), func(b *testing.B) {
			out, _ := pdarray.Alloc(dF64, n)
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				if err := Sort(PlainEnv(runtime.NumCPU()), x, out); err != nil {
					b.Fatal(err)
				}
			}
			sink = out
		})
	}
}

// BenchmarkFloatFunc: Go's math functions over 10^7 float64 normals, one
// worker, with their NaN answers given C's bits (nan.go).
func BenchmarkFloatFunc(b *testing.B) {
	const n = 1e7
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	x, y := pdarray.FromSlice(xs), pdarray.FromSlice(xs[:])
	out, _ := pdarray.Alloc(dF64, n)
	for _, op := range []string{"log", "sin", "exp"} {
		b.Run("unary="+op, func(b *testing.B) {
			b.SetBytes(16 * n)
			for b.Loop() {
				if err := Unary(PlainEnv(1), op, x, out); err != nil {
					b.Fatal(err)
				}
			}
			sink = out
		})
	}
	for _, op := range []string{"fmod", "arctan2", "%"} {
		b.Run("binary="+op, func(b *testing.B) {
			b.SetBytes(24 * n)
			for b.Loop() {
				if err := Binary(PlainEnv(1), op, ArrayOperand(x), ArrayOperand(y), out); err != nil {
					b.Fatal(err)
				}
			}
			sink = out
		})
	}
}

package ops

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/arktos-dev/arktos/pdarray"
)

// Fill sets every element of out to s converted to out's dtype (numpy's
// full: a Python int must fit an integer dtype).
func Fill(env Env, out *pdarray.Array, s Scalar) error {
	if err := checkFits(s, out.DType()); err != nil {
		return err
	}
	fillBytes(env, out, ScalarBytes(s, out.DType()))
	return nil
}

// ArangeLen returns the length of arange(start, stop, step) for scalars that
// are all integers (exact) or not (float64, as numpy computes it).
func ArangeLen(start, stop, step Scalar) (int, error) {
	if start.K == 'f' || stop.K == 'f' || step.K == 'f' {
		st, sp, sc := scalarAs[float64](start), scalarAs[float64](stop), scalarAs[float64](step)
		if sc == 0 {
			return 0, errorf(ErrValue, "arange: step must not be zero")
		}
		l := (sp - st) / sc
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return 0, errorf(ErrValue, "arange: cannot compute length of arange(%v, %v, %v)", st, sp, sc)
		}
		if l == 0 && sp-st != 0 {
			if math.Signbit(l) {
				return 0, nil
			}
			return 1, nil
		}
		n := math.Ceil(l)
		if n <= 0 {
			return 0, nil
		}
		if n > math.MaxInt32*64 {
			return 0, errorf(ErrValue, "arange: %g elements is too many", n)
		}
		return int(n), nil
	}
	b := func(s Scalar) *big.Int {
		if s.K == 'u' {
			return new(big.Int).SetUint64(s.U)
		}
		if s.K == 'b' {
			return big.NewInt(int64(b2u(s.B)))
		}
		return big.NewInt(s.I)
	}
	st, sp, sc := b(start), b(stop), b(step)
	if sc.Sign() == 0 {
		return 0, errorf(ErrValue, "arange: step must not be zero")
	}
	d := new(big.Int).Sub(sp, st)
	// ceil(d / sc)
	q, r := new(big.Int).QuoRem(d, sc, new(big.Int))
	if r.Sign() != 0 && (r.Sign() > 0) == (sc.Sign() > 0) {
		q.Add(q, big.NewInt(1))
	}
	if q.Sign() <= 0 {
		return 0, nil
	}
	if !q.IsInt64() || q.Int64() > math.MaxInt32*64 {
		return 0, errorf(ErrValue, "arange: %s elements is too many", q)
	}
	return int(q.Int64()), nil
}

// Arange fills out (length from ArangeLen) with start, start+step, ... For
// integer scalars values are exact in int64 (then cast to out's dtype); with
// any float scalar, numpy's float recipe: a[i] = start + i*((start+step)-start).
func Arange(env Env, out *pdarray.Array, start, step Scalar) {
	n := out.Len()
	od := out.DType()
	os := od.Size()
	dst := out.Bytes()
	isFloat := start.K == 'f' || step.K == 'f'
	ld := dI64
	if isFloat {
		ld = dF64
		if od == dF32 {
			ld = dF32
		}
	}
	env.parallel(n, chunk, func(_, lo, hi int) {
		buf := alignedBuf(chunk * 8)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			m := e - c
			var b []byte
			if ld == od {
				b = dst[c*os : e*os]
			} else {
				b = buf[:m*ld.Size()]
			}
			switch ld {
			case dI64:
				v := pdarray.BytesAs[int64](b)
				s0, st := scalarAs[int64](start), scalarAs[int64](step)
				for i := range v {
					v[i] = s0 + int64(c+i)*st
				}
			case dF64:
				arangeFloat(pdarray.BytesAs[float64](b), c, scalarAs[float64](start), scalarAs[float64](step))
			case dF32:
				arangeFloat(pdarray.BytesAs[float32](b), c, scalarAs[float32](start), scalarAs[float32](step))
			}
			if ld != od {
				castBytes(od, dst[c*os:e*os], ld, b)
			}
		}
	})
}

func arangeFloat[T Float](v []T, off int, start, step T) {
	next := start + step
	delta := next - start
	for i := range v {
		switch k := off + i; k {
		case 0:
			v[i] = start
		case 1:
			v[i] = next
		default:
			v[i] = start + T(k)*delta
		}
	}
}

// Linspace fills out (float64) with numpy's linspace(start, stop, len(out),
// endpoint).
func Linspace(env Env, out *pdarray.Array, start, stop float64, endpoint bool) {
	v := pdarray.View[float64](out)
	linspaceInto(env.workers(), v, start, stop, endpoint)
}

func linspaceInto[T Float](workers int, v []T, start, stop T, endpoint bool) {
	num := len(v)
	div := num
	if endpoint {
		div = num - 1
	}
	delta := stop - start
	parallel(workers, num, 1, func(_, lo, hi int) {
		if div > 0 {
			step := delta / T(div)
			if step == 0 {
				for i := lo; i < hi; i++ {
					v[i] = T(i)/T(div)*delta + start
				}
			} else {
				for i := lo; i < hi; i++ {
					v[i] = T(i)*step + start
				}
			}
		} else {
			for i := lo; i < hi; i++ {
				v[i] = T(i)*delta + start
			}
		}
	})
	if endpoint && num > 1 {
		v[num-1] = stop
	}
}

// randBlock is the element count each random stream covers: block k of a
// request with seed s draws from PCG(s, k), so the values depend only on the
// seed and the index, never on the worker count.
const randBlock = 1 << 16

func randomBlocks(env Env, n int, seed uint64, fill func(r *rand.Rand, lo, hi int)) {
	env.parallel(n, randBlock, func(_, lo, hi int) {
		for b := lo; b < hi; b += randBlock {
			r := rand.New(rand.NewPCG(seed, uint64(b/randBlock)))
			fill(r, b, min(hi, b+randBlock))
		}
	})
}

// RandInt fills out with integers uniform in [low, high) (low < high, both
// in range of out's dtype: the caller checks).
func RandInt(env Env, out *pdarray.Array, low, high int64, seed uint64) {
	RandIntTo(env, out, low, high-1, seed)
}

// RandIntTo is RandInt for [low, top], top included, so that the whole
// int64 range (numpy's randint(-2**63, 2**63)) can be asked for.
func RandIntTo(env Env, out *pdarray.Array, low, top int64, seed uint64) {
	span := uint64(top) - uint64(low) + 1 // 0: all 2^64 values
	od := out.DType()
	os := od.Size()
	dst := out.Bytes()
	randomBlocks(env, out.Len(), seed, func(r *rand.Rand, lo, hi int) {
		buf := alignedBuf(chunk * 8)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			v := pdarray.BytesAs[int64](buf[:(e-c)*8])
			if span == 0 {
				for i := range v {
					v[i] = int64(r.Uint64())
				}
			} else {
				for i := range v {
					v[i] = low + int64(r.Uint64N(span))
				}
			}
			castBytes(od, dst[c*os:e*os], dI64, buf[:(e-c)*8])
		}
	})
}

// RandUint64 fills a uint64 out with integers uniform in [low, high).
func RandUint64(env Env, out *pdarray.Array, low, high uint64, seed uint64) {
	v := pdarray.View[uint64](out)
	randomBlocks(env, out.Len(), seed, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			v[i] = low + r.Uint64N(high-low)
		}
	})
}

// Uniform fills a float64 out with low + (high-low)*U[0, 1).
func Uniform(env Env, out *pdarray.Array, low, high float64, seed uint64) {
	v := pdarray.View[float64](out)
	randomBlocks(env, out.Len(), seed, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			v[i] = low + (high-low)*r.Float64()
		}
	})
}

// StandardNormal fills a float64 out with N(0, 1) draws.
func StandardNormal(env Env, out *pdarray.Array, seed uint64) {
	v := pdarray.View[float64](out)
	randomBlocks(env, out.Len(), seed, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			if i&63 == 0 {
				clearUpper() // (NormFloat64's tail calls math.Exp: see clearUpper)
			}
			v[i] = r.NormFloat64()
		}
	})
}

// ResolveConcat is the dtype of concatenate(arrays): all promoted.
func ResolveConcat(arrays []*pdarray.Array) pdarray.DType {
	d := arrays[0].DType()
	for _, a := range arrays[1:] {
		d = Promote(d, a.DType())
	}
	return d
}

// Concatenate copies (casting) every array into out, one after the other.
func Concatenate(env Env, arrays []*pdarray.Array, out *pdarray.Array) {
	off := 0
	od := out.DType()
	os := od.Size()
	for _, a := range arrays {
		n := a.Len()
		view, err := pdarray.Wrap(od, out.Bytes()[off*os:(off+n)*os])
		if err == nil || n == 0 {
			if n > 0 {
				AsType(env, a, view)
			}
		} else {
			// Unaligned offset (odd sizes before): cast chunk by chunk directly.
			sd := a.DType()
			castUnaligned(od, out.Bytes()[off*os:(off+n)*os], sd, a.Bytes())
		}
		off += n
	}
}

func castUnaligned(dd pdarray.DType, dst []byte, sd pdarray.DType, src []byte) {
	ss, ds := sd.Size(), dd.Size()
	n := len(src) / ss
	buf := alignedBuf(chunk * ds)
	for c := 0; c < n; c += chunk {
		e := min(n, c+chunk)
		castBytes(dd, buf[:(e-c)*ds], sd, src[c*ss:e*ss])
		copy(dst[c*ds:e*ds], buf[:(e-c)*ds])
	}
}

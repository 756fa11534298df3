package ops

import (
	"math"
	"math/bits"
	"slices"

	"github.com/arktos-dev/arktos/pdarray"
)

// Float sort without an index: numpy's ascending order with NaN last, every
// bit kept. Nonzero, non-NaN values are radix-sorted by an exact,
// invertible key (equal keys are bit-identical values, so stability does not
// matter for them); zeros (+0 and -0, which numpy's comparisons tie) and NaNs
// (any payload) keep their input order, as a stable sort keeps them, and are
// written straight into their places:
//
//	out = [negatives sorted] [zeros in input order] [positives sorted] [NaNs in input order]
//
// This moves 8-byte keys alone (no 8-byte index beside each, no gather
// afterwards): half the memory traffic of argsort-then-take.

// floatBits is the unsigned integer of the same width as a float type.
type floatBits interface{ ~uint32 | ~uint64 }

// orderKey maps a float's bits (width w) to an unsigned key in the float's
// order: negatives flip every bit, positives set the sign bit.
func orderKey[B floatBits](b B, w uint) B {
	if b>>(w-1) != 0 {
		return ^b
	}
	return b | 1<<(w-1)
}

// fromOrderKey inverts orderKey.
func fromOrderKey[B floatBits](k B, w uint) B {
	if k>>(w-1) != 0 {
		return k &^ (1 << (w - 1))
	}
	return ^k
}

// sortFloatsInto sorts x into out; k1 is scratch of x's length, and so is
// k2, or nil when T is 8 bytes wide: out itself is then the sort's scratch
// (zeros and NaNs are placed after the keys are back in out).
func sortFloatsInto[T float32 | float64, B floatBits](env Env, x, out []T, k1, k2 []uint64, bitsOf func(T) B, fromBits func(B) T) {
	n := len(x)
	w := uint(8 * int(unsafeSizeof[B]()))
	nw := numWorkers(env.workers(), n)
	type counts struct{ neg, pos, zero, nan int }
	cs := make([]counts, nw)
	env.parallel(n, 1, func(wk, lo, hi int) {
		var c counts
		for _, v := range x[lo:hi] {
			switch {
			case v != v:
				c.nan++
			case v == 0:
				c.zero++
			case v < 0:
				c.neg++
			default:
				c.pos++
			}
		}
		cs[wk] = c
	})
	var tot counts
	for _, c := range cs {
		tot.neg += c.neg
		tot.pos += c.pos
		tot.zero += c.zero
		tot.nan += c.nan
	}
	// Per-worker starting offsets: keys compacted in k1[0, neg+pos); zeros
	// and NaNs at their final places in out.
	type offs struct{ key, zero, nan int }
	os := make([]offs, nw)
	next := offs{key: 0, zero: tot.neg, nan: tot.neg + tot.zero + tot.pos}
	for i, c := range cs {
		os[i] = next
		next.key += c.neg + c.pos
		next.zero += c.zero
		next.nan += c.nan
	}
	// The keys, and their range (keyRange's, in the same pass).
	los, his := make([]uint64, nw), make([]uint64, nw)
	env.parallel(n, 1, func(wk, lo, hi int) {
		o := os[wk].key
		mn, mx := uint64(math.MaxUint64), uint64(0)
		for _, v := range x[lo:hi] {
			if v == v && v != 0 {
				k := uint64(orderKey(bitsOf(v), w))
				k1[o] = k
				o++
				mn, mx = min(mn, k), max(mx, k)
			}
		}
		los[wk], his[wk] = mn, mx
	})
	if m := tot.neg + tot.pos; m > 0 {
		keys := k1[:m]
		tmp := k2
		if tmp == nil {
			tmp = pdarray.BytesAs[uint64](pdarray.AsBytes(out)) // (T is 8 bytes wide)
		}
		base, top := slices.Min(los), slices.Max(his)
		nbits := uint(bits.Len64(top - base))
		keys = sortKeysOnly(env, keys, tmp[:m], base, nbits)
		if &keys[0] == &tmp[0] && k2 == nil {
			keys = k1[:m]
			copy(keys, tmp[:m]) // (out is written below)
		}
		// keys[:neg] are the negatives (keys below the sign bit), the rest positive.
		env.parallel(m, chunk, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				v := fromBits(fromOrderKey(B(keys[i]), w))
				if i < tot.neg {
					out[i] = v
				} else {
					out[i+tot.zero] = v
				}
			}
		})
	}
	if tot.zero+tot.nan == 0 {
		return
	}
	env.parallel(n, 1, func(wk, lo, hi int) {
		o := os[wk]
		for _, v := range x[lo:hi] {
			switch {
			case v != v:
				out[o.nan] = v
				o.nan++
			case v == 0:
				out[o.zero] = v
				o.zero++
			}
		}
	})
}

func unsafeSizeof[B floatBits]() uintptr {
	var b B
	switch any(b).(type) {
	case uint32:
		return 4
	default:
		return 8
	}
}

// sortFloat sorts a float array into out (same dtype, not a) with scratch
// of 8 bytes per element from env for float64 (out is the second buffer),
// 16 for float32.
func sortFloat(env Env, a, out *pdarray.Array) error {
	n := a.Len()
	k1, err := env.Alloc(dU64, n)
	if err != nil {
		return err
	}
	defer env.free(k1)
	ks1 := pdarray.View[uint64](k1)
	if a.DType() == dF64 {
		sortFloatsInto(env, pdarray.View[float64](a), pdarray.View[float64](out), ks1, nil, math.Float64bits, math.Float64frombits)
		return nil
	}
	k2, err := env.Alloc(dU64, n)
	if err != nil {
		return err
	}
	defer env.free(k2)
	sortFloatsInto(env, pdarray.View[float32](a), pdarray.View[float32](out), ks1, pdarray.View[uint64](k2), math.Float32bits, math.Float32frombits)
	return nil
}

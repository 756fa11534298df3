package ops

// partition.go: the range partition of a block's rows, what locales
// exchange (server/cmd_locales_exchange.go): one pass finds each row's
// range and counts them per worker, a second copies every array's rows to
// their range's output, each worker into its own slots, so every output
// keeps the rows in their order.

import (
	"cmp"

	"github.com/arktos-dev/arktos/pdarray"
)

// MaxRanges is the most ranges RangePartition cuts into (a row's range is
// one byte).
const MaxRanges = 256

// RangePartition cuts the rows of the arrays xs (each of key's length) by
// key's value: row i goes to range d, the number of cuts c (ascending) with
// !(key[i] < c), so range d holds cuts[d-1] <= key < cuts[d] and a NaN key
// the last range. It returns outs[d][j], range d's rows of xs[j] in row
// order, allocated by env.
func RangePartition(env Env, key *pdarray.Array, cuts []Scalar, xs []*pdarray.Array) ([][]*pdarray.Array, error) {
	if len(cuts)+1 > MaxRanges {
		return nil, errorf(ErrValue, "range partition: %d ranges, at most %d", len(cuts)+1, MaxRanges)
	}
	for _, x := range xs {
		if x.Len() != key.Len() {
			return nil, errorf(ErrValue, "range partition: an array of %d rows beside a key of %d", x.Len(), key.Len())
		}
	}
	n := key.Len()
	dest, err := env.Alloc(pdarray.Uint8, n)
	if err != nil {
		return nil, err
	}
	defer env.free(dest)
	nr := len(cuts) + 1
	nw := env.workers()
	counts := make([][]int, nw) // counts[w][d]: worker w's rows of range d
	for w := range counts {
		counts[w] = make([]int, nr)
	}
	d := pdarray.BytesAs[uint8](dest.Bytes())
	switch key.DType() {
	case pdarray.Int8:
		rangesOf(env, pdarray.View[int8](key), cutsAs[int8](cuts), d, counts)
	case pdarray.Int16:
		rangesOf(env, pdarray.View[int16](key), cutsAs[int16](cuts), d, counts)
	case pdarray.Int32:
		rangesOf(env, pdarray.View[int32](key), cutsAs[int32](cuts), d, counts)
	case pdarray.Int64:
		rangesOf(env, pdarray.View[int64](key), cutsAs[int64](cuts), d, counts)
	case pdarray.Uint8:
		rangesOf(env, pdarray.View[uint8](key), cutsAs[uint8](cuts), d, counts)
	case pdarray.Uint16:
		rangesOf(env, pdarray.View[uint16](key), cutsAs[uint16](cuts), d, counts)
	case pdarray.Uint32:
		rangesOf(env, pdarray.View[uint32](key), cutsAs[uint32](cuts), d, counts)
	case pdarray.Uint64:
		rangesOf(env, pdarray.View[uint64](key), cutsAs[uint64](cuts), d, counts)
	case pdarray.Float32:
		rangesOf(env, pdarray.View[float32](key), cutsAs[float32](cuts), d, counts)
	case pdarray.Float64:
		rangesOf(env, pdarray.View[float64](key), cutsAs[float64](cuts), d, counts)
	default:
		return nil, errorf(ErrType, "range partition: a key of %v is not ordered here; use an integer or float key", key.DType())
	}
	// starts[w][d]: where worker w's rows of range d begin in its output.
	starts := make([][]int, nw)
	sizes := make([]int, nr)
	for w := range nw {
		starts[w] = make([]int, nr)
		for r := range nr {
			starts[w][r] = sizes[r]
			sizes[r] += counts[w][r]
		}
	}
	outs := make([][]*pdarray.Array, nr)
	for r := range nr {
		outs[r] = make([]*pdarray.Array, len(xs))
		for j, x := range xs {
			if outs[r][j], err = env.Alloc(x.DType(), sizes[r]); err != nil {
				for _, o := range outs {
					env.free(o...)
				}
				return nil, err
			}
		}
	}
	for j, x := range xs {
		col := make([]*pdarray.Array, nr)
		for r := range nr {
			col[r] = outs[r][j]
		}
		switch x.DType().Size() {
		case 1:
			scatterRanges(env, words[uint8](x), d, starts, col)
		case 2:
			scatterRanges(env, words[uint16](x), d, starts, col)
		case 4:
			scatterRanges(env, words[uint32](x), d, starts, col)
		case 8:
			scatterRanges(env, words[uint64](x), d, starts, col)
		}
	}
	return outs, nil
}

func cutsAs[K Number](cuts []Scalar) []K {
	out := make([]K, len(cuts))
	for i, c := range cuts {
		out[i] = scalarAs[K](c)
	}
	return out
}

// rangesOf writes each row's range into dest and counts them per worker.
// Few cuts (a locale count): a linear count beats a binary search.
func rangesOf[K cmp.Ordered](env Env, key []K, cuts []K, dest []uint8, counts [][]int) {
	env.parallel(len(key), 1, func(w, lo, hi int) {
		c := counts[w]
		env.chunks(lo, hi, func(lo, hi int) {
			for i, v := range key[lo:hi] {
				r := 0
				for _, cut := range cuts {
					if !(v < cut) {
						r++
					}
				}
				dest[lo+i] = uint8(r)
				c[r]++
			}
		})
	})
}

// scatterRanges copies x's rows into their ranges' outputs: worker w's
// rows of range d go from starts[w][d] on, in row order (the same blocks
// as rangesOf's: parallel splits n the same way each time).
func scatterRanges[W word](env Env, x []W, dest []uint8, starts [][]int, outs []*pdarray.Array) {
	dst := make([][]W, len(outs))
	for r, o := range outs {
		dst[r] = words[W](o)
	}
	env.parallel(len(x), 1, func(w, lo, hi int) {
		next := append([]int(nil), starts[w]...)
		env.chunks(lo, hi, func(lo, hi int) {
			for i, v := range x[lo:hi] {
				r := dest[lo+i]
				dst[r][next[r]] = v
				next[r]++
			}
		})
	})
}

package ops

import (
	endian "encoding/binary"
	"math/bits"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

type word interface {
	uint8 | uint16 | uint32 | uint64
}

// words views a's buffer as unsigned words of its element size: kernels
// that only move elements need not know their type.
func words[W word](a *pdarray.Array) []W { return pdarray.BytesAs[W](a.Bytes()) }

// NormIndex turns a Python-style index into [0, n), or fails with numpy's
// IndexError message.
func NormIndex(i int64, n int) (int, error) {
	j := i
	if j < 0 {
		j += int64(n)
	}
	if j < 0 || j >= int64(n) {
		return 0, errorf(ErrIndex, "index %d is out of bounds for axis 0 with size %d", i, n)
	}
	return int(j), nil
}

// SliceLen is len(range(start, stop, step)) for normalised slice bounds.
func SliceLen(start, stop, step int64) int {
	switch {
	case step > 0 && start < stop:
		return int((stop - start + step - 1) / step)
	case step < 0 && start > stop:
		return int((start - stop - step - 1) / (-step))
	}
	return 0
}

// CheckSlice verifies that the n elements start, start+step, ... lie in [0, size).
func CheckSlice(start, step int64, n, size int) error {
	if step == 0 {
		return errorf(ErrValue, "slice step cannot be zero")
	}
	if n == 0 {
		return nil
	}
	last := start + int64(n-1)*step
	if start < 0 || start >= int64(size) || last < 0 || last >= int64(size) {
		return errorf(ErrIndex, "slice from %d with step %d and %d elements is out of bounds for axis 0 with size %d", start, step, n, size)
	}
	return nil
}

// Slice copies a[start + j*step] for j < len(out) into out (bounds checked
// by CheckSlice).
func Slice(env Env, a *pdarray.Array, start, step int64, out *pdarray.Array) {
	switch a.DType().Size() {
	case 1:
		sliceW(env, words[uint8](a), start, step, words[uint8](out))
	case 2:
		sliceW(env, words[uint16](a), start, step, words[uint16](out))
	case 4:
		sliceW(env, words[uint32](a), start, step, words[uint32](out))
	case 8:
		sliceW(env, words[uint64](a), start, step, words[uint64](out))
	}
}

func sliceW[W word](env Env, a []W, start, step int64, out []W) {
	env.parallel(len(out), chunk, func(_, lo, hi int) {
		if step == 1 {
			copy(out[lo:hi], a[int(start)+lo:int(start)+hi])
			return
		}
		p := start + int64(lo)*step
		for j := lo; j < hi; j++ {
			out[j] = a[p]
			p += step
		}
	})
}

// SetSlice writes value (a scalar, or an array of len(range)) into
// a[start + j*step] for j < n, in place.
func SetSlice(env Env, a *pdarray.Array, start, step int64, n int, value Operand) error {
	v, release, err := valueAs(env, value, a.DType(), n)
	if err != nil {
		return err
	}
	defer release()
	switch a.DType().Size() {
	case 1:
		setSliceW(env, words[uint8](a), start, step, n, v)
	case 2:
		setSliceW(env, words[uint16](a), start, step, n, v)
	case 4:
		setSliceW(env, words[uint32](a), start, step, n, v)
	case 8:
		setSliceW(env, words[uint64](a), start, step, n, v)
	}
	return nil
}

// valueOf is a value operand in the target dtype: an array of matching
// length, or one element to broadcast.
type valueOf struct {
	arr  []byte // nil for a scalar
	elem []byte
}

func elems[W word](v valueOf) (arr []W, s W) {
	if v.arr != nil {
		return pdarray.BytesAs[W](v.arr), 0
	}
	return nil, pdarray.BytesAs[W](v.elem)[0]
}

// valueAs converts a value operand to dtype d: a scalar to one element (a
// Python int must fit), an array of length want to d (cast into scratch
// from env when its dtype differs).
func valueAs(env Env, value Operand, d pdarray.DType, want int) (valueOf, func(), error) {
	if value.Arr == nil {
		if err := checkFits(value.Sc, d); err != nil {
			return valueOf{}, nil, err
		}
		return valueOf{elem: ScalarBytes(value.Sc, d)}, func() {}, nil
	}
	if value.Arr.Len() != want {
		return valueOf{}, nil, errorf(ErrValue, "cannot assign %d values to %d positions; give a scalar or exactly %d values", value.Arr.Len(), want, want)
	}
	if value.Arr.DType() == d {
		return valueOf{arr: value.Arr.Bytes()}, func() {}, nil
	}
	tmp, err := env.Alloc(d, want)
	if err != nil {
		return valueOf{}, nil, err
	}
	AsType(env, value.Arr, tmp)
	return valueOf{arr: tmp.Bytes()}, func() { env.free(tmp) }, nil
}

func setSliceW[W word](env Env, a []W, start, step int64, n int, v valueOf) {
	arr, s := elems[W](v)
	env.parallel(n, chunk, func(_, lo, hi int) {
		p := start + int64(lo)*step
		for j := lo; j < hi; j++ {
			if arr != nil {
				a[p] = arr[j]
			} else {
				a[p] = s
			}
			p += step
		}
	})
}

// CheckIndices verifies every index of idx (an integer array; negative
// counts from the end) against length n; the error names the first bad
// index and n.
func CheckIndices(env Env, idx *pdarray.Array, n int) error {
	switch idx.DType() {
	case dI8:
		return checkIdx(env, pdarray.View[int8](idx), n)
	case dI16:
		return checkIdx(env, pdarray.View[int16](idx), n)
	case dI32:
		return checkIdx(env, pdarray.View[int32](idx), n)
	case dI64:
		return checkIdx(env, pdarray.View[int64](idx), n)
	case dU8:
		return checkIdx(env, pdarray.View[uint8](idx), n)
	case dU16:
		return checkIdx(env, pdarray.View[uint16](idx), n)
	case dU32:
		return checkIdx(env, pdarray.View[uint32](idx), n)
	case dU64:
		return checkIdx(env, pdarray.View[uint64](idx), n)
	}
	return errorf(ErrType, "arrays used as indices must be of integer (or boolean) type, got %v", idx.DType())
}

func checkIdx[I Integer](env Env, idx []I, n int) error {
	bad := make([]int, numWorkers(env.workers(), len(idx)))
	for w := range bad {
		bad[w] = -1
	}
	env.parallel(len(idx), 1, func(w, lo, hi int) {
		for j := lo; j < hi; j++ {
			v := idx[j]
			if v < 0 {
				if int64(v) < -int64(n) {
					bad[w] = j
					return
				}
			} else if uint64(v) >= uint64(n) {
				bad[w] = j
				return
			}
		}
	})
	for _, j := range bad {
		if j >= 0 {
			return errorf(ErrIndex, "index %v is out of bounds for axis 0 with size %d", idx[j], n)
		}
	}
	return nil
}

// Take gathers out[j] = a[idx[j]] (indices checked by CheckIndices).
func Take(env Env, a, idx, out *pdarray.Array) {
	TakeMany(env, []*pdarray.Array{a}, idx, []*pdarray.Array{out})
}

// takeBlock is how many indices TakeMany gathers for every array before
// the next ones: 16 KiB of int64 indices, which stay in L1 meanwhile.
const takeBlock = 2048

// takeCached is the most bytes of arrays TakeMany gathers from a block of
// indices at a time (arrays that stay in cache, as a lookup table's).
const takeCached = 4 << 20

// TakeMany gathers outs[i][j] = as[i][idx[j]] for every array (indices
// checked by CheckIndices). From arrays that fit in cache together (a
// lookup table's columns), a block of idx at a time for all of them, so
// that idx is read from memory once however many arrays there are (10^7
// rows of three columns of 265: 72 -> 64 ms). From larger ones, one array
// after another: the block at a time was 1.6x slower for five columns of
// 10^7 by a permutation, each block's misses spread over five arrays.
func TakeMany(env Env, as []*pdarray.Array, idx *pdarray.Array, outs []*pdarray.Array) {
	total := 0
	for _, a := range as {
		total += a.NBytes()
	}
	if total > takeCached {
		for i, a := range as {
			env.parallel(idx.Len(), chunk, func(_, lo, hi int) {
				takeRange(a, idx, outs[i], lo, hi)
			})
		}
		return
	}
	env.parallel(idx.Len(), chunk, func(_, lo, hi int) {
		for b := lo; b < hi; b += takeBlock {
			e := min(hi, b+takeBlock)
			for i, a := range as {
				takeRange(a, idx, outs[i], b, e)
			}
		}
	})
}

func takeRange(a, idx, out *pdarray.Array, lo, hi int) {
	switch a.DType().Size() {
	case 1:
		takeRangeW(words[uint8](a), idx, words[uint8](out), lo, hi)
	case 2:
		takeRangeW(words[uint16](a), idx, words[uint16](out), lo, hi)
	case 4:
		takeRangeW(words[uint32](a), idx, words[uint32](out), lo, hi)
	case 8:
		takeRangeW(words[uint64](a), idx, words[uint64](out), lo, hi)
	}
}

func takeRangeW[W word](a []W, idx *pdarray.Array, out []W, lo, hi int) {
	switch idx.DType() {
	case dI8:
		takeSpan(a, pdarray.View[int8](idx)[lo:hi], out[lo:hi])
	case dI16:
		takeSpan(a, pdarray.View[int16](idx)[lo:hi], out[lo:hi])
	case dI32:
		takeSpan(a, pdarray.View[int32](idx)[lo:hi], out[lo:hi])
	case dI64:
		takeSpan(a, pdarray.View[int64](idx)[lo:hi], out[lo:hi])
	case dU8:
		takeSpan(a, pdarray.View[uint8](idx)[lo:hi], out[lo:hi])
	case dU16:
		takeSpan(a, pdarray.View[uint16](idx)[lo:hi], out[lo:hi])
	case dU32:
		takeSpan(a, pdarray.View[uint32](idx)[lo:hi], out[lo:hi])
	case dU64:
		takeSpan(a, pdarray.View[uint64](idx)[lo:hi], out[lo:hi])
	}
}

func takeSpan[W word, I Integer](a []W, idx []I, out []W) {
	n := len(a)
	out = out[:len(idx)]
	for j, v := range idx {
		k := int(v)
		if v < 0 {
			k += n
		}
		out[j] = a[k]
	}
}

// Scatter writes a[idx[j]] = value[j] (or the scalar) in place; indices are
// checked by CheckIndices. With repeated indices the last write wins, as in
// numpy: each worker owns a range of a and scans all of idx in order.
func Scatter(env Env, a, idx *pdarray.Array, value Operand) error {
	v, release, err := valueAs(env, value, a.DType(), idx.Len())
	if err != nil {
		return err
	}
	defer release()
	switch a.DType().Size() {
	case 1:
		scatterSize(env, words[uint8](a), idx, v)
	case 2:
		scatterSize(env, words[uint16](a), idx, v)
	case 4:
		scatterSize(env, words[uint32](a), idx, v)
	case 8:
		scatterSize(env, words[uint64](a), idx, v)
	}
	return nil
}

func scatterSize[W word](env Env, a []W, idx *pdarray.Array, v valueOf) {
	switch idx.DType() {
	case dI8:
		scatter(env, a, pdarray.View[int8](idx), v)
	case dI16:
		scatter(env, a, pdarray.View[int16](idx), v)
	case dI32:
		scatter(env, a, pdarray.View[int32](idx), v)
	case dI64:
		scatter(env, a, pdarray.View[int64](idx), v)
	case dU8:
		scatter(env, a, pdarray.View[uint8](idx), v)
	case dU16:
		scatter(env, a, pdarray.View[uint16](idx), v)
	case dU32:
		scatter(env, a, pdarray.View[uint32](idx), v)
	case dU64:
		scatter(env, a, pdarray.View[uint64](idx), v)
	}
}

func scatter[W word, I Integer](env Env, a []W, idx []I, v valueOf) {
	arr, s := elems[W](v)
	n := len(a)
	// Workers split the destination, not idx: writes to one element stay in
	// idx order, so the last one wins whatever the worker count.
	nw := numWorkers(env.workers(), max(len(idx), n))
	if len(idx) < minPar {
		nw = 1
	}
	bounds := splitBounds(n, nw, 64)
	parallelN(nw, func(w int) {
		lo, hi := bounds[w], bounds[w+1]
		for j, x := range idx {
			k := int(x)
			if x < 0 {
				k += n
			}
			if k < lo || k >= hi {
				continue
			}
			if arr != nil {
				a[k] = arr[j]
			} else {
				a[k] = s
			}
		}
	})
}

// parallelN runs f(0..nw-1) on nw goroutines (inline when nw is 1).
func parallelN(nw int, f func(w int)) {
	if nw <= 1 {
		f(0)
		return
	}
	var g par.Group
	for w := 0; w < nw; w++ {
		g.Go(func() { f(w) })
	}
	g.Wait()
}

// CountTrue counts the true elements of a bool array.
func CountTrue(env Env, mask *pdarray.Array) int {
	offs := maskOffsets(env, pdarray.BytesAs[uint8](mask.Bytes()))
	return offs[len(offs)-1]
}

// countOnes counts the ones of a bool slice (bytes 0 or 1, as every stored
// bool is): sixty-four at a time as a bit word where the vector kernels
// run, else eight at a time, a word's bytes summing to its popcount.
func countOnes(m []uint8) int {
	c, i := 0, 0
	if simdOn() {
		for ; i+64 <= len(m); i += 64 {
			c += bits.OnesCount64(simdMaskBits((*[64]uint8)(m[i : i+64])))
		}
		simdDone()
	}
	for ; i+8 <= len(m); i += 8 {
		c += bits.OnesCount64(endian.LittleEndian.Uint64(m[i:]))
	}
	for _, v := range m[i:] {
		c += int(v)
	}
	return c
}

// maskBits packs m[0:64] (bytes 0 or 1) into a word, bit j for byte j:
// the multiply moves each byte's low bit into the top byte without carries
// (the bits' places 8j+7k+7 are all distinct).
func maskBits(m []uint8) uint64 {
	var b uint64
	for j := 0; j < 8; j++ {
		b |= (endian.LittleEndian.Uint64(m[8*j:]) * 0x0102040810204080 >> 56) << (8 * j)
	}
	return b
}

// blockBits is maskBits of m[0:64], by one vector compare where the
// vector kernels run (vec: simdOn(), asked once per loop).
func blockBits(m []uint8, vec bool) uint64 {
	if vec {
		return simdMaskBits((*[64]uint8)(m[:64]))
	}
	return maskBits(m)
}

// maskOffsets returns, per worker block of mask, how many trues come before
// it; the last element is the total.
func maskOffsets(env Env, m []uint8) []int {
	nw := numWorkers(env.workers(), len(m))
	counts := make([]int, nw+1)
	env.parallel(len(m), 1, func(w, lo, hi int) {
		counts[w+1] = countOnes(m[lo:hi])
	})
	for w := 1; w <= nw; w++ {
		counts[w] += counts[w-1]
	}
	return counts
}

// MaskOffsets is maskOffsets of a stored bool array, for CompressWith: one
// count of the mask serves every array compressed by it.
func MaskOffsets(env Env, mask *pdarray.Array) []int {
	return maskOffsets(env, pdarray.BytesAs[uint8](mask.Bytes()))
}

// Compress copies the elements of a where mask is true into out (length
// CountTrue(mask)), in order.
func Compress(env Env, a, mask, out *pdarray.Array) {
	CompressWith(env, a, mask, MaskOffsets(env, mask), out)
}

// CompressWith is Compress with the mask's offsets already counted
// (MaskOffsets of the same mask, by the same env).
func CompressWith(env Env, a, mask *pdarray.Array, offs []int, out *pdarray.Array) {
	m := pdarray.BytesAs[uint8](mask.Bytes())
	switch a.DType().Size() {
	case 1:
		compress(env, words[uint8](a), m, offs, words[uint8](out))
	case 2:
		compress(env, words[uint16](a), m, offs, words[uint16](out))
	case 4:
		compress(env, words[uint32](a), m, offs, words[uint32](out))
	case 8:
		compress(env, words[uint64](a), m, offs, words[uint64](out))
	}
}

// compress walks the mask 64 elements at a time as a bit word: a block with
// every element true is one copy, and otherwise only the trues are visited,
// so there is no branch on each element's truth (a random mask mispredicted
// one in two or three before).
func compress[W word](env Env, a []W, m []uint8, offs []int, out []W) {
	env.parallel(len(m), 1, func(w, lo, hi int) {
		k := offs[w]
		mm, aa := m[lo:hi], a[lo:hi]
		vec := simdOn()
		if vec {
			simdCalls.Add(1)
		}
		i := 0
		for ; i+64 <= len(mm); i += 64 {
			b := blockBits(mm[i:], vec)
			if b == ^uint64(0) {
				k += copy(out[k:k+64], aa[i:i+64])
				continue
			}
			for ; b != 0; b &= b - 1 {
				out[k] = aa[i+bits.TrailingZeros64(b)]
				k++
			}
		}
		if vec {
			simdEnd()
		}
		for ; i < len(mm); i++ {
			if mm[i] != 0 {
				out[k] = aa[i]
				k++
			}
		}
	})
}

// CompressMany writes as[i][mask] into outs[i] (CountTrue(mask) long
// each) and, when pos is not nil, the trues' positions into pos (int64):
// a table's rows selected by a mask. When the positions are wanted anyway,
// several arrays are compressed, or at most a quarter of the rows are
// true, the positions are found once (in pos, or in scratch) and every
// array gathered by them: a gather visits only the rows kept, where a
// compress walks the whole mask again for each array (10^7 float64, one
// worker: 7% true, 4.1 ms for the positions and 2.5 ms a gather against
// 10.4 ms a compress; 50%, 6.2 and 11.9 against 14.2); when the
// positions' scratch does not fit, it compresses each array instead.
// gathered says which it did. offs is MaskOffsets(env, mask).
func CompressMany(env Env, as []*pdarray.Array, mask *pdarray.Array, offs []int, outs []*pdarray.Array,
	pos *pdarray.Array) (gathered bool) {
	n := offs[len(offs)-1]
	p := pos
	if p == nil && (len(as) > 1 || 4*n <= mask.Len()) {
		var err error
		if p, err = env.Alloc(pdarray.Int64, n); err != nil {
			p = nil // no room for the positions: compress each array, which needs none
		} else {
			defer env.free(p)
		}
	}
	if p == nil {
		for i, a := range as {
			CompressWith(env, a, mask, offs, outs[i])
		}
		return false
	}
	CompressPositions(env, mask, offs, p)
	TakeMany(env, as, p, outs)
	return true
}

// CompressPositions writes the positions of mask's trues, in order, into
// out (int64, CountTrue(mask) long): np.flatnonzero, with the offsets of
// MaskOffsets.
func CompressPositions(env Env, mask *pdarray.Array, offs []int, out *pdarray.Array) {
	m := pdarray.BytesAs[uint8](mask.Bytes())
	o := pdarray.View[int64](out)
	env.parallel(len(m), 1, func(w, lo, hi int) {
		k := offs[w]
		mm := m[lo:hi]
		vec := simdOn()
		if vec {
			simdCalls.Add(1)
		}
		i := 0
		for ; i+64 <= len(mm); i += 64 {
			for b := blockBits(mm[i:], vec); b != 0; b &= b - 1 {
				o[k] = int64(lo + i + bits.TrailingZeros64(b))
				k++
			}
		}
		if vec {
			simdEnd()
		}
		for ; i < len(mm); i++ {
			if mm[i] != 0 {
				o[k] = int64(lo + i)
				k++
			}
		}
	})
}

// SetMask writes value where mask is true, in place: a scalar everywhere,
// or the elements of an array of CountTrue(mask) values in order.
func SetMask(env Env, a, mask *pdarray.Array, value Operand) error {
	m := pdarray.BytesAs[uint8](mask.Bytes())
	offs := maskOffsets(env, m)
	v, release, err := valueAs(env, value, a.DType(), offs[len(offs)-1])
	if err != nil {
		return err
	}
	defer release()
	switch a.DType().Size() {
	case 1:
		setMask(env, words[uint8](a), m, offs, v)
	case 2:
		setMask(env, words[uint16](a), m, offs, v)
	case 4:
		setMask(env, words[uint32](a), m, offs, v)
	case 8:
		setMask(env, words[uint64](a), m, offs, v)
	}
	return nil
}

func setMask[W word](env Env, a []W, m []uint8, offs []int, v valueOf) {
	arr, s := elems[W](v)
	env.parallel(len(m), 1, func(w, lo, hi int) {
		k := offs[w]
		for i := lo; i < hi; i++ {
			if m[i] != 0 {
				if arr != nil {
					a[i] = arr[k]
					k++
				} else {
					a[i] = s
				}
			}
		}
	})
}

// SetIndex writes the scalar s (converted to a's dtype) at position i.
func SetIndex(a *pdarray.Array, i int, s Scalar) error {
	if err := checkFits(s, a.DType()); err != nil {
		return err
	}
	sz := a.DType().Size()
	copy(a.Bytes()[i*sz:(i+1)*sz], ScalarBytes(s, a.DType()))
	return nil
}

package arrowio

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// The direct reader's decoders for the two encodings of numbers that
// Parquet v2 writers choose (DuckDB and Spark with v2 pages, pyarrow when
// asked): DELTA_BINARY_PACKED (INT32, INT64) and BYTE_STREAM_SPLIT (FLOAT,
// DOUBLE, and INT32/INT64 since format 2.11). Both write a page's defined
// values into out, a slice of the destination array; they read only b,
// which the caller owns, and allocate nothing. Corrupt input is an error,
// never a read past b: the caller then falls back to arrow-go's reader.

var (
	errDelta = errors.New("corrupt DELTA_BINARY_PACKED data")
	errSplit = errors.New("corrupt BYTE_STREAM_SPLIT data")
)

// byteStreamSplit decodes len(out) values: the page holds one stream per
// byte of a value, each len(b)/size bytes long, and byte k of value i is
// b[k*stride+i]. Values go 8 (4-byte: 4) at a time as a byte-matrix
// transpose in registers: one 8-byte load a stream, three rounds of
// masked swaps, one store a value (a byte-by-byte gather took 2.1 ns a
// double here, a third of a read of BYTE_STREAM_SPLIT doubles).
func byteStreamSplit[T word](b []byte, out []T) error {
	size := int(unsafe.Sizeof(T(0)))
	n := len(out)
	stride := len(b) / size
	if len(b)%size != 0 || stride < n {
		return errSplit
	}
	i := 0
	// Loads of 8 (4) bytes at k*stride+i with i+8 <= n <= stride stay in b.
	base := unsafe.Pointer(unsafe.SliceData(b))
	if size == 8 {
		const m1, m2, m4 = 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF
		o := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(out))), n)
		for ; i+8 <= n; i += 8 {
			p := unsafe.Add(base, i)
			r0 := *(*uint64)(p)
			r1 := *(*uint64)(unsafe.Add(p, stride))
			r2 := *(*uint64)(unsafe.Add(p, 2*stride))
			r3 := *(*uint64)(unsafe.Add(p, 3*stride))
			r4 := *(*uint64)(unsafe.Add(p, 4*stride))
			r5 := *(*uint64)(unsafe.Add(p, 5*stride))
			r6 := *(*uint64)(unsafe.Add(p, 6*stride))
			r7 := *(*uint64)(unsafe.Add(p, 7*stride))
			// Transpose the 8x8 byte matrix (row k: stream k's 8 bytes) by
			// swapping ever larger blocks: bytes, pairs, quads.
			t := (r0>>8 ^ r1) & m1
			r0, r1 = r0^t<<8, r1^t
			t = (r2>>8 ^ r3) & m1
			r2, r3 = r2^t<<8, r3^t
			t = (r4>>8 ^ r5) & m1
			r4, r5 = r4^t<<8, r5^t
			t = (r6>>8 ^ r7) & m1
			r6, r7 = r6^t<<8, r7^t
			t = (r0>>16 ^ r2) & m2
			r0, r2 = r0^t<<16, r2^t
			t = (r1>>16 ^ r3) & m2
			r1, r3 = r1^t<<16, r3^t
			t = (r4>>16 ^ r6) & m2
			r4, r6 = r4^t<<16, r6^t
			t = (r5>>16 ^ r7) & m2
			r5, r7 = r5^t<<16, r7^t
			t = (r0>>32 ^ r4) & m4
			r0, r4 = r0^t<<32, r4^t
			t = (r1>>32 ^ r5) & m4
			r1, r5 = r1^t<<32, r5^t
			t = (r2>>32 ^ r6) & m4
			r2, r6 = r2^t<<32, r6^t
			t = (r3>>32 ^ r7) & m4
			r3, r7 = r3^t<<32, r7^t
			d := o[i : i+8 : i+8]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = r0, r1, r2, r3, r4, r5, r6, r7
		}
		for ; i < n; i++ {
			var x uint64
			for k := range 8 {
				x |= uint64(b[k*stride+i]) << (8 * k)
			}
			o[i] = x
		}
		return nil
	}
	const m1, m2 = 0x00FF00FF, 0x0000FFFF
	o := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(out))), n)
	for ; i+4 <= n; i += 4 {
		p := unsafe.Add(base, i)
		r0 := *(*uint32)(p)
		r1 := *(*uint32)(unsafe.Add(p, stride))
		r2 := *(*uint32)(unsafe.Add(p, 2*stride))
		r3 := *(*uint32)(unsafe.Add(p, 3*stride))
		t := (r0>>8 ^ r1) & m1
		r0, r1 = r0^t<<8, r1^t
		t = (r2>>8 ^ r3) & m1
		r2, r3 = r2^t<<8, r3^t
		t = (r0>>16 ^ r2) & m2
		r0, r2 = r0^t<<16, r2^t
		t = (r1>>16 ^ r3) & m2
		r1, r3 = r1^t<<16, r3^t
		d := o[i : i+4 : i+4]
		d[0], d[1], d[2], d[3] = r0, r1, r2, r3
	}
	for ; i < n; i++ {
		o[i] = uint32(b[i]) | uint32(b[stride+i])<<8 | uint32(b[2*stride+i])<<16 | uint32(b[3*stride+i])<<24
	}
	return nil
}

// deltaMaxMini bounds the values of one miniblock (the format only asks for
// a multiple of 32; writers use 32 or 64), so a header cannot make a
// miniblock's byte count overflow.
const deltaMaxMini = 1 << 16

// deltaBinaryPacked decodes len(out) values of DELTA_BINARY_PACKED: a header
// (values a block, miniblocks a block, value count, first value), then
// blocks of (min delta, one bit width a miniblock, the miniblocks' deltas
// less the min delta, bit-packed least significant bit first). Values are
// sums in T's width: wrapping, as the writers compute them. The page may
// hold more values than out asks for; it may not hold fewer.
func deltaBinaryPacked[T word](b []byte, out []T) error {
	if len(out) == 0 {
		return nil
	}
	var hdr [3]uint64
	for i := range hdr {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return errDelta
		}
		hdr[i], b = v, b[k:]
	}
	block, minis, total := hdr[0], hdr[1], hdr[2]
	first, k := binary.Varint(b) // zigzag
	if k <= 0 || block == 0 || block%128 != 0 || minis == 0 || block%minis != 0 || total < uint64(len(out)) {
		return errDelta
	}
	per := block / minis
	if per%32 != 0 || per > deltaMaxMini {
		return errDelta
	}
	b = b[k:]
	v := T(first)
	out[0] = v
	o := out[1:]
	for len(o) > 0 {
		md, k := binary.Varint(b)
		if k <= 0 || uint64(len(b)-k) < minis {
			return errDelta
		}
		widths := b[k : k+int(minis)]
		b = b[k+int(minis):]
		step := T(md) // wraps for INT32, as the writers' sums do
		for _, w8 := range widths {
			if len(o) == 0 {
				break // the widths of unused miniblocks are there, their bytes are not
			}
			w := uint(w8)
			if w > 64 {
				return errDelta
			}
			cnt := min(int(per), len(o))
			size := int(per) * int(w) / 8 // per is a multiple of 32: whole bytes
			if need := (cnt*int(w) + 7) / 8; len(b) < need {
				return errDelta // only the page's last miniblock may stop short
			}
			v = unpackDeltas(b, w, v, step, o[:cnt])
			o = o[cnt:]
			b = b[min(size, len(b)):]
		}
	}
	return nil
}

// unpackDeltas writes the running sums v + (step + delta) of len(o) deltas
// of w bits packed in b (which holds at least len(o)*w bits) and returns
// the last.
func unpackDeltas[T word](b []byte, w uint, v, step T, o []T) T {
	if w == 0 {
		for i := range o {
			v += step
			o[i] = v
		}
		return v
	}
	mask := ^uint64(0) >> (64 - w)
	bit := uint(0)
	i := 0
	if w <= 56 && len(b) >= (len(o)*int(w)+7)/8+8 {
		// Value i's bits start at byte i*w/8 and end within the 8 bytes
		// from there, which are in b: every miniblock but a page's last
		// has 8 bytes of b after it.
		base := unsafe.Pointer(unsafe.SliceData(b))
		for ; i < len(o); i++ {
			x := *(*uint64)(unsafe.Add(base, bit>>3)) >> (bit & 7) & mask
			v += step + T(x)
			o[i] = v
			bit += w
		}
		return v
	}
	for ; i < len(o); i++ {
		v += step + T(bitsAt(b, bit, w)&mask)
		o[i] = v
		bit += w
	}
	return v
}

// bitsAt returns the (up to 64) bits of b from bit onwards, zeros past
// b's end.
func bitsAt(b []byte, bit, w uint) uint64 {
	at, s := int(bit>>3), bit&7
	var x uint64
	for k := 0; k < 8 && at+k < len(b); k++ {
		x |= uint64(b[at+k]) << (8 * k)
	}
	x >>= s
	if s+w > 64 && at+8 < len(b) {
		x |= uint64(b[at+8]) << (64 - s)
	}
	return x
}

package arrowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestDeltaSplitDirect: DELTA_BINARY_PACKED integer columns and
// BYTE_STREAM_SPLIT float columns, in v1 and v2 pages, every codec, with
// and without nulls, are read by the direct reader (the counters move, no
// chunk falls back) and agree with arrow-go's reader bit for bit.
func TestDeltaSplitDirect(t *testing.T) {
	encodings := func(ints parquet.Encoding) []parquet.WriterProperty {
		return []parquet.WriterProperty{parquet.WithDictionaryDefault(false),
			parquet.WithEncodingFor("i64", ints), parquet.WithEncodingFor("i32", ints),
			parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit),
			parquet.WithEncodingFor("f32", parquet.Encodings.ByteStreamSplit)}
	}
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd} {
		// Integers split into byte streams too (format 2.11), once.
		ints := parquet.Encodings.DeltaBinaryPacked
		if codec == compress.Codecs.Snappy {
			ints = parquet.Encodings.ByteStreamSplit
		}
		enc := encodings(ints)
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, nullEvery := range []int{0, 7} {
				for _, req := range []bool{false, true} {
					if req && nullEvery > 0 {
						continue
					}
					name := fmt.Sprintf("%s/%s/v%d/nulls%d/required=%v", codec, ints, v, nullEvery, req)
					data := writeNullable(t, 20000, nullEvery, codec, v, req, enc...)
					src := func() []ParquetSource { return []ParquetSource{{Name: name, R: bytes.NewReader(data)}} }
					for _, pol := range []NullPolicy{{}, {Mode: "mask"}, {Mode: "fill", Fill: int64(9)}} {
						d0, s0, f0 := Stats.DeltaPages.Load(), Stats.SplitPages.Load(), Stats.FastChunks.Load()
						readBoth(t, name+"/"+pol.mode(), src, nil, pol, 2)
						if pol.Mode == "" && nullEvery > 0 {
							continue // an error: nulls in integer columns
						}
						// 4 columns in 3 row groups; pages of 3000 bytes.
						if got := Stats.FastChunks.Load() - f0; got != 12 {
							t.Errorf("%s/%s: %d of 12 chunks went through the direct reader", name, pol.mode(), got)
						}
						// At least a page a chunk: 6 chunks of integers, 6 of floats.
						wantDelta, wantSplit := uint64(6), uint64(6)
						if ints == parquet.Encodings.ByteStreamSplit {
							wantDelta, wantSplit = 0, 12
						}
						if Stats.DeltaPages.Load()-d0 < wantDelta || Stats.SplitPages.Load()-s0 < wantSplit {
							t.Errorf("%s/%s: %d delta and %d split pages decoded directly", name, pol.mode(), Stats.DeltaPages.Load()-d0, Stats.SplitPages.Load()-s0)
						}
					}
				}
			}
		}
	}
	// The pyarrow-written fixture (parquet-cpp's encoders) too.
	d0, s0 := Stats.DeltaPages.Load(), Stats.SplitPages.Load()
	readBoth(t, "delta_rle_bss.parquet", func() []ParquetSource { return openFixtures(t, "delta_rle_bss.parquet") }, nil, NullPolicy{}, 2)
	if Stats.DeltaPages.Load() == d0 || Stats.SplitPages.Load() == s0 {
		t.Error("delta_rle_bss.parquet: its pages did not go through the direct reader")
	}
}

// encodeDelta is DELTA_BINARY_PACKED as the format describes it, for
// values of width bits (32 or 64): blocks of block values in minis
// miniblocks; the widths of a last block's unused miniblocks are junk
// (readers must accept any), and the last miniblock is padded only when
// pad is set (writers pad it; the reader must not need it).
func encodeDelta(vals []uint64, width uint, block, minis int, pad bool) []byte {
	signed := func(x uint64) int64 {
		if width == 32 {
			return int64(int32(uint32(x)))
		}
		return int64(x)
	}
	mask := ^uint64(0) >> (64 - width)
	b := binary.AppendUvarint(nil, uint64(block))
	b = binary.AppendUvarint(b, uint64(minis))
	b = binary.AppendUvarint(b, uint64(len(vals)))
	if len(vals) == 0 {
		return binary.AppendVarint(b, 0)
	}
	b = binary.AppendVarint(b, signed(vals[0]))
	var deltas []int64
	for i := 1; i < len(vals); i++ {
		deltas = append(deltas, signed((vals[i]-vals[i-1])&mask))
	}
	per := block / minis
	for lo := 0; lo < len(deltas); lo += block {
		d := deltas[lo:min(len(deltas), lo+block)]
		step := slices.Min(d)
		b = binary.AppendVarint(b, step)
		ws := len(b)
		b = append(b, make([]byte, minis)...)
		for m := range minis {
			if m*per >= len(d) {
				b[ws+m] = 0xA5 // unused miniblock: any width
				continue
			}
			md := d[m*per : min(len(d), (m+1)*per)]
			var w uint
			for _, x := range md {
				w = max(w, uint(bits.Len64(uint64(x-step)&mask)))
			}
			b[ws+m] = byte(w)
			n := per
			if !pad && len(md) < per {
				n = len(md)
			}
			packed := make([]byte, (n*int(w)+7)/8)
			for j, x := range md {
				u := uint64(x-step) & mask
				for k := range w {
					if u>>k&1 == 1 {
						bit := uint(j)*w + k
						packed[bit>>3] |= 1 << (bit & 7)
					}
				}
			}
			b = append(b, packed...)
		}
	}
	return b
}

func decodeDeltaAs[T word](b []byte, n int) ([]uint64, error) {
	out := make([]T, n)
	err := deltaBinaryPacked(b, out)
	got := make([]uint64, n)
	for i, x := range out {
		got[i] = uint64(x)
	}
	return got, err
}

// decodeDelta decodes n values of width bits (32: as INT32) as uint64s.
func decodeDelta(b []byte, width uint, n int) ([]uint64, error) {
	if width == 32 {
		return decodeDeltaAs[uint32](b, n)
	}
	return decodeDeltaAs[uint64](b, n)
}

// TestDeltaDecoder: every bit width from 0 to 64, INT32 sums that wrap,
// blocks of several sizes, short last miniblocks with and without
// padding, junk widths for unused miniblocks, pages holding more values
// than asked for; and corrupt headers or truncated data give an error.
func TestDeltaDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type gen struct {
		name string
		f    func(i int) uint64
	}
	gens := []gen{
		{"constant", func(int) uint64 { return 42 }},
		{"step", func(i int) uint64 { return uint64(i) * 7 }},
		{"extremes", func(i int) uint64 { return []uint64{math.MaxInt64, 1 << 63, 0, math.MaxUint64}[i%4] }},
		{"random", func(int) uint64 { return rng.Uint64() }},
		{"descending", func(i int) uint64 { return uint64(-int64(i) * 1000003) }},
	}
	for w := range 65 { // deltas of exactly w bits
		gens = append(gens, gen{fmt.Sprintf("width%d", w), func(i int) uint64 {
			if w == 0 || i%3 != 0 {
				return 0
			}
			return ^uint64(0) >> (64 - w)
		}})
	}
	for _, width := range []uint{32, 64} {
		mask := ^uint64(0) >> (64 - width)
		for _, g := range gens {
			for _, n := range []int{1, 2, 33, 129, 1000} {
				for _, bm := range [][2]int{{128, 4}, {256, 8}, {128, 1}, {256, 2}} {
					for _, pad := range []bool{true, false} {
						vals := make([]uint64, n)
						for i := range vals {
							vals[i] = g.f(i) & mask
						}
						enc := encodeDelta(vals, width, bm[0], bm[1], pad)
						name := fmt.Sprintf("%s/int%d/n=%d/block=%v/pad=%v", g.name, width, n, bm, pad)
						got, err := decodeDelta(enc, width, n)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for i := range vals {
							if got[i] != vals[i] {
								t.Fatalf("%s: value %d is %#x, want %#x", name, i, got[i], vals[i])
							}
						}
						// A prefix of the page's values (a page may hold more).
						if n > 1 {
							if got, err = decodeDelta(enc, width, n/2); err != nil || !slices.Equal(got, vals[:n/2]) {
								t.Fatalf("%s: prefix: %v", name, err)
							}
						}
					}
				}
			}
		}
	}
	good := encodeDelta([]uint64{1, 5, 9, 2, 7}, 64, 128, 4, false)
	for name, b := range map[string][]byte{
		"empty":            nil,
		"block 0":          {0, 4, 5, 2},
		"block not x128":   {100, 4, 5, 2},
		"miniblock not 32": {0x80, 1, 8, 5, 2},
		"fewer values":     append(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 128), 4), 2), 2),
		"truncated":        good[:len(good)-1],
		"no block":         good[:5],
		"width 65":         append(append([]byte(nil), good[:6]...), 65, 0, 0, 0),
	} {
		if _, err := decodeDeltaAs[uint64](b, 5); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSplitDecoder: BYTE_STREAM_SPLIT of 4- and 8-byte values, for every
// count around the 8 (4) values decoded at a time, with the streams as
// long as the page's values (which may be more than asked for), against a
// byte-by-byte gather; a page whose length is no multiple of the value
// size, or too short, is an error.
func TestSplitDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 41 {
		for _, stride := range []int{n, n + 3} {
			b := make([]byte, 8*stride)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			want := func(i, size int) uint64 {
				var x uint64
				for k := range size {
					x |= uint64(b[k*stride+i]) << (8 * k)
				}
				return x
			}
			o64 := make([]uint64, n)
			if err := byteStreamSplit(b, o64); err != nil {
				t.Fatal(err)
			}
			o32 := make([]uint32, n)
			if err := byteStreamSplit(b[:4*stride], o32); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if o64[i] != want(i, 8) || uint64(o32[i]) != want(i, 4) {
					t.Fatalf("n=%d stride=%d: value %d is %#x / %#x, want %#x / %#x", n, stride, i, o64[i], o32[i], want(i, 8), want(i, 4))
				}
			}
		}
	}
	if byteStreamSplit(make([]byte, 39), make([]uint64, 4)) == nil || byteStreamSplit(make([]byte, 24), make([]uint64, 4)) == nil {
		t.Error("a bad page gave no error")
	}
}

// FuzzDeltaBinaryPacked: any bytes decode to values or an error, never a
// read past the page (as DELTA_BINARY_PACKED and as BYTE_STREAM_SPLIT;
// under -race, checkptr checks the unsafe loads); and values encoded as
// the format describes decode to themselves.
func FuzzDeltaBinaryPacked(f *testing.F) {
	f.Add(encodeDelta([]uint64{1, 5, 9, 2, 7, 1 << 40}, 64, 128, 4, false), uint16(6), []byte{1, 2, 3})
	f.Add(encodeDelta([]uint64{1, 1, 1}, 32, 256, 8, true), uint16(3), []byte{0xFF, 0, 0x80, 0x7F})
	f.Fuzz(func(t *testing.T, page []byte, n uint16, raw []byte) {
		for _, k := range []int{int(n), int(n) % 300} {
			decodeDeltaAs[uint64](page, k)
			decodeDeltaAs[uint32](page, k)
			byteStreamSplit(page, make([]uint64, k))
			byteStreamSplit(page, make([]uint32, k))
		}
		vals := make([]uint64, len(raw))
		for i, c := range raw {
			vals[i] = uint64(c) << (c % 57) // widths from 0 to 64
		}
		for _, width := range []uint{32, 64} {
			mask := ^uint64(0) >> (64 - width)
			want := make([]uint64, len(vals))
			for i, v := range vals {
				want[i] = v & mask
			}
			enc := encodeDelta(want, width, 128, 4, n%2 == 0)
			got, err := decodeDelta(enc, width, len(want))
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("int%d: %x: got %x, %v", width, want, got, err)
			}
		}
	})
}

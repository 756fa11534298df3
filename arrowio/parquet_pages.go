package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"
)

// This file holds the byte-level pieces of the direct page reader
// (parquet_fast.go): a Thrift compact-protocol parser for PageHeader and the
// RLE/bit-packed hybrid decoder. Both work on byte slices that the caller
// owns; neither allocates.

// Parquet page types (parquet.thrift PageType).
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// Parquet encodings (parquet.thrift Encoding) that the direct reader knows.
const (
	encPlain       = 0
	encPlainDict   = 2
	encRLE         = 3
	encBitPacked   = 4
	encDelta       = 5 // DELTA_BINARY_PACKED
	encRLEDict     = 8
	encStreamSplit = 9 // BYTE_STREAM_SPLIT
)

// pageHeader is the part of parquet.thrift's PageHeader the reader uses.
type pageHeader struct {
	typ          int32
	uncompressed int32
	compressed   int32
	numValues    int32 // data pages (v1 and v2) and dictionary pages
	encoding     int32 // values encoding
	defEncoding  int32 // v1: definition level encoding
	repEncoding  int32 // v1
	// v2 only
	numNulls     int32
	defLen       int32
	repLen       int32
	isCompressed bool
}

var errShortHeader = errors.New("page header runs past the bytes given")

// thriftReader reads Thrift compact-protocol values from b.
type thriftReader struct {
	b   []byte
	pos int
	err error
}

func (r *thriftReader) byte1() byte {
	if r.pos >= len(r.b) {
		r.err = errShortHeader
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *thriftReader) uvarint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c := r.byte1()
		if r.err != nil {
			return 0
		}
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.err = errors.New("varint too long")
	return 0
}

func (r *thriftReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *thriftReader) i32() int32 { return int32(r.varint()) }

// Compact-protocol type ids.
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI16       = 4
	tI32       = 5
	tI64       = 6
	tDouble    = 7
	tBinary    = 8
	tList      = 9
	tSet       = 10
	tMap       = 11
	tStruct    = 12
)

// field reads a field header: its id and type (0 at the struct's end).
func (r *thriftReader) field(last int16) (int16, byte) {
	c := r.byte1()
	if r.err != nil || c == 0 {
		return 0, 0
	}
	typ := c & 0x0f
	if d := int16(c >> 4); d != 0 {
		return last + d, typ
	}
	return int16(r.varint()), typ
}

// skip skips one value of type typ.
func (r *thriftReader) skip(typ byte, depth int) {
	if depth > 32 {
		r.err = errors.New("thrift nesting too deep")
		return
	}
	switch typ {
	case tBoolTrue, tBoolFalse:
	case tByte:
		r.byte1()
	case tI16, tI32, tI64:
		r.uvarint()
	case tDouble:
		r.advance(8)
	case tBinary:
		r.advance(int(r.uvarint()))
	case tList, tSet:
		c := r.byte1()
		n := int(c >> 4)
		if n == 15 {
			n = int(r.uvarint())
		}
		et := c & 0x0f
		for i := 0; i < n && r.err == nil; i++ {
			if et == tBoolTrue || et == tBoolFalse {
				r.byte1() // list elements of type bool take a byte each
			} else {
				r.skip(et, depth+1)
			}
		}
	case tMap:
		n := int(r.uvarint())
		if n > 0 {
			kv := r.byte1()
			for i := 0; i < n && r.err == nil; i++ {
				r.skip(kv>>4, depth+1)
				r.skip(kv&0x0f, depth+1)
			}
		}
	case tStruct:
		var last int16
		for r.err == nil {
			id, t := r.field(last)
			if t == 0 {
				return
			}
			r.skip(t, depth+1)
			last = id
		}
	default:
		r.err = fmt.Errorf("unknown thrift type %d", typ)
	}
}

func (r *thriftReader) advance(n int) {
	if n < 0 || r.pos+n > len(r.b) {
		r.err = errShortHeader
		return
	}
	r.pos += n
}

// parsePageHeader parses a PageHeader at the start of b and returns it and
// its length in bytes; errShortHeader when b ends inside it.
func parsePageHeader(b []byte) (h pageHeader, n int, err error) {
	r := thriftReader{b: b}
	h.isCompressed = true
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if r.err != nil || t == 0 {
			break
		}
		last = id
		switch {
		case id == 1 && t == tI32:
			h.typ = r.i32()
		case id == 2 && t == tI32:
			h.uncompressed = r.i32()
		case id == 3 && t == tI32:
			h.compressed = r.i32()
		case (id == 5 || id == 7 || id == 8) && t == tStruct:
			r.pageSub(id, &h)
		default:
			r.skip(t, 0)
		}
	}
	if r.err != nil {
		return h, 0, r.err
	}
	if h.uncompressed < 0 || h.compressed < 0 || h.numValues < 0 {
		return h, 0, fmt.Errorf("negative sizes in page header")
	}
	return h, r.pos, nil
}

// pageSub parses DataPageHeader (5), DictionaryPageHeader (7) or
// DataPageHeaderV2 (8).
func (r *thriftReader) pageSub(which int16, h *pageHeader) {
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if r.err != nil || t == 0 {
			return
		}
		last = id
		if t == tI32 {
			v := r.i32()
			switch which {
			case 5: // num_values, encoding, definition_level_encoding, repetition_level_encoding
				switch id {
				case 1:
					h.numValues = v
				case 2:
					h.encoding = v
				case 3:
					h.defEncoding = v
				case 4:
					h.repEncoding = v
				}
			case 7: // num_values, encoding
				switch id {
				case 1:
					h.numValues = v
				case 2:
					h.encoding = v
				}
			case 8: // num_values, num_nulls, num_rows, encoding, def len, rep len
				switch id {
				case 1:
					h.numValues = v
				case 2:
					h.numNulls = v
				case 4:
					h.encoding = v
				case 5:
					h.defLen = v
				case 6:
					h.repLen = v
				}
			}
			continue
		}
		if which == 8 && id == 7 && (t == tBoolTrue || t == tBoolFalse) {
			h.isCompressed = t == tBoolTrue
			continue
		}
		r.skip(t, 0)
	}
}

// expandBits[b] holds the 8 bits of b as 8 bytes (bit k in byte k).
var expandBits = func() (t [256]uint64) {
	for b := range 256 {
		for k := range 8 {
			t[b] |= uint64(b>>k&1) << (8 * k)
		}
	}
	return t
}()

// defLevels decodes n definition levels of a flat optional column (max
// level 1, bit width 1) from the RLE/bit-packed hybrid b. It counts the
// defined values first without storing levels; only when some are null does
// it decode them into *lv (0 or 1 per row, reused, grown as needed).
func defLevels(b []byte, n int, lv *[]uint8) (defined int, levels []uint8, err error) {
	// Pass 1: count.
	rest, left := b, n
	for left > 0 {
		hdr, k := binary.Uvarint(rest)
		if k <= 0 {
			return 0, nil, errHybrid
		}
		rest = rest[k:]
		if hdr&1 == 0 {
			cnt := min(int(hdr>>1), left)
			if len(rest) < 1 || cnt == 0 || rest[0] > 1 {
				return 0, nil, errHybrid
			}
			defined += cnt * int(rest[0])
			rest, left = rest[1:], left-cnt
			continue
		}
		groups := int(hdr >> 1)
		if groups == 0 || groups > len(rest) {
			return 0, nil, errHybrid
		}
		cnt := min(groups*8, left)
		full := cnt / 8
		for _, c := range rest[:full] {
			defined += bits.OnesCount8(c)
		}
		if r := cnt % 8; r > 0 {
			defined += bits.OnesCount8(rest[full] & (1<<r - 1))
		}
		rest, left = rest[groups:], left-cnt
	}
	if defined == n {
		return n, nil, nil
	}
	// Pass 2: store the levels (8 at a time from bit-packed runs; the
	// buffer has 8 bytes to spare for the last group).
	if cap(*lv) < n+8 {
		*lv = make([]uint8, n+8, n+8+n/8)
	}
	out := (*lv)[:n+8]
	rest, pos := b, 0
	for pos < n {
		hdr, k := binary.Uvarint(rest)
		rest = rest[k:]
		if hdr&1 == 0 {
			cnt := min(int(hdr>>1), n-pos)
			v := rest[0]
			fill := out[pos : pos+cnt]
			for i := range fill {
				fill[i] = v
			}
			rest, pos = rest[1:], pos+cnt
			continue
		}
		groups := int(hdr >> 1)
		cnt := min(groups*8, n-pos)
		for g := 0; g*8 < cnt; g++ {
			binary.LittleEndian.PutUint64(out[pos+g*8:], expandBits[rest[g]])
		}
		rest, pos = rest[groups:], pos+cnt
	}
	return defined, out[:n], nil
}

// hybridGather decodes len(out) dictionary indices of bit width w from the
// RLE/bit-packed hybrid b and writes dict[index] into out. An index past
// the dictionary panics (the caller recovers and falls back).
func hybridGather[T any](b []byte, w uint, dict, out []T) error {
	if w > 32 {
		return errHybrid
	}
	vbytes := int((w + 7) / 8)
	mask := uint64(1)<<w - 1
	var pad [48]byte
	for len(out) > 0 {
		hdr, n := binary.Uvarint(b)
		if n <= 0 {
			return errHybrid
		}
		b = b[n:]
		if hdr&1 == 0 { // RLE run
			cnt := int(hdr >> 1)
			if len(b) < vbytes || cnt == 0 {
				return errHybrid
			}
			var x uint32
			for i := 0; i < vbytes; i++ {
				x |= uint32(b[i]) << (8 * i)
			}
			b = b[vbytes:]
			cnt = min(cnt, len(out))
			v := dict[x]
			fill := out[:cnt]
			for i := range fill {
				fill[i] = v
			}
			out = out[cnt:]
			continue
		}
		groups := int(hdr >> 1)
		nbytes := groups * int(w)
		if groups == 0 || nbytes > len(b) {
			return errHybrid
		}
		cnt := min(groups*8, len(out))
		// Loads of 8 bytes may run past the run into the bytes after it
		// (still inside b); the last values come from a padded copy.
		full := b
		b = b[nbytes:]
		if w == 0 {
			v := dict[0]
			for i := range out[:cnt] {
				out[i] = v
			}
			out = out[cnt:]
			continue
		}
		o := out[:cnt]
		// Whole groups of 8 values: value k of a group sits at bit k*w of
		// the group's w bytes; 8 independent loads per group, each of 8
		// bytes that stay inside full.
		var offs [8]uintptr
		var shifts [8]uint
		for k := range 8 {
			offs[k], shifts[k] = uintptr(uint(k)*w>>3), uint(k)*w&7
		}
		g := 0
		if safe := (len(full) - 8) / int(w); safe > 0 {
			base := unsafe.Pointer(unsafe.SliceData(full))
			ng := min(len(o)/8, safe-1) // the last load of group g reads up to byte g*w+w-1+8 < len(full)
			for ; g < ng; g++ {
				p := unsafe.Add(base, g*int(w))
				d := o[g*8 : g*8+8 : g*8+8]
				d[0] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[0]))>>shifts[0]&mask)]
				d[1] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[1]))>>shifts[1]&mask)]
				d[2] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[2]))>>shifts[2]&mask)]
				d[3] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[3]))>>shifts[3]&mask)]
				d[4] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[4]))>>shifts[4]&mask)]
				d[5] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[5]))>>shifts[5]&mask)]
				d[6] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[6]))>>shifts[6]&mask)]
				d[7] = dict[uint32(*(*uint64)(unsafe.Add(p, offs[7]))>>shifts[7]&mask)]
			}
		}
		i := g * 8
		bit := uint(i) * w
		for ; i < len(o); i++ {
			at := int(bit >> 3)
			if at+8 > len(full) {
				break
			}
			o[i] = dict[uint32(binary.LittleEndian.Uint64(full[at:])>>(bit&7)&mask)]
			bit += w
		}
		if i < len(o) {
			start := int(bit >> 3)
			copy(pad[:], full[start:nbytes])
			bit -= uint(start) * 8
			for ; i < len(o); i++ {
				o[i] = dict[uint32(binary.LittleEndian.Uint64(pad[bit>>3:])>>(bit&7)&mask)]
				bit += w
			}
		}
		out = out[cnt:]
	}
	return nil
}

var errHybrid = errors.New("corrupt RLE/bit-packed data")

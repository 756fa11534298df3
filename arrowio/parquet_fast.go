package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/arktos-dev/arktos/pdarray"
)

// The direct page reader: for flat BOOLEAN/INT32/INT64/FLOAT/DOUBLE columns
// (every dtype; 8/16-bit integers and bools are decoded as 32-bit words and
// narrowed) it reads a
// column chunk's pages itself instead of going through arrow-go's column
// reader:
//
//   - A compressed chunk is read with one ReadAt into the worker's reused
//     buffer (never zeroed); an uncompressed chunk is read page by page, and
//     the values of an uncompressed PLAIN page are read by ReadAt straight
//     into the destination array.
//   - A PLAIN page of a required column is decompressed straight into the
//     destination; other pages into the worker's reused page buffer, which
//     keeps spare capacity so klauspost's zstd takes its fast path. Zstd
//     pages are decoded by the system's libzstd when it loads
//     (zstd_native.go), else by klauspost's decoder (one per worker, reused).
//   - PLAIN values are copied; dictionary indices (RLE/bit-packed) are
//     gathered from the chunk's dictionary; DELTA_BINARY_PACKED and
//     BYTE_STREAM_SPLIT values are decoded into the destination
//     (parquet_delta.go); nulls are spread in place.
//
// Anything else (other encodings, encrypted or
// PARQUET-816 files, or any surprise while decoding, such as corrupt data)
// falls back to arrow-go's reader, which rewrites the whole unit and
// reports errors in its own words; a failed read of the file (readError)
// is reported as it is.

// errNotFast says the direct reader does not handle this chunk.
var errNotFast = errors.New("not for the direct reader")

// disableFast turns the direct reader off, disableNativeZstd the use of
// libzstd (tests compare the paths).
var disableFast, disableNativeZstd bool

// fastScratch is one worker's reusable buffers for the direct reader. It
// owns every buffer; none is handed out beyond one unit.
type fastScratch struct {
	chunk []byte        // a compressed column chunk
	page  []byte        // a decompressed page (spare capacity for zstd)
	peek  []byte        // page headers and levels of an uncompressed chunk
	body  []byte        // an uncompressed page's body when not read into dst
	dict  []byte        // the decoded dictionary (values' bytes)
	lvl   []uint8       // definition levels of a page with nulls
	wide  []byte        // 8/16-bit columns' values as INT32, before narrowing
	zstd  *zstd.Decoder // klauspost's, when libzstd is not loaded
	nz    *nativeZstd   // the system's libzstd (zstd_native.go)
	// ahead is the unit's compressed chunk read ahead, from file offset
	// aheadStart (lent by readAhead.take; nil when not read ahead).
	ahead      []byte
	aheadStart int64
}

var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(true))
	if err != nil {
		panic(err) // unreachable: the options are valid
	}
	return d
}}

func (s *fastScratch) release() {
	if s.zstd != nil {
		zstdDecoders.Put(s.zstd)
		s.zstd = nil
	}
	if s.nz != nil {
		putNativeZstd(s.nz)
		s.nz = nil
	}
}

// zstdSpare is the capacity kept beyond a zstd page's decompressed size:
// klauspost's decoder takes a slower bounds-checked path when the output
// has less than 16 bytes to spare.
const zstdSpare = 64

// grow returns b resliced to n bytes, reallocating (without keeping the
// contents) when its capacity is short; new memory is the only memory
// that is ever zeroed.
func grow(b []byte, n, spare int) []byte {
	if cap(b) < n+spare {
		return make([]byte, n, n+spare+n/8)
	}
	return b[:n]
}

// fastEligible says whether unit (f, rg, col) may use the direct reader.
func (p *ParquetPlan) fastEligible(pc *PlanColumn, cc *metadata.ColumnChunkMetaData, md *metadata.FileMetaData, maxDef int16) bool {
	if disableFast || maxDef > 1 {
		return false
	}
	switch pc.DType {
	case pdarray.Int64, pdarray.Uint64, pdarray.Float64, pdarray.Int32, pdarray.Uint32, pdarray.Float32,
		pdarray.Int8, pdarray.Int16, pdarray.Uint8, pdarray.Uint16, pdarray.Bool:
	default:
		return false
	}
	if cc.CryptoMetadata() != nil || md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		return false
	}
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLE,
			parquet.Encodings.RLEDict, parquet.Encodings.BitPacked,
			parquet.Encodings.DeltaBinaryPacked, parquet.Encodings.ByteStreamSplit:
		default:
			return false
		}
	}
	return true
}

// readUnitFast decodes one column chunk with the direct reader into dst
// (the unit's rows, as raw bytes) and mask.
// dst's capacity ends at the unit's end.
func (p *ParquetPlan) readUnitFast(pc *PlanColumn, cc *metadata.ColumnChunkMetaData, maxDef int16, f int, dst []byte, mask []bool, rows int, sc *fastScratch) (nulls int64, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("%w: %v", errNotFast, x)
		}
	}()
	size := pc.DType.Size()
	narrow := size < 4 // 8/16-bit integers (stored as INT32) and bools: decoded into sc.wide as 32-bit words, then narrowed
	out := dst
	if narrow {
		size = 4
		sc.wide = grow(sc.wide, rows*4, zstdSpare)
		out = sc.wide
	}
	u := fastUnit{
		p: p, pc: pc, sc: sc, r: p.srcs[f], codec: cc.Compression(), size: size,
		dst: out, mask: mask, rows: rows, maxDef: maxDef, bits: pc.DType == pdarray.Bool,
	}
	u.fill = fillBits(pc.DType, p.policy)
	// Sizes come from the file: check them against the file before
	// allocating anything.
	start, n, ok := chunkRange(cc, p.files[f].MetaData().GetSourceFileSize())
	if !ok {
		return 0, errNotFast
	}
	u.start, u.pos, u.end = start, start, start+n
	if u.codec != compress.Codecs.Uncompressed {
		if sc.ahead != nil && sc.aheadStart == start && len(sc.ahead) == int(n) {
			u.mem = sc.ahead // read ahead (parquet_ahead.go)
			Stats.AheadChunks.Add(1)
		} else {
			// One read for the whole chunk into a reused, unzeroed buffer.
			sc.chunk = grow(sc.chunk, int(n), 0)
			if err := readFull(u.r, sc.chunk, start); err != nil {
				return 0, err
			}
			u.mem = sc.chunk
		}
		if u.codec == compress.Codecs.Zstd && sc.zstd == nil && sc.nz == nil {
			if sc.nz = getNativeZstd(); sc.nz == nil || disableNativeZstd {
				sc.zstd = zstdDecoders.Get().(*zstd.Decoder)
			}
		}
	}
	if size == 8 {
		err = runPages[uint64](&u)
	} else {
		err = runPages[uint32](&u)
	}
	if err != nil {
		return 0, err
	}
	if narrow {
		wide := pdarray.BytesAs[int32](sc.wide[:rows*4])
		switch pc.DType {
		case pdarray.Int8:
			narrowInto(pdarray.BytesAs[int8](dst), wide)
		case pdarray.Uint8, pdarray.Bool: // bools were decoded as 0 or 1
			narrowInto(pdarray.BytesAs[uint8](dst), wide)
		case pdarray.Int16:
			narrowInto(pdarray.BytesAs[int16](dst), wide)
		case pdarray.Uint16:
			narrowInto(pdarray.BytesAs[uint16](dst), wide)
		}
		Stats.ConvertedValues.Add(uint64(rows))
	}
	return u.nulls, nil
}

// decodeBools decodes len(d) BOOLEAN values as 0 or 1: PLAIN values are
// bits, least significant first; RLE values are a 4-byte length and an
// RLE/bit-packed hybrid of bit width 1.
func decodeBools(vals []byte, plain bool, d []uint32) error {
	if plain {
		if len(vals)*8 < len(d) {
			return errHybrid
		}
		for i := range d {
			d[i] = uint32(vals[i>>3]>>(i&7)) & 1
		}
		return nil
	}
	if len(d) == 0 {
		return nil
	}
	if len(vals) < 4 {
		return errHybrid
	}
	l := int(binary.LittleEndian.Uint32(vals))
	if l < 0 || l > len(vals)-4 {
		return errHybrid
	}
	return hybridGather(vals[4:4+l], 1, boolDict[:], d)
}

var boolDict = [2]uint32{0, 1}

// narrowInto converts INT32 values to the 8/16-bit dtype (the writer
// stored them from that dtype; fill values were checked to fit).
func narrowInto[T narrowInt](dst []T, src []int32) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = T(v)
	}
}

// fillBits is the policy's fill value as the dtype's raw bits.
func fillBits(d pdarray.DType, pol NullPolicy) uint64 {
	switch d {
	case pdarray.Int64:
		return uint64(fillAs[int64](pol))
	case pdarray.Uint64:
		return fillAs[uint64](pol)
	case pdarray.Float64:
		return math.Float64bits(fillAs[float64](pol))
	case pdarray.Int32:
		return uint64(uint32(fillAs[int32](pol)))
	case pdarray.Uint32:
		return uint64(fillAs[uint32](pol))
	case pdarray.Float32:
		return uint64(math.Float32bits(fillAs[float32](pol)))
	case pdarray.Int8:
		return uint64(uint32(int32(fillAs[int8](pol))))
	case pdarray.Int16:
		return uint64(uint32(int32(fillAs[int16](pol))))
	case pdarray.Uint8:
		return uint64(fillAs[uint8](pol))
	case pdarray.Uint16:
		return uint64(fillAs[uint16](pol))
	case pdarray.Bool:
		if fillAs[bool](pol) {
			return 1
		}
	}
	return 0
}

// fastUnit is one column chunk being read by the direct reader.
type fastUnit struct {
	p      *ParquetPlan
	pc     *PlanColumn
	sc     *fastScratch
	r      io.ReaderAt
	codec  compress.Compression
	size   int
	dst    []byte // the unit's rows
	mask   []bool
	rows   int
	maxDef int16
	fill   uint64
	nulls  int64
	bits   bool // BOOLEAN: values are bits (PLAIN) or an RLE hybrid of width 1, decoded as 32-bit 0/1

	noShift         bool   // a page did not fit shifted (see shifted)
	start, pos, end int64  // the chunk's start, the next page header, the chunk's end
	mem             []byte // the whole chunk when compressed (mem[0] is at start)
}

// at returns n bytes of the chunk at file offset off: from the buffered
// chunk, or read into *into.
func (u *fastUnit) at(off int64, n int, into *[]byte) ([]byte, error) {
	if off < u.start || n < 0 || off+int64(n) > u.end {
		return nil, errNotFast
	}
	if u.mem != nil {
		o := off - u.start
		return u.mem[o : o+int64(n)], nil
	}
	*into = grow(*into, n, 0)
	if err := readFull(u.r, *into, off); err != nil {
		return nil, err
	}
	return *into, nil
}

// readFull fills b from r at off: a short read is an error (b is never
// zeroed, so stale bytes must not pass for data). A failed read (not the
// file's end) is a readError, which the read reports as it is instead of
// trying arrow-go's reader, whose message would only say the chunk ended.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	m, err := r.ReadAt(b, off)
	if m == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return io.ErrUnexpectedEOF
	}
	return readError{off, err}
}

// readError is a read of the file that failed at byte off.
type readError struct {
	off int64
	err error
}

func (e readError) Error() string { return fmt.Sprintf("reading at byte %d: %v", e.off, e.err) }
func (e readError) Unwrap() error { return e.err }

// readInto fills d with the chunk's bytes at off (uncompressed chunks only).
func (u *fastUnit) readInto(off int64, d []byte) error {
	if off < u.start || off+int64(len(d)) > u.end {
		return errNotFast
	}
	return readFull(u.r, d, off)
}

// header reads and parses the page header at u.pos.
func (u *fastUnit) header() (pageHeader, error) {
	want := 512
	for {
		n := int(min(int64(want), u.end-u.pos))
		b, err := u.at(u.pos, n, &u.sc.peek)
		if err != nil {
			return pageHeader{}, err
		}
		h, hl, err := parsePageHeader(b)
		if err == errShortHeader && n == want && want < 1<<20 {
			want *= 16
			continue
		}
		if err != nil {
			return pageHeader{}, fmt.Errorf("%w: page header: %v", errNotFast, err)
		}
		u.pos += int64(hl)
		return h, nil
	}
}

// decompress decodes src (a whole compressed page or page part) into
// dst[:n] and returns it. dst may be the destination array (then its
// capacity was checked by the caller) or the page buffer.
func (u *fastUnit) decompress(dst, src []byte) error {
	n := len(dst)
	switch u.codec {
	case compress.Codecs.Zstd:
		if u.sc.zstd == nil {
			if got := u.sc.nz.decode(dst[:0:n], src); got != n {
				return fmt.Errorf("%w: zstd page: libzstd gave %d bytes, header says %d", errNotFast, got, n)
			}
			Stats.NativeZstdPages.Add(1)
			return nil
		}
		Stats.GoZstdPages.Add(1)
		out, err := u.sc.zstd.DecodeAll(src, dst[:0])
		if err != nil {
			return err
		}
		if len(out) != n {
			return fmt.Errorf("%w: zstd page is %d bytes, header says %d", errNotFast, len(out), n)
		}
		if n > 0 && &out[0] != &dst[0] {
			copy(dst, out) // unreachable when the capacity was enough
		}
	case compress.Codecs.Snappy:
		dl, err := s2.DecodedLen(src)
		if err != nil || dl != n {
			return fmt.Errorf("%w: snappy page is %d bytes, header says %d (%v)", errNotFast, dl, n, err)
		}
		if _, err := s2.Decode(dst, src); err != nil {
			return err
		}
	default:
		codec, err := compress.GetCodec(u.codec)
		if err != nil {
			return errNotFast
		}
		out, err := compress.Decode(codec, dst[:n:n], src)
		if err != nil {
			return err
		}
		if len(out) != n {
			return fmt.Errorf("%w: page is %d bytes, header says %d", errNotFast, len(out), n)
		}
		if n > 0 && &out[0] != &dst[0] {
			copy(dst, out)
		}
	}
	return nil
}

// roomAfter says whether a page may be decompressed straight into out, a
// slice of u.dst whose capacity ends at the unit's end: zstd needs spare
// capacity past out (it may write scratch bytes there, which later pages
// overwrite), the other codecs write exactly len(out) bytes.
func (u *fastUnit) roomAfter(out []byte) bool {
	return u.codec != compress.Codecs.Zstd || u.sc.zstd == nil || cap(out)-len(out) >= zstdSpare
}

// shifted tries to decompress a data page v1 of an optional column (max
// definition level 1) straight into out, assuming its levels say that all
// nv rows are defined: the page is then a 4-byte length, one RLE run
// (uvarint nv<<1, value 1) and the values, so it is decompressed into
// the bytes that end where out ends, its level prefix landing on the
// previous rows of this unit (saved and put back). It reports false, having
// changed nothing outside out, when the page is not like that (some nulls,
// other level runs, the unit's first page, or a chunk that has shown
// nulls before).
func (u *fastUnit) shifted(out []byte, row, nv, un int, plain bool, raw []byte) (bool, error) {
	if u.maxDef != 1 || !plain || u.noShift {
		return false, nil
	}
	var pre [16]byte
	l := binary.PutUvarint(pre[4:], uint64(nv)<<1)
	pre[4+l] = 1
	binary.LittleEndian.PutUint32(pre[:], uint32(l+1))
	pl := 4 + l + 1
	start := row*u.size - pl
	if start < 0 || un != pl+len(out) {
		return false, nil
	}
	win := u.dst[start : start+un] // capacity: to the unit's end
	if !u.roomAfter(win) {
		return false, nil
	}
	var saved [16]byte
	copy(saved[:pl], win[:pl])
	err := u.decompress(win, raw)
	ok := err == nil && string(win[:pl]) == string(pre[:pl])
	copy(win[:pl], saved[:pl])
	if err != nil {
		return false, err
	}
	if !ok {
		u.noShift = true
	}
	return ok, nil
}

type word interface{ uint32 | uint64 }

// runPages walks the chunk's pages, filling u.dst with T-sized values.
func runPages[T word](u *fastUnit) error {
	sz := u.size
	row := 0
	var dict []T
	for row < u.rows {
		if u.pos >= u.end {
			return fmt.Errorf("%w: column chunk ended after %d of %d rows", errNotFast, row, u.rows)
		}
		h, err := u.header()
		if err != nil {
			return err
		}
		body := u.pos
		u.pos += int64(h.compressed)
		if u.pos > u.end {
			return errNotFast
		}
		switch h.typ {
		case pageDictionary:
			if h.encoding != encPlain && h.encoding != encPlainDict {
				return errNotFast
			}
			raw, err := u.at(body, int(h.compressed), &u.sc.body)
			if err != nil {
				return err
			}
			n := int(h.numValues)
			if int(h.uncompressed) < n*sz || n > u.rows || int(h.uncompressed) > n*sz+64 {
				return errNotFast // a plain dictionary of at most one entry per row
			}
			u.sc.dict = grow(u.sc.dict, int(h.uncompressed), zstdSpare)
			if u.codec == compress.Codecs.Uncompressed {
				copy(u.sc.dict, raw)
			} else if err := u.decompress(u.sc.dict, raw); err != nil {
				return err
			}
			dict = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(u.sc.dict))), n)
			Stats.DictPages.Add(1)
		case pageData, pageDataV2:
			nv := int(h.numValues)
			if nv > u.rows-row || nv < 0 {
				return fmt.Errorf("%w: page holds more rows than the row group", errNotFast)
			}
			// Levels take at most ~2 bytes per row and values sz bytes
			// (dictionary indices at most 5): no page decompresses to more.
			if int64(h.uncompressed) > int64(nv)*int64(sz+2)+1<<16 {
				return fmt.Errorf("%w: page of %d rows claims %d bytes", errNotFast, nv, h.uncompressed)
			}
			if err := dataPage(u, &h, body, row, nv, dict); err != nil {
				return err
			}
			row += nv
		case pageIndex:
		default:
			return errNotFast
		}
	}
	return nil
}

// dataPage decodes one data page (v1 or v2) of nv rows into rows
// [row, row+nv) of u.dst.
func dataPage[T word](u *fastUnit, h *pageHeader, body int64, row, nv int, dict []T) error {
	sz := u.size
	out := u.dst[row*sz : (row+nv)*sz]
	compressed := u.codec != compress.Codecs.Uncompressed
	plain := h.encoding == encPlain
	if u.bits {
		if !plain && h.encoding != encRLE {
			return errNotFast
		}
	} else if !plain && h.encoding != encRLEDict && h.encoding != encPlainDict && h.encoding != encDelta && h.encoding != encStreamSplit {
		return errNotFast
	}
	// Values that are bits never go straight into the destination.
	direct32 := plain && !u.bits
	// Locate the levels and the values section.
	var levels []byte   // definition levels (RLE), nil when maxDef == 0
	var vals []byte     // the values section, decoded
	var valsOff int64   // uncompressed chunks: the values' file offset
	var valsLen int     // and length
	inFile := false     // the values are still in the file at valsOff
	direct := false     // the values went straight into out
	allDefined := false // every row is defined, known without decoding levels
	if h.typ == pageData {
		if h.repEncoding != encRLE && h.repEncoding != encBitPacked && h.repEncoding != 0 {
			return errNotFast
		}
		if u.maxDef > 0 && h.defEncoding != encRLE {
			return errNotFast
		}
		if !compressed {
			off := body
			if u.maxDef > 0 {
				lb, err := u.at(off, 4, &u.sc.peek)
				if err != nil {
					return err
				}
				l := int(binary.LittleEndian.Uint32(lb))
				if l < 0 || int64(l) > int64(h.compressed)-4 {
					return errNotFast
				}
				levels, err = u.at(off+4, l, &u.sc.peek)
				if err != nil {
					return err
				}
				off += 4 + int64(l)
			}
			valsOff, valsLen, inFile = off, int(body+int64(h.compressed)-off), true
		} else {
			raw, err := u.at(body, int(h.compressed), nil)
			if err != nil {
				return err
			}
			un := int(h.uncompressed)
			if u.maxDef == 0 && direct32 && un == len(out) && u.roomAfter(out) {
				// Straight into the destination: the spare bytes past out
				// belong to this unit's later rows, written after.
				if err := u.decompress(out, raw); err != nil {
					return err
				}
				Stats.DirectPages.Add(1)
				direct = true
			} else if ok, err := u.shifted(out, row, nv, un, direct32, raw); err != nil {
				return err
			} else if ok {
				Stats.ShiftedPages.Add(1)
				direct, allDefined = true, true
			} else {
				u.sc.page = grow(u.sc.page, un, zstdSpare)
				if err := u.decompress(u.sc.page, raw); err != nil {
					return err
				}
				page := u.sc.page
				if u.maxDef > 0 {
					if len(page) < 4 {
						return errNotFast
					}
					l := int(binary.LittleEndian.Uint32(page))
					if l < 0 || l > len(page)-4 {
						return errNotFast
					}
					levels, page = page[4:4+l], page[4+l:]
				}
				vals = page
			}
		}
	} else { // v2: levels first, uncompressed; then the values, maybe compressed
		if h.repLen != 0 || h.defLen < 0 || int64(h.defLen) > int64(h.compressed) {
			return errNotFast
		}
		if u.maxDef > 0 {
			var err error
			if levels, err = u.at(body, int(h.defLen), &u.sc.peek); err != nil {
				return err
			}
		} else if h.defLen != 0 {
			return errNotFast
		}
		off := body + int64(h.defLen)
		clen := int(h.compressed - h.defLen)
		un := int(h.uncompressed - h.defLen)
		if !compressed || !h.isCompressed {
			if un != clen {
				return errNotFast
			}
			if compressed {
				var err error
				if vals, err = u.at(off, clen, nil); err != nil {
					return err
				}
			} else {
				valsOff, valsLen, inFile = off, clen, true
			}
		} else {
			raw, err := u.at(off, clen, nil)
			if err != nil {
				return err
			}
			if u.maxDef == 0 && direct32 && un == len(out) && u.roomAfter(out) {
				if err := u.decompress(out, raw); err != nil {
					return err
				}
				Stats.DirectPages.Add(1)
				direct = true
			} else {
				u.sc.page = grow(u.sc.page, un, zstdSpare)
				if err := u.decompress(u.sc.page, raw); err != nil {
					return err
				}
				vals = u.sc.page
			}
		}
	}
	// Definition levels: how many values are defined (levels are stored
	// only when some are not).
	defined := nv
	var lv []uint8
	if u.maxDef > 0 && !allDefined {
		var err error
		if defined, lv, err = defLevels(levels, nv, &u.sc.lvl); err != nil {
			return fmt.Errorf("%w: %v", errNotFast, err)
		}
	}
	if defined < nv && !u.p.nullsAllowed(u.pc) {
		return errNulls
	}
	dense := out[:defined*sz]
	if inFile && (u.bits || !plain) {
		// An uncompressed page still in the file: only PLAIN numbers are
		// read straight into the destination (below); the other kinds are
		// decoded from the page's bytes.
		var err error
		if vals, err = u.at(valsOff, valsLen, &u.sc.body); err != nil {
			return err
		}
	}
	switch {
	case direct:
	case u.bits:
		d := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dense))), defined)
		if err := decodeBools(vals, plain, d); err != nil {
			return fmt.Errorf("%w: %v", errNotFast, err)
		}
		Stats.BoolPages.Add(1)
	case plain && inFile:
		// Uncompressed PLAIN: read the values straight into the destination.
		if valsLen < len(dense) {
			return errNotFast
		}
		if err := u.readInto(valsOff, dense); err != nil {
			return err
		}
		Stats.DirectPages.Add(1)
	case plain:
		if len(vals) < len(dense) {
			return errNotFast
		}
		copy(dense, vals)
		Stats.CopiedPages.Add(1)
	case h.encoding == encDelta || h.encoding == encStreamSplit:
		d := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(dense))), defined)
		if h.encoding == encDelta {
			if err := deltaBinaryPacked(vals, d); err != nil {
				return fmt.Errorf("%w: %v", errNotFast, err)
			}
			Stats.DeltaPages.Add(1)
		} else {
			if err := byteStreamSplit(vals, d); err != nil {
				return fmt.Errorf("%w: %v", errNotFast, err)
			}
			Stats.SplitPages.Add(1)
		}
	default: // dictionary indices
		if defined > 0 {
			if len(vals) < 1 || vals[0] > 32 || dict == nil {
				return errNotFast
			}
			d := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(dense))), defined)
			if err := hybridGather(vals[1:], uint(vals[0]), dict, d); err != nil {
				return fmt.Errorf("%w: %v", errNotFast, err)
			}
		}
		Stats.DictDecodedPages.Add(1)
	}
	Stats.DirectValues.Add(uint64(defined))
	typed := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(out))), nv)
	if defined < nv {
		u.nulls += int64(nv - defined)
		spread(typed, defined, lv, 1, T(u.fill))
		Stats.SpreadValues.Add(uint64(defined))
	}
	if u.mask != nil {
		markNulls(u.mask[row:row+nv], lv, 1, defined == nv)
	}
	return nil
}

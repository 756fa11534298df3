package transfer

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
)

// A hand-written msgpack codec for headers, the hot path of every request:
// the generic encoder/decoder (reflection, a bytes.Buffer, an interface per
// step) took ~13 µs of a small request's round trip on both sides together.
//
// It is exact, not approximate: appendValue writes the same bytes as the
// canonical msgpack.Encoder of newEncoder, and decodeValue returns the same
// Go values as msgpack.Decoder.DecodeInterface (int8 for a fixint, uint16
// for a uint16, []any, map[string]any, []byte for bin, ...). Anything off
// its fast path -- a type it does not know, malformed or truncated bytes, an
// ext type, a map key that is not a str -- goes to the generic codec, so
// results and error messages stay those of the library. FuzzHeaderCodec
// checks both claims against the library.

// appendValue appends v in the canonical encoding (smallest integers,
// sorted map keys). Types it does not know are encoded by the library.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, 0xc0), nil
	case bool:
		if x {
			return append(dst, 0xc3), nil
		}
		return append(dst, 0xc2), nil
	case string:
		return appendStr(dst, x), nil
	case []byte:
		if x == nil {
			return append(dst, 0xc0), nil
		}
		return append(appendBinLen(dst, len(x)), x...), nil
	case int:
		return appendInt(dst, int64(x)), nil
	case int8:
		return appendInt(dst, int64(x)), nil
	case int16:
		return appendInt(dst, int64(x)), nil
	case int32:
		return appendInt(dst, int64(x)), nil
	case int64:
		return appendInt(dst, x), nil
	case uint:
		return appendUint(dst, uint64(x)), nil
	case uint8:
		return appendUint(dst, uint64(x)), nil
	case uint16:
		return appendUint(dst, uint64(x)), nil
	case uint32:
		return appendUint(dst, uint64(x)), nil
	case uint64:
		return appendUint(dst, x), nil
	case float64:
		dst = append(dst, 0xcb)
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case map[string]any:
		if x == nil {
			return append(dst, 0xc0), nil
		}
		return appendMap(dst, x)
	case []any:
		if x == nil {
			return append(dst, 0xc0), nil
		}
		dst = appendContainerLen(dst, len(x), 0x90, 0xdc)
		var err error
		for _, e := range x {
			if dst, err = appendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case []string:
		if x == nil {
			return append(dst, 0xc0), nil
		}
		dst = appendContainerLen(dst, len(x), 0x90, 0xdc)
		for _, e := range x {
			dst = appendStr(dst, e)
		}
		return dst, nil
	}
	// Anything else (float32, other slices and maps, structs ...): the
	// library, with the same canonical settings.
	var buf bytes.Buffer
	if err := newEncoder(&buf).Encode(v); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// appendMap appends m with its keys sorted bytewise.
func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	dst = appendContainerLen(dst, len(m), 0x80, 0xde)
	var stack [16]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		dst = appendStr(dst, k)
		if dst, err = appendValue(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func appendUint(dst []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(dst, byte(n))
	case n <= math.MaxUint8:
		return append(dst, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), n)
}

func appendInt(dst []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(dst, uint64(n))
	case n >= -32:
		return append(dst, byte(n))
	case n >= math.MinInt8:
		return append(dst, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(n))
}

func appendStr(dst []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n < 256:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}

func appendBinLen(dst []byte, n int) []byte {
	switch {
	case n < 256:
		return append(dst, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xc5), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xc6), uint32(n))
}

// appendContainerLen writes an array (fix 0x90, 0xdc) or map (0x80, 0xde)
// header of n entries.
func appendContainerLen(dst []byte, n int, fix, c16 byte) []byte {
	switch {
	case n < 16:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, c16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, c16+1), uint32(n))
}

// known holds the strings that recur in headers (keys, command and dtype
// names), boxed once: a decoded string found here costs no allocation (the
// lookup with string(b) does not copy, and the value is already an
// interface).
var known = func() map[string]any {
	m := map[string]any{}
	for _, k := range []string{
		"", "v", "id", "token", "cmd", "args", "status", "code", "error", "message", "result",
		"name", "names", "dtype", "size", "nbytes", "frame_size", "start", "stop", "stream",
		"shm", "compression", "missing_ok", "arrays", "deleted", "freed", "used", "limit",
		"free", "pooled", "protocol_version", "server_version", "max_frame_size", "max_memory",
		"workers", "auth", "dtypes", "op", "out", "value", "zstd",
		"get_config", "upload", "download", "info", "list", "delete", "mem_used", "stats",
		"open_stream", "close_stream", "reduce", "binop", "unop",
		"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"float32", "float64",
	} {
		m[k] = k
	}
	return m
}()

func internStr(b []byte) any {
	if v, ok := known[string(b)]; ok {
		return v
	}
	return string(b)
}

// decodeValue decodes one msgpack value at the start of b and returns it
// and its length; ok is false for anything off the fast path (see above),
// which the caller then hands to the library. It never allocates more than
// the bytes present could fill.
func decodeValue(b []byte, depth int) (v any, n int, ok bool) {
	if len(b) == 0 || depth > maxDepth {
		return nil, 0, false
	}
	c := b[0]
	switch {
	case c <= 0x7f || c >= 0xe0:
		return int8(c), 1, true
	case c&0xf0 == 0x80:
		return decodeMapBody(b, 1, int(c&0x0f), depth)
	case c&0xf0 == 0x90:
		return decodeArrayBody(b, 1, int(c&0x0f), depth)
	case c&0xe0 == 0xa0:
		return decodeStr(b, 1, int(c&0x1f))
	}
	switch c {
	case 0xc0:
		return nil, 1, true
	case 0xc2:
		return false, 1, true
	case 0xc3:
		return true, 1, true
	}
	// Fixed-width values and length headers: 1, 2, 4 or 8 bytes after c.
	width := 0
	switch c {
	case 0xcc, 0xd0, 0xc4, 0xd9:
		width = 1
	case 0xcd, 0xd1, 0xc5, 0xda, 0xdc, 0xde:
		width = 2
	case 0xca, 0xce, 0xd2, 0xc6, 0xdb, 0xdd, 0xdf:
		width = 4
	case 0xcb, 0xcf, 0xd3:
		width = 8
	default:
		return nil, 0, false // ext types and unused codes
	}
	if len(b) < 1+width {
		return nil, 0, false
	}
	var u uint64
	switch width {
	case 1:
		u = uint64(b[1])
	case 2:
		u = uint64(binary.BigEndian.Uint16(b[1:]))
	case 4:
		u = uint64(binary.BigEndian.Uint32(b[1:]))
	default:
		u = binary.BigEndian.Uint64(b[1:])
	}
	hdr := 1 + width
	switch c {
	case 0xcc:
		return uint8(u), hdr, true
	case 0xcd:
		return uint16(u), hdr, true
	case 0xce:
		return uint32(u), hdr, true
	case 0xcf:
		return u, hdr, true
	case 0xd0:
		return int8(u), hdr, true
	case 0xd1:
		return int16(u), hdr, true
	case 0xd2:
		return int32(u), hdr, true
	case 0xd3:
		return int64(u), hdr, true
	case 0xca:
		return math.Float32frombits(uint32(u)), hdr, true
	case 0xcb:
		return math.Float64frombits(u), hdr, true
	case 0xd9, 0xda, 0xdb:
		return decodeStr(b, hdr, int(u))
	case 0xc4, 0xc5, 0xc6:
		if u > uint64(len(b)-hdr) {
			return nil, 0, false
		}
		// A fresh copy, as the library returns (b may be a libzmq buffer).
		return append(make([]byte, 0, u), b[hdr:hdr+int(u)]...), hdr + int(u), true
	case 0xdc, 0xdd:
		return decodeArrayBody(b, hdr, int(u), depth)
	}
	return decodeMapBody(b, hdr, int(u), depth) // 0xde, 0xdf
}

func decodeStr(b []byte, hdr, n int) (any, int, bool) {
	if n < 0 || n > len(b)-hdr {
		return nil, 0, false
	}
	return internStr(b[hdr : hdr+n]), hdr + n, true
}

func decodeArrayBody(b []byte, off, count, depth int) (any, int, bool) {
	if count < 0 || count > len(b)-off { // every element takes a byte at least
		return nil, 0, false
	}
	out := make([]any, count)
	for i := range out {
		v, n, ok := decodeValue(b[off:], depth+1)
		if !ok {
			return nil, 0, false
		}
		out[i] = v
		off += n
	}
	return out, off, true
}

func decodeMapBody(b []byte, off, count, depth int) (any, int, bool) {
	if count < 0 || count > (len(b)-off)/2 { // every entry takes two bytes at least
		return nil, 0, false
	}
	out := make(map[string]any, count)
	for range count {
		if off >= len(b) {
			return nil, 0, false
		}
		// Keys: str only (the library also takes bin and nil keys; those
		// go to it).
		c := b[off]
		klen, hdr := 0, 1
		switch {
		case c&0xe0 == 0xa0:
			klen = int(c & 0x1f)
		case c == 0xd9 && off+1 < len(b):
			klen, hdr = int(b[off+1]), 2
		default:
			return nil, 0, false
		}
		if klen > len(b)-off-hdr {
			return nil, 0, false
		}
		key, _ := internStr(b[off+hdr : off+hdr+klen]).(string)
		off += hdr + klen
		v, n, ok := decodeValue(b[off:], depth+1)
		if !ok {
			return nil, 0, false
		}
		out[key] = v
		off += n
	}
	return out, off, true
}

package transfer

import (
	"encoding/binary"
	"fmt"
)

// maxDepth bounds nesting in a header; real headers nest three deep.
const maxDepth = 32

// scanMsgpack walks one msgpack value at the start of b without allocating
// and returns its length. It refuses any declared length (string, binary,
// array or map count) that the remaining bytes cannot hold, and nesting
// deeper than maxDepth, so the decoder that runs after it never sizes an
// allocation from a lie (a 5-byte map32 header may claim 4 billion entries).
func scanMsgpack(b []byte, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	if len(b) == 0 {
		return 0, fmt.Errorf("unexpected end of data")
	}
	c := b[0]
	need := func(n int) error {
		if n > len(b) {
			return fmt.Errorf("a value at byte 0x%02x needs %d bytes, only %d remain", c, n, len(b))
		}
		return nil
	}
	lenN := func(width int) (int, error) {
		if err := need(1 + width); err != nil {
			return 0, err
		}
		switch width {
		case 1:
			return int(b[1]), nil
		case 2:
			return int(binary.BigEndian.Uint16(b[1:])), nil
		default:
			return int(binary.BigEndian.Uint32(b[1:])), nil
		}
	}
	fixed := func(n int) (int, error) { return n, need(n) }
	blob := func(width int) (int, error) { // str/bin: header + n bytes
		n, err := lenN(width)
		if err != nil {
			return 0, err
		}
		return fixed(1 + width + n)
	}
	seq := func(hdr, count, per int) (int, error) { // array (per=1) or map (per=2)
		if count > (len(b)-hdr)/per {
			return 0, fmt.Errorf("a container declares %d entries but only %d bytes remain", count, len(b)-hdr)
		}
		off := hdr
		for i := 0; i < count*per; i++ {
			n, err := scanMsgpack(b[off:], depth+1)
			if err != nil {
				return 0, err
			}
			off += n
		}
		return off, nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return 1, nil
	case c&0xf0 == 0x80:
		return seq(1, int(c&0x0f), 2)
	case c&0xf0 == 0x90:
		return seq(1, int(c&0x0f), 1)
	case c&0xe0 == 0xa0:
		return fixed(1 + int(c&0x1f))
	}
	switch c {
	case 0xc4, 0xd9:
		return blob(1)
	case 0xc5, 0xda:
		return blob(2)
	case 0xc6, 0xdb:
		return blob(4)
	case 0xcc, 0xd0:
		return fixed(2)
	case 0xcd, 0xd1:
		return fixed(3)
	case 0xca, 0xce, 0xd2:
		return fixed(5)
	case 0xcb, 0xcf, 0xd3:
		return fixed(9)
	case 0xdc, 0xde, 0xdd, 0xdf:
		width, per := 2, 1
		if c == 0xdd || c == 0xdf {
			width = 4
		}
		if c == 0xde || c == 0xdf {
			per = 2
		}
		n, err := lenN(width)
		if err != nil {
			return 0, err
		}
		return seq(1+width, n, per)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1..16
		return fixed(2 + 1<<(c-0xd4))
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32: header, type byte, data
		width := 1 << (c - 0xc7)
		n, err := lenN(width)
		if err != nil {
			return 0, err
		}
		return fixed(1 + width + 1 + n)
	}
	return 0, fmt.Errorf("byte 0x%02x is not a msgpack type", c)
}

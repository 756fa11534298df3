package strs

import (
	"golang.org/x/net/idna"

	"github.com/arktos-dev/arktos/ops"
)

// Encodings are Encode's: Python's codec names Arkouda's encode takes.
var Encodings = []string{"idna", "ascii", "utf-8"}

// Encode maps every string through a codec, as Python's str.encode(enc)
// (decode: bytes.decode(enc)) and back to text: "idna" turns each
// non-ASCII label of a host name into punycode ("xn--…",
// golang.org/x/net/idna's Punycode profile: no mapping, so labels keep
// their case as Python's codec keeps ASCII ones); "ascii" and "utf-8"
// keep the text, "ascii" refusing what is not ASCII. The first string
// the codec refuses is an error naming it.
func Encode(env ops.Env, s Strs, enc string, decode bool) (Arrays, error) {
	var f func(b []byte) ([]byte, bool)
	switch enc {
	case "idna":
		conv := idna.Punycode.ToASCII
		if decode {
			conv = idna.Punycode.ToUnicode
		}
		f = func(b []byte) ([]byte, bool) {
			if isASCII(b) && !decode {
				return b, true
			}
			out, err := conv(string(b))
			return []byte(out), err == nil
		}
	case "ascii":
		f = func(b []byte) ([]byte, bool) { return b, isASCII(b) }
	case "utf-8", "utf8":
		f = func(b []byte) ([]byte, bool) { return b, true }
	default:
		return Arrays{}, errorf(ops.ErrValue, "encoding '%s' is not one of idna, ascii, utf-8", enc)
	}
	bad := noneBad(nblocks(env.Workers, s.Len()))
	blocks(env.Workers, s.Len(), func(w, lo, hi int) {
		bad[w] = -1
		for i := lo; i < hi; i++ {
			if _, ok := f(s.At(i)); !ok {
				bad[w] = i
				return
			}
		}
	})
	for _, i := range bad {
		if i >= 0 {
			verb := "encode"
			if decode {
				verb = "decode"
			}
			return Arrays{}, errorf(ops.ErrValue, "cannot %s string %d, %q, as %s", verb, i, clip(s.At(i)), enc)
		}
	}
	return build(env, s.Len(),
		func(i int) int64 { b, _ := f(s.At(i)); return int64(len(b)) },
		func(i int, dst []byte) { b, _ := f(s.At(i)); copy(dst, b) })
}

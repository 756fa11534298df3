package strs

import (
	"errors"
	"strings"

	"golang.org/x/net/idna"

	"github.com/arktos-dev/arktos/ops"
)

// Encodings are Encode's: Python's codec names Arkouda's encode takes.
var Encodings = []string{"idna", "ascii", "utf-8"}

// Encode maps every string through a codec, as Python's str.encode(enc)
// (decode: bytes.decode(enc)) and back to text: "idna" as Python's idna
// codec (IDNA 2003) does it, label by label: an ASCII label stays as it
// is, a non-ASCII one is mapped (lower case, NFKC, 'ß' to "ss": UTS 46's
// transitional mapping, golang.org/x/net/idna) and written in punycode
// ("xn--…"); an empty label (but a last) or one over 63 bytes is refused.
// "ascii" and "utf-8" keep the text, "ascii" refusing what is not ASCII.
// The first string the codec refuses is an error naming it.
func Encode(env ops.Env, s Strs, enc string, decode bool) (Arrays, error) {
	var f func(b []byte) ([]byte, bool)
	switch enc {
	case "idna":
		f = func(b []byte) ([]byte, bool) {
			out, err := idnaLabels(string(b), decode)
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
	envBlocks(env, s.Len(), func(w, lo, hi int) {
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
	// Encoding to idna or ascii makes ASCII; otherwise the text is as it was.
	known := (!decode && enc != "utf-8" && enc != "utf8") || (s.ASCII && enc != "idna")
	return withASCII(known)(build(env, s.Len(),
		func(i int) int64 { b, _ := f(s.At(i)); return int64(len(b)) },
		func(i int, dst []byte) { b, _ := f(s.At(i)); copy(dst, b) }))
}

// idnaMap is Python's nameprep, near enough: UTS 46 transitional mapping.
var idnaMap = idna.New(idna.MapForLookup(), idna.Transitional(true), idna.StrictDomainName(false))

// errLabel is a label Python's idna codec refuses.
var errLabel = errors.New("label empty or too long")

// idnaLabels encodes (or decodes) host name h one label at a time, as
// Python's encodings.idna does.
func idnaLabels(h string, decode bool) (string, error) {
	if h == "" {
		return "", nil
	}
	if !decode {
		// Python's codec splits at the full stops U+3002, U+FF0E, U+FF61 too.
		h = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".").Replace(h)
	}
	labels := strings.Split(h, ".")
	for i, l := range labels {
		last := i == len(labels)-1 && i > 0
		switch {
		case l == "" && last:
			continue
		case decode && strings.HasPrefix(l, "xn--"):
			u, err := idna.Punycode.ToUnicode(l)
			if err != nil {
				return "", err
			}
			labels[i] = u
			continue
		case decode:
		case !isASCII([]byte(l)):
			a, err := idnaMap.ToASCII(l)
			if err != nil {
				return "", err
			}
			labels[i] = a
		}
		if labels[i] == "" || len(labels[i]) > 63 {
			return "", errLabel
		}
	}
	return strings.Join(labels, "."), nil
}

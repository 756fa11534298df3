package strs

import (
	"bytes"
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/internal/pyfmt"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// Case is a case mapping: lower, upper, title or capitalize.
type Case string

// ChangeCase maps every string's case as Python's str.lower, upper, title
// and capitalize do. ASCII strings are mapped a byte at a time; others
// rune by rune with Go's unicode tables, which apply the simple mappings
// only: unlike Python, 'ß'.upper() stays 'ß' (Python: 'SS') and a final
// 'Σ' lowers to 'σ' (Python: 'ς').
func ChangeCase(env ops.Env, s Strs, c Case) (Arrays, error) {
	if c == "lower" || c == "upper" {
		if s.ASCII {
			return asciiCase(env, s, c == "upper")
		}
		return mixedCase(env, s, c == "upper")
	}
	// title and capitalize: string by string, ASCII ones a byte at a time.
	var ascii func(dst, b []byte)
	var uni func([]byte) []byte
	switch c {
	case "title":
		ascii = func(dst, b []byte) {
			prev := false // the previous character is cased
			for j, x := range b {
				if prev {
					dst[j] = asciiLower(x)
				} else {
					dst[j] = asciiUpper(x)
				}
				prev = 'a' <= x|0x20 && x|0x20 <= 'z'
			}
		}
		uni = func(b []byte) []byte {
			out := make([]byte, 0, len(b)+4)
			prev := false
			for _, r := range string(b) {
				if prev {
					out = utf8.AppendRune(out, unicode.ToLower(r))
				} else {
					out = utf8.AppendRune(out, unicode.ToTitle(r))
				}
				prev = pyCased(r)
			}
			return out
		}
	case "capitalize":
		ascii = func(dst, b []byte) {
			for j, x := range b {
				if j == 0 {
					dst[j] = asciiUpper(x)
				} else {
					dst[j] = asciiLower(x)
				}
			}
		}
		uni = func(b []byte) []byte {
			r, w := utf8.DecodeRune(b)
			out := utf8.AppendRune(make([]byte, 0, len(b)+4), unicode.ToTitle(r))
			return append(out, bytes.ToLower(b[w:])...)
		}
	default:
		return Arrays{}, errorf(ops.ErrValue, "case '%s' is not one of lower, upper, title, capitalize", c)
	}
	return withASCII(s.ASCII)(build(env, s.Len(),
		func(i int) int64 {
			b := s.At(i)
			if isASCII(b) {
				return int64(len(b))
			}
			return int64(len(uni(b)))
		},
		func(i int, dst []byte) {
			b := s.At(i)
			if isASCII(b) {
				ascii(dst, b)
				return
			}
			copy(dst, uni(b))
		}))
}

// CaseStats counts ChangeCase's whole-buffer ASCII path (tests).
var CaseStats struct{ ASCIIBuffers atomic.Uint64 }

// asciiCase maps an all-ASCII array's case eight bytes at a time over the
// whole buffer (the offsets are the input's): no per-string work.
func asciiCase(env ops.Env, s Strs, upper bool) (Arrays, error) {
	offA, err := env.Alloc(pdarray.Int64, len(s.Off))
	if err != nil {
		return Arrays{}, err
	}
	bytesA, err := env.Alloc(pdarray.Uint8, len(s.Data))
	if err != nil {
		env.Free(offA)
		return Arrays{}, err
	}
	off, dst := pdarray.View[int64](offA), bytesA.Bytes()
	envBlocks(env, len(s.Off), func(_, lo, hi int) { copy(off[lo:hi], s.Off[lo:hi]) })
	const chunk = 1 << 12 // bytes a block item
	envBlocks(env, (len(s.Data)+chunk-1)/chunk, func(_, a, b int) {
		lo, hi := a*chunk, min(b*chunk, len(s.Data))
		swarCase(dst[lo:hi], s.Data[lo:hi], upper)
	})
	CaseStats.ASCIIBuffers.Add(1)
	return Arrays{Offsets: offA, Bytes: bytesA, ASCII: true}, nil
}

// mixedCase is lower/upper of text that is not all ASCII, string by
// string: an ASCII string eight bytes at a time, another rune by rune
// with bytes below 0x80 mapped in place (what bytes.ToLower gives, with
// no allocation: measuring and writing each walk the string once).
func mixedCase(env ops.Env, s Strs, upper bool) (Arrays, error) {
	mapRune := unicode.ToLower
	if upper {
		mapRune = unicode.ToUpper
	}
	return build(env, s.Len(),
		func(i int) int64 {
			b := s.At(i)
			if isASCII(b) {
				return int64(len(b))
			}
			n := 0
			for k := 0; k < len(b); {
				if b[k] < utf8.RuneSelf {
					n, k = n+1, k+1
					continue
				}
				r, w := utf8.DecodeRune(b[k:])
				n, k = n+utf8.RuneLen(mapRune(r)), k+w
			}
			return int64(n)
		},
		func(i int, dst []byte) {
			b := s.At(i)
			if len(b) == len(dst) && isASCII(b) {
				swarCase(dst, b, upper)
				return
			}
			j := 0
			for k := 0; k < len(b); {
				if x := b[k]; x < utf8.RuneSelf {
					if upper {
						dst[j] = asciiUpper(x)
					} else {
						dst[j] = asciiLower(x)
					}
					j, k = j+1, k+1
					continue
				}
				r, w := utf8.DecodeRune(b[k:])
				j += utf8.EncodeRune(dst[j:], mapRune(r))
				k += w
			}
		})
}

// swarCase writes src (ASCII) into dst in lower case (upper with upper),
// eight bytes at a time: the letters to change, bytes in A..Z (a..z), are
// found by adding to every byte what carries it past 0x7f at the range's
// two ends, and have their 0x20 bit set (cleared).
func swarCase(dst, src []byte, upper bool) {
	lo, hi := uint64(0x3f3f3f3f3f3f3f3f), uint64(0x2525252525252525)
	if upper {
		lo, hi = 0x1f1f1f1f1f1f1f1f, 0x0505050505050505
	}
	k := 0
	for ; k+8 <= len(src); k += 8 {
		w := binary.LittleEndian.Uint64(src[k:])
		m := ((w + lo) &^ (w + hi)) & 0x8080808080808080 >> 2
		if upper {
			w &^= m
		} else {
			w |= m
		}
		binary.LittleEndian.PutUint64(dst[k:], w)
	}
	for ; k < len(src); k++ {
		if upper {
			dst[k] = asciiUpper(src[k])
		} else {
			dst[k] = asciiLower(src[k])
		}
	}
}

func asciiLower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func asciiUpper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - ('a' - 'A')
	}
	return b
}

// Format writes each element of a number array as Python's str() does
// (ints in decimal, floats as repr: shortest round trip, "1.0", "1e+16",
// "nan", "inf"; bools "True"/"False").
func Format(env ops.Env, a *pdarray.Array) (Arrays, error) {
	var f func(i int, dst []byte) []byte
	switch a.DType() {
	case pdarray.Bool:
		v := pdarray.View[bool](a)
		f = func(i int, dst []byte) []byte {
			if v[i] {
				return append(dst, "True"...)
			}
			return append(dst, "False"...)
		}
	case pdarray.Float64:
		v := pdarray.View[float64](a)
		f = func(i int, dst []byte) []byte { return PyFloat(dst, v[i], 64) }
	case pdarray.Float32:
		v := pdarray.View[float32](a)
		f = func(i int, dst []byte) []byte { return PyFloat(dst, float64(v[i]), 32) }
	case pdarray.Uint64:
		v := pdarray.View[uint64](a)
		f = func(i int, dst []byte) []byte { return strconv.AppendUint(dst, v[i], 10) }
	default:
		k, err := intsOf(a)
		if err != nil {
			return Arrays{}, err
		}
		f = func(i int, dst []byte) []byte { return strconv.AppendInt(dst, k(i), 10) }
	}
	return withASCII(true)(build(env, a.Len(),
		func(i int) int64 {
			var buf [32]byte
			return int64(len(f(i, buf[:0])))
		},
		func(i int, dst []byte) { f(i, dst[:0]) }))
}

// intsOf reads a signed or small unsigned integer array as int64.
func intsOf(a *pdarray.Array) (func(int) int64, error) {
	switch a.DType() {
	case pdarray.Int64:
		v := pdarray.View[int64](a)
		return func(i int) int64 { return v[i] }, nil
	case pdarray.Int32:
		v := pdarray.View[int32](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	case pdarray.Int16:
		v := pdarray.View[int16](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	case pdarray.Int8:
		v := pdarray.View[int8](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	case pdarray.Uint32:
		v := pdarray.View[uint32](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	case pdarray.Uint16:
		v := pdarray.View[uint16](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	case pdarray.Uint8:
		v := pdarray.View[uint8](a)
		return func(i int) int64 { return int64(v[i]) }, nil
	}
	return nil, errorf(ops.ErrType, "cannot cast %v to str", a.DType())
}

// PyFloat appends Python's repr of f (numpy's str of a float32 with
// bitSize 32: the shortest digits that round-trip as float32).
func PyFloat(dst []byte, f float64, bitSize int) []byte { return pyfmt.Float(dst, f, bitSize) }

// Parse reads every string as a number of dtype d (int64, uint64, float64
// or bool, as Python's int(), float() and "True"/"False"; surrounding
// blanks allowed) into out; the first string that is not one is an error
// naming it.
func Parse(env ops.Env, s Strs, out *pdarray.Array) error {
	var parse func(i int, b []byte) bool
	switch out.DType() {
	case pdarray.Int64:
		v := pdarray.View[int64](out)
		parse = func(i int, b []byte) bool {
			b, ok := pyUnderscores(b)
			x, err := strconv.ParseInt(string(b), 10, 64)
			if !ok {
				return false
			}
			v[i] = x
			return err == nil
		}
	case pdarray.Uint64:
		v := pdarray.View[uint64](out)
		parse = func(i int, b []byte) bool {
			b, ok := pyUnderscores(bytes.TrimPrefix(b, []byte("+")))
			x, err := strconv.ParseUint(string(b), 10, 64)
			if !ok {
				return false
			}
			v[i] = x
			return err == nil
		}
	case pdarray.Float64:
		v := pdarray.View[float64](out)
		parse = func(i int, b []byte) bool {
			b, ok := pyUnderscores(b)
			if !ok || bytes.ContainsAny(b, "xX") { // Go reads hex floats; Python's float() does not
				return false
			}
			x, err := strconv.ParseFloat(string(b), 64)
			v[i] = x
			return err == nil || isRange(err)
		}
	case pdarray.Bool:
		v := pdarray.View[bool](out)
		parse = func(i int, b []byte) bool {
			switch string(b) {
			case "True":
				v[i] = true
			case "False":
				v[i] = false
			default:
				return false
			}
			return true
		}
	default:
		return errorf(ops.ErrType, "cannot cast str to %v; cast to int64, uint64, float64 or bool", out.DType())
	}
	bad := noneBad(nblocks(env.Workers, s.Len()))
	envBlocks(env, s.Len(), func(w, lo, hi int) {
		bad[w] = -1
		for i := lo; i < hi; i++ {
			if !parse(i, bytes.TrimSpace(s.At(i))) {
				bad[w] = i
				return
			}
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return errorf(ops.ErrValue, "string %d, %q, is not a valid %v", i, clip(s.At(i)), out.DType())
		}
	}
	return nil
}

// pyUnderscores drops the underscores Python's int() and float() allow,
// one at a time between two digits ("1_000"); ok false for any other.
func pyUnderscores(b []byte) ([]byte, bool) {
	if bytes.IndexByte(b, '_') < 0 {
		return b, true
	}
	digit := func(j int) bool { return j >= 0 && j < len(b) && '0' <= b[j] && b[j] <= '9' }
	out := make([]byte, 0, len(b))
	for j, c := range b {
		if c == '_' {
			if !digit(j-1) || !digit(j+1) {
				return nil, false
			}
			continue
		}
		out = append(out, c)
	}
	return out, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// Charsets are random_strings_uniform's character sets (Arkouda's names).
var Charsets = map[string]string{
	"uppercase": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"lowercase": "abcdefghijklmnopqrstuvwxyz",
	"numeric":   "0123456789",
	"printable": printable(),
}

func printable() string {
	b := make([]byte, 0, 95)
	for c := byte(' '); c <= '~'; c++ {
		b = append(b, c)
	}
	return string(b)
}

// randBlock is how many strings one random stream makes: the result of a
// seed does not depend on the worker count.
const randBlock = 1 << 14

// RandomUniform makes n strings of lengths uniform in [minlen, maxlen)
// from chars, each character uniform (Arkouda's random_strings_uniform).
// With hasSeed false the seed is random.
func RandomUniform(env ops.Env, n, minlen, maxlen int, chars string, seed uint64, hasSeed bool) (Arrays, error) {
	if minlen < 0 || maxlen <= minlen {
		return Arrays{}, errorf(ops.ErrValue, "random strings need 0 <= minlen < maxlen, got minlen=%d maxlen=%d", minlen, maxlen)
	}
	return random(env, n, chars, seed, hasSeed, func(r *rand.Rand) int64 { return int64(minlen + r.IntN(maxlen-minlen)) })
}

// maxRandomLen caps one lognormal string's length: a heavy tail must not
// ask for more memory than the server has.
const maxRandomLen = 1 << 20

// RandomLognormal makes n strings whose lengths are exp(N(logmean,
// logstd²)) rounded to the nearest integer (capped at 2^20), each character
// uniform from chars (Arkouda's random_strings_lognormal).
func RandomLognormal(env ops.Env, n int, logmean, logstd float64, chars string, seed uint64, hasSeed bool) (Arrays, error) {
	if !(logstd > 0) || math.IsInf(logstd, 0) || math.IsNaN(logmean) || math.IsInf(logmean, 0) {
		return Arrays{}, errorf(ops.ErrValue, "lognormal random strings need a finite logmean and a finite logstd > 0, got logmean=%v logstd=%v", logmean, logstd)
	}
	return random(env, n, chars, seed, hasSeed, func(r *rand.Rand) int64 {
		return int64(min(math.Round(math.Exp(logmean+logstd*r.NormFloat64())), maxRandomLen))
	})
}

// random makes n strings of length length(r) from chars, in blocks of
// randBlock strings with a stream each for the lengths and the characters.
func random(env ops.Env, n int, chars string, seed uint64, hasSeed bool, length func(r *rand.Rand) int64) (Arrays, error) {
	if chars == "" || !isASCII([]byte(chars)) {
		return Arrays{}, errorf(ops.ErrValue, "random strings need a non-empty ASCII character set")
	}
	if !hasSeed {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	lens := make([]int64, n)
	nb := (n + randBlock - 1) / randBlock
	envBlocks(env, nb*minPar, func(_, blo, bhi int) {
		for b := blo / minPar; b < bhi/minPar; b++ {
			r := rand.New(rand.NewPCG(seed, uint64(2*b)))
			for i := b * randBlock; i < min((b+1)*randBlock, n); i++ {
				lens[i] = length(r)
			}
		}
	})
	out, err := build(env, n, func(i int) int64 { return lens[i] }, func(int, []byte) {})
	if err != nil {
		return Arrays{}, err
	}
	off, data := pdarray.View[int64](out.Offsets), out.Bytes.Bytes()
	envBlocks(env, nb*minPar, func(_, blo, bhi int) {
		for b := blo / minPar; b < bhi/minPar; b++ {
			r := rand.New(rand.NewPCG(seed, uint64(2*b+1)))
			hi := min((b+1)*randBlock, n)
			for j := off[b*randBlock]; j < off[hi]; j++ {
				data[j] = chars[r.IntN(len(chars))]
			}
		}
	})
	out.ASCII = true // chars are
	return out, nil
}

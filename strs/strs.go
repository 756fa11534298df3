// Package strs holds the server's string kernels: arrays of UTF-8 strings
// in Arrow's large_string layout (int64 offsets, one bytes buffer), with no
// Go object per string, so the garbage collector's work does not grow with
// their number.
package strs

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"unicode/utf8"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// Strs is a string array: string i is Data[Off[i]:Off[i+1]]. Off has
// Len()+1 entries, Off[0] is 0 and the last is len(Data). Both slices
// belong to the stored arrays (or the kernel's outputs) they view; a
// Strs is only valid while its caller holds those arrays.
type Strs struct {
	Off  []int64
	Data []byte
	// ASCII: every byte is below 0x80, as View found or a kernel made them
	// (false: not known, or not so). Kernels take fast paths on it.
	ASCII bool
}

// Len is the number of strings.
func (s Strs) Len() int { return max(len(s.Off)-1, 0) }

// At is string i's bytes (a view of Data).
func (s Strs) At(i int) []byte { return s.Data[s.Off[i]:s.Off[i+1]] }

// Arrays are a kernel's output strings, still to be stored by the caller.
type Arrays struct {
	Offsets, Bytes *pdarray.Array
	ASCII          bool // as Strs.ASCII
}

// Strs views the output.
func (a Arrays) Strs() Strs {
	return Strs{Off: pdarray.View[int64](a.Offsets), Data: a.Bytes.Bytes(), ASCII: a.ASCII}
}

// withASCII marks a kernel's output as all ASCII when known is (its
// input's bytes were, and it made no others): withASCII(s.ASCII)(build(…)).
func withASCII(known bool) func(Arrays, error) (Arrays, error) {
	return func(out Arrays, err error) (Arrays, error) {
		out.ASCII = known && err == nil
		return out, err
	}
}

// Error is a user-facing kernel failure (the server maps its kind).
type Error = ops.Error

func errorf(k ops.ErrKind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// minPar is the string count below which kernels run on one goroutine.
const minPar = 1 << 13

// blocks runs f over [0, n) split into one contiguous block per worker
// (one block for small n); f gets its worker index.
func blocks(workers, n int, f func(w, lo, hi int)) {
	nw := max(min(workers, n/minPar), 1)
	if nw == 1 {
		if n > 0 {
			f(0, 0, n)
		}
		return
	}
	var g par.Group
	for w := range nw {
		lo, hi := n*w/nw, n*(w+1)/nw
		g.Go(func() { f(w, lo, hi) })
	}
	g.Wait()
}

// envBlocks is blocks over env's workers, after a check of env's Stop (a
// cancelled request unwinds there: ops.Env).
func envBlocks(env ops.Env, n int, f func(w, lo, hi int)) {
	env.Stop.Check()
	blocks(env.Workers, n, f)
}

// nblocks is how many blocks blocks would use.
func nblocks(workers, n int) int { return max(min(workers, n/minPar), 1) }

// Workers is the default worker count (tests).
func Workers() int { return runtime.GOMAXPROCS(0) }

// View checks that offsets (int64) and bytes (uint8) make a string array:
// offsets start at 0, never decrease and end at len(bytes), and every
// string is valid UTF-8. It is the one check every string command relies
// on (the server caches its outcome until either array is written).
func View(env ops.Env, offsets, bytes *pdarray.Array) (Strs, error) {
	if offsets.DType() != pdarray.Int64 {
		return Strs{}, errorf(ops.ErrType, "a string array's offsets must be int64, got %v", offsets.DType())
	}
	if bytes.DType() != pdarray.Uint8 {
		return Strs{}, errorf(ops.ErrType, "a string array's bytes must be uint8, got %v", bytes.DType())
	}
	s := Strs{Off: pdarray.View[int64](offsets), Data: bytes.Bytes()}
	var err error
	s.ASCII, err = check(env, s)
	return s, err
}

// Check is View's check on a Strs.
func Check(env ops.Env, s Strs) error {
	_, err := check(env, s)
	return err
}

// check is Check, saying too whether every byte is ASCII.
func check(env ops.Env, s Strs) (bool, error) {
	if len(s.Off) == 0 {
		return false, errorf(ops.ErrValue, "a string array's offsets need n+1 entries (at least one, 0), got none")
	}
	if s.Off[0] != 0 {
		return false, errorf(ops.ErrValue, "a string array's offsets must start at 0, got %d", s.Off[0])
	}
	if last := s.Off[len(s.Off)-1]; last != int64(len(s.Data)) {
		return false, errorf(ops.ErrValue, "a string array's last offset must be its byte count %d, got %d", len(s.Data), last)
	}
	n := s.Len()
	nb := nblocks(env.Workers, n)
	bad := noneBad(nb)
	nonASCII := make([]bool, nb)
	envBlocks(env, n, func(w, lo, hi int) {
		bad[w] = -1
		for i := lo; i < hi; i++ {
			if s.Off[i+1] < s.Off[i] {
				bad[w] = i
				return
			}
		}
		// A block all ASCII is valid whatever its string boundaries; else
		// each string must be valid alone (a rune may not straddle two).
		if isASCII(s.Data[s.Off[lo]:s.Off[hi]]) {
			return
		}
		nonASCII[w] = true
		for i := lo; i < hi; i++ {
			if !utf8.Valid(s.At(i)) {
				bad[w] = n + i
				return
			}
		}
	})
	for _, i := range bad {
		switch {
		case i < 0:
		case i < n:
			return false, errorf(ops.ErrValue, "a string array's offsets must not decrease: offsets[%d]=%d > offsets[%d]=%d", i, s.Off[i], i+1, s.Off[i+1])
		default:
			return false, errorf(ops.ErrValue, "string %d is not valid UTF-8 (%q); decode or clean the text before uploading it", i-n, clip(s.At(i-n)))
		}
	}
	return !slices.Contains(nonASCII, true), nil
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// isASCII reports whether b has no byte ≥ 0x80, eight bytes at a time.
func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}

// build makes n strings in two passes: size(i) is string i's byte length,
// fill(i, dst) writes it into dst (exactly that long). Both run on all
// workers; the offsets come from a prefix sum between them.
func build(env ops.Env, n int, size func(i int) int64, fill func(i int, dst []byte)) (Arrays, error) {
	offA, err := env.Alloc(pdarray.Int64, n+1)
	if err != nil {
		return Arrays{}, err
	}
	off := pdarray.View[int64](offA)
	nb := nblocks(env.Workers, n)
	sums := make([]int64, nb)
	envBlocks(env, n, func(w, lo, hi int) {
		var t int64
		for i := lo; i < hi; i++ {
			off[i+1] = size(i)
			t += off[i+1]
		}
		sums[w] = t
	})
	var total int64
	for w, t := range sums {
		sums[w] = total
		total += t
	}
	off[0] = 0
	envBlocks(env, n, func(w, lo, hi int) {
		t := sums[w]
		for i := lo; i < hi; i++ {
			t += off[i+1]
			off[i+1] = t
		}
	})
	if total > int64(^uint(0)>>1) {
		env.Free(offA)
		return Arrays{}, errorf(ops.ErrValue, "the result would hold %d bytes, more than this server can address", total)
	}
	bytesA, err := env.Alloc(pdarray.Uint8, int(total))
	if err != nil {
		env.Free(offA)
		return Arrays{}, err
	}
	data := bytesA.Bytes()
	envBlocks(env, n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			fill(i, data[off[i]:off[i+1]])
		}
	})
	return Arrays{Offsets: offA, Bytes: bytesA}, nil
}

// Lengths writes each string's length in bytes (Arkouda's get_lengths)
// into out (int64, s.Len()).
func Lengths(env ops.Env, s Strs, out []int64) {
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = s.Off[i+1] - s.Off[i]
		}
	})
}

// CharLengths writes each string's length in code points (Python's len).
func CharLengths(env ops.Env, s Strs, out []int64) {
	if s.ASCII {
		Lengths(env, s, out)
		return
	}
	envBlocks(env, s.Len(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = runeCount(s.At(i))
		}
	})
}

// runeCount counts the code points of valid UTF-8 b: its bytes less its
// continuation bytes (10xxxxxx), eight bytes at a time.
func runeCount(b []byte) int64 {
	n, k := int64(len(b)), 0
	for ; k+8 <= len(b); k += 8 {
		w := binary.LittleEndian.Uint64(b[k:])
		n -= int64(bits.OnesCount64(w &^ (w << 1) & 0x8080808080808080))
	}
	for ; k < len(b); k++ {
		if b[k]&0xc0 == 0x80 {
			n--
		}
	}
	return n
}

// Take gathers s[idx] (numpy's take; negative indices count from the end).
func Take(env ops.Env, s Strs, idx []int64) (Arrays, error) {
	n := int64(s.Len())
	bad := noneBad(nblocks(env.Workers, len(idx)))
	envBlocks(env, len(idx), func(w, lo, hi int) {
		bad[w] = -1
		for i := lo; i < hi; i++ {
			if j := idx[i]; j >= n || j < -n {
				bad[w] = i
				return
			}
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return Arrays{}, errorf(ops.ErrIndex, "index %d is out of bounds for %d strings (at position %d)", idx[i], n, i)
		}
	}
	at := func(i int) int {
		j := idx[i]
		if j < 0 {
			j += n
		}
		return int(j)
	}
	return withASCII(s.ASCII)(build(env, len(idx),
		func(i int) int64 { j := at(i); return s.Off[j+1] - s.Off[j] },
		func(i int, dst []byte) { copy(dst, s.At(at(i))) }))
}

// Compress keeps the strings whose mask entry is true (mask has s.Len()
// entries).
func Compress(env ops.Env, s Strs, mask []bool) (Arrays, error) {
	if len(mask) != s.Len() {
		return Arrays{}, errorf(ops.ErrValue, "mask has %d entries for %d strings", len(mask), s.Len())
	}
	nb := nblocks(env.Workers, len(mask))
	counts := make([]int, nb+1)
	envBlocks(env, len(mask), func(w, lo, hi int) {
		c := 0
		for _, m := range mask[lo:hi] {
			if m {
				c++
			}
		}
		counts[w+1] = c
	})
	for w := 1; w <= nb; w++ {
		counts[w] += counts[w-1]
	}
	idx := make([]int64, counts[nb])
	envBlocks(env, len(mask), func(w, lo, hi int) {
		k := counts[w]
		for i := lo; i < hi; i++ {
			if mask[i] {
				idx[k] = int64(i)
				k++
			}
		}
	})
	return Take(env, s, idx)
}

// Concat joins string arrays end to end.
func Concat(env ops.Env, parts []Strs) (Arrays, error) {
	n := 0
	for _, p := range parts {
		n += p.Len()
	}
	// Which part and row each result string comes from: a short table of
	// part starts, searched once per block.
	starts := make([]int, len(parts)+1)
	for i, p := range parts {
		starts[i+1] = starts[i] + p.Len()
	}
	locate := func(i int) (Strs, int) {
		k := 0
		for starts[k+1] <= i {
			k++
		}
		return parts[k], i - starts[k]
	}
	all := true
	for _, p := range parts {
		all = all && p.ASCII
	}
	return withASCII(all)(build(env, n,
		func(i int) int64 { p, j := locate(i); return p.Off[j+1] - p.Off[j] },
		func(i int, dst []byte) { p, j := locate(i); copy(dst, p.At(j)) }))
}

// Stick joins a[i], delim and b[i] for every i (Arkouda's stick; a + b
// with an empty delim). a and b have one length.
func Stick(env ops.Env, a, b Strs, delim []byte) (Arrays, error) {
	if a.Len() != b.Len() {
		return Arrays{}, errorf(ops.ErrValue, "cannot join %d strings with %d: lengths differ", a.Len(), b.Len())
	}
	d := int64(len(delim))
	return withASCII(a.ASCII && b.ASCII && isASCII(delim))(build(env, a.Len(),
		func(i int) int64 { return a.Off[i+1] - a.Off[i] + d + b.Off[i+1] - b.Off[i] },
		func(i int, dst []byte) {
			k := copy(dst, a.At(i))
			k += copy(dst[k:], delim)
			copy(dst[k:], b.At(i))
		}))
}

// noneBad is a per-block "first bad row" slice, each -1 (none): blocks
// runs no block for n = 0, so none may be left at 0.
func noneBad(n int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = -1
	}
	return b
}

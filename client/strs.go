package client

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// String arrays on the server (docs/protocol.md, "Strings"): a Strs is two
// stored arrays in Arrow's large_string layout, int64 offsets (one more than
// the strings) and uint8 UTF-8 bytes, which move over the same uploads and
// downloads as any array; every operation runs on the server, and strings
// compare and sort as Go's (and Python's) do, by code point. This is not
// UploadStrings' StringColumn (codes into sorted distinct strings, for
// Parquet and Arrow files).

// Strs is a string array stored on the server: string i is
// Bytes[offsets[i]:offsets[i+1]]. Offsets (int64, Len()+1 elements, the
// first 0, the last the byte count) and Bytes (uint8, UTF-8) are ordinary
// arrays, the caller's: Delete frees both. A Strs the client made has
// passed the server's check (str_check); writing either array (setitem, an
// in-place op) makes the server check it again at its next use. Make one
// with UploadStrs, UploadStrsBuffers, Client.StrsOf or an operation; each
// operation that stores strings returns a new Strs, the caller's too.
type Strs struct {
	c       *Client
	Offsets ArrayInfo // int64, Len()+1 elements
	Bytes   ArrayInfo // uint8: the strings' UTF-8 bytes, one after another
}

// UploadStrs stores values as a string array. Once their lengths are
// summed it lays them out in one pass, an offset each and each string's
// bytes copied once into one buffer (two allocations in all, none per
// string), uploads the two arrays as Upload does and has the server check
// them: a value that is not valid UTF-8 is the server's ARGUMENT_VALUE
// error naming it, and on any error neither array is left stored.
func UploadStrs(ctx context.Context, c *Client, values []string) (*Strs, error) {
	total := 0
	for _, v := range values {
		total += len(v)
	}
	offA, err := pdarray.AllocUninit(pdarray.Int64, len(values)+1)
	if err != nil {
		return nil, fmt.Errorf("client: UploadStrs of %d strings: %w", len(values), err)
	}
	off := pdarray.View[int64](offA)
	data := pdarray.UninitBytes(total) // every byte is written below
	at := 0
	off[0] = 0
	for i, v := range values {
		at += copy(data[at:], v)
		off[i+1] = int64(at)
	}
	return UploadStrsBuffers(ctx, c, off, data)
}

// UploadStrsBuffers stores a string array already laid out as Arrow's
// large_string (offsets: len(offsets)-1 strings, offsets[0] = 0, the last
// len(data); data: their UTF-8 bytes). The two slices are uploaded as
// Upload sends them, straight from the caller's memory with no copy, and
// are the caller's again once it returns. The server checks them (offsets
// in order and in bounds, every string valid UTF-8); on any error neither
// array is left stored.
func UploadStrsBuffers(ctx context.Context, c *Client, offsets []int64, data []byte) (*Strs, error) {
	off, err := Upload(ctx, c, offsets)
	if err != nil {
		return nil, err
	}
	b, err := Upload(ctx, c, data)
	if err != nil {
		c.discard(ctx, off.Name)
		return nil, err
	}
	s := &Strs{c: c, Offsets: off, Bytes: b}
	if err := s.check(ctx); err != nil {
		c.discard(ctx, off.Name, b.Name)
		return nil, err
	}
	return s, nil
}

// StrsOf names the stored arrays offsets (int64) and bytes (uint8) as a
// string array (arrays a checkpoint, a read or an operation stored, or
// another client uploaded), once the server has checked they make one.
// The arrays stay the caller's whatever the outcome.
func (c *Client) StrsOf(ctx context.Context, offsets, bytes string) (*Strs, error) {
	s := &Strs{c: c, Offsets: ArrayInfo{Name: offsets}, Bytes: ArrayInfo{Name: bytes}}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// check runs str_check on s and fills in its arrays' descriptions from the
// sizes the server answers.
func (s *Strs) check(ctx context.Context) error {
	res, err := s.call(ctx, "str_check", nil)
	if err != nil {
		return err
	}
	n, nb := int(asInt(res["size"])), int(asInt(res["nbytes"]))
	s.Offsets = ArrayInfo{Name: s.Offsets.Name, DType: pdarray.Int64, Size: n + 1, NBytes: (n + 1) * 8}
	s.Bytes = ArrayInfo{Name: s.Bytes.Name, DType: pdarray.Uint8, Size: nb, NBytes: nb}
	return nil
}

// discard deletes arrays this package stored for a call that then failed
// (best effort, within a few seconds, even when ctx is done: the arrays
// would otherwise stay on the server for good).
func (c *Client) discard(ctx context.Context, names ...string) {
	if len(names) == 0 {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = c.Delete(dctx, names...)
}

// Len returns the number of strings.
func (s *Strs) Len() int { return max(s.Offsets.Size-1, 0) }

// Names returns the pair [offsets, bytes] by which a command's string
// argument names s (for Client.Op with commands this file has no method for).
func (s *Strs) Names() []string { return []string{s.Offsets.Name, s.Bytes.Name} }

// Delete frees both of s's arrays, both or neither.
func (s *Strs) Delete(ctx context.Context) error {
	return s.c.Delete(ctx, s.Offsets.Name, s.Bytes.Name)
}

// Buffers downloads s's two arrays as they are stored (Arrow's
// large_string layout), each as Download does, and checks that they still
// fit together (they are two downloads: an array written in between, or
// replaced under its name, could make them disagree).
func (s *Strs) Buffers(ctx context.Context) (offsets []int64, data []byte, err error) {
	if offsets, err = Download[int64](ctx, s.c, s.Offsets.Name); err != nil {
		return nil, nil, err
	}
	if data, err = Download[uint8](ctx, s.c, s.Bytes.Name); err != nil {
		return nil, nil, err
	}
	if err := checkLayout(offsets, len(data)); err != nil {
		return nil, nil, fmt.Errorf("client: string array [%s, %s]: %w", s.Offsets.Name, s.Bytes.Name, err)
	}
	return offsets, data, nil
}

// checkLayout reports what keeps offsets from describing nbytes bytes of
// strings (nil when nothing does).
func checkLayout(offsets []int64, nbytes int) error {
	if len(offsets) == 0 {
		return fmt.Errorf("the offsets are empty (they hold one more than the strings)")
	}
	if offsets[0] != 0 {
		return fmt.Errorf("the offsets start at %d, not 0", offsets[0])
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return fmt.Errorf("the offsets decrease at %d (%d after %d)", i, offsets[i], offsets[i-1])
		}
	}
	if last := offsets[len(offsets)-1]; last != int64(nbytes) {
		return fmt.Errorf("the last offset is %d, but the bytes are %d", last, nbytes)
	}
	return nil
}

// Strings downloads s's strings. They share one allocation, the downloaded
// bytes (no copy and no allocation per string), which stays in memory as
// long as any of them does.
func (s *Strs) Strings(ctx context.Context) ([]string, error) {
	off, data, err := s.Buffers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(off)-1)
	if len(data) == 0 {
		return out, nil
	}
	// data is new memory no one else refers to or writes (Download's),
	// so strings may alias it; their pointers keep it alive.
	all := unsafe.String(&data[0], len(data))
	for i := range out {
		out[i] = all[off[i]:off[i+1]]
	}
	return out, nil
}

// call sends cmd with s as its argument "a" and more args.
func (s *Strs) call(ctx context.Context, cmd string, args map[string]any) (map[string]any, error) {
	if args == nil {
		args = map[string]any{}
	}
	args["a"] = s.Names()
	return s.c.call(ctx, cmd, args)
}

// array runs cmd on s and describes the one array it stores.
func (s *Strs) array(ctx context.Context, cmd string, args map[string]any) (ArrayInfo, error) {
	res, err := s.call(ctx, cmd, args)
	if err != nil {
		return ArrayInfo{}, err
	}
	return s.c.infoOf(ctx, cmd, res, res)
}

// strs runs cmd on s and returns the string array it stores.
func (s *Strs) strs(ctx context.Context, cmd string, args map[string]any) (*Strs, error) {
	res, err := s.call(ctx, cmd, args)
	if err != nil {
		return nil, err
	}
	return s.c.strsOf(ctx, cmd, res, res)
}

// infoOf reads the array description v of cmd's result res; when it is
// not one, what res stored is deleted.
func (c *Client) infoOf(ctx context.Context, cmd string, res map[string]any, v any) (ArrayInfo, error) {
	m, _ := v.(map[string]any)
	info, err := parseInfo(m)
	if err != nil {
		c.discard(ctx, arrayNames(res)...)
		return ArrayInfo{}, fmt.Errorf("client: %s: %w", cmd, err)
	}
	return info, nil
}

// strsOf reads the string array v (a strs info: offsets, bytes and size)
// of cmd's result res; when it is not one, what res stored is deleted.
func (c *Client) strsOf(ctx context.Context, cmd string, res map[string]any, v any) (*Strs, error) {
	m, _ := v.(map[string]any)
	om, _ := m["offsets"].(map[string]any)
	bm, _ := m["bytes"].(map[string]any)
	off, err1 := parseInfo(om)
	b, err2 := parseInfo(bm)
	if err1 != nil || err2 != nil || off.DType != pdarray.Int64 || b.DType != pdarray.Uint8 || off.Size < 1 {
		c.discard(ctx, arrayNames(res)...)
		return nil, fmt.Errorf("client: %s answered no string array (int64 offsets and uint8 bytes): %v", cmd, m)
	}
	return &Strs{c: c, Offsets: off, Bytes: b}, nil
}

// Lengths stores each string's length in UTF-8 bytes (int64; Arkouda's
// get_lengths, Go's len).
func (s *Strs) Lengths(ctx context.Context) (ArrayInfo, error) {
	return s.array(ctx, "str_lengths", map[string]any{"unit": "bytes"})
}

// CharLengths stores each string's length in code points (int64; Python's
// len, utf8.RuneCountInString).
func (s *Strs) CharLengths(ctx context.Context) (ArrayInfo, error) {
	return s.array(ctx, "str_lengths", map[string]any{"unit": "chars"})
}

// Compare stores s[i] op scalar (bool) for op one of == != < <= > >=,
// comparing as Go's strings compare (by byte, which is by code point).
func (s *Strs) Compare(ctx context.Context, op, scalar string) (ArrayInfo, error) {
	return s.array(ctx, "str_compare", map[string]any{"op": op, "scalar": scalar})
}

// CompareStrs stores s[i] op b[i] (bool) for op one of == != < <= > >=;
// b holds as many strings as s.
func (s *Strs) CompareStrs(ctx context.Context, op string, b *Strs) (ArrayInfo, error) {
	return s.array(ctx, "str_compare", map[string]any{"op": op, "b": b.Names()})
}

// Search stores (bool) whether each string holds pattern the way kind
// says: "contains", "startswith", "endswith" (pattern a literal, or with
// regex a regular expression), "match" or "fullmatch" (always a regular
// expression; Python's re.match and re.fullmatch). Regular expressions are
// Go's RE2 syntax (Python's re without backreferences and lookaround).
func (s *Strs) Search(ctx context.Context, kind, pattern string, regex bool) (ArrayInfo, error) {
	return s.array(ctx, "str_search", map[string]any{"kind": kind, "pattern": pattern, "regex": regex})
}

// Contains stores whether each string holds pattern (strings.Contains), or
// with regex matches it anywhere (regexp's MatchString).
func (s *Strs) Contains(ctx context.Context, pattern string, regex bool) (ArrayInfo, error) {
	return s.Search(ctx, "contains", pattern, regex)
}

// StartsWith stores whether each string starts with pattern
// (strings.HasPrefix), or with regex matches it at its start.
func (s *Strs) StartsWith(ctx context.Context, pattern string, regex bool) (ArrayInfo, error) {
	return s.Search(ctx, "startswith", pattern, regex)
}

// EndsWith stores whether each string ends with pattern
// (strings.HasSuffix), or with regex matches it at its end.
func (s *Strs) EndsWith(ctx context.Context, pattern string, regex bool) (ArrayInfo, error) {
	return s.Search(ctx, "endswith", pattern, regex)
}

// Match stores whether the regular expression pattern matches at the
// start of each string (Python's re.match).
func (s *Strs) Match(ctx context.Context, pattern string) (ArrayInfo, error) {
	return s.Search(ctx, "match", pattern, true)
}

// FullMatch stores whether the regular expression pattern matches each
// whole string (Python's re.fullmatch).
func (s *Strs) FullMatch(ctx context.Context, pattern string) (ArrayInfo, error) {
	return s.Search(ctx, "fullmatch", pattern, true)
}

// Take stores the strings s[idx[j]] for the stored int64 array idx
// (numpy's take: negative positions count from the end; one out of range
// is INDEX_OUT_OF_RANGE).
func (s *Strs) Take(ctx context.Context, idx string) (*Strs, error) {
	return s.strs(ctx, "str_take", map[string]any{"idx": idx})
}

// Compress stores the strings where the stored bool array mask (of s's
// length) is true, in order.
func (s *Strs) Compress(ctx context.Context, mask string) (*Strs, error) {
	return s.strs(ctx, "str_take", map[string]any{"mask": mask})
}

// Lower stores each string in lower case (ASCII byte by byte, other text
// by Go's unicode tables: strings.ToLower).
func (s *Strs) Lower(ctx context.Context) (*Strs, error) {
	return s.strs(ctx, "str_case", map[string]any{"case": "lower"})
}

// Upper stores each string in upper case (strings.ToUpper: no special
// casing, so "ß" stays "ß" where Python gives "SS").
func (s *Strs) Upper(ctx context.Context) (*Strs, error) {
	return s.strs(ctx, "str_case", map[string]any{"case": "upper"})
}

// Split stores every string's pieces at delim, all strings' one after
// another, and segments (int64, Len()+1 elements): string i's pieces are
// pieces[segments[i]:segments[i+1]]. A literal delim (non-empty) splits as
// strings.Split and Python's str.split(delim) do (empty pieces kept); with
// regex, delim is a regular expression that splits at each non-empty
// match (an empty match does not split).
func (s *Strs) Split(ctx context.Context, delim string, regex bool) (pieces *Strs, segments ArrayInfo, err error) {
	res, err := s.call(ctx, "str_split", map[string]any{"delim": delim, "regex": regex})
	if err != nil {
		return nil, ArrayInfo{}, err
	}
	if segments, err = s.c.infoOf(ctx, "str_split", res, res["segments"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	if pieces, err = s.c.strsOf(ctx, "str_split", res, res["values"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	return pieces, segments, nil
}

// Stick stores s[i] + delim + b[i] for every i (Arkouda's stick; delim ""
// is Python's +); b holds as many strings as s.
func (s *Strs) Stick(ctx context.Context, b *Strs, delim string) (*Strs, error) {
	return s.strs(ctx, "str_stick", map[string]any{"b": b.Names(), "delim": delim})
}

// Unique stores s's distinct strings, sorted, and how often each occurs
// (int64). Equal strings are found exactly (by their bytes, not only their
// hashes).
func (s *Strs) Unique(ctx context.Context) (values *Strs, counts ArrayInfo, err error) {
	values, _, counts, err = s.unique(ctx, false)
	return values, counts, err
}

// UniqueInverse is Unique with inverse too (int64, one per string of s):
// each string's position among values, so that values.Take(inverse) is s.
func (s *Strs) UniqueInverse(ctx context.Context) (values *Strs, inverse, counts ArrayInfo, err error) {
	return s.unique(ctx, true)
}

func (s *Strs) unique(ctx context.Context, inverse bool) (values *Strs, inv, counts ArrayInfo, err error) {
	res, err := s.call(ctx, "str_unique", map[string]any{"return_counts": true, "return_inverse": inverse})
	if err != nil {
		return nil, ArrayInfo{}, ArrayInfo{}, err
	}
	if counts, err = s.c.infoOf(ctx, "str_unique", res, res["counts"]); err != nil {
		return nil, ArrayInfo{}, ArrayInfo{}, err
	}
	if inverse {
		if inv, err = s.c.infoOf(ctx, "str_unique", res, res["inverse"]); err != nil {
			return nil, ArrayInfo{}, ArrayInfo{}, err
		}
	}
	if values, err = s.c.strsOf(ctx, "str_unique", res, res["values"]); err != nil {
		return nil, ArrayInfo{}, ArrayInfo{}, err
	}
	return values, inv, counts, nil
}

// In1d stores (bool) whether each string of s is among b's (exact).
func (s *Strs) In1d(ctx context.Context, b *Strs) (ArrayInfo, error) {
	return s.array(ctx, "str_in1d", map[string]any{"b": b.Names()})
}

// Argsort stores the stable permutation (int64) that sorts s's strings in
// ascending order (as sort.SliceStable with < on Go strings).
func (s *Strs) Argsort(ctx context.Context) (ArrayInfo, error) {
	return s.array(ctx, "str_argsort", nil)
}

// Hash stores each string's 128-bit XXH3 hash as its high and low halves
// (two uint64 arrays): equal strings hash equal.
func (s *Strs) Hash(ctx context.Context) (hi, lo ArrayInfo, err error) {
	res, err := s.call(ctx, "str_hash", nil)
	if err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	if hi, err = s.c.infoOf(ctx, "str_hash", res, res["hi"]); err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	if lo, err = s.c.infoOf(ctx, "str_hash", res, res["lo"]); err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	return hi, lo, nil
}

// Encode stores each string as Python's str.encode(encoding) makes it,
// kept as text: "idna" (each non-ASCII label of a host name as punycode,
// "xn--…"), "ascii" (refusing other text) or "utf-8". The first string the
// codec refuses is the server's ARGUMENT_VALUE error naming it.
func (s *Strs) Encode(ctx context.Context, encoding string) (*Strs, error) {
	return s.strs(ctx, "str_encode", map[string]any{"encoding": encoding})
}

// Decode is Encode's inverse (Python's bytes.decode(encoding)): "idna"
// turns punycode labels back into Unicode.
func (s *Strs) Decode(ctx context.Context, encoding string) (*Strs, error) {
	return s.strs(ctx, "str_encode", map[string]any{"encoding": encoding, "decode": true})
}

// Parse stores each string read as a number of dtype (Int64, Uint64,
// Float64, or Bool from "True" and "False"; blanks around it allowed), as
// Python's int() and float(). The first string that is not one is the
// server's ARGUMENT_VALUE error naming it.
func (s *Strs) Parse(ctx context.Context, dtype pdarray.DType) (ArrayInfo, error) {
	return s.array(ctx, "str_parse", map[string]any{"dtype": dtype.String()})
}

// ConcatStrs stores the strings of parts one array after another (at
// least one part).
func (c *Client) ConcatStrs(ctx context.Context, parts ...*Strs) (*Strs, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("client: ConcatStrs needs at least one string array")
	}
	names := make([]string, 0, 2*len(parts))
	for _, p := range parts {
		names = append(names, p.Names()...)
	}
	res, err := c.call(ctx, "str_concat", map[string]any{"parts": names})
	if err != nil {
		return nil, err
	}
	return c.strsOf(ctx, "str_concat", res, res)
}

// FormatStrs stores each element of the stored number or bool array a as
// Python's str() writes it (integers in decimal, floats as repr: "1.0",
// "0.1", "1e+16", "nan"; "True" and "False").
func (c *Client) FormatStrs(ctx context.Context, a string) (*Strs, error) {
	res, err := c.call(ctx, "str_format", map[string]any{"a": a})
	if err != nil {
		return nil, err
	}
	return c.strsOf(ctx, "str_format", res, res)
}

// RandomStrs stores n random strings, their lengths uniform in [minlen,
// maxlen), each character uniform from characters ("uppercase",
// "lowercase", "numeric" or "printable"; "" is "uppercase"): Arkouda's
// random_strings_uniform. A seed gives the same strings on any server
// whatever its worker count (Python's seed for seeds below 2^63); without
// one they differ every call.
func (c *Client) RandomStrs(ctx context.Context, n, minlen, maxlen int, characters string, seed ...uint64) (*Strs, error) {
	if n < 0 {
		return nil, fmt.Errorf("client: RandomStrs of %d strings: n must be >= 0", n)
	}
	args := map[string]any{"size": n, "minlen": minlen, "maxlen": maxlen}
	if characters != "" {
		args["characters"] = characters
	}
	switch len(seed) {
	case 0:
	case 1:
		// str_random takes an int64 seed and uses its bits: every uint64
		// is a seed of its own.
		args["seed"] = int64(seed[0])
	default:
		return nil, fmt.Errorf("client: RandomStrs takes at most one seed, got %d", len(seed))
	}
	res, err := c.call(ctx, "str_random", args)
	if err != nil {
		return nil, err
	}
	return c.strsOf(ctx, "str_random", res, res)
}

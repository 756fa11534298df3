package arrowio

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/arktos-dev/arktos/internal/par"
)

// String columns are read as a client's Categorical is made: an int32 code
// per row, the index of its string among the column's distinct strings,
// sorted bytewise (as Python and numpy order str), and those strings. Each
// (file, row group) unit numbers the strings it meets in a map of its own,
// writing codes into its rows as it decodes them; the units' strings are
// then merged and sorted once, and each unit's rows renumbered through a
// table from its numbering to the sorted one. The decoding is arrow-go's
// (dictionary and plain pages, every codec), a page at a time with the
// values aliasing its buffer; a string is copied only the first time its
// unit meets it.

// isStringColumn: a flat BYTE_ARRAY column of UTF-8 text (the String
// logical type, or the legacy UTF8 converted type).
func isStringColumn(c *schema.Column) bool {
	if c.PhysicalType() != parquet.Types.ByteArray || c.MaxRepetitionLevel() > 0 {
		return false
	}
	if _, ok := c.LogicalType().(schema.StringLogicalType); ok {
		return true
	}
	return c.ConvertedType() == schema.ConvertedTypes.UTF8
}

// StringColumn is a string column of a plan (ParquetPlan.Strings).
type StringColumn struct {
	Name string
	Rows int
}

// StringScratch bounds what ReadStrings holds for string column i beside
// its codes: the distinct strings' bytes in the units' sets and the sorted
// copy, at most the column chunks' uncompressed bytes, twice over, and
// 112 bytes for each row at most (a unit's distinct string takes 28 in its
// set, up to 56 while the set grows, 28 in the merge's entries and ids,
// and about 64 in a worker's table; the sort takes 68 a distinct string
// while the sets' 28 are still held).
func (p *ParquetPlan) StringScratch(i int) int64 {
	var total int64
	sc := p.Strings[i]
	for _, r := range p.files {
		md := r.MetaData()
		idx := md.Schema.ColumnIndexByName(sc.Name)
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			if cc, err := md.RowGroup(rg).ColumnChunk(idx); err == nil {
				total = satAdd(total, 2*max(cc.TotalUncompressedSize(), 0))
			}
		}
	}
	return satAdd(total, 112*int64(sc.Rows))
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// StringStats counts string-column reads (tests): Units decoded,
// Renumbered the units whose codes needed a pass through the table (a
// unit whose own numbering is already the sorted one is left alone), and
// CacheHits the rows readStringUnit's address cache answered.
var StringStats struct{ Units, Renumbered, CacheHits atomic.Uint64 }

// strSet is one unit's distinct strings in the order it met them, with
// their hashes (ReadStrings' seed) and prefix8s (the merge and the sort
// read these, not the bytes). The bytes are in chunks the set allocates
// and never writes below their length; refs locate each string. Nothing
// but chunks holds a pointer, so the GC does not scan millions of string
// headers (it took a quarter of the read when sets were []string).
type strSet struct {
	chunks [][]byte
	cur    int // 1 + the chunk being filled (0: none yet)
	refs   []strRef
	hashes []uint64
	pres   []uint64
}

type strRef struct{ chunk, off, n uint32 }

// strChunk is the size of a strSet's chunks (a value over an eighth of it
// gets a chunk of its own).
const strChunk = 256 << 10

func (u *strSet) len() int { return len(u.hashes) }

// str is string c, aliasing its chunk (valid while the set is).
func (u *strSet) str(c int32) string {
	r := u.refs[c]
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&u.chunks[r.chunk][r.off], r.n)
}

// reserve makes room for about n strings.
func (u *strSet) reserve(n int) {
	u.refs = slices.Grow(u.refs, n)
	u.hashes = slices.Grow(u.hashes, n)
	u.pres = slices.Grow(u.pres, n)
}

// add copies v in and numbers it.
func (u *strSet) add(v string, h, pre uint64) int32 {
	var r strRef
	if len(v) > strChunk/8 {
		u.chunks = append(u.chunks, []byte(v))
		r = strRef{uint32(len(u.chunks) - 1), 0, uint32(len(v))}
	} else if len(v) > 0 {
		if u.cur == 0 || len(v) > cap(u.chunks[u.cur-1])-len(u.chunks[u.cur-1]) {
			u.chunks = append(u.chunks, make([]byte, 0, strChunk))
			u.cur = len(u.chunks)
		}
		c := u.chunks[u.cur-1]
		r = strRef{uint32(u.cur - 1), uint32(len(c)), uint32(len(v))}
		u.chunks[u.cur-1] = append(c, v...) // within cap: the chunk is not moved
	}
	u.refs = append(u.refs, r)
	u.hashes = append(u.hashes, h)
	u.pres = append(u.pres, pre)
	return int32(len(u.hashes) - 1)
}

// strTable numbers strings by open addressing (linear probing, at most
// half full). A slot is 16 bytes: meta, the hash's top 24 bits, the
// string's length (255 for longer) and its id+1 (0: empty), and pre, its
// first 8 bytes (prefix8). A probe compares the two words and reads the
// string itself only when it is longer than 8 bytes, so a look-up of a
// short string costs one cache miss: Go's map[string]int32 took three
// (the slot, the key's header, its bytes), and allocated every string it
// kept, which the GC then scanned.
type strTable struct {
	slots []strSlot
	mask  uint64
	n     int
	sink  uint64 // keeps readStringUnit's touches
}

type strSlot struct{ meta, pre uint64 }

// strKey is the meta of a string of length n and hash h, without its id.
func strKey(h uint64, n int) uint64 { return h>>40<<40 | uint64(min(n, 255))<<32 }

// reset empties the table, sized for about hint strings.
func (t *strTable) reset(hint int) {
	size := 1024
	for size < 2*hint {
		size *= 2
	}
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
	} else {
		t.slots = make([]strSlot, size)
	}
	t.mask, t.n = uint64(size-1), 0
}

// find gives the id of v (hash h, key strKey(h, len(v)), pre prefix8(v)),
// or -1; strOf gives an id's string, asked only of strings over 8 bytes.
func (t *strTable) find(h, key, pre uint64, v string, strOf func(int32) string) int32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.meta == 0 {
			return -1
		}
		if s.meta&^0xffffffff == key && s.pre == pre {
			id := int32(uint32(s.meta)) - 1
			if len(v) <= 8 || strOf(id)[8:] == v[8:] {
				return id
			}
		}
	}
}

// put stores id under hash h, known absent; the table doubles past half
// full, rehashing its ids by hashes.
func (t *strTable) put(h, key, pre uint64, id int32, hashes []uint64) {
	t.n++
	if 2*t.n > len(t.slots) {
		old := t.slots
		t.slots = make([]strSlot, 2*len(old))
		t.mask = uint64(len(t.slots) - 1)
		for _, s := range old {
			if s.meta != 0 {
				t.place(hashes[uint32(s.meta)-1], s)
			}
		}
	}
	t.place(h, strSlot{key | uint64(uint32(id)+1), pre})
}

func (t *strTable) place(h uint64, slot strSlot) {
	i := h & t.mask
	for t.slots[i].meta != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = slot
}

// shardEnt is a unit's distinct string as the merge reads it, in shard
// order (one sequential read where three arrays indexed by code took a
// cache miss each).
type shardEnt struct {
	h, pre uint64
	c, n   int32 // code and length
}

// ReadStrings reads string column i of the plan: codes (len = the column's
// rows) gets each row's code, and the sorted distinct strings are
// returned. A null refuses the read (ErrData), saying how to read around it.
//
// Three steps, each on the workers: the units (file, row group) are
// decoded, each numbering the strings it meets (readStringUnit); the
// units' strings are merged by hash shard, a shard on a worker in a table
// that fits its cache, and the column's distinct strings sorted (in
// chunks, merged); each unit's rows are renumbered through a table from
// its numbering to the sorted one.
func (p *ParquetPlan) ReadStrings(i int, codes []int32, workers int) (cats []string, err error) {
	sc := p.Strings[i]
	if len(codes) != sc.Rows {
		return nil, errorf(ErrValue, "ReadStrings needs %d codes", sc.Rows)
	}
	type unit struct {
		f, rg  int
		off, n int
		set    strSet // the unit's distinct strings, in its own numbering
		// ents are the set's strings by hash shard (shard s's are
		// ents[start[s]:start[s+1]]); global[c] is code c's id in its
		// shard's merge, then its sorted place.
		ents   []shardEnt
		start  []int32
		global []int32
	}
	var units []*unit
	for f, r := range p.files {
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			units = append(units, &unit{f: f, rg: rg, off: p.offsets[f][rg], n: int(md.RowGroup(rg).NumRows())})
		}
	}
	seed := maphash.MakeSeed()
	nw := max(1, min(workers, len(units)))
	var next atomic.Int64
	var errOnce sync.Once
	var firstErr error
	var g par.Group
	for range nw {
		g.Go(func() {
			var vals []parquet.ByteArray
			var defs []int16
			var t strTable
			for {
				k := int(next.Add(1)) - 1
				if k >= len(units) {
					return
				}
				u := units[k]
				if err := p.readStringUnit(sc, u.f, u.rg, codes[u.off:u.off+u.n], &vals, &defs, seed, &t, &u.set); err != nil {
					errOnce.Do(func() { firstErr = err })
					next.Store(int64(len(units))) // the others stop
					return
				}
				StringStats.Units.Add(1)
			}
		})
	}
	g.Wait() // re-panics a worker's panic here, where the server's recover is
	if firstErr != nil {
		return nil, firstErr
	}

	// Merge by shard of the hash (bits 26..33: the units' tables index by
	// the low bits and tag by the top 24), so many a shard's table of
	// about 2^14 strings stays in L2.
	sum := 0
	for _, u := range units {
		sum += u.set.len()
	}
	shardBits := uint(0)
	for shardBits < 8 && sum>>(14+shardBits) > 0 {
		shardBits++
	}
	nShards := 1 << shardBits
	shardOf := func(h uint64) int { return int(h>>26) & (nShards - 1) }
	eachOn(&g, nw, len(units), func(k int) {
		u := units[k]
		u.start = make([]int32, nShards+1)
		for _, h := range u.set.hashes {
			u.start[shardOf(h)+1]++
		}
		for s := range nShards {
			u.start[s+1] += u.start[s]
		}
		at := slices.Clone(u.start[:nShards])
		u.ents = make([]shardEnt, u.set.len())
		for c, h := range u.set.hashes {
			s := shardOf(h)
			u.ents[at[s]] = shardEnt{h: h, pre: u.set.pres[c], c: int32(c), n: int32(u.set.refs[c].n)}
			at[s]++
		}
		u.global = make([]int32, u.set.len())
	})
	// entries[s]: shard s's distinct strings, as unit<<32|code of the first
	// unit holding each.
	entries := make([][]uint64, nShards)
	next.Store(0)
	for range min(nw, nShards) {
		g.Go(func() {
			var t strTable
			var es, hs []uint64
			strOf := func(id int32) string { return units[es[id]>>32].set.str(int32(uint32(es[id]))) }
			for {
				s := int(next.Add(1)) - 1
				if s >= nShards {
					return
				}
				most := 0
				for _, u := range units {
					most = max(most, int(u.start[s+1]-u.start[s]))
				}
				t.reset(most)
				es, hs = make([]uint64, 0, most), hs[:0]
				for ui, u := range units {
					for _, e := range u.ents[u.start[s]:u.start[s+1]] {
						key := strKey(e.h, int(e.n))
						var v string
						if e.n > 8 {
							v = u.set.str(e.c)
						}
						id := t.find(e.h, key, e.pre, v, strOf)
						if id < 0 {
							id = int32(len(es))
							es = append(es, uint64(ui)<<32|uint64(e.c))
							hs = append(hs, e.h)
							t.put(e.h, key, e.pre, id, hs)
						}
						u.global[e.c] = id
					}
				}
				entries[s] = es
			}
		})
	}
	g.Wait()
	for _, u := range units {
		u.ents = nil
	}
	base := make([]int, nShards+1)
	for s := range nShards {
		base[s+1] = base[s] + len(entries[s])
	}
	d := base[nShards]
	if d > math.MaxInt32 {
		return nil, errorf(ErrValue, "string column %q has %d distinct values, more than int32 codes number", sc.Name, d)
	}
	items := make([]sortItem, d)
	for s, es := range entries {
		for id, e := range es {
			u := &units[e>>32].set
			items[base[s]+id] = sortItem{prefix: u.pres[uint32(e)], s: u.str(int32(uint32(e))), gid: int32(base[s] + id)}
		}
	}
	entries = nil
	items = sortItems(items, nw)
	// The sorted strings in one arena of their own (the units' sets go),
	// and each entry's sorted place.
	nb := 0
	for _, it := range items {
		nb += len(it.s)
	}
	arena := make([]byte, 0, nb)
	cats = make([]string, d)
	rank := make([]int32, d)
	for k, it := range items {
		if !utf8.ValidString(it.s) {
			return nil, errorf(ErrData, "string column %q holds bytes that are not UTF-8 (%q); its file is damaged or not text", sc.Name, it.s[:min(len(it.s), 40)])
		}
		lo := len(arena)
		arena = append(arena, it.s...) // within cap: the arena is not moved
		if len(it.s) > 0 {
			cats[k] = unsafe.String(&arena[lo], len(it.s)) // arena is not written below its length again
		}
		rank[it.gid] = int32(k)
	}
	items = nil
	// Renumber each unit's rows, on the workers, largest units first.
	slices.SortStableFunc(units, func(a, b *unit) int { return cmp.Compare(b.n, a.n) })
	eachOn(&g, nw, len(units), func(k int) {
		u := units[k]
		table := u.global // rewritten in place: local code -> sorted place
		same := true
		for c, h := range u.set.hashes {
			at := rank[base[shardOf(h)]+int(table[c])]
			table[c] = at
			same = same && int(at) == c
		}
		u.set = strSet{} // its bytes are copied into cats
		if same {
			return
		}
		StringStats.Renumbered.Add(1)
		rows := codes[u.off : u.off+u.n]
		for j, c := range rows {
			rows[j] = table[c]
		}
	})
	return cats, nil
}

// eachOn runs f(k) for every k < n on nw goroutines of g, each taking the
// next k, and waits (a worker's panic re-panics here).
func eachOn(g *par.Group, nw, n int, f func(k int)) {
	var next atomic.Int64
	for range nw {
		g.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				f(k)
			}
		})
	}
	g.Wait()
}

// sortItem is a distinct string to sort: its first 8 bytes big-endian
// (zero-padded: a shorter prefix orders first, as bytewise), the string
// and its entry.
type sortItem struct {
	prefix uint64
	s      string
	gid    int32
}

func prefix8(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
	}
	var p uint64
	for i := range len(s) {
		p |= uint64(s[i]) << (56 - 8*i)
	}
	return p
}

func cmpItems(a, b sortItem) int {
	if a.prefix != b.prefix {
		return cmp.Compare(a.prefix, b.prefix)
	}
	return strings.Compare(a.s, b.s)
}

// sortItems sorts items bytewise by string: nw chunks sorted on the
// workers, then merged pairwise (a level's merges on the workers).
func sortItems(items []sortItem, nw int) []sortItem {
	chunks := max(1, min(nw, len(items)/4096))
	bounds := make([]int, chunks+1)
	for c := range chunks + 1 {
		bounds[c] = c * len(items) / chunks
	}
	var g par.Group
	for c := range chunks {
		g.Go(func() { slices.SortFunc(items[bounds[c]:bounds[c+1]], cmpItems) })
	}
	g.Wait()
	if chunks == 1 {
		return items
	}
	tmp := make([]sortItem, len(items))
	for width := 1; width < chunks; width *= 2 {
		for c := 0; c < chunks; c += 2 * width {
			lo, mid, hi := bounds[c], bounds[min(c+width, chunks)], bounds[min(c+2*width, chunks)]
			g.Go(func() { mergeItems(tmp[lo:hi], items[lo:mid], items[mid:hi]) })
		}
		g.Wait()
		items, tmp = tmp, items
	}
	return items
}

func mergeItems(dst, a, b []sortItem) {
	k := 0
	for len(a) > 0 && len(b) > 0 {
		if cmpItems(b[0], a[0]) < 0 {
			dst[k], b = b[0], b[1:]
		} else {
			dst[k], a = a[0], a[1:]
		}
		k++
	}
	k += copy(dst[k:], a)
	copy(dst[k:], b)
}

// stringCacheBits sizes readStringUnit's address cache (1024 slots).
const stringCacheBits = 10

// stringBlock is how many values readStringUnit hashes before probing.
const stringBlock = 256

// readStringUnit decodes one row group of a string column into rows (its
// codes, in the unit's numbering) and set (the unit's distinct strings),
// numbering them in t.
func (p *ParquetPlan) readStringUnit(sc StringColumn, f, rg int, rows []int32, vals *[]parquet.ByteArray, defs *[]int16, seed maphash.Seed, t *strTable, set *strSet) (err error) {
	cs := p.chunkSpan(sc, f, rg)
	after, lo, hi := cs.after, cs.lo, cs.hi
	defer func() {
		if x := recover(); x != nil {
			err = p.dataErr(f, rg, sc.Name, after, lo, hi, x)
		}
	}()
	br, maxDef, d, closeChunk, err := p.openByteArrays(sc, f, rg, cs, vals, defs)
	if err != nil {
		return err
	}
	defer closeChunk()
	// The last unit's distinct count sizes the table: a worker's units are
	// alike, and growing it rehashes.
	t.reset(min(t.n, len(rows)))
	set.reserve(min(t.n, len(rows)))
	strOf := set.str
	// A value of a dictionary-encoded page aliases its dictionary entry, so
	// equal values share an address: a small cache indexed by the address
	// answers most rows of such a column without hashing the bytes. A
	// slot answers only when its address and its string equal the value's
	// (a page buffer reused for other bytes at the same address does not
	// fool it); comparing the address first keeps plain pages, whose
	// values seldom share one, from reading the cached strings.
	// A slot is set by a string's first row, and by table hits only in a
	// block the cache answered a quarter of (a dictionary page's): setting
	// it after a hit reads the string's ref, a cache miss a row on plain
	// pages, whose values it would not answer anyway.
	var cache [1 << stringCacheBits]struct {
		p    *byte
		s    string
		code int32
	}
	mix := seedMix(seed)
	var hs [stringBlock]uint64   // the hashes of a block's rows the cache did not answer
	var miss [stringBlock]uint16 // and their places in it
	done, hits := 0, 0
	defer func() { StringStats.CacheHits.Add(uint64(hits)) }()
	for done < len(rows) {
		want := min(batchRows, len(rows)-done)
		// Within a page: the values alias its buffer (or its dictionary)
		// until the next call, where ReadBatch would copy every one.
		levels, n, err := br.ReadBatchInPage(int64(want), (*vals)[:want], d, nil)
		if err != nil {
			return p.dataErr(f, rg, sc.Name, after, lo, hi, err)
		}
		if int(levels) != n && p.policy.NullString == nil {
			return nullStringErr(fmt.Sprintf("%s (row group %d)", p.names[f], rg), sc.Name)
		}
		if levels == 0 {
			return errorf(ErrData, "%s: row group %d of column %q ends after %d of its %d rows", p.names[f], rg, sc.Name, done, len(rows))
		}
		for b := 0; b < n; b += stringBlock {
			blk := (*vals)[b:min(b+stringBlock, n)]
			out := rows[done+b : done+b+len(blk)]
			// Hash the rows the cache does not answer and touch each one's
			// home slot: the loads are independent, so their cache misses
			// overlap, where the probes (each waiting on its slot) would
			// take them one at a time.
			var touch uint64
			m := 0
			for j, v := range blk {
				ptr := unsafe.SliceData(v)
				slot := &cache[(uint64(uintptr(unsafe.Pointer(ptr)))*0x9E3779B97F4A7C15)>>(64-stringCacheBits)]
				if slot.p == ptr && ptr != nil && slot.s == string(v) {
					out[j] = slot.code
					continue
				}
				vs := unsafe.String(ptr, len(v)) // valid within the page
				h := strHash(seed, mix, vs, prefix8(vs))
				hs[m], miss[m] = h, uint16(j)
				m++
				touch += t.slots[h&t.mask].meta
			}
			t.sink += touch
			hits += len(blk) - m
			dict := 4*(len(blk)-m) >= len(blk)
			for k, h := range hs[:m] {
				j := int(miss[k])
				v := blk[j]
				ptr := unsafe.SliceData(v)
				slot := &cache[(uint64(uintptr(unsafe.Pointer(ptr)))*0x9E3779B97F4A7C15)>>(64-stringCacheBits)]
				if slot.p == ptr && ptr != nil && slot.s == string(v) { // (an earlier value of the block)
					out[j] = slot.code
					hits++
					continue
				}
				vs := unsafe.String(ptr, len(v)) // valid within the page
				key, pre := strKey(h, len(vs)), prefix8(vs)
				code := t.find(h, key, pre, vs, strOf)
				if code < 0 {
					code = set.add(vs, h, pre)
					t.put(h, key, pre, code, set.hashes)
					slot.p, slot.s, slot.code = ptr, set.str(code), code
				} else if dict {
					slot.p, slot.s, slot.code = ptr, set.str(code), code
				}
				out[j] = code
			}
		}
		if int(levels) != n { // the n values' codes spread to their rows (from the end: in place), nulls the null string's
			null := nullCode(*p.policy.NullString, seed, t, set)
			out, k := rows[done:done+int(levels)], n-1
			for j := len(out) - 1; j >= 0; j-- {
				if d[j] == maxDef {
					out[j] = out[k]
					k--
				} else {
					out[j] = null
				}
			}
		}
		done += int(levels)
	}
	return nil
}

// strHash is a string's hash in ReadStrings' tables (pre its prefix8, mix
// seedMix(seed)): one of 8 bytes or fewer is its prefix and length mixed by
// splitmix64's finalizer (no call into maphash: a seventh of a short
// string's numbering), a longer one maphash's.
func strHash(seed maphash.Seed, mix uint64, v string, pre uint64) uint64 {
	if len(v) > 8 || noShortHash {
		return maphash.String(seed, v)
	}
	x := pre ^ mix ^ uint64(len(v))<<59
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// seedMix is what strHash mixes into short strings for seed.
func seedMix(seed maphash.Seed) uint64 { return maphash.String(seed, "arktos") }

var noShortHash bool // the benchmarks' A/B (ARKTOS_BENCH_NOSHORTHASH=1)

// nullCode numbers s (the null string) in a unit's table and set.
func nullCode(s string, seed maphash.Seed, t *strTable, set *strSet) int32 {
	key, pre := uint64(0), prefix8(s)
	h := strHash(seed, seedMix(seed), s, pre)
	key = strKey(h, len(s))
	if code := t.find(h, key, pre, s, set.str); code >= 0 {
		return code
	}
	code := set.add(s, h, pre)
	t.put(h, key, pre, code, set.hashes)
	return code
}

// span is where a row group's column chunk lies in its file (for dataErr:
// a read that failed there is an I/O error), and its uncompressed size.
type span struct {
	after   uint64
	lo, hi  int64
	idx     int
	uncompr int64
}

func (p *ParquetPlan) chunkSpan(sc StringColumn, f, rg int) span {
	md := p.files[f].MetaData()
	cs := span{after: p.srcs[f].seq.Load(), hi: math.MaxInt64, idx: md.Schema.ColumnIndexByName(sc.Name)} // (each file's own place for it)
	if cc, err := md.RowGroup(rg).ColumnChunk(cs.idx); err == nil {
		if start, n, ok := chunkRange(cc, 0); ok {
			cs.lo, cs.hi = start, start+n
		}
		cs.uncompr = cc.TotalUncompressedSize()
	}
	return cs
}

// openByteArrays opens a row group's string column: its reader, the
// column's max definition level, the batch's definition levels (nil for a
// required column) and the close to defer; vals and defs are the worker's
// batch buffers, grown to batchRows.
func (p *ParquetPlan) openByteArrays(sc StringColumn, f, rg int, cs span, vals *[]parquet.ByteArray, defs *[]int16) (*file.ByteArrayColumnChunkReader, int16, []int16, func(), error) {
	cr, err := p.files[f].RowGroup(rg).Column(cs.idx)
	if err != nil {
		return nil, 0, nil, nil, p.dataErr(f, rg, sc.Name, cs.after, cs.lo, cs.hi, err)
	}
	br, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		cr.Close()
		return nil, 0, nil, nil, errorf(ErrData, "%s: column %q is not byte arrays in row group %d", p.names[f], sc.Name, rg)
	}
	if cap(*vals) < batchRows {
		*vals = make([]parquet.ByteArray, batchRows)
	}
	maxDef := cr.Descriptor().MaxDefinitionLevel()
	var d []int16
	if maxDef > 0 {
		if cap(*defs) < batchRows {
			*defs = make([]int16, batchRows)
		}
		d = (*defs)[:batchRows]
	}
	return br, maxDef, d, func() { cr.Close() }, nil
}

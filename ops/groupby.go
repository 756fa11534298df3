package ops

// Group-by, step one: map each row's keys to a dense group id (docs/operations.md,
// "Group-by"). Group ids number the distinct keys in ascending order, so the
// unique keys come back sorted. Rows whose float key is NaN are dropped
// (id -1) unless dropna is false, in which case NaN is one group, last.
//
// Every key is first mapped to its order-preserving uint64 sort key (sort.go's
// keysOf), and the keys of a row are packed into one uint64,
// Σ (key_k - min_k) · stride_k, the last key varying fastest, so packed order
// is lexicographic order. The strategy then depends on the data:
//
//   - dense: the packed range (product of the key ranges) is at most
//     DenseMaxSlots: the packed key is a slot of a table; one pass marks the
//     occupied slots (one table per worker, OR-ed), a prefix count numbers
//     them, a second pass maps slots to ids (skipped when every slot is used).
//   - hash: medium cardinality: every worker builds an open-addressing table of
//     the packed keys of its block of rows (local ids in first-seen order);
//     the tables are merged into one, whose keys are radix-sorted to give
//     each one its rank, and a second pass maps local ids to ranks. A worker
//     whose table passes hashBigTable keys (it would leave L2) gives up, and
//     the partitioned strategy runs instead.
//   - partitioned: many groups (groupby_part.go): the keys are scattered into
//     partitions by key range (or by hash when the keys are skewed), each
//     grouped with a worker's table sized for one partition.
//   - sort (only when asked for): the packed keys are radix-sorted with their
//     row numbers, and runs of equal keys are groups.
//   - chained (groupby_chain.go): several keys whose ranges multiply past
//     2^64-2: the leading keys that pack are grouped, and their group ids
//     (ranks, so in key order) become the first key of the next grouping.
//   - wide (only when asked for, or for one key spanning all 2^64 values):
//     coargsort of the keys, then adjacent rows are compared key by key.

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// Thresholds of the strategy choice.
const (
	// DenseMaxSlots is the largest packed key range grouped with a dense table.
	DenseMaxSlots = 1 << 21
)

// Group-by strategies (Grouping.Strategy; GroupBy's strategy argument also
// takes "auto").
const (
	StrategyDense       = "dense"
	StrategyHash        = "hash"
	StrategyPartitioned = "partitioned"
	StrategySort        = "sort"
	StrategyWide        = "wide"
	StrategyChained     = "chained"
)

const (
	nanKey  = math.MaxUint64 // sort key of every NaN (floatKey)
	dropKey = math.MaxUint64 // packed key of a dropped row
)

// Grouping is the result of GroupBy; its arrays come from env and belong to
// the caller.
type Grouping struct {
	IDs      *pdarray.Array   // int32, one per row: the row's group, or -1 (dropped)
	NGroups  int              // number of groups
	Kept     int              // rows not dropped
	Keys     []*pdarray.Array // the unique keys, one array per key, sorted
	Strategy string           // the strategy used (dense, hash, partitioned, sort, wide, chained)
	Stats    []KeyStats       // of each key (GroupByWith)
}

// Free hands every array of g back to env.
func (g *Grouping) Free(env Env) {
	env.free(g.IDs)
	env.free(g.Keys...)
	g.IDs, g.Keys = nil, nil
}

// keySpec describes how one key array packs into the row key.
type keySpec struct {
	a       *pdarray.Array
	float   bool
	min     uint64 // smallest non-NaN sort key
	span    uint64 // slots: max-min+1, plus one for NaN when it is kept
	hasNaN  bool
	keepNaN bool // NaN is a group (dropna false): slot span-1
	ids     bool // a is int32 group ids of an earlier grouping: 0..span-1, or -1 (a dropped row)
	stride  uint64
}

// GroupBy maps the rows of keys (all of one length; integer, float or bool)
// to dense group ids numbered in ascending key order. strategy is "auto" or
// one of the Strategy constants (forcing one: tests and benchmarks).
func GroupBy(env Env, keys []*pdarray.Array, dropna bool, strategy string) (Grouping, error) {
	return GroupByWith(env, keys, dropna, strategy, nil)
}

// keySpecs checks a grouping's keys and strategy and packs the keys: each
// key's stats (from known, else scanned), its spec, and the product of the
// spans (total) when it is below 2^64-1 (packable).
func keySpecs(env Env, keys []*pdarray.Array, dropna bool, strategy string, known []*KeyStats) (specs []keySpec, stats []KeyStats, total uint64, packable bool, err error) {
	fail := func(err error) ([]keySpec, []KeyStats, uint64, bool, error) { return nil, nil, 0, false, err }
	if len(keys) == 0 {
		return fail(errorf(ErrValue, "group-by needs at least one key array"))
	}
	n := keys[0].Len()
	for _, k := range keys {
		if k.Len() != n {
			return fail(errorf(ErrValue, "group-by keys must have one length, got %d and %d", n, k.Len()))
		}
		if Kind(k.DType()) == 0 {
			return fail(errorf(ErrType, "cannot group by a %v array", k.DType()))
		}
	}
	switch strategy {
	case "", "auto", StrategyDense, StrategyHash, StrategyPartitioned, StrategySort, StrategyWide, StrategyChained:
	default:
		return fail(errorf(ErrValue, "unknown group-by strategy '%s'; use auto, dense, hash, partitioned, sort, chained or wide", strategy))
	}
	if n > math.MaxInt32 {
		return fail(errorf(ErrValue, "group-by of %d rows: at most %d rows are supported", n, math.MaxInt32))
	}
	specs = make([]keySpec, len(keys))
	stats = make([]KeyStats, len(keys))
	for k, a := range keys {
		if k < len(known) && known[k] != nil {
			stats[k] = *known[k]
		} else {
			stats[k] = keyStatsOf(env, a)
		}
		specs[k] = specOf(a, stats[k], dropna)
	}
	total, packable = setStrides(specs)
	if !packable && (strategy == StrategyDense || strategy == StrategyHash || strategy == StrategyPartitioned) {
		return fail(errorf(ErrValue, "group-by strategy '%s' needs keys whose ranges multiply to less than 2^64-1", strategy))
	}
	return specs, stats, total, packable, nil
}

// setStrides sets each key's stride in the packed key (the last key's 1)
// and returns the product of the spans, total, when it is below 2^64-1
// (packable; dropKey marks dropped rows).
func setStrides(specs []keySpec) (total uint64, packable bool) {
	total = 1
	for k := len(specs) - 1; k >= 0; k-- {
		specs[k].stride = total
		hi, lo := bits.Mul64(total, specs[k].span)
		if hi != 0 || lo == dropKey {
			return 0, false
		}
		total = lo
	}
	return total, true
}

// GroupByWith is GroupBy given the KeyStats of some keys (known[k] non-nil:
// key k is unchanged since they were computed); the others are scanned.
// Grouping.Stats returns them all.
func GroupByWith(env Env, keys []*pdarray.Array, dropna bool, strategy string, known []*KeyStats) (Grouping, error) {
	specs, stats, total, packable, err := keySpecs(env, keys, dropna, strategy, known)
	if err != nil {
		return Grouping{}, err
	}
	n := keys[0].Len()
	ids, err := env.Alloc(pdarray.Int32, n)
	if err != nil {
		return Grouping{}, err
	}
	g := Grouping{IDs: ids, Stats: stats}
	fail := func(err error) (Grouping, error) {
		g.Free(env)
		return Grouping{}, err
	}
	chainable := len(specs) >= 2
	for _, s := range specs {
		chainable = chainable && s.span < math.MaxUint64 // each key packs on its own
	}
	if strategy == StrategyChained && !chainable {
		strategy = "auto"
	}
	if chainable && (!packable && strategy != StrategyWide || strategy == StrategyChained) {
		g.Strategy = StrategyChained
		if err := groupChained(env, specs, &g); err != nil {
			return fail(err)
		}
		return g, nil
	}
	if !packable || strategy == StrategyWide {
		g.Strategy = StrategyWide
		if err := groupWide(env, specs, dropna, &g); err != nil {
			return fail(err)
		}
		return g, nil
	}
	uniq, freeUniq, kept, used, err := groupPacked(env, specs, total, strategy, pdarray.View[int32](ids))
	if err != nil {
		return fail(err)
	}
	defer freeUniq()
	g.Strategy, g.Kept, g.NGroups = used, kept, len(uniq)
	g.Keys = make([]*pdarray.Array, 0, len(specs))
	for k := range specs {
		a, err := env.Alloc(specs[k].a.DType(), len(uniq))
		if err != nil {
			return fail(err)
		}
		g.Keys = append(g.Keys, a)
	}
	unpackAll(env, specs, uniq, g.Keys, nil)
	return g, nil
}

// groupPacked groups the packed keys of specs (their product of spans,
// total, is below 2^64-1) with strategy ("auto" picks one), writing each
// row's id into ids. It returns the sorted distinct packed keys with the
// function that frees them, the number of rows kept and the strategy used.
func groupPacked(env Env, specs []keySpec, total uint64, strategy string, ids []int32) (uniq []uint64, freeUniq func(), kept int, used string, err error) {
	n := len(ids)
	switch {
	case strategy == StrategyDense || (strategy == "" || strategy == "auto") && total <= DenseMaxSlots && total <= uint64(8*n+65536):
		if total > 1<<27 {
			return nil, nil, 0, "", errorf(ErrValue, "group-by strategy 'dense' needs at most 2^27 slots, the keys span %d", total)
		}
		used = StrategyDense
		uniq, freeUniq, kept, err = groupDense(env, specs, int(total), ids)
	case strategy == StrategySort:
		used = StrategySort
		uniq, freeUniq, err = groupSort(env, specs, total, ids)
		if err == nil {
			kept = countKept(env, ids)
		}
	default:
		ok := false
		if strategy != StrategyPartitioned {
			used = StrategyHash
			uniq, freeUniq, kept, ok, err = groupHash(env, specs, ids, strategy == StrategyHash)
		}
		if err == nil && !ok {
			used = StrategyPartitioned
			uniq, freeUniq, kept, err = groupPartitioned(env, specs, ids)
		}
	}
	if err != nil {
		return nil, nil, 0, "", err
	}
	return uniq, freeUniq, kept, used, nil
}

// KeyStats is what GroupBy learns of a key array in its first pass: the
// smallest and largest sort keys (sort.go) of its non-NaN values, and
// whether it holds NaN. A caller that knows the array has not changed may
// hand them back to GroupByWith to skip that pass.
type KeyStats struct {
	Lo, Hi uint64
	NaN    bool
}

// keyStatsOf scans a once for its KeyStats.
func keyStatsOf(env Env, a *pdarray.Array) KeyStats {
	if Kind(a.DType()) != 'f' {
		lo, hi, _ := intKeyRange(env, a)
		return KeyStats{Lo: lo, Hi: hi}
	}
	n := a.Len()
	nw := numWorkers(env.workers(), n)
	type part struct {
		lo, hi uint64
		any    bool
		nan    bool
	}
	parts := make([]part, nw)
	env.parallel(n, chunk, func(w, lo, hi int) {
		buf := make([]uint64, chunk)
		p := part{lo: math.MaxUint64}
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			kb := buf[:e-c]
			keyChunk(a, c, e, kb)
			for _, k := range kb {
				if k == nanKey {
					p.nan = true
					continue
				}
				p.lo, p.hi, p.any = min(p.lo, k), max(p.hi, k), true
			}
		}
		parts[w] = p
	})
	st := KeyStats{Lo: math.MaxUint64}
	any := false
	for _, p := range parts {
		if p.any {
			st.Lo, st.Hi, any = min(st.Lo, p.lo), max(st.Hi, p.hi), true
		}
		st.NaN = st.NaN || p.nan
	}
	if !any {
		st.Lo, st.Hi = 0, 0
	}
	return st
}

// specOf is the packing of key a from its stats.
func specOf(a *pdarray.Array, st KeyStats, dropna bool) keySpec {
	s := keySpec{a: a, float: Kind(a.DType()) == 'f', min: st.Lo, span: st.Hi - st.Lo + 1}
	if s.span == 0 { // the whole uint64 range
		s.span = math.MaxUint64
	}
	if s.float && st.NaN {
		s.hasNaN = true
		if !dropna {
			s.keepNaN = true
			if s.span < math.MaxUint64 {
				s.span++
			}
		}
	}
	return s
}

// keyChunk writes the sort keys (sort.go) of a[lo:hi] into out.
func keyChunk(a *pdarray.Array, lo, hi int, out []uint64) {
	switch a.DType() {
	case dI8:
		signedKeys(pdarray.View[int8](a)[lo:hi], out)
	case dI16:
		signedKeys(pdarray.View[int16](a)[lo:hi], out)
	case dI32:
		signedKeys(pdarray.View[int32](a)[lo:hi], out)
	case dI64:
		signedKeys(pdarray.View[int64](a)[lo:hi], out)
	case dU8, dBool:
		unsignedKeys(pdarray.BytesAs[uint8](a.Bytes())[lo:hi], out)
	case dU16:
		unsignedKeys(pdarray.View[uint16](a)[lo:hi], out)
	case dU32:
		unsignedKeys(pdarray.View[uint32](a)[lo:hi], out)
	case dU64:
		unsignedKeys(pdarray.View[uint64](a)[lo:hi], out)
	case dF32:
		floatKeys(pdarray.View[float32](a)[lo:hi], out)
	case dF64:
		floatKeys(pdarray.View[float64](a)[lo:hi], out)
	}
}

func signedKeys[T Signed](x []T, out []uint64) {
	out = out[:len(x)]
	for i, v := range x {
		out[i] = uint64(int64(v)) ^ (1 << 63)
	}
}

func unsignedKeys[T Unsigned](x []T, out []uint64) {
	out = out[:len(x)]
	for i, v := range x {
		out[i] = uint64(v)
	}
}

func floatKeys[T Float](x []T, out []uint64) {
	out = out[:len(x)]
	for i, v := range x {
		out[i] = floatKey(v)
	}
}

// packChunk writes the packed keys of rows [lo, hi) into p (dropKey for a
// dropped row); buf is scratch of the same length.
func packChunk(specs []keySpec, lo, hi int, p, buf []uint64) {
	p, buf = p[:hi-lo], buf[:hi-lo]
	dropped := false // a float key dropped a row: later keys check p for dropKey
	for k := range specs {
		s := &specs[k]
		if !s.float && !s.ids && !dropped {
			packIntKey(s, k == 0, lo, hi, p, nil)
			continue
		}
		keyChunk(s.a, lo, hi, buf)
		if s.ids { // id -1 has sort key min-1: the row is dropped
			dropped = true
			mn, st := s.min, s.stride
			for i, key := range buf {
				switch {
				case k > 0 && p[i] == dropKey:
				case key < mn:
					p[i] = dropKey
				case k == 0:
					p[i] = (key - mn) * st
				default:
					p[i] += (key - mn) * st
				}
			}
			continue
		}
		if s.float && !s.keepNaN {
			dropped = true
		}
		mn, st := s.min, s.stride
		switch {
		case !s.float: // after a float key that dropped rows
			for i, key := range buf {
				if p[i] != dropKey {
					p[i] += (key - mn) * st
				}
			}
		default:
			nanRel := (s.span - 1) * st
			for i, key := range buf {
				var r uint64
				switch {
				case k > 0 && p[i] == dropKey:
					continue
				case key == nanKey && !s.keepNaN:
					p[i] = dropKey
					continue
				case key == nanKey:
					r = nanRel
				default:
					r = (key - mn) * st
				}
				if k == 0 {
					p[i] = r
				} else {
					p[i] += r
				}
			}
		}
	}
}

// fromSortKey is the inverse of the sort keys of keyChunk (NaN for nanKey).
func fromSortKey[T Number](k uint64, kind byte) T {
	switch kind {
	case 'i':
		return T(int64(k ^ 1<<63))
	case 'u', 'b':
		return T(k)
	}
	if k == nanKey {
		return T(quietNaN)
	}
	if k>>63 != 0 {
		return T(math.Float64frombits(k &^ (1 << 63)))
	}
	return T(math.Float64frombits(^k))
}

// unpackAll writes every key of specs, from the packed keys uniq, into
// outs[k] (an array of the key's dtype, len(uniq) long), or, where outs[k] is
// nil, the key's slot (0..span-1) into rels[k]. The keys are peeled off
// from the last (stride 1) with one division each (divPeel) and none for
// the first, where unpacking each key on its own divided twice (by its
// stride, then its span): 0.32 s of G1 q10's 1.8 s grouping at 10^7 rows.
func unpackAll(env Env, specs []keySpec, uniq []uint64, outs []*pdarray.Array, rels [][]uint64) {
	nk := len(specs)
	env.parallel(len(uniq), chunk, func(_, lo, hi int) {
		u := make([]uint64, chunk)
		rel := make([]uint64, chunk)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			u := u[:e-c]
			copy(u, uniq[c:e])
			for k := nk - 1; k >= 0; k-- {
				r := rel[:e-c]
				if outs[k] == nil {
					r = rels[k][c:e]
				}
				if k > 0 {
					divPeel(u, r, specs[k].span)
				} else {
					copy(r, u) // below the first key's span: nothing to divide
				}
				if outs[k] != nil {
					writeKeys(&specs[k], r, outs[k], c)
				}
			}
		}
	})
}

// divPeel divides every u by d, leaving the quotients in u and the
// remainders in r. Below 2^52 the quotient is estimated in float64 and
// corrected by one step (the estimate is within 1: x/d·(1±2^-52) with
// x/d < 2^52); a 64-bit division costs several times that.
func divPeel(u, r []uint64, d uint64) {
	r = r[:len(u)]
	inv := 1 / float64(d)
	for i, x := range u {
		var q uint64
		if x < 1<<52 {
			q = uint64(float64(x) * inv)
			if p := q * d; p > x {
				q--
			} else if x-p >= d {
				q++
			}
		} else {
			q = x / d
		}
		u[i], r[i] = q, x-q*d
	}
}

// writeKeys writes the keys of slots rel (key s) into out[off:].
func writeKeys(s *keySpec, rel []uint64, out *pdarray.Array, off int) {
	switch out.DType() {
	case dI8:
		writeKeysT(s, rel, pdarray.View[int8](out)[off:])
	case dI16:
		writeKeysT(s, rel, pdarray.View[int16](out)[off:])
	case dI32:
		writeKeysT(s, rel, pdarray.View[int32](out)[off:])
	case dI64:
		writeKeysT(s, rel, pdarray.View[int64](out)[off:])
	case dU8, dBool:
		writeKeysT(s, rel, pdarray.BytesAs[uint8](out.Bytes())[off:])
	case dU16:
		writeKeysT(s, rel, pdarray.View[uint16](out)[off:])
	case dU32:
		writeKeysT(s, rel, pdarray.View[uint32](out)[off:])
	case dU64:
		writeKeysT(s, rel, pdarray.View[uint64](out)[off:])
	case dF32:
		writeKeysT(s, rel, pdarray.View[float32](out)[off:])
	case dF64:
		writeKeysT(s, rel, pdarray.View[float64](out)[off:])
	}
}

func writeKeysT[T Number](s *keySpec, rel []uint64, out []T) {
	kind := Kind(s.a.DType())
	out = out[:len(rel)]
	mn := s.min
	if !s.keepNaN {
		for i, r := range rel {
			out[i] = fromSortKey[T](mn+r, kind)
		}
		return
	}
	for i, r := range rel {
		if r == s.span-1 {
			out[i] = fromSortKey[T](nanKey, kind)
			continue
		}
		out[i] = fromSortKey[T](mn+r, kind)
	}
}

func countKept(env Env, ids []int32) int {
	parts := make([]int, numWorkers(env.workers(), len(ids)))
	env.parallel(len(ids), chunk, func(w, lo, hi int) {
		c := 0
		for _, g := range ids[lo:hi] {
			c += int(uint32(^g) >> 31) // 1 when g >= 0
		}
		parts[w] = c
	})
	t := 0
	for _, c := range parts {
		t += c
	}
	return t
}

// scratchOf allocates n elements of type T from env (its bytes uninitialised)
// and returns them with the function that frees them.
func scratchOf[T pdarray.Element](env Env, n int) ([]T, func(), error) {
	a, err := env.Alloc(pdarray.DTypeOf[T](), n)
	if err != nil {
		return nil, nil, err
	}
	return pdarray.View[T](a), func() { env.free(a) }, nil
}

// slotsOf allocates n zeroed slots of a pointer-free struct S from env: the
// group states kept side by side (array of structs).
func slotsOf[S any](env Env, n int) ([]S, func(), error) {
	size := int(unsafe.Sizeof(*new(S)))
	a, err := env.Alloc(dU64, (n*size+7)/8)
	if err != nil {
		return nil, nil, err
	}
	var s []S
	if n > 0 {
		s = unsafe.Slice((*S)(unsafe.Pointer(unsafe.SliceData(a.Bytes()))), n)
		clear(s)
	}
	return s, func() { env.free(a) }, nil
}

// groupDense groups with a table of total slots; it returns the occupied
// slots in ascending order and the number of rows kept.
//
// One pass packs each row's keys into its slot, writes the slot as the
// row's id and sets the slot's bit in the worker's occupancy bitmap (total/8
// bytes: it stays in L2 where a byte or int32 table would not). The bitmaps
// are OR-ed and ranked (popcounts per word), and unless every slot is used a
// second pass turns each slot into its rank, again from L2-resident tables.
// denseLonePasses counts groupDense calls on the fused lone-key path (tests
// check it is taken).
var denseLonePasses atomic.Uint64

// denseInt64Passes counts groupDense calls on the fused pass for two or
// three int64 keys (markInt64Keys; measured 170-220 -> 160-190 ms for the
// taxi grouping by three keys of 7.7 M rows on a loaded machine).
var denseInt64Passes atomic.Uint64

func groupDense(env Env, specs []keySpec, total int, ids []int32) ([]uint64, func(), int, error) {
	n := len(ids)
	nw := numWorkers(env.workers(), n)
	words := (total + 63) / 64
	bm, freeBM, err := scratchOf[uint64](env, nw*words)
	if err != nil {
		return nil, nil, 0, err
	}
	defer freeBM()
	clear(bm)
	drops := make([]int, nw)
	outside := make([]bool, nw)
	lone := len(specs) == 1 && !specs[0].float && !specs[0].ids && specs[0].stride == 1
	if lone {
		denseLonePasses.Add(1)
	}
	wide64 := len(specs) >= 2 && len(specs) <= 3
	for _, sp := range specs {
		wide64 = wide64 && sp.a.DType() == dI64
	}
	if wide64 {
		denseInt64Passes.Add(1)
	}
	env.parallel(n, chunk, func(w, lo, hi int) {
		o := bm[w*words : (w+1)*words]
		if wide64 {
			outside[w] = markInt64Keys(specs, lo, hi, ids, o)
			return
		}
		if lone {
			sink := denseSink{ids: ids, occ: o, total: uint64(total)}
			packIntKey(&specs[0], true, lo, hi, nil, &sink)
			outside[w] = sink.outside
			return
		}
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		d := 0
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			packChunk(specs, c, e, p, buf)
			out := ids[c:e]
			for i, k := range p[:e-c] {
				if k == dropKey {
					out[i] = -1
					d++
					continue
				}
				if k >= uint64(total) { // a key changed since its range was taken
					outside[w] = true
					k = 0
				}
				out[i] = int32(k)
				if x := o[k>>6]; x&(1<<(k&63)) == 0 { // see markT
					o[k>>6] = x | 1<<(k&63)
				}
			}
		}
		drops[w] = d
	})
	if slices.Contains(outside, true) {
		return nil, nil, 0, errKeyWritten()
	}
	kept := n
	for _, d := range drops {
		kept -= d
	}
	// Merge the bitmaps and rank the words.
	occ := bm[:words]
	for w := 1; w < nw; w++ {
		for j, x := range bm[w*words : (w+1)*words] {
			occ[j] |= x
		}
	}
	rank, freeRank, err := scratchOf[int32](env, words)
	if err != nil {
		return nil, nil, 0, err
	}
	defer freeRank()
	ng := 0
	for j, x := range occ {
		rank[j] = int32(ng)
		ng += bits.OnesCount64(x)
	}
	uniq, freeUniq, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, nil, 0, err
	}
	u := 0
	for j, x := range occ {
		for x != 0 {
			uniq[u] = uint64(j*64 + bits.TrailingZeros64(x))
			u++
			x &= x - 1
		}
	}
	if ng < total {
		env.parallel(n, chunk, func(_, lo, hi int) {
			out := ids[lo:hi]
			for i, k := range out {
				if k >= 0 {
					j := uint32(k) >> 6
					out[i] = rank[j] + int32(bits.OnesCount64(occ[j]&(1<<(k&63)-1)))
				}
			}
		})
	}
	return uniq, freeUniq, kept, nil
}

// hashTable is an open-addressing table (linear probing) of packed keys to
// int32 ids; an empty slot holds dropKey. Its arrays come from env.
type hashTable struct {
	slots []hashSlot // key and id side by side: one cache miss per probe
	mem   []hashSlot // the slots' allocation (slots is a prefix)
	order []uint64   // keys by id
	mask  uint64
	shift uint
	mul   uint64 // hashMul shifted past the hash bits to skip (a partition's
	// tables: its own top bits); (k*mul)>>shift is k's home slot. One
	// multiplier, not a multiply then two variable shifts: each of those
	// wants CX on amd64, and the probing loops spilled registers around them.
	free []func()
}

// hashSlot is one entry of a hashTable (k is dropKey when empty).
type hashSlot struct {
	k uint64
	v int32
	_ int32
}

func newHashTable(env Env, capPow uint) (*hashTable, error) {
	t := &hashTable{mul: hashMul}
	if err := t.alloc(env, capPow); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *hashTable) alloc(env Env, capPow uint) error {
	size := 1 << capPow
	a, err := env.Alloc(dU64, size*int(unsafe.Sizeof(hashSlot{}))/8)
	if err != nil {
		return err
	}
	fs := func() { env.free(a) }
	t.mem = unsafe.Slice((*hashSlot)(unsafe.Pointer(unsafe.SliceData(a.Bytes()))), size)
	t.use(capPow)
	t.free = append(t.free, fs)
	return nil
}

// use makes the first 2^capPow slots of t.mem the (empty) table. Every slot
// is written here: no clear first (slotsOf's).
func (t *hashTable) use(capPow uint) {
	size := 1 << capPow
	sl := t.mem[:size]
	for i := range sl {
		sl[i] = hashSlot{k: dropKey, v: -1} // v: see probeIDs
	}
	t.slots, t.mask, t.shift = sl, uint64(size-1), 64-capPow
}

// reset empties t with 2^capPow slots, in its memory when that is large
// enough.
func (t *hashTable) reset(env Env, capPow uint) error {
	t.order = t.order[:0]
	if len(t.mem) >= 1<<capPow {
		t.use(capPow)
		return nil
	}
	t.release()
	return t.alloc(env, capPow)
}

// release frees t's memory; t is then empty, with no slots (a reset or
// alloc must come before it is used again).
func (t *hashTable) release() {
	for _, f := range t.free {
		f()
	}
	t.free, t.mem, t.slots, t.mask = nil, nil, nil, 0
}

// hashMul is the multiplier of every key hash here (Fibonacci hashing): the
// tables' home slots and the hash partitions' top bits.
const hashMul = 0x9E3779B97F4A7C15

// hashMulPast is the multiplier of a table that indexes by the hash bits
// after the top p (hashTable.mul).
func hashMulPast(p uint) uint64 {
	m := uint64(hashMul)
	return m << (p & 63)
}

// hash is k's home slot (tableIDs and homeSlots compute it inline).
func (t *hashTable) hash(k uint64) uint64 { return (k * t.mul) >> t.shift }

// insert returns the id of key k, adding it with the next id when new.
func (t *hashTable) insert(env Env, k uint64) (int32, error) {
	for h := t.hash(k); ; h = (h + 1) & t.mask {
		switch t.slots[h].k {
		case k:
			return t.slots[h].v, nil
		case dropKey:
			id := int32(len(t.order))
			t.slots[h] = hashSlot{k: k, v: id}
			t.order = append(t.order, k)
			if uint64(len(t.order))*2 > t.mask {
				if err := t.grow(env); err != nil {
					return 0, err
				}
			}
			return id, nil
		}
	}
}

// grow doubles t's slots and inserts its keys again from t.order (keys by
// id), in its memory when that is large enough (a table reset to a part of
// a larger one), else in new memory.
func (t *hashTable) grow(env Env) error {
	capPow := uint(bits.Len64(t.mask)) + 1
	if len(t.mem) >= 1<<capPow {
		t.use(capPow)
	} else {
		oldFree := t.free
		t.free = nil
		if err := t.alloc(env, capPow); err != nil {
			t.free = oldFree
			return err
		}
		for _, f := range oldFree {
			f()
		}
	}
	for id, k := range t.order {
		h := t.hash(k)
		for t.slots[h].k != dropKey {
			h = (h + 1) & t.mask
		}
		t.slots[h] = hashSlot{k: k, v: int32(id)}
	}
	return nil
}

// groupHash groups with one hash table per worker; ok is false when a
// worker saw too many distinct keys (unless forced) and sorting should be
// used instead.
func groupHash(env Env, specs []keySpec, ids []int32, force bool) (uniq []uint64, freeUniq func(), kept int, ok bool, err error) {
	n := len(ids)
	nw := numWorkers(env.workers(), n)
	tables := make([]*hashTable, nw)
	errs := make([]error, nw)
	gaveUp := make([]bool, nw)
	defer func() {
		for _, t := range tables {
			if t != nil {
				t.release()
			}
		}
	}()
	bounds := splitBounds(n, nw, chunk)
	var stop atomic.Bool
	lone64, mn := loneInt64(specs)
	env.parallel(n, chunk, func(w, lo, hi int) {
		limit := hashForcedMax // forced: the keys' order and id maps are Go memory, bounded here
		if !force {
			limit = hashBigTable // past it the table leaves L2: partition instead
		}
		t, err := newHashTable(env, 12)
		if err != nil {
			errs[w] = err
			return
		}
		tables[w] = t
		p, buf := make([]uint64, chunk), make([]uint64, chunk)
		pb := new(probeBuf)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			var err error
			if lone64 != nil {
				err = probeLoneIDs(env, t, lone64[c:e], mn, ids[c:e], hashGrow, pb)
			} else {
				packChunk(specs, c, e, p, buf)
				err = probeIDs(env, t, p[:e-c], 1, ids[c:e], hashGrow, pb)
			}
			if err != nil {
				errs[w] = err
				return
			}
			if len(t.order) > limit {
				gaveUp[w] = true
				stop.Store(true)
				return
			}
			if stop.Load() {
				return
			}
		}
	})
	for w := range errs {
		if errs[w] != nil {
			return nil, nil, 0, false, errs[w]
		}
		if gaveUp[w] {
			return nil, nil, 0, false, nil
		}
	}
	// Merge: one table of every key, in worker order (provisional ids).
	var global *hashTable
	if nw == 1 && tables[0] != nil {
		global = tables[0]
	} else {
		total := 0
		for _, t := range tables {
			if t != nil {
				total += len(t.order)
			}
		}
		global, err = newHashTable(env, uint(max(12, bits.Len(uint(2*total)))))
		if err != nil {
			return nil, nil, 0, false, err
		}
		defer global.release()
	}
	locals := make([][]int32, nw) // local id → provisional id
	for w, t := range tables {
		if global == t || t == nil {
			continue
		}
		l, fl, err := scratchOf[int32](env, len(t.order))
		if err != nil {
			return nil, nil, 0, false, err
		}
		defer fl()
		locals[w] = l
		for l, k := range t.order {
			if locals[w][l], err = global.insert(env, k); err != nil {
				return nil, nil, 0, false, err
			}
		}
	}
	ng := len(global.order)
	// Sort the keys, carrying provisional ids: rank[prov] = position.
	keys, fk, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, nil, 0, false, err
	}
	kTmp, fkt, err := scratchOf[uint64](env, ng)
	if err != nil {
		fk()
		return nil, nil, 0, false, err
	}
	defer fkt()
	prov, fp, err := scratchOf[int64](env, 2*ng)
	if err != nil {
		fk()
		return nil, nil, 0, false, err
	}
	defer fp()
	copy(keys, global.order)
	sk, sp := sortWithIndex(env, keys, kTmp, prov)
	rank, fr, err := scratchOf[int32](env, ng)
	if err != nil {
		fk()
		return nil, nil, 0, false, err
	}
	defer fr()
	for pos, p := range sp {
		rank[p] = int32(pos)
	}
	if ng > 0 && &sk[0] != &keys[0] {
		copy(keys, sk)
	}
	kept = n
	for w, t := range tables {
		if t == nil {
			continue
		}
		m := rank
		if global != t {
			m = locals[w]
			for l, p := range m {
				m[l] = rank[p]
			}
		}
		lo, hi := bounds[w], bounds[w+1]
		kept -= parallelIDs(env, ids[lo:hi], m)
	}
	return keys, fk, kept, true, nil
}

// parallelIDs rewrites ids through m (ids -1 stay) and returns how many
// are -1 (dropped rows): counted here, the kept count needs no pass of its own.
func parallelIDs(env Env, ids []int32, m []int32) int {
	drops := make([]int, numWorkers(env.workers(), len(ids)))
	env.parallel(len(ids), chunk, func(w, lo, hi int) {
		out := ids[lo:hi]
		d := 0
		for i, k := range out {
			if k >= 0 {
				out[i] = m[k]
			} else {
				d++
			}
		}
		drops[w] = d
	})
	t := 0
	for _, d := range drops {
		t += d
	}
	return t
}

// groupSort groups by radix-sorting the packed keys with their rows.
func groupSort(env Env, specs []keySpec, total uint64, ids []int32) ([]uint64, func(), error) {
	n := len(ids)
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	get := func(d pdarray.DType) ([]byte, error) {
		a, err := env.Alloc(d, n)
		if err != nil {
			return nil, err
		}
		frees = append(frees, func() { env.free(a) })
		return a.Bytes(), nil
	}
	var bs [4][]byte
	for i, d := range []pdarray.DType{dU64, dU64, dI64, dI64} {
		b, err := get(d)
		if err != nil {
			return nil, nil, err
		}
		bs[i] = b
	}
	keys, kTmp := pdarray.BytesAs[uint64](bs[0]), pdarray.BytesAs[uint64](bs[1])
	idx, iTmp := pdarray.BytesAs[int64](bs[2]), pdarray.BytesAs[int64](bs[3])
	packSortable(env, specs, total, keys, idx)
	if n > 1 {
		base, nbits := keyRange(env, keys)
		keys, idx = radixSort(env, keys, kTmp, idx, iTmp, base, nbits)
	}
	kept, _ := slices.BinarySearch(keys, total)
	for i := kept; i < n; i++ {
		ids[idx[i]] = -1
	}
	// Runs of equal keys: per-worker counts, then ids.
	base := runOffsets(env, keys[:kept])
	ng := base[len(base)-1]
	if ng > math.MaxInt32 {
		return nil, nil, errorf(ErrValue, "group-by found %d groups; at most %d are supported", ng, math.MaxInt32)
	}
	uniq, freeUniq, err := scratchOf[uint64](env, ng)
	if err != nil {
		return nil, nil, err
	}
	env.parallel(kept, 1, func(w, lo, hi int) {
		g := base[w] - 1
		for i := lo; i < hi; i++ {
			if i == 0 || keys[i] != keys[i-1] {
				g++
				uniq[g] = keys[i]
			}
			ids[idx[i]] = int32(g)
		}
	})
	return uniq, freeUniq, nil
}

// runOffsets counts the runs of equal keys in sorted, block by block as
// env.parallel(len(sorted), 1, ...) splits it: block w's first
// run is run number offs[w] (the first of a block may continue the last
// of the block before: it counts as new only where it differs), and
// offs[nw] is the number of runs.
func runOffsets(env Env, sorted []uint64) []int {
	nw := numWorkers(env.workers(), len(sorted))
	offs := make([]int, nw+1)
	env.parallel(len(sorted), 1, func(w, lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			if i == 0 || sorted[i] != sorted[i-1] {
				c++
			}
		}
		offs[w+1] = c
	})
	for w := 1; w <= nw; w++ {
		offs[w] += offs[w-1]
	}
	return offs
}

// packSortable writes every row's packed key into keys, a dropped row's as
// total (past every kept row's, so it sorts after them while the range
// stays total+1 wide), and, when idx is not nil, each row's index.
func packSortable(env Env, specs []keySpec, total uint64, keys []uint64, idx []int64) {
	env.parallel(len(keys), chunk, func(_, lo, hi int) {
		buf := make([]uint64, chunk)
		for c := lo; c < hi; c += chunk {
			e := min(hi, c+chunk)
			p := keys[c:e]
			packChunk(specs, c, e, p, buf)
			for i, k := range p {
				if k == dropKey {
					p[i] = total
				}
			}
			if idx != nil {
				for i := c; i < e; i++ {
					idx[i] = int64(i)
				}
			}
		}
	})
}

// groupWide groups keys whose ranges do not pack into 64 bits: coargsort,
// then compare neighbours key by key.
func groupWide(env Env, specs []keySpec, dropna bool, g *Grouping) error {
	n := g.IDs.Len()
	ids := pdarray.View[int32](g.IDs)
	keys := make([]*pdarray.Array, len(specs))
	for k := range specs {
		keys[k] = specs[k].a
	}
	perm, err := env.Alloc(dI64, n)
	if err != nil {
		return err
	}
	defer env.free(perm)
	if err := Coargsort(env, keys, perm); err != nil {
		return err
	}
	p := pdarray.View[int64](perm)
	// Each group's first row, for its keys: room for one group a row, from
	// env (accounted; 800 MB at 10^8 rows, where a growing Go slice and its
	// copy took up to three times that outside --max-memory).
	fa, err := env.Alloc(dI64, n)
	if err != nil {
		return err
	}
	defer env.free(fa)
	firsts := pdarray.View[int64](fa)[:0]
	prev := make([]uint64, len(specs))
	cur := make([]uint64, len(specs))
	one := make([]uint64, 1)
	ng := -1
	for _, row := range p {
		r := int(row)
		drop := false
		for k := range specs {
			keyChunk(specs[k].a, r, r+1, one)
			cur[k] = one[0]
			if specs[k].float && one[0] == nanKey && dropna {
				drop = true
			}
		}
		if drop {
			ids[r] = -1
			continue
		}
		if ng < 0 || !slices.Equal(cur, prev) {
			ng++
			firsts = append(firsts, int64(r))
			copy(prev, cur)
		}
		ids[r] = int32(ng)
	}
	g.NGroups = len(firsts)
	g.Kept = countKept(env, ids)
	idx, err := pdarray.Wrap(dI64, pdarray.AsBytes(firsts))
	if err != nil {
		return err
	}
	for k := range specs {
		a, err := env.Alloc(specs[k].a.DType(), len(firsts))
		if err != nil {
			return err
		}
		g.Keys = append(g.Keys, a)
		Take(env, specs[k].a, idx, a)
	}
	return nil
}

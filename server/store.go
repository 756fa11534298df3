package server

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// store is the name → array table, the memory accountant and a pool of
// large buffers freed by deletes.
//
// Accounting: every byte an array holds is reserved before it is allocated
// and released when the array is deleted; pooled buffers count too, so
// used + pooled never exceeds limit (a reservation evicts pooled buffers to
// make room before it fails).
//
// Pooling: a deleted array's buffer is reused by a later upload of about the
// same size, whose bytes then land in pages already faulted in instead of
// fresh ones (the biggest cost of receiving into new memory). A buffer is
// pooled only when nobody can still read it: entries count the holders that
// took the array with acquire and gave it back, and an array ever handed out
// with get (whose holder does not say when it is done) is never pooled, and
// is left to the garbage collector instead.
type store struct {
	groupIDChecksSkipped atomic.Uint64 // acquireGroupIDs that vouched for the ids (stats)
	keyScansSkipped      atomic.Uint64 // group-by key range scans answered from keyStats (stats)
	scratchRecycled      atomic.Uint64 // kernel scratch buffers put in the pool (stats)
	mu                   sync.Mutex
	arrays               map[string]*entry
	used                 int64 // bytes reserved: stored arrays plus in-flight allocations
	limit                int64
	nextName             uint64
	pool                 bufPool
	poison               bool // fill pooled buffers with 0xAB (tests): a reader that kept one breaks loudly
	grace                grace
	segs                 segPool             // freed leased segments, for the next shm upload
	viewed               map[uint64]*segment // leased segments with views not released, by id
	copiesOnWrite        atomic.Uint64       // segment-backed arrays copied out before a write (stats)
	queuedBytes          atomic.Int64        // payload bytes of requests waiting for a worker, reserved (stats)
	heldDeleted          int64               // bytes of deleted arrays still read (in used); guarded by mu
}

type entry struct {
	a       *pdarray.Array
	refs    int  // holders from acquire, not yet released
	shared  bool // handed out by get: never pooled
	deleted bool
	// groupIDs > 0: a is groupby's ids, every value in [-1, groupIDs), so
	// aggregations skip re-checking them. getForWrite (setitem) clears it.
	groupIDs int
	// keyStats: what groupby learned of a as a key (its range), kept so
	// the next groupby by it skips that scan; getForWrite clears it too.
	keyStats *ops.KeyStats
	writes   uint64 // times getForWrite handed a out: stats taken before are stale
	// seg, when not nil, is the shared-memory segment whose mapping is a's
	// buffer (shm.go): never pooled, freed through the grace period, and
	// copied out before any write (getForWrite).
	seg *segment
}

func newStore(limit int64) *store {
	return &store{arrays: map[string]*entry{}, limit: limit, pool: bufPool{max: limit / 4}}
}

// reserve accounts n bytes before the caller allocates them; what names the
// allocation in the error. The caller must release on failure, or hand the
// bytes over to an array with put.
func (s *store) reserve(n int64, what string) error {
	if n < 0 { // a size computed from untrusted numbers that overflowed: a bug
		return transfer.Errorf(transfer.Internal, "%s: negative size %d reserved (an overflow); nothing was allocated", what, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserveLocked(n, what)
}

// reserveLocked is reserve for a caller holding s.mu.
func (s *store) reserveLocked(n int64, what string) error {
	if free := s.limit - s.used - s.pooled(); n > free {
		s.pool.evict(n - free)
	}
	if free := s.limit - s.used - s.pooled(); n > free {
		s.segs.evict(n - free)
	}
	if n > s.limit-s.used-s.pooled() {
		free := s.limit - s.used
		sending := ""
		if s.heldDeleted > 0 {
			sending = fmt.Sprintf(" (%s of it by deleted arrays still being read: replies a client has not received yet, or requests still running)", transfer.FormatBytes(s.heldDeleted))
		}
		return transfer.Errorf(transfer.OutOfMemory,
			"%s needs %s (%d bytes) but the server's limit of %s leaves %s (%d bytes) free, with %s held by %d arrays%s; raise --max-memory or delete arrays",
			what, transfer.FormatBytes(n), n, transfer.FormatBytes(s.limit), transfer.FormatBytes(free), free,
			transfer.FormatBytes(s.used), len(s.arrays), sending)
	}
	s.used += n
	return nil
}

// addWithin returns total+n for sizes that may come from a file or a
// request, or OUT_OF_MEMORY once the sum passes the server's limit (so it
// never overflows: total and n are each at most the limit).
func (s *store) addWithin(total, n int64, what string) (int64, error) {
	if n < 0 || n > s.limit-total {
		return 0, s.overLimit(what)
	}
	return total + n, nil
}

// mulWithin returns a·b for sizes that may come from a file, or
// OUT_OF_MEMORY when the product passes the server's limit (no overflow).
func (s *store) mulWithin(a, b int64, what string) (int64, error) {
	if a < 0 || b < 0 || b != 0 && a > s.limit/b {
		return 0, s.overLimit(what)
	}
	return a * b, nil
}

// overLimit is addWithin's and mulWithin's error: what needs more than the
// whole limit.
func (s *store) overLimit(what string) error {
	return transfer.Errorf(transfer.OutOfMemory,
		"%s needs more than the server's limit of %s (%d bytes) in all; raise --max-memory or ask for less",
		what, transfer.FormatBytes(s.limit), s.limit)
}

func (s *store) release(n int64) {
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

// allocMayBeDirty returns an array of n elements whose bytes may hold a
// deleted array's data: only for callers that overwrite every byte (uploads).
// The bytes must already be reserved.
func (s *store) allocMayBeDirty(dt pdarray.DType, n int) (*pdarray.Array, error) {
	return s.allocMayBeDirtyUntil(dt, n, nil)
}

// allocMayBeDirtyUntil is allocMayBeDirty whose pre-faulting of a new
// buffer stops once stop says so (a cancelled request's).
func (s *store) allocMayBeDirtyUntil(dt pdarray.DType, n int, stop func() bool) (*pdarray.Array, error) {
	nbytes, err := dt.NBytes(uint64(n))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	buf := s.pool.get(nbytes)
	s.mu.Unlock()
	if buf == nil {
		return pdarray.AllocUninitUntil(dt, n, stop)
	}
	return pdarray.Wrap(dt, buf[:nbytes])
}

// put stores a (whose bytes are already reserved) under name, or under a
// fresh name when name is "". On NAME_IN_USE the reservation stays with the
// caller.
func (s *store) put(name string, a *pdarray.Array) (string, error) {
	return s.putSegment(name, a, nil)
}

// putSegment is put for an array whose buffer is the mapping of segment g
// (nil: an ordinary buffer). The store owns g once this succeeds; on error
// it stays the caller's.
func (s *store) putSegment(name string, a *pdarray.Array, g *segment) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" {
		for {
			s.nextName++
			name = fmt.Sprintf("arr_%d", s.nextName)
			if _, taken := s.arrays[name]; !taken {
				break
			}
		}
	} else if err := checkName(name); err != nil {
		return "", err
	} else if _, taken := s.arrays[name]; taken {
		return "", errNameInUse(name)
	}
	s.arrays[name] = &entry{a: a, seg: g}
	return name, nil
}

func errNameInUse(name string) error {
	return transfer.Errorf(transfer.NameInUse, "an array named '%s' already exists; delete it first or choose another name", name)
}

func (s *store) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.arrays[name]
	return ok
}

// nbytes returns the size of the array stored under name; false when none is.
func (s *store) nbytes(name string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok {
		return 0, false
	}
	return int64(e.a.NBytes()), true
}

func (s *store) unknown(name string) error {
	return transfer.Errorf(transfer.UnknownArray, "no array named '%s' is stored; list_arrays() shows the %d that are", name, len(s.arrays))
}

// get returns the array stored under name. Stored arrays are immutable, so
// the caller may read it without the lock, even after a concurrent delete;
// its buffer is then never pooled. Prefer acquire where the caller can say
// when it is done.
func (s *store) get(name string) (*pdarray.Array, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok {
		return nil, s.unknown(name)
	}
	e.shared = true
	return e.a, nil
}

// getForWrite is get for a caller that writes into the array (setitem, an
// operation's out=): what was learned of its values (group-id check, key
// range) is dropped. An array in a shared-memory segment is first copied
// into an ordinary buffer that replaces it (copy on write): clients may map
// the segment, and its bytes never change.
func (s *store) getForWrite(name string) (*pdarray.Array, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok {
		return nil, s.unknown(name)
	}
	for e.seg != nil {
		// Copied without the lock, so that other requests (inline ones
		// above all) do not wait for it: the segment stays mapped until
		// this request ends (grace), whatever happens to the entry.
		src, g := e.a, e.seg
		// The copy is counted while it is made (the segment's bytes stay
		// mapped until this request ends), as adopt counts its own.
		nb := int64(src.NBytes())
		if err := s.reserveLocked(nb, fmt.Sprintf("a copy on write of '%s' (it is in shared memory)", name)); err != nil {
			return nil, err
		}
		buf := s.pool.get(src.NBytes())
		s.mu.Unlock()
		if buf == nil {
			buf = pdarray.UninitBytes(src.NBytes()) // copied over whole
		}
		c, err := pdarray.Wrap(src.DType(), buf[:src.NBytes()])
		if err == nil {
			copy(c.Bytes(), src.Bytes())
		}
		s.mu.Lock()
		s.used -= nb // the entry's own reservation covers whichever buffer it keeps
		if err != nil {
			return nil, transfer.Errorf(transfer.Internal, "copy on write of '%s': %v", name, err)
		}
		if s.arrays[name] != e {
			return nil, s.unknown(name) // deleted (or replaced) meanwhile
		}
		if e.seg == g {
			s.retire(g)
			e.a, e.seg = c, nil
			s.copiesOnWrite.Add(1)
		} // else another writer copied it first: use theirs
	}
	e.shared = true
	e.groupIDs = 0
	e.keyStats = nil
	e.writes++
	return e.a, nil
}

// writesOf is how many times the array a stored under name was handed out
// for writing (^0 when name holds another array now, or none).
func (s *store) writesOf(name string, a *pdarray.Array) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.arrays[name]; ok && e.a == a {
		return e.writes
	}
	return ^uint64(0)
}

// keyStats returns the stats groupby stored for the array a under name, or
// nil, and the entry's write count to pass back to setKeyStats.
func (s *store) keyStats(name string, a *pdarray.Array) (*ops.KeyStats, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok || e.a != a {
		return nil, 0
	}
	if e.keyStats != nil {
		st := *e.keyStats
		s.keyScansSkipped.Add(1)
		return &st, e.writes
	}
	return nil, e.writes
}

// setKeyStats keeps st for the array a under name if nothing was handed
// out for writing since keyStats returned writes (a setitem racing the
// scan would make st stale).
func (s *store) setKeyStats(name string, a *pdarray.Array, st ops.KeyStats, writes uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.arrays[name]; ok && e.a == a && e.writes == writes {
		e.keyStats = &st
	}
}

// markGroupIDs records that the array stored under name holds group ids
// below ngroups (or -1), as groupby wrote them.
func (s *store) markGroupIDs(name string, ngroups int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.arrays[name]; ok {
		e.groupIDs = ngroups
	}
}

// acquireGroupIDs is acquire, also reporting whether the array is known to
// hold group ids below ngroups (markGroupIDs, not written since).
func (s *store) acquireGroupIDs(name string, ngroups int) (*pdarray.Array, func(), bool, error) {
	a, rel, err := s.acquire(name)
	if err != nil {
		return nil, nil, false, err
	}
	s.mu.Lock()
	e := s.arrays[name]
	valid := e != nil && e.a == a && e.groupIDs > 0 && e.groupIDs <= ngroups
	s.mu.Unlock()
	if valid {
		s.groupIDChecksSkipped.Add(1)
	}
	return a, rel, valid, nil
}

// acquire returns the array stored under name and a release func that the
// caller must call exactly once when it no longer reads the array.
func (s *store) acquire(name string) (*pdarray.Array, func(), error) {
	a, _, release, err := s.acquireWrites(name)
	return a, release, err
}

// acquireWrites is acquire, also returning how many times the array was
// handed out for writing: with the array's identity, what a checkpoint
// compares to tell an array unchanged since the last one.
func (s *store) acquireWrites(name string) (*pdarray.Array, uint64, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok {
		return nil, 0, nil, s.unknown(name)
	}
	e.refs++
	var once sync.Once
	return e.a, e.writes, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			e.refs--
			if e.deleted && e.refs == 0 {
				nb := int64(e.a.NBytes())
				s.used -= nb
				s.heldDeleted -= nb
				s.recycle(e)
			}
		})
	}, nil
}

// recycle pools a deleted entry's buffer when nobody can read it any more;
// a segment is freed once no request that might read it runs (retire),
// whoever holds it. s.mu must be held.
func (s *store) recycle(e *entry) {
	if e.seg != nil {
		s.retire(e.seg)
		e.seg = nil
		return
	}
	if e.shared || e.refs > 0 {
		return
	}
	if s.poolBuffer(e.a.Bytes()) {
		e.a = nil
	}
}

// poolBuffer puts b in the pool if it is large enough and the pool has room
// under the limit (poisoned first in debug mode: a reader that kept it
// breaks loudly), and reports whether it did. s.mu must be held.
func (s *store) poolBuffer(b []byte) bool {
	if len(b) < minPooled || s.used+s.pooled()+int64(cap(b)) > s.limit {
		return false
	}
	if s.poison {
		for i := range b {
			b[i] = 0xAB
		}
	}
	s.pool.put(b[:cap(b)])
	return true
}

// recycleScratch pools the buffer of a kernel's scratch array that the
// kernel has freed (ops.Env.Free: it is not touched afterwards), so the next
// request's scratch (group-by states, scatter buffers, sort keys) reuses
// faulted-in memory instead of fresh pages. Its reservation is already
// released.
func (s *store) recycleScratch(a *pdarray.Array) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.poolBuffer(a.Bytes()) {
		s.scratchRecycled.Add(1)
	}
}

// delete removes every name, or none: with missingOK false, one unknown name
// fails the whole request.
func (s *store) delete(names []string, missingOK bool) (deleted int, freed int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !missingOK {
		for _, n := range names {
			if _, ok := s.arrays[n]; !ok {
				return 0, 0, transfer.Errorf(transfer.UnknownArray, "no array named '%s' is stored; nothing was deleted (pass missing_ok=true to skip unknown names)", n)
			}
		}
	}
	nudge := false
	for _, n := range names {
		e, ok := s.arrays[n]
		if !ok {
			continue
		}
		delete(s.arrays, n)
		deleted++
		nb := int64(e.a.NBytes())
		freed += nb
		e.deleted = true
		if e.refs == 0 {
			s.used -= nb
			s.recycle(e)
		} else {
			// Still read (a reply libzmq sends from it in place, a request
			// running on it): its bytes stay resident, so they stay counted
			// until the last holder lets go (acquire's release). A client
			// that never reads its downloads once held them uncounted.
			s.heldDeleted += nb
		}
		nudge = nudge || (e.a != nil && e.seg == nil && nb >= gcNudgeBytes)
	}
	if nudge {
		// A large buffer that could not be pooled goes back to the Go heap:
		// collect now, so the next large allocation reuses its pages (already
		// faulted in) instead of faulting in fresh ones.
		go runtime.GC()
	}
	return deleted, freed, nil
}

// rename moves the array stored under old to the name new, keeping
// everything the entry holds (its buffer, segment, holders and what group-by
// learned of it), and returns its description under new. Renaming an array
// to its own name changes nothing; a new name already taken fails with
// NAME_IN_USE and leaves both arrays as they were.
func (s *store) rename(old, new string) (map[string]any, error) {
	if new == "" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "new_name is empty; give the name to store '%s' under", old)
	}
	if err := checkName(new); err != nil {
		return nil, err // upload's rule: every stored name is printable ASCII
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[old]
	if !ok {
		return nil, s.unknown(old)
	}
	if new != old {
		if _, taken := s.arrays[new]; taken {
			return nil, transfer.Errorf(transfer.NameInUse, "cannot rename '%s' to '%s': an array named '%s' already exists; delete it first or choose another name; nothing was renamed", old, new, new)
		}
		delete(s.arrays, old)
		s.arrays[new] = e
	}
	return arrayResult(new, e.a), nil
}

// gcNudgeBytes is how large an unpooled freed buffer must be to trigger a
// collection.
const gcNudgeBytes = 64 << 20

type arrayInfo struct {
	name string
	a    *pdarray.Array
}

// list describes the stored arrays; the arrays are for their metadata only.
func (s *store) list() []arrayInfo {
	s.mu.Lock()
	out := make([]arrayInfo, 0, len(s.arrays))
	for n, e := range s.arrays {
		out = append(out, arrayInfo{n, e.a})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (s *store) poolHits() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pool.hits + s.segs.hits
}

func (s *store) usage() (used, limit, pooled int64, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.limit, s.pooled(), len(s.arrays)
}

// minPooled is the smallest buffer worth pooling: below it the Go allocator
// reuses memory well by itself.
const minPooled = 1 << 20

// bufPool holds free buffers, newest last. It is guarded by store.mu.
type bufPool struct {
	free  [][]byte
	bytes int64
	max   int64
	hits  uint64
}

// get returns a pooled buffer of at least n bytes and at most n + n/8 + 1 MiB
// (so little is wasted), or nil.
func (p *bufPool) get(n int) []byte {
	if n < minPooled {
		return nil
	}
	best := -1
	for i, b := range p.free {
		if c := cap(b); c >= n && c <= n+n/8+minPooled && (best < 0 || c < cap(p.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := p.free[best]
	p.free = append(p.free[:best], p.free[best+1:]...)
	p.bytes -= int64(cap(b))
	p.hits++
	return b
}

func (p *bufPool) put(b []byte) {
	p.free = append(p.free, b)
	p.bytes += int64(cap(b))
	if p.bytes > p.max {
		p.evict(p.bytes - p.max)
	}
}

// evict drops the oldest buffers until at least n bytes are gone (or none
// are left); the garbage collector frees them.
func (p *bufPool) evict(n int64) {
	for n > 0 && len(p.free) > 0 {
		c := int64(cap(p.free[0]))
		p.free[0] = nil
		p.free = p.free[1:]
		p.bytes -= c
		n -= c
	}
}

// segmentOf returns the segment backing the array stored under name when it
// is still arr, else nil. The caller holds arr (acquire), so the segment
// stays mapped and open until it releases it and its request ends.
func (s *store) segmentOf(name string, arr *pdarray.Array) *segment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.arrays[name]; ok && e.a == arr {
		return e.seg
	}
	return nil
}

// adopt moves the array stored under name (still arr, held by the caller)
// into a segment that fill makes with its bytes, and returns the segment.
// The segment's bytes are reserved while both buffers exist; the old buffer
// is then the garbage collector's (readers of it may still run).
func (s *store) adopt(name string, arr *pdarray.Array, fill func() (*segment, error)) (*segment, error) {
	nb := int64(arr.NBytes())
	if err := s.reserve(nb, fmt.Sprintf("a shared-memory copy of '%s'", name)); err != nil {
		return nil, err
	}
	defer s.release(nb) // the reservation of one of the two buffers
	g, err := fill()
	if err != nil {
		return nil, err
	}
	a, err := g.array(arr.DType(), arr.NBytes())
	if err != nil {
		g.free()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.arrays[name]
	if !ok || e.a != arr || e.seg != nil {
		// Deleted, written or adopted meanwhile: this segment serves this
		// view only, and is freed once the request ends.
		s.retire(g)
		return g, nil
	}
	// arr is no entry's any more, so never pooled: its readers may still
	// run, and the garbage collector frees it after them.
	e.a, e.seg = a, g
	return g, nil
}

// retire frees segment g once every request running now has ended: any of
// them may still read its mapping (store.get hands arrays out with no
// release). A leased segment that no client maps goes back to the segment
// pool instead. s.mu need not be held.
func (s *store) retire(g *segment) {
	s.grace.defer_(func() { s.recycleSegment(g) })
}

// recycleSegment pools g when it can be lent again (leased, never
// exported, room under the limit), else frees it. Nobody reads g any more.
func (s *store) recycleSegment(g *segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !g.leased || g.views > 0 || s.used+s.pooled()+int64(len(g.mem)) > s.limit {
		delete(s.viewed, g.id)
		g.free()
		return
	}
	s.segs.put(g, s.pool.max)
}

// pooled is the bytes both pools hold. s.mu must be held.
func (s *store) pooled() int64 { return s.pool.bytes + s.segs.bytes }

// lendSegment returns a segment of at least n bytes to lend for an upload:
// a pooled one (pages already in memory) or a new one. The n bytes must be
// reserved.
func (s *store) lendSegment(n int, readOnly bool) (*segment, error) {
	s.mu.Lock()
	g := s.segs.get(n)
	s.mu.Unlock()
	if g != nil {
		return g, nil
	}
	return newLeaseSegment(n, readOnly)
}

// lendFilled is lendSegment holding a copy of body: a pooled segment's
// pages are in memory already, so this costs one copy (through a mapping:
// mapped) and no page allocation. The bytes must be reserved.
func (s *store) lendFilled(body []byte) (g *segment, mapped bool, err error) {
	if g, err = s.lendSegment(len(body), s.poison); err != nil {
		return nil, false, err
	}
	if mapped, err = fillShared(g.fd, body); err != nil {
		g.free()
		return nil, false, err
	}
	return g, mapped, nil
}

// addView records that a client maps the leased segment g (a view): until
// it releases the view (releaseViews), g never goes back to the pool, whose
// next borrower would write into that view.
func (s *store) addView(g *segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.viewed == nil {
		s.viewed = map[uint64]*segment{}
	}
	g.views++
	s.viewed[g.id] = g
}

// releaseViews drops one view of each named segment and reports how many
// it knew.
func (s *store) releaseViews(ids []uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range ids {
		if g, ok := s.viewed[id]; ok {
			n++
			if g.views--; g.views == 0 {
				delete(s.viewed, id)
			}
		}
	}
	return n
}

// segPool holds leased segments whose arrays are gone, newest last; it is
// guarded by store.mu.
type segPool struct {
	free  []*segment
	bytes int64
	hits  uint64
}

// get returns a pooled segment of at least n bytes and at most n + n/8 +
// 1 MiB, or nil.
func (p *segPool) get(n int) *segment {
	best := -1
	for i, g := range p.free {
		if c := len(g.mem); c >= n && c <= n+n/8+minPooled && (best < 0 || c < len(p.free[best].mem)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	g := p.free[best]
	p.free = append(p.free[:best], p.free[best+1:]...)
	p.bytes -= int64(len(g.mem))
	p.hits++
	return g
}

func (p *segPool) put(g *segment, max int64) {
	p.free = append(p.free, g)
	p.bytes += int64(len(g.mem))
	if p.bytes > max {
		p.evict(p.bytes - max)
	}
}

// evict frees the oldest segments until at least n bytes are gone.
func (p *segPool) evict(n int64) {
	for n > 0 && len(p.free) > 0 {
		g := p.free[0]
		p.free[0] = nil
		p.free = p.free[1:]
		p.bytes -= int64(len(g.mem))
		n -= int64(len(g.mem))
		g.free()
	}
}

// grace defers frees until the requests that might use the freed memory
// have ended, in the manner of RCU: each request enters the current epoch
// and exits it when done; a free waits for every request of its epoch or
// an earlier one. A stored array reaches readers only through requests
// (store.get, acquire), so one that left the table while no request older
// than the free runs has no reader left.
type grace struct {
	mu      sync.Mutex
	epoch   uint64
	running map[uint64]int // epoch → requests in it still running
	waiting []deferred     // in epoch order
	// report, when set (the server's logPanic), gets a panic of the frees
	// run on a goroutine of their own.
	report func(*par.Panic)
}

type deferred struct {
	epoch uint64
	free  func()
}

// enter marks the start of a request and returns what exit needs.
func (g *grace) enter() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == nil {
		g.running = map[uint64]int{}
	}
	g.running[g.epoch]++
	return g.epoch
}

// exit marks the end of a request that entered epoch e, and runs the frees
// no running request can still need.
func (g *grace) exit(e uint64) {
	g.mu.Lock()
	if g.running[e]--; g.running[e] == 0 {
		delete(g.running, e)
	}
	ready := g.readyLocked()
	g.mu.Unlock()
	for _, f := range ready {
		f()
	}
}

// defer_ runs free once every request running now has exited: from the
// exit of the last of them, or, when none runs, on a goroutine of its own
// (the caller may hold store.mu, which frees take).
func (g *grace) defer_(free func()) {
	g.mu.Lock()
	g.waiting = append(g.waiting, deferred{g.epoch, free})
	g.epoch++
	ready := g.readyLocked()
	g.mu.Unlock()
	if len(ready) > 0 {
		go func() {
			if g.report != nil {
				defer par.Recover(g.report)
			}
			for _, f := range ready {
				f()
			}
		}()
	}
}

// pending reports how many frees wait (tests).
func (g *grace) pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// readyLocked takes the frees whose epoch is older than every running
// request's. g.mu must be held.
func (g *grace) readyLocked() []func() {
	oldest := g.epoch
	for e := range g.running {
		oldest = min(oldest, e)
	}
	n := 0
	for n < len(g.waiting) && g.waiting[n].epoch < oldest {
		n++
	}
	if n == 0 {
		return nil
	}
	out := make([]func(), n)
	for i := range out {
		out[i] = g.waiting[i].free
	}
	g.waiting = append(g.waiting[:0], g.waiting[n:]...)
	return out
}

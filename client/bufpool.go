package client

import (
	"math/bits"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/arktos-dev/arktos/pdarray"
)

// Reused memory for downloaded arrays (the Go side of Python's
// arktos._bufpool).
//
// A download into new memory spends much of its time in the kernel: every
// page the Go heap takes from the system is faulted in and zeroed on its
// first write, and the runtime returns freed pages to the system soon after
// the garbage collector frees them. On the 2-core VM of bench/transfer a 256
// MiB Download over TCP ran at 0.26-0.82x the raw socket, against 0.9-1.08x
// for DownloadInto a reused buffer; a 1023 KiB Download over the request
// lane took 0.8-0.9 ms p50 with 51-68 minor faults, against 0.36 ms and
// none for DownloadInto (BenchmarkMidDownload). So downloads of poolMin
// bytes and more take their buffer from this pool: buffers that go back to
// it when the garbage collector finds nothing refers to them any more, and
// are handed out again, already faulted in, to the next download of the
// same rounded size.
//
// Ownership: a buffer handed out belongs to the caller like any new memory.
// It is an ordinary Go heap object (pdarray.UninitBytes) with a finalizer
// on its first byte; any slice into it (the []T Download returned, a
// sub-slice, the pdarray.Array) keeps the whole object reachable, so the
// finalizer runs only once nothing can read or write it. The finalizer
// resurrects it into the idle list (the pool's reference keeps it alive),
// where it is owned by the pool until get hands it out again with a new
// finalizer. Idle buffers past the pool's limit are dropped, oldest first,
// and the garbage collector frees them. Idle buffers are live heap to the
// runtime: they count toward GOGC's heap goal (and GOMEMLIMIT's) and are
// never returned to the system while idle; SetDownloadPool(0) lets them go.
// The pool owns the finalizer of a buffer it hands out: a caller's own
// runtime.SetFinalizer on the first element of a downloaded slice panics
// ("finalizer already set").
const poolMin = 256 << 10 // below this new memory costs little to fault in

// poolAlign rounds sizes of 4 MiB and more up so that nearby sizes share
// buffers (a huge page); smaller ones round up to an eighth of their power
// of two (poolSize).
const poolAlign = 2 << 20

// poolSize is the rounded size of the buffer for n bytes (n >= poolMin): a
// multiple of poolAlign from 4 MiB, else of an eighth of the power of two
// at or below n (under 12.5% more than n; 1023 KiB and 1 MiB share one).
func poolSize(n int) int {
	step := poolAlign
	if n < 4<<20 {
		step = 1 << (bits.Len(uint(n)) - 4)
	}
	return (n + step - 1) &^ (step - 1)
}

// defaultPoolBytes is the most idle memory kept unless
// ARKTOS_DOWNLOAD_POOL_BYTES or SetDownloadPool says otherwise.
const defaultPoolBytes = 1 << 30

type bufPool struct {
	max       atomic.Int64 // most idle bytes kept; 0: off
	mu        sync.Mutex
	idle      [][]byte // oldest first; each len == cap == its rounded size
	idleBytes int64
	out       map[int]int   // buffers handed out and not back yet, by rounded size
	vain      map[int]bool  // a collection for this size found none; cleared by put
	inCollect atomic.Bool   // one collection at a time
	returned  chan struct{} // put's signal to collect (one pending at most)
	hits      atomic.Uint64 // buffers handed out again
	misses    atomic.Uint64 // new buffers made
	collects  atomic.Uint64 // collections a miss asked for (collectFor)
	scan      []metrics.Sample
}

var downloadPool = newBufPool(envPoolBytes())

func newBufPool(max int64) *bufPool {
	p := &bufPool{out: map[int]int{}, vain: map[int]bool{}, returned: make(chan struct{}, 1), scan: []metrics.Sample{
		{Name: "/gc/scan/heap:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	p.max.Store(max)
	return p
}

func envPoolBytes() int64 {
	if s := os.Getenv("ARKTOS_DOWNLOAD_POOL_BYTES"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return defaultPoolBytes
}

// SetDownloadPool keeps at most maxBytes of freed download buffers (256 KiB
// and more each) for reuse by later downloads of the same size, already
// faulted in (default 1 GiB, or $ARKTOS_DOWNLOAD_POOL_BYTES); 0 turns the
// pool off and drops what it holds. Negative values count as 0.
func SetDownloadPool(maxBytes int64) {
	downloadPool.max.Store(max(maxBytes, 0))
	downloadPool.mu.Lock()
	downloadPool.trimLocked()
	downloadPool.mu.Unlock()
}

// DownloadPoolStats reports how many download buffers were handed out again
// (hits), how many were made new (misses), and the bytes idle in the pool
// (tests check that downloads take the pool).
func DownloadPoolStats() (hits, misses uint64, idleBytes int64) {
	downloadPool.mu.Lock()
	defer downloadPool.mu.Unlock()
	return downloadPool.hits.Load(), downloadPool.misses.Load(), downloadPool.idleBytes
}

// get returns n bytes, 8-byte aligned, whose contents are undefined: a
// pooled buffer of n's rounded size when one is idle, else new memory.
func (p *bufPool) get(n int) []byte {
	if n < poolMin || p.max.Load() <= 0 {
		return pdarray.UninitBytes(n)
	}
	c := poolSize(n)
	p.mu.Lock()
	b := p.takeLocked(c)
	if b == nil && p.collectWorth(c) && p.inCollect.CompareAndSwap(false, true) {
		p.mu.Unlock()
		p.collect(c)
		p.mu.Lock()
		p.inCollect.Store(false)
		if b = p.takeLocked(c); b == nil {
			p.vain[c] = true // none was garbage: do not collect for c again until one comes back
		}
	}
	p.out[c]++
	p.mu.Unlock()
	if b != nil {
		p.hits.Add(1)
	} else {
		p.misses.Add(1)
		b = pdarray.UninitBytes(c)
	}
	// &b[0] is the start of the heap object (UninitBytes allocates c bytes,
	// 256 KiB and more: a large object of its own, which starts on a page),
	// as SetFinalizer needs. The finalizer must not refer to b, or b would
	// never be unreachable.
	runtime.SetFinalizer(&b[0], func(first *byte) {
		p.put(unsafe.Slice(first, c))
	})
	return b[:n:n]
}

// takeLocked removes an idle buffer of rounded size c from the pool, the
// newest (the likeliest still in the CPU's caches), or returns nil (p.mu
// held). The idle list holds at most max/poolMin buffers (4,096 by default).
func (p *bufPool) takeLocked(c int) []byte {
	for i := len(p.idle) - 1; i >= 0; i-- {
		if x := p.idle[i]; len(x) == c {
			p.idle = slices.Delete(p.idle, i, i+1) // clears the freed tail slot
			p.idleBytes -= int64(c)
			return x
		}
	}
	return nil
}

// collectMin is the least memory out in buffers of one size for which a
// miss may ask for a collection.
const collectMin = 16 << 20

// collectWorth says whether a miss for a buffer of rounded size c should
// run the garbage collector first (p.mu held). Buffers come back only once
// a collection has found them unreachable, and a program that allocates
// little between downloads (the benchmark's loop, a notebook downloading
// one large array after another) may go long without one: every download
// would then fault in new memory while the previous buffers wait to be
// found (idle buffers count as live heap, which puts the runtime's own
// collections further apart). A collection is worth it when at least
// collectMin bytes of c's size are out (they may be garbage by now: one
// buffer of 16 MiB and more, 16 of 1 MiB, so at most one collection per
// 16 MiB downloaded) and the memory it must scan (the heap's pointers, the
// stacks, the globals) is under a sixteenth of that: marking costs less
// than faulting in and zeroing it. After a collection for c found none (a
// program keeping every download), none is run for c until a buffer of
// c's size comes back.
func (p *bufPool) collectWorth(c int) bool {
	out := uint64(p.out[c]) * uint64(c)
	if out < collectMin || p.vain[c] {
		return false
	}
	return p.scanBytes() < out/16
}

// scanBytes is the memory a collection marks: the heap's pointerful part,
// the stacks and the globals (p.mu held: p.scan is shared).
func (p *bufPool) scanBytes() uint64 {
	metrics.Read(p.scan)
	var scan uint64
	for _, s := range p.scan {
		if s.Value.Kind() == metrics.KindUint64 {
			scan += s.Value.Uint64()
		}
	}
	return scan
}

// collect runs a garbage collection, then gives the finalizers it queued
// about a millisecond to hand a buffer of size c back (put signals each
// return; a sleep would last a millisecond or more each time).
func (p *bufPool) collect(c int) {
	p.collects.Add(1)
	select {
	case <-p.returned: // an earlier return's signal
	default:
	}
	runtime.GC()
	deadline := time.NewTimer(time.Millisecond)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		found := slices.ContainsFunc(p.idle, func(x []byte) bool { return len(x) == c })
		p.mu.Unlock()
		if found {
			return
		}
		select {
		case <-p.returned:
		case <-deadline.C:
			return
		}
	}
}

// put takes back a buffer the garbage collector found unreachable.
func (p *bufPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out[len(b)]--; p.out[len(b)] <= 0 {
		delete(p.out, len(b))
	}
	delete(p.vain, len(b))
	p.idle = append(p.idle, b)
	p.idleBytes += int64(len(b))
	p.trimLocked()
	select {
	case p.returned <- struct{}{}:
	default: // one is pending already
	}
}

// trimLocked drops the oldest idle buffers past the limit (p.mu held).
func (p *bufPool) trimLocked() {
	limit := p.max.Load()
	i := 0
	for p.idleBytes > limit && i < len(p.idle) {
		p.idleBytes -= int64(len(p.idle[i]))
		i++
	}
	p.idle = slices.Delete(p.idle, 0, i) // the garbage collector frees them
}

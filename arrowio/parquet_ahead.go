package arrowio

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/arktos-dev/arktos/internal/par"
)

// Read-ahead of compressed column chunks. A worker of the direct reader
// reads a compressed chunk whole (one pread) and then decompresses it; with
// the read and the decompression on one goroutine, a worker's core copies
// the file's pages out of the page cache for a quarter of the time (bench
// io's zstd file, one worker: pread 0.71-0.91 of 2.6-2.7 s a read). One
// goroutine per Read reads the chunks ahead, in the order the workers take
// the units, so that the copy runs beside the decompression, on a core the
// workers leave free: with as many workers as GOMAXPROCS there is none, and
// reading ahead made no difference or cost 2-4% (two workers on two cores:
// 1.26-1.32 s a read against 1.15-1.31), so it reads ahead only with fewer.
//
// Each slot is claimed once, by the reader or by the worker that takes its
// unit (a compare-and-swap on state): a worker whose unit the reader has
// not reached yet reads the chunk itself, as it did before, so the one
// reader never holds the workers up (a cold page cache, many workers), and
// a worker waits only for a chunk the reader is already reading, with its
// buffer in hand: no deadlock. The reader holds at most workers+1 buffers,
// so it runs at most that many chunks ahead, and stops at the first failed
// unit (Read's failed flag).
//
// Ownership: a buffer is the reader's while it fills it, the slot's once
// ready is closed, then the worker's that took the unit, who hands it back
// to free when the unit is done. Buffers are kept from one Read to the next
// (aheadFree, at most maxKeptAhead of them and maxKeptAheadBytes in all) so
// their pages are not faulted in again; the server reserves them with the
// workers' scratch (AheadChunk).

const (
	slotPending int32 = iota // nobody has claimed it
	slotReader               // the reader reads it: wait for ready
	slotWorker               // its worker reads it
)

// aheadSlot is one unit's chunk read ahead.
type aheadSlot struct {
	state atomic.Int32
	ready chan struct{} // closed once the reader has read it (buf nil: failed)
	start int64         // the chunk's file offset
	buf   []byte        // the chunk's bytes
}

type readAhead struct {
	slots []aheadSlot
	free  chan []byte
	stop  chan struct{}
	done  sync.WaitGroup
	// panicked is the reader goroutine's panic (a bug): it fails the read
	// like a worker's, and Read raises it once the reader has ended.
	panicked *par.Panic
}

var (
	aheadMu   sync.Mutex
	aheadFree [][]byte
)

// maxKeptAhead is how many read-ahead buffers are kept between reads (a
// read holds workers+1 of them, and workers are fewer than the cores), and
// maxKeptAheadBytes how many bytes: they are outside --max-memory, like the
// workers' kept scratch.
var maxKeptAhead = 2*runtime.GOMAXPROCS(0) + 2

const maxKeptAheadBytes = 128 << 20

var aheadKeptBytes int // guarded by aheadMu

// testAheadPanic, when set (tests), runs as the reader starts reading
// unit i's chunk: a stand-in for a bug there.
var testAheadPanic func(i int)

// Test hooks: disableAhead turns read-ahead off (benchmarks' A/B,
// ARKTOS_BENCH_NOAHEAD); aheadNoSteal makes workers always wait for the
// reader, so that tests can count chunks read ahead exactly.
var disableAhead, aheadNoSteal bool

// chunkRange returns the file range of unit (cc)'s column chunk as the
// direct reader reads it (from the dictionary page, if any, to the end of
// the chunk); ok is false when the metadata's offsets or size cannot be
// right for a file of fileSize bytes (0: unknown).
func chunkRange(cc interface {
	DataPageOffset() int64
	HasDictionaryPage() bool
	DictionaryPageOffset() int64
	TotalCompressedSize() int64
}, fileSize int64) (start, n int64, ok bool) {
	start = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	n = cc.TotalCompressedSize()
	if start < 0 || n <= 0 || fileSize > 0 && start+n > fileSize || n > math.MaxInt32 {
		return 0, 0, false
	}
	return start, n, true
}

// aheadRange returns the byte range of unit (f, rg, col)'s chunk when the
// direct reader would read it whole (compressed and eligible); ok is false
// otherwise.
func (p *ParquetPlan) aheadRange(f, rg, col int) (start, n int64, ok bool) {
	pc := &p.Columns[col]
	md := p.files[f].MetaData()
	idx := md.Schema.ColumnIndexByName(pc.Name)
	cc, err := md.RowGroup(rg).ColumnChunk(idx)
	if err != nil || cc.Compression() == compress.Codecs.Uncompressed || !p.fastEligible(pc, cc, md, md.Schema.Column(idx).MaxDefinitionLevel()) {
		return 0, 0, false
	}
	return chunkRange(cc, md.GetSourceFileSize())
}

// aheadWanted says whether a read with workers workers reads ahead: only
// with a core the workers leave free.
func aheadWanted(workers int) bool {
	return !disableAhead && workers < par.Procs() // not counting a P lent by another read
}

// AheadChunk bounds one read-ahead buffer of a Read with workers workers
// (the largest chunk it would read ahead; 0 when it reads nothing ahead);
// such a read holds at most workers+1 of them, which the server reserves
// beside WorkerScratch.
func (p *ParquetPlan) AheadChunk(workers int) int64 {
	if !aheadWanted(workers) {
		return 0
	}
	var most int64
	for f, r := range p.files {
		for rg := 0; rg < r.MetaData().NumRowGroups(); rg++ {
			for col := range p.Columns {
				if _, n, ok := p.aheadRange(f, rg, col); ok {
					most = max(most, n)
				}
			}
		}
	}
	return most
}

// startReadAhead starts reading the compressed chunks of units (in order)
// ahead of workers workers; nil when no unit has one, or no core is left
// for it. It stops at the first unit after failed is set.
func (p *ParquetPlan) startReadAhead(units []readUnitRef, workers int, failed *atomic.Bool) *readAhead {
	if !aheadWanted(workers) {
		return nil
	}
	type plan struct {
		start, n int64
		ok       bool
	}
	plans := make([]plan, len(units))
	some := false
	for i, u := range units {
		s, n, ok := p.aheadRange(u.f, u.rg, u.col)
		plans[i] = plan{s, n, ok}
		some = some || ok
	}
	if !some {
		return nil
	}
	ra := &readAhead{slots: make([]aheadSlot, len(units)), free: make(chan []byte, workers+1), stop: make(chan struct{})}
	aheadMu.Lock()
	for range workers + 1 {
		var b []byte
		if k := len(aheadFree); k > 0 {
			b, aheadFree = aheadFree[k-1], aheadFree[:k-1]
			aheadKeptBytes -= cap(b)
		}
		ra.free <- b
	}
	aheadMu.Unlock()
	for i := range ra.slots {
		if plans[i].ok {
			ra.slots[i].ready = make(chan struct{})
		} else {
			ra.slots[i].state.Store(slotWorker)
		}
	}
	ra.done.Add(1)
	go func() {
		defer ra.done.Done()
		// On leaving early, the slots nobody claimed yet are closed empty:
		// a worker that waits for the reader (aheadNoSteal) reads its own.
		giveUp := func(from int) {
			for j := from; j < len(ra.slots); j++ {
				if ra.slots[j].state.CompareAndSwap(slotPending, slotReader) {
					close(ra.slots[j].ready)
				}
			}
		}
		// On a panic, the slot being read is closed empty (its worker reads
		// it itself, or sees the read failed) and the rest given up.
		at, reading := 0, false
		defer par.Recover(func(p *par.Panic) {
			ra.panicked = p
			failed.Store(true)
			if reading {
				close(ra.slots[at].ready)
				at++
			}
			giveUp(at)
		})
		for i := range ra.slots {
			at = i
			s := &ra.slots[i]
			if failed.Load() {
				giveUp(i)
				return
			}
			if s.state.Load() != slotPending {
				continue // not compressed, or its worker reads it
			}
			var b []byte
			select {
			case b = <-ra.free:
			case <-ra.stop:
				giveUp(i)
				return
			}
			if failed.Load() { // set while waiting for the buffer
				ra.free <- b
				giveUp(i)
				return
			}
			if !s.state.CompareAndSwap(slotPending, slotReader) {
				ra.free <- b
				continue
			}
			reading = true
			if testAheadPanic != nil {
				testAheadPanic(i)
			}
			b = grow(b, int(plans[i].n), 0)
			if err := readFull(p.srcs[units[i].f], b, plans[i].start); err != nil {
				ra.free <- b // the worker reads it again, and reports the error
			} else {
				s.start, s.buf = plans[i].start, b
			}
			close(s.ready)
			reading = false
		}
	}()
	return ra
}

// take claims unit i's chunk for sc: sc.ahead is the chunk read ahead, or
// nil when the worker is to read it itself.
func (ra *readAhead) take(i int, sc *fastScratch) {
	s := &ra.slots[i]
	if !aheadNoSteal && s.state.CompareAndSwap(slotPending, slotWorker) || s.state.Load() == slotWorker {
		return
	}
	<-s.ready
	sc.ahead, sc.aheadStart = s.buf, s.start
	s.buf = nil
}

// give hands sc's lent chunk back for the next one.
func (ra *readAhead) give(sc *fastScratch) {
	if sc.ahead != nil {
		ra.free <- sc.ahead // never blocks: free has room for every buffer
		sc.ahead = nil
	}
}

// end stops the reader, waits for it, and keeps its buffers for the next
// Read. Every worker has returned (and given back its chunk); chunks read
// ahead for units nobody took (after a failure) are kept too.
func (ra *readAhead) end() {
	close(ra.stop)
	ra.done.Wait()
	keep := func(b []byte) {
		if b != nil && cap(b) <= maxKeptAheadBytes-aheadKeptBytes && len(aheadFree) < maxKeptAhead {
			aheadFree = append(aheadFree, b)
			aheadKeptBytes += cap(b)
		}
	}
	aheadMu.Lock()
	defer aheadMu.Unlock()
	for len(ra.free) > 0 {
		keep(<-ra.free)
	}
	for i := range ra.slots {
		keep(ra.slots[i].buf)
		ra.slots[i].buf = nil
	}
}

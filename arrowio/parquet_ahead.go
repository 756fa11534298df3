package arrowio

import (
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Read-ahead of compressed column chunks. A worker of the direct reader
// reads a compressed chunk whole (one pread) and then decompresses it; with
// the read and the decompression on one goroutine, a worker's core copies
// the file's pages out of the page cache for a quarter of the time (bench
// io's zstd file, one worker: pread 0.71-0.91 of 2.6-2.7 s a read). One
// goroutine per Read reads the chunks ahead, in the order the workers take
// the units, so that the copy runs beside the decompression. It holds at
// most workers+1 chunk buffers: a worker waiting for its chunk holds none,
// so the reader always has a buffer to fill next (no deadlock), and the
// workers cannot fall further behind than one chunk each.
//
// Ownership: a buffer is the reader's while it fills it, the slot's once
// ready is closed, then the worker's that took the unit, who hands it back
// to free when the unit is done. Buffers are kept from one Read to the next
// (aheadFree) so their pages are not faulted in again.

// aheadSlot is one unit's chunk read ahead.
type aheadSlot struct {
	ready chan struct{} // closed once buf is set, or left nil (read it yourself)
	start int64         // the chunk's file offset
	buf   []byte        // the chunk's bytes; nil when not read ahead
}

type readAhead struct {
	slots []aheadSlot
	free  chan []byte
	stop  chan struct{}
	done  sync.WaitGroup
}

var (
	aheadMu   sync.Mutex
	aheadFree [][]byte
)

// disableAhead turns read-ahead off (benchmarks' A/B, ARKTOS_BENCH_NOAHEAD).
var disableAhead bool

// aheadRange returns the byte range of unit (f, rg, col)'s chunk when the
// direct reader would read it whole (compressed and eligible), as
// readUnitFast computes it; ok is false otherwise.
func (p *ParquetPlan) aheadRange(f, rg, col int) (start, n int64, ok bool) {
	pc := &p.Columns[col]
	md := p.files[f].MetaData()
	idx := md.Schema.ColumnIndexByName(pc.Name)
	cc, err := md.RowGroup(rg).ColumnChunk(idx)
	if err != nil || cc.Compression() == compress.Codecs.Uncompressed || !p.fastEligible(pc, cc, md, md.Schema.Column(idx).MaxDefinitionLevel()) {
		return 0, 0, false
	}
	start = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	n = cc.TotalCompressedSize()
	if size := md.GetSourceFileSize(); start < 0 || n <= 0 || size > 0 && start+n > size || n > math.MaxInt32 {
		return 0, 0, false
	}
	return start, n, true
}

// startReadAhead starts reading the compressed chunks of units (in order)
// ahead of workers workers; nil when no unit has one.
func (p *ParquetPlan) startReadAhead(units []readUnitRef, workers int) *readAhead {
	type plan struct {
		start, n int64
		ok       bool
	}
	if disableAhead {
		return nil
	}
	plans := make([]plan, len(units))
	any := false
	for i, u := range units {
		s, n, ok := p.aheadRange(u.f, u.rg, u.col)
		plans[i] = plan{s, n, ok}
		any = any || ok
	}
	if !any {
		return nil
	}
	ra := &readAhead{slots: make([]aheadSlot, len(units)), free: make(chan []byte, workers+1), stop: make(chan struct{})}
	aheadMu.Lock()
	for range workers + 1 {
		var b []byte
		if k := len(aheadFree); k > 0 {
			b, aheadFree = aheadFree[k-1], aheadFree[:k-1]
		}
		ra.free <- b
	}
	aheadMu.Unlock()
	for i := range ra.slots {
		ra.slots[i].ready = make(chan struct{})
	}
	ra.done.Add(1)
	go func() {
		defer ra.done.Done()
		for i := range ra.slots {
			s := &ra.slots[i]
			if !plans[i].ok {
				close(s.ready)
				continue
			}
			var b []byte
			select {
			case b = <-ra.free:
			case <-ra.stop:
				for j := i; j < len(ra.slots); j++ {
					close(ra.slots[j].ready)
				}
				return
			}
			f := units[i].f
			b = grow(b, int(plans[i].n), 0)
			if err := readFull(p.srcs[f], b, plans[i].start); err != nil {
				ra.free <- b // the worker reads it itself and reports the error
			} else {
				s.start, s.buf = plans[i].start, b
			}
			close(s.ready)
		}
	}()
	return ra
}

// take waits for unit i's chunk and lends it to sc (nil: not read ahead).
func (ra *readAhead) take(i int, sc *fastScratch) {
	s := &ra.slots[i]
	<-s.ready
	sc.ahead, sc.aheadStart = s.buf, s.start
	s.buf = nil
}

// give hands sc's lent chunk back for the next one.
func (ra *readAhead) give(sc *fastScratch) {
	if sc.ahead != nil {
		ra.free <- sc.ahead // never blocks: free holds every buffer
		sc.ahead = nil
	}
}

// end stops the reader, waits for it, and keeps its buffers for the next
// Read. Every worker has returned (and given back its chunk).
func (ra *readAhead) end() {
	close(ra.stop)
	ra.done.Wait()
	aheadMu.Lock()
	defer aheadMu.Unlock()
	for len(ra.free) > 0 {
		if b := <-ra.free; b != nil && cap(b) <= maxKeptScratchBuf && len(aheadFree) < maxKeptScratch {
			aheadFree = append(aheadFree, b)
		}
	}
}

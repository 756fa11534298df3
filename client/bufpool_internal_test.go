package client

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestBufPoolLimit: buffers under poolMin never touch the pool; sizes round
// up (poolSize) and a buffer goes only to a request of its rounded size, the
// newest idle one first; idle buffers past the limit are dropped oldest
// first.
func TestBufPoolLimit(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{poolMin, poolMin}, {poolMin + 1, 288 << 10}, {1023 << 10, 1 << 20}, {1 << 20, 1 << 20},
		{1<<20 + 1, 1<<20 + 128<<10}, {4<<20 - 1, 4 << 20}, {4 << 20, 4 << 20}, {4<<20 + 1, 6 << 20},
		{(1 << 30) - 5, 1 << 30},
	} {
		if got := poolSize(c.n); got != c.want || got < c.n || (c.n < 4<<20 && got-c.n >= c.n/8) {
			t.Errorf("poolSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	const mib = 1 << 20
	p := newBufPool(3 * mib)
	if b := p.get(poolMin - 1); len(b) != poolMin-1 || p.hits.Load()+p.misses.Load() != 0 {
		t.Fatalf("a small buffer counted in the pool (len %d)", len(b))
	}
	olds := [][]byte{make([]byte, mib), make([]byte, mib), make([]byte, mib), make([]byte, 2*mib)}
	for _, b := range olds {
		p.put(b)
	}
	if p.idleBytes != 3*mib || len(p.idle) != 2 || &p.idle[0][0] != &olds[2][0] {
		t.Fatalf("idle %d bytes in %d buffers; want the two newest, %d bytes", p.idleBytes, len(p.idle), 3*mib)
	}
	p.put(olds[1])         // back again: now the newest of its size
	b := p.get(1023 << 10) // rounds up to 1 MiB: the newest of that size
	if len(b) != 1023<<10 || cap(b) != len(b) || &b[0] != &olds[1][0] || p.hits.Load() != 1 {
		t.Fatalf("get(1023 KiB): len %d cap %d, hits %d; want the newest 1 MiB buffer", len(b), cap(b), p.hits.Load())
	}
	if c := p.get(3 * mib); &c[0] == &olds[3][0] || p.misses.Load() != 1 || p.idleBytes != 2*mib {
		t.Fatalf("a larger request took an idle buffer of another size (misses %d, idle %d)", p.misses.Load(), p.idleBytes)
	}
	p.max.Store(0)
	p.mu.Lock()
	p.trimLocked()
	p.mu.Unlock()
	if p.idleBytes != 0 || len(p.idle) != 0 {
		t.Fatalf("limit 0 left %d idle bytes", p.idleBytes)
	}
}

// TestBufPoolCollects: a miss for a large buffer while one of its size is
// out runs a collection, and gets that buffer back when nothing refers to
// it any more; with it still referred to, the miss makes a new one.
func TestBufPoolCollects(t *testing.T) {
	p := newBufPool(1 << 30)
	runtime.GC()
	if scan := p.scanBytes(); scan >= collectMin/16 {
		t.Skipf("this test process has %d bytes for a collection to scan, over a sixteenth of %d", scan, collectMin)
	}
	a := p.get(collectMin)
	a[0] = 1
	keep := p.get(collectMin + 1) // out, and alive: collected in vain
	addr := uintptr(unsafe.Pointer(&a[0]))
	a = nil
	b := p.get(collectMin)
	if p.collects.Load() != 1 || p.hits.Load() != 1 || uintptr(unsafe.Pointer(&b[0])) != addr {
		t.Fatalf("collections %d, hits %d, same memory %v; want 1, 1, true", p.collects.Load(), p.hits.Load(), uintptr(unsafe.Pointer(&b[0])) == addr)
	}
	c := p.get(collectMin)
	if p.collects.Load() != 2 || p.misses.Load() != 3 || &c[0] == &b[0] || &c[0] == &keep[0] {
		t.Fatalf("collections %d, misses %d; want 2, 3, new memory", p.collects.Load(), p.misses.Load())
	}
	// That collection was in vain: the next miss of the size makes a new
	// buffer without one, until a buffer of the size comes back.
	if d := p.get(collectMin); p.collects.Load() != 2 || p.misses.Load() != 4 {
		t.Fatalf("after a vain collection: collections %d, misses %d; want 2, 4", p.collects.Load(), p.misses.Load())
	} else {
		runtime.KeepAlive(d)
	}
	p.put(make([]byte, collectMin))
	if p.mu.Lock(); !p.collectWorth(collectMin) {
		t.Error("a buffer came back, yet no collection for its size")
	}
	p.mu.Unlock()
	runtime.KeepAlive(b)
	runtime.KeepAlive(keep)
	// A small scan is the condition: with more to scan than a sixteenth of
	// the buffer, no collection.
	big := make([]*int, collectMin/8) // collectMin/8 pointers: collectMin bytes to scan
	for i := range big {
		big[i] = new(int)
	}
	runtime.GC()
	if p.mu.Lock(); p.collectWorth(collectMin) {
		t.Error("a collection with as much to scan as the buffer")
	}
	p.mu.Unlock()
	runtime.KeepAlive(big)
}

// TestBufPoolCollectsMidSize: for buffers under collectMin a miss asks for
// a collection only once collectMin bytes of the size are out (16 of 1
// MiB), and gets one of them back when nothing refers to them any more.
func TestBufPoolCollectsMidSize(t *testing.T) {
	p := newBufPool(1 << 30)
	runtime.GC()
	if scan := p.scanBytes(); scan >= collectMin/16 {
		t.Skipf("this test process has %d bytes for a collection to scan, over a sixteenth of %d", scan, collectMin)
	}
	const c = 1 << 20
	var out [][]byte
	for len(out) < collectMin/c-1 {
		out = append(out, p.get(c))
	}
	if p.mu.Lock(); p.collectWorth(c) {
		t.Errorf("a collection with %d bytes out, under %d", len(out)*c, collectMin)
	}
	p.mu.Unlock()
	out = append(out, p.get(c))
	if p.mu.Lock(); !p.collectWorth(c) {
		t.Errorf("no collection with %d bytes out", len(out)*c)
	}
	p.mu.Unlock()
	if p.collects.Load() != 0 || p.misses.Load() != collectMin/c {
		t.Fatalf("collections %d, misses %d; want 0, %d", p.collects.Load(), p.misses.Load(), collectMin/c)
	}
	out = nil
	if b := p.get(c); p.collects.Load() != 1 || p.hits.Load() != 1 {
		t.Fatalf("collections %d, hits %d; want 1, 1", p.collects.Load(), p.hits.Load())
	} else {
		runtime.KeepAlive(b)
	}
}

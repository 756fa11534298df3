package arrowio

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// poolAllocator is a memory.Allocator for arrow-go's page buffers that keeps
// freed buffers in power-of-two size classes and hands them out again, so a
// read does not fault in fresh pages for every column chunk. A reused buffer
// is cleared (arrow-go's own allocators return zeroed memory and parts of
// it rely on that); clearing hot memory is far cheaper than new pages.
type poolAllocator struct {
	mu    sync.Mutex
	free  [48][][]byte
	hits  atomic.Uint64
	total atomic.Uint64
}

const poolMinClass = 12 // 4 KiB

func sizeClass(n int) int {
	if n <= 1<<poolMinClass {
		return poolMinClass
	}
	return bits.Len(uint(n - 1))
}

func (p *poolAllocator) Allocate(n int) []byte {
	p.total.Add(1)
	c := sizeClass(n)
	p.mu.Lock()
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c] = p.free[c][:l-1]
		p.mu.Unlock()
		p.hits.Add(1)
		b = b[:n]
		clear(b)
		return b
	}
	p.mu.Unlock()
	return make([]byte, n, 1<<c)
}

func (p *poolAllocator) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		if n > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(n)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < 1<<poolMinClass || c&(c-1) != 0 {
		return // not one of ours (or too small to matter): the GC takes it
	}
	cl := bits.Len(uint(c)) - 1
	p.mu.Lock()
	if len(p.free[cl]) < 64 {
		p.free[cl] = append(p.free[cl], b[:0])
	}
	p.mu.Unlock()
}

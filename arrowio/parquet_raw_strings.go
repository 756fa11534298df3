package arrowio

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/arktos-dev/arktos/internal/par"
)

// ReadStringsRaw reads string column i of the plan as it is, in Arrow's
// large_string layout (a server-side Strings, no numbering): off (one more
// than the column's rows) gets the offsets and the bytes go into the
// buffer alloc(total) returns. reserve(n) is called as each unit's
// decoded bytes are held (they are known only once decoded: a dictionary
// page's strings repeat), so a column too large for the room left fails
// there. The units (file, row group) decode in parallel into buffers of
// their own, then are copied into place; the text is not checked for
// UTF-8 here (the caller checks the result once). A null is refused unless
// the policy gives a null string.
func (p *ParquetPlan) ReadStringsRaw(i int, off []int64, alloc func(n int) ([]byte, error), reserve func(n int64) error, workers int) ([]byte, error) {
	sc := p.Strings[i]
	if len(off) != sc.Rows+1 {
		return nil, errorf(ErrValue, "ReadStringsRaw needs %d offsets", sc.Rows+1)
	}
	type unit struct {
		f, rg, row, n int
		data          []byte
	}
	var units []*unit
	for f, r := range p.files {
		md := r.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			units = append(units, &unit{f: f, rg: rg, row: p.offsets[f][rg], n: int(md.RowGroup(rg).NumRows())})
		}
	}
	nw := max(1, min(workers, len(units)))
	var next atomic.Int64
	var errOnce sync.Once
	var firstErr error
	var mu sync.Mutex // reserve's
	var g par.Group
	for range nw {
		g.Go(func() {
			var vals []parquet.ByteArray
			var defs []int16
			for {
				k := int(next.Add(1)) - 1
				if k >= len(units) {
					return
				}
				u := units[k]
				// lens: each row's length, in off[row+1:], summed later.
				data, err := p.readRawUnit(sc, u.f, u.rg, off[u.row+1:u.row+1+u.n], &vals, &defs)
				if err == nil {
					mu.Lock()
					err = reserve(int64(len(data)))
					mu.Unlock()
				}
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					next.Store(int64(len(units)))
					return
				}
				u.data = data
				StringStats.Units.Add(1)
			}
		})
	}
	g.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	// Offsets: each unit's base is the bytes of the units before it.
	base := make([]int64, len(units))
	var total int64
	for k, u := range units {
		base[k] = total
		total += int64(len(u.data))
	}
	if total > math.MaxInt {
		return nil, errorf(ErrValue, "string column %q holds %d bytes, more than this server can address", sc.Name, total)
	}
	data, err := alloc(int(total))
	if err != nil {
		return nil, err
	}
	off[0] = 0
	eachOn(&g, nw, len(units), func(k int) {
		u := units[k]
		at := base[k]
		lens := off[u.row+1 : u.row+1+u.n]
		for j, n := range lens {
			at += n
			lens[j] = at
		}
		copy(data[base[k]:], u.data)
		u.data = nil // the unit's copy can go
	})
	return data, nil
}

// readRawUnit decodes one row group's string column: each row's length
// into lens, the bytes appended into the returned buffer (nulls are the
// policy's null string).
func (p *ParquetPlan) readRawUnit(sc StringColumn, f, rg int, lens []int64, vals *[]parquet.ByteArray, defs *[]int16) (data []byte, err error) {
	cs := p.chunkSpan(sc, f, rg)
	after, lo, hi := cs.after, cs.lo, cs.hi
	defer func() {
		if x := recover(); x != nil {
			err = p.dataErr(f, rg, sc.Name, after, lo, hi, x)
		}
	}()
	br, maxDef, d, closeChunk, err := p.openByteArrays(sc, f, rg, cs, vals, defs)
	if err != nil {
		return nil, err
	}
	defer closeChunk()
	hint := cs.uncompr
	// The chunk's uncompressed size less its 4-byte length prefixes is the
	// plain-encoded bytes; a dictionary-encoded one grows past it.
	data = make([]byte, 0, max(hint-4*int64(len(lens)), 0))
	done := 0
	for done < len(lens) {
		want := min(batchRows, len(lens)-done)
		levels, n, err := br.ReadBatchInPage(int64(want), (*vals)[:want], d, nil)
		if err != nil {
			return nil, p.dataErr(f, rg, sc.Name, after, lo, hi, err)
		}
		if int(levels) != n && p.policy.NullString == nil {
			return nil, nullStringErr(fmt.Sprintf("%s (row group %d)", p.names[f], rg), sc.Name)
		}
		if levels == 0 {
			return nil, errorf(ErrData, "%s: row group %d of column %q ends after %d of its %d rows", p.names[f], rg, sc.Name, done, len(lens))
		}
		out := lens[done : done+int(levels)]
		if done == 0 && n > 0 {
			// Size the buffer from the first batch's mean length: a
			// dictionary page's rows outgrow the chunk's size, and growing
			// by appends copies the bytes again at every doubling.
			var b int
			for _, v := range (*vals)[:n] {
				b += len(v)
			}
			if est := b/n*len(lens) + b/n*len(lens)/16; est > cap(data) {
				data = make([]byte, 0, est)
			}
		}
		if int(levels) == n {
			for j, v := range (*vals)[:n] {
				data = append(data, v...)
				out[j] = int64(len(v))
			}
		} else {
			null, k := *p.policy.NullString, 0
			for j := range out {
				if d[j] == maxDef {
					v := (*vals)[k]
					k++
					data = append(data, v...)
					out[j] = int64(len(v))
				} else {
					data = append(data, null...)
					out[j] = int64(len(null))
				}
			}
		}
		done += int(levels)
	}
	return data, nil
}

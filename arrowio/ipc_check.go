package arrowio

import (
	"encoding/binary"
	"io"
)

// checkIPCFooter bounds what arrow-go allocates from an Arrow IPC file's
// footer before it reads it: its schema reader makes slices of the
// lengths the flatbuffer's vectors claim (fields, a field's children,
// custom metadata) without checking them against the bytes, so one
// damaged byte can ask for terabytes, which no recover catches. Here each
// such vector must fit in the footer, the fields nest at most 64 deep and
// number at most 2^16 in all (children may share a table: counted each
// time). A file too short to hold a footer is left to arrow-go's own
// refusal.
func checkIPCFooter(r io.ReaderAt, size int64) error {
	const tail = 10 // int32 footer length, "ARROW1"
	if size < tail+8 {
		return nil
	}
	var t [tail]byte
	if _, err := r.ReadAt(t[:], size-tail); err != nil {
		return nil
	}
	n := int64(int32(binary.LittleEndian.Uint32(t[:4])))
	if n <= 0 || n > size-tail-8 || n > 1<<30 {
		return nil // (arrow-go refuses it)
	}
	fb := make([]byte, n)
	if _, err := r.ReadAt(fb, size-tail-n); err != nil {
		return nil
	}
	c := fbCheck{b: fb}
	footer := c.root()
	schema := c.table(footer, 1)
	c.vector(footer, 4) // custom metadata
	if schema >= 0 {
		c.vector(schema, 2)
		c.fields(schema, 1, 0)
	}
	return c.err
}

// fbCheck walks a flatbuffer, bounds checked; the first problem sticks.
type fbCheck struct {
	b       []byte
	nfields int
	err     error
}

func (c *fbCheck) fail(format string, a ...any) {
	if c.err == nil {
		c.err = errorf(ErrData, "its footer is damaged: "+format, a...)
	}
}

func (c *fbCheck) u32(at int64) int64 {
	if at < 0 || at+4 > int64(len(c.b)) {
		c.fail("an offset at byte %d is past its %d bytes", at, len(c.b))
		return -1
	}
	return int64(binary.LittleEndian.Uint32(c.b[at:]))
}

func (c *fbCheck) root() int64 {
	return c.u32(0)
}

// field gives where field i of the table at tab is (-1: absent).
func (c *fbCheck) field(tab int64, i int) int64 {
	if tab < 0 || c.err != nil {
		return -1
	}
	so := c.u32(tab)
	if so < 0 {
		return -1
	}
	vt := tab - int64(int32(uint32(so)))
	if vt < 0 || vt+4 > int64(len(c.b)) {
		c.fail("a vtable at byte %d is past its %d bytes", vt, len(c.b))
		return -1
	}
	vlen := int64(binary.LittleEndian.Uint16(c.b[vt:]))
	slot := vt + 4 + 2*int64(i)
	if slot+2 > vt+vlen || slot+2 > int64(len(c.b)) {
		return -1
	}
	off := int64(binary.LittleEndian.Uint16(c.b[slot:]))
	if off == 0 {
		return -1
	}
	return tab + off
}

// table gives the table field i of tab points to (-1: absent).
func (c *fbCheck) table(tab int64, i int) int64 {
	at := c.field(tab, i)
	if at < 0 {
		return -1
	}
	off := c.u32(at)
	if off < 0 {
		return -1
	}
	return at + off
}

// vector checks the vector of offsets field i of tab points to and gives
// where it is and its length (-1, 0: absent).
func (c *fbCheck) vector(tab int64, i int) (int64, int64) {
	v := c.table(tab, i)
	if v < 0 {
		return -1, 0
	}
	n := c.u32(v)
	if n < 0 {
		return -1, 0
	}
	if v+4+4*n > int64(len(c.b)) {
		c.fail("a vector claims %d entries, more than its %d bytes hold", n, len(c.b))
		return -1, 0
	}
	return v, n
}

// fields checks the vector of Field tables at field i of tab, and their
// children and metadata.
func (c *fbCheck) fields(tab int64, i, depth int) {
	v, n := c.vector(tab, i)
	if depth > 64 {
		c.fail("fields nest more than 64 deep")
		return
	}
	for k := int64(0); k < n && c.err == nil; k++ {
		if c.nfields++; c.nfields > 1<<16 {
			c.fail("it declares more than %d fields", 1<<16)
			return
		}
		e := v + 4 + 4*k
		f := e + c.u32(e)
		c.vector(f, 6)          // custom metadata
		c.fields(f, 5, depth+1) // children
	}
}

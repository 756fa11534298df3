package transfer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

// Request lanes (docs/protocol.md, "Request lanes"): a plain TCP or unix
// connection, opened like a bulk stream (open_stream's ticket) but with
// LaneMagic, that carries whole requests and replies, one at a time. A
// small request's round trip then costs the socket's, without libzmq's two
// I/O threads on each side (measured on the 2-core VM: a Python get_config
// over ZeroMQ 272 µs, a raw socket echo 63 µs).
//
// A message on a lane is its frame count (uint32, little-endian), then each
// frame as its length (uint32, little-endian) and its bytes: frame 0 is the
// msgpack header, as on ZeroMQ, the rest payload.
const LaneMagic = "ARKTOS-LANE-1\n\x00\x00"

// Lane limits: a lane carries small requests and replies (bulk bytes go
// over streams), so a peer announcing more is refused, not buffered.
const (
	MaxLaneFrames = 64
	MaxLaneBytes  = 64 << 20
)

// laneGather is the payload size from which WriteLaneTo gathers a
// message's pieces into one writev instead of copying them through w.
const laneGather = 16 << 10

// WriteLaneTo writes one message as WriteLane does; one of laneGather bytes
// and more goes to raw (w's own writer, its buffer empty) in one gathering
// write (gathered): the frames go from their owners' memory to the kernel,
// with no copy into w and no second system call for what did not fit w's
// buffer.
func WriteLaneTo(w *bufio.Writer, raw io.Writer, frames ...[]byte) (gathered bool, err error) {
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	if raw == nil || total < laneGather || w.Buffered() > 0 {
		return false, WriteLane(w, frames...)
	}
	lens := make([]byte, 4*(len(frames)+1))
	bufs := make(net.Buffers, 0, 2*len(frames)+1)
	binary.LittleEndian.PutUint32(lens, uint32(len(frames)))
	bufs = append(bufs, lens[:4])
	for i, f := range frames {
		l := lens[4*(i+1) : 4*(i+2)]
		binary.LittleEndian.PutUint32(l, uint32(len(f)))
		bufs = append(bufs, l, f)
	}
	_, err = bufs.WriteTo(raw)
	return true, err
}

// WriteLane writes one message (frames[0] the header) to w.
func WriteLane(w *bufio.Writer, frames ...[]byte) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(len(frames)))
	w.Write(b[:])
	for _, f := range frames {
		binary.LittleEndian.PutUint32(b[:], uint32(len(f)))
		w.Write(b[:])
		w.Write(f)
	}
	return w.Flush()
}

// ReadLane reads one message from r. io.EOF means the peer closed the lane
// between messages; any other error leaves the lane unusable.
func ReadLane(r *bufio.Reader) ([][]byte, error) { return ReadLaneInto(r, nil) }

// LanePlace says where ReadLaneInto puts a message's payload frames.
type LanePlace struct {
	// For returns the buffer the payload frames (those after the header,
	// frames[0]) are read into, one after another, or nil. It is called once
	// the header is read; the caller owns the buffer before and after.
	For    func(hdr []byte) []byte
	Buf    []byte // what For returned (set by ReadLaneInto)
	Placed int    // how many payload bytes were read into Buf
}

// ReadLaneInto reads one message as ReadLane does, its payload frames into
// p's buffer while they fit (those frames alias it), each other frame into
// memory of its own. A reply's bytes then go from the kernel straight to
// their destination: no zeroed allocation, no second copy.
func ReadLaneInto(r *bufio.Reader, p *LanePlace) ([][]byte, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(b[:])
	if n == 0 || n > MaxLaneFrames {
		return nil, Errorf(MalformedRequest, "lane message of %d frames: between 1 and %d are allowed", n, MaxLaneFrames)
	}
	frames := make([][]byte, n)
	total := 0
	var buf []byte
	for i := range frames {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, noEOF(err)
		}
		size := int(binary.LittleEndian.Uint32(b[:]))
		if total += size; total > MaxLaneBytes {
			return nil, Errorf(MalformedRequest, "lane message of more than %d bytes: large arrays go over a bulk stream", MaxLaneBytes)
		}
		var err error
		if i > 0 && p != nil && size <= len(buf)-p.Placed {
			frames[i] = buf[p.Placed : p.Placed+size : p.Placed+size]
			p.Placed += size
			_, err = io.ReadFull(r, frames[i])
		} else {
			frames[i], err = readFrame(r, size)
		}
		if err != nil {
			return nil, noEOF(err)
		}
		if i == 0 && p != nil && p.For != nil && n > 1 {
			buf = p.For(frames[0])
			p.Buf, p.Placed = buf, 0
		}
	}
	return frames, nil
}

// laneGrow is the most of a frame read into memory before its bytes have
// come: a larger frame's buffer grows (doubling) as they arrive, so a peer
// that announces 64 MiB and sends little makes the reader hold little.
const laneGrow = 1 << 20

// readFrame reads a frame of size bytes from r into memory of its own.
func readFrame(r io.Reader, size int) ([]byte, error) {
	if size <= laneGrow {
		b := make([]byte, size)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, laneGrow)
	for len(b) < size {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*cap(b), size))
			copy(nb, b)
			b = nb
		}
		n, err := io.ReadFull(r, b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// noEOF turns an end of input inside a message into an error that says so.
func noEOF(err error) error {
	if err == io.EOF {
		return fmt.Errorf("lane closed inside a message: %w", io.ErrUnexpectedEOF)
	}
	return err
}

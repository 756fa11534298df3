package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestLaneRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	msgs := [][][]byte{{[]byte("header")}, {[]byte("h"), {}, bytes.Repeat([]byte{7}, 70000)}}
	for _, m := range msgs {
		if err := WriteLane(w, m...); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for _, want := range msgs {
		got, err := ReadLane(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d frames, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d differs", i)
			}
		}
	}
	if _, err := ReadLane(r); err != io.EOF {
		t.Fatalf("after the last message: %v, want io.EOF", err)
	}
	// Cut short inside a message: not io.EOF (the lane is broken).
	var cut bytes.Buffer
	WriteLane(bufio.NewWriter(&cut), []byte("header"))
	_, err := ReadLane(bufio.NewReader(bytes.NewReader(cut.Bytes()[:6])))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut message: %v", err)
	}
	for _, bad := range [][]byte{{0, 0, 0, 0}, {65, 0, 0, 0}, {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}} {
		_, err := ReadLane(bufio.NewReader(bytes.NewReader(bad)))
		var te *Error
		if !errors.As(err, &te) || te.Code != MalformedRequest {
			t.Fatalf("% x: %v, want MALFORMED_REQUEST", bad, err)
		}
	}
}

// TestLaneGatheredAndPlaced: a message of laneGather bytes and more is
// written gathered to the raw writer, one under it through w, each the
// same bytes; ReadLaneInto reads payload frames into the placed buffer while
// they fit (aliasing it, in order), the rest into their own memory, and
// reads as ReadLane does without one.
func TestLaneGatheredAndPlaced(t *testing.T) {
	hdr := []byte("header")
	p1, p2, p3 := bytes.Repeat([]byte{1}, 10000), bytes.Repeat([]byte{2}, 7000), []byte{3, 3, 3}
	for _, tc := range []struct {
		frames   [][]byte
		gathered bool
	}{
		{[][]byte{hdr, p1, p2, p3}, true},
		{[][]byte{hdr, p2, p3}, false},
		{[][]byte{hdr}, false},
	} {
		var raw, plain bytes.Buffer
		w := bufio.NewWriter(&raw)
		gathered, err := WriteLaneTo(w, &raw, tc.frames...)
		if err != nil || gathered != tc.gathered {
			t.Fatalf("gathered %v, %v; want %v", gathered, err, tc.gathered)
		}
		WriteLane(bufio.NewWriter(&plain), tc.frames...)
		if !bytes.Equal(raw.Bytes(), plain.Bytes()) {
			t.Fatal("WriteLaneTo wrote other bytes than WriteLane")
		}
	}
	var msg bytes.Buffer
	WriteLane(bufio.NewWriter(&msg), hdr, p1, p2, p3)
	for _, room := range []int{0, 10000, 17003, 17002, 20000} {
		buf := make([]byte, room)
		var seen []byte
		p := &LanePlace{For: func(h []byte) []byte {
			seen = h
			return buf
		}}
		frames, err := ReadLaneInto(bufio.NewReader(bytes.NewReader(msg.Bytes())), p)
		if err != nil || len(frames) != 4 || string(seen) != "header" {
			t.Fatalf("room %d: %d frames, header %q, %v", room, len(frames), seen, err)
		}
		off := 0
		for i, want := range [][]byte{p1, p2, p3} {
			f := frames[i+1]
			if !bytes.Equal(f, want) {
				t.Fatalf("room %d: frame %d differs", room, i+1)
			}
			placed := off+len(f) <= room
			if aliased := off < room && &f[0] == &buf[off]; aliased != placed {
				t.Fatalf("room %d: frame %d placed %v, want %v", room, i+1, aliased, placed)
			}
			if placed {
				off += len(f)
			}
		}
		if p.Placed != off || len(p.Buf) != room {
			t.Fatalf("room %d: placed %d of %d, want %d", room, p.Placed, len(p.Buf), off)
		}
	}
}

// FuzzReadLane: any bytes read from a lane give messages or an error, never
// a panic or a huge allocation, with or without a placed buffer (of a size
// the input's first byte picks), whose placed frames never overlap.
func FuzzReadLane(f *testing.F) {
	var ok bytes.Buffer
	WriteLane(bufio.NewWriter(&ok), []byte("\x81\xa1v\x01"), []byte("payload"))
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 1, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, placed := range []bool{false, true} {
			r := bufio.NewReader(bytes.NewReader(b))
			for {
				var p *LanePlace
				if placed && len(b) > 0 {
					room := int(b[0])
					p = &LanePlace{For: func([]byte) []byte { return make([]byte, room) }}
				}
				frames, err := ReadLaneInto(r, p)
				if err != nil {
					break
				}
				if len(frames) == 0 || len(frames) > MaxLaneFrames {
					t.Fatalf("%d frames accepted", len(frames))
				}
				if p != nil && p.Placed > len(p.Buf) {
					t.Fatalf("placed %d bytes in a buffer of %d", p.Placed, len(p.Buf))
				}
			}
		}
	})
}

// TestLaneFrameGrowsAsBytesCome: a frame announced larger than laneGrow is
// read into memory that grows with the bytes that came, so a peer that
// announces 64 MiB and sends 10 bytes makes the reader allocate about
// laneGrow, not 64 MiB; frames around and over laneGrow read back whole.
func TestLaneFrameGrowsAsBytesCome(t *testing.T) {
	claim := []byte{2, 0, 0, 0, 1, 0, 0, 0, 'h', 0xf0, 0xff, 0xff, 3} // two frames, the second 64 MiB - 16
	claim = append(claim, bytes.Repeat([]byte{9}, 10)...)             // of which 10 bytes come
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var err error
	got := allocated(func() { _, err = ReadLane(bufio.NewReader(bytes.NewReader(claim))) })
	if !errors.Is(err, io.ErrUnexpectedEOF) || got > 2*laneGrow {
		t.Errorf("a 64 MiB frame cut after 10 bytes: %v, %d bytes allocated (want at most %d)", err, got, 2*laneGrow)
	}
	for _, n := range []int{laneGrow - 1, laneGrow, laneGrow + 1, 5*laneGrow + 3} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 7)
		}
		var buf bytes.Buffer
		WriteLane(bufio.NewWriter(&buf), []byte("h"), want)
		frames, err := ReadLane(bufio.NewReaderSize(iotest.OneByteReader(&buf), 4096))
		if err != nil || len(frames) != 2 || !bytes.Equal(frames[1], want) || cap(frames[1]) != n {
			t.Fatalf("a frame of %d bytes: %v (cap %d)", n, err, cap(frames[1]))
		}
	}
}

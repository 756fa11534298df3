package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
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

// FuzzReadLane: any bytes read from a lane give messages or an error, never
// a panic or a huge allocation.
func FuzzReadLane(f *testing.F) {
	var ok bytes.Buffer
	WriteLane(bufio.NewWriter(&ok), []byte("\x81\xa1v\x01"), []byte("payload"))
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 1, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			frames, err := ReadLane(r)
			if err != nil {
				return
			}
			if len(frames) == 0 || len(frames) > MaxLaneFrames {
				t.Fatalf("%d frames accepted", len(frames))
			}
		}
	})
}

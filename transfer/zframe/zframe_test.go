package zframe

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	zmq "github.com/pebbe/zmq4"
)

func pair(t *testing.T, ep string) (a, b *zmq.Socket) {
	t.Helper()
	var err error
	if a, err = zmq.NewSocket(zmq.PAIR); err != nil {
		t.Fatal(err)
	}
	if b, err = zmq.NewSocket(zmq.PAIR); err != nil {
		t.Fatal(err)
	}
	if err := a.Bind(ep); err != nil {
		t.Fatal(err)
	}
	if err := b.Connect(ep); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.SetLinger(0); b.SetLinger(0); a.Close(); b.Close() })
	return a, b
}

// TestRawHandle proves raw() reads zmq4's libzmq handle: a multipart sent
// with zmq4 comes back whole through our C layer.
func TestRawHandle(t *testing.T) {
	a, b := pair(t, "inproc://zframe-raw")
	big := bytes.Repeat([]byte{7}, 1<<20)
	frames := [][]byte{[]byte("head"), {}, big}
	for i := 0; i < 20; i++ { // more than the initial capacity of 8 frames
		frames = append(frames, []byte{byte(i)})
	}
	for i, f := range frames {
		flag := zmq.SNDMORE
		if i == len(frames)-1 {
			flag = 0
		}
		if _, err := a.SendBytes(f, flag); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Recv(b, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != len(frames) {
		t.Fatalf("got %d frames, want %d", m.Len(), len(frames))
	}
	for i, f := range frames {
		if !bytes.Equal(m.Frame(i), f) || m.FrameSize(i) != len(f) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if Live() != 1 {
		t.Fatalf("Live = %d, want 1", Live())
	}
	m.Close()
	m.Close()
	if Live() != 0 {
		t.Fatalf("Live = %d after Close, want 0", Live())
	}
	if _, err := Recv(b, true); !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("Recv on empty socket: %v, want EAGAIN", err)
	}
}

func TestForward(t *testing.T) {
	a, b := pair(t, "inproc://zframe-fwd-1")
	c, d := pair(t, "inproc://zframe-fwd-2")
	a.SendBytes([]byte("x"), zmq.SNDMORE)
	a.SendBytes(bytes.Repeat([]byte{1}, 100000), 0)
	if err := Forward(b, c, false); err != nil {
		t.Fatal(err)
	}
	got, err := d.RecvMessageBytes(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != "x" || len(got[1]) != 100000 {
		t.Fatalf("forwarded message differs: %d frames", len(got))
	}
	if err := Forward(b, c, true); !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("Forward on empty socket: %v, want EAGAIN", err)
	}
}

// TestSendPartsEndsAPartialMessage: a multipart message cut short by a
// panic (before a copied part, before an in-place part) or ended normally
// arrives as its own message, ended with an empty frame, and the next
// message on the socket arrives whole after it.
func TestSendPartsEndsAPartialMessage(t *testing.T) {
	defer func() { testSendPart = nil }()
	a, b := pair(t, "inproc://zframe-partial")
	big := bytes.Repeat([]byte{7}, ZeroCopyMin)
	parts := [][]byte{[]byte("hdr"), big, []byte("tail")}
	for _, cut := range []int{1, 2} {
		ends := PartialEnds()
		testSendPart = func(i int) {
			if i == cut {
				panic("cut")
			}
		}
		func() {
			defer func() {
				if p := recover(); p != "cut" {
					t.Fatalf("cut %d: recovered %v", cut, p)
				}
			}()
			SendParts(a, parts, 1)
		}()
		testSendPart = nil
		if PartialEnds() != ends+1 {
			t.Errorf("cut %d: PartialEnds %d, want %d", cut, PartialEnds(), ends+1)
		}
		refs, err := SendParts(a, [][]byte{[]byte("next"), []byte("x")}, 1)
		if err != nil || refs != nil {
			t.Fatal(refs, err)
		}
		got, err := b.RecvMessageBytes(0)
		if err != nil {
			t.Fatal(err)
		}
		want := append(append([][]byte{}, parts[:cut]...), []byte{})
		if len(got) != len(want) {
			t.Fatalf("cut %d: the cut message has %d frames, want %d", cut, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("cut %d: frame %d differs", cut, i)
			}
		}
		if next, err := b.RecvMessageBytes(0); err != nil || len(next) != 2 || string(next[0]) != "next" {
			t.Fatalf("cut %d: the next message: %q %v", cut, next, err)
		}
	}
	// A whole message is not ended again.
	ends := PartialEnds()
	refs, err := SendParts(a, parts, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.RecvMessageBytes(0); err != nil || len(got) != 3 || PartialEnds() != ends {
		t.Fatalf("whole message: %d frames, %v, %d ends", len(got), err, PartialEnds()-ends)
	}
	for !refs.Done() {
	}
}

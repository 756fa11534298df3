package server

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestGraceWaitsForOlderRequests: a free waits for the requests running when
// it was deferred, not for those that began after it.
func TestGraceWaitsForOlderRequests(t *testing.T) {
	var g grace
	freed := 0
	old := g.enter()
	g.defer_(func() { freed++ })
	young := g.enter()
	if freed != 0 || g.pending() != 1 {
		t.Fatalf("freed %d with an older request running", freed)
	}
	g.exit(old)
	if freed != 1 || g.pending() != 0 {
		t.Fatalf("freed %d after the older request ended, want 1", freed)
	}
	g.exit(young)
	done := make(chan struct{})
	g.defer_(func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("a free with no request running waited")
	}
}

// eventually fails unless cond becomes true within a few seconds (frees
// deferred with no request running happen on a goroutine of their own).
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

func isOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

func segmentArray(t *testing.T, s *store, name string, body []byte) (*pdarray.Array, *segment) {
	t.Helper()
	g, err := newSegment(body, true)
	if err != nil {
		t.Fatal(err)
	}
	a, err := g.array(pdarray.Uint8, len(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.reserve(int64(len(body)), "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.putSegment(name, a, g); err != nil {
		t.Fatal(err)
	}
	return a, g
}

// TestSegmentFreedNotPooled: deleting a segment-backed array unmaps and
// closes its segment once its last holder releases it and no request that
// may read it runs; its mapping never goes to the buffer pool.
func TestSegmentFreedNotPooled(t *testing.T) {
	s := newStore(1 << 30)
	body := bytes.Repeat([]byte{3}, 4<<20)
	_, g := segmentArray(t, s, "a", body)
	held, release, err := s.acquire("a")
	if err != nil || !bytes.Equal(held.Bytes(), body) {
		t.Fatal(err)
	}
	req := s.grace.enter()
	if _, _, err := s.delete([]string{"a"}, false); err != nil {
		t.Fatal(err)
	}
	release()
	if !isOpen(g.fd) || s.grace.pending() != 1 {
		t.Fatalf("segment freed while a request that read it runs")
	}
	s.grace.exit(req)
	if isOpen(g.fd) || s.grace.pending() != 0 {
		t.Fatalf("segment still open after its array was deleted and released, and the request ended")
	}
	if _, _, pooled, _ := s.usage(); pooled != 0 {
		t.Fatalf("%d bytes pooled: a segment went to the pool", pooled)
	}
}

// TestCopyOnWrite: getForWrite hands out an ordinary copy of a
// segment-backed array and frees the segment; the accounting is unchanged.
func TestCopyOnWrite(t *testing.T) {
	s := newStore(1 << 30)
	body := bytes.Repeat([]byte{1, 0}, 2<<20)
	old, g := segmentArray(t, s, "a", body)
	w, err := s.getForWrite("a")
	if err != nil {
		t.Fatal(err)
	}
	if w == old || !bytes.Equal(w.Bytes(), body) || s.copiesOnWrite.Load() != 1 {
		t.Fatalf("getForWrite did not copy the segment out")
	}
	w.Bytes()[0] = 9 // an ordinary buffer: writable
	eventually(t, func() bool { return !isOpen(g.fd) }, "the segment is still open after the copy on write")
	if used, _, _, _ := s.usage(); used != int64(len(body)) {
		t.Fatalf("used %d after copy on write, want %d", used, len(body))
	}
	if again, _ := s.getForWrite("a"); again != w || s.copiesOnWrite.Load() != 1 {
		t.Fatalf("a second write copied again")
	}
}

// TestCopyOnWriteNoRoom: a copy on write that would pass the limit is
// refused with a clear error; the array stays in its segment, unchanged.
func TestCopyOnWriteNoRoom(t *testing.T) {
	body := bytes.Repeat([]byte{5}, 4<<20)
	s := newStore(int64(len(body)) + 1<<20)
	old, g := segmentArray(t, s, "a", body)
	_, err := s.getForWrite("a")
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.OutOfMemory || !strings.Contains(te.Message, "a copy on write of 'a'") {
		t.Fatalf("copy on write past the limit: %v", err)
	}
	if a, _ := s.get("a"); a != old || !isOpen(g.fd) || s.copiesOnWrite.Load() != 0 {
		t.Fatal("the array left its segment")
	}
	if used, _, _, _ := s.usage(); used != int64(len(body)) {
		t.Fatalf("used %d after the refusal, want %d", used, len(body))
	}
}

// TestAdoptRace: a view's segment made while the array was replaced serves
// that view only; the store keeps the new array.
func TestAdoptRace(t *testing.T) {
	s := newStore(1 << 30)
	a := stored(t, s, "a", 2<<20)
	g, err := s.adopt("a", a, func() (*segment, error) { return newSegment(a.Bytes(), true) })
	if err != nil || s.segmentOf("a", a) != nil {
		t.Fatal("adopt:", err)
	}
	now, _ := s.get("a")
	if s.segmentOf("a", now) != g || !bytes.Equal(now.Bytes(), a.Bytes()) {
		t.Fatal("the adopted segment does not back the stored array")
	}
	// Adopting the old array again (a view that raced the first) makes a
	// one-off segment and leaves the store alone.
	g2, err := s.adopt("a", a, func() (*segment, error) { return newSegment(a.Bytes(), true) })
	if err != nil || g2 == g || s.segmentOf("a", now) != g {
		t.Fatal("a racing adopt replaced the stored segment")
	}
	if used, _, _, _ := s.usage(); used != int64(a.NBytes()) {
		t.Fatalf("used %d, want %d", used, a.NBytes())
	}
}

// TestCopyOnWriteRace: writers racing on one segment-backed array all get
// the one copy that the store keeps.
func TestCopyOnWriteRace(t *testing.T) {
	s := newStore(1 << 30)
	body := bytes.Repeat([]byte{5}, 8<<20)
	segmentArray(t, s, "a", body)
	got := make([]*pdarray.Array, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			req := s.grace.enter()
			defer s.grace.exit(req)
			a, err := s.getForWrite("a")
			if err != nil {
				t.Error(err)
			}
			got[i] = a
			done <- i
		}()
	}
	for range got {
		<-done
	}
	kept, _ := s.get("a")
	for i, a := range got {
		if a != kept || !bytes.Equal(a.Bytes(), body) {
			t.Fatalf("writer %d got another array than the one stored", i)
		}
	}
	if n := s.copiesOnWrite.Load(); n != 1 {
		t.Fatalf("%d copies on write kept, want 1", n)
	}
}

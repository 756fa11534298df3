package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

func stored(t *testing.T, s *store, name string, n int) *pdarray.Array {
	t.Helper()
	if err := s.reserve(int64(n), "test"); err != nil {
		t.Fatal(err)
	}
	a, err := s.allocMayBeDirty(pdarray.Uint8, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Bytes() {
		a.Bytes()[i] = 7
	}
	if _, err := s.put(name, a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPoolOnlyUnreadBuffers: a deleted array's buffer is reused only once no
// holder can read it; an array handed out by get is never reused.
func TestPoolOnlyUnreadBuffers(t *testing.T) {
	const n = 4 << 20
	s := newStore(1 << 30)
	s.poison = true

	a := stored(t, s, "a", n)
	held, release, err := s.acquire("a")
	if err != nil || held != a {
		t.Fatal(err)
	}
	if _, _, err := s.delete([]string{"a"}, false); err != nil {
		t.Fatal(err)
	}
	if s.pool.bytes != 0 {
		t.Fatal("a buffer still being read was pooled")
	}
	if !bytes.Equal(held.Bytes(), bytes.Repeat([]byte{7}, n)) {
		t.Fatal("a held buffer changed after delete")
	}
	release()
	release() // a second call does nothing
	if s.pool.bytes < n {
		t.Fatalf("released buffer not pooled: pool holds %d bytes", s.pool.bytes)
	}
	if held.Bytes()[0] != 0xAB {
		t.Fatal("pooled buffer not poisoned")
	}
	b := stored(t, s, "b", n-100)
	if &b.Bytes()[0] != &held.Bytes()[0] || s.pool.hits != 1 {
		t.Fatal("an allocation of about the same size did not reuse the pooled buffer")
	}

	if _, err := s.get("b"); err != nil {
		t.Fatal(err)
	}
	s.delete([]string{"b"}, false)
	if s.pool.bytes != 0 {
		t.Fatal("a buffer handed out by get was pooled")
	}
}

// TestPoolCountsAgainstLimit: pooled buffers count toward the limit and are
// evicted to make room for a reservation.
func TestPoolCountsAgainstLimit(t *testing.T) {
	const n = 4 << 20
	s := newStore(8 * n) // the pool may hold a quarter: 2n
	stored(t, s, "a", n)
	stored(t, s, "b", n)
	s.delete([]string{"a", "b"}, false)
	if s.pool.bytes == 0 || s.used != 0 {
		t.Fatalf("pool %d used %d", s.pool.bytes, s.used)
	}
	if err := s.reserve(8*n, "big"); err != nil {
		t.Fatalf("pooled buffers were not evicted to make room: %v", err)
	}
	if s.used+s.pool.bytes > s.limit {
		t.Fatalf("used %d + pooled %d over limit %d", s.used, s.pool.bytes, s.limit)
	}
}

// TestDeletedStillReadStaysCounted: a deleted array that a holder still
// reads (a download libzmq sends in place to a client that does not read)
// keeps its bytes counted against the limit until the holder lets go; it
// once left the count at delete while staying resident.
func TestDeletedStillReadStaysCounted(t *testing.T) {
	const n = 6 << 20
	s := newStore(10 << 20)
	stored(t, s, "a", n)
	_, release, err := s.acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.delete([]string{"a"}, false); err != nil {
		t.Fatal(err)
	}
	if used, _, _, _ := s.usage(); used != n {
		t.Fatalf("used %d after deleting an array still read, want %d", used, n)
	}
	err = s.reserve(n, "another upload")
	if err == nil || !strings.Contains(err.Error(), "deleted arrays still being read") {
		t.Fatalf("reserve past the limit: %v", err)
	}
	release()
	if used, _, _, _ := s.usage(); used != 0 || s.heldDeleted != 0 {
		t.Fatalf("used %d, held %d after the last holder let go", used, s.heldDeleted)
	}
	if err := s.reserve(n, "another upload"); err != nil {
		t.Fatal(err)
	}
}

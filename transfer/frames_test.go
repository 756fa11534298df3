package transfer

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"1024": 1024, "8GiB": 8 << 30, "512MiB": 512 << 20, "1.5GB": 1_500_000_000, "64k": 64 << 10, " 2 gib ": 2 << 30, "10B": 10}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "8 parsecs", "-1", "1e99"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}

// TestStripeBounds: the stripes of docs/protocol.md, "Bulk streams" (the
// Python client's test_stripe_bounds_match_go holds the same cases).
func TestStripeBounds(t *testing.T) {
	for _, tc := range []struct {
		parts, nbytes int
		want          [][2]int
	}{
		{3, 10000, [][2]int{{0, 4096}, {4096, 8192}, {8192, 10000}}},
		{3, 16<<20 + 12345, [][2]int{{0, 5599232}, {5599232, 11198464}, {11198464, 16789561}}},
		{4, 1 << 24, [][2]int{{0, 4194304}, {4194304, 8388608}, {8388608, 12582912}, {12582912, 16777216}}},
		{3, 5000, [][2]int{{0, 4096}, {4096, 5000}, {5000, 5000}}},
		{2, 0, [][2]int{{0, 0}, {0, 0}}},
	} {
		for i, w := range tc.want {
			if lo, hi := StripeBounds(i, tc.parts, tc.nbytes); lo != w[0] || hi != w[1] {
				t.Errorf("StripeBounds(%d, %d, %d) = [%d, %d), want [%d, %d)", i, tc.parts, tc.nbytes, lo, hi, w[0], w[1])
			}
		}
	}
}

// TestStripedFailureEndsTheOthers: when one stripe's move fails, Striped
// closes every connection, so a stripe waiting to read ends at once, and
// the error names the failed stripe.
func TestStripedFailureEndsTheOthers(t *testing.T) {
	a0, b0 := net.Pipe()
	a1, b1 := net.Pipe()
	defer b0.Close()
	defer b1.Close()
	b := make([]byte, 3*4096)
	err := Striped([]net.Conn{a0, a1}, b, func(c net.Conn, p []byte) error {
		if c == a1 {
			return errors.New("broken")
		}
		_, err := io.ReadFull(c, p) // nothing is ever written: only the close ends it
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "stripe 1 of 2: broken") {
		t.Fatalf("error %v, want stripe 1's", err)
	}
}

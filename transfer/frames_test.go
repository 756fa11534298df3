package transfer

import "testing"

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

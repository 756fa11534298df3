package client

import (
	"testing"
	"time"
)

// TestLinkFrameSize: the frame size a download over ZeroMQ asks for is an
// eighth of the heartbeat at the last measured rate, in whole pages,
// between minLinkFrame and the server's largest (Python's
// test_link_frame_size).
func TestLinkFrameSize(t *testing.T) {
	c := &Client{heartbeat: 30 * time.Second, config: ServerConfig{MaxFrameSize: 16 << 20}}
	want := func(n int) {
		t.Helper()
		if got := c.linkFrameSize(); got != n {
			t.Fatalf("linkFrameSize at %.0f B/s, heartbeat %v: %d, want %d", c.linkRate, c.heartbeat, got, n)
		}
	}
	want(3840 << 10)                        // 1 MiB/s assumed × 30 s / 8
	c.measureLink(64<<10, time.Millisecond) // too small to say: kept
	want(3840 << 10)
	c.measureLink(256<<20, 100*time.Millisecond) // 2.5 GiB/s: the server's largest
	want(16 << 20)
	c.measureLink(8<<20, 16*time.Second) // 0.5 MiB/s
	want(1920 << 10)
	c.measureLink(1<<20, 100*time.Second) // 10 KiB/s: the least
	want(minLinkFrame)
	c.heartbeat = 0
	want(16 << 20)
	c.heartbeat, c.config.MaxFrameSize = 30*time.Second, 32<<10
	want(32 << 10)
}

package transfer

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultFrameSize is the default size of one payload frame. 16 MiB keeps
// per-frame overhead negligible while no single message buffer grows huge.
const DefaultFrameSize = 16 << 20

// NumFrames returns how many payload frames carry nbytes at frameSize:
// ceil(nbytes/frameSize), and 0 for an empty array.
func NumFrames(nbytes, frameSize int) int {
	if nbytes == 0 {
		return 0
	}
	return (nbytes + frameSize - 1) / frameSize
}

// FrameBounds returns the byte range [lo, hi) of frame i.
func FrameBounds(i, nbytes, frameSize int) (lo, hi int) {
	lo = i * frameSize
	hi = min(lo+frameSize, nbytes)
	return lo, hi
}

// CheckFrames checks that sizes (the lengths of the payload frames received)
// are exactly the layout of nbytes at frameSize (docs/protocol.md, "Arrays on
// the wire"), and names the first mismatch: an oversized frame, then a total
// that is not nbytes, then the frame count, then a frame of the wrong length.
// what describes the array for messages ("10 int64 elements").
func CheckFrames(sizes []int, nbytes, frameSize int, what string) error {
	total := 0
	for i, got := range sizes {
		if got > frameSize {
			return Errorf(FrameTooLarge, "payload frame %d is %d bytes, more than frame_size %d; cut the array into frames of at most frame_size bytes", i, got, frameSize)
		}
		total += got
	}
	if total != nbytes {
		return Errorf(PayloadLength, "payload is %d bytes but %s take %d bytes (size x itemsize)", total, what, nbytes)
	}
	want := NumFrames(nbytes, frameSize)
	if len(sizes) != want {
		word := "few"
		if len(sizes) > want {
			word = "many"
		}
		return Errorf(FrameCount, "too %s payload frames: %d bytes at frame_size %d travel in %d frames, got %d", word, nbytes, frameSize, want, len(sizes))
	}
	for i, got := range sizes {
		lo, hi := FrameBounds(i, nbytes, frameSize)
		if got != hi-lo {
			return Errorf(PayloadLength, "payload frame %d is %d bytes, want %d: every frame but the last holds exactly frame_size (%d) bytes", i, got, hi-lo, frameSize)
		}
	}
	return nil
}

// FormatBytes renders n as a human size ("1.5 GiB").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// StreamMagic starts a bulk stream's handshake; TicketSize random bytes from
// open_stream follow it (docs/protocol.md, "Bulk streams").
const (
	StreamMagic = "ARKTOS-STREAM-1\n"
	TicketSize  = 16
)

// ParseBytes parses a size like "8GiB", "512MiB", "1.5GB", "64k" or "1024".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q is not a number with an optional unit (e.g. 8GiB, 512MiB, 1048576)", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1e12, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q has unknown unit %q; use B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB)", s, unit)
	}
	n := v * mult
	if n > 1<<62 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}

// MaxStripes is how many streams besides its own a transfer may stripe
// over (docs/protocol.md, "Bulk streams").
const MaxStripes = 15

// StripeBounds returns the byte range [lo, hi) that stream i of parts
// carries when nbytes are striped: parts of ceil(nbytes/parts) rounded up
// to 4 KiB, the last one shorter (or empty).
func StripeBounds(i, parts, nbytes int) (lo, hi int) {
	per := ((nbytes+parts-1)/parts + 4095) &^ 4095
	return min(i*per, nbytes), min((i+1)*per, nbytes)
}

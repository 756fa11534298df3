package client

// For the external tests (compiled only with them).

// ConnectTimeout is connectTimeout.
var ConnectTimeout = &connectTimeout

// RetryFirst is retryFirst.
var RetryFirst = &retryFirst

// Busy says whether a request of c's holds its lock (is being sent or
// waits for its reply).
func Busy(c *Client) bool {
	if c.mu.TryLock() {
		c.mu.Unlock()
		return false
	}
	return true
}

// LinkFrameSize is the frame size c's next download over ZeroMQ asks for,
// and LinkRate the rate it is sized to (0: none measured; the assumed one).
func LinkFrameSize(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.linkFrameSize()
}

func LinkRate(c *Client) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.linkRate
}

// SetTestDrop makes f say, at each check, whether a drop is reported (nil:
// only the monitor's).
func SetTestDrop(f func() bool) { testDrop = f }

// OwesLate says whether c waits for a late reply on ZeroMQ (owesLate).
func OwesLate(c *Client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owesLate()
}

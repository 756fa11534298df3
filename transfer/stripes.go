package transfer

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// Striped moves b over conns at once (docs/protocol.md, "Bulk streams"):
// stripe i (StripeBounds) over conns[i] by move, each on a goroutine of its
// own. When one fails, every conn is closed, so the others' reads or
// writes end at once (the transfer's byte position is lost on all of them:
// the caller drops them), and the errors are returned, each naming its
// stripe. Server and clients share it.
func Striped(conns []net.Conn, b []byte, move func(c net.Conn, p []byte) error) error {
	if len(conns) == 1 {
		return move(conns[0], b)
	}
	errs := make([]error, len(conns))
	var failed sync.Once
	var wg sync.WaitGroup
	for i, c := range conns {
		lo, hi := StripeBounds(i, len(conns), len(b))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := move(c, b[lo:hi]); err != nil {
				errs[i] = fmt.Errorf("stripe %d of %d: %w", i, len(conns), err)
				failed.Do(func() {
					for _, d := range conns {
						d.Close()
					}
				})
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

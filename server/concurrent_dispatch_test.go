package server

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestConcurrentDispatch sends FuzzDispatch's malformed and odd requests
// from several goroutines at once, as clients do, against one server (the
// fuzzer sends one at a time, on arrays reset between): each must be
// answered, with a result or an error, while others read, write, replace
// and delete the same arrays. Under -race (make test) the detector sees
// the handlers' shared state raced. A panic fails the test, as in the
// fuzzer; one request running for 10 s is a hang. Once every array is
// deleted, no memory is held: every reservation was given back. Seeded
// (ARKTOS_STRESS_SEED repeats a run).
func TestConcurrentDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	fz := newFuzzServer(t)
	seed := testserver.StressSeed(t)
	// Requests share the arrays (a read lock); every 100 ms the base
	// arrays are put back (the write lock), or the deletes among the
	// requests would soon leave none.
	var gate sync.RWMutex
	fz.reset(t)
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	counts := make([]map[string]int, 4)
	for w := range counts {
		counts[w] = map[string]int{}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			var data []byte
			for time.Now().Before(stop) && !t.Failed() {
				data = data[:0]
				for range 1 + rng.IntN(24) {
					data = append(data, byte(rng.Uint32()))
				}
				if rng.IntN(2) == 0 {
					// Every argument the command takes, each an array's
					// name, a number or a string (request's encoding), and
					// nothing else: more requests get past the checks of
					// what is there.
					data[0] &= 0x7f
					keys := fz.cmdKeys[fz.cmds[int(data[0])%len(fz.cmds)]]
					var all []byte
					for i := range keys {
						all = append(all, byte(i), byte(rng.IntN(7)<<4|rng.IntN(16)))
					}
					data = append(data[:1], all...)
				}
				cmd, args := fz.request(data)
				gate.RLock()
				err := fz.send(t, cmd, args, data)
				gate.RUnlock()
				var te *transfer.Error
				switch {
				case err == nil:
					counts[w]["ok"]++
				case errors.As(err, &te):
					counts[w][te.Code.String()]++
					if te.Code == transfer.Internal {
						t.Errorf("%s %#v: %v", cmd, args, err)
					}
				default:
					t.Errorf("%s %#v: %v (not a registry error)", cmd, args, err)
				}
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(stop) && !t.Failed() {
			time.Sleep(100 * time.Millisecond)
			gate.Lock()
			fz.reset(t)
			gate.Unlock()
		}
	})
	wg.Wait()
	for w, m := range counts {
		t.Logf("goroutine %d: %v", w, m)
	}
	var names []string
	for _, info := range fz.s.store.list() {
		names = append(names, info.name)
	}
	if _, _, err := fz.s.store.delete(names, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { used, _, _, _ := fz.s.store.usage(); return used == 0 },
		"memory still held with no array stored: a reservation was not given back")
	if n := fz.s.stats.Panics.Load(); n != 0 {
		t.Errorf("%d panics caught", n)
	}
}

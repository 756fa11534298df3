package server

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestConcurrentDispatch sends FuzzDispatch's malformed and odd requests,
// and requests like those the probe found each handler runs (about half of
// them run: before, 7-8% of the requests here got past the arguments'
// checks), from several goroutines at once, as clients do, against one
// server (the fuzzer sends one at a time, on arrays reset between): each
// must be answered, with a result or an error, while others read, write,
// replace and delete the same arrays. Under -race (make test) the detector
// sees the handlers' shared state raced. A panic fails the test, as in the
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
	// Most commands have a request their handler ran when probed; fewer
	// would mean the probe no longer finds them (a new error's wording).
	var none []string
	for _, c := range fz.cmds {
		if fz.valid[c] == nil {
			none = append(none, c)
		}
	}
	if t.Logf("valid requests for %d of %d commands; none for %v", len(fz.valid), len(fz.cmds), none); len(fz.valid) < len(fz.cmds)*2/3 {
		t.Errorf("valid requests found for only %d of %d commands", len(fz.valid), len(fz.cmds))
	}
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	counts := make([]map[string]int, 4)
	// tally counts a request's outcome by how it was built (each goroutine
	// its own map); INTERNAL or an error outside the registry fails t.
	tally := func(w int, how, cmd string, args map[string]any, err error) {
		var te *transfer.Error
		switch {
		case err == nil:
			counts[w][how+" ok"]++
		case errors.As(err, &te):
			counts[w][how+" "+te.Code.String()]++
			if te.Code == transfer.Internal {
				t.Errorf("%s %#v: %v", cmd, args, err)
			}
		default:
			t.Errorf("%s %#v: %v (not a registry error)", cmd, args, err)
		}
	}
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
				if mode := rng.IntN(3); mode == 2 {
					// A request its handler ran when probed, its arrays
					// and numbers drawn again, now and then with one more
					// argument: most get past the checks, so the handlers'
					// work itself runs concurrently.
					cmd, args := fz.validLike(rng)
					gate.RLock()
					err := fz.send(t, cmd, args, nil)
					gate.RUnlock()
					tally(w, "valid", cmd, args, err)
					continue
				} else if mode == 1 {
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
				tally(w, "bytes", cmd, args, err)
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

// validLike returns one of fz.valid's requests with its arrays' names and
// its small numbers drawn again from the base arrays and 0..7, and one time
// in four one more argument the command takes (an array's name or a
// number; not "out": writes in place do not lock, so a reader racing one
// is a race by design, docs/protocol.md).
func (fz *fuzzServer) validLike(rng *rand.Rand) (string, map[string]any) {
	cmds := make([]string, 0, len(fz.valid))
	for cmd := range fz.valid {
		cmds = append(cmds, cmd)
	}
	slices.Sort(cmds)
	cmd := cmds[rng.IntN(len(cmds))]
	bases := fz.names[:len(fz.base)] // (sorted base names first: see newFuzzServer)
	args := map[string]any{}
	for k, v := range fz.valid[cmd] {
		switch v.(type) {
		case string:
			v = bases[rng.IntN(len(bases))]
		case int64:
			v = int64(rng.IntN(8))
		}
		args[k] = v
	}
	if keys := fz.cmdKeys[cmd]; len(keys) > 0 && rng.IntN(4) == 0 {
		if k := keys[rng.IntN(len(keys))]; k != "out" && args[k] == nil {
			if rng.IntN(2) == 0 {
				args[k] = bases[rng.IntN(len(bases))]
			} else {
				args[k] = int64(rng.IntN(8))
			}
		}
	}
	return cmd, args
}

package client_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// crashData is the content of the array uploaded as name: a function of the
// name alone, so a restored array can be checked bit for bit.
func crashData(name string, n int) []int64 {
	r := rand.New(rand.NewPCG(uint64(len(name)), 0))
	for _, b := range []byte(name) {
		r = rand.New(rand.NewPCG(r.Uint64()^uint64(b), 1))
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(r.Uint64())
	}
	return out
}

// TestCheckpointSurvivesSIGKILL: a server saving --checkpoint every 40 ms
// while a client uploads (and asks for checkpoints) is killed with SIGKILL
// at a random moment, eight times over one directory. After each restart
// every array that a completed checkpoint request had saved is there, every
// array there is bit for bit what was uploaded under its name, and no
// partial checkpoint is ever loaded.
func TestCheckpointSurvivesSIGKILL(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	seed := testserver.StressSeed(t)
	r := rand.New(rand.NewPCG(seed, 7))
	saved := map[string]bool{} // confirmed by a completed checkpoint request
	uploaded := map[string]int{}
	for round := range 8 {
		srv := testserver.Start(t, "--checkpoint", ckpt, "--checkpoint-interval", "40ms")
		c := dial(t, srv.URL)
		// What the last confirmed checkpoint held came back, bit for bit.
		infos, err := c.List(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, a := range infos {
			have[a.Name] = true
			n, ok := uploaded[a.Name]
			if !ok {
				t.Fatalf("round %d: restored %q, which was never uploaded", round, a.Name)
			}
			got, err := client.Download[int64](ctxT(t), c, a.Name)
			if err != nil || !slices.Equal(got, crashData(a.Name, n)) {
				t.Fatalf("round %d (seed %d): %q restored with other bytes (%v)", round, seed, a.Name, err)
			}
		}
		for name := range saved {
			if !have[name] {
				t.Fatalf("round %d (seed %d): %q, saved by a completed checkpoint, is missing after SIGKILL", round, seed, name)
			}
		}
		for name := range uploaded {
			if !have[name] {
				delete(uploaded, name) // uploaded after the last checkpoint: lost, as documented
			}
		}
		// Uploads and checkpoints until a SIGKILL at a random moment.
		kill := time.Duration(20+r.IntN(200)) * time.Millisecond
		timer := time.AfterFunc(kill, func() { srv.Cmd.Process.Signal(syscall.SIGKILL) })
		for i := 0; ; i++ {
			name := fmt.Sprintf("r%d_%d", round, i)
			n := 1 + r.IntN(200_000)
			if _, err := client.Upload(ctxT(t), c, crashData(name, n), client.WithName(name)); err != nil {
				break // killed
			}
			uploaded[name] = n
			if i%3 == 2 {
				if _, err := c.Checkpoint(ctxT(t), false); err != nil {
					break
				}
				for k := range uploaded {
					saved[k] = true
				}
			}
		}
		timer.Stop()
		srv.Wait(10 * time.Second)
		c.Close()
	}
}

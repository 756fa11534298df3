package client_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// TestRacingClients: clients of every transport (lane or ZeroMQ;
// stream, frames or auto; shared memory or not) run random requests side
// by side on a few shared names against a server built with the race
// detector, at a --max-streams the clients exceed and a --max-memory they
// reach. Every array is uploaded with all its elements equal to a tag no
// other upload uses, so a download or view must come back uniform with a
// tag uploaded under that name (a torn or mixed-up transfer does not), or
// be refused with a registry error that the race explains (a name deleted
// or taken meanwhile, memory full). In-place writes go to each client's
// own array: they do not lock (docs/operations.md), so racing them with
// readers of a shared name is a race by design, which the detector reports
// and slows to a crawl (a 2.1 M-element add in place took over 40 s). At
// the end the server has found no data race (it exits 0, not 66) and
// caught no panic, and once every name is deleted it holds no memory
// (every reservation was given back). Seeded: a failure names the seed
// (ARKTOS_STRESS_SEED repeats it).
func TestRacingClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := testserver.StartBinary(t, testserver.RaceBinary(t), "--max-streams", "5", "--max-memory", "96MiB", "--workers", "2")
	seed := testserver.StressSeed(t)
	const names = 6
	opts := [][]client.Option{
		{},
		{client.WithLane(false)},
		{client.WithTransport(client.TransportFrames)},
		{client.WithSharedMemory(false), client.WithStreamNetwork("tcp")},
		{client.WithTransport(client.TransportStream)},
		{client.WithSharedMemory(false)},
	}
	var (
		mu   sync.Mutex
		tags = map[string]map[int64]bool{} // every tag uploaded under a name
	)
	uploaded := func(name string, tag int64) {
		mu.Lock()
		defer mu.Unlock()
		if tags[name] == nil {
			tags[name] = map[int64]bool{}
		}
		tags[name][tag] = true
	}
	known := func(name string, tag int64) bool {
		mu.Lock()
		defer mu.Unlock()
		return tags[name][tag]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	deadline := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	counts := make([]map[string]int, len(opts))
	for w, o := range opts {
		c := dial(t, srv.URL, o...)
		counts[w] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			// allowed reports whether err is a refusal the race explains.
			allowed := func(op string, err error) bool {
				if errors.Is(err, context.DeadlineExceeded) {
					// A hang: the server's goroutines go to its log, which
					// the failed test prints.
					srv.Cmd.Process.Signal(syscall.SIGQUIT)
				}
				var te *transfer.Error
				if !errors.As(err, &te) {
					t.Errorf("client %d, %s: %v (not a server error)", w, op, err)
					return false
				}
				switch te.Code {
				case transfer.UnknownArray, transfer.NameInUse, transfer.OutOfMemory, transfer.TooManyStreams:
					counts[w][op+" "+te.Code.String()]++
					return true
				case transfer.ArgumentValue:
					if op == "binop" && strings.Contains(te.Message, "could not be broadcast") {
						counts[w][op+" sizes"]++
						return true // the two arrays' sizes differ
					}
				}
				t.Errorf("client %d, %s: %v", w, op, err)
				return false
			}
			uniform := func(op, name string, xs []int64) {
				if len(xs) == 0 {
					t.Errorf("client %d, %s of %s: empty", w, op, name)
					return
				}
				for i, x := range xs {
					if x != xs[0] {
						t.Errorf("client %d, %s of %s: element %d is %d, element 0 %d: a mixed array", w, op, name, i, x, xs[0])
						return
					}
				}
				if !known(name, xs[0]) {
					t.Errorf("client %d, %s of %s: tag %d was never uploaded under that name", w, op, name, xs[0])
				}
			}
			sizes := []int{1, 100, 40_000, 200_000, 2_100_000} // to 16 MiB: lane, frames, stream, lease
			for i := int64(0); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				name := fmt.Sprint("n", rng.IntN(names))
				ops := [...]string{"upload", "upload", "download", "download", "view", "delete", "reduce", "binop", "inplace", "groupby", "aggregate", "list"}
				op := ops[rng.IntN(len(ops))]
				counts[w][op]++
				switch op {
				case "upload":
					tag := int64(w)<<40 | i
					xs := make([]int64, sizes[rng.IntN(len(sizes))])
					for j := range xs {
						xs[j] = tag
					}
					uploaded(name, tag) // before: a download may see it as soon as it is stored
					if _, err := client.Upload(ctx, c, xs, client.WithName(name)); err != nil {
						allowed(op, err)
					}
				case "download":
					if xs, err := client.Download[int64](ctx, c, name); err != nil {
						allowed(op, err)
					} else {
						uniform(op, name, xs)
					}
				case "view":
					v, err := client.DownloadView[int64](ctx, c, name)
					if err != nil {
						allowed(op, err)
						break
					}
					uniform(op, name, v.Data)
					v.Close()
				case "delete":
					if err := c.Delete(ctx, name); err != nil {
						allowed(op, err)
					}
				case "reduce":
					lo, _, err1 := c.Reduce(ctx, "min", name)
					hi, _, err2 := c.Reduce(ctx, "max", name)
					if err1 != nil || err2 != nil {
						allowed(op, errors.Join(err1, err2))
					} else if lo != hi && known(name, lo.(int64)) && known(name, hi.(int64)) {
						counts[w]["reduce replaced"]++ // deleted and uploaded again between the two
					} else if lo != hi {
						t.Errorf("client %d, min %v and max %v of %s: not one uploaded tag", w, lo, hi, name)
					}
				case "binop":
					other := fmt.Sprint("n", rng.IntN(names))
					info, err := c.Binop(ctx, "-", client.Arr(name), client.Arr(other))
					if err != nil {
						allowed(op, err)
						break
					}
					if err := c.Delete(ctx, info.Name); err != nil {
						t.Errorf("client %d: delete the binop's result: %v", w, err)
					}
				case "inplace":
					// Writes every element of the client's own array (with
					// its own value: in-place writes do not lock, and a
					// concurrent reader may see them half done, as
					// documented), beside the others' transfers; then the
					// client reads it back.
					own := fmt.Sprint("own", w)
					var te *transfer.Error
					if _, err := client.Upload(ctx, c, []int64{int64(w), int64(w)}, client.WithName(own)); err != nil && !(errors.As(err, &te) && te.Code == transfer.NameInUse) {
						allowed(op, err) // (memory full, or no stream for TransportStream)
						break
					}
					if err := c.BinopInPlace(ctx, "+", client.Arr(own), client.Scalar[int64](0), own); err != nil {
						t.Errorf("client %d: in-place write to its own array: %v", w, err)
						break
					}
					v, err := client.DownloadView[int64](ctx, c, own)
					if err != nil {
						allowed(op, err)
						break
					}
					if len(v.Data) != 2 || v.Data[0] != int64(w) || v.Data[1] != int64(w) {
						t.Errorf("client %d: its own array after an in-place write: %v", w, v.Data)
					}
					v.Close()
				case "aggregate":
					g, err := c.GroupByAggregate(ctx, []string{name}, []string{"sum"}, []string{name}, 0)
					if err != nil {
						allowed(op, err)
						break
					}
					made := []string{}
					for _, a := range append(g.Keys, g.Arrays...) {
						made = append(made, a.Name)
					}
					if g.Group != nil {
						made = append(made, g.Group.IDs.Name)
					}
					if err := c.Delete(ctx, made...); err != nil {
						t.Errorf("client %d: delete the aggregation's arrays: %v", w, err)
					}
				case "groupby":
					g, err := c.NewGroupBy(ctx, []string{name})
					if err != nil {
						allowed(op, err)
						break
					}
					if g.NGroups != 1 {
						t.Errorf("client %d: %d groups of the uniform %s", w, g.NGroups, name)
					}
					var made []string
					made = append(made, g.IDs.Name)
					for _, k := range g.Keys {
						made = append(made, k.Name)
					}
					if err := c.Delete(ctx, made...); err != nil {
						t.Errorf("client %d: delete the grouping's arrays: %v", w, err)
					}
				case "list":
					if _, err := c.List(ctx); err != nil {
						t.Errorf("client %d: list: %v", w, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for w, m := range counts {
		t.Logf("client %d: %v", w, m)
	}
	c := dial(t, srv.URL)
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if err := c.Delete(ctx, a.Name); err != nil {
			t.Error(err)
		}
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := c.MemUsed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st["panics"] != 0 {
		t.Errorf("the server caught %d panics", st["panics"])
	}
	if mem.Used != 0 {
		t.Errorf("%d bytes still held with no array stored: a reservation was not given back (%+v)", mem.Used, mem)
	}
	if st["streams_refused"] == 0 {
		t.Logf("no stream was refused at --max-streams this run")
	}
	c.Close()
	// A server built with -race exits 66 when it found a race; its log
	// (read once it has exited) says where.
	srv.Cmd.Process.Signal(syscall.SIGTERM)
	if err, ok := srv.Wait(20 * time.Second); !ok || err != nil || strings.Contains(srv.Log.String(), "DATA RACE") {
		t.Errorf("the server's exit: %v (exited %v)\n%s", err, ok, srv.Log.String())
	}
}

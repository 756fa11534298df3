package client_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestLocales drives a coordinator of 3 locales (built with the race
// detector) from the Go client: transfers of lengths that leave blocks
// uneven or empty, elementwise work, reductions, creation, delete, and a
// command that does not run across locales yet; several goroutines at
// once, so the coordinator's own concurrency is raced too.
func TestLocales(t *testing.T) {
	srv := testserver.StartBinary(t, testserver.RaceBinary(t), "--locales", "3", "--max-memory", "256MiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	if res, err := c.Op(ctx, "get_config", map[string]any{}); err != nil || res["num_locales"] != int8(3) && res["num_locales"] != int64(3) {
		t.Fatalf("get_config num_locales = %v (%T) %v", res["num_locales"], res["num_locales"], err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range []int{0, 1, 2, 5, 1001, 30_011 + g} {
				x := make([]int8, n)
				var want int64
				for i := range x {
					x[i] = int8(i*7 + g)
					want += int64(x[i])
				}
				a, err := client.Upload(ctx, c, x)
				if err != nil {
					errs <- err
					return
				}
				back, err := client.Download[int8](ctx, c, a.Name)
				if err != nil || !slices.Equal(back, x) {
					errs <- errors.Join(err, errors.New("int8 round trip differs"))
					return
				}
				b, err := c.Binop(ctx, "+", client.Arr(a.Name), client.Arr(a.Name))
				if err != nil || b.DType != pdarray.Int8 || b.Size != n {
					errs <- errors.Join(err, errors.New("a + a"))
					return
				}
				sum, dt, err := c.Reduce(ctx, "sum", a.Name)
				if err != nil || dt != pdarray.Int64 || sum.(int64) != want {
					errs <- errors.Join(err, errors.New("sum"))
					return
				}
				if err := c.Delete(ctx, a.Name, b.Name); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r, err := c.Arange(ctx, int64(-5), int64(100), int64(3))
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Download[int64](ctx, c, r.Name)
	if err != nil || len(got) != 35 || got[0] != -5 || got[34] != 97 {
		t.Errorf("arange(-5, 100, 3) = %v %v", got, err)
	}
	if idx, _, err := c.Reduce(ctx, "argmax", r.Name); err != nil || idx.(int64) != 34 {
		t.Errorf("argmax = %v %v", idx, err)
	}
	// The exchange (a range partition between the locales' processes):
	// sort, and a group-by of 20,011 rows by a key of 7 values.
	keys := make([]int64, 20_011)
	vals := make([]float64, len(keys))
	sums := map[int64]float64{}
	for i := range keys {
		keys[i] = int64((i * 7919) % 7)
		vals[i] = float64(i) / 3
		sums[keys[i]] += vals[i]
	}
	k, err := client.Upload(ctx, c, keys)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Upload(ctx, c, vals)
	if err != nil {
		t.Fatal(err)
	}
	sorted, err := c.Sort(ctx, k.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := client.Download[int64](ctx, c, sorted.Name); err != nil || !slices.IsSorted(got) || len(got) != len(keys) {
		t.Errorf("sort: %v (%d of %d)", err, len(got), len(keys))
	}
	agg, err := c.GroupByAggregate(ctx, []string{k.Name}, []string{"sum"}, []string{v.Name}, 0)
	if err != nil {
		t.Fatal(err)
	}
	uk, _ := client.Download[int64](ctx, c, agg.Keys[0].Name)
	us, _ := client.Download[float64](ctx, c, agg.Arrays[0].Name)
	if !slices.Equal(uk, []int64{0, 1, 2, 3, 4, 5, 6}) || len(us) != 7 {
		t.Fatalf("groupby keys %v sums %v", uk, us)
	}
	for i, key := range uk {
		if us[i] != sums[key] { // rows in row order, as one process adds them
			t.Errorf("group %d: sum %v, want %v", key, us[i], sums[key])
		}
	}
	// A gather by a reversed index (every row to another locale and back)
	// and a mask.
	rev := make([]int64, len(keys))
	for i := range rev {
		rev[i] = int64(len(keys) - 1 - i)
	}
	ri, err := client.Upload(ctx, c, rev)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Take(ctx, v.Name, ri.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := client.Download[float64](ctx, c, g.Name); err != nil || len(got) != len(vals) || got[0] != vals[len(vals)-1] || got[len(got)-1] != vals[0] {
		t.Errorf("take by a reversed index: %v", err)
	}
	isZero, err := c.Binop(ctx, "==", client.Arr(k.Name), client.Scalar(int64(0)))
	if err != nil {
		t.Fatal(err)
	}
	z, err := c.Compress(ctx, k.Name, isZero.Name)
	if err != nil || z.Size != countZero(keys) {
		t.Errorf("compress: %+v %v", z, err)
	}
	if err := c.Delete(ctx, ri.Name, g.Name, isZero.Name, z.Name); err != nil {
		t.Fatal(err)
	}
	_, err = c.Coargsort(ctx, r.Name, r.Name)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.NotDistributed || !strings.Contains(te.Message, "'coargsort'") {
		t.Errorf("coargsort on locales: %v", err)
	}
	if err := c.Delete(ctx, k.Name, v.Name, sorted.Name, agg.Keys[0].Name, agg.Arrays[0].Name); err != nil {
		t.Fatal(err)
	}
	if list, err := c.List(ctx); err != nil || len(list) != 1 || list[0].Name != r.Name || list[0].Size != 35 {
		t.Errorf("list = %v %v", list, err)
	}
	// Every block of what was deleted is gone from every locale (the
	// locales' deletes run in the background), and the exchange's
	// scratch too: what is left is arange's 35 int64.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mem, err := c.MemUsed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mem.Used == 35*8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory used %d, want %d", mem.Used, 35*8)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A clean stop (which stops the locales), then the log: read only once
	// the process has exited and its output is all copied.
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err, ok := srv.Wait(30 * time.Second); !ok || err != nil {
		t.Fatalf("the coordinator did not stop cleanly: %v (stopped %v)", err, ok)
	}
	if strings.Contains(srv.Log.String(), "DATA RACE") {
		t.Errorf("the coordinator raced:\n%s", srv.Log.String())
	}
}

// TestLocalesArrayLargerThanAnyLocale: 3 locales of 48 MiB hold, group
// and give back a 64 MiB array that no one of them could: the Go client
// uploads and downloads it straight to and from every locale (locate,
// each block over its locale's own connection, adopt), and an upload past
// all of them is refused with the limit named, leaving nothing stored.
func TestLocalesArrayLargerThanAnyLocale(t *testing.T) {
	srv := testserver.StartBinary(t, testserver.RaceBinary(t), "--locales", "3", "--max-memory", "48MiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	const n = 8 << 20 // 64 MiB of int64
	x := make([]int64, n)
	var want [7]int64
	for i := range x {
		x[i] = int64(i) * 5
		want[i%7] += x[i]
	}
	up, down := client.LocaleDirectUploads(), client.LocaleDirectDownloads()
	a, err := client.Upload(ctx, c, x)
	if err != nil {
		t.Fatal(err)
	}
	back, err := client.Download[int64](ctx, c, a.Name)
	if err != nil || !slices.Equal(back, x) {
		t.Fatalf("round trip differs (%v)", err)
	}
	if client.LocaleDirectUploads() != up+1 || client.LocaleDirectDownloads() != down+1 {
		t.Errorf("direct transfers: %d uploads, %d downloads, want 1 each", client.LocaleDirectUploads()-up, client.LocaleDirectDownloads()-down)
	}
	back = nil
	// Group it by i % 7 (an integer sum merges partial results: only 7
	// rows per locale move).
	k, err := c.Binop(ctx, "%", client.Arr(a.Name), client.Scalar(int64(35)))
	if err != nil {
		t.Fatal(err)
	}
	agg, err := c.GroupByAggregate(ctx, []string{k.Name}, []string{"sum"}, []string{a.Name}, 0)
	if err != nil {
		t.Fatal(err)
	}
	uk, _ := client.Download[int64](ctx, c, agg.Keys[0].Name)
	us, _ := client.Download[int64](ctx, c, agg.Arrays[0].Name)
	if !slices.Equal(uk, []int64{0, 5, 10, 15, 20, 25, 30}) || !slices.Equal(us, want[:]) {
		t.Errorf("groupby keys %v sums %v, want %v", uk, us, want)
	}
	before, _ := c.List(ctx)
	_, err = client.Upload(ctx, c, make([]int64, 3*n))
	if err == nil || !strings.Contains(err.Error(), "48.0 MiB") {
		t.Errorf("an upload past every locale: %v", err)
	}
	if after, _ := c.List(ctx); len(after) != len(before) {
		t.Errorf("the refused upload left %d arrays, %d before", len(after), len(before))
	}
}

func countZero(x []int64) int {
	n := 0
	for _, v := range x {
		if v == 0 {
			n++
		}
	}
	return n
}

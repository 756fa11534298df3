package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

func dial(t testing.TB, url string, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// randomBytes fills n elements of dt with random bytes, then puts the edge
// values (NaN with payload, ±Inf, -0, min/max ints) at the front.
func randomArray(dt pdarray.DType, n int, seed uint64) *pdarray.Array {
	a, _ := pdarray.Alloc(dt, n)
	b := a.Bytes()
	r := rand.NewChaCha8([32]byte{byte(seed), byte(dt)})
	r.Read(b)
	switch dt {
	case pdarray.Bool:
		for i := range b {
			b[i] &= 1
		}
	case pdarray.Float64:
		edge := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64, math.Float64frombits(0x7ff8dead0000beef)}
		copy(pdarray.View[float64](a), edge)
	case pdarray.Float32:
		edge := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.Float32frombits(0x7fc0beef)}
		copy(pdarray.View[float32](a), edge)
	case pdarray.Int64:
		copy(pdarray.View[int64](a), []int64{math.MinInt64, math.MaxInt64, -1, 0})
	case pdarray.Uint64:
		copy(pdarray.View[uint64](a), []uint64{math.MaxUint64, 0})
	case pdarray.Int8:
		copy(pdarray.View[int8](a), []int8{math.MinInt8, math.MaxInt8})
	case pdarray.Int32:
		copy(pdarray.View[int32](a), []int32{math.MinInt32, math.MaxInt32})
	}
	return a
}

// TestRoundTripEveryDType: every dtype, sizes 0, 1, 1000 and 10,000,003 (not
// a multiple of the 1 MiB frame size), bit-exact both ways.
func TestRoundTripEveryDType(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1MiB", "--max-memory", "4GiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	for _, dt := range pdarray.DTypes() {
		for _, n := range []int{0, 1, 1000, 10_000_003} {
			if n == 10_000_003 && dt.Size() > 1 && testing.Short() {
				continue
			}
			t.Run(fmt.Sprintf("dtype=%v/n=%d", dt, n), func(t *testing.T) {
				a := randomArray(dt, n, uint64(n))
				info, err := client.UploadArray(ctx, c, a)
				if err != nil {
					t.Fatal(err)
				}
				if info.DType != dt || info.Size != n || info.NBytes != a.NBytes() {
					t.Fatalf("info %+v", info)
				}
				back, err := client.DownloadArray(ctx, c, info.Name)
				if err != nil {
					t.Fatal(err)
				}
				if back.DType() != dt || !bytes.Equal(back.Bytes(), a.Bytes()) {
					t.Fatal("round trip is not bit-exact")
				}
				if err := c.Delete(ctx, info.Name); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestTypedAPIAndRanges(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	xs := []float64{1.5, math.NaN(), -2, 7}
	info, err := client.Upload(ctx, c, xs, client.WithName("fares"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "fares" {
		t.Fatalf("name %q", info.Name)
	}
	got, err := client.Download[float64](ctx, c, "fares")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdarray.AsBytes(got), pdarray.AsBytes(xs)) {
		t.Fatalf("got %v", got)
	}
	mid, err := client.DownloadRange[float64](ctx, c, "fares", 1, 3)
	if err != nil || len(mid) != 2 || mid[1] != -2 {
		t.Fatalf("range: %v %v", mid, err)
	}
	if _, err := client.Download[int64](ctx, c, "fares"); err == nil {
		t.Fatal("downloading a float64 array as int64 must fail")
	}
	_, err = client.DownloadRange[float64](ctx, c, "fares", 3, 5)
	wantCode(t, err, transfer.IndexOutOfRange, "outside array 'fares' of length 4")
	_, err = client.Upload(ctx, c, []bool{true}, client.WithName("fares"))
	wantCode(t, err, transfer.NameInUse, "'fares' already exists")
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "fares" || list[0].NBytes != 32 {
		t.Fatalf("list %+v %v", list, err)
	}
	mem, err := c.MemUsed(ctx)
	if err != nil || mem.Used != 32 || mem.Arrays != 1 || mem.Free != mem.Limit-32 {
		t.Fatalf("mem %+v %v", mem, err)
	}
	err = c.Delete(ctx, "fares", "nope")
	wantCode(t, err, transfer.UnknownArray, "nothing was deleted")
	if _, err := c.Info(ctx, "fares"); err != nil {
		t.Fatal("an all-or-nothing delete removed an array:", err)
	}
	if err := c.Delete(ctx, "fares"); err != nil {
		t.Fatal(err)
	}
	if mem, _ := c.MemUsed(ctx); mem.Used != 0 {
		t.Fatalf("used %d after delete", mem.Used)
	}
}

func wantCode(t *testing.T, err error, code transfer.Code, substr string) {
	t.Helper()
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("got %v, want %v", err, code)
	}
	if !bytes.Contains([]byte(te.Message), []byte(substr)) {
		t.Fatalf("message %q does not contain %q", te.Message, substr)
	}
}

// TestConcurrentClients: eight clients upload and download at once and each
// gets its own data back.
func TestConcurrentClients(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "256KiB")
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Dial(ctx, srv.URL)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for round := range 5 {
				a := randomArray(pdarray.Int64, 100_000+i*1000+round, uint64(i*10+round))
				info, err := client.UploadArray(ctx, c, a, client.WithName(fmt.Sprintf("c%d_r%d", i, round)))
				if err != nil {
					errs <- err
					return
				}
				back, err := client.DownloadArray(ctx, c, info.Name)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(back.Bytes(), a.Bytes()) {
					errs <- fmt.Errorf("client %d round %d got someone else's bytes", i, round)
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
}

// TestCopyCounters proves each transfer path is the one taken and copies
// what it should: in ZeroMQ frames, the server copies an upload's bytes
// exactly once (frames → final buffer) and a download's once (buffer →
// libzmq); over a bulk stream (unix or TCP) it copies none in user space,
// the kernel moving them straight between the socket and the array. No
// received message is left unfreed.
func TestCopyCounters(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1MiB")
	ctx := ctxT(t)
	a := randomArray(pdarray.Float64, 3_000_001, 1)
	n := int64(a.NBytes())
	cases := []struct {
		name                     string
		opts                     []client.Option
		network                  string
		copied, inPlace, streamd int64
	}{
		{"frames", []client.Option{client.WithTransport(client.TransportFrames)}, "", n, n, 0},
		{"stream-unix", []client.Option{client.WithSharedMemory(false)}, "unix", 0, 0, n},
		{"stream-tcp", []client.Option{client.WithTransport(client.TransportStream), client.WithStreamNetwork("tcp")}, "tcp", 0, 0, n},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, srv.URL, tc.opts...)
			before, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			info, err := client.UploadArray(ctx, c, a)
			if err != nil {
				t.Fatal(err)
			}
			uninit := pdarray.UninitAllocs.Load()
			hits, _, _ := client.DownloadPoolStats()
			back, err := client.DownloadArray(ctx, c, info.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Bytes(), a.Bytes()) {
				t.Fatal("round trip is not bit-exact")
			}
			if h, _, _ := client.DownloadPoolStats(); pdarray.UninitAllocs.Load() == uninit && h == hits {
				t.Error("the download cleared its new memory before writing over it")
			}
			after, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d := func(k string) int64 { return after[k] - before[k] }
			// Frames in: one copy into the array; out: libzmq reads the array in place.
			if d("bytes_copied_in") != tc.copied || d("bytes_copied_out") != 0 || d("bytes_zero_copy_out") != tc.inPlace {
				t.Errorf("server copied %d in, %d out, sent %d in place; want %d, 0, %d", d("bytes_copied_in"), d("bytes_copied_out"), d("bytes_zero_copy_out"), tc.copied, tc.inPlace)
			}
			if d("bytes_stream_in") != tc.streamd || d("bytes_stream_out") != tc.streamd {
				t.Errorf("server streamed %d in, %d out; want %d each", d("bytes_stream_in"), d("bytes_stream_out"), tc.streamd)
			}
			if got := c.StreamNetwork(); got != tc.network {
				t.Errorf("stream network %q, want %q", got, tc.network)
			}
			if after["frames_held"] > 1 { // the stats request itself, unless it came over the lane
				t.Errorf("server holds %d received messages, want at most 1", after["frames_held"])
			}
			c.Delete(ctx, info.Name)
		})
	}
}

// TestPoolReuse: an upload after deleting an array of about the same size
// lands in the deleted array's buffer (already faulted in), bit-exactly.
func TestPoolReuse(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL, client.WithSharedMemory(false)) // the stream path: shm segments are never pooled
	ctx := ctxT(t)
	a := randomArray(pdarray.Int64, 1_000_000, 5)
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Stats(ctx)
	b := randomArray(pdarray.Int64, 999_000, 6)
	info, err = client.UploadArray(ctx, c, b)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := c.Stats(ctx)
	if after["pool_hits"] != before["pool_hits"]+1 {
		t.Fatalf("pool hits %d → %d: the freed buffer was not reused", before["pool_hits"], after["pool_hits"])
	}
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil || !bytes.Equal(back.Bytes(), b.Bytes()) {
		t.Fatal("an upload into a reused buffer is not bit-exact:", err)
	}
	mem, _ := c.MemUsed(ctx)
	if mem.Used != int64(b.NBytes()) {
		t.Fatalf("used %d, want %d", mem.Used, b.NBytes())
	}
}

func TestDownloadInto(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	for _, tr := range []client.Transport{client.TransportFrames, client.TransportStream} {
		c := dial(t, srv.URL, client.WithTransport(tr))
		xs := make([]float64, 2_000_000)
		for i := range xs {
			xs[i] = float64(i) / 3
		}
		info, err := client.Upload(ctx, c, xs)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, len(xs)+10)
		n, err := client.DownloadInto(ctx, c, info.Name, dst)
		if err != nil || n != len(xs) || !bytes.Equal(pdarray.AsBytes(dst[:n]), pdarray.AsBytes(xs)) {
			t.Fatalf("transport %v: n=%d err=%v", tr, n, err)
		}
		if _, err := client.DownloadInto(ctx, c, info.Name, dst[:10]); err == nil {
			t.Fatalf("transport %v: a too-small destination was accepted", tr)
		}
		// The connection still works after the refused destination.
		if n, err := client.DownloadInto(ctx, c, info.Name, dst); err != nil || n != len(xs) {
			t.Fatalf("transport %v after a refused destination: %v", tr, err)
		}
	}
}

// TestRename: an array renamed keeps its bytes, its old name is gone, and a
// refused rename (unknown array, taken or empty name) changes nothing.
func TestRename(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	xs := []float64{1.5, math.NaN(), -2, 7}
	up, err := client.Upload(ctx, c, xs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Upload(ctx, c, []int32{4, 5}, client.WithName("taken")); err != nil {
		t.Fatal(err)
	}
	info, err := c.Rename(ctx, up.Name, "fares")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "fares" || info.Size != 4 || info.DType != pdarray.Float64 || info.NBytes != 32 {
		t.Fatalf("renamed info %+v", info)
	}
	got, err := client.Download[float64](ctx, c, "fares")
	if err != nil || len(got) != 4 || math.Float64bits(got[1]) != math.Float64bits(xs[1]) || got[3] != 7 {
		t.Fatalf("after rename: %v %v", got, err)
	}
	_, err = c.Info(ctx, up.Name)
	wantCode(t, err, transfer.UnknownArray, up.Name)
	if info, err := c.Rename(ctx, "fares", "fares"); err != nil || info.Name != "fares" {
		t.Fatalf("rename to its own name: %+v %v", info, err)
	}

	_, err = c.Rename(ctx, "fares", "taken")
	wantCode(t, err, transfer.NameInUse, "nothing was renamed")
	_, err = c.Rename(ctx, "nope", "other")
	wantCode(t, err, transfer.UnknownArray, "'nope'")
	_, err = c.Rename(ctx, "fares", "")
	wantCode(t, err, transfer.ArgumentValue, "new_name is empty")
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "fares" || list[1].Name != "taken" {
		t.Fatalf("after refused renames: %+v %v", list, err)
	}
	if kept, err := client.Download[int32](ctx, c, "taken"); err != nil || len(kept) != 2 || kept[1] != 5 {
		t.Fatalf("'taken' changed: %v %v", kept, err)
	}
	if mem, err := c.MemUsed(ctx); err != nil || mem.Used != 32+8 || mem.Arrays != 2 {
		t.Fatalf("mem after renames %+v %v", mem, err)
	}
}

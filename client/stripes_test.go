package client_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestStripedTransfers: over TCP streams, an array of StripeThreshold bytes
// or more goes up and comes down striped over DefaultStripes streams
// (striped_in, striped_out), bit for bit, by Download and DownloadInto; a
// smaller one, and any with WithStripes(1), on one stream.
func TestStripedTransfers(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	big := randomArray(pdarray.Float64, client.StripeThreshold/8+12345, 3) // not a multiple of 4 KiB
	small := randomArray(pdarray.Int64, 100_000, 4)
	for _, tc := range []struct {
		name    string
		stripes int
		a       *pdarray.Array
		striped bool
	}{
		{"default", 0, big, true},
		{"small", 0, small, false},
		{"one", 1, big, false},
		{"sixteen", 16, big, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []client.Option{client.WithTransport(client.TransportStream), client.WithStreamNetwork("tcp")}
			if tc.stripes != 0 {
				opts = append(opts, client.WithStripes(tc.stripes))
			}
			c := dial(t, srv.URL, opts...)
			before, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			info, err := client.UploadArray(ctx, c, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			back, err := client.DownloadArray(ctx, c, info.Name)
			if err != nil || !bytes.Equal(back.Bytes(), tc.a.Bytes()) {
				t.Fatalf("round trip: %v, bit-exact %v", err, err == nil && bytes.Equal(back.Bytes(), tc.a.Bytes()))
			}
			into := make([]float64, tc.a.Len())
			if tc.a.DType() == pdarray.Float64 {
				if _, err := client.DownloadInto(ctx, c, info.Name, into); err != nil || !bytes.Equal(pdarray.AsBytes(into), tc.a.Bytes()) {
					t.Fatalf("DownloadInto: %v", err)
				}
			} else if _, err := client.Download[int64](ctx, c, info.Name); err != nil {
				t.Fatal(err)
			}
			after, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			in, out := after["striped_in"]-before["striped_in"], after["striped_out"]-before["striped_out"]
			want := int64(0)
			if tc.striped {
				want = 1
			}
			if in != want || out != 2*want {
				t.Fatalf("striped %d uploads and %d downloads, want %d and %d", in, out, want, 2*want)
			}
			if tc.striped && tc.stripes == 16 && after["streams_open"] < 16 {
				t.Fatalf("%d streams open, want the 16 stripes'", after["streams_open"])
			}
		})
	}
}

// TestStripesRefused: stripes that name no stream, the transfer's own,
// one twice or shared memory are refused with a message that says so, and
// the client's next transfers work.
func TestStripesRefused(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL)
	info, err := client.Upload(ctx, c, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args map[string]any
		code transfer.Code
		msg  string
	}{
		{map[string]any{"name": info.Name, "stripes": []any{5}}, transfer.MissingArgument, "need the transfer's own 'stream'"},
		{map[string]any{"dtype": "int64", "size": 3, "stripes": []any{5}}, transfer.MissingArgument, "need the transfer's own 'stream'"},
		{map[string]any{"name": info.Name, "stream": 7, "stripes": []any{7}}, transfer.ArgumentValue, "twice, or the transfer's own"},
		{map[string]any{"name": info.Name, "stream": 7, "stripes": []any{8, 8}}, transfer.ArgumentValue, "twice"},
		{map[string]any{"name": info.Name, "stream": 7, "shm": true, "stripes": []any{8}}, transfer.ArgumentValue, "drop one of them"},
		{map[string]any{"name": info.Name, "stream": 7, "stripes": "8"}, transfer.ArgumentType, "stripes"},
	} {
		cmd := "download"
		if _, ok := tc.args["dtype"]; ok {
			cmd = "upload"
		}
		rep, m, err := c.Call(ctx, cmd, tc.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		wantCode(t, rep.Err(), tc.code, tc.msg)
	}
	if back, err := client.Download[int64](ctx, c, info.Name); err != nil || len(back) != 3 {
		t.Fatal("after the refusals:", back, err)
	}
}

// TestStripedAbandoned: a striped upload and a striped download cut short
// by the client's deadline leave nothing held on the server (the upload's
// reservation, the download's array lock), and the client's next striped
// transfers open new streams and are bit for bit.
func TestStripedAbandoned(t *testing.T) {
	srv := testserver.Start(t)
	ctx := ctxT(t)
	c := dial(t, srv.URL, client.WithTransport(client.TransportStream), client.WithStreamNetwork("tcp"))
	a := randomArray(pdarray.Int64, 64<<20, 5) // 512 MiB
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	_, err := client.UploadArray(short, c, a)
	cancel()
	if err == nil {
		t.Skip("a 512 MiB upload finished within 5ms")
	}
	waitFor(t, "the abandoned upload's bytes freed", func() bool {
		mem, err := c.MemUsed(ctx)
		return err == nil && mem.Used == 0 && mem.Arrays == 0
	})
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal("upload after an abandoned one:", err)
	}
	short, cancel = context.WithTimeout(ctx, 5*time.Millisecond)
	_, err = client.DownloadArray(short, c, info.Name)
	cancel()
	if err == nil {
		t.Skip("a 512 MiB download finished within 5ms")
	}
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first download opens a new stream, of a size not known yet: the
	// stripes are opened after it, for the second.
	for range 2 {
		back, err := client.DownloadArray(ctx, c, info.Name)
		if err != nil || !bytes.Equal(back.Bytes(), a.Bytes()) {
			t.Fatal("download after an abandoned one:", err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after["striped_out"]-before["striped_out"] != 1 {
		t.Fatalf("%d downloads striped after an abandoned one, want 1", after["striped_out"]-before["striped_out"])
	}
	if err := c.Delete(ctx, info.Name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the array freed", func() bool {
		mem, err := c.MemUsed(ctx)
		return err == nil && mem.Used == 0
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package client_test

import (
	"context"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// BenchmarkSmallRequest times one get_config round trip against a real
// server process over loopback TCP (the latency floor of every command).
func BenchmarkSmallRequest(b *testing.B) {
	srv := testserver.Start(b)
	c := dial(b, srv.URL)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, m, err := c.Call(ctx, "get_config", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkTransfer times upload and download of 64 MiB over each transport.
func BenchmarkTransfer(b *testing.B) {
	srv := testserver.Start(b, "--max-memory", "2GiB")
	ctx := context.Background()
	xs := make([]int64, 8<<20)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"frames", []client.Option{client.WithTransport(client.TransportFrames)}},
		{"stream-tcp", []client.Option{client.WithTransport(client.TransportStream), client.WithStreamNetwork("tcp")}},
		{"stream-unix", []client.Option{client.WithTransport(client.TransportStream), client.WithStreamNetwork("unix"), client.WithSharedMemory(false)}},
		{"shm", nil},
	} {
		c := dial(b, srv.URL, tc.opts...)
		b.Run("up/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(xs) * 8))
			for b.Loop() {
				info, err := client.Upload(ctx, c, xs)
				if err != nil {
					b.Fatal(err)
				}
				c.Delete(ctx, info.Name)
			}
		})
		info, err := client.Upload(ctx, c, xs)
		if err != nil {
			b.Fatal(err)
		}
		if tc.name == "shm" {
			b.Run("view/"+tc.name, func(b *testing.B) {
				b.SetBytes(int64(len(xs) * 8))
				for b.Loop() {
					v, err := client.DownloadView[int64](ctx, c, info.Name)
					if err != nil || !v.Shared() {
						b.Fatal("no shared view:", err)
					}
					v.Close()
				}
			})
		}
		b.Run("down/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(xs) * 8))
			for b.Loop() {
				if _, err := client.Download[int64](ctx, c, info.Name); err != nil {
					b.Fatal(err)
				}
			}
		})
		dst := make([]int64, len(xs))
		b.Run("down-into/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(xs) * 8))
			for b.Loop() {
				if _, err := client.DownloadInto(ctx, c, info.Name, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package client_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"testing"
	"time"

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

// BenchmarkMidDownload times a whole Download (new memory: a pooled buffer
// from 256 KiB) and a DownloadInto of arrays from 64 KiB to 1 MiB with
// TransportAuto and no stream open: the sizes a request lane carries inline
// (LaneDownloadMax); then of 2 and 3 MiB (over the bulk stream that the
// upload of 2 MiB opened); and a DownloadInto with TransportStream (the
// bytes on the bulk stream) and with TransportAuto once a stream is open,
// and into16: DownloadInto rotating over 16 buffers (new/'s destinations
// are not in the caches either). Beside them, raw: a request of 55 bytes
// answered by the same bytes over a loopback TCP connection within this
// process (the socket's ceiling).
// Each reports its p50 and p90 besides the mean, this process's minor
// faults and garbage collections per op, and for new/ the download pool's
// hits and misses per op.
func BenchmarkMidDownload(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	c := dial(b, srv.URL, client.WithSharedMemory(false))
	cs := dial(b, srv.URL, client.WithSharedMemory(false), client.WithTransport(client.TransportStream))
	// cw has downloaded an array of StreamThreshold bytes: its stream is open.
	cw := dial(b, srv.URL, client.WithSharedMemory(false))
	big, err := client.Upload(ctx, cw, make([]int64, client.StreamThreshold/8))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := client.Download[int64](ctx, cw, big.Name); err != nil {
		b.Fatal(err)
	}
	// Ascending: c's stream opens at the first array of 1 MiB or more.
	for _, kib := range []int{64, 128, 255, 256, 512, 768, 1023, 2048, 3072} {
		xs := make([]int64, kib<<7)
		info, err := client.Upload(ctx, c, xs)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("raw/%dKiB", kib), func(b *testing.B) {
			rawPingPong(b, len(xs)*8)
		})
		b.Run(fmt.Sprintf("new/%dKiB", kib), func(b *testing.B) {
			h0, m0, _ := client.DownloadPoolStats()
			defer func() {
				h, m, _ := client.DownloadPoolStats()
				b.ReportMetric(float64(h-h0)/float64(b.N), "pool-hits/op")
				b.ReportMetric(float64(m-m0)/float64(b.N), "pool-misses/op")
			}()
			timeOps(b, len(xs)*8, func() {
				if _, err := client.Download[int64](ctx, c, info.Name); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("into/%dKiB", kib), func(b *testing.B) {
			timeOps(b, len(xs)*8, func() {
				if _, err := client.DownloadInto(ctx, c, info.Name, xs); err != nil {
					b.Fatal(err)
				}
			})
		})
		// DownloadInto rotating over 16 buffers, as many as a loop of
		// new/ keeps in the pool between collections at 1 MiB
		// (collectMin): what reading into memory out of the L2 costs.
		b.Run(fmt.Sprintf("into16/%dKiB", kib), func(b *testing.B) {
			var bufs [16][]int64
			for i := range bufs {
				bufs[i] = make([]int64, len(xs))
			}
			i := 0
			timeOps(b, len(xs)*8, func() {
				i = (i + 1) % len(bufs)
				if _, err := client.DownloadInto(ctx, c, info.Name, bufs[i]); err != nil {
					b.Fatal(err)
				}
			})
		})
		// The same with TransportStream (the request on ZeroMQ, the bytes
		// on the bulk stream), and with TransportAuto once a stream is open.
		b.Run(fmt.Sprintf("stream-into/%dKiB", kib), func(b *testing.B) {
			timeOps(b, len(xs)*8, func() {
				if _, err := client.DownloadInto(ctx, cs, info.Name, xs); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("open-into/%dKiB", kib), func(b *testing.B) {
			timeOps(b, len(xs)*8, func() {
				if _, err := client.DownloadInto(ctx, cw, info.Name, xs); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// timeOps runs op b.N times, reporting bytes a second and the p50 and p90
// of one op.
func timeOps(b *testing.B, nbytes int, op func()) {
	b.SetBytes(int64(nbytes))
	ds := make([]time.Duration, 0, b.N)
	faults := ownMinorFaults(b)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		t := time.Now()
		op()
		ds = append(ds, time.Since(t))
	}
	faults = ownMinorFaults(b) - faults
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(len(ds)), "gcs/op")
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(ds[len(ds)*9/10].Nanoseconds()), "p90-ns")
	b.ReportMetric(float64(faults)/float64(len(ds)), "faults/op") // this process's minor faults
}

// rawPingPong times a 55-byte request answered by n bytes over loopback
// TCP between two goroutines of this process.
func rawPingPong(b *testing.B, n int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		req, reply := make([]byte, 55), make([]byte, n)
		for {
			if _, err := io.ReadFull(conn, req); err != nil {
				return
			}
			if _, err := conn.Write(reply); err != nil {
				return
			}
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req, dst := make([]byte, 55), make([]byte, n)
	timeOps(b, n, func() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, dst); err != nil {
			b.Fatal(err)
		}
	})
}

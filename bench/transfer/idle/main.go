// Command idle times small requests made after the client has been idle,
// as in a notebook: a raw TCP echo (the ceiling: both ends blocked in the
// kernel, as after any idle gap), Arktos get_config over the request lane and
// over ZeroMQ, each after gaps of 0, 1 and 5 ms, kinds interleaved.
//
//	go run ./bench/transfer/idle -arktos tcp://127.0.0.1:5555 [-n 400]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/arktos-dev/arktos/client"
)

func main() {
	url := flag.String("arktos", "tcp://127.0.0.1:5555", "arktos-server URL")
	n := flag.Int("n", 400, "round trips of each kind at each gap")
	serveEcho := flag.Bool("serve-echo", false, "serve the raw echo (the benchmark starts itself so)")
	flag.Parse()
	ctx := context.Background()

	if *serveEcho {
		echo()
		return
	}
	// The raw echo: a Go server in a process of its own (this program with
	// -serve-echo), as arktos-server is: an idle process's wake-up is what a
	// request after a gap pays.
	cmd := exec.Command(os.Args[0], "-serve-echo")
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		panic(err)
	}
	raw, err := net.Dial("tcp", strings.TrimSpace(addr))
	if err != nil {
		panic(err)
	}
	raw.(*net.TCPConn).SetNoDelay(true)
	buf := make([]byte, 64)
	lane, err := client.Dial(ctx, *url)
	if err != nil {
		panic(err)
	}
	zmq, err := client.Dial(ctx, *url, client.WithLane(false))
	if err != nil {
		panic(err)
	}
	kinds := []struct {
		name string
		do   func()
	}{
		{"raw tcp echo", func() {
			raw.Write(buf[:16])
			for got := 0; got < 16; {
				k, err := raw.Read(buf[got:])
				if err != nil {
					panic(err)
				}
				got += k
			}
		}},
		{"get_config, lane", func() {
			if _, err := lane.GetConfig(ctx); err != nil {
				panic(err)
			}
		}},
		{"get_config, zmq", func() {
			if _, err := zmq.GetConfig(ctx); err != nil {
				panic(err)
			}
		}},
	}
	for _, k := range kinds {
		k.do() // opens the lane
	}
	for _, gap := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
		ds := make([][]time.Duration, len(kinds))
		for i := 0; i < *n; i++ {
			for j, k := range kinds {
				if gap > 0 {
					time.Sleep(gap)
				}
				t := time.Now()
				k.do()
				ds[j] = append(ds[j], time.Since(t))
			}
		}
		for j, k := range kinds {
			slices.Sort(ds[j])
			p50, p90 := ds[j][len(ds[j])/2], ds[j][len(ds[j])*9/10]
			r50 := float64(ds[0][len(ds[0])/2])
			fmt.Printf("gap %-4v %-18s p50 %7.1f µs  p90 %7.1f µs  × raw p50 %.2f\n", gap, k.name,
				float64(p50)/1e3, float64(p90)/1e3, float64(p50)/r50)
		}
	}
}

// echo serves a TCP echo on a loopback port, printed on stdout.
func echo() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			b := make([]byte, 64)
			for {
				k, err := c.Read(b)
				if err != nil {
					return
				}
				c.Write(b[:k])
			}
		}()
	}
}

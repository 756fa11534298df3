// Command goclient is the Go side of the transfer benchmark: for one array
// size it times, interleaved trial by trial, memcpy, the raw TCP and unix
// socket ceilings (against benchserver), Arktos upload and download with the
// Go client, and Arrow Flight DoPut/DoGet (arrow-go client). It prints one
// JSON object per timed transfer. bench/transfer/run.py drives it.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	zmq "github.com/pebbe/zmq4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

type record struct {
	Lang         string  `json:"lang"`
	Method       string  `json:"method"`
	Dir          string  `json:"dir"`
	Transport    string  `json:"transport"`
	DType        string  `json:"dtype"`
	Bytes        int     `json:"bytes"`
	Trial        int     `json:"trial"`
	Phase        string  `json:"phase"` // cold, warmup, warm
	Seconds      float64 `json:"seconds"`
	ClientMinflt int64   `json:"client_minflt"`
	ServerMinflt int64   `json:"server_minflt"`
	ServerCopied int64   `json:"server_copied"`
}

var (
	out        = json.NewEncoder(os.Stdout)
	arktosPID  int
	benchPID   int
	arktosCli  *client.Client
	dtypeName  string
	nbytes     int
	trials     int
	methodsArg string
)

func main() {
	url := flag.String("arktos", "tcp://127.0.0.1:5555", "arktos-server URL")
	transports := flag.String("transports", "frames,stream-tcp,stream-unix,shm", "Arktos transports to time: frames, stream-tcp, stream-unix, shm, auto")
	latency := flag.Int("latency", 0, "if > 0, time this many get_config round trips (and raw ZeroMQ echoes, with --zmq-echo) and print their p50/p90 instead")
	zmqEcho := flag.String("zmq-echo", "", "benchserver's ZeroMQ echo URL, the latency floor")
	latencyBlock := flag.Int("latency-block", 100, "round trips of one kind in a row before the next kind (1: one by one)")
	flag.IntVar(&arktosPID, "arktos-pid", 0, "arktos-server pid, for its page faults")
	flag.IntVar(&benchPID, "bench-pid", 0, "benchserver pid, for its page faults")
	tcpAddr := flag.String("raw-tcp", "", "benchserver raw TCP address")
	unixPath := flag.String("raw-unix", "", "benchserver raw unix socket")
	flightAddr := flag.String("flight", "", "benchserver Arrow Flight address")
	flag.StringVar(&dtypeName, "dtype", "int64", "int64 or float64")
	size := flag.String("bytes", "8388608", "array size in bytes")
	flag.IntVar(&trials, "trials", 7, "warm trials after one cold and one warm-up trial")
	flag.StringVar(&methodsArg, "methods", "memcpy,raw-tcp,raw-tcp-striped,raw-unix,arktos,flight", "what to time")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25) // collect garbage downloads early: 1 GiB arrays
	}
	var err error
	if nbytes, err = strconv.Atoi(*size); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	dial := func(transport string) *client.Client {
		var opts []client.Option
		switch transport {
		case "frames":
			opts = append(opts, client.WithTransport(client.TransportFrames))
		case "stream-tcp", "stream-unix":
			opts = append(opts, client.WithTransport(client.TransportStream), client.WithStreamNetwork(strings.TrimPrefix(transport, "stream-")),
				client.WithSharedMemory(false))
		case "shm":
			// The default on this host: uploads through a lent shared-memory
			// segment, DownloadView maps the array's segment.
			opts = append(opts, client.WithStreamNetwork("unix"))
		case "zstd", "zstd-compressible":
			opts = append(opts, client.WithCompression("zstd"))
		case "no-lane":
			opts = append(opts, client.WithLane(false))
		}
		c, err := client.Dial(ctx, *url, opts...)
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	arktosCli = dial("auto")
	if *latency > 0 {
		timeLatency(ctx, *latency, *latencyBlock, *zmqEcho, dial("no-lane"))
		return
	}
	n := nbytes / 8
	src := make([]int64, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = r.Int64()
	}
	if dtypeName == "float64" {
		f := pdarray.BytesAs[float64](pdarray.AsBytes(src))
		for i := range f {
			f[i] = r.NormFloat64()
		}
	}
	srcBytes := pdarray.AsBytes(src)
	// One pre-faulted destination serves memcpy, the raw ceilings and
	// DownloadInto (they run one at a time): at 1 GiB every extra buffer
	// counts on a 24 GiB machine that also holds the servers' copies.
	dst := make([]int64, n)
	for i := 0; i < len(dst); i += 512 {
		dst[i] = 1
	}
	dstBytes := pdarray.AsBytes(dst)

	type method struct {
		name, transport string
		up, down        func() (time.Duration, int64) // duration, server bytes copied
		into            func() (time.Duration, int64) // download into a reused buffer
		view            func() (time.Duration, int64) // read-only shared-memory view (shm)
	}
	var ms []method
	for _, m := range strings.Split(methodsArg, ",") {
		switch m {
		case "memcpy":
			f := func() (time.Duration, int64) { t := time.Now(); copy(dstBytes, srcBytes); return time.Since(t), 0 }
			ms = append(ms, method{"memcpy", "memory", f, nil, nil, nil})
		case "raw-tcp", "raw-unix":
			network, addr := "tcp", *tcpAddr
			if m == "raw-unix" {
				network, addr = "unix", *unixPath
			}
			up, down := rawMethods(network, addr, srcBytes, dstBytes)
			ms = append(ms, method{"raw", network, up, down, nil, nil})
		case "raw-tcp-striped":
			// The ceiling of striped transfers: the same bytes over
			// client.DefaultStripes raw TCP connections at once.
			up, down := rawStripedMethods(*tcpAddr, client.DefaultStripes, srcBytes, dstBytes)
			ms = append(ms, method{"raw", fmt.Sprintf("tcp-x%d", client.DefaultStripes), up, down, nil, nil})
		case "arktos":
			// Compressible data (small repeating integers, as codes and
			// counts are) shows where zstd pays; src itself is random.
			var compressible []int64
			for _, tr := range strings.Split(*transports, ",") {
				data := src
				if tr == "zstd-compressible" {
					if compressible == nil {
						compressible = make([]int64, len(src))
						for i := range compressible {
							compressible[i] = int64(i % 1000)
						}
					}
					data = compressible
				}
				up, down, into, view := arktosMethods(ctx, dial(tr), data, dst)
				if tr != "shm" {
					view = nil
				}
				ms = append(ms, method{"arktos", tr, up, down, into, view})
			}
		case "flight":
			up, down := flightMethods(ctx, *flightAddr, src)
			ms = append(ms, method{"flight", "grpc-tcp", up, down, nil, nil})
		default:
			log.Fatalf("unknown method %q", m)
		}
	}
	for trial := 0; trial < trials+2; trial++ {
		phase := "warm"
		switch trial {
		case 0:
			phase = "cold"
		case 1:
			phase = "warmup"
		}
		for _, m := range ms {
			for _, dir := range []string{"up", "down", "down-view", "down-into"} {
				f := map[string]func() (time.Duration, int64){"up": m.up, "down": m.down, "down-view": m.view, "down-into": m.into}[dir]
				if f == nil {
					continue
				}
				cf, sf := minflt(0), minflt(serverPID(m.name))
				d, copied := f()
				out.Encode(record{Lang: "go", Method: m.name, Dir: dir, Transport: m.transport, DType: dtypeName, Bytes: nbytes,
					Trial: trial, Phase: phase, Seconds: d.Seconds(), ClientMinflt: minflt(0) - cf,
					ServerMinflt: minflt(serverPID(m.name)) - sf, ServerCopied: copied})
			}
		}
	}
}

func serverPID(method string) int {
	switch method {
	case "arktos":
		return arktosPID
	case "raw", "flight":
		return benchPID
	}
	return -1
}

// minflt returns the minor page faults of pid so far (0: this process).
func minflt(pid int) int64 {
	if pid < 0 {
		return 0
	}
	if pid == 0 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Minflt
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	v, _ := strconv.ParseInt(fields[7], 10, 64) // field 10 of stat
	return v
}

func rawMethods(network, addr string, src, dst []byte) (up, down func() (time.Duration, int64)) {
	c, err := net.Dial(network, addr)
	if err != nil {
		log.Fatal(err)
	}
	hdr := make([]byte, 9)
	binary.LittleEndian.PutUint64(hdr[1:], uint64(len(src)))
	ack := make([]byte, 1)
	up = func() (time.Duration, int64) {
		t := time.Now()
		hdr[0] = 'U'
		c.Write(hdr)
		c.Write(src)
		if _, err := io.ReadFull(c, ack); err != nil {
			log.Fatal(err)
		}
		return time.Since(t), 0
	}
	down = func() (time.Duration, int64) {
		t := time.Now()
		hdr[0] = 'D'
		c.Write(hdr)
		if _, err := io.ReadFull(c, dst); err != nil {
			log.Fatal(err)
		}
		return time.Since(t), 0
	}
	return up, down
}

// rawStripedMethods moves src up and dst down over k raw connections at
// once, stripe i (transfer.StripeBounds) on connection i, as a striped
// Arktos transfer splits its bytes.
func rawStripedMethods(addr string, k int, src, dst []byte) (up, down func() (time.Duration, int64)) {
	type part struct{ up, down func() (time.Duration, int64) }
	parts := make([]part, k)
	for i := range parts {
		lo, hi := transfer.StripeBounds(i, k, len(src))
		parts[i].up, parts[i].down = rawMethods("tcp", addr, src[lo:hi], dst[lo:hi])
	}
	all := func(down bool) (time.Duration, int64) {
		t := time.Now()
		var wg sync.WaitGroup
		for _, p := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if down {
					p.down()
				} else {
					p.up()
				}
			}()
		}
		wg.Wait()
		return time.Since(t), 0
	}
	return func() (time.Duration, int64) { return all(false) }, func() (time.Duration, int64) { return all(true) }
}

func copiedOnServer(ctx context.Context) int64 {
	st, err := arktosCli.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return st["bytes_copied_in"] + st["bytes_copied_out"]
}

// arktosMethods times one client's upload, download and download into dst;
// the array is deleted after the last of the three, so the server holds one
// array at a time.
func arktosMethods(ctx context.Context, c *client.Client, src, dst []int64) (up, down, into, view func() (time.Duration, int64)) {
	name := ""
	upload := func() (time.Duration, int64) {
		c0 := copiedOnServer(ctx)
		t := time.Now()
		var info client.ArrayInfo
		var err error
		if dtypeName == "float64" {
			info, err = client.Upload(ctx, c, pdarray.BytesAs[float64](pdarray.AsBytes(src)))
		} else {
			info, err = client.Upload(ctx, c, src)
		}
		d := time.Since(t)
		if err != nil {
			log.Fatal(err)
		}
		name = info.Name
		return d, copiedOnServer(ctx) - c0
	}
	download := func() (time.Duration, int64) {
		c0 := copiedOnServer(ctx)
		t := time.Now()
		var err error
		var n int
		if dtypeName == "float64" {
			var xs []float64
			xs, err = client.Download[float64](ctx, c, name)
			n = len(xs)
		} else {
			var xs []int64
			xs, err = client.Download[int64](ctx, c, name)
			n = len(xs)
		}
		d := time.Since(t)
		if err != nil || n != len(src) {
			log.Fatalf("download: %v (%d elements)", err, n)
		}
		return d, copiedOnServer(ctx) - c0
	}
	downloadInto := func() (time.Duration, int64) {
		c0 := copiedOnServer(ctx)
		t := time.Now()
		var n int
		var err error
		if dtypeName == "float64" {
			n, err = client.DownloadInto(ctx, c, name, pdarray.BytesAs[float64](pdarray.AsBytes(dst)))
		} else {
			n, err = client.DownloadInto(ctx, c, name, dst)
		}
		d := time.Since(t)
		if err != nil || n != len(src) {
			log.Fatalf("download into: %v (%d elements)", err, n)
		}
		copied := copiedOnServer(ctx) - c0
		c.Delete(ctx, name)
		return d, copied
	}
	// The view is ready once mapped: its pages are mapped in as they are
	// first read, which this row does not time.
	downloadView := func() (time.Duration, int64) {
		c0 := copiedOnServer(ctx)
		t := time.Now()
		var n int
		var shared bool
		var err error
		if dtypeName == "float64" {
			var v *client.View[float64]
			if v, err = client.DownloadView[float64](ctx, c, name); err == nil {
				n, shared = len(v.Data), v.Shared()
				defer v.Close()
			}
		} else {
			var v *client.View[int64]
			if v, err = client.DownloadView[int64](ctx, c, name); err == nil {
				n, shared = len(v.Data), v.Shared()
				defer v.Close()
			}
		}
		d := time.Since(t)
		if err != nil || n != len(src) || !shared {
			log.Fatalf("download view: %v (%d elements, shared %v)", err, n, shared)
		}
		return d, copiedOnServer(ctx) - c0
	}
	return upload, download, downloadInto, downloadView
}

func flightMethods(ctx context.Context, addr string, src []int64) (up, down func() (time.Duration, int64)) {
	fc, err := flight.NewClientWithMiddleware(addr, nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<31-1), grpc.MaxCallSendMsgSize(1<<31-1)))
	if err != nil {
		log.Fatal(err)
	}
	dt := arrow.PrimitiveTypes.Int64
	if dtypeName == "float64" {
		dt = arrow.PrimitiveTypes.Float64
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt}}, nil)
	const batchBytes = 16 << 20 // the same frame size Arktos uses
	alloc := memory.DefaultAllocator
	up = func() (time.Duration, int64) {
		t := time.Now()
		stream, err := fc.DoPut(ctx)
		if err != nil {
			log.Fatal(err)
		}
		w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
		w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"x"}})
		body := pdarray.AsBytes(src)
		for lo := 0; lo < len(body) || lo == 0; lo += batchBytes {
			hi := min(lo+batchBytes, len(body))
			// Wrap the bytes in place: no copy into Arrow memory.
			data := array.NewData(dt, (hi-lo)/8, []*memory.Buffer{nil, memory.NewBufferBytes(body[lo:hi])}, nil, 0, 0)
			col := array.MakeFromData(data)
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
			if err := w.Write(rec); err != nil {
				log.Fatal(err)
			}
			rec.Release()
			col.Release()
			data.Release()
			if hi == len(body) {
				break
			}
		}
		w.Close()
		stream.CloseSend()
		for {
			if _, err := stream.Recv(); err != nil {
				if err != io.EOF {
					log.Fatal(err)
				}
				break
			}
		}
		return time.Since(t), 0
	}
	down = func() (time.Duration, int64) {
		t := time.Now()
		stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: []byte("x")})
		if err != nil {
			log.Fatal(err)
		}
		rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(alloc))
		if err != nil {
			log.Fatal(err)
		}
		// The client holds the array once it is one contiguous slice, as
		// Arktos' Download returns it.
		dst := make([]byte, len(src)*8)
		off := 0
		for rdr.Next() {
			rec := rdr.RecordBatch()
			off += copy(dst[off:], rec.Column(0).Data().Buffers()[1].Bytes())
		}
		rdr.Release()
		if off != len(dst) {
			log.Fatalf("flight download got %d bytes, want %d", off, len(dst))
		}
		return time.Since(t), 0
	}
	return up, down
}

// timeLatency times n small requests of each kind -- get_config and a sum
// over a 1000-element array, over the request lane (the default) and over
// ZeroMQ (zc: WithLane(false); the server answers both inline) and, when
// echoURL is set, a raw ZeroMQ echo of the same header (the ZeroMQ floor)
// -- interleaved one by one in a rotating order, and prints one JSON line
// each with their p50 and p90 in microseconds.
// timeLatency times n round trips of each kind, in runs of block of one
// kind, the kinds in a rotating order.
func timeLatency(ctx context.Context, n, block int, echoURL string, zc *client.Client) {
	info, err := client.Upload(ctx, arktosCli, make([]int64, 1000))
	if err != nil {
		log.Fatal(err)
	}
	defer arktosCli.Delete(ctx, info.Name)
	whole, err := client.Upload(ctx, arktosCli, make([]int64, 100)) // Download of a whole small array
	if err != nil {
		log.Fatal(err)
	}
	defer arktosCli.Delete(ctx, whole.Name)
	type kind struct {
		name string
		do   func()
	}
	var kinds []kind
	small := make([]int64, 100) // 800 bytes up and down
	var made []string           // deleted after the timing
	for _, via := range []struct {
		name string
		c    *client.Client
	}{{"lane", arktosCli}, {"zmq", zc}} {
		c := via.c
		kinds = append(kinds, kind{"get_config (" + via.name + ")", func() {
			if _, err := c.GetConfig(ctx); err != nil {
				log.Fatal(err)
			}
		}}, kind{"reduce sum (1000 int64, " + via.name + ")", func() {
			if _, _, err := c.Reduce(ctx, "sum", info.Name); err != nil {
				log.Fatal(err)
			}
		}}, kind{"upload 100 int64 (" + via.name + ")", func() {
			up, err := client.Upload(ctx, c, small)
			if err != nil {
				log.Fatal(err)
			}
			made = append(made, up.Name)
		}}, kind{"download 100 int64 (" + via.name + ")", func() {
			if _, err := client.DownloadRange[int64](ctx, c, info.Name, 0, 100); err != nil {
				log.Fatal(err)
			}
		}}, kind{"download whole 100 int64 (" + via.name + ")", func() {
			if _, err := client.Download[int64](ctx, c, whole.Name); err != nil {
				log.Fatal(err)
			}
		}})
	}
	defer func() { arktosCli.Delete(ctx, made...) }()
	if echoURL != "" {
		echo, _ := zmq.NewSocket(zmq.DEALER)
		defer echo.Close()
		echo.SetLinger(0)
		echo.Connect(echoURL)
		poller := zmq.NewPoller()
		poller.Add(echo, zmq.POLLIN)
		hdr := []byte("\x85\xa1v\x01\xa2id\x01\xa5token\xa0\xa3cmd\xaaget_config\xa4args\x80")
		kinds = append(kinds, kind{"raw zmq echo", func() {
			echo.SendBytes(hdr, 0)
			poller.Poll(time.Second)
			echo.RecvBytes(0)
		}})
	}
	times := make([][]float64, len(kinds))
	block = max(1, min(block, n))
	n -= n % block
	for i := range n / block {
		for k := range kinds {
			k = (k + i) % len(kinds) // rotate: none always follows the same one
			for range block {
				t := time.Now()
				kinds[k].do()
				times[k] = append(times[k], float64(time.Since(t).Nanoseconds())/1e3)
			}
		}
	}
	for k, ts := range times {
		slices.Sort(ts)
		out.Encode(map[string]any{"kind": "latency", "lang": "go", "request": kinds[k].name, "n": n, "block": block,
			"p50_us": ts[n/2], "p90_us": ts[n*9/10]})
	}
}

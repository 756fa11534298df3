// Command benchserver hosts the transfer benchmark's reference servers, run
// beside arktos-server by bench/transfer/run.py:
//
//   - a raw framed byte stream on TCP and on a unix socket: the ceiling.
//     Request: op byte ('U' upload, 'D' download) + uint64 LE length n. For
//     'U' the server reads n bytes into a reused, pre-faulted buffer and
//     answers one byte; for 'D' it writes n bytes from that buffer.
//   - an Apache Arrow Flight server (arrow-go): DoPut stores the record
//     batches under the descriptor's path, DoGet streams them back.
//   - a ZeroMQ ROUTER that echoes every message: the latency floor of a
//     request over the same sockets Arktos uses (pebbe/zmq4, poll then
//     receive, as arktos-server's I/O loop does).
//
// It prints one line, "ready tcp=ADDR unix=PATH flight=ADDR zmq=URL", when
// serving.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	zmq "github.com/pebbe/zmq4"
	"google.golang.org/grpc"
)

func main() {
	unixPath := flag.String("unix", "/tmp/arktos-bench-raw.sock", "unix socket path for the raw stream")
	flag.Parse()

	tcpL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	os.Remove(*unixPath)
	unixL, err := net.Listen("unix", *unixPath)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range []net.Listener{tcpL, unixL} {
		go acceptRaw(l)
	}

	fs := flight.NewServerWithMiddleware(nil, grpc.MaxRecvMsgSize(1<<31-1), grpc.MaxSendMsgSize(1<<31-1))
	if err := fs.Init("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}
	fs.RegisterFlightService(&flightStore{data: map[string][]arrow.RecordBatch{}})
	zmqURL, err := zmqEcho()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ready tcp=%s unix=%s flight=%s zmq=%s\n", tcpL.Addr(), *unixPath, fs.Addr(), zmqURL)
	if err := fs.Serve(); err != nil {
		log.Fatal(err)
	}
}

func acceptRaw(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serveRaw(c)
	}
}

// serveRaw answers one connection's requests. buf is reused across requests
// and pre-faulted when it grows, so the ceiling has no page faults in it.
func serveRaw(c net.Conn) {
	defer c.Close()
	var buf []byte
	hdr := make([]byte, 9)
	for {
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint64(hdr[1:]))
		if n > cap(buf) {
			buf = make([]byte, n)
			for i := 0; i < n; i += 4096 {
				buf[i] = 1
			}
		}
		b := buf[:n]
		switch hdr[0] {
		case 'U':
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			if _, err := c.Write([]byte{1}); err != nil {
				return
			}
		case 'D':
			if _, err := c.Write(b); err != nil {
				return
			}
		default:
			return
		}
	}
}

// flightStore keeps what DoPut received, by descriptor path.
type flightStore struct {
	flight.BaseFlightServer
	mu   sync.Mutex
	data map[string][]arrow.RecordBatch
}

func (s *flightStore) DoPut(stream flight.FlightService_DoPutServer) error {
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		return err
	}
	defer rdr.Release()
	var recs []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rdr.Err(); err != nil && err != io.EOF {
		return err
	}
	key := "x"
	if d := rdr.LatestFlightDescriptor(); d != nil && len(d.Path) > 0 {
		key = d.Path[0]
	}
	s.mu.Lock()
	for _, old := range s.data[key] {
		old.Release()
	}
	s.data[key] = recs
	s.mu.Unlock()
	return stream.Send(&flight.PutResult{})
}

func (s *flightStore) DoGet(tkt *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	s.mu.Lock()
	recs := s.data[string(tkt.Ticket)]
	s.mu.Unlock()
	if len(recs) == 0 {
		return fmt.Errorf("no data under %q", tkt.Ticket)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Close()
}

// zmqEcho binds a ROUTER on a free loopback port and echoes every message
// from a goroutine of its own.
func zmqEcho() (string, error) {
	r, err := zmq.NewSocket(zmq.ROUTER)
	if err != nil {
		return "", err
	}
	if err := r.Bind("tcp://127.0.0.1:*"); err != nil {
		return "", err
	}
	url, err := r.GetLastEndpoint()
	if err != nil {
		return "", err
	}
	go func() {
		runtime.LockOSThread()
		p := zmq.NewPoller()
		p.Add(r, zmq.POLLIN)
		for {
			if _, err := p.Poll(50 * time.Millisecond); err != nil {
				return
			}
			for {
				m, err := r.RecvMessageBytes(zmq.DONTWAIT)
				if err != nil {
					break
				}
				r.SendMessage(m)
			}
		}
	}()
	return url, nil
}

package transfer

// TLS on bulk streams and request lanes (docs/protocol.md, "Encryption"):
// a server whose ZeroMQ socket is encrypted (CurveZMQ) makes a throwaway
// certificate at start and sends its SHA-256 fingerprint in every
// open_stream reply. That reply travels over the CURVE socket, whose server
// the client has already authenticated by its public key, so a client pins
// the stream's certificate to the fingerprint and needs nothing but the
// server key: no CA, no host names, no files. TLS 1.3 only, AES-GCM where
// the CPU has AES instructions (Go and OpenSSL both pick it then).
//
// Unix-socket streams stay plain: they never leave the host, and their
// socket lives in a 0700 directory of the server's user.

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// LinkCert is a server's throwaway certificate for its streams and lanes.
type LinkCert struct {
	Server      *tls.Config
	Fingerprint []byte // SHA-256 of the certificate's DER bytes
}

// NewLinkCert makes a self-signed ECDSA P-256 certificate (fast to sign a
// handshake with) and the server side's TLS configuration.
func NewLinkCert() (*LinkCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("stream certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("stream certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "arktos-server streams"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0), // pinned, never checked against a clock
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("stream certificate: %w", err)
	}
	sum := sha256.Sum256(der)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
		// No session tickets: nothing arrives on an idle stream or lane
		// but a close (PeekIdle and the clients' checks rely on it), and
		// a resumed session would skip the pinned certificate.
		SessionTicketsDisabled: true,
		// Full 16 KiB records from the first byte: streams carry bulk bytes.
		DynamicRecordSizingDisabled: true,
	}
	return &LinkCert{Server: cfg, Fingerprint: sum[:]}, nil
}

// ErrLinkPin: the stream's certificate is not the one the server named
// over its encrypted socket (someone else answered the stream port).
var ErrLinkPin = errors.New("the bulk stream's TLS certificate is not the one the server named over its encrypted socket (another process answers its stream port?); nothing was sent on it")

// ClientLinkConfig is the client side's TLS configuration for a stream or
// lane whose certificate has the given fingerprint. The certificate is
// pinned instead of checked against a CA; TLS still proves the server
// holds its key (the handshake's signature).
func ClientLinkConfig(fingerprint []byte) *tls.Config {
	pin := append([]byte(nil), fingerprint...)
	return &tls.Config{
		MinVersion:                  tls.VersionTLS13,
		InsecureSkipVerify:          true, // replaced by the pin below
		DynamicRecordSizingDisabled: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || len(pin) != sha256.Size {
				return ErrLinkPin
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if subtle.ConstantTimeCompare(sum[:], pin) != 1 {
				return ErrLinkPin
			}
			return nil
		},
	}
}

// PollConn is the connection under a TLS stream or lane. Its reads are
// buffered (a 16 KiB record is otherwise one or two system calls) and may
// go through a SpinReader (SpinLink); its writes are gathered while
// WriteBatched writes; it keeps the socket's descriptor reachable
// (syscall.Conn) for PeekIdle.
type PollConn struct {
	net.Conn
	src io.Reader // the socket, or a SpinReader of it
	buf *bufio.Reader
	// batch: WriteBatched is writing, so records go to w, written in
	// linkBatch pieces; mu guards w against a Close's alert from another
	// goroutine (which writes directly once batch is off).
	batch atomic.Bool
	mu    sync.Mutex
	w     []byte
}

// linkRead and linkBatch: a TLS link's read buffer and its gathered
// writes. A system call per 16 KiB record cost a third of a TLS
// transfer's time here; per 512 KiB it is lost in the copies.
const (
	linkRead  = 256 << 10
	linkBatch = 512 << 10
)

// NewPollConn wraps c, reading it directly until SpinLink is called.
func NewPollConn(c net.Conn) *PollConn {
	p := &PollConn{Conn: c, src: c}
	p.buf = bufio.NewReaderSize(readerFunc(func(b []byte) (int, error) { return p.src.Read(b) }), linkRead)
	return p
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

func (p *PollConn) Read(b []byte) (int, error) { return p.buf.Read(b) }

func (p *PollConn) Write(b []byte) (int, error) {
	if !p.batch.Load() {
		return p.Conn.Write(b)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.w)+len(b) > linkBatch {
		if err := p.flushLocked(); err != nil {
			return 0, err
		}
	}
	if p.w == nil {
		p.w = make([]byte, 0, linkBatch)
	}
	if len(b) > linkBatch {
		return p.Conn.Write(b)
	}
	p.w = append(p.w, b...)
	return len(b), nil
}

func (p *PollConn) flushLocked() error {
	if len(p.w) == 0 {
		return nil
	}
	linkBatches.Add(1)
	_, err := p.Conn.Write(p.w)
	p.w = p.w[:0]
	return err
}

var linkBatches atomic.Uint64

// LinkBatches is how many gathered writes of TLS records this process made
// (WriteBatched; tests check the path, the server's get_stats shows it).
func LinkBatches() uint64 { return linkBatches.Load() }

// WriteBatched writes b to c as c.Write does; on a TLS link its records go
// out gathered, in linkBatch writes.
func WriteBatched(c net.Conn, b []byte) (int, error) {
	t, ok := c.(*tls.Conn)
	if !ok {
		return c.Write(b)
	}
	p, ok := t.NetConn().(*PollConn)
	if !ok {
		return c.Write(b)
	}
	p.batch.Store(true)
	n, err := t.Write(b)
	p.batch.Store(false)
	p.mu.Lock()
	ferr := p.flushLocked()
	p.mu.Unlock()
	if err == nil && ferr != nil {
		n, err = 0, ferr // (what the records said is lost with the batch)
	}
	return n, err
}

// SyscallConn gives the socket's descriptor, as net.TCPConn's does.
func (p *PollConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := p.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("no descriptor under this connection")
	}
	return sc.SyscallConn()
}

// Underlying returns the socket under a TLS link (c itself when c is not
// one): PeekIdle looks at it.
func Underlying(c net.Conn) net.Conn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if p, ok := c.(*PollConn); ok {
		c = p.Conn
	}
	return c
}

// SpinLink is NewSpinReader for a lane that may be TLS: a TLS lane polls
// under its decryption (the records' bytes), and its own reads go to the
// TLS connection, which is returned.
func SpinLink(c net.Conn, spin time.Duration, st *SpinStats) io.Reader {
	if t, ok := c.(*tls.Conn); ok {
		if p, ok := t.NetConn().(*PollConn); ok {
			p.src = NewSpinReader(p.Conn, spin, st) // (under the buffer, which is empty between requests)
		}
		return c
	}
	return NewSpinReader(c, spin, st)
}

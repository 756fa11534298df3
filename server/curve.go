package server

// Encryption of the ZeroMQ socket (issue 50): CurveZMQ, libzmq's CURVE
// mechanism (Curve25519 key agreement, XSalsa20-Poly1305 per message, from
// libsodium). The server has a long-term key pair, kept in --server-key-file
// (its secret, mode 0600) and beside it in <file>.pub (its public key, which
// a client needs and nothing else); a client makes a throwaway pair of its
// own per connection. The token still authenticates requests: CURVE keeps
// it, and every request and array byte, from anyone on the path.
//
// The TCP bulk streams and request lanes of an encrypted server are TLS
// 1.3, their throwaway certificate pinned by a fingerprint that open_stream
// sends over this socket (transfer/tlslink.go, stream.go): a client still
// needs the server key and nothing else.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	zmq "github.com/pebbe/zmq4"
)

// Encryption modes of Config.Encrypt.
const (
	EncryptAuto = "auto" // on when the address is reachable from other hosts
	EncryptOn   = "on"
	EncryptOff  = "off"
)

// curveKeys loads the server's key pair from path, or makes one and writes
// it there (secret, 0600) and to path+".pub" when the file does not exist;
// file is the path used ("" gives ~/.arktos/server_key).
func curveKeys(path string) (public, secret, file string, err error) {
	if !zmq.HasCurve() {
		return "", "", "", fmt.Errorf("server: encryption needs libzmq built with CURVE (libsodium); this one has none: install Debian's libzmq5 (or use the self-contained wheel's server), or start with --encrypt off on a trusted network")
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", "", fmt.Errorf("server: no home directory for the server key; pass --server-key-file: %w", err)
		}
		path = filepath.Join(home, ".arktos", "server_key")
	}
	if st, err := os.Stat(path); err == nil {
		if st.Mode().Perm()&0o077 != 0 {
			return "", "", "", fmt.Errorf("server: the server key %s can be read by others (mode %v): chmod 600 it, or delete it for a new one", path, st.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", "", fmt.Errorf("server: read the server key %s: %w", path, err)
		}
		secret = strings.TrimSpace(string(b))
		if len(secret) != 40 {
			return "", "", "", fmt.Errorf("server: the server key %s holds %d characters, not a Z85 CURVE secret key of 40: delete it for a new one", path, len(secret))
		}
		if public, err = zmq.AuthCurvePublic(secret); err != nil || public == "" {
			return "", "", "", fmt.Errorf("server: the server key %s is not a Z85 CURVE secret key (%v): delete it for a new one", path, err)
		}
	} else if os.IsNotExist(err) {
		if public, secret, err = zmq.NewCurveKeypair(); err != nil {
			return "", "", "", fmt.Errorf("server: make a CURVE key pair: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", "", "", fmt.Errorf("server: server key: %w", err)
		}
		// Made whole under another name and linked into place, which fails
		// if the file exists: locales that share a home directory and start
		// at once all end up with the one key that was linked first.
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if err := os.WriteFile(tmp, []byte(secret+"\n"), 0o600); err != nil {
			return "", "", "", fmt.Errorf("server: write the server key %s: %w", tmp, err)
		}
		err := os.Link(tmp, path)
		os.Remove(tmp)
		if os.IsExist(err) {
			return curveKeys(path) // another process made it first
		}
		if err != nil {
			return "", "", "", fmt.Errorf("server: write the server key %s: %w", path, err)
		}
	} else {
		return "", "", "", fmt.Errorf("server: read the server key %s: %w", path, err)
	}
	// The public half, for clients: rewritten each start (it follows from the secret).
	// (Renamed into place: a client reading it while another locale
	// rewrites it sees the whole key.)
	tmp := fmt.Sprintf("%s.pub.%d.tmp", path, os.Getpid())
	// A key mounted read-only (a Kubernetes Secret) gets no .pub beside
	// it: the log prints the public key.
	if err := os.WriteFile(tmp, []byte(public+"\n"), 0o644); err == nil {
		if err := os.Rename(tmp, path+".pub"); err != nil {
			os.Remove(tmp)
			return "", "", "", fmt.Errorf("server: write the server's public key %s.pub: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return "", "", "", fmt.Errorf("server: write the server's public key %s.pub: %w", path, err)
	}
	return public, secret, path, nil
}

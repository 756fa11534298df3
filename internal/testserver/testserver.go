// Package testserver starts real arktos-server processes for end-to-end
// tests: the binary named by ARKTOS_SERVER_BIN (make test builds bin/), or
// one built once per test process from ./cmd/arktos-server.
package testserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

var (
	raceOnce sync.Once
	racePath string
	raceErr  error
)

// RaceBinary returns the path of an arktos-server built with the race
// detector (once per test process; the packages' race builds are cached by
// go test -race).
func RaceBinary(t testing.TB) string {
	t.Helper()
	raceOnce.Do(func() {
		_, here, _, _ := runtime.Caller(0)
		dir, err := os.MkdirTemp("", "arktos-bin-")
		if err != nil {
			raceErr = err
			return
		}
		racePath = filepath.Join(dir, "arktos-server-race")
		cmd := exec.Command("go", "build", "-race", "-o", racePath, "./cmd/arktos-server")
		cmd.Dir = filepath.Join(filepath.Dir(here), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			raceErr = fmt.Errorf("go build -race: %v\n%s", err, out)
		}
	})
	if raceErr != nil {
		t.Fatal(raceErr)
	}
	return racePath
}

// Binary returns the path of an arktos-server binary.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("ARKTOS_SERVER_BIN"); p != "" {
			binPath, buildErr = filepath.Abs(p)
			return
		}
		_, here, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(here), "..", "..")
		// Each test process builds its own binary (40 MB): remove those
		// earlier runs left behind, once they are an hour old.
		if old, _ := filepath.Glob(filepath.Join(os.TempDir(), "arktos-bin-*")); len(old) > 0 {
			for _, d := range old {
				if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > time.Hour {
					os.RemoveAll(d)
				}
			}
		}
		dir, err := os.MkdirTemp("", "arktos-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "arktos-server")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/arktos-server")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Server is a running arktos-server process.
type Server struct {
	URL  string
	Cmd  *exec.Cmd
	Log  *bytes.Buffer
	done chan error
}

// Start runs arktos-server on a free loopback port with extra flags, waits
// until it answers, and stops it when the test ends.
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	return StartBinary(t, Binary(t), flags...)
}

// StartBinary is Start with the server binary bin (RaceBinary's, say).
func StartBinary(t testing.TB, bin string, flags ...string) *Server {
	t.Helper()
	url := fmt.Sprintf("tcp://127.0.0.1:%d", FreePort(t))
	keyFile := "" // an encrypted server's: the probe needs its public key
	for i, f := range flags[:max(len(flags)-1, 0)] {
		switch f {
		case "--addr":
			url = flags[i+1] // the test's own (the last --addr wins)
		case "--server-key-file":
			keyFile = flags[i+1]
		}
	}
	args := append([]string{"--addr", url, "--log-level", "warn"}, flags...)
	cmd := exec.Command(bin, args...)
	// Pooled buffers are poisoned, so a reader that kept one breaks loudly.
	cmd.Env = append(os.Environ(), "ARKTOS_DEBUG_POISON=1")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: url, Cmd: cmd, Log: &log, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		// SIGTERM first: a server that stops cleanly removes its unix
		// stream socket's directory (a killed one leaves it in $TMPDIR).
		wait := 5 * time.Second
		if cmd.Process.Signal(syscall.SIGTERM) != nil {
			wait = 0 // exited already, or no SIGTERM here
		}
		select {
		case <-s.done:
		case <-time.After(wait):
			cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	if err := waitReady(url, keyFile, 10*time.Second); err != nil {
		t.Fatalf("arktos-server %v did not come up: %v\n%s", args, err, log.String())
	}
	return s
}

// Wait returns the process's exit error once it exits, or times out.
func (s *Server) Wait(d time.Duration) (error, bool) {
	select {
	case err := <-s.done:
		s.done <- err // keep it for Cleanup
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// waitReady polls until something accepts ZMTP connections at url: a raw
// DEALER whose get_config request gets any reply (auth errors count).
// With keyFile (an encrypted server's --server-key-file) it waits for the
// public key the server writes beside it and connects with CurveZMQ.
func waitReady(url, keyFile string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	sock, err := zmq.NewSocket(zmq.DEALER)
	if err != nil {
		return err
	}
	defer sock.Close()
	sock.SetLinger(0)
	if keyFile != "" {
		var key []byte
		for key, err = os.ReadFile(keyFile + ".pub"); err != nil || len(bytes.TrimSpace(key)) != 40; key, err = os.ReadFile(keyFile + ".pub") {
			if ctx.Err() != nil {
				return fmt.Errorf("no server key in %s.pub: %w", keyFile, ctx.Err())
			}
			time.Sleep(5 * time.Millisecond)
		}
		pub, secret, err := zmq.NewCurveKeypair()
		if err != nil {
			return err
		}
		sock.SetCurveServerkey(string(bytes.TrimSpace(key)))
		sock.SetCurvePublickey(pub)
		sock.SetCurveSecretkey(secret)
	}
	if err := sock.Connect(url); err != nil {
		return err
	}
	// msgpack {"v":1,"id":1,"token":"","cmd":"get_config","args":{}}
	hdr := []byte("\x85\xa1v\x01\xa2id\x01\xa5token\xa0\xa3cmd\xaaget_config\xa4args\x80")
	if _, err := sock.SendBytes(hdr, 0); err != nil {
		return err
	}
	sock.SetRcvtimeo(50 * time.Millisecond)
	for ctx.Err() == nil {
		if _, err := sock.RecvBytes(0); err == nil {
			return nil
		}
	}
	return ctx.Err()
}

// RestartRestoring stops first cleanly (which saves its checkpoint ckpt)
// and starts a server on the same address that restores it after delay
// (ARKTOS_DEBUG_RESTORE_DELAY); it returns 200 ms after the start, with
// the new server up and restoring, and the new server's log.
func RestartRestoring(t testing.TB, first *Server, ckpt, delay string) *bytes.Buffer {
	t.Helper()
	first.Cmd.Process.Signal(syscall.SIGTERM)
	if err, ok := first.Wait(20 * time.Second); !ok || err != nil {
		t.Fatalf("first server: exit %v (exited %v)\n%s", err, ok, first.Log.String())
	}
	second := exec.Command(Binary(t), "--addr", first.URL, "--checkpoint", ckpt, "--log-level", "warn")
	second.Env = append(os.Environ(), "ARKTOS_DEBUG_RESTORE_DELAY="+delay)
	var log bytes.Buffer
	second.Stdout, second.Stderr = &log, &log
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Process.Kill(); second.Wait() })
	time.Sleep(200 * time.Millisecond)
	return &log
}

// StressSeed is a randomized test's seed: ARKTOS_STRESS_SEED when set (to
// repeat a run), else the clock's; logged either way.
func StressSeed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ARKTOS_STRESS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (ARKTOS_STRESS_SEED)", seed)
	return seed
}

package main

// locales.go starts the other locales of `--locales N` on this machine: N-1
// more arktos-server processes on loopback, which this process (locale 0,
// the coordinator) then serves through (server/locales.go). Launch across
// machines belongs to a resource manager (docs/locales.md); this is the
// one-machine case, for tests, benchmarks and notebooks.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// localeProcs are the processes of locales 1..N-1 started by this one.
type localeProcs struct {
	cmds []*exec.Cmd
	urls []string // tcp://127.0.0.1:port?token=..., rank order 1..N-1
}

// freeLoopbackPort is a loopback TCP port that was free a moment ago.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startLocales starts locales 1..n-1 with the flags in common (memory,
// workers, frames, data directory, ...): each binds a free loopback port,
// requires a token only the coordinator knows, and is killed by the kernel
// when this process dies (Pdeathsig), so no locale outlives its set.
func startLocales(n int, common []string) (*localeProcs, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--locales: cannot find this program to start the other locales: %w", err)
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(tok[:])
	// The children's environment: ARKTOS_* settings are this process's
	// (a checkpoint directory, an address) and must not apply to every
	// locale; the debugging switches still do.
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ARKTOS_") && !strings.HasPrefix(kv, "ARKTOS_DEBUG_") {
			continue
		}
		env = append(env, kv)
	}
	p := &localeProcs{}
	for r := 1; r < n; r++ {
		port, err := freeLoopbackPort()
		if err != nil {
			p.stop()
			return nil, fmt.Errorf("--locales: no free loopback port for locale %d: %w", r, err)
		}
		addr := fmt.Sprintf("tcp://127.0.0.1:%d", port)
		args := append([]string{"--addr", addr, "--token", token, "--encrypt", "off",
			"--locale-rank", strconv.Itoa(r), "--locales", "1"}, common...)
		c := exec.Command(exe, args...)
		c.Env = env
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			p.stop()
			return nil, fmt.Errorf("--locales: start locale %d: %w", r, err)
		}
		p.cmds = append(p.cmds, c)
		p.urls = append(p.urls, addr+"?token="+token)
	}
	return p, nil
}

// stop ends the locales: SIGTERM (a clean stop), then SIGKILL for any that
// has not exited within 5 s.
func (p *localeProcs) stop() {
	if p == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		for _, c := range p.cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		for _, c := range p.cmds {
			_ = c.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		for _, c := range p.cmds {
			_ = c.Process.Kill()
		}
		<-done
	}
}

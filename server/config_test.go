package server

import (
	"strings"
	"testing"
)

func TestIsLocalAddr(t *testing.T) {
	cases := map[string]bool{
		"tcp://127.0.0.1:5555": true, "tcp://localhost:1": true, "tcp://[::1]:5555": true, "tcp://127.3.4.5:9": true,
		"ipc:///tmp/arktos": true, "inproc://x": true,
		"tcp://*:5555": false, "tcp://0.0.0.0:5555": false, "tcp://10.0.0.2:5555": false, "tcp://eth0:5555": false, "nonsense": false,
	}
	for addr, want := range cases {
		if got := IsLocalAddr(addr); got != want {
			t.Errorf("IsLocalAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestNonLoopbackRequiresToken(t *testing.T) {
	c := Config{Addr: "tcp://0.0.0.0:5555"}
	if err := c.validate(); err != nil || !c.Auth {
		t.Fatalf("auth %v err %v: a non-loopback bind must require a token", c.Auth, err)
	}
}

// TestEncryptModes: auto encrypts an address other hosts can reach, not a
// loopback one; on and off are taken as given, and an encrypted server
// still offers its bulk streams (TLS, stream.go); anything else is refused
// naming the choices.
func TestEncryptModes(t *testing.T) {
	for _, tc := range []struct{ addr, mode, want string }{
		{"tcp://0.0.0.0:5555", "", EncryptOn},
		{"tcp://0.0.0.0:5555", EncryptAuto, EncryptOn},
		{"tcp://127.0.0.1:5555", "", EncryptOff},
		{"tcp://127.0.0.1:5555", EncryptOn, EncryptOn},
		{"tcp://0.0.0.0:5555", EncryptOff, EncryptOff},
	} {
		c := Config{Addr: tc.addr, Encrypt: tc.mode}
		if err := c.validate(); err != nil {
			t.Fatal(err)
		}
		if c.Encrypt != tc.want || c.StreamPort == -1 {
			t.Errorf("%s --encrypt %q: %s, stream port %d", tc.addr, tc.mode, c.Encrypt, c.StreamPort)
		}
	}
	c := Config{Addr: "tcp://127.0.0.1:5555", Encrypt: "yes"}
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "auto, on or off") {
		t.Fatalf("--encrypt yes: %v", err)
	}
}

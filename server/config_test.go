package server

import "testing"

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

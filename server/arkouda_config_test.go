package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/transfer"
)

// TestGetConfigArkoudaKeys: get_config answers the keys Arkouda's scripts
// read (numLocales, numNodes, ...) with this server's true values.
func TestGetConfigArkoudaKeys(t *testing.T) {
	s := startServer(t, Config{Workers: 3})
	d := dealer(t, s.Endpoint())
	sendRequest(t, d, 1, "get_config", nil)
	rep := recvReply(t, d, 10*time.Second)
	if rep == nil || rep.Status != 0 {
		t.Fatalf("get_config: %+v", rep)
	}
	c := rep.Result
	num := func(k string) int64 {
		v, ok := transfer.AsInt(c[k])
		if !ok {
			t.Errorf("%s = %v (%T), want an integer", k, c[k], c[k])
		}
		return v
	}
	if num("numLocales") != 1 || num("numNodes") != 1 || num("maxTaskPar") != 3 || num("numPUs") < 1 || num("physicalMemory") <= 0 {
		t.Errorf("numLocales %v numNodes %v maxTaskPar %v numPUs %v physicalMemory %v",
			c["numLocales"], c["numNodes"], c["maxTaskPar"], c["numPUs"], c["physicalMemory"])
	}
	port := s.Endpoint()[strings.LastIndex(s.Endpoint(), ":")+1:]
	if strconv.FormatInt(num("ServerPort"), 10) != port {
		t.Errorf("ServerPort %v, the server listens on %s", c["ServerPort"], s.Endpoint())
	}
	locales, _ := c["LocaleConfigs"].([]any)
	if len(locales) != 1 {
		t.Fatalf("LocaleConfigs %v, want one locale", c["LocaleConfigs"])
	}
	if c["arkoudaVersion"] != Version || c["serverHostname"] == "" || c["authenticate"] != false {
		t.Errorf("arkoudaVersion %v serverHostname %v authenticate %v", c["arkoudaVersion"], c["serverHostname"], c["authenticate"])
	}
}

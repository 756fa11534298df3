package server

import (
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	zmq "github.com/pebbe/zmq4"
)

// arkoudaConfig adds to get_config the keys Arkouda's getConfig reports,
// under Arkouda's names, so that Arkouda users' scripts (its benchmarks
// read numLocales and numNodes first) find them with true values. One
// server process is one locale on one node.
func (s *Server) arkoudaConfig(cfg map[string]any) {
	machineOnce.Do(readMachine)
	host, mem, pus := machine.host, machine.mem, machine.pus
	zmaj, zmin, zpatch := zmq.Version()
	locale := map[string]any{
		"id": 0, "name": host, "hostname": host,
		"numPUs": pus, "maxTaskPar": s.cfg.Workers, "physicalMemory": mem,
	}
	cfg["arkoudaVersion"] = Version
	cfg["ZMQVersion"] = strconv.Itoa(zmaj) + "." + strconv.Itoa(zmin) + "." + strconv.Itoa(zpatch)
	cfg["serverHostname"] = host
	cfg["ServerPort"] = endpointPort(s.endpoint)
	cfg["numLocales"] = 1
	cfg["numNodes"] = 1
	cfg["numPUs"] = pus
	cfg["maxTaskPar"] = s.cfg.Workers
	cfg["physicalMemory"] = mem
	cfg["distributionType"] = "block"
	cfg["LocaleConfigs"] = []any{locale}
	cfg["authenticate"] = s.cfg.Auth
	cfg["maxArrayDims"] = 1
	cfg["byteorder"] = "little"
}

// endpointPort is a tcp:// endpoint's port, 0 for other transports.
func endpointPort(endpoint string) int {
	if !strings.HasPrefix(endpoint, "tcp://") {
		return 0
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// machine is what get_config says of the host, read once (get_config is a
// small request: /proc/meminfo is not read at each).
var (
	machineOnce sync.Once
	machine     struct {
		host string
		mem  int64
		pus  int
	}
)

func readMachine() {
	machine.host, _ = os.Hostname()
	machine.mem = physicalMemory()
	machine.pus = runtime.NumCPU()
}

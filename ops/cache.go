package ops

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// l2CacheBytes is one core's L2 (or unified second-level) cache size as
// Linux reports it in sysfs, read once; 1 MiB where it cannot be read
// (another OS, a container hiding sysfs). Kernels size their tables by it.
var l2CacheBytes = sync.OnceValue(func() int {
	for i := 0; i < 8; i++ {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu0/cache/index%d/", i)
		level, err := os.ReadFile(dir + "level")
		if err != nil {
			break
		}
		typ, _ := os.ReadFile(dir + "type")
		if strings.TrimSpace(string(level)) != "2" || strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		size, _ := os.ReadFile(dir + "size")
		if n, ok := parseCacheSize(strings.TrimSpace(string(size))); ok {
			return n
		}
	}
	return 1 << 20
})

// testL2Bytes, when not 0, is what l2Bytes says (tests whose expectations
// depend on the cache's size).
var testL2Bytes = 0

// l2Bytes is l2CacheBytes, or testL2Bytes in tests.
func l2Bytes() int {
	if testL2Bytes != 0 {
		return testL2Bytes
	}
	return l2CacheBytes()
}

// parseCacheSize reads sysfs' cache size format: "2048K", "1M", or bytes.
func parseCacheSize(s string) (int, bool) {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n * mul, true
}

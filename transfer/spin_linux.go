package transfer

import "golang.org/x/sys/unix"

// yieldCPU lets any other runnable thread have this CPU (SpinReader).
func yieldCPU() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

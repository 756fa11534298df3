//go:build unix && !linux

package transfer

import "runtime"

// yieldCPU: no sched_yield system call to make here (darwin's is a libc
// function); other goroutines get the CPU at least.
func yieldCPU() { runtime.Gosched() }

package ops

import "golang.org/x/sys/cpu"

// vzeroupper clears the upper halves of the vector registers (upper_amd64.s).
func vzeroupper()

var hasAVX = cpu.X86.HasAVX

// clearUpper clears the vector registers' upper bits, where the CPU has
// them. Go's asynchronous preemption restores a goroutine's AVX-512
// registers and leaves them dirty, and after that, on this project's VMs,
// code that mixes VEX and SSE instructions (math.Exp's FMA path, math.FMA)
// ran 30-200 times slower until something cleared them: ak.exp of 10^7
// float64 took 4.4-13.8 s instead of 0.05. Loops over such functions call
// this every 64 elements, so a preemption costs at most 64 slow calls.
func clearUpper() {
	if hasAVX {
		vzeroupper()
	}
}

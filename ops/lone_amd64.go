package ops

// The fused lone-key loops in assembly (lone_amd64.s), for int64 keys.

func loneSumsAsm(ks, xs []int64, m uint64, sm []int64) (bad bool, sg uint64)
func loneSumsRowsAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool)
func loneMeansAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64)
func lonePairAsm(ks, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64)
func loneFloatAsm(ks []int64, xs []float64, m uint64, fs []sumSlot) (bad bool)

// loneAsmBuilt: this architecture has the assembly loops.
const loneAsmBuilt = true

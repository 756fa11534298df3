//go:build !amd64

package ops

// Other architectures run the Go loops (loneAsmBuilt false: never called).

func loneSumsAsm(ks, xs []int64, m uint64, sm []int64) (bad bool, sg uint64) { panic("no assembly") }
func loneSumsRowsAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool)     { panic("no assembly") }
func loneMeansAsm(ks, xs []int64, m uint64, sm, r []int64) (bad bool, ma uint64) {
	panic("no assembly")
}
func lonePairAsm(ks, xa, xb []int64, m uint64, sa, sb, r []int64) (bad bool, ma, mb uint64) {
	panic("no assembly")
}
func loneFloatAsm(ks []int64, xs []float64, m uint64, fs []sumSlot) (bad bool) { panic("no assembly") }

const loneAsmBuilt = false

package ops

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// BenchmarkRowOrderSplit asks whether a float64 sum by a dense key, added
// in row order within each group (bit-exact with a sequential loop, as
// the group-by must be), gains from a second worker on this machine. The
// data is the taxi benchmark's pickup zone (7.7 M rows, 265 zones, skewed:
// floor(265·u³)+1) and a fare in cents. Variants: "scan" reads both
// columns (the floor, adding as integers), "scan2" on two workers, half
// the rows each; "serial" is the one-worker loop (sum and count);
// "split2" gives each of two workers every row and half of the zones
// (branching on the key), "split2-nobranch" sends the other half's rows to
// eight spare slots instead of branching; "scatter2" has each worker copy
// its half of the rows into two pieces by zone half (row order kept), then
// each worker adds up one zone half's pieces in row order. Every variant's
// sums are checked bit for bit against "serial".
//
//	go test -run '^$' -bench RowOrderSplit -count 5 ./ops/
func BenchmarkRowOrderSplit(b *testing.B) {
	const n, groups = 7_700_000, 266
	k := make([]int64, n)
	v := make([]float64, n)
	r := rand.New(rand.NewPCG(1, 2))
	count := make([]int, groups)
	for i := range k {
		u := r.Float64()
		k[i] = int64(math.Floor(265*u*u*u)) + 1
		v[i] = math.Round(r.Float64()*5000) / 100
		count[k[i]]++
	}
	mid, seen := int64(0), 0 // the zone that splits the rows in half
	for seen < n/2 {
		seen += count[mid]
		mid++
	}
	add := func(k []int64, v []float64, s []float64, c []int64) {
		for i, key := range k {
			s[key] += v[i]
			c[key]++
		}
	}
	ref, refC := make([]float64, groups), make([]int64, groups)
	add(k, v, ref, refC)
	check := func(b *testing.B, s []float64, c []int64) {
		for g := range groups {
			if math.Float64bits(s[g]) != math.Float64bits(ref[g]) || c[g] != refC[g] {
				b.Fatalf("zone %d: %v (%d rows), want %v (%d)", g, s[g], c[g], ref[g], refC[g])
			}
		}
	}
	half := func(k []int64, v []float64, s []float64, c []int64, lo, hi int64, branch bool) {
		for i, key := range k {
			if branch {
				if key >= lo && key < hi {
					s[key] += v[i]
					c[key]++
				}
				continue
			}
			idx := key
			if uint64(key-lo) >= uint64(hi-lo) {
				idx = groups + int64(i&7)
			}
			s[idx] += v[i]
			c[idx]++
		}
	}
	split := func(branch bool) ([]float64, []int64) {
		s := [2][]float64{make([]float64, groups+8), make([]float64, groups+8)}
		c := [2][]int64{make([]int64, groups+8), make([]int64, groups+8)}
		var wg sync.WaitGroup
		wg.Go(func() { half(k, v, s[0], c[0], 0, mid, branch) })
		wg.Go(func() { half(k, v, s[1], c[1], mid, groups, branch) })
		wg.Wait()
		copy(s[0][mid:groups], s[1][mid:groups])
		copy(c[0][mid:groups], c[1][mid:groups])
		return s[0], c[0]
	}
	type piece struct {
		k []int64
		v []float64
	}
	var pieces [2][2]piece // [worker][zone half]
	for w := range 2 {
		for h := range 2 {
			pieces[w][h] = piece{make([]int64, n), make([]float64, n)}
		}
	}
	scatter := func() ([]float64, []int64) {
		var filled [2][2]int
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Go(func() {
				lo, lower, upper := w*n/2, pieces[w][0], pieces[w][1]
				var m [2]int
				for i := lo; i < (w+1)*n/2; i++ {
					if key := k[i]; key < mid {
						lower.k[m[0]], lower.v[m[0]] = key, v[i]
						m[0]++
					} else {
						upper.k[m[1]], upper.v[m[1]] = key, v[i]
						m[1]++
					}
				}
				filled[w] = m
			})
		}
		wg.Wait()
		s := [2][]float64{make([]float64, groups), make([]float64, groups)}
		c := [2][]int64{make([]int64, groups), make([]int64, groups)}
		for h := range 2 {
			wg.Go(func() {
				for w := range 2 { // row order: worker 0's rows come first
					add(pieces[w][h].k[:filled[w][h]], pieces[w][h].v[:filled[w][h]], s[h], c[h])
				}
			})
		}
		wg.Wait()
		copy(s[0][mid:], s[1][mid:])
		copy(c[0][mid:], c[1][mid:])
		return s[0], c[0]
	}
	run := func(name string, f func() ([]float64, []int64)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(16 * n)
			for b.Loop() {
				s, c := f()
				b.StopTimer()
				if s != nil {
					check(b, s, c)
				}
				b.StartTimer()
			}
		})
	}
	run("scan", func() ([]float64, []int64) {
		var a int64
		var f uint64 // (integer adds: a chain of float adds would be the bound)
		for i := range k {
			a += k[i]
			f += math.Float64bits(v[i])
		}
		sink = uint64(a) + f
		return nil, nil
	})
	run("scan2", func() ([]float64, []int64) {
		var wg sync.WaitGroup
		var sums [2]uint64
		for w := range 2 {
			wg.Go(func() {
				var a, f uint64
				for i := w * n / 2; i < (w+1)*n/2; i++ {
					a += uint64(k[i])
					f += math.Float64bits(v[i])
				}
				sums[w] = a + f
			})
		}
		wg.Wait()
		sink = sums
		return nil, nil
	})
	run("serial", func() ([]float64, []int64) {
		s, c := make([]float64, groups), make([]int64, groups)
		add(k, v, s, c)
		return s, c
	})
	run("split2", func() ([]float64, []int64) { return split(true) })
	run("split2-nobranch", func() ([]float64, []int64) { return split(false) })
	run("scatter2", scatter)
}

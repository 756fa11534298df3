package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// TestGroupSampleRows: each group gives its count of distinct rows of its
// own, in row order (or group by group, shuffled), the same at 1, 2 and 8 workers;
// dropped rows are never drawn; too many samples are refused.
func TestGroupSampleRows(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n, ng = 50000, 300
	ids := randomIDs(r, n, ng)
	gid := pdarray.View[int32](ids)
	size := groupSizes(gid, ng)
	cnt := make([]int64, ng)
	for g := range cnt {
		cnt[g] = r.Int64N(size[g] + 1)
	}
	counts := pdarray.FromSlice(cnt)
	checkSamples(t, gid, cnt, func(i int64) bool { return true }, func(w int, grouped bool) (*pdarray.Array, error) {
		return GroupSampleRows(PlainEnv(w), ids, ng, counts, 99, grouped)
	})
	cnt[7] = size[7] + 1
	if _, err := GroupSampleRows(PlainEnv(1), ids, ng, pdarray.FromSlice(cnt), 1, false); err == nil {
		t.Fatal("more samples than rows accepted")
	}
	if _, err := GroupSampleRows(PlainEnv(1), ids, ng, pdarray.FromSlice(make([]int32, ng)), 1, false); err == nil {
		t.Fatal("int32 counts accepted")
	}
}

// groupSizes counts each group's rows (id -1: none).
func groupSizes(gid []int32, ng int) []int64 {
	size := make([]int64, ng)
	for _, g := range gid {
		if g >= 0 {
			size[g]++
		}
	}
	return size
}

// checkSamples checks sample's rows at 1, 2 and 8 workers, in row order
// and grouped: cnt[g] distinct rows of each group g, each one drawable
// (ok: not of weight 0), in row order or group by group, and the same
// rows at every worker count.
func checkSamples(t *testing.T, gid []int32, cnt []int64, ok func(i int64) bool, sample func(w int, grouped bool) (*pdarray.Array, error)) {
	t.Helper()
	var first []int64
	for _, w := range []int{1, 2, 8} {
		for _, grouped := range []bool{false, true} {
			out, err := sample(w, grouped)
			if err != nil {
				t.Fatal(err)
			}
			rows := pdarray.View[int64](out)
			got := make([]int64, len(cnt))
			for j, i := range rows {
				g := gid[i]
				if g < 0 || !ok(i) {
					t.Fatalf("row %d (group %d) drawn", i, g)
				}
				got[g]++
				if j > 0 && (!grouped && rows[j-1] >= i || grouped && gid[rows[j-1]] > g) {
					t.Fatalf("grouped %v: row %d after %d", grouped, i, rows[j-1])
				}
			}
			if !slices.Equal(got, cnt) {
				t.Fatalf("%d workers, grouped %v: counts per group differ", w, grouped)
			}
			sorted := slices.Sorted(slices.Values(rows))
			if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
				t.Fatal("a row drawn twice")
			}
			if first == nil {
				first = sorted
			} else if !slices.Equal(first, sorted) {
				t.Fatalf("%d workers, grouped %v: another sample for the same seed", w, grouped)
			}
		}
	}
}

// TestGroupSampleRowsUniform: 2 of a group's 5 rows, over 20,000 seeds,
// give each of the 10 pairs about 2,000 times (within 5 standard
// deviations), and the other group's 1 of 3 rows each about a third;
// grouped, a pair's later row comes first about half the time (the order
// drawn).
func TestGroupSampleRowsUniform(t *testing.T) {
	ids := pdarray.FromSlice([]int32{0, 1, 0, 0, -1, 1, 0, 1, 0})
	counts := pdarray.FromSlice([]int64{2, 1})
	const trials = 20000
	check := func(what string, c int, p float64) {
		if sd := math.Sqrt(trials * p * (1 - p)); math.Abs(float64(c)-trials*p) > 5*sd {
			t.Errorf("%s drawn %d times of %d, want about %.0f", what, c, trials, trials*p)
		}
	}
	pairs := map[[2]int64]int{}
	ones := map[int64]int{}
	swapped := 0
	for s := range uint64(trials) {
		out, err := GroupSampleRows(PlainEnv(1), ids, 2, counts, s, true)
		if err != nil {
			t.Fatal(err)
		}
		v := pdarray.View[int64](out)
		swapped += btoi(v[0] > v[1])
		pairs[[2]int64{min(v[0], v[1]), max(v[0], v[1])}]++
		ones[v[2]]++
	}
	check("a pair's later row first", swapped, 0.5)
	if len(pairs) != 10 || len(ones) != 3 {
		t.Fatalf("%d pairs and %d single rows drawn", len(pairs), len(ones))
	}
	for _, c := range pairs {
		check("a pair", c, 0.1)
	}
	for _, c := range ones {
		check("a row", c, 1.0/3)
	}
}

// TestGroupSampleWeighted: counts per group, distinct rows of the group,
// none of weight 0, row order or group by group, the same at 1, 2 and 8
// workers; bad weights and too many samples refused.
func TestGroupSampleWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const n, ng = 40000, 200
	ids := randomIDs(r, n, ng)
	gid := pdarray.View[int32](ids)
	w := make([]float64, n)
	pos := make([]int64, ng)
	for i, g := range gid {
		if r.IntN(4) > 0 {
			w[i] = r.Float64() * 10
		}
		if g >= 0 && w[i] > 0 {
			pos[g]++
		}
	}
	cnt := make([]int64, ng)
	for g := range cnt {
		cnt[g] = r.Int64N(pos[g] + 1)
	}
	counts, weights := pdarray.FromSlice(cnt), pdarray.FromSlice(w)
	checkSamples(t, gid, cnt, func(i int64) bool { return w[i] > 0 }, func(workers int, grouped bool) (*pdarray.Array, error) {
		return GroupSampleWeighted(PlainEnv(workers), ids, ng, counts, weights, 5, grouped)
	})
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		w2 := slices.Clone(w)
		w2[123] = bad
		if _, err := GroupSampleWeighted(PlainEnv(1), ids, ng, counts, pdarray.FromSlice(w2), 5, false); err == nil {
			t.Fatalf("weight %v accepted", bad)
		}
	}
	cnt2 := slices.Clone(cnt)
	cnt2[3] = pos[3] + 1
	if _, err := GroupSampleWeighted(PlainEnv(1), ids, ng, pdarray.FromSlice(cnt2), weights, 5, false); err == nil {
		t.Fatal("more samples than rows of positive weight accepted")
	}
	if _, err := GroupSampleWeighted(PlainEnv(1), ids, ng, counts, pdarray.FromSlice(make([]float32, n)), 5, false); err == nil {
		t.Fatal("float32 weights accepted")
	}
}

// TestGroupSampleWeightedDistribution: one of rows weighted 1, 2, 3, 4
// comes 10, 20, 30, 40% of 20,000 seeds, and two of them come as pairs
// as often as drawing one by one in proportion to the weights left gives,
// within 5 standard deviations; grouped, the first drawn is the likelier.
func TestGroupSampleWeightedDistribution(t *testing.T) {
	ids := pdarray.FromSlice([]int32{0, 0, 0, 0})
	weights := pdarray.FromSlice([]float64{1, 2, 3, 4})
	p := []float64{0.1, 0.2, 0.3, 0.4}
	const trials = 20000
	check := func(what string, c int, q float64) {
		if sd := math.Sqrt(trials * q * (1 - q)); math.Abs(float64(c)-trials*q) > 5*sd {
			t.Errorf("%s drawn %d times of %d, want about %.0f", what, c, trials, trials*q)
		}
	}
	ones := make([]int, 4)
	pairs := map[[2]int64]int{}
	firstOf := map[[2]int64]int{} // grouped: how often the pair's lower row came first
	for s := range uint64(trials) {
		out, err := GroupSampleWeighted(PlainEnv(1), ids, 1, pdarray.FromSlice([]int64{1}), weights, s, false)
		if err != nil {
			t.Fatal(err)
		}
		ones[pdarray.View[int64](out)[0]]++
		out, err = GroupSampleWeighted(PlainEnv(1), ids, 1, pdarray.FromSlice([]int64{2}), weights, s, true)
		if err != nil {
			t.Fatal(err)
		}
		v := pdarray.View[int64](out)
		pr := [2]int64{min(v[0], v[1]), max(v[0], v[1])}
		pairs[pr]++
		firstOf[pr] += btoi(v[0] == pr[0])
	}
	for i, c := range ones {
		check("a row", c, p[i])
	}
	for a := range 4 {
		for b := a + 1; b < 4; b++ {
			ab, ba := p[a]*p[b]/(1-p[a]), p[b]*p[a]/(1-p[b]) // a then b, b then a
			pr := [2]int64{int64(a), int64(b)}
			check("a pair", pairs[pr], ab+ba)
			if c := pairs[pr]; c > 0 {
				if q := ab / (ab + ba); math.Abs(float64(firstOf[pr])-float64(c)*q) > 5*math.Sqrt(float64(c)*q*(1-q)) {
					t.Errorf("pair %v: its lower row first %d times of %d, want about %.0f", pr, firstOf[pr], c, float64(c)*q)
				}
			}
		}
	}
}

// BenchmarkGroupSample: 5 rows of each of 10^5 groups of 10^7 rows,
// uniform (selection sampling) and weighted (A-Res heaps), and with
// replacement, uniform and weighted, in row order.
func BenchmarkGroupSample(b *testing.B) {
	const n, ng = 10_000_000, 100_000
	r := rand.New(rand.NewPCG(7, 8))
	ids := randomIDs(r, n, ng)
	w := make([]float64, n)
	for i := range w {
		w[i] = r.Float64() + 0.1
	}
	weights := pdarray.FromSlice(w)
	cnt := make([]int64, ng)
	for g := range cnt {
		cnt[g] = 5
	}
	counts := pdarray.FromSlice(cnt)
	env := poolEnv(1)
	b.Run("uniform", func(b *testing.B) {
		b.SetBytes(n * 4)
		for b.Loop() {
			out, err := GroupSampleRows(env, ids, ng, counts, 1, false)
			if err != nil {
				b.Fatal(err)
			}
			env.Free(out)
		}
	})
	b.Run("weighted", func(b *testing.B) {
		b.SetBytes(n * 12)
		for b.Loop() {
			out, err := GroupSampleWeighted(env, ids, ng, counts, weights, 1, false)
			if err != nil {
				b.Fatal(err)
			}
			env.Free(out)
		}
	})
	for _, c := range []struct {
		name string
		w    *pdarray.Array
	}{{"replace", nil}, {"replace-weighted", weights}} {
		for _, wk := range []int{1, 2} {
			env := poolEnv(wk)
			b.Run(fmt.Sprintf("%s/w=%d", c.name, wk), func(b *testing.B) {
				b.SetBytes(n * 4)
				for b.Loop() {
					out, err := GroupSampleReplace(env, ids, ng, counts, c.w, 1, false)
					if err != nil {
						b.Fatal(err)
					}
					env.Free(out)
				}
			})
		}
	}
}

// TestGroupSampleReplace: with replacement, each group gives its count of
// rows of its own (weighted: none of weight 0), in row order or group by
// group, the same rows at 1, 2 and 8 workers; rows are drawn in
// proportion to their weights (uniformly without) within 5 standard
// deviations over 400,000 draws; refusals name the group or row.
func TestGroupSampleReplace(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	defer func(b int) { replBlockRows = b }(replBlockRows)
	replBlockRows = 1 << 14
	// 2 blocks of rows (replBlocks), 8, and one: each worker count splits them its own way
	for _, c := range []struct{ n, ng int }{{40000, 500}, {1 << 17, 10}, {1000, 7}} {
		checkReplace(t, r, c.n, c.ng)
	}
	// Frequencies: one group of rows weighted 1, 0, 2, 3, 4 (and uniform).
	one := pdarray.FromSlice([]int32{0, 0, 0, 0, 0})
	const draws = 400_000
	for _, c := range []struct {
		w    []float64
		want []float64
	}{{[]float64{1, 0, 2, 3, 4}, []float64{0.1, 0, 0.2, 0.3, 0.4}}, {nil, []float64{0.2, 0.2, 0.2, 0.2, 0.2}}} {
		var wa *pdarray.Array
		if c.w != nil {
			wa = pdarray.FromSlice(c.w)
		}
		out, err := GroupSampleReplace(PlainEnv(2), one, 1, pdarray.FromSlice([]int64{draws}), wa, 77, true)
		if err != nil {
			t.Fatal(err)
		}
		freq := make([]float64, 5)
		for _, i := range pdarray.View[int64](out) {
			freq[i]++
		}
		for i, p := range c.want {
			if sd := math.Sqrt(draws * p * (1 - p)); math.Abs(freq[i]-draws*p) > 5*sd+1e-9 {
				t.Errorf("weights %v: row %d drawn %v times, want %v ± %v", c.w, i, freq[i], draws*p, 5*sd)
			}
		}
	}
	bad := func(cnts []int64, w []float64, ids []int32) error {
		var wa *pdarray.Array
		if w != nil {
			wa = pdarray.FromSlice(w)
		}
		_, err := GroupSampleReplace(PlainEnv(1), pdarray.FromSlice(ids), len(cnts), pdarray.FromSlice(cnts), wa, 1, false)
		return err
	}
	for i, err := range []error{
		bad([]int64{-1, 1}, nil, []int32{0, 1}),
		bad([]int64{1, 1}, nil, []int32{0, 0}),                      // group 1 has no rows
		bad([]int64{1, 1}, []float64{1, 0}, []int32{0, 1}),          // group 1's weights all 0
		bad([]int64{1, 1}, []float64{1, math.NaN()}, []int32{0, 1}), // a NaN weight
		bad([]int64{1, 1}, []float64{1, -2}, []int32{0, 1}),
		bad([]int64{1, 1}, []float64{1, math.Inf(1)}, []int32{0, 1}),
		bad([]int64{1, 1}, []float64{1}, []int32{0, 1}),
		bad([]int64{1, 1}, []float64{1e308, 1e308, 1}, []int32{0, 0, 1}), // group 0's sum is +Inf
	} {
		if err == nil {
			t.Errorf("bad sample %d accepted", i)
		}
	}
	if err := bad([]int64{0, 2}, []float64{0, 1}, []int32{0, 1}); err != nil {
		t.Errorf("group 0 asked for nothing: %v", err)
	}
}

// checkReplace draws with replacement from n rows in ng groups, uniform
// and weighted (a quarter of the weights 0), at 1, 2 and 8 workers, in row
// order and grouped: each group's count of rows of its own, none of weight
// 0, in order, the same rows at every worker count.
func checkReplace(t *testing.T, r *rand.Rand, n, ng int) {
	t.Helper()
	ids := randomIDs(r, n, ng)
	gid := pdarray.View[int32](ids)
	size := groupSizes(gid, ng)
	w := make([]float64, n)
	for i := range w {
		if r.IntN(4) > 0 {
			w[i] = r.Float64() * 10
		}
	}
	pos := make([]int64, ng)
	for i, g := range gid {
		if g >= 0 && w[i] > 0 {
			pos[g]++
		}
	}
	cnt := make([]int64, ng)
	for g := range cnt {
		if pos[g] > 0 {
			cnt[g] = r.Int64N(3 * size[g]) // more than the group's rows too
		}
	}
	counts, weights := pdarray.FromSlice(cnt), pdarray.FromSlice(w)
	for _, weighted := range []bool{false, true} {
		var first []int64
		for _, wk := range []int{1, 2, 8} {
			for _, grouped := range []bool{false, true} {
				var wa *pdarray.Array
				if weighted {
					wa = weights
				}
				out, err := GroupSampleReplace(PlainEnv(wk), ids, ng, counts, wa, 5, grouped)
				if err != nil {
					t.Fatal(err)
				}
				rows := pdarray.View[int64](out)
				got := make([]int64, ng)
				for j, i := range rows {
					g := gid[i]
					if g < 0 || weighted && w[i] == 0 {
						t.Fatalf("row %d (group %d, weight %v) drawn", i, g, w[i])
					}
					got[g]++
					if j > 0 && (!grouped && rows[j-1] > i || grouped && gid[rows[j-1]] > g) {
						t.Fatalf("grouped %v: row %d after %d", grouped, i, rows[j-1])
					}
				}
				if !slices.Equal(got, cnt) {
					t.Fatalf("%d rows, weighted %v, %d workers, grouped %v: counts per group differ", n, weighted, wk, grouped)
				}
				sorted := slices.Sorted(slices.Values(rows))
				if first == nil {
					first = sorted
				} else if !slices.Equal(first, sorted) {
					t.Fatalf("%d rows, weighted %v, %d workers: another sample for the same seed", n, weighted, wk)
				}
			}
		}
	}
}

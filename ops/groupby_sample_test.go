package ops

import (
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
	size := make([]int64, ng)
	for _, g := range gid {
		if g >= 0 {
			size[g]++
		}
	}
	cnt := make([]int64, ng)
	for g := range cnt {
		cnt[g] = r.Int64N(size[g] + 1)
	}
	counts := pdarray.FromSlice(cnt)
	var first []int64
	for _, w := range []int{1, 2, 8} {
		for _, grouped := range []bool{false, true} {
			out, err := GroupSampleRows(PlainEnv(w), ids, ng, counts, 99, grouped)
			if err != nil {
				t.Fatal(err)
			}
			rows := pdarray.View[int64](out)
			got := make([]int64, ng)
			for j, i := range rows {
				g := gid[i]
				if g < 0 {
					t.Fatalf("dropped row %d drawn", i)
				}
				got[g]++
				if j > 0 {
					p := rows[j-1]
					if !grouped && p >= i || grouped && gid[p] > g {
						t.Fatalf("grouped %v: row %d after %d", grouped, i, p)
					}
				}
			}
			if !slices.Equal(got, cnt) {
				t.Fatalf("%d workers, grouped %v: counts per group differ", w, grouped)
			}
			sorted := slices.Sorted(slices.Values(rows))
			if first == nil {
				first = sorted
			} else if !slices.Equal(first, sorted) {
				t.Fatalf("%d workers, grouped %v: another sample for the same seed", w, grouped)
			}
		}
	}
	cnt[7] = size[7] + 1
	if _, err := GroupSampleRows(PlainEnv(1), ids, ng, pdarray.FromSlice(cnt), 1, false); err == nil {
		t.Fatal("more samples than rows accepted")
	}
	if _, err := GroupSampleRows(PlainEnv(1), ids, ng, pdarray.FromSlice(make([]int32, ng)), 1, false); err == nil {
		t.Fatal("int32 counts accepted")
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

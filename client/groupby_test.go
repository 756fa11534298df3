package client_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

func TestGroupBy(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k1, _ := client.Upload(ctx, c, []int64{3, 1, 3, 2, 1, 3})
	k2, _ := client.Upload(ctx, c, []float64{0.5, math.NaN(), 0.5, 1, 2, 0.5})
	v, _ := client.Upload(ctx, c, []float64{1.5, 2, 3, 4, 5, 6})
	g, err := c.NewGroupBy(ctx, []string{k1.Name, k2.Name})
	if err != nil {
		t.Fatal(err)
	}
	if g.NGroups != 3 || g.Kept != 5 || len(g.Keys) != 2 {
		t.Fatalf("groupby: %+v", g)
	}
	if got, _ := client.Download[int64](ctx, c, g.Keys[0].Name); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("keys[0] = %v", got)
	}
	s, err := g.Sum(ctx, v.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[float64](ctx, c, s.Name); !slices.Equal(got, []float64{5, 4, 10.5}) {
		t.Errorf("sum = %v", got)
	}
	n, _ := g.Size(ctx)
	if got, _ := client.Download[int64](ctx, c, n.Name); !slices.Equal(got, []int64{1, 1, 3}) {
		t.Errorf("size = %v", got)
	}
	perm, segs, err := g.Segments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int64](ctx, c, perm.Name); !slices.Equal(got, []int64{4, 3, 0, 2, 5}) {
		t.Errorf("permutation = %v", got)
	}
	if got, _ := client.Download[int64](ctx, c, segs.Name); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("segments = %v", got)
	}
	b, err := g.Broadcast(ctx, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int64](ctx, c, b.Name); !slices.Equal(got, []int64{3, 0, 3, 1, 1, 3}) {
		t.Errorf("broadcast = %v", got)
	}
	_, err = g.Aggregate(ctx, "bogus", v.Name, 0)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("bogus aggregation: %v", err)
	}
	// ids that do not belong to ngroups are refused
	_, err = c.Op(ctx, "groupby_agg", map[string]any{"ids": g.IDs.Name, "ngroups": 2, "op": "sum", "values": v.Name})
	if !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("ngroups too small: %v", err)
	}
	kn, err := c.NewGroupBy(ctx, []string{k2.Name}, client.KeepNaN(), client.WithStrategy("sort"))
	if err != nil || kn.NGroups != 4 || kn.Strategy != "sort" {
		t.Errorf("KeepNaN: %+v %v", kn, err)
	}
}

// TestGroupByAggregateMany checks several aggregations in one request against
// each alone, and that ids from groupby skip their re-check until written.
func TestGroupByAggregateMany(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{3, 1, 3, 2, 1, 3})
	v, _ := client.Upload(ctx, c, []float64{1.5, 2, math.NaN(), 4, 5, 6})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := c.Stats(ctx)
	ops := []string{"sum", "size", "count", "mean", "max"}
	many, err := g.AggregateMany(ctx, ops, v.Name, 0)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := c.Stats(ctx)
	if d := after["group_id_checks_skipped"] - before["group_id_checks_skipped"]; d != 1 {
		t.Errorf("ids from groupby were re-checked (%d checks skipped, want 1)", d)
	}
	for i, op := range ops {
		one, err := g.Aggregate(ctx, op, v.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := client.Download[byte](ctx, c, one.Name)
		b, _ := client.Download[byte](ctx, c, many[i].Name)
		if !slices.Equal(a, b) || one.DType != many[i].DType {
			t.Errorf("%s: AggregateMany %v differs from Aggregate %v", op, b, a)
		}
	}
	if got, _ := client.Download[float64](ctx, c, many[3].Name); !slices.Equal(got, []float64{3.5, 4, 3.75}) {
		t.Errorf("mean = %v", got)
	}
	// A written ids array is checked again, and a bad id is refused.
	if _, err := c.Op(ctx, "setitem", map[string]any{"a": g.IDs.Name, "index": 0, "value_scalar": 7}); err != nil {
		t.Fatal(err)
	}
	_, err = g.AggregateMany(ctx, ops, v.Name, 0)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("ids written out of range: %v", err)
	}
	if _, err := g.AggregateMany(ctx, []string{}, v.Name, 0); !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("no aggregations: %v", err)
	}
}

// TestGroupByKeyStatsCache: a second groupby by the same keys skips their
// range scans; after a key is written, the scan runs again and the new
// value gets its group.
func TestGroupByKeyStatsCache(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{3, 1, 3, 2, 1, 3})
	f, _ := client.Upload(ctx, c, []float64{0.5, math.NaN(), 0.5, 1, 2, 0.5})
	skipped := func() int64 {
		st, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st["key_scans_skipped"]
	}
	if _, err := c.NewGroupBy(ctx, []string{k.Name, f.Name}); err != nil {
		t.Fatal(err)
	}
	before := skipped()
	g, err := c.NewGroupBy(ctx, []string{k.Name, f.Name}, client.KeepNaN())
	if err != nil {
		t.Fatal(err)
	}
	if d := skipped() - before; d != 2 || g.NGroups != 4 {
		t.Fatalf("second groupby: %d scans skipped (want 2), %d groups (want 4)", d, g.NGroups)
	}
	if _, err := c.Op(ctx, "setitem", map[string]any{"a": k.Name, "index": 0, "value_scalar": 1000}); err != nil {
		t.Fatal(err)
	}
	before = skipped()
	g, err = c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	if d := skipped() - before; d != 0 || g.NGroups != 4 {
		t.Fatalf("after setitem: %d scans skipped (want 0), %d groups (want 4)", d, g.NGroups)
	}
	if got, _ := client.Download[int64](ctx, c, g.Keys[0].Name); !slices.Equal(got, []int64{1, 2, 3, 1000}) {
		t.Errorf("keys after setitem = %v", got)
	}
}

// TestScratchRecycled: a kernel's freed scratch (here the group-by states
// and scatter buffer of 200,000 groups) goes back to the server's pool, and
// a second run over the recycled, poisoned buffers gives the same answer.
func TestScratchRecycled(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	const n = 400_000
	keys, vals := make([]int64, n), make([]float64, n)
	for i := range keys {
		keys[i] = int64(i*7919) % 200_000 * 3
		vals[i] = float64(i%1000) / 8
	}
	k, _ := client.Upload(ctx, c, keys)
	v, _ := client.Upload(ctx, c, vals)
	var first []byte
	for round := 0; round < 2; round++ {
		before, _ := c.Stats(ctx)
		g, err := c.NewGroupBy(ctx, []string{k.Name})
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.AggregateMany(ctx, []string{"sum", "mean"}, v.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := c.Stats(ctx)
		if after["scratch_recycled"] <= before["scratch_recycled"] {
			t.Fatalf("round %d: no scratch buffer went back to the pool", round)
		}
		got, _ := client.Download[byte](ctx, c, out[1].Name)
		if round == 0 {
			first = got
		} else if !slices.Equal(first, got) {
			t.Fatal("means differ on recycled scratch")
		}
	}
}

// TestGroupByTopKCorr: long-form top n per group with each value's keys,
// and per-group correlation, through a real server; bad n is refused.
func TestGroupByTopKCorr(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{2, 1, 2, 2, 1, 7})
	v, _ := client.Upload(ctx, c, []float64{5, 3, math.NaN(), 9, 4, 1})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		largest bool
		keys    []int64
		vals    []float64
	}{
		{true, []int64{1, 1, 2, 2, 7}, []float64{4, 3, 9, 5, 1}},
		{false, []int64{1, 1, 2, 2, 7}, []float64{3, 4, 5, 9, 1}},
	} {
		vals, keys, err := g.TopK(ctx, v.Name, 2, tc.largest)
		if err != nil {
			t.Fatal(err)
		}
		gv, _ := client.Download[float64](ctx, c, vals.Name)
		gk, _ := client.Download[int64](ctx, c, keys[0].Name)
		if !slices.Equal(gv, tc.vals) || !slices.Equal(gk, tc.keys) {
			t.Errorf("largest=%v: keys %v values %v, want %v %v", tc.largest, gk, gv, tc.keys, tc.vals)
		}
	}
	if _, _, err := g.TopK(ctx, v.Name, 0, true); err == nil {
		t.Error("n=0 accepted")
	}
	y, _ := client.Upload(ctx, c, []float64{10, 6, 0, 18, 8, 2})
	r, err := g.Corr(ctx, v.Name, y.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := client.Download[float64](ctx, c, r.Name)
	if len(got) != 3 || got[0] != 1 || got[1] != 1 || !math.IsNaN(got[2]) {
		t.Errorf("corr = %v, want [1 1 NaN]", got)
	}
}

// TestGroupByAggregateColumns: one request over several arrays, each
// result equal to its own Aggregate; mismatched lists are refused.
func TestGroupByAggregateColumns(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{2, 1, 2, 2, 1, 7})
	f, _ := client.Upload(ctx, c, []float64{0.5, 3, math.NaN(), 9.25, 4, 1})
	i, _ := client.Upload(ctx, c, []int32{5, 6, 7, 8, 9, 10})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{"sum", "mean", "size", "max"}
	cols := []string{f.Name, i.Name, "", f.Name}
	got, err := g.AggregateColumns(ctx, ops, cols, 0)
	if err != nil {
		t.Fatal(err)
	}
	for j := range ops {
		one, err := g.Aggregate(ctx, ops[j], cols[j], 0)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := client.DownloadArray(ctx, c, one.Name)
		b, _ := client.DownloadArray(ctx, c, got[j].Name)
		if a == nil || b == nil || a.DType() != b.DType() || !slices.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s of %q differs from its own Aggregate", ops[j], cols[j])
		}
	}
	if _, err := g.AggregateColumns(ctx, []string{"sum"}, cols, 0); err == nil {
		t.Error("mismatched ops and columns accepted")
	}
	if _, err := g.AggregateColumns(ctx, []string{"sum"}, []string{""}, 0); err == nil {
		t.Error("sum with no column accepted")
	}
}

// TestGroupByAggregate: grouping and aggregating in one request gives what
// NewGroupBy then AggregateColumns give, bit for bit: fused (one small-range
// integer key, one column: no ids) or not (two columns: the grouping comes
// back, ids and all, and aggregates again).
func TestGroupByAggregate(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	n := 10_000
	k, iv, fv := make([]int32, n), make([]int64, n), make([]float64, n)
	for i := range k {
		k[i] = int32(i*31%97) - 40
		iv[i] = int64(i) * 1_000_003
		fv[i] = float64(i%1000) / 3
		if i%101 == 0 {
			fv[i] = math.NaN()
		}
	}
	ki, _ := client.Upload(ctx, c, k)
	ii, _ := client.Upload(ctx, c, iv)
	fi, _ := client.Upload(ctx, c, fv)
	ref, err := c.NewGroupBy(ctx, []string{ki.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		ops, cols []string
		fused     bool
	}{
		{[]string{"sum", "mean", "count", "size"}, []string{fi.Name, fi.Name, fi.Name, ""}, true},
		{[]string{"sum", "count"}, []string{ii.Name, ii.Name}, true},
		{[]string{"sum", "mean"}, []string{ii.Name, fi.Name}, true}, // two arrays: a loop each
		{[]string{"sum", "max"}, []string{ii.Name, fi.Name}, false},
	} {
		r, err := c.GroupByAggregate(ctx, []string{ki.Name}, q.ops, q.cols, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Fused != q.fused || (r.Group == nil) != q.fused || r.NGroups != ref.NGroups || r.Kept != n || r.Strategy != "dense" {
			t.Fatalf("%v: fused %v, group %v, %d groups, %d kept, %s", q.ops, r.Fused, r.Group != nil, r.NGroups, r.Kept, r.Strategy)
		}
		want, err := ref.AggregateColumns(ctx, q.ops, q.cols, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range q.ops {
			got, _ := client.DownloadArray(ctx, c, r.Arrays[i].Name)
			exp, _ := client.DownloadArray(ctx, c, want[i].Name)
			if got.DType() != exp.DType() || !slices.Equal(got.Bytes(), exp.Bytes()) {
				t.Errorf("%v: %s differs", q.ops, q.ops[i])
			}
		}
		if r.Group != nil {
			if _, err := r.Group.Sum(ctx, fi.Name); err != nil {
				t.Fatalf("the returned grouping: %v", err)
			}
		}
	}
	if _, err := c.GroupByAggregate(ctx, []string{ki.Name}, []string{"sum"}, nil, 0); err == nil {
		t.Fatal("ops without columns were accepted")
	}
}

// TestGroupByHeadTailBits: Arkouda's head, tail and bitwise aggregations
// from Go, and a float values array's bitwise aggregation refused.
// TestGroupByUnique: each group's distinct values and distinct pairs,
// sorted, NaN values skipped and NaN keys' rows in no group; hand-made ids
// with an empty group; bad requests refused with their code and why.
func TestGroupByUnique(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []float64{0, 2, 0, 2, 0, 2, math.NaN()})
	a, _ := client.Upload(ctx, c, []int64{5, 1, 3, 1, 5, 4, 9})
	b, _ := client.Upload(ctx, c, []float64{1, 2, math.NaN(), 2, 0.5, 2, 7})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	segs, u, err := g.Unique(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	gotSegs, _ := client.Download[int64](ctx, c, segs.Name)
	gotA, _ := client.Download[int64](ctx, c, u[0].Name)
	if !slices.Equal(gotSegs, []int64{0, 2}) || !slices.Equal(gotA, []int64{3, 5, 1, 4}) {
		t.Errorf("unique: segments %v values %v", gotSegs, gotA)
	}
	segs, u, err = g.Unique(ctx, a.Name, b.Name)
	if err != nil {
		t.Fatal(err)
	}
	gotSegs, _ = client.Download[int64](ctx, c, segs.Name)
	gotA, _ = client.Download[int64](ctx, c, u[0].Name)
	gotB, _ := client.Download[float64](ctx, c, u[1].Name)
	if !slices.Equal(gotSegs, []int64{0, 2}) || !slices.Equal(gotA, []int64{5, 5, 1, 4}) || !slices.Equal(gotB, []float64{0.5, 1, 2, 2}) {
		t.Errorf("unique pairs: segments %v values %v %v", gotSegs, gotA, gotB)
	}
	if _, _, err := g.Unique(ctx); err == nil {
		t.Error("no values accepted")
	}
	// ids made by hand: group 1 has no rows, so its segment is empty
	ids, _ := client.Upload(ctx, c, []int32{0, 2, 0, 2, 0, 2, -1})
	res, err := c.Op(ctx, "groupby_unique", map[string]any{"ids": ids.Name, "ngroups": 3, "values": []string{a.Name}})
	if err != nil {
		t.Fatal(err)
	}
	gotSegs, _ = client.Download[int64](ctx, c, res["segments"].(map[string]any)["name"].(string))
	if !slices.Equal(gotSegs, []int64{0, 2, 2}) {
		t.Errorf("hand-made ids: segments %v, want [0 2 2]", gotSegs)
	}
	short, _ := client.Upload(ctx, c, []int64{1})
	for i, tc := range []struct {
		name   string
		args   map[string]any
		code   transfer.Code
		substr string
	}{
		{"values short", map[string]any{"ids": ids.Name, "ngroups": 3, "values": []string{short.Name}}, transfer.ArgumentValue, "values have 1 elements but the group-by has 7 rows"},
		{"ngroups too few", map[string]any{"ids": ids.Name, "ngroups": 2, "values": []string{a.Name}}, transfer.ArgumentValue, "group ids hold values outside [-1, 2)"},
		{"ids int64", map[string]any{"ids": a.Name, "ngroups": 3, "values": []string{a.Name}}, transfer.UnsupportedDType, "group ids must be an int32 array"},
		{"no values", map[string]any{"ids": ids.Name, "ngroups": 3, "values": []string{}}, transfer.ArgumentValue, "needs at least one values array"},
		{"values unknown", map[string]any{"ids": ids.Name, "ngroups": 3, "values": []string{"nope"}}, transfer.UnknownArray, "no array named 'nope'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := c.SendRaw(ctx, [][]byte{header(t, uint64(3000+i), "groupby_unique", tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, rep.Err(), tc.code, tc.substr)
		})
	}
}

func TestGroupByHeadTailBits(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tail bool
		want []int64
	}{{false, []int64{0, 3, 1, 4, 2, 5}}, {true, []int64{6, 9, 4, 7, 5, 8}}} {
		get := g.Head
		if tc.tail {
			get = g.Tail
		}
		rows, err := get(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := client.Download[int64](ctx, c, rows.Name); !slices.Equal(got, tc.want) {
			t.Errorf("tail %v: %v, want %v", tc.tail, got, tc.want)
		}
	}
	if _, err := g.Head(ctx, -1); err == nil {
		t.Error("head of -1 rows accepted")
	}
	v, _ := client.Upload(ctx, c, []uint8{1, 2, 4, 8, 16, 32, 64, 128, 3, 5})
	x, err := g.Aggregate(ctx, "xor", v.Name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[uint8](ctx, c, x.Name); !slices.Equal(got, []uint8{1 ^ 8 ^ 64 ^ 5, 2 ^ 16 ^ 128, 4 ^ 32 ^ 3}) {
		t.Errorf("xor = %v", got)
	}
	counts, _ := client.Upload(ctx, c, []int64{2, 1, 3})
	keys := []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}
	for _, grouped := range []bool{true, false} {
		s, err := g.Sample(ctx, counts.Name, grouped, 7)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := client.Download[int64](ctx, c, s.Name)
		var per [3]int
		for j, r := range rows {
			per[keys[r]]++
			if j > 0 && (grouped && keys[rows[j-1]] > keys[r] || !grouped && rows[j-1] >= r) {
				t.Fatalf("sample %v, grouped %v: out of order", rows, grouped)
			}
		}
		if per != [3]int{2, 1, 3} {
			t.Errorf("sample %v: %v rows a group, want 2, 1, 3", rows, per)
		}
	}
	if s, err := g.Sample(ctx, counts.Name, false); err != nil || s.Size != 6 {
		t.Errorf("sample with the server's seed: %v %v", s, err)
	}
	// weighted: rows of weight 0 are never drawn
	w, _ := client.Upload(ctx, c, []float64{1, 0, 2, 0, 3, 1, 5, 1, 1, 4})
	ones, _ := client.Upload(ctx, c, []int64{3, 2, 2})
	sw, err := g.SampleWeighted(ctx, ones.Name, w.Name, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := client.Download[int64](ctx, c, sw.Name); len(rows) != 7 || slices.Contains(rows, 1) || slices.Contains(rows, 3) {
		t.Errorf("weighted sample %v: want 7 rows, none of rows 1 and 3 (weight 0)", rows)
	}
	tooMany, _ := client.Upload(ctx, c, []int64{5, 1, 1})
	if _, err := g.Sample(ctx, tooMany.Name, false, 7); err == nil {
		t.Error("5 samples of a group of 4 rows accepted")
	}
	// with replacement any count, weighted or not; rows of weight 0 never
	for _, weights := range []string{"", w.Name} {
		sr, err := g.SampleReplace(ctx, tooMany.Name, weights, false, 4)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := client.Download[int64](ctx, c, sr.Name)
		var per [3]int
		for j, r := range rows {
			per[keys[r]]++
			if j > 0 && rows[j-1] > r || weights != "" && (r == 1 || r == 3) {
				t.Fatalf("sample with replacement %v (weights %q): out of order, or a row of weight 0", rows, weights)
			}
		}
		if per != [3]int{5, 1, 1} {
			t.Errorf("sample with replacement %v: %v rows a group, want 5, 1, 1", rows, per)
		}
	}
	f, _ := client.Upload(ctx, c, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	_, err = g.Aggregate(ctx, "or", f.Name, 0)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.UnsupportedDType {
		t.Errorf("or of float64: %v, want UNSUPPORTED_DTYPE", err)
	}
}

// TestGroupHeadSampleBadInput: hand-made bad groupby_head and
// groupby_sample requests get their error code and a message naming what
// was wrong, and the grouping's arrays stay usable.
func TestGroupHeadSampleBadInput(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{0, 1, 2, 0, 1, 2, 0})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := client.Upload(ctx, c, []int64{1, 1, 1})
	i32, _ := client.Upload(ctx, c, []int32{1, 1, 1})
	short, _ := client.Upload(ctx, c, []int64{1, 1})
	neg, _ := client.Upload(ctx, c, []int64{1, -1, 1})
	big, _ := client.Upload(ctx, c, []int64{1, 3, 1})
	ids := g.IDs.Name
	negW, _ := client.Upload(ctx, c, []float64{1, 1, 1, -2, 1, 1, 1})
	f32W, _ := client.Upload(ctx, c, []float32{1, 1, 1, 1, 1, 1, 1})
	zeroW, _ := client.Upload(ctx, c, []float64{1, 0, 1, 1, 0, 1, 1})
	nanW, _ := client.Upload(ctx, c, []float64{1, 1, math.NaN(), 1, 1, 1, 1})
	weighted := func(w string) map[string]any {
		return map[string]any{"ids": ids, "ngroups": 3, "counts": good.Name, "weights": w}
	}
	sample := func(counts string) map[string]any {
		return map[string]any{"ids": ids, "ngroups": 3, "counts": counts, "seed": 1}
	}
	for i, tc := range []struct {
		name   string
		cmd    string
		args   map[string]any
		code   transfer.Code
		substr string
	}{
		{"head n negative", "groupby_head", map[string]any{"ids": ids, "ngroups": 3, "n": -1}, transfer.ArgumentValue, "'n' of 'groupby_head' must be >= 0"},
		{"head n too large", "groupby_head", map[string]any{"ids": ids, "ngroups": 3, "n": uint64(1) << 60}, transfer.ArgumentValue, "n 1152921504606846976 is too large"},
		{"head ngroups too few", "groupby_head", map[string]any{"ids": ids, "ngroups": 2, "n": 1}, transfer.ArgumentValue, "group ids hold values outside [-1, 2)"},
		{"head ids unknown", "groupby_head", map[string]any{"ids": "nope", "ngroups": 3, "n": 1}, transfer.UnknownArray, "no array named 'nope'"},
		{"sample counts unknown", "groupby_sample", sample("nope"), transfer.UnknownArray, "no array named 'nope'"},
		{"sample counts int32", "groupby_sample", sample(i32.Name), transfer.ArgumentValue, "sample counts must be int64, one per group (3), got 3 int32"},
		{"sample counts short", "groupby_sample", sample(short.Name), transfer.ArgumentValue, "one per group (3), got 2 int64"},
		{"sample count negative", "groupby_sample", sample(neg.Name), transfer.ArgumentValue, "group 1 has 2 rows; -1 samples"},
		{"sample count above size", "groupby_sample", sample(big.Name), transfer.ArgumentValue, "group 1 has 2 rows; 3 samples of it without replacement cannot be drawn (0 to 2 can)"},
		{"sample weight negative", "groupby_sample", weighted(negW.Name), transfer.ArgumentValue, "sample weights must be finite and not negative; row 3's is -2"},
		{"sample weights float32", "groupby_sample", weighted(f32W.Name), transfer.ArgumentValue, "sample weights must be float64, one per row (7), got 7 float32"},
		{"sample weights all zero in a group", "groupby_sample", weighted(zeroW.Name), transfer.ArgumentValue, "group 1 has 0 rows of positive weight; 1 samples"},
		{"sample seed negative", "groupby_sample", map[string]any{"ids": ids, "ngroups": 3, "counts": good.Name, "seed": -5}, transfer.ArgumentValue, "'seed' of 'groupby_sample' must be >= 0"},
		{"sample replace, a weight NaN", "groupby_sample", map[string]any{"ids": ids, "ngroups": 3, "counts": good.Name, "replace": true, "weights": nanW.Name}, transfer.ArgumentValue, "sample weights must be finite and not negative; row 2's is NaN"},
		{"sample replace, a group's weights all 0", "groupby_sample", map[string]any{"ids": ids, "ngroups": 3, "counts": good.Name, "replace": true, "weights": zeroW.Name}, transfer.ArgumentValue, "group 1 has 0 rows of positive weight; 1 samples of it cannot be drawn"},
		{"sample replace, a count negative", "groupby_sample", map[string]any{"ids": ids, "ngroups": 3, "counts": neg.Name, "replace": true}, transfer.ArgumentValue, "group 1: -1 samples cannot be drawn"},
		{"sample grouped mistyped", "groupby_sample", map[string]any{"ids": ids, "ngroups": 3, "counts": good.Name, "grouped": 1}, transfer.ArgumentType, "'grouped' of 'groupby_sample' must be a bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := c.SendRaw(ctx, [][]byte{header(t, uint64(2000+i), tc.cmd, tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, rep.Err(), tc.code, tc.substr)
		})
	}
	if s, err := g.Sample(ctx, good.Name, false, 1); err != nil || s.Size != 3 {
		t.Fatalf("the grouping after bad requests: %v %v", s, err)
	}
}

// Scan over a real server: running sums within groups, and a cumcount.
func TestGroupByScan(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{1, 2, 1, 2, 1})
	v, _ := client.Upload(ctx, c, []float64{0.5, 1, 0.25, 2, 4})
	g, err := c.NewGroupBy(ctx, []string{k.Name})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := g.Scan(ctx, "cumsum", v.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[float64](ctx, c, sums.Name); !slices.Equal(got, []float64{0.5, 1, 0.75, 3, 4.75}) {
		t.Errorf("cumsum = %v", got)
	}
	counts, err := g.Scan(ctx, "cumcount", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int64](ctx, c, counts.Name); !slices.Equal(got, []int64{0, 0, 1, 1, 2}) {
		t.Errorf("cumcount = %v", got)
	}
	var te *transfer.Error
	if _, err := g.Scan(ctx, "rank", v.Name); !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("an unknown scan: %v", err)
	}
}

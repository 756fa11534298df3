package server

import (
	"math"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/transfer"
)

// TestGroupByWithAggs: groupby with ops and columns answers the
// aggregations with the grouping: fused (one dense integer key, one column,
// no ids) or not (two columns, an op it does not fuse, ids asked for), the
// same as groupby then groupby_agg; the ids are stored unless the grouping
// was fused, and nothing at all when it fails.
func TestGroupByWithAggs(t *testing.T) {
	s := opServer(t, 1<<24)
	n := 5000
	k, v, f := make([]int64, n), make([]int64, n), make([]float64, n)
	for i := range k {
		k[i] = int64(i*7919%13) - 3
		v[i] = int64(i * i)
		f[i] = float64(i) / 7
		if i%17 == 0 {
			f[i] = math.NaN()
		}
	}
	kn, vn, fn := opPut(t, s, k), opPut(t, s, v), opPut(t, s, f)
	ref, err := opRun(t, s, "groupby", map[string]any{"keys": []any{kn}})
	if err != nil {
		t.Fatal(err)
	}
	ids, ng := ref["ids"].(map[string]any)["name"].(string), int64(ref["ngroups"].(int))
	for _, c := range []struct {
		ops, cols []any
		ids       bool
		fused     bool
	}{
		{[]any{"sum", "size", "count"}, []any{vn, "", vn}, false, true},
		{[]any{"mean", "sum", "count"}, []any{fn, fn, fn}, false, true},
		{[]any{"sum", "mean"}, []any{vn, fn}, false, true}, // two arrays: a loop each
		{[]any{"sum", "max"}, []any{vn, fn}, false, false}, // one not fusable
		{[]any{"max"}, []any{fn}, false, false},            // not fused
		{[]any{"sum"}, []any{vn}, true, false},             // ids asked for
	} {
		before := len(s.store.list())
		fusedBefore := s.stats.GroupByFused.Load()
		got, err := opRun(t, s, "groupby", map[string]any{"keys": []any{kn}, "ops": c.ops, "columns": c.cols, "ids": c.ids})
		if err != nil {
			t.Fatalf("%v: %v", c.ops, err)
		}
		if got["fused"] != c.fused || (s.stats.GroupByFused.Load() == fusedBefore+1) != c.fused {
			t.Errorf("%v: fused %v, want %v", c.ops, got["fused"], c.fused)
		}
		if _, has := got["ids"]; has != !c.fused || got["ngroups"] != ref["ngroups"] {
			t.Errorf("%v: ids given %v, ngroups %v; want %v, %v", c.ops, has, got["ngroups"], !c.fused, ng)
		}
		want, err := opRun(t, s, "groupby_agg", map[string]any{"ids": ids, "ngroups": ng, "ops": c.ops, "columns": c.cols})
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.ops {
			g, w := got["arrays"].([]any)[i].(map[string]any), want["arrays"].([]any)[i].(map[string]any)
			ga, _ := s.store.get(g["name"].(string))
			wa, _ := s.store.get(w["name"].(string))
			if ga.DType() != wa.DType() || !slices.Equal(ga.Bytes(), wa.Bytes()) {
				t.Errorf("%v: %s differs from groupby_agg's", c.ops, c.ops[i])
			}
		}
		keysGot, _ := s.store.get(got["keys"].([]any)[0].(map[string]any)["name"].(string))
		keysRef, _ := s.store.get(ref["keys"].([]any)[0].(map[string]any)["name"].(string))
		if !slices.Equal(keysGot.Bytes(), keysRef.Bytes()) {
			t.Errorf("%v: unique keys differ", c.ops)
		}
		stored := 1 + len(c.ops) + len(c.ops) // keys, ours, groupby_agg's
		if !c.fused {                         // ids made anyway
			stored++
		}
		if after := len(s.store.list()); after != before+stored {
			t.Errorf("%v: %d arrays stored, want %d", c.ops, after-before, stored)
		}
	}
	// Bad requests and failures store nothing.
	before, used := len(s.store.list()), opUsed(s.store)
	for _, args := range []map[string]any{
		{"keys": []any{kn}, "ops": []any{"sum"}, "columns": []any{vn, fn}},
		{"keys": []any{kn}, "ops": []any{"mean"}, "columns": []any{""}},
		{"keys": []any{kn}, "ids": false},
		{"keys": []any{kn}, "ops": []any{"bogus"}, "columns": []any{vn}, "ids": false},
		{"keys": []any{kn}, "ops": []any{"sum"}, "columns": []any{"nope"}, "ids": false},
	} {
		if _, err := opRun(t, s, "groupby", args); opCode(err) == 0 {
			t.Errorf("%v: no error (%v)", args, err)
		}
	}
	// 13 groups: the fused states fit where the ids (4 bytes a row) do not.
	small := opServer(t, int64(len(k)*8*2+4096))
	kn2, vn2 := opPut(t, small, k), opPut(t, small, v)
	args := map[string]any{"keys": []any{kn2}, "ops": []any{"sum"}, "columns": []any{vn2}, "ids": true}
	if _, err := opRun(t, small, "groupby", args); opCode(err) != transfer.OutOfMemory {
		t.Fatalf("groupby with ids in a small server: %v, want OUT_OF_MEMORY", err)
	}
	args["ids"] = false
	if _, err := opRun(t, small, "groupby", args); err != nil {
		t.Fatalf("fused groupby in a small server: %v", err)
	}
	if after := len(s.store.list()); after != before || opUsed(s.store) != used {
		t.Errorf("failed requests left %d arrays, %d bytes", after-before, opUsed(s.store)-used)
	}
}

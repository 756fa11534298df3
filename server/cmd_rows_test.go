package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/transfer"
)

// compress_many and take_many: a table's rows in one request, each column
// and (compress_many) the trues' positions; every refusal names what is
// wrong and stores nothing.
func TestRowsOfSeveralArrays(t *testing.T) {
	s := opServer(t, 1<<20)
	f := opPut(t, s, []float64{1.5, 2.5, 3.5, 4.5, 5.5})
	b := opPut(t, s, []int8{10, 20, 30, 40, 50})
	mask := opPut(t, s, []bool{true, false, false, true, true})
	res, err := opRun(t, s, "compress_many", map[string]any{"arrays": []any{f, b, f}, "mask": mask, "positions": true})
	if err != nil {
		t.Fatal(err)
	}
	arrays := res["arrays"].([]any)
	if len(arrays) != 3 {
		t.Fatalf("compress_many answered %d arrays, want 3", len(arrays))
	}
	if got := opStored[float64](t, s, arrays[0].(map[string]any)); !slices.Equal(got, []float64{1.5, 4.5, 5.5}) {
		t.Errorf("f[mask] = %v", got)
	}
	if got := opStored[int8](t, s, arrays[1].(map[string]any)); !slices.Equal(got, []int8{10, 40, 50}) {
		t.Errorf("b[mask] = %v", got)
	}
	if got := opStored[int64](t, s, res["positions"].(map[string]any)); !slices.Equal(got, []int64{0, 3, 4}) {
		t.Errorf("positions = %v", got)
	}
	idx := opPut(t, s, []int64{4, -5, 2})
	res, err = opRun(t, s, "take_many", map[string]any{"arrays": []any{b, f}, "idx": idx})
	if err != nil {
		t.Fatal(err)
	}
	arrays = res["arrays"].([]any)
	if got := opStored[int8](t, s, arrays[0].(map[string]any)); !slices.Equal(got, []int8{50, 10, 30}) {
		t.Errorf("b[idx] = %v", got)
	}
	if got := opStored[float64](t, s, arrays[1].(map[string]any)); !slices.Equal(got, []float64{5.5, 1.5, 3.5}) {
		t.Errorf("f[idx] = %v", got)
	}

	count := len(s.store.list())
	short := opPut(t, s, []float64{1, 2})
	fmask := opPut(t, s, []float64{1, 0, 0, 1, 1})
	bad := opPut(t, s, []int64{0, 5})
	count += 3
	for _, c := range []struct {
		cmd  string
		args map[string]any
		code transfer.Code
		msg  string
	}{
		{"compress_many", map[string]any{"arrays": []any{f, short}, "mask": mask}, transfer.IndexOutOfRange,
			"has 2 elements but mask"},
		{"compress_many", map[string]any{"arrays": []any{f}, "mask": fmask}, transfer.UnsupportedDType, "must be a bool array"},
		{"compress_many", map[string]any{"arrays": []any{}, "mask": mask}, transfer.ArgumentValue, "positions: true"},
		{"compress_many", map[string]any{"arrays": []any{f, "nope"}, "mask": mask}, transfer.UnknownArray, "nope"},
		{"take_many", map[string]any{"arrays": []any{f, short}, "idx": idx}, transfer.ArgumentValue, "arrays of one length"},
		{"take_many", map[string]any{"arrays": []any{f}, "idx": bad}, transfer.IndexOutOfRange, "index 5 is out of bounds"},
		{"take_many", map[string]any{"arrays": []any{f}, "idx": f}, transfer.UnsupportedDType, ""},
		{"take_many", map[string]any{"arrays": []any{}, "idx": idx}, transfer.ArgumentValue, "at least one array"},
	} {
		_, err := opRun(t, s, c.cmd, c.args)
		if opCode(err) != c.code || (c.msg != "" && !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s %v: %v, want code %v and %q", c.cmd, c.args, err, c.code, c.msg)
		}
		if n := len(s.store.list()); n != count {
			t.Errorf("%s refused but the store went from %d to %d arrays", c.cmd, count, n)
		}
	}
}

// A compress_many or take_many that cannot fit says so and keeps nothing
// of what it made, nor any memory.
func TestRowsOfSeveralArraysOutOfMemory(t *testing.T) {
	s := opServer(t, 200_000)
	f := opPut(t, s, make([]float64, 10_000))
	m := make([]bool, 10_000)
	for i := range m {
		m[i] = true
	}
	mask := opPut(t, s, m)
	idx := opPut(t, s, make([]int32, 10_000))
	count, used := len(s.store.list()), opUsed(s.store)
	for _, c := range []struct {
		cmd  string
		args map[string]any
	}{
		{"compress_many", map[string]any{"arrays": []any{f, f, f}, "mask": mask, "positions": true}},
		{"take_many", map[string]any{"arrays": []any{f, f, f}, "idx": idx}},
	} {
		if _, err := opRun(t, s, c.cmd, c.args); opCode(err) != transfer.OutOfMemory {
			t.Errorf("%s past the limit: %v, want OUT_OF_MEMORY", c.cmd, err)
		}
		if n, u := len(s.store.list()), opUsed(s.store); n != count || u != used {
			t.Errorf("%s: %d arrays and %d bytes after, %d and %d before", c.cmd, n, u, count, used)
		}
	}
}

// lookup: each key's table row or -1; a table with a repeated value says
// so and stores nothing; float keys are refused.
func TestLookupCommand(t *testing.T) {
	s := opServer(t, 1<<20)
	keys := opPut(t, s, []int32{7, 1, 9, 7})
	table := opPut(t, s, []int64{9, 7, 3})
	res, err := opRun(t, s, "lookup", map[string]any{"keys": keys, "table": table})
	if err != nil || res["unique"] != true {
		t.Fatalf("lookup: %v %v", res, err)
	}
	if got := opStored[int64](t, s, res["rows"].(map[string]any)); !slices.Equal(got, []int64{1, -1, 0, 1}) {
		t.Errorf("rows = %v", got)
	}
	count := len(s.store.list())
	dup := opPut(t, s, []int64{3, 9, 3})
	res, err = opRun(t, s, "lookup", map[string]any{"keys": keys, "table": dup})
	if err != nil || res["unique"] != false || res["dup"] != 2 {
		t.Errorf("a repeated table value: %v %v", res, err)
	}
	if n := len(s.store.list()); n != count+1 {
		t.Errorf("the refused lookup stored something: %d arrays, want %d", n, count+1)
	}
	f := opPut(t, s, []float64{1})
	if _, err := opRun(t, s, "lookup", map[string]any{"keys": f, "table": table}); opCode(err) != transfer.UnsupportedDType ||
		!strings.Contains(err.Error(), "integer arrays") {
		t.Errorf("float keys: %v", err)
	}
}

// groupby_scan: a running sum within each group; bad requests refused.
func TestGroupScanCommand(t *testing.T) {
	s := opServer(t, 1<<20)
	ids := opPut(t, s, []int32{0, 1, 0, 1})
	vals := opPut(t, s, []int64{1, 10, 2, 20})
	res, err := opRun(t, s, "groupby_scan", map[string]any{"ids": ids, "ngroups": int64(2), "op": "cumsum", "values": vals})
	if err != nil || res["dtype"] != "int64" {
		t.Fatalf("cumsum: %v %v", res, err)
	}
	if got := opStored[int64](t, s, res); !slices.Equal(got, []int64{1, 10, 3, 30}) {
		t.Errorf("cumsum = %v", got)
	}
	f32 := opPut(t, s, []float32{1, 2, 3, 4})
	short := opPut(t, s, []int64{1})
	for _, c := range []struct {
		args map[string]any
		code transfer.Code
	}{
		{map[string]any{"ids": ids, "ngroups": int64(2), "op": "cumsum"}, transfer.ArgumentValue},
		{map[string]any{"ids": ids, "ngroups": int64(2), "op": "rank", "values": vals}, transfer.ArgumentValue},
		{map[string]any{"ids": ids, "ngroups": int64(2), "op": "cumsum", "values": f32}, transfer.UnsupportedDType},
		{map[string]any{"ids": ids, "ngroups": int64(2), "op": "cumsum", "values": short}, transfer.ArgumentValue},
		{map[string]any{"ids": ids, "ngroups": int64(1), "op": "cumcount"}, transfer.ArgumentValue},
	} {
		if _, err := opRun(t, s, "groupby_scan", c.args); opCode(err) != c.code {
			t.Errorf("%v: %v, want code %v", c.args, err, c.code)
		}
	}
}

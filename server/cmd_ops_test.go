package server

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// opServer is a Server without sockets: enough to dispatch commands.
func opServer(t *testing.T, limit int64) *Server {
	t.Helper()
	return &Server{cfg: Config{Workers: 3, MaxMemory: limit, FrameSize: 1 << 20}, log: slog.Default(), store: newStore(limit)}
}

func opRun(t *testing.T, s *Server, cmd string, args map[string]any) (map[string]any, error) {
	t.Helper()
	resp, err := s.dispatch(&transfer.Request{V: transfer.Version, ID: 1, Cmd: cmd, Args: args}, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	return resp.result, nil
}

func opPut[T pdarray.Element](t *testing.T, s *Server, xs []T) string {
	t.Helper()
	a := pdarray.FromSlice(xs)
	if err := s.store.reserve(int64(a.NBytes()), "test"); err != nil {
		t.Fatal(err)
	}
	name, err := s.store.put("", a)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func opStored[T pdarray.Element](t *testing.T, s *Server, res map[string]any) []T {
	t.Helper()
	a, err := s.store.get(res["name"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return pdarray.View[T](a)
}

func opCode(err error) transfer.Code {
	var te *transfer.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

func TestBinopAndReduce(t *testing.T) {
	s := opServer(t, 1<<20)
	a := opPut(t, s, []int8{1, 2, 127})
	res, err := opRun(t, s, "binop", map[string]any{"op": "+", "a": a, "b_scalar": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := opStored[int8](t, s, res); got[2] != -128 || res["dtype"] != "int8" {
		t.Errorf("int8 + 1 = %v (%v)", got, res["dtype"])
	}
	res, err = opRun(t, s, "reduce", map[string]any{"op": "sum", "a": a})
	if err != nil || res["value"] != int64(130) || res["dtype"] != "int64" {
		t.Errorf("sum = %v, %v", res, err)
	}
	if _, err := opRun(t, s, "binop", map[string]any{"op": "+", "a": a, "b_scalar": int64(300)}); opCode(err) != transfer.Overflow {
		t.Errorf("int8 + 300: %v, want OVERFLOW", err)
	}
	if _, err := opRun(t, s, "binop", map[string]any{"op": "&", "a": a, "b_scalar": 1.5}); opCode(err) != transfer.UnsupportedDType {
		t.Errorf("int8 & 1.5: %v, want UNSUPPORTED_DTYPE", err)
	}
	if _, err := opRun(t, s, "binop", map[string]any{"op": "+", "a": a, "b_scalar": 1.5, "out": a}); opCode(err) != transfer.UnsupportedDType {
		t.Errorf("int8 += 1.5: %v, want UNSUPPORTED_DTYPE (same_kind)", err)
	}
	if _, err := opRun(t, s, "binop", map[string]any{"op": "+", "a": a, "bogus": int64(1), "b_scalar": int64(1)}); opCode(err) != transfer.ArgumentValue {
		t.Errorf("unknown argument: %v", err)
	}
}

func TestIndexErrorsNameIndexAndLength(t *testing.T) {
	s := opServer(t, 1<<20)
	a := opPut(t, s, []float64{1, 2, 3})
	idx := opPut(t, s, []int64{0, 7})
	_, err := opRun(t, s, "take", map[string]any{"a": a, "idx": idx})
	if opCode(err) != transfer.IndexOutOfRange || err.(*transfer.Error).Message != "index 7 is out of bounds for axis 0 with size 3" {
		t.Errorf("take: %v", err)
	}
	if _, err := opRun(t, s, "getitem", map[string]any{"a": a, "index": int64(-4)}); opCode(err) != transfer.IndexOutOfRange {
		t.Errorf("getitem: %v", err)
	}
}

// Scratch is reserved and released: after any command, used is what the
// stored arrays hold, and a limit too small for the scratch fails cleanly.
func TestScratchIsAccounted(t *testing.T) {
	s := opServer(t, 1<<20)
	xs := make([]int64, 10_000)
	for i := range xs {
		xs[i] = int64((i * 7919) % 1000)
	}
	a := opPut(t, s, xs)
	base := opUsed(s.store)
	res, err := opRun(t, s, "argsort", map[string]any{"a": a})
	if err != nil {
		t.Fatal(err)
	}
	if used := opUsed(s.store); used != base+80_000 {
		t.Errorf("after argsort used %d, want %d (the output only)", used, base+80_000)
	}
	if _, err := opRun(t, s, "unique", map[string]any{"a": a, "return_counts": true}); err != nil {
		t.Fatal(err)
	}
	used1 := opUsed(s.store)
	var held int64
	for _, in := range s.store.list() {
		held += int64(in.a.NBytes())
	}
	if used1 != held {
		t.Errorf("used %d but arrays hold %d: scratch leaked", used1, held)
	}
	_ = res
	small := opServer(t, 200_000) // room for the input and the output, not the scratch
	b := opPut(t, small, xs)
	before := opUsed(small.store)
	if _, err := opRun(t, small, "argsort", map[string]any{"a": b}); opCode(err) != transfer.OutOfMemory {
		t.Fatalf("argsort under a tight limit: %v, want OUT_OF_MEMORY", err)
	}
	if after := opUsed(small.store); after != before {
		t.Errorf("failed argsort left %d bytes reserved", after-before)
	}
}

func opUsed(st *store) int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.used
}

// TestOrderStatsAndSearchSortedRefusals: the bad inputs of order_stats
// and searchsorted are refused with ARGUMENT_VALUE, naming what was wrong
// (too many ranks, a rank past the end, an unknown side), and change
// nothing.
func TestOrderStatsAndSearchSortedRefusals(t *testing.T) {
	s := opServer(t, 1<<30)
	a := opPut(t, s, []float64{3, 1, 2})
	tooMany := make([]any, ops.MaxRanks+1)
	for i := range tooMany {
		tooMany[i] = uint64(0)
	}
	for _, c := range []struct {
		cmd  string
		args map[string]any
		want string
	}{
		{"order_stats", map[string]any{"a": a, "ranks": tooMany}, "ask in several"},
		{"order_stats", map[string]any{"a": a, "ranks": []any{uint64(3)}}, "rank 3 is out of range"},
		{"searchsorted", map[string]any{"a": a, "v": a, "side": "middle"}, "side must be 'left' or 'right'"},
	} {
		_, err := opRun(t, s, c.cmd, c.args)
		if opCode(err) != transfer.ArgumentValue || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ARGUMENT_VALUE saying %q", c.cmd, err, c.want)
		}
	}
	if res, err := opRun(t, s, "order_stats", map[string]any{"a": a, "ranks": []any{uint64(1)}}); err != nil ||
		res["values"].([]any)[0] != float64(2) {
		t.Errorf("order_stats after the refusals: %v %v", res, err)
	}
}

package server

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/transfer"
)

// clip: np.clip in one request, scalar and array bounds, either left out,
// a bound that promotes (a float bound on an int array gives float64, as
// numpy); refusals name what is wrong and store nothing; past the memory
// limit it says so and keeps nothing.
func TestClip(t *testing.T) {
	s := opServer(t, 1<<20)
	f := opPut(t, s, []float64{-3, 0.5, math.NaN(), 7, 2})
	i := opPut(t, s, []int64{-3, 1, 9, 4})
	lo := opPut(t, s, []int64{0, 2, 0, 5})
	for _, c := range []struct {
		args map[string]any
		want any
	}{
		{map[string]any{"a": f, "lo_scalar": 0.0, "hi_scalar": 5.0}, []float64{0, 0.5, math.NaN(), 5, 2}},
		{map[string]any{"a": f, "hi_scalar": int64(1)}, []float64{-3, 0.5, math.NaN(), 1, 1}},
		{map[string]any{"a": i, "lo": lo, "hi_scalar": int64(6)}, []int64{0, 2, 6, 5}},
		{map[string]any{"a": i, "lo_scalar": 0.5}, []float64{0.5, 1, 9, 4}},
	} {
		res, err := opRun(t, s, "clip", c.args)
		if err != nil {
			t.Fatalf("clip %v: %v", c.args, err)
		}
		switch want := c.want.(type) {
		case []float64:
			got := opStored[float64](t, s, res)
			if !slices.EqualFunc(got, want, func(x, y float64) bool { return x == y || x != x && y != y }) {
				t.Errorf("clip %v = %v, want %v", c.args, got, want)
			}
		case []int64:
			if got := opStored[int64](t, s, res); !slices.Equal(got, want) {
				t.Errorf("clip %v = %v, want %v", c.args, got, want)
			}
		}
	}
	count := len(s.store.list())
	short := opPut(t, s, []int64{1, 2})
	count++
	for _, c := range []struct {
		args map[string]any
		code transfer.Code
		msg  string
	}{
		{map[string]any{"a": f}, transfer.MissingArgument, "one of max or min"},
		{map[string]any{"a_scalar": int64(1), "lo_scalar": int64(0)}, transfer.ArgumentValue, "must be an array"},
		{map[string]any{"a": i, "lo": short}, transfer.ArgumentValue, "could not be broadcast"},
		{map[string]any{"a": "nope", "lo_scalar": int64(0)}, transfer.UnknownArray, "nope"},
		{map[string]any{"a": f, "lo": f, "lo_scalar": int64(1)}, transfer.ArgumentValue, "not both"},
	} {
		_, err := opRun(t, s, "clip", c.args)
		if opCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("clip %v: %v, want code %v and %q", c.args, err, c.code, c.msg)
		}
		if n := len(s.store.list()); n != count {
			t.Errorf("clip %v refused but the store went from %d to %d arrays", c.args, count, n)
		}
	}

	small := opServer(t, 100_000)
	big := opPut(t, small, make([]float64, 10_000))
	used := opUsed(small.store)
	if _, err := opRun(t, small, "clip", map[string]any{"a": big, "lo_scalar": int64(0)}); opCode(err) != transfer.OutOfMemory {
		t.Errorf("clip past the limit: %v, want OUT_OF_MEMORY", err)
	}
	if opUsed(small.store) != used || len(small.store.list()) != 1 {
		t.Errorf("a refused clip kept memory or arrays")
	}
}

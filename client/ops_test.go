package client_test

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

func TestOperations(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	a, err := client.Upload(ctx, c, []int8{3, -1, 127, 0})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Binop(ctx, "+", client.Arr(a.Name), client.Py(int64(1)))
	if err != nil || sum.DType != pdarray.Int8 {
		t.Fatalf("a + 1: %v %v", sum, err)
	}
	if got, _ := client.Download[int8](ctx, c, sum.Name); !slices.Equal(got, []int8{4, 0, -128, 1}) {
		t.Errorf("a + 1 = %v", got)
	}
	wide, err := c.Binop(ctx, "*", client.Arr(a.Name), client.Scalar(int64(2)))
	if err != nil || wide.DType != pdarray.Int64 {
		t.Fatalf("a * int64(2): %v %v", wide, err)
	}
	lo, hi := client.Py(int64(0)), client.Py(int64(100))
	clipped, err := c.Clip(ctx, a.Name, &lo, &hi)
	if err != nil || clipped.DType != pdarray.Int8 {
		t.Fatalf("clip(a, 0, 100): %v %v", clipped, err)
	}
	if got, _ := client.Download[int8](ctx, c, clipped.Name); !slices.Equal(got, []int8{3, 0, 100, 0}) {
		t.Errorf("clip(a, 0, 100) = %v", got)
	}
	half := client.Py(0.5)
	if f, err := c.Clip(ctx, a.Name, nil, &half); err != nil || f.DType != pdarray.Float64 {
		t.Errorf("clip(a, None, 0.5): %v %v, want float64 as numpy", f, err)
	}
	if _, err := c.Clip(ctx, a.Name, nil, nil); err == nil || !strings.Contains(err.Error(), "one of max or min") {
		t.Errorf("clip without bounds: %v", err)
	}
	v, dt, err := c.Reduce(ctx, "sum", a.Name)
	if err != nil || v != int64(129) || dt != pdarray.Int64 {
		t.Errorf("sum = %v %v %v", v, dt, err)
	}
	perm, err := c.Argsort(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int64](ctx, c, perm.Name); !slices.Equal(got, []int64{1, 3, 0, 2}) {
		t.Errorf("argsort = %v", got)
	}
	if err := c.BinopInPlace(ctx, "-", client.Arr(a.Name), client.Py(int64(1)), a.Name); err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int8](ctx, c, a.Name); !slices.Equal(got, []int8{2, -2, 126, -1}) {
		t.Errorf("a -= 1: %v", got)
	}
	idx, _ := client.Upload(ctx, c, []int64{0, 9})
	_, err = c.Take(ctx, a.Name, idx.Name)
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.IndexOutOfRange {
		t.Errorf("a[[0, 9]]: %v, want INDEX_OUT_OF_RANGE", err)
	}
	counts, _ := client.Upload(ctx, c, []uint8{2, 0, 1, 3})
	rep, err := c.Repeat(ctx, a.Name, counts.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int8](ctx, c, rep.Name); !slices.Equal(got, []int8{2, 2, 126, -1, -1, -1}) {
		t.Errorf("repeat by [2 0 1 3] = %v", got)
	}
	rep, err = c.RepeatEach(ctx, a.Name, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[int8](ctx, c, rep.Name); !slices.Equal(got, []int8{2, 2, -2, -2, 126, 126, -1, -1}) {
		t.Errorf("repeat each 2 = %v", got)
	}
	neg, _ := client.Upload(ctx, c, []int64{1, -1, 0, 0})
	short, _ := client.Upload(ctx, c, []int64{1})
	for _, args := range []map[string]any{
		{"a": a.Name, "counts": neg.Name}, {"a": a.Name, "counts": short.Name}, {"a": a.Name},
		{"a": a.Name, "counts": counts.Name, "count": 2}, {"a": a.Name, "counts": a.Name + "x"},
	} {
		if _, err := c.Op(ctx, "repeat", args); err == nil {
			t.Errorf("repeat %v accepted", args)
		}
	}
	r1, err := c.Random(ctx, "randint", 1000, 7, int64(0), int64(10))
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := c.Random(ctx, "randint", 1000, 7, int64(0), int64(10))
	x1, _ := client.Download[int64](ctx, c, r1.Name)
	x2, _ := client.Download[int64](ctx, c, r2.Name)
	if !slices.Equal(x1, x2) {
		t.Error("randint with one seed differs")
	}
}

// TestOrderStats: the elements at ranks of the sorted order, by the
// server's selection, equal a sort's (NaN last; a NaN rank reads a NaN),
// and the NaN count; a rank past the end is refused, naming it.
func TestOrderStats(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{5, 1000, 200_000} { // (200,000: past ops' bracket threshold)
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64()
			if i%10 == 3 {
				x[i] = math.NaN()
			}
		}
		a, err := client.Upload(ctx, c, x)
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(x)
		slices.SortFunc(sorted, func(p, q float64) int { // NaN last, as the server
			switch {
			case p != p:
				return b2i(q == q)
			case q != q:
				return -1
			}
			return cmp.Compare(p, q)
		})
		ranks := []int{n / 2, n/2 - 1, 0, n - 1, n / 3}
		got, dt, nans, err := c.OrderStats(ctx, a.Name, ranks)
		if err != nil || dt != pdarray.Float64 || nans != (n+6)/10 {
			t.Fatalf("n=%d: %v %v %d NaNs (want %d) %v", n, got, dt, nans, (n+6)/10, err)
		}
		for i, rk := range ranks {
			if w := sorted[rk]; got[i].(float64) != w && !(w != w && got[i].(float64) != got[i].(float64)) {
				t.Errorf("n=%d rank %d: %v, want %v", n, rk, got[i], w)
			}
		}
	}
	a, _ := client.Upload(ctx, c, []int64{3, 1, 2})
	if got, dt, nans, err := c.OrderStats(ctx, a.Name, []int{2, 0}); err != nil || dt != pdarray.Int64 ||
		nans != 0 || !slices.Equal(got, []any{int64(3), int64(1)}) {
		t.Errorf("int64: %v %v %d %v", got, dt, nans, err)
	}
	var te *transfer.Error
	if _, _, _, err := c.OrderStats(ctx, a.Name, []int{3}); !errors.As(err, &te) || te.Code != transfer.ArgumentValue ||
		!strings.Contains(te.Message, "rank 3 is out of range") {
		t.Errorf("rank 3 of 3 elements: %v, want ARGUMENT_VALUE naming it", err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

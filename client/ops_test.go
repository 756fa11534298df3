package client_test

import (
	"errors"
	"slices"
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

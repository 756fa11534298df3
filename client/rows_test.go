package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

// A table's rows by a mask and by positions, each one request over a real
// server: every column, and the mask's positions.
func TestCompressAndTakeMany(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	f, _ := client.Upload(ctx, c, []float64{1.5, 2.5, 3.5, 4.5})
	b, _ := client.Upload(ctx, c, []int16{10, 20, 30, 40})
	mask, _ := client.Upload(ctx, c, []bool{false, true, true, false})
	out, pos, err := c.CompressMany(ctx, []string{f.Name, b.Name}, mask.Name, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[float64](ctx, c, out[0].Name); !slices.Equal(got, []float64{2.5, 3.5}) {
		t.Errorf("f[mask] = %v", got)
	}
	if got, _ := client.Download[int16](ctx, c, out[1].Name); !slices.Equal(got, []int16{20, 30}) {
		t.Errorf("b[mask] = %v", got)
	}
	if got, _ := client.Download[int64](ctx, c, pos.Name); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("positions = %v", got)
	}
	idx, _ := client.Upload(ctx, c, []int32{3, 0, -1})
	got, err := c.TakeMany(ctx, []string{b.Name, f.Name}, idx.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := client.Download[int16](ctx, c, got[0].Name); !slices.Equal(v, []int16{40, 10, 40}) {
		t.Errorf("b[idx] = %v", v)
	}
	if v, _ := client.Download[float64](ctx, c, got[1].Name); !slices.Equal(v, []float64{4.5, 1.5, 4.5}) {
		t.Errorf("f[idx] = %v", v)
	}
	short, _ := client.Upload(ctx, c, []float64{1})
	var te *transfer.Error
	if _, _, err := c.CompressMany(ctx, []string{f.Name, short.Name}, mask.Name, false); !errors.As(err, &te) || te.Code != transfer.IndexOutOfRange {
		t.Errorf("an array shorter than the mask: %v, want INDEX_OUT_OF_RANGE", err)
	}
	if _, err := c.TakeMany(ctx, []string{f.Name, short.Name}, idx.Name); !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("arrays of two lengths: %v, want ARGUMENT_VALUE", err)
	}
}

// Lookup against a real server: each key's table row, and a table with a
// value twice answered as such.
func TestLookup(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	keys, _ := client.Upload(ctx, c, []int64{5, 2, 8, 5})
	table, _ := client.Upload(ctx, c, []int16{8, 5})
	rows, unique, _, err := c.Lookup(ctx, keys.Name, table.Name)
	if err != nil || !unique {
		t.Fatalf("lookup: %v %v", unique, err)
	}
	if got, _ := client.Download[int64](ctx, c, rows.Name); !slices.Equal(got, []int64{1, -1, 0, 1}) {
		t.Errorf("rows = %v", got)
	}
	dup, _ := client.Upload(ctx, c, []int64{1, 2, 1})
	if _, unique, at, err := c.Lookup(ctx, keys.Name, dup.Name); err != nil || unique || at != 2 {
		t.Errorf("a repeated value: unique %v at %d, %v", unique, at, err)
	}
}

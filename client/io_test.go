package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/transfer"
)

func TestFilesAndCheckpoint(t *testing.T) {
	srv := testserver.Start(t, "--data-dir", t.TempDir())
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	k, _ := client.Upload(ctx, c, []int64{3, 1, 2})
	v, _ := client.Upload(ctx, c, []float64{0.5, -1, 2})
	cols := []client.NamedColumn{{Column: "k", Array: k.Name}, {Column: "v", Array: v.Name}}
	if _, err := c.ToParquet(ctx, cols, "t.parquet", client.WriteOptions{Compression: "snappy", RowGroupSize: 2}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadParquet(ctx, []string{"*.parquet"}, client.ReadOptions{Columns: []string{"v"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := client.Download[float64](ctx, c, res.Arrays["v"].Name); !slices.Equal(got, []float64{0.5, -1, 2}) {
		t.Errorf("v = %v", got)
	}
	if _, err := c.ToArrowFile(ctx, cols, "t.arrow", client.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = c.ReadArrow(ctx, "t.arrow", client.ReadOptions{})
	if err != nil || res.Rows != 3 || !slices.Equal(res.Columns, []string{"k", "v"}) {
		t.Fatalf("read_arrow: %+v %v", res, err)
	}
	_, err = c.ReadParquet(ctx, []string{"../t.parquet"}, client.ReadOptions{})
	var te *transfer.Error
	if !errors.As(err, &te) || te.Code != transfer.ArgumentValue {
		t.Errorf("escape: %v", err)
	}
	if _, err := c.SaveAll(ctx, "ck"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, k.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadAll(ctx, "ck"); !errors.As(err, &te) || te.Code != transfer.NameInUse {
		t.Errorf("load over existing names: %v", err)
	}
}

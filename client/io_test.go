package client_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
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

// TestReadStringColumn: a Parquet string column comes back as codes into
// its sorted distinct strings (the fixture's s0..s199, written by pyarrow).
func TestReadStringColumn(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "unsupported.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "u.parquet"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, "--data-dir", dir)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	res, err := c.ReadParquet(ctx, []string{"u.parquet"}, client.ReadOptions{Columns: []string{"i64", "s"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := res.Strings["s"]
	if !ok || res.Rows != 200 || !slices.Equal(res.Columns, []string{"i64"}) || sc.Codes.DType != pdarray.Int16 {
		t.Fatalf("read: %+v", res)
	}
	cats, err := client.Categories(ctx, c, sc)
	if err != nil || len(cats) != 200 || !slices.IsSorted(cats) {
		t.Fatalf("categories %d %v", len(cats), err)
	}
	codes, err := client.Download[int16](ctx, c, sc.Codes.Name)
	if err != nil {
		t.Fatal(err)
	}
	for i, code := range codes {
		if cats[code] != fmt.Sprintf("s%d", i) {
			t.Fatalf("row %d: %q", i, cats[code])
		}
	}
	// Written back as a string column from the same three arrays, it reads
	// as the same strings.
	cols := []client.NamedColumn{{Column: "i64", Array: res.Arrays["i64"].Name},
		{Column: "s", Array: sc.Codes.Name, Categories: sc.Categories.Name, CategoryLengths: sc.CategoryLengths.Name}}
	if _, err := c.ToParquet(ctx, cols, "back.parquet", client.WriteOptions{RowGroupSize: 64}); err != nil {
		t.Fatal(err)
	}
	back, err := c.ReadParquet(ctx, []string{"back.parquet"}, client.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.Categories(ctx, c, back.Strings["s"])
	if err != nil || !slices.Equal(again, cats) {
		t.Fatalf("categories read back %d %v", len(again), err)
	}
	if codes2, _ := client.Download[int16](ctx, c, back.Strings["s"].Codes.Name); !slices.Equal(codes2, codes) {
		t.Errorf("codes read back differ")
	}
	// And through an Arrow IPC file (a dictionary column).
	if _, err := c.ToArrowFile(ctx, cols, "back.arrow", client.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ipcBack, err := c.ReadArrow(ctx, "back.arrow", client.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := client.Categories(ctx, c, ipcBack.Strings["s"]); err != nil || !slices.Equal(again, cats) {
		t.Fatalf("IPC categories read back %d %v", len(again), err)
	}
	if codes3, _ := client.Download[int16](ctx, c, ipcBack.Strings["s"].Codes.Name); !slices.Equal(codes3, codes) {
		t.Errorf("IPC codes read back differ")
	}
}

// TestUploadStrings: Go strings stored as a Categorical's three arrays
// write to Parquet and IPC and read back as the same strings; codes are
// the sorted places in the smallest int; nothing stays after a refusal.
func TestUploadStrings(t *testing.T) {
	srv := testserver.Start(t, "--data-dir", t.TempDir())
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	values := []string{"b", "a", "Zoë", "a", "", "日本", "b"}
	col, err := client.UploadStrings(ctx, c, values)
	if err != nil {
		t.Fatal(err)
	}
	if col.Codes.DType != pdarray.Int8 {
		t.Errorf("codes %s", col.Codes.DType)
	}
	if codes, _ := client.Download[int8](ctx, c, col.Codes.Name); !slices.Equal(codes, []int8{3, 2, 1, 2, 0, 4, 3}) {
		t.Errorf("codes %v", codes)
	}
	cols := []client.NamedColumn{{Column: "s", Array: col.Codes.Name, Categories: col.Categories.Name, CategoryLengths: col.CategoryLengths.Name}}
	for _, f := range []string{"u.parquet", "u.arrow"} {
		var res *client.ReadResult
		if f == "u.arrow" {
			if _, err = c.ToArrowFile(ctx, cols, f, client.WriteOptions{}); err == nil {
				res, err = c.ReadArrow(ctx, f, client.ReadOptions{})
			}
		} else if _, err = c.ToParquet(ctx, cols, f, client.WriteOptions{}); err == nil {
			res, err = c.ReadParquet(ctx, []string{f}, client.ReadOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := res.Strings["s"]
		cats, err := client.Categories(ctx, c, sc)
		if err != nil {
			t.Fatal(err)
		}
		codes, _ := client.Download[int8](ctx, c, sc.Codes.Name)
		for i, code := range codes {
			if cats[code] != values[i] {
				t.Fatalf("%s: row %d read %q, want %q", f, i, cats[code], values[i])
			}
		}
	}
	many := make([]string, 40_000)
	for i := range many {
		many[i] = fmt.Sprint(i % 30_000)
	}
	if col, err := client.UploadStrings(ctx, c, many); err != nil || col.Codes.DType != pdarray.Int16 {
		t.Errorf("30,000 distinct: %v %v", col.Codes.DType, err)
	}
	before, _ := c.List(ctx)
	if _, err := client.UploadStrings(ctx, c, []string{"ok", "\xff"}); err == nil || !strings.Contains(err.Error(), "value 1") {
		t.Errorf("not UTF-8: %v", err)
	}
	if after, _ := c.List(ctx); len(after) != len(before) {
		t.Errorf("a refused upload left %d arrays", len(after)-len(before))
	}
	if col, err := client.UploadStrings(ctx, c, nil); err != nil || col.Codes.Size != 0 {
		t.Errorf("no values: %+v %v", col, err)
	}
}

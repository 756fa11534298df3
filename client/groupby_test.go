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

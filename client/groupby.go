package client

import (
	"context"
	"fmt"
)

// GroupBy is a server-side grouping of rows by one or several key arrays
// (docs/protocol.md, "Group-by"): an int32 group id per row (IDs, -1 for a
// dropped NaN key) and the unique keys, sorted. Delete its arrays with
// Client.Delete when done (IDs, Keys, and Permutation/Segments if asked for).
type GroupBy struct {
	c        *Client
	IDs      ArrayInfo   // int32 group of every row
	Keys     []ArrayInfo // unique keys, one array per key array
	NGroups  int
	Kept     int    // rows not dropped
	Strategy string // dense, hash, partitioned, sort, chained or wide
}

// GroupByOption changes how NewGroupBy groups.
type GroupByOption func(map[string]any)

// KeepNaN makes NaN float keys one group (last) instead of dropping their rows.
func KeepNaN() GroupByOption { return func(m map[string]any) { m["dropna"] = false } }

// WithStrategy forces a strategy (dense, hash, partitioned, sort, chained, wide); the default is auto.
func WithStrategy(s string) GroupByOption { return func(m map[string]any) { m["strategy"] = s } }

// NewGroupBy groups the rows of the stored key arrays.
func (c *Client) NewGroupBy(ctx context.Context, keys []string, opts ...GroupByOption) (*GroupBy, error) {
	args := map[string]any{"keys": keys}
	for _, o := range opts {
		o(args)
	}
	res, err := c.call(ctx, "groupby", args)
	if err != nil {
		return nil, err
	}
	g := &GroupBy{c: c, NGroups: int(asInt(res["ngroups"])), Kept: int(asInt(res["kept"])), Strategy: asString(res["strategy"])}
	im, _ := res["ids"].(map[string]any)
	if g.IDs, err = parseInfo(im); err != nil {
		return nil, err
	}
	if g.Keys, err = parseInfos(res["keys"]); err != nil {
		return nil, err
	}
	if len(g.Keys) != len(keys) {
		return nil, fmt.Errorf("client: groupby answered %d key arrays for %d keys", len(g.Keys), len(keys))
	}
	return g, nil
}

// GroupAggregate is what GroupByAggregate stored: the grouping's unique
// keys and the aggregations, and the grouping itself (its ids) when the
// server made it.
type GroupAggregate struct {
	Keys     []ArrayInfo // unique keys, one array per key array
	NGroups  int
	Kept     int    // rows not dropped
	Strategy string // as GroupBy.Strategy
	Arrays   []ArrayInfo
	// Fused: grouped and aggregated in one pass over the keys and values,
	// with no ids made (Group is nil).
	Fused bool
	// Group is the grouping, ids and all, when the server could not fuse
	// (sharing Keys): further aggregations can use it.
	Group *GroupBy
}

// GroupByAggregate groups the rows of the stored key arrays and stores
// aggregation ops[i] of the stored array columns[i] ("" for "size") in one
// request. The server fuses the two where it can (one integer key of a
// small range and one values array: docs/protocol.md, "Grouping and
// aggregating in one request"), reading each row once and making no ids;
// otherwise it groups, aggregates and returns the grouping too. The answers
// are those of NewGroupBy and AggregateColumns, bit for bit.
func (c *Client) GroupByAggregate(ctx context.Context, keys, ops, columns []string, ddof float64, opts ...GroupByOption) (*GroupAggregate, error) {
	if len(ops) != len(columns) {
		return nil, fmt.Errorf("client: GroupByAggregate needs one column per op, got %d columns for %d ops", len(columns), len(ops))
	}
	args := map[string]any{"keys": keys, "ops": ops, "columns": columns, "ddof": ddof, "ids": false}
	for _, o := range opts {
		o(args)
	}
	res, err := c.call(ctx, "groupby", args)
	if err != nil {
		return nil, err
	}
	r := &GroupAggregate{NGroups: int(asInt(res["ngroups"])), Kept: int(asInt(res["kept"])), Strategy: asString(res["strategy"])}
	r.Fused, _ = res["fused"].(bool)
	if r.Keys, err = parseInfos(res["keys"]); err != nil {
		return nil, err
	}
	if r.Arrays, err = parseInfos(res["arrays"]); err != nil {
		return nil, err
	}
	if len(r.Keys) != len(keys) || len(r.Arrays) != len(ops) {
		return nil, fmt.Errorf("client: groupby answered %d key arrays and %d aggregations for %d keys and %d ops", len(r.Keys), len(r.Arrays), len(keys), len(ops))
	}
	if im, ok := res["ids"].(map[string]any); ok {
		r.Group = &GroupBy{c: c, Keys: r.Keys, NGroups: r.NGroups, Kept: r.Kept, Strategy: r.Strategy}
		if r.Group.IDs, err = parseInfo(im); err != nil {
			return nil, err
		}
	} else if !r.Fused {
		return nil, fmt.Errorf("client: groupby answered neither ids nor a fused grouping")
	}
	return r, nil
}

// Aggregate stores op ("sum", "mean", "count", ...; see docs/operations.md)
// of the stored values over each group; values may be "" for "size". ddof
// is used by var and std.
func (g *GroupBy) Aggregate(ctx context.Context, op, values string, ddof float64) (ArrayInfo, error) {
	args := map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "op": op, "ddof": ddof}
	if values != "" {
		args["values"] = values
	}
	return g.c.opArray(ctx, "groupby_agg", args)
}

// AggregateMany stores several aggregations of the same values, in the
// order of ops, computed from as few passes over the rows as the server
// can share (size, count, sum, mean, var and std share one).
func (g *GroupBy) AggregateMany(ctx context.Context, ops []string, values string, ddof float64) ([]ArrayInfo, error) {
	args := map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "ops": ops, "ddof": ddof}
	if values != "" {
		args["values"] = values
	}
	return g.aggArrays(ctx, args, len(ops))
}

// aggArrays sends groupby_agg with several ops and reads the n arrays back.
func (g *GroupBy) aggArrays(ctx context.Context, args map[string]any, n int) ([]ArrayInfo, error) {
	res, err := g.c.call(ctx, "groupby_agg", args)
	if err != nil {
		return nil, err
	}
	infos, err := parseInfos(res["arrays"])
	if err != nil {
		return nil, err
	}
	if len(infos) != n {
		return nil, fmt.Errorf("client: groupby_agg answered %d arrays for %d aggregations", len(infos), n)
	}
	return infos, nil
}

// AggregateColumns stores aggregation ops[i] of the stored array
// columns[i] ("" for "size"), in the order of ops, in one request: ops on
// one array share its passes over the rows and distinct arrays run side by
// side on the server's workers.
func (g *GroupBy) AggregateColumns(ctx context.Context, ops, columns []string, ddof float64) ([]ArrayInfo, error) {
	if len(ops) != len(columns) {
		return nil, fmt.Errorf("client: AggregateColumns needs one column per op, got %d columns for %d ops", len(columns), len(ops))
	}
	return g.aggArrays(ctx, map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups,
		"ops": ops, "columns": columns, "ddof": ddof}, len(ops))
}

// Sum stores the per-group sums of values.
func (g *GroupBy) Sum(ctx context.Context, values string) (ArrayInfo, error) {
	return g.Aggregate(ctx, "sum", values, 0)
}

// Mean stores the per-group means of values.
func (g *GroupBy) Mean(ctx context.Context, values string) (ArrayInfo, error) {
	return g.Aggregate(ctx, "mean", values, 0)
}

// Size stores the number of rows of each group.
func (g *GroupBy) Size(ctx context.Context) (ArrayInfo, error) {
	return g.Aggregate(ctx, "size", "", 0)
}

// Segments stores the permutation (kept rows, group by group) and where
// each group starts in it.
func (g *GroupBy) Segments(ctx context.Context) (permutation, segments ArrayInfo, err error) {
	res, err := g.c.call(ctx, "groupby_segments", map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "kept": g.Kept})
	if err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	pm, _ := res["permutation"].(map[string]any)
	sm, _ := res["segments"].(map[string]any)
	if permutation, err = parseInfo(pm); err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	segments, err = parseInfo(sm)
	return permutation, segments, err
}

// Head stores the rows (int64) of each group's first n rows (all of a
// smaller group's), groups in order and rows in row order within a group
// (Arkouda's GroupBy.head; Take gathers the values at them).
func (g *GroupBy) Head(ctx context.Context, n int) (ArrayInfo, error) {
	return g.headTail(ctx, n, false)
}

// Tail is Head for each group's last n rows.
func (g *GroupBy) Tail(ctx context.Context, n int) (ArrayInfo, error) {
	return g.headTail(ctx, n, true)
}

func (g *GroupBy) headTail(ctx context.Context, n int, tail bool) (ArrayInfo, error) {
	if n < 0 {
		return ArrayInfo{}, fmt.Errorf("client: head and tail take n >= 0 rows a group, got %d", n)
	}
	// (no group has more than the kept rows: a larger n asks for no more)
	return g.c.opArray(ctx, "groupby_head", map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "n": min(n, g.Kept), "tail": tail})
}

// Sample stores the rows (int64) of a uniform sample without replacement
// of each group (Arkouda's GroupBy.sample without weights): counts names a
// stored int64 array of how many rows of each group, each at most the
// group's size; grouped puts them group by group, in the order drawn,
// instead of in row order. A seed (at most one) gives the same rows at any
// worker count; without one the server draws a seed of its own.
func (g *GroupBy) Sample(ctx context.Context, counts string, grouped bool, seed ...uint64) (ArrayInfo, error) {
	return g.sample(ctx, map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "counts": counts, "grouped": grouped}, seed)
}

// SampleWeighted is Sample with each row drawn in proportion to its weight
// (weights names a stored float64 array, one per row, finite and not
// negative; counts at most each group's rows of positive weight):
// Efraimidis and Spirakis' keys, smallest kept per group.
func (g *GroupBy) SampleWeighted(ctx context.Context, counts, weights string, grouped bool, seed ...uint64) (ArrayInfo, error) {
	return g.sample(ctx, map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "counts": counts,
		"weights": weights, "grouped": grouped}, seed)
}

// SampleReplace is Sample with replacement: counts[g] rows of group g,
// any count, each draw uniform in its group, or with weights (a stored
// float64 array, one per row, finite and not negative; "" for uniform) in
// proportion to the rows' weights. Grouped puts them group by group in the
// order drawn, else they come in row order (a row drawn twice, twice).
func (g *GroupBy) SampleReplace(ctx context.Context, counts, weights string, grouped bool, seed ...uint64) (ArrayInfo, error) {
	args := map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "counts": counts, "grouped": grouped, "replace": true}
	if weights != "" {
		args["weights"] = weights
	}
	return g.sample(ctx, args, seed)
}

func (g *GroupBy) sample(ctx context.Context, args map[string]any, seed []uint64) (ArrayInfo, error) {
	switch len(seed) {
	case 0:
	case 1:
		args["seed"] = seed[0]
	default:
		return ArrayInfo{}, fmt.Errorf("client: Sample takes at most one seed, got %d", len(seed))
	}
	return g.c.opArray(ctx, "groupby_sample", args)
}

// Unique stores each group's distinct values, sorted within a group (NaN
// skipped), as Arkouda's GroupBy.unique answers a SegArray: segments
// (int64, one per group) is where each group's values start in uniq, a
// group without values having an empty segment. Several values arrays give
// their distinct tuples, element i of every uniq array making tuple i.
func (g *GroupBy) Unique(ctx context.Context, values ...string) (segments ArrayInfo, uniq []ArrayInfo, err error) {
	if len(values) == 0 {
		return ArrayInfo{}, nil, fmt.Errorf("client: Unique needs at least one values array")
	}
	res, err := g.c.call(ctx, "groupby_unique", map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "values": values})
	if err != nil {
		return ArrayInfo{}, nil, err
	}
	sm, _ := res["segments"].(map[string]any)
	if segments, err = parseInfo(sm); err != nil {
		return ArrayInfo{}, nil, err
	}
	if uniq, err = parseInfos(res["values"]); err != nil {
		return ArrayInfo{}, nil, err
	}
	if len(uniq) != len(values) {
		return ArrayInfo{}, nil, fmt.Errorf("client: groupby_unique answered %d arrays for %d values arrays", len(uniq), len(values))
	}
	return segments, uniq, nil
}

// Broadcast stores, for every row, its group's element of the stored
// per-group array perGroup.
func (g *GroupBy) Broadcast(ctx context.Context, perGroup string) (ArrayInfo, error) {
	return g.c.opArray(ctx, "groupby_broadcast", map[string]any{"ids": g.IDs.Name, "values": perGroup})
}

// Scan stores a running op within each group, one value per row in row
// order: "cumsum", "cumprod", "cummax", "cummin", "diff", "shift" of the
// stored int64 or float64 array values, or "cumcount" (values "").
func (g *GroupBy) Scan(ctx context.Context, op, values string) (ArrayInfo, error) {
	args := map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "op": op}
	if values != "" {
		args["values"] = values
	}
	return g.c.opArray(ctx, "groupby_scan", args)
}

// TopK stores the n largest (largest true) or smallest non-NaN values of
// each group in long form: values, groups in order and each group's values
// best first, and keys, the group's unique keys repeated once per value
// (one array per key array).
func (g *GroupBy) TopK(ctx context.Context, values string, n int, largest bool) (vals ArrayInfo, keys []ArrayInfo, err error) {
	names := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		names[i] = k.Name
	}
	res, err := g.c.call(ctx, "groupby_topk", map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups,
		"values": values, "n": n, "largest": largest, "keys": names})
	if err != nil {
		return ArrayInfo{}, nil, err
	}
	vm, _ := res["values"].(map[string]any)
	if vals, err = parseInfo(vm); err != nil {
		return ArrayInfo{}, nil, err
	}
	if keys, err = parseInfos(res["keys"]); err != nil {
		return ArrayInfo{}, nil, err
	}
	return vals, keys, nil
}

// Corr stores the Pearson correlation of the stored arrays x and y within
// each group (NaN for fewer than two rows where both are numbers, or a
// constant x or y).
func (g *GroupBy) Corr(ctx context.Context, x, y string) (ArrayInfo, error) {
	return g.c.opArray(ctx, "groupby_corr", map[string]any{"ids": g.IDs.Name, "ngroups": g.NGroups, "x": x, "y": y})
}

package server

// Group-by commands (docs/protocol.md, "Group-by"): groupby maps key arrays to
// an int32 group-id array stored like any array, plus the sorted unique keys;
// groupby_agg, groupby_segments and groupby_broadcast take those ids and the
// group count back. Every output is reserved before it is allocated and
// stored only when the whole command succeeded.

import (
	"slices"
	"time"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// acquireAll acquires every named array; release gives them all back.
func (s *Server) acquireAll(names []string) ([]*pdarray.Array, func(), error) {
	arrs := make([]*pdarray.Array, 0, len(names))
	var rels []func()
	release := func() {
		for _, r := range rels {
			r()
		}
	}
	for _, n := range names {
		a, rel, err := s.store.acquire(n)
		if err != nil {
			release()
			return nil, nil, err
		}
		arrs = append(arrs, a)
		rels = append(rels, rel)
	}
	return arrs, release, nil
}

func (s *Server) cmdGroupBy(r *request) (*response, error) {
	a := r.args
	names := a.StringList("keys")
	dropna := a.OptBool("dropna", true)
	strategy := a.OptString("strategy", "auto")
	// Aggregations asked with the grouping (op i of columns[i]), and
	// whether the ids are wanted too: without them, a grouping that can be
	// fused with its aggregation is (ops.GroupByAgg), and one that cannot
	// makes and returns them anyway.
	var opList, colNames []string
	withAggs := a.Has("ops")
	if withAggs {
		opList = a.StringList("ops")
		colNames = a.StringList("columns")
	}
	wantIDs := a.OptBool("ids", true)
	ddof := a.OptFloat("ddof", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "groupby needs at least one key array")
	}
	var plan aggPlan
	if withAggs {
		if len(opList) == 0 || len(colNames) != len(opList) {
			return nil, transfer.Errorf(transfer.ArgumentValue, "groupby's ops need columns of the same length (op i of columns[i], \"\" for size); got %d columns for %d ops", len(colNames), len(opList))
		}
		for _, op := range opList { // before any grouping is done for nothing
			if !slices.Contains(ops.GroupAggOps, op) {
				return nil, transfer.Errorf(transfer.ArgumentValue, "unknown group-by aggregation '%s'; aggregations are %v", op, ops.GroupAggOps)
			}
		}
		var err error
		if plan, err = planAggColumns(opList, colNames); err != nil {
			return nil, err
		}
		relCols, err := plan.acquire(s)
		if err != nil {
			return nil, err
		}
		defer relCols()
	} else if !wantIDs {
		return nil, transfer.Errorf(transfer.ArgumentValue, "groupby with ids=false needs ops and columns (a grouping with neither ids nor aggregations is of no use)")
	}
	keys, release, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer release()
	o, env := s.opEnv(r.stop, "groupby of %v", names)
	defer o.done()
	known := make([]*ops.KeyStats, len(keys))
	writes := make([]uint64, len(keys))
	for k, a := range keys {
		known[k], writes[k] = s.store.keyStats(names[k], a)
	}
	start := time.Now()
	var g ops.Grouping
	var outs [][]*pdarray.Array
	fused := false
	if withAggs && !wantIDs {
		g, outs, fused, err = ops.GroupByAgg(env, keys, dropna, strategy, known, plan.cols)
		if err != nil {
			return nil, opErr(err)
		}
	}
	if !fused {
		if g, err = ops.GroupByWith(env, keys, dropna, strategy, known); err != nil {
			return nil, opErr(err)
		}
	} else {
		s.stats.GroupByFused.Add(1)
	}
	for k, a := range keys {
		if known[k] == nil {
			s.store.setKeyStats(names[k], a, g.Stats[k], writes[k])
		}
	}
	s.log.Debug("groupby", "keys", names, "rows", keys[0].Len(), "groups", g.NGroups,
		"strategy", g.Strategy, "fused", fused, "took", time.Since(start))
	result := map[string]any{"ngroups": g.NGroups, "kept": g.Kept, "strategy": g.Strategy, "fused": fused}
	if withAggs && !fused {
		outs, err = ops.GroupAggColumns(env, g.IDs, g.NGroups, plan.cols, ddof)
		if err != nil {
			env.Free(g.IDs)
			return nil, opErr(err)
		}
	}
	if wantIDs || !fused { // made anyway: the client need not group again
		ids, err := o.keep(g.IDs)
		if err != nil {
			return nil, err
		}
		if g.NGroups > 0 {
			s.store.markGroupIDs(ids["name"].(string), g.NGroups)
		}
		result["ids"] = ids
	}
	uk := make([]any, len(g.Keys))
	for i, k := range g.Keys {
		if uk[i], err = o.keep(k); err != nil {
			return nil, err
		}
	}
	result["keys"] = uk
	if withAggs {
		if result["arrays"], err = plan.keep(o, outs); err != nil {
			return nil, err
		}
	}
	return &response{result: result}, nil
}

// groupOp opens an op env for a command over a grouping's ids (checked
// against ngroups); done gives both back.
func (s *Server) groupOp(stop *par.Stop, idsName string, ngroups int, format string, args ...any) (*opEnv, ops.Env, *pdarray.Array, func(), error) {
	o, env := s.opEnv(stop, format, args...)
	ids, rel, err := s.groupIDsArg(env, idsName, ngroups)
	if err != nil {
		o.done()
		return nil, ops.Env{}, nil, nil, err
	}
	return o, env, ids, func() { rel(); o.done() }, nil
}

// groupIDsArg acquires the ids array and checks it against ngroups.
func (s *Server) groupIDsArg(env ops.Env, name string, ngroups int) (*pdarray.Array, func(), error) {
	ids, rel, valid, err := s.store.acquireGroupIDs(name, ngroups)
	if err != nil {
		return nil, nil, err
	}
	if valid { // groupby wrote them and nothing has since
		return ids, rel, nil
	}
	if err := ops.CheckGroupIDs(env, ids, ngroups); err != nil {
		rel()
		return nil, nil, opErr(err)
	}
	return ids, rel, nil
}

// cmdGroupAgg runs one aggregation ("op": the result is one array) or
// several over the same values ("ops": the result's "arrays" lists them in
// that order, from
// as few passes over the rows as the kernels can share).
func (s *Server) cmdGroupAgg(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	var opList []string
	single := !a.Has("ops")
	if single {
		opList = []string{a.String("op")}
	} else {
		opList = a.StringList("ops")
	}
	valsName := a.OptString("values", "")
	var colNames []string
	if a.Has("columns") {
		colNames = a.StringList("columns")
	}
	ddof := a.OptFloat("ddof", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if colNames != nil {
		if single || len(colNames) != len(opList) {
			return nil, transfer.Errorf(transfer.ArgumentValue, "columns needs ops of the same length (op i of columns[i]); got %d columns for %d ops", len(colNames), len(opList))
		}
		if valsName != "" {
			return nil, transfer.Errorf(transfer.ArgumentValue, "give values (one array for every op) or columns (one per op), not both")
		}
		return s.groupAggColumns(r.stop, idsName, ng, opList, colNames, ddof)
	}
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_agg %v", opList)
	if err != nil {
		return nil, err
	}
	defer done()
	var vals *pdarray.Array
	if valsName != "" {
		v, relv, err := s.store.acquire(valsName)
		if err != nil {
			return nil, err
		}
		defer relv()
		vals = v
	}
	start := time.Now()
	outs, err := ops.GroupAggMany(env, ids, ng, opList, vals, ddof)
	if err != nil {
		return nil, opErr(err)
	}
	s.log.Debug("groupby_agg", "ops", opList, "rows", ids.Len(), "groups", ng, "took", time.Since(start))
	if single {
		return one(o, outs[0])
	}
	res := make([]any, len(outs))
	for i, out := range outs {
		if res[i], err = o.keep(out); err != nil {
			return nil, err
		}
	}
	return &response{result: map[string]any{"arrays": res}}, nil
}

// aggPlan is the arrays of a columns request (op i of columns[i], "" for
// size): ops on one array share its passes, and op i's result is
// outs[where[i][0]][where[i][1]].
type aggPlan struct {
	cols  []ops.AggColumn // Values set once acquired
	names []string        // cols[c]'s array
	where [][2]int
}

func planAggColumns(opList, colNames []string) (aggPlan, error) {
	var p aggPlan
	p.where = make([][2]int, len(opList))
	index := map[string]int{}
	var sizes []int
	for i, name := range colNames {
		if name == "" {
			if opList[i] != "size" {
				return p, transfer.Errorf(transfer.ArgumentValue, "aggregation '%s' (op %d) needs a column; only size takes none", opList[i], i)
			}
			sizes = append(sizes, i)
			continue
		}
		c, ok := index[name]
		if !ok {
			c = len(p.cols)
			index[name] = c
			p.cols = append(p.cols, ops.AggColumn{})
			p.names = append(p.names, name)
		}
		p.where[i] = [2]int{c, len(p.cols[c].Ops)}
		p.cols[c].Ops = append(p.cols[c].Ops, opList[i])
	}
	if len(p.cols) == 0 {
		p.cols = append(p.cols, ops.AggColumn{})
	}
	for _, i := range sizes { // free with the first column's pass
		p.where[i] = [2]int{0, len(p.cols[0].Ops)}
		p.cols[0].Ops = append(p.cols[0].Ops, "size")
	}
	return p, nil
}

// acquire takes the plan's arrays; release gives them back.
func (p *aggPlan) acquire(s *Server) (func(), error) {
	arrs, release, err := s.acquireAll(p.names)
	if err != nil {
		return nil, err
	}
	for c, arr := range arrs {
		p.cols[c].Values = arr
	}
	return release, nil
}

// keep stores op i's result for every op, in order.
func (p *aggPlan) keep(o *opEnv, outs [][]*pdarray.Array) ([]any, error) {
	res := make([]any, len(p.where))
	var err error
	for i, w := range p.where {
		if res[i], err = o.keep(outs[w[0]][w[1]]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// groupAggColumns answers groupby_agg with columns: op i of array
// columns[i] ("" for size). Ops on one array share its passes; distinct
// arrays run side by side (ops.GroupAggColumns).
func (s *Server) groupAggColumns(stop *par.Stop, idsName string, ng int, opList, colNames []string, ddof float64) (*response, error) {
	p, err := planAggColumns(opList, colNames)
	if err != nil {
		return nil, err
	}
	release, err := p.acquire(s)
	if err != nil {
		return nil, err
	}
	defer release()
	cols, names := p.cols, p.names
	o, env, ids, done, err := s.groupOp(stop, idsName, ng, "groupby_agg %v of %d arrays", opList, len(names))
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	outs, err := ops.GroupAggColumns(env, ids, ng, cols, ddof)
	if err != nil {
		return nil, opErr(err)
	}
	s.log.Debug("groupby_agg", "ops", opList, "columns", len(names), "rows", ids.Len(), "groups", ng, "took", time.Since(start))
	res, err := p.keep(o, outs)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"arrays": res}}, nil
}

func (s *Server) cmdGroupSegments(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	kept := sizeArg(a, "kept")
	if err := a.Done(); err != nil {
		return nil, err
	}
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_segments")
	if err != nil {
		return nil, err
	}
	defer done()
	perm, segs, err := ops.GroupSegments(env, ids, ng, kept)
	if err != nil {
		return nil, opErr(err)
	}
	p, err := o.keep(perm)
	if err != nil {
		return nil, err
	}
	sg, err := o.keep(segs)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"permutation": p, "segments": sg}}, nil
}

// cmdGroupHead stores the rows (int64) of the first n rows of each group,
// or with "tail" its last n: Arkouda's GroupBy.head and tail.
func (s *Server) cmdGroupHead(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	n := sizeArg(a, "n")
	tail := a.OptBool("tail", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_head")
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	out, err := ops.GroupHeadTail(env, ids, ng, n, tail)
	if err != nil {
		return nil, opErr(err)
	}
	s.log.Debug("groupby_head", "n", n, "tail", tail, "rows", ids.Len(), "groups", ng, "took", time.Since(start))
	return one(o, out)
}

// cmdGroupSample stores the rows (int64) of a sample of each group,
// without replacement unless "replace": "counts" names an int64 array of
// how many rows of each group, "weights" (optional) a float64 array of the
// rows' weights (else uniform), "seed" makes it reproducible, "grouped"
// puts the rows group by group, in the order drawn, instead of in row
// order.
func (s *Server) cmdGroupSample(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	names := []string{a.String("counts")}
	if a.Has("weights") {
		names = append(names, a.String("weights"))
	}
	seed := seedArg(a)
	grouped := a.OptBool("grouped", false)
	replace := a.OptBool("replace", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	arrs, rel, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer rel()
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_sample")
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	var out *pdarray.Array
	switch {
	case replace:
		var w *pdarray.Array
		if len(arrs) == 2 {
			w = arrs[1]
		}
		out, err = ops.GroupSampleReplace(env, ids, ng, arrs[0], w, seed, grouped)
	case len(arrs) == 2:
		out, err = ops.GroupSampleWeighted(env, ids, ng, arrs[0], arrs[1], seed, grouped)
	default:
		out, err = ops.GroupSampleRows(env, ids, ng, arrs[0], seed, grouped)
	}
	if err != nil {
		return nil, opErr(err)
	}
	s.log.Debug("groupby_sample", "rows", ids.Len(), "groups", ng, "weighted", len(arrs) == 2, "replace", replace,
		"drawn", out.Len(), "took", time.Since(start))
	return one(o, out)
}

// cmdGroupUnique stores each group's distinct values (tuples of the
// "values" arrays), sorted within a group, and where each group's start
// ("segments", int64): Arkouda's GroupBy.unique, a SegArray per values
// array sharing its segments.
func (s *Server) cmdGroupUnique(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	names := a.StringList("values")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "groupby_unique needs at least one values array")
	}
	vals, rel, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer rel()
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_unique of %v", names)
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	u, err := ops.GroupUnique(env, ids, ng, vals)
	if err != nil {
		return nil, opErr(err)
	}
	switch u.Path {
	case ops.UniqueBitmap:
		s.stats.UniqueBitmap.Add(1)
	case ops.UniqueSort:
		s.stats.UniqueSort.Add(1)
	default:
		s.stats.UniqueGrouped.Add(1)
	}
	s.log.Debug("groupby_unique", "rows", ids.Len(), "groups", ng, "values", len(vals), "path", u.Path,
		"distinct", u.Values[0].Len(), "took", time.Since(start))
	res := map[string]any{}
	if res["segments"], err = o.keep(u.Segments); err != nil {
		return nil, err
	}
	us := make([]any, len(u.Values))
	for i, v := range u.Values {
		if us[i], err = o.keep(v); err != nil {
			return nil, err
		}
	}
	res["values"] = us
	return &response{result: res}, nil
}

func (s *Server) cmdGroupBroadcast(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	valsName := a.String("values")
	if err := a.Done(); err != nil {
		return nil, err
	}
	vals, relv, err := s.store.acquire(valsName)
	if err != nil {
		return nil, err
	}
	defer relv()
	o, env, ids, done, err := s.groupOp(r.stop, idsName, vals.Len(), "groupby_broadcast")
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := env.Alloc(vals.DType(), ids.Len())
	if err != nil {
		return nil, err
	}
	if err := ops.GroupBroadcast(env, ids, vals, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// cmdGroupScan stores a running operation within each group in row order
// (ops.GroupScan: "op" one of ops.GroupScanOps; "values" an int64 or
// float64 array of the rows, none for cumcount), one value per row.
func (s *Server) cmdGroupScan(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	op := a.String("op")
	valsName := a.OptString("values", "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if (valsName == "") != (op == "cumcount") {
		return nil, transfer.Errorf(transfer.ArgumentValue, "groupby_scan %s takes values (an array of the rows) except for cumcount, which takes none", op)
	}
	var vals *pdarray.Array
	vdt := pdarray.Invalid
	if valsName != "" {
		v, relv, err := s.store.acquire(valsName)
		if err != nil {
			return nil, err
		}
		defer relv()
		vals, vdt = v, v.DType()
	}
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_scan %s", op)
	if err != nil {
		return nil, err
	}
	defer done()
	if vals != nil && vals.Len() != ids.Len() {
		return nil, transfer.Errorf(transfer.ArgumentValue, "values have %d elements but the grouping has %d rows", vals.Len(), ids.Len())
	}
	dt, err := ops.GroupScanDType(op, vdt, ops.HasDropped(env, ids))
	if err != nil {
		return nil, opErr(err)
	}
	out, err := env.Alloc(dt, ids.Len())
	if err != nil {
		return nil, err
	}
	if err := ops.GroupScan(env, ids, ng, op, vals, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// cmdGroupTopK stores the n largest (or smallest) values of each group and,
// beside them, each element's unique keys: "keys" names the grouping's
// unique-key arrays, gathered here so the client needs no second request.
func (s *Server) cmdGroupTopK(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	valsName := a.String("values")
	k := sizeArg(a, "n")
	largest := a.OptBool("largest", true)
	keyNames := a.StringList("keys")
	if err := a.Done(); err != nil {
		return nil, err
	}
	vals, relv, err := s.store.acquire(valsName)
	if err != nil {
		return nil, err
	}
	defer relv()
	keys, relk, err := s.acquireAll(keyNames)
	if err != nil {
		return nil, err
	}
	defer relk()
	for i, kv := range keys {
		if kv.Len() != ng {
			return nil, transfer.Errorf(transfer.ArgumentValue, "key array '%s' has %d elements but the group-by has %d groups; pass the grouping's unique keys", keyNames[i], kv.Len(), ng)
		}
	}
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_topk")
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	out, groups, err := ops.GroupTopK(env, ids, ng, k, largest, vals)
	if err != nil {
		return nil, opErr(err)
	}
	defer env.Free(groups)
	gathered := make([]*pdarray.Array, len(keys))
	for i, kv := range keys {
		if gathered[i], err = env.Alloc(kv.DType(), groups.Len()); err != nil {
			return nil, err
		}
		ops.Take(env, kv, groups, gathered[i])
	}
	s.log.Debug("groupby_topk", "n", k, "largest", largest, "rows", ids.Len(), "groups", ng, "took", time.Since(start))
	res := map[string]any{}
	if res["values"], err = o.keep(out); err != nil {
		return nil, err
	}
	ks := make([]any, len(gathered))
	for i, g := range gathered {
		if ks[i], err = o.keep(g); err != nil {
			return nil, err
		}
	}
	res["keys"] = ks
	return &response{result: res}, nil
}

// cmdGroupCorr stores the correlation of x and y within each group.
func (s *Server) cmdGroupCorr(r *request) (*response, error) {
	a := r.args
	idsName := a.String("ids")
	ng := sizeArg(a, "ngroups")
	names := []string{a.String("x"), a.String("y")}
	if err := a.Done(); err != nil {
		return nil, err
	}
	xy, relxy, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer relxy()
	o, env, ids, done, err := s.groupOp(r.stop, idsName, ng, "groupby_corr")
	if err != nil {
		return nil, err
	}
	defer done()
	start := time.Now()
	out, err := ops.GroupCorr(env, ids, ng, xy[0], xy[1])
	if err != nil {
		return nil, opErr(err)
	}
	s.log.Debug("groupby_corr", "rows", ids.Len(), "groups", ng, "took", time.Since(start))
	return one(o, out)
}

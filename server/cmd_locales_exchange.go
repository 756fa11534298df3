package server

// cmd_locales_exchange.go: the commands whose rows move between locales
// (locales.go). They share one exchange, a range partition: splitters
// sampled from the key's blocks cut its values into L ranges, locale r
// sends the rows of range d to locale d (straight to its bulk stream,
// locale_push), and each locale concatenates what it got in source-rank
// order. Since blocks are contiguous in row order, a locale then holds its
// range's rows in their original order; since range d's values are below
// range d+1's, the local engine's sorted answers (a sort, a group-by's
// sorted keys), put end to end in rank order, are the one-process answer,
// and a group's float sum adds its rows in the order one process adds
// them.

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// scratch are the blocks an exchange makes on its way (masks, pieces),
// deleted at its end whatever happens.
type scratch struct {
	mu    sync.Mutex
	parts [][]string // by rank
}

func (l *locales) newScratch() *scratch { return &scratch{parts: make([][]string, l.count())} }

func (sc *scratch) add(r int, names ...string) {
	sc.mu.Lock()
	sc.parts[r] = append(sc.parts[r], names...)
	sc.mu.Unlock()
}

func (l *locales) dropScratch(sc *scratch) {
	for r, names := range sc.parts {
		l.dropOn(r, names...)
	}
}

// name is the name in an array-describing reply.
func nameOf(m map[string]any) string { s, _ := m["name"].(string); return s }

// move copies array name (size rows of dt) from locale src to locale dst
// and returns the copy's name there: locale 0's over the coordinator's
// own link, the others' straight between them (locale_push).
func (l *locales) move(src int, name string, size int, dt pdarray.DType, dst int) (string, error) {
	l.exchangeBytes.Add(uint64(size * dt.Size()))
	switch {
	case src == 0:
		p := l.peers[dst-1]
		arr, release, err := l.s.store.acquire(name)
		if err != nil {
			return "", err
		}
		defer release()
		info, err := client.UploadArray(p.ctx, p.c, arr)
		return info.Name, p.wrap(err)
	case dst == 0:
		p := l.peers[src-1]
		o, _ := l.s.opEnv(nil, "exchange from locale %d", src)
		defer o.done()
		out, err := o.alloc(dt, size)
		if err != nil {
			return "", err
		}
		if size > 0 {
			if _, err := client.DownloadRangeInto(p.ctx, p.c, name, dt, 0, size, out.Bytes()); err != nil {
				return "", p.wrap(err)
			}
		}
		res, err := o.keep(out)
		if err != nil {
			return "", err
		}
		return nameOf(res), nil
	}
	res, err := l.call(src, "locale_push", map[string]any{"name": name, "to": dst})
	if err != nil {
		return "", err
	}
	return nameOf(res), nil
}

// place puts piece name (size rows of dt, made on locale src, in the
// scratch) on locale dst: there already, or moved (the copy in the
// scratch too). It answers the piece's name on dst.
func (l *locales) place(src, dst int, name string, size int, dt pdarray.DType, sc *scratch) (string, error) {
	if dst == src {
		return name, nil
	}
	moved, err := l.move(src, name, size, dt, dst)
	if err != nil {
		return "", err
	}
	sc.add(dst, moved)
	return moved, nil
}

// assemble concatenates on each locale d the pieces pieces[d][src] (in
// source-rank order; "" for none) of one dtype into one new block: a
// temporary array the caller drops.
func (l *locales) assemble(pieces [][]string, dt pdarray.DType) (*distArray, error) {
	res := make([]map[string]any, l.count())
	err := l.each(func(d int) error {
		var names []string
		for _, n := range pieces[d] {
			if n != "" {
				names = append(names, n)
			}
		}
		var out map[string]any
		var err error
		if len(names) == 0 {
			out, err = l.call(d, "full", map[string]any{"size": 0, "dtype": dt.String(), "value": 0})
		} else {
			out, err = l.call(d, "concatenate", map[string]any{"names": names})
		}
		res[d] = out
		return err
	})
	if err != nil {
		l.dropParts(names(res)) // what the others made
		return nil, err
	}
	return l.describe("concatenate", res)
}

// realign copies d to blocks of the given bounds (a temporary array the
// caller drops): each locale's share of every target block is sliced out
// and moved there.
func (l *locales) realign(d *distArray, target []int) (*distArray, error) {
	L := l.count()
	sc := l.newScratch()
	defer l.dropScratch(sc)
	pieces := make([][]string, L)
	for i := range pieces {
		pieces[i] = make([]string, L)
	}
	err := l.each(func(src int) error {
		for dst := range L {
			lo, hi := max(d.bounds[src], target[dst]), min(d.bounds[src+1], target[dst+1])
			if lo >= hi {
				continue
			}
			res, err := l.call(src, "slice", map[string]any{"a": d.parts[src], "start": lo - d.bounds[src], "stop": hi - d.bounds[src]})
			if err != nil {
				return err
			}
			sc.add(src, nameOf(res))
			if pieces[dst][src], err = l.place(src, dst, nameOf(res), hi-lo, d.dtype, sc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l.assemble(pieces, d.dtype)
}

// splitterSamples is about how many values of each block splitters are
// chosen from.
const splitterSamples = 256

// fetch is a small array of locale r as Go numbers (int64, uint64,
// float64 or bool).
func (l *locales) fetch(r int, name string) ([]any, error) {
	var arr *pdarray.Array
	if r == 0 {
		a, release, err := l.s.store.acquire(name)
		if err != nil {
			return nil, err
		}
		defer release()
		arr = a
	} else {
		p := l.peers[r-1]
		a, err := client.DownloadArray(p.ctx, p.c, name)
		if err != nil {
			return nil, p.wrap(err)
		}
		arr = a
	}
	return valuesOf(arr), nil
}

func valuesOf(a *pdarray.Array) []any {
	switch a.DType() {
	case pdarray.Int8:
		return widen(a, func(v int8) int64 { return int64(v) })
	case pdarray.Int16:
		return widen(a, func(v int16) int64 { return int64(v) })
	case pdarray.Int32:
		return widen(a, func(v int32) int64 { return int64(v) })
	case pdarray.Int64:
		return widen(a, func(v int64) int64 { return v })
	case pdarray.Uint8:
		return widen(a, func(v uint8) uint64 { return uint64(v) })
	case pdarray.Uint16:
		return widen(a, func(v uint16) uint64 { return uint64(v) })
	case pdarray.Uint32:
		return widen(a, func(v uint32) uint64 { return uint64(v) })
	case pdarray.Uint64:
		return widen(a, func(v uint64) uint64 { return v })
	case pdarray.Float32:
		return widen(a, func(v float32) float64 { return float64(v) })
	case pdarray.Float64:
		return widen(a, func(v float64) float64 { return v })
	case pdarray.Bool:
		return widen(a, func(v bool) bool { return v })
	}
	return nil
}

// widen is a's elements as Go values of one width per kind.
func widen[T pdarray.Element, U any](a *pdarray.Array, f func(T) U) []any {
	v := pdarray.View[T](a)
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

// splitters are L-1 values of key, ascending and never NaN, that cut its
// rows into L ranges of about equal size: range d is the values v with
// splitters[d-1] <= v < splitters[d] (NaN in the last). Each locale reports
// evenly spaced elements of its block's sorted order (order_stats, no
// sort), weighted by its rows.
func (l *locales) splitters(key *distArray) ([]any, error) {
	switch key.dtype {
	case pdarray.Bool:
		return nil, transfer.Errorf(transfer.NotDistributed, "a bool key does not run yet on several locales: use astype(int8)")
	}
	type sample struct {
		v any
		w float64
	}
	// One Go type per key dtype, whatever width msgpack gave it.
	isFloat := key.dtype == pdarray.Float64 || key.dtype == pdarray.Float32
	norm := func(v any) any {
		switch {
		case isFloat:
			return asF64(v)
		case key.dtype == pdarray.Uint64:
			return asU64(v)
		}
		return asI64(v)
	}
	var mu sync.Mutex
	var samples []sample
	err := l.each(func(r int) error {
		n := key.bounds[r+1] - key.bounds[r]
		if n == 0 {
			return nil
		}
		// Every stride-th row (a sorted block gives its exact quantiles;
		// any other order a fair sample, short of a period of the stride).
		stride := max(n/splitterSamples, 1)
		res, err := l.call(r, "slice", map[string]any{"a": key.parts[r], "start": 0, "stop": n, "step": stride})
		if err != nil {
			return err
		}
		defer l.dropOn(r, nameOf(res))
		vals, err := l.fetch(r, nameOf(res))
		if err != nil {
			return err
		}
		mu.Lock()
		for _, v := range vals {
			v = norm(v)
			if f, ok := v.(float64); ok && math.IsNaN(f) {
				continue
			}
			samples = append(samples, sample{v, float64(n) / float64(len(vals))})
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	less := func(a, b any) int {
		switch x := a.(type) {
		case float64:
			return cmp.Compare(x, b.(float64))
		case uint64:
			return cmp.Compare(x, b.(uint64))
		}
		return cmp.Compare(a.(int64), b.(int64))
	}
	slices.SortStableFunc(samples, func(a, b sample) int { return less(a.v, b.v) })
	L := l.count()
	out := make([]any, L-1)
	if len(samples) == 0 { // no rows (any cut will do), or all NaN: every row in the last range
		for j := range out {
			out[j] = int64(0)
			if isFloat {
				out[j] = math.Inf(-1)
			}
		}
		return out, nil
	}
	var total float64
	for _, s := range samples {
		total += s.w
	}
	var acc float64
	j := 0
	for _, s := range samples {
		acc += s.w
		for j < L-1 && acc >= total*float64(j+1)/float64(L) {
			out[j] = s.v
			j++
		}
	}
	for ; j < L-1; j++ {
		out[j] = samples[len(samples)-1].v
	}
	return out, nil
}

// partition is the range partition of key's rows with the arrays in
// others (aligned with key): the results, key's first, hold range d of the
// rows on locale d, in row order. They are temporaries: the caller drops
// them (dropArrays).
func (l *locales) partition(key *distArray, others []*distArray) ([]*distArray, error) {
	L := l.count()
	t0 := time.Now()
	cuts, err := l.splitters(key)
	if err != nil {
		return nil, err
	}
	tSplit := time.Since(t0)
	all := append([]*distArray{key}, others...)
	sc := l.newScratch()
	defer l.dropScratch(sc)
	// pieces[i][dst][src]: array i's rows from src for dst, on dst.
	pieces := make([][][]string, len(all))
	for i := range pieces {
		pieces[i] = make([][]string, L)
		for d := range pieces[i] {
			pieces[i][d] = make([]string, L)
		}
	}
	l.exchanges.Add(1)
	defer func() { l.exchangeNanos.Add(uint64(time.Since(t0) - tSplit)) }()
	err = l.each(func(src int) error {
		arrays := make([]string, len(all))
		for i, a := range all {
			arrays[i] = a.parts[src]
		}
		res, err := l.call(src, "range_partition", map[string]any{"key": key.parts[src], "arrays": arrays, "cuts": cuts})
		if err != nil {
			return err
		}
		ranges, _ := res["parts"].([]any)
		for dst, row := range ranges {
			infos, _ := row.([]any)
			for i, x := range infos {
				m, _ := x.(map[string]any)
				name := nameOf(m)
				sc.add(src, name)
				size := int(asI64(m["size"]))
				if size == 0 {
					continue
				}
				if pieces[i][dst][src], err = l.place(src, dst, name, size, all[i].dtype, sc); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tCut := time.Since(t0)
	defer func() {
		l.s.log.Debug("locales: range partition", "rows", key.n, "arrays", len(all), "splitters", tSplit, "cut_and_move", tCut-tSplit, "assemble", time.Since(t0)-tCut)
	}()
	out := make([]*distArray, len(all))
	for i, a := range all {
		if out[i], err = l.assemble(pieces[i], a.dtype); err != nil {
			l.dropArrays(out[:i])
			return nil, err
		}
	}
	return out, nil
}

func (l *locales) dropArrays(ds []*distArray) {
	for _, d := range ds {
		if d != nil {
			l.dropParts(d.parts)
		}
	}
}

// aligned is ds laid out on the bounds of ds[0]: the arrays already there
// as they are, the others realigned (the returned drop frees those).
func (l *locales) aligned(ds []*distArray) ([]*distArray, func(), error) {
	out := slices.Clone(ds)
	var made []*distArray
	drop := func() { l.dropArrays(made) }
	for i, d := range ds {
		if d.n != ds[0].n {
			return nil, nil, transfer.Errorf(transfer.ArgumentValue, "arrays of %d and %d elements: every array must have the same length", ds[0].n, d.n)
		}
		if slices.Equal(d.bounds, ds[0].bounds) {
			continue
		}
		m, err := l.realign(d, ds[0].bounds)
		if err != nil {
			drop()
			return nil, nil, err
		}
		made = append(made, m)
		out[i] = m
	}
	return out, drop, nil
}

// onlyArray is the array of a request whose one argument "a" names it.
func (l *locales) onlyArray(r *request) (*distArray, error) {
	a := r.args.String("a")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	return l.get(a)
}

// sortValues is sort: the range partition, then each locale sorts its
// range.
func (l *locales) sortValues(r *request) (*response, error) {
	d, err := l.onlyArray(r)
	if err != nil {
		return nil, err
	}
	parts, err := l.partition(d, nil)
	if err != nil {
		return nil, err
	}
	defer l.dropArrays(parts)
	res, err := l.runEach("sort", func(rank int) map[string]any { return map[string]any{"a": parts[0].parts[rank]} }, true)
	if err != nil {
		return nil, err
	}
	return l.made("sort", res)
}

// argsort: the key's rows travel with their global row numbers; each
// locale sorts its range and answers the row numbers in that order.
func (l *locales) argsort(r *request) (*response, error) {
	d, err := l.onlyArray(r)
	if err != nil {
		return nil, err
	}
	rows, err := l.iota(d.bounds)
	if err != nil {
		return nil, err
	}
	defer l.dropArrays([]*distArray{rows})
	parts, err := l.partition(d, []*distArray{rows})
	if err != nil {
		return nil, err
	}
	defer l.dropArrays(parts)
	perms, err := l.runEach("argsort", func(rank int) map[string]any { return map[string]any{"a": parts[0].parts[rank]} }, true)
	if err != nil {
		return nil, err
	}
	defer l.dropArrays([]*distArray{{parts: names(perms)}})
	res, err := l.runEach("take", func(rank int) map[string]any {
		return map[string]any{"a": parts[1].parts[rank], "idx": nameOf(perms[rank])}
	}, true)
	if err != nil {
		return nil, err
	}
	return l.made("argsort", res)
}

// iota is the row numbers 0..n-1 laid out on bounds (a temporary).
func (l *locales) iota(bounds []int) (*distArray, error) {
	res, err := l.runEach("arange", func(rank int) map[string]any {
		return map[string]any{"start": bounds[rank], "stop": bounds[rank+1], "step": 1}
	}, true)
	if err != nil {
		return nil, err
	}
	return l.describe("arange", res)
}

// groupBy is groupby with aggregations and without ids (what
// GroupBy.aggregate sends first): the keys' and columns' rows are range
// partitioned by the first key, so each group is whole on one locale, with
// its rows in their original order; each locale groups and aggregates its
// range with the local engine; the unique keys and the aggregates, put end
// to end in rank order, are sorted as one process's. A grouping with ids
// (each row's group, in row order) does not run across locales yet.
func (l *locales) groupBy(r *request) (*response, error) {
	a := r.args
	names := a.StringList("keys")
	dropna := a.OptBool("dropna", true)
	strategy := a.OptString("strategy", "auto")
	var opList, colNames []string
	if a.Has("ops") {
		opList = a.StringList("ops")
		colNames = a.StringList("columns")
	}
	wantIDs := a.OptBool("ids", true)
	ddof := a.OptFloat("ddof", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if wantIDs || len(opList) == 0 {
		return nil, transfer.Errorf(transfer.NotDistributed, "a group-by's ids (each row's group) are not made yet on several locales: aggregate at once (GroupBy(keys).aggregate(values, op)), or use one locale")
	}
	if len(names) == 0 || len(colNames) != len(opList) {
		return commands["groupby"].run(l.s, r) // its own error
	}
	for _, op := range opList {
		if op == "argmin" || op == "argmax" {
			return nil, transfer.Errorf(transfer.NotDistributed, "group-by '%s' (a row number) does not run yet on several locales", op)
		}
	}
	var arrays []*distArray
	index := map[string]int{} // array name -> position in arrays
	add := func(name string) error {
		if _, ok := index[name]; ok || name == "" {
			return nil
		}
		d, err := l.get(name)
		if err != nil {
			return err
		}
		index[name] = len(arrays)
		arrays = append(arrays, d)
		return nil
	}
	for _, n := range names {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	for _, n := range colNames {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	arrays, dropAligned, err := l.aligned(arrays)
	if err != nil {
		return nil, err
	}
	defer dropAligned()
	parts, err := l.partition(arrays[0], arrays[1:])
	if err != nil {
		return nil, err
	}
	defer l.dropArrays(parts)
	res, err := l.runEach("groupby", func(rank int) map[string]any {
		keys := make([]any, len(names))
		for i, n := range names {
			keys[i] = parts[index[n]].parts[rank]
		}
		cols := make([]any, len(colNames))
		for i, n := range colNames {
			cols[i] = ""
			if n != "" {
				cols[i] = parts[index[n]].parts[rank]
			}
		}
		return map[string]any{"keys": keys, "ops": opList, "columns": cols, "ids": false,
			"dropna": dropna, "strategy": strategy, "ddof": ddof}
	}, false)
	// Every block a locale made is one of the answer's arrays (or its ids,
	// dropped): on a failure, all of them go.
	made := l.newScratch()
	for rank, m := range res {
		if m == nil {
			continue
		}
		if ids, ok := m["ids"].(map[string]any); ok {
			l.dropOn(rank, nameOf(ids))
		}
		for _, key := range []string{"keys", "arrays"} {
			list, _ := m[key].([]any)
			for _, x := range list {
				if info, ok := x.(map[string]any); ok {
					made.add(rank, nameOf(info))
				}
			}
		}
	}
	if err != nil {
		l.dropScratch(made)
		return nil, err
	}
	column := func(key string, i int) []map[string]any {
		out := make([]map[string]any, len(res))
		for rank, m := range res {
			list, _ := m[key].([]any)
			out[rank], _ = list[i].(map[string]any)
		}
		return out
	}
	// "fused": no ids come with the answer (the clients then group again
	// when ids are asked for, which is refused); "exchanged": the rows
	// were range partitioned over the locales first.
	result := map[string]any{"strategy": res[0]["strategy"], "fused": true, "exchanged": true}
	var ngroups, kept int64
	for _, m := range res {
		ngroups += asI64(m["ngroups"])
		kept += asI64(m["kept"])
	}
	result["ngroups"], result["kept"] = ngroups, kept
	for _, key := range []string{"keys", "arrays"} {
		n := len(names)
		if key == "arrays" {
			n = len(opList)
		}
		infos := make([]any, n)
		for i := range n {
			d, err := l.record("groupby", column(key, i))
			if err != nil {
				return nil, err
			}
			infos[i] = d.result(d.parts[0])
		}
		result[key] = infos
	}
	return &response{result: result}, nil
}

// names are the names in replies that describe arrays.
func names(res []map[string]any) []string {
	out := make([]string, len(res))
	for i, m := range res {
		out[i] = nameOf(m)
	}
	return out
}

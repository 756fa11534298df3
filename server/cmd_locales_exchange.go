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
	"fmt"
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

// sample is every (n/k)-th value of block part (n rows) on locale r, as
// Go values (fetch).
func (l *locales) sample(r int, part string, n, k int) ([]any, error) {
	res, err := l.call(r, "slice", map[string]any{"a": part, "start": 0, "stop": n, "step": max(n/k, 1)})
	if err != nil {
		return nil, err
	}
	defer l.dropOn(r, nameOf(res))
	return l.fetch(r, nameOf(res))
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
		vals, err := l.sample(r, key.parts[r], n, splitterSamples)
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
	t0 := time.Now()
	cuts, err := l.splitters(key)
	if err != nil {
		return nil, err
	}
	return l.partitionAt(key, others, cuts, time.Since(t0))
}

// partitionAt is partition by the given cuts (L-1 values of key's dtype,
// ascending); tSplit is the time it took to choose them (logged).
func (l *locales) partitionAt(key *distArray, others []*distArray, cuts []any, tSplit time.Duration) ([]*distArray, error) {
	L := l.count()
	t0 := time.Now().Add(-tSplit)
	var err error
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
	// cut[src][dst][i]: array i's rows from src for dst, still on src.
	type piece struct {
		name string
		size int
	}
	cut := make([][][]piece, L)
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
		cut[src] = make([][]piece, L)
		for dst, row := range ranges {
			infos, _ := row.([]any)
			for _, x := range infos {
				m, _ := x.(map[string]any)
				sc.add(src, nameOf(m))
				cut[src][dst] = append(cut[src][dst], piece{nameOf(m), int(asI64(m["size"]))})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Before anything moves: every locale must have room for what comes
	// to it and for its range put together.
	need := make([]int64, L)
	for src := range L {
		for dst := range L {
			for i, p := range cut[src][dst] {
				b := int64(p.size * all[i].dtype.Size())
				need[dst] += b // its range's block
				if src != dst {
					need[dst] += b // the copy that came
				}
			}
		}
	}
	if err := l.checkRoom("the exchange", key.n, need); err != nil {
		return nil, err
	}
	err = l.each(func(src int) error {
		for dst, row := range cut[src] {
			for i, p := range row {
				if p.size == 0 {
					continue
				}
				var err error
				if pieces[i][dst][src], err = l.place(src, dst, p.name, p.size, all[i].dtype, sc); err != nil {
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

// checkRoom refuses work that needs need[r] more bytes on locale r than
// its --max-memory leaves free, naming the locale and the sizes, before
// any of it is done.
func (l *locales) checkRoom(what string, rows int, need []int64) error {
	free := make([]int64, len(need))
	limit := make([]int64, len(need))
	err := l.each(func(r int) error {
		m, err := l.call(r, "mem_used", map[string]any{})
		free[r], limit[r] = asI64(m["free"]), asI64(m["limit"])
		return err
	})
	if err != nil {
		return err
	}
	for r, n := range need {
		if n > free[r] {
			return transfer.Errorf(transfer.OutOfMemory, "%s of %d rows needs %s (%d bytes) on locale %d, but its limit of %s leaves %s (%d bytes) free: raise --max-memory (it is per locale), start more locales, or delete arrays; nothing was stored",
				what, rows, transfer.FormatBytes(n), n, r, transfer.FormatBytes(limit[r]), transfer.FormatBytes(free[r]), free[r])
		}
	}
	return nil
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

// groupBy aggregates by keys across locales, with no ids: every group must
// end up whole on one locale, its rows in their original order, for the
// local engine's answer to be one process's. Two plans:
//
//   - combined, where every aggregation's partial results merge exactly
//     (counts, sizes, integer sums and products, which wrap; min, max,
//     first, any, all, or, and, xor): each locale aggregates its own block
//     first, then only those partial results are range partitioned by the
//     first key and aggregated again (counts are summed). A taxi-like key
//     of 265 values moves 265 rows per locale instead of every row;
//   - chained, for float sums and products (with min, max, first) by a key
//     of few values (a sample of every block says so): the locales take
//     turns in rank order, each aggregating the running results it was
//     handed, put before its own rows, so a group's values are added in
//     row order (one process's sum bit for bit) and only one row per group
//     moves, once per locale;
//   - exchanged otherwise (float sums by many keys, means, var, median,
//     nunique, ..., whose answers depend on the order of every row's
//     addition): the keys' and values' rows themselves are range
//     partitioned, then aggregated.
//
// Either way range d's keys are below range d+1's, so the unique keys and
// the aggregates, put end to end in rank order, are sorted as one
// process's. A grouping with ids (each row's group, in row order) does not
// run across locales yet.
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
	// The keys and the columns (nil for "size") among the arrays, or
	// among their exchanged copies.
	pick := func(from []*distArray) (keys, cols []*distArray) {
		keys = make([]*distArray, len(names))
		for i, n := range names {
			keys[i] = from[index[n]]
		}
		cols = make([]*distArray, len(colNames))
		for i, n := range colNames {
			if n != "" {
				cols[i] = from[index[n]]
			}
		}
		return keys, cols
	}
	keys, cols := pick(arrays)
	g := groupArgs{dropna: dropna, strategy: strategy, ddof: ddof}
	var out *grouped
	first, second, combine := combinable(opList, cols)
	if combine {
		// Each locale's partial results, then theirs.
		part, err := l.groupEach(keys, first, cols, g)
		if err != nil {
			return nil, err
		}
		defer part.drop(l)
		moved, err := l.partition(part.keys[0], append(slices.Clone(part.keys[1:]), part.aggs...))
		if err != nil {
			return nil, err
		}
		defer l.dropArrays(moved)
		nk := len(keys)
		if out, err = l.groupEach(moved[:nk], second, moved[nk:], g); err != nil {
			return nil, err
		}
		out.kept = part.kept
		l.combinedGroupBys.Add(1)
	} else if chainable(opList, cols) && l.fewGroups(keys) {
		if out, err = l.groupChain(keys, opList, cols, g); err != nil {
			return nil, err
		}
		l.chainedGroupBys.Add(1)
	} else {
		moved, err := l.partition(arrays[0], arrays[1:])
		if err != nil {
			return nil, err
		}
		defer l.dropArrays(moved)
		mk, mc := pick(moved)
		if out, err = l.groupEach(mk, opList, mc, g); err != nil {
			return nil, err
		}
	}
	// "fused": no ids come with the answer (the clients then group again
	// when ids are asked for, which is refused); "exchanged": rows (or
	// partial results: "combined") were range partitioned over the locales.
	result := map[string]any{"strategy": out.strategy, "fused": true, "exchanged": true, "combined": combine,
		"ngroups": out.ngroups, "kept": out.kept}
	for key, ds := range map[string][]*distArray{"keys": out.keys, "arrays": out.aggs} {
		infos := make([]any, len(ds))
		for i, d := range ds {
			l.put(d.parts[0], d)
			infos[i] = d.result(d.parts[0])
		}
		result[key] = infos
	}
	return &response{result: result}, nil
}

// groupArgs are the local group-by's settings that every step shares.
type groupArgs struct {
	dropna   bool
	strategy string
	ddof     float64
}

// grouped is what the local group-by made on every locale: its unique
// keys and aggregates as arrays (not stored under any name yet).
type grouped struct {
	keys, aggs    []*distArray
	ngroups, kept int64
	strategy      any
}

func (g *grouped) drop(l *locales) {
	l.dropArrays(g.keys)
	l.dropArrays(g.aggs)
}

// combinable maps each aggregation to the one that computes its partial
// result on a locale's own rows and the one that merges the partial
// results exactly, in rank order; ok is false when an aggregation has none.
func combinable(ops []string, cols []*distArray) (first, second []string, ok bool) {
	for i, op := range ops {
		merge := op
		switch op {
		case "size", "count":
			merge = "sum"
		case "sum", "prod": // integers wrap, in any order; floats do not add so
			if cols[i] == nil || cols[i].dtype == pdarray.Float64 || cols[i].dtype == pdarray.Float32 {
				return nil, nil, false
			}
		case "min", "max", "first", "any", "all", "or", "and", "xor":
		default:
			return nil, nil, false
		}
		first, second = append(first, op), append(second, merge)
	}
	return first, second, true
}

// groupMade are the blocks a locale's group-by reply m made (its unique
// keys, then its aggregates); the ids it made, which no plan here uses,
// are deleted at once.
func (l *locales) groupMade(rank int, m map[string]any) []string {
	if ids, ok := m["ids"].(map[string]any); ok {
		l.dropOn(rank, nameOf(ids))
	}
	var made []string
	for _, key := range []string{"keys", "arrays"} {
		list, _ := m[key].([]any)
		for _, x := range list {
			if info, ok := x.(map[string]any); ok {
				made = append(made, nameOf(info))
			}
		}
	}
	return made
}

// chainable: every aggregation is one whose running result, put as a row
// before a locale's rows of its group, continues exactly where it stopped
// (sum and prod from the first row; min, max, first), on float64 values
// (the running sums' dtype, so the two concatenate).
func chainable(ops []string, cols []*distArray) bool {
	for i, op := range ops {
		switch op {
		case "sum", "prod", "min", "max", "first":
		default:
			return false
		}
		if cols[i] == nil || cols[i].dtype != pdarray.Float64 {
			return false
		}
	}
	return true
}

// chainSamples is the rows of each block that fewGroups looks at; the keys
// are few when the samples hold at most one distinct key in
// chainRepeats: the groups are then about as many as the sample shows, and
// each is carried once per locale.
const (
	chainSamples = 2048
	chainRepeats = 8
)

// fewGroups estimates from evenly spaced rows of every block whether the
// keys take few values.
func (l *locales) fewGroups(keys []*distArray) bool {
	var mu sync.Mutex
	seen := map[string]bool{}
	total := 0
	err := l.each(func(r int) error {
		n := keys[0].bounds[r+1] - keys[0].bounds[r]
		if n == 0 {
			return nil
		}
		cols := make([][]any, len(keys))
		for i, k := range keys {
			var err error
			if cols[i], err = l.sample(r, k.parts[r], n, chainSamples); err != nil {
				return err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		row := make([]any, len(keys))
		for j := range cols[0] {
			for i := range cols {
				row[i] = cols[i][j]
			}
			seen[fmt.Sprint(row...)] = true
		}
		total += len(cols[0])
		return nil
	})
	return err == nil && len(seen)*chainRepeats <= total
}

// groupChain aggregates by taking turns: locale 0 aggregates its block;
// each next locale with rows gets the running keys and results, puts them
// before its own rows of keys and values (concatenate) and aggregates
// those. The last turn's results are the answer (on that locale; the
// others hold empty blocks).
func (l *locales) groupChain(keys []*distArray, ops []string, cols []*distArray, g groupArgs) (*grouped, error) {
	L := l.count()
	sc := l.newScratch() // the carried copies and the concatenations
	defer l.dropScratch(sc)
	at := -1           // the locale holding the running results
	var carry []string // their names there: the keys, then one per op
	var carried int64  // their rows (the groups so far)
	var reply map[string]any
	dts := make([]pdarray.DType, 0, len(keys)+len(ops))
	for _, k := range keys {
		dts = append(dts, k.dtype)
	}
	for range ops {
		dts = append(dts, pdarray.Float64)
	}
	out := &grouped{}
	dropCarry := func() {
		if at >= 0 {
			l.dropOn(at, carry...)
		}
	}
	for r := range L {
		if keys[0].bounds[r+1] == keys[0].bounds[r] && (r < L-1 || at >= 0) {
			continue // no rows here: the running results stay where they are (no rows anywhere: the last turn makes the empty answer)
		}
		ins := make([]string, 0, len(dts)) // this turn's keys, then its columns
		for _, k := range keys {
			ins = append(ins, k.parts[r])
		}
		for _, c := range cols {
			ins = append(ins, c.parts[r])
		}
		if at >= 0 && carried > 0 {
			for i, name := range carry {
				moved, err := l.place(at, r, name, int(carried), dts[i], sc)
				if err != nil {
					dropCarry()
					return nil, err
				}
				res, err := l.call(r, "concatenate", map[string]any{"names": []string{moved, ins[i]}})
				if err != nil {
					dropCarry()
					return nil, err
				}
				sc.add(r, nameOf(res))
				ins[i] = nameOf(res)
			}
		}
		res, err := l.call(r, "groupby", map[string]any{"keys": ins[:len(keys)], "ops": ops, "columns": ins[len(keys):],
			"ids": false, "dropna": g.dropna, "strategy": g.strategy, "ddof": g.ddof})
		made := l.groupMade(r, res)
		if err != nil || len(made) != len(dts) {
			l.dropOn(r, made...)
			dropCarry()
			if err == nil {
				err = transfer.Errorf(transfer.Internal, "locales: group-by on locale %d made %d arrays, not %d", r, len(made), len(dts))
			}
			return nil, err
		}
		dropCarry()
		out.kept += asI64(res["kept"]) - carried
		at, carry, carried, reply = r, made, asI64(res["ngroups"]), res
	}
	out.strategy, out.ngroups = reply["strategy"], carried
	// Empty blocks elsewhere, so the answer's arrays span every locale.
	blocks := make([][]map[string]any, len(dts))
	for i := range dts {
		blocks[i] = make([]map[string]any, L)
	}
	for i, key := range []string{"keys", "arrays"} {
		list, _ := reply[key].([]any)
		for j, x := range list {
			blocks[i*len(keys)+j][at], _ = x.(map[string]any)
		}
	}
	err := l.each(func(r int) error {
		if r == at {
			return nil
		}
		for i, dt := range dts {
			res, err := l.call(r, "full", map[string]any{"size": 0, "dtype": dt.String(), "value": 0})
			if err != nil {
				return err
			}
			blocks[i][r] = res
		}
		return nil
	})
	if err != nil {
		for _, b := range blocks {
			l.dropParts(names(b))
		}
		return nil, err
	}
	for i, b := range blocks {
		d, err := l.describe("groupby", b)
		if err != nil {
			for _, b := range blocks[i+1:] {
				l.dropParts(names(b))
			}
			out.drop(l)
			return nil, err
		}
		if i < len(keys) {
			out.keys = append(out.keys, d)
		} else {
			out.aggs = append(out.aggs, d)
		}
	}
	return out, nil
}

// groupEach runs the local group-by on every locale over its blocks of
// keys and cols (aligned; cols[i] nil for "size"). On a failure every
// block made is deleted.
func (l *locales) groupEach(keys []*distArray, ops []string, cols []*distArray, g groupArgs) (*grouped, error) {
	res, err := l.runEach("groupby", func(rank int) map[string]any {
		ks := make([]any, len(keys))
		for i, d := range keys {
			ks[i] = d.parts[rank]
		}
		cs := make([]any, len(cols))
		for i, d := range cols {
			cs[i] = ""
			if d != nil {
				cs[i] = d.parts[rank]
			}
		}
		return map[string]any{"keys": ks, "ops": ops, "columns": cs, "ids": false,
			"dropna": g.dropna, "strategy": g.strategy, "ddof": g.ddof}
	}, false)
	// Every block a locale made is one of the answer's arrays (or its ids,
	// dropped): on a failure, all of them go.
	made := l.newScratch()
	for rank, m := range res {
		made.add(rank, l.groupMade(rank, m)...)
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
	out := &grouped{strategy: res[0]["strategy"]}
	for _, m := range res {
		out.ngroups += asI64(m["ngroups"])
		out.kept += asI64(m["kept"])
	}
	for _, key := range []string{"keys", "arrays"} {
		n := len(keys)
		if key == "arrays" {
			n = len(ops)
		}
		for i := range n {
			d, err := l.describe("groupby", column(key, i))
			if err != nil {
				l.dropScratch(made)
				return nil, err
			}
			if key == "keys" {
				out.keys = append(out.keys, d)
			} else {
				out.aggs = append(out.aggs, d)
			}
		}
	}
	return out, nil
}

// names are the names in replies that describe arrays.
func names(res []map[string]any) []string {
	out := make([]string, len(res))
	for i, m := range res {
		out[i] = nameOf(m)
	}
	return out
}

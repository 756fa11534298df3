package server

// cmd_locales.go: the commands a coordinator spreads over its locales
// (locales.go): transfers, creation, elementwise operations and reductions.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// upload stores the client's array as this process would (every transport:
// frames, streams, shared memory), then sends each other locale its block
// over its bulk stream and keeps block 0. The whole array passes through
// this process first (the client sending each locale its block itself is
// the next step: docs/locales.md).
func (l *locales) upload(r *request) (*response, error) {
	if blockOnly(r) {
		return l.s.cmdUpload(r) // block 0 of an array the client sends every locale its block of (adopt)
	}
	resp, err := l.s.cmdUpload(r)
	if err != nil {
		return nil, err
	}
	name, _ := resp.result["name"].(string)
	whole, release, err := l.s.store.acquire(name)
	if err != nil {
		return nil, err
	}
	d, err := l.spread(name, whole)
	release()
	if err != nil {
		_, _, _ = l.s.store.delete([]string{name}, true)
		return nil, err
	}
	l.put(name, d)
	resp.result = d.result(name)
	return resp, nil
}

// spread makes the array stored here under name a distributed one: blocks
// 1..L-1 go to their locales, and name is left holding block 0 alone.
func (l *locales) spread(name string, whole *pdarray.Array) (*distArray, error) {
	dt, n := whole.DType(), whole.Len()
	b := l.bounds(n)
	size := dt.Size()
	d := &distArray{dtype: dt, n: n, parts: make([]string, l.count()), bounds: b}
	var mu sync.Mutex
	err := l.each(func(r int) error {
		if r == 0 {
			return nil
		}
		p := l.peers[r-1]
		if why := p.lost.Load(); why != nil {
			return p.failed(*why)
		}
		body := whole.Bytes()[b[r]*size : b[r+1]*size]
		info, err := client.UploadBytes(p.ctx, p.c, dt, b[r+1]-b[r], body)
		if err != nil {
			return p.wrap(err)
		}
		mu.Lock()
		d.parts[r] = info.Name
		mu.Unlock()
		return nil
	})
	if err != nil {
		l.dropParts(d.parts)
		return nil, err
	}
	// Block 0 replaces the whole array under its name: a copy, so the
	// rest of the buffer is freed (a view would keep all of it).
	o, _ := l.s.opEnv(nil, "upload '%s'", name)
	defer o.done()
	blk, err := o.alloc(dt, b[1])
	if err != nil {
		l.dropParts(d.parts)
		return nil, err
	}
	copy(blk.Bytes(), whole.Bytes()[:b[1]*size])
	if _, _, err := l.s.store.delete([]string{name}, false); err != nil {
		l.dropParts(d.parts)
		return nil, err
	}
	if _, err := o.keepAs(name, blk); err != nil {
		l.dropParts(d.parts)
		return nil, err
	}
	d.parts[0] = name
	return d, nil
}

// download gathers the rows asked for (all, or [start, stop)) into one
// buffer here, stores it for the length of the reply and answers as this
// process would (every transport), then deletes it.
func (l *locales) download(r *request) (*response, error) {
	if blockOnly(r) {
		return l.s.cmdDownload(r) // this locale's block alone (a client reading every locale's at once: locate)
	}
	name, _ := r.Args["name"].(string)
	d, err := l.get(name)
	if err != nil {
		return nil, err
	}
	start := min(int(asI64(r.Args["start"])), d.n)
	stop := d.n
	if v, ok := r.Args["stop"]; ok {
		stop = min(int(asU64(v)&math.MaxInt64), d.n)
	}
	start = max(start, 0)
	stop = max(stop, start)
	o, _ := l.s.opEnv(r.stop, "download '%s'", name)
	defer o.done()
	out, err := o.alloc(d.dtype, stop-start)
	if err != nil {
		return nil, err
	}
	if err := l.gather(d, start, stop, out); err != nil {
		return nil, err
	}
	res, err := o.keep(out)
	if err != nil {
		return nil, err
	}
	tmp := res["name"].(string)
	args := maps.Clone(r.Args)
	args["name"] = tmp
	delete(args, "start")
	delete(args, "stop")
	resp, err := l.s.cmdDownload(r.withArgs(args))
	if err != nil {
		_, _, _ = l.s.store.delete([]string{tmp}, true)
		return nil, err
	}
	after := resp.after
	resp.after = func() {
		if after != nil {
			after()
		}
		_, _, _ = l.s.store.delete([]string{tmp}, true)
	}
	if resp.result != nil {
		if resp.result["name"] == tmp {
			resp.result["name"] = name
		}
	}
	return resp, nil
}

// gather copies rows [start, stop) of d into out, each locale's share at
// once: block 0 from this store, the others downloaded straight into
// their place when it starts on 8 bytes (else through a copy).
func (l *locales) gather(d *distArray, start, stop int, out *pdarray.Array) error {
	b := d.bounds
	size := d.dtype.Size()
	return l.each(func(r int) error {
		lo, hi := max(start, b[r]), min(stop, b[r+1])
		if lo >= hi {
			return nil
		}
		dst := out.Bytes()[(lo-start)*size : (hi-start)*size]
		if r == 0 {
			blk, release, err := l.s.store.acquire(d.parts[0])
			if err != nil {
				return err
			}
			defer release()
			copy(dst, blk.Bytes()[lo*size:hi*size])
			return nil
		}
		p := l.peers[r-1]
		if why := p.lost.Load(); why != nil {
			return p.failed(*why)
		}
		ctx := p.ctx
		if ((lo-start)*size)%8 == 0 {
			_, err := client.DownloadRangeInto(ctx, p.c, d.parts[r], d.dtype, lo-b[r], hi-b[r], dst)
			return p.wrap(err)
		}
		tmp := pdarray.AlignedBytes(len(dst))
		_, err := client.DownloadRangeInto(ctx, p.c, d.parts[r], d.dtype, lo-b[r], hi-b[r], tmp)
		copy(dst, tmp)
		return p.wrap(err)
	})
}

// runEach runs cmd on every locale with args(r) and returns the replies; a
// failure deletes the blocks the others made (nothing half-made stays).
func (l *locales) runEach(cmd string, args func(r int) map[string]any, makes bool) ([]map[string]any, error) {
	res := make([]map[string]any, l.count())
	err := l.each(func(r int) error {
		out, err := l.call(r, cmd, args(r))
		res[r] = out
		return err
	})
	if err != nil && makes {
		l.dropParts(names(res))
	}
	return res, err
}

// made records the blocks cmd made on every locale (res[r] describes
// locale r's) as one array, and answers with its description.
func (l *locales) made(cmd string, res []map[string]any) (*response, error) {
	d, err := l.record(cmd, res)
	if err != nil {
		return nil, err
	}
	return &response{result: d.result(d.parts[0])}, nil
}

// record is made without the answer: the array whose blocks res describe
// (describe), stored under block 0's name.
func (l *locales) record(cmd string, res []map[string]any) (*distArray, error) {
	d, err := l.describe(cmd, res)
	if err != nil {
		return nil, err
	}
	l.put(d.parts[0], d)
	return d, nil
}

// describe is the array whose blocks cmd made (res[r] describes locale
// r's), not stored under any name (an exchange's temporaries, or what
// record stores). On a dtype that is not one dtype everywhere, the blocks
// are deleted.
func (l *locales) describe(cmd string, res []map[string]any) (*distArray, error) {
	d := &distArray{parts: names(res)}
	sizes := make([]int, len(res))
	for r, m := range res {
		sizes[r] = int(asI64(m["size"]))
	}
	dt, err := pdarray.ParseDType(fmt.Sprint(res[0]["dtype"]))
	if err != nil {
		l.dropParts(d.parts)
		return nil, transfer.Errorf(transfer.Internal, "locales: %s answered dtype %v", cmd, res[0]["dtype"])
	}
	for r, m := range res {
		if fmt.Sprint(m["dtype"]) != dt.String() {
			l.dropParts(d.parts)
			return nil, transfer.Errorf(transfer.Internal, "locales: %s made %v on locale 0 and %v on locale %d", cmd, dt, m["dtype"], r)
		}
	}
	d.dtype, d.bounds = dt, sized(sizes)
	d.n = d.bounds[len(sizes)]
	return d, nil
}

// elementwise spreads a command whose row i comes from row i of the
// arrays named in keys (a scalar in key_scalar stays as it is): each
// locale runs it on its blocks, which are aligned because the arrays have
// one length. "out" names an array written in place.
func elementwise(keys ...string) func(*locales, *request) (*response, error) {
	return func(l *locales, r *request) (*response, error) {
		named := map[string]*distArray{}
		n := -1
		for _, k := range keys {
			v, ok := r.Args[k]
			if !ok {
				continue
			}
			name, ok := v.(string)
			if !ok {
				continue // the handler says what is wrong with it
			}
			d, err := l.get(name)
			if err != nil {
				return nil, err
			}
			if k != "out" {
				if n >= 0 && d.n != n {
					return nil, transfer.Errorf(transfer.ArgumentValue, "operands could not be broadcast together with shapes (%d,) (%d,)", n, d.n)
				}
				n = d.n
			}
			named[k] = d
		}
		if n < 0 {
			return nil, transfer.Errorf(transfer.ArgumentValue, "'%s' needs at least one array operand", r.Cmd)
		}
		out, inPlace := named["out"]
		if inPlace && out.n != n {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%s: out '%s' holds %d elements, the result %d", r.Cmd, r.Args["out"], out.n, n)
		}
		// Blocks are aligned by their bounds: operands of one length laid
		// out differently (a sort's result beside an upload) are moved to
		// the bounds of the first (out's, when writing in place).
		order := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return named[k] == nil || k == "out" })
		if inPlace {
			order = append([]string{"out"}, order...)
		}
		ds := make([]*distArray, len(order))
		for i, k := range order {
			ds[i] = named[k]
		}
		ds, drop, err := l.aligned(ds)
		if err != nil {
			return nil, err
		}
		defer drop()
		for i, k := range order {
			named[k] = ds[i]
		}
		res, err := l.runEach(r.Cmd, func(rank int) map[string]any {
			args := maps.Clone(r.Args)
			for k, d := range named {
				args[k] = d.parts[rank]
			}
			return args
		}, !inPlace)
		if err != nil {
			return nil, err
		}
		if inPlace {
			return &response{result: out.result(out.parts[0])}, nil
		}
		return l.made(r.Cmd, res)
	}
}

func (l *locales) full(r *request) (*response, error) {
	n := int(asI64(r.Args["size"]))
	if _, ok := r.Args["size"].(string); ok || n < 0 {
		return commands["full"].run(l.s, r) // its own error
	}
	b := l.bounds(n)
	res, err := l.runEach("full", func(rank int) map[string]any {
		args := maps.Clone(r.Args)
		args["size"] = b[rank+1] - b[rank]
		return args
	}, true)
	if err != nil {
		return nil, err
	}
	return l.made("full", res)
}

// arange of integers: locale r makes start + step*[b[r], b[r+1]), exactly
// the rows one process would. Float ranges are refused for now: numpy's
// start + i*step is not start' + j*step in floating point.
func (l *locales) arange(r *request) (*response, error) {
	var sc [3]ops.Scalar
	for i, k := range []string{"start", "stop", "step"} {
		s, ok := ops.ScalarOf(r.Args[k])
		if !ok {
			return commands["arange"].run(l.s, r) // its own error
		}
		if s.K == 'f' {
			return nil, transfer.Errorf(transfer.NotDistributed, "arange with float arguments does not run yet on several locales; use integers (then astype, or * a step) or one locale")
		}
		if s.K == 'u' {
			if s.U > math.MaxInt64 {
				return nil, transfer.Errorf(transfer.NotDistributed, "arange past 2**63 does not run yet on several locales")
			}
			s = ops.Scalar{K: 'i', I: int64(s.U)}
		}
		sc[i] = s
	}
	n, err := ops.ArangeLen(sc[0], sc[1], sc[2])
	if err != nil {
		return nil, opErr(err)
	}
	b := l.bounds(n)
	start, step := sc[0].I, sc[2].I
	res, err := l.runEach("arange", func(rank int) map[string]any {
		args := maps.Clone(r.Args)
		args["start"] = start + int64(b[rank])*step
		args["stop"] = start + int64(b[rank+1])*step
		return args
	}, true)
	if err != nil {
		return nil, err
	}
	return l.made("arange", res)
}

// reduce combines each locale's reduction of its block, in block order:
// exact for integers and bools (sums wrap as numpy's do), and for min,
// max, argmin, argmax, any, all at any dtype. A float sum or mean adds
// the blocks' pairwise sums left to right, so it may differ from one
// process's pairwise sum in the last bits (docs/locales.md bounds it);
// var and std combine the blocks' means and squared deviations (Chan et
// al.), the same way.
func (l *locales) reduce(r *request) (*response, error) {
	op, _ := r.Args["op"].(string)
	name, _ := r.Args["a"].(string)
	d, err := l.get(name)
	if err != nil {
		return nil, err
	}
	b := d.bounds
	// Empty blocks take no part; an empty array is answered by locale 0,
	// as one process answers it (an error for min, 0 for sum, ...).
	var ranks []int
	for rank := range l.count() {
		if b[rank+1] > b[rank] {
			ranks = append(ranks, rank)
		}
	}
	if len(ranks) <= 1 {
		rank := 0
		if len(ranks) == 1 {
			rank = ranks[0]
		}
		args := maps.Clone(r.Args)
		args["a"] = d.parts[rank]
		res, err := l.call(rank, "reduce", args)
		if err != nil {
			return nil, err
		}
		if op == "argmin" || op == "argmax" {
			res["value"] = asI64(res["value"]) + int64(b[rank])
		}
		return &response{result: res}, nil
	}
	ask := func(op string, extra map[string]any) ([]map[string]any, error) {
		out := make([]map[string]any, len(ranks))
		err := l.each(func(rank int) error {
			i := slices.Index(ranks, rank)
			if i < 0 {
				return nil
			}
			args := maps.Clone(r.Args)
			maps.Copy(args, extra)
			args["op"] = op
			args["a"] = d.parts[rank]
			res, err := l.call(rank, "reduce", args)
			out[i] = res
			return err
		})
		return out, err
	}
	switch op {
	case "var", "std":
		means, err := ask("mean", nil)
		if err != nil {
			return nil, err
		}
		vars, err := ask("var", map[string]any{"ddof": 0.0})
		if err != nil {
			return nil, err
		}
		ddof := asF64(r.Args["ddof"])
		var cnt, mean, m2 float64
		for i, rank := range ranks {
			nb := float64(b[rank+1] - b[rank])
			mb, vb := asF64(means[i]["value"]), asF64(vars[i]["value"])
			delta := mb - mean
			tot := cnt + nb
			mean += delta * nb / tot
			m2 += vb*nb + delta*delta*cnt*nb/tot
			cnt = tot
		}
		v := m2 / (cnt - ddof)
		if cnt-ddof <= 0 {
			v = math.NaN()
		}
		if op == "std" {
			v = math.Sqrt(v)
		}
		return &response{result: map[string]any{"value": v, "dtype": means[0]["dtype"]}}, nil
	case "mean":
		sums, err := ask("sum", nil)
		if err != nil {
			return nil, err
		}
		mean := 0.0
		dt := fmt.Sprint(sums[0]["dtype"])
		if dt == "float64" || dt == "float32" {
			var s float64
			for _, m := range sums {
				s += asF64(m["value"])
			}
			mean = s / float64(d.n)
		} else {
			// Integer sums are exact (numpy's mean of ints sums in float64
			// pairwise: compare within the documented bound).
			means, err := ask("mean", nil)
			if err != nil {
				return nil, err
			}
			for i, rank := range ranks {
				mean += asF64(means[i]["value"]) * float64(b[rank+1]-b[rank])
			}
			mean /= float64(d.n)
		}
		return &response{result: map[string]any{"value": mean, "dtype": "float64"}}, nil
	case "argmin", "argmax":
		idx, err := ask(op, nil)
		if err != nil {
			return nil, err
		}
		vals, err := ask(map[string]string{"argmin": "min", "argmax": "max"}[op], nil)
		if err != nil {
			return nil, err
		}
		best := -1
		for i := range ranks {
			if best < 0 || better(op, vals[i]["value"], vals[best]["value"], fmt.Sprint(vals[i]["dtype"])) {
				best = i
			}
		}
		return &response{result: map[string]any{"value": asI64(idx[best]["value"]) + int64(b[ranks[best]]), "dtype": idx[best]["dtype"]}}, nil
	}
	parts, err := ask(op, nil)
	if err != nil {
		return nil, err
	}
	dt := fmt.Sprint(parts[0]["dtype"])
	v, err := combine(op, dt, parts)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"value": v, "dtype": dt}}, nil
}

// better says whether a beats b for argmin/argmax: strictly (the first
// block wins ties, as numpy's first index does), NaN beating everything
// (numpy's argmax and argmin return the first NaN).
func better(op string, a, b any, dt string) bool {
	switch dt {
	case "float64", "float32":
		x, y := asF64(a), asF64(b)
		if math.IsNaN(y) {
			return false
		}
		if math.IsNaN(x) {
			return true
		}
		if op == "argmin" {
			return x < y
		}
		return x > y
	case "uint64", "uint32", "uint16", "uint8":
		x, y := asU64(a), asU64(b)
		if op == "argmin" {
			return x < y
		}
		return x > y
	case "bool":
		x, y := a == true, b == true
		if op == "argmin" {
			return !x && y
		}
		return x && !y
	}
	x, y := asI64(a), asI64(b)
	if op == "argmin" {
		return x < y
	}
	return x > y
}

// combine merges the blocks' reductions, in block order.
func combine(op, dt string, parts []map[string]any) (any, error) {
	vals := make([]any, len(parts))
	for i, m := range parts {
		vals[i] = m["value"]
	}
	switch op {
	case "any":
		return slices.ContainsFunc(vals, func(v any) bool { return v == true }), nil
	case "all":
		return !slices.ContainsFunc(vals, func(v any) bool { return v != true }), nil
	case "count_nonzero":
		var t int64
		for _, v := range vals {
			t += asI64(v)
		}
		return t, nil
	}
	not := notDistributed("reduce '" + op + "'")
	switch dt {
	case "float64", "float32":
		acc, ok := fold(op, conv(vals, asF64))
		if !ok {
			return nil, not
		}
		if dt == "float32" {
			return float64(float32(acc)), nil
		}
		return acc, nil
	case "uint64", "uint32", "uint16", "uint8":
		acc, ok := fold(op, conv(vals, asU64))
		if !ok {
			return nil, not
		}
		return acc, nil
	case "bool":
		// min is all, max is any.
		acc, ok := fold(op, conv(vals, func(v any) int64 { return map[bool]int64{true: 1}[v == true] }))
		if !ok || op != "min" && op != "max" {
			return nil, not
		}
		return acc == 1, nil
	}
	acc, ok := fold(op, conv(vals, asI64))
	if !ok {
		return nil, not
	}
	return acc, nil
}

func conv[T any](vals []any, f func(any) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = f(v)
	}
	return out
}

// fold combines the blocks' results left to right; NaN wins min and max,
// as in numpy (x != x only for NaN).
func fold[T int64 | uint64 | float64](op string, vals []T) (T, bool) {
	acc := vals[0]
	for _, x := range vals[1:] {
		switch op {
		case "sum":
			acc += x
		case "prod":
			acc *= x
		case "min":
			if x < acc || x != x {
				acc = x
			}
		case "max":
			if x > acc || x != x {
				acc = x
			}
		default:
			return acc, false
		}
	}
	return acc, true
}

// withArgs is r with other arguments (its header copied, not changed).
func (r *request) withArgs(args map[string]any) *request {
	req := *r.Request
	req.Args = args
	nr := *r
	nr.Request = &req
	nr.args = transfer.NewArgs(r.Cmd, args)
	return &nr
}

// blockOnly says whether a transfer asks for this process's block alone
// ("block": true), and takes the argument out of the request: the
// handler below does not know it.
func blockOnly(r *request) bool {
	v, ok := r.Args["block"]
	if !ok {
		return false
	}
	args := maps.Clone(r.Args)
	delete(args, "block")
	*r = *r.withArgs(args)
	return v == true
}

// locate tells a client where an array's blocks are, so that it reads or
// writes every locale's at once: each block's locale, name and rows, and
// the locales' addresses (with the token they take). Without "name" it
// answers the addresses and the bounds an array of "size" rows would have.
func (l *locales) locate(r *request) (*response, error) {
	name := r.args.OptString("name", "")
	size := r.args.OptUint("size", 0)
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	urls := make([]any, l.count())
	urls[0] = ""
	for _, p := range l.peers {
		if why := p.lost.Load(); why != nil {
			return nil, p.failed(*why)
		}
		urls[p.rank] = p.fullURL
	}
	res := map[string]any{"num_locales": l.count(), "urls": urls}
	var b []int
	var parts []string
	if name != "" {
		d, err := l.get(name)
		if err != nil {
			return nil, err
		}
		b, parts = d.bounds, d.parts
		res["dtype"], res["size"] = d.dtype.String(), d.n
	} else {
		b = l.bounds(int(size))
		parts = make([]string, l.count())
	}
	blocks := make([]any, l.count())
	for rank := range blocks {
		blocks[rank] = map[string]any{"rank": rank, "name": parts[rank], "start": b[rank], "stop": b[rank+1]}
	}
	res["blocks"] = blocks
	return &response{result: res}, nil
}

// adopt records blocks a client stored on every locale itself (upload
// with "block" on this one, plain uploads on the others, at the bounds
// locate gave) as one array, named by block 0. Each block is checked for
// its dtype and length first; a failed check stores nothing (the client
// deletes its blocks).
func (l *locales) adopt(r *request) (*response, error) {
	names := r.args.StringList("parts")
	dtypeName := r.args.String("dtype")
	size := int(r.args.Uint("size"))
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	dt, err := pdarray.ParseDType(dtypeName)
	if err != nil {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "adopt: dtype '%s' is not supported", dtypeName)
	}
	if len(names) != l.count() {
		return nil, transfer.Errorf(transfer.ArgumentValue, "adopt: %d parts for %d locales; give one block name per locale", len(names), l.count())
	}
	b := l.bounds(size)
	err = l.each(func(rank int) error {
		info, err := l.call(rank, "info", map[string]any{"name": names[rank]})
		if err != nil {
			return err
		}
		if fmt.Sprint(info["dtype"]) != dt.String() || int(asI64(info["size"])) != b[rank+1]-b[rank] {
			return transfer.Errorf(transfer.ArgumentValue, "adopt: block %d ('%s') holds %v %v; an array of %d %v needs %d there (locate's bounds)", rank, names[rank], info["size"], info["dtype"], size, dt, b[rank+1]-b[rank])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if _, taken := l.dist[names[0]]; taken {
		l.mu.Unlock()
		return nil, errNameInUse(names[0])
	}
	d := &distArray{dtype: dt, n: size, parts: slices.Clone(names), bounds: b}
	l.dist[names[0]] = d
	l.mu.Unlock()
	return &response{result: d.result(names[0])}, nil
}

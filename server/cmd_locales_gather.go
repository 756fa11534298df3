package server

// cmd_locales_gather.go: indexing across locales (locales.go). A mask
// (compress) keeps each locale's rows where they are; a gather by indices
// (take) sends every index to the locale that owns its row and the values
// back to where the index was, with the same range partition the sorts use
// (cmd_locales_exchange.go), cut at the array's block bounds instead of at
// sampled splitters.

import (
	"math"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// runMade runs cmd on every locale with args(r), each making one block,
// and returns them as one array (a temporary: the caller stores or drops
// it). A failure deletes what the others made.
func (l *locales) runMade(cmd string, args func(r int) map[string]any) (*distArray, error) {
	res, err := l.runEach(cmd, args, true)
	if err != nil {
		return nil, err
	}
	return l.describe(cmd, res)
}

// compress is a[mask]: each locale keeps its block's rows where the
// mask's aligned block is true, so the result's blocks are those counts
// and no row moves.
func (l *locales) compress(r *request) (*response, error) {
	name, maskName := r.args.String("a"), r.args.String("mask")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	a, err := l.get(name)
	if err != nil {
		return nil, err
	}
	m, err := l.get(maskName)
	if err != nil {
		return nil, err
	}
	if m.dtype != pdarray.Bool {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "mask '%s' must be a bool array, got %v", maskName, m.dtype)
	}
	if m.n != a.n {
		return nil, transfer.Errorf(transfer.IndexOutOfRange, "boolean index did not match indexed array along axis 0; size of axis is %d but size of corresponding boolean axis is %d", a.n, m.n)
	}
	ds, drop, err := l.aligned([]*distArray{a, m})
	if err != nil {
		return nil, err
	}
	defer drop()
	res, err := l.runEach("compress", func(rank int) map[string]any {
		return map[string]any{"a": ds[0].parts[rank], "mask": ds[1].parts[rank]}
	}, true)
	if err != nil {
		return nil, err
	}
	return l.made("compress", res)
}

// take is a[idx] for an integer array idx (negative indices count from
// the end, as numpy's): the indices, with their rows' positions, are range
// partitioned at a's block bounds, so each locale gets the indices into
// its block in their order; it gathers those values, and the values, with
// the positions, are partitioned back at idx's bounds and put in place.
// The result is laid out as idx.
func (l *locales) take(r *request) (*response, error) {
	name, idxName := r.args.String("a"), r.args.String("idx")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	a, err := l.get(name)
	if err != nil {
		return nil, err
	}
	idx, err := l.get(idxName)
	if err != nil {
		return nil, err
	}
	if k := idx.dtype.String()[0]; k != 'i' && k != 'u' {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "arrays used as indices must be of integer (or boolean) type; '%s' is %v", idxName, idx.dtype)
	}
	L := l.count()
	var temps []*distArray
	defer func() { l.dropArrays(temps) }()
	temp := func(d *distArray, err error) (*distArray, error) {
		if d != nil {
			temps = append(temps, d)
		}
		return d, err
	}
	// Bounds, and negatives counted from the end, as one process checks
	// them (numpy's message).
	lo, hi, huge, err := l.minMax(idx)
	if err != nil {
		return nil, err
	}
	n := int64(a.n)
	if idx.n > 0 && (lo < -n || hi >= n || huge) {
		bad := any(hi)
		if lo < -n {
			bad = lo
		} else if huge {
			bad = "past 2**63-1"
		}
		return nil, transfer.Errorf(transfer.IndexOutOfRange, "index %v is out of bounds for axis 0 with size %d", bad, a.n)
	}
	key := idx
	if idx.dtype != pdarray.Int64 {
		if key, err = temp(l.runMade("astype", func(rank int) map[string]any {
			return map[string]any{"a": idx.parts[rank], "dtype": "int64"}
		})); err != nil {
			return nil, err
		}
	}
	if lo < 0 {
		neg, err := temp(l.runMade("binop", func(rank int) map[string]any {
			return map[string]any{"op": "<", "a": key.parts[rank], "b_scalar": int64(0)}
		}))
		if err != nil {
			return nil, err
		}
		shifted, err := temp(l.runMade("binop", func(rank int) map[string]any {
			return map[string]any{"op": "+", "a": key.parts[rank], "b_scalar": n}
		}))
		if err != nil {
			return nil, err
		}
		if key, err = temp(l.runMade("where", func(rank int) map[string]any {
			return map[string]any{"cond": neg.parts[rank], "a": shifted.parts[rank], "b": key.parts[rank]}
		})); err != nil {
			return nil, err
		}
	}
	pos, err := temp(l.iota(idx.bounds))
	if err != nil {
		return nil, err
	}
	// To the owners: range d is the indices in a's block d.
	cuts := make([]any, L-1)
	for d := range cuts {
		cuts[d] = int64(a.bounds[d+1])
	}
	there, err := l.partitionAt(key, []*distArray{pos}, cuts, 0)
	if err != nil {
		return nil, err
	}
	temps = append(temps, there...)
	local, err := temp(l.runMade("binop", func(rank int) map[string]any {
		return map[string]any{"op": "-", "a": there[0].parts[rank], "b_scalar": int64(a.bounds[rank])}
	}))
	if err != nil {
		return nil, err
	}
	vals, err := temp(l.runMade("take", func(rank int) map[string]any {
		return map[string]any{"a": a.parts[rank], "idx": local.parts[rank]}
	}))
	if err != nil {
		return nil, err
	}
	// And back: range r is the positions of idx's block r.
	for d := range cuts {
		cuts[d] = int64(idx.bounds[d+1])
	}
	back, err := l.partitionAt(there[1], []*distArray{vals}, cuts, 0)
	if err != nil {
		return nil, err
	}
	temps = append(temps, back...)
	rel, err := temp(l.runMade("binop", func(rank int) map[string]any {
		return map[string]any{"op": "-", "a": back[0].parts[rank], "b_scalar": int64(idx.bounds[rank])}
	}))
	if err != nil {
		return nil, err
	}
	out, err := l.runMade("full", func(rank int) map[string]any {
		return map[string]any{"size": idx.bounds[rank+1] - idx.bounds[rank], "dtype": a.dtype.String(), "value": 0}
	})
	if err != nil {
		return nil, err
	}
	err = l.each(func(rank int) error {
		if idx.bounds[rank+1] == idx.bounds[rank] {
			return nil
		}
		_, err := l.call(rank, "setitem", map[string]any{"a": out.parts[rank], "idx": rel.parts[rank], "value": back[1].parts[rank]})
		return err
	})
	if err != nil {
		l.dropParts(out.parts)
		return nil, err
	}
	out.bounds = idx.bounds
	l.put(out.parts[0], out)
	return &response{result: out.result(out.parts[0])}, nil
}

// minMax are the least and greatest of an integer array's values, as
// int64; huge: a uint64 value past int64's range (out of any bounds).
func (l *locales) minMax(d *distArray) (lo, hi int64, huge bool, err error) {
	L := l.count()
	los, his := make([]int64, L), make([]int64, L)
	has, big := make([]bool, L), make([]bool, L)
	err = l.each(func(r int) error {
		if d.bounds[r+1] == d.bounds[r] {
			return nil
		}
		mn, err := l.call(r, "reduce", map[string]any{"op": "min", "a": d.parts[r]})
		if err != nil {
			return err
		}
		mx, err := l.call(r, "reduce", map[string]any{"op": "max", "a": d.parts[r]})
		if err != nil {
			return err
		}
		has[r] = true
		if d.dtype == pdarray.Uint64 {
			u, v := asU64(mn["value"]), asU64(mx["value"])
			big[r] = v > math.MaxInt64
			los[r], his[r] = int64(min(u, math.MaxInt64)), int64(min(v, math.MaxInt64))
			return nil
		}
		los[r], his[r] = asI64(mn["value"]), asI64(mx["value"])
		return nil
	})
	first := true
	for r := range has {
		if !has[r] {
			continue
		}
		if first {
			lo, hi = los[r], his[r]
		}
		lo, hi, huge, first = min(lo, los[r]), max(hi, his[r]), huge || big[r], false
	}
	return lo, hi, huge, err
}

package client

import (
	"context"
	"fmt"
	"math"

	"github.com/arktos-dev/arktos/pdarray"
)

// Operand is one input of an elementwise operation: a stored array (by
// name) or a scalar. Make one with Arr, Py or Scalar.
type Operand struct {
	name  string
	value any    // bool, int64, uint64 or float64 for a scalar
	dtype string // "" for a Python-like (weak) scalar
}

// Arr names a stored array as an operand.
func Arr(name string) Operand { return Operand{name: name} }

// Py is a weak scalar (bool, an integer type, float32 or float64): like a
// Python scalar in numpy 2 (NEP 50) it takes the array's dtype.
func Py(v any) Operand { return Operand{value: v} }

// Scalar is a strong scalar of type T: like a numpy scalar it promotes as a
// one-element array of its dtype.
func Scalar[T pdarray.Element](v T) Operand {
	return Operand{value: any(v), dtype: pdarray.DTypeOf[T]().String()}
}

func (o Operand) put(args map[string]any, key string) {
	if o.name != "" {
		args[key] = o.name
		return
	}
	v := o.value
	if f, ok := v.(float32); ok {
		v = float64(f)
	}
	args[key+"_scalar"] = v
	if o.dtype != "" {
		args[key+"_dtype"] = o.dtype
	}
}

// Op sends an operation command (docs/protocol.md, "Operations") and returns
// its result map; the typed helpers below cover the common ones.
func (c *Client) Op(ctx context.Context, cmd string, args map[string]any) (map[string]any, error) {
	return c.call(ctx, cmd, args)
}

func (c *Client) opArray(ctx context.Context, cmd string, args map[string]any) (ArrayInfo, error) {
	res, err := c.call(ctx, cmd, args)
	if err != nil {
		return ArrayInfo{}, err
	}
	return parseInfo(res)
}

// Binop stores op(a, b) ("+", "//", "<", "maximum", ...) as a new array.
func (c *Client) Binop(ctx context.Context, op string, a, b Operand) (ArrayInfo, error) {
	args := map[string]any{"op": op}
	a.put(args, "a")
	b.put(args, "b")
	return c.opArray(ctx, "binop", args)
}

// Clip stores np.clip(a, lo, hi) as a new array: either bound may be nil
// (not both), an array (Arr) or a scalar (Py, Scalar); numpy's dtype and
// ties (docs/protocol.md, "clip").
func (c *Client) Clip(ctx context.Context, a string, lo, hi *Operand) (ArrayInfo, error) {
	args := map[string]any{"a": a}
	if lo != nil {
		lo.put(args, "lo")
	}
	if hi != nil {
		hi.put(args, "hi")
	}
	return c.opArray(ctx, "clip", args)
}

// BinopInPlace computes op(a, b) into the stored array out (a += b is
// BinopInPlace(ctx, "+", Arr(a), b, a)).
func (c *Client) BinopInPlace(ctx context.Context, op string, a, b Operand, out string) error {
	args := map[string]any{"op": op, "out": out}
	a.put(args, "a")
	b.put(args, "b")
	_, err := c.call(ctx, "binop", args)
	return err
}

// Unop stores op(a) ("neg", "abs", "sqrt", "isnan", ...) as a new array.
func (c *Client) Unop(ctx context.Context, op, a string) (ArrayInfo, error) {
	return c.opArray(ctx, "unop", map[string]any{"op": op, "a": a})
}

// AsType stores a cast of a to dtype.
func (c *Client) AsType(ctx context.Context, a string, dtype pdarray.DType) (ArrayInfo, error) {
	return c.opArray(ctx, "astype", map[string]any{"a": a, "dtype": dtype.String()})
}

// Where stores cond ? a : b.
func (c *Client) Where(ctx context.Context, cond string, a, b Operand) (ArrayInfo, error) {
	args := map[string]any{"cond": cond}
	a.put(args, "a")
	b.put(args, "b")
	return c.opArray(ctx, "where", args)
}

// Reduce computes a reduction ("sum", "min", "argmax", "var", ...) of a;
// the value is int64, uint64, float64 or bool, of dtype.
func (c *Client) Reduce(ctx context.Context, op, a string) (value any, dtype pdarray.DType, err error) {
	res, err := c.call(ctx, "reduce", map[string]any{"op": op, "a": a})
	if err != nil {
		return nil, 0, err
	}
	dtype, err = pdarray.ParseDType(asString(res["dtype"]))
	if err != nil {
		return nil, 0, err
	}
	value, err = replyScalar(res["value"], dtype)
	if err != nil {
		return nil, 0, fmt.Errorf("client: reduce: %w", err)
	}
	return value, dtype, nil
}

// replyScalar is a reply's value of dtype as Reduce returns it: bool,
// float64, uint64 for uint64, else int64.
func replyScalar(v any, dtype pdarray.DType) (any, error) {
	switch x := v.(type) {
	case bool, float64:
		return x, nil
	case float32:
		return float64(x), nil
	case uint64:
		if dtype == pdarray.Uint64 {
			return x, nil
		}
	}
	if dtype == pdarray.Uint64 {
		return uint64(asInt(v)), nil
	}
	if x, ok := v.(uint64); ok && x > math.MaxInt64 {
		return nil, fmt.Errorf("value %v does not fit dtype %v", v, dtype)
	}
	return asInt(v), nil
}

// OrderStats returns the elements at ranks of a's sorted order (NaN last;
// a rank among the NaNs gives NaN), found by selection on the
// server with no sort (what a median or quantiles need), as Reduce returns
// values; and how many of a's elements are NaN (no ranks: that only).
func (c *Client) OrderStats(ctx context.Context, a string, ranks []int) (values []any, dtype pdarray.DType, nans int, err error) {
	list := make([]any, len(ranks))
	for i, r := range ranks {
		list[i] = r
	}
	res, err := c.call(ctx, "order_stats", map[string]any{"a": a, "ranks": list})
	if err != nil {
		return nil, 0, 0, err
	}
	if dtype, err = pdarray.ParseDType(asString(res["dtype"])); err != nil {
		return nil, 0, 0, err
	}
	got, _ := res["values"].([]any)
	if len(got) != len(ranks) {
		return nil, 0, 0, fmt.Errorf("client: order_stats returned %d values for %d ranks", len(got), len(ranks))
	}
	values = make([]any, len(got))
	for i, v := range got {
		if values[i], err = replyScalar(v, dtype); err != nil {
			return nil, 0, 0, fmt.Errorf("client: order_stats: %w", err)
		}
	}
	return values, dtype, int(asInt(res["nans"])), nil
}

// Scan stores cumsum or cumprod of a.
func (c *Client) Scan(ctx context.Context, op, a string) (ArrayInfo, error) {
	return c.opArray(ctx, "scan", map[string]any{"op": op, "a": a})
}

// Full stores n copies of value (a bool, integer or float) as dtype.
func (c *Client) Full(ctx context.Context, n int, dtype pdarray.DType, value any) (ArrayInfo, error) {
	return c.opArray(ctx, "full", map[string]any{"size": n, "dtype": dtype.String(), "value": value})
}

// Arange stores numpy's arange(start, stop, step) (int64 for integers).
func (c *Client) Arange(ctx context.Context, start, stop, step any) (ArrayInfo, error) {
	return c.opArray(ctx, "arange", map[string]any{"start": start, "stop": stop, "step": step})
}

// Random stores n draws of dist ("randint" with low/high, "uniform" with
// low/high, "standard_normal"); the same seed gives the same values on any
// server whatever its worker count.
func (c *Client) Random(ctx context.Context, dist string, n int, seed uint64, low, high any) (ArrayInfo, error) {
	args := map[string]any{"dist": dist, "size": n, "seed": seed}
	if low != nil {
		args["low"], args["high"] = low, high
	}
	return c.opArray(ctx, "random", args)
}

// Slice stores a[start:stop:step] (bounds already normalised as Python's
// slice.indices gives them).
func (c *Client) Slice(ctx context.Context, a string, start, stop, step int) (ArrayInfo, error) {
	return c.opArray(ctx, "slice", map[string]any{"a": a, "start": start, "stop": stop, "step": step})
}

// Take stores a[idx] for an integer index array idx.
func (c *Client) Take(ctx context.Context, a, idx string) (ArrayInfo, error) {
	return c.opArray(ctx, "take", map[string]any{"a": a, "idx": idx})
}

// Compress stores a[mask] for a bool array mask.
func (c *Client) Compress(ctx context.Context, a, mask string) (ArrayInfo, error) {
	return c.opArray(ctx, "compress", map[string]any{"a": a, "mask": mask})
}

// CompressMany stores arrays[i][mask] for every named array (a table's
// rows where the bool array mask is true) in one request, the mask counted
// once; with positions, also the trues' positions (int64, np.flatnonzero).
// Every result is stored or none.
func (c *Client) CompressMany(ctx context.Context, arrays []string, mask string, withPositions bool) (out []ArrayInfo, positions ArrayInfo, err error) {
	res, err := c.call(ctx, "compress_many", map[string]any{"arrays": arrays, "mask": mask, "positions": withPositions})
	if err != nil {
		return nil, ArrayInfo{}, err
	}
	if out, err = parseInfos(res["arrays"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	if withPositions {
		pm, _ := res["positions"].(map[string]any)
		if positions, err = parseInfo(pm); err != nil {
			return nil, ArrayInfo{}, err
		}
	}
	return out, positions, nil
}

// TakeMany stores arrays[i][idx] for every named array (arrays of one
// length; idx an integer array, negative positions from the end) in one
// request. Every result is stored or none.
func (c *Client) TakeMany(ctx context.Context, arrays []string, idx string) ([]ArrayInfo, error) {
	res, err := c.call(ctx, "take_many", map[string]any{"arrays": arrays, "idx": idx})
	if err != nil {
		return nil, err
	}
	return parseInfos(res["arrays"])
}

// Lookup stores, for each element of the integer array keys, the row of
// table holding the equal value, or -1 (int64): a join against a lookup
// table's key column. When table holds a value twice, nothing is stored,
// unique is false and dup is the row where it is seen again.
func (c *Client) Lookup(ctx context.Context, keys, table string) (rows ArrayInfo, unique bool, dup int, err error) {
	res, err := c.call(ctx, "lookup", map[string]any{"keys": keys, "table": table})
	if err != nil {
		return ArrayInfo{}, false, 0, err
	}
	if u, _ := res["unique"].(bool); !u {
		return ArrayInfo{}, false, int(asInt(res["dup"])), nil
	}
	rm, _ := res["rows"].(map[string]any)
	rows, err = parseInfo(rm)
	return rows, err == nil, 0, err
}

// Repeat stores np.repeat(a, counts): element i of a counts[i] times, for
// a stored integer array counts of a's length (none negative).
func (c *Client) Repeat(ctx context.Context, a, counts string) (ArrayInfo, error) {
	return c.opArray(ctx, "repeat", map[string]any{"a": a, "counts": counts})
}

// RepeatEach stores np.repeat(a, count): each element count times.
func (c *Client) RepeatEach(ctx context.Context, a string, count int) (ArrayInfo, error) {
	if count < 0 {
		return ArrayInfo{}, fmt.Errorf("client: repeat count must be >= 0, got %d", count)
	}
	return c.opArray(ctx, "repeat", map[string]any{"a": a, "count": count})
}

// Sort stores a sorted copy of a (NaN last).
func (c *Client) Sort(ctx context.Context, a string) (ArrayInfo, error) {
	return c.opArray(ctx, "sort", map[string]any{"a": a})
}

// Argsort stores the stable sorting permutation of a (int64).
func (c *Client) Argsort(ctx context.Context, a string) (ArrayInfo, error) {
	return c.opArray(ctx, "argsort", map[string]any{"a": a})
}

// Coargsort stores the permutation sorting by names[0], then names[1], ...
func (c *Client) Coargsort(ctx context.Context, names ...string) (ArrayInfo, error) {
	return c.opArray(ctx, "coargsort", map[string]any{"names": names})
}

// Unique stores a's sorted distinct values and how often each occurs.
func (c *Client) Unique(ctx context.Context, a string) (values, counts ArrayInfo, err error) {
	res, err := c.call(ctx, "unique", map[string]any{"a": a, "return_counts": true})
	if err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	vm, _ := res["values"].(map[string]any)
	cm, _ := res["counts"].(map[string]any)
	if values, err = parseInfo(vm); err != nil {
		return ArrayInfo{}, ArrayInfo{}, err
	}
	counts, err = parseInfo(cm)
	return values, counts, err
}

// In1d stores whether each element of a is in b.
func (c *Client) In1d(ctx context.Context, a, b string) (ArrayInfo, error) {
	return c.opArray(ctx, "in1d", map[string]any{"a": a, "b": b})
}

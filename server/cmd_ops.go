package server

// Operations on stored arrays (docs/protocol.md, "Operations"): each command
// reads its arrays from the store, reserves every output and scratch buffer
// before allocating it (opEnv), runs an ops kernel over s.cfg.Workers
// goroutines and stores array results under fresh names.

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// opEnv accounts a request's allocations: every array ops allocates is
// reserved first; scratch goes back through Free; outputs go to the store
// through keep; done releases whatever is left (scratch a kernel did not
// free, outputs of a failed request).
type opEnv struct {
	s    *Server
	what string
	mu   sync.Mutex
	live map[*pdarray.Array]int64
	stop *par.Stop
}

// stop is the request's cancellation (nil: none): the kernels check it,
// and keep disarms it before the first result is stored.
func (s *Server) opEnv(stop *par.Stop, format string, args ...any) (*opEnv, ops.Env) {
	o := &opEnv{s: s, what: fmt.Sprintf(format, args...), live: map[*pdarray.Array]int64{}, stop: stop}
	return o, ops.Env{Workers: s.cfg.Workers, Alloc: o.alloc, Free: o.free, Stop: stop}
}

func (o *opEnv) alloc(d pdarray.DType, n int) (*pdarray.Array, error) {
	// A cancelled request allocates no more (faulting in a large buffer
	// takes as long as a pass over it): the kernel returns this error.
	if err := o.stop.Err(); err != nil {
		return nil, err
	}
	nb, err := d.NBytes(uint64(max(n, 0)))
	if err != nil || n < 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "%s: %d %v elements is too large", o.what, n, d)
	}
	if err := o.s.store.reserve(int64(nb), fmt.Sprintf("%s (%d %v elements)", o.what, n, d)); err != nil {
		return nil, err
	}
	// Kernels overwrite every byte of what they allocate (ops.Env's
	// contract), so a pooled buffer of a deleted array will do: it is
	// already faulted in, which for 10^8 elements saves more time than the
	// kernel takes.
	var stopped func() bool
	if o.stop != nil {
		stopped = o.stop.Stopped
	}
	a, err := o.s.store.allocMayBeDirtyUntil(d, n, stopped)
	if err != nil {
		o.s.store.release(int64(nb))
		return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	if err := o.stop.Err(); err != nil {
		o.s.store.release(int64(nb)) // (the buffer, unwritten, goes to the garbage collector)
		return nil, err
	}
	o.mu.Lock()
	o.live[a] = int64(nb)
	o.mu.Unlock()
	return a, nil
}

func (o *opEnv) free(a *pdarray.Array) {
	o.mu.Lock()
	nb, ok := o.live[a]
	delete(o.live, a)
	o.mu.Unlock()
	if ok {
		o.s.store.release(nb)
		o.s.store.recycleScratch(a)
	}
}

// keep stores a (allocated by this env) under a fresh name and describes it.
func (o *opEnv) keep(a *pdarray.Array) (map[string]any, error) {
	return o.keepAs("", a)
}

// keepAs is keep under name ("": a fresh one).
func (o *opEnv) keepAs(name string, a *pdarray.Array) (map[string]any, error) {
	if !o.stop.Disarm() {
		return nil, o.stop.Err() // cancelled before anything was stored: store nothing
	}
	name, err := o.s.store.put(name, a)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	delete(o.live, a)
	o.mu.Unlock()
	return arrayResult(name, a), nil
}

func (o *opEnv) done() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for a, nb := range o.live {
		o.s.store.release(nb)
		delete(o.live, a)
	}
}

// opErr maps a kernel error to the wire registry.
func opErr(err error) error {
	var oe *ops.Error
	if !errors.As(err, &oe) {
		return err
	}
	code := map[ops.ErrKind]transfer.Code{
		ops.ErrType: transfer.UnsupportedDType, ops.ErrValue: transfer.ArgumentValue,
		ops.ErrIndex: transfer.IndexOutOfRange, ops.ErrOverflow: transfer.Overflow,
	}[oe.Kind]
	if code == 0 {
		code = transfer.Internal
	}
	return transfer.Errorf(code, "%s", oe.Msg)
}

// one stores a single output array and answers with its description.
func one(o *opEnv, a *pdarray.Array) (*response, error) {
	res, err := o.keep(a)
	if err != nil {
		return nil, err
	}
	return &response{result: res}, nil
}

func dtypeArg(a *transfer.Args, key string, def pdarray.DType) pdarray.DType {
	name := a.OptString(key, "")
	if name == "" {
		if def == pdarray.Invalid {
			a.Fail(transfer.Errorf(transfer.MissingArgument, "argument '%s' is required", key))
		}
		return def
	}
	d, err := pdarray.ParseDType(name)
	if err != nil {
		a.Fail(transfer.Errorf(transfer.UnsupportedDType, "dtype '%s' is not supported; supported dtypes: %s", name, strings.Join(pdarray.DTypeNames(), ", ")))
	}
	return d
}

// operandArg reads operand key: an array name in key, or a scalar in
// key_scalar (a numpy scalar when key_dtype is given, else a Python one).
func (s *Server) operandArg(a *transfer.Args, key string) (ops.Operand, error) {
	if a.Has(key) {
		if a.Has(key + "_scalar") {
			return ops.Operand{}, transfer.Errorf(transfer.ArgumentValue, "give either '%s' or '%s_scalar', not both", key, key)
		}
		arr, err := s.store.get(a.String(key))
		if err != nil {
			return ops.Operand{}, err
		}
		return ops.ArrayOperand(arr), nil
	}
	if !a.Has(key + "_scalar") {
		return ops.Operand{}, transfer.Errorf(transfer.MissingArgument, "operand '%s' needs an array name '%s' or a number '%s_scalar'", key, key, key)
	}
	v := a.Scalar(key + "_scalar")
	sc, ok := ops.ScalarOf(v)
	if !ok {
		return ops.Operand{}, a.Done()
	}
	if a.Has(key + "_dtype") {
		// A numpy scalar: its value already fits its dtype.
		sc.DType = dtypeArg(a, key+"_dtype", pdarray.Invalid)
	}
	return ops.ScalarOperand(sc), nil
}

// operandLen is the common length of the array operands.
func operandLen(cmd string, os ...ops.Operand) (int, error) {
	n := -1
	for _, o := range os {
		if o.Arr == nil {
			continue
		}
		if n >= 0 && o.Arr.Len() != n {
			return 0, transfer.Errorf(transfer.ArgumentValue, "operands could not be broadcast together with shapes (%d,) (%d,)", n, o.Arr.Len())
		}
		n = o.Arr.Len()
	}
	if n < 0 {
		return 0, transfer.Errorf(transfer.ArgumentValue, "'%s' needs at least one array operand", cmd)
	}
	return n, nil
}

func (s *Server) cmdBinop(r *request) (*response, error) {
	a := r.args
	op := a.String("op")
	x, err := s.operandArg(a, "a")
	if err != nil {
		return nil, err
	}
	y, err := s.operandArg(a, "b")
	if err != nil {
		return nil, err
	}
	outName := a.OptString("out", "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	n, err := operandLen("binop", x, y)
	if err != nil {
		return nil, err
	}
	rd, err := ops.ResolveBinary(op, x, y)
	if err != nil {
		return nil, opErr(err)
	}
	o, env := s.opEnv(r.stop, "binop '%s'", op)
	defer o.done()
	if outName != "" {
		out, err := s.inPlaceTarget(outName, n, rd, "binop '"+op+"'")
		if err != nil {
			return nil, err
		}
		if err := ops.Binary(env, op, x, y, out); err != nil {
			return nil, opErr(err)
		}
		return &response{result: arrayResult(outName, out)}, nil
	}
	out, err := env.Alloc(rd, n)
	if err != nil {
		return nil, err
	}
	if err := ops.Binary(env, op, x, y, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// cmdClip stores np.clip(a, lo, hi): minimum(maximum(a, lo), hi), with
// numpy's promotion at each step; either bound may be left out (an array
// name or a scalar, as binop's operands), not both. One pass over memory
// when the bounds do not change a's dtype (ops.Clip).
func (s *Server) cmdClip(r *request) (*response, error) {
	a := r.args
	x, err := s.operandArg(a, "a")
	if err != nil {
		return nil, err
	}
	var bounds [2]*ops.Operand
	for i, key := range []string{"lo", "hi"} {
		if a.Has(key) || a.Has(key+"_scalar") {
			o, err := s.operandArg(a, key)
			if err != nil {
				return nil, err
			}
			bounds[i] = &o
		}
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	if x.Arr == nil {
		return nil, transfer.Errorf(transfer.ArgumentValue, "clip: 'a' must be an array name (a scalar has nothing to clip)")
	}
	if bounds[0] == nil && bounds[1] == nil {
		return nil, transfer.Errorf(transfer.MissingArgument, "clip: give 'lo' or 'hi' (an array name, or 'lo_scalar' / 'hi_scalar'): one of max or min must be given")
	}
	present := []ops.Operand{x}
	for _, b := range bounds {
		if b != nil {
			present = append(present, *b)
		}
	}
	n, err := operandLen("clip", present...)
	if err != nil {
		return nil, err
	}
	rd, err := ops.ResolveClip(x, bounds[0], bounds[1])
	if err != nil {
		return nil, opErr(err)
	}
	o, env := s.opEnv(r.stop, "clip")
	defer o.done()
	out, err := env.Alloc(rd, n)
	if err != nil {
		return nil, err
	}
	if err := ops.Clip(env, x, bounds[0], bounds[1], out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// inPlaceTarget returns the stored array name for an operation writing a
// result of dtype rd and length n into it; numpy's same_kind rule applies.
func (s *Server) inPlaceTarget(name string, n int, rd pdarray.DType, what string) (*pdarray.Array, error) {
	out, err := s.store.getForWrite(name)
	if err != nil {
		return nil, err
	}
	if out.Len() != n {
		return nil, transfer.Errorf(transfer.ArgumentValue, "non-broadcastable output operand with shape (%d,) doesn't match the broadcast shape (%d,)", out.Len(), n)
	}
	if !ops.CanCastSameKind(rd, out.DType()) {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "Cannot cast %s output from dtype('%v') to dtype('%v') with casting rule 'same_kind'", what, rd, out.DType())
	}
	return out, nil
}

func (s *Server) cmdUnop(r *request) (*response, error) {
	a := r.args
	op := a.String("op")
	name := a.String("a")
	outName := a.OptString("out", "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	rd, err := ops.ResolveUnary(op, x.DType())
	if err != nil {
		return nil, opErr(err)
	}
	o, env := s.opEnv(r.stop, "unop '%s' of '%s'", op, name)
	defer o.done()
	if outName != "" {
		out, err := s.inPlaceTarget(outName, x.Len(), rd, "unop '"+op+"'")
		if err != nil {
			return nil, err
		}
		if err := ops.Unary(env, op, x, out); err != nil {
			return nil, opErr(err)
		}
		return &response{result: arrayResult(outName, out)}, nil
	}
	out, err := env.Alloc(rd, x.Len())
	if err != nil {
		return nil, err
	}
	if err := ops.Unary(env, op, x, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func (s *Server) cmdAstype(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	d := dtypeArg(a, "dtype", pdarray.Invalid)
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "astype of '%s'", name)
	defer o.done()
	out, err := env.Alloc(d, x.Len())
	if err != nil {
		return nil, err
	}
	ops.AsType(env, x, out)
	return one(o, out)
}

func (s *Server) cmdWhere(r *request) (*response, error) {
	a := r.args
	condName := a.String("cond")
	x, err := s.operandArg(a, "a")
	if err != nil {
		return nil, err
	}
	y, err := s.operandArg(a, "b")
	if err != nil {
		return nil, err
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	cond, err := s.store.get(condName)
	if err != nil {
		return nil, err
	}
	if cond.DType() != pdarray.Bool {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "where's condition '%s' must be a bool array, got %v; compare first (a != 0)", condName, cond.DType())
	}
	n, err := operandLen("where", ops.ArrayOperand(cond), x, y)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "where")
	defer o.done()
	out, err := env.Alloc(ops.ResolveWhere(x, y), n)
	if err != nil {
		return nil, err
	}
	if err := ops.Where(env, cond, x, y, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func (s *Server) cmdReduce(r *request) (*response, error) {
	a := r.args
	op := a.String("op")
	name := a.String("a")
	ddof := a.OptFloat("ddof", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "reduce '%s' of '%s'", op, name)
	defer o.done()
	v, d, err := ops.Reduce(env, op, x, ddof)
	if err != nil {
		return nil, opErr(err)
	}
	return &response{result: map[string]any{"value": v, "dtype": d.String()}}, nil
}

// cmdOrderStats answers the elements at ranks of an array's sorted order
// (NaN last) without sorting it (ops.OrderStats): what np.median and
// np.quantile need from a pdarray.
func (s *Server) cmdOrderStats(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	list := a.UintList("ranks")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	ranks := make([]int, len(list)) // (ops.OrderStats bounds how many)
	for i, v := range list {
		if v >= uint64(x.Len()) {
			return nil, transfer.Errorf(transfer.ArgumentValue, "order_stats: rank %d is out of range for '%s' of %d elements; ranks are 0 to its length - 1", v, name, x.Len())
		}
		ranks[i] = int(v)
	}
	o, env := s.opEnv(r.stop, "order_stats of '%s'", name)
	defer o.done()
	values, nans, err := ops.OrderStats(env, x, ranks)
	if err != nil {
		return nil, opErr(err)
	}
	d, _ := ops.ReduceDType("max", x.DType())
	return &response{result: map[string]any{"values": values, "dtype": d.String(), "nans": nans}}, nil
}

func (s *Server) cmdScan(r *request) (*response, error) {
	a := r.args
	op := a.String("op")
	name := a.String("a")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "scan '%s' of '%s'", op, name)
	defer o.done()
	out, err := env.Alloc(ops.AccDType(x.DType()), x.Len())
	if err != nil {
		return nil, err
	}
	if err := ops.Scan(env, op, x, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func sizeArg(a *transfer.Args, key string) int {
	n := a.Uint(key)
	if n > 1<<48 {
		a.Fail(transfer.Errorf(transfer.ArgumentValue, "%s %d is too large", key, n))
		return 0
	}
	return int(n)
}

func (s *Server) cmdFull(r *request) (*response, error) {
	a := r.args
	n := sizeArg(a, "size")
	d := dtypeArg(a, "dtype", pdarray.Float64)
	v := a.Scalar("value")
	if err := a.Done(); err != nil {
		return nil, err
	}
	sc, _ := ops.ScalarOf(v)
	o, env := s.opEnv(r.stop, "full")
	defer o.done()
	out, err := env.Alloc(d, n)
	if err != nil {
		return nil, err
	}
	if err := ops.Fill(env, out, sc); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func (s *Server) cmdArange(r *request) (*response, error) {
	a := r.args
	start, _ := ops.ScalarOf(a.Scalar("start"))
	stop, _ := ops.ScalarOf(a.Scalar("stop"))
	step, _ := ops.ScalarOf(a.Scalar("step"))
	isFloat := start.K == 'f' || stop.K == 'f' || step.K == 'f'
	def := pdarray.Int64
	if isFloat {
		def = pdarray.Float64
	}
	d := dtypeArg(a, "dtype", def)
	if err := a.Done(); err != nil {
		return nil, err
	}
	n, err := ops.ArangeLen(start, stop, step)
	if err != nil {
		return nil, opErr(err)
	}
	o, env := s.opEnv(r.stop, "arange")
	defer o.done()
	out, err := env.Alloc(d, n)
	if err != nil {
		return nil, err
	}
	ops.Arange(env, out, start, step)
	return one(o, out)
}

func (s *Server) cmdLinspace(r *request) (*response, error) {
	a := r.args
	start := a.Float("start")
	stop := a.Float("stop")
	n := sizeArg(a, "num")
	endpoint := a.OptBool("endpoint", true)
	if err := a.Done(); err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "linspace")
	defer o.done()
	out, err := env.Alloc(pdarray.Float64, n)
	if err != nil {
		return nil, err
	}
	ops.Linspace(env, out, start, stop, endpoint)
	return one(o, out)
}

// seedArg is the request's "seed", or a random one when it has none.
func seedArg(a *transfer.Args) uint64 {
	if a.Has("seed") {
		return a.Uint("seed")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) >> 1
}

func (s *Server) cmdRandom(r *request) (*response, error) {
	a := r.args
	dist := a.String("dist")
	n := sizeArg(a, "size")
	seed := seedArg(a)
	var low, high any
	var d pdarray.DType
	switch dist {
	case "randint":
		low, high = a.Scalar("low"), a.Scalar("high")
		d = dtypeArg(a, "dtype", pdarray.Int64)
	case "uniform":
		low, high = a.OptFloat("low", 0), a.OptFloat("high", 1)
		d = pdarray.Float64
	case "standard_normal":
		d = pdarray.Float64
	default:
		a.Fail(transfer.Errorf(transfer.ArgumentValue, "unknown distribution '%s'; use randint, uniform or standard_normal", dist))
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "random %s", dist)
	defer o.done()
	var lo, hi ops.Scalar
	if dist == "randint" {
		lo, _ = ops.ScalarOf(low)
		hi, _ = ops.ScalarOf(high)
		if !isIntDType(d) || lo.K == 'f' || hi.K == 'f' {
			return nil, transfer.Errorf(transfer.UnsupportedDType, "randint needs integer low, high and an integer or bool dtype, got %v", d)
		}
		if err := checkRandintRange(lo, hi, d); err != nil {
			return nil, err
		}
	}
	if dist == "uniform" {
		// numpy's Generator.uniform checks: NaN and infinite bounds once
		// filled the array with NaN.
		switch w := high.(float64) - low.(float64); {
		case math.IsNaN(w) || math.IsInf(w, 0):
			return nil, transfer.Errorf(transfer.Overflow, "uniform: high - low range exceeds valid bounds (low %v, high %v); give finite bounds less than 1.8e308 apart", low, high)
		case w < 0:
			return nil, transfer.Errorf(transfer.ArgumentValue, "uniform: high - low < 0 (low %v, high %v); give low <= high", low, high)
		}
	}
	out, err := env.Alloc(d, n)
	if err != nil {
		return nil, err
	}
	switch dist {
	case "randint":
		if d == pdarray.Uint64 {
			ops.RandUint64(env, out, scalarU64(lo), scalarU64(hi), seed)
		} else {
			top := hi.I - 1
			if hi.K == 'u' { // 2^63: the range reaches int64's top
				top = int64(hi.U - 1)
			}
			ops.RandIntTo(env, out, lo.I, top, seed)
		}
	case "uniform":
		ops.Uniform(env, out, low.(float64), high.(float64), seed)
	case "standard_normal":
		ops.StandardNormal(env, out, seed)
	}
	res, err := o.keep(out)
	if err != nil {
		return nil, err
	}
	res["seed"] = seed
	return &response{result: res}, nil
}

func isIntDType(d pdarray.DType) bool {
	k := ops.Kind(d)
	return k == 'i' || k == 'u' || k == 'b'
}

func scalarU64(s ops.Scalar) uint64 {
	if s.K == 'u' {
		return s.U
	}
	return uint64(s.I)
}

// checkRandintRange requires low < high with [low, high) inside d's range.
func checkRandintRange(lo, hi ops.Scalar, d pdarray.DType) error {
	less := func(x, y ops.Scalar) bool { // x < y for integer scalars
		switch {
		case x.K == 'u' && y.K == 'u':
			return x.U < y.U
		case x.K == 'u':
			return false
		case y.K == 'u':
			return true
		}
		return x.I < y.I
	}
	if !less(lo, hi) {
		return transfer.Errorf(transfer.ArgumentValue, "low >= high (low=%s, high=%s)", lo, hi)
	}
	top := hi
	if top.K == 'u' {
		top.U--
	} else {
		top.I--
	}
	if top.K == 'u' && top.U <= math.MaxInt64 {
		top = ops.Scalar{K: 'i', I: int64(top.U)}
	}
	if d == pdarray.Bool {
		if lo.K != 'i' || lo.I < 0 || top.K != 'i' || top.I > 1 {
			return transfer.Errorf(transfer.ArgumentValue, "low is out of bounds for bool (low=%s, high=%s)", lo, hi)
		}
		return nil
	}
	for _, v := range []ops.Scalar{lo, top} {
		if !fitsDType(v, d) {
			return transfer.Errorf(transfer.ArgumentValue, "randint range [%s, %s) is out of bounds for %v", lo, hi, d)
		}
	}
	if d != pdarray.Uint64 && (lo.K == 'u' || top.K == 'u') {
		return transfer.Errorf(transfer.ArgumentValue, "randint range [%s, %s) is out of bounds for %v", lo, hi, d)
	}
	return nil
}

func fitsDType(v ops.Scalar, d pdarray.DType) bool {
	out, err := pdarray.Alloc(d, 1)
	if err != nil {
		return false
	}
	return ops.Fill(ops.PlainEnv(1), out, v) == nil
}

func (s *Server) getAll(names []string) ([]*pdarray.Array, error) {
	out := make([]*pdarray.Array, len(names))
	for i, n := range names {
		arr, err := s.store.get(n)
		if err != nil {
			return nil, err
		}
		out[i] = arr
	}
	return out, nil
}

func (s *Server) cmdConcatenate(r *request) (*response, error) {
	a := r.args
	names := a.StringList("names")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "need at least one array to concatenate")
	}
	arrs, err := s.getAll(names)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, x := range arrs {
		n += x.Len()
	}
	o, env := s.opEnv(r.stop, "concatenate")
	defer o.done()
	out, err := env.Alloc(ops.ResolveConcat(arrs), n)
	if err != nil {
		return nil, err
	}
	ops.Concatenate(env, arrs, out)
	return one(o, out)
}

func (s *Server) cmdGetitem(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	i := a.Int("index")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	j, err := ops.NormIndex(i, x.Len())
	if err != nil {
		return nil, opErr(err)
	}
	return &response{result: map[string]any{"value": ops.Value(x, j), "dtype": x.DType().String()}}, nil
}

// sliceArgs reads normalised slice bounds (Python's slice.indices) and
// returns start, step and the element count.
func sliceArgs(a *transfer.Args, size int) (int64, int64, int, error) {
	start, stop, step := a.Int("start"), a.Int("stop"), a.OptInt("step", 1)
	if err := a.Done(); err != nil {
		return 0, 0, 0, err
	}
	if step == 0 {
		return 0, 0, 0, transfer.Errorf(transfer.ArgumentValue, "slice step cannot be zero")
	}
	n := ops.SliceLen(start, stop, step)
	if err := ops.CheckSlice(start, step, n, size); err != nil {
		return 0, 0, 0, opErr(err)
	}
	return start, step, n, nil
}

func (s *Server) cmdSlice(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	start, step, n, err := sliceArgs(a, x.Len())
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "slice of '%s'", name)
	defer o.done()
	out, err := env.Alloc(x.DType(), n)
	if err != nil {
		return nil, err
	}
	ops.Slice(env, x, start, step, out)
	return one(o, out)
}

func (s *Server) indexArray(name string) (*pdarray.Array, error) {
	idx, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	if k := ops.Kind(idx.DType()); k != 'i' && k != 'u' {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "arrays used as indices must be of integer (or boolean) type; '%s' is %v", name, idx.DType())
	}
	return idx, nil
}

func (s *Server) maskArray(name string, n int) (*pdarray.Array, error) {
	m, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	if m.DType() != pdarray.Bool {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "mask '%s' must be a bool array, got %v", name, m.DType())
	}
	if m.Len() != n {
		return nil, transfer.Errorf(transfer.IndexOutOfRange, "boolean index did not match indexed array along axis 0; size of axis is %d but size of corresponding boolean axis is %d", n, m.Len())
	}
	return m, nil
}

func (s *Server) cmdTake(r *request) (*response, error) {
	a := r.args
	name, idxName := a.String("a"), a.String("idx")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	idx, err := s.indexArray(idxName)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "gather from '%s'", name)
	defer o.done()
	if err := ops.CheckIndices(env, idx, x.Len()); err != nil {
		return nil, opErr(err)
	}
	out, err := env.Alloc(x.DType(), idx.Len())
	if err != nil {
		return nil, err
	}
	ops.Take(env, x, idx, out)
	return one(o, out)
}

func (s *Server) cmdCompress(r *request) (*response, error) {
	a := r.args
	name, maskName := a.String("a"), a.String("mask")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	m, err := s.maskArray(maskName, x.Len())
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "compress of '%s'", name)
	defer o.done()
	out, err := s.compressed(env, x, m)
	if err != nil {
		return nil, err
	}
	return one(o, out)
}

// compressed allocates and returns x[m], the mask counted once.
func (s *Server) compressed(env ops.Env, x, m *pdarray.Array) (*pdarray.Array, error) {
	offs := ops.MaskOffsets(env, m)
	out, err := env.Alloc(x.DType(), offs[len(offs)-1])
	if err != nil {
		return nil, err
	}
	s.compressMany(env, []*pdarray.Array{x}, m, offs, []*pdarray.Array{out}, nil)
	return out, nil
}

// compressMany is ops.CompressMany, counting the compresses that gathered
// by the mask's positions (stats: compress_gathered).
func (s *Server) compressMany(env ops.Env, xs []*pdarray.Array, m *pdarray.Array, offs []int, outs []*pdarray.Array, pos *pdarray.Array) {
	if ops.CompressMany(env, xs, m, offs, outs, pos) {
		s.stats.CompressGathered.Add(1)
	}
}

// cmdCompressMany stores arrays[i][mask] for every named array (a table's
// rows where mask is true, as a DataFrame selects them), the mask counted
// once; with positions, also the trues' positions (np.flatnonzero: the
// rows' labels of a table indexed 0..n-1). Either every result is stored
// or none.
func (s *Server) cmdCompressMany(r *request) (*response, error) {
	a := r.args
	names := a.StringList("arrays")
	maskName := a.String("mask")
	positions := a.OptBool("positions", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names) == 0 && !positions {
		return nil, transfer.Errorf(transfer.ArgumentValue, "compress_many needs arrays to compress or positions: true")
	}
	xs, release, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer release()
	m, relm, err := s.store.acquire(maskName)
	if err != nil {
		return nil, err
	}
	defer relm()
	if m.DType() != pdarray.Bool {
		return nil, transfer.Errorf(transfer.UnsupportedDType, "mask '%s' must be a bool array, got %v", maskName, m.DType())
	}
	for i, x := range xs {
		if x.Len() != m.Len() {
			return nil, transfer.Errorf(transfer.IndexOutOfRange, "array '%s' has %d elements but mask '%s' has %d; every array must have the mask's length", names[i], x.Len(), maskName, m.Len())
		}
	}
	o, env := s.opEnv(r.stop, "compress_many by '%s'", maskName)
	defer o.done()
	offs := ops.MaskOffsets(env, m)
	n := offs[len(offs)-1]
	outs := make([]*pdarray.Array, len(xs))
	for i, x := range xs {
		if outs[i], err = env.Alloc(x.DType(), n); err != nil {
			return nil, err
		}
	}
	var pos *pdarray.Array
	if positions {
		if pos, err = env.Alloc(pdarray.Int64, n); err != nil {
			return nil, err
		}
	}
	s.compressMany(env, xs, m, offs, outs, pos)
	return keepMany(o, outs, pos, "positions")
}

// cmdTakeMany stores arrays[i][idx] for every named array (a table's rows
// by position: a DataFrame's sort or sample), idx checked once. Either
// every result is stored or none.
func (s *Server) cmdTakeMany(r *request) (*response, error) {
	a := r.args
	names := a.StringList("arrays")
	idxName := a.String("idx")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "take_many needs at least one array in arrays")
	}
	xs, release, err := s.acquireAll(names)
	if err != nil {
		return nil, err
	}
	defer release()
	for i, x := range xs[1:] {
		if x.Len() != xs[0].Len() {
			return nil, transfer.Errorf(transfer.ArgumentValue, "array '%s' has %d elements but '%s' has %d; take_many gathers arrays of one length", names[i+1], x.Len(), names[0], xs[0].Len())
		}
	}
	idx, err := s.indexArray(idxName)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "take_many by '%s'", idxName)
	defer o.done()
	if err := ops.CheckIndices(env, idx, xs[0].Len()); err != nil {
		return nil, opErr(err)
	}
	outs := make([]*pdarray.Array, len(xs))
	for i, x := range xs {
		if outs[i], err = env.Alloc(x.DType(), idx.Len()); err != nil {
			return nil, err
		}
	}
	ops.TakeMany(env, xs, idx, outs)
	return keepMany(o, outs, nil, "")
}

// cmdLookup stores, for each element of keys, the row of table holding
// the equal value, or -1 (int64, keys' length): a join of keys against a
// lookup table's key column (ops.Lookup). When the table holds a value
// twice nothing is stored and the reply says so ({"unique": false, "dup":
// the later row}), so that a client can join another way.
func (s *Server) cmdLookup(r *request) (*response, error) {
	a := r.args
	keysName, tableName := a.String("keys"), a.String("table")
	if err := a.Done(); err != nil {
		return nil, err
	}
	xs, release, err := s.acquireAll([]string{keysName, tableName})
	if err != nil {
		return nil, err
	}
	defer release()
	o, env := s.opEnv(r.stop, "lookup of '%s' in '%s'", keysName, tableName)
	defer o.done()
	out, err := env.Alloc(pdarray.Int64, xs[0].Len())
	if err != nil {
		return nil, err
	}
	res, err := ops.Lookup(env, xs[0], xs[1], out)
	if err != nil {
		return nil, opErr(err)
	}
	if !res.Unique {
		return &response{result: map[string]any{"unique": false, "dup": res.Dup}}, nil
	}
	if res.Path == ops.LookupDense {
		s.stats.LookupDense.Add(1)
	} else {
		s.stats.LookupHash.Add(1)
	}
	info, err := o.keep(out)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"unique": true, "rows": info}}, nil
}

// keepMany stores outs (and extra under key, when not nil) and answers
// {"arrays": [info...], key: info}. A store that fails leaves none of them:
// the ones stored already are deleted again.
func keepMany(o *opEnv, outs []*pdarray.Array, extra *pdarray.Array, key string) (*response, error) {
	all := outs
	if extra != nil {
		all = append(append([]*pdarray.Array(nil), outs...), extra)
	}
	infos := make([]any, 0, len(all))
	for _, out := range all {
		info, err := o.keep(out)
		if err != nil {
			stored := make([]string, len(infos))
			for i, done := range infos {
				stored[i] = done.(map[string]any)["name"].(string)
			}
			_, _, _ = o.s.store.delete(stored, true)
			return nil, err
		}
		infos = append(infos, info)
	}
	res := map[string]any{"arrays": infos[:len(outs)]}
	if extra != nil {
		res[key] = infos[len(outs)]
	}
	return &response{result: res}, nil
}

// cmdRepeat stores np.repeat(a, counts): each element counts[i] times
// ("counts" names an integer array of a's length) or "count" times each.
func (s *Server) cmdRepeat(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	countsName := a.OptString("counts", "")
	count := 0
	if a.Has("count") {
		count = sizeArg(a, "count")
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	if countsName == "" && !a.Has("count") || countsName != "" && a.Has("count") {
		return nil, transfer.Errorf(transfer.ArgumentValue, "repeat takes counts (an array of one count per element) or count (one for all), not both or neither")
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	var counts *pdarray.Array
	if countsName != "" {
		if counts, err = s.store.get(countsName); err != nil {
			return nil, err
		}
	}
	o, env := s.opEnv(r.stop, "repeat of '%s'", name)
	defer o.done()
	out, err := ops.Repeat(env, x, counts, count)
	if err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// cmdSetitem writes into a stored array in place: at one index, a slice, a
// mask or an index array, from a scalar or an array of values.
func (s *Server) cmdSetitem(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	x, err := s.store.getForWrite(name)
	if err != nil {
		return nil, err
	}
	value, err := s.operandArg(a, "value")
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "setitem of '%s'", name)
	defer o.done()
	if value.Arr == x {
		// a[...] = a: numpy reads all values before writing; so do we.
		c, err := env.Alloc(x.DType(), x.Len())
		if err != nil {
			return nil, err
		}
		copy(c.Bytes(), x.Bytes())
		value = ops.ArrayOperand(c)
	}
	switch {
	case a.Has("index"):
		i := a.Int("index")
		if err := a.Done(); err != nil {
			return nil, err
		}
		j, err := ops.NormIndex(i, x.Len())
		if err != nil {
			return nil, opErr(err)
		}
		if value.Arr != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "setting one element needs a scalar value")
		}
		err = ops.SetIndex(x, j, value.Sc)
		if err != nil {
			return nil, opErr(err)
		}
	case a.Has("start"):
		start, step, n, err := sliceArgs(a, x.Len())
		if err != nil {
			return nil, err
		}
		if err := ops.SetSlice(env, x, start, step, n, value); err != nil {
			return nil, opErr(err)
		}
	case a.Has("mask"):
		mn := a.String("mask")
		if err := a.Done(); err != nil {
			return nil, err
		}
		m, err := s.maskArray(mn, x.Len())
		if err != nil {
			return nil, err
		}
		if err := ops.SetMask(env, x, m, value); err != nil {
			return nil, opErr(err)
		}
	case a.Has("idx"):
		in := a.String("idx")
		if err := a.Done(); err != nil {
			return nil, err
		}
		idx, err := s.indexArray(in)
		if err != nil {
			return nil, err
		}
		if err := ops.CheckIndices(env, idx, x.Len()); err != nil {
			return nil, opErr(err)
		}
		if err := ops.Scatter(env, x, idx, value); err != nil {
			return nil, opErr(err)
		}
	default:
		return nil, transfer.Errorf(transfer.MissingArgument, "setitem needs one of 'index', 'start'/'stop'/'step', 'mask' or 'idx'")
	}
	return &response{result: arrayResult(name, x)}, nil
}

func (s *Server) cmdSort(r *request) (*response, error) {
	return s.sortCmd(r, "sort", func(d pdarray.DType) pdarray.DType { return d }, ops.Sort)
}

func (s *Server) cmdArgsort(r *request) (*response, error) {
	return s.sortCmd(r, "argsort", func(pdarray.DType) pdarray.DType { return pdarray.Int64 }, ops.Argsort)
}

// sortCmd runs a one-array kernel (sort, argsort) into a new array of the
// input's length and the dtype outType gives.
func (s *Server) sortCmd(r *request, what string, outType func(pdarray.DType) pdarray.DType,
	kernel func(ops.Env, *pdarray.Array, *pdarray.Array) error) (*response, error) {
	name := r.args.String("a")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, what+" of '%s'", name)
	defer o.done()
	out, err := env.Alloc(outType(x.DType()), x.Len())
	if err != nil {
		return nil, err
	}
	if err := kernel(env, x, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func (s *Server) cmdCoargsort(r *request) (*response, error) {
	names := r.args.StringList("names")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	arrs, err := s.getAll(names)
	if err != nil {
		return nil, err
	}
	if len(arrs) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "coargsort needs at least one array")
	}
	if _, err := operandLen("coargsort", asOperands(arrs)...); err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "coargsort")
	defer o.done()
	out, err := env.Alloc(pdarray.Int64, arrs[0].Len())
	if err != nil {
		return nil, err
	}
	if err := ops.Coargsort(env, arrs, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func asOperands(arrs []*pdarray.Array) []ops.Operand {
	out := make([]ops.Operand, len(arrs))
	for i, a := range arrs {
		out[i] = ops.ArrayOperand(a)
	}
	return out
}

func (s *Server) cmdUnique(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	counts := a.OptBool("return_counts", false)
	inverse := a.OptBool("return_inverse", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "unique of '%s'", name)
	defer o.done()
	res, err := ops.Unique(env, x, counts, inverse)
	if err != nil {
		return nil, opErr(err)
	}
	out := map[string]any{}
	for key, arr := range map[string]*pdarray.Array{"values": res.Values, "counts": res.Counts, "inverse": res.Inverse} {
		if arr == nil {
			continue
		}
		if out[key], err = o.keep(arr); err != nil {
			return nil, err
		}
	}
	return &response{result: out}, nil
}

// cmdSearchSorted answers numpy's searchsorted: where each element of v
// would go in the sorted array a (ops.SearchSorted).
func (s *Server) cmdSearchSorted(r *request) (*response, error) {
	a := r.args
	an, vn := a.String("a"), a.String("v")
	side := a.OptString("side", "left")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if side != "left" && side != "right" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "searchsorted: side must be 'left' or 'right', got '%s'", side)
	}
	arrs, err := s.getAll([]string{an, vn})
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "searchsorted")
	defer o.done()
	out, err := env.Alloc(pdarray.Int64, arrs[1].Len())
	if err != nil {
		return nil, err
	}
	if err := ops.SearchSorted(env, arrs[0], arrs[1], side == "right", out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

func (s *Server) cmdIn1d(r *request) (*response, error) {
	a := r.args
	an, bn := a.String("a"), a.String("b")
	invert := a.OptBool("invert", false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	arrs, err := s.getAll([]string{an, bn})
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "in1d")
	defer o.done()
	out, err := env.Alloc(pdarray.Bool, arrs[0].Len())
	if err != nil {
		return nil, err
	}
	if err := ops.In1d(env, arrs[0], arrs[1], invert, out); err != nil {
		return nil, opErr(err)
	}
	return one(o, out)
}

// cmdSetop is union1d, intersect1d or setdiff1d, built from concatenate,
// unique, in1d and compress.
func (s *Server) cmdSetop(r *request) (*response, error) {
	a := r.args
	op := a.String("op")
	an, bn := a.String("a"), a.String("b")
	if err := a.Done(); err != nil {
		return nil, err
	}
	arrs, err := s.getAll([]string{an, bn})
	if err != nil {
		return nil, err
	}
	x, y := arrs[0], arrs[1]
	o, env := s.opEnv(r.stop, "%s", op)
	defer o.done()
	c := ops.Promote(x.DType(), y.DType())
	// uniqueFree is unique(v)'s values; v is freed when it is scratch.
	uniq := func(v *pdarray.Array, scratch bool) (*pdarray.Array, error) {
		u, err := ops.Unique(env, v, false, false)
		if scratch {
			env.Free(v)
		}
		if err != nil {
			return nil, opErr(err)
		}
		return u.Values, nil
	}
	// keepIn is u[in1d(u, other) != invert].
	keepIn := func(u, other *pdarray.Array, invert bool) (*pdarray.Array, error) {
		m, err := env.Alloc(pdarray.Bool, u.Len())
		if err != nil {
			return nil, err
		}
		if err := ops.In1d(env, u, other, invert, m); err != nil {
			return nil, opErr(err)
		}
		out, err := s.compressed(env, u, m)
		if err != nil {
			return nil, err
		}
		env.Free(m)
		return out, nil
	}
	var out *pdarray.Array
	switch op {
	case "union1d":
		cat, err := env.Alloc(c, x.Len()+y.Len())
		if err != nil {
			return nil, err
		}
		ops.Concatenate(env, []*pdarray.Array{x, y}, cat)
		if out, err = uniq(cat, true); err != nil {
			return nil, err
		}
	case "intersect1d":
		// numpy's recipe: unique each (in its own dtype), concatenate
		// (promoting), sort, keep s[i] where s[i] == s[i+1].
		ux, err := uniq(x, false)
		if err != nil {
			return nil, err
		}
		uy, err := uniq(y, false)
		if err != nil {
			return nil, err
		}
		cat, err := env.Alloc(c, ux.Len()+uy.Len())
		if err != nil {
			return nil, err
		}
		ops.Concatenate(env, []*pdarray.Array{ux, uy}, cat)
		env.Free(ux)
		env.Free(uy)
		sorted, err := env.Alloc(c, cat.Len())
		if err != nil {
			return nil, err
		}
		if err := ops.Sort(env, cat, sorted); err != nil {
			return nil, opErr(err)
		}
		env.Free(cat)
		m, err := env.Alloc(pdarray.Bool, max(sorted.Len()-1, 0))
		if err != nil {
			return nil, err
		}
		ops.AdjacentEqual(env, sorted, m)
		head, err := env.Alloc(c, m.Len())
		if err != nil {
			return nil, err
		}
		copy(head.Bytes(), sorted.Bytes())
		if out, err = s.compressed(env, head, m); err != nil {
			return nil, err
		}
	case "setdiff1d":
		ux, err := uniq(x, false)
		if err != nil {
			return nil, err
		}
		if out, err = keepIn(ux, y, true); err != nil {
			return nil, err
		}
		env.Free(ux)
	default:
		return nil, transfer.Errorf(transfer.ArgumentValue, "unknown set operation '%s'; use union1d, intersect1d or setdiff1d", op)
	}
	return one(o, out)
}

func (s *Server) cmdHistogram(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	bins := sizeArg(a, "bins")
	hasRange := a.Has("range_lo") || a.Has("range_hi")
	lo, hi := a.OptFloat("range_lo", 0), a.OptFloat("range_hi", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, err := s.store.get(name)
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "histogram of '%s'", name)
	defer o.done()
	res, err := ops.Histogram(env, x, bins, hasRange, lo, hi)
	if err != nil {
		return nil, opErr(err)
	}
	counts, err := o.keep(res.Counts)
	if err != nil {
		return nil, err
	}
	edges, err := o.keep(res.Edges)
	if err != nil {
		return nil, err
	}
	return &response{result: map[string]any{"counts": counts, "edges": edges}}, nil
}

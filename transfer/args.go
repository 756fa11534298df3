package transfer

import (
	"fmt"
	"strings"
)

// Args reads a command's arguments with precise errors. Each getter records
// the first failure; the handler reads everything it needs, then calls Done,
// which also refuses arguments the command does not take.
//
//	a := NewArgs("upload", req.Args)
//	dtype := a.String("dtype")
//	size := a.Uint("size")
//	name := a.OptString("name", "")
//	if err := a.Done(); err != nil { return err }
type Args struct {
	cmd  string
	m    map[string]any
	seen []string
	err  *Error
}

// NewArgs wraps the args map of command cmd.
func NewArgs(cmd string, m map[string]any) *Args { return &Args{cmd: cmd, m: m} }

func (a *Args) get(key string, required bool) (any, bool) {
	a.seen = append(a.seen, key)
	v, ok := a.m[key]
	if !ok && required && a.err == nil {
		a.err = Errorf(MissingArgument, "command '%s' needs argument '%s'", a.cmd, key)
	}
	return v, ok
}

func (a *Args) typeErr(key, want string, v any) {
	if a.err == nil {
		a.err = Errorf(ArgumentType, "argument '%s' of '%s' must be %s, got %s", key, a.cmd, want, typeName(v))
	}
}

// String returns a required string argument.
func (a *Args) String(key string) string { return a.str(key, "", true) }

// OptString returns an optional string argument, or def.
func (a *Args) OptString(key, def string) string { return a.str(key, def, false) }

func (a *Args) str(key, def string, required bool) string {
	v, ok := a.get(key, required)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		a.typeErr(key, "a string", v)
		return def
	}
	return s
}

// Uint returns a required non-negative integer argument.
func (a *Args) Uint(key string) uint64 { return a.uint(key, 0, true) }

// OptUint returns an optional non-negative integer argument, or def.
func (a *Args) OptUint(key string, def uint64) uint64 { return a.uint(key, def, false) }

func (a *Args) uint(key string, def uint64, required bool) uint64 {
	v, ok := a.get(key, required)
	if !ok {
		return def
	}
	u, isUint := AsUint(v)
	if !isUint {
		if i, isInt := AsInt(v); isInt && a.err == nil {
			a.err = Errorf(ArgumentValue, "argument '%s' of '%s' must be >= 0, got %d", key, a.cmd, i)
			return def
		}
		a.typeErr(key, "a non-negative integer", v)
		return def
	}
	return u
}

// OptBool returns an optional bool argument, or def.
func (a *Args) OptBool(key string, def bool) bool {
	v, ok := a.get(key, false)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		a.typeErr(key, "a bool", v)
		return def
	}
	return b
}

// StringList returns a required list-of-strings argument.
func (a *Args) StringList(key string) []string {
	return list(a, key, "a list of strings", "a string", func(e any) (string, bool) { s, ok := e.(string); return s, ok })
}

// UintList returns a required list of non-negative integers.
func (a *Args) UintList(key string) []uint64 {
	return list(a, key, "a list of non-negative integers", "a non-negative integer", AsUint)
}

// ScalarList returns required argument key, a list of numbers or bools.
func (a *Args) ScalarList(key string) []any {
	return list(a, key, "a list of numbers", "a number or bool", func(v any) (any, bool) {
		switch v.(type) {
		case bool, float32, float64:
			return v, true
		}
		if _, isInt := AsInt(v); isInt {
			return v, true
		}
		_, isUint := AsUint(v)
		return v, isUint
	})
}

// list returns required list argument key, each element converted by conv;
// want and elemWant name what the list and an element must be.
func list[T any](a *Args, key, want, elemWant string, conv func(any) (T, bool)) []T {
	v, ok := a.get(key, true)
	if !ok {
		return nil
	}
	elems, isList := v.([]any)
	if !isList {
		a.typeErr(key, want, v)
		return nil
	}
	out := make([]T, len(elems))
	for i, e := range elems {
		x, ok := conv(e)
		if !ok {
			a.typeErr(fmt.Sprintf("%s[%d]", key, i), elemWant, e)
			return nil
		}
		out[i] = x
	}
	return out
}

// Fail records err unless an earlier failure was recorded.
func (a *Args) Fail(err *Error) {
	if a.err == nil {
		a.err = err
	}
}

// Done returns the first failure, or an ArgumentValue error naming an
// argument the command does not take.
func (a *Args) Done() error {
	if a.err != nil {
		return a.err
	}
	for _, k := range SortedKeys(a.m) {
		known := false
		for _, s := range a.seen {
			if s == k {
				known = true
				break
			}
		}
		if !known {
			takes := "no arguments"
			if len(a.seen) > 0 {
				takes = "arguments " + strings.Join(a.seen, ", ")
			}
			return Errorf(ArgumentValue, "command '%s' has no argument '%s'; it takes %s", a.cmd, k, takes)
		}
	}
	return nil
}

// Scalar returns a required number-or-bool argument as decoded: bool, an
// integer type, float32 or float64.
func (a *Args) Scalar(key string) any {
	v, _ := a.OptScalar(key)
	if _, ok := a.m[key]; !ok && a.err == nil {
		a.err = Errorf(MissingArgument, "command '%s' needs argument '%s'", a.cmd, key)
	}
	return v
}

// OptScalar returns an optional number-or-bool argument; ok is false when
// it is absent or of another type (which records an error).
func (a *Args) OptScalar(key string) (any, bool) {
	v, ok := a.get(key, false)
	if !ok {
		return nil, false
	}
	switch v.(type) {
	case bool, float32, float64:
		return v, true
	}
	if _, isInt := AsInt(v); isInt {
		return v, true
	}
	if _, isUint := AsUint(v); isUint {
		return v, true
	}
	a.typeErr(key, "a number or bool", v)
	return nil, false
}

// Has reports whether the argument is present (without marking it read).
func (a *Args) Has(key string) bool {
	_, ok := a.m[key]
	return ok
}

// Int returns a required integer argument of either sign.
func (a *Args) Int(key string) int64 { return a.int(key, 0, true) }

// OptInt returns an optional integer argument of either sign, or def.
func (a *Args) OptInt(key string, def int64) int64 { return a.int(key, def, false) }

func (a *Args) int(key string, def int64, required bool) int64 {
	v, ok := a.get(key, required)
	if !ok {
		return def
	}
	i, isInt := AsInt(v)
	if !isInt {
		a.typeErr(key, "an integer between -2^63 and 2^63-1", v)
		return def
	}
	return i
}

// OptFloat returns an optional number argument as float64 (integers are
// converted), or def.
func (a *Args) OptFloat(key string, def float64) float64 {
	v, ok := a.get(key, false)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	}
	if i, isInt := AsInt(v); isInt {
		return float64(i)
	}
	if u, isUint := AsUint(v); isUint {
		return float64(u)
	}
	a.typeErr(key, "a number", v)
	return def
}

// Float returns a required number argument as float64.
func (a *Args) Float(key string) float64 {
	if _, ok := a.m[key]; !ok && a.err == nil {
		a.seen = append(a.seen, key)
		a.err = Errorf(MissingArgument, "command '%s' needs argument '%s'", a.cmd, key)
		return 0
	}
	return a.OptFloat(key, 0)
}

package server

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/strs"
	"github.com/arktos-dev/arktos/transfer"
)

// String commands (strs). A string array is two stored arrays: its int64
// offsets (n+1 of them) and its uint8 UTF-8 bytes, Arrow's large_string
// layout, so uploads, downloads, bulk streams, shared memory, memory
// accounting and checkpoints treat it as they treat any array. A command
// names one as a pair [offsets, bytes]; its results are pairs too
// ({"offsets": …, "bytes": …}).
//
// Every command checks the pair (strs.View: offsets in bounds and in
// order, valid UTF-8) before reading it; the outcome is remembered until
// either array is written (setitem, an in-place op), so a string array
// is checked once, not once a request.

// strChecks remembers pairs that passed strs.View, by their arrays and
// write counts.
type strChecks struct {
	mu      sync.Mutex
	ok      map[[2]string]strChecked
	skipped atomic.Uint64 // checks the cache answered (stats)
}

type strChecked struct {
	off, data   *pdarray.Array
	offW, dataW uint64
	ascii       bool // every byte below 0x80 (strs.Strs.ASCII)
}

func (s *Server) strChecks() *strChecks { return &s.strs }

// remember records stored arrays off and data, under names, as a checked
// string array (made by a kernel or a read that checked them).
func (c *strChecks) remember(names [2]string, off, data *pdarray.Array, ascii bool, st *store) {
	offW, dataW := st.writesOf(names[0], off), st.writesOf(names[1], data)
	c.mu.Lock()
	if c.ok == nil {
		c.ok = map[[2]string]strChecked{}
	}
	c.ok[names] = strChecked{off, data, offW, dataW, ascii}
	c.mu.Unlock()
}

// strsArg reads argument key, a string array's [offsets, bytes] names,
// and returns the checked strings and a release to call when done.
func (s *Server) strsArg(a *transfer.Args, key string) ([2]string, error) {
	names := a.StringList(key)
	if names == nil {
		return [2]string{}, nil // a missing or mistyped argument: Done reports it
	}
	if len(names) != 2 {
		return [2]string{}, transfer.Errorf(transfer.ArgumentValue, "argument '%s' must name a string array as [offsets, bytes], got %d names", key, len(names))
	}
	return [2]string{names[0], names[1]}, nil
}

// acquireStrs acquires a string array's two arrays and checks them (or
// finds them checked since they were last written).
func (s *Server) acquireStrs(env ops.Env, key string, names [2]string) (strs.Strs, func(), error) {
	off, offW, relOff, err := s.store.acquireWrites(names[0])
	if err != nil {
		return strs.Strs{}, nil, err
	}
	data, dataW, relData, err := s.store.acquireWrites(names[1])
	if err != nil {
		relOff()
		return strs.Strs{}, nil, err
	}
	release := func() { relOff(); relData() }
	c := s.strChecks()
	c.mu.Lock()
	had, known := c.ok[names]
	c.mu.Unlock()
	known = known && had.off == off && had.data == data && had.offW == offW && had.dataW == dataW
	if known && off.DType() == pdarray.Int64 && data.DType() == pdarray.Uint8 {
		c.skipped.Add(1)
		return strs.Strs{Off: pdarray.View[int64](off), Data: data.Bytes(), ASCII: had.ascii}, release, nil
	}
	want := strChecked{off, data, offW, dataW, false}
	v, err := strs.View(env, off, data)
	if err != nil {
		release()
		var te *transfer.Error
		if errors.As(opErr(err), &te) {
			return strs.Strs{}, nil, transfer.Errorf(te.Code, "argument '%s', string array [%s, %s]: %s", key, names[0], names[1], te.Message)
		}
		return strs.Strs{}, nil, err
	}
	c.mu.Lock()
	if c.ok == nil || len(c.ok) > 1<<16 {
		c.ok = map[[2]string]strChecked{} // names churn; the cache only saves re-checks
	}
	want.ascii = v.ASCII
	c.ok[names] = want
	c.mu.Unlock()
	return v, release, nil
}

// keepStrs stores a kernel's output strings and describes them.
func keepStrs(o *opEnv, out strs.Arrays) (map[string]any, error) {
	off, err := o.keep(out.Offsets)
	if err != nil {
		return nil, err
	}
	data, err := o.keep(out.Bytes)
	if err != nil {
		o.s.store.delete([]string{off["name"].(string)}, true)
		return nil, err
	}
	// The output is checked by construction.
	o.s.strChecks().remember([2]string{off["name"].(string), data["name"].(string)}, out.Offsets, out.Bytes, out.ASCII, o.s.store)
	return map[string]any{"offsets": off, "bytes": data, "size": out.Offsets.Len() - 1}, nil
}

func oneStrs(o *opEnv, out strs.Arrays) (*response, error) {
	res, err := keepStrs(o, out)
	if err != nil {
		return nil, err
	}
	return &response{result: res}, nil
}

// withStrsPair is withStrs for commands of two string arrays, "a" and "b"
// (both checked, both held until f returns).
func (s *Server) withStrsPair(r *request, cmd string, parse func(*transfer.Args),
	f func(o *opEnv, env ops.Env, x, y strs.Strs) (*response, error)) (*response, error) {
	var other [2]string
	var bErr error
	return s.withStrs(r, cmd, func(a *transfer.Args) {
		other, bErr = s.strsArg(a, "b")
		parse(a)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		if bErr != nil {
			return nil, bErr
		}
		y, rel, err := s.acquireStrs(env, "b", other)
		if err != nil {
			return nil, err
		}
		defer rel()
		return f(o, env, x, y)
	})
}

// strsReply is oneStrs for a kernel's (result, error) pair:
// strsReply(o)(strs.Take(...)).
func strsReply(o *opEnv) func(strs.Arrays, error) (*response, error) {
	return func(out strs.Arrays, err error) (*response, error) {
		if err != nil {
			return nil, err
		}
		return oneStrs(o, out)
	}
}

// withStrs runs f on the checked string array named by argument key; it
// reads the remaining arguments with more before Done.
func (s *Server) withStrs(r *request, what string, more func(a *transfer.Args), f func(o *opEnv, env ops.Env, x strs.Strs) (*response, error)) (*response, error) {
	a := r.args
	names, err := s.strsArg(a, "a")
	if more != nil {
		more(a)
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "%s of strings [%s, %s]", what, names[0], names[1])
	defer o.done()
	x, rel, err := s.acquireStrs(env, "a", names)
	if err != nil {
		return nil, err
	}
	defer rel()
	res, err := f(o, env, x)
	if err != nil {
		return nil, opErr(err)
	}
	return res, nil
}

// cmdStrCheck checks a string array just uploaded as its two arrays.
func (s *Server) cmdStrCheck(r *request) (*response, error) {
	return s.withStrs(r, "str_check", nil, func(_ *opEnv, _ ops.Env, x strs.Strs) (*response, error) {
		return &response{result: map[string]any{"size": x.Len(), "nbytes": len(x.Data)}}, nil
	})
}

func (s *Server) cmdStrLengths(r *request) (*response, error) {
	var unit string
	return s.withStrs(r, "str_lengths", func(a *transfer.Args) { unit = a.OptString("unit", "bytes") },
		func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
			if unit != "bytes" && unit != "chars" {
				return nil, transfer.Errorf(transfer.ArgumentValue, "str_lengths: unit must be 'bytes' or 'chars', got '%s'", unit)
			}
			out, err := env.Alloc(pdarray.Int64, x.Len())
			if err != nil {
				return nil, err
			}
			if unit == "bytes" {
				strs.Lengths(env, x, pdarray.View[int64](out))
			} else {
				strs.CharLengths(env, x, pdarray.View[int64](out))
			}
			return one(o, out)
		})
}

// cmdStrCompare compares with a str ("scalar") or another string array
// ("b"), elementwise.
func (s *Server) cmdStrCompare(r *request) (*response, error) {
	var op, scalar string
	var other [2]string
	var hasB bool
	var bErr error
	return s.withStrs(r, "str_compare", func(a *transfer.Args) {
		op = a.String("op")
		if hasB = a.Has("b"); hasB {
			other, bErr = s.strsArg(a, "b")
		} else {
			scalar = a.String("scalar")
		}
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		if bErr != nil {
			return nil, bErr
		}
		out, err := env.Alloc(pdarray.Bool, x.Len())
		if err != nil {
			return nil, err
		}
		if !hasB {
			err = strs.CompareScalar(env, x, strs.CmpOp(op), []byte(scalar), pdarray.View[bool](out))
		} else {
			y, rel, err2 := s.acquireStrs(env, "b", other)
			if err2 != nil {
				return nil, err2
			}
			defer rel()
			err = strs.Compare(env, x, y, strs.CmpOp(op), pdarray.View[bool](out))
		}
		if err != nil {
			return nil, err
		}
		return one(o, out)
	})
}

func (s *Server) cmdStrSearch(r *request) (*response, error) {
	var kind, pattern string
	var regex bool
	return s.withStrs(r, "str_search", func(a *transfer.Args) {
		kind, pattern, regex = a.String("kind"), a.String("pattern"), a.OptBool("regex", false)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		out, err := env.Alloc(pdarray.Bool, x.Len())
		if err != nil {
			return nil, err
		}
		if err := strs.Search(env, x, strs.Kind(kind), pattern, regex, pdarray.View[bool](out)); err != nil {
			return nil, err
		}
		return one(o, out)
	})
}

// cmdStrTake gathers by an int64 index array ("idx") or keeps where a
// bool mask ("mask") is true.
func (s *Server) cmdStrTake(r *request) (*response, error) {
	var idxName, maskName string
	return s.withStrs(r, "str_take", func(a *transfer.Args) {
		idxName, maskName = a.OptString("idx", ""), a.OptString("mask", "")
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		if (idxName == "") == (maskName == "") {
			return nil, transfer.Errorf(transfer.MissingArgument, "str_take needs one of 'idx' (an int64 array) or 'mask' (a bool array)")
		}
		if idxName != "" {
			idx, rel, err := s.store.acquire(idxName)
			if err != nil {
				return nil, err
			}
			defer rel()
			if idx.DType() != pdarray.Int64 {
				return nil, transfer.Errorf(transfer.UnsupportedDType, "str_take: indices '%s' must be int64, got %v", idxName, idx.DType())
			}
			return strsReply(o)(strs.Take(env, x, pdarray.View[int64](idx)))
		}
		m, rel, err := s.store.acquire(maskName)
		if err != nil {
			return nil, err
		}
		defer rel()
		if m.DType() != pdarray.Bool {
			return nil, transfer.Errorf(transfer.UnsupportedDType, "str_take: mask '%s' must be bool, got %v", maskName, m.DType())
		}
		return strsReply(o)(strs.Compress(env, x, pdarray.View[bool](m)))
	})
}

// cmdStrConcat joins string arrays: "parts" lists their names, two each.
func (s *Server) cmdStrConcat(r *request) (*response, error) {
	a := r.args
	names := a.StringList("parts")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if len(names)%2 != 0 || len(names) == 0 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "str_concat: 'parts' must list string arrays as offsets, bytes, offsets, bytes, …; got %d names", len(names))
	}
	o, env := s.opEnv(r.stop, "str_concat")
	defer o.done()
	parts := make([]strs.Strs, len(names)/2)
	for i := range parts {
		p, rel, err := s.acquireStrs(env, "parts", [2]string{names[2*i], names[2*i+1]})
		if err != nil {
			return nil, err
		}
		defer rel()
		parts[i] = p
	}
	out, err := strs.Concat(env, parts)
	if err != nil {
		return nil, opErr(err)
	}
	return oneStrs(o, out)
}

func (s *Server) cmdStrHash(r *request) (*response, error) {
	return s.withStrs(r, "str_hash", nil, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		hi, err := env.Alloc(pdarray.Uint64, x.Len())
		if err != nil {
			return nil, err
		}
		lo, err := env.Alloc(pdarray.Uint64, x.Len())
		if err != nil {
			return nil, err
		}
		strs.Hash(env, x, pdarray.View[uint64](hi), pdarray.View[uint64](lo))
		h, err := o.keep(hi)
		if err != nil {
			return nil, err
		}
		l, err := o.keep(lo)
		if err != nil {
			return nil, err
		}
		return &response{result: map[string]any{"hi": h, "lo": l}}, nil
	})
}

// cmdStrUnique: the distinct strings, sorted, and optionally each
// string's number among them ("inverse", int64) and their counts.
func (s *Server) cmdStrUnique(r *request) (*response, error) {
	var counts, inverse bool
	return s.withStrs(r, "str_unique", func(a *transfer.Args) {
		counts, inverse = a.OptBool("return_counts", false), a.OptBool("return_inverse", false)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		codesA, err := env.Alloc(pdarray.Int64, x.Len())
		if err != nil {
			return nil, err
		}
		codes := pdarray.View[int64](codesA)
		first, err := strs.Factorize(env, x, codes)
		if err != nil {
			return nil, err
		}
		uniq, err := strs.Take(env, x, first)
		if err != nil {
			return nil, err
		}
		k := len(first)
		permA, err := env.Alloc(pdarray.Int64, k)
		if err != nil {
			return nil, err
		}
		if err := strs.Argsort(env, uniq.Strs(), permA); err != nil {
			return nil, err
		}
		perm := pdarray.View[int64](permA)
		values, err := strs.Take(env, uniq.Strs(), perm)
		if err != nil {
			return nil, err
		}
		env.Free(uniq.Offsets)
		env.Free(uniq.Bytes)
		rank := make([]int64, k)
		for j, p := range perm {
			rank[p] = int64(j)
		}
		env.Free(permA)
		out := map[string]any{}
		if out["values"], err = keepStrs(o, values); err != nil {
			return nil, err
		}
		if counts {
			c, err := env.Alloc(pdarray.Int64, k)
			if err != nil {
				return nil, err
			}
			byCode := make([]int64, k)
			strs.CountCodes(env, codes, k, byCode)
			cv := pdarray.View[int64](c)
			for code, n := range byCode {
				cv[rank[code]] = n
			}
			if out["counts"], err = o.keep(c); err != nil {
				return nil, err
			}
		}
		if inverse {
			for i, code := range codes {
				codes[i] = rank[code]
			}
			if out["inverse"], err = o.keep(codesA); err != nil {
				return nil, err
			}
		}
		return &response{result: out}, nil
	})
}

func (s *Server) cmdStrIn1d(r *request) (*response, error) {
	var invert bool
	return s.withStrsPair(r, "str_in1d", func(a *transfer.Args) {
		invert = a.OptBool("invert", false)
	}, func(o *opEnv, env ops.Env, x, y strs.Strs) (*response, error) {
		out, err := env.Alloc(pdarray.Bool, x.Len())
		if err != nil {
			return nil, err
		}
		if err := strs.In1d(env, x, y, invert, pdarray.View[bool](out)); err != nil {
			return nil, err
		}
		return one(o, out)
	})
}

func (s *Server) cmdStrArgsort(r *request) (*response, error) {
	return s.withStrs(r, "str_argsort", nil, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		out, err := env.Alloc(pdarray.Int64, x.Len())
		if err != nil {
			return nil, err
		}
		if err := strs.Argsort(env, x, out); err != nil {
			return nil, err
		}
		return one(o, out)
	})
}

func (s *Server) cmdStrCase(r *request) (*response, error) {
	var c string
	return s.withStrs(r, "str_case", func(a *transfer.Args) { c = a.String("case") },
		func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
			return strsReply(o)(strs.ChangeCase(env, x, strs.Case(c)))
		})
}

// cmdStrSplit splits at a delimiter: the pieces, and "segments" (int64,
// one more than the strings) saying which pieces are whose.
func (s *Server) cmdStrSplit(r *request) (*response, error) {
	var delim string
	var regex bool
	var maxsplit int
	return s.withStrs(r, "str_split", func(a *transfer.Args) {
		delim, regex = a.String("delim"), a.OptBool("regex", false)
		maxsplit = int(a.OptInt("maxsplit", 0))
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		segs, err := env.Alloc(pdarray.Int64, x.Len()+1)
		if err != nil {
			return nil, err
		}
		pieces, err := strs.Split(env, x, delim, regex, maxsplit, pdarray.View[int64](segs))
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if out["values"], err = keepStrs(o, pieces); err != nil {
			return nil, err
		}
		if out["segments"], err = o.keep(segs); err != nil {
			return nil, err
		}
		return &response{result: out}, nil
	})
}

// cmdStrFormat casts a number array to strings (Python's str of each).
func (s *Server) cmdStrFormat(r *request) (*response, error) {
	a := r.args
	name := a.String("a")
	if err := a.Done(); err != nil {
		return nil, err
	}
	x, rel, err := s.store.acquire(name)
	if err != nil {
		return nil, err
	}
	defer rel()
	o, env := s.opEnv(r.stop, "str of '%s'", name)
	defer o.done()
	out, err := strs.Format(env, x)
	if err != nil {
		return nil, opErr(err)
	}
	return oneStrs(o, out)
}

// cmdStrParse casts strings to numbers of "dtype".
func (s *Server) cmdStrParse(r *request) (*response, error) {
	var d pdarray.DType
	return s.withStrs(r, "str_parse", func(a *transfer.Args) { d = dtypeArg(a, "dtype", pdarray.Invalid) },
		func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
			out, err := env.Alloc(d, x.Len())
			if err != nil {
				return nil, err
			}
			if err := strs.Parse(env, x, out); err != nil {
				return nil, err
			}
			return one(o, out)
		})
}

// cmdStrRandom makes random strings (Arkouda's random_strings_uniform).
func (s *Server) cmdStrRandom(r *request) (*response, error) {
	a := r.args
	size := a.Uint("size")
	minlen, maxlen := a.OptInt("minlen", 0), a.OptInt("maxlen", 0)
	chars := a.OptString("characters", "uppercase")
	dist := a.OptString("distribution", "uniform")
	logmean, logstd := a.OptFloat("logmean", 0), a.OptFloat("logstd", 0)
	hasSeed := a.Has("seed")
	seed := a.OptInt("seed", 0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	set, ok := strs.Charsets[chars]
	if !ok {
		return nil, transfer.Errorf(transfer.ArgumentValue, "random strings: characters '%s' is not one of uppercase, lowercase, numeric, printable", chars)
	}
	if size > 1<<40 || maxlen > 1<<20 {
		return nil, transfer.Errorf(transfer.ArgumentValue, "random strings: size %d or maxlen %d is too large", size, maxlen)
	}
	// The memory check's length: maxlen, or for lognormal lengths their
	// mean's bound exp(μ + σ²/2) (capped as the kernel caps one string).
	perString := max(maxlen, 1)
	switch dist {
	case "uniform":
	case "lognormal":
		perString = int64(min(math.Exp(logmean+logstd*logstd/2)+1, 1<<20))
	default:
		return nil, transfer.Errorf(transfer.ArgumentValue, "random strings: distribution '%s' is not uniform or lognormal", dist)
	}
	if _, err := s.store.mulWithin(int64(size), perString, "random strings"); err != nil {
		return nil, err
	}
	o, env := s.opEnv(r.stop, "random strings")
	defer o.done()
	var out strs.Arrays
	var err error
	if dist == "lognormal" {
		out, err = strs.RandomLognormal(env, int(size), logmean, logstd, set, uint64(seed), hasSeed)
	} else {
		out, err = strs.RandomUniform(env, int(size), int(minlen), int(maxlen), set, uint64(seed), hasSeed)
	}
	if err != nil {
		return nil, opErr(err)
	}
	return oneStrs(o, out)
}

// cmdStrStick joins two string arrays elementwise with "delim" between.
func (s *Server) cmdStrStick(r *request) (*response, error) {
	var delim string
	return s.withStrsPair(r, "str_stick", func(a *transfer.Args) {
		delim = a.OptString("delim", "")
	}, func(o *opEnv, env ops.Env, x, y strs.Strs) (*response, error) {
		return strsReply(o)(strs.Stick(env, x, y, []byte(delim)))
	})
}

// cmdStrEncode maps strings through a codec ("encoding"; "decode" the
// other way): Arkouda's encode/decode.
func (s *Server) cmdStrEncode(r *request) (*response, error) {
	var enc string
	var decode bool
	return s.withStrs(r, "str_encode", func(a *transfer.Args) {
		enc, decode = a.String("encoding"), a.OptBool("decode", false)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		return strsReply(o)(strs.Encode(env, x, enc, decode))
	})
}

// keepInts stores an int64 result the kernel made as a Go slice.
func keepInts(o *opEnv, env ops.Env, v []int64) (map[string]any, error) {
	a, err := env.Alloc(pdarray.Int64, len(v))
	if err != nil {
		return nil, err
	}
	copy(pdarray.View[int64](a), v)
	return o.keep(a)
}

// cmdStrIs: Python's str.is<class>() of each string ("class": alnum,
// alpha, decimal, digit, lower, upper, title, space, empty).
func (s *Server) cmdStrIs(r *request) (*response, error) {
	var class string
	return s.withStrs(r, "str_is", func(a *transfer.Args) { class = a.String("class") },
		func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
			out, err := env.Alloc(pdarray.Bool, x.Len())
			if err != nil {
				return nil, err
			}
			if err := strs.Is(env, x, strs.Class(class), pdarray.View[bool](out)); err != nil {
				return nil, err
			}
			return one(o, out)
		})
}

// cmdStrStrip: Python's strip / lstrip / rstrip ("side" both, left,
// right) of the characters in "chars" (whitespace when "").
func (s *Server) cmdStrStrip(r *request) (*response, error) {
	var chars, side string
	return s.withStrs(r, "str_strip", func(a *transfer.Args) {
		chars, side = a.OptString("chars", ""), a.OptString("side", "both")
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		return strsReply(o)(strs.Strip(env, x, chars, strs.Side(side)))
	})
}

// cmdStrPeel: Arkouda's peel / rpeel, two string arrays "left", "right".
func (s *Server) cmdStrPeel(r *request) (*response, error) {
	var spec strs.PeelSpec
	return s.withStrs(r, "str_peel", func(a *transfer.Args) {
		spec = strs.PeelSpec{Delim: a.String("delim"), Regex: a.OptBool("regex", false), Times: int(a.OptInt("times", 1)),
			Include: a.OptBool("include_delimiter", false), Partial: a.OptBool("keep_partial", false),
			FromRight: a.OptBool("from_right", false)}
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		left, right, err := strs.Peel(env, x, spec)
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if out["left"], err = keepStrs(o, left); err != nil {
			return nil, err
		}
		if out["right"], err = keepStrs(o, right); err != nil {
			return nil, err
		}
		return &response{result: out}, nil
	})
}

// cmdStrAffix: Arkouda's get_prefixes / get_suffixes ("suffix"): the
// n-character affixes as "values", and "origins" (bool) saying which
// strings had one.
func (s *Server) cmdStrAffix(r *request) (*response, error) {
	var n int64
	var suffix, proper bool
	return s.withStrs(r, "str_affix", func(a *transfer.Args) {
		n, suffix, proper = a.Int("n"), a.OptBool("suffix", false), a.OptBool("proper", true)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		origins, err := env.Alloc(pdarray.Bool, x.Len())
		if err != nil {
			return nil, err
		}
		values, err := strs.Affixes(env, x, int(n), suffix, proper, pdarray.View[bool](origins))
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if out["values"], err = keepStrs(o, values); err != nil {
			return nil, err
		}
		if out["origins"], err = o.keep(origins); err != nil {
			return nil, err
		}
		return &response{result: out}, nil
	})
}

// cmdStrMatch: re.search / re.match / re.fullmatch ("kind" search, match,
// fullmatch) of "pattern": "matched" (bool per string), and for the
// matched strings in order their rows ("origins") and group "group"'s
// span in code points ("starts", "ends"; -1 where the group took no
// part); with "text", the group's text as "values".
func (s *Server) cmdStrMatch(r *request) (*response, error) {
	var pattern, kind string
	var group int64
	var text bool
	return s.withStrs(r, "str_match", func(a *transfer.Args) {
		pattern, kind = a.String("pattern"), a.OptString("kind", "search")
		group, text = a.OptInt("group", 0), a.OptBool("text", false)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		k := strs.Kind(kind)
		switch kind {
		case "search":
			k = strs.Contains
		case "match", "fullmatch":
		default:
			return nil, transfer.Errorf(transfer.ArgumentValue, "str_match: kind '%s' is not search, match or fullmatch", kind)
		}
		matched, err := env.Alloc(pdarray.Bool, x.Len())
		if err != nil {
			return nil, err
		}
		m, err := strs.MatchSpans(env, x, pattern, k, int(group), pdarray.View[bool](matched))
		if err != nil {
			return nil, err
		}
		out := map[string]any{"groups": m.Groups}
		if out["matched"], err = o.keep(matched); err != nil {
			return nil, err
		}
		for key, v := range map[string][]int64{"origins": m.Origins, "starts": m.Starts, "ends": m.Ends} {
			if out[key], err = keepInts(o, env, v); err != nil {
				return nil, err
			}
		}
		if text {
			vals, err := strs.Texts(env, x, m.Lo, m.Hi)
			if err != nil {
				return nil, err
			}
			if out["values"], err = keepStrs(o, vals); err != nil {
				return nil, err
			}
		}
		return &response{result: out}, nil
	})
}

// cmdStrFindAll: every non-overlapping match of "pattern": "counts" per
// string, and per match in order its "starts" and "lengths" in code
// points and its row ("origins"); with "text", the matches as "values"
// (Arkouda's find_locations and findall).
func (s *Server) cmdStrFindAll(r *request) (*response, error) {
	var pattern string
	var text bool
	return s.withStrs(r, "str_findall", func(a *transfer.Args) {
		pattern, text = a.String("pattern"), a.OptBool("text", false)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		counts, err := env.Alloc(pdarray.Int64, x.Len())
		if err != nil {
			return nil, err
		}
		f, err := strs.FindAll(env, x, pattern, pdarray.View[int64](counts))
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if out["counts"], err = o.keep(counts); err != nil {
			return nil, err
		}
		for key, v := range map[string][]int64{"origins": f.Origins, "starts": f.Starts, "lengths": f.Lengths} {
			if out[key], err = keepInts(o, env, v); err != nil {
				return nil, err
			}
		}
		if text {
			vals, err := strs.Texts(env, x, f.Lo, f.Hi)
			if err != nil {
				return nil, err
			}
			if out["values"], err = keepStrs(o, vals); err != nil {
				return nil, err
			}
		}
		return &response{result: out}, nil
	})
}

// cmdStrSub: re.sub of "pattern" by "repl" (Python's syntax, \1 and
// \g<name>) at most "count" times per string (0: all): "values", and
// "counts" of replacements (Arkouda's sub and subn).
func (s *Server) cmdStrSub(r *request) (*response, error) {
	var pattern, repl string
	var count int64
	return s.withStrs(r, "str_sub", func(a *transfer.Args) {
		pattern, repl, count = a.String("pattern"), a.String("repl"), a.OptInt("count", 0)
	}, func(o *opEnv, env ops.Env, x strs.Strs) (*response, error) {
		counts, err := env.Alloc(pdarray.Int64, x.Len())
		if err != nil {
			return nil, err
		}
		vals, err := strs.Sub(env, x, pattern, repl, int(count), pdarray.View[int64](counts))
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if out["values"], err = keepStrs(o, vals); err != nil {
			return nil, err
		}
		if out["counts"], err = o.keep(counts); err != nil {
			return nil, err
		}
		return &response{result: out}, nil
	})
}

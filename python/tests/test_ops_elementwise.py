"""Elementwise operations against numpy: every dtype pair, Python and numpy
scalars on either side, in-place forms, unary functions, where, clip, astype."""

from __future__ import annotations

import operator
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from _opsdata import DTYPES, FLOATS, INTS, assert_same, forbid_downloads, sample

import arktos as ak

try:  # which loops numpy runs here (its NaN answers differ by CPU)
    from numpy._core._multiarray_umath import __cpu_features__ as _NUMPY_CPU
except ImportError:  # numpy < 2
    from numpy.core._multiarray_umath import __cpu_features__ as _NUMPY_CPU
NUMPY_AVX512 = bool(_NUMPY_CPU.get("AVX512F"))

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift,
}


@pytest.fixture(scope="module")
def mconn(server) -> Iterator[ak.Connection]:
    conn = server.connect()
    before = {entry["name"] for entry in conn.list_arrays()}
    yield conn
    # Module-scoped pdarrays may outlive the connection: delete what this
    # module made, so that the shared server's memory is back where it was.
    leftover = [e["name"] for e in conn.list_arrays() if e["name"] not in before]
    conn.delete(leftover, missing_ok=True)
    conn.close()


@pytest.fixture(scope="module")
def arrays(mconn) -> dict[str, tuple[np.ndarray, ak.pdarray]]:
    out = {}
    for d in DTYPES:
        x = sample(d)
        out[d] = (x, mconn.array(x))
    return out


def numpy_result(f, *args) -> tuple[Any, type[BaseException] | None]:
    try:
        with np.errstate(all="ignore"):
            return f(*args), None
    except Exception as err:  # noqa: BLE001 -- the class is what we compare
        return None, type(err)


def check(f, want_args, got_args, *, ulps: int = 0) -> None:
    rtol = 1e-13 if ulps else 0.0
    want, err = numpy_result(f, *want_args)
    if err is not None:
        base = next(c for c in (OverflowError, TypeError, ValueError) if issubclass(err, c))
        with pytest.raises(base):
            f(*got_args)
        return
    assert_same(f(*got_args), want, ulps=ulps, rtol=rtol)


def ulps_for(sym: str, dtype: Any) -> int:
    # pow goes through Go's math.Pow, not the C library's: ~1e-14 relative.
    return 4 if sym == "**" and np.dtype(dtype).kind == "f" else 0


@pytest.mark.parametrize("sym", list(BINARY))
def test_array_array_every_dtype_pair(arrays, sym) -> None:
    f = BINARY[sym]
    for da in DTYPES:
        xa, pa = arrays[da]
        for db in DTYPES:
            xb, pb = arrays[db]
            xb_, pb_ = xb, pb
            assert xb.size == xa.size
            want, err = numpy_result(f, xa, xb_)
            rd = None if want is None else want.dtype
            check(f, (xa, xb_), (pa, pb_), ulps=ulps_for(sym, rd or "int8"))


SCALARS = [0, 2, 3, -2, 200, 70000, 2**40, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 3**50, 10**400, 2.5, -0.0, float("nan"), float("inf"),
           True, False, np.int8(-3), np.uint16(7), np.int64(-5), np.uint64(2**63 + 1),
           np.float32(1.5), np.float64(-2.25), np.bool_(True)]


@pytest.mark.parametrize("sym", list(BINARY))
def test_array_scalar_both_orders(arrays, sym) -> None:
    f = BINARY[sym]
    for d in DTYPES:
        x, p = arrays[d]
        for s in SCALARS:
            check(f, (x, s), (p, s), ulps=ulps_for(sym, "float64"))
            check(f, (s, x), (s, p), ulps=ulps_for(sym, "float64"))


def test_maximum_minimum(arrays) -> None:
    for da in DTYPES:
        for db in ("int8", "uint64", "float32", "float64", "bool"):
            (xa, pa), (xb, pb) = arrays[da], arrays[db]
            check(np.maximum, (xa, xb), (pa, pb)) if False else None
            assert_same(ak.maximum(pa, pb), np.maximum(xa, xb))
            assert_same(ak.minimum(pa, pb), np.minimum(xa, xb))


@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "//", "%", "&", "|", "<<"])
def test_inplace(mconn, sym) -> None:
    f = BINARY[sym]
    iop = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": operator.imod, "&": operator.iand, "|": operator.ior,
           "<<": operator.ilshift}[sym]
    for da, other in [("int8", "int64"), ("int64", "int8"), ("float32", "float64"), ("int64", "float64"),
                      ("uint8", "int8"), ("bool", "bool"), ("float64", 2), ("int16", 3), ("uint8", 2.5)]:
        x = sample(da)
        y = sample(other)[: x.size] if isinstance(other, str) else other
        p = mconn.array(x)
        q = mconn.array(y) if isinstance(other, str) else other
        want, err = numpy_result(lambda u, v: iop(u.copy(), v), x, y)
        if err is not None:
            base = next(c for c in (TypeError, ValueError) if issubclass(err, c))
            with pytest.raises(base):
                iop(p, q)
            assert_same(p, x)  # nothing was written
            continue
        p_before = p
        p = iop(p, q)
        assert p is p_before
        assert_same(p, want)
    del f


UNARY = {
    "neg": operator.neg, "abs": np.abs, "invert": operator.invert,
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log1p": np.log1p, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite,
    **{f: getattr(np, f) for f in ("tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                                   "arccosh", "arctanh", "log2", "log10", "exp2", "expm1", "cbrt", "sign")},
    **{f: getattr(np, f) for f in ("positive", "reciprocal", "trunc", "fabs", "signbit", "deg2rad", "rad2deg",
                                   "radians", "degrees", "conjugate")},
}
AK_UNARY = {
    "neg": operator.neg, "abs": abs, "invert": operator.invert,
    "sqrt": ak.sqrt, "exp": ak.exp, "log": ak.log, "log1p": ak.log1p, "sin": ak.sin, "cos": ak.cos,
    "floor": ak.floor, "ceil": ak.ceil, "round": ak.round, "isnan": ak.isnan, "isinf": ak.isinf,
    "isfinite": ak.isfinite,
    **{f: getattr(ak, f) for f in ("tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                                   "arccosh", "arctanh", "log2", "log10", "exp2", "expm1", "cbrt", "sign")},
    **{f: getattr(ak, f) for f in ("trunc", "fabs", "deg2rad", "rad2deg")},
    # numpy's ufuncs on a pdarray (ak has no such function)
    **{f: getattr(np, f) for f in ("positive", "reciprocal", "signbit", "radians", "degrees", "conjugate")},
}
TRANSCENDENTAL = {"exp", "log", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                  "tanh", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "expm1", "cbrt"}


def test_rint_and_positive_dtypes(arrays) -> None:
    """np.rint of integers is numpy's float loop (float32 for numpy's
    float16), not round's integer; unary + of bool is refused, as numpy."""
    for d in DTYPES:
        x, p = arrays[d]
        want = np.rint(x)
        if want.dtype == np.float16:
            want = np.rint(x.astype(np.float32))
        assert_same(np.rint(p), want)
        if d == "bool":
            with pytest.raises(TypeError, match="positive"):
                +p
        else:
            assert_same(+p, +x)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(arrays, name) -> None:
    for d in DTYPES:
        x, p = arrays[d]
        want, err = numpy_result(UNARY[name], x)
        if err is not None:
            with pytest.raises(TypeError):
                AK_UNARY[name](p)
            continue
        check_dtype = True
        if want.dtype == np.float16:
            # Arktos has no float16: 1-byte inputs compute in float32.
            want, check_dtype = numpy_result(UNARY[name], x.astype(np.float32))[0], True
        got = AK_UNARY[name](p)
        ulps = 2 if name in TRANSCENDENTAL else 0
        if name in TRANSCENDENTAL and np.dtype(want.dtype) == np.float64 and x.dtype.kind == "f":
            # Go's math differs from glibc/SVML by an ULP or two; large
            # arguments of sin/cos (|x| > 2**20 here) reduce differently.
            pass
        if name in {"sin", "cos", "tan"}:
            big = np.abs(x.astype(np.float64)) > 1e6
            got_a, want_a = got.to_ndarray()[~big], want[~big]
            assert_same(got_a, want_a, check_dtype=check_dtype, ulps=ulps)
            continue
        assert_same(got, want, check_dtype=check_dtype, ulps=ulps)


def test_where(arrays, mconn) -> None:
    cond = sample("bool")
    pc = mconn.array(cond)
    for da in DTYPES:
        for db in ("int8", "uint32", "float32", "bool"):
            (xa, pa), (xb, pb) = arrays[da], arrays[db]
            assert_same(ak.where(pc, pa, pb), np.where(cond, xa, xb))
        for s in (5, -1.5, True, np.float32(2), 2**64, -(2**70)):
            xa, pa = arrays[da]
            for want_args, got_args in (((cond, xa, s), (pc, pa, s)), ((cond, s, xa), (pc, s, pa))):
                want, err = numpy_result(np.where, *want_args)
                if err is None:
                    assert_same(ak.where(*got_args), want)
                elif issubclass(err, OverflowError):  # a huge int beside an integer array
                    with pytest.raises(OverflowError):
                        ak.where(*got_args)


def test_clip(arrays, mconn) -> None:
    for d in DTYPES:
        x, p = arrays[d]
        if d == "bool":
            continue
        for lo, hi in ((0, 10), (-1000, 1000), (None, 3), (-2.5, 2.5), (2, None),
                       (np.float32(-1.5), np.nan), (np.int8(-3), np.int16(300))):
            want, err = numpy_result(np.clip, x, lo, hi)
            if err is not None:
                continue
            assert_same(ak.clip(p, lo, hi), want)
        # array bounds, one request and one result
        lo_a, hi_a = np.resize(x[::-1], x.size), np.resize(x[1:], x.size)
        want, err = numpy_result(np.clip, x, lo_a, hi_a)
        if err is None:
            assert_same(ak.clip(p, mconn.array(lo_a), hi_a), want)


def test_clip_promotes_bounds_together(mconn) -> None:
    """np.clip promotes the array and both bounds together (int8 with a
    uint16 and a float32 bound is float32, not float64), and drops a Python
    int bound that cannot clip an integer array; past the other side it
    raises OverflowError. Every combination against numpy."""
    rng = np.random.default_rng(5)
    kinds = ("bool", "int8", "uint16", "int64", "uint64", "float32", "float64")

    def arr(d: str) -> np.ndarray:
        return rng.integers(0, 2, 6).astype(bool) if d == "bool" else rng.integers(-3, 120, 6).astype(d)

    scalars: list[Any] = [0, 300, -300, -5, 2**63, 2**64, -(2**64), 2.5, np.int16(7), np.float32(1.5), np.nan,
                          True, None]
    for d in kinds:
        x = arr(d)
        p = mconn.array(x)
        bounds = scalars + [arr(b) for b in ("int8", "uint16", "float32")]
        for lo in bounds:
            for hi in bounds:
                if lo is None and hi is None:
                    continue
                want, err = numpy_result(np.clip, x, lo, hi)
                args = [mconn.array(b) if isinstance(b, np.ndarray) else b for b in (lo, hi)]
                if err is not None:
                    with pytest.raises(next(c for c in (OverflowError, TypeError, ValueError) if issubclass(err, c))):
                        ak.clip(p, *args)
                    continue
                if want.dtype == np.float16:
                    continue  # Arktos has no float16 (float32 instead)
                assert_same(ak.clip(p, *args), want)


def test_clip_is_one_request(mconn) -> None:
    """ak.clip is one server request, and refuses no bounds as numpy does."""
    from _opsdata import recorded

    p = mconn.array(np.linspace(-3, 3, 1000))
    with recorded(mconn) as cmds:
        ak.clip(p, -1.0, 1.0)
    assert cmds == ["clip"], cmds
    with pytest.raises(ValueError, match="max or min"):
        ak.clip(p, None, None)
    # signed zeros on a tie: numpy keeps x against a scalar bound and takes
    # an array bound, and so does the server
    x = np.array([-0.0, 0.0] * 40)
    px = mconn.array(x)
    for lo, hi in ((0.0, 1.0), (-0.0, 1.0), (-1.0, 0.0), (-1.0, -0.0)):
        assert_same(ak.clip(px, lo, hi), np.clip(x, lo, hi))
        lo_a, hi_a = np.full(x.size, lo), np.full(x.size, hi)
        assert_same(ak.clip(px, mconn.array(lo_a), mconn.array(hi_a)), np.clip(x, lo_a, hi_a))


def test_astype_every_pair(arrays) -> None:
    for da in DTYPES:
        x, p = arrays[da]
        for db in DTYPES:
            if np.dtype(da).kind == "f" and np.dtype(db).kind in "iub":
                # float -> int of NaN/inf/out-of-range values is undefined
                # (platform-specific in numpy); compare the in-range ones.
                info = np.iinfo(db) if db != "bool" else np.iinfo(np.int8)
                keep = np.isfinite(x) & (x > float(info.min)) & (x < float(info.max))
                with np.errstate(all="ignore"):
                    want = x.astype(db)
                assert_same(ak.astype(p, db).to_ndarray()[keep], want[keep])
                continue
            with np.errstate(over="ignore"):  # float64 -> float32 past its range: inf, as the server's
                want = x.astype(db)
            assert_same(p.astype(db), want)


def test_empty_arrays(mconn) -> None:
    for d in DTYPES:
        x = np.array([], dtype=d)
        p = mconn.array(x)
        assert_same(p + p, x + x)
        assert_same(p < 1, x < 1)
        with np.errstate(all="ignore"):
            assert_same(ak.sqrt(p), np.sqrt(x.astype(np.float32) if x.dtype.itemsize == 1 else x))


def test_shape_mismatch(mconn) -> None:
    with pytest.raises(ValueError, match="could not be broadcast"):
        mconn.array(np.arange(3)) + mconn.array(np.arange(4))


def test_python_int_out_of_range_raises_overflow(mconn) -> None:
    p = mconn.array(np.arange(3, dtype=np.uint8))
    with pytest.raises(OverflowError, match="-1 out of bounds for uint8"):
        p + (-1)
    assert_same(p < -1, np.arange(3, dtype=np.uint8) < -1)
    assert_same(p != 300, np.arange(3, dtype=np.uint8) != 300)


def test_float_types(arrays) -> None:
    for d in FLOATS + INTS[:1]:
        x, p = arrays[d]
        assert_same(p / 3, x / 3)


def _outcome(f: Any, numpy_ok: bool = False) -> tuple[str, Any]:
    """What f() gives: ("ok", the downloaded result) or ("error", its class);
    a numpy result only where numpy_ok (numpy's own answer)."""
    try:
        with np.errstate(all="ignore"):
            result = f()
    except (TypeError, ValueError, OverflowError, ArithmeticError) as err:
        return "error", type(err)
    if numpy_ok and not isinstance(result, ak.pdarray):
        return "ok", result
    assert isinstance(result, ak.pdarray), type(result)
    return "ok", result.to_ndarray()


def test_numpy_ufuncs(arrays, mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy's ufuncs on pdarrays run on the server as the operator or ak
    function of the same name (equal bit for bit, errors alike; those are
    checked against numpy above), with an ndarray or a scalar on either
    side, and out= a pdarray in place; the rest say what to use. Before,
    np.sqrt(a) raised "operand 'pdarray' does not support ufuncs"."""
    from arktos.numpy._ops import UFUNC_BINOPS, UFUNC_UNOPS, binop, unop

    def same_outcome(got: tuple[str, Any], want: tuple[str, Any], what: object) -> None:
        assert got[0] == want[0], (what, got, want)
        if got[0] == "error":
            assert got[1] is want[1], (what, got, want)
        else:
            assert_same(got[1], want[1])
            assert got[1].tobytes() == want[1].tobytes(), what  # (NaN payloads too: the same server op)

    for d in ("int64", "float64", "bool", "uint8"):
        x, p = arrays[d]
        y, q = arrays["float64" if d == "float64" else "int64"]
        for name, sym in UFUNC_BINOPS.items():
            f = getattr(np, name)
            for a, b in ((p, q), (p, 3), (2.5, p), (x, q), (p, y)):
                want = _outcome(lambda: binop(sym, a, b))
                forbid_downloads(monkeypatch)
                got = _outcome(lambda: f(a, b))
                monkeypatch.undo()
                same_outcome(got, want, (name, d))
        for name, op in UFUNC_UNOPS.items():
            if name == "conjugate" and d == "bool":
                continue  # (numpy's int8 loop, where positive refuses bool: test_unary)
            if name == "rint" and np.dtype(d).kind in "biu":
                continue  # (numpy's float loop, not round's: test_rint_and_positive_dtypes)
            same_outcome(_outcome(lambda: getattr(np, name)(p)), _outcome(lambda: unop(op, p)), (name, d))
    x, p = arrays["int64"]
    c = mconn.array(x)
    assert np.add(c, 1, out=c) is c
    assert_same(c, x + 1)
    assert isinstance(x + p, ak.pdarray)
    assert_same(x + p, x + x)
    with pytest.raises(TypeError, match=r"np.ldexp does not run on the server.*np.ldexp\(a.to_ndarray\(\)\)"):
        np.ldexp(p, p)
    with pytest.raises(TypeError, match=r"np.add.reduce does not run on pdarrays.*a.sum\(\)"):
        np.add.reduce(p)
    y = x.copy()
    y += p  # (numpy's in place: the result downloaded into y)
    assert type(y) is np.ndarray
    assert_same(y, x + x)
    with pytest.raises(TypeError):  # numpy's casting rule, as for y += float ndarray
        y += mconn.array(x * 0.5)
    z = np.empty(len(x))
    assert np.multiply(p, 0.5, out=z) is z
    assert_same(z, x * 0.5)
    with pytest.raises(TypeError, match="takes a pdarray or numpy out"):
        np.add(p, 1, out=[0] * len(x))
    with pytest.raises(TypeError, match="takes no where argument"):
        np.add(p, 1, where=True)


def test_numpy_ufunc_dtype(arrays, mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """dtype= picks numpy's loop (numpy's own resolution: its output dtype):
    the operands are cast to the loop's dtypes on the server, then the op
    runs, equal to numpy bit for bit (power aside: glibc's pow, see
    docs/operations.md); a dtype numpy has no loop for raises TypeError as
    numpy does. Before, dtype= was refused."""
    x8 = np.array([1, -3, 7, 100, -128, 127, 0, 5], np.int8)
    y8 = np.array([2, 5, -1, 100, 3, 1, 9, -5], np.int8)
    p8, q8 = mconn.array(x8), mconn.array(y8)
    ufuncs = (np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.maximum,
              np.less, np.equal, np.sqrt, np.negative, np.absolute)
    for f in ufuncs:
        for dt in (np.float64, np.float32, np.int16, np.int64, np.bool_):
            for ours, theirs in (((p8, q8), (x8, y8)), ((p8, 3), (x8, 3)), ((2.5, p8), (2.5, x8)),
                                 ((x8, q8), (x8, y8))):
                ours, theirs = ours[:f.nin], theirs[:f.nin]
                want = _outcome(lambda: f(*theirs, dtype=dt), numpy_ok=True)
                forbid_downloads(monkeypatch)
                mine = any(isinstance(o, ak.pdarray) for o in ours)  # (2.5 or x8 alone: numpy's own)
                got = _outcome(lambda: f(*ours, dtype=dt), numpy_ok=not mine)
                monkeypatch.undo()
                assert got[0] == want[0], (f, dt, got, want)
                if got[0] == "ok":
                    assert got[1].dtype == want[1].dtype and got[1].tobytes() == want[1].tobytes(), (f, dt)
                else:
                    assert issubclass(got[1], TypeError) and issubclass(want[1], TypeError), (f, dt, got, want)


def test_float_functions_where_go_loses_digits(mconn) -> None:
    """log2 just above 1, arcsin and arccos near ±1, sinh and cosh past
    709: Go's math lost up to 3.5e12 ULP there (log2), 1.6e7 (arccos),
    1011 (arcsin), or overflowed (sinh, cosh); the server's are within 4
    ULP of numpy's."""
    rng = np.random.default_rng(3)
    near1 = np.concatenate([1 + rng.uniform(-1e-10, 1e-10, 300), rng.uniform(0.5, 2, 300), 2.0 ** np.arange(-60, 60)])
    unit = np.concatenate([1 - np.exp(rng.uniform(-35, -1, 300)), -1 + np.exp(rng.uniform(-35, -1, 300))])
    big = np.concatenate([rng.uniform(700, 710.4, 300), -rng.uniform(700, 710.4, 300)])
    for name, x in (("log2", near1), ("log10", near1), ("arcsin", unit), ("arccos", unit), ("sinh", big),
                    ("cosh", big)):
        assert_same(getattr(ak, name)(mconn.array(x)), getattr(np, name)(x), ulps=4)


def test_new_ufuncs_edges(mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edges the sampled arrays lack: signbit of -0.0 and of a NaN with
    its sign bit set, nextafter's signed zeros and NaN payloads, gcd and
    lcm at the smallest int (wrapping as numpy's), heaviside's h0 and NaN,
    logaddexp of equal infinities, the logical ops with Python scalars, and
    np.divmod (floor_divide and remainder)."""
    neg_nan = np.array([0xFFF8000000000123], dtype=np.uint64).view(np.float64)
    x = np.concatenate([np.array([-0.0, 0.0, np.inf, -np.inf, 1.0, -5e-324, np.nan]), neg_nan])
    p = mconn.array(x)
    forbid_downloads(monkeypatch)
    got = [np.signbit(p), np.nextafter(p, -0.0), np.nextafter(p, np.inf), np.heaviside(p, 0.5),
           np.heaviside(p, np.nan), np.logaddexp(p, p), np.logaddexp2(p, -np.inf),
           np.logical_and(p, 2), np.logical_or(0, p), np.logical_xor(p, True), *np.divmod(p, 0.75)]
    monkeypatch.undo()
    with np.errstate(all="ignore"):
        want = [np.signbit(x), np.nextafter(x, -0.0), np.nextafter(x, np.inf), np.heaviside(x, 0.5),
                np.heaviside(x, np.nan), np.logaddexp(x, x), np.logaddexp2(x, -np.inf),
                np.logical_and(x, 2), np.logical_or(0, x), np.logical_xor(x, True), *np.divmod(x, 0.75)]
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)
    assert np.nextafter(p, p).to_ndarray()[:8].view(np.uint64).tolist() == x.view(np.uint64).tolist()[:8]
    for d in ("int8", "int16", "int32", "int64", "uint8", "uint64"):
        info = np.iinfo(d)
        a = np.array([info.min, info.min, info.max, 0, 0, 12, -12 if d[0] == "i" else 12, info.max], dtype=d)
        b = np.array([info.min, 0, info.max, 0, 7, 18, 18, 2], dtype=d)
        pa, pb = mconn.array(a), mconn.array(b)
        with np.errstate(all="ignore"):
            assert_same(np.gcd(pa, pb), np.gcd(a, b))
            assert_same(np.lcm(pa, pb), np.lcm(a, b))
            for q, r in zip(np.divmod(pa, pb), np.divmod(a, b), strict=True):
                assert_same(q, r)
    with pytest.raises(TypeError):
        np.gcd(p, p)


def test_numpy_square(arrays, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.square of a pdarray is numpy's (its multiply), on the server."""
    for d in DTYPES:
        x, p = arrays[d]
        forbid_downloads(monkeypatch)
        got = np.square(p)
        monkeypatch.undo()
        with np.errstate(all="ignore"):
            assert_same(got, np.square(x))


@pytest.mark.parametrize("name", ["fmax", "fmin", "fmod", "copysign", "arctan2", "hypot", "logaddexp",
                                  "logaddexp2", "heaviside", "nextafter", "float_power", "logical_and",
                                  "logical_or", "logical_xor", "gcd", "lcm"])
def test_more_binary_ufuncs(arrays, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.fmax, np.fmin, np.fmod, np.copysign, np.arctan2, np.hypot,
    np.logaddexp(2), np.heaviside, np.nextafter, np.float_power, the logical
    ones, np.gcd and np.lcm run on the server for every dtype pair: numpy's
    dtype (float32 where numpy gives float16), its errors, and its values
    (bit for bit; those through Go's math within 4 ULP). Before, they raised
    TypeError."""
    f = getattr(np, name)
    ulps = 4 if name in ("arctan2", "hypot", "logaddexp", "logaddexp2", "float_power") else 0
    for da in DTYPES:
        for db in DTYPES:
            (x, p), (y, q) = arrays[da], arrays[db]
            want, err = numpy_result(f, x, y)
            if err is not None:
                with pytest.raises(TypeError):
                    f(p, q)
                continue
            if want.dtype == np.float16:  # (no float16 here: numpy's float32 loop)
                want = f(x.astype(np.float32), y.astype(np.float32))
            forbid_downloads(monkeypatch)
            got = f(p, q)
            monkeypatch.undo()
            assert isinstance(got, ak.pdarray)
            # (float_power is Go's math.Pow, as float **: within 1e-13 relative)
            assert_same(got, want, ulps=ulps, rtol=1e-13 if name == "float_power" else 0.0)


def test_nan_answers_carry_numpy_bits(mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """NaN answers bit for bit with numpy's (assert_same lets any NaN
    match): invalid operations give the CPU's default NaN as C's libm does
    (x86: 0xfff8000000000000), and numpy's NaN argument propagates. Go's
    math answered its own NaN, 0x7ff8000000000001, for all of these
    before. (NaN payloads other than numpy's NaN are not compared: numpy's
    SIMD loops keep or drop them function by function.)"""
    bad = np.array([-1.0, 2.0, -2.0, np.inf, -np.inf, 0.0, 3.0, np.nan, -0.5])
    other = np.array([0.0, np.inf, 0.3, 3.0, 0.0, 0.0, np.nan, 1.0, -np.inf])
    unary = [np.log, np.log1p, np.log2, np.log10, np.sin, np.cos, np.tan, np.arcsin, np.arccos,
             np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.exp,
             np.exp2, np.expm1, np.cbrt, np.sqrt, np.abs, np.fabs, np.floor, np.trunc]
    binary = [np.fmod, np.remainder, np.floor_divide, np.power, np.float_power, np.arctan2,
              np.hypot, np.copysign, np.logaddexp, np.heaviside, np.true_divide]
    binary_names = {f.__name__ for f in binary} | {f"{f.__name__}(y, x)" for f in binary}
    for dt in (np.float64, np.float32):
        x, y = bad.astype(dt), other.astype(dt)
        px, py = mconn.array(x), mconn.array(y)
        forbid_downloads(monkeypatch)
        got = [f(px) for f in unary] + [f(px, py) for f in binary] + [f(py, px) for f in binary]
        monkeypatch.undo()
        with np.errstate(all="ignore"):
            want = [f(x) for f in unary] + [f(x, y) for f in binary] + [f(y, x) for f in binary]
        names = [f.__name__ for f in unary] + [f.__name__ for f in binary] + [f"{f.__name__}(y, x)" for f in binary]
        for name, g, w in zip(names, got, want, strict=True):
            g_np = g.to_ndarray()
            assert g_np.dtype == w.dtype, (name, dt)
            nan = np.isnan(w)
            assert np.array_equal(np.isnan(g_np), nan), (name, dt)
            if name == "arccos":
                nan[7] = False  # numpy's AVX-512 arccos answers the default NaN for NaN; libm's propagates
            if not NUMPY_AVX512:
                # numpy's loops for a CPU without AVX-512 answer +NaN for some
                # invalid operations (log(-1): 0x7ff8...) where its AVX-512
                # loops and libm answer the default NaN: there, only NaN
                # arguments' propagation is numpy's to follow.
                nan &= np.isnan(x) | (np.isnan(y) if name in binary_names else False)
            u = f"u{w.itemsize}"
            assert [hex(v) for v in g_np[nan].view(u)] == [hex(v) for v in w[nan].view(u)], (name, dt)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint64", "int8"])
def test_comparisons_in_vector_blocks(mconn, dtype: str) -> None:
    """Comparisons with the dtype's edge values (NaN, infinities, signed
    zeros, integer extremes) spread through whole 64-element blocks, which
    the server's AVX-512 kernels take, and through a tail they do not, as
    numpy, byte for byte; on a server that runs the kernels, the requests
    must add to stats' simd_kernels (a fast path that stops being taken
    fails here)."""
    rng = np.random.default_rng(11)
    n = 64 * 70 + 13
    a, b = sample(dtype, n, seed=1), sample(dtype, n, seed=2)
    a, b = rng.permutation(a), rng.permutation(b)
    b[::3] = a[::3]  # equal pairs, NaN against NaN among them
    pa, pb = mconn.array(a), mconn.array(b)
    scalar = 0.5 if np.dtype(dtype).kind == "f" else 3
    config = mconn.get_config()
    assert config["simd"] in ("avx512", "off-cpu", "off-build", "off-flag")
    if os.environ.get("ARKTOS_TEST_SIMD") == "off":
        # ("off-flag"; "off-cpu" or "off-build" where the kernels could not run anyway)
        assert config["simd"] != "avx512", "ARKTOS_TEST_SIMD=off: the shared server runs --simd=false"
    elif os.environ.get("ARKTOS_REQUIRE_SIMD") == "1":
        assert config["simd"] != "off-build", "make builds the server with GOEXPERIMENT=simd"
    before = int(mconn._request("stats")[0]["simd_kernels"])
    for sym in ("<", "<=", ">", ">=", "==", "!="):
        f = BINARY[sym]
        assert_same(f(pa, pb), f(a, b))
        assert_same(f(pa, scalar), f(a, np.array(scalar, dtype=dtype)))
    after = int(mconn._request("stats")[0]["simd_kernels"])
    if config["simd"] == "avx512" and dtype in ("float64", "float32", "int64", "int32"):
        assert after > before, "the comparisons took no vector kernel"

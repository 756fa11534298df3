"""NumPy-style operations on server arrays (docs/operations.md).

Every function sends one or a few requests; array results stay on the
server as new pdarrays, scalar results come back as numpy scalars of the
dtype numpy would give. Operands may be pdarrays, Python scalars (weak, as
NEP 50 says), numpy scalars (strong) or numpy arrays / lists (uploaded
first). Functions that take no pdarray (zeros, arange, randint, ...) use the
default connection, or the one given as ``conn=``.
"""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeGuard, cast

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ..core import _default
from ..core._dtypes import from_wire, to_wire
from . import _pdarray
from ._connection import Connection
from ._pdarray import pdarray
from ._strings import Strings, format_numbers

__all__ = [
    "abs", "all", "any", "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
    "argmax", "argmaxk", "argmin", "argmink", "argsort", "astype", "cbrt", "ceil", "clip", "coargsort",
    "concatenate", "corr", "cos", "cosh", "count_nonzero", "cov", "cumprod", "cumsum", "deg2rad", "exp",
    "exp2", "expm1", "fabs", "floor", "full", "histogram", "in1d", "intersect1d", "is_sorted",
    "isfinite", "isin", "isinf", "isnan", "linspace", "log", "log10", "log1p", "log2", "max", "maximum",
    "maxk", "mean", "min", "minimum", "mink", "ones", "prod", "rad2deg", "randint", "round",
    "searchsorted", "setdiff1d", "sign", "sin", "sinh", "sort", "sqrt", "standard_normal", "std", "sum",
    "tan", "tanh", "trunc", "uniform", "union1d", "unique", "value_counts", "var", "where", "zeros",
]

_INT_MIN, _UINT_MAX = -(2**63), 2**64 - 1


def _default_conn(conn: Connection | None) -> Connection:
    """`conn`, else the default connection (an ak.Connection: this layer
    registered the class ak.connect() builds)."""
    if conn is not None:
        return conn
    return cast(Connection, _default.default_connection())


def _conn_of(*xs: Any, conn: Connection | None = None) -> Connection:
    for x in xs:
        if isinstance(x, pdarray):
            return x._conn
        if isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, pdarray):
                    return y._conn
    return _default_conn(conn)


class _CategoricalLike(Protocol):
    """What these functions use of a Categorical (arktos.pandas): this layer
    imports nothing of pandas, so the class registers itself
    (register_categorical) and is known by this much."""

    codes: pdarray

    def sort_values(self) -> Any: ...
    def unique(self) -> Any: ...
    def value_counts(self) -> tuple[Any, pdarray]: ...
    def isin(self, values: Any) -> pdarray: ...
    @classmethod
    def concatenate(cls, arrays: Sequence[Any]) -> Any: ...


#: The Categorical class, once arktos.pandas registered it.
_categorical_types: list[type] = []


def register_categorical(cls: type) -> None:
    """Called by arktos.pandas: instances of `cls` are Categoricals, which
    sort, unique, in1d, concatenate, ... hand to their own methods."""
    if cls not in _categorical_types:
        _categorical_types.append(cls)


def _is_categorical(x: Any) -> TypeGuard[_CategoricalLike]:
    return bool(_categorical_types) and isinstance(x, tuple(_categorical_types))


def _new(conn: Connection, result: dict[str, Any]) -> pdarray:
    return conn._pdarray(result, owned=True)


def _scalar(result: dict[str, Any]) -> Any:
    return from_wire(result["dtype"]).type(result["value"])


def _as_pdarray(x: Any, conn: Connection, keep: list[pdarray]) -> pdarray:
    """x as a pdarray on conn (numpy arrays and lists are uploaded)."""
    if isinstance(x, pdarray):
        return x
    arr = conn.array(x)
    keep.append(arr)
    return arr


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, np.generic)) and not isinstance(x, (np.str_, np.bytes_))


def _put_operand(args: dict[str, Any], key: str, x: Any, conn: Connection,
                 keep: list[pdarray]) -> None:
    """Put operand x in args: an array name, or a weak (Python) or strong
    (numpy) scalar."""
    if isinstance(x, pdarray):
        args[key] = x._live_name()
    elif isinstance(x, np.generic):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"arktos cannot use a {x.dtype} scalar as an operand")
        args[key + "_scalar"] = x.item()
        args[key + "_dtype"] = to_wire(x.dtype)
    elif isinstance(x, bool):
        args[key + "_scalar"] = x
    elif isinstance(x, int):
        if not _INT_MIN <= x <= _UINT_MAX:
            raise OverflowError(f"Python integer {x} out of bounds for any arktos dtype "
                                "(int64 or uint64)")
        args[key + "_scalar"] = x
    elif isinstance(x, float):
        args[key + "_scalar"] = x
    elif isinstance(x, (np.ndarray, list, tuple)):
        args[key] = _as_pdarray(x, conn, keep)._live_name()
    else:
        raise TypeError(f"unsupported operand type {type(x).__name__}; use a pdarray, "
                        "a number, a numpy scalar or a numpy array")


def _supported(x: Any) -> bool:
    return isinstance(x, (pdarray, bool, int, float, np.generic, np.ndarray, list, tuple))


_INTEGER_ONLY = {"&", "|", "^", "<<", ">>", "gcd", "lcm"}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _past_every_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and not _INT_MIN <= x <= _UINT_MAX


def _big_int_operand(op: str, a: Any, b: Any) -> tuple[str, Any, Any]:
    """numpy's answer for a Python int past int64 and uint64 beside an array:
    with a float array it is a (weak) float; an integer array's comparison
    with it is the same for every element (a == a or a != a keeps out= and
    runs on the server); true division takes it as a float. A float
    array's bitwise operation raises TypeError, anything else OverflowError,
    as numpy does."""
    if _past_every_int(a) and isinstance(b, pdarray) and op in _MIRRORED:
        op, a, b = _MIRRORED[op], b, a
    elif _past_every_int(a) and isinstance(b, pdarray):
        op2, b2, a2 = _big_int_operand(op, b, a)  # the same rules, operands swapped back
        return op2, a2, b2
    if not (isinstance(a, pdarray) and _past_every_int(b)):
        return op, a, b
    if a.dtype.kind == "f" and op in _INTEGER_ONLY:
        raise TypeError(f"{op} takes integer operands, not {a.dtype} (and the Python int {b})")
    if a.dtype.kind == "f" or op == "/":
        return op, a, float(b)  # OverflowError past float64, as numpy
    if a.dtype.kind in "iu" and op in _MIRRORED:
        true = op in ("<", "<=", "!=") if b > 0 else op in (">", ">=", "!=")
        return ("==" if true else "!="), a, a
    return op, a, b


def _floats_beside(*xs: Any) -> tuple[Any, ...]:
    """xs with each Python int past int64 and uint64 made a float when the
    others meet in a float (a Python float among them, or arrays and numpy
    scalars that promote to one: uint64 with int16), as numpy takes it for
    where and clip; others are left to raise."""
    strong = [x.dtype for x in xs if isinstance(x, (pdarray, np.generic))]
    if not (builtins.any(isinstance(x, float) for x in xs) or strong and np.result_type(*strong).kind == "f"):
        return xs
    return tuple(float(x) if _past_every_int(x) else x for x in xs)


def binop(op: str, a: Any, b: Any, out: pdarray | None = None) -> pdarray:
    """Apply binary operator `op` ("+", "<", "maximum", ...) elementwise."""
    op, a, b = _big_int_operand(op, a, b)
    conn = _conn_of(a, b)
    keep: list[pdarray] = []
    args: dict[str, Any] = {"op": op}
    _put_operand(args, "a", a, conn, keep)
    _put_operand(args, "b", b, conn, keep)
    if out is not None:
        args["out"] = out._live_name()
    result, _ = conn._request("binop", args)
    if out is not None:
        return out
    return _new(conn, result)


def unop(op: str, a: Any, out: pdarray | None = None) -> pdarray:
    """Apply unary operation `op` ("neg", "sqrt", "isnan", ...) elementwise."""
    conn = _conn_of(a)
    keep: list[pdarray] = []
    x = _as_pdarray(a, conn, keep)
    args: dict[str, Any] = {"op": op, "a": x._live_name()}
    if out is not None:
        args["out"] = out._live_name()
    result, _ = conn._request("unop", args)
    return out if out is not None else _new(conn, result)


#: numpy ufuncs the server runs: binary ones as binop's operator, unary
#: ones as unop's operation (pdarray.__array_ufunc__).
UFUNC_BINOPS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/",
                "floor_divide": "//", "remainder": "%", "power": "**", "less": "<", "less_equal": "<=",
                "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!=",
                "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "left_shift": "<<",
                "right_shift": ">>", "maximum": "maximum", "minimum": "minimum", "fmax": "fmax",
                "fmin": "fmin", **{f: f for f in (
                    "fmod", "copysign", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside",
                    "nextafter", "float_power", "logical_and", "logical_or", "logical_xor", "gcd", "lcm")}}
UFUNC_UNOPS = {"negative": "neg", "absolute": "abs", "invert": "invert", "logical_not": "not",
               "sqrt": "sqrt", "exp": "exp", "log": "log", "log1p": "log1p", "sin": "sin", "cos": "cos",
               "floor": "floor", "ceil": "ceil", "rint": "round", "isnan": "isnan", "isinf": "isinf",
               "isfinite": "isfinite", **{f: f for f in (
                   "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                   "arctanh", "log2", "log10", "exp2", "expm1", "cbrt", "sign", "positive", "reciprocal",
                   "trunc", "fabs", "signbit", "deg2rad", "rad2deg")},
               "radians": "deg2rad", "degrees": "rad2deg", "conjugate": "positive"}


def array_ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """pdarray.__array_ufunc__: run `ufunc` on the server, or say why not."""
    name = ufunc.__name__
    if method != "__call__":
        raise TypeError(f"np.{name}.{method} does not run on pdarrays; use the pdarray's method "
                        "(a.sum(), a.cumsum(), ...) or ak's function, or download first with a.to_ndarray()")
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else out
    if isinstance(out, np.ndarray):
        # Into a numpy array (x += a, np.add(x, a, out=x)): made on the server,
        # then downloaded into it with the ufunc's own casting rule.
        result = array_ufunc(ufunc, method, inputs, kwargs)
        np.copyto(out, result.to_ndarray(), casting="same_kind")
        return out
    if out is not None and not isinstance(out, pdarray):
        raise TypeError(f"np.{name}(..., out=...) on pdarrays takes a pdarray or numpy out, "
                        f"got {type(out).__name__}")
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"np.{name} on pdarrays takes no {', '.join(sorted(kwargs))} argument(s)")
    if name == "divmod" and out is None and dtype is None:
        # numpy's divmod is its floor_divide and remainder, bit for bit.
        return binop("//", *inputs), binop("%", *inputs)
    if name not in (UFUNC_BINOPS if ufunc.nin == 2 else (*UFUNC_UNOPS, "square") if ufunc.nin == 1 else ()):
        raise TypeError(f"np.{name} does not run on the server (it runs np.{', np.'.join(UFUNC_BINOPS)}, "
                        f"np.{', np.'.join(UFUNC_UNOPS)}); for numpy's answer on a download use "
                        f"np.{name}(a.to_ndarray())")
    # numpy hands a scalar operand over as a 0-d array (np.int8(3) < a): a
    # scalar again, not an array of one element.
    inputs = tuple(x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in inputs)
    if dtype is not None:
        # numpy's own loop for dtype= (its output dtype), found by numpy: the
        # operands are cast to the loop's input dtypes first, as numpy casts them.
        kinds = tuple(x.dtype if isinstance(x, (pdarray, np.ndarray, np.generic))
                      else np.dtype(bool) if isinstance(x, bool)
                      else type(x) if isinstance(x, (int, float, complex)) else np.asarray(x).dtype
                      for x in inputs)
        loop = ufunc.resolve_dtypes((*kinds, None), signature=(*(None,) * len(inputs), np.dtype(dtype)))
        inputs = tuple(x.astype(t) if isinstance(x, pdarray) and x.dtype != t
                       else x if isinstance(x, pdarray) else np.asarray(x, dtype=t)[()]
                       for x, t in zip(inputs, loop))
    if name == "conjugate" and builtins.any(isinstance(x, pdarray) and x.dtype == np.bool_ for x in inputs):
        inputs = tuple(x.astype(np.int8) for x in inputs)  # numpy's int8 loop (positive refuses bool)
    if ufunc.nin == 2:
        return binop(UFUNC_BINOPS[name], inputs[0], inputs[1], out=out)
    if name == "square":  # numpy's multiply, in its square loop (bool: int8)
        x = inputs[0]
        t = np.square.resolve_dtypes((x.dtype, None))[0]
        if x.dtype != t:
            x = x.astype(t)
        return binop("*", x, x, out=out)
    if name == "rint" and isinstance(inputs[0], pdarray) and inputs[0].dtype.kind in "biu":
        # numpy's rint of integers is its float loop (the server's round
        # keeps integers, as np.round does); float16 is float32 here.
        t = np.rint.resolve_dtypes((inputs[0].dtype, None))[1]
        return unop("round", inputs[0].astype(np.float32 if t == np.float16 else t), out=out)
    return unop(UFUNC_UNOPS[name], inputs[0], out=out)


def _np_concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                    casting: str = "same_kind") -> Any:
    if axis not in (0, -1, None) or out is not None or dtype is not None or casting != "same_kind" \
            or builtins.any(not isinstance(x, pdarray) and np.ndim(x) != 1 for x in arrays):
        return NotImplemented
    return concatenate(arrays)


def _np_where(condition: Any, *xy: Any) -> Any:
    return where(condition, *xy) if len(xy) == 2 and isinstance(condition, pdarray) else NotImplemented


def _np_sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
    return sort(a) if isinstance(a, pdarray) and axis in (-1, 0, None) and order is None else NotImplemented


def _np_unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
               axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    if not isinstance(ar, pdarray) or return_index or axis is not None or not equal_nan:
        return NotImplemented
    return unique(ar, return_inverse=return_inverse, return_counts=return_counts)


def _np_isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
             kind: Any = None) -> Any:
    return in1d(element, test_elements, invert=invert) if isinstance(element, pdarray) else NotImplemented


def _np_setop(op: str) -> Callable[..., Any]:
    def f(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Any:
        return NotImplemented if return_indices else _setop(op, ar1, ar2)
    return f


def _np_count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return count_nonzero(a) if isinstance(a, pdarray) and axis in (None, 0, -1) and not keepdims else NotImplemented


def _np_histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002
                  weights: Any = None) -> Any:
    if not isinstance(a, pdarray) or not isinstance(bins, (int, np.integer)) or density or weights is not None:
        return NotImplemented
    return histogram(a, int(bins), range)


def _np_diff(a: Any, n: Any = 1, axis: Any = -1, **ends: Any) -> Any:
    """np.diff: a[1:] - a[:-1] on the server, n times (!= for bool, as numpy)."""
    if not isinstance(a, pdarray) or axis not in (0, -1) or ends or not isinstance(n, (int, np.integer)):
        return NotImplemented  # (prepend= / append=: numpy's, on a download)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    for _ in builtins.range(n):
        a = a[1:] != a[:-1] if a.dtype == np.bool_ else a[1:] - a[:-1]
    return a


def _np_ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None or keepdims:
        return NotImplemented
    if a.dtype == np.bool_:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
                        "the `^` operator, or the logical_xor function instead.")  # (numpy's)
    return np.subtract(a.max(), a.min())  # (numpy's own ptp, on its two reductions; empty: max's ValueError)


def _np_average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
                keepdims: bool = False) -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or weights is not None or returned or keepdims:
        return NotImplemented
    return a.mean()  # (numpy's average without weights is its mean)


def _dtype_of(x: Any) -> np.dtype[Any]:
    """A pdarray's dtype, or numpy's for anything else (an ndarray, a list)."""
    return x.dtype if isinstance(x, pdarray) else np.asarray(x).dtype


def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    """np.dot / np.vdot / np.inner of two 1-D arrays (one a pdarray): the
    products summed on the server (as the server sums: docs/operations.md),
    in numpy's result dtype (integers wrap as numpy's do)."""
    if out is not None or not builtins.all(isinstance(x, pdarray) or np.ndim(x) == 1 for x in (a, b)):
        return NotImplemented
    if np.shape(a) != np.shape(b):
        raise ValueError(f"shapes {np.shape(a)} and {np.shape(b)} not aligned: "
                         f"{np.shape(a)[0]} (dim 0) != {np.shape(b)[0]} (dim 0)")
    dt = np.result_type(*(_dtype_of(x) for x in (a, b)))
    if dt.kind not in "biuf":
        return NotImplemented
    if dt == np.bool_:
        return np.bool_(binop("&", a, b).any())
    return np.asarray(binop("*", a, b).sum()).astype(dt)[()]


def _np_norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """np.linalg.norm of a 1-D pdarray (ord None or 2): numpy's sqrt of x·x,
    with ints as float64."""
    if not isinstance(x, pdarray) or ord not in (None, 2) or axis not in (None, 0, -1) or keepdims \
            or x.dtype.kind not in "biuf":
        return NotImplemented
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    return np.sqrt(_np_dot(x, x))


def _np_isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """np.isclose on the server, numpy's formula step for step (y made
    inexact first): a bool pdarray equal to numpy's."""
    operands = (a, b)
    if not builtins.all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in (rtol, atol)) \
            or not builtins.all(isinstance(x, (pdarray, int, float)) and not isinstance(x, bool) or np.ndim(x) == 1
                                for x in operands) or not math.isfinite(rtol) or not math.isfinite(atol):
        return NotImplemented
    c = _conn_of(*(x for x in operands if isinstance(x, pdarray)))
    keep: list[pdarray] = []
    x, y = (x if isinstance(x, (pdarray, int, float)) else _as_pdarray(np.asarray(x), c, keep) for x in operands)
    if isinstance(y, pdarray):
        if y.dtype.kind not in "biuf" or (isinstance(x, pdarray) and x.dtype.kind not in "biuf"):
            return NotImplemented
        dt = np.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
        tol: Any = binop("+", atol, binop("*", rtol, unop("abs", y)))
        finite: Any = unop("isfinite", y)
    else:
        y = float(y)
        tol, finite = atol + rtol * builtins.abs(y), math.isfinite(y)
    result = binop("<=", unop("abs", binop("-", x, y)), tol)
    if finite is not True:
        result = binop("&", result, finite)
    result = binop("|", result, binop("==", x, y))
    if equal_nan:
        nan_x = unop("isnan", x) if isinstance(x, pdarray) else math.isnan(x)
        nan_y = unop("isnan", y) if isinstance(y, pdarray) else math.isnan(y)
        both = binop("&", nan_x, nan_y) if isinstance(nan_x, pdarray) or isinstance(nan_y, pdarray) else nan_x and nan_y
        result = binop("|", result, both)
    return result


def _np_allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    close = _np_isclose(a, b, rtol, atol, equal_nan)
    return close if close is NotImplemented else bool(close.all())


def _np_searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    if sorter is not None or not builtins.all(isinstance(x, pdarray) or np.ndim(x) <= 1 for x in (a, v)) \
            or np.ndim(a) != 1 or not builtins.all(_dtype_of(x).kind in "iuf" for x in (a, v)):
        return NotImplemented
    return searchsorted(a, v, side)


def _np_digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """np.digitize of a pdarray x by numpy's own rule (its searchsorted of
    the bins, reversed when they decrease), on the server."""
    if not isinstance(x, pdarray) or isinstance(bins, pdarray) or x.dtype.kind not in "iuf":
        return NotImplemented
    edges = np.asarray(bins)
    if edges.ndim != 1 or edges.dtype.kind not in "iuf":
        return NotImplemented
    d = np.diff(edges)
    if not (np.all(d >= 0) or np.all(d <= 0)):  # numpy's _monotonicity, NaN edges aside
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if edges.size > 1 and edges[0] > edges[-1]:
        return binop("-", len(edges), searchsorted(edges[::-1].copy(), x, side))
    return searchsorted(edges, x, side)


def _np_full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                  shape: Any = None, **more: Any) -> Any:
    """np.full_like (and zeros_like, ones_like, empty_like: zeros) of a
    pdarray: a pdarray made on the server, the value cast as numpy casts
    it (unsafe)."""
    if not isinstance(a, pdarray) or order not in ("K", "C", "A") or shape is not None \
            or builtins.any(v is not None for v in more.values()):
        return NotImplemented
    dt = np.dtype(a.dtype if dtype is None else dtype)
    if dt.kind not in "biuf":
        return NotImplemented
    return full(a.size, np.asarray(fill_value).astype(dt, casting="unsafe")[()], dt, conn=a._conn)


def _np_like(value: int) -> Callable[..., Any]:
    def f(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
          **more: Any) -> Any:
        return _np_full_like(a, value, dtype, order, subok, shape, **more)
    return f


def _np_take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None or mode != "raise" \
            or np.ndim(indices) > 1:
        return NotImplemented
    if np.ndim(indices) == 0 and not isinstance(indices, pdarray):
        return a[int(indices)]
    return a[indices if isinstance(indices, pdarray) else np.asarray(indices, dtype=np.int64)]


def _np_roll(a: Any, shift: Any, axis: Any = None) -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or np.ndim(shift) != 0:
        return NotImplemented
    n = a.size
    k = int(shift) % n if n else 0
    return a.copy() if k == 0 else concatenate([a[n - k:], a[:n - k]])


def _np_bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    """np.bincount of a pdarray of non-negative integers: the server's
    histogram with a bin a value (one edge an integer), a pdarray of
    int64 counts."""
    if not isinstance(x, pdarray) or weights is not None or x.dtype.kind not in "bi" and x.dtype not in (
            np.uint8, np.uint16, np.uint32) or x.size == 0:
        return NotImplemented  # (uint64 and floats: numpy's casting error; weights: numpy's)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.dtype.kind == "i" and x.min() < 0:
        raise ValueError("'list' argument must have no negative elements")
    n = builtins.max(int(x.max()) + 1, int(minlength))
    return histogram(x if x.dtype != np.bool_ else x.astype(np.int8), n, (0, n))[0]


def _np_nonzero(a: Any) -> Any:
    if not isinstance(a, pdarray):
        return NotImplemented
    return (arange(a.size, conn=a._conn)[a if a.dtype == np.bool_ else binop("!=", a, 0)],)


def _np_flatnonzero(a: Any) -> Any:
    return NotImplemented if not isinstance(a, pdarray) else _np_nonzero(a)[0]


def _np_array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    if equal_nan or not builtins.all(isinstance(x, pdarray) or np.ndim(x) == 1 for x in (a1, a2)):
        return NotImplemented
    if np.shape(a1) != np.shape(a2):
        return False
    return bool((a1 == a2).all()) if isinstance(a1, pdarray) else bool((a2 == a1).all())


def _order_statistics(a: pdarray, ranks: list[int]) -> tuple[NDArray[Any], int]:
    """The elements at these ranks of a sorted (NaN last; a rank among the
    NaNs gives NaN), found by selection on the server (order_stats: no
    sort, and only these elements come back), and how many elements are
    NaN (no ranks: that count only)."""
    result, _ = a._conn._request("order_stats", {"a": a._live_name(), "ranks": ranks})
    return np.array(result["values"], dtype=from_wire(result["dtype"])), int(result["nans"])


def _counted(a: pdarray, skipna: bool) -> int:
    """How many elements the median or quantiles are of: all, or (for the
    nan* functions on floats) those not NaN, which sorted order puts first."""
    return a.size - _order_statistics(a, [])[1] if skipna and a.dtype.kind == "f" else a.size


def _nan_answer(a: pdarray) -> NDArray[Any]:
    """[NaN] in a's dtype: what numpy's median or quantiles of an array with
    NaNs read (its last element in sorted order; numpy's quiet NaN, as the
    server's, unless the array's own NaNs carry other bits)."""
    return np.array([np.nan], dtype=a.dtype)


def _np_median(skipna: bool) -> Callable[..., Any]:
    """np.median / np.nanmedian by the server's selection: the middle
    element or two, given to np.median itself, whose mean then answers bit
    for bit as on the whole array (NaN where numpy's would be NaN)."""
    def f(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
          keepdims: bool = False) -> Any:
        if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None or keepdims \
                or a.dtype.kind not in "iuf" or a.size < 2 or (n := _counted(a, skipna)) < 2:
            return NotImplemented  # (numpy's, on a download: cheap, or its warning and NaN)
        values, nans = _order_statistics(a, [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2])
        return np.median(_nan_answer(a) if nans and not skipna else values)
    return f


#: More quantiles than this in one call take numpy's path (a download): the
#: server answers at most 65536 ranks a request (two a quantile).
_MAX_QUANTILES = 32767


def _np_quantile(percent: bool, skipna: bool) -> Callable[..., Any]:
    """np.quantile / np.percentile (and their nan* twins; method "linear")
    by the server's selection: for each q the two neighbouring order statistics
    numpy would read (by its own index rule), given to numpy's quantile
    with the same weight and the same kind of q, so the answer, its dtype
    and NaN rule are numpy's bit for bit. Other methods, weights, integer q
    and the like: numpy's, on a download."""
    def f(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
          method: str = "linear", keepdims: bool = False, *, weights: Any = None,
          interpolation: Any = None) -> Any:
        if not isinstance(a, pdarray) or isinstance(q, pdarray) or axis not in (None, 0, -1) \
                or out is not None or keepdims or method != "linear" or weights is not None \
                or interpolation is not None or a.dtype.kind not in "iuf" or a.size < 2 \
                or np.size(q) > _MAX_QUANTILES:
            return NotImplemented
        weak = type(q) in (int, float)
        qs = np.true_divide(q, 100, out=...) if percent else np.asanyarray(q)
        if qs.dtype.kind != "f":
            return NotImplemented
        if not qs.size or qs.ndim > 1:
            return NotImplemented  # (numpy's answer or error)
        if not (qs.min() >= 0 and qs.max() <= 1):  # (NaN fails, as in numpy)
            raise ValueError("Percentiles must be in the range [0, 100]" if percent
                             else "Quantiles must be in the range [0, 1]")
        n = _counted(a, skipna)
        if n < 2:
            return NotImplemented
        virtual = (n - 1) * qs  # numpy's "linear" index, in q's dtype
        inside = [int(v) for v in virtual.ravel() if v < n - 1]
        top = [n - 1] if len(inside) < virtual.size else []
        ranks = sorted({*inside, *(r + 1 for r in inside), *top})
        got, nans = _order_statistics(a, ranks)
        if nans and not skipna:
            nan = _nan_answer(a)[0]
            return np.quantile(np.array([nan, nan]), float(qs) if weak else qs)
        values = dict(zip(ranks, got))
        last = values.get(n - 1)

        def one(v: Any) -> Any:
            if v < n - 1:
                lo = int(v)
                pair, t = [values[lo], values[lo + 1]], v - np.floor(v)
            else:  # numpy takes the last element twice (gamma past 1 either way)
                pair, t = [last, last], np.ones_like(v)
            return np.quantile(np.array(pair, dtype=a.dtype), float(t) if weak else t)
        if qs.ndim == 0:
            return one(virtual[()] if weak else virtual)
        return np.array([one(v) for v in virtual.ravel()]).reshape(qs.shape)
    return f


def _nan_zeroed_sum(a: pdarray) -> Any:
    """The sum of a with its NaNs made 0: numpy's nansum (and nanmean's total)."""
    return where(isnan(a), a.dtype.type(0), a).sum()


def _np_nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **more: Any) -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None or more:
        return NotImplemented
    if a.dtype.kind != "f" or _counted(a, True) == a.size:
        return a.sum()
    return _nan_zeroed_sum(a)


def _np_nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **more: Any) -> Any:
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None or more:
        return NotImplemented
    if a.dtype.kind != "f":
        return a.mean()
    n = _counted(a, True)
    if n == 0:
        return NotImplemented  # (numpy's warning and NaN)
    if n == a.size:
        return a.mean()
    total = _nan_zeroed_sum(a)
    return total.dtype.type(total / np.intp(n))  # as numpy's nanmean divides


def _np_nanminmax(method: str) -> Callable[..., Any]:
    def f(a: Any, axis: Any = None, out: Any = None, **more: Any) -> Any:
        if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None or more:
            return NotImplemented
        if a.dtype.kind != "f":
            return getattr(a, method)()
        n = _counted(a, True)
        if n == 0:
            return NotImplemented  # (numpy's warning and NaN)
        return getattr(a if n == a.size else a[~isnan(a)], method)()
    return f


def _np_nanstat(method: str) -> Callable[..., Any]:
    """np.nanvar / np.nanstd: the statistic of the elements not NaN (on the
    server, as the server sums)."""
    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, **more: Any) -> Any:
        if not isinstance(a, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None \
                or builtins.any(k != "keepdims" for k in more) or more.get("keepdims") or a.dtype.kind not in "biuf":
            return NotImplemented
        if a.dtype.kind != "f":
            return getattr(a, method)(ddof=ddof)
        n = _counted(a, True)
        if n <= ddof:
            return NotImplemented  # (numpy's warning and NaN)
        return getattr(a if n == a.size else a[~isnan(a)], method)(ddof=ddof)
    return f


def _np_nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **more: Any) -> Any:
    """np.nanprod: numpy's own recipe, NaNs made 1, then the product."""
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None or more:
        return NotImplemented
    return where(isnan(a), a.dtype.type(1), a).prod() if a.dtype.kind == "f" else a.prod()


def _np_nanarg(method: str) -> Callable[..., Any]:
    """np.nanargmin / np.nanargmax: numpy's recipe (NaN made +inf or -inf,
    then argmin / argmax), with its ValueError for an all-NaN array."""
    fill = np.inf if method == "argmin" else -np.inf

    def f(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None or keepdims:
            return NotImplemented
        if a.dtype.kind != "f":
            return getattr(a, method)()
        n = _counted(a, True)
        if n == 0:
            raise ValueError("All-NaN slice encountered")
        return getattr(a if n == a.size else where(isnan(a), a.dtype.type(fill), a), method)()
    return f


def _np_nancum(method: str) -> Callable[..., Any]:
    """np.nancumsum / np.nancumprod: numpy's recipe (NaN made 0 or 1, then
    the scan), on the server."""
    identity = 0 if method == "cumsum" else 1

    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if not isinstance(a, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None:
            return NotImplemented
        return getattr(where(isnan(a), a.dtype.type(identity), a) if a.dtype.kind == "f" else a, method)()
    return f


def _np_cumulative(method: str) -> Callable[..., Any]:
    """np.cumulative_sum / np.cumulative_prod (numpy 2.1's), on the server:
    the scan, with include_initial the identity before it."""
    first = 0 if method == "cumsum" else 1

    def f(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
          include_initial: bool = False) -> Any:
        if not isinstance(x, pdarray) or axis not in (None, 0, -1) or dtype is not None or out is not None:
            return NotImplemented
        scan = getattr(x, method)()
        return concatenate([np.zeros(1, scan.dtype) + first, scan]) if include_initial else scan
    return f


def _np_isinf_sign(value: float) -> Callable[..., Any]:
    """np.isposinf / np.isneginf of a float pdarray: x == +inf or -inf."""
    def f(x: Any, out: Any = None) -> Any:
        if not isinstance(x, pdarray) or out is not None or x.dtype.kind != "f":
            return NotImplemented
        return binop("==", x, value)
    return f


def _np_nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """np.nan_to_num of a pdarray: NaN, +inf and -inf replaced on the server
    (numpy's defaults: 0 and the dtype's largest and smallest finite
    values); integers and bools copied. copy=False writes into x, as numpy."""
    if not isinstance(x, pdarray) or x.dtype.kind not in "biuf":
        return NotImplemented
    result = x.copy() if copy else x
    if x.dtype.kind != "f":
        return result
    info = np.finfo(x.dtype)
    t = x.dtype.type
    for mask, value in ((isnan(x), nan), (binop("==", x, np.inf), info.max if posinf is None else posinf),
                        (binop("==", x, -np.inf), info.min if neginf is None else neginf)):
        result = where(mask, t(value), result)
    if not copy:
        x[:] = result
        return x
    return result


def _np_hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """np.hstack of 1-D arrays (one a pdarray) is their concatenation."""
    if dtype is not None or casting != "same_kind" or not builtins.any(isinstance(x, pdarray) for x in tup) \
            or builtins.any(not isinstance(x, pdarray) and np.ndim(x) != 1 for x in tup):
        return NotImplemented
    return concatenate(list(tup))


def _truth(c: pdarray) -> pdarray:
    return c if c.dtype == np.bool_ else binop("!=", c, 0)


def _np_extract(condition: Any, arr: Any) -> Any:
    """np.extract: arr's elements where condition is nonzero (same lengths)."""
    if not builtins.all(isinstance(x, pdarray) for x in (condition, arr)) or condition.size != arr.size:
        return NotImplemented
    return arr[_truth(condition)]


def _np_compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Any:
    """np.compress of a pdarray: its first len(condition) elements where
    condition is nonzero (condition a pdarray or a 1-D sequence)."""
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) or out is not None \
            or not isinstance(condition, pdarray) and np.ndim(condition) != 1:
        return NotImplemented
    c = condition if isinstance(condition, pdarray) else a._conn.array(np.asarray(condition, dtype=bool))
    if c.size > a.size:
        return NotImplemented  # (numpy's IndexError)
    return (a if c.size == a.size else a[:c.size])[_truth(c)]


def _np_repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """np.repeat of a pdarray on the server (one pass: runs of each element
    written where the counts' running sum puts them), by a count for all or
    one per element."""
    if not isinstance(a, pdarray) or axis not in (None, 0, -1) \
            or not isinstance(repeats, pdarray) and np.ndim(repeats) > 1:
        return NotImplemented
    if not isinstance(repeats, pdarray) and (np.ndim(repeats) == 0 or np.size(repeats) == 1):
        k = int(np.asarray(repeats).reshape(-1)[0])
        if k < 0:
            raise ValueError("repeats may not contain negative values.")
        return _new(a._conn, a._conn._request("repeat", {"a": a._live_name(), "count": k})[0])
    keep: list[pdarray] = []
    counts = _as_pdarray(repeats, a._conn, keep)
    if counts.dtype.kind not in "iu" or counts.size != a.size:
        return NotImplemented  # (numpy's errors for these)
    return _new(a._conn, a._conn._request("repeat", {"a": a._live_name(), "counts": counts._live_name()})[0])


def _np_tile(A: Any, reps: Any) -> Any:  # noqa: N803 -- numpy's name
    """np.tile of a pdarray by an integer count: a gather by i % n."""
    if not isinstance(A, pdarray) or not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 0:
        return NotImplemented  # (negative: numpy's ValueError)
    n, k = A.size, int(reps)
    return A[binop("%", arange(n * k, conn=A._conn), n)] if n and k else A[:0]


def _np_setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """np.setxor1d by numpy's own recipe on the server: both arrays' distinct
    values sorted together, kept where neither neighbour equals them (so a
    NaN from each array stays twice, as numpy's)."""
    if not builtins.any(isinstance(x, pdarray) for x in (ar1, ar2)) \
            or builtins.any(not isinstance(x, pdarray) and np.ndim(x) != 1 for x in (ar1, ar2)):
        return NotImplemented
    c = _conn_of(ar1, ar2)
    parts = [x if assume_unique else unique(x) if isinstance(x, pdarray) else np.unique(x) for x in (ar1, ar2)]
    aux = sort(concatenate(parts, conn=c))
    if aux.size == 0:
        return aux
    flag = concatenate([np.ones(1, bool), binop("!=", aux[1:], aux[:-1]), np.ones(1, bool)], conn=c)
    return aux[binop("&", flag[1:], flag[:-1])]


def _np_unique_values(x: Any) -> Any:
    return unique(x) if isinstance(x, pdarray) else NotImplemented


def _np_unique_result(func: Any, **what: bool) -> Callable[..., Any]:
    """np.unique_counts / np.unique_inverse: numpy's named tuple (its type
    read off numpy's answer for an empty array) of the server's unique."""
    def f(x: Any) -> Any:
        if not isinstance(x, pdarray):
            return NotImplemented
        return type(func(np.zeros(0)))(*unique(x, **what))
    return f


def _np_lexsort(keys: Any, axis: Any = -1) -> Any:
    """np.lexsort of pdarrays (the last key primary): coargsort, keys reversed."""
    if axis not in (-1, 0) or not isinstance(keys, (list, tuple)) or not keys \
            or not builtins.all(isinstance(k, pdarray) for k in keys):
        return NotImplemented
    return coargsort(list(keys)[::-1])


def _cov_matrix(x: pdarray, y: pdarray | None, ddof: int) -> NDArray[np.float64]:
    """numpy's cov of one or two 1-D arrays: the centred products summed on
    the server (as it sums), divided by N - ddof."""
    cols = [c if c.dtype == np.float64 else c.astype(np.float64) for c in ([x] if y is None else [x, y])]
    centred = [c - c.mean() for c in cols]  # (numpy's mean of the float64 values)
    n = x.size
    c = np.empty((len(cols), len(cols)))
    for i, u in enumerate(centred):
        for j in builtins.range(i, len(cols)):
            c[i, j] = c[j, i] = (u * centred[j]).sum()
    c *= np.true_divide(1, n - ddof)  # (numpy's: times the reciprocal)
    return c


def _np_cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
            fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """np.cov of one or two 1-D pdarrays: numpy's answer shape (a 0-d array
    for one, 2x2 for two), the sums on the server."""
    if not isinstance(m, pdarray) or not (y is None or isinstance(y, pdarray)) or fweights is not None \
            or aweights is not None or dtype is not None or m.dtype.kind not in "biuf" \
            or y is not None and (y.dtype.kind not in "biuf" or y.size != m.size):
        return NotImplemented
    d = (0 if bias else 1) if ddof is None else int(ddof)
    if m.size - d <= 0:
        return NotImplemented  # (numpy's warning and inf / NaN)
    c = _cov_matrix(m, y, d)
    return c.squeeze() if y is None else c


def _np_corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """np.corrcoef of one or two 1-D pdarrays: numpy's steps on the
    server's covariance."""
    c = _np_cov(x, y, rowvar, dtype=dtype)
    if c is NotImplemented or y is None:
        return c if c is NotImplemented else c / c
    stddev = np.sqrt(np.diag(c))
    c = c / stddev[:, None] / stddev[None, :]
    return np.clip(c, -1, 1)


def cov(x: pdarray, y: pdarray) -> np.float64:
    """Covariance of two pdarrays (ddof 1), as Arkouda's ak.cov: np.cov(x, y)[0, 1].

    >>> ak.cov(ak.array([1.0, 2.0, 4.0]), ak.array([1.0, 3.0, 2.0]))
    np.float64(0.5)
    """
    return np.float64(_cov_matrix(x, y, 1)[0, 1])


def corr(x: pdarray, y: pdarray) -> np.float64:
    """Pearson correlation of two pdarrays, as Arkouda's ak.corr: np.corrcoef(x, y)[0, 1].

    >>> ak.corr(ak.array([1.0, 2.0, 4.0]), ak.array([1.0, 3.0, 2.0]))
    np.float64(0.32732683535398854)
    """
    return np.float64(_np_corrcoef(x, y)[0, 1])


def _np_method(method: str, positional: bool = False) -> Callable[..., Any]:
    """np.<method>(a, ...) as a.<method>(...): straight to the pdarray's
    method, not through numpy's wrappers (which call it too, some
    microseconds later). Other positional arguments only where the method
    takes numpy's order (clip, round)."""
    def f(a: Any, *rest: Any, **kwargs: Any) -> Any:
        if not isinstance(a, pdarray) or rest and not positional:
            return NotImplemented
        return getattr(a, method)(*rest, **kwargs)
    return f


def array_function(func: Any, args: Any, kwargs: Any) -> Any:
    """pdarray.__array_function__: the server's version of func where it has
    one for these arguments, else numpy's own (as without the hook)."""
    handler = _ARRAY_FUNCTIONS.get(func)
    if handler is not None:
        result = handler(*args, **kwargs)
        if result is not NotImplemented:
            return result
    implementation = getattr(func, "_implementation", None)
    if implementation is None:
        return NotImplemented
    return implementation(*args, **kwargs)


def _unary(op: str, doc: str) -> Any:
    def f(a: Any) -> pdarray:
        return unop(op, a)

    f.__name__ = f.__qualname__ = {"neg": "negative", "not": "logical_not"}.get(op, op)
    f.__doc__ = doc
    return f


abs = _unary("abs", "Absolute value, elementwise (min ints stay min, as numpy).\n\n"
             ">>> ak.abs(ak.array([-2, 0, 3]))\narray([2, 0, 3])")
sqrt = _unary("sqrt", "Square root; ints of up to 2 bytes give float32 (numpy: float16 for 1 byte).\n\n"
              ">>> ak.sqrt(ak.array([1.0, 4.0, 9.0]))\narray([1., 2., 3.])")
exp = _unary("exp", "e**x, elementwise.\n\n"
             ">>> ak.exp(ak.array([0.0, 1.0]))\narray([1.        , 2.71828183])")
log = _unary("log", "Natural logarithm, elementwise.\n\n"
             ">>> ak.log(ak.array([1.0, np.e]))\narray([0., 1.])")
log1p = _unary("log1p", "log(1 + x), elementwise.\n\n"
               ">>> ak.log1p(ak.array([0.0, 1e-10]))\narray([0.e+00, 1.e-10])")
sin = _unary("sin", "Sine, elementwise.\n\n"
             ">>> ak.sin(ak.array([0.0, np.pi / 2]))\narray([0., 1.])")
cos = _unary("cos", "Cosine, elementwise.\n\n"
             ">>> ak.cos(ak.array([0.0, np.pi]))\narray([ 1., -1.])")
tan = _unary("tan", "Tangent, elementwise.\n\n>>> ak.tan(ak.array([0.0]))\narray([0.])")
arcsin = _unary("arcsin", "Inverse sine, elementwise.\n\n>>> ak.arcsin(ak.array([0.0]))\narray([0.])")
arccos = _unary("arccos", "Inverse cosine, elementwise.\n\n>>> ak.arccos(ak.array([1.0]))\narray([0.])")
arctan = _unary("arctan", "Inverse tangent, elementwise.\n\n>>> ak.arctan(ak.array([0.0]))\narray([0.])")
sinh = _unary("sinh", "Hyperbolic sine, elementwise.\n\n>>> ak.sinh(ak.array([0.0]))\narray([0.])")
cosh = _unary("cosh", "Hyperbolic cosine, elementwise.\n\n>>> ak.cosh(ak.array([0.0]))\narray([1.])")
tanh = _unary("tanh", "Hyperbolic tangent, elementwise.\n\n>>> ak.tanh(ak.array([0.0]))\narray([0.])")
arcsinh = _unary("arcsinh", "Inverse hyperbolic sine.\n\n>>> ak.arcsinh(ak.array([0.0]))\narray([0.])")
arccosh = _unary("arccosh", "Inverse hyperbolic cosine.\n\n>>> ak.arccosh(ak.array([1.0]))\narray([0.])")
arctanh = _unary("arctanh", "Inverse hyperbolic tangent.\n\n>>> ak.arctanh(ak.array([0.0]))\narray([0.])")
log2 = _unary("log2", "Base-2 logarithm, elementwise.\n\n>>> ak.log2(ak.array([8.0]))\narray([3.])")
log10 = _unary("log10", "Base-10 logarithm, elementwise.\n\n>>> ak.log10(ak.array([100.0]))\narray([2.])")
exp2 = _unary("exp2", "2**x, elementwise.\n\n>>> ak.exp2(ak.array([3.0]))\narray([8.])")
expm1 = _unary("expm1", "exp(x) - 1, elementwise.\n\n>>> ak.expm1(ak.array([0.0]))\narray([0.])")
sign = _unary("sign", "-1, 0 or 1 by the sign (NaN stays NaN; -0.0 gives 0.0), numpy's.\n\n"
              ">>> ak.sign(ak.array([-2.5, 0.0, 3.0]))\narray([-1.,  0.,  1.])")
cbrt = _unary("cbrt", "Cube root, elementwise.\n\n>>> ak.cbrt(ak.array([27.0]))\narray([3.])")
trunc = _unary("trunc", "Toward zero; integer arrays keep their dtype (numpy).\n\n"
               ">>> ak.trunc(ak.array([-1.5, 0.5, 2.0]))\narray([-1.,  0.,  2.])")
fabs = _unary("fabs", "Absolute value as a float (numpy's fabs; ints of up to 2 bytes give float32).\n\n"
              ">>> ak.fabs(ak.array([-2, 3]))\narray([2., 3.])")
deg2rad = _unary("deg2rad", "Degrees to radians, x * (pi / 180) as numpy rounds it.\n\n"
                 ">>> ak.deg2rad(ak.array([180.0]))\narray([3.14159265])")
rad2deg = _unary("rad2deg", "Radians to degrees, x * (180 / pi) as numpy rounds it.\n\n"
                 ">>> ak.rad2deg(ak.array([np.pi]))\narray([180.])")
floor = _unary("floor", "Floor; integer arrays keep their dtype (numpy 2).\n\n"
               ">>> ak.floor(ak.array([-1.5, 0.5, 2.0]))\narray([-2.,  0.,  2.])")
ceil = _unary("ceil", "Ceiling; integer arrays keep their dtype (numpy 2).\n\n"
              ">>> ak.ceil(ak.array([-1.5, 0.5, 2.0]))\narray([-1.,  1.,  2.])")
isnan = _unary("isnan", "True where NaN.\n\n"
               ">>> ak.isnan(ak.array([1.0, np.nan]))\narray([False,  True])")
isinf = _unary("isinf", "True where +-inf.\n\n"
               ">>> ak.isinf(ak.array([1.0, -np.inf]))\narray([False,  True])")
isfinite = _unary("isfinite", "True where neither NaN nor +-inf.\n\n"
                  ">>> ak.isfinite(ak.array([1.0, np.nan, np.inf]))\narray([ True, False, False])")


def round(a: Any, decimals: int = 0) -> pdarray:  # noqa: A001 -- numpy's name
    """Round half to even (np.round); only decimals=0 is supported.

    >>> ak.round(ak.array([0.5, 1.5, 2.7]))
    array([0., 2., 3.])
    """
    if decimals != 0:
        raise NotImplementedError("arktos round() supports decimals=0 only")
    return unop("round", a)


def maximum(a: Any, b: Any) -> pdarray:
    """Elementwise maximum; NaN propagates (np.maximum).

    >>> ak.maximum(ak.array([1, 5, 3]), ak.array([4, 2, 6]))
    array([4, 5, 6])
    """
    return binop("maximum", a, b)


def minimum(a: Any, b: Any) -> pdarray:
    """Elementwise minimum; NaN propagates (np.minimum).

    >>> ak.minimum(ak.array([1, 5, 3]), 2)
    array([1, 2, 2])
    """
    return binop("minimum", a, b)


def clip(a: pdarray, a_min: Any, a_max: Any) -> pdarray:
    """np.clip: minimum(maximum(a, a_min), a_max); either bound may be None.

    One server request (``clip``): the array and both bounds promoted
    together, as numpy's ufunc does, then one pass over the array. As
    np.clip, a Python int bound at or past an integer array's limit on the
    side that changes nothing is dropped; past the other side it raises
    OverflowError.

    >>> ak.clip(ak.arange(6), 1, 4)
    array([1, 1, 2, 3, 4, 4])
    """
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if isinstance(a, pdarray) and a.dtype.kind in "iu":
        # numpy's np.clip drops a Python int bound that cannot clip an
        # integer array (at or past its dtype's limit on the side that
        # changes nothing), before any promotion.
        info = np.iinfo(a.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
        if a_min is None and a_max is None:
            return unop("positive", a)
    a, a_min, a_max = _floats_beside(a, a_min, a_max)
    conn = _conn_of(a, a_min, a_max)
    keep: list[pdarray] = []
    args: dict[str, Any] = {}
    _put_operand(args, "a", a, conn, keep)
    for key, bound in (("lo", a_min), ("hi", a_max)):
        if bound is not None:
            _put_operand(args, key, bound, conn, keep)
    result, _ = conn._request("clip", args)
    return _new(conn, result)


def where(condition: pdarray, x: Any, y: Any) -> pdarray:
    """np.where(condition, x, y): x where condition is true, else y.

    >>> ak.where(ak.arange(5) > 2, 1.0, -1.0)
    array([-1., -1., -1.,  1.,  1.])
    """
    x, y = _floats_beside(x, y)
    conn = _conn_of(condition, x, y)
    keep: list[pdarray] = []
    cond = _as_pdarray(condition, conn, keep)
    args: dict[str, Any] = {"cond": cond._live_name()}
    _put_operand(args, "a", x, conn, keep)
    _put_operand(args, "b", y, conn, keep)
    return _new(conn, conn._request("where", args)[0])


def astype(a: pdarray, dtype: DTypeLike) -> pdarray:
    """Cast to dtype with numpy's unsafe casting (a new array).

    >>> ak.astype(ak.array([1.7, -2.2]), np.int32)
    array([ 1, -2], dtype=int32)
    """
    if isinstance(a, Strings):
        return cast(pdarray, a.astype(dtype))
    if _is_str_dtype(dtype):
        # A Strings (ak.cast types it so): Python's str() of each element.
        return cast(pdarray, format_numbers(a))
    result, _ = a._conn._request("astype", {"a": a._live_name(), "dtype": to_wire(dtype)})
    return _new(a._conn, result)


def _is_str_dtype(dtype: Any) -> bool:
    if dtype in (str, "str", "str_", np.str_):
        return True
    try:
        return np.dtype(dtype).kind in "UT"
    except TypeError:
        return False


# -- reductions ---------------------------------------------------------

def _reduce(op: str, a: pdarray, **extra: Any) -> Any:
    result, _ = a._conn._request("reduce", {"op": op, "a": a._live_name(), **extra})
    return _scalar(result)


def sum(a: pdarray) -> Any:  # noqa: A001
    """Sum (ints wrap; bool and signed give int64, unsigned uint64).

    >>> ak.sum(ak.arange(101))
    np.int64(5050)
    """
    return _reduce("sum", a)


def prod(a: pdarray) -> Any:
    """Product (dtypes as sum).

    >>> ak.prod(ak.array([1, 2, 3, 4]))
    np.int64(24)
    """
    return _reduce("prod", a)


def min(a: pdarray) -> Any:  # noqa: A001
    """Smallest element; NaN if any (ValueError when empty).

    >>> ak.min(ak.array([3.0, 1.0, 2.0]))
    np.float64(1.0)
    """
    return _reduce("min", a)


def max(a: pdarray) -> Any:  # noqa: A001
    """Largest element; NaN if any (ValueError when empty).

    >>> ak.max(ak.array([3.0, 1.0, 2.0]))
    np.float64(3.0)
    """
    return _reduce("max", a)


def mean(a: pdarray) -> Any:
    """Arithmetic mean (float64, float32 for float32).

    >>> ak.mean(ak.arange(10))
    np.float64(4.5)
    """
    return _reduce("mean", a)


def var(a: pdarray, ddof: float = 0) -> Any:
    """Variance with `ddof` delta degrees of freedom.

    >>> ak.var(ak.array([1.0, 2.0, 3.0, 4.0]))
    np.float64(1.25)
    >>> ak.var(ak.array([1.0, 2.0, 3.0, 4.0]), ddof=1)
    np.float64(1.6666666666666667)
    """
    return _reduce("var", a, ddof=float(ddof))


def std(a: pdarray, ddof: float = 0) -> Any:
    """Standard deviation with `ddof` delta degrees of freedom.

    >>> ak.std(ak.array([1.0, 2.0, 3.0, 4.0]))
    np.float64(1.118033988749895)
    """
    return _reduce("std", a, ddof=float(ddof))


def argmin(a: pdarray) -> np.int64:
    """Index of the first smallest element (of the first NaN if any).

    >>> ak.argmin(ak.array([3, 1, 2, 1]))
    np.int64(1)
    """
    return cast(np.int64, _reduce("argmin", a))


def argmax(a: pdarray) -> np.int64:
    """Index of the first largest element (of the first NaN if any).

    >>> ak.argmax(ak.array([3, 1, 3]))
    np.int64(0)
    """
    return cast(np.int64, _reduce("argmax", a))


def any(a: pdarray) -> np.bool_:  # noqa: A001
    """True if any element is nonzero (NaN counts).

    >>> ak.any(ak.array([0, 0, 1]))
    np.True_
    """
    return cast(np.bool_, _reduce("any", a))


def all(a: pdarray) -> np.bool_:  # noqa: A001
    """True if every element is nonzero (NaN counts).

    >>> ak.all(ak.array([1, 2, 0]))
    np.False_
    """
    return cast(np.bool_, _reduce("all", a))


def count_nonzero(a: pdarray) -> int:
    """How many elements are nonzero (a Python int, as numpy).

    >>> ak.count_nonzero(ak.array([0, 1, 2, 0]))
    2
    """
    return int(_reduce("count_nonzero", a))


def cumsum(a: pdarray) -> pdarray:
    """Cumulative sum (dtype as sum; floats summed in order, as numpy).

    >>> ak.cumsum(ak.array([1, 2, 3, 4]))
    array([ 1,  3,  6, 10])
    """
    return _new(a._conn, a._conn._request("scan", {"op": "cumsum", "a": a._live_name()})[0])


def cumprod(a: pdarray) -> pdarray:
    """Cumulative product (dtype as prod).

    >>> ak.cumprod(ak.array([1, 2, 3, 4]))
    array([ 1,  2,  6, 24])
    """
    return _new(a._conn, a._conn._request("scan", {"op": "cumprod", "a": a._live_name()})[0])


# -- creation -----------------------------------------------------------

def full(size: int, fill_value: Any, dtype: DTypeLike | None = None, *,
         conn: Connection | None = None) -> pdarray:
    """np.full(size, fill_value, dtype): dtype defaults to fill_value's.

    >>> ak.full(3, 7)
    array([7, 7, 7])
    >>> ak.full(2, 0.5, np.float32)
    array([0.5, 0.5], dtype=float32)
    """
    c = _default_conn(conn)
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    dt = np.dtype(dtype)
    value = np.empty(1, dt)
    value[0] = fill_value  # numpy's conversion and its errors
    result, _ = c._request("full", {"size": int(size), "dtype": to_wire(dt),
                                    "value": value[0].item()})
    return _new(c, result)


def zeros(size: int, dtype: DTypeLike = np.float64, *, conn: Connection | None = None) -> pdarray:
    """np.zeros(size, dtype).

    >>> ak.zeros(3)
    array([0., 0., 0.])
    >>> ak.zeros(2, np.int8)
    array([0, 0], dtype=int8)
    """
    return full(size, 0, dtype, conn=conn)


def ones(size: int, dtype: DTypeLike = np.float64, *, conn: Connection | None = None) -> pdarray:
    """np.ones(size, dtype).

    >>> ak.ones(3, np.int64)
    array([1, 1, 1])
    """
    return full(size, 1, dtype, conn=conn)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: DTypeLike | None = None, *,
           conn: Connection | None = None) -> pdarray:
    """np.arange: int64 for integer arguments, else float64 (numpy's recipe).

    >>> ak.arange(5)
    array([0, 1, 2, 3, 4])
    >>> ak.arange(0, 1, 0.25)
    array([0.  , 0.25, 0.5 , 0.75])
    """
    c = _default_conn(conn)
    if stop is None:
        start, stop = 0, start
    args: dict[str, Any] = {}
    for key, v in (("start", start), ("stop", stop), ("step", step)):
        v = v.item() if isinstance(v, np.generic) else v
        if not isinstance(v, (int, float)):
            raise TypeError(f"arange {key} must be a number, got {type(v).__name__}")
        args[key] = v
    if dtype is not None:
        args["dtype"] = to_wire(dtype)
    return _new(c, c._request("arange", args)[0])


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, *,
             conn: Connection | None = None) -> pdarray:
    """np.linspace (float64).

    >>> ak.linspace(0, 1, 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    c = _default_conn(conn)
    args = {"start": float(start), "stop": float(stop), "num": int(num), "endpoint": bool(endpoint)}
    return _new(c, c._request("linspace", args)[0])


def _random(dist: str, size: int, seed: int | None, conn: Connection | None,
            **extra: Any) -> pdarray:
    c = _default_conn(conn)
    args: dict[str, Any] = {"dist": dist, "size": int(size), **extra}
    if seed is not None:
        args["seed"] = int(seed)
    return _new(c, c._request("random", args)[0])


def randint(low: int, high: int, size: int, dtype: DTypeLike = np.int64, seed: int | None = None,
            *, conn: Connection | None = None) -> pdarray:
    """Uniform integers in [low, high). The same seed gives the same array
    whatever the server's worker count (not numpy's stream).

    >>> ak.randint(0, 10, 10**6, seed=1).max()
    np.int64(9)
    >>> ak.randint(0, 2, 5, seed=7).dtype
    dtype('<i8')

    A float dtype gives uniform floats in [low, high), as Arkouda's
    randint does (ak.uniform).
    """
    if np.dtype(dtype).kind == "f":
        u = uniform(size, float(low), float(high), seed, conn=conn)
        return u if np.dtype(dtype) == np.float64 else u.astype(dtype)
    return _random("randint", size, seed, conn, low=int(low), high=int(high), dtype=to_wire(dtype))


def uniform(size: int, low: float = 0.0, high: float = 1.0, seed: int | None = None, *,
            conn: Connection | None = None) -> pdarray:
    """Uniform float64 in [low, high), seeded like randint.

    >>> ak.uniform(10**6, seed=1).min() >= 0
    np.True_
    >>> ak.uniform(3, -1.0, 1.0, seed=2).size
    3
    """
    return _random("uniform", size, seed, conn, low=float(low), high=float(high))


def standard_normal(size: int, seed: int | None = None, *,
                    conn: Connection | None = None) -> pdarray:
    """Standard normal float64, seeded like randint.

    >>> round(float(ak.standard_normal(10**6, seed=1).std()), 2)
    1.0
    """
    return _random("standard_normal", size, seed, conn)


def concatenate(arrays: Sequence[Any], ordered: bool = True, *, conn: Connection | None = None) -> Any:
    """np.concatenate of 1-D arrays (dtypes promoted); of Categoricals, a
    Categorical over the union of their categories. `ordered` is Arkouda's
    (False lets it interleave): the result is always in order here.

    >>> ak.concatenate([ak.arange(3), ak.array([10, 11])])
    array([ 0,  1,  2, 10, 11])
    """
    cats = [x for x in arrays if _is_categorical(x)]
    if cats:
        return type(cats[0]).concatenate(arrays)
    if builtins.any(isinstance(x, Strings) for x in arrays):
        return Strings.concatenate(arrays)
    c = _conn_of(list(arrays), conn=conn)
    keep: list[pdarray] = []
    names = [_as_pdarray(x, c, keep)._live_name() for x in arrays]
    if not names:
        raise ValueError("need at least one array to concatenate")
    return _new(c, c._request("concatenate", {"names": names})[0])


# -- indexing -----------------------------------------------------------

def _index_key(a: pdarray, key: Any, args: dict[str, Any], keep: list[pdarray]) -> str:
    """Describe key in args; return its kind: index, slice, mask or idx."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        args["index"] = int(key)
        return "index"
    if isinstance(key, slice):
        start, stop, step = key.indices(a.size)
        args.update(start=start, stop=stop, step=step)
        return "slice"
    if isinstance(key, list) and not key:
        key = np.array([], dtype=np.intp)  # numpy's empty index (not float64's)
    if isinstance(key, (np.ndarray, list)):
        key = _as_pdarray(key, a._conn, keep)
    if isinstance(key, pdarray):
        if key.dtype == np.bool_:
            args["mask"] = key._live_name()
            return "mask"
        args["idx"] = key._live_name()
        return "idx"
    raise TypeError(f"pdarray indices must be integers, slices, or bool or integer pdarrays, "
                    f"not {type(key).__name__}")


def getitem(a: pdarray, key: Any) -> Any:
    """a[key]: a numpy scalar for an int, a new pdarray otherwise (slices copy)."""
    keep: list[pdarray] = []
    args: dict[str, Any] = {"a": a._live_name()}
    kind = _index_key(a, key, args, keep)
    if kind == "index":
        return _scalar(a._conn._request("getitem", args)[0])
    if kind == "mask":
        return _new(a._conn, a._conn._request("compress", args)[0])
    cmd = {"slice": "slice", "idx": "take"}[kind]
    return _new(a._conn, a._conn._request(cmd, args)[0])


def setitem(a: pdarray, key: Any, value: Any) -> None:
    """a[key] = value, in place on the server (numpy's casting)."""
    keep: list[pdarray] = []
    args: dict[str, Any] = {"a": a._live_name()}
    _index_key(a, key, args, keep)
    if _is_scalar(value):
        cell = np.empty(1, a.dtype)
        cell[0] = value  # numpy's conversion, and its OverflowError/ValueError
        args["value_scalar"] = cell[0].item()
        args["value_dtype"] = to_wire(a.dtype)
    else:
        args["value"] = _as_pdarray(value, a._conn, keep)._live_name()
    a._conn._request("setitem", args)


# -- sorting and sets ---------------------------------------------------

def sort(a: Any) -> Any:
    """Sorted copy (NaN last), like np.sort; a Categorical's values in string order.

    >>> ak.sort(ak.array([3.0, np.nan, 1.0, 2.0]))
    array([ 1.,  2.,  3., nan])
    """
    if _is_categorical(a) or isinstance(a, Strings):
        return a.sort_values()
    return _new(a._conn, a._conn._request("sort", {"a": a._live_name()})[0])


def argsort(a: Any, ascending: bool = True) -> pdarray:
    """Stable sorting permutation (np.argsort(kind="stable")); NaN last; a
    Categorical's in string order. ``ascending=False`` (Arkouda's) is that
    permutation reversed: largest first, NaN first, ties last to first.

    >>> ak.argsort(ak.array([30, 10, 20, 10]))
    array([1, 3, 2, 0])
    """
    if isinstance(a, Strings):
        return a.argsort(ascending)
    if _is_categorical(a):
        a = a.codes  # its categories are sorted: the codes sort as the strings
    perm = _new(a._conn, a._conn._request("argsort", {"a": a._live_name()})[0])
    return perm if ascending else perm[::-1]


def _extreme_k(a: pdarray, k: int, largest: bool, indices: bool) -> pdarray:
    """The k smallest or largest elements of a in sorted order (NaN last),
    or their indices in stable-argsort order: the element at rank k-1 (n-k)
    found by selection (order_stats), the elements on its side kept, and
    only those sorted. Ties at the boundary keep the first (last) indices,
    as np.argsort(kind="stable")[:k] ([-k:])."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    n, k = a.size, builtins.min(int(k), a.size)
    if k == 0:
        return arange(0, conn=a._conn) if indices else a[:0]
    if k == n:
        return argsort(a) if indices else sort(a)
    rank = n - k if largest else k - 1
    if a.dtype == np.bool_:
        v: Any = np.bool_(rank >= n - count_nonzero(a))  # (falses sort first)
    else:
        v = _order_statistics(a, [rank])[0][0]
    if v != v:  # (the boundary among the NaNs: the sort's own order)
        whole = argsort(a) if indices else sort(a)
        return cast(pdarray, whole[n - k:] if largest else whole[:k])
    keep = binop(">=" if largest else "<=", a, v)
    if largest and a.dtype.kind == "f":
        keep = binop("|", keep, isnan(a))
    picked = a[keep]
    if not indices:
        s = sort(picked)
        return cast(pdarray, s[s.size - k:] if largest else s[:k])
    order = arange(a.size, conn=a._conn)[keep][argsort(picked)]
    return cast(pdarray, order[order.size - k:] if largest else order[:k])


def mink(a: pdarray, k: int) -> pdarray:
    """The k smallest values, ascending (np.sort(a)[:k]; NaN last), found
    by selection on the server: only they and their ties are sorted.

    >>> ak.mink(ak.array([10, 5, 1, 3, 7, 2, 9, 0]), 3)
    array([0, 1, 2])
    """
    return _extreme_k(a, k, False, False)


def maxk(a: pdarray, k: int) -> pdarray:
    """The k largest values, ascending (np.sort(a)[-k:]; NaN counts as largest).

    >>> ak.maxk(ak.array([10, 5, 1, 3, 7, 2, 9, 0]), 3)
    array([ 7,  9, 10])
    """
    return _extreme_k(a, k, True, False)


def argmink(a: pdarray, k: int) -> pdarray:
    """Indices of the k smallest values, in their order
    (np.argsort(a, kind="stable")[:k]: the first of equal values first).

    >>> ak.argmink(ak.array([10, 5, 1, 3, 7, 2, 9, 0]), 3)
    array([7, 2, 5])
    """
    return _extreme_k(a, k, False, True)


def argmaxk(a: pdarray, k: int) -> pdarray:
    """Indices of the k largest values, in their order
    (np.argsort(a, kind="stable")[-k:]).

    >>> ak.argmaxk(ak.array([10, 5, 1, 3, 7, 2, 9, 0]), 3)
    array([4, 6, 0])
    """
    return _extreme_k(a, k, True, True)


def is_sorted(a: pdarray) -> bool:
    """Whether a is in ascending order (each element <= the next; NaNs are
    sorted only at the end, as np.sort leaves them).

    >>> ak.is_sorted(ak.array([1, 2, 2, 5]))
    True
    """
    if isinstance(a, Strings):
        return a.is_sorted()
    if a.size < 2:
        return True
    ordered = binop("<=", a[:-1], a[1:])
    if a.dtype.kind == "f":
        # NaN last: x <= NaN holds, and NaN is followed only by NaN.
        nan_next = isnan(a[1:])
        ordered = binop("|", ordered, nan_next)
        ordered = binop("&", ordered, binop("|", unop("not", isnan(a[:-1])), nan_next))
    return bool(ordered.all())


def coargsort(arrays: Sequence[pdarray]) -> pdarray:
    """Permutation sorting by arrays[0], then arrays[1], ... (stable):
    np.lexsort(arrays[::-1]).

    >>> ak.coargsort([ak.array([1, 0, 1, 0]), ak.array([9, 8, 7, 6])])
    array([3, 1, 2, 0])
    """
    c = _conn_of(*[x._offsets if isinstance(x, Strings) else x for x in arrays])
    # A Strings sorts as its rank among its distinct strings (unique's
    # inverse): one int64 key, in the same order.
    keys = [x.unique(return_inverse=True)[1] if isinstance(x, Strings) else x for x in arrays]
    names = [x._live_name() for x in keys]
    return _new(c, c._request("coargsort", {"names": names})[0])


def unique(a: pdarray | _CategoricalLike, return_inverse: bool = False,
           return_counts: bool = False) -> Any:
    """np.unique: sorted distinct values (NaNs collapse to one), then the
    inverse and the counts when asked for.

    >>> ak.unique(ak.array([3, 1, 3, 2, 1]))
    array([1, 2, 3])
    >>> ak.unique(ak.array([3, 1, 3]), return_counts=True)
    (array([1, 3]), array([1, 2]))
    """
    if _is_categorical(a):
        if return_inverse or return_counts:
            raise TypeError("unique of a Categorical takes no return_inverse/return_counts; "
                            "use cat.value_counts() for the counts")
        return a.unique()
    if isinstance(a, Strings):
        return a.unique(return_inverse=return_inverse, return_counts=return_counts)
    p = cast(pdarray, a)
    result, _ = p._conn._request("unique", {"a": p._live_name(), "return_counts": return_counts,
                                            "return_inverse": return_inverse})
    out = [_new(p._conn, result["values"])]
    if return_inverse:
        out.append(_new(p._conn, result["inverse"]))
    if return_counts:
        out.append(_new(p._conn, result["counts"]))
    return out[0] if len(out) == 1 else tuple(out)


def value_counts(a: pdarray | _CategoricalLike) -> tuple[Any, pdarray]:
    """(distinct values, how often each occurs), as arkouda's value_counts.

    >>> ak.value_counts(ak.array([3, 1, 3, 2, 3]))
    (array([1, 2, 3]), array([1, 1, 3]))
    """
    if _is_categorical(a) or isinstance(a, Strings):
        return a.value_counts()
    values, counts = unique(a, return_counts=True)
    return values, counts


def in1d(a: Any, b: Any, invert: bool = False) -> pdarray:
    """Bool pdarray: whether each element of a is in b (np.isin; NaN is in nothing).

    >>> ak.in1d(ak.arange(5), [1, 3])
    array([False,  True, False,  True, False])
    """
    if _is_categorical(a) or isinstance(a, Strings):
        found = a.isin(b)
        return unop("not", found) if invert else found
    c = _conn_of(a, b)
    keep: list[pdarray] = []
    x, y = _as_pdarray(a, c, keep), _as_pdarray(b, c, keep)
    return _new(c, c._request("in1d", {"a": x._live_name(), "b": y._live_name(),
                                       "invert": bool(invert)})[0])


isin = in1d


def searchsorted(a: Any, v: Any, side: str = "left") -> Any:
    """np.searchsorted on the server: where each element of v would go in
    the sorted a (left: before equal elements; right: after them), in their
    promoted dtype, NaN last; a pdarray of int64, or an int64 for a scalar
    v. a is not checked to be sorted, as in numpy.

    >>> ak.searchsorted(ak.array([1, 3, 5, 7]), ak.array([0, 3, 8]))
    array([0, 1, 4])
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    c = _conn_of(a, v)
    keep: list[pdarray] = []
    scalar = np.ndim(v) == 0 and not isinstance(v, pdarray)
    x = _as_pdarray(np.asarray(a) if not isinstance(a, pdarray) else a, c, keep)
    y = _as_pdarray(np.asarray(v).reshape(-1) if scalar or not isinstance(v, pdarray) else v, c, keep)
    result = _new(c, c._request("searchsorted", {"a": x._live_name(), "v": y._live_name(), "side": side})[0])
    return result[0] if scalar else result


def _setop(op: str, a: Any, b: Any) -> pdarray:
    c = _conn_of(a, b)
    keep: list[pdarray] = []
    x, y = _as_pdarray(a, c, keep), _as_pdarray(b, c, keep)
    return _new(c, c._request("setop", {"op": op, "a": x._live_name(), "b": y._live_name()})[0])


def intersect1d(a: Any, b: Any) -> pdarray:
    """Sorted distinct values in both (np.intersect1d).

    >>> ak.intersect1d(ak.array([1, 2, 3, 4]), ak.array([3, 4, 5]))
    array([3, 4])
    """
    return _setop("intersect1d", a, b)


def union1d(a: Any, b: Any) -> pdarray:
    """Sorted distinct values in either (np.union1d).

    >>> ak.union1d(ak.array([3, 1]), ak.array([2, 1]))
    array([1, 2, 3])
    """
    return _setop("union1d", a, b)


def setdiff1d(a: Any, b: Any) -> pdarray:
    """Sorted distinct values of a not in b (np.setdiff1d).

    >>> ak.setdiff1d(ak.array([1, 2, 3, 4]), ak.array([2, 4]))
    array([1, 3])
    """
    return _setop("setdiff1d", a, b)


def histogram(a: pdarray, bins: int = 10,
              range: tuple[float, float] | None = None) -> tuple[pdarray, pdarray]:  # noqa: A002
    """np.histogram with equal bins: (counts int64, edges float64) as pdarrays.

    >>> counts, edges = ak.histogram(ak.array([1.0, 2.0, 2.5, 4.0]), bins=3)
    >>> counts
    array([1, 2, 1])
    >>> edges
    array([1., 2., 3., 4.])
    """
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool):
        raise TypeError("arktos histogram takes an integer number of bins")
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    args: dict[str, Any] = {"a": a._live_name(), "bins": int(bins)}
    if range is not None:
        args["range_lo"], args["range_hi"] = float(range[0]), float(range[1])
    result, _ = a._conn._request("histogram", args)
    return _new(a._conn, result["counts"]), _new(a._conn, result["edges"])


#: pdarray operator -> binop name.
BINARY_OPERATORS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
}
COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


_ARRAY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.concatenate: _np_concatenate, np.where: _np_where, np.sort: _np_sort, np.unique: _np_unique,
    np.isin: _np_isin, np.intersect1d: _np_setop("intersect1d"), np.union1d: _np_setop("union1d"),
    np.setdiff1d: _np_setop("setdiff1d"), np.count_nonzero: _np_count_nonzero, np.histogram: _np_histogram,
    np.clip: _np_method("clip", True), np.round: _np_method("round", True), np.around: _np_method("round", True),
    np.diff: _np_diff, np.ptp: _np_ptp, np.average: _np_average, np.nonzero: _np_nonzero,
    np.flatnonzero: _np_flatnonzero, np.array_equal: _np_array_equal,
    np.median: _np_median(False), np.nanmedian: _np_median(True),
    np.quantile: _np_quantile(False, False), np.percentile: _np_quantile(True, False),
    np.nanquantile: _np_quantile(False, True), np.nanpercentile: _np_quantile(True, True),
    np.nansum: _np_nansum, np.nanmean: _np_nanmean, np.nanmax: _np_nanminmax("max"),
    np.nanmin: _np_nanminmax("min"), np.dot: _np_dot, np.vdot: _np_dot, np.inner: _np_dot,
    np.linalg.norm: _np_norm, np.isclose: _np_isclose, np.allclose: _np_allclose,
    np.searchsorted: _np_searchsorted, np.digitize: _np_digitize,
    np.full_like: _np_full_like, np.zeros_like: _np_like(0), np.ones_like: _np_like(1),
    np.empty_like: _np_like(0), np.take: _np_take, np.roll: _np_roll,
    np.copy: lambda a, order="K", subok=False: a.copy() if isinstance(a, pdarray) else NotImplemented,
    np.flip: lambda m, axis=None: m[::-1] if isinstance(m, pdarray) and axis in (None, 0, -1) else NotImplemented,
    np.append: lambda arr, values, axis=None: (concatenate([arr, values]) if axis is None
                                                and builtins.all(isinstance(x, pdarray) or np.ndim(x) == 1
                                                                 for x in (arr, values)) else NotImplemented),
    np.ravel: lambda a, order="C": a if isinstance(a, pdarray) else NotImplemented,
    np.bincount: _np_bincount,
    np.nanvar: _np_nanstat("var"), np.nanstd: _np_nanstat("std"), np.nanprod: _np_nanprod,
    np.nanargmin: _np_nanarg("argmin"), np.nanargmax: _np_nanarg("argmax"),
    np.nancumsum: _np_nancum("cumsum"), np.nancumprod: _np_nancum("cumprod"),
    np.cumulative_sum: _np_cumulative("cumsum"), np.cumulative_prod: _np_cumulative("cumprod"),
    np.isposinf: _np_isinf_sign(np.inf), np.isneginf: _np_isinf_sign(-np.inf), np.nan_to_num: _np_nan_to_num,
    np.hstack: _np_hstack, np.extract: _np_extract, np.compress: _np_compress, np.repeat: _np_repeat,
    np.tile: _np_tile, np.setxor1d: _np_setxor1d, np.unique_values: _np_unique_values,
    np.unique_counts: _np_unique_result(np.unique_counts, return_counts=True),
    np.unique_inverse: _np_unique_result(np.unique_inverse, return_inverse=True), np.lexsort: _np_lexsort,
    np.cov: _np_cov, np.corrcoef: _np_corrcoef,
}
_ARRAY_FUNCTIONS.update({getattr(np, name): _np_method(method) for name, method in (
    ("sum", "sum"), ("prod", "prod"), ("min", "min"), ("max", "max"), ("amin", "min"), ("amax", "max"),
    ("mean", "mean"), ("var", "var"), ("std", "std"), ("argmin", "argmin"), ("argmax", "argmax"),
    ("any", "any"), ("all", "all"), ("cumsum", "cumsum"), ("cumprod", "cumprod"), ("argsort", "argsort"))})


_pdarray.bind_operations(sys.modules[__name__])

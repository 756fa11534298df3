"""Arkouda's names for what Arktos already does, so that Arkouda notebooks
run unchanged: ``ak.int64`` and the other dtypes, ``ak.power``,
``ak.median``, ``ak.zeros_like``, ``ak.broadcast``, ``ak.putmask``, ...

Each calls numpy's own function, which hands a pdarray to the server
(pdarray.__array_function__ / __array_ufunc__: docs/operations.md), so the
answer is the one ``np.<name>(a)`` gives; on numpy arrays and scalars they
are numpy's.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
from numpy.typing import DTypeLike

from ..core._default import mem_info
from ._ops import arange, astype, searchsorted
from ._pdarray import pdarray
from ._strings import Strings

__all__ = [
    # dtypes, as Arkouda exports them (numpy's scalar types: dtype=ak.float32)
    "bool_", "dtype", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    # functions
    "broadcast", "cast", "diff", "dot", "fmod", "full_like", "get_mem_avail", "hypot", "arctan2",
    "median", "ones_like", "percentile", "power", "putmask", "quantile", "setxor1d",
    "square", "zeros_like",
]

bool_ = np.bool_
dtype = np.dtype
float32, float64 = np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64


def power(x1: Any, x2: Any) -> Any:
    """x1 ** x2 elementwise (np.power).

    >>> ak.power(ak.arange(4), 2)
    array([0, 1, 4, 9])
    """
    return np.power(x1, x2)


def square(x: Any) -> Any:
    """x * x elementwise (np.square).

    >>> ak.square(ak.array([1.5, -2.0]))
    array([2.25, 4.  ])
    """
    return np.square(x)


def fmod(x1: Any, x2: Any) -> Any:
    """C's remainder, with the sign of x1 (np.fmod).

    >>> ak.fmod(ak.array([-7, 7]), 3)
    array([-1,  1])
    """
    return np.fmod(x1, x2)


def arctan2(y: Any, x: Any) -> Any:
    """The angle of (x, y), in radians (np.arctan2).

    >>> ak.arctan2(ak.array([1.0]), ak.array([1.0]))
    array([0.78539816])
    """
    return np.arctan2(y, x)


def hypot(x1: Any, x2: Any) -> Any:
    """sqrt(x1**2 + x2**2) elementwise (np.hypot).

    >>> ak.hypot(ak.array([3.0]), 4.0)
    array([5.])
    """
    return np.hypot(x1, x2)


def median(a: Any) -> Any:
    """The median, found by selection on the server (np.median).

    >>> ak.median(ak.array([5.0, 1.0, 3.0, 2.0]))
    np.float64(2.5)
    """
    return np.median(a)


def percentile(a: Any, q: Any, method: str = "linear") -> Any:
    """np.percentile(a, q): q in [0, 100], by selection on the server.

    >>> ak.percentile(ak.arange(101), [5, 95])
    array([ 5., 95.])
    """
    return np.percentile(a, q, method=method)  # type: ignore[call-overload]


def quantile(a: Any, q: Any, method: str = "linear") -> Any:
    """np.quantile(a, q): q in [0, 1], by selection on the server.

    >>> ak.quantile(ak.arange(101), 0.25)
    np.float64(25.0)
    """
    return np.quantile(a, q, method=method)  # type: ignore[call-overload]


def dot(a: Any, b: Any) -> Any:
    """The sum of a * b, reduced on the server (np.dot of 1-D arrays).

    >>> ak.dot(ak.arange(4), ak.arange(4))
    np.int64(14)
    """
    return np.dot(a, b)


def setxor1d(a: Any, b: Any, assume_unique: bool = False) -> Any:
    """Sorted values in exactly one of a and b (np.setxor1d).

    >>> ak.setxor1d(ak.array([1, 2, 3]), ak.array([2, 3, 4]))
    array([1, 4])
    """
    return np.setxor1d(a, b, assume_unique=assume_unique)


def zeros_like(a: Any, dtype: DTypeLike | None = None) -> Any:
    """An array of zeros of a's size and dtype, made on the server (np.zeros_like).

    >>> ak.zeros_like(ak.arange(3))
    array([0, 0, 0])
    """
    return np.zeros_like(a, dtype=dtype)


def ones_like(a: Any, dtype: DTypeLike | None = None) -> Any:
    """An array of ones of a's size and dtype, made on the server (np.ones_like).

    >>> ak.ones_like(ak.arange(3), dtype=ak.float64)
    array([1., 1., 1.])
    """
    return np.ones_like(a, dtype=dtype)


def full_like(a: Any, fill_value: Any, dtype: DTypeLike | None = None) -> Any:
    """An array of fill_value of a's size and dtype, made on the server (np.full_like).

    >>> ak.full_like(ak.arange(3), 7)
    array([7, 7, 7])
    """
    return np.full_like(a, fill_value, dtype=dtype)


@overload
def cast(pda: pdarray | Strings, dt: type[str] | Literal["str"]) -> Strings: ...  # type: ignore[overload-overlap]
@overload
def cast(pda: pdarray | Strings, dt: DTypeLike) -> pdarray: ...
def cast(pda: pdarray | Strings, dt: DTypeLike) -> pdarray | Strings:
    """A copy of pda converted to dtype dt, as numpy's astype converts
    (Arkouda's ak.cast); to "str", a Strings of Python's str() of each
    element; from a Strings, the strings read as numbers.

    >>> ak.cast(ak.array([1.7, -1.7]), ak.int64)
    array([ 1, -1])
    >>> ak.cast(ak.arange(3), "str").to_list()
    ['0', '1', '2']
    """
    if isinstance(pda, Strings):
        out: pdarray | Strings = pda.astype(dt)
        return out
    return astype(pda, dt)


def putmask(a: pdarray, mask: pdarray, values: Any) -> None:
    """Set a[i] = values[i % len(values)] wherever mask[i] is True, in
    place on the server (np.putmask, Arkouda's ak.putmask: the value is
    picked by the element's position, not by its rank among the masked
    ones). A scalar sets every masked element.

    >>> a = ak.arange(10)
    >>> ak.putmask(a, a > 2, ak.array([3, 2]))
    >>> a
    array([0, 1, 2, 2, 3, 2, 3, 2, 3, 2])
    """
    if not isinstance(a, pdarray) or not isinstance(mask, pdarray):
        raise TypeError("putmask takes a pdarray and a bool pdarray mask; "
                        f"got {type(a).__name__} and {type(mask).__name__}")
    if mask.dtype != np.bool_ or mask.size != a.size:
        raise ValueError(f"putmask: mask must be a bool pdarray of a's length {a.size}; "
                         f"got {mask.dtype} of length {mask.size}")
    scalar = not isinstance(values, pdarray) and np.ndim(values) == 0
    if not scalar and not isinstance(values, pdarray):
        values = np.asarray(values)
    # numpy's casting rule (safe, Python scalars weak), and its TypeError,
    # from numpy itself on one element.
    np.putmask(np.empty(1, a.dtype), np.ones(1, np.bool_), values if scalar else np.empty(1, values.dtype))
    if scalar:
        a[mask] = values
        return
    if not isinstance(values, pdarray):
        values = a._conn.array(values)
    if values.size == 0:
        if mask.any():
            raise ValueError("putmask: values is empty but mask selects elements; "
                             "give at least one value")
        return
    if values.size == a.size:
        a[mask] = values[mask]
    else:
        a[mask] = values[arange(a.size, conn=a._conn)[mask] % values.size]


def broadcast(segments: pdarray, values: pdarray, size: int = -1,
              permutation: pdarray | None = None) -> pdarray:
    """Each segment's value repeated over its rows (Arkouda's ak.broadcast):
    row i gets values[j] for the last segment j whose start segments[j] is
    at most i. `segments` are ascending row offsets starting at 0 (as
    GroupBy.segments), `values` one per segment. With `permutation` (as
    GroupBy.permutation) the rows are put back in their original order:
    result[permutation[i]] is row i's value; `size` is then its length.

    >>> ak.broadcast(ak.array([0, 2, 5]), ak.array([10, 20, 30]), size=6)
    array([10, 10, 20, 20, 20, 30])
    """
    if not isinstance(segments, pdarray) or not isinstance(values, pdarray):
        raise TypeError("broadcast takes pdarrays of segment starts and values; "
                        f"got {type(segments).__name__} and {type(values).__name__}")
    if segments.size != values.size:
        raise ValueError(f"broadcast: {segments.size} segments but {values.size} values; "
                         "give one value per segment")
    if permutation is not None:
        if size not in (-1, permutation.size):
            raise ValueError(f"broadcast: size {size} differs from the permutation's "
                             f"length {permutation.size}")
        size = permutation.size
    if size < 0:
        raise ValueError("broadcast: give size (the number of rows) or permutation")
    if size == 0:
        empty: pdarray = values[:0]
        return empty
    if segments.size == 0:
        raise ValueError(f"broadcast: no segments to spread over {size} rows")
    if (first := int(segments[0])) != 0:  # (one request)
        raise ValueError(f"broadcast: the first segment starts at {first}; "
                         "segments are row offsets starting at 0 (as GroupBy.segments)")
    rows = arange(size, conn=segments._conn)
    out: pdarray = values[searchsorted(segments, rows, side="right") - 1]
    if permutation is None:
        return out
    result = out.copy()
    result[permutation] = out
    return result


def get_mem_avail() -> int:
    """Bytes the server can still store under --max-memory (Arkouda's
    ak.get_mem_avail: mem_info()["free"]).

    >>> ak.get_mem_avail() > 0
    True
    """
    return mem_info()["free"]


def diff(a: pdarray, n: int = 1) -> pdarray:
    """The n-th discrete difference, as np.diff: ``a[1:] - a[:-1]``, n times
    (numpy's dtypes: unsigned ints wrap; for bools ``a[1:] != a[:-1]``).

    >>> ak.diff(ak.array([1, 4, 9, 16]))
    array([3 5 7])
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"diff's order n must be a non-negative int, got {n!r}")
    for _ in range(int(n)):
        if a.size == 0:
            break
        a = (a[1:] != a[:-1]) if a.dtype == np.bool_ else a[1:] - a[:-1]
    return a

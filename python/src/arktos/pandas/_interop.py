"""pandas, Arrow and DLPack interop: move columns between them and the server.

Uploads read straight from the source's memory where it already is a
contiguous little-endian numeric buffer (a numpy-backed Series or an Arrow
array without nulls): ``Series.to_numpy()`` and ``Array.to_numpy()`` return
views there, and ak.array() sends from that view with no copy. Downloads
land in one new numpy array, which ``pd.Series`` and ``pa.array`` wrap
without copying (bool columns are the exception for Arrow, which packs
booleans into bits).

pandas and pyarrow are imported only when these functions run; install them
with ``pip install pandas pyarrow``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core._dtypes import SUPPORTED, to_wire
from ..numpy import _pdarray
from ..numpy._ops import _default_conn
from ..numpy._pdarray import pdarray
from ..numpy._strings import Strings
from ._categorical import Categorical
from ._optional import _import

if TYPE_CHECKING:
    from ..numpy._connection import Connection

__all__ = ["from_arrow", "from_dlpack", "from_pandas", "to_arrow", "to_pandas"]


def _conn(conn: Connection | None) -> Connection:
    return _default_conn(conn)


def _numeric(dtype: Any, what: str) -> np.dtype[Any]:
    """The numpy dtype for a column's dtype, or TypeError when Arktos cannot store it."""
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
        to_wire(dt)
    except TypeError:
        raise TypeError(f"{what} has dtype {dtype}, which arktos cannot store; supported: "
                        f"{SUPPORTED} (and strings, as Categoricals). Convert it first "
                        "(datetimes: .astype('int64'))") from None
    return dt


def _series_values(series: Any, what: str) -> np.ndarray:
    """A pandas Series or Index as a numpy array, a view where pandas allows."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        _numeric(dtype, what)
        values: np.ndarray = series.to_numpy(copy=False)
        return values
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # nullable and Arrow-backed dtypes
    if numpy_dtype is None or np.dtype(numpy_dtype).kind not in "iufb":
        _numeric(str(dtype), what)  # raises: strings, categories, datetimes, ...
    target = _numeric(numpy_dtype, what)
    if series.hasnans:
        raise ValueError(f"{what} has missing values, which arktos arrays cannot hold; "
                         "fill or drop them first, e.g. s.fillna(0) or s.dropna()")
    converted: np.ndarray = series.to_numpy(dtype=target)
    return converted


def _is_text(series: Any) -> bool:
    """Whether a pandas column holds strings (object, string or category dtype)."""
    pd = _import("pandas")
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return True
    if isinstance(dtype, pd.StringDtype):
        return True
    return isinstance(dtype, np.dtype) and dtype.kind == "O"


def _upload_column(series: Any, what: str, c: Connection) -> Any:
    if _is_text(series):
        try:
            return Categorical(series, conn=c)
        except (TypeError, ValueError) as err:
            if type(err) not in (TypeError, ValueError):
                raise  # a server's refusal: its own class and code
            raise type(err)(f"{what}: {err}") from None
    return c.array(_series_values(series, what))


def from_pandas(obj: Any, *, conn: Connection | None = None) -> Any:
    """Upload a pandas Series (or Index) as a pdarray, or a DataFrame as a
    dict of pdarrays, one per column (keys: the column names as str).

    Numeric and bool columns are supported, numpy-backed (sent from
    pandas' own buffer, no copy) or nullable/Arrow-backed without missing
    values; string and category columns become Categoricals. The index is
    not uploaded. Missing values raise ValueError, other dtypes TypeError.

    >>> df = pd.DataFrame({"zone": [1, 2, 2], "fare": [9.5, 12.0, 7.25]})
    >>> cols = ak.from_pandas(df)
    >>> cols["fare"]
    array([ 9.5 , 12.  ,  7.25])
    >>> ak.from_pandas(df["zone"]).sum()
    np.int64(5)
    """
    pd = _import("pandas")
    c = _conn(conn)
    if isinstance(obj, pd.DataFrame):
        names = [str(column) for column in obj.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"the DataFrame has duplicate column names {names}; rename them first")
        return {names[i]: _upload_column(obj.iloc[:, i], f"column {names[i]!r}", c)
                for i in range(len(names))}
    if isinstance(obj, (pd.Series, pd.Index)):
        return _upload_column(obj, f"the {type(obj).__name__}", c)
    raise TypeError(f"from_pandas takes a pandas Series, Index or DataFrame, got {type(obj).__name__}")


def to_pandas(obj: pdarray | Categorical | Strings | Mapping[str, Any], name: Any = None) -> Any:
    """Download a pdarray as a pandas Series, or a dict of pdarrays as a
    DataFrame (a Categorical as a category column).

    The Series wraps the downloaded numpy array without another copy.
    ``name`` names the Series (default: none).

    >>> ak.to_pandas(ak.arange(3), name="n")
    0    0
    1    1
    2    2
    Name: n, dtype: int64
    >>> ak.to_pandas({"a": ak.arange(2), "b": ak.ones(2)})
       a    b
    0  0  1.0
    1  1  1.0
    """
    pd = _import("pandas")
    if isinstance(obj, pdarray):
        return pd.Series(obj.to_ndarray(), name=name, copy=False)
    if isinstance(obj, Categorical):
        return pd.Series(obj.to_pandas(), name=name)
    if isinstance(obj, Strings):
        return pd.Series(obj.to_ndarray().astype(object), name=name)
    if isinstance(obj, Mapping):
        columns: dict[Any, Any] = {}
        for key, value in obj.items():
            if isinstance(value, Categorical):
                columns[key] = value.to_pandas()
                continue
            if isinstance(value, Strings):
                columns[key] = value.to_ndarray().astype(object)
                continue
            if hasattr(value, "segments") and hasattr(value, "to_ndarray"):  # a SegArray: an array per row
                columns[key] = value.to_ndarray()
                continue
            if isinstance(value, np.ndarray):  # (already here)
                columns[key] = value
                continue
            if not isinstance(value, pdarray):
                raise TypeError(f"to_pandas: column {key!r} is a {type(value).__name__}, not a pdarray")
            columns[key] = value.to_ndarray()
        return pd.DataFrame(columns, copy=False)
    raise TypeError(f"to_pandas takes a pdarray or a dict of pdarrays, got {type(obj).__name__}")


def _arrow_values(array: Any, what: str) -> np.ndarray:
    pa = _import("pyarrow")
    if isinstance(array, pa.ChunkedArray) and array.num_chunks == 1:
        array = array.chunk(0)
    kind = array.type
    if not (pa.types.is_integer(kind) or pa.types.is_boolean(kind)
            or (pa.types.is_floating(kind) and not pa.types.is_float16(kind))):
        raise TypeError(f"{what} has Arrow type {kind}, which arktos cannot store; supported: "
                        f"{SUPPORTED}, and strings (as Categoricals)")
    if array.null_count:
        raise ValueError(f"{what} has {array.null_count} nulls, which arktos arrays cannot hold; "
                         "fill them first, e.g. pyarrow.compute.fill_null(a, 0)")
    # Numeric Arrow arrays without nulls convert as views; bool and several
    # chunks need one copy.
    values: np.ndarray = array.to_numpy(zero_copy_only=False)
    return values


def _arrow_is_text(array: Any) -> bool:
    pa = _import("pyarrow")
    kind = array.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or getattr(pa.types, "is_string_view", lambda _: False)(kind))


def _arrow_column(array: Any, what: str, c: Connection) -> Any:
    """A numeric Arrow column as a pdarray, a string or dictionary-of-string
    one as a Categorical (its dictionary's strings sorted, the codes
    renumbered to match, through pandas' Categorical)."""
    if not _arrow_is_text(array):
        return c.array(_arrow_values(array, what))
    if array.null_count:
        raise ValueError(f"{what} has {array.null_count} nulls, which a Categorical cannot hold yet; "
                         "fill them first, e.g. pyarrow.compute.fill_null(a, 'N/A')")
    pa = _import("pyarrow")
    if not pa.types.is_dictionary(array.type):
        array = array.dictionary_encode()
    if isinstance(array, pa.ChunkedArray):
        array = array.unify_dictionaries().combine_chunks() if array.num_chunks else pa.array(
            [], array.type)
    return Categorical(array.to_pandas(), conn=c)  # a pandas Categorical: codes kept, renumbered if unsorted


def from_arrow(obj: Any, *, conn: Connection | None = None) -> Any:
    """Upload a pyarrow Array or ChunkedArray as a pdarray, or a Table or
    RecordBatch as a dict of pdarrays by column name.

    Integer, float32/float64 and bool columns without nulls are supported,
    and string or dictionary-of-string ones become Categoricals. A numeric
    Array (or one-chunk ChunkedArray) is sent straight from Arrow's buffer,
    no copy; bool columns and several chunks are copied once.

    >>> t = pa.table({"x": [1, 2, 3], "y": [0.5, 1.5, 2.5]})
    >>> ak.from_arrow(t)["y"].sum()
    np.float64(4.5)
    >>> ak.from_arrow(pa.array([True, False]))
    array([ True, False])
    """
    pa = _import("pyarrow")
    c = _conn(conn)
    if isinstance(obj, (pa.Table, pa.RecordBatch)):
        names = list(obj.schema.names)
        if len(set(names)) != len(names):
            raise ValueError(f"the {type(obj).__name__} has duplicate column names {names}")
        return {names[i]: _arrow_column(obj.column(i), f"column {names[i]!r}", c)
                for i in range(len(names))}
    if isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return _arrow_column(obj, "the Arrow array", c)
    raise TypeError(f"from_arrow takes a pyarrow Array, ChunkedArray, Table or RecordBatch, "
                    f"got {type(obj).__name__}")


def to_arrow(obj: pdarray | Categorical | Mapping[str, pdarray | Categorical]) -> Any:
    """Download a pdarray as a pyarrow Array, or a dict of pdarrays as a Table.

    Numeric arrays wrap the downloaded buffer without another copy; bool
    arrays are packed into Arrow's bitmaps; a Categorical becomes a
    DictionaryArray of its codes and categories.

    >>> ak.to_arrow(ak.arange(3))
    <pyarrow.lib.Int64Array object at ...>
    [
      0,
      1,
      2
    ]
    >>> ak.to_arrow({"x": ak.arange(3)}).num_rows
    3
    """
    pa = _import("pyarrow")
    if isinstance(obj, pdarray):
        return pa.array(obj.to_ndarray())
    if isinstance(obj, Categorical):
        return pa.DictionaryArray.from_arrays(pa.array(obj.codes.to_ndarray()), pa.array(obj.categories))
    if isinstance(obj, Mapping):
        return pa.table({str(k): to_arrow(v) for k, v in obj.items()})
    raise TypeError(f"to_arrow takes a pdarray or a dict of pdarrays, got {type(obj).__name__}")


def from_dlpack(x: Any, *, conn: Connection | None = None) -> pdarray:
    """Upload any CPU array that speaks DLPack (torch, jax, cupy on host, ...)
    through ``np.from_dlpack``: a view of its memory, sent with no copy.

    >>> t = torch.arange(5)
    >>> ak.from_dlpack(t)
    array([0, 1, 2, 3, 4])
    """
    return _conn(conn).array(np.from_dlpack(x))


_pdarray.register_conversion("to_pandas", to_pandas)
_pdarray.register_conversion("to_arrow", to_arrow)

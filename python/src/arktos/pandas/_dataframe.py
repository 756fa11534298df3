"""DataFrame: named columns of one length on the server, as Arkouda's
``ak.DataFrame``, and its group-by (docs/operations.md, "DataFrame").

    >>> df = ak.DataFrame({"zone": zones, "fare": fares, "tip": tips})
    >>> df.groupby("zone").sum()                  # one server request
    >>> df[df["fare"] > 10].sort_values("tip", ascending=False).head()
    >>> df.groupby(["zone", "hour"], as_index=False).agg(total=("fare", "sum"), n=("fare", "size"))

Each column is a pdarray or a Categorical (strings); the client holds no
rows, only the names and which arrays they are. Selecting rows (a mask,
an index array, a slice, ``head``, ``sort_values``) gathers every column on
the server. The index is the rows' labels: ``0 .. n-1`` until rows are
selected (then the selected rows' labels, as pandas keeps them) or a
group-by puts its keys there (``as_index=True``); ``reset_index`` makes
it ``0 .. n-1`` again.

A group-by's aggregations of several columns go to the server as one
named ``agg`` request (``GroupBy.agg``), so the grouping and every
column's aggregation share it; a Categorical column is aggregated by its
codes (first, mode, min, max give strings back).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from ..core._errors import UnknownArrayError
from ..numpy._ops import (
    _counted,
    _default_conn,
    arange,
    argsort,
    astype,
    binop,
    coargsort,
    concatenate,
    full,
    sort,
    unique,
    unop,
    where,
    zeros,
)
from ..numpy._pdarray import pdarray
from ..numpy._strings import Strings
from ._categorical import Categorical, _from_strings, _register_all
from ._groupby import AGGREGATIONS, CATEGORICAL_AGGREGATIONS, GroupBy, _aggregation
from ._interop import _upload_column, from_pandas, to_pandas
from ._io import to_csv, to_hdf, to_parquet
from ._optional import _import
from ._segarray import SegArray

if TYPE_CHECKING:
    from ..numpy._connection import Connection

__all__ = ["DataFrame", "DataFrameGroupBy", "merge"]

Column = Union[pdarray, Categorical, Strings, SegArray]

#: rows shown by repr before it shows the first and last ones only (pandas' display.max_rows is 60)
_REPR_ROWS = 20


def _conn_of(col: Column) -> Connection:
    if isinstance(col, SegArray):
        return col.segments._conn
    return col.codes._conn if isinstance(col, Categorical) else col._conn


def _sort_key(col: Column) -> pdarray:
    """A column as one array that sorts as it does: a Categorical's codes
    (its categories are sorted), a Strings' ranks among its distinct
    strings."""
    if isinstance(col, Categorical):
        return col.codes
    if isinstance(col, Strings):
        ranks: pdarray = col.unique(return_inverse=True)[1]
        return ranks
    if isinstance(col, SegArray):
        raise TypeError("a SegArray column has no order to sort by; sort by another column")
    return col


def _concat(cols: Sequence[Column]) -> Column:
    """Columns one after another (SegArrays by SegArray.concat)."""
    segs = [c for c in cols if isinstance(c, SegArray)]
    if segs and len(segs) == len(cols):
        return SegArray.concat(segs)
    out: Column = concatenate(list(cols))
    return out


def _upload(value: Any, what: str, conn: Connection | None) -> Column:
    """A column as the DataFrame keeps it: a pdarray or Categorical as
    given, else uploaded (strings as a Categorical, a pandas Series as
    ak.from_pandas takes it)."""
    if isinstance(value, (pdarray, Categorical, Strings, SegArray)):
        return value
    c = _default_conn(conn)
    if type(value).__module__.startswith("pandas"):
        return _upload_column(value, what, c)  # type: ignore[no-any-return]
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind in "USO":
        return Categorical(arr, conn=c)
    return c.array(arr)


def _is_label(x: Any) -> bool:
    return isinstance(x, str)


class DataFrame:
    """Named columns of one length, each a pdarray or a Categorical, kept on
    the server (Arkouda's ``ak.DataFrame``).

    ``DataFrame(data)`` takes a dict of columns (pdarrays, Categoricals, or
    numpy arrays and lists, uploaded: strings as Categoricals), a pandas
    DataFrame (uploaded as ``ak.from_pandas``; a non-default index too), or
    a list of columns with ``columns=`` their names. ``index`` gives the
    rows' labels (default ``0 .. n-1``).

    >>> df = ak.DataFrame({"zone": ak.array([1, 2, 1]), "fare": ak.array([9.5, 12.0, 7.25])})
    >>> df
       zone   fare
    0     1   9.50
    1     2  12.00
    2     1   7.25
    >>> df.groupby("zone").sum()
           fare
    zone
    1     16.75
    2     12.00
    """

    def __init__(self, data: Any = None, index: Any = None, columns: Sequence[str] | None = None, *,
                 conn: Connection | None = None) -> None:
        self._columns: dict[str, Column] = {}
        self._index: list[Column] | None = None  # None: 0 .. n-1
        self._index_names: list[Any] = [None]
        self._nrows = 0
        self._registered: str | None = None  # the name register() or attach() kept it under
        if isinstance(data, DataFrame):
            if columns is not None:
                data = data[list(columns)]
            self._columns = dict(data._columns)
            self._index, self._index_names, self._nrows = data._index, list(data._index_names), data._nrows
        elif data is not None and type(data).__name__ == "DataFrame" and hasattr(data, "iloc"):
            self._from_pandas(data, conn)
            if columns is not None:
                self._columns = dict(self[list(columns)]._columns)
        elif isinstance(data, Mapping):
            items = list(data.items())
            if columns is not None:
                missing = [c for c in columns if c not in data]
                if missing:
                    raise KeyError(f"columns {missing} are not in the data; it has {list(data)}")
                items = [(c, data[c]) for c in columns]
            self._set_columns(items, conn)
        elif isinstance(data, (list, tuple)):
            if columns is None or len(columns) != len(data):
                raise ValueError("a list of columns needs columns= with a name for each, got "
                                 f"{len(data)} columns and {None if columns is None else len(columns)} names")
            self._set_columns(list(zip(columns, data)), conn)
        elif data is not None:
            raise TypeError(f"DataFrame takes a dict of columns, a pandas DataFrame, a DataFrame or a list "
                            f"of columns with columns=, got {type(data).__name__}")
        if index is not None:
            self._set_index(index, conn)

    def _set_columns(self, items: Sequence[tuple[Any, Any]], conn: Connection | None) -> None:
        if conn is None:  # upload onto the connection of the columns already on the server
            conn = next((_conn_of(v) for _, v in items if isinstance(v, (pdarray, Categorical, Strings, SegArray))), None)
        for name, value in items:
            if not _is_label(name):
                raise TypeError(f"column names are str, got {name!r}")
            self[name] = _upload(value, f"column {name!r}", conn)

    def _set_index(self, index: Any, conn: Connection | None) -> None:
        parts = list(index) if isinstance(index, (list, tuple)) and index and not np.isscalar(index[0]) \
            else [index]
        cols: list[Column] = []
        for i, part in enumerate(parts):
            col = _upload(part, "the index", conn if conn is not None else self._conn_or_none())
            if self._columns and col.size != self._nrows:
                raise ValueError(f"the index has {col.size} labels but the DataFrame has {self._nrows} rows")
            if i and col.size != cols[0].size:
                raise ValueError("the index's arrays must have one length")
            cols.append(col)
        self._index, self._index_names = cols, [None] * len(cols)
        if not self._columns:
            self._nrows = cols[0].size

    def _from_pandas(self, pdf: Any, conn: Connection | None) -> None:
        c = _default_conn(conn)
        self._set_columns(list(from_pandas(pdf, conn=c).items()), c)
        self._nrows = len(pdf)
        idx = pdf.index
        if type(idx).__name__ == "RangeIndex" and idx.start == 0 and idx.step == 1:
            return
        levels = [idx.get_level_values(i) for i in range(idx.nlevels)]
        self._index = [_upload_column(level, "the index", c) for level in levels]
        self._index_names = list(idx.names)

    def _conn_or_none(self) -> Connection | None:
        for col in self._columns.values():
            return _conn_of(col)
        return _conn_of(self._index[0]) if self._index else None

    def _conn(self) -> Connection:
        return _default_conn(self._conn_or_none())

    @classmethod
    def _make(cls, columns: dict[str, Column], index: list[Column] | None, names: list[Any],
              nrows: int) -> DataFrame:
        out = cls.__new__(cls)
        out._columns, out._index, out._index_names, out._nrows = columns, index, names, nrows
        out._registered = None
        return out

    @classmethod
    def from_pandas(cls, pd_df: Any, *, conn: Connection | None = None) -> DataFrame:
        """Upload a pandas DataFrame (as ``ak.DataFrame(pd_df)``).

        >>> ak.DataFrame.from_pandas(pd.DataFrame({"a": [1, 2]})).columns
        ['a']
        """
        return cls(pd_df, conn=conn)

    # -- what it is ---------------------------------------------------------

    @property
    def columns(self) -> list[str]:
        """The column names, in order.

        >>> df.columns
        ['zone', 'fare']
        """
        return list(self._columns)

    @property
    def dtypes(self) -> dict[str, Any]:
        """Each column's dtype: a numpy dtype, or "category" for a
        Categorical (as pandas names it).

        >>> df.dtypes
        {'zone': dtype('int64'), 'fare': dtype('float64')}
        """
        def dtype(c: Column) -> Any:
            if isinstance(c, Categorical):
                return "category"
            return "str" if isinstance(c, Strings) else "SegArray" if isinstance(c, SegArray) else c.dtype
        return {n: dtype(c) for n, c in self._columns.items()}

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns).

        >>> df.shape
        (3, 2)
        """
        return self._nrows, len(self._columns)

    @property
    def size(self) -> int:
        """rows × columns, as pandas'.

        >>> df.size
        6
        """
        return self._nrows * len(self._columns)

    @property
    def empty(self) -> bool:
        """Whether it has no rows or no columns.

        >>> ak.DataFrame().empty
        True
        """
        return self._nrows == 0 or not self._columns

    def __len__(self) -> int:
        return self._nrows

    @property
    def index(self) -> Any:
        """The rows' labels: a pdarray (made on the server for ``0 .. n-1``)
        or Categorical, or a tuple of them after a group-by by several keys.

        >>> df[df["fare"] > 9].index
        array([0, 1])
        """
        cols = self._index_cols()
        return cols[0] if len(cols) == 1 else tuple(cols)

    def _index_cols(self) -> list[Column]:
        if self._index is not None:
            return self._index
        return [arange(self._nrows, conn=self._conn())]

    def __contains__(self, name: object) -> bool:
        return name in self._columns

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def keys(self) -> list[str]:
        """The column names (as pandas' and a dict's ``keys``).

        >>> df.keys()
        ['zone', 'fare']
        """
        return self.columns

    def items(self) -> Iterator[tuple[str, Column]]:
        """(name, column) pairs, in order.

        >>> [name for name, col in df.items()]
        ['zone', 'fare']
        """
        return iter(list(self._columns.items()))

    # -- columns and rows ---------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        if _is_label(key):
            try:
                return self._columns[key]
            except KeyError:
                raise KeyError(f"no column {key!r}; the columns are {self.columns}") from None
        if isinstance(key, (list, tuple)) and all(_is_label(k) for k in key) and (key or isinstance(key, list)):
            missing = [k for k in key if k not in self._columns]
            if missing:
                raise KeyError(f"no columns {missing}; the columns are {self.columns}")
            if len(set(key)) != len(key):
                raise ValueError(f"columns {list(key)} name one column twice")
            return DataFrame._make({k: self._columns[k] for k in key}, self._index,
                                   list(self._index_names), self._nrows)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            i = int(key) + self._nrows if key < 0 else int(key)
            if not 0 <= i < self._nrows:
                raise IndexError(f"row {int(key)} is out of bounds for {self._nrows} rows")
            return {n: c[i] for n, c in self._columns.items()}
        if isinstance(key, slice):
            return self._take(key)
        if isinstance(key, pdarray):
            return self._take(self._rows_key(key))
        if isinstance(key, (list, np.ndarray)):
            arr = np.asarray(key)
            if arr.dtype.kind not in "iub" or arr.ndim != 1:
                raise TypeError(f"rows are selected by a bool mask or integer positions, got {arr.dtype} "
                                f"of shape {arr.shape}")
            return self._take(self._rows_key(self._conn().array(arr)))
        raise TypeError(f"a DataFrame is indexed by a column name, a list of names, a row, a slice, a "
                        f"bool mask or integer positions, got {type(key).__name__}")

    def _rows_key(self, key: pdarray) -> pdarray:
        if key.dtype == np.bool_:
            if key.size != self._nrows:
                raise ValueError(f"the mask has {key.size} elements but the DataFrame has {self._nrows} rows")
        elif key.dtype.kind not in "iu":
            raise TypeError(f"rows are selected by a bool mask or integer positions, got a {key.dtype} pdarray")
        return key

    def _take(self, key: pdarray | slice, positions_valid: bool = False) -> DataFrame:
        """The rows key selects (a mask, positions or a slice), every column
        and the index gathered on the server in one request
        (``compress_many`` or ``take_many``). With ``positions_valid`` (a
        permutation or other positions known to be in 0..n-1), key itself
        is the new labels of a ``0 .. n-1`` index, gathering nothing."""
        cols = list(self._columns.values())
        index = self._index
        if isinstance(key, slice):
            start, stop, step = key.indices(self._nrows)
            columns = {n: c[key] for n, c in self._columns.items()}
            labels = [c[key] for c in index] if index is not None else \
                [arange(start, stop, step, conn=self._conn())]
            return DataFrame._make(columns, labels, list(self._index_names), len(range(start, stop, step)))
        c = key._conn
        implicit = index is None
        parts: list[Column] = cols + (index if index is not None else [])
        if implicit and key.dtype != np.bool_ and not positions_valid:
            parts.append(arange(self._nrows, conn=c))  # negative positions count from the end
        # A Strings column is gathered by its own request; the others in one.
        text = {i: p for i, p in enumerate(parts) if isinstance(p, (Strings, SegArray))}
        parts_sent = [p for i, p in enumerate(parts) if i not in text]
        arrays = [p.codes if isinstance(p, Categorical) else p for p in parts_sent
                  if not isinstance(p, (Strings, SegArray))]
        names = [a._live_name() for a in arrays]
        if key.dtype == np.bool_:
            result, _ = c._request("compress_many", {"arrays": names, "mask": key._live_name(),
                                                     "positions": implicit})
        elif names:
            result, _ = c._request("take_many", {"arrays": names, "idx": key._live_name()})
        else:
            result = {"arrays": []}
        got = [c._pdarray(info, owned=True) for info in result["arrays"]]
        sent: list[Column] = [Categorical._wrap(g, p.categories) if isinstance(p, Categorical) else g
                              for g, p in zip(got, parts_sent)]
        gathered = iter(sent)
        out: list[Column] = [text[i][key] if i in text else next(gathered) for i in range(len(parts))]
        if implicit:
            if key.dtype == np.bool_:
                labels = [c._pdarray(result["positions"], owned=True)]
            elif positions_valid:
                labels = [key]
            else:
                labels = [out.pop()]
        else:
            labels = out[len(cols):]
        nrows = labels[0].size
        return DataFrame._make(dict(zip(self._columns, out[:len(cols)])), labels,
                               list(self._index_names), nrows)

    @property
    def iloc(self) -> _ILoc:
        """Rows (and columns) by position, as pandas': ``df.iloc[rows]``,
        ``df.iloc[rows, cols]`` (rows an int, a slice, positions or a mask;
        cols an int, a slice, a list of ints or a bool mask); one column gives
        its pdarray or Categorical. ``df.iloc[rows, j] = value`` writes as
        pandas' copy-on-write: into a copy of the column that this frame
        then holds alone.

        >>> df.iloc[1:3, 1]
        array([12.  ,  7.25])
        """
        return _ILoc(self)

    @property
    def loc(self) -> _Loc:
        """Rows (and columns) by label, as pandas': ``df.loc[mask]``,
        ``df.loc[labels, "fare"]``, ``df.loc[2:5, ["a", "b"]]`` (a label slice
        includes its end). Labels are the index's: ``0 .. n-1`` by default,
        or one integer level of distinct labels (found on the server by
        ``lookup``). ``df.loc[mask, "fare"] = 0`` writes as ``iloc`` does.

        >>> df.loc[df["fare"] > 9, "zone"]
        array([1, 2])
        """
        return _Loc(self)

    def __setitem__(self, name: str, value: Any) -> None:
        if not _is_label(name):
            raise TypeError(f"column names are str, got {name!r}")
        if isinstance(value, DataFrame):
            if len(value.columns) != 1:
                raise ValueError(f"a DataFrame of {len(value.columns)} columns cannot be one column")
            value = value[value.columns[0]]
        if np.isscalar(value):
            if not (self._columns or self._index is not None):
                raise ValueError("a scalar column needs rows: give the DataFrame a column or an index first")
            if isinstance(value, str):
                value = Categorical._wrap(zeros(self._nrows, np.int8, conn=self._conn()), np.array([value]))
            else:
                value = full(self._nrows, value, conn=self._conn())
        own = self._conn_or_none()
        col = _upload(value, f"column {name!r}", own)
        if own is not None and _conn_of(col) is not own:
            raise ValueError(f"column {name!r} is on another connection than the DataFrame's columns; "
                             "a DataFrame's columns live on one server connection")
        if (self._columns or self._index is not None) and col.size != self._nrows:
            raise ValueError(f"column {name!r} has {col.size} rows but the DataFrame has {self._nrows}")
        if not self._columns and self._index is None:
            self._nrows = col.size
        self._columns[name] = col

    def __delitem__(self, name: str) -> None:
        if name not in self._columns:
            raise KeyError(f"no column {name!r}; the columns are {self.columns}")
        del self._columns[name]

    def drop(self, keys: str | Sequence[str] | None = None, axis: int | str = 1, *,
             columns: str | Sequence[str] | None = None) -> DataFrame:
        """Without the named columns (Arkouda's ``drop(keys, axis=1)``,
        pandas' ``drop(columns=...)``).

        >>> df.drop("fare").columns
        ['zone']
        """
        if columns is not None:
            keys = columns
        if axis not in (1, "columns"):
            raise ValueError("drop removes columns (axis=1); select rows with a mask instead, "
                             "e.g. df[df['zone'] != 3]")
        if keys is None:
            raise TypeError("drop needs the columns to remove")
        names = [keys] if isinstance(keys, str) else list(keys)
        missing = [n for n in names if n not in self._columns]
        if missing:
            raise KeyError(f"no columns {missing}; the columns are {self.columns}")
        return self[[n for n in self._columns if n not in names]]  # type: ignore[no-any-return]

    def rename(self, columns: Mapping[str, str] | Callable[[str], str] | None = None) -> DataFrame:
        """Columns renamed by a mapping (names it lacks are kept) or a function.

        >>> df.rename(columns={"fare": "amount"}).columns
        ['zone', 'amount']
        """
        if columns is None:
            return self.copy(deep=False)
        new = [(columns(n) if callable(columns) else columns.get(n, n)) for n in self._columns]
        if len(set(new)) != len(new):
            raise ValueError(f"renaming gives one name to two columns: {new}")
        return DataFrame._make(dict(zip(new, self._columns.values())), self._index,
                               list(self._index_names), self._nrows)

    def copy(self, deep: bool = True) -> DataFrame:
        """A copy: with ``deep`` (default) of every column on the server, else
        a new DataFrame of the same arrays.

        >>> df.copy().columns
        ['zone', 'fare']
        """
        def dup(c: Column) -> Column:
            if isinstance(c, (Strings, SegArray)):
                return c  # a Strings is immutable; a SegArray's copy is its own (SegArray.copy)
            return Categorical._wrap(c.codes.copy(), c.categories) if isinstance(c, Categorical) else c.copy()

        columns = {n: dup(c) if deep else c for n, c in self._columns.items()}
        index = [dup(c) if deep else c for c in self._index] if self._index is not None else None
        return DataFrame._make(columns, index, list(self._index_names), self._nrows)

    def head(self, n: int = 5) -> DataFrame:
        """The first n rows (a negative n: all but the last -n, as pandas).

        >>> df.head(2).shape
        (2, 2)
        """
        n = int(n)
        return self._take(slice(0, min(n, self._nrows) if n >= 0 else max(0, self._nrows + n)))

    def tail(self, n: int = 5) -> DataFrame:
        """The last n rows (a negative n: all but the first -n).

        >>> df.tail(1)["fare"]
        array([7.25])
        """
        n = int(n)
        return self._take(slice(max(0, self._nrows - n) if n >= 0 else min(-n, self._nrows), self._nrows))

    def reset_index(self, drop: bool = False) -> DataFrame:
        """The index as ``0 .. n-1`` again; unless ``drop``, the old index's
        arrays become the first columns (named as the index is, else "index").

        >>> df.groupby("zone").sum().reset_index().columns
        ['zone', 'fare']
        """
        columns: dict[str, Column] = {}
        if not drop:
            index = self._index_cols()  # (0 .. n-1 made on the server: pandas' "index" column)
            for i, (name, col) in enumerate(zip(self._index_names, index)):
                label = name if isinstance(name, str) else ("index" if len(index) == 1 else f"level_{i}")
                if label in self._columns or label in columns:
                    raise ValueError(f"cannot put the index back as column {label!r}: one has that name")
                columns[label] = col
        columns.update(self._columns)
        return DataFrame._make(columns, None, [None], self._nrows)

    def set_index(self, keys: str | Sequence[str], drop: bool = True) -> DataFrame:
        """The named column(s) as the index (removed from the columns unless
        ``drop=False``).

        >>> df.set_index("zone").columns
        ['fare']
        """
        names = [keys] if isinstance(keys, str) else list(keys)
        index = [self[n] for n in names]
        columns = {n: c for n, c in self._columns.items() if not (drop and n in names)}
        return DataFrame._make(columns, index, names, self._nrows)

    # -- order --------------------------------------------------------------

    def _order_keys(self, by: Sequence[str], ascending: bool | Sequence[bool]) -> list[pdarray]:
        asc = [ascending] * len(by) if isinstance(ascending, (bool, np.bool_)) else list(ascending)
        if len(asc) != len(by):
            raise ValueError(f"ascending has {len(asc)} values for {len(by)} columns")
        keys: list[pdarray] = []
        for name, up in zip(by, asc):
            arr = _sort_key(self[name])
            if not up:
                # An order-reversing map of the values: ~x for integers (no
                # overflow, unlike -x), not x for bools, -x for floats (NaN
                # stays NaN, so it still sorts last, as pandas puts it).
                arr = unop({"f": "neg", "b": "not"}.get(arr.dtype.kind, "invert"), arr)
            keys.append(arr)
        return keys

    def argsort(self, by: str | Sequence[str] | None = None, ascending: bool | Sequence[bool] = True) -> pdarray:
        """The row order that sorts by the column(s) ``by`` (stable: ties
        keep their row order, in either direction; NaN last).

        >>> df.argsort("fare")
        array([2, 0, 1])
        """
        if by is None:
            if len(self._columns) != 1:
                raise ValueError(f"give by= one of the columns {self.columns}")
            by = self.columns
        names = [by] if isinstance(by, str) else list(by)
        if not names:
            raise ValueError("argsort needs at least one column")
        keys = self._order_keys(names, ascending)
        return argsort(keys[0]) if len(keys) == 1 else coargsort(keys)

    def coargsort(self, keys: Sequence[str], ascending: bool | Sequence[bool] = True) -> pdarray:
        """The row order that sorts by several columns, the first first (Arkouda's).

        >>> df.coargsort(["zone", "fare"])
        array([2, 0, 1])
        """
        return self.argsort(list(keys), ascending)

    def sort_values(self, by: str | Sequence[str] | None = None,
                    ascending: bool | Sequence[bool] = True) -> DataFrame:
        """The rows sorted by the column(s) ``by``, as pandas' stable sort:
        ties keep their row order, NaN comes last; ``ascending`` a bool or
        one per column.

        >>> df.sort_values("fare", ascending=False)["fare"]
        array([12.  ,  9.5 ,  7.25])
        """
        return self._take(self.argsort(by, ascending), positions_valid=True)

    def sort_index(self, ascending: bool = True) -> DataFrame:
        """The rows sorted by their labels.

        >>> df.sort_values("fare").sort_index().index
        array([0, 1, 2])
        """
        if self._index is None:
            return self if ascending else self._take(slice(None, None, -1))
        cols = [_sort_key(c) for c in self._index]
        probe = DataFrame._make({f"_{i}": c for i, c in enumerate(cols)}, None, [None], self._nrows)
        keys = probe._order_keys(list(probe._columns), ascending)
        return self._take(argsort(keys[0]) if len(keys) == 1 else coargsort(keys), positions_valid=True)

    # -- joining ------------------------------------------------------------

    @classmethod
    def concat(cls, items: Sequence[DataFrame], ignore_index: bool = False) -> DataFrame:
        """The rows of several DataFrames with the same columns, one after
        another (Categoricals over the union of their categories). The
        labels are kept, unless ``ignore_index``.

        >>> ak.DataFrame.concat([df, df]).shape
        (6, 2)
        """
        frames = list(items)
        if not frames or not all(isinstance(f, DataFrame) for f in frames):
            raise TypeError("concat takes a non-empty list of DataFrames")
        names = frames[0].columns
        for f in frames[1:]:
            if sorted(f.columns) != sorted(names):
                raise ValueError(f"concat needs the same columns in each DataFrame: {names} and {f.columns}")
        columns = {n: _concat([f._columns[n] for f in frames]) for n in names}
        nrows = sum(f._nrows for f in frames)
        index = None
        if not ignore_index and any(f._index is not None for f in frames):
            depth = {len(f._index_cols()) for f in frames}
            if len(depth) != 1:
                raise ValueError("concat needs indexes of the same depth (reset_index() first)")
            index = [concatenate([f._index_cols()[i] for f in frames]) for i in range(depth.pop())]
        elif not ignore_index and len(frames) > 1:
            index = [concatenate([f._index_cols()[0] for f in frames])]
        return DataFrame._make(columns, index, list(frames[0]._index_names), nrows)

    def append(self, other: DataFrame) -> DataFrame:
        """This DataFrame's rows, then other's (as ``DataFrame.concat``).

        >>> df.append(df).shape
        (6, 2)
        """
        return DataFrame.concat([self, other])

    def drop_duplicates(self, subset: str | Sequence[str] | None = None, keep: str = "first") -> DataFrame:
        """The rows whose values in ``subset`` (default: every column) no
        earlier row has (``keep="first"``) or no later row has ("last"), in
        row order, as pandas'. NaN equals NaN here, as there.

        >>> df.drop_duplicates("zone")["fare"]
        array([ 9.5, 12. ])
        """
        names = self.columns if subset is None else ([subset] if isinstance(subset, str) else list(subset))
        if keep not in ("first", "last"):
            raise ValueError(f"keep must be 'first' or 'last', got {keep!r}")
        if not names or not self._nrows:
            return self._take(slice(0, min(self._nrows, 1 if names else self._nrows)))
        g = GroupBy([self[n] for n in names], dropna=False)
        _, rows = g.aggregate(arange(self._nrows, conn=self._conn()), "min" if keep == "first" else "max")
        return self._take(sort(rows), positions_valid=True)

    def merge(self, right: DataFrame, on: str | Sequence[str] | None = None, how: str = "inner",
              left_on: str | Sequence[str] | None = None, right_on: str | Sequence[str] | None = None,
              suffixes: tuple[str, str] = ("_x", "_y")) -> DataFrame:
        """The rows of this DataFrame and ``right`` whose keys are equal, as
        pandas' ``merge`` (``ak.merge(left, right, ...)`` too): ``how``
        "inner", "left", "right" or "outer"; keys ``on`` (columns of both)
        or ``left_on`` / ``right_on``; the rows in the left's order (the
        right's for "right", the keys' for "outer"), each with its matches
        in the other's order; a column both have that is not a key gets
        ``suffixes``. A row without a match gets NaN in the other's columns, whose integers
        become float64 as in pandas (bool and string columns cannot hold the
        missing values and are refused). NaN keys match each other, as in
        pandas.

        >>> left = ak.DataFrame({"k": ak.array([3, 1, 2]), "a": ak.array([0, 1, 2])})
        >>> right = ak.DataFrame({"k": ak.array([1, 3, 1]), "b": ak.array([10, 11, 12])})
        >>> left.merge(right, on="k")
           k  a   b
        0  3  0  11
        1  1  1  10
        2  1  1  12
        """
        return merge(self, right, on=on, how=how, left_on=left_on, right_on=right_on, suffixes=suffixes)

    # -- group-by -----------------------------------------------------------

    def groupby(self, keys: str | Sequence[str], use_series: bool = True, as_index: bool = True,
                dropna: bool = True) -> Any:
        """The rows grouped by the column(s) ``keys``: a DataFrameGroupBy,
        whose aggregations give a DataFrame with a row per group, sorted by
        key (the keys as its index, or as its first columns with
        ``as_index=False``). ``dropna=False`` keeps rows whose float key is
        NaN; ``use_series=False`` gives the plain ``ak.GroupBy`` (Arkouda's).

        >>> df.groupby("zone").agg(total=("fare", "sum"), n=("fare", "size"))
              total  n
        zone
        1     16.75  2
        2     12.00  1
        """
        names = [keys] if isinstance(keys, str) else list(keys)
        if not names:
            raise ValueError("groupby needs at least one key column")
        missing = [n for n in names if n not in self._columns]
        if missing:
            raise KeyError(f"no columns {missing} to group by; the columns are {self.columns}")
        cols = [self._columns[n] for n in names]
        keyed = [c for c in cols if not isinstance(c, SegArray)]
        if len(keyed) != len(cols):
            raise TypeError("a SegArray column cannot be a group-by key; group by other columns")
        gb = GroupBy(keyed[0] if isinstance(keys, str) else keyed, dropna=dropna)
        if not use_series:
            return gb
        return DataFrameGroupBy(self, gb, names, as_index)

    def GroupBy(self, keys: str | Sequence[str], use_series: bool = False, as_index: bool = True,  # noqa: N802
                dropna: bool = True) -> Any:
        """Arkouda's spelling: ``ak.GroupBy`` of the column(s) (a
        DataFrameGroupBy with ``use_series=True``).

        >>> df.GroupBy("zone").sum(df["fare"])
        (array([1, 2]), array([16.75, 12.  ]))
        """
        return self.groupby(keys, use_series=use_series, as_index=as_index, dropna=dropna)

    # -- summaries (small: pandas objects) ---------------------------------

    def _reduce(self, name: str, f: Callable[[pdarray], Any], strings: Callable[[Categorical], Any] | None,
                numeric_only: bool) -> Any:
        """A pandas Series of f over each column (NaN skipped, as pandas), one
        request or two a column; strings by `strings`, or refused unless
        numeric_only leaves them out."""
        pd = _import("pandas")
        out: dict[str, Any] = {}
        for n, col in self._columns.items():
            if isinstance(col, SegArray):
                if name == "count":
                    out[n] = col.size
                elif not numeric_only:
                    raise TypeError(f"column {n!r} is a SegArray, which has no {name}; pass numeric_only=True "
                                    "or select the columns first")
                continue
            if isinstance(col, (Categorical, Strings)):
                if numeric_only:
                    continue
                if strings is None:
                    raise TypeError(f"column {n!r} holds strings, which have no {name}; pass numeric_only=True "
                                    "or select the columns first")
                out[n] = strings(_from_strings(col) if isinstance(col, Strings) else col)
            elif not col.size:  # pandas' answers for no values
                out[n] = {"sum": col.dtype.type(0), "count": 0, "nunique": 0}.get(name, np.nan)
            else:
                with warnings.catch_warnings():  # (an all-NaN column's NaN, silently, as pandas gives it)
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out[n] = f(col)
        series = pd.Series(out, dtype=None if out else (np.int64 if name in ("count", "nunique") else float))
        if series.dtype == object and all(isinstance(v, (int, float, np.number)) for v in out.values()):
            series = series.astype(np.float64)  # (int64 beside uint64: pandas' float64)
        return series

    def count(self) -> Any:
        """Each column's values that are not NaN (a pandas Series by column).

        >>> df.count()["fare"]
        np.int64(3)
        """
        return self._reduce("count", lambda a: _counted(a, True), lambda c: c.size, False)

    def nunique(self) -> Any:
        """Each column's distinct values, NaN not counted (a pandas Series).

        >>> df.nunique()["zone"]
        np.int64(2)
        """
        def distinct(a: pdarray) -> int:
            u = unique(a)  # sorted: a NaN (one at most) last
            assert isinstance(u, pdarray)
            return int(u.size) - (int(np.isnan(u[-1])) if u.size and u.dtype.kind == "f" else 0)

        return self._reduce("nunique", distinct, lambda c: int(unique(c.codes).size), False)

    def sum(self, numeric_only: bool = False) -> Any:
        """Each column's sum, NaN skipped (a pandas Series by column).

        >>> df.sum()["fare"]
        np.float64(28.75)
        """
        return self._reduce("sum", lambda a: np.nansum(a) if a.dtype.kind == "f" else a.sum(), None, numeric_only)

    def mean(self, numeric_only: bool = False) -> Any:
        """Each column's mean, NaN skipped.

        >>> df.mean()["zone"]
        np.float64(1.3333333333333333)
        """
        return self._reduce("mean", lambda a: np.nanmean(a), None, numeric_only)

    def std(self, ddof: int = 1, numeric_only: bool = False) -> Any:
        """Each column's standard deviation, NaN skipped (ddof 1, as pandas).

        >>> df.std()["fare"]
        np.float64(2.3629078131263044)
        """
        return self._reduce("std", lambda a: np.nanstd(a, ddof=ddof), None, numeric_only)

    def var(self, ddof: int = 1, numeric_only: bool = False) -> Any:
        """Each column's variance, NaN skipped (ddof 1).

        >>> df.var()["fare"]
        np.float64(5.583333333333333)
        """
        return self._reduce("var", lambda a: np.nanvar(a, ddof=ddof), None, numeric_only)

    def min(self, numeric_only: bool = False) -> Any:
        """Each column's smallest value, NaN skipped (strings by their order).

        >>> df.min()["fare"]
        np.float64(7.25)
        """
        return self._reduce("min", lambda a: np.nanmin(a) if a.dtype.kind == "f" else a.min(),
                            lambda c: c.categories[int(c.codes.min())] if c.size else np.nan, numeric_only)

    def max(self, numeric_only: bool = False) -> Any:
        """Each column's largest value, NaN skipped.

        >>> df.max()["fare"]
        np.float64(12.0)
        """
        return self._reduce("max", lambda a: np.nanmax(a) if a.dtype.kind == "f" else a.max(),
                            lambda c: c.categories[int(c.codes.max())] if c.size else np.nan, numeric_only)

    def describe(self) -> Any:
        """count, mean, std, min, quartiles and max of every numeric column
        (bool and strings left out, as pandas does), NaN skipped: a pandas
        DataFrame, computed on the server (a request or two a statistic).

        >>> df.describe().loc["50%", "fare"]
        np.float64(9.5)
        """
        pd = _import("pandas")
        stats = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
        out: dict[str, list[float]] = {}
        for n, col in self._columns.items():
            if isinstance(col, (Categorical, Strings, SegArray)) or col.dtype.kind not in "iuf":
                continue
            count = _counted(col, True)
            if count == 0:
                out[n] = [0.0] + [np.nan] * 7
                continue
            q = np.nanquantile(col, [0.25, 0.5, 0.75]) if count > 1 else [float(np.nanmax(col))] * 3
            out[n] = [float(count), float(np.nanmean(col)), float(np.nanstd(col, ddof=1)) if count > 1 else np.nan,
                      float(np.nanmin(col)), *(float(v) for v in q), float(np.nanmax(col))]
        if not out:
            raise ValueError("describe summarises numeric columns, and this DataFrame has none")
        return pd.DataFrame(out, index=stats)

    # -- kept by name -------------------------------------------------------

    def register(self, name: str) -> DataFrame:
        """Keep the DataFrame on the server under `name`, as Arkouda's
        ``register``: column i under ``name + "/column_i"`` (a Categorical's
        categories beside its codes, as Categorical.register keeps them), an
        index level under ``name + "/index_j"``, and the names and order
        under ``name + "/dataframe"`` (their JSON, as uint8).
        ``ak.DataFrame.attach(name)`` finds it again in any later session.
        Only names change, except that a column already registered under
        another name, or twice in this frame, is copied so that the other
        registration stays whole; another frame sharing a column sees it
        renamed. Raises NameInUseError, and keeps nothing new, when a name is
        taken.

        >>> df.register("trips")
        >>> ak.DataFrame.attach("trips")   # later, in another session
        """
        import json

        def part(col: Column, key: str, seen: set[int]) -> tuple[Column, str]:
            if isinstance(col, SegArray):
                raise NotImplementedError(f"register keeps pdarray, Categorical and Strings columns; {key} is a "
                                          "SegArray (register it alone, with SegArray.register)")
            if isinstance(col, Strings):
                if (col.is_registered() and col.name != key) or id(col) in seen:
                    col = col[arange(col.size, conn=col._conn)]  # a copy: the other registration stays whole
                seen.add(id(col))
                return col, key
            arr = col.codes if isinstance(col, Categorical) else col
            if (arr.is_registered() and arr._live_name() != key) or id(arr) in seen:
                arr = arr.copy()
                col = Categorical._wrap(arr, col.categories) if isinstance(col, Categorical) else arr
            seen.add(id(arr))
            return col, key

        if self._registered == name and self.is_registered():
            return self  # kept under name already, as pdarray.register does again
        seen: set[int] = set()
        cols = [part(c, f"{name}/column_{i}", seen) for i, c in enumerate(self._columns.values())]
        index = [part(c, f"{name}/index_{j}", seen) for j, c in enumerate(self._index or [])]
        meta = {"columns": list(self._columns), "index_names": self._index_names if self._index else None,
                "nrows": self._nrows}
        text = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        c = self._conn()
        _register_all([*cols, *index, (c.array(text), f"{name}/dataframe")])
        self._columns = dict(zip(self._columns, (col for col, _ in cols)))
        if self._index is not None:
            self._index = [col for col, _ in index]
        self._registered = name
        return self

    @classmethod
    def attach(cls, name: str, *, conn: Connection | None = None) -> DataFrame:
        """The DataFrame register(name) kept on the server; like ak.attach,
        it does not own its arrays.

        >>> trips = ak.DataFrame.attach("trips")
        """
        import json

        c = _default_conn(conn)
        raw = c.attach(f"{name}/dataframe")
        try:
            meta = json.loads(raw.to_ndarray().tobytes().decode())
            names, index_names, nrows = list(meta["columns"]), meta["index_names"], int(meta["nrows"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"'{name}/dataframe' is not a DataFrame's description (register() stores it)") from None

        def load(key: str) -> Column:
            try:
                c.info(key + "/categories")
            except UnknownArrayError:
                try:
                    c.info(key + "/bytes")
                except UnknownArrayError:
                    return c.attach(key)
                return Strings.attach(key, conn=c)
            return Categorical.attach(key, conn=c)

        columns = {n: load(f"{name}/column_{i}") for i, n in enumerate(names)}
        index = [load(f"{name}/index_{j}") for j in range(len(index_names))] if index_names else None
        bad = [n for n, col in columns.items() if col.size != nrows]
        if bad:
            raise ValueError(f"the columns {bad} of DataFrame '{name}' do not have its {nrows} rows")
        out = DataFrame._make(columns, index, list(index_names) if index_names else [None], nrows)
        out._registered = name
        return out

    def _parts(self) -> list[Column]:
        return [*self._columns.values(), *(self._index or [])]

    def unregister(self) -> None:
        """Undo register() (or attach()): its arrays are owned again (dropping
        them deletes them) and, for the frame register() or attach() gave,
        the description under ``name + "/dataframe"`` goes.

        >>> ak.DataFrame.attach("trips").unregister()
        """
        for p in self._parts():
            p.unregister()
        if self._registered is not None:  # (a frame made from a registered one has no description of its own)
            self._conn().delete([f"{self._registered}/dataframe"], missing_ok=True)
            self._registered = None

    def is_registered(self) -> bool:
        """True when register() or attach() kept it and every one of its
        arrays still is.

        >>> df.register("trips").is_registered()
        True
        """
        return self._registered is not None and all(p.is_registered() for p in self._parts())

    # -- out ----------------------------------------------------------------

    def to_pandas(self) -> Any:
        """Download as a pandas DataFrame (a Categorical as a category
        column; the index as pandas' index).

        >>> df.to_pandas()["fare"].sum()
        np.float64(28.75)
        """
        return self._to_pandas(False)

    def _to_pandas(self, plain: bool) -> Any:
        """to_pandas; with plain, Categoricals as object columns of their
        strings (a preview of a few rows: a category dtype of many
        categories costs pandas more than the rows)."""
        pd = _import("pandas")
        columns: Mapping[str, Any] = self._columns
        if plain:
            columns = {n: np.asarray(c.categories, dtype=object)[c.codes.to_ndarray()] if isinstance(c, Categorical)
                       else c for n, c in self._columns.items()}
        out = to_pandas(columns) if self._columns else pd.DataFrame(index=range(self._nrows))
        if self._index is not None:
            levels = [c.to_pandas() if isinstance(c, Categorical) else
                      c.to_ndarray().astype(object) if isinstance(c, Strings) else c.to_ndarray() for c in self._index]
            if len(levels) == 1:
                out.index = pd.Index(levels[0], name=self._index_names[0])
            else:
                out.index = pd.MultiIndex.from_arrays(levels, names=self._index_names)
        return out

    def to_csv(self, path: str, index: bool = False, columns: Sequence[str] | None = None,
               col_delim: str = ",", overwrite: bool = True) -> str:
        """Write the columns (and with `index`, the index levels first) as one
        CSV file on the server in Arkouda's format (see ak.to_csv).

        >>> df.to_csv("out/trips.csv", overwrite=True)
        'out/trips_LOCALE0000.csv'
        """
        names = list(columns) if columns is not None else self.columns
        cols: dict[str, Any] = {}
        if index and self._index is not None:
            for i, level in enumerate(self._index):
                cols[str(self._index_names[i]) if self._index_names[i] is not None else f"index_{i}"] = level
        for n in names:
            col = self[n]
            if isinstance(col, SegArray):
                raise TypeError(f"column {n!r} is a SegArray, which a CSV file cannot hold; drop it first")
            cols[n] = col
        return to_csv(cols, path, col_delim=col_delim, overwrite=overwrite)

    def to_hdf(self, path: str, index: bool = False, columns: Sequence[str] | None = None,
               file_type: str = "distribute") -> str:
        """Write the columns (and with `index`, the index as column
        "Index", as Arkouda does) as datasets of one HDF5 file on the
        server in Arkouda's layout (see ak.to_hdf); ak.read_hdf or
        DataFrame(ak.read_hdf(...)) reads them back.

        >>> df.to_hdf("out/trips.h5")
        'out/trips_LOCALE0000.h5'
        """
        names = list(columns) if columns is not None else self.columns
        cols: dict[str, Any] = {}
        if index and self._index is not None:
            if len(self._index) != 1:
                raise ValueError("to_hdf(index=True) writes a one-level index; reset_index() a MultiIndex first")
            cols["Index"] = self._index[0]
        for n in names:
            col = self[n]
            if isinstance(col, SegArray):
                raise TypeError(f"column {n!r} is a SegArray, which Arktos does not write to HDF5 yet; drop it first")
            cols[n] = col
        return to_hdf(cols, path, file_type=file_type)

    def to_dict(self) -> dict[str, Column]:
        """The columns by name (what ``ak.to_parquet`` and ``ak.to_pandas`` take).

        >>> list(df.to_dict())
        ['zone', 'fare']
        """
        return dict(self._columns)

    def to_parquet(self, path: str, **options: Any) -> dict[str, Any]:
        """Write the columns as one Parquet file on the server (as
        ``ak.to_parquet``, whose options it takes; the index is not written).

        >>> df.to_parquet("out/fares.parquet")
        """
        flat = {n: c for n, c in self._columns.items() if not isinstance(c, SegArray)}
        if len(flat) != len(self._columns):
            raise TypeError("to_parquet writes pdarray, Categorical and Strings columns; drop the SegArray ones "
                            "(or save their segments and values as columns)")
        return to_parquet(flat, path, **options)

    def _get_head_tail(self) -> Any:
        """The rows repr shows, as a pandas DataFrame (Arkouda's name)."""
        return self._preview()[0]

    # (Arkouda gathers them on the server: here both are one take)
    _get_head_tail_server = _get_head_tail

    def _preview(self) -> tuple[Any, bool]:
        """A pandas DataFrame of the rows repr shows, and whether it is cut."""
        if self._nrows <= _REPR_ROWS:
            return self.to_pandas(), False
        half = _REPR_ROWS // 2
        rows = np.r_[np.arange(half + 1), np.arange(self._nrows - half - 1, self._nrows)]
        return self._take(self._conn().array(rows))._to_pandas(True), True

    def __repr__(self) -> str:
        pdf, cut = self._preview()
        text: str = pdf.to_string(max_rows=_REPR_ROWS if cut else None)
        return text + (f"\n\n[{self._nrows} rows x {len(self._columns)} columns]" if cut else "")

    def _repr_html_(self) -> str:
        pdf, cut = self._preview()
        html: str = pdf.to_html(max_rows=_REPR_ROWS if cut else None)
        return html + (f"<p>{self._nrows} rows × {len(self._columns)} columns</p>" if cut else "")


def _row_list(rows: Any) -> Any:
    """A list of rows as numpy: bools as a mask, else int64 positions (an
    empty list too, which numpy would make float64)."""
    if isinstance(rows, list):
        if rows and all(isinstance(r, (bool, np.bool_)) for r in rows):
            return np.asarray(rows, dtype=np.bool_)
        if any(isinstance(r, (bool, np.bool_)) for r in rows):
            raise TypeError("rows are a bool mask or integer positions, not both")
        return np.asarray(rows, dtype=np.int64)
    return rows


class _ILoc:
    """df.iloc: rows and columns by position."""

    def __init__(self, df: DataFrame) -> None:
        self._df = df

    def _columns(self, cols: Any) -> tuple[list[str], bool]:
        names = self._df.columns
        if isinstance(cols, (int, np.integer)) and not isinstance(cols, (bool, np.bool_)):
            return [names[int(cols)]], True
        if isinstance(cols, slice):
            return names[cols], False
        if isinstance(cols, (list, tuple, np.ndarray)):
            arr = np.asarray(cols)
            if arr.dtype == np.bool_:
                if arr.size != len(names):
                    raise IndexError(f"a column mask of {arr.size} for {len(names)} columns")
                return [n for n, keep in zip(names, arr) if keep], False
            if arr.size == 0 or arr.dtype.kind in "iu":
                picked = [names[int(j)] for j in arr]
                if len(set(picked)) != len(picked):
                    raise ValueError(f"iloc picks columns {picked}, one of them twice; a DataFrame's names are distinct")
                return picked, False
        raise TypeError(f"iloc takes columns by position (an int, a slice, a list of ints or a bool mask), got {cols!r}")

    def _rows(self, rows: Any) -> Any:
        return _row_list(rows)

    def _split(self, key: Any) -> tuple[Any, list[str] | None, bool]:
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError(f"{type(self).__name__.lower()[1:]} takes [rows] or [rows, columns], got {len(key)} keys")
            names, one = self._columns(key[1])
            return self._rows(key[0]), names, one
        return self._rows(key), None, False

    def __getitem__(self, key: Any) -> Any:
        rows, names, one = self._split(key)
        frame = self._df if names is None else self._df[names]
        if one:
            assert names is not None
            col = self._df[names[0]]
            return col if isinstance(rows, slice) and rows == slice(None) else col[rows]
        if isinstance(rows, slice) and rows == slice(None):
            return frame
        if isinstance(rows, np.ndarray):
            return frame._take(frame._rows_key(frame._conn().array(rows)))
        return frame[rows]

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes as pandas' copy-on-write: each written column becomes a
        modified copy that this frame alone holds, so that frames and
        pdarrays sharing the column do not see the write. Every column is
        checked before any is written."""
        rows, names, _ = self._split(key)
        targets = names if names is not None else self._df.columns
        for n in targets:
            col = self._df[n]
            if isinstance(col, (Categorical, Strings)):
                raise TypeError(f"column {n!r} holds strings, which cannot be written in place; "
                                "make a new column instead")
            _check_value(n, col, value)
        for n in targets:
            col = self._df[n].copy()
            col[rows] = value
            self._df._columns[n] = col


def _check_value(name: str, col: pdarray, value: Any) -> None:
    """Refuse a value that the column's dtype would change, as pandas 3
    refuses it (numpy would cast 2.5 into an int column as 2)."""
    kind = col.dtype.kind
    if isinstance(value, pdarray):
        vk = value.dtype.kind
        bad = kind in "iub" and vk == "f" or kind == "b" and vk in "iu"
    elif isinstance(value, (bool, np.bool_)):
        bad = False
    elif isinstance(value, (float, np.floating)):
        bad = kind in "iu" and not float(value).is_integer() or kind == "b"
    elif isinstance(value, (int, np.integer)):
        bad = kind == "b" and value not in (0, 1)
    else:
        bad = not np.isscalar(value)
    if bad:
        raise TypeError(f"cannot write {value!r} into column {name!r} of {col.dtype} (it would change); "
                        "make a new column of the right dtype instead")


class _Loc(_ILoc):
    """df.loc: rows and columns by label."""

    def _columns(self, cols: Any) -> tuple[list[str], bool]:
        if isinstance(cols, str):
            if cols not in self._df:
                raise KeyError(f"no column {cols!r}; the columns are {self._df.columns}")
            return [cols], True
        if isinstance(cols, slice) and cols == slice(None):
            return self._df.columns, False
        if isinstance(cols, (list, tuple)) and all(isinstance(n, str) for n in cols):
            missing = [n for n in cols if n not in self._df]
            if missing:
                raise KeyError(f"no columns {missing}; the columns are {self._df.columns}")
            return list(cols), False
        raise TypeError(f"loc takes columns by name (a str, a list of them, or :), got {cols!r}")

    def _rows(self, rows: Any) -> Any:
        """Labels as positions: a mask as it is; a label, labels or a label
        slice (its end included) by the index."""
        df = self._df
        if isinstance(rows, pdarray) and rows.dtype == np.bool_:
            return rows
        rows = _row_list(rows)
        if isinstance(rows, np.ndarray) and rows.dtype == np.bool_:
            return rows
        if isinstance(rows, (bool, np.bool_)):
            raise KeyError(f"no row labelled {rows!r}; select rows by a mask of every row")
        if isinstance(rows, (float, np.floating)) and float(rows).is_integer():
            rows = int(rows)  # (pandas finds label 1 by 1.0)
        if df._index is None:  # labels are positions
            if isinstance(rows, slice):
                return self._label_slice(rows)
            return self._labels_in_range(rows)
        if isinstance(rows, slice):
            if rows == slice(None):
                return rows
            raise TypeError("loc slices labels of a 0 .. n-1 index only; reset_index() first, or give the labels")
        return self._lookup(rows)

    def _label_slice(self, rows: slice) -> slice:
        """A slice of labels 0 .. n-1 (its end included) as positions:
        labels beyond either end select nothing there, as pandas'."""
        if rows.step is not None and rows.step < 1 or not all(
                v is None or isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (rows.start, rows.stop)):
            raise TypeError("loc slices labels 0 .. n-1 with integers, step 1 or more")
        n = self._df._nrows
        start = 0 if rows.start is None else min(max(int(rows.start), 0), n)
        stop = n if rows.stop is None else min(max(int(rows.stop) + 1, 0), n)
        return slice(start, max(start, stop), rows.step)

    def _labels_in_range(self, rows: Any) -> Any:
        n = self._df._nrows
        if np.isscalar(rows):
            if not isinstance(rows, (int, np.integer)) or not 0 <= int(rows) < n:
                raise KeyError(f"no row labelled {rows!r} (labels 0 .. {n - 1})")
            return int(rows)
        pos = rows if isinstance(rows, pdarray) else self._df._conn().array(np.asarray(rows, dtype=np.int64))
        if pos.dtype.kind not in "iu":
            raise TypeError(f"loc takes integer labels here, got {pos.dtype}")
        if pos.size and bool(binop("|", binop("<", pos, 0), binop(">=", pos, n)).any()):
            raise KeyError(f"labels outside 0 .. {n - 1}")
        return pos

    def _lookup(self, rows: Any) -> Any:
        df = self._df
        index = df._index or []
        if len(index) != 1 or isinstance(index[0], (Categorical, Strings, SegArray)) or index[0].dtype.kind not in "iu":
            raise TypeError("loc finds labels of one integer index level; reset_index() or set_index() first")
        c = df._conn()
        scalar = np.isscalar(rows)
        if scalar and not isinstance(rows, (int, np.integer)):
            raise KeyError(f"no row labelled {rows!r}: the index holds integers")
        labels = rows if isinstance(rows, pdarray) else c.array(np.atleast_1d(np.asarray(rows, dtype=np.int64)))
        if labels.dtype.kind not in "iu":
            raise TypeError(f"the index holds integers; loc got labels of {labels.dtype}")
        if (labels.dtype == np.uint64) != (index[0].dtype == np.uint64):
            # (the server compares uint64 with uint64 only: the labels as the index's kind)
            if labels.dtype == np.uint64:
                if labels.size and int(labels.max()) > np.iinfo(np.int64).max:
                    raise KeyError("labels not in the index: some are above its int64 range")
                labels = labels.astype(np.int64)
            else:
                if labels.size and bool(binop("<", labels, 0).any()):
                    raise KeyError(f"labels not in the index: {rows if scalar else 'some of them'}")
                labels = labels.astype(np.uint64)
        result, _ = c._request("lookup", {"keys": labels._live_name(), "table": index[0]._live_name()})
        if not result["unique"]:
            raise KeyError("the index repeats a label, so loc cannot pick one row for it; "
                           "select by a mask instead, e.g. df[df.index == label]")
        pos = c._pdarray(result["rows"], owned=True)
        if pos.size and bool(binop("<", pos, 0).any()):
            raise KeyError(f"labels not in the index: {rows if scalar else 'some of them'}")
        return int(pos[0]) if scalar else pos


def _nan_where(missing: pdarray, col: pdarray) -> pdarray:
    """col with NaN where missing is true: integers made float64 first, as
    pandas makes a column that holds a missing value."""
    return where(missing, np.nan, col if col.dtype.kind == "f" else astype(col, np.float64))


def _names(x: str | Sequence[str] | None) -> list[str]:
    return [] if x is None else ([x] if isinstance(x, str) else list(x))


def merge(left: DataFrame, right: DataFrame, on: str | Sequence[str] | None = None, how: str = "inner",
          left_on: str | Sequence[str] | None = None, right_on: str | Sequence[str] | None = None,
          suffixes: tuple[str, str] = ("_x", "_y")) -> DataFrame:
    """The rows of two DataFrames whose keys are equal, as pandas' ``merge``
    (see ``DataFrame.merge``): inner, left, right or outer, on one key
    column or several.

    >>> ak.merge(trips, zones, left_on="pickup", right_on="zone", how="left")

    On the server: the two sides' keys are grouped together (one GroupBy of
    the keys one after the other, so that equal keys, of any dtypes or
    Categoricals with different categories, get one id); the other side's
    rows are sorted by id and counted per id; then each row is repeated once
    per match and paired with its matches by position. Every column is then
    gathered once (``take_many``).
    """
    if not isinstance(left, DataFrame) or not isinstance(right, DataFrame):
        raise TypeError(f"merge takes two DataFrames, got {type(left).__name__} and {type(right).__name__}")
    if how not in ("inner", "left", "right", "outer"):
        raise ValueError(f"how must be 'inner', 'left', 'right' or 'outer', got {how!r}")
    if on is not None and (left_on is not None or right_on is not None):
        raise ValueError("give on, or left_on and right_on, not both")
    shared = _names(on)
    if on is None and left_on is None and right_on is None:
        shared = [c for c in left.columns if c in right]
        if not shared:
            raise ValueError(f"no column in both to merge on (left {left.columns}, right {right.columns}); "
                             "give on= or left_on= and right_on=")
    lnames = shared or _names(left_on)
    rnames = shared or _names(right_on)
    # key pairs of one name come out once, as on= gives them (pandas)
    shared = [ln for ln, rn in zip(lnames, rnames) if ln == rn]
    if not lnames or len(lnames) != len(rnames):
        raise ValueError(f"left_on and right_on must name as many columns each, got {lnames} and {rnames}")
    for side, frame, names in (("left", left, lnames), ("right", right, rnames)):
        missing = [n for n in names if n not in frame]
        if missing:
            raise KeyError(f"no columns {missing} in the {side} DataFrame to merge on; it has {frame.columns}")
    lk, rk = [left[n] for n in lnames], [right[n] for n in rnames]
    for a, b, ln, rn in zip(lk, rk, lnames, rnames):
        if isinstance(a, Categorical) != isinstance(b, Categorical):
            raise TypeError(f"cannot merge key {ln!r} with {rn!r}: one holds strings and the other numbers")
    # the result's columns: (name, side, column), checked before any work
    plan = [(n + suffixes[0] if n in right and n not in shared else n, "left", n) for n in left.columns]
    plan += [(n + suffixes[1] if n in left else n, "right", n) for n in right.columns if n not in shared]
    outs = [p[0] for p in plan]
    if len(set(outs)) != len(outs):
        twice = sorted({n for n in outs if outs.count(n) > 1})
        raise ValueError(f"merging gives two columns named {twice}; choose other suffixes")
    if how == "outer":
        if not len(left) and not len(right):
            return DataFrame._make({out: (left if side_name == "left" else right)[n] for out, side_name, n in plan},
                                   None, [None], 0)
        joined, place, lrows_o, rrows_o, lmiss, rmiss = _outer_rows(lk, rk)
        lpart = _gathered(left, lrows_o, lmiss, "left", shared)
        rpart = _gathered(right, rrows_o, rmiss, "right", shared)
        keys = {n: joined[i][place] for i, n in enumerate(lnames) if n in shared}  # either side's: every row has one
        return DataFrame._make({out: keys[n] if n in keys else (lpart[n] if side_name == "left" else rpart[n])
                                for out, side_name, n in plan}, None, [None], place.size)
    # rows None: every row of that side once, in order (its columns kept as they are)
    lrows: pdarray | None
    rrows: pdarray | None
    if how == "right":
        rrows, lrows, missing_rows = _join_rows(rk, lk, True)
    else:
        lrows, rrows, missing_rows = _join_rows(lk, rk, how == "left")
    # Each side's columns gathered once; a side with unmatched rows gets NaN there.
    # (The keys on= names come from the side whose every row is there.)
    lpart = _gathered(left, lrows, missing_rows if how == "right" else None, "left",
                      shared if how == "right" else [])
    rpart = _gathered(right, rrows, missing_rows if how == "left" else None, "right",
                      [] if how == "right" else shared)
    columns: dict[str, Column] = {}
    for out, side_name, n in plan:
        columns[out] = rpart[n] if side_name == "right" or (n in shared and how == "right") else lpart[n]
    kept = lrows if how != "right" else rrows
    nrows = (left if how != "right" else right)._nrows if kept is None else kept.size
    return DataFrame._make(columns, None, [None], nrows)


def _join_rows(lk: list[Column], rk: list[Column],
               keep_unmatched: bool) -> tuple[pdarray | None, pdarray, pdarray | None]:
    """(left rows, right rows, which output rows have no right match, or
    None): every left row in order, once per right row of equal keys (right
    rows in their order), and once alone when keep_unmatched and it has
    none (its right row then 0: a placeholder). Left rows None: every left
    row once, in order (no left row has two matches, and none is dropped)."""
    n, m = lk[0].size, rk[0].size
    c = _conn_of(lk[0])
    if m == 0 or n == 0:
        k = n if keep_unmatched else 0
        return (arange(k, conn=c), zeros(k, np.int64, conn=c),
                full(k, True, np.bool_, conn=c) if keep_unmatched else None)
    r: pdarray | None = None
    a, b = lk[0], rk[0]
    if len(lk) == 1 and isinstance(a, pdarray) and isinstance(b, pdarray) and a.dtype.kind in "iu" \
            and b.dtype.kind in "iu" and (a.dtype == np.uint64) == (b.dtype == np.uint64):
        # One integer key: the server looks each left key up in the right's
        # (one pass over the left's, a slot or hash table of the right's),
        # when the right's keys are distinct.
        result, _ = c._request("lookup", {"keys": a._live_name(), "table": b._live_name()})
        if result["unique"]:
            r = c._pdarray(result["rows"], owned=True)
    rcount: pdarray | None = None
    if r is None:
        joined = [concatenate([x, y]) for x, y in zip(lk, rk)]
        g = GroupBy(joined[0] if len(joined) == 1 else joined, dropna=False)
        ids = g.ids
        lid = ids[:n]
        # per id: its right rows, and the last of them (-1: none), in one pass
        side = concatenate([zeros(n, np.int8, conn=c), full(m, 1, np.int8, conn=c)])
        row = concatenate([full(n, -1, np.int64, conn=c), arange(m, conn=c)])
        _, per = g.agg(n=(side, "sum"), row=(row, "max"))
        rcount = per["n"]
        if int(rcount.max()) <= 1:
            r = per["row"][lid]
    if r is not None:
        # At most one match a left row (a lookup table): no row repeats.
        if not keep_unmatched:
            matched = binop(">=", r, 0)
            if bool(matched.all()):
                return None, r, None
            # the matched rows' positions and their right rows in one request
            result, _ = c._request("compress_many", {"arrays": [r._live_name()], "mask": matched._live_name(),
                                                     "positions": True})
            return (c._pdarray(result["positions"], owned=True), c._pdarray(result["arrays"][0], owned=True),
                    None)
        unmatched = binop("<", r, 0)
        if not bool(unmatched.any()):
            return None, r, None
        return None, where(unmatched, 0, r), unmatched
    assert rcount is not None
    return _expand(lid, ids[n:], rcount, keep_unmatched)


def _expand(lid: pdarray, rid: pdarray, rcount: pdarray,
            keep_unmatched: bool) -> tuple[pdarray, pdarray, pdarray | None]:
    """_join_rows by the keys' ids (lid, rid; rcount: right rows per id):
    the right rows sorted by id, every left row repeated once per match."""
    c = lid._conn
    rperm = argsort(rid)  # right rows by id, in their order within one (stable)
    rstart = binop("-", rcount.cumsum(), rcount)
    cnt, st = rcount[lid], rstart[lid]
    missing: pdarray | None = None
    if keep_unmatched:
        missing = binop("==", cnt, 0)
        cnt = where(missing, 1, cnt)
    total = int(cnt.sum()) if cnt.size else 0
    lrows = arange(lid.size, conn=c).repeat(cnt)
    # each output row's place among its left row's matches
    within = binop("-", arange(total, conn=c), binop("-", cnt.cumsum(), cnt).repeat(cnt))
    rpos = binop("+", st.repeat(cnt), within)
    miss_rows = None
    if missing is not None:
        miss_rows = missing.repeat(cnt)
        rpos = where(miss_rows, 0, rpos)  # (an unmatched row's start may be m)
    return lrows, rperm[rpos] if rperm.size else rpos, miss_rows


def _outer_rows(lk: list[Column], rk: list[Column]) -> tuple[list[Column], pdarray, pdarray, pdarray, pdarray,
                                                             pdarray]:
    """An outer merge's rows, sorted by key as pandas sorts them: (the keys
    of both sides one after the other, each output row's place in them,
    left rows, right rows, which rows have no left row, which no right
    row). Every left row once per match (or alone), then the right rows
    no left row matches, all put in key order (stable)."""
    n, m = lk[0].size, rk[0].size
    c = _conn_of(lk[0])
    joined = [concatenate([a, b]) for a, b in zip(lk, rk)]
    g = GroupBy(joined[0] if len(joined) == 1 else joined, dropna=False)
    ids = g.ids
    lid, rid = ids[:n], ids[n:]
    side = concatenate([zeros(n, np.int8, conn=c), full(m, 1, np.int8, conn=c)])
    _, per = g.agg(r=(side, "sum"), size=(None, "size"))
    lcount = binop("-", per["size"], per["r"])
    lrows, rrows, rmiss = _expand(lid, rid, per["r"], True)
    assert rmiss is not None
    ronly = arange(m, conn=c)[binop("==", lcount[rid], 0)]  # right rows no left row matches
    k = ronly.size
    order = argsort(concatenate([lid[lrows], rid[ronly]]))
    place = concatenate([lrows, binop("+", ronly, n)])[order]
    lrows = concatenate([lrows, zeros(k, np.int64, conn=c)])[order]
    rrows = concatenate([rrows, ronly])[order]
    lmiss = concatenate([zeros(lrows.size - k, np.bool_, conn=c), full(k, True, np.bool_, conn=c)])[order]
    rmiss = concatenate([rmiss, zeros(k, np.bool_, conn=c)])[order]
    rrows = where(rmiss, 0, rrows)
    return joined, place, lrows, rrows, lmiss, rmiss


def _gathered(frame: DataFrame, rows: pdarray | None, missing: pdarray | None, side: str,
              skip: list[str]) -> dict[str, Column]:
    """frame's columns but skip at rows (one take_many; rows None: the
    columns as they are), NaN where missing: integers as float64, bool and
    strings refused."""
    frame = frame[[n for n in frame.columns if n not in skip]]
    if missing is not None and frame.columns and bool(missing.any()):
        bad = [n for n, col in frame.items() if isinstance(col, Categorical) or col.dtype == np.bool_]
        if bad:
            raise ValueError(f"the {side} DataFrame's columns {bad} (strings or bools) cannot hold the missing "
                             "values of rows without a match; use how='inner', or drop those columns first")
    else:
        missing = None
    if rows is None:
        return dict(frame.items())
    if missing is not None and not len(frame):  # nothing to gather: every row is missing
        return {n: full(rows.size, np.nan, np.float64, conn=rows._conn) for n in frame.columns}
    got = frame._take(rows, positions_valid=True)
    out: dict[str, Column] = {}
    for n, col in got.items():
        if missing is not None:
            assert isinstance(col, pdarray)
            col = _nan_where(missing, col)
        out[n] = col
    return out


class DataFrameGroupBy:
    """A DataFrame's rows grouped by some of its columns (``df.groupby``),
    as Arkouda's and pandas': an aggregation gives a DataFrame with a row
    per group, sorted by key, over every other column (or those selected by
    ``dfg[name]``, ``dfg[[names]]`` or ``colnames=``), in one server request.

    Attributes: ``gb`` (the ``ak.GroupBy``), ``df``, ``gb_key_names``,
    ``as_index``, ``ngroups``.

    >>> g = df.groupby("zone")
    >>> g["fare"].mean()
           fare
    zone
    1     8.375
    2    12.000
    """

    def __init__(self, df: DataFrame, gb: GroupBy, keys: list[str], as_index: bool,
                 selected: list[str] | None = None, one: bool = False) -> None:
        self.df = df
        self.gb = gb
        self.gb_key_names = keys
        self.as_index = as_index
        self._selected = selected
        self._one = one  # selected by one name: transform gives a pdarray

    @property
    def ngroups(self) -> int:
        """The number of groups.

        >>> df.groupby("zone").ngroups
        2
        """
        return self.gb.ngroups

    def __repr__(self) -> str:
        return f"DataFrameGroupBy(keys={self.gb_key_names}, ngroups={self.gb.ngroups})"

    def __getitem__(self, key: str | Sequence[str]) -> DataFrameGroupBy:
        names = [key] if isinstance(key, str) else list(key)
        missing = [n for n in names if n not in self.df]
        if missing:
            raise KeyError(f"no columns {missing}; the columns are {self.df.columns}")
        return DataFrameGroupBy(self.df, self.gb, self.gb_key_names, self.as_index, names, isinstance(key, str))

    def _value_names(self, colnames: str | Sequence[str] | None) -> list[str]:
        if colnames is None:
            if self._selected is not None:
                return list(self._selected)
            return [n for n in self.df.columns if n not in self.gb_key_names]
        names = [colnames] if isinstance(colnames, str) else list(colnames)
        missing = [n for n in names if n not in self.df]
        if missing:
            raise KeyError(f"no columns {missing}; the columns are {self.df.columns}")
        return names

    def _result(self, columns: dict[str, Column]) -> DataFrame:
        keys = self.gb.unique_keys
        key_cols: list[Column] = list(keys) if isinstance(keys, tuple) else [keys]
        n = self.gb.ngroups
        if self.as_index:
            return DataFrame._make(columns, key_cols, list(self.gb_key_names), n)
        clash = [k for k in self.gb_key_names if k in columns]
        if clash:
            raise ValueError(f"with as_index=False the key columns {clash} come first, so an aggregation "
                             "cannot be named so too; rename it (agg(out=(column, op)))")
        return DataFrame._make({**dict(zip(self.gb_key_names, key_cols)), **columns}, None, [None], n)

    def _run(self, specs: list[tuple[str, str, str | None]], ddof: float) -> DataFrame:
        """specs: (result name, op, column or None for size), all in one
        request; a Categorical column by its codes."""
        return self._result(self._aggregated(specs, ddof))

    def _aggregated(self, specs: list[tuple[str, str, str | None]], ddof: float) -> dict[str, Column]:
        """The aggregations of specs (as _run), a column each, without the keys."""
        named: dict[str, tuple[Any, str | Callable[..., Any]]] = {}
        strings: dict[str, np.ndarray] = {}
        for out, op, name in specs:
            if op not in AGGREGATIONS:
                raise ValueError(f"unknown aggregation {op!r}; use one of {', '.join(AGGREGATIONS)}")
            col = None if name is None else self.df[name]
            if isinstance(col, Strings):
                col = _from_strings(col)  # aggregated as a Categorical is
            if isinstance(col, Categorical):
                if op not in CATEGORICAL_AGGREGATIONS:
                    raise TypeError(f"column {name!r} holds strings (a Categorical), which cannot take the "
                                    f"{op}; they take {', '.join(CATEGORICAL_AGGREGATIONS)}. Choose the "
                                    f"columns: dfg[[...]].{op}() or {op}(colnames=[...])")
                if op in ("first", "mode", "min", "max"):
                    strings[out] = col.categories
                col = col.codes
            named[out] = (col, op)
        if not named:
            return {}
        _, got = self.gb._agg_named(named, ddof)
        return {out: (Categorical._wrap(arr, strings[out]) if out in strings else arr) for out, arr in got.items()}

    def aggregate(self, func: Any = None, *, ddof: float = 1, **named: tuple[str, Any]) -> DataFrame:
        """Aggregations in one server request, as pandas' ``agg``: ``func`` an
        op (every value column), a list of ops (columns named
        ``column_op``), or a dict column → op or list of ops; or named
        aggregations ``out=(column, op)``. ``ddof`` is var's and std's.

        >>> df.groupby("zone").agg({"fare": ["sum", "max"]})
              fare_sum  fare_max
        zone
        1        16.75      9.5
        2        12.00     12.0
        """
        specs: list[tuple[str, str, str | None]] = []
        if named:
            if func is not None:
                raise TypeError("give either func or named aggregations out=(column, op), not both")
            for out, spec in named.items():
                if not isinstance(spec, tuple) or len(spec) != 2:
                    raise TypeError(f"named aggregation {out}= must be (column, op), e.g. ('fare', 'sum'); "
                                    f"got {spec!r}")
                col, op = spec
                if col is not None and col not in self.df:
                    raise KeyError(f"{out}=: no column {col!r}; the columns are {self.df.columns}")
                specs.append((out, _aggregation(op), col))
        elif isinstance(func, Mapping):
            for col, ops in func.items():
                if col not in self.df:
                    raise KeyError(f"no column {col!r}; the columns are {self.df.columns}")
                if isinstance(ops, (list, tuple)):
                    specs += [(f"{col}_{_aggregation(op)}", _aggregation(op), col) for op in ops]
                else:
                    specs.append((col, _aggregation(ops), col))
        elif isinstance(func, (list, tuple)):
            specs = [(f"{col}_{_aggregation(op)}", _aggregation(op), col)
                     for col in self._value_names(None) for op in func]
        elif func is not None:
            op = _aggregation(func)
            return self._op(op, None) if op not in ("var", "std") else self._op(op, None, ddof)
        else:
            raise TypeError("agg needs an op, a list of ops, a dict column -> op(s), or out=(column, op)")
        for out, op, source in specs:
            if not isinstance(op, str):
                raise ValueError(f"unknown aggregation {op!r} for {out}; use one of {', '.join(AGGREGATIONS)}")
            if source is None and op != "size":
                raise ValueError(f"{out}=(None, {op!r}): only 'size' takes no column")
        names = [s[0] for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"two aggregations would be named alike: {names}")
        return self._run(specs, ddof)

    agg = aggregate

    def _op(self, op: str, colnames: str | Sequence[str] | None, ddof: float = 0, *,
            numeric_only: bool = False) -> DataFrame:
        names = self._value_names(colnames)
        if numeric_only:  # (pandas': the string columns left out)
            names = [n for n in names if isinstance(self.df[n], pdarray)]
        return self._run([(n, op, n) for n in names], ddof)

    def size(self) -> DataFrame:
        """Rows per group, as a column "size".

        >>> df.groupby("zone").size()["size"]
        array([2, 1])
        """
        return self._run([("size", "size", None)], 0)

    def count(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Each column's non-NaN values per group.

        >>> df.groupby("zone").count()["fare"]
        array([2, 1])
        """
        return self._op("count", colnames)

    def sum(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Sum per group (floats added in row order: bit-exact).

        >>> df.groupby("zone").sum()["fare"]
        array([16.75, 12.  ])
        """
        return self._op("sum", colnames, numeric_only=numeric_only)

    def prod(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Product per group.

        >>> df.groupby("zone").prod()["fare"]
        array([68.875, 12.   ])
        """
        return self._op("prod", colnames, numeric_only=numeric_only)

    def mean(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Mean per group.

        >>> df.groupby("zone").mean()["fare"]
        array([ 8.375, 12.   ])
        """
        return self._op("mean", colnames, numeric_only=numeric_only)

    def min(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Smallest value per group (strings by their order).

        >>> df.groupby("zone").min()["fare"]
        array([ 7.25, 12.  ])
        """
        return self._op("min", colnames, numeric_only=numeric_only)

    def max(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Largest value per group.

        >>> df.groupby("zone").max()["fare"]
        array([ 9.5, 12. ])
        """
        return self._op("max", colnames, numeric_only=numeric_only)

    def argmin(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """The row (position) of each group's smallest value.

        >>> df.groupby("zone").argmin()["fare"]
        array([2, 1])
        """
        return self._op("argmin", colnames)

    def argmax(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """The row (position) of each group's largest value.

        >>> df.groupby("zone").argmax()["fare"]
        array([0, 1])
        """
        return self._op("argmax", colnames)

    def _labels(self, op: str, colnames: str | Sequence[str] | None) -> DataFrame:
        """idxmin and idxmax: argmin's or argmax's rows as the rows' labels."""
        index = self.df._index_cols()
        if len(index) != 1:
            raise ValueError("idxmin and idxmax need a one-level index; use argmin and argmax")
        lab = index[0]
        out: dict[str, Column] = {}
        for n, rows in self._aggregated([(n, op, n) for n in self._value_names(colnames)], 0).items():
            assert isinstance(rows, pdarray)
            if bool(binop("<", rows, 0).any()):
                raise ValueError(f"column {n!r} has a group with no value but NaN, which has no {op[3:]}imum's "
                                 "label (as pandas refuses it); drop those rows first")
            out[n] = lab[rows]
        return self._result(out)

    def idxmin(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """The label (index) of each group's smallest value, as pandas'.

        >>> df[1:].groupby("zone").idxmin()["fare"]
        array([2, 1])
        """
        return self._labels("argmin", colnames)

    def idxmax(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """The label (index) of each group's largest value.

        >>> df.groupby("zone").idxmax()["fare"]
        array([0, 1])
        """
        return self._labels("argmax", colnames)

    def nunique(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Distinct values per group.

        >>> df.groupby("zone").nunique()["fare"]
        array([2, 1])
        """
        return self._op("nunique", colnames)

    def first(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Each group's first non-NaN value in row order.

        >>> df.groupby("zone").first()["fare"]
        array([ 9.5, 12. ])
        """
        return self._op("first", colnames)

    def mode(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Each group's most frequent value (the smallest on ties).

        >>> df.groupby("zone").mode()["fare"]
        array([ 7.25, 12.  ])
        """
        return self._op("mode", colnames)

    def any(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Whether any value of each group is non-zero.

        >>> df.groupby("zone").any()["fare"]
        array([ True,  True])
        """
        return self._op("any", colnames)

    def all(self, colnames: str | Sequence[str] | None = None) -> DataFrame:
        """Whether every value of each group is non-zero.

        >>> df.groupby("zone").all()["fare"]
        array([ True,  True])
        """
        return self._op("all", colnames)

    def var(self, colnames: str | Sequence[str] | None = None, ddof: float = 1, *,
            numeric_only: bool = False) -> DataFrame:
        """Variance per group (ddof 1, as pandas).

        >>> df.groupby("zone").var()["fare"]
        array([2.53125,     nan])
        """
        return self._op("var", colnames, ddof, numeric_only=numeric_only)

    def std(self, colnames: str | Sequence[str] | None = None, ddof: float = 1, *,
            numeric_only: bool = False) -> DataFrame:
        """Standard deviation per group (ddof 1).

        >>> df.groupby("zone").std()["fare"]
        array([1.59099026,        nan])
        """
        return self._op("std", colnames, ddof, numeric_only=numeric_only)

    def median(self, colnames: str | Sequence[str] | None = None, *, numeric_only: bool = False) -> DataFrame:
        """Median per group.

        >>> df.groupby("zone").median()["fare"]
        array([ 8.375, 12.   ])
        """
        return self._op("median", colnames, numeric_only=numeric_only)

    def _rows(self, rows: pdarray) -> DataFrame:
        return self.df._take(sort(rows), positions_valid=True)  # row order, as pandas gives them

    def head(self, n: int = 5) -> DataFrame:
        """Each group's first n rows, in row order (pandas').

        >>> df.groupby("zone").head(1).index
        array([0, 1])
        """
        return self._rows(self.gb._head_tail_rows(n, False))

    def tail(self, n: int = 5) -> DataFrame:
        """Each group's last n rows, in row order.

        >>> df.groupby("zone").tail(1).index
        array([1, 2])
        """
        return self._rows(self.gb._head_tail_rows(n, True))

    def sample(self, n: int | None = None, frac: float | None = None, replace: bool = False,
               weights: str | pdarray | None = None, random_state: int | None = None) -> DataFrame:
        """A random sample of each group's rows (``GroupBy.sample``), in row
        order; ``weights`` a column name or a pdarray.

        >>> len(df.groupby("zone").sample(n=1, random_state=7))
        2
        """
        w = self.df[weights] if isinstance(weights, str) else weights
        rows = self.gb.sample(self.gb.keys[0], n=n, frac=frac, replace=replace, weights=w,
                              random_state=random_state, return_indices=True)
        return self._rows(rows)

    def broadcast(self, values: Any, permute: bool = True) -> Any:
        """One value per row: its group's element of values (one per group), as Arkouda's.

        >>> g = df.groupby("zone"); g.broadcast(g.sum()["fare"])
        array([16.75, 12.  , 16.75])
        """
        return self.gb.broadcast(values, permute)

    def _scan(self, op: str) -> Any:
        """A running op within each group for every value column: a
        DataFrame with the rows' index, or a pdarray after dfg[name]."""
        columns: dict[str, Column] = {}
        names = self._value_names(None)
        for n in names:
            if isinstance(self.df[n], Categorical):
                raise TypeError(f"column {n!r} holds strings (a Categorical), which have no {op}; "
                                "choose the columns: dfg[[...]]")
        for n in names:
            columns[n] = self.gb._scan(op, self.df[n])
        if self._one:
            return next(iter(columns.values()))
        return DataFrame._make(columns, self.df._index, list(self.df._index_names), self.df._nrows)

    def cumsum(self) -> Any:
        """Each row's running sum within its group, for every value column
        (pandas' groupby cumsum; floats bit for bit). One pass a column.

        >>> df.groupby("zone")["fare"].cumsum()
        array([ 9.5 , 12.  , 16.75])
        """
        return self._scan("cumsum")

    def cumprod(self) -> Any:
        """Each row's running product within its group.

        >>> df.groupby("zone")["fare"].cumprod()
        array([ 9.5  , 12.   , 68.875])
        """
        return self._scan("cumprod")

    def cummax(self) -> Any:
        """Each row's running maximum within its group.

        >>> df.groupby("zone")["fare"].cummax()
        array([ 9.5, 12. ,  9.5])
        """
        return self._scan("cummax")

    def cummin(self) -> Any:
        """Each row's running minimum within its group.

        >>> df.groupby("zone")["fare"].cummin()
        array([ 9.5 , 12.  ,  7.25])
        """
        return self._scan("cummin")

    def cumcount(self) -> pdarray:
        """Each row's place in its group, from 0 (a pdarray).

        >>> df.groupby("zone").cumcount()
        array([0, 0, 1])
        """
        return self.gb.cumcount()

    def diff(self) -> Any:
        """Each row's value less its group's previous row's (NaN first).

        >>> df.groupby("zone")["fare"].diff()
        array([  nan,   nan, -2.25])
        """
        return self._scan("diff")

    def shift(self) -> Any:
        """Each row's group's previous row's value (NaN first).

        >>> df.groupby("zone")["fare"].shift()
        array([nan, nan, 9.5])
        """
        return self._scan("shift")

    def transform(self, func: Any) -> Any:
        """Each row's group's aggregate, as pandas' ``transform``: a
        DataFrame with the rows' index, or a pdarray when one column was
        selected by name (``dfg["fare"].transform("sum")``). One request
        aggregates, then one broadcast per column.

        >>> df["share"] = df["fare"] / df.groupby("zone")["fare"].transform("sum")
        """
        op = _aggregation(func)
        agg = self._aggregated([(n, op, n) for n in self._value_names(None)], 1 if op in ("var", "std") else 0)
        dropped = None
        if self.gb.nkept < self.df._nrows:  # rows of NaN keys (dropna): NaN there, as pandas
            dropped = binop("<", self.gb.ids, 0)
            bad = [n for n, c in agg.items() if isinstance(c, Categorical) or c.dtype == np.bool_]
            if bad:
                raise ValueError(f"the rows of NaN keys get no group, so no value, and {bad} (strings or bools) "
                                 "cannot hold a missing one; groupby(..., dropna=False) gives them a group")
        columns: dict[str, Column] = {}
        for n, c in agg.items():
            per_row = self.gb.broadcast(c)
            if dropped is not None:
                per_row = _nan_where(dropped, per_row)
            columns[n] = per_row
        if self._one:
            return next(iter(columns.values()))
        return DataFrame._make(columns, self.df._index, list(self.df._index_names), self.df._nrows)

"""Categorical: string values stored on the server as integer codes.

Arktos stores numeric arrays only; a column of strings (zone names, ids,
tags) becomes a Categorical, as Arkouda's ``ak.Categorical`` and pandas'
``Categorical``: the distinct strings, sorted, stay with the client
(``categories``, a numpy str array), and a code per row, the index of its
string among them, lives on the server (``codes``, the smallest signed
integer dtype that holds them). Because the categories are sorted, the
codes sort, group and compare as the strings do: GroupBy by a Categorical
gives its keys in string order, argsort is the strings' order, and an
equality test or a substring search is a lookup per category turned into
an operation on the codes, all on the server.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..core._errors import InvalidDataError
from ..numpy import _ops
from ..numpy._ops import _default_conn, argsort, binop, concatenate, sort, unique, value_counts
from ..numpy._pdarray import EDGE_ITEMS, PRINT_THRESHOLD, pdarray
from ..numpy._strings import Strings
from ._optional import _import

if TYPE_CHECKING:
    from ..numpy._connection import Connection

__all__ = ["Categorical"]


def _code_dtype(ncategories: int) -> np.dtype:
    for dt in (np.int8, np.int16, np.int32):
        if ncategories <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def _refuse_trailing_nul(strings: Any, what: str) -> None:
    """Refuse strings that end in NUL: numpy's str arrays, which hold a
    Categorical's categories, drop trailing NULs ("a\\x00" would become "a",
    silently merged with it)."""
    for v in strings:
        if isinstance(v, str) and v.endswith("\x00"):
            raise ValueError(f"{what} holds a string ending in a NUL character ({v!r}); a Categorical "
                             "keeps its categories in numpy str arrays, which drop trailing NULs: strip them first")


def _as_strings(values: Any, what: str) -> NDArray[np.str_]:
    """values as a 1-D numpy str array; missing values refused."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype.kind == "S":
        return np.char.decode(arr, "utf-8")
    if arr.dtype.kind == "O":
        bad = [i for i, v in enumerate(arr) if not isinstance(v, str)]
        if bad:
            v = arr[bad[0]]
            if v is None or (isinstance(v, float) and np.isnan(v)) or type(v).__name__ == "NAType":
                raise ValueError(f"{what} has {len(bad)} missing values (None or NaN, the first at "
                                 f"{bad[0]}), which a Categorical cannot hold yet; fill them first, "
                                 "e.g. s.fillna('N/A')")
            raise TypeError(f"{what} holds a {type(v).__name__} at {bad[0]}; a Categorical "
                            "holds strings (upload numbers with ak.array)")
        _refuse_trailing_nul(arr, what)
        return arr.astype(str) if arr.size else np.array([], dtype="<U1")
    raise TypeError(f"{what} has dtype {arr.dtype}; a Categorical holds strings "
                    "(upload numbers with ak.array)")


class Categorical:
    """String values stored on the server as integer codes (Arkouda's and
    pandas' Categorical).

    ``Categorical(values)`` takes a list or numpy array of str, or a pandas
    Series or Categorical, and uploads one code per value; ``categories``
    (the distinct strings, sorted) stay here. Missing values (None, NaN) are
    refused. Attributes: ``codes`` (a pdarray), ``categories``, ``size``,
    ``shape``, ``nbytes`` (of the codes). It prints like a numpy str array,
    indexes like a pdarray (a mask, an index array or a slice gives a
    Categorical; an int gives the str), compares with a str or another
    Categorical, and groups (``ak.GroupBy(cat)``), sorts and counts by
    string order.

    >>> zones = ak.Categorical(["JFK", "Midtown", "JFK", "Harlem"])
    >>> zones
    Categorical(['JFK', 'Midtown', 'JFK', 'Harlem'])
    >>> zones.categories, zones.codes
    (array(['Harlem', 'JFK', 'Midtown'], dtype='<U7'), array([1, 2, 1, 0], dtype=int8))
    >>> (zones == "JFK").sum()
    np.int64(2)
    """

    ndim = 1

    def __init__(self, values: Any, *, conn: Connection | None = None) -> None:
        c = _default_conn(conn)
        categories, codes = _factorize(values)
        self.categories: NDArray[np.str_] = categories
        self.codes: pdarray = c.array(codes)

    @classmethod
    def from_codes(cls, codes: pdarray, categories: Any) -> Categorical:
        """A Categorical of codes already on the server and their categories
        (distinct and sorted, as a Categorical's are; checked).

        >>> ak.Categorical.from_codes(ak.array([0, 1, 0], dtype=ak.int8), ["a", "b"])
        Categorical(['a', 'b', 'a'])
        """
        if not isinstance(codes, pdarray) or codes.dtype.kind not in "iu":
            raise TypeError("from_codes takes an integer pdarray of codes")
        cats = _as_strings(categories, "categories")
        if cats.size > 1 and not bool(np.all(cats[:-1] < cats[1:])):
            raise ValueError("categories must be distinct and sorted (np.unique gives them so)")
        return cls._wrap(codes, cats)

    @classmethod
    def _wrap(cls, codes: pdarray, categories: NDArray[np.str_]) -> Categorical:
        """from_codes for categories known to be a Categorical's (unchecked)."""
        out = cls.__new__(cls)
        out.categories, out.codes = categories, codes
        return out

    # -- what it is ---------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of values.

        >>> ak.Categorical(["a", "b", "a"]).size
        3
        """
        return self.codes.size

    @property
    def shape(self) -> tuple[int]:
        """``(size,)``.

        >>> ak.Categorical(["a", "b"]).shape
        (2,)
        """
        return (self.codes.size,)

    @property
    def nbytes(self) -> int:
        """Bytes the codes take on the server.

        >>> ak.Categorical(["a", "b"]).nbytes
        2
        """
        return self.codes.nbytes

    def __len__(self) -> int:
        return self.codes.size

    def _strings(self, codes: NDArray[Any]) -> NDArray[np.str_]:
        return self.categories[codes] if codes.size else np.array([], dtype=self.categories.dtype)

    def to_ndarray(self) -> NDArray[np.str_]:
        """Download the codes and return the strings as a numpy str array.

        >>> ak.Categorical(["b", "a"]).to_ndarray()
        array(['b', 'a'], dtype='<U1')
        """
        return self._strings(self.codes.to_ndarray())

    def to_list(self) -> list[str]:
        """The strings as a Python list.

        >>> ak.Categorical(["b", "a"]).to_list()
        ['b', 'a']
        """
        return self.to_ndarray().tolist()  # type: ignore[no-any-return]

    def to_pandas(self) -> Any:
        """A pandas Categorical of the same codes and categories.

        >>> ak.Categorical(["b", "a"]).to_pandas()
        ['b', 'a']
        Categories (2, object): ['a', 'b']
        """
        return _import("pandas").Categorical.from_codes(self.codes.to_ndarray(), self.categories)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        out = self.to_ndarray()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        if self.size <= PRINT_THRESHOLD:
            return f"Categorical({self.to_ndarray().tolist()!r})"
        name, conn = self.codes._live_name(), self.codes._conn
        # the ends' codes only, downloaded as ranges (as pdarray's repr)
        head = self._strings(conn._download(name, 0, EDGE_ITEMS)).tolist()
        tail = self._strings(conn._download(name, self.size - EDGE_ITEMS, self.size)).tolist()
        return (f"Categorical([{', '.join(map(repr, head))}, ..., {', '.join(map(repr, tail))}], "
                f"size={self.size}, categories={self.categories.size})")

    def __iter__(self) -> Any:
        return iter(self.to_list())

    def delete(self) -> None:
        """Delete the codes on the server now (and the categories a
        register() stored there).

        >>> ak.Categorical(["a"]).delete()
        """
        if self.codes.is_registered():
            self.codes._conn.delete(_category_names(self.codes._live_name()), missing_ok=True)
        self.codes.delete()

    # -- keeping it by name -------------------------------------------------

    def register(self, name: str) -> Categorical:
        """Keep the Categorical on the server under `name`, as
        pdarray.register: the codes under `name`, the categories (UTF-8
        bytes and their lengths) beside them under ``name + "/categories"``
        and ``name + "/category_lengths"``. ``ak.Categorical.attach(name)``
        finds it again in any later session. Raises NameInUseError, and
        keeps nothing new, when one of the three names is taken.

        >>> zones.register("zones")
        >>> ak.Categorical.attach("zones")   # later, in another session
        """
        conn = self.codes._conn
        data_name, lengths_name = _category_names(name)
        if self.codes.is_registered() and self.codes._live_name() == name:
            try:  # kept under name already: again keeps it, as pdarray.register
                conn.info(data_name)
                return self
            except KeyError:
                pass
        data, lengths = _encode_strings(self.categories)
        stored: list[pdarray] = []
        try:
            for values, key in ((data, data_name), (lengths, lengths_name)):
                stored.append(conn.array(values, name=key).register(key))
            self.codes.register(name)
        except BaseException:
            for arr in stored:  # nothing half-kept
                arr.delete()
            raise
        return self

    @classmethod
    def attach(cls, name: str, *, conn: Connection | None = None) -> Categorical:
        """The Categorical register(name) kept on the server; like
        ak.attach, the result does not own it.

        >>> zones = ak.Categorical.attach("zones")
        """
        c = _default_conn(conn)
        data_name, lengths_name = _category_names(name)
        codes = c.attach(name)
        data = c.attach(data_name).to_ndarray()
        lengths = c.attach(lengths_name).to_ndarray()
        ends = np.cumsum(lengths)
        if data.dtype != np.uint8 or lengths.dtype != np.int64 or (ends[-1] if ends.size else 0) != data.size:
            raise ValueError(f"'{data_name}' and '{lengths_name}' are not a Categorical's categories "
                             "(register() stores them); they do not fit together")
        return cls.from_codes(codes, _decode_strings(data.tobytes(), lengths))

    def unregister(self) -> None:
        """Undo register() (or attach()): the categories kept on the server
        go, and this Categorical owns its codes again (dropping it deletes them).

        >>> ak.Categorical.attach("zones").unregister()
        """
        self.codes._conn.delete(_category_names(self.codes._live_name()), missing_ok=True)
        self.codes.unregister()

    def is_registered(self) -> bool:
        """Whether the codes outlive this Categorical (registered or attached).

        >>> ak.Categorical.attach("zones").is_registered()
        True
        """
        return self.codes.is_registered()

    # -- indexing and comparing ------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        got = self.codes[key]
        if isinstance(got, pdarray):
            return Categorical._wrap(got, self.categories)
        return str(self.categories[int(got)])

    def _code_of(self, value: str) -> int | None:
        i = int(np.searchsorted(self.categories, value))
        return i if i < self.categories.size and self.categories[i] == value else None

    def _codes_in(self, other: Categorical) -> pdarray:
        """other's codes numbered as self's categories (-1 where absent)."""
        if np.array_equal(other.categories, self.categories):
            return other.codes
        where = np.searchsorted(self.categories, other.categories)
        found = where < self.categories.size
        found[found] = self.categories[where[found]] == other.categories[found]
        mapping = np.where(found, where, -1).astype(_code_dtype(self.categories.size))
        return self.codes._conn.array(mapping)[other.codes]  # type: ignore[no-any-return]

    @staticmethod
    def concatenate(parts: Sequence[Any]) -> Categorical:
        """One Categorical of the parts' values in order, over the union of
        their categories (each part's codes renumbered by one gather on the
        server); ak.concatenate of Categoricals calls it.

        >>> ak.concatenate([ak.Categorical(["b", "a"]), ak.Categorical(["c"])])
        Categorical(['b', 'a', 'c'])
        """
        cats = list(parts)
        if not cats:
            raise ValueError("need at least one Categorical to concatenate")
        if not all(isinstance(p, Categorical) for p in cats):
            raise TypeError("concatenate joins Categoricals with Categoricals only; "
                            "make the others Categoricals first: ak.Categorical(values)")
        union: NDArray[np.str_] = cats[0].categories
        for p in cats[1:]:
            union = np.union1d(union, p.categories)
        base = Categorical._wrap(cats[0].codes, union)
        codes = [base._codes_in(p) for p in cats]
        width = _code_dtype(union.size)
        joined = concatenate([k if k.dtype == width else k.astype(width) for k in codes])
        return Categorical._wrap(joined, union)

    def _compare(self, other: Any, equal: bool) -> pdarray:
        op = "==" if equal else "!="
        if isinstance(other, Categorical):
            return binop(op, self.codes, self._codes_in(other))
        if isinstance(other, str):
            code = self._code_of(other)
            # No such string: -1 is no row's code, so nothing is equal.
            return binop(op, self.codes, -1 if code is None else code)
        raise TypeError(f"a Categorical compares with a str or a Categorical, not {type(other).__name__}")

    def __eq__(self, other: Any) -> pdarray:  # type: ignore[override]
        return self._compare(other, True)

    def __ne__(self, other: Any) -> pdarray:  # type: ignore[override]
        return self._compare(other, False)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise ValueError("The truth value of a Categorical is ambiguous; compare it with a str "
                         "and use .any() or .all() of the result")

    def isin(self, values: Any) -> pdarray:
        """Bool pdarray: whether each value is among `values` (strings, or a Categorical).

        >>> ak.Categorical(["a", "b", "c"]).isin(["c", "a", "zz"])
        array([ True, False,  True])
        """
        strings = values.categories if isinstance(values, Categorical) else _as_strings(
            [values] if isinstance(values, str) else list(values), "values")
        return self._lookup(np.isin(self.categories, strings))

    def _lookup(self, per_category: NDArray[np.bool_]) -> pdarray:
        """A bool per row: per_category[code], gathered on the server."""
        if self.categories.size == 0:
            return self._compare("", True)  # all False (no rows, or none to match)
        return self.codes._conn.array(per_category)[self.codes]  # type: ignore[no-any-return]

    def _string_test(self, f: Callable[[NDArray[np.str_]], NDArray[np.bool_]]) -> pdarray:
        return self._lookup(np.asarray(f(self.categories), dtype=np.bool_))

    def contains(self, substr: str) -> pdarray:
        """Bool pdarray: whether each value contains `substr` (plain text, not a regex).

        >>> ak.Categorical(["JFK", "Midtown", "Newark"]).contains("ew")
        array([False, False,  True])
        """
        return self._string_test(lambda c: np.char.find(c, substr) >= 0)

    def startswith(self, prefix: str) -> pdarray:
        """Bool pdarray: whether each value starts with `prefix`.

        >>> ak.Categorical(["JFK", "Midtown", "Newark"]).startswith("Mid")
        array([False,  True, False])
        """
        return self._string_test(lambda c: np.char.startswith(c, prefix))

    def endswith(self, suffix: str) -> pdarray:
        """Bool pdarray: whether each value ends with `suffix`.

        >>> ak.Categorical(["JFK", "Midtown", "Newark"]).endswith("k")
        array([False, False,  True])
        """
        return self._string_test(lambda c: np.char.endswith(c, suffix))

    # -- sorting and counting ---------------------------------------------------

    def argsort(self) -> pdarray:
        """The permutation that sorts the strings (stable), as np.argsort(kind="stable").

        >>> ak.Categorical(["b", "a", "c", "a"]).argsort()
        array([1, 3, 0, 2])
        """
        return argsort(self.codes)

    def sort_values(self) -> Categorical:
        """The values sorted (np.sort of the strings).

        >>> ak.Categorical(["b", "a", "c"]).sort_values()
        Categorical(['a', 'b', 'c'])
        """
        return Categorical._wrap(sort(self.codes), self.categories)

    def unique(self) -> Categorical:
        """The distinct values present, sorted.

        >>> ak.Categorical(["b", "a", "b"]).unique()
        Categorical(['a', 'b'])
        """
        codes = unique(self.codes)
        assert isinstance(codes, pdarray)
        return Categorical._wrap(codes, self.categories)

    def value_counts(self) -> tuple[Categorical, pdarray]:
        """(distinct values, how many of each), sorted by value.

        >>> ak.Categorical(["b", "a", "b"]).value_counts()
        (Categorical(['a', 'b']), array([1, 2]))
        """
        values, counts = value_counts(self.codes)
        return Categorical._wrap(values, self.categories), counts


def _encode_strings(strings: NDArray[np.str_]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Strings as their UTF-8 bytes one after another and their lengths
    (what _decode_strings reads): ASCII ones narrowed by numpy alone, the
    rest encoded one by one."""
    strings = np.ascontiguousarray(strings)  # (a view of every other one cannot be viewed as uint32)
    lengths = np.char.str_len(strings).astype(np.int64) if strings.size else np.zeros(0, np.int64)
    width = strings.dtype.itemsize // 4
    if strings.size and width:
        points = strings.view(np.uint32).reshape(len(strings), width)
        if int(points.max()) < 128:
            return _ascii_bytes(points, lengths), lengths
    encoded = [c.encode("utf-8") for c in strings.tolist()]
    return (np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
            np.array([len(e) for e in encoded], dtype=np.int64))


def _ascii_bytes(points: NDArray[np.uint32], lengths: NDArray[np.int64]) -> NDArray[np.uint8]:
    """ASCII strings' code points (a row each, padded) narrowed to their
    bytes one after another: the row-major mask keeps each row's first
    `length` points, in order."""
    keep = np.arange(points.shape[1])[None, :] < lengths[:, None]
    return points[keep].astype(np.uint8)


def _decode_strings(raw: bytes, lengths: NDArray[np.int64]) -> NDArray[np.str_]:
    """Strings stored as UTF-8 bytes one after another and their lengths
    (a registered Categorical's categories, a Parquet string column's)."""
    ends = np.cumsum(lengths)
    last = np.frombuffer(raw, dtype=np.uint8)[ends[lengths > 0] - 1] if len(raw) else np.zeros(0, np.uint8)
    if (last == 0).any():
        raise InvalidDataError("a string column holds strings ending in a NUL character; a Categorical keeps its "
                               "categories in numpy str arrays, which drop trailing NULs (they would merge with "
                               "others): strip them in the file first")
    if len(lengths) and raw.isascii():
        return _ascii_strings(np.frombuffer(raw, dtype=np.uint8), ends - lengths, lengths)
    strings = [raw[a:b].decode("utf-8") for a, b in zip((ends - lengths).tolist(), ends.tolist())]
    return np.array(strings, dtype=str) if strings else np.array([], dtype="<U1")


def _ascii_strings(buf: NDArray[np.uint8], starts: NDArray[np.int64],
                   lengths: NDArray[np.int64]) -> NDArray[np.str_]:
    """ASCII strings by numpy alone: each row's bytes gathered into a
    fixed-width bytes array, then widened (2.4x the loop's speed for 10^6
    short strings); rows a block at a time, so the gather's indices stay
    small beside the answer."""
    width = max(1, int(lengths.max()))
    out = np.empty(len(lengths), dtype=f"<U{width}")
    col = np.arange(width)
    step = max(1, (1 << 22) // width)
    for lo in range(0, len(lengths), step):
        st, ln = starts[lo:lo + step], lengths[lo:lo + step]
        mask = col[None, :] < ln[:, None]
        mat = np.zeros((len(ln), width), dtype=np.uint8)
        mat[mask] = buf[(st[:, None] + col[None, :])[mask]]
        out[lo:lo + step] = mat.view(f"S{width}").ravel()
    return out


def _register_all(parts: Sequence[tuple[Any, str]]) -> None:
    """register(name) each (pdarray, Categorical or Strings, name) in
    order, all or none: after a failure (a name taken) the ones registered
    get their old names back and are owned again, and the error is raised.
    A part kept under its name already is left as it was either way."""
    done: list[tuple[Any, list[str], bool]] = []
    try:
        for obj, name in parts:
            arrays = _arrays_of(obj)
            old, kept = [a._live_name() for a in arrays], arrays[0].is_registered()
            obj.register(name)
            if not (kept and old[0] == name):  # (registering it again changed nothing to undo)
                done.append((obj, old, kept))
    except BaseException:
        for obj, old, kept in reversed(done):
            if isinstance(obj, Categorical):
                obj.codes._conn.delete(_category_names(obj.codes._live_name()), missing_ok=True)
            for arr, name in zip(_arrays_of(obj), old):
                arr.register(name)
                if not kept:
                    arr.unregister()
        raise


def _arrays_of(obj: Any) -> list[pdarray]:
    """The server arrays a registered part's names are on (a Strings' offsets first)."""
    if isinstance(obj, Categorical):
        return [obj.codes]
    if isinstance(obj, pdarray):
        return [obj]
    return [obj.offsets, obj.entry]  # a Strings


def _from_strings(col: Strings) -> Categorical:
    """A Strings as a Categorical: its ranks among its distinct strings
    (made on the server) and those strings (downloaded)."""
    values, ranks = col.unique(return_inverse=True)
    return Categorical._wrap(ranks, values.to_ndarray().astype(object).astype(str))


def _category_names(name: str) -> tuple[str, str]:
    """The server names of a registered Categorical's categories."""
    return f"{name}/categories", f"{name}/category_lengths"


def _factorize(values: Any) -> tuple[NDArray[np.str_], NDArray[Any]]:
    """(sorted distinct strings, code of each value) for values of any
    accepted kind; pandas Categoricals keep their codes (re-numbered when
    their categories are not sorted)."""
    pd_cat = _pandas_categorical(values)
    if pd_cat is not None:
        cats = _as_strings(np.asarray(pd_cat.categories, dtype=object), "the categories")
        codes = np.asarray(pd_cat.codes)
        if (codes < 0).any():
            raise ValueError(f"the Categorical has {int((codes < 0).sum())} missing values, which "
                             "an arktos Categorical cannot hold yet; fill them first, e.g. "
                             "s.cat.add_categories('N/A').fillna('N/A')")
        order = np.argsort(cats, kind="stable")
        if not np.array_equal(order, np.arange(cats.size)):
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            cats, codes = cats[order], rank[codes]
        return cats, codes.astype(_code_dtype(cats.size))
    if isinstance(values, Sequence) and not isinstance(values, str) and len(values) == 0:
        return np.array([], dtype="<U1"), np.array([], dtype=np.int8)
    if isinstance(values, str):
        raise TypeError("Categorical takes a sequence of strings, not one str; wrap it in a list")
    # A list as objects: a str array would drop trailing NULs unseen (and
    # pandas factorizes objects faster).
    arr = np.asarray(values, dtype=object) if isinstance(values, (list, tuple)) else np.asarray(_pandas_values(values))
    if arr.ndim == 1 and arr.dtype.kind in "UO" and arr.size:
        hashed = _factorize_hashed(arr)
        if hashed is not None:
            return hashed
    strings = _as_strings(arr, "values")  # (and the precise refusals)
    cats, codes = np.unique(strings, return_inverse=True)
    return cats, codes.astype(_code_dtype(cats.size))


def _factorize_hashed(arr: NDArray[Any]) -> tuple[NDArray[np.str_], NDArray[Any]] | None:
    """pandas' factorize (hashing, then a sort of the distinct values only:
    10^7 strings of 265 distinct in 1.4 s from a str array, 0.4 s from an
    object one, where np.unique's sort of every string took 8.6 s), checked
    on the distinct values alone; None without pandas, or for values it
    cannot sort (mixed types: np.unique's path then names them)."""
    try:
        pd = importlib.import_module("pandas")  # optional
    except ImportError:
        return None
    try:
        codes, uniques = pd.factorize(arr, sort=True)
    except TypeError:
        return None
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        raise ValueError(f"values has {missing.size} missing values (None or NaN, the first at "
                         f"{missing[0]}), which a Categorical cannot hold yet; fill them first, "
                         "e.g. s.fillna('N/A')")
    distinct = np.asarray(uniques, dtype=object)
    for i, v in enumerate(distinct):
        if not isinstance(v, str):
            at = int(np.flatnonzero(codes == i)[0])
            raise TypeError(f"values holds a {type(v).__name__} at {at}; a Categorical "
                            "holds strings (upload numbers with ak.array)")
    _refuse_trailing_nul(distinct, "values")
    return distinct.astype(str), codes.astype(_code_dtype(distinct.size))


def _pandas_categorical(values: Any) -> Any:
    """values' pandas Categorical, when it is one or a Series of one."""
    module = type(values).__module__
    if not module.startswith("pandas"):
        return None
    pd = _import("pandas")
    if isinstance(values, pd.Categorical):
        return values
    if isinstance(values, (pd.Series, pd.Index)) and isinstance(values.dtype, pd.CategoricalDtype):
        return values.array
    return None


def _pandas_values(values: Any) -> Any:
    """A pandas Series or Index of strings as a numpy object array."""
    if type(values).__module__.startswith("pandas"):
        return values.to_numpy(dtype=object)
    return values


_ops.register_categorical(Categorical)

"""SegArray: an array of variable-length arrays on the server, as Arkouda's
ak.SegArray (docs/operations.md, "SegArray").

    >>> s = ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5]))
    >>> s.lengths, s[0], s.sum()
    >>> keys, distinct = ak.GroupBy(keys).unique(values)   # a SegArray per group

It is two server arrays: ``values``, every sub-array's elements one after
another, and ``segments`` (int64), where each sub-array starts in them;
sub-array i is ``values[segments[i]:segments[i] + lengths[i]]``. A start
repeated makes an empty sub-array. Aggregations (``sum``, ``min``, ...) run
on the server over a GroupBy whose groups are the sub-arrays, one answer
per sub-array, an empty one's included (sum 0, mean NaN, argmin -1, as the
server's group-by answers a group with no rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core._errors import UnknownArrayError
from ..numpy._ops import _default_conn, arange, binop, concatenate, cumsum, full, ones, searchsorted, unop, zeros
from ..numpy._pdarray import pdarray
from . import _groupby
from ._categorical import Categorical, _register_all
from ._groupby import GroupBy

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..numpy._connection import Connection

__all__ = ["SegArray"]


def _part_names(name: str) -> tuple[str, str]:
    """The server names of a registered SegArray's segments and values."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a SegArray is registered under a non-empty str name, got {name!r}")
    return f"{name}_segments", f"{name}_values"


def _gather_ranges(starts: pdarray, lengths: pdarray) -> tuple[pdarray, pdarray]:
    """(segments, indices): the rows starts[i]..starts[i]+lengths[i]-1 one
    range after another, and where each range starts among them."""
    segs = binop("-", cumsum(lengths), lengths)
    total = int(lengths.sum()) if lengths.size else 0
    idx = arange(total, conn=starts._conn)
    if total:
        idx = binop("+", idx, binop("-", starts, segs).repeat(lengths))
    return segs, idx


class SegArray:
    """An array of variable-length sub-arrays (Arkouda's SegArray, or a
    skyline or ragged array): ``segments`` (int64 starts, ascending, the
    first 0) into the flat ``values`` (a pdarray or a Categorical).

    >>> s = ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5]))
    >>> s
    SegArray([
    [1 2 3]
    []
    [4 5]
    ])
    >>> s.lengths, s.sum()
    (array([3, 0, 2]), array([6, 0, 9]))
    """

    def __init__(self, segments: pdarray, values: pdarray | Categorical,
                 lengths: pdarray | None = None) -> None:
        if not isinstance(segments, pdarray) or segments.dtype.kind not in "iu":
            raise TypeError("SegArray segments must be an integer pdarray of where each sub-array "
                            f"starts, got {type(segments).__name__}"
                            + (f" of {segments.dtype}" if isinstance(segments, pdarray) else ""))
        if not isinstance(values, (pdarray, Categorical)):
            raise TypeError(f"SegArray values must be a pdarray or Categorical, got {type(values).__name__}")
        if segments.dtype != np.int64:
            segments = segments.astype(np.int64)
        if segments.size == 0:
            if values.size:
                raise ValueError(f"SegArray: no segments for {values.size} values; "
                                 "give at least one segment start (0)")
        else:
            first, last = int(segments[0]), int(segments[-1])
            if first != 0:
                raise ValueError(f"SegArray segments must start at 0 (where the first sub-array "
                                 f"starts), got {first}")
            if last > values.size:
                raise ValueError(f"SegArray segments must be at most the number of values "
                                 f"({values.size}), got {last}")
            if not segments.is_sorted():
                raise ValueError("SegArray segments must be ascending (a start repeated makes "
                                 "an empty sub-array)")
        if lengths is not None and (not isinstance(lengths, pdarray) or lengths.size != segments.size):
            raise ValueError("SegArray lengths must be a pdarray of one length per segment")
        self._init(segments, values, lengths)

    def _init(self, segments: pdarray, values: pdarray | Categorical, lengths: pdarray | None) -> None:
        self.segments = segments
        self.values = values
        self._lengths = lengths
        self._grouping: GroupBy | None = None

    @classmethod
    def _made(cls, segments: pdarray, values: pdarray | Categorical,
              lengths: pdarray | None = None) -> SegArray:
        """A SegArray of parts known to be valid (unchecked: no requests)."""
        out = cls.__new__(cls)
        out._init(segments, values, lengths)
        return out

    @classmethod
    def from_parts(cls, segments: pdarray, values: pdarray | Categorical,
                   lengths: pdarray | None = None) -> SegArray:
        """SegArray(segments, values) (Arkouda's older constructor).

        >>> ak.SegArray.from_parts(ak.array([0, 2]), ak.array([1, 2, 3])).to_list()
        [[1, 2], [3]]
        """
        return cls(segments, values, lengths)

    @classmethod
    def from_multi_array(cls, m: pdarray | Sequence[pdarray]) -> SegArray:
        """One sub-array per array of m, in order (of one pdarray: one
        sub-array per element), as Arkouda's.

        >>> ak.SegArray.from_multi_array([ak.array([1, 2]), ak.array([3])]).to_list()
        [[1, 2], [3]]
        """
        if isinstance(m, pdarray):
            return cls._made(arange(m.size, conn=m._conn), m)
        parts = list(m)
        if not parts or not all(isinstance(p, pdarray) for p in parts):
            raise TypeError("from_multi_array takes a pdarray or a non-empty list of pdarrays")
        if len({p.dtype for p in parts}) != 1:
            raise ValueError("from_multi_array: the arrays must have one dtype, got "
                             + ", ".join(sorted({str(p.dtype) for p in parts})))
        sizes = np.array([p.size for p in parts], dtype=np.int64)
        conn = parts[0]._conn
        return cls._made(conn.array(np.cumsum(sizes) - sizes), concatenate(parts), conn.array(sizes))

    @classmethod
    def concat(cls, x: Sequence[SegArray], axis: int = 0, ordered: bool = True) -> SegArray:
        """The SegArrays of x one after another (axis 0), or, for SegArrays
        of one size, each sub-array the concatenation of theirs (axis 1).

        >>> a = ak.SegArray(ak.array([0, 1]), ak.array([1, 2, 3]))
        >>> ak.SegArray.concat([a, a]).to_list(), ak.SegArray.concat([a, a], axis=1).to_list()
        ([[1], [2, 3], [1], [2, 3]], [[1, 1], [2, 3, 2, 3]])
        """
        if not ordered:
            raise ValueError("SegArray.concat: only ordered=True is supported")
        parts = list(x)
        if not parts or not all(isinstance(p, SegArray) for p in parts):
            raise TypeError("SegArray.concat takes a non-empty list of SegArrays")
        if len({str(p.dtype) for p in parts}) != 1:
            raise ValueError("SegArray.concat: the SegArrays must have one dtype, got "
                             + ", ".join(sorted({str(p.dtype) for p in parts})))
        if axis == 0:
            offsets = np.cumsum([0] + [p.valsize for p in parts[:-1]])
            segs = concatenate([binop("+", p.segments, int(o)) for p, o in zip(parts, offsets, strict=True)])
            return cls._made(segs, concatenate([p.values for p in parts]),
                             concatenate([p.lengths for p in parts]))
        if axis != 1:
            raise ValueError(f"SegArray.concat: axis must be 0 or 1, got {axis!r}")
        if len({p.size for p in parts}) != 1:
            raise ValueError("SegArray.concat with axis=1 needs SegArrays of one size, got sizes "
                             + ", ".join(str(p.size) for p in parts))
        if any(isinstance(p.values, Categorical) for p in parts):
            raise TypeError("SegArray.concat with axis=1 takes numeric values (not Categoricals)")
        lens = parts[0].lengths
        for p in parts[1:]:
            lens = binop("+", lens, p.lengths)
        segs = binop("-", lens.cumsum(), lens)
        c = parts[0].segments._conn
        out = zeros(int(lens.sum()), dtype=parts[0].dtype, conn=c)
        before = zeros(parts[0].size, dtype=np.int64, conn=c)  # values of earlier parts in each row
        for p in parts:
            if p.valsize:
                # each value goes to its row's start, after the earlier
                # parts' values, at its own place within its sub-array
                shift = binop("-", binop("+", segs, before), p.segments).repeat(p.lengths)
                out[binop("+", arange(p.valsize, conn=c), shift)] = p.values
            before = binop("+", before, p.lengths)
        return cls._made(segs, out, lens)

    # -- what it is ---------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of sub-arrays.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).size
        3
        """
        return self.segments.size

    @property
    def valsize(self) -> int:
        """The number of values in all sub-arrays together.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).valsize
        5
        """
        return self.values.size

    @property
    def dtype(self) -> Any:
        """The values' dtype (a Categorical's: its codes').

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).dtype
        dtype('int64')
        """
        return self.values.codes.dtype if isinstance(self.values, Categorical) else self.values.dtype

    @property
    def nbytes(self) -> int:
        """The values' bytes (as Arkouda's).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).nbytes
        40
        """
        return self.values.nbytes

    @property
    def lengths(self) -> pdarray:
        """int64: each sub-array's length.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).lengths
        array([3, 0, 2])
        """
        if self._lengths is None:
            c = self.segments._conn
            if self.size == 0:
                self._lengths = self.segments.copy()
            else:
                ends = concatenate([self.segments[1:], full(1, self.valsize, np.int64, conn=c)])
                self._lengths = ends - self.segments
        return self._lengths

    @property
    def non_empty(self) -> pdarray:
        """bool: whether each sub-array has values.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).non_empty
        array([ True, False,  True])
        """
        return binop(">", self.lengths, 0)

    @property
    def grouping(self) -> GroupBy:
        """A GroupBy whose groups are the sub-arrays (group i: sub-array i,
        empty ones included), over the values' rows.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).grouping
        GroupBy(ngroups=3, nkeys=1, strategy='segments')
        """
        if self._grouping is None:
            self._grouping = GroupBy._of_segments(self.segments, self.lengths, self.valsize)
        return self._grouping

    def __len__(self) -> int:
        return self.size

    # -- keeping it by name -------------------------------------------------------

    def register(self, name: str) -> SegArray:
        """Keep the SegArray on the server under `name`, as
        pdarray.register: its segments under ``name + "_segments"`` and its
        values under ``name + "_values"`` (Arkouda's names; a Categorical's
        as Categorical.register keeps it). ``ak.SegArray.attach(name)`` finds
        it again in any later session. Only names change, except that a part
        already registered under another name (the segments that
        ``GroupBy.unique`` of a list of arrays shares among its SegArrays)
        is copied, so that the earlier registration stays whole. Raises
        NameInUseError, and keeps nothing new, when a name is taken.

        >>> s.register("trips_by_zone")
        >>> ak.SegArray.attach("trips_by_zone")   # later, in another session
        """
        segs_name, vals_name = _part_names(name)
        segments, values = self.segments, self.values
        if segments.is_registered() and segments._live_name() != segs_name:
            segments = segments.copy()
        codes = values.codes if isinstance(values, Categorical) else values
        if codes.is_registered() and codes._live_name() != vals_name:
            values = Categorical._wrap(codes.copy(), values.categories) if isinstance(values, Categorical) \
                else codes.copy()
        _register_all([(segments, segs_name), (values, vals_name)])
        self.segments, self.values = segments, values
        return self

    @classmethod
    def attach(cls, name: str, *, conn: Connection | None = None) -> SegArray:
        """The SegArray register(name) kept on the server (checked as the
        constructor checks one); like ak.attach, it does not own it.

        >>> s = ak.SegArray.attach("trips_by_zone")
        """
        c = _default_conn(conn)
        segs_name, vals_name = _part_names(name)
        segments = c.attach(segs_name)
        try:
            c.info(vals_name + "/categories")
            values: pdarray | Categorical = Categorical.attach(vals_name, conn=c)
        except UnknownArrayError:
            values = c.attach(vals_name)
        return cls(segments, values)

    def unregister(self) -> None:
        """Undo register() (or attach()): this SegArray owns its arrays
        again (dropping it deletes them). The names stay.

        >>> ak.SegArray.attach("trips_by_zone").unregister()
        """
        self.segments.unregister()
        self.values.unregister()

    def is_registered(self) -> bool:
        """Whether its arrays outlive this SegArray (registered or attached).

        >>> ak.SegArray.attach("trips_by_zone").is_registered()
        True
        """
        return self.segments.is_registered() and self.values.is_registered()

    # -- indexing ---------------------------------------------------------------

    def _select(self, key: Any) -> SegArray:
        """The sub-arrays at key (a slice, or an integer or bool array)."""
        if not isinstance(key, (slice, pdarray)):
            key = np.asarray(key)
            if key.size == 0:
                key = key.astype(np.int64)  # [] selects nothing, as numpy
            if key.ndim != 1 or key.dtype.kind not in "iub":
                raise TypeError(f"SegArray index must be an integer, a slice or an integer or bool "
                                f"array, got {type(key).__name__} of {key.dtype} and shape {key.shape}")
            key = self.segments._conn.array(key)
        elif isinstance(key, pdarray) and key.dtype.kind not in "iub":
            raise TypeError(f"SegArray index must be an integer, a slice or an integer or bool "
                            f"array, got a pdarray of {key.dtype}")
        starts, lens = self.segments[key], self.lengths[key]
        segs, idx = _gather_ranges(starts, lens)
        return SegArray._made(segs, self.values[idx], lens)

    def __getitem__(self, key: Any) -> Any:
        """s[i]: sub-array i (a pdarray, or a Categorical); s[slice],
        s[integer or bool array]: a SegArray of those sub-arrays.

        >>> s = ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> s[0], s[-1], s[1:].to_list()
        (array([1, 2, 3]), array([4, 5]), [[], [4, 5]])
        """
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            i = int(key) + (self.size if key < 0 else 0)
            if not 0 <= i < self.size:
                raise IndexError(f"SegArray index {int(key)} is out of bounds for {self.size} sub-arrays")
            start, n = int(self.segments[i]), int(self.lengths[i])
            return self.values[start:start + n]
        return self._select(key)

    def __iter__(self) -> Any:
        return iter(self.to_ndarray())

    def __eq__(self, other: object) -> pdarray:  # type: ignore[override]
        """Whether each sub-array equals other's (same length and values).

        >>> s = ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3]))
        >>> s == ak.SegArray(ak.array([0, 2]), ak.array([1, 5, 3]))
        array([False,  True])
        """
        if not isinstance(other, SegArray):
            return NotImplemented
        if self.size != other.size:
            raise ValueError(f"cannot compare SegArrays of {self.size} and {other.size} sub-arrays")
        same = binop("==", self.lengths, other.lengths)
        out = zeros(self.size, dtype=bool, conn=self.segments._conn)
        if bool(same.any()):
            a, b = self[same], other[same]
            if isinstance(a.values, Categorical) or isinstance(b.values, Categorical):
                if not (isinstance(a.values, Categorical) and isinstance(b.values, Categorical)):
                    raise TypeError("cannot compare a SegArray of strings with one of numbers")
                equal = a.values == b.values  # by string, whatever the categories
            else:
                equal = binop("==", a.values, b.values)
            out[same] = a.all(equal)
        return out

    def __ne__(self, other: object) -> pdarray:  # type: ignore[override]
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else unop("invert", eq)

    __hash__ = None  # type: ignore[assignment]

    # -- to numpy ------------------------------------------------------------------

    def to_ndarray(self) -> NDArray[Any]:
        """A numpy object array of the sub-arrays (numpy arrays; strings for
        a Categorical's values).

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).to_ndarray()
        array([array([1, 2]), array([3])], dtype=object)
        """
        vals = self.values.to_ndarray()
        starts = self.segments.to_ndarray()
        ends = np.append(starts[1:], vals.size) if starts.size else starts
        out = np.empty(self.size, dtype=object)
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            out[i] = vals[s:e]
        return out

    def to_list(self) -> list[list[Any]]:
        """The sub-arrays as Python lists.

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).to_list()
        [[1, 2], [3]]
        """
        return [a.tolist() for a in self.to_ndarray()]

    tolist = to_list

    def __str__(self) -> str:
        shown = list(range(self.size)) if self.size <= 6 else [0, 1, 2, self.size - 3, self.size - 2, self.size - 1]
        rows = [str(r) for r in (self[np.array(shown, dtype=np.int64)].to_ndarray() if shown else [])]
        if self.size > 6:
            rows.insert(3, "...")
        return "\n".join(["SegArray([", *rows, "])"])

    def __repr__(self) -> str:
        return self.__str__()

    def copy(self) -> SegArray:
        """A copy: new segments and values on the server.

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).copy().to_list()
        [[1, 2], [3]]
        """
        return SegArray._made(self.segments.copy(), self.values[:], self.lengths.copy())

    # -- elements by place ----------------------------------------------------------

    def _at(self, j: int) -> tuple[pdarray, pdarray]:
        """(whether each sub-array has an element j, where it is in values)."""
        if not isinstance(j, (int, np.integer)) or isinstance(j, bool):
            raise TypeError(f"index must be an integer, got {type(j).__name__}")
        if j >= 0:
            return binop(">", self.lengths, int(j)), binop("+", self.segments, int(j))
        return (binop(">=", self.lengths, -int(j)),
                binop("+", binop("+", self.segments, self.lengths), int(j)))

    def get_jth(self, j: int, return_origins: bool = True, compressed: bool = False,
                default: Any = 0) -> Any:
        """Element j of each sub-array (from the end for a negative j): of
        every sub-array, ``default`` where it is too short, or with
        ``compressed=True`` of only those long enough; with
        ``return_origins`` also which were (bool).

        >>> s = ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> s.get_jth(1)
        (array([2, 0, 5]), array([ True, False,  True]))
        """
        ok, at = self._at(j)
        got = self.values[at[ok]]
        if compressed or isinstance(self.values, Categorical):
            res = got
        else:
            res = full(self.size, default, self.dtype, conn=self.segments._conn)
            res[ok] = got
        return (res, ok) if return_origins else res

    def set_jth(self, i: Any, j: int, v: Any) -> None:
        """Set element j of the sub-arrays at i (an integer or an integer
        array) to v, in place; every one must have an element j.

        >>> s = ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> s.set_jth(ak.array([0, 2]), 0, 9); s.to_list()
        [[9, 2, 3], [], [9, 5]]
        """
        if isinstance(self.values, Categorical):
            raise TypeError("set_jth: a Categorical's values are not set in place")
        ok, at = self._at(j)
        sel = ok[i]
        if not (bool(sel.all()) if isinstance(sel, pdarray) else bool(sel)):
            raise ValueError(f"set_jth: not every sub-array at i has an element {j}")
        self.values[at[i]] = v

    def get_length_n(self, n: int, return_origins: bool = True) -> Any:
        """The sub-arrays of length n, as n columns (column k: their k-th
        elements); with ``return_origins`` also which had length n.

        >>> ak.SegArray(ak.array([0, 2, 3]), ak.array([1, 2, 3, 4, 5])).get_length_n(2)
        ([array([1, 4]), array([2, 5])], array([ True, False,  True]))
        """
        mask = binop("==", self.lengths, n)
        starts = self.segments[mask]
        cols = [self.values[binop("+", starts, k)] for k in range(n)]
        return (cols, mask) if return_origins else cols

    def _fixes(self, n: int, proper: bool, suffix: bool) -> tuple[list[Any], pdarray]:
        long = binop(">" if proper else ">=", self.lengths, n)
        ends = binop("-", binop("+", self.segments, self.lengths), n) if suffix else self.segments
        base = ends[long]
        return [self.values[binop("+", base, k)] for k in range(n)], long

    def get_prefixes(self, n: int, return_origins: bool = True, proper: bool = True) -> Any:
        """The first n elements of each sub-array long enough (longer than n
        if ``proper``), as n columns; with ``return_origins`` which were.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).get_prefixes(2)
        ([array([1]), array([2])], array([ True, False, False]))
        """
        cols, long = self._fixes(n, proper, False)
        return (cols, long) if return_origins else cols

    def get_suffixes(self, n: int, return_origins: bool = True, proper: bool = True) -> Any:
        """The last n elements of each sub-array long enough, as n columns.

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).get_suffixes(1)
        ([array([3, 5])], array([ True, False,  True]))
        """
        cols, long = self._fixes(n, proper, True)
        return (cols, long) if return_origins else cols

    def append(self, other: SegArray, axis: int = 0) -> SegArray:
        """``SegArray.concat((self, other), axis)``.

        >>> s = ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3]))
        >>> s.append(s).to_list()
        [[1, 2], [3], [1, 2], [3]]
        """
        if not isinstance(other, SegArray):
            raise TypeError(f"append takes a SegArray, got {type(other).__name__}")
        return SegArray.concat((self, other), axis=axis)

    def append_single(self, x: Any, prepend: bool = False) -> SegArray:
        """Each sub-array with one more value at its end (or start): x, a
        scalar or one value per sub-array.

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).append_single(9).to_list()
        [[1, 2, 9], [3, 9]]
        """
        if isinstance(self.values, Categorical):
            raise TypeError("append_single takes numeric values (not a Categorical's)")
        c = self.segments._conn
        col = x if isinstance(x, pdarray) else full(self.size, x, self.dtype, conn=c)
        if col.size != self.size:
            raise ValueError(f"append_single takes a scalar or one value per sub-array "
                             f"({self.size}), got {col.size}")
        one = full(self.size, 1, np.int64, conn=c)
        single = SegArray._made(arange(self.size, conn=c), col.astype(self.dtype), one)
        return SegArray.concat((single, self) if prepend else (self, single), axis=1)

    def prepend_single(self, x: Any) -> SegArray:
        """Each sub-array with one more value at its start.

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).prepend_single(0).to_list()
        [[0, 1, 2], [0, 3]]
        """
        return self.append_single(x, prepend=True)

    # -- runs, n-grams and sets within each sub-array ------------------------------------

    def _segment_ids(self) -> pdarray:
        """int32: the sub-array of every value (the grouping's ids)."""
        return self.grouping.ids

    def remove_repeats(self, return_multiplicity: bool = False) -> Any:
        """Each run of equal consecutive values within a sub-array made one
        value (Arkouda's); with ``return_multiplicity`` also how long each
        run was, as a SegArray of the same shape.

        >>> s = ak.SegArray(ak.array([0, 4]), ak.array([1, 1, 2, 1, 3, 3]))
        >>> s.remove_repeats(return_multiplicity=True)[1].to_list()
        [[2, 1, 1], [2]]
        """
        c = self.segments._conn
        v = self._numeric("remove_repeats")
        n = self.valsize
        repeat = zeros(n, dtype=bool, conn=c)
        if n > 1:
            repeat[1:] = binop("==", v[1:], v[:-1])
            repeat[self.segments[self.non_empty]] = False
        keep = unop("invert", repeat)
        lens = self.grouping.sum(keep)[1].astype(np.int64)
        out = SegArray._made(binop("-", lens.cumsum(), lens), v[keep], lens)
        if not return_multiplicity:
            return out
        at = arange(n, conn=c)[keep]
        ends = concatenate([at[1:], full(1, n, np.int64, conn=c)]) if at.size else at
        return out, SegArray._made(out.segments, binop("-", ends, at), lens)

    def get_ngrams(self, n: int, return_origins: bool = True) -> Any:
        """Every run of n consecutive values within a sub-array, as n
        columns (column k: the n-grams' k-th values), with
        ``return_origins`` also each n-gram's sub-array (int64), as
        Arkouda's.

        >>> s = ak.SegArray(ak.array([0, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> s.get_ngrams(2)
        ([array([1, 2, 4]), array([2, 3, 5])], array([0, 0, 1]))
        """
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        longest = int(self.lengths.max()) if self.size else 0
        if n > longest:
            raise ValueError(f"n must be at most the longest sub-array's length ({longest}), got {n}")
        c = self.segments._conn
        m = self.valsize - n + 1
        inner = ones(self.valsize, dtype=bool, conn=c)  # not a sub-array's first value
        inner[self.segments[self.non_empty]] = False
        valid = ones(m, dtype=bool, conn=c)
        for k in range(1, n):
            valid = binop("&", valid, inner[k:k + m])
        cols = [self.values[k:k + m][valid] for k in range(n)]
        if not return_origins:
            return cols
        return cols, self._segment_ids()[:m][valid].astype(np.int64)

    def _setop(self, other: SegArray, keep: str) -> SegArray:
        """Each sub-array's set operation with other's at the same place:
        their distinct values (NaN skipped) kept by how many of the two
        hold each (keep: "both", "any", "one", "self")."""
        if not isinstance(other, SegArray):
            raise TypeError(f"a set operation takes another SegArray, got {type(other).__name__}")
        if other.size != self.size:
            raise ValueError(f"set operations pair sub-arrays: {self.size} and {other.size} of them")
        a, b = self._numeric("a set operation"), other._numeric("a set operation")
        c = self.segments._conn
        seg = concatenate([self._segment_ids(), other._segment_ids()])
        side = concatenate([full(a.size, 0, np.int8, conn=c), full(b.size, 1, np.int8, conn=c)])
        g = GroupBy([seg, concatenate([a, b])])
        (ks, kv), r = g.agg(n=(side, "nunique"), lo=(side, "min"))
        mask = {"both": binop("==", r["n"], 2), "one": binop("==", r["n"], 1),
                "self": binop("&", binop("==", r["n"], 1), binop("==", r["lo"], 0))}.get(keep)
        if mask is not None:
            ks, kv = ks[mask], kv[mask]
        return SegArray._made(searchsorted(ks, arange(self.size, conn=c).astype(np.int32)), kv)

    def intersect(self, other: SegArray) -> SegArray:
        """Each sub-array's sorted distinct values also in other's sub-array
        at the same place (np.intersect1d of each pair; NaN skipped).

        >>> a = ak.SegArray(ak.array([0, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> a.intersect(ak.SegArray(ak.array([0, 2]), ak.array([3, 1, 6]))).to_list()
        [[1, 3], []]
        """
        return self._setop(other, "both")

    def union(self, other: SegArray) -> SegArray:
        """Each sub-array's sorted distinct values with other's at the same
        place (np.union1d of each pair; NaN skipped).

        >>> a = ak.SegArray(ak.array([0, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> a.union(ak.SegArray(ak.array([0, 2]), ak.array([3, 1, 6]))).to_list()
        [[1, 2, 3], [4, 5, 6]]
        """
        return self._setop(other, "any")

    def setdiff(self, other: SegArray) -> SegArray:
        """Each sub-array's sorted distinct values not in other's at the
        same place (np.setdiff1d of each pair; NaN skipped).

        >>> a = ak.SegArray(ak.array([0, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> a.setdiff(ak.SegArray(ak.array([0, 2]), ak.array([3, 1, 6]))).to_list()
        [[2], [4, 5]]
        """
        return self._setop(other, "self")

    def setxor(self, other: SegArray) -> SegArray:
        """Each sub-array's sorted distinct values in exactly one of it and
        other's at the same place (np.setxor1d of each pair; NaN skipped).

        >>> a = ak.SegArray(ak.array([0, 3]), ak.array([1, 2, 3, 4, 5]))
        >>> a.setxor(ak.SegArray(ak.array([0, 2]), ak.array([3, 1, 6]))).to_list()
        [[2], [4, 5, 6]]
        """
        return self._setop(other, "one")

    def _numeric(self, what: str) -> pdarray:
        if isinstance(self.values, Categorical):
            raise TypeError(f"{what} takes a SegArray of numbers, not of a Categorical's strings")
        return self.values

    # -- aggregations over each sub-array (on the server) ------------------------------

    def _agg(self, op: str, x: Any) -> pdarray:
        return self.grouping.aggregate(self.values if x is None else x, op)[1]  # type: ignore[no-any-return]

    def aggregate(self, op: str, x: Any = None) -> pdarray:
        """op (a GroupBy aggregation) of each sub-array's values, or of x
        (one value per element of values).

        >>> ak.SegArray(ak.array([0, 2]), ak.array([1, 2, 3])).aggregate("max")
        array([2, 3])
        """
        return self._agg(op, x)

    def sum(self, x: Any = None) -> pdarray:
        """Sum (0 for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).sum()
        array([6, 0, 9])
        """
        return self._agg("sum", x)

    def prod(self, x: Any = None) -> pdarray:
        """Product (1 for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).prod()
        array([ 6,  1, 20])
        """
        return self._agg("prod", x)

    def min(self, x: Any = None) -> pdarray:
        """Smallest value (0, or NaN for floats, for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).min()
        array([1, 0, 4])
        """
        return self._agg("min", x)

    def max(self, x: Any = None) -> pdarray:
        """Largest value (0, or NaN for floats, for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).max()
        array([3, 0, 5])
        """
        return self._agg("max", x)

    def argmin(self, x: Any = None) -> pdarray:
        """Where in values the smallest value is (-1: empty) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).argmin()
        array([ 0, -1,  3])
        """
        return self._agg("argmin", x)

    def argmax(self, x: Any = None) -> pdarray:
        """Where in values the largest value is (-1: empty) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).argmax()
        array([ 2, -1,  4])
        """
        return self._agg("argmax", x)

    def any(self, x: Any = None) -> pdarray:
        """Whether any value is nonzero of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).any()
        array([ True, False,  True])
        """
        return self._agg("any", x)

    def all(self, x: Any = None) -> pdarray:
        """Whether every value is nonzero (True for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).all()
        array([ True,  True,  True])
        """
        return self._agg("all", x)

    def OR(self, x: Any = None) -> pdarray:
        """Bitwise OR (integer or bool values) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).OR()
        array([3, 0, 5])
        """
        return self._agg("or", x)

    def AND(self, x: Any = None) -> pdarray:
        """Bitwise AND (integer or bool values; 0 for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).AND()
        array([0, 0, 4])
        """
        return self._agg("and", x)

    def XOR(self, x: Any = None) -> pdarray:
        """Bitwise XOR (integer or bool values) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).XOR()
        array([0, 0, 1])
        """
        return self._agg("xor", x)

    def nunique(self, x: Any = None) -> pdarray:
        """Distinct values (NaN not counted) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).nunique()
        array([3, 0, 2])
        """
        return self._agg("nunique", x)

    def mean(self, x: Any = None) -> pdarray:
        """Mean (NaN for an empty sub-array) of each sub-array (of x: one value per element).

        >>> ak.SegArray(ak.array([0, 3, 3]), ak.array([1, 2, 3, 4, 5])).mean()
        array([2. , nan, 4.5])
        """
        return self._agg("mean", x)

    def unique(self, x: Any = None) -> SegArray:
        """Each sub-array's distinct values, sorted (NaN skipped), as a
        SegArray of the same size.

        >>> ak.SegArray(ak.array([0, 3]), ak.array([2, 1, 2, 5, 5])).unique().to_list()
        [[1, 2], [5]]
        """
        got = self.grouping.unique(self.values if x is None else x)[1]
        assert isinstance(got, SegArray)
        return got


_groupby.register_segarray(SegArray)

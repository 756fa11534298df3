"""Group-by on the server, as Arkouda's ak.GroupBy (docs/operations.md, "Group-by").

    >>> g = ak.GroupBy([pickup, dropoff])          # one pdarray or a list of them
    >>> keys, total = g.sum(fare)                  # keys: list of pdarrays (one per key)
    >>> g.unique_keys, g.ngroups, g.size()
    >>> g.broadcast(total)                         # one value per row again

The server maps the keys to an int32 group id per row (kept on the server as
``g.ids``) and the unique keys, sorted ascending; every aggregation then runs
over those ids. Float keys that are NaN are dropped unless ``dropna=False``;
NaN values are skipped by every aggregation (pandas' skipna).

The grouping is made when it is first needed, like pandas' groupby: an
aggregation of a GroupBy whose ids nobody has asked for goes with the
grouping in one request, and the server answers it in one pass over the
keys and values where it can (one values array, and keys the server
groups by a small table, by hashing or, unless nearly every row is its own
group, by partitions: ``g.fused`` is then True), making no ids at all
(docs/protocol.md, "Grouping and aggregating in one request"). Anything
else that needs the ids (``g.ids``, ``segments``, ``broadcast``, the
aggregations the server cannot fuse) makes them once. So that the groups
are those of the keys as they were when the GroupBy was made, this client
makes the grouping of every pending GroupBy before any request that could
change or delete one of its keys (``setitem``, an ``out=`` operation,
``delete``; ``load_all``, ``read_parquet`` and other requests that name no
array group every pending GroupBy). If that grouping fails (out of memory),
the request still goes on and the GroupBy says why at its next use. Another
client writing the key arrays in between is not seen: call ``g.group()``
first if that can happen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core._errors import UnknownArrayError
from ..numpy._bigint import BigIntArray
from ..numpy._ops import _default_conn, arange, binop, full, round
from ..numpy._pdarray import pdarray
from ..numpy._strings import Strings
from ._categorical import Categorical, _register_all

if TYPE_CHECKING:
    from ..numpy._connection import Connection
    from ._segarray import SegArray  # (typing only: it builds on GroupBy)

#: SegArray, registered by arktos.pandas._segarray (which builds on this
#: module): GroupBy.unique returns SegArrays.
_segarray_class: type[SegArray] | None = None


def register_segarray(cls: type[SegArray]) -> None:
    """Called by arktos.pandas._segarray as it is imported."""
    global _segarray_class
    _segarray_class = cls

__all__ = ["GroupBy"]

#: What GroupBy groups by.
_Key = pdarray | Categorical | Strings | BigIntArray
_KEY_TYPES = (pdarray, Categorical, Strings, BigIntArray)


class _BigKey:
    """A bigint key's place among the key arrays: its limb count (that many
    uint64 key arrays) and its max_bits."""

    __slots__ = ("limbs", "max_bits")

    def __init__(self, limbs: int, max_bits: int) -> None:
        self.limbs, self.max_bits = limbs, max_bits


STRATEGIES = ("auto", "dense", "hash", "partitioned", "sort", "chained", "wide")
AGGREGATIONS = ("size", "count", "sum", "prod", "mean", "min", "max", "argmin", "argmax",
                "nunique", "first", "mode", "any", "all", "var", "std", "median", "or", "and", "xor")
#: What a Categorical's values can be aggregated by (its strings' order).
CATEGORICAL_AGGREGATIONS = ("size", "count", "nunique", "first", "mode", "min", "max", "argmin", "argmax")


def _aggregation(op: Any) -> Any:
    """An aggregation's name: op itself, or that of a function named like one
    (np.sum, np.mean, np.max or np.amax, builtins' len as "size", ...), as
    pandas' agg takes them. NaN values are skipped either way, as pandas does."""
    if isinstance(op, str) or not callable(op):
        return op
    name = getattr(op, "__name__", None)
    return {"amax": "max", "amin": "min", "len": "size"}.get(name, name) if isinstance(name, str) else op


class GroupBy:
    """Rows grouped by one or several key pdarrays (integer, float or bool)
    or Categoricals (grouped by their codes: unique keys in string order,
    as Categoricals).

    Attributes: ``unique_keys`` (a pdarray for one key, else a tuple of them,
    sorted), ``ngroups``, ``ids`` (int32 group of every row, -1 for a dropped
    row), ``strategy`` (how the server grouped: dense, hash, partitioned, sort, chained or wide);
    ``segments`` and ``permutation`` are computed on first use; ``fused``
    (whether the last aggregation was grouped and aggregated in one pass).

    >>> keys = ak.array([1, 2, 1, 3, 2, 1])
    >>> vals = ak.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    >>> g = ak.GroupBy(keys)
    >>> k, s = g.sum(vals); k, s
    (array([1, 2, 3]), array([100.,  70.,  40.]))
    >>> g, g.fused
    (GroupBy(ngroups=3, nkeys=1, strategy='dense'), True)
    >>> g.segments, g.permutation
    (array([0, 3, 5]), array([0, 2, 5, 1, 4, 3]))
    """

    #: The aggregations aggregate takes beside "size" (Arkouda's name).
    Reductions: frozenset[str] = frozenset(AGGREGATIONS) - {"size"}

    def __init__(self, keys: _Key | Sequence[_Key],
                 dropna: bool = True, *, strategy: str = "auto", assume_sorted: bool = False) -> None:
        # assume_sorted: Arkouda's hint that the keys are sorted already; the
        # server's strategies do not need it (the groups are the same), so
        # it is accepted and checked for type only.
        if not isinstance(assume_sorted, bool):
            raise TypeError("assume_sorted must be of type bool")
        self._single = isinstance(keys, _KEY_TYPES)
        given = [keys] if isinstance(keys, _KEY_TYPES) else list(keys)
        if not given or not all(isinstance(k, _KEY_TYPES) for k in given):
            raise TypeError("GroupBy keys must be a pdarray, Categorical, Strings or bigint array, "
                            "or a non-empty list of them")
        # A Categorical key groups by its codes; its unique keys come back
        # as Categoricals of its categories. A Strings key groups by each
        # string's rank among its distinct strings (the server's exact
        # unique), which sorts as the strings do; its unique keys come back
        # as those strings. A bigint key groups by its uint64 limbs, most
        # significant first (so groups sort as the values do); its unique
        # keys are made into a bigint array again (_BigKey).
        self._categories: list[Any] = []
        key_list: list[pdarray] = []
        for k in given:
            if isinstance(k, BigIntArray):
                self._categories.append(_BigKey(len(k.limbs), k.max_bits))
                key_list.extend(k.limbs)
            elif isinstance(k, Strings):
                distinct, ranks = k.unique(return_inverse=True)
                self._categories.append(distinct)
                key_list.append(ranks)
            elif isinstance(k, Categorical):
                self._categories.append(k.categories)
                key_list.append(k.codes)
            else:
                self._categories.append(None)
                key_list.append(k)
        for k in key_list:
            if k.dtype.kind not in "iufb":
                raise TypeError(f"cannot group by a {k.dtype} array; keys are integer, float or bool")
        if any(k.size != key_list[0].size for k in key_list):
            raise ValueError("GroupBy keys must have one length, got "
                             + ", ".join(str(k.size) for k in key_list))
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown group-by strategy {strategy!r}; use {', '.join(STRATEGIES)}")
        self._conn: Connection = key_list[0]._conn
        self.keys = key_list
        self.dropna = dropna
        self._strategy_arg = strategy
        self._rows = key_list[0].size
        self._ids: pdarray | None = None
        self._ngroups: int | None = None
        self._nkept: int | None = None
        self._strategy: str | None = None
        # the unique keys as the server made them (codes for a Categorical key)
        self._unique_keys: pdarray | tuple[pdarray, ...] | None = None
        #: whether the last aggregation was grouped and aggregated in one pass
        self.fused = False
        self._segments: pdarray | None = None
        self._permutation: pdarray | None = None
        # Why the grouping could not be made before its keys changed: the
        # GroupBy cannot be used any more.
        self._broken: BaseException | None = None
        self._conn._lazy_add(self)

    @classmethod
    def _of_segments(cls, segments: pdarray, lengths: pdarray, rows: int) -> GroupBy:
        """The GroupBy of a SegArray: group i is sub-array i (rows
        segments[i] .. segments[i] + lengths[i] - 1), empty ones included,
        its ids made here (one repeat on the server), so that nothing groups."""
        if segments.size > np.iinfo(np.int32).max:
            raise ValueError(f"a SegArray of {segments.size} sub-arrays is too many to aggregate "
                             "(group ids are int32: at most 2**31 - 1)")
        c = segments._conn
        ids = arange(segments.size, dtype=np.int32, conn=c).repeat(lengths)
        g = cls.__new__(cls)
        g._single, g._categories, g._conn = True, [None], c
        g.keys, g.dropna, g._strategy_arg, g._rows = [ids], True, "auto", rows
        g._ids, g._ngroups, g._nkept, g._strategy = ids, segments.size, rows, "segments"
        g._unique_keys = arange(segments.size, conn=c)
        g.fused, g._segments, g._permutation, g._broken = False, segments, None, None
        return g

    def _args(self) -> dict[str, Any]:
        return {"keys": [k._live_name() for k in self.keys], "dropna": bool(self.dropna),
                "strategy": self._strategy_arg}

    def _take(self, result: dict[str, Any]) -> None:
        """Keep what a groupby reply says of the grouping (its ids, when it
        has them). Unique keys and counts already known stay, unless ids come:
        then everything is taken from the reply that made them, so that the
        ids and the keys they number always go together."""
        if self._unique_keys is None or result.get("ids") is not None:
            uk = [self._conn._pdarray(info, owned=True) for info in result["keys"]]
            self._unique_keys = uk[0] if len(uk) == 1 else tuple(uk)
            self._ngroups = int(result["ngroups"])
            self._nkept = int(result["kept"])
            self._strategy = result["strategy"]
        else:  # the same keys again: ours stay (the server frees the copies)
            for info in result["keys"]:
                self._conn._pdarray(info, owned=True)
        if result.get("ids") is not None:
            self._ids = self._conn._pdarray(result["ids"], owned=True)
            self._conn._lazy_discard(self)

    def _usable(self) -> None:
        if self._broken is not None:
            raise RuntimeError("this GroupBy could not be grouped before its keys were "
                               f"written or deleted ({self._broken}); make a new GroupBy"
                               ) from self._broken

    def _group_before_write(self) -> None:
        """group(), called before a request that may change a key: on failure
        the GroupBy is left unusable (saying why) and the request goes on."""
        try:
            self.group()
        except Exception as e:  # noqa: BLE001 - kept, raised at the next use
            self._broken = e
            self._conn._lazy_discard(self)

    def group(self) -> GroupBy:
        """Make the grouping now (its ids), if it is not made yet; returns self.

        >>> g.group().ids
        array([0, 1, 0, 2, 1, 0], dtype=int32)
        """
        self._usable()
        if self._ids is None:
            result, _ = self._conn._request("groupby", self._args())
            self._take(result)
        return self

    @property
    def ids(self) -> pdarray:
        """int32: each row's group (-1 for a dropped row); made on first use.

        >>> g.ids
        array([0, 1, 0, 2, 1, 0], dtype=int32)
        """
        self.group()
        assert self._ids is not None
        return self._ids

    def _known(self) -> None:
        self._usable()
        if self._unique_keys is None:
            self.group()

    @property
    def ngroups(self) -> int:
        """The number of groups.

        >>> g.ngroups
        3
        """
        self._known()
        assert self._ngroups is not None
        return self._ngroups

    @property
    def nkept(self) -> int:
        """Rows not dropped (NaN keys with dropna).

        >>> g.nkept
        6
        """
        self._known()
        assert self._nkept is not None
        return self._nkept

    @property
    def strategy(self) -> str:
        """How the server grouped (dense, hash, partitioned, sort, chained or wide).

        >>> g.strategy
        'dense'
        """
        self._known()
        assert self._strategy is not None
        return self._strategy

    @property
    def nkeys(self) -> int:
        """The number of key arrays (Arkouda's).

        >>> g.nkeys
        1
        """
        return len(self._categories)

    @property
    def length(self) -> int:
        """Rows in a group, i.e. ``permutation``'s length (Arkouda's; ``nkept``).

        >>> g.length
        6
        """
        return self.nkept

    # -- keeping it by name ---------------------------------------------------

    def register(self, name: str) -> GroupBy:
        """Keep the grouping on the server under `name` (Arkouda's
        GroupBy.register), made first if it is not yet: its ids under
        ``name + "_ids"`` and its unique keys under ``name + "_keys_0"``,
        ``"_keys_1"``, ... (a Categorical key's as Categorical.register
        keeps one). ``ak.GroupBy.attach(name)`` finds it in any later
        session, ready to aggregate; the key arrays it was made from are not
        kept (nothing groups again). Raises NameInUseError, and keeps nothing
        new, when a name is taken.

        >>> ak.GroupBy(pickup).register("by_pickup")
        >>> g = ak.GroupBy.attach("by_pickup")   # later, in another session
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"a GroupBy is registered under a non-empty str name, got {name!r}")
        if any(isinstance(cats, Strings) for cats in self._categories):
            raise NotImplementedError("a GroupBy with Strings keys cannot be registered yet (Strings have no "
                                      "register); group by ak.Categorical(strings) to keep one")
        if any(isinstance(cats, _BigKey) for cats in self._categories):
            raise NotImplementedError("a GroupBy with bigint keys cannot be registered yet (attach could not "
                                      "tell its limbs from uint64 keys); register the GroupBy of "
                                      "key.bigint_to_uint_arrays() instead")
        self.group()
        uk = self.unique_keys
        keys = list(uk) if isinstance(uk, tuple) else [uk]
        _register_all([(self.ids, f"{name}_ids")] + [(k, f"{name}_keys_{i}") for i, k in enumerate(keys)])
        return self

    @classmethod
    def attach(cls, name: str, *, conn: Connection | None = None) -> GroupBy:
        """The grouping register(name) kept on the server (its ids and unique
        keys; a key that was a Categorical comes back as one); like
        ak.attach, it does not own them.

        >>> g = ak.GroupBy.attach("by_pickup")
        >>> keys, fares = g.sum(fare)
        """
        c = _default_conn(conn)
        ids = c.attach(f"{name}_ids")
        names = {e["name"] for e in c.list_arrays()}
        uks: list[pdarray] = []
        cats: list[Any] = []
        while (key := f"{name}_keys_{len(uks)}") in names:
            if f"{key}/categories" in names:
                k = Categorical.attach(key, conn=c)
                uks.append(k.codes)
                cats.append(k.categories)
            else:
                uks.append(c.attach(key))
                cats.append(None)
        if not uks:
            raise UnknownArrayError(f"no array named '{name}_keys_0' beside '{name}_ids': "
                                    f"'{name}' is not a GroupBy that register() kept")
        if ids.dtype != np.int32 or any(k.size != uks[0].size for k in uks):
            raise ValueError(f"'{name}_ids' and '{name}_keys_*' are not a GroupBy's (register() "
                             "stores int32 ids and unique keys of one length)")
        g = cls.__new__(cls)
        g._single, g._categories, g._conn = len(uks) == 1, cats, c
        g.keys, g.dropna, g._strategy_arg, g._rows = [], True, "auto", ids.size
        g._ids, g._ngroups, g._strategy = ids, uks[0].size, "attached"
        g._nkept = int(binop(">=", ids, 0).sum())
        g._unique_keys = uks[0] if len(uks) == 1 else tuple(uks)
        g.fused, g._segments, g._permutation, g._broken = False, None, None, None
        return g

    def unregister(self) -> None:
        """Undo register() (or attach()): the ids and unique keys are owned
        again (dropping the GroupBy deletes them).

        >>> ak.GroupBy.attach("by_pickup").unregister()
        """
        self.ids.unregister()
        for k, cats in zip(self._key_arrays(), self._categories, strict=True):  # (never bigint: see register)
            if cats is not None:
                Categorical._wrap(k, cats).unregister()
            else:
                k.unregister()

    def is_registered(self) -> bool:
        """Whether its ids outlive this GroupBy (registered or attached).

        >>> ak.GroupBy.attach("by_pickup").is_registered()
        True
        """
        return self._ids is not None and self._ids.is_registered()

    def _key_arrays(self) -> list[pdarray]:
        self._known()
        uk = self._unique_keys
        assert uk is not None
        return list(uk) if isinstance(uk, tuple) else [uk]

    def _wrap_keys(self, keys: Sequence[pdarray]) -> Any:
        """Unique-key arrays as the user's keys were: a Categorical key's as
        a Categorical; one array for one key, else a tuple."""
        out: list[Any] = []
        i = 0
        for cats in self._categories:
            if isinstance(cats, _BigKey):
                out.append(BigIntArray(keys[i:i + cats.limbs], cats.max_bits))
                i += cats.limbs
                continue
            k = keys[i]
            i += 1
            out.append(k if cats is None else cats[k] if isinstance(cats, Strings) else Categorical._wrap(k, cats))
        assert i == len(keys), (i, len(keys))
        return out[0] if self._single else tuple(out)

    @property
    def unique_keys(self) -> Any:
        """The unique keys, sorted: a pdarray for one key, else a tuple of them.

        >>> g.unique_keys
        array([1, 2, 3])
        """
        self._known()
        assert self._unique_keys is not None
        uk = self._unique_keys
        return self._wrap_keys(list(uk) if isinstance(uk, tuple) else [uk])

    def __repr__(self) -> str:
        if self._unique_keys is None:
            return f"GroupBy(nkeys={self.nkeys}, not grouped yet)"
        return f"GroupBy(ngroups={self.ngroups}, nkeys={self.nkeys}, strategy={self.strategy!r})"

    def _agg_request(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Run a named groupby_agg request (ops, columns, ddof): with the
        grouping in one request while the ids are not made (the server then
        fuses the two where it can, else makes and returns the ids too)."""
        self._usable()
        if self._ids is not None:
            result, _ = self._conn._request("groupby_agg", {
                "ids": self._ids._live_name(), "ngroups": self.ngroups, **args})
            self.fused = False
            return list(result["arrays"])
        result, _ = self._conn._request("groupby", {**self._args(), **args, "ids": False})
        self._take(result)
        self.fused = bool(result.get("fused", False))
        return list(result["arrays"])

    def _segs(self) -> None:
        result, _ = self._conn._request("groupby_segments", {
            "ids": self.ids._live_name(), "ngroups": self.ngroups, "kept": self.nkept})
        self._permutation = self._conn._pdarray(result["permutation"], owned=True)
        self._segments = self._conn._pdarray(result["segments"], owned=True)

    @property
    def segments(self) -> pdarray:
        """int64: where each group starts in ``permutation``.

        >>> g.segments
        array([0, 3, 5])
        """
        if self._segments is None:
            self._segs()
        assert self._segments is not None
        return self._segments

    @property
    def permutation(self) -> pdarray:
        """int64: the kept rows, group by group, in row order within a group.

        >>> g.permutation
        array([0, 2, 5, 1, 4, 3])
        """
        if self._permutation is None:
            self._segs()
        assert self._permutation is not None
        return self._permutation

    def _values(self, values: Any) -> pdarray:
        if isinstance(values, pdarray):
            return values
        if isinstance(values, Categorical):
            raise TypeError("a Categorical's values take one aggregation at a time: "
                            f"g.aggregate(cat, op) with op one of {', '.join(CATEGORICAL_AGGREGATIONS)}")
        return self._conn.array(values)

    def aggregate(self, values: Any, operator: str | Callable[..., Any], ddof: float = 1) -> tuple[Any, Any]:
        """(unique_keys, operator over each group's values); operator is one of
        AGGREGATIONS, or a function named like one (np.sum, np.max, ...: as
        pandas' agg). NaN values are skipped; var and std take ddof (1, as
        Arkouda's aggregate, g.var and pandas).

        >>> g.aggregate(vals, "max")[1]
        array([60., 50., 40.])
        """
        operator = _aggregation(operator)
        if operator not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {operator!r}; use one of {', '.join(AGGREGATIONS)}")
        if isinstance(values, Categorical):
            # By the codes, which order as the strings: first, mode, min and
            # max give codes, so strings again.
            if operator not in CATEGORICAL_AGGREGATIONS:
                raise TypeError(f"cannot take the {operator} of strings; a Categorical's values take "
                                f"{', '.join(CATEGORICAL_AGGREGATIONS)}")
            keys, got = self.aggregate(values.codes, operator, ddof)
            if operator in ("first", "mode", "min", "max"):
                return keys, Categorical._wrap(got, values.categories)
            return keys, got
        column = ""
        keep = None
        if values is not None:
            keep = self._values(values)
            if keep.size != self._rows:
                raise ValueError(f"values have {keep.size} elements but the GroupBy has "
                                 f"{self._rows} rows")
            column = keep._live_name()
        elif operator != "size":
            raise ValueError(f"aggregation {operator!r} needs values")
        arrays = self._agg_request({"ops": [operator], "columns": [column], "ddof": float(ddof)})
        return self.unique_keys, self._conn._pdarray(arrays[0], owned=True)

    def agg(self, values: Any = None,
            operators: Sequence[str | Callable[..., Any]] | str | Callable[..., Any] | None = None,
            ddof: float = 1, **named: tuple[Any, str | Callable[..., Any]]) -> tuple[Any, dict[str, pdarray]]:
        """Several aggregations in one request (var and std with ddof, 1 as
        in pandas).

        ``g.agg(values, ["sum", "size", "mean"])`` gives (unique_keys,
        {operator: result}) for one values array; those that share a pass
        over the rows (size, count, sum, mean, var, std) get one pass
        between them. Named aggregations over several arrays, as pandas'
        ``agg(out=(column, op))``, give (unique_keys, {out: result}):
        ``g.agg(s=(v1, "sum"), m=(v3, "mean"), n=(None, "size"))``; the
        server runs the distinct arrays side by side on its workers.

        >>> k, r = g.agg(vals, ["sum", "size", "mean"]); r["mean"]
        array([33.33333333, 35.        , 40.        ])
        >>> k, r = g.agg(total=(vals, "sum"), n=(None, "size")); r["n"]
        array([3, 2, 1])
        """
        if named:
            if values is not None or operators is not None:
                raise TypeError("give either values and operators, or named aggregations out=(values, op)")
            return self._agg_named(named, ddof)
        if values is None or operators is None:
            raise TypeError("agg needs values and operators, or named aggregations out=(values, op)")
        ops = [_aggregation(op) for op in ([operators] if isinstance(operators, str) or callable(operators)
                                           else operators)]
        bad = [op for op in ops if op not in AGGREGATIONS]
        if bad or not ops:
            raise ValueError(f"unknown aggregation(s) {bad!r}; use one or more of "
                             f"{', '.join(AGGREGATIONS)}")
        keep = self._values(values)
        if keep.size != self._rows:
            raise ValueError(f"values have {keep.size} elements but the GroupBy has "
                             f"{self._rows} rows")
        infos = self._agg_request({"ops": ops, "columns": [keep._live_name()] * len(ops),
                                   "ddof": float(ddof)})
        arrays = [self._conn._pdarray(info, owned=True) for info in infos]
        return self.unique_keys, dict(zip(ops, arrays))

    def _agg_named(self, named: dict[str, tuple[Any, str | Callable[..., Any]]],
                   ddof: float) -> tuple[Any, dict[str, pdarray]]:
        ops: list[str] = []
        cols: list[str] = []
        keep: list[pdarray] = []  # alive until the reply
        for out, spec in named.items():
            if not isinstance(spec, tuple) or len(spec) != 2 or not isinstance(_aggregation(spec[1]), str):
                raise TypeError(f"named aggregation {out}= must be (values, op), e.g. (v, 'sum'); got {spec!r}")
            values, op = spec[0], _aggregation(spec[1])
            if op not in AGGREGATIONS:
                raise ValueError(f"unknown aggregation {op!r} for {out}=; use one of {', '.join(AGGREGATIONS)}")
            if values is None:
                if op != "size":
                    raise ValueError(f"{out}=(None, {op!r}): only 'size' takes no values")
                cols.append("")
            else:
                v = self._values(values)
                if v.size != self._rows:
                    raise ValueError(f"{out}=: values have {v.size} elements but the GroupBy has "
                                     f"{self._rows} rows")
                keep.append(v)
                cols.append(v._live_name())
            ops.append(op)
        infos = self._agg_request({"ops": ops, "columns": cols, "ddof": float(ddof)})
        arrays = [self._conn._pdarray(info, owned=True) for info in infos]
        return self.unique_keys, dict(zip(named, arrays))

    def size(self) -> tuple[Any, pdarray]:
        """Rows per group (int64).

        >>> g.size()[1]
        array([3, 2, 1])
        """
        return self.aggregate(None, "size")

    def count(self, values: Any = None) -> tuple[Any, pdarray]:
        """Rows per group; with values, the non-NaN values per group.

        >>> g.count()[1]
        array([3, 2, 1])
        """
        return self.aggregate(values, "count") if values is not None else self.size()

    def sum(self, values: Any) -> tuple[Any, pdarray]:
        """Sum per group (ints wrap; floats added in row order: bit-exact).

        >>> g.sum(vals)[1]
        array([100.,  70.,  40.])
        """
        return self.aggregate(values, "sum")

    def prod(self, values: Any) -> tuple[Any, pdarray]:
        """Product per group.

        >>> g.prod(vals)[1]
        array([18000.,  1000.,    40.])
        """
        return self.aggregate(values, "prod")

    def mean(self, values: Any) -> tuple[Any, pdarray]:
        """Mean per group (float64).

        >>> g.mean(vals)[1]
        array([33.33333333, 35.        , 40.        ])
        """
        return self.aggregate(values, "mean")

    def min(self, values: Any) -> tuple[Any, pdarray]:
        """Smallest value per group.

        >>> g.min(vals)[1]
        array([10., 20., 40.])
        """
        return self.aggregate(values, "min")

    def max(self, values: Any) -> tuple[Any, pdarray]:
        """Largest value per group.

        >>> g.max(vals)[1]
        array([60., 50., 40.])
        """
        return self.aggregate(values, "max")

    def argmin(self, values: Any) -> tuple[Any, pdarray]:
        """Row of each group's smallest value (the first on ties), -1 when all NaN.

        >>> g.argmin(vals)[1]
        array([0, 1, 3])
        """
        return self.aggregate(values, "argmin")

    def argmax(self, values: Any) -> tuple[Any, pdarray]:
        """Row of each group's largest value (the first on ties).

        >>> g.argmax(vals)[1]
        array([5, 4, 3])
        """
        return self.aggregate(values, "argmax")

    def nunique(self, values: Any) -> tuple[Any, pdarray]:
        """Distinct values per group.

        >>> g.nunique(vals)[1]
        array([3, 2, 1])
        """
        return self.aggregate(values, "nunique")

    def first(self, values: Any) -> tuple[Any, pdarray]:
        """Each group's first non-NaN value in row order.

        >>> g.first(vals)[1]
        array([10., 20., 40.])
        """
        return self.aggregate(values, "first")

    def mode(self, values: Any) -> tuple[Any, pdarray]:
        """Each group's most frequent value (the smallest on ties).

        >>> g.mode(keys)[1]
        array([1, 2, 3])
        """
        return self.aggregate(values, "mode")

    def most_common(self, values: Any) -> tuple[Any, Any]:
        """Each group's most frequent value, as Arkouda's ``most_common``
        (and Arkouda's ``mode``): on ties, the one met first in row order
        (``mode`` gives the smallest, as pandas). NaN values are skipped; a
        group of none gets NaN (floats) or 0. Composed on the server: the
        (group, value) pairs grouped with their counts and first rows, then
        each group's best pair.

        >>> ak.GroupBy(ak.array([0, 0, 0, 0, 1])).most_common(ak.array([7, 3, 3, 7, 5]))[1]
        array([7, 5])
        """
        if isinstance(values, Categorical):
            keys, got = self.most_common(values.codes)
            return keys, Categorical._wrap(got, values.categories)
        v = self._values(values)
        if v.size != self._rows:
            raise ValueError(f"values have {v.size} elements but the GroupBy has {self._rows} rows")
        c = self._conn
        pairs = GroupBy([self.ids, v])  # NaN values dropped
        (gid, val), r = pairs.agg(n=(None, "size"), first=(arange(self._rows, conn=c), "min"))
        kept = binop(">=", gid, 0)  # not the rows of dropped keys
        gid, val, n, first = gid[kept], val[kept], r["n"][kept], r["first"][kept]
        # the most rows first, then the earliest first row
        score = binop("-", binop("*", n.astype(np.int64), self._rows + 1), first)
        best = GroupBy(gid)
        groups, at = best.argmax(score)
        fill = np.nan if v.dtype.kind == "f" else 0
        out = full(self.ngroups, fill, v.dtype, conn=c)
        if groups.size:
            out[groups] = val[at]
        return self.unique_keys, out

    def any(self, values: Any) -> tuple[Any, pdarray]:
        """Whether any value of the group is nonzero.

        >>> g.any(vals)[1]
        array([ True,  True,  True])
        """
        return self.aggregate(values, "any")

    def all(self, values: Any) -> tuple[Any, pdarray]:
        """Whether every value of the group is nonzero.

        >>> g.all(vals)[1]
        array([ True,  True,  True])
        """
        return self.aggregate(values, "all")

    def OR(self, values: Any) -> tuple[Any, pdarray]:
        """Bitwise OR of each group's values (integer or bool; the values' dtype).

        >>> g.OR(ak.array([1, 2, 4, 8, 16, 32]))[1]
        array([37, 18,  8])
        """
        return self.aggregate(values, "or")

    def AND(self, values: Any) -> tuple[Any, pdarray]:
        """Bitwise AND of each group's values (integer or bool; the values' dtype).

        >>> g.AND(ak.array([7, 6, 5, 4, 3, 12]))[1]
        array([4, 2, 4])
        """
        return self.aggregate(values, "and")

    def XOR(self, values: Any) -> tuple[Any, pdarray]:
        """Bitwise XOR of each group's values (integer or bool; the values' dtype).

        >>> g.XOR(ak.array([1, 2, 4, 8, 16, 32]))[1]
        array([37, 18,  8])
        """
        return self.aggregate(values, "xor")

    def var(self, values: Any, ddof: float = 1) -> tuple[Any, pdarray]:
        """Variance per group (ddof 1 by default, as pandas).

        >>> g.var(vals)[1]
        array([633.33333333, 450.        ,          nan])
        """
        return self.aggregate(values, "var", ddof=ddof)

    def std(self, values: Any, ddof: float = 1) -> tuple[Any, pdarray]:
        """Standard deviation per group (ddof 1 by default).

        >>> g.std(vals)[1]
        array([25.16611478, 21.21320344,         nan])
        """
        return self.aggregate(values, "std", ddof=ddof)

    def median(self, values: Any) -> tuple[Any, pdarray]:
        """Median per group.

        >>> g.median(vals)[1]
        array([30., 35., 40.])
        """
        return self.aggregate(values, "median")

    def _topk(self, values: Any, n: int, largest: bool) -> tuple[Any, pdarray]:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        v = self._values(values)
        if v.size != self._rows:
            raise ValueError(f"values have {v.size} elements but the GroupBy has {self._rows} rows")
        self._known()
        uk = self._unique_keys
        assert uk is not None
        keys: list[pdarray] = list(uk) if isinstance(uk, tuple) else [uk]
        result, _ = self._conn._request("groupby_topk", {
            "ids": self.ids._live_name(), "ngroups": self.ngroups, "values": v._live_name(),
            "n": int(n), "largest": largest, "keys": [k._live_name() for k in keys]})
        ks = [self._conn._pdarray(info, owned=True) for info in result["keys"]]
        return self._wrap_keys(ks), self._conn._pdarray(result["values"], owned=True)

    def nlargest(self, values: Any, n: int = 1) -> tuple[Any, pdarray]:
        """The n largest non-NaN values of each group, in long form: the keys
        repeated once per value, groups in key order, each group's values from
        the largest down (fewer when a group has fewer values), as pandas'
        ``groupby(...).nlargest(n)``.

        >>> g.nlargest(vals, 2)
        (array([1, 1, 2, 2, 3]), array([60., 30., 50., 20., 40.]))
        """
        return self._topk(values, n, True)

    def nsmallest(self, values: Any, n: int = 1) -> tuple[Any, pdarray]:
        """The n smallest non-NaN values of each group, from the smallest up
        (long form, as nlargest).

        >>> g.nsmallest(vals, 2)
        (array([1, 1, 2, 2, 3]), array([10., 30., 20., 50., 40.]))
        """
        return self._topk(values, n, False)

    def _head_tail(self, values: Any, n: int, return_indices: bool, tail: bool) -> tuple[Any, Any]:
        v: pdarray | Categorical = values if isinstance(values, Categorical) else self._values(values)
        if v.size != self._rows:
            raise ValueError(f"values have {v.size} elements but the GroupBy has {self._rows} rows")
        rows = self._head_tail_rows(n, tail)
        return self.unique_keys, (rows if return_indices else v[rows])

    def _head_tail_rows(self, n: int, tail: bool) -> pdarray:
        """Each group's first (last) n rows: groups in key order, rows in row order."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"n must be an integer, got {n!r}")
        if n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        result, _ = self._conn._request("groupby_head", {
            "ids": self.ids._live_name(), "ngroups": self.ngroups, "n": min(int(n), self._rows), "tail": tail})
        return self._conn._pdarray(result, owned=True)

    def head(self, values: Any, n: int = 5, return_indices: bool = True) -> tuple[Any, Any]:
        """Each group's first n rows (all of a smaller group's), as Arkouda's:
        (unique_keys, the rows, int64), groups in key order and rows in row
        order within a group; with ``return_indices=False`` the values at those
        rows instead (a pdarray or Categorical).

        >>> g.head(vals, 2)
        (array([1, 2, 3]), array([0, 2, 1, 4, 3]))
        >>> g.head(vals, 2, return_indices=False)[1]
        array([10., 30., 20., 50., 40.])
        """
        return self._head_tail(values, n, return_indices, False)

    def tail(self, values: Any, n: int = 5, return_indices: bool = True) -> tuple[Any, Any]:
        """Each group's last n rows, in row order (as head).

        >>> g.tail(vals, 2)
        (array([1, 2, 3]), array([2, 5, 1, 4, 3]))
        """
        return self._head_tail(values, n, return_indices, True)

    def sample(self, values: Any, n: int | None = None, frac: float | None = None, replace: bool = False,
               weights: pdarray | None = None, random_state: int | None = None,
               return_indices: bool = False, permute_samples: bool = False) -> Any:
        """A random sample of each group's rows, as Arkouda's: ``n`` rows a
        group (1 when neither ``n`` nor ``frac`` is given) or ``round(frac *
        size)``, without replacement unless ``replace=True``; ``weights``
        (non-negative numbers, one per row, not all zero in a group) make a
        row likelier in proportion within its group. Returns the values at
        the sampled rows (a list for a list of arrays), or the rows with
        ``return_indices=True``: in row order, or with
        ``permute_samples=True`` group by group in the order drawn. The same
        ``random_state`` (an int seed) gives the same sample at any worker
        count.

        One request draws the sample on the server. Without replacement, one
        pass over the rows: selection sampling (a row is taken with
        probability still-to-draw / still-unseen; permute_samples then
        shuffles them within a group), or with weights Efraimidis and
        Spirakis' keys ``-log(u) / w``, each group keeping its smallest in a
        heap. With replacement, each draw is a place in its group (weighted:
        a point of the group's total weight), the draws sorted, and one pass
        over the rows takes each drawn row as it meets it (weighted: where
        its group's running sum passes the point).

        >>> g.sample(vals, n=1, random_state=7, return_indices=True).size
        3
        """
        if n is not None and frac is not None:
            raise ValueError("give n or frac, not both")
        arrays = list(values) if isinstance(values, (list, tuple)) else [values]
        for v in arrays:
            if not isinstance(v, (pdarray, Categorical)):
                raise TypeError(f"sample takes a pdarray or Categorical (or a list of them), got {type(v).__name__}")
            if v.size != self._rows:
                raise ValueError(f"values have {v.size} elements but the GroupBy has {self._rows} rows")
        c = self._conn
        # each group's rows, where n or frac needs them (with replacement
        # and n, the server refuses a group without rows itself)
        lens = self.size()[1] if frac is not None or not replace else None
        if frac is None:
            if n is None:
                n = 1
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
                raise TypeError(f"n must be an integer, got {n!r}")
            num = full(self.ngroups, int(n), np.int64, conn=c)
        else:
            if not isinstance(frac, (int, float, np.integer, np.floating)) or isinstance(frac, bool):
                raise TypeError(f"frac must be a number, got {frac!r}")
            num = round(binop("*", float(frac), lens)).astype(np.int64)
        few = int(binop("<=", num, 0).sum()) if self.ngroups else 0
        if few:
            raise ValueError("every group must get at least one sample: n or frac * the group's size "
                             f"(rounded) is below 1 for {few} groups")
        short = int(binop(">", num, lens).sum()) if self.ngroups and lens is not None and not replace else 0
        if short:
            raise ValueError(f"{short} groups have fewer rows than the samples asked for; "
                             "pass replace=True, or a smaller n or frac")
        if weights is not None:
            if not isinstance(weights, pdarray) or weights.dtype.kind not in "iuf":
                raise TypeError("weights must be a numeric pdarray, one per row")
            if weights.size != self._rows:
                raise ValueError(f"weights have {weights.size} elements but the GroupBy has {self._rows} rows")
            # Their values (finite, not negative) and each group's rows of
            # positive weight the server checks in its pass, naming the first
            # row or group that fails.
        # float64, as the server takes them (kept alive until the reply): no copy if they are
        fw = weights if weights is None or weights.dtype == np.float64 else weights.astype(np.float64)
        if self.ngroups == 0:
            rows = arange(0, conn=c)
        else:
            # one request: without replacement one pass over the rows
            # (selection sampling, or with weights each group's smallest
            # keys -log(u)/w kept in a heap); with replacement each group's
            # rows put together, then each draw a place in its group (or a
            # search of its running weights)
            args: dict[str, Any] = {"ids": self.ids._live_name(), "ngroups": self.ngroups,
                                    "counts": num._live_name(), "grouped": permute_samples,
                                    "replace": bool(replace)}
            if fw is not None:
                args["weights"] = fw._live_name()
            if random_state is not None:
                args["seed"] = int(random_state)
            result, _ = c._request("groupby_sample", args)
            rows = c._pdarray(result, owned=True)  # in row order, or grouped as asked
        if return_indices:
            return rows
        got = [v[rows] for v in arrays]
        return got if isinstance(values, (list, tuple)) else got[0]

    def corr(self, x: Any, y: Any) -> tuple[Any, pdarray]:
        """Pearson correlation of x and y within each group (float64), over
        the rows where both are numbers; NaN for a group with fewer than two
        such rows or a constant x or y.

        >>> g.corr(vals, vals * vals)[1]
        array([0.98223753, 1.        ,        nan])
        """
        xs, ys = self._values(x), self._values(y)
        for a in (xs, ys):
            if a.size != self._rows:
                raise ValueError(f"values have {a.size} elements but the GroupBy has {self._rows} rows")
        result, _ = self._conn._request("groupby_corr", {
            "ids": self.ids._live_name(), "ngroups": self.ngroups,
            "x": xs._live_name(), "y": ys._live_name()})
        return self.unique_keys, self._conn._pdarray(result, owned=True)

    def unique(self, values: Any) -> tuple[Any, Any]:
        """(unique_keys, each group's distinct values as a SegArray), as
        Arkouda's: sub-array i holds group i's distinct values, sorted (a
        Categorical's in string order); NaN values are skipped, so its
        length is ``nunique``'s. For a list of arrays, their distinct tuples:
        one SegArray per array, sharing segments. One request: the server
        marks or sorts the packed (group, values) keys (docs/operations.md).

        >>> k, u = g.unique(ak.array([5, 7, 5, 9, 7, 6]))
        >>> u.to_list()
        [[5, 6], [7], [9]]
        """
        if _segarray_class is None:
            raise ImportError("GroupBy.unique needs arktos.pandas._segarray (import arktos loads it)")
        arrays = list(values) if isinstance(values, (list, tuple)) else [values]
        if not arrays:
            raise ValueError("unique needs a values array, or a non-empty list of them")
        cols = [v.codes if isinstance(v, Categorical) else self._values(v) for v in arrays]
        for v in cols:
            if v.size != self._rows:
                raise ValueError(f"values have {v.size} elements but the GroupBy has {self._rows} rows")
        result, _ = self._conn._request("groupby_unique", {
            "ids": self.ids._live_name(), "ngroups": self.ngroups, "values": [v._live_name() for v in cols]})
        segs = self._conn._pdarray(result["segments"], owned=True)
        got = [self._conn._pdarray(info, owned=True) for info in result["values"]]
        out: list[SegArray] = []
        for v, u in zip(arrays, got, strict=True):
            flat = Categorical._wrap(u, v.categories) if isinstance(v, Categorical) else u
            out.append(_segarray_class._made(segs, flat, out[0].lengths if out else None))
        return self.unique_keys, (out if isinstance(values, (list, tuple)) else out[0])

    def _scan(self, op: str, values: Any = None) -> pdarray:
        """A running op within each group, in row order (groupby_scan)."""
        args: dict[str, Any] = {"op": op}
        keep = None
        if values is not None:
            keep = self._values(values)
            if keep.size != self._rows:
                raise ValueError(f"values have {keep.size} elements but the GroupBy has {self._rows} rows")
            if keep.dtype == np.uint64:
                raise TypeError(f"a group {op} of uint64 values: cast them to int64 or float64 first")
            want = np.float64 if keep.dtype.kind == "f" else np.int64
            if keep.dtype != want:  # (the server's scans take int64 and float64)
                keep = keep.astype(want)
            args["values"] = keep._live_name()
        result, _ = self._conn._request("groupby_scan", {"ids": self.ids._live_name(), "ngroups": self.ngroups,
                                                         **args})
        return self._conn._pdarray(result, owned=True)

    def cumsum(self, values: Any) -> pdarray:
        """Each row's running sum within its group, in row order (pandas'
        groupby cumsum: NaN values skipped and NaN there; floats added in row
        order, bit for bit pandas'; integers int64, or float64 when rows are
        dropped). One pass on the server.

        >>> g.cumsum(vals)
        array([ 10.,  20.,  40.,  40.,  70., 100.])
        """
        return self._scan("cumsum", values)

    def cumprod(self, values: Any) -> pdarray:
        """Each row's running product within its group.

        >>> ak.GroupBy(ak.array([0, 0, 1])).cumprod(ak.array([2, 3, 4]))
        array([2, 6, 4])
        """
        return self._scan("cumprod", values)

    def cummax(self, values: Any) -> pdarray:
        """Each row's running maximum within its group.

        >>> ak.GroupBy(ak.array([0, 0, 0])).cummax(ak.array([2, 1, 4]))
        array([2, 2, 4])
        """
        return self._scan("cummax", values)

    def cummin(self, values: Any) -> pdarray:
        """Each row's running minimum within its group.

        >>> ak.GroupBy(ak.array([0, 0, 0])).cummin(ak.array([2, 1, 4]))
        array([2, 1, 1])
        """
        return self._scan("cummin", values)

    def cumcount(self) -> pdarray:
        """Each row's place in its group, from 0, in row order (pandas'
        cumcount).

        >>> g.cumcount()
        array([0, 0, 1, 0, 1, 2])
        """
        return self._scan("cumcount")

    def diff(self, values: Any) -> pdarray:
        """Each row's value less its group's previous row's (NaN for a
        group's first row), float64, as pandas' groupby diff.

        >>> ak.GroupBy(ak.array([0, 1, 0])).diff(ak.array([5, 7, 9]))
        array([nan, nan,  4.])
        """
        return self._scan("diff", values)

    def shift(self, values: Any) -> pdarray:
        """Each row's group's previous row's value (NaN for the first),
        float64, as pandas' groupby shift(1).

        >>> ak.GroupBy(ak.array([0, 1, 0])).shift(ak.array([5, 7, 9]))
        array([nan, nan,  5.])
        """
        return self._scan("shift", values)

    def broadcast(self, values: Any, permute: bool = True) -> Any:
        """One value per row: its group's element of values (one per group).
        Dropped rows get NaN (floats), 0 or False. With ``permute=False``
        (Arkouda's) the rows come in group order instead, as ``permutation``
        lists them (no dropped rows).

        >>> g.broadcast(g.sum(vals)[1])
        array([100.,  70., 100.,  40.,  70., 100.])
        >>> g.broadcast(g.sum(vals)[1], permute=False)
        array([100., 100., 100.,  70.,  70.,  40.])
        """
        if isinstance(values, Categorical):  # a string per group: one per row
            return Categorical._wrap(self.broadcast(values.codes, permute), values.categories)
        v = self._values(values)
        if v.size != self.ngroups:
            raise ValueError(f"broadcast needs one value per group ({self.ngroups}), got {v.size}")
        if not permute:
            return v.repeat(self.size()[1])
        result, _ = self._conn._request("groupby_broadcast", {"ids": self.ids._live_name(),
                                                              "values": v._live_name()})
        return self._conn._pdarray(result, owned=True)

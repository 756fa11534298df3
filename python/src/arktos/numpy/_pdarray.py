"""pdarray: a handle on a 1-D array stored on an arktos-server.

Lifetime: a pdarray made by ak.array() owns its server array. When it is
garbage collected a ``weakref.finalize`` appends the name to its connection's
pending-deletes deque (and does nothing else: it may run in any thread); the
connection deletes pending names before its next request. ``delete()``
detaches the finalizer first, so an array is freed once, never twice. A
pdarray from ak.attach() does not own its array.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, Union, cast

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ..core._errors import ArktosError, UnknownArrayError

if TYPE_CHECKING:
    # Typing only: both import this module, and _ops is bound at run time
    # (bind_operations) when it is imported.
    from . import _ops
    from ._connection import Connection
else:
    _ops: ModuleType | None = None

__all__ = ["Operand", "pdarray"]

#: What pdarray operators take beside a pdarray: Python and numpy scalars
#: (weak and strong, NEP 50) and numpy arrays or lists (uploaded first).
Operand = Union["pdarray", bool, int, float, np.generic, NDArray[Any], list[Any], tuple[Any, ...]]
#: pandas and Arrow conversions (to_pandas, to_arrow), registered by
#: arktos.pandas: this layer imports nothing of pandas.
_conversions: dict[str, Callable[..., Any]] = {}


#: NotImplemented, typed as the operators' result: an operand binop cannot
#: take makes Python try the other operand's method.
_NOT_IMPLEMENTED = cast("pdarray", NotImplemented)


def bind_operations(module: ModuleType) -> None:
    """Called by arktos.numpy._ops as it is imported: the module whose
    functions pdarray's methods and operators call."""
    globals()["_ops"] = module


def register_conversion(name: str, convert: Callable[..., Any]) -> None:
    """Called by arktos.pandas: pdarray.`name`() calls `convert`."""
    _conversions[name] = convert


def _conversion(name: str) -> Callable[..., Any]:
    try:
        return _conversions[name]
    except KeyError:
        raise ImportError(f"pdarray.{name}() needs arktos.pandas (import arktos loads it)") from None

#: Arrays up to this many elements print in full; longer ones as head ... tail.
PRINT_THRESHOLD = 100
#: Elements shown at each end of a summarised array.
EDGE_ITEMS = 3
#: Iterating one element at a time is refused above this size.
MAX_ITER_SIZE = 10**6


class pdarray:  # noqa: N801 -- the name users know from arkouda
    """A 1-D array stored on an arktos-server.

    Attributes: ``name`` (the server's name for it), ``dtype`` (numpy dtype),
    ``size``, ``shape``, ``ndim`` (always 1), ``nbytes``, ``itemsize``.
    ``to_ndarray()`` or ``np.asarray(a)`` downloads it.

    >>> a = ak.array(np.arange(1000))
    >>> a
    array([  0,   1,   2, ..., 997, 998, 999], shape=(1000,))
    >>> a.to_ndarray()[:3]
    array([0, 1, 2])
    """

    ndim = 1

    def __init__(self, conn: Connection, name: str, dtype: np.dtype, size: int,
                 *, owned: bool) -> None:
        self._conn = conn
        self.name = name
        self.dtype = dtype
        self.size = size
        self._deleted = False
        self._finalizer: weakref.finalize[[str], pdarray] | None = None
        if owned:
            self._own()

    def _own(self) -> None:
        """Delete the server array when this pdarray is garbage collected."""
        self._finalizer = weakref.finalize(self, self._conn._pending_deletes.append, self.name)
        self._finalizer.atexit = False  # (Connection.close, at exit too, deletes what is still owned)
        self._conn._owned[id(self)] = self

    @property
    def shape(self) -> tuple[int]:
        """``(size,)``.

        >>> ak.arange(5).shape
        (5,)
        """
        return (self.size,)

    @property
    def itemsize(self) -> int:
        """Bytes per element.

        >>> ak.arange(5, dtype=np.int32).itemsize
        4
        """
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """``size * itemsize``: the bytes the array takes on the server.

        >>> ak.arange(5, dtype=np.int32).nbytes
        20
        """
        return self.size * self.dtype.itemsize

    @property
    def owned(self) -> bool:
        """True when dropping this pdarray deletes the server array.

        >>> ak.arange(3).owned, ak.attach(a.name).owned
        (True, False)
        """
        return self._finalizer is not None and self._finalizer.alive

    def __len__(self) -> int:
        return self.size

    def _live_name(self) -> str:
        if self._deleted:
            raise UnknownArrayError(f"array {self.name!r} was deleted with .delete(); "
                                    "upload it again with ak.array()")
        return self.name

    def to_ndarray(self, copy: bool = True, *, view: bool = False) -> NDArray[Any]:
        """Download the whole array into a new numpy array (bit-identical).

        With ``copy=False`` (or ``view=True``) the result is read-only. With
        the server on this host it maps the array's shared-memory segment:
        no copy on this side, and none on the server when the array was
        uploaded through shared memory or viewed before (the first view of
        an array made on the server copies it once into a segment). It is a
        snapshot: later writes to the array on the server copy it first, and
        deleting the array leaves the view valid; it is unmapped when the
        numpy array is garbage collected. With a remote server (or
        ``shm=False``) it is a downloaded copy, marked read-only.

        >>> ak.array([1.5, np.nan]).to_ndarray()
        array([1.5, nan])
        >>> v = a.to_ndarray(copy=False); v.flags.writeable
        False
        """
        return self._conn._download(self._live_name(), view=view or not copy, nbytes=self.nbytes)

    def to_numpy(self, copy: bool = True) -> NDArray[Any]:
        """to_ndarray under pandas' name, which matplotlib and others look for:
        ``plt.plot(a)`` and ``plt.hist(a)`` plot a pdarray (downloaded).

        >>> ak.array([1, 2]).to_numpy()
        array([1, 2])
        """
        return self.to_ndarray(copy)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        """Support ``np.asarray(a)``: download the array.

        >>> np.asarray(ak.array([1, 2]))
        array([1, 2])
        """
        if copy is False:
            raise ValueError("a pdarray lives on the server, so converting it to numpy always "
                             "copies; use np.asarray(a) or a.to_ndarray() without copy=False")
        data = self.to_ndarray()
        return data if dtype is None else data.astype(dtype, copy=False)

    def to_pandas(self, name: Any = None) -> Any:
        """Download as a pandas Series (see ak.to_pandas).

        >>> ak.arange(3).to_pandas().sum()
        np.int64(3)
        """
        return _conversion("to_pandas")(self, name=name)

    def to_hdf(self, prefix_path: str, dataset: str = "array", mode: str = "truncate",
               file_type: str = "distribute") -> str:
        """Write this array as dataset `dataset` of an HDF5 file on the
        server in Arkouda's layout and file name (``"out/x.h5"`` writes
        ``out/x_LOCALE0000.h5``; file_type "single" writes the path
        itself); ``mode="append"`` adds it to the file. See ak.to_hdf.
        Returns the file's path.

        >>> ak.arange(3).to_hdf("out/r.h5")
        'out/r_LOCALE0000.h5'
        """
        return str(_conversion("to_hdf")(self, prefix_path, dataset=dataset, mode=mode, file_type=file_type))

    def to_parquet(self, prefix_path: str, dataset: str = "array", mode: str = "truncate",
                   compression: str | None = None) -> str:
        """Write this array as column `dataset` of a Parquet file on the server
        (Arkouda's form: ``prefix_path`` ``"out/x.parquet"`` writes
        ``out/x_LOCALE0000.parquet``, one file per locale as Arkouda names
        them; one server is one locale). `compression` None writes it
        uncompressed, as Arkouda does; ``mode="append"`` (adding a column to
        existing files) is not supported yet. Returns the file's path. For
        several columns in one file see ak.to_parquet.

        >>> ak.arange(5).to_parquet("out/r.parquet")
        'out/r_LOCALE0000.parquet'
        """
        return str(_conversion("to_parquet")(self, prefix_path, dataset=dataset, mode=mode,
                                             compression=compression))

    def to_csv(self, prefix_path: str, dataset: str = "array", col_delim: str = ",",
               overwrite: bool = True) -> str:
        """Write this array as column `dataset` of a CSV file on the server,
        in Arkouda's format and file name (``"out/x.csv"`` writes
        ``out/x_LOCALE0000.csv``); see ak.to_csv. Returns the file's path.

        >>> ak.arange(3).to_csv("out/r.csv", overwrite=True)
        'out/r_LOCALE0000.csv'
        """
        return str(_conversion("to_csv")(self, prefix_path, dataset=dataset, col_delim=col_delim,
                                         overwrite=overwrite))

    def to_arrow(self) -> Any:
        """Download as a pyarrow Array (see ak.to_arrow).

        >>> ak.arange(3).to_arrow().type
        DataType(int64)
        """
        return _conversion("to_arrow")(self)

    def __iter__(self) -> Iterator[Any]:
        if self.size > MAX_ITER_SIZE:
            raise ValueError(f"refusing to iterate over {self.size} elements of {self.name!r} "
                             "one by one; download them once with a.to_ndarray()")
        return iter(self.to_ndarray())

    def register(self, name: str) -> pdarray:
        """Keep the array on the server under `name` (Arkouda's register) and
        return this pdarray, now named `name`.

        A registered array outlives this pdarray, its session and its
        notebook kernel: dropping the pdarray or disconnecting leaves it on
        the server, where ``ak.attach(name)`` finds it again (until
        ``delete()``, or until ``unregister()`` hands it back to this
        pdarray's care). Only the name changes; the bytes stay where they
        are. Registering under the name the array has just keeps it. Raises
        NameInUseError, and changes nothing, when another array has `name`.
        Other pdarrays attached to the old name no longer reach it.

        >>> fares = (a * 1.1).register("fares")
        >>> ak.attach("fares")          # later, in another session
        """
        old = self._live_name()
        result = self._conn.rename(old, name)
        self.name = str(result["name"])
        if self._finalizer is not None:
            self._finalizer.detach()
        return self

    def unregister(self) -> None:
        """Undo register() (or attach()): this pdarray owns the array again,
        so dropping it deletes the array on the server. The name stays.

        >>> ak.attach("fares").unregister()
        """
        self._live_name()
        if not self.owned:
            self._own()

    def is_registered(self) -> bool:
        """True when the array outlives this pdarray: it was registered, or
        attached, rather than made by an upload or operation that it owns.

        >>> a.is_registered(), a.register("kept").is_registered()
        (False, True)
        """
        return not self._deleted and not self.owned

    def fill(self, value: Any) -> None:
        """Set every element to `value`, in place on the server (numpy's
        fill: ``a[:] = value``).

        >>> a = ak.zeros(3)
        >>> a.fill(2.5)
        >>> a
        array([2.5, 2.5, 2.5])
        """
        self[:] = value

    def to_list(self) -> list[Any]:
        """Download the array as a Python list of Python scalars
        (``to_ndarray().tolist()``; Arkouda's name, numpy's is tolist()).

        >>> ak.arange(3).to_list()
        [0, 1, 2]
        """
        return self.to_ndarray().tolist()  # type: ignore[no-any-return]

    def tolist(self) -> list[Any]:
        """numpy's name for to_list().

        >>> ak.arange(3).tolist()
        [0, 1, 2]
        """
        return self.to_list()

    def delete(self) -> None:
        """Delete the array on the server now. Calling it again does nothing.

        >>> a = ak.array([1, 2, 3])
        >>> a.delete()
        """
        if self._deleted:
            return
        if self._conn._lazy_groupbys:  # a GroupBy by this array groups it first
            self._conn._group_lazy({self.name})
        self._deleted = True
        if self._finalizer is not None:
            self._finalizer.detach()
        try:
            self._conn.delete([self.name])
        except ArktosError:
            raise  # the server answered: nothing to retry
        except BaseException:
            # Timeout, Ctrl-C, closed connection: free it with the next request.
            self._conn._pending_deletes.append(self.name)
            raise

    def _format(self, formatter: Callable[[np.ndarray], str]) -> str:
        """Format like numpy, fetching only the EDGE_ITEMS at each end of long arrays."""
        name = self._live_name()
        if self.size <= PRINT_THRESHOLD:
            data, threshold = self._conn._download(name, nbytes=self.nbytes), PRINT_THRESHOLD
        else:
            head = self._conn._download(name, 0, EDGE_ITEMS)
            tail = self._conn._download(name, self.size - EDGE_ITEMS, self.size)
            # One filler element makes numpy summarise; it formats from the
            # shown ends only, so the result is what numpy prints for the whole.
            data, threshold = np.concatenate([head, tail[:1], tail]), 2 * EDGE_ITEMS
        with np.printoptions(threshold=threshold, edgeitems=EDGE_ITEMS):
            return formatter(data)

    def __repr__(self) -> str:
        try:
            return self._format(self._numpy_repr)
        except (ArktosError, ConnectionError) as err:
            return f"<pdarray {self.name!r} {self.dtype}[{self.size}]: {err}>"

    def _numpy_repr(self, shown: np.ndarray) -> str:
        """numpy's repr of `shown`, with the shape numpy 2.2+ adds to summarised
        arrays set to this array's, wrapped as numpy would wrap it."""
        text = repr(shown)
        marker = f"shape=({shown.size},)"
        at = text.rfind(marker)
        if shown.size == self.size or at < 0:
            return text
        body = text[:at].rstrip(" \n")  # "array([...]," without numpy's spacer
        extras = f"shape=({self.size},)" + text[at + len(marker):]
        last_line = len(body) - (body.rfind("\n") + 1)
        fits = last_line + 1 + len(extras) <= np.get_printoptions()["linewidth"]
        return body + (" " if fits else "\n" + " " * len("array(")) + extras

    def __str__(self) -> str:
        return self._format(str)

    def _repr_html_(self) -> str:
        """How Jupyter shows a pdarray: numpy's repr (head and tail only,
        fetched from the server) under a line with name, dtype, size and bytes."""
        import html

        try:
            body = self._format(self._numpy_repr)
        except (ArktosError, ConnectionError) as err:
            body = f"unavailable: {err}"
        summary = (f"pdarray <b>{html.escape(self.name)}</b> &middot; {self.dtype} &middot; "
                   f"size {self.size:,} &middot; {_human_bytes(self.nbytes)} on the server")
        return (f'<div class="arktos-pdarray"><div style="font-size:smaller">{summary}</div>'
                f"<pre>{html.escape(body)}</pre></div>")

    # -- operations (arktos.numpy._ops; docs/operations.md) ---------------

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy's ufuncs on pdarrays run on the server: ``np.sqrt(a)``,
        ``np.add(a, x)``, ``np.maximum(a, 0, out=a)``, and ``ndarray +
        pdarray`` (numpy calls np.add), which is never a download (``x += a``
        downloads the result into the ndarray x, as numpy would). Those the
        server lacks, and ufunc methods (``np.add.reduce``), raise TypeError
        saying what to use instead.

        >>> np.sqrt(ak.array([1.0, 4.0]))
        array([1., 2.])
        """
        return _ops.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """numpy functions on pdarrays: ``np.concatenate``, ``np.where``,
        ``np.sort``, ``np.unique``, ``np.isin``, ``np.intersect1d``,
        ``np.union1d``, ``np.setdiff1d``, ``np.count_nonzero``,
        ``np.histogram``, ``np.diff``, ``np.nonzero``, ``np.median``,
        ``np.quantile``, ``np.percentile``, the ``np.nan*`` reductions and a
        few more (docs/operations.md) run on the server (options the server
        lacks aside); the others behave as without this hook (a reduction
        such as ``np.sum`` calls the pdarray's method; the rest download).

        >>> np.concatenate([ak.arange(2), np.array([7])])
        array([0, 1, 7])
        """
        return _ops.array_function(func, args, kwargs)
    # -- operators ----------------------------------------------------------
    # Real methods (not attached after the class), so that type checkers see
    # ``a + b`` and ``a < b`` as pdarrays. Each calls _ops.binop; an operand
    # binop cannot take gives NotImplemented, so Python tries the other side.

    def _forward(self, symbol: str, other: object) -> pdarray:
        if symbol in ("==", "!=") and isinstance(other, (str, bytes)):
            # numpy 2: an array equals no string, elementwise (not Python's
            # one False, which a mask could not use)
            return _ops.full(self.size, symbol == "!=", np.bool_, conn=self._conn)
        if not _ops._supported(other):
            return _NOT_IMPLEMENTED
        if symbol == "**" and type(other) is int and other == 2 and self.dtype == np.bool_:
            # numpy's a ** 2 is its square, whose bool loop is int8's
            # (np.power(bool, 2) is int64)
            return cast(pdarray, _ops.array_ufunc(np.square, "__call__", (self,), {}))
        return _ops.binop(symbol, self, other)

    def _reflected(self, symbol: str, other: object) -> pdarray:
        if not _ops._supported(other):
            return _NOT_IMPLEMENTED
        return _ops.binop(symbol, other, self)

    def _inplace(self, symbol: str, other: object) -> pdarray:
        if not _ops._supported(other):
            return _NOT_IMPLEMENTED
        return _ops.binop(symbol, self, other, out=self)

    def __add__(self, other: Operand) -> pdarray:
        """``+`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("+", other)

    def __radd__(self, other: Operand) -> pdarray:
        """``+`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("+", other)

    def __iadd__(self, other: Operand) -> pdarray:
        """``+`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("+", other)

    def __sub__(self, other: Operand) -> pdarray:
        """``-`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("-", other)

    def __rsub__(self, other: Operand) -> pdarray:
        """``-`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("-", other)

    def __isub__(self, other: Operand) -> pdarray:
        """``-`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("-", other)

    def __mul__(self, other: Operand) -> pdarray:
        """``*`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("*", other)

    def __rmul__(self, other: Operand) -> pdarray:
        """``*`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("*", other)

    def __imul__(self, other: Operand) -> pdarray:
        """``*`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("*", other)

    def __truediv__(self, other: Operand) -> pdarray:
        """``/`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("/", other)

    def __rtruediv__(self, other: Operand) -> pdarray:
        """``/`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("/", other)

    def __itruediv__(self, other: Operand) -> pdarray:
        """``/`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("/", other)

    def __floordiv__(self, other: Operand) -> pdarray:
        """``//`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("//", other)

    def __rfloordiv__(self, other: Operand) -> pdarray:
        """``//`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("//", other)

    def __ifloordiv__(self, other: Operand) -> pdarray:
        """``//`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("//", other)

    def __mod__(self, other: Operand) -> pdarray:
        """``%`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("%", other)

    def __rmod__(self, other: Operand) -> pdarray:
        """``%`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("%", other)

    def __imod__(self, other: Operand) -> pdarray:
        """``%`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("%", other)

    def __pow__(self, other: Operand) -> pdarray:
        """``**`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("**", other)

    def __rpow__(self, other: Operand) -> pdarray:
        """``**`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("**", other)

    def __ipow__(self, other: Operand) -> pdarray:
        """``**`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("**", other)

    def __and__(self, other: Operand) -> pdarray:
        """``&`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("&", other)

    def __rand__(self, other: Operand) -> pdarray:
        """``&`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("&", other)

    def __iand__(self, other: Operand) -> pdarray:
        """``&`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("&", other)

    def __or__(self, other: Operand) -> pdarray:
        """``|`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("|", other)

    def __ror__(self, other: Operand) -> pdarray:
        """``|`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("|", other)

    def __ior__(self, other: Operand) -> pdarray:
        """``|`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("|", other)

    def __xor__(self, other: Operand) -> pdarray:
        """``^`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("^", other)

    def __rxor__(self, other: Operand) -> pdarray:
        """``^`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("^", other)

    def __ixor__(self, other: Operand) -> pdarray:
        """``^`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("^", other)

    def __lshift__(self, other: Operand) -> pdarray:
        """``<<`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward("<<", other)

    def __rlshift__(self, other: Operand) -> pdarray:
        """``<<`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected("<<", other)

    def __ilshift__(self, other: Operand) -> pdarray:
        """``<<`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace("<<", other)

    def __rshift__(self, other: Operand) -> pdarray:
        """``>>`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._forward(">>", other)

    def __rrshift__(self, other: Operand) -> pdarray:
        """``>>`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._reflected(">>", other)

    def __irshift__(self, other: Operand) -> pdarray:
        """``>>`` on the server (numpy 2 promotion, NEP 50 scalars)."""
        return self._inplace(">>", other)

    def __lt__(self, other: Operand) -> pdarray:
        """``<``, elementwise: a bool pdarray."""
        return self._forward("<", other)

    def __le__(self, other: Operand) -> pdarray:
        """``<=``, elementwise: a bool pdarray."""
        return self._forward("<=", other)

    def __gt__(self, other: Operand) -> pdarray:
        """``>``, elementwise: a bool pdarray."""
        return self._forward(">", other)

    def __ge__(self, other: Operand) -> pdarray:
        """``>=``, elementwise: a bool pdarray."""
        return self._forward(">=", other)

    def __eq__(self, other: object) -> pdarray:  # type: ignore[override]
        """``==``, elementwise: a bool pdarray."""
        return self._forward("==", other)

    def __ne__(self, other: object) -> pdarray:  # type: ignore[override]
        """``!=``, elementwise: a bool pdarray."""
        return self._forward("!=", other)

    #: Comparisons return pdarrays, so hashing falls back to identity.
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self[0])

    def __getitem__(self, key: Any) -> Any:
        return _ops.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _ops.setitem(self, key, value)

    def __neg__(self) -> pdarray:
        return _ops.unop("neg", self)

    def __pos__(self) -> pdarray:
        return _ops.unop("positive", self)  # a copy; bool is refused, as numpy

    def __abs__(self) -> pdarray:
        return _ops.unop("abs", self)

    def __invert__(self) -> pdarray:
        return _ops.unop("invert", self)

    def astype(self, dtype: DTypeLike) -> pdarray:
        """A copy cast to `dtype` (numpy's unsafe casting).

        >>> ak.array([1.5, 2.5]).astype(np.int64)
        array([1, 2])
        """
        return _ops.astype(self, dtype)

    def copy(self) -> pdarray:
        """A copy on the server.

        >>> b = a.copy()
        >>> b is a, b.name != a.name
        (False, True)
        """
        return _ops.astype(self, self.dtype)

    # The reductions take numpy's axis, dtype, out and keepdims, so that
    # np.sum(a), np.mean(a), np.argmax(a), ... on a pdarray run on the
    # server (numpy calls the method with them; without, np.sum and
    # np.mean raised TypeError and the others downloaded the array).

    def sum(self, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None,
            keepdims: bool = False) -> Any:
        """Sum of the elements (see ak.sum); ``np.sum(a)`` calls it.

        >>> ak.arange(5).sum()
        np.int64(10)
        """
        return _ops.sum(_numpy_like(self, "sum", axis, out, keepdims, dtype))

    def prod(self, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None,
             keepdims: bool = False) -> Any:
        """Product of the elements (see ak.prod); ``np.prod(a)`` calls it.

        >>> ak.array([2, 3, 4]).prod()
        np.int64(24)
        """
        return _ops.prod(_numpy_like(self, "prod", axis, out, keepdims, dtype))

    def min(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """Smallest element (see ak.min); ``np.min(a)`` calls it.

        >>> ak.array([3, 1, 2]).min()
        np.int64(1)
        """
        return _ops.min(_numpy_like(self, "min", axis, out, keepdims))

    def max(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """Largest element (see ak.max); ``np.max(a)`` calls it.

        >>> ak.array([3, 1, 2]).max()
        np.int64(3)
        """
        return _ops.max(_numpy_like(self, "max", axis, out, keepdims))

    def mean(self, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None,
             keepdims: bool = False) -> Any:
        """Mean (see ak.mean); ``np.mean(a)`` calls it.

        >>> ak.arange(5).mean()
        np.float64(2.0)
        """
        return _ops.mean(_numpy_like(self, "mean", axis, out, keepdims, dtype))

    def var(self, ddof: float = 0, axis: int | None = None, dtype: DTypeLike | None = None,
            out: None = None, keepdims: bool = False) -> Any:
        """Variance (see ak.var); ``np.var(a)`` calls it (by keyword: ddof stays the
        first positional argument, as in Arkouda).

        >>> ak.array([1.0, 2.0, 3.0, 4.0]).var(ddof=1)
        np.float64(1.6666666666666667)
        """
        return _ops.var(_numpy_like(self, "var", axis, out, keepdims, dtype), ddof)

    def std(self, ddof: float = 0, axis: int | None = None, dtype: DTypeLike | None = None,
            out: None = None, keepdims: bool = False) -> Any:
        """Standard deviation (see ak.std); ``np.std(a)`` calls it (by keyword: ddof stays the
        first positional argument, as in Arkouda).

        >>> ak.array([1.0, 2.0, 3.0, 4.0]).std()
        np.float64(1.118033988749895)
        """
        return _ops.std(_numpy_like(self, "std", axis, out, keepdims, dtype), ddof)

    def argmin(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """Index of the first smallest element; ``np.argmin(a)`` calls it.

        >>> ak.array([3, 1, 2]).argmin()
        np.int64(1)
        """
        return _ops.argmin(_numpy_like(self, "argmin", axis, out, keepdims))

    def argmax(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """Index of the first largest element; ``np.argmax(a)`` calls it.

        >>> ak.array([3, 1, 2]).argmax()
        np.int64(0)
        """
        return _ops.argmax(_numpy_like(self, "argmax", axis, out, keepdims))

    def any(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """True if any element is nonzero; ``np.any(a)`` calls it.

        >>> (ak.arange(5) > 3).any()
        np.True_
        """
        return _ops.any(_numpy_like(self, "any", axis, out, keepdims))

    def all(self, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        """True if every element is nonzero; ``np.all(a)`` calls it.

        >>> (ak.arange(5) >= 0).all()
        np.True_
        """
        return _ops.all(_numpy_like(self, "all", axis, out, keepdims))

    def cumsum(self, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None) -> pdarray:
        """Cumulative sum (see ak.cumsum); ``np.cumsum(a)`` calls it.

        >>> ak.arange(5).cumsum()
        array([ 0,  1,  3,  6, 10])
        """
        return _ops.cumsum(_numpy_like(self, "cumsum", axis, out, False, dtype))

    def cumprod(self, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None) -> pdarray:
        """Cumulative product (see ak.cumprod); ``np.cumprod(a)`` calls it.

        >>> ak.arange(1, 6).cumprod()
        array([  1,   2,   6,  24, 120])
        """
        return _ops.cumprod(_numpy_like(self, "cumprod", axis, out, False, dtype))

    def argsort(self, axis: int | None = -1, kind: str | None = None, order: None = None, *,
                stable: bool | None = None) -> pdarray:
        """Stable sorting permutation (see ak.argsort); ``np.argsort(a)``
        calls it (any ``kind`` or ``stable``: a stable order is each one's
        answer).

        >>> ak.array([30, 10, 20]).argsort()
        array([1, 2, 0])
        """
        if order is not None:
            raise ValueError("argsort(order=...) sorts structured arrays by field; pdarrays have no fields")
        return _ops.argsort(_numpy_like(self, "argsort", axis, None, False))

    def clip(self, a_min: Any, a_max: Any, out: None = None) -> pdarray:
        """np.clip (see ak.clip); ``np.clip(a, lo, hi)`` calls it.

        >>> ak.arange(6).clip(1, 4)
        array([1, 1, 2, 3, 4, 4])
        """
        return _ops.clip(_numpy_like(self, "clip", None, out, False), a_min, a_max)

    def round(self, decimals: int = 0, out: None = None) -> pdarray:
        """Round half to even (see ak.round); ``np.round(a)`` calls it.

        >>> ak.array([0.5, 1.5, 2.6]).round()
        array([0., 2., 3.])
        """
        return _ops.round(_numpy_like(self, "round", None, out, False), decimals)

    def sort(self, axis: int | None = -1, kind: str | None = None, order: None = None, *,
             stable: bool | None = None) -> None:
        """Sort in place on the server, NaN last (numpy's ndarray.sort; any
        ``kind``: the order is each one's answer). ak.sort(a) gives a sorted
        copy instead.

        >>> a = ak.array([3, 1, 2])
        >>> a.sort()
        >>> a
        array([1, 2, 3])
        """
        if order is not None:
            raise ValueError("sort(order=...) sorts structured arrays by field; pdarrays have no fields")
        src = _numpy_like(self, "sort", axis, None, False)
        ordered = _ops.sort(src)
        try:
            self[:] = ordered  # a copy on the server, into this array
        finally:
            ordered.delete()

    def is_sorted(self) -> bool:
        """Whether the array is ascending, NaN only at the end (see ak.is_sorted).

        >>> ak.array([1, 2, 2]).is_sorted()
        True
        """
        return _ops.is_sorted(self)

    def value_counts(self) -> tuple[pdarray, pdarray]:
        """(distinct values, how many of each), sorted (see ak.value_counts).

        >>> ak.array([2, 1, 2]).value_counts()
        (array([1, 2]), array([1, 2]))
        """
        return _ops.value_counts(self)

    def mink(self, k: int) -> pdarray:
        """The k smallest values, ascending (see ak.mink).

        >>> ak.array([5, 1, 4, 2]).mink(2)
        array([1, 2])
        """
        return _ops.mink(self, k)

    def maxk(self, k: int) -> pdarray:
        """The k largest values, ascending (see ak.maxk).

        >>> ak.array([5, 1, 4, 2]).maxk(2)
        array([4, 5])
        """
        return _ops.maxk(self, k)

    def argmink(self, k: int) -> pdarray:
        """Indices of the k smallest values (see ak.argmink).

        >>> ak.array([5, 1, 4, 2]).argmink(2)
        array([1, 3])
        """
        return _ops.argmink(self, k)

    def argmaxk(self, k: int) -> pdarray:
        """Indices of the k largest values (see ak.argmaxk).

        >>> ak.array([5, 1, 4, 2]).argmaxk(2)
        array([2, 0])
        """
        return _ops.argmaxk(self, k)

    def searchsorted(self, v: Any, side: str = "left") -> Any:
        """Where v's values go in this sorted array (see ak.searchsorted).

        >>> ak.array([1, 3, 5]).searchsorted(ak.array([0, 3, 9]))
        array([0, 1, 3])
        """
        return _ops.searchsorted(self, v, side)

    def nonzero(self) -> tuple[pdarray]:
        """Indices of the nonzero elements, as a 1-tuple (np.nonzero).

        >>> ak.array([0, 3, 0, 1]).nonzero()
        (array([1, 3]),)
        """
        return np.nonzero(self)  # type: ignore[return-value]

    def dot(self, b: Any) -> Any:
        """The sum of self * b, reduced on the server (np.dot).

        >>> ak.arange(3).dot(ak.arange(3))
        np.int64(5)
        """
        return np.dot(self, b)

    def ptp(self) -> Any:
        """max - min (np.ptp).

        >>> ak.array([4, -1, 7]).ptp()
        np.int64(8)
        """
        return np.ptp(self)

    def take(self, indices: Any) -> pdarray:
        """The elements at `indices`, gathered on the server (np.take).

        >>> ak.array([10, 20, 30]).take(ak.array([2, 0]))
        array([30, 10])
        """
        return np.take(self, indices)  # type: ignore[no-any-return]

    def repeat(self, repeats: Any) -> pdarray:
        """Each element `repeats` times (np.repeat).

        >>> ak.array([1, 2]).repeat(2)
        array([1, 1, 2, 2])
        """
        return np.repeat(self, repeats)  # type: ignore[return-value]

    def flatten(self) -> pdarray:
        """A copy (a pdarray is 1-D already: numpy's flatten).

        >>> ak.arange(3).flatten()
        array([0, 1, 2])
        """
        return self.copy()

    def ravel(self) -> pdarray:
        """This pdarray itself (1-D already: numpy's ravel, no copy).

        >>> ak.arange(3).ravel()
        array([0, 1, 2])
        """
        return self

    def item(self) -> Any:
        """The one element of a 1-element array, as a Python scalar (numpy's item).

        >>> ak.array([2.5]).item()
        2.5
        """
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self[0].item()


def _numpy_like(a: pdarray, method: str, axis: int | None, out: Any, keepdims: bool,
                dtype: DTypeLike | None = None) -> pdarray:
    """Check numpy's arguments to a reduction or scan of a (1-D) pdarray; with
    ``dtype``, a converted on the server first (numpy's accumulator dtype)."""
    if axis not in (None, 0, -1):
        raise ValueError(f"{method}(axis={axis!r}): pdarrays are 1-D, so axis must be None, 0 or -1")
    if out is not None:
        raise TypeError(f"{method}(out=...) is not supported: the result is made on the server; "
                        f"assign it instead (out[...] = a.{method}() for a numpy out)")
    if keepdims:
        raise TypeError(f"{method}(keepdims=True) is not supported: the result is a scalar; "
                        f"wrap it yourself, e.g. ak.array([a.{method}()])")
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return a


def _human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"

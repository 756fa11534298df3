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
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ._errors import ArktosError, UnknownArrayError

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["pdarray"]

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
            self._finalizer = weakref.finalize(self, conn._pending_deletes.append, name)
            self._finalizer.atexit = False  # at exit no next request would carry the name

    @property
    def shape(self) -> tuple[int]:
        """``(size,)``."""
        return (self.size,)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """``size * itemsize``: the bytes the array takes on the server."""
        return self.size * self.dtype.itemsize

    @property
    def owned(self) -> bool:
        """True when dropping this pdarray deletes the server array."""
        return self._finalizer is not None and self._finalizer.alive

    def __len__(self) -> int:
        return self.size

    def _live_name(self) -> str:
        if self._deleted:
            raise UnknownArrayError(f"array {self.name!r} was deleted with .delete(); "
                                    "upload it again with ak.array()")
        return self.name

    def to_ndarray(self) -> NDArray[Any]:
        """Download the whole array into a new numpy array (bit-identical).

        >>> ak.array([1.5, np.nan]).to_ndarray()
        array([1.5, nan])
        """
        return self._conn._download(self._live_name())

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

    def __iter__(self) -> Iterator[Any]:
        if self.size > MAX_ITER_SIZE:
            raise ValueError(f"refusing to iterate over {self.size} elements of {self.name!r} "
                             "one by one; download them once with a.to_ndarray()")
        return iter(self.to_ndarray())

    def delete(self) -> None:
        """Delete the array on the server now. Calling it again does nothing.

        >>> a = ak.array([1, 2, 3])
        >>> a.delete()
        """
        if self._deleted:
            return
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
            data, threshold = self._conn._download(name), PRINT_THRESHOLD
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

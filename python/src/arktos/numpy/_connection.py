"""ak.Connection: a Session that makes pdarrays (array, attach), and the module-level ak.array, ak.attach and ak.connect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..core import _default
from ..core._dtypes import from_wire
from ..core._session import Session, _as_wire_array
from ._bigint import is_big_ints, is_bigint_dtype, upload_bigint
from ._pdarray import pdarray
from ._strings import Strings, is_text

__all__ = ["Connection", "array", "attach", "connect"]

_P = ParamSpec("_P")
_C = TypeVar("_C", bound=Session)


class Connection(Session):
    """A connection to one arktos-server.

    ``url`` defaults to $ARKTOS_URL, else ``tcp://localhost:5555``. The token
    comes from ``token``, the URL (``?token=...``), $ARKTOS_TOKEN, the file
    named by $ARKTOS_TOKEN_FILE, and lastly ``~/.arktos/token`` when the server
    refuses a request without one. ``timeout`` (seconds) bounds every request;
    None waits forever, except for the first get_config, which waits at most
    10 s so that a missing server is reported. A server still restoring its
    --checkpoint answers at once; the constructor then waits until its arrays
    are back (within ``timeout``; a progress bar shows past
    ``ak.config.progress_delay``). Requests from several threads
    are serialised; for parallel transfers give each thread its own
    Connection.

    Array bytes travel over a bulk stream (a plain socket beside the ZeroMQ
    one, unix when the server is on this host) for arrays of 1 MiB or more
    with ``transport="auto"``, always with ``"stream"``, and never with
    ``"frames"`` (ZeroMQ frames only); ``stream_network`` forces "tcp" or
    "unix". Over TCP an array of 16 MiB or more is split across ``stripes``
    streams at once (default 3; 1 for one): one TCP connection is bound by
    the kernel's work for it on one core (here 2.2-2.5 GiB/s, three 3.4-3.8).
    ``compression="zstd"`` compresses frames both ways (for slow,
    remote links: it costs CPU and pays only on compressible data; needs the
    zstandard package) and always sends frames.

    With the server on this host (a unix stream), arrays of 16 MiB or more are
    uploaded through a shared-memory segment that becomes the server's array
    (the server copies nothing), and ``to_ndarray(copy=False)`` maps the
    array's segment read-only (no copy on either side). ``shm=False`` turns
    both off; with a remote server they are never attempted.

    Requests without payload (everything but uploads, downloads and stream
    management) travel over a request lane once the connection is up: a
    plain socket beside the ZeroMQ one, opened like a bulk stream, whose
    round trip skips libzmq's I/O threads. ``lane=False`` keeps every
    request on ZeroMQ; a server that offers no streams gets ZeroMQ anyway.
    While it waits for a lane reply the client polls the socket for up to
    ``lane_spin`` (seconds, or a duration such as ``"200us"``; default
    ``ARKTOS_LANE_SPIN``, else 200 µs; 0 turns it off) before it blocks:
    a reply that comes meanwhile is read without the wake-up a blocked
    process waits for (about 130 µs on a small VM). A poll that finds the
    CPU taken by another thread stops polling for a while.

    A request waiting for its reply on ZeroMQ fails with
    ``ConnectionLostError`` (a ``ConnectionError``) when the connection
    drops: the server stopped or crashed, or left heartbeats unanswered for
    ``heartbeat`` seconds (default 30; pings go out at a quarter of it; 0
    sends none), as a host that vanished does. Whether the request ran is
    not known; the next one connects again.

    >>> conn = ak.Connection("tcp://localhost:5555")
    >>> a = conn.array([1, 2, 3])
    >>> conn.close()
    """

    def _pdarray(self, result: dict[str, Any], *, owned: bool) -> pdarray:
        return pdarray(self, result["name"], from_wire(result["dtype"]), int(result["size"]),
                       owned=owned)

    def _owned_pdarray(self, result: dict[str, Any]) -> pdarray:
        return self._pdarray(result, owned=True)

    def array(self, x: ArrayLike, name: str | None = None, dtype: DTypeLike | None = None, *,
              max_bits: int = -1, num_bits: int | None = None) -> pdarray:
        """Upload `x` (numpy array, list or scalar) and return a pdarray;
        with `dtype`, x converted to it first as ``np.asarray(x, dtype)``.

        `x` must be 1-D (a scalar becomes a 1-element array) of a supported
        dtype: int8..int64, uint8..uint64, float32, float64 or bool.
        Non-contiguous, Fortran-ordered and big-endian inputs are converted
        first; a C-contiguous little-endian array is sent without a copy and
        must not change until array() returns. Without `name` the server
        picks one (``arr_<n>``). The returned pdarray owns the server array:
        it is deleted when the pdarray is garbage collected or deleted, so
        keep it (``ak.array(x, name="n")`` on its own frees "n" again).

        >>> a = ak.array(np.arange(5))
        >>> a
        array([0, 1, 2, 3, 4])

        ``dtype=ak.bigint`` (or Python ints past 64 bits, unasked) makes a
        BigIntArray, its values split into uint64 limbs here; ``max_bits``
        wraps them modulo ``2**max_bits``; ``num_bits``, Arkouda's hint of
        how many bits the largest needs, is accepted and not needed (the
        values decide). Neither applies to other dtypes.
        """
        if is_bigint_dtype(dtype) or dtype is None and is_big_ints(x):
            if name is not None:
                raise ValueError("ak.array names no bigint arrays: register its limbs (bigint_to_uint_arrays())")
            return upload_bigint(self, x, max_bits)  # type: ignore[return-value]
        if (dtype is None or np.dtype(dtype).kind in "UTO") and is_text(x):
            if name is not None:
                raise ValueError("ak.array names no Strings: name its arrays with strings.register(name)")
            return Strings._upload(self, x)  # type: ignore[return-value]
        data = _as_wire_array(x if dtype is None else np.asarray(x, dtype=dtype))
        # (An upload refused with RESTORING stored nothing, and its stream
        # was closed: sent again.)
        return self._after_restore(lambda: self._upload(data, name, self._owned_pdarray))

    def attach(self, name: str) -> pdarray:
        """Return a pdarray for the existing server array `name`.

        Unlike ak.array(), the pdarray does not own the array: dropping it
        leaves the array on the server (call .delete() to remove it), as
        for an array kept with pdarray.register(). Raises
        UnknownArrayError (a KeyError) when there is no such array.

        >>> b = ak.attach("arr_1")
        """
        return self._pdarray(self.info(name), owned=False)


_default.use_connection_class(Connection)

array = _default.on_default(Connection.array)
attach = _default.on_default(Connection.attach)


def _returning(f: Callable[_P, Session], cls: type[_C]) -> Callable[_P, _C]:
    """`f`, typed as returning `cls` (what it builds once cls is registered)."""
    return cast("Callable[_P, _C]", f)


#: ak.connect (core's), typed as returning the Connection it builds here.
connect = _returning(_default.connect, Connection)

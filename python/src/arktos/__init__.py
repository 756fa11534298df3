"""Arktos: numpy-like arrays stored on an arktos-server.

    >>> import arktos as ak
    >>> ak.connect()                      # tcp://localhost:5555, or $ARKTOS_URL
    connected to arktos server tcp://localhost:5555
    >>> a = ak.array(np.arange(10**6))    # upload
    >>> a
    array([     0,      1,      2, ..., 999997, 999998, 999999], shape=(1000000,))
    >>> a.to_ndarray().sum()              # download
    np.int64(499999500000)
    >>> ak.disconnect()

The module-level functions use one default connection, made by ak.connect().
For several connections at once (one per thread, say) use ak.Connection,
which has the same methods. Server errors raise the exceptions of the error
registry (see arktos._errors), each also the matching Python exception
(KeyError, MemoryError, PermissionError, ...).
"""

from __future__ import annotations

import functools as _functools
import inspect as _inspect
from collections.abc import Callable as _Callable
from typing import Concatenate as _Concatenate, ParamSpec as _ParamSpec, TypeVar as _TypeVar

from ._bufpool import set_download_pool
from ._connection import DEFAULT_URL, Connection, ConnectionLostError
from ._dtypes import DTYPES
from ._errors import *  # noqa: F401,F403 -- the exception classes
from ._errors import __all__ as _error_names
from ._pdarray import pdarray
from ._ops import *  # noqa: F401,F403 -- numpy-style operations (docs/operations.md)
from ._ops import __all__ as _ops_names
from ._io import *  # noqa: F401,F403 -- Parquet, Arrow IPC and checkpoints on the server
from ._io import __all__ as _io_names
from ._groupby import GroupBy
from ._categorical import Categorical
from ._segarray import SegArray
from ._dataframe import DataFrame, DataFrameGroupBy, merge
from ._server import Server, find_server_binary
from ._config import config
from ._interop import *  # noqa: F401,F403 -- pandas and Arrow interop
from ._interop import __all__ as _interop_names
from ._arkouda import *  # noqa: F401,F403 -- Arkouda's names: ak.int64, ak.power, ak.broadcast, ...
from ._arkouda import __all__ as _arkouda_names

__version__ = "0.1.0"

__all__ = [
    "Categorical",
    "DEFAULT_URL",
    "DTYPES",
    "Connection",
    "DataFrame",
    "DataFrameGroupBy",
    "ConnectionLostError",
    "GroupBy",
    "SegArray",
    "Server",
    "array",
    "attach",
    "connect",
    "config",
    "disconnect",
    "find_server_binary",
    "get_config",
    "get_mem_used",
    "info",
    "list_arrays",
    "mem_info",
    "merge",
    "pdarray",
    "set_download_pool",
    "shutdown",
    *_error_names,
    *_ops_names,
    *_io_names,
    *_interop_names,
    *_arkouda_names,
]

_default: Connection | None = None
#: (url, token, timeout) of the last ak.connect(), so that ak.shutdown() works
#: after ak.disconnect(), as in Arkouda sessions.
_last_target: tuple[str | None, str | None, float | None] | None = None

_P = _ParamSpec("_P")
_R = _TypeVar("_R")


def connect(url: str | None = None, token: str | int | None = None,
            timeout: float | None = None, *, start_server: bool = False, server: str | None = None,
            port: int | None = None, connect_url: str | None = None,
            access_token: str | None = None) -> Connection:
    """Connect the default connection to an arktos-server and return it.

    `url` defaults to $ARKTOS_URL, else tcp://localhost:5555; for the token
    and `timeout` see Connection. A previous default connection is closed
    (its pdarrays stop working, and the arrays they own are deleted;
    registered ones stay). Prints where it connected.

    Arkouda's forms work too: ``ak.connect("localhost", 5555)`` (a host and
    a port), ``server=``, ``port=``, ``connect_url=``, ``access_token=``, and
    ``timeout=0`` for no timeout.

    With ``start_server=True``, when nothing listens at the (loopback or
    ipc://) address, a local arktos-server is started there first (see
    ak.Server for where the binary comes from); it runs until ak.shutdown()
    or the end of the Python session.

    >>> ak.connect("tcp://localhost:5555")
    connected to arktos server tcp://localhost:5555
    >>> ak.connect(start_server=True)     # in a notebook: no terminal needed
    started arktos-server /home/me/arktos/bin/arktos-server on tcp://127.0.0.1:5555
    connected to arktos server tcp://localhost:5555
    """
    global _default, _last_target
    url, token, timeout = _arkouda_connect_args(url, token, timeout, server, port, connect_url, access_token)
    if start_server:
        from ._server import ensure_server

        ensure_server(url, token)
    conn = Connection(url, token=token, timeout=timeout)
    if _default is not None:
        _default.close()
    _default = conn
    _last_target = (url, token, timeout)
    print(f"connected to arktos server {conn.url}")
    return conn


def _arkouda_connect_args(url: str | None, token: str | int | None, timeout: float | None,
                          server: str | None, port: int | None, connect_url: str | None,
                          access_token: str | None) -> tuple[str | None, str | None, float | None]:
    """(url, token, timeout) from connect's arguments, Arkouda's forms
    included: connect(server, port), connect_url=, access_token=, and
    timeout=0 for none."""
    if isinstance(token, int) and not isinstance(token, bool):
        if port is not None:
            raise TypeError("connect(server, port): the port is given twice")
        port, token = token, None  # Arkouda's connect("localhost", 5555)
    if token is not None and not isinstance(token, str):
        raise TypeError(f"token must be a str, got {type(token).__name__}; connect as "
                        "ak.connect('tcp://host:port') or ak.connect('host', port)")
    if access_token is not None:
        token = access_token
    if connect_url is not None:
        if url is not None or server is not None:
            raise TypeError("give connect_url, or the url (server and port), not both")
        url = connect_url
    if server is not None:
        if url is not None:
            raise TypeError("give the url or server=, not both")
        url = server
    if url is None and port is not None:
        url = "localhost"
    if url is not None and "://" not in url:
        url = f"tcp://{url}:{5555 if port is None else int(port)}"  # a host name, as Arkouda's server
    elif port is not None:
        raise TypeError(f"the port is part of the url {url!r} (tcp://host:port); give one or the other")
    if timeout == 0:
        timeout = None  # Arkouda's "no timeout"
    return url, token, timeout


def disconnect() -> None:
    """Close the default connection, first deleting arrays already dropped.

    >>> ak.disconnect()
    """
    global _default
    if _default is not None:
        _default.close()
        _default = None


def shutdown() -> None:
    """Stop the server of the default connection and close that connection.

    After ak.disconnect() it reconnects to the last server ak.connect() reached
    just to stop it.

    >>> ak.disconnect(); ak.shutdown()
    """
    global _default
    if (_default is None or _default.closed) and _last_target is not None:
        url, token, timeout = _last_target
        conn = Connection(url, token=token, timeout=timeout)
    else:
        conn = _connection()
    _default = None
    conn.shutdown()


def _connection() -> Connection:
    if _default is None or _default.closed:
        raise ConnectionError("not connected to an arktos server; call ak.connect() first")
    return _default


def _on_default(method: _Callable[_Concatenate[Connection, _P], _R]) -> _Callable[_P, _R]:
    """Make a module-level function that calls `method` on the default connection."""

    @_functools.wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(_connection(), *args, **kwargs)

    signature = _inspect.signature(method)
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:])
    del call.__wrapped__
    call.__module__ = __name__
    call.__qualname__ = method.__name__
    return call


array = _on_default(Connection.array)
attach = _on_default(Connection.attach)
info = _on_default(Connection.info)
list_arrays = _on_default(Connection.list_arrays)
get_config = _on_default(Connection.get_config)
mem_info = _on_default(Connection.mem_info)
get_mem_used = _on_default(Connection.get_mem_used)

del annotations  # (the __future__ import's name: not part of the API, nor in dir(ak))

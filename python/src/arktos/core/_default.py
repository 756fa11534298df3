"""The default connection that module-level functions use: ak.connect, ak.disconnect, ak.shutdown, ak.get_config, ...

The session layer makes no arrays, so the class connect() builds is
registered by the layer above (arktos.numpy registers ak.Connection, which
adds array() and attach()); until then it is a plain Session.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar, cast

from ._session import Session

__all__ = ["connect", "disconnect", "get_config", "get_mem_used", "info", "list_arrays", "locale_mem_info", "mem_info", "shutdown"]

_default: Session | None = None
#: (url, token, timeout) of the last ak.connect(), so that ak.shutdown() works
#: after ak.disconnect(), as in Arkouda sessions.
_last_target: tuple[str | None, str | None, float | None] | None = None
#: What connect() makes (set by arktos.numpy: ak.Connection).
_connection_class: type[Session] = Session
#: Starts a local server for connect(start_server=True) (set by core._server,
#: which connects through this module).
_server_starter: Callable[[str | None, str | None], None] | None = None

_P = ParamSpec("_P")
_R = TypeVar("_R")
_C = TypeVar("_C", bound=Session)


def use_connection_class(cls: type[Session]) -> None:
    """Make connect() build `cls` (a Session subclass) from now on."""
    global _connection_class
    _connection_class = cls


def connection_class() -> type[Session]:
    """The class connect() builds."""
    return _connection_class


def use_server_starter(start: Callable[[str | None, str | None], None]) -> None:
    """Make connect(start_server=True) call start(url, token) first."""
    global _server_starter
    _server_starter = start


def current() -> Session | None:
    """The default connection, or None (closed or not)."""
    return _default


def connect(url: str | None = None, token: str | int | None = None,
            timeout: float | None = None, *, start_server: bool = False, server: str | None = None,
            port: int | None = None, connect_url: str | None = None,
            access_token: str | None = None, server_key: str | None = None) -> Session:
    """Connect the default connection to an arktos-server and return it.

    `url` defaults to $ARKTOS_URL, else tcp://localhost:5555; for the token
    and `timeout` see Connection. A previous default connection is closed
    (its pdarrays stop working, and the arrays they own are deleted;
    registered ones stay). Prints where it connected.

    Arkouda's forms work too: ``ak.connect("localhost", 5555)`` (a host and
    a port), ``server=``, ``port=``, ``connect_url=``, ``access_token=``, and
    ``timeout=0`` for no timeout.

    ``server_key`` is the public key of a server that encrypts its socket
    (CurveZMQ: a server on an address other hosts can reach, by default):
    the 40 characters it printed at start, or the path of its
    ``~/.arktos/server_key.pub``; $ARKTOS_SERVER_KEY otherwise.

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
        if _server_starter is None:
            raise RuntimeError("start_server=True needs arktos.core._server imported (import arktos does)")
        _server_starter(url, token)
    conn = _connection_class(url, token=token, timeout=timeout, server_key=server_key)
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


def cancel() -> str | None:
    """Stop the request the default connection is waiting for, from another
    thread: the server stops its work at the next block boundary, stores
    nothing and frees what it had allocated, and the waiting call raises
    CanceledError. Ctrl-C in the waiting thread does the same by itself.

    Returns "canceled", "finishing" (it was already storing its results, or
    writes an array in place: it completes), "unknown" (it had just
    finished), or None when nothing is waiting.

    >>> ak.cancel() is None      # nothing running on this connection
    True
    """
    if _default is None or _default.closed:
        return None
    return _default.cancel()


def shutdown() -> None:
    """Stop the server of the default connection and close that connection.

    After ak.disconnect() it reconnects to the last server ak.connect() reached
    just to stop it.

    >>> ak.disconnect(); ak.shutdown()
    """
    global _default
    if (_default is None or _default.closed) and _last_target is not None:
        url, token, timeout = _last_target
        conn = _connection_class(url, token=token, timeout=timeout)
    else:
        conn = default_connection()
    _default = None
    conn.shutdown()


def default_connection() -> Session:
    """The connection ak.connect() made; ConnectionError when there is none."""
    if _default is None or _default.closed:
        raise ConnectionError("not connected to an arktos server; call ak.connect() first")
    return _default


def on_default(method: Callable[Concatenate[_C, _P], _R]) -> Callable[_P, _R]:
    """Make a module-level function that calls `method` on the default
    connection (of the class connect() builds, which has the method)."""

    @functools.wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(cast(_C, default_connection()), *args, **kwargs)

    signature = inspect.signature(method)
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:])
    del call.__wrapped__
    call.__module__ = "arktos"
    call.__qualname__ = method.__name__
    return call


get_config = on_default(Session.get_config)
info = on_default(Session.info)
list_arrays = on_default(Session.list_arrays)
mem_info = on_default(Session.mem_info)
get_mem_used = on_default(Session.get_mem_used)
locale_mem_info = on_default(Session.locale_mem_info)

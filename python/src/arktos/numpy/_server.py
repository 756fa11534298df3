"""ak.Server: core's local server process, with its connections typed as ak.Connection (which makes pdarrays)."""

from __future__ import annotations

from typing import Any, cast

from ..core import _server
from ._connection import Connection

__all__ = ["Server"]


class Server(_server.Server):
    """A local arktos-server process, started and stopped from Python.

    ``binary`` defaults to find_server_binary(). The server listens on
    ``tcp://127.0.0.1:<port>`` (a free port unless ``port`` is given) or on
    ``url`` when given. ``max_memory`` ("8GiB"), ``workers``, ``token``,
    ``data_dir``, ``checkpoint`` and ``log_level`` become the server flags
    of the same names; ``args`` adds any other flags. The server's log goes
    to a temporary file (``log()`` reads it).

    Use it as a context manager: the server starts on entry and stops on exit
    (a Connection or ak.connect() to it is closed first). Outside a ``with``
    block call ``start()`` and ``stop()``; a server still running at
    interpreter exit is stopped then.

    >>> with ak.Server() as srv:
    ...     srv.connect()                  # ak.connect(srv.url)
    ...     ak.arange(10).sum()
    connected to arktos server tcp://127.0.0.1:40213
    np.int64(45)
    >>> srv = ak.Server(max_memory="4GiB").start()   # in a notebook
    >>> srv.stop()
    """

    def connect(self, **kwargs: Any) -> Connection:
        """Make this server the default connection: ``ak.connect(self.url, ...)``.

        Keyword arguments go to ak.connect(); the token defaults to this
        Server's. The connection is closed when the server stops.

        >>> srv.connect()
        connected to arktos server tcp://127.0.0.1:40213
        """
        return cast(Connection, super().connect(**kwargs))

    def connection(self, **kwargs: Any) -> Connection:
        """Return a new ak.Connection to this server (not the default one).

        >>> conn = srv.connection(); conn.array([1, 2, 3])
        """
        return cast(Connection, super().connection(**kwargs))

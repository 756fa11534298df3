"""The protocol layer: the socket, wire codec, transfer engine, errors, dtypes and the default connection; it must never import arktos.numpy or arktos.pandas.

It knows array handles only as names (ServerArray); the layers above
register what it builds (core._default.use_connection_class).
"""

from . import _errors
from ._bufpool import set_download_pool
from ._config import config
from ._default import (
    cancel,
    disconnect,
    get_config,
    get_mem_used,
    info,
    list_arrays,
    locale_mem_info,
    mem_info,
    shutdown,
)
from ._default import (
    connect as connect,  # (not in __all__: ak.connect is arktos.numpy's, typed as making ak.Connection)
)
from ._dtypes import DTYPES
from ._errors import *  # noqa: F403 -- the exception classes
from ._server import Server as Server  # (not in __all__: ak.Server is arktos.numpy's)
from ._server import find_server_binary
from ._session import DEFAULT_URL
from ._session import ServerArray as ServerArray  # (arktos.core's, not in ak's API)
from ._session import Session as Session  # (the same)
from ._transport import ConnectionLostError

__all__ = [
    "DEFAULT_URL", "DTYPES", "ConnectionLostError", "cancel", "config",
    "disconnect", "find_server_binary", "get_config", "get_mem_used", "info", "list_arrays", "locale_mem_info", "mem_info",
    "set_download_pool", "shutdown",
]
__all__ += _errors.__all__

"""Arktos: numpy-like arrays stored on an arktos-server (import arktos as ak).

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
registry (see arktos.core._errors), each also the matching Python exception
(KeyError, MemoryError, PermissionError, ...).

The package has three layers, each importing only those below it:
arktos.core (connection, wire protocol, errors), arktos.numpy (pdarray and
its functions) and arktos.pandas (DataFrame, GroupBy, Categorical, SegArray,
interop). This module re-exports their public names.
"""

# The leaf modules' star imports (not the layers'): type checkers read
# their literal __all__ lists.
from . import core, numpy, pandas
from .core import (
    DEFAULT_URL,
    DTYPES,
    ConnectionLostError,
    cancel,
    config,
    disconnect,
    find_server_binary,
    get_config,
    get_mem_used,
    info,
    list_arrays,
    locale_mem_info,
    mem_info,
    set_download_pool,
    shutdown,
)
from .core._errors import *  # noqa: F403 -- the exception classes
from .numpy import (
    BigIntArray,
    Connection,
    Match,
    Server,
    Strings,
    array,
    attach,
    bigint,
    bigint_from_uint_arrays,
    connect,
    pdarray,
    random_strings_lognormal,
    random_strings_uniform,
)
from .numpy._arkouda import *  # noqa: F403 -- Arkouda's names: ak.int64, ak.power, ak.broadcast, ...
from .numpy._ops import *  # noqa: F403 -- numpy-style operations (docs/operations.md)
from .pandas import Categorical, DataFrame, DataFrameGroupBy, GroupBy, SegArray, merge
from .pandas._interop import *  # noqa: F403 -- pandas and Arrow interop
from .pandas._io import *  # noqa: F403 -- Parquet, Arrow IPC and checkpoints on the server

__version__ = "0.1.0"

__all__ = [
    "BigIntArray",
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
    "Match",
    "Strings",
    "array",
    "attach",
    "bigint",
    "bigint_from_uint_arrays",
    "cancel",
    "connect",
    "config",
    "disconnect",
    "find_server_binary",
    "get_config",
    "get_mem_used",
    "locale_mem_info",
    "info",
    "list_arrays",
    "mem_info",
    "merge",
    "pdarray",
    "random_strings_lognormal",
    "random_strings_uniform",
    "set_download_pool",
    "shutdown",
    *core._errors.__all__,
    *numpy._ops.__all__,
    *pandas._io.__all__,
    *pandas._interop.__all__,
    *numpy._arkouda.__all__,
]

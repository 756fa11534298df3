"""The NumPy-like layer: pdarray, ak.Connection (which makes pdarrays) and the creation, elementwise, reduction, sort, set and index functions; it must never import arktos.pandas."""

from . import _arkouda, _ops
from ._arkouda import *  # noqa: F403 -- Arkouda's names: ak.int64, ak.power, ak.broadcast, ...
from ._bigint import BigIntArray, bigint, bigint_from_uint_arrays
from ._connection import Connection, array, attach, connect
from ._ops import *  # noqa: F403 -- numpy-style operations (docs/operations.md)
from ._pdarray import pdarray
from ._server import Server
from ._strings import Match, Strings, random_strings_lognormal, random_strings_uniform

__all__ = ["BigIntArray", "Connection", "Match", "Server", "Strings", "array", "attach", "bigint",
           "bigint_from_uint_arrays", "connect", "pdarray", "random_strings_lognormal", "random_strings_uniform"]
__all__ += _ops.__all__
__all__ += _arkouda.__all__

"""Arkouda's ``arkouda.numpy``: pdarray, its creation and NumPy-like functions, dtypes and sorting, from ``arktos.numpy``."""

from arktos.numpy import *  # noqa: F403

from . import dtypes, pdarrayclass, pdarraycreation, sorting, strings  # noqa: F401
from .dtypes import bigint, bigint_from_uint_arrays  # noqa: F401
from .pdarraycreation import array  # type: ignore[assignment]  # noqa: F401 -- Arkouda's signature
from .sorting import SortingAlgorithm, argsort, coargsort, sort  # noqa: F401 -- Arkouda's signatures

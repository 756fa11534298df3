"""Arkouda's ``arkouda.numpy``: pdarray, its creation and NumPy-like functions, dtypes and sorting, from ``arktos.numpy``."""

from arktos.numpy import *  # noqa: F403

from . import dtypes, pdarrayclass, sorting, strings  # noqa: F401
from .sorting import SortingAlgorithm, argsort, coargsort, sort  # noqa: F401 -- Arkouda's signatures

"""Arkouda's ``arkouda.pandas``: DataFrame, GroupBy, Categorical, SegArray, merge and file I/O, from ``arktos.pandas``."""

from arktos.pandas import *  # noqa: F403

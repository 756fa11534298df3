"""Arkouda's ``arkouda.numpy.sorting``: the sort functions and its SortingAlgorithm names."""

from __future__ import annotations

from enum import Enum

from arktos import argsort, coargsort, is_sorted, sort

__all__ = ["SortingAlgorithm", "argsort", "coargsort", "is_sorted", "sort"]


class SortingAlgorithm(Enum):
    """Arkouda's sort algorithms. Arktos' server picks its own (a stable
    sort, the same answer whichever is named), so either name is accepted."""

    RadixSortLSD = "RadixSortLSD"
    TwoArrays = "TwoArrays"

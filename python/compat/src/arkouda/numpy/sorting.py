"""Arkouda's ``arkouda.numpy.sorting``: the sort functions with Arkouda's signatures, and its SortingAlgorithm names."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import arktos
from arktos import is_sorted

__all__ = ["SortingAlgorithm", "argsort", "coargsort", "is_sorted", "sort"]


class SortingAlgorithm(Enum):
    """Arkouda's sort algorithms. Arktos' server picks its own (a stable
    sort, the same answer whichever is named), so either name is accepted."""

    RadixSortLSD = "RadixSortLSD"
    TwoArrays = "TwoArrays"


def _algorithm(algorithm: Any) -> None:
    if not isinstance(algorithm, (SortingAlgorithm, str)) or str(getattr(algorithm, "value", algorithm)) not in (
            "RadixSortLSD", "TwoArrays"):
        raise ValueError(f"algorithm must be a SortingAlgorithm (RadixSortLSD or TwoArrays), got {algorithm!r}")


def argsort(pda: Any, algorithm: Any = SortingAlgorithm.RadixSortLSD, axis: int = 0,
            ascending: bool = True) -> arktos.pdarray:
    """Arkouda's argsort(pda, algorithm, axis, ascending): arktos.argsort."""
    _algorithm(algorithm)
    if axis not in (0, -1):
        raise ValueError(f"axis must be 0 for a 1-D array, got {axis}")
    return arktos.argsort(pda, ascending=ascending)


def coargsort(arrays: Sequence[Any], algorithm: Any = SortingAlgorithm.RadixSortLSD,
              ascending: bool = True) -> arktos.pdarray:
    """Arkouda's coargsort(arrays, algorithm, ascending): arktos.coargsort."""
    _algorithm(algorithm)
    perm = arktos.coargsort(arrays)
    return perm if ascending else perm[::-1]


def sort(pda: Any, algorithm: Any = SortingAlgorithm.RadixSortLSD, axis: int = -1) -> Any:
    """Arkouda's sort(pda, algorithm, axis): arktos.sort."""
    _algorithm(algorithm)
    if axis not in (0, -1):
        raise ValueError(f"axis must be -1 for a 1-D array, got {axis}")
    return arktos.sort(pda)

"""Arkouda's ``arkouda.numpy.pdarraycreation``: ak.array with Arkouda's signature."""

from __future__ import annotations

from typing import Any

import arktos

__all__ = ["array"]


def array(a: Any, dtype: Any = None, max_bits: int = -1, **bigint_options: Any) -> Any:
    """Arkouda's ak.array(a, dtype=None, max_bits=-1, unsafe=, num_bits=,
    any_neg=): arktos.array. The bigint arguments change nothing for other
    dtypes, as in Arkouda; ``unsafe`` and ``any_neg`` are hints that Arktos
    does not need (it checks the values as it splits them), and a
    negative value is refused, since Arktos's bigints are non-negative."""
    unknown = set(bigint_options) - {"unsafe", "num_bits", "any_neg"}
    if unknown:
        raise TypeError(f"array() got unexpected keyword arguments {sorted(unknown)}")
    # (arktos.array makes a bigint array of dtype=bigint or of ints past 64 bits)
    return arktos.array(a, dtype=dtype, max_bits=max_bits, num_bits=bigint_options.get("num_bits"))

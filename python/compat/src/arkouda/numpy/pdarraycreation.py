"""Arkouda's ``arkouda.numpy.pdarraycreation``: ak.array with Arkouda's signature."""

from __future__ import annotations

from typing import Any

import arktos
from arktos.numpy._bigint import is_big_ints, is_bigint_dtype

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
    if is_bigint_dtype(dtype) or dtype is None and is_big_ints(a):
        return arktos.array(a, dtype="bigint", max_bits=max_bits, num_bits=bigint_options.get("num_bits"))
    return arktos.array(a, dtype=dtype)

"""Arkouda's ``arkouda.numpy.pdarraycreation``: ak.array with Arkouda's signature."""

from __future__ import annotations

from typing import Any

import arktos

from .dtypes import bigint

__all__ = ["array"]


def array(a: Any, dtype: Any = None, max_bits: int = -1, **bigint_options: Any) -> Any:
    """Arkouda's ak.array(a, dtype=None, max_bits=-1): arktos.array. max_bits
    (and unsafe=, num_bits=, any_neg=) are bigint's, as in Arkouda, where
    they change nothing for other dtypes; a bigint array is refused."""
    if dtype is bigint or getattr(dtype, "name", dtype) == "bigint":
        raise NotImplementedError("Arktos holds no bigint arrays yet: keep the values as uint64 limbs")
    unknown = set(bigint_options) - {"unsafe", "num_bits", "any_neg"}
    if unknown:
        raise TypeError(f"array() got unexpected keyword arguments {sorted(unknown)}")
    return arktos.array(a, dtype=dtype)

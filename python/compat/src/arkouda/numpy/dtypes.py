"""Arkouda's ``arkouda.numpy.dtypes``: numpy's dtype and scalar types, as Arktos stores them, and Arkouda's bigint name."""

from typing import Any, NoReturn

from numpy import dtype

from arktos import bool_, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64

__all__ = ["bigint", "bigint_from_uint_arrays", "bool_", "dtype", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64"]


class bigint:  # noqa: N801 -- Arkouda's name
    """Arkouda's arbitrary-precision integer dtype, by name only: code that
    compares a dtype with ``ak.bigint`` (or its ``name``) runs, and making
    a bigint array says that Arktos holds none yet."""

    name = "bigint"

    def __repr__(self) -> str:
        return "dtype(bigint)"


def bigint_from_uint_arrays(arrays: Any, max_bits: int = -1) -> NoReturn:
    """Arkouda's bigint from uint64 limbs: not in Arktos yet."""
    raise NotImplementedError("Arktos holds no bigint arrays yet: keep the uint64 limbs as pdarrays "
                              "(ak.bigint_from_uint_arrays is Arkouda's)")

"""Arkouda's ``arkouda.numpy.dtypes``: numpy's dtype and scalar types, as Arktos stores them, and Arkouda's bigint."""

from numpy import dtype

from arktos import (
    bigint,
    bigint_from_uint_arrays,
    bool_,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ = ["bigint", "bigint_from_uint_arrays", "bool_", "dtype", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64"]

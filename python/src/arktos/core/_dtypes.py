"""The one table of dtypes Arktos stores, and their wire names.

On the wire every element is little-endian, C order, 1-D (docs/protocol.md,
"Arrays on the wire"). A numpy dtype maps to a wire name by kind and item size
alone, so ``>i8``, ``<i8`` and ``=i8`` are all ``"int64"``; the inverse always
gives the little-endian dtype.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["DTYPES", "SUPPORTED", "from_wire", "to_wire"]

#: Wire name -> little-endian numpy dtype. The same set as Go's dtype table.
DTYPES: dict[str, np.dtype] = {
    name: np.dtype(name).newbyteorder("<")
    for name in (
        "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "bool",
    )
}

#: The wire names, for messages: "int8, int16, ..., bool".
SUPPORTED: str = ", ".join(DTYPES)

_BY_KIND_SIZE: dict[tuple[str, int], str] = {
    (dt.kind, dt.itemsize): name for name, dt in DTYPES.items()
}


def to_wire(dtype: DTypeLike) -> str:
    """Return the wire name of `dtype`, whatever its byte order.

    Raises TypeError naming the dtype and the supported ones when Arktos
    cannot store it (object, str, complex, float16, datetime64, ...).

    >>> to_wire(np.dtype(">f8"))
    'float64'
    """
    dt = np.dtype(dtype)
    name = _BY_KIND_SIZE.get((dt.kind, dt.itemsize))
    if name is None:
        raise TypeError(
            f"arktos cannot store arrays of dtype {dt} ({dt.str}); "
            f"supported dtypes: {SUPPORTED}. Convert first, e.g. x.astype(np.float64)"
        )
    return name


def from_wire(name: str) -> np.dtype:
    """Return the little-endian numpy dtype for a wire dtype name.

    Raises TypeError when the name is not a supported dtype (for instance a
    server newer than this client).

    >>> from_wire("int32")
    dtype('int32')
    """
    try:
        return DTYPES[name]
    except KeyError:
        raise TypeError(
            f"unknown wire dtype {name!r}; this client supports: {SUPPORTED}. "
            "Upgrade the arktos Python package to match the server"
        ) from None

"""Arkouda's ``arkouda.testing`` asserters over Arktos: arrays compared as numpy arrays, frames and series as pandas'."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["assert_almost_equivalent", "assert_arkouda_array_equal", "assert_equal",
           "assert_equivalent", "assert_frame_equal", "assert_series_equal"]


def _local(x: Any) -> Any:
    for attr in ("to_ndarray", "to_pandas"):
        if hasattr(x, attr):
            return getattr(x, attr)()
    return x


def assert_equal(left: Any, right: Any, **kwargs: Any) -> None:
    """left equals right exactly (NaN equal to NaN), once both are local."""
    a, b = _local(left), _local(right)
    if hasattr(a, "equals") and hasattr(b, "equals") and not isinstance(a, np.ndarray):
        import pandas.testing as pdt
        if hasattr(a, "columns"):
            pdt.assert_frame_equal(a, b, **kwargs)
        else:
            pdt.assert_series_equal(a, b, **kwargs)
        return
    np.testing.assert_array_equal(a, b, strict=kwargs.get("check_dtype", True))


assert_arkouda_array_equal = assert_equal
assert_equivalent = assert_equal


def assert_almost_equivalent(left: Any, right: Any, rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """left and right agree within rtol/atol (np.testing.assert_allclose)."""
    np.testing.assert_allclose(_local(left), _local(right), rtol=rtol, atol=atol)


def assert_frame_equal(left: Any, right: Any, **kwargs: Any) -> None:
    import pandas.testing as pdt
    pdt.assert_frame_equal(_local(left), _local(right), **kwargs)


def assert_series_equal(left: Any, right: Any, **kwargs: Any) -> None:
    import pandas.testing as pdt
    pdt.assert_series_equal(_local(left), _local(right), **kwargs)

"""Shared data and comparisons for the test_ops_* files: random arrays of
every dtype with edge values (NaN, +-inf, -0.0, min/max ints)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import arktos as ak

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
INTS = [d for d in DTYPES if np.dtype(d).kind in "iu"]
FLOATS = ["float32", "float64"]
N_EDGES = 12


def sample(dtype: str, n: int = 64, seed: int = 0) -> np.ndarray:
    """n random values of dtype, then the dtype's edge values."""
    rng = np.random.default_rng(seed + DTYPES.index(dtype))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n + N_EDGES).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        small = rng.integers(max(info.min, -20), min(info.max, 20), n // 2, endpoint=True)
        big = rng.integers(info.min, info.max, n - n // 2, endpoint=True, dtype=dt)
        edges = [info.min, info.max, 0, 1, info.max - 1] + ([-1, info.min + 1] if dt.kind == "i" else [2])
        return np.concatenate([small.astype(dt), big, np.resize(np.array(edges, dtype=dt), N_EDGES)])
    vals = rng.normal(0, 100, n).astype(dt)
    vals[: n // 4] = np.round(vals[: n // 4])  # some integral values, for floor division ties
    edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, np.finfo(dt).max, np.finfo(dt).tiny, 0.5, -2.5,
             np.finfo(dt).smallest_subnormal]
    return np.concatenate([vals, np.resize(np.array(edges, dtype=dt), N_EDGES)])


def assert_same(got: Any, want: Any, *, check_dtype: bool = True, ulps: int = 0,
                rtol: float = 0.0) -> None:
    """got (a pdarray or numpy scalar) equals numpy's want bit for bit
    (NaN matches NaN; -0.0 must match -0.0), or within ulps units in the
    last place for floats."""
    if hasattr(got, "to_ndarray"):
        got = got.to_ndarray()
    got_a, want_a = np.asarray(got), np.asarray(want)
    if check_dtype:
        assert got_a.dtype == want_a.dtype, (got_a.dtype, want_a.dtype)
    assert got_a.shape == want_a.shape, (got_a.shape, want_a.shape)
    if want_a.dtype.kind == "f" and got_a.dtype.kind == "f":
        g = got_a.astype(want_a.dtype)
        nan_g, nan_w = np.isnan(g), np.isnan(want_a)
        assert np.array_equal(nan_g, nan_w), (g[nan_g != nan_w], want_a[nan_g != nan_w])
        ok = ~nan_w
        if ulps == 0:
            bad = g[ok].view(f"u{g.itemsize}") != want_a[ok].view(f"u{g.itemsize}")
        else:
            both_inf = np.isinf(want_a[ok]) & (g[ok] == want_a[ok])
            with np.errstate(all="ignore"):  # (the spacing of the largest floats overflows to inf)
                spacing = np.abs(np.spacing(want_a[ok].astype(want_a.dtype)))
                err = np.abs(g[ok].astype(np.float64) - want_a[ok])
                bad = ~both_inf & (err > ulps * spacing) & (err > rtol * np.abs(want_a[ok]))
        assert not bad.any(), list(zip(g[ok][bad][:5], want_a[ok][bad][:5]))
    else:
        assert np.array_equal(got_a, want_a), (got_a, want_a)


@contextmanager
def numpy_quiet() -> Iterator[None]:
    """numpy's references on edge-case data without their warnings: floating
    point errors (overflow, 0/0), and the mean or variance of too few
    elements, which numpy warns about and answers with NaN (the server
    answers NaN too, without a warning)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"Mean of empty slice|Degrees of freedom <= 0", RuntimeWarning)
        yield


def forbid_downloads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make pdarray.__array__ (np.asarray of a pdarray) fail, so that an
    operation that silently downloads its operand fails the test
    (to_ndarray, which assert_same uses, still works)."""
    def downloaded(*args: object, **kwargs: object) -> None:
        raise AssertionError("the array was downloaded")

    monkeypatch.setattr(ak.pdarray, "__array__", downloaded)


@contextmanager
def recorded(conn: ak.Connection) -> Iterator[list[str]]:
    """The commands conn sends inside the block, in order."""
    sent: list[str] = []
    request = conn._request

    def record(cmd: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(cmd)
        return request(cmd, *args, **kwargs)

    conn._request = record  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        del conn._request

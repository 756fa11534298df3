"""Every dtype survives upload + download bit for bit, at every size."""

from __future__ import annotations

import numpy as np
import pytest

import arktos as ak
from arktos.core._dtypes import DTYPES

SIZES = [0, 1, 1000, 10_000_003]


def edge_values(dtype: np.dtype) -> list:
    if dtype.kind == "b":
        return [True, False]
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [np.nan, np.inf, -np.inf, -0.0, info.max, info.min, info.smallest_subnormal]
    info = np.iinfo(dtype)
    return [info.min, info.max, 0, 1]


def sample(dtype: np.dtype, size: int, rng: np.random.Generator) -> np.ndarray:
    """Random elements with the edge values first; random bytes for floats give NaN payloads."""
    if dtype.kind == "b":
        data = rng.integers(0, 2, size).astype(bool)
    else:
        data = np.frombuffer(bytearray(rng.bytes(size * dtype.itemsize)), dtype)
    edges = np.array(edge_values(dtype), dtype)[:size]
    data[:edges.size] = edges
    return data


def assert_bit_identical(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_round_trip_is_bit_exact(conn: ak.Connection, rng: np.random.Generator,
                                 dtype_name: str, size: int) -> None:
    want = sample(DTYPES[dtype_name], size, rng)
    a = conn.array(want)
    assert (a.dtype, a.size, a.nbytes, a.shape, len(a)) == (want.dtype, size, want.nbytes,
                                                            (size,), size)
    assert conn.info(a.name) == {"name": a.name, "dtype": dtype_name, "size": size,
                                 "nbytes": want.nbytes}
    assert_bit_identical(a.to_ndarray(), want)
    a.delete()


def test_nan_payloads_survive(conn: ak.Connection) -> None:
    payloads = np.array([0x7FF8000000000001, 0xFFF0000000000123, 0x7FF4000000000000],
                        dtype=np.uint64)
    a = conn.array(payloads.view(np.float64))
    assert a.to_ndarray().view(np.uint64).tolist() == payloads.tolist()


@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 10_001])
def test_small_frame_size_server(make_server, rng: np.random.Generator, size: int) -> None:
    """Many payload frames each way, including a last frame exactly full."""
    with make_server("--frame-size", "1024").connect() as small:
        assert small.max_frame_size == 1024
        want = sample(np.dtype("<i8"), size, rng)
        assert_bit_identical(small.array(want).to_ndarray(), want)


def test_download_ranges(conn: ak.Connection) -> None:
    a = conn.array(np.arange(100, dtype=np.int16))
    for start, stop in [(0, 0), (0, 100), (10, 20), (99, 100), (100, 100)]:
        assert conn._download(a.name, start, stop).tolist() == list(range(start, stop))

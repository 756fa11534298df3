"""Reused download buffers (arktos.core._bufpool): reuse only once nothing refers
to the memory, and every download path takes its buffer from the pool."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import arktos as ak
from arktos.core._bufpool import MIN_BYTES, POOL, BufferPool


def test_buffer_is_reused_after_the_array_is_collected() -> None:
    pool = BufferPool(1 << 30)
    a = pool.empty(MIN_BYTES // 8, np.float64)
    a[:] = 1.5
    addr = a.__array_interface__["data"][0]
    assert (pool.misses, pool.hits) == (1, 0) and a.flags.writeable and not a.flags.owndata
    del a
    gc.collect()
    b = pool.empty(MIN_BYTES // 8, np.int64)
    assert (pool.misses, pool.hits) == (1, 1)
    assert b.__array_interface__["data"][0] == addr  # the same pages, already faulted in


def test_views_keep_the_buffer() -> None:
    """A slice, or an array over the array's buffer, keeps the memory out of
    the pool: it is never handed out while anything can still read it."""
    pool = BufferPool(1 << 30)
    a = pool.empty(MIN_BYTES // 8, np.int64)
    a[:] = np.arange(a.size)
    s = a[10:20]
    m = np.asarray(memoryview(a))
    del a
    gc.collect()
    b = pool.empty(MIN_BYTES // 8, np.int64)
    assert pool.hits == 0
    b[:] = -1
    assert s.tolist() == list(range(10, 20)) and m[5] == 5
    del s, b
    gc.collect()
    assert pool.idle_bytes() == MIN_BYTES  # b's; m still holds the first buffer
    del m
    gc.collect()
    assert pool.idle_bytes() == 2 * MIN_BYTES


def test_small_and_capped() -> None:
    pool = BufferPool(MIN_BYTES)
    small = pool.empty(100, np.int64)
    assert small.flags.owndata and (pool.hits, pool.misses) == (0, 0)
    a, b = pool.empty(MIN_BYTES // 8, np.int64), pool.empty(MIN_BYTES // 8, np.int64)
    del a, b
    gc.collect()
    assert pool.idle_bytes() == MIN_BYTES  # one kept, the other unmapped
    pool.clear()
    assert pool.idle_bytes() == 0
    off = BufferPool(0)
    assert off.empty(MIN_BYTES, np.uint8).flags.owndata


def test_set_download_pool_checks_its_argument() -> None:
    with pytest.raises(ValueError, match="max_bytes must be >= 0"):
        ak.set_download_pool(-1)


@pytest.mark.parametrize("options", [{}, {"shm": False}, {"transport": "stream", "stream_network": "tcp"},
                                     {"transport": "frames"}, {"compression": "zstd"}])
def test_downloads_reuse_buffers(server: Any, options: dict[str, Any], rng: np.random.Generator) -> None:
    """Every download path of a large array fills a pooled buffer: the
    second download, once the first array is gone, reuses its memory, and
    both are bit-exact."""
    conn = ak.Connection(server.url, **options)
    try:
        x = rng.standard_normal(MIN_BYTES // 8 + 3)
        a = conn.array(x)
        first = a.to_ndarray()
        assert first.tobytes() == x.tobytes() and not first.flags.owndata
        del first
        gc.collect()
        hits = POOL.hits
        second = a.to_ndarray()
        assert POOL.hits == hits + 1
        assert second.tobytes() == x.tobytes() and second.flags.writeable
        a.delete()
    finally:
        conn.close()

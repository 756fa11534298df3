"""Reused memory for downloaded arrays.

A download into a new numpy array spends much of its time in the kernel:
every page of fresh memory is faulted in and zeroed on its first write
(on the 2-core VM of bench/transfer: a 256 MiB download over TCP reached
0.45-0.9x the raw socket, against 0.9-1.0x into a reused buffer). So large
download buffers come from this pool: anonymous mappings (huge pages
advised) that go back to the pool when the last numpy array using them is
garbage collected, and are handed out again, already faulted in, to the next
download of the same rounded size.

Ownership: the pool owns each mapping. ``np.frombuffer(mapping)`` gives an
array whose ``base`` is a memoryview numpy made of the mapping; every view
of the array (slices, ``np.asarray(memoryview(a))``) keeps that memoryview
alive, so when it is collected nothing refers to the memory any more, and a
``weakref.finalize`` on it puts the mapping back (into a deque: finalizers
may run inside any allocation, even one of the pool's own, so they take no
lock). Mappings past ``max_bytes`` idle in the pool are unmapped, oldest
first.

Arrays from the pool are ordinary writable numpy arrays, except that they do
not own their data (``a.flags.owndata`` is False, so ``a.resize()`` in place
is refused; ``np.resize(a, n)`` works).
"""

from __future__ import annotations

import collections
import mmap
import os
import threading
import weakref
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

MIN_BYTES = 4 << 20  # below this a fresh np.empty costs little
_ALIGN = 2 << 20  # huge page size: sizes round up to it
DEFAULT_MAX_BYTES = 1 << 30


def _env_max_bytes() -> int:
    raw = os.environ.get("ARKTOS_DOWNLOAD_POOL_BYTES", "")
    try:
        return int(raw) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


class BufferPool:
    """Download buffers kept for reuse; see the module's docstring."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._idle: list[tuple[int, mmap.mmap]] = []  # oldest first
        self._idle_bytes = 0
        self._returned: collections.deque[tuple[int, mmap.mmap]] = collections.deque()
        self._lock = threading.Lock()
        self.hits = 0  # buffers handed out again (tests check the path)
        self.misses = 0  # fresh mappings

    def empty(self, size: int, dtype: DTypeLike) -> NDArray[Any]:
        """An uninitialised array of `size` elements, like np.empty."""
        dt = np.dtype(dtype)
        nbytes = size * dt.itemsize
        if nbytes < MIN_BYTES or self.max_bytes <= 0:
            return np.empty(size, dt)
        cap = -(-nbytes // _ALIGN) * _ALIGN
        mm: mmap.mmap | None = None
        with self._lock:
            self._drain()
            for i, (c, m) in enumerate(self._idle):
                if c == cap:
                    del self._idle[i]
                    self._idle_bytes -= cap
                    mm = m
                    self.hits += 1
                    break
            else:
                self.misses += 1
        if mm is None:
            mm = mmap.mmap(-1, cap, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            if hasattr(mmap, "MADV_HUGEPAGE"):
                try:
                    mm.madvise(mmap.MADV_HUGEPAGE)
                except OSError:
                    pass  # no transparent huge pages here: 4 KiB pages
        out: NDArray[Any] = np.frombuffer(mm, dt, count=size)
        fin = weakref.finalize(out.base, self._returned.append, (cap, mm))
        fin.atexit = False
        return out

    def _drain(self) -> None:
        """Move returned mappings to the idle list, then trim it (lock held)."""
        while self._returned:
            cap, mm = self._returned.popleft()
            self._idle.append((cap, mm))
            self._idle_bytes += cap
        while self._idle_bytes > self.max_bytes and self._idle:
            cap, mm = self._idle.pop(0)
            self._idle_bytes -= cap
            mm.close()

    def clear(self) -> None:
        """Unmap every idle buffer (buffers still in use are not touched)."""
        with self._lock:
            self._drain()
            for _, mm in self._idle:
                mm.close()
            self._idle.clear()
            self._idle_bytes = 0

    def idle_bytes(self) -> int:
        with self._lock:
            self._drain()
            return self._idle_bytes


POOL = BufferPool(_env_max_bytes())


def set_download_pool(max_bytes: int) -> None:
    """Keep at most `max_bytes` of freed download buffers for reuse (default
    1 GiB, or $ARKTOS_DOWNLOAD_POOL_BYTES); 0 turns the pool off and unmaps
    what it holds.

    >>> ak.set_download_pool(0)
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    POOL.max_bytes = max_bytes
    with POOL._lock:
        POOL._drain()

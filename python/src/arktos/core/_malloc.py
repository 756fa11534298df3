"""Let libzmq reuse its frames' memory in this process (glibc only).

Arrays sent in ZeroMQ frames (where no stream or shared memory is used) are
received by libzmq into messages that glibc's malloc hands it. libzmq queues
a whole multipart message before delivering it, so a 256 MiB download is
256 MiB of messages at once; by default each 16 MiB frame is mapped afresh
(over glibc's mmap threshold, or in a thread arena whose 64 MiB heaps are
unmapped when empty) and every page is faulted in and zeroed again on each
transfer. On the 2-core VM of bench/transfer that held a 256 MiB
``to_ndarray()`` in frames to about 1.1 GiB/s.

The settings, as the Go client and the server make them (Go's
``zframe.TuneMalloc``): one malloc arena (libzmq's I/O thread allocates from
the main heap), frames under 32 MiB from that heap, and up to ``keep`` bytes
of its freed top kept resident for the next message. They are process-wide
and made once, at the first connect, before its socket: a thread keeps the
arena it first took, so a ZeroMQ I/O thread that already ran may keep its
own. Measured inside a Jupyter kernel (ipykernel 7.4, whose sockets share
``zmq.Context.instance()`` with ours): no faults after the first transfer,
256 MiB at 2.2-3.3 GiB/s up and 2.2-2.9 down.

``ARKTOS_FRAME_HEAP=0`` leaves malloc alone; another size (``512MiB``,
bytes) sets what is kept, at most 1 GiB (the default).
"""

from __future__ import annotations

import ctypes
import os
import platform
import re

DEFAULT_KEEP = 1 << 30
MAX_KEEP = 1 << 30  # mallopt takes an int
MMAP_THRESHOLD = 32 << 20  # glibc's largest on 64-bit systems

# <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10,
          "m": 1 << 20, "mb": 10**6, "mib": 1 << 20,
          "g": 1 << 30, "gb": 10**9, "gib": 1 << 30}

_tuned: bool | None = None


def parse_bytes(text: str) -> int | None:
    """A size like ``512MiB``, ``1.5GB`` or ``1048576``; None if not one."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([a-zA-Z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def env_keep() -> int:
    """What ARKTOS_FRAME_HEAP asks to keep (a malformed value: 0, off)."""
    raw = os.environ.get("ARKTOS_FRAME_HEAP")
    if raw is None:
        return DEFAULT_KEEP
    n = parse_bytes(raw)
    return 0 if n is None else n


def tune() -> bool:
    """Make the settings once per process; whether glibc took them."""
    global _tuned
    if _tuned is None:
        _tuned = _mallopt(min(env_keep(), MAX_KEEP))
    return _tuned


def _mallopt(keep: int) -> bool:
    if keep <= 0 or platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return all(mallopt(param, value) == 1 for param, value in (
        (_M_ARENA_MAX, 1), (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, keep), (_M_TOP_PAD, keep)))

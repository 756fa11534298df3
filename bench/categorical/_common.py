"""What bench/categorical's two scripts share: a free port and p50/p90 timing."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(f: Callable[[], Any], trials: int) -> tuple[float, float]:
    """p50 and p90 seconds of f over trials calls, after one warm-up call."""
    f()
    ts = []
    for _ in range(trials):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.percentile(ts, 50)), float(np.percentile(ts, 90))

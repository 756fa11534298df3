"""What bench/categorical's scripts share: a free port, p50/p90 timing, the
two string columns of the file benchmarks and a server on a data directory."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
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


def string_columns(n: int) -> dict[str, Any]:
    """The zone (265 distinct, skewed) and id (about a million distinct)
    columns of n rows, as pyarrow string arrays (seed 0)."""
    import pyarrow as pa

    rng = np.random.default_rng(0)
    zones = np.array([f"zone_{i:03d}" for i in range(265)])
    return {"zone": pa.array(zones[np.floor(265 * rng.random(n) ** 3).astype(np.int64)]),
            "id": pa.array(np.char.add("id", rng.integers(0, 10**6, n).astype(str)))}


@contextlib.contextmanager
def server(repo: Path, data: str, workers: int) -> Iterator[None]:
    """An arktos-server on a free loopback port over data, with ak connected."""
    import arktos as ak

    url = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.Popen([str(repo / "bin" / "arktos-server"), "--addr", url, "--data-dir", data,
                             "--workers", str(workers), "--log-level", "warn"])
    try:
        deadline = time.monotonic() + 15
        while True:  # connect fails fast where nothing listens yet: wait for the server to start
            try:
                ak.connect(url)
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield
    finally:
        ak.disconnect()
        proc.terminate()
        proc.wait(timeout=10)

"""Bigint transfer: ak.array(ints, dtype=ak.bigint) and to_ndarray() beside their ceiling (the same limbs as plain uint64 arrays) and the client's own split and join of Python ints.

Usage: .venv/bin/python bench/bigint/run.py [--rows N] [--limbs K] [--reps R]
Prints p50 and p90 (ms) of each path, and rates in MB/s of limb bytes.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import arktos as ak
import numpy as np


def timed(f: Callable[[], Any], reps: int) -> tuple[float, float]:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3, ts[min(len(ts) - 1, int(len(ts) * 0.9))] * 1e3


def floor(cols: list[np.ndarray]) -> list[int]:
    raw, w = np.stack(cols, axis=1).astype(">u8").tobytes(), 8 * len(cols)
    return [int.from_bytes(raw[i:i + w], "big") for i in range(0, len(raw), w)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--limbs", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    n, k = args.rows, args.limbs
    rng = random.Random(1)
    values = np.empty(n, dtype=object)
    values[:] = [rng.getrandbits(64 * k) for _ in range(n)]
    cols = [np.array([(v >> 64 * j) & (2**64 - 1) for v in values], dtype=np.uint64) for j in range(k - 1, -1, -1)]
    nbytes = 8 * n * k
    with ak.Server() as srv:
        c = srv.connect()
        b = c.array(values, dtype=ak.bigint)
        assert b.to_ndarray().tolist() == values.tolist()
        limbs = [c.array(x) for x in cols]
        rows = {
            "ceiling up: k uint64 arrays": lambda: [c.array(x) for x in cols],
            "bigint up: ak.array(ints, dtype=bigint)": lambda: c.array(values, dtype=ak.bigint),
            "ceiling down: k uint64 to_ndarray": lambda: [x.to_ndarray() for x in limbs],
            "bigint down: to_ndarray()": lambda: b.to_ndarray(),
            # the client's floor for an object array: making the Python ints
            "floor: n Python ints from k limbs (no server)": lambda: floor(cols),
        }
        print(f"rows {n:,}, {k} limbs ({nbytes / 1e6:.0f} MB of limbs), {args.reps} reps, warm, loopback, "
              f"server {srv.url}")
        for name, f in rows.items():
            p50, p90 = timed(f, args.reps)
            print(f"{name:45s} p50 {p50:8.1f} ms  p90 {p90:8.1f} ms  {nbytes / 1e6 / (p50 / 1e3):8.0f} MB/s")


if __name__ == "__main__":
    main()

"""Locales: what spreading arrays over several server processes costs.

One command: ``.venv/bin/python bench/locales/run.py [--n N] [--trials T]
[--locales L] [--workers W]``. On this machine, the same operations on
(a) one server of L*W workers and (b) L locales of W workers each
(``--locales L --workers W``: the same cores), in one run, warm, over
loopback from one Python client: elementwise ``a + b`` and ``a * 2.5``, a
reduction (``sum``), a gather by N random indices and a mask of half the
rows, ``sort`` and ``argsort`` of random int64, group-by
``sum`` of float64 values with a taxi-like key (265 values) and a
high-cardinality one (N/10 values), the same with int64 values and a count
(which merge partial results), and the transfers (upload and download of N float64). Reported:
p50 and p90 of T runs each, and the ratio (b)/(a) of the p50s. The
exchange's own rate (bytes moved between locales over the wall time of the
range partitions, from the coordinator's stats) is set against the raw
loopback ceiling measured in the same run: one TCP socket pair moving the
same number of bytes (sendall / recv_into of 4 MiB, two threads).

The defaults (L=2, W=1) are the 2-core figure; on a 16-core machine run it
with ``--locales 4 --workers 4``.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import arktos as ak

REPO = Path(__file__).resolve().parents[2]


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def loopback_ceiling(nbytes: int) -> float:
    """Bytes/s of one loopback TCP socket pair moving nbytes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    buf = bytearray(4 << 20)
    got = [0]

    def reader() -> None:
        conn, _ = srv.accept()
        view = memoryview(buf)
        while got[0] < nbytes:
            n = conn.recv_into(view)
            if n == 0:
                break
            got[0] += n
        conn.close()

    t = threading.Thread(target=reader)
    t.start()
    out = socket.create_connection(("127.0.0.1", port))
    chunk = bytes(4 << 20)
    t0 = time.perf_counter()
    left = nbytes
    while left > 0:
        k = min(left, len(chunk))
        out.sendall(memoryview(chunk)[:k])
        left -= k
    out.close()
    t.join()
    dt = time.perf_counter() - t0
    srv.close()
    return nbytes / dt


def workload(c: ak.Connection, n: int) -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(1)
    x, y = rng.random(n), rng.random(n)
    keys = rng.integers(0, 2**62, n)
    taxi = rng.integers(1, 266, n)
    high = rng.integers(0, max(n // 10, 1), n)
    a, b = c.array(x), c.array(y)
    k, kt, kh = c.array(keys), c.array(taxi), c.array(high)
    iv = c.array(rng.integers(0, 1000, n))
    idx, mask = c.array(rng.integers(0, n, n)), c.array(rng.random(n) < 0.5)

    return {
        "a + b": lambda: a + b,
        "a * 2.5": lambda: a * 2.5,
        "sum": lambda: a.sum(),
        "gather a[idx]": lambda: a[idx],
        "mask a[m]": lambda: a[mask],
        "sort": lambda: ak.sort(k),
        "argsort": lambda: ak.argsort(k),
        "groupby taxi (265 keys)": lambda: ak.GroupBy(kt).aggregate(a, "sum"),
        f"groupby high ({n // 10} keys)": lambda: ak.GroupBy(kh).aggregate(a, "sum"),
        "groupby taxi int sum": lambda: ak.GroupBy(kt).aggregate(iv, "sum"),
        "groupby taxi count": lambda: ak.GroupBy(kt).aggregate(a, "count"),
        "groupby high int sum": lambda: ak.GroupBy(kh).aggregate(iv, "sum"),
        "upload": lambda: c.array(x),
        "download": lambda: a.to_ndarray(),
    }


def measure(c: ak.Connection, n: int, trials: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    ops = workload(c, n)
    times: dict[str, list[float]] = {}
    before = c._request("stats", {})[0]
    for name, op in ops.items():
        op()  # warm
        ts = []
        for _ in range(trials):
            t0 = time.perf_counter()
            r = op()
            ts.append(time.perf_counter() - t0)
            del r
        times[name] = ts
    after = c._request("stats", {})[0]
    return times, {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in ("exchanges", "exchange_bytes", "exchange_ns")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--locales", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="workers per locale")
    args = ap.parse_args()
    L, W, n = args.locales, args.workers, args.n
    mem = max(4 * n * 8 * 12 // L, 1 << 30)
    results = {}
    ex: dict[str, int] = {}
    for label, flags, workers in (("one", [], L * W), ("locales", ["--locales", str(L)], W)):
        per = mem * L if label == "one" else mem
        with ak.Server(workers=workers, max_memory=per, args=flags) as srv:
            c = ak.Connection(srv.url, timeout=600)
            results[label], stats = measure(c, n, args.trials)
            if label == "locales":
                ex = stats
            c.close()
    ceiling = loopback_ceiling(max(ex.get("exchange_bytes", 0) // max(ex.get("exchanges", 1), 1), 64 << 20))
    print(f"# bench/locales: N={n:,} rows, {args.trials} trials, warm, loopback; "
          f"one server of {L * W} workers vs {L} locales x {W} worker(s); "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}")
    print()
    print("| operation | one server p50 (p90) ms | locales p50 (p90) ms | locales / one |")
    print("|---|---|---|---|")
    for name in results["one"]:
        a, b = results["one"][name], results["locales"][name]
        print(f"| {name} | {pct(a, 50) * 1e3:.1f} ({pct(a, 90) * 1e3:.1f}) | "
              f"{pct(b, 50) * 1e3:.1f} ({pct(b, 90) * 1e3:.1f}) | {pct(b, 50) / pct(a, 50):.2f}x |")
    print()
    if ex.get("exchange_ns"):
        rate = ex["exchange_bytes"] / (ex["exchange_ns"] / 1e9)
        print(f"exchange: {ex['exchanges']} range partitions moved {ex['exchange_bytes'] / 2**20:,.0f} MiB "
              f"between locales at {rate / 2**30:.2f} GiB/s over their wall time (masks, cuts, moves and "
              f"assembly); one loopback TCP socket: {ceiling / 2**30:.2f} GiB/s; ratio {rate / ceiling:.2f}")


if __name__ == "__main__":
    main()

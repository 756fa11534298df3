"""Fairness under load: the latency of small requests while other clients
run long group-bys, on one server, loopback only, bounded in time.

One command: ``.venv/bin/python bench/load/run.py [--clients 8] [--heavy 1] [--seconds 20]``.
A server of 2 workers; HEAVY processes each group a 10^7-row array by a
wide key and sum a float column, over and over; CLIENTS processes each, on
arrays of their own, run small requests in a loop and time every one:
``sum`` of 10^3 float64 (answered on the I/O goroutine; checked to 1e-12,
its order of additions being the server's), ``a + 1`` of 10^4 float64 (a
worker's) and a 10^4-element upload and download (both checked bit for bit
against numpy); each group-by against the first one's result, bit for bit. Phase 1 runs the small clients alone, phase 2 with the
heavy ones; the table gives the p50 / p99 of each kind of small request,
how many ran, and errors. The same script runs unchanged on a bigger machine.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from typing import Any

import numpy as np


def small_client(url: str, seconds: float, seed: int, out: Any) -> None:
    import arktos as ak
    ak.connect(url, timeout=120)
    rng = np.random.default_rng(seed)
    x3, x4 = rng.random(1000), rng.random(10_000)
    a3, a4 = ak.array(x3), ak.array(x4)
    times: dict[str, list[float]] = {"sum 1e3 (inline)": [], "a+1 1e4 (worker)": [], "upload+download 1e4": []}
    errors = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        s = float(ak.sum(a3))
        times["sum 1e3 (inline)"].append(time.perf_counter() - t0)
        errors += not np.isclose(s, float(np.sum(x3)), rtol=1e-12, atol=0)  # (summation order may differ)
        t0 = time.perf_counter()
        b = a4 + 1.0
        times["a+1 1e4 (worker)"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        back = ak.array(x4).to_ndarray()
        times["upload+download 1e4"].append(time.perf_counter() - t0)
        errors += not np.array_equal(back, x4)
        errors += not np.array_equal(b.to_ndarray(), x4 + 1.0)
        del b
    ak.disconnect()
    out.put((times, errors))


def heavy_client(url: str, seconds: float, seed: int, out: Any) -> None:
    import arktos as ak
    ak.connect(url, timeout=600)
    rng = np.random.default_rng(seed)
    keys, vals = ak.array(rng.integers(0, 2**40, 10_000_000)), ak.array(rng.random(10_000_000))
    first = None
    n = errors = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        _, sums = ak.GroupBy(keys).sum(vals)
        got = sums.to_ndarray()
        if first is None:
            first = got
        errors += not np.array_equal(got, first)
        n += 1
    ak.disconnect()
    out.put(({"groupby 1e7 (heavy)": [float(n)]}, errors))


def phase(url: str, clients: int, heavy: int, seconds: float) -> tuple[dict[str, list[float]], int, float]:
    ctx = mp.get_context("spawn")
    q: Any = ctx.Queue()
    procs = [ctx.Process(target=heavy_client, args=(url, seconds + 5, 100 + i, q)) for i in range(heavy)]
    for p in procs:
        p.start()
    if heavy:
        time.sleep(5)  # the heavy clients' uploads done, their group-bys running
    smalls = [ctx.Process(target=small_client, args=(url, seconds, i, q)) for i in range(clients)]
    for p in smalls:
        p.start()
    merged: dict[str, list[float]] = {}
    errors = 0
    for _ in range(len(procs) + len(smalls)):
        times, err = q.get(timeout=seconds + 600)
        errors += err
        for k, v in times.items():
            merged.setdefault(k, []).extend(v)
    for p in procs + smalls:
        p.join(timeout=60)
    return merged, errors, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--heavy", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    import arktos as ak
    print(f"# bench/load: {args.clients} small clients, {args.heavy} heavy (group-by 1e7), {args.seconds:g} s a phase, "
          f"server of 2 workers, loopback, {os.cpu_count()} CPUs")
    print("\n| phase | request | count | p50 (ms) | p99 (ms) | errors |")
    print("|---|---|---|---|---|---|")
    with ak.Server(workers=2) as srv:
        for label, heavy in (("alone", 0), ("with heavy", args.heavy)):
            merged, errors, secs = phase(srv.url, args.clients, heavy, args.seconds)
            for k, v in merged.items():
                if k.startswith("groupby"):
                    print(f"| {label} | {k} | {int(sum(v))} in {secs + 5:g} s | - | - | {errors} |")
                    continue
                ms = np.asarray(v) * 1e3
                print(f"| {label} | {k} | {len(v)} | {np.percentile(ms, 50):.2f} | {np.percentile(ms, 99):.2f} | {errors} |")


if __name__ == "__main__":
    main()

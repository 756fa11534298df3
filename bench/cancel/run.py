"""Cancel: how soon the server is idle after ak.cancel(), and what the
cancellation checks cost a request that is not cancelled.

One command: ``.venv/bin/python bench/cancel/run.py [--baseline OLD_BINARY]``.
For argsort and group-by of N random 62-bit int64 keys and a read_parquet of
4 float64 columns of N/2 rows (zstd), on a server of its own (2 workers,
loopback): (1) each operation run to its end, p50/p90 of TRIALS runs, with
the same operation on the baseline binary (a server without cancel) beside
it when given, so the checks' cost is a ratio measured in one run; (2) the
operation cancelled from another thread after a delay drawn from
[0.05, 0.8] s until TRIALS cancels have hit it running: the time from just
before ak.cancel() (its own round trip on a new socket included) to the
first `stats` that reports no request running (polled over a second
connection). Warm: every operation runs once first.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import arktos as ak

REPO = Path(__file__).resolve().parents[2]


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def ops(n: int) -> dict[str, Callable[[], Any]]:
    keys = ak.array(np.random.default_rng(7).integers(0, 2**62, n))
    rng = np.random.default_rng(3)
    cols = {f"c{i}": ak.array(rng.random(n // 2)) for i in range(4)}
    ak.to_parquet(cols, "cancel-bench.parquet", compression="zstd")
    del cols

    def groupby() -> Any:
        return ak.GroupBy(keys).size()

    return {
        "argsort": lambda: ak.argsort(keys),
        "groupby": groupby,
        "read_parquet": lambda: ak.read_parquet("cancel-bench.parquet"),
    }


def full_runs(binary: str | None, n: int, trials: int, data: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    with ak.Server(binary, workers=2, data_dir=data) as srv:
        ak.connect(srv.url, timeout=600)
        for name, op in ops(n).items():
            op()  # warm
            ts = []
            for _ in range(trials):
                t0 = time.perf_counter()
                r = op()
                ts.append(time.perf_counter() - t0)
                del r
            times[name] = ts
        ak.disconnect()
    return times


def cancel_runs(n: int, trials: int, data: str, seed: int) -> dict[str, list[float]]:
    rnd = random.Random(seed)
    out: dict[str, list[float]] = {}
    with ak.Server(workers=2, data_dir=data) as srv:
        ak.connect(srv.url, timeout=600)
        watch = ak.Connection(srv.url)
        for name, op in ops(n).items():
            op()  # warm
            lat: list[float] = []
            while len(lat) < trials:
                delay = rnd.uniform(0.05, 0.8)
                got: dict[str, float] = {}

                def canceller() -> None:
                    time.sleep(delay)
                    t0 = time.perf_counter()
                    if ak.cancel() != "canceled":
                        return
                    while watch._request("stats", {})[0]["running"] > 0:
                        pass
                    got["idle"] = time.perf_counter() - t0

                th = threading.Thread(target=canceller)
                th.start()
                try:
                    op()
                except ak.CanceledError:
                    pass
                th.join()
                if "idle" in got:
                    lat.append(got["idle"])
            out[name] = lat
        watch.close()
        ak.disconnect()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30_000_000)
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--baseline", help="a server binary without cancel, for the checks' cost")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"# bench/cancel: N={args.n:,} int64 keys (parquet: 4 x {args.n // 2:,} float64, zstd), "
          f"2 workers, loopback, warm, {args.trials} trials, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as data:
        new = full_runs(None, args.n, args.trials, data)
        old = full_runs(args.baseline, args.n, args.trials, data) if args.baseline else None
        lat = cancel_runs(args.n, args.trials, data, args.seed)
    print("\n| operation | full run p50 / p90 (s) | baseline p50 / p90 (s) | ratio p50 | idle after cancel p50 / p90 / max (ms) |")
    print("|---|---|---|---|---|")
    for name in new:
        b = f"{pct(old[name], 50):.3f} / {pct(old[name], 90):.3f}" if old else "-"
        r = f"{pct(new[name], 50) / pct(old[name], 50):.3f}" if old else "-"
        ls = [x * 1e3 for x in lat[name]]
        print(f"| {name} | {pct(new[name], 50):.3f} / {pct(new[name], 90):.3f} | {b} | {r} | "
              f"{pct(ls, 50):.1f} / {pct(ls, 90):.1f} / {max(ls):.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

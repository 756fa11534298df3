"""Server-side operation time against single-threaded numpy.

    .venv/bin/python bench/ops/run.py [--sizes 1e7,1e8] [--trials 7] [--workers N] [--only add,sum]

Starts bin/arktos-server (build it first: GOEXPERIMENT=simd go build -o bin/arktos-server
./cmd/arktos-server) on a free loopback port, uploads the inputs once, then
times each operation's request round trip (the reply is a few hundred bytes;
results stay on the server and are deleted between trials) and the same
operation in numpy in this process. Prints p50/p90 of each and the ratio
numpy p50 / arktos p50 (above 1: arktos is faster) as a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q))


def timeit(f, trials: int, cleanup=None) -> list[float]:
    out = []
    for _ in range(trials):
        t0 = time.perf_counter()
        r = f()
        out.append(time.perf_counter() - t0)
        if cleanup:
            cleanup(r)
        del r
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e7,1e8")
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--workers", default=str(os.cpu_count()))
    ap.add_argument("--only", default="", help="comma-separated substrings of op names to run (e.g. np.median)")
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"),
                    help="the arktos-server binary (e.g. an older build, for a before/after run)")
    args = ap.parse_args()
    url = f"tcp://127.0.0.1:{free_port()}"
    server = subprocess.Popen([args.server, "--addr", url, "--workers",
                               args.workers, "--log-level", "warn"])
    try:
        time.sleep(0.5)
        conn = ak.Connection(url, timeout=600)
        print(f"setup: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"server --workers {args.workers}, numpy {np.__version__} (single-threaded for these ops), "
              f"loopback tcp, {args.trials} trials; times in ms")
        print()
        print("| op | n | arktos p50 | arktos p90 | numpy p50 | numpy p90 | numpy/arktos (p50) | arktos allocates |")
        print("|---|---|---|---|---|---|---|---|")
        rng = np.random.default_rng(0)
        for n in [int(float(s)) for s in args.sizes.split(",")]:
            x = rng.integers(0, 2**32, n)
            y = rng.integers(0, 2**32, n)
            f = rng.normal(size=n)
            idx = rng.integers(0, n, n)
            px, py, pf, pidx = conn.array(x), conn.array(y), conn.array(f), conn.array(idx)
            m = f > 1.5  # about 7% true
            pm = conn.array(m)
            drop = lambda r: r.delete()  # noqa: E731
            cases = [
                ("compare float64 > scalar", lambda: pf > 1.5, lambda: f > 1.5, drop, "output (1 B/elem)"),
                ("compare int64 == int64", lambda: px == py, lambda: x == y, drop, "output (1 B/elem)"),
                ("range mask (f > a) & (f < b)", lambda: (pf > -1) & (pf < 1), lambda: (f > -1) & (f < 1), drop,
                 "output and two temporaries (1 B/elem)"),
                ("filter float64 by a 7% mask", lambda: pf[pm], lambda: f[m], drop,
                 "output (8 B/kept) + positions (8 B/kept)"),
                ("mean float64", lambda: pf.mean(), lambda: f.mean(), None, "n/8192 partial sums"),
                ("max float64", lambda: pf.max(), lambda: f.max(), None, "nothing"),
                ("min int64", lambda: px.min(), lambda: x.min(), None, "nothing"),
                ("argmax float64", lambda: pf.argmax(), lambda: f.argmax(), None, "nothing"),
                ("add int64", lambda: px + py, lambda: x + y, drop, "output (8 B/elem)"),
                ("sum int64", lambda: px.sum(), lambda: x.sum(), None, "nothing"),
                ("sum float64", lambda: pf.sum(), lambda: f.sum(), None, "n/8192 partial sums"),
                ("gather int64", lambda: px[pidx], lambda: x[idx], drop, "output (8 B/elem)"),
                ("argsort int64 (<2^32)", lambda: px.argsort(), lambda: np.argsort(x), drop,
                 "output 8 + scratch 24 B/elem"),
                ("argsort int64 vs numpy stable", lambda: px.argsort(), lambda: np.argsort(x, kind="stable"),
                 drop, "output 8 + scratch 24 B/elem"),
                ("sort float64", lambda: ak.sort(pf), lambda: np.sort(f), drop,
                 "output 8 + scratch 8 B/elem"),
                ("sort int64 (<2^32)", lambda: ak.sort(px), lambda: np.sort(x), drop,
                 "output 8 + scratch 8 B/elem"),
                ("unique int64 (<2^32)", lambda: ak.unique(px), lambda: np.unique(x), drop,
                 "sorted copy 8 + its scratch 8 B/elem"),
                ("unique float64", lambda: ak.unique(pf), lambda: np.unique(f), drop,
                 "sorted copy 8 + its scratch 8 B/elem"),
                # np.median of a pdarray: order_stats (selection), numpy's
                # function on the two middle elements; numpy partitions a copy.
                ("np.median float64", lambda: np.median(pf), lambda: np.median(f), None,
                 "sample + bracket (n/4 elements at most)"),
                ("np.median float64 vs download + numpy", lambda: np.median(pf),
                 lambda: np.median(pf.to_ndarray()), None, "sample + bracket (n/4 elements at most)"),
                ("np.percentile float64 [5, 50, 95]", lambda: np.percentile(pf, [5, 50, 95]),
                 lambda: np.percentile(f, [5, 50, 95]), None, "sample + bracket, a pass per quantile"),
            ]
            wanted = [w for w in args.only.split(",") if w]
            for name, ours, theirs, cleanup, alloc in cases:
                if wanted and not any(w in name for w in wanted):
                    continue
                trials = args.trials
                t_ours = timeit(ours, trials, cleanup)
                t_np = timeit(theirs, trials)
                ratio = pct(t_np, 50) / pct(t_ours, 50)
                print(f"| {name} | {n:.0e} | {1e3 * pct(t_ours, 50):.1f} | {1e3 * pct(t_ours, 90):.1f} | "
                      f"{1e3 * pct(t_np, 50):.1f} | {1e3 * pct(t_np, 90):.1f} | {ratio:.2f}x | {alloc} |",
                      flush=True)
            for p in (px, py, pf, pidx):
                p.delete()
            del x, y, f, idx
        conn.close()
    finally:
        server.terminate()  # a clean stop removes the server's unix socket directory
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()

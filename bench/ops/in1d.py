"""ak.in1d against numpy's isin, side by side.

    .venv/bin/python bench/ops/in1d.py [--rows 1e7] [--trials 7] [--workers 1] [--server bin/arktos-server]

Three sets, each with half of the 10^7 int64 elements drawn from the set:
334 values in a range of 1000 (a bitmap on the server), 10^5 values spread
over 2^40 (a hash table), 10^6 ids spread over 7·10^7 (a bitmap of 8.7
MB). The answer is checked against numpy's first; then p50 / p90 ms of
each (Arktos: the request's round trip, result left on the server).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import arktos as ak  # noqa: E402
from run import free_port, pct, timeit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--workers", default="1")
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"))
    args = ap.parse_args()
    n = int(args.rows)
    url = f"tcp://127.0.0.1:{free_port()}"
    server = subprocess.Popen([args.server, "--addr", url, "--workers", args.workers, "--log-level", "warn"])
    try:
        conn = ak.Connection(url, timeout=30)
        print(f"{n:,} int64 rows, server --workers {args.workers}, numpy single-threaded, loopback tcp, "
              f"{args.trials} trials (p50 / p90 ms)")
        rng = np.random.default_rng(0)
        for name, a, b in [
            ("in 334 values (range 1000)", rng.integers(0, 1000, n), np.arange(0, 1000, 3)),
            ("in 10^5 values over 2^40", rng.integers(0, 2**40, n), rng.integers(0, 2**40, 10**5)),
            ("in 10^6 ids over 7e7", rng.integers(0, 7 * 10**7, n), rng.choice(7 * 10**7, 10**6, replace=False)),
        ]:
            a[: n // 2] = b[rng.integers(0, b.size, n // 2)]
            pa, pb = conn.array(a), conn.array(b)
            assert np.array_equal(ak.in1d(pa, pb).to_ndarray(), np.isin(a, b)), name
            ours = timeit(lambda: ak.in1d(pa, pb), args.trials, lambda r: r.delete())
            theirs = timeit(lambda: np.isin(a, b), args.trials)
            print(f"  {name:28s} arktos {1e3 * pct(ours, 50):7.1f} / {1e3 * pct(ours, 90):7.1f}   "
                  f"numpy {1e3 * pct(theirs, 50):7.1f} / {1e3 * pct(theirs, 90):7.1f}   "
                  f"numpy/arktos {pct(theirs, 50) / pct(ours, 50):5.2f}x")
            pa.delete()
            pb.delete()
        conn.close()
    finally:
        server.kill()


if __name__ == "__main__":
    main()

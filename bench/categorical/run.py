"""Strings as ak.Categorical against pandas, side by side.

    .venv/bin/python bench/categorical/run.py [--rows 1e7] [--distinct 265] [--trials 7] [--workers N]

Taxi-style zone names (zone_000 .. , skewed: zone = floor(D * u^3)) and a
float64 fare. Times, with p50 and p90 over --trials after one warm-up:
- ak.Categorical(x) from a numpy str array and from a pandas object
  Series: factorize in the client, then the codes' upload;
- GroupBy(zone).sum(fare) on the server (data already there), and the
  floor beside it: GroupBy of the codes uploaded as a plain int16 pdarray
  (the same request: a Categorical adds only the client's wrapping);
- (zone == "zone_007").sum() and zone.contains("_00") (a lookup per
  category, then the server's work on the codes);
- pandas on the same data in this process: groupby of the object column,
  of a category column, and the equality count.
The answers are compared with pandas' (keys exactly, sums to 1e-9
relative) before any time counts. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402
from _common import free_port, timed  # noqa: E402 (beside this script)


def main() -> None:
    import pandas as pd

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--distinct", type=int, default=265)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--workers", default=str(os.cpu_count()))
    args = ap.parse_args()
    n, d = int(args.rows), args.distinct
    rng = np.random.default_rng(0)
    names = np.array([f"zone_{i:03d}" for i in range(d)])
    x = names[np.floor(d * rng.random(n) ** 3).astype(np.int64)]
    fare = np.round(rng.gamma(2.0, 8.0, n), 2)
    xo = pd.Series(x.astype(object))
    df = pd.DataFrame({"zone": xo, "fare": fare})
    dfc = pd.DataFrame({"zone": xo.astype("category"), "fare": fare})

    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([str(REPO / "bin" / "arktos-server"), "--addr", url, "--workers", args.workers,
                             "--log-level", "warn"])
    try:
        ak.connect(url)
        zone, f = ak.Categorical(x), ak.array(fare)
        codes = ak.array(zone.codes.to_ndarray())  # the same keys as a plain pdarray
        keys, sums = ak.GroupBy(zone).sum(f)
        want = df.groupby("zone", sort=True)["fare"].sum()
        assert keys.to_list() == want.index.tolist()
        np.testing.assert_allclose(sums.to_ndarray(), want.to_numpy(), rtol=1e-9)
        assert int((zone == "zone_007").sum()) == int((x == "zone_007").sum())
        rows = [
            ("ak.Categorical(str array)", timed(lambda: ak.Categorical(x), args.trials)),
            ("ak.Categorical(object Series)", timed(lambda: ak.Categorical(xo), args.trials)),
            ("GroupBy(zone).sum(fare)", timed(lambda: ak.GroupBy(zone).sum(f), args.trials)),
            ("  floor: GroupBy(int16 codes).sum(fare)", timed(lambda: ak.GroupBy(codes).sum(f), args.trials)),
            ("(zone == 'zone_007').sum()", timed(lambda: (zone == "zone_007").sum(), args.trials)),
            ("zone.contains('_00').sum()", timed(lambda: zone.contains("_00").sum(), args.trials)),
            ("pandas groupby(object).sum", timed(lambda: df.groupby("zone", sort=True)["fare"].sum(), args.trials)),
            ("pandas groupby(category).sum", timed(
                lambda: dfc.groupby("zone", sort=True, observed=True)["fare"].sum(), args.trials)),
            ("pandas (s == 'zone_007').sum()", timed(lambda: int((xo == "zone_007").sum()), args.trials)),
        ]
    finally:
        ak.disconnect()
        proc.terminate()
        proc.wait(timeout=10)
    print(f"\n{n:,} rows, {d} distinct zone names (skewed), server --workers {args.workers}, "
          f"loopback TCP, warm, {args.trials} trials after a warm-up; pandas {pd.__version__} in this process\n")
    print("| what | p50 s | p90 s |\n|---|---:|---:|")
    for label, (p50, p90) in rows:
        print(f"| {label} | {p50:.4f} | {p90:.4f} |")


if __name__ == "__main__":
    main()

"""Each group's first and last rows, and a random sample of them: Arktos
against pandas and numpy on the same data, side by side.

    .venv/bin/python bench/groupby/headtail.py [--rows 1e7] [--groups 1e5] [--n 5] [--threads 1,2] [--trials 7]

Data: int64 keys drawn from --groups values, int64 values; the data are on
the server (and in this process for the peers) before any time counts.
Arktos: the grouping (g.ids) is made once per thread count, then each trial
times one request, g.head(v, n), g.tail(v, n) (the rows, int64: Arkouda's
default) or g.sample(v, n=n, random_state=i, return_indices=True) (also
weighted by a float64 column w uniform in [0.1, 1.1), and with replacement),
with the answer left on the server. pandas: df.groupby("k").head(n).index (and
tail; single-threaded; rows in row order rather than by group), and
groupby(...).sample(n, random_state=i) (weights="w", replace=True alike). numpy: a stable argsort of the group
ids, then each group's first n by a mask (the same rows as Arktos, in the
same order). "scan": one ak.sum of the ids (the floor). Answers are checked
against numpy (head/tail, as sets against pandas) before timing. Prints
p50/p90 per engine and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import arktos as ak

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import bench_server, stats  # noqa: E402


def np_headtail(ids: np.ndarray, n: int, tail: bool) -> np.ndarray:
    order = np.argsort(ids, kind="stable")
    order = order[ids[order] >= 0]
    sid = ids[order]
    starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])
    ends = np.r_[starts[1:], len(sid)]
    size = np.repeat(ends - starts, ends - starts)
    place = np.arange(len(sid)) - np.repeat(starts, ends - starts)
    keep = place >= size - n if tail else place < n
    return order[keep]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--groups", type=float, default=1e5)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=7)
    args = ap.parse_args()
    rows, ng, n = int(args.rows), int(args.groups), args.n
    rng = np.random.default_rng(1)
    keys = rng.integers(0, ng, rows)
    vals = rng.integers(0, 1000, rows)
    wts = rng.random(rows) + 0.1
    df = pd.DataFrame({"k": keys, "v": vals, "w": wts})
    for threads in [int(t) for t in args.threads.split(",")]:
        with bench_server(threads) as conn:
            k, v, w = conn.array(keys), conn.array(vals), conn.array(wts)
            g = ak.GroupBy(k)
            ids = g.ids.to_ndarray()
            for tail in (False, True):
                want = np_headtail(ids, n, tail)
                got = (g.tail if tail else g.head)(v, n)[1].to_ndarray()
                assert np.array_equal(got, want), "arktos differs from numpy"
                pdr = (df.groupby("k").tail(n) if tail else df.groupby("k").head(n)).index.to_numpy()
                assert np.array_equal(np.sort(pdr), np.sort(want)), "pandas differs"
            times: dict[str, list[float]] = {}

            def timed(name: str, f) -> None:  # type: ignore[no-untyped-def]
                t0 = time.perf_counter()
                f()
                times.setdefault(name, []).append(time.perf_counter() - t0)

            for i in range(args.trials + 1):  # the first round is a warm-up
                timed("scan", lambda: ak.sum(g.ids))
                timed("arktos head", lambda: g.head(v, n))
                timed("arktos tail", lambda: g.tail(v, n))
                timed("arktos sample", lambda: g.sample(v, n=n, random_state=i, return_indices=True))
                timed("arktos sample-w", lambda: g.sample(v, n=n, weights=w, random_state=i, return_indices=True))
                timed("arktos sample-r", lambda: g.sample(v, n=n, replace=True, random_state=i, return_indices=True))
                timed("arktos sample-wr", lambda: g.sample(v, n=n, weights=w, replace=True, random_state=i,
                                                           return_indices=True))
                if threads == 1:
                    timed("pandas head", lambda: df.groupby("k").head(n).index)
                    timed("pandas tail", lambda: df.groupby("k").tail(n).index)
                    timed("pandas sample", lambda: df.groupby("k").sample(n, random_state=i).index)
                    timed("pandas sample-w", lambda: df.groupby("k").sample(n, weights="w", random_state=i).index)
                    timed("pandas sample-r", lambda: df.groupby("k").sample(n, replace=True, random_state=i).index)
                    timed("pandas sample-wr", lambda: df.groupby("k").sample(n, weights="w", replace=True,
                                                                             random_state=i).index)
                    timed("numpy head", lambda: np_headtail(keys, n, False))
                if i == 0:
                    times.clear()
            print(f"\n{rows:,} rows, {ng:,} groups, n={n}, server --workers {threads}, loopback TCP, warm; "
                  f"{args.trials} trials (p50 / p90 s)")
            base = {op: stats(times[f"arktos {op}"])[0]
                    for op in ("head", "tail", "sample", "sample-w", "sample-r", "sample-wr")}
            for name, ts in times.items():
                p50, p90 = stats(ts)
                op = name.split()[-1]
                ratio = f"  {p50 / base[op]:.2f}x arktos" if op in base and not name.startswith("arktos") else ""
                print(f"  {name:17s} {p50:.4f} / {p90:.4f}{ratio}")


if __name__ == "__main__":
    main()

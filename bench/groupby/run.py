"""Group-by: Arktos against DuckDB, Polars and pandas, side by side.

    .venv/bin/python bench/groupby/run.py [--rows 7.7e6] [--threads 1,2] [--trials 5]

(`pip install duckdb polars pandas` into .venv first; build the server with
`go build -o bin/arktos-server ./cmd/arktos-server`.)

Taxi-style data generated on the server (seeded, reproducible at any worker
count): pickup and drop-off zones floor(265·u³)+1 (skewed, 1..265), hour
0..23, fare uniform 0..100 rounded to cents. Queries: sum, count and mean of
fare by (pickup, dropoff, hour) — 1.7 M possible groups — and by pickup.

For each thread count T an arktos-server runs with --workers T; DuckDB
(SET threads), Polars (POLARS_MAX_THREADS, in a subprocess) and pandas
(always one thread) get the same columns already in their memory. Every
peer's answer is checked against ours first (counts exactly, sums and means
to 1e-9 relative), then timed. "scan" is the floor: one server request per
column summing it (the same columns read once). A fixed numpy kernel is
timed before and after, to show whether the (shared, noisy) machine stayed
steady.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402

QUERIES = {"by3": ["pickup", "dropoff", "hour"], "by1": ["pickup"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stats(xs: list[float]) -> tuple[float, float]:
    return float(np.percentile(xs, 50)), float(np.percentile(xs, 90))


def reference_kernel() -> tuple[float, float]:
    x = np.arange(10_000_000, dtype=np.float64)
    ts = []
    for _ in range(9):
        t0 = time.perf_counter()
        x.sum()
        ts.append(time.perf_counter() - t0)
    return stats(ts)


def make_taxi(conn: ak.Connection, n: int) -> dict[str, ak.pdarray]:
    def zone(seed: int) -> ak.pdarray:
        u = ak.uniform(n, seed=seed, conn=conn)
        return ak.astype(ak.floor(u * u * u * 265.0), np.int64) + 1

    fare = ak.round(ak.uniform(n, 0.0, 10000.0, seed=4, conn=conn)) / 100.0
    return {"pickup": zone(1), "dropoff": zone(2),
            "hour": ak.randint(0, 24, n, seed=3, conn=conn), "fare": fare}


def arktos_query(cols: dict[str, ak.pdarray], by: list[str]) -> dict[str, np.ndarray]:
    g = ak.GroupBy([cols[k] for k in by])
    keys = g.unique_keys if isinstance(g.unique_keys, tuple) else (g.unique_keys,)
    _, s = g.sum(cols["fare"])
    _, c = g.size()
    _, m = g.mean(cols["fare"])
    return {"keys": keys, "sum": s, "count": c, "mean": m, "g": g}  # type: ignore[dict-item]


def fetch(r: dict) -> dict[str, np.ndarray]:
    return {"keys": [k.to_ndarray() for k in r["keys"]], "sum": r["sum"].to_ndarray(),
            "count": r["count"].to_ndarray(), "mean": r["mean"].to_ndarray()}


PEER_CODE = r"""
import json, sys, time, os
import numpy as np
peer, threads, path, trials = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
d = np.load(path)
cols = {k: d[k] for k in ("pickup", "dropoff", "hour", "fare")}
queries = {"by3": ["pickup", "dropoff", "hour"], "by1": ["pickup"]}
out = {}
if peer == "duckdb":
    import duckdb, pyarrow as pa
    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    con.register("taxi", pa.table(cols))
    con.execute("CREATE TABLE t AS SELECT * FROM taxi")
    def run(by):
        k = ", ".join(by)
        r = con.execute(f"SELECT {k}, sum(fare) s, count(*) c, avg(fare) m FROM t GROUP BY {k} ORDER BY {k}").fetchnumpy()
        return [r[b] for b in by], r["s"], r["c"], r["m"]
elif peer == "polars":
    import polars as pl
    df = pl.DataFrame(cols)
    def run(by):
        r = df.group_by(by).agg(pl.col("fare").sum().alias("s"), pl.len().alias("c"), pl.col("fare").mean().alias("m")).sort(by)
        return [r[b].to_numpy() for b in by], r["s"].to_numpy(), r["c"].to_numpy(), r["m"].to_numpy()
else:
    import pandas as pd
    df = pd.DataFrame(cols)
    def run(by):
        r = df.groupby(by, sort=True)["fare"].agg(["sum", "count", "mean"])
        idx = r.index.to_frame().to_numpy().T if len(by) > 1 else [r.index.to_numpy()]
        return list(idx), r["sum"].to_numpy(), r["count"].to_numpy(), r["mean"].to_numpy()
for q, by in queries.items():
    keys, s, c, m = run(by)
    np.savez(path + f".{peer}.{q}.npz", s=s, c=c, m=m, *keys)
    ts = []
    for _ in range(trials):
        t0 = time.perf_counter(); run(by); ts.append(time.perf_counter() - t0)
    out[q] = ts
print(json.dumps(out))
"""


def check(ours: dict[str, np.ndarray], path: str, peer: str, q: str) -> str:
    z = np.load(path + f".{peer}.{q}.npz")
    keys = [z[f"arr_{i}"] for i in range(len(ours["keys"]))]
    if len(z["c"]) != len(ours["count"]):
        return f"MISMATCH ngroups {len(z['c'])} vs {len(ours['count'])}"
    for a, b in zip(keys, ours["keys"]):
        if not np.array_equal(a.astype(np.int64), b):
            return "MISMATCH keys"
    if not np.array_equal(z["c"].astype(np.int64), ours["count"]):
        return "MISMATCH count"
    for name, got in (("s", ours["sum"]), ("m", ours["mean"])):
        if not np.allclose(z[name], got, rtol=1e-9, atol=0):
            return f"MISMATCH {name}"
    return "ok"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=7.7e6)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--peers", default="duckdb,polars,pandas")
    args = ap.parse_args()
    n = int(args.rows)
    server_bin = REPO / "bin" / "arktos-server"
    ref_before = reference_kernel()
    tmp = tempfile.mkdtemp(prefix="akgb")
    data_path = os.path.join(tmp, "taxi.npz")
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        url = f"tcp://127.0.0.1:{free_port()}"
        proc = subprocess.Popen([str(server_bin), "--addr", url, "--workers", str(threads),
                                 "--max-memory", "8GiB", "--log-level", "warn"])
        try:
            time.sleep(0.3)
            conn = ak.Connection(url, timeout=600)
            cols = make_taxi(conn, n)
            if not os.path.exists(data_path):
                np.savez(data_path, **{k: v.to_ndarray() for k, v in cols.items()})
            # the scan floor: every column of a query read once
            for q, by in QUERIES.items():
                names = by + ["fare"]
                scan = []
                for _ in range(args.trials):
                    t0 = time.perf_counter()
                    for c in names:
                        ak.sum(cols[c])
                    scan.append(time.perf_counter() - t0)
                ours_t, strategy = [], ""
                for i in range(args.trials + 1):
                    t0 = time.perf_counter()
                    r = arktos_query(cols, by)
                    dt = time.perf_counter() - t0
                    if i == 0:
                        ours = fetch(r)
                        strategy = r["g"].strategy
                    else:
                        ours_t.append(dt)
                    del r
                p50, p90 = stats(ours_t)
                s50, _ = stats(scan)
                rows.append({"threads": threads, "query": q, "engine": f"arktos ({strategy})",
                             "p50": p50, "p90": p90, "check": "ours", "scan": s50})
                rows.append({"threads": threads, "query": q, "engine": "scan floor",
                             "p50": s50, "p90": stats(scan)[1], "check": "", "scan": s50})
                rows[-2]["ours"] = ours
            conn.close()
        finally:
            proc.kill()
            proc.wait()
        for peer in args.peers.split(","):
            if peer == "pandas" and threads > 1:
                continue
            env = dict(os.environ, POLARS_MAX_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
            res = subprocess.run([sys.executable, "-c", PEER_CODE, peer, str(threads), data_path,
                                  str(args.trials)], capture_output=True, text=True, env=env)
            if res.returncode != 0:
                print(f"{peer} failed: {res.stderr[-2000:]}", file=sys.stderr)
                continue
            times = json.loads(res.stdout.strip().splitlines()[-1])
            for q, ts in times.items():
                ours_row = next(r for r in rows if r["threads"] == threads and r["query"] == q
                                and "ours" in r)
                p50, p90 = stats(ts)
                rows.append({"threads": threads, "query": q, "engine": peer, "p50": p50, "p90": p90,
                             "check": check(ours_row["ours"], data_path, peer, q),
                             "scan": ours_row["scan"]})
    ref_after = reference_kernel()
    print(f"rows: {n:,}; machine: {os.cpu_count()} cores (shared with other work: noisy)")
    print(f"reference kernel (numpy sum of 1e7 float64) before: p50 {ref_before[0]*1e3:.2f} ms "
          f"p90 {ref_before[1]*1e3:.2f} ms; after: p50 {ref_after[0]*1e3:.2f} ms p90 {ref_after[1]*1e3:.2f} ms")
    print("query by3 = sum, count, mean of fare by (pickup, dropoff, hour); by1 = by pickup")
    print("| threads | query | engine | p50 s | p90 s | M rows/s | × scan floor | arktos speed-up | answer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ours = next(x for x in rows if x["threads"] == r["threads"] and x["query"] == r["query"]
                    and "ours" in x)
        print(f"| {r['threads']} | {r['query']} | {r['engine']} | {r['p50']:.3f} | {r['p90']:.3f} | "
              f"{n / r['p50'] / 1e6:.0f} | {r['p50'] / r['scan']:.2f} | "
              f"{r['p50'] / ours['p50']:.2f} | {r['check']} |")


if __name__ == "__main__":
    main()

"""Each group's distinct values (Arkouda's GroupBy.unique): Arktos against
DuckDB, Polars and pandas on the same data, side by side.

    .venv/bin/python bench/groupby/unique.py [--rows 1e7] [--groups 1e5] [--span 1000] [--threads 1,2] [--trials 7]

(`pip install duckdb polars` into .venv first; build the server with
`make build`.) Data: int64 keys drawn from --groups values, int64 values
from --span values; everything is in each engine's memory before any time
counts, and every answer stays there (Arktos: on the server; DuckDB: a temp
table).

- arktos: ``ak.GroupBy(k).unique(v)`` from the keys (the grouping's ids,
  then one groupby_unique request); "arktos, grouped": ``g.unique(v)`` of a
  GroupBy whose ids are made already (as a session that aggregates first).
- duckdb: ``CREATE TEMP TABLE r AS SELECT k, list_sort(list(DISTINCT v))
  FROM t GROUP BY k`` (SET threads to the same count).
- polars: ``df.group_by("k").agg(pl.col("v").unique().sort()).sort("k")``,
  in a subprocess with POLARS_MAX_THREADS (its trials follow ours, not
  interleaved).
- pandas (1 thread only): ``df.groupby("k")["v"].unique()``, which does not
  sort within a group (it keeps first-seen order).
- scan: ak.sum of the values (the floor: one read of one column).

Every answer is checked against Arktos' before timing (DuckDB's and Polars'
flat values and offsets exactly; pandas' per group after sorting). Prints
p50 / p90 seconds per engine and each peer's ratio to Arktos.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import arktos as ak

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import bench_server, stats  # noqa: E402

POLARS = r"""
import json, sys, time
import numpy as np, polars as pl
d = np.load(sys.argv[1]); trials = int(sys.argv[2])
df = pl.DataFrame({"k": d["k"], "v": d["v"]})
run = lambda: df.group_by("k").agg(pl.col("v").unique().sort()).sort("k")
r = run()
flat = r["v"].explode().to_numpy()
lens = r["v"].list.len().to_numpy()
ok = np.array_equal(r["k"].to_numpy(), d["uk"]) and np.array_equal(flat, d["flat"]) \
    and np.array_equal(lens, d["lens"])
times = []
for _ in range(trials + 1):
    t0 = time.perf_counter(); run(); times.append(time.perf_counter() - t0)
print(json.dumps({"ok": bool(ok), "times": times[1:]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--groups", type=float, default=1e5)
    ap.add_argument("--span", type=float, default=1000)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=7)
    args = ap.parse_args()
    import duckdb
    import pyarrow as pa

    rows, ng, span = int(args.rows), int(args.groups), int(args.span)
    rng = np.random.default_rng(1)
    keys = rng.integers(0, ng, rows)
    vals = rng.integers(0, span, rows)
    df = pd.DataFrame({"k": keys, "v": vals})
    for threads in [int(t) for t in args.threads.split(",")]:
        with bench_server(threads) as conn:
            k, v = conn.array(keys), conn.array(vals)
            g = ak.GroupBy(k)
            uk, u = g.unique(v)
            flat, lens, ukn = u.values.to_ndarray(), u.lengths.to_ndarray(), uk.to_ndarray()
            db = duckdb.connect()
            db.execute(f"SET threads={threads}")
            db.execute("SET enable_progress_bar=false")
            db.register("src", pa.table({"k": keys, "v": vals}))
            db.execute("CREATE TABLE t AS SELECT * FROM src")
            db.unregister("src")
            q = "SELECT k, list_sort(list(DISTINCT v)) AS u FROM t GROUP BY k"
            r = db.sql(q + " ORDER BY k").to_arrow_table()
            col = r.column("u").combine_chunks()
            assert np.array_equal(r.column("k").to_numpy(), ukn), "duckdb keys differ"
            assert np.array_equal(col.flatten().to_numpy(), flat), "duckdb values differ"
            assert np.array_equal(np.diff(col.offsets.to_numpy()), lens), "duckdb lengths differ"
            if threads == 1:
                want = df.groupby("k")["v"].unique()
                assert np.array_equal(want.index.to_numpy(), ukn)
                assert all(np.array_equal(np.sort(a), b) for a, b in zip(want.to_numpy(), u.to_ndarray(), strict=True)), \
                    "pandas differs"
            times: dict[str, list[float]] = {}

            def timed(name: str, f) -> None:  # type: ignore[no-untyped-def]
                t0 = time.perf_counter()
                f()
                times.setdefault(name, []).append(time.perf_counter() - t0)

            for i in range(args.trials + 1):  # the first round is a warm-up
                timed("scan", lambda: ak.sum(v))
                timed("arktos", lambda: ak.GroupBy(k).unique(v))
                timed("arktos, grouped", lambda: g.unique(v))
                timed("duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q))
                if threads == 1:
                    timed("pandas", lambda: df.groupby("k")["v"].unique())
                if i == 0:
                    times.clear()
            db.close()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.npz")
            np.savez(path, k=keys, v=vals, uk=ukn, flat=flat, lens=lens)
            out = subprocess.run([sys.executable, "-c", POLARS, path, str(args.trials)], capture_output=True,
                                 text=True, env=dict(os.environ, POLARS_MAX_THREADS=str(threads)), check=True)
            pl_res = json.loads(out.stdout)
            assert pl_res["ok"], "polars differs"
            times["polars"] = pl_res["times"]
        print(f"\n{rows:,} rows, {ng:,} groups, values from {span:,}, {flat.size:,} distinct (group, value); "
              f"server --workers {threads}, peers {threads} thread(s), loopback TCP, warm; "
              f"{args.trials} trials (p50 / p90 s)")
        base = stats(times["arktos"])[0]
        for name, ts in times.items():
            p50, p90 = stats(ts)
            print(f"  {name:16s} {p50:.4f} / {p90:.4f}  {p50 / base:.2f}x arktos")


if __name__ == "__main__":
    main()

"""ak.DataFrame against pandas, Polars and DuckDB on taxi-style data, side by side.

    .venv/bin/python bench/groupby/dataframe.py [--rows 1e7] [--threads 1,2] [--trials 7]

(`pip install duckdb polars` into .venv first; build the server with
`make build`.) Data: --rows rows of pickup and drop-off zones (int64,
1..265, skewed: floor(265 u^3) + 1), hour (int8, 0..23), fare and distance
(float64, rounded to cents), as the group-by benchmark's taxi set; in each
engine's memory before any time counts, every answer left there (Arktos: on
the server; DuckDB: a temp table; pandas and Polars: a frame).

Queries:
- by3: sum, count and mean of fare by (pickup, drop-off, hour);
  ``df.groupby([...]).agg(total=("fare", "sum"), n=("fare", "size"),
  avg=("fare", "mean"))``; "arktos GroupBy" is the same through
  ``ak.GroupBy(...).agg(...)`` (what the DataFrame adds is the difference).
- filter: the rows with fare > 40 (about 7%), every column.
- sort: every column sorted by fare (stable: ties in row order).
- merge: a left merge of the rows with a table of the 265 zones (an int
  code and a float rate each) on pickup = zone: every row once, with its
  zone's columns (``df.merge(zones, left_on="pickup", right_on="zone",
  how="left")``), in row order.
- merge2: an inner merge of 10^7 (customer id, amount) rows with a table
  of 10^6 customers (distinct ids spread over 7·10^7, a float score
  each): 10% of the rows' ids are in no table row. One integer key of
  distinct values, so the server's lookup (here its hash table).
- scan: ak.sum of each of the five columns (the floor: one read of each).

DuckDB runs each with ``SET threads`` to the same count (CREATE OR REPLACE
TEMP TABLE r AS ...; its ORDER BY is not stable, so only its fares are
checked); Polars in a subprocess with POLARS_MAX_THREADS (its trials after
ours, not interleaved); pandas at one thread only. Every answer is checked
against Arktos' before timing: by3's keys and counts exactly and its sums
and means to 1e-9 relative; filter's rows exactly; sort's rows exactly
against pandas' and Polars' stable sorts; merge's rows exactly against
pandas' and Polars' (which keep the left's order), DuckDB's by the sum
of the rates (merge2's by its row count and sum of scores). Prints p50 / p90 seconds per
engine and each one's ratio to Arktos' DataFrame.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import arktos as ak

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import bench_server, reference_kernel, stats  # noqa: E402

COLUMNS = ["pickup", "dropoff", "hour", "fare", "dist"]

POLARS = r"""
import json, sys, time
import numpy as np, polars as pl
d = np.load(sys.argv[1]); trials = int(sys.argv[2])
df = pl.DataFrame({c: d[c] for c in ["pickup", "dropoff", "hour", "fare", "dist"]})
zones = pl.DataFrame({"zone": d["zone"], "code": d["code"], "rate": d["rate"]})
orders = pl.DataFrame({"cust": d["ocust"], "amount": d["oamount"]})
customers = pl.DataFrame({"cust": d["ccust"], "score": d["cscore"]})
queries = {
    "by3": lambda: df.group_by(["pickup", "dropoff", "hour"]).agg(
        pl.col("fare").sum().alias("total"), pl.len().alias("n"), pl.col("fare").mean().alias("avg")
    ).sort(["pickup", "dropoff", "hour"]),
    "filter": lambda: df.filter(pl.col("fare") > 40),
    "sort": lambda: df.sort("fare", maintain_order=True),
    "merge": lambda: df.join(zones, left_on="pickup", right_on="zone", how="left", maintain_order="left"),
    "merge2": lambda: orders.join(customers, on="cust", how="inner", maintain_order="left"),
}
r = queries["by3"]()
ok = bool(np.array_equal(r["n"].to_numpy(), d["n"]) and np.allclose(r["total"].to_numpy(), d["total"], rtol=1e-9))
ok &= bool(np.array_equal(queries["filter"]()["dist"].to_numpy(), d["fdist"]))
ok &= bool(np.array_equal(queries["sort"]()["dist"].to_numpy(), d["sdist"]))
ok &= bool(np.array_equal(queries["merge"]()["rate"].to_numpy(), d["mrate"]))
ok &= bool(np.array_equal(queries["merge2"]()["score"].to_numpy(), d["m2score"]))
times = {}
for name, q in queries.items():
    ts = []
    for _ in range(trials + 1):
        t0 = time.perf_counter(); q(); ts.append(time.perf_counter() - t0)
    times[name] = ts[1:]
print(json.dumps({"ok": ok, "times": times}))
"""


def data(rows: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "pickup": np.floor(265 * rng.random(rows) ** 3).astype(np.int64) + 1,
        "dropoff": np.floor(265 * rng.random(rows) ** 3).astype(np.int64) + 1,
        "hour": rng.integers(0, 24, rows).astype(np.int8),
        "fare": np.round(rng.exponential(15, rows), 2),
        "dist": np.round(rng.exponential(3, rows), 2),
    }


def zones_table() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2)
    return {"zone": np.arange(1, 266, dtype=np.int64), "code": rng.integers(0, 6, 265),
            "rate": np.round(rng.random(265) * 3, 2)}


def orders_customers(rows: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    ids = rng.choice(7 * 10**7, 10**6, replace=False).astype(np.int64)
    cust = ids[rng.integers(0, ids.size, rows)]
    cust[rng.random(rows) < 0.1] = -1  # in no table row
    return ({"cust": cust, "amount": np.round(rng.exponential(40, rows), 2)},
            {"cust": ids, "score": np.round(rng.random(ids.size), 3)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=7)
    args = ap.parse_args()
    import duckdb
    import pyarrow as pa

    rows = int(args.rows)
    cols = data(rows)
    pdf = pd.DataFrame(cols)
    ztab = zones_table()
    pzones = pd.DataFrame(ztab)
    otab, ctab = orders_customers(rows)
    porders, pcust = pd.DataFrame(otab), pd.DataFrame(ctab)
    ref_before = reference_kernel()
    print(f"load average {os.getloadavg()[0]:.2f}; reference kernel (numpy sum of 10^7 float64) "
          f"p50 {ref_before[0] * 1e3:.2f} ms")
    for threads in [int(t) for t in args.threads.split(",")]:
        with bench_server(threads) as conn:
            df = ak.DataFrame({c: conn.array(v) for c, v in cols.items()})
            zones = ak.DataFrame({c: conn.array(v) for c, v in ztab.items()})

            def merged() -> ak.DataFrame:
                return df.merge(zones, left_on="pickup", right_on="zone", how="left")

            orders = ak.DataFrame({c: conn.array(v) for c, v in otab.items()})
            customers = ak.DataFrame({c: conn.array(v) for c, v in ctab.items()})

            def merged2() -> ak.DataFrame:
                return orders.merge(customers, on="cust")
            keys = ["pickup", "dropoff", "hour"]

            def by3() -> ak.DataFrame:
                return df.groupby(keys).agg(total=("fare", "sum"), n=("fare", "size"), avg=("fare", "mean"))

            def by3_groupby() -> Any:
                return ak.GroupBy([df[k] for k in keys]).agg(total=(df["fare"], "sum"), n=(None, "size"),
                                                             avg=(df["fare"], "mean"))

            mine = by3().reset_index().to_pandas()
            filt = df[df["fare"] > 40].to_pandas()
            srt = df.sort_values("fare").to_pandas()
            mrg = merged().to_pandas()
            mrg2 = merged2().to_pandas()
            db = duckdb.connect()
            db.execute(f"SET threads={threads}")
            db.execute("SET enable_progress_bar=false")
            db.register("src", pa.table(cols))
            db.execute("CREATE TABLE t AS SELECT * FROM src")
            db.unregister("src")
            db.register("zsrc", pa.table(ztab))
            db.execute("CREATE TABLE z AS SELECT * FROM zsrc")
            db.unregister("zsrc")
            q_merge = "SELECT * FROM t LEFT JOIN z ON t.pickup = z.zone"
            db.register("osrc", pa.table(otab))
            db.register("csrc", pa.table(ctab))
            db.execute("CREATE TABLE o AS SELECT * FROM osrc")
            db.execute("CREATE TABLE c AS SELECT * FROM csrc")
            db.unregister("osrc")
            db.unregister("csrc")
            q_merge2 = "SELECT o.cust, o.amount, c.score FROM o JOIN c ON o.cust = c.cust"
            q_by3 = ("SELECT pickup, dropoff, hour, sum(fare) AS total, count(*) AS n, avg(fare) AS avg FROM t "
                     "GROUP BY pickup, dropoff, hour")
            q_filter = "SELECT * FROM t WHERE fare > 40"
            q_sort = "SELECT * FROM t ORDER BY fare"
            r = db.sql(q_by3 + " ORDER BY pickup, dropoff, hour").df()
            for c in keys + ["n"]:
                assert np.array_equal(r[c].to_numpy(), mine[c].to_numpy()), f"duckdb by3 {c} differs"
            for c in ("total", "avg"):
                assert np.allclose(r[c].to_numpy(), mine[c].to_numpy(), rtol=1e-9, atol=0), f"duckdb {c} differs"
            assert np.array_equal(db.sql(q_filter).df()["dist"].to_numpy(), filt["dist"].to_numpy()), \
                "duckdb filter differs"
            assert np.array_equal(db.sql(q_sort).df()["fare"].to_numpy(), srt["fare"].to_numpy()), \
                "duckdb sort differs"
            dm = db.sql(f"SELECT count(*) AS n, sum(rate) AS s FROM ({q_merge})").fetchall()[0]
            assert dm is not None and dm[0] == len(mrg) and np.isclose(dm[1], mrg["rate"].sum(), rtol=1e-9), \
                "duckdb merge differs"
            dm2 = db.sql(f"SELECT count(*) AS n, sum(score) AS s FROM ({q_merge2})").fetchall()[0]
            assert dm2[0] == len(mrg2) and np.isclose(dm2[1], mrg2["score"].sum(), rtol=1e-9), "duckdb merge2 differs"
            if threads == 1:
                want = pdf.groupby(keys).agg(total=("fare", "sum"), n=("fare", "size"), avg=("fare", "mean"))
                want = want.reset_index()
                for c in keys + ["n"]:
                    assert np.array_equal(want[c].to_numpy(), mine[c].to_numpy()), f"pandas by3 {c} differs"
                assert np.allclose(want["total"].to_numpy(), mine["total"].to_numpy(), rtol=1e-9, atol=0)
                pd.testing.assert_frame_equal(pdf[pdf["fare"] > 40], filt)
                pd.testing.assert_frame_equal(pdf.sort_values("fare", kind="stable"), srt)
                pd.testing.assert_frame_equal(pd.merge(pdf, pzones, left_on="pickup", right_on="zone", how="left"),
                                              mrg)
                pd.testing.assert_frame_equal(pd.merge(porders, pcust, on="cust"), mrg2)
            times: dict[str, list[float]] = {}

            def timed(name: str, f: Callable[[], Any]) -> None:
                t0 = time.perf_counter()
                f()
                times.setdefault(name, []).append(time.perf_counter() - t0)

            for i in range(args.trials + 1):  # the first round is a warm-up
                timed("scan", lambda: [ak.sum(df[c]) for c in COLUMNS])
                timed("by3 arktos", by3)
                timed("by3 arktos GroupBy", by3_groupby)
                timed("by3 duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q_by3))
                timed("filter arktos", lambda: df[df["fare"] > 40])
                timed("filter duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q_filter))
                timed("sort arktos", lambda: df.sort_values("fare"))
                timed("sort duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q_sort))
                timed("merge arktos", merged)
                timed("merge duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q_merge))
                timed("merge2 arktos", merged2)
                timed("merge2 duckdb", lambda: db.execute("CREATE OR REPLACE TEMP TABLE r AS " + q_merge2))
                if threads == 1:
                    timed("by3 pandas", lambda: pdf.groupby(keys).agg(total=("fare", "sum"), n=("fare", "size"),
                                                                      avg=("fare", "mean")))
                    timed("filter pandas", lambda: pdf[pdf["fare"] > 40])
                    timed("sort pandas", lambda: pdf.sort_values("fare", kind="stable"))
                    timed("merge pandas", lambda: pd.merge(pdf, pzones, left_on="pickup", right_on="zone",
                                                           how="left"))
                    timed("merge2 pandas", lambda: pd.merge(porders, pcust, on="cust"))
                if i == 0:
                    times.clear()
            db.close()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.npz")
            np.savez(path, **cols, **ztab, n=mine["n"].to_numpy(), total=mine["total"].to_numpy(),
                     fdist=filt["dist"].to_numpy(), sdist=srt["dist"].to_numpy(), mrate=mrg["rate"].to_numpy(),
                     ocust=otab["cust"], oamount=otab["amount"], ccust=ctab["cust"], cscore=ctab["score"],
                     m2score=mrg2["score"].to_numpy())
            out = subprocess.run([sys.executable, "-c", POLARS, path, str(args.trials)], capture_output=True,
                                 text=True, env=dict(os.environ, POLARS_MAX_THREADS=str(threads)), check=True)
            pl_res = json.loads(out.stdout)
            assert pl_res["ok"], "polars differs"
            for name, ts in pl_res["times"].items():
                times[f"{name} polars"] = ts
        print(f"\n{rows:,} rows ({len(mine):,} groups by3, {len(filt):,} rows fare > 40), 5 columns; "
              f"server --workers {threads}, peers {threads} thread(s), loopback TCP, warm; "
              f"{args.trials} trials (p50 / p90 s)")
        p50s = {name: stats(ts) for name, ts in times.items()}
        print(f"  {'scan':22s} {p50s['scan'][0]:.4f} / {p50s['scan'][1]:.4f}")
        for q in ("by3", "filter", "sort", "merge", "merge2"):
            base = p50s[f"{q} arktos"][0]
            for name in sorted((n for n in p50s if n.startswith(q + " ")), key=lambda n: p50s[n][0]):
                p50, p90 = p50s[name]
                print(f"  {name:22s} {p50:.4f} / {p90:.4f}  {p50 / base:.2f}x arktos")
    ref_after = reference_kernel()
    print(f"\nreference kernel after: p50 {ref_after[0] * 1e3:.2f} ms; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

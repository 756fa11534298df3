"""Group-by: Arktos against DuckDB, Polars and pandas, side by side.

    .venv/bin/python bench/groupby/run.py [--sets taxi,highcard,g1] [--rows 7.7e6]
        [--g1-rows 1e7] [--hc-rows 1e7] [--threads 1,2] [--trials 5] [--json out.json]

(`pip install duckdb polars pandas` into .venv first; build the server with
`make build`, which builds with GOEXPERIMENT=simd.)

Data sets and queries (issue 5):

* taxi: generated on the server (seeded per chunk, reproducible at any
  worker count): pickup and drop-off zones floor(265·u³)+1 (skewed, 1..265),
  hour 0..23, fare uniform 0..100 rounded to cents. Queries: sum, count and
  mean of fare by (pickup, dropoff, hour) — 1.7 M possible groups — and by
  pickup.
* highcard: 10^7 rows of int64 keys drawn from 10^4, 10^6 and 10^7 distinct
  values spread over a wide range (no dense shortcut); sum and count of a
  float64 column by key.
* g1: the db-benchmark (h2o.ai / DuckDB Labs) group-by data G1_1e7_1e2:
  id1..id3 are strings there; until Arktos has string arrays they are
  integer codes here (id1, id2 in 1..K, id3 in 1..N/K), id4, id5 in 1..K,
  id6 in 1..N/K, v1 in 1..5, v2 in 1..15, v3 uniform 0..100 rounded to
  6 decimals. Questions q1–q10: q8 (largest two v3 per id6, long form) is
  g.nlargest(v3, 2); q9 (squared correlation of v1, v2 per id2, id4) is
  g.corr(v1, v2) squared on the server.

Arktos time: the client's wall time of ak.GroupBy(keys) plus one named
g.agg(out=(column, op), ...) for all the query's aggregations (the grouping
is recomputed every trial; it travels with the aggregation in one request,
fused on the server where it can be: "dense, fused"), data already on the
server. Peers: the same query, data already in their memory,
result sorted by the keys. Every peer's answer is checked against ours
before any time counts (keys, counts and integer sums exactly, float results
to 1e-9 relative). "scan" is the floor: one ak.sum request per column the
query reads. For each thread count T an arktos-server runs with --workers T;
DuckDB gets SET threads=T, Polars POLARS_MAX_THREADS=T, pandas is
single-threaded (T=1 only); each peer is a subprocess of its own that loads
the data once and then runs queries on command. After a warm-up run of each
engine (which gives the answers), the trials run in rounds — scan, Arktos,
DuckDB, Polars, pandas, then again — so that the machine's drifts in speed
(large on this shared VM) fall on every engine alike. A fixed numpy kernel
is timed before and after the whole run to show whether the machine stayed
steady.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402

# A query: group keys, and aggregations (output name, column, op); op is one
# of sum, count (rows: column "*"), mean, median, std (ddof 1), max, min.
# "range" makes q7's max(v1) - min(v2).
Query = dict[str, Any]


def q(by: list[str], *aggs: tuple[str, str, str], expr: str | None = None,
      extra: list[str] | None = None) -> Query:
    return {"by": by, "aggs": [list(a) for a in aggs], "expr": expr, "extra": extra or []}


TAXI = {
    "taxi by3": q(["pickup", "dropoff", "hour"], ("s", "fare", "sum"), ("c", "*", "count"),
                  ("m", "fare", "mean")),
    "taxi by1": q(["pickup"], ("s", "fare", "sum"), ("c", "*", "count"), ("m", "fare", "mean")),
}
HIGHCARD = {f"hc k=1e{e}": q([f"key{e}"], ("s", "v", "sum"), ("c", "*", "count")) for e in (4, 6, 7)}
G1 = {
    "g1 q1": q(["id1"], ("v1", "v1", "sum")),
    "g1 q2": q(["id1", "id2"], ("v1", "v1", "sum")),
    "g1 q3": q(["id3"], ("v1", "v1", "sum"), ("v3", "v3", "mean")),
    "g1 q4": q(["id4"], ("v1", "v1", "mean"), ("v2", "v2", "mean"), ("v3", "v3", "mean")),
    "g1 q5": q(["id6"], ("v1", "v1", "sum"), ("v2", "v2", "sum"), ("v3", "v3", "sum")),
    "g1 q6": q(["id4", "id5"], ("med", "v3", "median"), ("sd", "v3", "std")),
    "g1 q7": q(["id3"], ("mx", "v1", "max"), ("mn", "v2", "min"), expr="range"),
    "g1 q8": q(["id6"], ("largest2_v3", "v3", "top2"), expr="top2"),
    "g1 q9": q(["id2", "id4"], ("r2", "v1", "corr"), expr="r2", extra=["v2"]),
    "g1 q10": q(["id1", "id2", "id3", "id4", "id5", "id6"], ("v3", "v3", "sum"), ("c", "*", "count")),
}


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


def make_highcard(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    cols = {"v": np.round(rng.uniform(0, 100, n), 2)}
    for e in (4, 6, 7):
        cols[f"key{e}"] = rng.integers(0, 10**e, n, dtype=np.int64) * 2654435761 + 12345
    return cols


def make_g1(n: int, k: int = 100) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    nk = max(n // k, 1)
    return {
        "id1": rng.integers(1, k + 1, n), "id2": rng.integers(1, k + 1, n),
        "id3": rng.integers(1, nk + 1, n), "id4": rng.integers(1, k + 1, n),
        "id5": rng.integers(1, k + 1, n), "id6": rng.integers(1, nk + 1, n),
        "v1": rng.integers(1, 6, n), "v2": rng.integers(1, 16, n),
        "v3": np.round(rng.uniform(0, 100, n), 6),
    }


def arktos_query(cols: dict[str, ak.pdarray], spec: Query) -> tuple[Any, dict[str, Any], str]:
    """Runs spec on the server; returns (unique keys, {output: pdarray}, strategy)."""
    g = ak.GroupBy([cols[b] for b in spec["by"]])
    if spec["expr"] == "top2":  # long form: keys repeated per value
        k, v = g.nlargest(cols["v3"], 2)
        return (k if isinstance(k, tuple) else (k,)), {"largest2_v3": v}, g.strategy
    if spec["expr"] == "r2":
        k, r = g.corr(cols["v1"], cols["v2"])
        return (k if isinstance(k, tuple) else (k,)), {"r2": r * r}, g.strategy
    # The keys come with the aggregation: asked for first, they would make
    # the grouping (its ids) on its own, and the aggregation could not be
    # fused with it (docs/operations.md, "Grouped when first needed").
    named = {out: ((None, "size") if col == "*" else (cols[col], op)) for out, col, op in spec["aggs"]}
    k, res = g.agg(ddof=1, **named)
    if spec["expr"] == "range":
        res = {"range": res["mx"] - res["mn"]}
    return (k if isinstance(k, tuple) else (k,)), res, g.strategy + (", fused" if g.fused else "")


PEER_CODE = r"""
import json, sys, time
import numpy as np
peer, threads, path, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
d = np.load(path)
cols = {k: d[k] for k in d.files}
SQL = {"sum": "sum({c})", "count": "count(*)", "mean": "avg({c})", "median": "median({c})",
       "std": "stddev_samp({c})", "max": "max({c})", "min": "min({c})"}
if peer == "duckdb":
    import duckdb, pyarrow as pa
    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    con.execute("SET enable_progress_bar=false")
    con.register("src", pa.table(cols))
    con.execute("CREATE TABLE t AS SELECT * FROM src")
    con.unregister("src")
    del d, cols  # the table holds its own copy
    def run(spec):
        k = ", ".join(spec["by"])
        if spec["expr"] == "top2":
            r = con.execute("SELECT id6, largest2_v3 FROM (SELECT id6, v3 AS largest2_v3, row_number() "
                            "OVER (PARTITION BY id6 ORDER BY v3 DESC) AS order_v3 FROM t WHERE v3 IS NOT NULL) "
                            "sub WHERE order_v3 <= 2 ORDER BY id6, largest2_v3 DESC").fetchnumpy()
            return {x: np.asarray(v) for x, v in r.items()}
        if spec["expr"] == "range":
            sel = "max(v1) - min(v2) AS range"
        elif spec["expr"] == "r2":
            sel = "pow(corr(v1, v2), 2) AS r2"
        else:
            sel = ", ".join(SQL[op].format(c=c) + f" AS {o}" for o, c, op in spec["aggs"])
        r = con.execute(f"SELECT {k}, {sel} FROM t GROUP BY {k} ORDER BY {k}").fetchnumpy()
        return {x: np.asarray(v) for x, v in r.items()}
elif peer == "polars":
    import polars as pl
    df = pl.DataFrame(cols)
    def agg(o, c, op):
        if op == "count":
            return pl.len().alias(o)
        e = getattr(pl.col(c), op)
        return (e(ddof=1) if op == "std" else e()).alias(o)
    def run(spec):
        if spec["expr"] == "top2":
            r = (df.drop_nulls("v3").group_by("id6").agg(pl.col("v3").top_k(2).alias("largest2_v3"))
                 .explode("largest2_v3").sort(["id6", "largest2_v3"], descending=[False, True]))
            return {x: r[x].to_numpy() for x in r.columns}
        if spec["expr"] == "range":
            aggs = [(pl.col("v1").max() - pl.col("v2").min()).alias("range")]
        elif spec["expr"] == "r2":
            aggs = [(pl.corr("v1", "v2") ** 2).alias("r2")]
        else:
            aggs = [agg(*a) for a in spec["aggs"]]
        r = df.group_by(spec["by"]).agg(aggs).sort(spec["by"])
        return {x: r[x].to_numpy() for x in r.columns}
else:
    import pandas as pd
    df = pd.DataFrame(cols)
    def run(spec):
        if spec["expr"] == "top2":
            r = (df[~df["v3"].isna()][["id6", "v3"]].sort_values("v3", ascending=False)
                 .groupby("id6", sort=True).head(2).sort_values(["id6", "v3"], ascending=[True, False]))
            return {"id6": r["id6"].to_numpy(), "largest2_v3": r["v3"].to_numpy()}
        if spec["expr"] == "r2":
            c = df.groupby(spec["by"], sort=True)[["v1", "v2"]].corr()
            r = (c.xs("v1", level=2)["v2"] ** 2).rename("r2").reset_index()
            return {x: r[x].to_numpy() for x in r.columns}
        g = df.groupby(spec["by"], sort=True)
        named = {}
        for o, c, op in spec["aggs"]:
            named[o] = (spec["by"][0], "size") if op == "count" else (c, op)
        r = g.agg(**named).reset_index()
        if spec["expr"] == "range":
            r["range"] = r["mx"] - r["mn"]
        return {x: r[x].to_numpy() for x in r.columns}
# Commands on stdin, one a line: "check NAME" runs the query once and saves
# its answer; "time NAME" runs it once more and prints the seconds.
print("ready", flush=True)
for line in sys.stdin:
    cmd, name = line.rstrip("\n").split(" ", 1)
    if cmd == "check":
        np.savez(path + f".{peer}.{name.replace(' ', '_')}.npz", **run(specs[name]))
        print("ok", flush=True)
    else:
        t0 = time.perf_counter(); run(specs[name]); print(time.perf_counter() - t0, flush=True)
"""


class Peer:
    """A peer engine in a subprocess of its own, the data loaded once, run
    one query at a time on command (so its trials interleave with ours)."""

    def __init__(self, peer: str, threads: int, data_path: str, queries: dict[str, Query]) -> None:
        env = dict(os.environ, POLARS_MAX_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        self.name = peer
        self.proc = subprocess.Popen([sys.executable, "-c", PEER_CODE, peer, str(threads), data_path,
                                      json.dumps(queries)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self._read()  # "ready": the data is loaded

    def _read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} exited ({self.proc.wait()})")
        return line.strip()

    def ask(self, cmd: str, name: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{cmd} {name}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def check(ours: dict[str, Any], path: str, peer: str, name: str, spec: Query) -> str:
    z = np.load(path + f".{peer}.{name.replace(' ', '_')}.npz")
    outs = [spec["expr"]] if spec["expr"] == "range" else [o for o, _, _ in spec["aggs"]]
    ng = len(ours["keys"][0])
    for b, k in zip(spec["by"], ours["keys"]):
        if len(z[b]) != ng:
            return f"MISMATCH ngroups {len(z[b])} vs {ng}"
        if not np.array_equal(z[b].astype(np.int64), k.astype(np.int64)):
            return f"MISMATCH key {b}"
    for o in outs:
        got, want = ours["res"][o], z[o]
        if got.dtype.kind in "iu" and want.dtype.kind in "iuf":
            if not np.array_equal(got.astype(np.float64), want.astype(np.float64)):
                return f"MISMATCH {o}"
        # r²: where the co-moment is exactly 0 both sides round to ~1e-33, not 0
        elif not np.allclose(want.astype(np.float64), got.astype(np.float64), rtol=1e-9,
                             atol=1e-15 if o == "r2" else 0, equal_nan=True):
            return f"MISMATCH {o}"
    return "ok"


def run_set(set_name: str, queries: dict[str, Query], threads_list: list[int], args: argparse.Namespace,
            tmp: str, server_bin: Path, rows: list[dict[str, Any]]) -> None:
    data_path = os.path.join(tmp, f"{set_name}.npz")
    n = 0
    for threads in threads_list:
        url = f"tcp://127.0.0.1:{free_port()}"
        proc = subprocess.Popen([str(server_bin), "--addr", url, "--workers", str(threads),
                                 "--max-memory", args.max_memory, "--log-level", "warn"])
        try:
            time.sleep(0.3)
            conn = ak.Connection(url, timeout=600)
            peers: list[Peer] = []

            def start_peers() -> None:
                for peer in args.peers.split(","):
                    if peer and not (peer == "pandas" and threads > 1):
                        try:
                            peers.append(Peer(peer, threads, data_path, queries))
                        except RuntimeError as e:
                            print(f"{peer} failed: {e}", file=sys.stderr)

            try:
                if set_name == "taxi":
                    cols = make_taxi(conn, int(args.rows))
                    if not os.path.exists(data_path):
                        np.savez(data_path, **{k: v.to_ndarray() for k, v in cols.items()})
                    start_peers()
                else:
                    if not os.path.exists(data_path):
                        data = make_highcard(int(args.hc_rows)) if set_name == "highcard" \
                            else make_g1(int(args.g1_rows))
                        np.savez(data_path, **data)
                        del data  # 7.2 GB at 10^8 G1 rows: the columns are read back one at a time
                    # The peers load first: their peak while loading (their
                    # arrays and their table, 14 GB for DuckDB at 10^8 G1
                    # rows) is over before the server holds its copy.
                    start_peers()
                    d = np.load(data_path)
                    cols = {k: conn.array(d[k]) for k in d.files}
                n = next(iter(cols.values())).size
                for name, spec in queries.items():
                    try:
                        run_query(name, spec, cols, peers, threads, n, set_name, data_path, args, rows)
                    except ak.ArktosError as e:  # e.g. out of memory at 10^8 rows: say so, go on
                        print(f"{threads} thread(s), {name}: arktos failed: {e}", file=sys.stderr)
            finally:
                for p in peers:
                    p.close()
            conn.close()
        finally:
            stop_server(proc)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()  # a clean stop removes the server's unix socket directory
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def bench_server(threads: int) -> Iterator[ak.Connection]:
    """An arktos-server of this tree with `threads` workers on a free
    loopback port, and a connection to it; both closed after."""
    url = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.Popen([str(REPO / "bin" / "arktos-server"), "--addr", url, "--workers", str(threads),
                             "--log-level", "warn"])
    try:
        time.sleep(0.3)
        conn = ak.Connection(url, timeout=600)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        stop_server(proc)


def used_columns(spec: Query) -> list[str]:
    """The columns a query reads (keys, aggregated and extra columns), once each."""
    return list(dict.fromkeys(spec["by"] + [c for _, c, _ in spec["aggs"] if c != "*"] + spec["extra"]))


def time_arktos(cols: dict[str, Any], spec: Query, used: list[str]) -> tuple[float, float, str]:
    """One trial: the scan floor (an ak.sum per column read), then the query;
    returns both times and the strategy the server took."""
    t0 = time.perf_counter()
    for c in used:
        ak.sum(cols[c])
    scan = time.perf_counter() - t0
    t0 = time.perf_counter()
    keys, res, strategy = arktos_query(cols, spec)
    took = time.perf_counter() - t0
    del keys, res
    return scan, took, strategy


def run_query(name: str, spec: Query, cols: dict[str, Any], peers: list["Peer"], threads: int, n: int,
              set_name: str, data_path: str, args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    """One query: a warm-up run of each engine that also gives its answer,
    then the trials in rounds (scan, ours, each peer in turn), so that a
    change in the machine's speed falls on every engine alike."""
    used = used_columns(spec)
    keys, res, strategy = arktos_query(cols, spec)
    ours = {"keys": [k.to_ndarray() for k in keys], "res": {o: r.to_ndarray() for o, r in res.items()}}
    del keys, res
    for p in peers:
        p.ask("check", name)
    scan: list[float] = []
    ts: list[float] = []
    pts: dict[str, list[float]] = {p.name: [] for p in peers}
    for i in range(args.trials):
        sc, took, strategy = time_arktos(cols, spec, used)
        scan.append(sc)
        ts.append(took)
        for p in peers:
            if p.name == "pandas" and i >= max(3, args.trials // 2):
                continue  # slow: fewer trials
            pts[p.name].append(float(p.ask("time", name)))
    p50, p90 = stats(ts)
    s50, s90 = stats(scan)
    base = {"set": set_name, "threads": threads, "query": name, "rows": n,
            "groups": len(ours["keys"][0]), "scan": s50}
    rows.append({**base, "engine": f"arktos ({strategy})", "p50": p50, "p90": p90, "check": "ours",
                 "ours": ours})
    rows.append({**base, "engine": "scan floor", "p50": s50, "p90": s90, "check": ""})
    for p in peers:
        q50, q90 = stats(pts[p.name])
        rows.append({**base, "engine": p.name, "p50": q50, "p90": q90,
                     "check": check(ours, data_path, p.name, name, spec)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="taxi,highcard,g1")
    ap.add_argument("--rows", type=float, default=7.7e6, help="taxi rows")
    ap.add_argument("--hc-rows", type=float, default=1e7)
    ap.add_argument("--g1-rows", type=float, default=1e7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--peers", default="duckdb,polars,pandas")
    ap.add_argument("--json", default="")
    ap.add_argument("--max-memory", default="10GiB", help="the server's --max-memory")
    ap.add_argument("--queries", default="", help="comma-separated query names to run (default: all)")
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"),
                    help="the arktos-server binary (another build, to compare two trees)")
    args = ap.parse_args()
    server_bin = Path(args.server)
    threads_list = [int(t) for t in args.threads.split(",")]
    ref_before = reference_kernel()
    load_before = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    sets = {"taxi": TAXI, "highcard": HIGHCARD, "g1": G1}
    only = set(filter(None, args.queries.split(",")))
    # The data sets and the peers' answers (GBs at 77 M rows) go when the run ends.
    with tempfile.TemporaryDirectory(prefix="akgb") as tmp:
        for s in args.sets.split(","):
            queries = {k: v for k, v in sets[s].items() if not only or k in only}
            if queries:
                run_set(s, queries, threads_list, args, tmp, server_bin, rows)
    ref_after = reference_kernel()
    print(f"machine: {os.cpu_count()} cores; load average before {load_before:.2f}, "
          f"after {os.getloadavg()[0]:.2f}")
    print(f"reference kernel (numpy sum of 1e7 float64) before: p50 {ref_before[0]*1e3:.2f} ms "
          f"p90 {ref_before[1]*1e3:.2f} ms; after: p50 {ref_after[0]*1e3:.2f} ms "
          f"p90 {ref_after[1]*1e3:.2f} ms")
    print("| threads | query | rows | groups | engine | p50 s | p90 s | M rows/s | × scan floor "
          "| arktos speed-up | answer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ours = next(x for x in rows if x["threads"] == r["threads"] and x["query"] == r["query"]
                    and "ours" in x)
        print(f"| {r['threads']} | {r['query']} | {r['rows']:,} | {r['groups']:,} | {r['engine']} | "
              f"{r['p50']:.3f} | {r['p90']:.3f} | {r['rows'] / r['p50'] / 1e6:.0f} | "
              f"{r['p50'] / r['scan']:.2f} | {r['p50'] / ours['p50']:.2f} | {r['check']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_before": load_before, "ref_before": ref_before, "ref_after": ref_after,
                       "rows": [{k: v for k, v in r.items() if k != "ours"} for r in rows]}, f,
                      indent=1)


if __name__ == "__main__":
    main()

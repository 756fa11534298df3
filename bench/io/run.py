"""Parquet read/write benchmark: arktos vs pyarrow vs DuckDB, side by side.

    go build -o bin/arktos-server ./cmd/arktos-server
    .venv/bin/pip install duckdb            # benchmark only, not a test dependency
    .venv/bin/python bench/io/run.py [--rows 5000000] [--reps 5] [--threads 1,2] [--out bench/io/results.md]
        [--server bin/arktos-server] [--codecs zstd,snappy,none] [--layouts one,many] [--no-write]

Data (issue 7): four columns -- int64 keys (0..999), int64 ids (a
permutation-free counter), float64, float64 with 1% nulls -- row groups of
10^6 rows (fewer rows: rows/5), written by pyarrow with zstd, snappy and no
compression, as one file and as 16 files. Files live in a temporary data
directory (warm page cache: each file is read once before timing).

Measured per codec x layout x threads (p50/p90 of --reps runs, GB/s of
decoded data = rows x 32 bytes):
  ak.read_parquet  server-side time of the read command (reported by the
                   server), and within it the decode into the final buffers
  ak scan          ak.sum over the four decoded columns (a plain memory pass)
  pyarrow          pyarrow.parquet.read_table(path, use_threads=True) with
                   pa.set_cpu_count(threads)
  duckdb           SELECT of min/max/count over every column of
                   read_parquet(...) (forces every column to decode), PRAGMA threads
and writes of the same table: ak.to_parquet (server time, includes fsync),
pyarrow.parquet.write_table, DuckDB COPY ... TO (FORMAT parquet).
Answers: ak's arrays must equal pyarrow's bit for bit (nulls as NaN);
DuckDB's counts and integer sums must match.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402

CODECS = ("zstd", "snappy", "none")
COLS = ("keys", "ids", "x", "y")


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    y = rng.standard_normal(rows)
    return pa.table({
        "keys": rng.integers(0, 1000, rows),
        "ids": np.arange(rows, dtype=np.int64) * 3 + 11,
        "x": rng.standard_normal(rows),
        "y": pa.array(y, mask=rng.random(rows) < 0.01),
    })


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def timed(fn: Callable[[], float | None], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = fn()
        out.append(r if r is not None else time.perf_counter() - t0)
    return out


SERVER = REPO / "bin" / "arktos-server"


def start_server(data: Path, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    sock = __import__("socket").socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([str(SERVER), "--addr", url, "--data-dir", str(data),
                             "--workers", str(workers), "--max-memory", "8GiB", "--log-level", "warn"],
                            env={**os.environ, "HOME": str(data.parent)})
    for _ in range(100):
        try:
            ak.Connection(url, timeout=0.5).close()
            return proc, url
        except TimeoutError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def main() -> None:
    global SERVER
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=str(REPO / "bench" / "io" / "results.md"))
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"), help="arktos-server binary to run")
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--layouts", default="one,many")
    ap.add_argument("--no-write", action="store_true", help="reads only")
    args = ap.parse_args()
    SERVER = Path(args.server)
    codecs = args.codecs.split(",")
    layouts = args.layouts.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    import duckdb

    rows = args.rows
    rg = min(1_000_000, max(1, rows // 5))
    nbytes = rows * 32
    tmp = Path(tempfile.mkdtemp(prefix="arktos-bench-io-"))
    data = tmp / "data"
    data.mkdir()
    lines: list[str] = []

    def emit(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    t = make_table(rows)
    for codec in codecs:
        pq.write_table(t, data / f"one_{codec}.parquet", compression=codec, row_group_size=rg)
        (data / f"many_{codec}").mkdir()
        step = -(-rows // 16)
        for k in range(16):
            pq.write_table(t.slice(k * step, step), data / f"many_{codec}" / f"part{k:02d}.parquet",
                           compression=codec, row_group_size=rg)
    want = {c: t[c].to_numpy(zero_copy_only=False) for c in COLS}
    servers = {w: start_server(data, w) for w in threads}
    conns = {w: ak.Connection(url, timeout=600) for w, (_, url) in servers.items()}
    try:
        emit("# Parquet I/O benchmark (bench/io/run.py)")
        emit()
        emit(f"- rows {rows:,}, 4 columns (int64 keys, int64 ids, float64, float64 with 1% nulls), "
             f"row groups of {rg:,} rows; decoded data {nbytes / 1e9:.3f} GB; {args.reps} runs each, warm page cache")
        emit(f"- pyarrow {pa.__version__}, duckdb {duckdb.__version__}, arktos server from this tree; "
             f"CPU: {os.cpu_count()} cores, **shared with two other engineers' builds and tests: noisy**")
        emit("- ak: server-side seconds of the command; `decode` is the part spent decoding into the final arrays")
        emit()
        emit("## Read")
        emit()
        emit("| file | threads | engine | p50 s | p90 s | GB/s (p50) |")
        emit("|------|--------:|--------|------:|------:|-----------:|")
        for codec in codecs:
            for layout in layouts:
                path = f"one_{codec}.parquet" if layout == "one" else f"many_{codec}/*.parquet"
                full = str(data / path)
                label = f"{codec}, {'1 file' if layout == 'one' else '16 files'}"
                pq.read_table(full if layout == "one" else str(data / f"many_{codec}"))  # warm the cache
                for th in threads:
                    conn = conns[th]
                    # answers first: bit for bit against pyarrow
                    cols = ak.read_parquet(path, conn=conn)
                    for c in COLS:
                        got = cols[c].to_ndarray()
                        assert got.tobytes() == want[c].tobytes(), (label, c)
                    sums = {c: cols[c] for c in COLS}
                    scan = timed(lambda: (sum(float(ak.sum(a)) for a in sums.values()), None)[1], args.reps)
                    conn.delete([a.name for a in cols.values()])
                    del cols, sums
                    dec: list[float] = []

                    def ak_read() -> float:
                        res, _ = conn._request("read_parquet", {"paths": [path], "nulls": "auto"})
                        conn.delete([e["name"] for e in res["arrays"]])
                        dec.append(float(res["decode_seconds"]))
                        return float(res["seconds"])

                    ak_t = timed(ak_read, args.reps)
                    pa.set_cpu_count(th)
                    pa.set_io_thread_count(max(th, 1))
                    src = full if layout == "one" else str(data / f"many_{codec}")
                    pa_t = timed(lambda: (pq.read_table(src, use_threads=True), None)[1], args.reps)
                    db = duckdb.connect()
                    db.execute(f"PRAGMA threads={th}")
                    q = (f"SELECT count(*), sum(keys), sum(ids), min(x), max(x), count(y), min(y), max(y) "
                         f"FROM read_parquet('{full}')")
                    r = db.execute(q).fetchone()
                    assert r[0] == rows and r[1] == int(want["keys"].sum()) and r[2] == int(want["ids"].sum()), r
                    assert r[5] == rows - t["y"].null_count, r
                    db_t = timed(lambda: (db.execute(q).fetchone(), None)[1], args.reps)
                    db.close()
                    for name, xs in ((f"ak.read_parquet", ak_t), ("  ak decode only", dec), ("  ak scan (sum x4)", scan),
                                     ("pyarrow.read_table", pa_t), ("duckdb", db_t)):
                        emit(f"| {label} | {th} | {name} | {pct(xs, .5):.3f} | {pct(xs, .9):.3f} | "
                             f"{nbytes / pct(xs, .5) / 1e9:.2f} |")
        if not args.no_write:
            emit()
            emit("## Write (one file)")
            emit()
            emit("| codec | threads | engine | p50 s | p90 s | GB/s (p50) |")
            emit("|-------|--------:|--------|------:|------:|-----------:|")
            tw = t.set_column(3, "y", pa.array(t["y"].to_numpy(zero_copy_only=False)))  # no nulls: ak writes required columns
            for th in threads:
                conn = conns[th]
                arrays = {c: conn.array(tw[c].to_numpy()) for c in COLS}
                for codec in codecs:
                    def ak_write() -> float:
                        return float(ak.to_parquet(arrays, f"w_{codec}.parquet", compression=codec, row_group_size=rg)["seconds"])

                    ak_t = timed(ak_write, max(2, args.reps // 2))
                    back = pq.read_table(data / f"w_{codec}.parquet")
                    for c in COLS:
                        assert back[c].to_numpy().tobytes() == tw[c].to_numpy().tobytes(), (codec, c)
                    pa.set_cpu_count(th)
                    pa_t = timed(lambda: (pq.write_table(tw, tmp / "pw.parquet", compression=codec, row_group_size=rg), None)[1],
                                 max(2, args.reps // 2))
                    db = duckdb.connect()
                    db.execute(f"PRAGMA threads={th}")
                    db.register("tw", tw)
                    dcodec = "uncompressed" if codec == "none" else codec
                    db_t = timed(lambda: (db.execute(f"COPY tw TO '{tmp / 'dw.parquet'}' (FORMAT parquet, COMPRESSION {dcodec}, "
                                                     f"ROW_GROUP_SIZE {rg})"), None)[1], max(2, args.reps // 2))
                    db.close()
                    for name, xs in (("ak.to_parquet", ak_t), ("pyarrow.write_table", pa_t), ("duckdb COPY", db_t)):
                        emit(f"| {codec} | {th} | {name} | {pct(xs, .5):.3f} | {pct(xs, .9):.3f} | {nbytes / pct(xs, .5) / 1e9:.2f} |")
                conn.delete([a.name for a in arrays.values()])
        emit()
        emit("Answers: ak's columns equal pyarrow's bit for bit (nulls read as NaN), DuckDB's counts and "
             "integer sums equal; files written by ak read back bit-identical in pyarrow.")
    finally:
        for c in conns.values():
            c.close()
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

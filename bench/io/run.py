"""Parquet read/write benchmark: arktos vs pyarrow vs DuckDB, side by side.

    make build                              # GOEXPERIMENT=simd: the AVX-512 kernels
    .venv/bin/pip install duckdb            # benchmark only, not a test dependency
    .venv/bin/python bench/io/run.py [--rows 5000000] [--reps 9] [--write-reps 5] [--threads 1,2]
        [--out bench/io/results.md] [--server bin/arktos-server] [--codecs zstd,snappy,none]
        [--layouts one,many] [--no-write] [--encoding default|v2] [--tmpdir DIR] [--dry-run]

The issue's size (estimated 25 min on 2 quiet cores, 35-40 on a busy
machine: the 5*10^6 smoke run took 1.4x its estimate with two other
engineers' tests running; --dry-run prints the estimate, the disk and
memory it needs, and exits):

    .venv/bin/python bench/io/run.py --rows 50000000 --out bench/io/results-5e7.md

Trials: --reps (default 9) for each read, --write-reps (default 5) for each
write (p90 of 9 runs is the second slowest, of 5 the slowest; never fewer
than 5). Progress lines on stderr say what runs, the time so far and an ETA
(the estimate below, rescaled by how fast the finished steps went).
Files go to a fresh directory under --tmpdir (default: the system's temp
dir), which is removed at the end, also on an error, Ctrl-C or SIGTERM; the run
refuses to start when that disk or the memory is short of its estimate.

Data (issue 7): four columns -- int64 keys (0..999), int64 ids (a
permutation-free counter), float64, float64 with 1% nulls -- row groups of
10^6 rows (fewer rows: rows/5), written by pyarrow with zstd, snappy and no
compression, as one file and as 16 files. Files live in a temporary data
directory (warm page cache: each file is read once before timing).

Measured per codec x layout x threads (p50/p90 of --reps runs, GB/s of
decoded data = rows x 32 bytes):
  ak.read_parquet  server-side time of the read command (reported by the
                   server), and within it the decode into the final buffers;
                   "ak CPU s" is the server process's CPU time over the read
                   (all threads: about threads x wall when they are busy),
                   which a busy machine disturbs less than wall time
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
import json
import os
import shutil
import signal
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

# Seconds per 10^6 rows of one run, for the estimate and the ETA: 2 quiet
# cores, from bench/io/results.md at 5*10^6 rows and, for DuckDB, the issue's
# figures at 5*10^7 (the larger of the two), rounded up; the setup costs
# below were checked against the smoke run's steps.
READ_COST = {  # (codec, threads) -> ak read, ak scan, pyarrow, duckdb
    ("zstd", 1): (0.046, 0.006, 0.060, 0.066), ("zstd", 2): (0.032, 0.005, 0.035, 0.036),
    ("snappy", 1): (0.025, 0.006, 0.046, 0.048), ("snappy", 2): (0.017, 0.005, 0.026, 0.028),
    ("none", 1): (0.014, 0.006, 0.021, 0.027), ("none", 2): (0.010, 0.005, 0.014, 0.019),
}
WRITE_COST = {  # (codec, threads) -> ak, pyarrow, duckdb
    ("zstd", 1): (0.16, 0.17, 0.38), ("zstd", 2): (0.15, 0.21, 0.25),
    ("snappy", 1): (0.13, 0.13, 0.15), ("snappy", 2): (0.10, 0.16, 0.15),
    ("none", 1): (0.09, 0.14, 0.14), ("none", 2): (0.07, 0.14, 0.11),
}
SETUP_COST = 0.09      # make the table, per 10^6 rows
PQ_WRITE_COST = 0.30   # pyarrow writing one codec's files (one layout), per 10^6 rows
CHECK_COST = 0.10      # one checked read (ak read + to_ndarray + compare), per 10^6 rows
UPLOAD_COST = 0.04     # sending the table to a server for the writes, per 10^6 rows


def plan(rows: int, codecs: list[str], layouts: list[str], threads: list[int], reps: int,
         write_reps: int, write: bool) -> list[tuple[str, float]]:
    """The run's steps, in order, with their estimated seconds."""
    m = rows / 1e6
    steps = [("make the table", SETUP_COST * m)]
    steps += [(f"pyarrow writes the {c} files", PQ_WRITE_COST * m * len(layouts)) for c in codecs]
    for c in codecs:
        for lay in layouts:
            for th in threads:
                ak_r, scan, pa_r, db = READ_COST[(c, th)]
                # checked read, then reps of: ak read, scan, pyarrow, duckdb (+1 duckdb check, +1 pyarrow warm-up)
                t = CHECK_COST + reps * (ak_r + scan + pa_r + db) + db + pa_r / th
                steps.append((f"read {c} {lay} {th} thread(s)", t * m))
    if write:
        for th in threads:
            steps.append((f"upload for writes, {th} thread(s)", UPLOAD_COST * m))
            for c in codecs:
                ak_w, pa_w, db_w = WRITE_COST[(c, th)]
                steps.append((f"write {c} {th} thread(s)", (write_reps * (ak_w + pa_w + db_w) + CHECK_COST) * m))
    return steps


def need_bytes(rows: int, codecs: list[str], layouts: list[str], write: bool) -> tuple[int, int]:
    """Upper bounds of the disk (files at 32 bytes a row: no codec shrinks
    them below that here by much) and the memory the run needs."""
    # read files; per written codec the file and its temporary twin, and
    # pyarrow's and DuckDB's outputs
    files = len(codecs) * len(layouts) + (2 * len(codecs) + 2 if write else 0)
    # memory: the table and its copies in this process (table, y without
    # nulls, pyarrow's read result, one column as numpy), each server's
    # arrays and kept buffers (2 x the data, 2 servers)
    return rows * 32 * (files + 1), rows * 32 * 8


class Progress:
    """Prints each step with the time so far and an ETA rescaled by how fast
    the finished steps went against their estimate."""

    def __init__(self, steps: list[tuple[str, float]]) -> None:
        self.steps, self.i, self.t0, self.done_est = steps, 0, time.perf_counter(), 0.0

    def step(self, name: str) -> None:
        while self.i < len(self.steps) and self.steps[self.i][0] != name:
            self.i += 1  # a step that was skipped
        elapsed = time.perf_counter() - self.t0
        total = sum(e for _, e in self.steps)
        left = total - self.done_est
        scale = elapsed / self.done_est if self.done_est > 0 else 1.0
        print(f"[{fmt_s(elapsed)} elapsed, step {self.i + 1}/{len(self.steps)}: {name}; "
              f"ETA {fmt_s(left * scale)}]", file=sys.stderr, flush=True)
        if self.i < len(self.steps):
            self.done_est += self.steps[self.i][1]
            self.i += 1


def fmt_s(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


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
    ap.add_argument("--reps", type=int, default=9, help="runs of each read (>= 5)")
    ap.add_argument("--write-reps", type=int, default=5, help="runs of each write (>= 5)")
    ap.add_argument("--tmpdir", default=None, help="where the temporary data directory goes (default: the system's)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, its time estimate, disk and memory, and exit")
    ap.add_argument("--raw", default=None, help="also write every run's seconds as JSON here")
    ap.add_argument("--machine-note", default="shared with other engineers' builds and tests: noisy",
                    help="what the results say about the machine")
    ap.add_argument("--force", action="store_true", help="run even when disk or memory look short")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=str(REPO / "bench" / "io" / "results.md"))
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"), help="arktos-server binary to run")
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--layouts", default="one,many")
    ap.add_argument("--no-write", action="store_true", help="reads only")
    ap.add_argument("--encoding", choices=["default", "v2"], default="default",
                    help="how pyarrow encodes the files: its default (dictionary, falling back to PLAIN), or v2: "
                         "DELTA_BINARY_PACKED integers and BYTE_STREAM_SPLIT floats in v2 data pages, as DuckDB's "
                         "and Spark's v2 writers choose")
    args = ap.parse_args()
    SERVER = Path(args.server)
    codecs = args.codecs.split(",")
    layouts = args.layouts.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    if args.reps < 5 or args.write_reps < 5:
        ap.error("--reps and --write-reps must be at least 5 (p90 of fewer runs means little)")
    rows = args.rows
    steps = plan(rows, codecs, layouts, threads, args.reps, args.write_reps, not args.no_write)
    est = sum(e for _, e in steps)
    disk, mem = need_bytes(rows, codecs, layouts, not args.no_write)
    tmproot = Path(args.tmpdir or tempfile.gettempdir())
    free = shutil.disk_usage(tmproot).free
    avail = mem_available()
    print(f"plan: {rows:,} rows, {len(steps)} steps, reads x{args.reps}, writes x{args.write_reps}; "
          f"estimate {fmt_s(est)} on 2 quiet cores (a busy machine takes longer)\n"
          f"  files under {tmproot}: up to {disk / 1e9:.1f} GB, {free / 1e9:.1f} GB free; "
          f"memory: up to {mem / 1e9:.1f} GB, {avail / 1e9:.1f} GB available", file=sys.stderr)
    if args.dry_run:
        for name, e in steps:
            print(f"  {fmt_s(e):>8}  {name}", file=sys.stderr)
        return
    if (disk > free or mem > avail) and not args.force:
        sys.exit("not enough disk or memory for this run (see above): free some, pick --tmpdir, "
                 "fewer --rows/--codecs/--layouts, or --force")
    import duckdb

    # SIGTERM (a killed job) cleans up like Ctrl-C: servers stopped, files removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    progress = Progress(steps)
    progress.step("make the table")
    rg = min(1_000_000, max(1, rows // 5))
    nbytes = rows * 32
    tmp = Path(tempfile.mkdtemp(prefix="arktos-bench-io-", dir=tmproot))
    data = tmp / "data"
    data.mkdir()
    try:
        run(args, progress, duckdb, data, tmp, rows, rg, nbytes, codecs, layouts, threads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {args.out}; total {fmt_s(time.perf_counter() - progress.t0)} (estimate {fmt_s(est)})")


def mem_available() -> int:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 62


def run(args: argparse.Namespace, progress: Progress, duckdb: Any, data: Path, tmp: Path, rows: int, rg: int,
        nbytes: int, codecs: list[str], layouts: list[str], threads: list[int]) -> None:
    lines: list[str] = []
    raw: dict[str, list[float]] = {}  # every run's seconds, for --raw

    def emit(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    t = make_table(rows)
    enc: dict[str, Any] = {}
    if args.encoding == "v2":
        enc = {"use_dictionary": False, "data_page_version": "2.0",
               "column_encoding": {"keys": "DELTA_BINARY_PACKED", "ids": "DELTA_BINARY_PACKED",
                                   "x": "BYTE_STREAM_SPLIT", "y": "BYTE_STREAM_SPLIT"}}
    for codec in codecs:
        progress.step(f"pyarrow writes the {codec} files")
        if "one" in layouts:
            pq.write_table(t, data / f"one_{codec}.parquet", compression=codec, row_group_size=rg, **enc)
        if "many" in layouts:
            (data / f"many_{codec}").mkdir()
            step = -(-rows // 16)
            for k in range(16):
                pq.write_table(t.slice(k * step, step), data / f"many_{codec}" / f"part{k:02d}.parquet",
                               compression=codec, row_group_size=rg, **enc)
    want = {c: t[c].to_numpy(zero_copy_only=False) for c in COLS}
    servers = {w: start_server(data, w) for w in threads}
    conns = {w: ak.Connection(url, timeout=600) for w, (_, url) in servers.items()}
    try:
        emit("# Parquet I/O benchmark (bench/io/run.py)")
        emit()
        emit(f"- rows {rows:,}, 4 columns (int64 keys, int64 ids, float64, float64 with 1% nulls), "
             f"row groups of {rg:,} rows; encoding: "
             + ("DELTA_BINARY_PACKED integers, BYTE_STREAM_SPLIT floats, v2 pages" if args.encoding == "v2"
                else "pyarrow's default (dictionary, then PLAIN)")
             + f"; decoded data {nbytes / 1e9:.3f} GB; {args.reps} runs of each read, "
             f"{args.write_reps} of each write, warm page cache")
        emit(f"- pyarrow {pa.__version__}, duckdb {duckdb.__version__}, arktos server from this tree; "
             f"CPU: {os.cpu_count()} cores, **{args.machine_note}**")
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
                    progress.step(f"read {codec} {layout} {th} thread(s)")
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
                    cpu: list[float] = []

                    def ak_read() -> float:
                        res, _ = conn._request("read_parquet", {"paths": [path], "nulls": "auto"})
                        conn.delete([e["name"] for e in res["arrays"]])
                        dec.append(float(res["decode_seconds"]))
                        cpu.append(float(res["cpu_seconds"]))
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
                    for name, xs in (("ak.read_parquet", ak_t), ("  ak decode only", dec), ("  ak CPU s (server)", cpu),
                                     ("  ak scan (sum x4)", scan),
                                     ("pyarrow.read_table", pa_t), ("duckdb", db_t)):
                        raw[f"read {label} {th} {name.strip()}"] = xs
                        emit(f"| {label} | {th} | {name} | {pct(xs, .5):.3f} | {pct(xs, .9):.3f} | "
                             + ("– |" if "CPU" in name else f"{nbytes / pct(xs, .5) / 1e9:.2f} |"))
        if not args.no_write:
            emit()
            emit("## Write (one file)")
            emit()
            emit("| codec | threads | engine | p50 s | p90 s | GB/s (p50) |")
            emit("|-------|--------:|--------|------:|------:|-----------:|")
            tw = t.set_column(3, "y", pa.array(t["y"].to_numpy(zero_copy_only=False)))  # no nulls: ak writes required columns
            for th in threads:
                progress.step(f"upload for writes, {th} thread(s)")
                conn = conns[th]
                arrays = {c: conn.array(tw[c].to_numpy()) for c in COLS}
                for codec in codecs:
                    progress.step(f"write {codec} {th} thread(s)")
                    def ak_write() -> float:
                        return float(ak.to_parquet(arrays, f"w_{codec}.parquet", compression=codec, row_group_size=rg)["seconds"])

                    ak_t = timed(ak_write, args.write_reps)
                    back = pq.read_table(data / f"w_{codec}.parquet")
                    for c in COLS:
                        assert back[c].to_numpy().tobytes() == tw[c].to_numpy().tobytes(), (codec, c)
                    pa.set_cpu_count(th)
                    pa_t = timed(lambda: (pq.write_table(tw, tmp / "pw.parquet", compression=codec, row_group_size=rg), None)[1],
                                 args.write_reps)
                    db = duckdb.connect()
                    db.execute(f"PRAGMA threads={th}")
                    db.register("tw", tw)
                    dcodec = "uncompressed" if codec == "none" else codec
                    db_t = timed(lambda: (db.execute(f"COPY tw TO '{tmp / 'dw.parquet'}' (FORMAT parquet, COMPRESSION {dcodec}, "
                                                     f"ROW_GROUP_SIZE {rg})"), None)[1], args.write_reps)
                    db.close()
                    del back
                    for f in (data / f"w_{codec}.parquet", tmp / "pw.parquet", tmp / "dw.parquet"):
                        f.unlink(missing_ok=True)  # keep the disk to the estimate
                    for name, xs in (("ak.to_parquet", ak_t), ("pyarrow.write_table", pa_t), ("duckdb COPY", db_t)):
                        raw[f"write {codec} {th} {name}"] = xs
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
    Path(args.out).write_text("\n".join(lines) + "\n")
    if args.raw:
        Path(args.raw).write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()

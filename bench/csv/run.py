"""CSV files: ak.read_csv / ak.to_csv on the server against pyarrow.csv,
DuckDB and pandas, side by side.

    .venv/bin/python bench/csv/run.py [--rows 1e7] [--trials 5] [--workers 2]

One file (written once by ak.to_csv, Arkouda's format: its 3-line typing
header, then the names) of an int64, a float64 (random normals, 17
significant digits) and a short string column (``id<k>``, k < 10^6).
Times p50 and p90 over --trials after a warm-up: ak.read_csv (the server
parses; the round trip included, the result left there), ak.to_csv of the
same three columns; the peers read the same file in this process at the
same thread count (header lines skipped, column types given): pyarrow.csv
(set_cpu_count), DuckDB (SET threads; read into an Arrow table), pandas
(one thread). The ceiling is reading the file's bytes (warm page cache).
Answers are compared with pyarrow's before any time counts. Prints a
markdown table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(REPO / "bench" / "categorical"))
import arktos as ak
from _common import server, timed


def main() -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    n, w = int(args.rows), args.workers
    data = tempfile.mkdtemp(prefix="arktos-csv-")
    rng = np.random.default_rng(0)
    ints, floats = rng.integers(-10**12, 10**12, n), rng.standard_normal(n)
    words = np.char.add("id", rng.integers(0, 10**6, n).astype(str)).astype(object)
    rows: list[tuple[str, tuple[float, float]]] = []
    with server(REPO, data, w):
        cols = {"i": ak.array(ints), "f": ak.array(floats), "s": ak.array(words)}
        path = Path(data) / ak.to_csv(cols, "t.csv")
        size = path.stat().st_size
        got = ak.read_csv("t_*.csv")
        opts = pcsv.ReadOptions(skip_rows=3)
        conv = pcsv.ConvertOptions(column_types={"i": pa.int64(), "f": pa.float64(), "s": pa.string()})
        pa.set_cpu_count(w)
        ref = pcsv.read_csv(path, read_options=opts, convert_options=conv)
        assert got["i"].to_ndarray().tolist() == ref["i"].to_pylist()
        assert np.array_equal(got["f"].to_ndarray(), ref["f"].to_numpy())
        assert got["s"].to_arrow().equals(ref["s"].combine_chunks().cast(pa.large_string()))
        del got
        rows.append(("ak.read_csv", timed(lambda: ak.read_csv("t_*.csv"), args.trials)))
        rows.append(("ak.to_csv", timed(lambda: ak.to_csv(cols, "w.csv"), args.trials)))
    rows.append(("pyarrow.csv.read_csv", timed(lambda: pcsv.read_csv(path, read_options=opts, convert_options=conv),
                                               args.trials)))
    try:
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads={w}")
        q = (f"SELECT * FROM read_csv('{path}', skip=3, header=true, "
             "columns={'i': 'BIGINT', 'f': 'DOUBLE', 's': 'VARCHAR'})")
        assert con.execute(q).to_arrow_table().num_rows == n
        rows.append(("duckdb read_csv", timed(lambda: con.execute(q).to_arrow_table(), args.trials)))
    except ImportError:
        print("(duckdb not installed: .venv/bin/pip install duckdb)")
    import pandas as pd

    rows.append(("pandas.read_csv (1 thread)", timed(lambda: pd.read_csv(path, skiprows=3, engine="c"),
                                                     min(args.trials, 3))))
    rows.append(("ceiling: read the file's bytes", timed(lambda: path.read_bytes(), args.trials)))
    print(f"\n{n:,} rows (int64, float64, str), {size / 1e6:.0f} MB file, {w} threads, loopback TCP, "
          f"warm page cache, {args.trials} trials after a warm-up; {time.strftime('%Y-%m-%d')}\n")
    print("| what | p50 s | p90 s | MB/s (p50) |\n|---|---:|---:|---:|")
    for label, (p50, p90) in rows:
        print(f"| {label} | {p50:.3f} | {p90:.3f} | {size / 1e6 / p50:.0f} |")


if __name__ == "__main__":
    main()

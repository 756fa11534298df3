"""Arrow IPC string columns: ak.read_arrow / ak.to_arrow_file against pyarrow.

    .venv/bin/python bench/categorical/arrow_ipc.py [--rows 1e7] [--trials 5]

Writes (once, into a temporary data directory) Feather files of the zone
(265 distinct, skewed) and id (about a million distinct) columns of
parquet.py, uncompressed, record batches of 10^6: as plain utf8 (what
pyarrow writes for a string column) and dictionary-encoded (what pandas
writes for a category column). Times p50/p90 over --trials after a
warm-up, for each file and column alone: ak.read_arrow (the request's round
trip, then the client's Categorical, whose strings come from the server)
at --workers 1 and 2; ak.to_arrow_file of the Categorical read (a dictionary
column); and in this process pyarrow.feather.read_table (memory_map=False:
the bytes read into memory, as the server reads them; strings as Arrow
makes them, unsorted) and pyarrow.feather.write_feather of the dictionary
column, and of a plain file read then dictionary_encode()d (codes as
pyarrow makes them, by a hash table, unsorted: the nearest peer of a
Categorical's numbering). The answers are compared with pyarrow's first.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402
from _common import server, string_columns, timed  # noqa: E402 (beside this script)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    n = int(args.rows)
    data = tempfile.mkdtemp(prefix="arktos-ipc-")
    cols = string_columns(n)
    for col, arr in cols.items():
        feather.write_feather(pa.table({col: arr}), Path(data) / f"{col}.arrow", compression="uncompressed",
                              chunksize=1_000_000)
        feather.write_feather(pa.table({col: arr.dictionary_encode()}), Path(data) / f"{col}_dict.arrow",
                              compression="uncompressed", chunksize=1_000_000)
    rows = []
    for workers in (1, 2):
        with server(REPO, data, workers):
            for col in cols:
                for kind in ("", "_dict"):
                    f = f"{col}{kind}.arrow"
                    got = ak.read_arrow(f)[col]
                    assert got.to_list()[:1000] == cols[col].to_pylist()[:1000]
                    assert got.categories.size == len(set(cols[col].to_pylist()))

                    def read(f: str = f, col: str = col) -> None:
                        ak.read_arrow(f)[col].delete()
                    rows.append((f"ak.read_arrow {f}", workers, timed(read, args.trials)))
                    if kind:
                        rows.append((f"ak.to_arrow_file {col} (dictionary)", workers, timed(
                            lambda col=col, got=got: ak.to_arrow_file({col: got}, "w.arrow"), args.trials)))
                    got.delete()
        pa.set_cpu_count(workers)
        for col in cols:
            for kind in ("", "_dict"):
                f = Path(data) / f"{col}{kind}.arrow"
                rows.append((f"pyarrow feather.read_table {f.name}", workers,
                             timed(lambda f=f: feather.read_table(f, memory_map=False), args.trials)))
                if not kind:  # codes as pyarrow makes them: a hash table's, unsorted
                    rows.append((f"pyarrow feather.read_table {f.name} + dictionary_encode", workers, timed(
                        lambda f=f, col=col: feather.read_table(f, memory_map=False)[col].dictionary_encode(),
                        args.trials)))
            dt = pa.table({col: cols[col].dictionary_encode()})
            rows.append((f"pyarrow write_feather {col} (dictionary)", workers, timed(
                lambda dt=dt: feather.write_feather(dt, Path(data) / "pw.arrow", compression="uncompressed",
                                                    chunksize=1_000_000), args.trials)))
    shutil.rmtree(data, ignore_errors=True)
    print(f"\n{n:,} rows, uncompressed Feather, record batches of 10^6; zone: 265 distinct, id: "
          f"{len(set(cols['id'].to_pylist())):,} distinct; loopback TCP, warm page cache, "
          f"{args.trials} trials after a warm-up; pyarrow {pa.__version__}\n")
    print("| what | threads | p50 s | p90 s |\n|---|---:|---:|---:|")
    for label, workers, (p50, p90) in rows:
        print(f"| {label} | {workers} | {p50:.3f} | {p90:.3f} |")


if __name__ == "__main__":
    main()

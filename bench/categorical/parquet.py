"""Parquet string columns: ak.read_parquet against pyarrow, side by side.

    .venv/bin/python bench/categorical/parquet.py [--rows 1e7] [--trials 7] [--reads-only]

Writes (once, into a temporary data directory) a file of one string column
of zone names (265 distinct, skewed) and one of ids (about a million
distinct), zstd, row groups of 10^6, dictionary-encoded as pyarrow writes
them. Times p50/p90 over --trials after a warm-up, for each column alone:
ak.to_parquet of the Categorical read (zstd levels 3, arrow-go's
default and ours, and 1, pyarrow's; row groups of 10^6; its categories
uploaded for the write) beside pyarrow.write_table of the same column as
Arrow strings (levels 3 and 1) and as a DictionaryArray (as pandas writes
a category column);
ak.read_parquet (server side: the request's round trip, then the client's
Categorical, whose strings come from the server; and with
strings="strings", an ak.Strings: the text as it is, no numbering, checked
once for UTF-8) at --workers 1 and 2, and
pyarrow.parquet.read_table of the same column (pa.set_cpu_count 1 and 2;
the strings as Arrow makes them, dictionary-encoded on request as
read_dictionary=) in this process. The answers are compared with
pyarrow's first. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402
from _common import server, string_columns, timed  # noqa: E402 (beside this script)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--reads-only", action="store_true", help="skip the writes")
    args = ap.parse_args()
    n = int(args.rows)
    data = tempfile.mkdtemp(prefix="arktos-strings-")
    path = Path(data) / "s.parquet"
    table = pa.table(string_columns(n))
    pq.write_table(table, path, compression="zstd", row_group_size=1_000_000)
    rows = []
    for workers in (1, 2):
        with server(REPO, data, workers):
            for col in ("zone", "id"):
                got = ak.read_parquet("s.parquet", columns=[col])[col]
                assert got.to_list()[:1000] == table[col].to_pylist()[:1000]
                assert got.categories.size == len(set(table[col].to_pylist()))

                def read(col: str = col) -> None:
                    ak.read_parquet("s.parquet", columns=[col])[col].delete()
                rows.append((f"ak.read_parquet {col}", workers, timed(read, args.trials)))
                text = ak.read_parquet("s.parquet", columns=[col], strings="strings")[col]
                assert text.to_arrow().equals(table[col].combine_chunks().cast(pa.large_string()))
                del text

                def read_text(col: str = col) -> None:
                    ak.read_parquet("s.parquet", columns=[col], strings="strings")[col].offsets.delete()
                rows.append((f"ak.read_parquet {col} (strings=\"strings\")", workers, timed(read_text, args.trials)))
                if args.reads_only:
                    got.delete()
                    continue
                # Writing the Categorical back (its categories uploaded for it).
                ak.to_parquet({col: got}, "w.parquet", row_group_size=1_000_000)
                assert pq.read_table(Path(data) / "w.parquet")[col].equals(table[col])
                for level in (3, 1):
                    rows.append((f"ak.to_parquet {col} (zstd {level})", workers, timed(
                        lambda col=col, got=got, level=level: ak.to_parquet(
                            {col: got}, "w.parquet", row_group_size=1_000_000, compression_level=level),
                        args.trials)))
                got.delete()
        pa.set_cpu_count(workers)
        for col in ("zone", "id"):
            rows.append((f"pyarrow read_table {col}", workers,
                         timed(lambda col=col: pq.read_table(path, columns=[col]), args.trials)))
            rows.append((f"pyarrow read_table {col} (read_dictionary)", workers,
                         timed(lambda col=col: pq.read_table(path, columns=[col], read_dictionary=[col]),
                               args.trials)))
            if args.reads_only:
                continue
            wpath = Path(data) / "pw.parquet"
            for level in (3, 1):
                rows.append((f"pyarrow write_table {col} (zstd {level})", workers, timed(
                    lambda col=col, level=level: pq.write_table(table.select([col]), wpath, compression="zstd",
                                                                compression_level=level, row_group_size=1_000_000),
                    args.trials)))
            # (a pandas category column is written so)
            dcol = pa.table({col: table[col].dictionary_encode()})
            rows.append((f"pyarrow write_table {col} (DictionaryArray, zstd 1)", workers,
                         timed(lambda dcol=dcol: pq.write_table(dcol, wpath, compression="zstd",
                                                                compression_level=1, row_group_size=1_000_000),
                               args.trials)))
    shutil.rmtree(data, ignore_errors=True)
    print(f"\n{n:,} rows, zstd, row groups of 10^6; zone: 265 distinct, id: "
          f"{len(set(table['id'].to_pylist())):,} distinct; loopback TCP, warm page cache, "
          f"{args.trials} trials after a warm-up; pyarrow {pa.__version__}\n")
    print("| what | threads | p50 s | p90 s |\n|---|---:|---:|---:|")
    for label, workers, (p50, p90) in rows:
        print(f"| {label} | {workers} | {p50:.3f} | {p90:.3f} |")


if __name__ == "__main__":
    main()

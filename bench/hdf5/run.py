"""HDF5 files: ak.read_hdf / ak.to_hdf on the server against h5py, side
by side.

    .venv/bin/python bench/hdf5/run.py [--rows 1e7] [--strings 1e6] [--trials 7] [--workers 2]

One file (written by ak.to_hdf, Arkouda's layout: contiguous datasets) of
an int64 and a float64 column of --rows and a Strings column of --strings
short strings (``id<k>``). Times p50 and p90 over --trials after a
warm-up, warm page cache: ak.read_hdf of the numbers (the server reads;
round trip included, the arrays left there), ak.read_hdf of the strings
(their NULs removed into Arrow's layout), ak.to_hdf of all three; h5py
reading the same datasets into numpy in this process (one thread: h5py
has no other) and np.fromfile of the whole file as the ceiling. Answers
are compared with h5py's before any time counts. Prints a markdown table.
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
    import h5py

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--strings", type=float, default=1e6)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    n, m, w = int(args.rows), int(args.strings), args.workers
    data = tempfile.mkdtemp(prefix="arktos-hdf5-")
    rng = np.random.default_rng(0)
    ints, floats = rng.integers(-10**12, 10**12, n), rng.standard_normal(n)
    words = np.char.add("id", rng.integers(0, 10**6, m).astype(str)).astype(object)
    rows: list[tuple[str, int, tuple[float, float]]] = []
    with server(REPO, data, w):
        cols = {"i": ak.array(ints), "f": ak.array(floats), "s": ak.array(words)}
        path = Path(data) / ak.to_hdf(cols, "t.h5")
        size = path.stat().st_size
        got = ak.read_hdf("t_*.h5")
        with h5py.File(path) as f:
            assert got["i"].to_ndarray().tobytes() == f["i"][...].tobytes()
            assert got["f"].to_ndarray().tobytes() == f["f"][...].tobytes()
            vals = f["s/values"][...].tobytes()
            assert got["s"].to_list() == [x.decode() for x in vals.split(b"\0")[:-1]]
        del got
        num = 16 * n
        rows.append(("ak.read_hdf int64+float64", num, timed(lambda: ak.read_hdf("t_*.h5", ["i", "f"]), args.trials)))
        sbytes = int(cols["s"].nbytes) if hasattr(cols["s"], "nbytes") else 0
        rows.append(("ak.read_hdf Strings", sbytes, timed(lambda: ak.read_hdf("t_*.h5", "s"), args.trials)))
        rows.append(("ak.to_hdf all three", size, timed(lambda: ak.to_hdf(cols, "w.h5"), args.trials)))

    def h5num() -> None:
        with h5py.File(path) as f:
            f["i"][...]
            f["f"][...]

    def h5str() -> None:
        with h5py.File(path) as f:
            f["s/values"][...]
            f["s/segments"][...]

    rows.append(("h5py int64+float64 into numpy", num, timed(h5num, args.trials)))
    rows.append(("h5py Strings' values+segments (raw, no split)", sbytes, timed(h5str, args.trials)))
    rows.append(("ceiling: np.fromfile of the whole file", size, timed(lambda: np.fromfile(path, np.uint8), args.trials)))
    print(f"\n{n:,} int64 + {n:,} float64 rows, {m:,} strings; {size / 1e6:.0f} MB file, {w} server workers, "
          f"loopback TCP, warm page cache, {args.trials} trials after a warm-up; {time.strftime('%Y-%m-%d')}\n")
    print("| what | p50 s | p90 s | GB/s (p50) |\n|---|---:|---:|---:|")
    for label, nbytes, (p50, p90) in rows:
        rate = f"{nbytes / 1e9 / p50:.2f}" if nbytes else "-"
        print(f"| {label} | {p50:.4f} | {p90:.4f} | {rate} |")


if __name__ == "__main__":
    main()

"""What CurveZMQ costs a transfer: upload and download of one float64 array
over the ZeroMQ socket, plaintext against encrypted, in one run.

One command: ``.venv/bin/python bench/encryption/run.py [--mib 256] [--trials 7]``.
Three servers on loopback, 2 workers each, one at a time: plaintext with
``transport="frames"`` (ZeroMQ frames only: what encryption is measured
against), encrypted (``--encrypt on``: frames only, streams and lanes are
off), and plaintext with its default transports (bulk streams) for context.
Warm (one transfer first), TRIALS transfers: GiB/s of array bytes at the p50
and the p90 (slower) of their times.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

import arktos as ak


def gib_s(nbytes: int, ts: list[float], q: float) -> float:
    """The rate at the q-th percentile of the times (p90: the slow tail)."""
    return nbytes / 2**30 / float(np.percentile(np.asarray(ts), q))


def measure(srv: ak.Server, data: np.ndarray, trials: int, **kw: object) -> tuple[list[float], list[float]]:
    conn = ak.Connection(srv.url, **kw)  # type: ignore[arg-type]
    a = conn.array(data)
    a.to_ndarray()
    up, down = [], []
    for _ in range(trials):
        t0 = time.perf_counter()
        b = conn.array(data)
        up.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = b.to_ndarray()
        down.append(time.perf_counter() - t0)
        assert out.nbytes == data.nbytes
        del b, out
    conn.close()
    return up, down


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--trials", type=int, default=7)
    args = ap.parse_args()
    data = np.random.default_rng(1).random(args.mib * 2**20 // 8)
    print(f"# bench/encryption: {args.mib} MiB float64, loopback, 2 workers, warm, {args.trials} trials, "
          f"{os.cpu_count()} CPUs")
    rows = []
    with tempfile.TemporaryDirectory() as home:
        key_file = Path(home) / "server_key"
        with ak.Server(workers=2) as srv:
            rows.append(("plaintext, ZeroMQ frames", *measure(srv, data, args.trials, transport="frames", lane=False)))
        with ak.Server(workers=2, args=["--encrypt", "on", "--server-key-file", str(key_file)]) as srv:
            key = Path(str(key_file) + ".pub").read_text().strip()
            rows.append(("CurveZMQ, ZeroMQ frames", *measure(srv, data, args.trials, server_key=key)))
        with ak.Server(workers=2) as srv:
            rows.append(("plaintext, default (bulk streams)", *measure(srv, data, args.trials)))
    base_up, base_down = rows[0][1], rows[0][2]
    print("\n| path | upload GiB/s p50 / p90 | download GiB/s p50 / p90 | upload ratio | download ratio |")
    print("|---|---|---|---|---|")
    for name, up, down in rows:
        print(f"| {name} | {gib_s(data.nbytes, up, 50):.2f} / {gib_s(data.nbytes, up, 90):.2f} | "
              f"{gib_s(data.nbytes, down, 50):.2f} / {gib_s(data.nbytes, down, 90):.2f} | "
              f"{np.median(base_up) / np.median(up):.2f} | {np.median(base_down) / np.median(down):.2f} |")


if __name__ == "__main__":
    main()

"""One large group-by query, each engine alone on the machine, one after the other.

    .venv/bin/python bench/groupby/solo.py --query "g1 q10" --g1-rows 1e8 \\
        [--threads 1,2] [--trials 3] [--peers duckdb] [--max-memory 20GiB]

For queries whose data and answer do not fit twice in memory beside a
peer's copy (G1 q10 at 10^8 rows: 7.2 GB of data, an answer of 10^8 groups
by six keys, 6.4 GB): run.py keeps every engine's data loaded at once and
interleaves their trials, which needs about 30 GB here. This script runs
Arktos first (server with the data, a warm-up run whose answer is written to
disk one column at a time, then the trials), stops the server, and then each
peer in turn (data loaded in a subprocess of its own, a warm-up run whose
answer is checked against ours column by column, as run.py checks, then the
trials). The engines do not run side by side, so a drift in the machine's
speed between the phases is not shared: the reference kernel is timed
before and after each phase to show it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("gbrun", HERE / "run.py")
assert _spec and _spec.loader
gb = importlib.util.module_from_spec(_spec)
sys.modules["gbrun"] = gb
_spec.loader.exec_module(gb)
ak = gb.ak


def ref() -> str:
    p50, p90 = gb.reference_kernel()
    return f"p50 {p50 * 1e3:.2f} ms p90 {p90 * 1e3:.2f} ms, load {os.getloadavg()[0]:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", default="g1 q10")
    ap.add_argument("--g1-rows", type=float, default=1e8)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--peers", default="duckdb")
    ap.add_argument("--max-memory", default="20GiB")
    args = ap.parse_args()
    spec = gb.G1[args.query]
    threads_list = [int(t) for t in args.threads.split(",")]
    used = gb.used_columns(spec)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="akgb") as tmp:
        data_path = os.path.join(tmp, "g1.npz")
        data = gb.make_g1(int(args.g1_rows))
        n = len(data["id1"])
        np.savez(data_path, **{c: data[c] for c in used})
        del data
        print(f"reference kernel before Arktos: {ref()}", flush=True)
        ours: dict[str, Any] = {}
        for threads in threads_list:
            url = f"tcp://127.0.0.1:{gb.free_port()}"
            proc = subprocess.Popen([str(gb.REPO / "bin" / "arktos-server"), "--addr", url, "--workers",
                                     str(threads), "--max-memory", args.max_memory, "--log-level", "warn"])
            try:
                time.sleep(0.3)
                conn = ak.Connection(url, timeout=1200)
                d = np.load(data_path)
                cols = {k: conn.array(d[k]) for k in d.files}
                t0 = time.perf_counter()
                keys, res, strategy = gb.arktos_query(cols, spec)
                warm = time.perf_counter() - t0
                if not ours:  # the answer, one column at a time (10^8 groups: 800 MB a column)
                    kp, rp = [], {}
                    for i, k in enumerate(keys):
                        np.save(f := os.path.join(tmp, f"ours_key{i}.npy"), k.to_ndarray())
                        kp.append(f)
                    for o, r in res.items():
                        np.save(f := os.path.join(tmp, f"ours_{o}.npy"), r.to_ndarray())
                        rp[o] = f
                    ours = {"keys": [np.load(f, mmap_mode="r") for f in kp],
                            "res": {o: np.load(f, mmap_mode="r") for o, f in rp.items()}}
                del keys, res
                ts, scan = [], []
                for _ in range(args.trials):
                    sc, took, strategy = gb.time_arktos(cols, spec, used)
                    scan.append(sc)
                    ts.append(took)
                p50, p90 = gb.stats(ts)
                rows.append({"threads": threads, "engine": f"arktos ({strategy})", "p50": p50, "p90": p90,
                             "warm": warm, "scan": gb.stats(scan)[0], "check": "ours"})
                print(rows[-1], flush=True)
                conn.close()
            finally:
                gb.stop_server(proc)
        print(f"reference kernel after Arktos: {ref()}", flush=True)
        for peer in filter(None, args.peers.split(",")):
            for threads in threads_list:
                if peer == "pandas" and threads > 1:
                    continue
                p = gb.Peer(peer, threads, data_path, {args.query: spec})
                try:
                    t0 = time.perf_counter()
                    p.ask("check", args.query)
                    warm = time.perf_counter() - t0
                    check = gb.check(ours, data_path, peer, args.query, spec)
                    os.remove(data_path + f".{peer}.{args.query.replace(' ', '_')}.npz")
                    ts = [float(p.ask("time", args.query)) for _ in range(args.trials)]
                finally:
                    p.close()
                p50, p90 = gb.stats(ts)
                rows.append({"threads": threads, "engine": peer, "p50": p50, "p90": p90, "warm": warm,
                             "check": check})
                print(rows[-1], flush=True)
        print(f"reference kernel after the peers: {ref()}", flush=True)
        groups = len(ours["keys"][0])
    print(f"\n{args.query}: {n:,} rows, {groups:,} groups; each engine alone, {args.trials} trials "
          "after a warm-up run (the warm-up includes the check's answer for peers)")
    print("| threads | engine | p50 s | p90 s | warm-up s | M rows/s | × Arktos (p50) | answer |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        o = next(x for x in rows if x["threads"] == r["threads"] and x["check"] == "ours")
        print(f"| {r['threads']} | {r['engine']} | {r['p50']:.2f} | {r['p90']:.2f} | {r['warm']:.2f} | "
              f"{n / r['p50'] / 1e6:.1f} | {r['p50'] / o['p50']:.2f} | {r['check']} |")
    for r in rows:
        if "scan" in r:
            print(f"scan floor at {r['threads']} thread(s): {r['scan']:.3f} s")


if __name__ == "__main__":
    main()

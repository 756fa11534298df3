"""Transfer benchmark: Arktos against its ceilings and Arrow Flight, one run.

    .venv/bin/python bench/transfer/run.py            # full: 1, 8, 64, 256 MiB and 1 GiB
    .venv/bin/python bench/transfer/run.py --quick    # 1, 8, 64 MiB, 3 trials

It builds and starts arktos-server and benchserver (raw TCP/unix ceiling and
an arrow-go Flight server), then for each size and dtype runs the Go side
(goclient) and the Python side (pybench) in turn; each side interleaves its
methods trial by trial. Writes bench/transfer/out/results.json, results.md
and transfer.png. Trial 0 is "cold" (first transfer of that size), trial 1 a
discarded warm-up, the rest "warm".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import pybench  # noqa: E402

MiB = 1 << 20


def build(out: Path) -> dict[str, Path]:
    bins = {"server": ROOT / "bin" / "arktos-server", "benchserver": out / "bin" / "benchserver",
            "goclient": out / "bin" / "goclient"}
    for name, pkg in (("server", "./cmd/arktos-server"), ("benchserver", "./bench/transfer/benchserver"),
                      ("goclient", "./bench/transfer/goclient")):
        subprocess.run(["go", "build", "-o", str(bins[name]), pkg], cwd=ROOT, check=True)
    return bins


def reference_kernel() -> float:
    """Seconds for a fixed memcpy of 256 MiB (median of 5): machine steadiness."""
    src = np.ones(32 * MiB, np.int64)
    dst = np.empty_like(src)
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(dst, src)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("kind") == "latency":
            continue
        groups[(r["lang"], r["dtype"], r["bytes"], r["method"], r["transport"], r["dir"])].append(r)
    rows = []
    for (lang, dtype, nbytes, method, transport, direction), rs in sorted(groups.items()):
        warm = sorted(r["seconds"] for r in rs if r["phase"] == "warm")
        cold = [r["seconds"] for r in rs if r["phase"] == "cold"]
        if not warm:
            continue
        p50, p90 = float(np.percentile(warm, 50)), float(np.percentile(warm, 90))
        gib = nbytes / 2**30
        rows.append({
            "lang": lang, "dtype": dtype, "bytes": nbytes, "method": method, "transport": transport,
            "dir": direction, "trials": len(warm),
            "p50_gibs": gib / p50, "p90_gibs": gib / p90,  # p90 of time: the slow tail
            "cold_gibs": gib / cold[0] if cold else None,
            "client_minflt_p50": statistics.median(r["client_minflt"] for r in rs if r["phase"] == "warm"),
            "server_minflt_p50": statistics.median(r["server_minflt"] for r in rs if r["phase"] == "warm"),
            "server_copied_p50": statistics.median(r["server_copied"] for r in rs if r["phase"] == "warm"),
        })
    return rows


def find(rows: list[dict[str, Any]], **key: Any) -> dict[str, Any] | None:
    for r in rows:
        if all(r[k] == v for k, v in key.items()):
            return r
    return None


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# Transfer benchmark",
        "",
        f"Machine: {meta['machine']}; load average before/after: {meta['loadavg_before']} / {meta['loadavg_after']}; "
        f"reference memcpy of 256 MiB before/after: {meta['ref_before_ms']:.1f} / {meta['ref_after_ms']:.1f} ms.",
        f"Transport: loopback; each client is one thread; arktos-server with {meta['server_workers']} workers. "
        f"Warm = {meta['trials']} trials after one cold and one warm-up trial; GiB/s at the p50 and the p90 "
        "(slow tail) of the time. Raw = framed stream between the same two processes' languages into a reused, "
        "pre-faulted buffer (the ceiling). Arktos download = into a new array, as `to_ndarray()` returns it. "
        "Faults: minor page faults per transfer (p50); copied: bytes the server copied in user space. "
        "shm = shared memory (the default on one host): up fills a segment the server lends and keeps as the "
        "array; down-view maps the array's own segment read-only and is timed until it is mapped (its pages "
        "are mapped in as they are first read, not timed); stream-unix rows run with shared memory off.",
        "",
    ]
    for f in meta.get("failures", []):
        lines.append(f"- **Failed:** {f}")
    lines += latency_lines(meta)
    lines.append("")
    header = ("| lang | dtype | size | dir | method | transport | p50 GiB/s | p90 GiB/s | cold GiB/s | "
              "× raw tcp (p50/p90) | × raw striped (p50/p90) | × flight (p50) | × memcpy (p50) | client faults | server faults | server copied |")
    lines += [header, "|" + "---|" * header.count("|")[:-1] if False else header.replace("|", "|")]
    lines[-1] = "|" + "|".join("---" for _ in range(header.count("|") - 1)) + "|"
    for r in rows:
        base_dir = "down" if r["dir"].startswith("down") else r["dir"]  # down-into, down-view
        raw = find(rows, lang=r["lang"], dtype=r["dtype"], bytes=r["bytes"], method="raw", transport="tcp", dir=base_dir)
        # Striped transfers' ceiling: the same bytes over as many raw TCP
        # connections at once (raw tcp-xN).
        rs = next((x for x in rows if x["lang"] == r["lang"] and x["dtype"] == r["dtype"] and x["bytes"] == r["bytes"]
                   and x["method"] == "raw" and x["transport"].startswith("tcp-x") and x["dir"] == base_dir), None)
        vs_rs = (f"{r['p50_gibs'] / rs['p50_gibs']:.2f} / {r['p90_gibs'] / rs['p50_gibs']:.2f}"
                 if rs and r["method"] == "arktos" and r["transport"] == "stream-tcp" else "")
        fl = find(rows, lang=r["lang"], dtype=r["dtype"], bytes=r["bytes"], method="flight", dir=base_dir)
        vs_raw = f"{r['p50_gibs'] / raw['p50_gibs']:.2f} / {r['p90_gibs'] / raw['p50_gibs']:.2f}" if raw and r["method"] == "arktos" else ""
        vs_fl = f"{r['p50_gibs'] / fl['p50_gibs']:.1f}" if fl and r["method"] == "arktos" else ""
        mc = find(rows, lang=r["lang"], dtype=r["dtype"], bytes=r["bytes"], method="memcpy", dir="up")
        vs_mc = f"{r['p50_gibs'] / mc['p50_gibs']:.2f}" if mc and r["method"] == "arktos" else ""
        cold = f"{r['cold_gibs']:.2f}" if r["cold_gibs"] else ""
        size = f"{r['bytes'] // MiB} MiB" if r["bytes"] < 1024 * MiB else f"{r['bytes'] // (1024 * MiB)} GiB"
        lines.append(f"| {r['lang']} | {r['dtype']} | {size} | {r['dir']} | {r['method']} | {r['transport']} | "
                     f"{r['p50_gibs']:.2f} | {r['p90_gibs']:.2f} | {cold} | {vs_raw} | {vs_rs} | {vs_fl} | {vs_mc} | "
                     f"{r['client_minflt_p50']:.0f} | {r['server_minflt_p50']:.0f} | {r['server_copied_p50']:.0f} |")
    return "\n".join(lines) + "\n"


def latency_lines(meta: dict[str, Any]) -> list[str]:
    """One line per small-request kind, with its ratio to the raw ZeroMQ echo
    measured interleaved with it."""
    recs = meta.get("latency", [])
    echo = {r["lang"]: r for r in recs if r["request"] == "raw zmq echo"}
    lines = []
    for r in recs:
        vs = ""
        if r["lang"] in echo and r is not echo[r["lang"]]:
            e = echo[r["lang"]]
            vs = f"; × echo {r['p50_us'] / e['p50_us']:.2f} / {r['p90_us'] / e['p90_us']:.2f}"
        lines.append(f"- Small request round trip from {r['lang']}, {r['request']}: p50 {r['p50_us']:.0f} µs, "
                     f"p90 {r['p90_us']:.0f} µs ({r['n']} requests, interleaved in runs of {r.get('block', 1)}{vs}).")
    return lines


def plot(rows: list[dict[str, Any]], path: Path, dtype: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = sorted({r["lang"] for r in rows})
    fig, axes = plt.subplots(len(langs), 2, figsize=(12, 4.5 * len(langs)), squeeze=False)
    for i, lang in enumerate(langs):
        for j, direction in enumerate(("up", "down")):
            ax = axes[i][j]
            series = sorted({(r["method"], r["transport"]) for r in rows
                             if r["lang"] == lang and r["dtype"] == dtype and (r["dir"] == direction or r["method"] == "memcpy")})
            for method, transport in series:
                pts = sorted((r["bytes"], r["p50_gibs"], r["p90_gibs"]) for r in rows
                             if r["lang"] == lang and r["dtype"] == dtype and r["method"] == method
                             and r["transport"] == transport and (r["dir"] == direction or method == "memcpy"))
                xs = [p[0] / MiB for p in pts]
                style = "--" if method in ("raw", "memcpy") else "-"
                ax.plot(xs, [p[1] for p in pts], style, marker="o", label=f"{method} {transport}")
                ax.fill_between(xs, [p[2] for p in pts], [p[1] for p in pts], alpha=0.15)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("array size (MiB)")
            ax.set_ylabel("GiB/s (line p50, band down to p90)")
            ax.set_title(f"{lang} client, {'upload' if direction == 'up' else 'download'} ({dtype})")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1, 8, 64 MiB and 3 trials")
    ap.add_argument("--sizes", help="comma-separated MiB, e.g. 1,8,64,256,1024")
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--dtypes", default="int64,float64")
    ap.add_argument("--langs", default="go,python")
    ap.add_argument("--transports", default="frames,stream-tcp,stream-unix,shm,zstd,zstd-compressible",
                    help="Arktos transports; zstd = compressed frames of the random array, "
                         "zstd-compressible = of an array of small repeating integers (Go side only)")
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--latency-only", action="store_true",
                    help="only the small-request round trips (get_config, a small reduce, raw zmq echo)")
    ap.add_argument("--latency-n", type=int, default=2000, help="round trips of each kind")
    ap.add_argument("--latency-block", type=int, default=100,
                    help="round trips of one kind in a row before the next kind (1: one by one, each kind "
                         "after another, as before 2026-12-01)")
    args = ap.parse_args()
    sizes = [1, 8, 64] if args.quick else [1, 8, 64, 256, 1024]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    trials = 3 if args.quick and args.trials == 7 else args.trials
    out = Path(args.out)
    (out / "bin").mkdir(parents=True, exist_ok=True)
    bins = build(out)

    port = pybench_free_port()
    url = f"tcp://127.0.0.1:{port}"
    # Go processes keep freed heap until the runtime scavenges it: a memory
    # limit makes them give it back, so 1 GiB runs fit the 24 GiB machine
    # (server, benchserver and client each hold a few copies of the array).
    genv = dict(os.environ, GOMEMLIMIT="5GiB")
    server = subprocess.Popen([str(bins["server"]), "--addr", url, "--max-memory", "6GiB", "--log-level", "warn"], env=genv)
    bench = subprocess.Popen([str(bins["benchserver"]), "--unix", str(out / "raw.sock")], stdout=subprocess.PIPE,
                             text=True, env=genv)
    ready = dict(kv.split("=", 1) for kv in bench.stdout.readline().split()[1:])  # type: ignore[union-attr]
    records: list[dict[str, Any]] = []
    meta: dict[str, Any] = {"machine": f"{platform.node()} {os.cpu_count()} cores {platform.processor() or platform.machine()}",
                            "trials": trials, "sizes_mib": sizes}
    try:
        import arktos as ak
        for _ in range(100):
            try:
                conn = ak.Connection(url, timeout=1.0)
                meta["server_workers"] = conn.config["workers"]
                conn.close()
                break
            except (TimeoutError, OSError):
                time.sleep(0.1)
        meta["loadavg_before"] = Path("/proc/loadavg").read_text().split()[0]
        meta["ref_before_ms"] = reference_kernel() * 1e3
        meta["latency"] = []
        if "go" in args.langs:
            lines = subprocess.run([str(bins["goclient"]), "--arktos", url, "--latency", str(args.latency_n),
                                    "--latency-block", str(args.latency_block),
                                    "--zmq-echo", ready["zmq"]], check=True, capture_output=True, text=True).stdout
            meta["latency"] += [json.loads(line) for line in lines.splitlines()]
        if "python" in args.langs:
            meta["latency"] += pybench.latency(url, args.latency_n, ready["zmq"], args.latency_block)
        if args.latency_only:
            load = Path("/proc/loadavg").read_text().split()[0]
            print(f"Machine: {meta['machine']}; load average before/after: {meta['loadavg_before']} / {load}")
            print("\n".join(latency_lines(meta)))
            return
        for nbytes in (s * MiB for s in sizes):
            for dtype in args.dtypes.split(","):
                print(f"size {nbytes // MiB} MiB {dtype} ...", flush=True)
                if "go" in args.langs:
                    res = subprocess.run(env=genv, args=[
                        str(bins["goclient"]), "--arktos", url, "--arktos-pid", str(server.pid),
                        "--bench-pid", str(bench.pid), "--raw-tcp", ready["tcp"], "--raw-unix", ready["unix"],
                        "--flight", ready["flight"], "--dtype", dtype, "--bytes", str(nbytes),
                        "--trials", str(trials), "--transports", args.transports,
                    ], capture_output=True, text=True)
                    records += [json.loads(line) for line in res.stdout.splitlines()]
                    if res.returncode != 0:
                        # Keep what was measured; say what failed.
                        meta.setdefault("failures", []).append(
                            f"go client at {nbytes // MiB} MiB {dtype}: exit {res.returncode} {res.stderr.strip()[-300:]}")
                        print(meta["failures"][-1], flush=True)
                if "python" in args.langs:
                    try:
                        records += pybench.run(url=url, arktos_pid=server.pid, bench_pid=bench.pid, raw_tcp=ready["tcp"],
                                           raw_unix=ready["unix"], flight=ready["flight"], dtype=dtype, nbytes=nbytes,
                                           trials=trials, transports=[t for t in args.transports.split(",")
                                                                      if not t.startswith("zstd")])
                    except Exception as err:  # keep what was measured; say what failed
                        meta.setdefault("failures", []).append(f"python client at {nbytes // MiB} MiB {dtype}: {err}")
                        print(meta["failures"][-1], flush=True)
        meta["loadavg_after"] = Path("/proc/loadavg").read_text().split()[0]
        meta["ref_after_ms"] = reference_kernel() * 1e3
    finally:
        server.terminate()
        bench.terminate()
        server.wait()
        bench.wait()
    rows = summarise(records)
    (out / "results.json").write_text(json.dumps({"meta": meta, "summary": rows, "records": records}, indent=1))
    (out / "results.md").write_text(markdown(rows, meta))
    plot(rows, out / "transfer.png", args.dtypes.split(",")[0])
    print((out / "results.md").read_text())


def pybench_free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()

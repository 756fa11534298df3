"""Mid-size downloads from Python: `pdarray.to_ndarray()` of 64 KiB to 1 MiB.

Arrays of these sizes (a group-by's result, a slice) are where a download is
one round trip rather than a stream of bytes, so this times each one whole,
interleaved trial by trial, against its ceiling:

- ``raw tcp`` / ``raw unix``: a request answered by the same bytes from
  benchserver, received into a reused, pre-faulted buffer (pybench's raw
  methods);
- ``lane``: `to_ndarray()` with the default connection (request lanes on);
- ``zmq``: `to_ndarray()` with ``lane=False`` (ZeroMQ frames; no stream
  opens under 1 MiB);
- ``stream``: `to_ndarray()` with ``transport="stream"`` (the request over
  the lane, the bytes on the unix bulk stream).

Run from the repository root after ``make build``::

    .venv/bin/python bench/transfer/mid.py [--sizes-kib 64,256,1023] [--trials 400]

It prints a markdown table (p50 and p90 in µs, and p50 as a multiple of raw
TCP's) and writes the records as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pybench  # noqa: E402
from run import build, pybench_free_port  # noqa: E402

import arktos as ak  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes-kib", default="64,128,255,256,512,768,1023")
    ap.add_argument("--trials", type=int, default=400, help="timed downloads per method and size")
    ap.add_argument("--json", help="write the records here")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes_kib.split(",")]
    out = Path(tempfile.mkdtemp(prefix="arktos-mid-"))
    bins = build(out)
    url = f"tcp://127.0.0.1:{pybench_free_port()}"
    server = subprocess.Popen([str(bins["server"]), "--addr", url, "--log-level", "warn"])
    bench = subprocess.Popen([str(bins["benchserver"]), "--unix", str(out / "raw.sock")],
                             stdout=subprocess.PIPE, text=True)
    ready = dict(kv.split("=", 1) for kv in bench.stdout.readline().split()[1:])  # type: ignore[union-attr]
    records: list[dict[str, Any]] = []
    try:
        conns: dict[str, ak.Connection] = {}
        for _ in range(100):
            try:
                conns["lane"] = ak.Connection(url, timeout=5.0)
                break
            except (TimeoutError, OSError):
                time.sleep(0.1)
        conns["zmq"] = ak.Connection(url, timeout=5.0, lane=False)
        conns["stream"] = ak.Connection(url, timeout=5.0, transport="stream")
        load0 = Path("/proc/loadavg").read_text().split()[0]
        for kib in sizes:
            src = np.arange(kib * 128, dtype=np.int64)
            into = pybench.prefaulted(src.nbytes)
            host, port = ready["tcp"].rsplit(":", 1)
            methods: dict[str, Callable[[], float]] = {}
            for name, family, addr in (("raw tcp", socket.AF_INET, (host, int(port))),
                                       ("raw unix", socket.AF_UNIX, ready["unix"])):
                down = pybench.raw_methods(family, addr, src, into)[1]
                methods[name] = lambda down=down: down()[0]
            for name, conn in conns.items():
                a = conn.array(src)

                def timed(a: Any = a) -> float:
                    t = time.perf_counter()
                    got = a.to_ndarray()
                    d = time.perf_counter() - t
                    if got.size != src.size or got[-1] != src[-1]:
                        raise RuntimeError("wrong download")
                    return d
                methods[name] = timed
            times: dict[str, list[float]] = {m: [] for m in methods}
            for trial in range(args.trials + 20):  # 20 warm-up rounds
                for m, f in methods.items():
                    d = f()
                    if trial >= 20:
                        times[m].append(d)
            for m, ts in times.items():
                ts.sort()
                records.append({"kib": kib, "method": m, "p50_us": ts[len(ts) // 2] * 1e6,
                                "p90_us": ts[len(ts) * 9 // 10] * 1e6, "trials": len(ts)})
        load1 = Path("/proc/loadavg").read_text().split()[0]
    finally:
        for c in conns.values():
            c.close()
        server.terminate()
        bench.terminate()
        server.wait()
        bench.wait()
    print(f"Machine: {os.cpu_count()} cores; load average before/after: {load0} / {load1}; "
          f"{args.trials} trials a method, interleaved; warm; int64; p50 / p90 µs (x raw tcp's p50)")
    methods_seen = list(dict.fromkeys(r["method"] for r in records))
    print("| KiB | " + " | ".join(methods_seen) + " |")
    print("|---:|" + "---:|" * len(methods_seen))
    for kib in sizes:
        rows = {r["method"]: r for r in records if r["kib"] == kib}
        base = rows["raw tcp"]["p50_us"]
        cells = [f"{rows[m]['p50_us']:.0f} / {rows[m]['p90_us']:.0f} ({rows[m]['p50_us'] / base:.2f}x)" for m in methods_seen]
        print(f"| {kib} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": [load0, load1], "records": records}, indent=1))


if __name__ == "__main__":
    main()

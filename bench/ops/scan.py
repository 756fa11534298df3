"""Twenty-five everyday array operations against numpy, one line each.

    .venv/bin/python bench/ops/scan.py [--server bin/arktos-server] [--workers 1] [--trials 9]

10^7 elements (float64 normal, int64 in [0, 1000), their float32/int32
copies, a bool mask); each line is the p50 ms of the operation through the
server (request round trip, result left there) and of numpy on the same
data in this process, and numpy / arktos (above 1: Arktos faster). A quick
way to find the slowest pieces: run it with an older build's --server
beside this one's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import arktos as ak  # noqa: E402
from run import free_port  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"))
ap.add_argument("--workers", default="1")
ap.add_argument("--trials", type=int, default=9)
args = ap.parse_args()
port = free_port()
srv = subprocess.Popen([args.server, "--addr", f"tcp://127.0.0.1:{port}", "--workers", args.workers,
                        "--log-level", "warn"])
time.sleep(1)


def t(f, n=args.trials):
    ts = []
    for _ in range(n):
        s = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - s)
        del r
    ts.sort()
    return ts[n // 2] * 1e3


try:
    ak.connect(f"tcp://127.0.0.1:{port}")
    np.seterr(all="ignore")
    rng = np.random.default_rng(0)
    f = rng.normal(size=10**7); i = rng.integers(0, 1000, 10**7); b = f > 0
    i32 = i.astype(np.int32); f32 = f.astype(np.float32)
    pf, pi, pb, pi32, pf32 = ak.array(f), ak.array(i), ak.array(b), ak.array(i32), ak.array(f32)
    cases = [
        ("abs f64", lambda: ak.abs(pf), lambda: np.abs(f)),
        ("isnan f64", lambda: ak.isnan(pf), lambda: np.isnan(f)),
        ("neg f64", lambda: -pf, lambda: -f),
        ("sqrt|f|", lambda: ak.sqrt(pf), lambda: np.sqrt(f)),
        ("floor f64", lambda: ak.floor(pf), lambda: np.floor(f)),
        ("f * 2.0", lambda: pf * 2.0, lambda: f * 2.0),
        ("f + f", lambda: pf + pf, lambda: f + f),
        ("i * 3", lambda: pi * 3, lambda: i * 3),
        ("i % 7", lambda: pi % 7, lambda: i % 7),
        ("i // 7", lambda: pi // 7, lambda: i // 7),
        ("f / 3", lambda: pf / 3.0, lambda: f / 3.0),
        ("where(b,f,0)", lambda: ak.where(pb, pf, 0.0), lambda: np.where(b, f, 0.0)),
        ("~b", lambda: ~pb, lambda: ~b),
        ("b.any", lambda: pb.any(), lambda: b.any()),
        ("i.astype f64", lambda: pi.astype(np.float64), lambda: i.astype(np.float64)),
        ("f.astype i64", lambda: pf.astype(np.int64), lambda: f.astype(np.int64)),
        ("i32 < 500", lambda: pi32 < 500, lambda: i32 < 500),
        ("f32 sum", lambda: pf32.sum(), lambda: f32.sum()),
        ("i32 sum", lambda: pi32.sum(), lambda: i32.sum()),
        ("f32 max", lambda: pf32.max(), lambda: f32.max()),
        ("i == 5", lambda: pi == 5, lambda: i == 5),
        ("clip f", lambda: ak.clip(pf, -1, 1), lambda: np.clip(f, -1, 1)),
        ("cumsum i", lambda: ak.cumsum(pi), lambda: np.cumsum(i)),
        ("f.var", lambda: pf.var(), lambda: f.var()),
        ("in1d i", lambda: ak.in1d(pi, ak.array(np.arange(0, 1000, 3))), lambda: np.isin(i, np.arange(0, 1000, 3))),
    ]
    for name, a, n in cases:
        try:
            ta, tn = t(a), t(n)
            print(f"{name:16s} arktos {ta:7.2f}  numpy {tn:7.2f}  ratio {tn/ta:5.2f}")
        except Exception as e:
            print(name, "ERR", type(e).__name__, str(e)[:80])
finally:
    srv.kill()

"""Small requests after an idle gap, from Python (the notebook case).

    .venv/bin/python bench/transfer/idle.py [--n 300] [--gaps 0,1,5]

Starts an arktos-server (bin/arktos-server) and the Go idle benchmark's raw
TCP echo (`go run ./bench/transfer/idle -serve-echo`, a process of its own,
as the server is), then times, kinds interleaved, after gaps of 0, 1 and 5
ms: a raw TCP echo of 16 bytes from Python (the ceiling: both ends wake
from a blocked read), get_config over the request lane, and over ZeroMQ.
Prints p50 and p90 in µs and each p50's ratio to the echo's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--gaps", default="0,1,5", help="ms between requests")
    args = ap.parse_args()
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    exe = Path(tempfile.mkdtemp(prefix="arktos-idle-")) / "idle"
    subprocess.run(["go", "build", "-o", str(exe), "./bench/transfer/idle"], cwd=REPO, check=True)
    srv = subprocess.Popen([str(REPO / "bin" / "arktos-server"), "--addr", url],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    echo = subprocess.Popen([str(exe), "-serve-echo"], stdout=subprocess.PIPE, text=True)
    try:
        assert echo.stdout is not None
        host, _, eport = echo.stdout.readline().strip().rpartition(":")
        raw = socket.create_connection((host, int(eport)))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        msg = b"x" * 16
        buf = bytearray(64)

        def echo_once() -> None:
            raw.sendall(msg)
            got = 0
            while got < 16:
                k = raw.recv_into(memoryview(buf)[got:])
                if k == 0:
                    raise ConnectionError("the echo server closed the connection")
                got += k

        lane = ak.Connection(url, timeout=10)
        zmq = ak.Connection(url, timeout=10, lane=False)
        kinds = [("raw tcp echo", echo_once), ("get_config, lane", lane.get_config),
                 ("get_config, zmq", zmq.get_config)]
        for _, do in kinds:
            do()
        print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} load {os.getloadavg()[0]:.2f}, n={args.n}")
        for gap_ms in (float(g) for g in args.gaps.split(",")):
            times: list[list[float]] = [[] for _ in kinds]
            for _ in range(args.n):
                for j, (_, do) in enumerate(kinds):
                    if gap_ms:
                        time.sleep(gap_ms / 1000)
                    t = time.perf_counter_ns()
                    do()
                    times[j].append((time.perf_counter_ns() - t) / 1000)
            raw50 = float(np.percentile(times[0], 50))
            for (name, _), ts in zip(kinds, times):
                p50, p90 = np.percentile(ts, 50), np.percentile(ts, 90)
                print(f"gap {gap_ms:g} ms  {name:<18} p50 {p50:7.1f} µs  p90 {p90:7.1f} µs  × raw p50 {p50 / raw50:.2f}")
        lane.close()
        zmq.close()
    finally:
        echo.kill()
        echo.wait()
        srv.terminate()
        srv.wait()
        shutil.rmtree(exe.parent, ignore_errors=True)


if __name__ == "__main__":
    main()

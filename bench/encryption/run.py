"""What encryption costs a transfer: upload and download of one float64 array,
plaintext against encrypted, each path beside its plaintext twin, in one run.

One command: ``.venv/bin/python bench/encryption/run.py [--mib 256] [--trials 5] [--rounds 3]``.
Servers on loopback, 2 workers each, one at a time, the paths interleaved
round by round (the VM's speed drifts; a path measured only at the start or
end of a run would carry the drift):

- plaintext and CurveZMQ over ZeroMQ frames only (``transport="frames"``,
  ``lane=False``): what CurveZMQ costs the socket itself;
- plaintext and TLS 1.3 over TCP bulk streams (``stream_network="tcp"``,
  ``shm=False``; an encrypted server's TCP streams are TLS, pinned over its
  CurveZMQ socket): what a remote client gets, encrypted or not;
- plaintext with its defaults (unix stream and shared memory), for context.

The ceilings, in the same run: one loopback TCP socket pair moving the same
bytes (Python, as bench/locales measures it), and AES-128-GCM on one core
(``openssl speed``, 16 KiB blocks: a TLS record) when the binary is there.
Warm (one transfer first); GiB/s of array bytes at the p50 and p90 (slower)
of the transfer times, over every round's trials.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import threading
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
    assert np.array_equal(a.to_ndarray(), data)  # warm, and bit for bit
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


def socket_ceiling(nbytes: int) -> float:
    """Seconds one loopback TCP socket pair takes to move nbytes."""
    srv = socket.create_server(("127.0.0.1", 0))
    buf = bytearray(4 << 20)

    def reader() -> None:
        conn, _ = srv.accept()
        got, view = 0, memoryview(buf)
        while got < nbytes:
            n = conn.recv_into(view)
            if n == 0:
                break
            got += n
        conn.close()

    t = threading.Thread(target=reader)
    t.start()
    out = socket.create_connection(srv.getsockname())
    chunk = memoryview(bytes(4 << 20))
    t0 = time.perf_counter()
    left = nbytes
    while left > 0:
        k = min(left, len(chunk))
        out.sendall(chunk[:k])
        left -= k
    out.close()
    t.join()
    srv.close()
    return time.perf_counter() - t0


def aes_gcm_one_core() -> str:
    """OpenSSL's AES-128-GCM rate on 16 KiB blocks, one core, or why not."""
    exe = shutil.which("openssl")
    if exe is None:
        return "no openssl binary"
    run = subprocess.run([exe, "speed", "-evp", "aes-128-gcm", "-bytes", "16384", "-seconds", "1"],
                         capture_output=True, text=True, timeout=60)
    last = run.stdout.strip().splitlines()[-1:] or ["?"]
    kb = last[0].split()[-1].rstrip("k")
    try:
        return f"{float(kb) * 1000 / 2**30:.2f} GiB/s"
    except ValueError:
        return f"unreadable: {last[0]!r}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    data = np.random.default_rng(1).random(args.mib * 2**20 // 8)
    print(f"# bench/encryption: {args.mib} MiB float64, loopback, 2 workers, warm, "
          f"{args.rounds} rounds x {args.trials} trials, {os.cpu_count()} CPUs")
    names = ["plaintext, ZeroMQ frames", "CurveZMQ, ZeroMQ frames", "plaintext, TCP bulk streams",
             "TLS 1.3, TCP bulk streams", "plaintext, default (unix stream, shm)"]
    times: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names}
    ceiling: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        key_file = Path(home) / "server_key"
        encrypted = ["--encrypt", "on", "--server-key-file", str(key_file)]
        for _ in range(args.rounds):
            for name in names:
                enc = name.startswith(("CurveZMQ", "TLS"))
                with ak.Server(workers=2, args=encrypted if enc else []) as srv:
                    kw: dict[str, object] = {}
                    if enc:
                        kw["server_key"] = Path(str(key_file) + ".pub").read_text().strip()
                    if "frames" in name:
                        kw.update(transport="frames", lane=False)
                    elif "TCP" in name:
                        kw.update(stream_network="tcp", shm=False)
                    up, down = measure(srv, data, args.trials, **kw)
                times[name][0].extend(up)
                times[name][1].extend(down)
            ceiling.extend(socket_ceiling(data.nbytes) for _ in range(args.trials))
    print(f"\nceilings: one loopback TCP socket pair {gib_s(data.nbytes, ceiling, 50):.2f} / "
          f"{gib_s(data.nbytes, ceiling, 90):.2f} GiB/s (p50 / p90); AES-128-GCM one core {aes_gcm_one_core()}")
    twin = {"CurveZMQ, ZeroMQ frames": "plaintext, ZeroMQ frames",
            "TLS 1.3, TCP bulk streams": "plaintext, TCP bulk streams"}
    print("\n| path | upload GiB/s p50 / p90 | download GiB/s p50 / p90 | upload / download vs its plaintext twin "
          "| upload / download vs socket |")
    print("|---|---|---|---|---|")
    sock = float(np.median(ceiling))
    for name in names:
        up, down = times[name]
        vs = "—"
        if name in twin:
            bu, bd = times[twin[name]]
            vs = f"{np.median(bu) / np.median(up):.2f} / {np.median(bd) / np.median(down):.2f}"
        print(f"| {name} | {gib_s(data.nbytes, up, 50):.2f} / {gib_s(data.nbytes, up, 90):.2f} | "
              f"{gib_s(data.nbytes, down, 50):.2f} / {gib_s(data.nbytes, down, 90):.2f} | {vs} | "
              f"{sock / np.median(up):.2f} / {sock / np.median(down):.2f} |")


if __name__ == "__main__":
    main()

"""Start-up restore of a --checkpoint: how long it takes, and how fast the
server answers get_config meanwhile (docs/io.md).

    .venv/bin/python bench/checkpoint/restore.py [--gib 4] [--arrays N] [--trials 3]
        [--dir /tmp/arktos-ckpt] [--server bin/arktos-server]

Builds a checkpoint of GIB GiB of float64 in ARRAYS arrays (default: GIB
arrays of 1 GiB) once (a server started on --dir, the arrays uploaded, a
clean shutdown), then, per trial, starts a
server on it and sends get_config from a raw ZeroMQ DEALER every 10 ms until
the reply no longer says "restoring": the time from the process start to
that reply, and the round trips' p50 and p90 while it restored. Each
trial's server is stopped with SIGTERM, which saves the checkpoint again.
The page cache is warm (the checkpoint was just written or read).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import zmq

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
import arktos as ak  # noqa: E402

BIN = REPO / "bin" / "arktos-server"
# msgpack {"v":1,"id":1,"token":"","cmd":"get_config","args":{}}
GET_CONFIG = b"\x85\xa1v\x01\xa2id\x01\xa5token\xa0\xa3cmd\xaaget_config\xa4args\x80"


def free_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"tcp://127.0.0.1:{port}"


def start(url: str, ckpt: Path, max_memory: str, server: Path = BIN) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(server), "--addr", url, "--max-memory", max_memory, "--checkpoint", str(ckpt),
                             "--log-level", "warn"], stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=int, default=4)
    ap.add_argument("--arrays", type=int, default=0, help="arrays the GIB GiB are split into (default GIB)")
    ap.add_argument("--server", default=str(BIN), help="the server binary of the trials")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/arktos-ckpt")
    args = ap.parse_args()
    ckpt = Path(args.dir)
    max_memory = f"{args.gib * 3}GiB"
    if not (ckpt / "manifest.json").exists():
        url = free_url()
        p = start(url, ckpt, max_memory)
        c = ak.Connection(url)
        arrays = args.arrays or args.gib
        keep = [c.array(np.random.default_rng(i).random((args.gib << 27) // arrays), name=f"a{i}")
                for i in range(arrays)]
        c.shutdown()
        p.wait()
        del keep
    for trial in range(args.trials):
        url = free_url()
        t0 = time.monotonic()
        p = start(url, ckpt, max_memory, Path(args.server))
        d = zmq.Context.instance().socket(zmq.DEALER)
        d.connect(url)
        lat: list[float] = []
        while True:
            t = time.perf_counter()
            d.send(GET_CONFIG)
            reply = d.recv()
            lat.append(time.perf_counter() - t)
            if b"restoring" not in reply:
                break
            time.sleep(0.01)
        ready = time.monotonic() - t0
        d.close(linger=0)
        c = ak.Connection(url)
        n = len(c.list_arrays())
        c.close()
        during = np.array(lat[1:-1] or lat) * 1e6  # the first waits for the server to bind
        print(f"trial {trial}: {Path(args.server).name}: {n} arrays ({args.gib} GiB) restored {ready:.2f} s after the start; "
              f"{len(lat) - 1} get_config answered while restoring, p50 {np.percentile(during, 50):.0f} us, "
              f"p90 {np.percentile(during, 90):.0f} us", flush=True)
        p.terminate()
        p.wait()
    if args.dir == "/tmp/arktos-ckpt":
        shutil.rmtree(ckpt, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The Python side of the transfer benchmark (driven by run.py).

For one array size it times, interleaved trial by trial: memcpy (np.copyto),
the raw TCP and unix socket ceilings against benchserver (receiving into a
reused, pre-faulted buffer), Arktos ``ak.array(x)`` and ``pdarray.to_ndarray()``
over each transport, and Arrow Flight DoPut/DoGet with pyarrow.flight
(against the arrow-go server in benchserver). Each timed transfer is one
record, as the Go side prints them.
"""

from __future__ import annotations

import resource
import socket
import struct
import threading
import time
from typing import Any, Callable

import numpy as np

import arktos as ak
from arktos.core._session import DEFAULT_STRIPES
from arktos.core._protocol import stripe_bounds

Timed = Callable[[], tuple[float, int]]  # seconds, bytes the server copied


def minflt(pid: int) -> int:
    """Minor page faults of `pid` so far (0: this process)."""
    if pid == 0:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return int(fields[7])
    except OSError:
        return 0


def prefaulted(nbytes: int) -> np.ndarray:
    buf = np.empty(nbytes, np.uint8)
    buf[::4096] = 1
    return buf


def raw_methods(family: int, addr: Any, src: np.ndarray, into: np.ndarray) -> tuple[Timed, Timed]:
    """Raw stream up and down; downloads land in `into` (pre-faulted, reused)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.connect(addr)
    if family == socket.AF_INET:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    body = memoryview(src).cast("B")
    dst = memoryview(into).cast("B")

    def up() -> tuple[float, int]:
        t = time.perf_counter()
        sock.sendall(struct.pack("<cQ", b"U", len(body)))
        sock.sendall(body)
        if sock.recv(1) != b"\x01":
            raise RuntimeError("raw upload not acknowledged")
        return time.perf_counter() - t, 0

    def down() -> tuple[float, int]:
        t = time.perf_counter()
        sock.sendall(struct.pack("<cQ", b"D", len(body)))
        got = 0
        while got < len(dst):
            got += sock.recv_into(dst[got:])
        return time.perf_counter() - t, 0

    return up, down


def raw_striped_methods(addr: Any, k: int, src: np.ndarray, into: np.ndarray) -> tuple[Timed, Timed]:
    """Raw TCP up and down over k connections at once, stripe i
    (stripe_bounds) on connection i, as a striped Arktos transfer splits
    its bytes (the part on connection 0 in this thread, the others on a
    thread each): the ceiling of striped transfers."""
    body, dst = memoryview(src).cast("B"), memoryview(into).cast("B")
    parts = []
    for i in range(k):
        lo, hi = stripe_bounds(i, k, len(body))
        parts.append(raw_methods(socket.AF_INET, addr, np.frombuffer(body[lo:hi], np.uint8),
                                 np.frombuffer(dst[lo:hi], np.uint8)))

    def all_of(which: int) -> tuple[float, int]:
        t = time.perf_counter()
        threads = [threading.Thread(target=p[which]) for p in parts[1:]]
        for th in threads:
            th.start()
        parts[0][which]()
        for th in threads:
            th.join()
        return time.perf_counter() - t, 0

    return (lambda: all_of(0)), (lambda: all_of(1))


def server_copied(conn: ak.Connection) -> int:
    st = conn._request("stats")[0]
    return int(st["bytes_copied_in"]) + int(st["bytes_copied_out"])


def arktos_methods(conn: ak.Connection, src: np.ndarray,
                   held: dict[str, Any]) -> tuple[Timed, Timed, Timed | None]:
    """Upload, download and (unix streams) view; the uploaded array lives in
    `held` until the next upload, and the caller deletes what is left."""

    def up() -> tuple[float, int]:
        if "a" in held:
            held.pop("a").delete()
        c0 = server_copied(conn)
        t = time.perf_counter()
        held["a"] = conn.array(src)
        d = time.perf_counter() - t
        return d, server_copied(conn) - c0

    def down() -> tuple[float, int]:
        c0 = server_copied(conn)
        t = time.perf_counter()
        out = held["a"].to_ndarray()
        d = time.perf_counter() - t
        if out.size != src.size:
            raise RuntimeError("short download")
        return d, server_copied(conn) - c0

    def view() -> tuple[float, int]:
        # Ready once mapped: its pages are mapped in as they are first read,
        # which this row does not time.
        c0 = server_copied(conn)
        t = time.perf_counter()
        out = held["a"].to_ndarray(copy=False)
        d = time.perf_counter() - t
        if out.size != src.size:
            raise RuntimeError("short view")
        return d, server_copied(conn) - c0

    return up, down, (view if conn.shm and conn.stream_network == "unix" else None)


def flight_methods(addr: str, src: np.ndarray) -> tuple[Timed, Timed]:
    import pyarrow as pa
    import pyarrow.flight as fl

    client = fl.FlightClient(f"grpc://{addr}")
    batch_rows = (16 << 20) // src.itemsize  # the frame size Arktos uses
    schema = pa.schema([("x", pa.from_numpy_dtype(src.dtype))])

    def up() -> tuple[float, int]:
        t = time.perf_counter()
        writer, reader = client.do_put(fl.FlightDescriptor.for_path("x"), schema)
        for lo in range(0, max(src.size, 1), batch_rows):
            # pa.array over a numpy slice wraps its buffer: no copy.
            writer.write_batch(pa.record_batch([pa.array(src[lo:lo + batch_rows])], schema=schema))
        writer.done_writing()
        reader.read()
        writer.close()
        return time.perf_counter() - t, 0

    def down() -> tuple[float, int]:
        t = time.perf_counter()
        table = client.do_get(fl.Ticket(b"x")).read_all()
        # The client holds the array once it is one numpy array, as
        # to_ndarray returns it (several batches are concatenated).
        out = table.column(0).to_numpy()
        d = time.perf_counter() - t
        if out.size != src.size:
            raise RuntimeError("short flight download")
        return d, 0

    return up, down


def run(*, url: str, arktos_pid: int, bench_pid: int, raw_tcp: str, raw_unix: str, flight: str,
        dtype: str, nbytes: int, trials: int, transports: list[str]) -> list[dict[str, Any]]:
    ak.config.progress = False  # no progress bars while timing
    rng = np.random.default_rng(1)
    n = nbytes // 8
    src = rng.integers(-2**62, 2**62, n) if dtype == "int64" else rng.standard_normal(n)
    dst = prefaulted(nbytes).view(src.dtype)

    def memcpy() -> tuple[float, int]:
        t = time.perf_counter()
        np.copyto(dst, src)
        return time.perf_counter() - t, 0

    host, _, port = raw_tcp.rpartition(":")
    methods: list[tuple[str, str, Timed | None, Timed | None, Timed | None, int]] = [
        ("memcpy", "memory", memcpy, None, None, -1),
        ("raw", "tcp", *raw_methods(socket.AF_INET, (host, int(port)), src, dst), None, bench_pid),
        ("raw", f"tcp-x{DEFAULT_STRIPES}", *raw_striped_methods((host, int(port)), DEFAULT_STRIPES, src, dst), None,
         bench_pid),
        ("raw", "unix", *raw_methods(socket.AF_UNIX, raw_unix, src, dst), None, bench_pid),
    ]
    conns = []
    helds: list[dict[str, Any]] = []
    for tr in transports:
        # shm: the default on this host (uploads through a lent shared-memory
        # segment, views map the array's segment); the stream rows without it.
        opts: dict[str, Any] = ({"transport": "frames"} if tr == "frames" else
                                {"stream_network": "unix"} if tr == "shm" else
                                {"transport": "stream", "stream_network": tr.removeprefix("stream-"), "shm": False})
        conn = ak.Connection(url, **opts)
        conns.append(conn)
        helds.append({})
        methods.append(("arktos", tr, *arktos_methods(conn, src, helds[-1]), arktos_pid))
    methods.append(("flight", "grpc-tcp", *flight_methods(flight, src), None, bench_pid))

    records = []
    for trial in range(trials + 2):
        phase = "cold" if trial == 0 else "warmup" if trial == 1 else "warm"
        for name, transport, up, down, view, pid in methods:
            for direction, f in (("up", up), ("down", down), ("down-view", view)):
                if f is None:
                    continue
                cf, sf = minflt(0), minflt(pid) if pid > 0 else 0
                seconds, copied = f()
                records.append({
                    "lang": "python", "method": name, "dir": direction, "transport": transport,
                    "dtype": dtype, "bytes": nbytes, "trial": trial, "phase": phase, "seconds": seconds,
                    "client_minflt": minflt(0) - cf,
                    "server_minflt": (minflt(pid) - sf) if pid > 0 else 0, "server_copied": copied,
                })
    for held in helds:  # a closed connection cannot free what it still holds
        if "a" in held:
            held.pop("a").delete()
    for conn in conns:
        conn.close()
    return records


def latency(url: str, n: int, echo_url: str | None = None, block: int = 100) -> list[dict[str, Any]]:
    """p50/p90 of n small requests of each kind from Python, in microseconds:
    get_config, ``a.sum()`` of a 1000-element array, ``ak.array`` and
    ``to_ndarray()`` of 100 int64, over the request
    lane (the default) and over ZeroMQ (``lane=False``), and a raw ZeroMQ
    echo of the same header (pyzmq, poll then receive: the ZeroMQ floor),
    interleaved in runs of `block` requests of one kind, in a rotating
    order (block 1: one by one)."""
    import zmq

    conn = ak.Connection(url)
    zconn = ak.Connection(url, lane=False)
    a = conn.array(np.zeros(1000, np.int64))
    za = zconn.attach(a.name)
    kinds: list[tuple[str, Any]] = [("get_config (lane)", lambda: conn._request("get_config")),
                                    ("reduce sum (1000 int64, lane)", a.sum),
                                    ("get_config (zmq)", lambda: zconn._request("get_config"))]
    kinds.append(("reduce sum (1000 int64, zmq)", za.sum))
    small = np.arange(100, dtype=np.int64)  # 800 bytes up and down
    sa = conn.array(small)
    made: list[Any] = [sa]  # deleted after the timing
    for label, c, arr in (("lane", conn, sa), ("zmq", zconn, zconn.attach(sa.name))):
        kinds.append((f"upload 100 int64 ({label})", lambda c=c: made.append(c.array(small))))
        kinds.append((f"download 100 int64 ({label})", arr.to_ndarray))
    echo = None
    if echo_url:
        echo = zmq.Context.instance().socket(zmq.DEALER)
        echo.connect(echo_url)
        poller = zmq.Poller()
        poller.register(echo, zmq.POLLIN)
        header = b"\x85\xa1v\x01\xa2id\x01\xa5token\xa0\xa3cmd\xaaget_config\xa4args\x80"

        def echo_once() -> None:
            echo.send_multipart([header], copy=False)
            poller.poll(1000)
            echo.recv_multipart(copy=False)
        kinds.append(("raw zmq echo", echo_once))
    times: list[list[float]] = [[] for _ in kinds]
    block = max(1, min(block, n))
    n -= n % block
    for i in range(n // block):
        for k in range(len(kinds)):
            k = (k + i) % len(kinds)  # rotate: none always follows the same one
            do = kinds[k][1]
            for _ in range(block):
                t = time.perf_counter()
                do()
                times[k].append((time.perf_counter() - t) * 1e6)
    for m in made:
        m.delete()
    a.delete()
    conn.close()
    zconn.close()
    if echo is not None:
        echo.close(0)
    out = []
    for (name, _), xs in zip(kinds, times):
        xs.sort()
        out.append({"kind": "latency", "lang": "python", "request": name, "n": n, "block": block,
                    "p50_us": xs[n // 2], "p90_us": xs[n * 9 // 10]})
    return out

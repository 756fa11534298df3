"""The byte movers under a Session: request lanes, bulk streams, shared-memory segments and socket helpers."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import itertools
import math
import mmap
import os
import select
import signal
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, cast

import numpy as np
import zmq
from numpy.typing import NDArray

from ._bufpool import POOL
from ._dtypes import from_wire
from ._progress import SEND_CHUNK, transfer_bar
from ._protocol import decode_header, n_frames, stripe_bounds

# How often fast paths were taken (tests check them): "shm_copies_out", the
# private downloads read out of a segment; "shm_mapped_writes", the uploads
# copied into a lent segment through a mapping (a pooled segment, whose pages
# exist); "shm_map_failures", the views
# streamed because their segment could not be mapped here; "lane_direct", the
# downloads read from the lane straight into their array (_Placement);
# "lanes_closed_by_peer" and "streams_closed_by_peer", the idle lanes and the
# bulk streams found closed by their (restarted) server and replaced before
# a request went out on them; "restore_retries", the requests, downloads and
# uploads sent again after a RESTORING refusal (Go's RestoreRetries);
# "connections_lost", the requests failed with ConnectionLostError;
# "links_tls", the streams and lanes opened with TLS (_link_tls), and
# "tls_fills", their reads from the kernel (each up to _TLS_READ bytes, not a
# 16 KiB record).
path_counts: dict[str, int] = {"shm_copies_out": 0, "shm_mapped_writes": 0, "shm_map_failures": 0, "lane_direct": 0,
                               "lanes_closed_by_peer": 0, "streams_closed_by_peer": 0, "restore_retries": 0,
                               "connections_lost": 0, "locale_direct_downloads": 0, "locale_direct_uploads": 0,
                               "links_tls": 0, "tls_fills": 0}


#: Starts a bulk stream's handshake (docs/protocol.md, "Bulk streams").
STREAM_MAGIC = b"ARKTOS-STREAM-1\n"


# A request lane (docs/protocol.md, "Request lanes"): same length as STREAM_MAGIC.
LANE_MAGIC = b"ARKTOS-LANE-1\n\x00\x00"


class _TLSSocket:
    """A TLS 1.3 client connection over a socket, through OpenSSL's memory
    BIOs rather than ssl.SSLSocket: records are read from the kernel up to
    _TLS_READ bytes per call and written _TLS_WRITE per call, where
    SSLSocket makes one or two system calls per 16 KiB record (and the
    kernel an ACK per read): on this VM that was half a download's time.
    It has the socket methods the lanes and streams use (sendall,
    recv_into, recv, makefile, fileno, settimeout, shutdown, close); one
    thread reads and one writes at a time, as on a plain socket."""

    def __init__(self, sock: socket.socket, ctx: ssl.SSLContext) -> None:
        self.sock = sock
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._obj = ctx.wrap_bio(self._in, self._out, server_side=False)
        self._raw = bytearray(_TLS_READ)
        while True:
            try:
                self._obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    raise ConnectionError("the server closed the bulk stream during its TLS handshake") from None
        self._flush()

    def _flush(self) -> None:
        data = self._out.read()
        if data:
            self.sock.sendall(data)

    def _fill(self) -> bool:
        """Read what the kernel has (at most _TLS_READ) into the incoming
        BIO; False at the end of the connection."""
        n = self.sock.recv_into(self._raw)
        path_counts["tls_fills"] += 1
        if n == 0:
            self._in.write_eof()
            return False
        self._in.write(memoryview(self._raw)[:n])
        return True

    def pending(self) -> int:
        """Bytes read from the socket but not yet returned (decrypted or not)."""
        return self._obj.pending() + self._in.pending

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        view = memoryview(buffer).cast("B")
        n = nbytes or len(view)
        if n == 0:
            return 0
        while True:
            try:
                got = cast(int, self._obj.read(n, view))  # (an int when given a buffer)
            except ssl.SSLWantReadError:
                if not self._fill():
                    return 0
                continue
            except ssl.SSLZeroReturnError:
                return 0
            if self._out.pending:  # (a post-handshake message to answer)
                self._flush()
            return got

    def recv(self, n: int) -> bytes:
        buf = bytearray(n)
        return bytes(buf[:self.recv_into(buf, n)])

    def sendall(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        lo = 0
        while lo < len(view):
            lo += self._obj.write(view[lo:lo + _TLS_WRITE])
            self._flush()

    def makefile(self, mode: str = "rb", buffering: int = -1) -> io.BufferedReader:
        assert mode == "rb"
        return io.BufferedReader(_TLSReader(self), buffering if buffering > 0 else io.DEFAULT_BUFFER_SIZE)

    def getpeercert(self) -> bytes:
        return self._obj.getpeercert(binary_form=True) or b""

    def fileno(self) -> int:
        return self.sock.fileno()

    def settimeout(self, timeout: float | None) -> None:
        self.sock.settimeout(timeout)

    def shutdown(self, how: int) -> None:
        self.sock.shutdown(how)

    def close(self) -> None:
        self.sock.close()


class _TLSReader(io.RawIOBase):
    """A _TLSSocket's reads, for io.BufferedReader (a lane's replies)."""

    def __init__(self, tls: _TLSSocket) -> None:
        self.tls = tls

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        return self.tls.recv_into(b)


#: A TLS link's reads from the kernel and writes to it, at most.
_TLS_READ, _TLS_WRITE = 256 << 10, 1 << 20

#: What a lane or bulk stream runs on: a plain socket or a TLS link.
LinkSocket = socket.socket | _TLSSocket


def _link_tls(sock: socket.socket, pin: bytes) -> _TLSSocket:
    """TLS 1.3 on a TCP bulk stream or lane of an encrypted server
    (transfer/tlslink.go): its certificate is pinned to `pin`, the SHA-256
    fingerprint that open_stream sent over the CurveZMQ socket, so no CA or
    host name is checked; the handshake still proves the server holds the
    certificate's key. A certificate that is not the pinned one closes the
    socket before the ticket or any data goes out."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # replaced by the pin
    try:
        tls = _TLSSocket(sock, ctx)
    except BaseException:
        sock.close()
        raise
    if not hmac.compare_digest(hashlib.sha256(tls.getpeercert()).digest(), pin):
        tls.close()
        raise ConnectionError("the bulk stream's TLS certificate is not the one the server named over its encrypted "
                              "socket (another process answers its stream port?); nothing was sent on it")
    path_counts["links_tls"] += 1
    return tls


class _Zstd:
    """zstd frames (python-zstandard): each payload frame one zstd frame that
    records its content size, as the server writes and expects them."""

    def __init__(self) -> None:
        try:
            import zstandard
        except ImportError:
            raise ImportError("compression='zstd' needs the zstandard package: "
                              "pip install 'arktos[zstd]'") from None
        self._compressor = zstandard.ZstdCompressor(level=1, write_content_size=True)
        self._decompressor = zstandard.ZstdDecompressor()

    def compress(self, frames: Sequence[NDArray[Any]]) -> list[bytes]:
        return [self._compressor.compress(frame.data.cast("B")) for frame in frames]

    def decompress_into(self, frames: Sequence[Any], out: NDArray[Any], frame_size: int) -> None:
        dst = out.view(np.uint8)
        expected = n_frames(dst.size, frame_size)
        if len(frames) != expected:
            raise RuntimeError(f"server sent {len(frames)} compressed frames, the protocol says {expected}")
        for index, frame in enumerate(frames):
            lo = index * frame_size
            want = min(frame_size, dst.size - lo)
            raw = self._decompressor.decompress(frame, max_output_size=want)
            if len(raw) != want:
                raise RuntimeError(f"compressed frame {index} holds {len(raw)} bytes, want {want}")
            dst[lo:lo + want] = np.frombuffer(raw, np.uint8)


LANE_SPIN_DEFAULT = 200e-6


LANE_SPIN_MAX = 0.1


# A poll step (a poll(0) and a yield) that took longer than this was off the
# CPU while another thread ran; the following waits skip polling for 4, 8,
# ... up to LANE_SPIN_BACKOFF_MAX replies, a poll that runs undisturbed
# halving that (transfer/spin.go says why).
LANE_SPIN_BUSY_GAP = 50e-6


LANE_SPIN_BACKOFF_MAX = 256


_DURATION_UNITS_NS = {"ns": 1, "us": 1000, "\u00b5s": 1000, "\u03bcs": 1000, "ms": 10**6, "s": 10**9,
                     "m": 60 * 10**9, "h": 3600 * 10**9}


_ASCII_DIGITS = "0123456789"


def _parse_duration_ns(text: str) -> int | None:
    """A duration as Go's time.ParseDuration reads it ("200us", "1ms500us",
    "0.5ms", "0"), in nanoseconds, step for step (integer nanoseconds, a
    term's fraction truncated, its overflow checks); None where Go errs."""
    s, neg = text, False
    if s[:1] in ("-", "+"):
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        return None
    total = 0
    while s:
        if not (s[0] == "." or s[0] in _ASCII_DIGITS):
            return None
        i = 0
        v = 0
        while i < len(s) and s[i] in _ASCII_DIGITS:  # leadingInt
            if v > (1 << 63) // 10:
                return None
            v = v * 10 + ord(s[i]) - 48
            if v > 1 << 63:
                return None
            i += 1
        pre, s = i > 0, s[i:]
        f, scale, post = 0, 1.0, False
        if s[:1] == ".":
            s, i, overflow = s[1:], 0, False
            while i < len(s) and s[i] in _ASCII_DIGITS:  # leadingFraction
                if not overflow:
                    if f > ((1 << 63) - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + ord(s[i]) - 48
                        if y > 1 << 63:
                            overflow = True
                        else:
                            f, scale = y, scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            return None
        i = 0
        while i < len(s) and not (s[i] == "." or s[i] in _ASCII_DIGITS):
            i += 1
        unit = _DURATION_UNITS_NS.get(s[:i]) if i else None
        if unit is None:
            return None
        s = s[i:]
        if v > (1 << 63) // unit:
            return None
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > 1 << 63:
                return None
        total += v
        if total > 1 << 63:
            return None
    if neg:
        return -total
    return total if total <= (1 << 63) - 1 else None


_yield_cpu: Callable[[], None] = getattr(os, "sched_yield", lambda: None)


_POLLIN: int = getattr(select, "POLLIN", 1)


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, as Go's NumCPU)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _LaneFrame:
    """A payload frame read from a lane, shaped like a zmq.Frame (.buffer)."""

    __slots__ = ("buffer",)

    def __init__(self, data: bytes | memoryview) -> None:
        self.buffer = memoryview(data)


class _Placement:
    """Where _Lane.recv reads a reply's payload frames: `make` gets the
    reply's header and returns the array they fill (or None: frames of
    their own); `out` is that array and `placed` how many of its bytes were
    read into it, one frame after another, straight from the socket."""

    __slots__ = ("make", "out", "placed")

    def __init__(self, make: Callable[[bytes], NDArray[Any] | None]) -> None:
        self.make = make
        self.out: NDArray[Any] | None = None
        self.placed = 0


def _place_download(header: bytes) -> NDArray[Any] | None:
    """The array a download's inline lane reply fills (_Placement.make),
    from the reply's header; None for an error, bytes sent elsewhere or
    compressed, or a description that does not add up (join_frames then
    reports it)."""
    try:
        reply = decode_header(header)
        result = reply.get("result")
        if reply.get("status") != 0 or not isinstance(result, dict) or result.get("inline") is False:
            return None
        if "stream" in result or result.get("shm") or result.get("compression"):
            return None
        dtype, size = from_wire(result["dtype"]), int(result["size"])
        if size <= 0 or size * dtype.itemsize != int(result["nbytes"]):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    return POOL.empty(size, dtype)


class _PortUnreachable(ConnectionError):
    """A connect to the server's stream port timed out (a firewall that
    passes only the ZeroMQ port, most likely): that does not pass by
    itself, so the connection opens no more streams or lanes and sends
    everything over ZeroMQ (Go's errStreamPortUnreachable)."""


class ConnectionLostError(ConnectionError):
    """The ZeroMQ connection dropped while a request waited for its reply:
    the server stopped, crashed or restarted, or answered no heartbeat
    within the connection's ``heartbeat`` seconds. Whether the request ran
    is not known; the next request connects again (Go's
    client.ErrConnectionLost)."""


def _keepalive(sock: socket.socket, heartbeat: float) -> None:
    """A TCP lane or stream whose server's host vanished fails within about
    ``heartbeat`` seconds, as the ZeroMQ socket's heartbeats do: keep-alive
    probes from a quarter of it on an idle connection (a lane waiting for a
    reply is one), four unanswered ones drop it, and TCP_USER_TIMEOUT bounds
    bytes sent and never acknowledged. Without, a blocked read waited for
    ever (the kernel's defaults: two hours, then 11 minutes). Go's client
    does the same (keepAlive)."""
    if heartbeat <= 0:
        return
    step = max(1, math.ceil(heartbeat / 4))  # (the kernel counts whole seconds)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", step), ("TCP_KEEPINTVL", step), ("TCP_KEEPCNT", 4),
                        ("TCP_USER_TIMEOUT", math.ceil(heartbeat * 1000))):
        if hasattr(socket, name):  # (Linux has all four)
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


def _close_sockets(sock: zmq.Socket[bytes], monitor: zmq.Socket[bytes]) -> None:
    # The monitor is stopped first. libzmq sends its events blocking, from
    # its I/O thread: an event for a socket whose monitor peer is gone (the
    # server dropping as the connection closes) blocked that thread for
    # good, and with it every ZeroMQ connection of the process.
    try:
        sock.disable_monitor()
    except zmq.ZMQError:
        pass
    monitor.close(0)
    sock.close(0)


_MONITOR_IDS = itertools.count(1)


def _send_whole(sock: zmq.Socket[bytes], parts: list[Any]) -> None:
    """send_multipart that a Ctrl-C cannot cut short: pyzmq sends frame by
    frame and checks for signals between them, and a message left half sent
    was completed by the next request's frames (the server answered both
    as one, under the old id, and the next request timed out). In the main
    thread, with a Python handler for SIGINT, the interrupt is held until
    the message is whole, then raised."""
    if len(parts) < 2 or threading.current_thread() is not threading.main_thread():
        sock.send_multipart(parts, copy=False)  # (a signal interrupts only the main thread)
        return
    old = signal.getsignal(signal.SIGINT)
    if not callable(old):
        sock.send_multipart(parts, copy=False)
        return
    held: list[Any] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append((signum, frame)))
    try:
        sock.send_multipart(parts, copy=False)
    finally:
        signal.signal(signal.SIGINT, old)
    if held:
        old(*held[0])  # the default handler raises KeyboardInterrupt


def _monitor(sock: zmq.Socket[bytes]) -> zmq.Socket[bytes]:
    """A PAIR socket receiving sock's DISCONNECTED and HANDSHAKE_FAILED events. Its receive
    queue has no limit: libzmq's sending side blocks (its I/O thread) when
    the queue is full, and events are tens of bytes, read at each request
    on ZeroMQ. (pyzmq's get_monitor_socket names the endpoint after the
    file descriptor, which the next socket may reuse before libzmq has
    reaped the last.)"""
    addr = f"inproc://arktos-monitor-{os.getpid()}-{next(_MONITOR_IDS)}"
    sock.monitor(addr, zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                 | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    monitor: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.PAIR)
    monitor.setsockopt(zmq.LINGER, 0)
    monitor.setsockopt(zmq.RCVHWM, 0)
    monitor.connect(addr)
    return monitor


class _RetryAfter:
    """Spaces out opening a lane or stream after a failure that may pass
    (the server at its --max-streams, a failed connect): a second at first,
    doubling to a minute while it fails (Go's client.retryAfter). Each try
    costs an open_stream round trip (and, for a lane, a connect)."""

    FIRST, MOST = 1.0, 60.0

    def __init__(self) -> None:
        self.at = 0.0
        self.wait = 0.0

    def failed(self) -> None:
        self.wait = min(max(2 * self.wait, self.FIRST), self.MOST)
        self.at = time.monotonic() + self.wait

    def early(self) -> bool:
        return time.monotonic() < self.at


class _Lane:
    """A request lane: a plain socket (opened like a bulk stream, with
    LANE_MAGIC) that carries whole requests and replies, one at a time, so a
    small request's round trip skips libzmq's I/O threads on both sides.
    Messages are the frame count then each frame's length (uint32,
    little-endian) and bytes; frame 0 is the msgpack header."""

    def __init__(self, sock: LinkSocket, network: str, spin: float = 0.0) -> None:
        self.sock = sock
        self.network = network
        self.rfile = cast(io.BufferedReader, sock.makefile("rb", buffering=1 << 16))
        # How long readable() polls before it blocks (Connection's lane_spin;
        # not with one CPU, where it would only keep the server from
        # running), how many replies came while it polled and how many polls
        # found the CPU taken (tests check the paths), and the back-off after
        # those (transfer/spin.go).
        self.spin = spin if _usable_cpus() >= 2 else 0.0
        self.spin_hits = 0
        self.spin_busy = 0
        self.spin_polls = 0  # waits that found nothing at once and polled
        self._skip = 0
        self._backoff = 0
        # poll, not select.select, which fails on descriptors past 1023;
        # (Windows) a select-shaped stand-in where there is no poll.
        self._poll: Any
        if hasattr(select, "poll"):
            self._poll = select.poll()
            self._poll.register(sock, select.POLLIN)
        else:
            self._poll = _SelectPoll(sock)
        # The id of a request given up on (Ctrl-C, timeout) whose reply is
        # still to come on this lane: until it is read, requests go to ZeroMQ.
        self.owed: int | None = None
        self.used = 0.0  # time.monotonic() when its last reply was read
        self.sending = False  # inside send(): a message may be half written

    def send(self, header: bytes, payload: Sequence[Any] = ()) -> None:
        """Send one request; `sending` stays True if it is cut short."""
        self.sending = True
        if not len(payload):
            self.sock.sendall(struct.pack("<II", 1, len(header)) + header)
            self.sending = False
            return
        # The frames go from the caller's buffers into the kernel (sendmsg),
        # each after its length.
        views: list[memoryview] = [memoryview(struct.pack("<II", 1 + len(payload), len(header)) + header)]
        for f in payload:
            v = memoryview(f).cast("B")
            views += [memoryview(struct.pack("<I", len(v))), v]
        views = [v for v in views if len(v)]
        if isinstance(self.sock, _TLSSocket):  # (no sendmsg): small frames coalesced, one record each
            pending: list[memoryview] = []
            for v in views:
                if len(v) < 1 << 16:
                    pending.append(v)
                    continue
                if pending:
                    self.sock.sendall(b"".join(pending))
                    pending = []
                self.sock.sendall(v)  # (a large frame from its own buffer)
            if pending:
                self.sock.sendall(b"".join(pending))
            self.sending = False
            return
        while views:
            sent = self.sock.sendmsg(views[:512])
            while sent:
                if sent >= len(views[0]):
                    sent -= len(views.pop(0))
                else:
                    views[0], sent = views[0][sent:], 0
        self.sending = False

    def recv(self, place: _Placement | None = None) -> list[bytes | memoryview]:
        """One whole message (blocking); ConnectionError if the lane ends.
        With `place`, payload frames are read into place.make's array while
        they fit (memoryviews of it), the rest into bytes of their own."""
        head = self.rfile.read(4)
        if len(head) != 4:
            raise ConnectionError("the request lane was closed by the server")
        (n,) = struct.unpack("<I", head)
        frames: list[bytes | memoryview] = []
        buf: memoryview | None = None
        for i in range(n):
            size_b = self.rfile.read(4)
            if len(size_b) != 4:
                raise ConnectionError("the request lane was closed inside a reply")
            (size,) = struct.unpack("<I", size_b)
            if buf is not None and place is not None and size <= len(buf) - place.placed:
                dst = buf[place.placed:place.placed + size]
                if self.rfile.readinto(dst) != size:
                    raise ConnectionError("the request lane was closed inside a reply")
                place.placed += size
                frames.append(dst)
                continue
            data = self.rfile.read(size)
            if len(data) != size:
                raise ConnectionError("the request lane was closed inside a reply")
            frames.append(data)
            if i == 0 and place is not None and n > 1:
                place.out = place.make(data)
                if place.out is not None:
                    buf = place.out.reshape(-1).view(np.uint8).data
        if not frames:
            raise ConnectionError("the server sent an empty message on the request lane")
        self.used = time.monotonic()
        return frames

    def closed_by_peer(self) -> bool:
        """Whether the server closed the lane (or sent bytes no request asked
        for), without blocking: nothing is due between requests."""
        return bool(self._poll.poll(0))

    def readable(self, wait: float | None) -> bool:
        """Whether a reply has started to arrive, waiting at most `wait` s
        (None: forever). Each reply is read whole, so nothing is left in
        rfile's buffer between replies and the socket tells the truth.

        With spin set it first polls without blocking, for up to spin (never
        past wait): on a small VM a process blocked in a wait is woken some
        100-170 µs after the reply lands, where one that polls sees it at
        once. A poll step that comes back late (another thread had the CPU)
        ends the poll, and the next waits block at once (transfer/spin.go)."""
        poll = self._poll.poll
        if isinstance(self.sock, _TLSSocket) and self.sock.pending():
            return True  # (decrypted bytes the socket's poll cannot see)
        if wait is not None and wait < 0:
            wait = 0.0
        if self.spin and wait != 0:
            if self._skip:
                self._skip -= 1
            else:
                t0 = last = time.perf_counter()
                end = t0 + (self.spin if wait is None else min(self.spin, wait))
                tries, busy = 0, False
                while True:
                    events = poll(0)
                    ready = bool(events)
                    now = time.perf_counter()
                    if tries and now - last > LANE_SPIN_BUSY_GAP:
                        busy = True  # (a reply found after such a step may have waited)
                        break
                    if ready:
                        if tries:
                            self.spin_polls += 1
                            self._backoff //= 2  # polled undisturbed
                            if events[0][1] == _POLLIN:  # bytes, not a hang-up
                                self.spin_hits += 1
                        return True
                    if now >= end:
                        if tries:
                            self.spin_polls += 1
                        self._backoff //= 2
                        break
                    tries += 1
                    last = now
                    _yield_cpu()  # to any other thread that wants it (the server, a worker)
                if busy:
                    self.spin_polls += 1
                    self.spin_busy += 1
                    self._backoff = min(max(2 * self._backoff, 4), LANE_SPIN_BACKOFF_MAX)
                    self._skip = self._backoff
                    if ready:
                        return True
                if wait is not None:
                    wait = max(0.0, wait - (time.perf_counter() - t0))
        return bool(poll(None if wait is None else wait * 1000.0))

    def close(self) -> None:
        try:
            self.rfile.close()
        finally:
            self.sock.close()


def _readable_now(sock: LinkSocket) -> bool:
    """Whether sock has bytes or a close to read, without blocking."""
    if hasattr(select, "poll"):
        p = select.poll()
        p.register(sock, select.POLLIN)
        return bool(p.poll(0))
    return bool(_SelectPoll(sock).poll(0))


class _SelectPoll:
    """select.poll's shape over select.select, where there is no poll."""

    def __init__(self, sock: LinkSocket) -> None:
        self.sock = sock

    def poll(self, timeout_ms: float | None = None) -> list[tuple[int, int]]:
        r, _, _ = select.select([self.sock], [], [], None if timeout_ms is None else timeout_ms / 1000.0)
        return [(self.sock.fileno(), _POLLIN)] if r else []


class _MapFailed(OSError):
    """A received shared-memory segment could not be mapped here."""


def _send_all(sock: LinkSocket, part: memoryview) -> int:
    """Send all of part (a stripe's chunk); how many bytes that was."""
    sock.sendall(part)
    return len(part)


class _Stream:
    """An open bulk stream: a plain socket beside the ZeroMQ one that carries
    array bytes only, straight between the kernel and the arrays' buffers."""

    def __init__(self, stream_id: int, sock: LinkSocket, network: str) -> None:
        self.id = stream_id
        self.sock = sock
        self.network = network
        # More TCP streams a large transfer is striped over (id, socket),
        # opened when one first needs them (Connection._stripes_for).
        self.stripes: list[tuple[int, LinkSocket]] = []

    def close(self) -> None:
        """Close the stream and its stripes; a thread blocked on one of them
        (a striped transfer's) returns at once."""
        for sock in [self.sock] + [s for _, s in self.stripes]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _striped(self, view: memoryview, what: str, move: Callable[[LinkSocket, memoryview], int]) -> None:
        """Move `view` over the stream and its stripes at once, stripe i
        (stripe_bounds) over socket i, each on a thread (the GIL is let go
        in the socket calls) but the first, which this thread moves. `move`
        moves at most a chunk and returns how many bytes it moved. Any
        failure closes every socket, so the others end too; the first
        error is raised."""
        socks = [self.sock] + [s for _, s in self.stripes]
        errors: list[BaseException] = []
        bar = transfer_bar(len(view), what)
        bar_lock = threading.Lock()

        def run(i: int) -> None:
            lo, hi = stripe_bounds(i, len(socks), len(view))
            try:
                while lo < hi:
                    n = move(socks[i], view[lo:min(hi, lo + SEND_CHUNK)])
                    if n == 0:
                        raise ConnectionError(f"the server closed bulk stream stripe {i} with {hi - lo} bytes to go")
                    lo += n
                    if bar is not None:
                        with bar_lock:
                            bar.update(n)
            except BaseException as err:  # (Ctrl-C, in this thread)
                errors.append(err)
                self.close()

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(1, len(socks))]
        try:
            for t in threads:
                t.start()
            run(0)
            for t in threads:
                t.join()
        except BaseException:  # Ctrl-C while joining
            self.close()
            raise
        finally:
            if bar is not None:
                bar.close()
        if errors:
            raise errors[0]

    def send(self, data: NDArray[Any], striped: bool = False) -> None:
        view = data.data.cast("B")
        if striped and self.stripes:
            self._striped(view, "arktos upload", _send_all)
            return
        bar = transfer_bar(len(view), "arktos upload")
        if bar is None:
            self.sock.sendall(view)
            return
        try:
            for lo in range(0, len(view), SEND_CHUNK):
                chunk = view[lo:lo + SEND_CHUNK]
                self.sock.sendall(chunk)
                bar.update(len(chunk))
        finally:
            bar.close()

    def recv_fd(self) -> int:
        """Receive the one descriptor the server sends after a reply."""
        if not isinstance(self.sock, socket.socket):  # (a TLS link is TCP: no descriptors cross it)
            raise ConnectionError("shared-memory descriptors come over a unix stream, not a TLS one")
        _, fds, _, _ = socket.recv_fds(self.sock, 1, 1)
        for extra in fds[1:]:
            os.close(extra)
        if len(fds) != 1:
            raise ConnectionError("the server sent no shared-memory descriptor")
        return fds[0]

    def recv_view(self, dtype: np.dtype[Any], size: int) -> NDArray[Any]:
        """Receive a shared-memory segment's descriptor and map it read-only.

        The pages are not touched here: the view is ready at once and its
        pages are mapped in as they are first read."""
        fd = self.recv_fd()
        try:
            nbytes = size * dtype.itemsize
            if nbytes == 0:
                return np.empty(0, dtype)
            # mmap checks the segment holds nbytes (a shorter one would fault).
            try:
                segment = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            except OSError as err:
                raise _MapFailed(*err.args) from err
        finally:
            os.close(fd)
        # The array keeps the mapping alive; it is unmapped when the array goes.
        return np.frombuffer(segment, dtype, count=size)

    def recv_into(self, out: NDArray[Any], striped: bool = False) -> None:
        view = out.data.cast("B")
        if striped and self.stripes:
            self._striped(view, "arktos download", lambda sock, part: sock.recv_into(part, len(part)))
            return
        got, total = 0, len(view)
        bar = transfer_bar(total, "arktos download")
        try:
            while got < total:
                n = self.sock.recv_into(view[got:], min(total - got, 1 << 26))
                if n == 0:
                    raise ConnectionError(f"the server closed the bulk stream after {got} of {total} bytes")
                got += n
                if bar is not None:
                    bar.update(n)
        finally:
            if bar is not None:
                bar.close()


#: Segment reads and writes at least this large run on several threads (the
#: GIL is released in the syscall).
_PARALLEL_COPY = 16 << 20


_copy_pool: ThreadPoolExecutor | None = None


def _write_lease(fd: int, data: NDArray[Any]) -> None:
    """Copy data into the lent segment fd (tests refuse it).

    Into a pooled segment lent again (its pages exist) through a mapping
    built in one walk (MAP_POPULATE), where pwrite goes through the page
    cache a page at a time: 256 MiB on two threads here, 45 ms mapped (12.5
    of them populating and 9.5 unmapping) against 82-85 ms with pwrite. A
    large mapping is unmapped on a copy thread (munmap lets go of the GIL)
    while the upload goes on: a 256 MiB upload then took 36 ms p50 against
    49. Into a new segment with pwrite (see _segment_io)."""
    buf = data.data.cast("B")
    segment = None
    if _resident(fd, len(buf)):
        try:
            segment = mmap.mmap(fd, len(buf), flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
        except OSError:
            pass  # refused (out of mappings or address space): pwrite
    if segment is None:
        _segment_io(fd, buf, True, "arktos upload")
        return
    try:
        _segment_io(fd, buf, True, "arktos upload", np.frombuffer(segment, np.uint8))
    except BaseException:
        _unmap(segment)
        raise
    path_counts["shm_mapped_writes"] += 1
    if _copy_pool is not None and len(buf) >= _PARALLEL_COPY:
        try:
            _copy_pool.submit(_unmap, segment)
            return
        except RuntimeError:  # the pool is shut down (interpreter exit)
            pass
    _unmap(segment)


def _unmap(segment: mmap.mmap) -> None:
    try:
        segment.close()
    except BufferError:
        # A slice is still held (by an exception's traceback, or a copy
        # thread not yet done with its work item): unmapped when it goes.
        pass


def _resident(fd: int, n: int) -> bool:
    """Whether the segment fd is sealed against shrinking (so it can never
    become shorter than a mapping of it, and no access falls past its end,
    which would kill this process with SIGBUS) and holds pages for all of
    its first n bytes (no hole before byte n)."""
    try:
        import fcntl
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        return bool(seals & fcntl.F_SEAL_SHRINK) and os.lseek(fd, 0, os.SEEK_HOLE) >= n
    except (ImportError, AttributeError, OSError):
        return False


def _segment_io(fd: int, buf: memoryview, write: bool, label: str,
                mapped: NDArray[np.uint8] | None = None) -> None:
    """Copy buf (bytes) to the start of the shared-memory segment fd with
    pwrite (or into `mapped`, a writable mapping of it, with numpy, which
    lets go of the GIL), or fill it from there with preadv; on several
    threads for a large one, showing a bar named `label`. pwrite and preadv
    build no page tables for the segment, and pwrite does not zero a new
    segment's pages written whole (256 MiB on two threads here: read 37 ms
    against 77 ms mapped and copied; into a new segment 153 against 311)."""
    global _copy_pool
    n = len(buf)
    src = np.frombuffer(buf, np.uint8) if mapped is not None else None

    def part(lo: int, hi: int) -> None:
        if mapped is not None and src is not None:
            np.copyto(mapped[lo:hi], src[lo:hi])
            return
        while lo < hi:
            k = os.pwrite(fd, buf[lo:hi], lo) if write else os.preadv(fd, [buf[lo:hi]], lo)
            if k <= 0:
                raise OSError(f"the shared-memory segment ends at byte {lo}, short of {n}")
            lo += k

    bar = transfer_bar(n, label)
    workers = min(os.cpu_count() or 1, 8)
    try:
        if n < _PARALLEL_COPY or workers < 2:
            for lo in range(0, n, SEND_CHUNK):
                part(lo, min(n, lo + SEND_CHUNK))
                if bar is not None:
                    bar.update(min(SEND_CHUNK, n - lo))
            return
        if _copy_pool is None:
            _copy_pool = ThreadPoolExecutor(workers, thread_name_prefix="arktos-copy")
        block = 4 << 20
        futures: list[Any] = []
        try:
            try:
                for lo in range(0, n, block):
                    futures.append(_copy_pool.submit(part, lo, min(n, lo + block)))
            except RuntimeError:  # the pool is shut down (interpreter exit): the rest on this thread
                for lo in range(len(futures) * block, n, block):
                    part(lo, min(n, lo + block))
                    if bar is not None:
                        bar.update(min(block, n - lo))
            for lo, future in zip(range(0, n, block), futures):
                future.result()
                if bar is not None:
                    bar.update(min(block, n - lo))
        except BaseException:  # Ctrl-C: no thread may use buf or fd once we return
            wait(futures)
            raise
    finally:
        if bar is not None:
            bar.close()

"""Bulk streams: the fast path for large arrays, and how it fails safely."""

from __future__ import annotations

import importlib
import os
import socket
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

import arktos as ak
from arktos.core._protocol import decode_header
from arktos.core._session import LANE_DOWNLOAD_MAX, LANE_PAYLOAD_MAX, SHM_THRESHOLD, STREAM_THRESHOLD, STRIPE_THRESHOLD
from arktos.core._transport import (
    LANE_SPIN_BACKOFF_MAX,
    STREAM_MAGIC,
    _Lane,
    _parse_duration_ns,
    _usable_cpus,
    path_counts,
)


def stats(conn: ak.Connection) -> dict[str, int]:
    return {k: int(v) for k, v in conn._request("stats")[0].items()}


@pytest.mark.parametrize(
    "options, network, path",
    [
        ({}, "unix", "shm"),
        ({"shm": False}, "unix", "stream"),
        ({"transport": "stream", "stream_network": "tcp"}, "tcp", "stream"),
        ({"transport": "frames"}, None, "frames"),
    ],
)
def test_transfer_path_is_taken(server: Any, options: dict[str, Any], network: str | None,
                                path: str, rng: np.random.Generator) -> None:
    """The server's counters prove which path moved the bytes: over shared
    memory the upload's segment becomes the array (nothing copied or
    streamed) and a private download reads that segment (nothing streamed); over a stream nothing is copied in user space; in
    frames one copy in, and none out (libzmq sends the array's bytes in place)."""
    conn = ak.Connection(server.url, **options)
    try:
        x = rng.standard_normal(SHM_THRESHOLD // 8 + 5)
        if path != "frames":
            conn.array(x).delete()  # opens the stream
            s0 = stats(conn)
            w = conn.array(x)
            s1 = stats(conn)
            w.delete()
            # With the stream open, an upload's request takes the lane (over
            # shared memory its lease is asked for on ZeroMQ).
            assert (s1["requests"] - s0["requests"]) - (s1["lane_requests"] - s0["lane_requests"]) == \
                {"shm": 1, "stream": 0}[path]
        before = stats(conn)
        a = conn.array(x)
        copies = path_counts["shm_copies_out"]
        mid = stats(conn)
        back = a.to_ndarray()
        after = stats(conn)
        assert back.tobytes() == x.tobytes() and back.flags.writeable
        # A download whose bytes go on the stream or in a segment is asked
        # over the lane (the segment's release goes over ZeroMQ).
        zmq = (after["requests"] - mid["requests"]) - (after["lane_requests"] - mid["lane_requests"])
        assert zmq == {"shm": 1, "stream": 0, "frames": 1}[path]
        d = {k: after[k] - before[k] for k in after}
        if path == "shm":
            assert (d["shm_uploads"], d["bytes_stream_in"], d["bytes_copied_in"]) == (1, 0, 0)
            assert (d["bytes_stream_out"], d["bytes_copied_out"], d["shm_views"]) == (0, 0, 1)
        elif path == "stream":
            assert (d["bytes_stream_in"], d["bytes_stream_out"]) == (x.nbytes, x.nbytes)
            assert (d["bytes_copied_in"], d["bytes_copied_out"], d["shm_uploads"]) == (0, 0, 0)
        else:  # one copy in; out, libzmq reads the array in place (frames under 64 KiB are copied)
            assert d["bytes_copied_in"] == x.nbytes
            assert d["bytes_copied_out"] + d["bytes_zero_copy_out"] == x.nbytes
            assert d["bytes_copied_out"] < 64 << 10
            assert (d["bytes_stream_in"], d["bytes_stream_out"], d["shm_uploads"]) == (0, 0, 0)
        assert path_counts["shm_copies_out"] == copies + (path == "shm")
        assert conn.stream_network == network
        a.delete()
    finally:
        conn.close()


def test_frames_reuse_memory(server: Any) -> None:
    """Arrays in ZeroMQ frames land in memory malloc kept from the previous
    message (arktos.core._malloc here, the server's --frame-heap there), not in
    pages faulted in afresh: before, each 64 MiB transfer in 16 MiB frames
    faulted in 4,000-49,000 pages on each side. A round may still fault one
    frame in now and then (a message freed a little late), so each side's
    faults over eight rounds need only stay under one and a half
    transfers' pages."""
    import resource

    from arktos.core import _malloc

    if not _malloc.tune():
        pytest.skip("malloc is glibc's only")
    conn = ak.Connection(server.url, transport="frames")
    try:
        assert int(conn.get_config()["frame_heap"]) > 0, "the server's malloc is not tuned"
        x = np.arange(8 << 20, dtype=np.int64)  # 64 MiB
        pages = x.nbytes // os.sysconf("SC_PAGE_SIZE")
        theirs_sum, mine_sum, log = 0, 0, []
        for rnd in range(10):
            s0, self0 = stats(conn), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            w = conn.array(x)
            y = w.to_ndarray()
            mine = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - self0
            s1 = stats(conn)
            w.delete()
            assert np.array_equal(x, y)
            del y  # back to the download pool, for the next round
            assert s1["bytes_copied_in"] - s0["bytes_copied_in"] == x.nbytes, "not in frames"
            theirs = s1["minor_faults"] - s0["minor_faults"]
            log.append((theirs, mine))
            if rnd >= 2:
                theirs_sum += theirs
                mine_sum += mine
        limit = pages * 3 // 2
        assert theirs_sum <= limit and mine_sum <= limit, \
            f"(server, client) minor faults a round for {pages} pages each way: {log}"
    finally:
        conn.close()


def test_small_arrays_use_frames(conn: ak.Connection) -> None:
    before = stats(conn)
    conn.array(np.arange(1000)).to_ndarray()
    after = stats(conn)
    assert after["bytes_stream_in"] == before["bytes_stream_in"]


def test_refused_stream_upload_then_recovers(make_server: Callable[..., Any]) -> None:
    srv = make_server("--max-memory", "8MiB")
    conn = srv.connect(transport="stream")
    try:
        with pytest.raises(MemoryError, match="needs 16.0 MiB"):
            conn.array(np.zeros(2 << 20))
        x = np.arange(300_000)
        a = conn.array(x)
        assert (a.to_ndarray() == x).all()
        assert conn.mem_info()["used"] == x.nbytes
    finally:
        conn.close()


def test_interrupted_stream_download_leaves_connection_working(conn: ak.Connection,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C half-way through reading a download's bytes drops the stream;
    the next transfers open a new one and get the right bytes."""
    x = np.arange(STREAM_THRESHOLD, dtype=np.int64)
    a = conn.array(x)
    stream = conn._stream
    assert stream is not None

    _interrupt_reads(stream, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        a.to_ndarray()
    assert conn._stream is None
    assert (a.to_ndarray() == x).all()
    assert conn.stream_network == "unix"


def _interrupt_reads(stream: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the stream's socket read 4 KiB once, then raise KeyboardInterrupt
    (a Ctrl-C while this thread reads a download)."""
    calls = {"n": 0}
    real = stream.sock.recv_into

    def interrupt_after_some(buf: Any, n: int = 0) -> int:
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        return real(buf, min(n, 4096))

    monkeypatch.setattr(stream, "sock", _Patched(stream.sock, interrupt_after_some))


class _Patched:
    """A socket whose recv_into is replaced (socket objects refuse setattr)."""

    def __init__(self, sock: Any, recv_into: Callable[..., int]) -> None:
        self._sock, self.recv_into = sock, recv_into

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def test_shm_view_is_read_only_and_bit_exact(conn: ak.Connection, rng: np.random.Generator) -> None:
    """A view download maps the server's shared-memory segment read-only:
    the server counts one view, and no byte travels over a socket."""
    x = rng.standard_normal(1_000_003)
    a = conn.array(x)
    used = conn.mem_info()["used"]
    before = stats(conn)
    v = a.to_ndarray(copy=False)
    after = stats(conn)
    assert v.tobytes() == x.tobytes() and v.dtype == x.dtype
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 1.0
    assert after["shm_views"] == before["shm_views"] + 1
    assert after["bytes_stream_out"] == before["bytes_stream_out"]
    empty = conn.array(np.array([], np.int16))
    assert conn._download(empty.name, view=True).shape == (0,)
    del v  # unmapping happens with the array; the server holds nothing for it
    assert conn.mem_info()["used"] == used + empty.nbytes


def test_shm_upload_and_view_copy_nothing(conn: ak.Connection, rng: np.random.Generator) -> None:
    """An upload through shared memory and a view of it: the server copies
    no byte either way, and the view is bit-exact."""
    x = rng.integers(-2**63, 2**63 - 1, SHM_THRESHOLD // 8, dtype=np.int64)
    used = conn.mem_info()["used"]
    before = stats(conn)
    a = conn.array(x)
    v = a.to_ndarray(view=True)
    after = stats(conn)
    d = {k: after[k] - before[k] for k in after}
    assert (d["shm_uploads"], d["shm_views"], d["shm_adopted"]) == (1, 1, 0)
    assert d["bytes_copied_in"] == d["bytes_copied_out"] == d["bytes_stream_in"] == d["bytes_stream_out"] == 0
    assert v.tobytes() == x.tobytes() and not v.flags.writeable
    assert conn.mem_info()["used"] == used + x.nbytes


def test_shm_view_survives_setitem_and_delete(conn: ak.Connection) -> None:
    """The first view of an array made on the server copies it once into a
    segment, the next copies nothing. A setitem then copies the array out
    first (the views keep their bytes), and a delete leaves them valid."""
    a = ak.arange(1 << 20, conn=conn)
    before = stats(conn)
    v1 = a.to_ndarray(copy=False)
    v2 = a.to_ndarray(copy=False)
    mid = stats(conn)
    assert mid["shm_adopted"] - before["shm_adopted"] == 1
    assert mid["bytes_copied_out"] - before["bytes_copied_out"] == a.nbytes
    a[5] = -1
    a += 1
    after = stats(conn)
    assert after["shm_copies_on_write"] - mid["shm_copies_on_write"] == 1
    w = a.to_ndarray(copy=False)
    assert w[5] == 0 and w[6] == 7
    a.delete()
    want = np.arange(1 << 20)
    assert (v1 == want).all() and (v2 == want).all()


def test_shm_never_over_tcp(server: Any) -> None:
    """A client whose stream is TCP (a remote server) never uses shared
    memory; a view falls back to a read-only copy, with no error."""
    conn = ak.Connection(server.url, transport="stream", stream_network="tcp")
    try:
        before = stats(conn)
        a = conn.array(np.arange(1 << 18))
        v = a.to_ndarray(copy=False)
        after = stats(conn)
        assert (v == np.arange(1 << 18)).all() and not v.flags.writeable
        assert after["shm_uploads"] == before["shm_uploads"]
        assert after["shm_views"] == before["shm_views"]
        assert (a.to_ndarray() == np.arange(1 << 18)).all()
    finally:
        conn.close()


def test_shm_falls_back_when_the_segment_cannot_be_written(conn: ak.Connection,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Where this side cannot write the leased segment the upload streams its
    bytes instead, with no error, and the server holds nothing more."""
    connection = importlib.import_module("arktos.core._session")  # (where _fill_lease looks _write_lease up)

    def refuse(fd: int, data: Any) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(connection, "_write_lease", refuse)
    used = conn.mem_info()["used"]
    before = stats(conn)
    x = np.arange(SHM_THRESHOLD // 8)
    a = conn.array(x)
    after = stats(conn)
    assert after["shm_uploads"] == before["shm_uploads"]
    assert after["bytes_stream_in"] - before["bytes_stream_in"] == a.nbytes
    assert (a.to_ndarray() == x).all()
    assert conn.mem_info()["used"] == used + a.nbytes


def test_leased_segments_are_reused(conn: ak.Connection) -> None:
    """A deleted array's segment is lent again to the next upload of its size
    (pages already in memory, so the client copies into it through a
    mapping), unless a view of it is still mapped."""
    connection = importlib.import_module("arktos.core._transport")
    x = np.arange(SHM_THRESHOLD // 8)
    conn.array(x).delete()
    mapped = connection.path_counts["shm_mapped_writes"]
    before = stats(conn)
    a = conn.array(x[::-1].copy())
    mid = stats(conn)
    assert (mid["pool_hits"] - before["pool_hits"], mid["shm_uploads"] - before["shm_uploads"]) == (1, 1)
    assert connection.path_counts["shm_mapped_writes"] == mapped + 1
    v = a.to_ndarray(copy=False)
    a.delete()
    b = conn.array(x)
    after = stats(conn)
    assert after["pool_hits"] == mid["pool_hits"]  # the viewed segment is not lent again
    assert (v == x[::-1]).all() and (b.to_ndarray() == x).all()
    w = b.to_ndarray(copy=False)
    del w  # unmapped: the server is told before the next request
    b.delete()
    before = stats(conn)
    c = conn.array(x * 3)
    assert stats(conn)["pool_hits"] - before["pool_hits"] == 1
    assert connection.path_counts["shm_mapped_writes"] == mapped + 2
    assert c.to_ndarray().tobytes() == (x * 3).tobytes()


def test_new_segments_are_written_without_a_mapping(make_server: Callable[..., Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A new segment's pages do not exist yet: the client writes them with
    pwrite (the kernel then need not zero them), and maps only a segment
    lent again; where the mapping is refused it writes that one with pwrite
    too."""
    connection = importlib.import_module("arktos.core._transport")
    srv = make_server()
    conn = srv.connect()
    try:
        x = np.arange(SHM_THRESHOLD // 8 + 1000, dtype=np.float64) / 3
        mapped = connection.path_counts["shm_mapped_writes"]
        before = stats(conn)
        a = conn.array(x)
        assert stats(conn)["shm_uploads"] - before["shm_uploads"] == 1
        assert connection.path_counts["shm_mapped_writes"] == mapped
        assert a.to_ndarray().tobytes() == x.tobytes()
        a.delete()
        b = conn.array(-x)
        assert stats(conn)["pool_hits"] - before["pool_hits"] == 1
        assert connection.path_counts["shm_mapped_writes"] == mapped + 1
        assert b.to_ndarray().tobytes() == (-x).tobytes()
        b.delete()

        refused = []

        def refuse(*args: Any, **kwargs: Any) -> Any:
            refused.append(args)
            raise OSError(12, "Cannot allocate memory")

        monkeypatch.setattr(connection.mmap, "mmap", refuse)
        c = conn.array(x * 2)
        monkeypatch.undo()
        assert len(refused) == 1
        assert stats(conn)["pool_hits"] - before["pool_hits"] == 2
        assert connection.path_counts["shm_mapped_writes"] == mapped + 1
        assert c.to_ndarray().tobytes() == (x * 2).tobytes()
    finally:
        conn.close()


def test_segment_copies_run_inline_once_the_copy_pool_is_shut_down(
        conn: ak.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    """At interpreter exit (an atexit handler) the copy threads are gone:
    large uploads, into a new segment and a pooled one, and downloads out of
    a segment still work, copying on the calling thread."""
    from concurrent.futures import ThreadPoolExecutor
    connection = importlib.import_module("arktos.core._transport")
    dead = ThreadPoolExecutor(1)
    dead.shutdown()
    monkeypatch.setattr(connection, "_copy_pool", dead)
    x = np.arange(2 * SHM_THRESHOLD // 8 + 99)
    before = stats(conn)
    conn.array(x).delete()
    mapped = connection.path_counts["shm_mapped_writes"]
    b = conn.array(x + 1)
    assert stats(conn)["shm_uploads"] - before["shm_uploads"] == 2
    assert connection.path_counts["shm_mapped_writes"] == mapped + 1
    assert b.to_ndarray().tobytes() == (x + 1).tobytes()


def test_refused_shm_upload_then_recovers(make_server: Callable[..., Any]) -> None:
    srv = make_server("--max-memory", "4MiB")
    conn = srv.connect()
    try:
        with pytest.raises(MemoryError, match="needs 8.0 MiB"):
            conn.array(np.zeros(1 << 20))
        x = np.arange(300_000)
        a = conn.array(x)
        assert conn._stream is not None and conn._stream.network == "unix"
        assert (a.to_ndarray(copy=False) == x).all()
        assert conn.mem_info()["used"] == x.nbytes
    finally:
        conn.close()


@pytest.mark.parametrize("data", ["compressible", "random"])
def test_zstd_round_trip(server: Any, data: str, rng: np.random.Generator) -> None:
    """zstd frames are bit-exact both ways; compressible data crosses the
    wire much smaller (the server's counters show it)."""
    conn = ak.Connection(server.url, compression="zstd")
    try:
        x = np.arange(3_000_001) % 100 if data == "compressible" else rng.standard_normal(500_000)
        before = stats(conn)
        a = conn.array(x)
        back = a.to_ndarray()
        after = stats(conn)
        assert back.tobytes() == x.tobytes() and back.dtype == x.dtype
        sent = after["bytes_compressed_in"] - before["bytes_compressed_in"]
        if data == "compressible":
            assert 0 < sent < x.nbytes // 5
        assert after["bytes_stream_in"] == before["bytes_stream_in"]  # frames, never a stream
    finally:
        conn.close()


def test_compression_is_checked() -> None:
    with pytest.raises(ValueError, match="compression must be None or 'zstd'"):
        ak.Connection("tcp://127.0.0.1:1", compression="lz4")


def test_server_without_memfd_falls_back(make_server: Callable[..., Any]) -> None:
    """A server that can make no shared-memory segment (out of descriptors or
    memory) lends none and answers views over the stream: uploads stream,
    views are read-only copies, and nothing fails."""
    srv = make_server(env={"ARKTOS_DEBUG_NO_MEMFD": "1"})
    conn = srv.connect()
    try:
        x = np.arange(SHM_THRESHOLD // 8)
        before = stats(conn)
        a = conn.array(x)
        v = (a + 0).to_ndarray(copy=False)
        after = stats(conn)
        assert (v == x).all() and not v.flags.writeable
        assert after["shm_uploads"] == before["shm_uploads"] and after["shm_views"] == before["shm_views"]
        assert after["bytes_stream_in"] - before["bytes_stream_in"] == x.nbytes
    finally:
        conn.close()


def test_small_requests_take_the_lane(server: Any) -> None:
    """Requests without payload go over the request lane (counted by the
    server) once the connection is up; lane=False keeps them on ZeroMQ."""
    for lane, want in [(True, 20), (False, 0)]:
        conn = ak.Connection(server.url, lane=lane)
        try:
            a = conn.array(np.arange(1000, dtype=np.int64))
            before = stats(conn)
            for _ in range(10):
                assert conn.get_config()["protocol_version"] == 1
                assert a.sum() == 499500
            after = stats(conn)
            # The first stats request opened the lane when it is on.
            assert after["lane_requests"] - before["lane_requests"] == want + (1 if lane else 0)
            assert (conn._lane is not None) == lane
            with pytest.raises(KeyError, match="no_such"):
                conn.info("no_such")  # errors come back over the lane as over ZeroMQ
        finally:
            conn.close()


ONE_CPU = _usable_cpus() < 2


@pytest.mark.skipif(ONE_CPU, reason="one CPU: lanes do not poll")
def test_lane_replies_are_read_while_polling(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane reply is waited for by polling the socket first (lane_spin),
    and counted when it came meanwhile, nearly always for get_config; the
    server polls for the next request too (stats.lane_spin_hits). A poll
    that finds the CPU taken (pytest beside go test, say) ends early and
    counts as busy; spin_polls (stats.lane_spin_polls) count the waits that
    polled, whichever way they ended. lane_spin=0 turns the
    client's poll off; a bad ARKTOS_LANE_SPIN or lane_spin is refused by
    name, and ARKTOS_LANE_SPIN is not read for lane=False."""
    for spin in (200e-6, 0.0, "200us"):
        conn = ak.Connection(server.url, lane_spin=spin)
        try:
            before = stats(conn)  # opens the lane
            assert conn._lane is not None
            for _ in range(300):
                conn.get_config()
            after = stats(conn)
            hits, busy, polls = conn._lane.spin_hits, conn._lane.spin_busy, conn._lane.spin_polls
            if spin:
                # Whether a poll finds the reply or the CPU taken depends on
                # the machine's load; that waits poll does not.
                assert polls > 0, f"no wait polled ({hits} replies read while polling, {busy} busy)"
                assert polls >= hits + busy
                assert after["lane_spin_polls"] - before["lane_spin_polls"] > 0, "the server polled for no request"
            else:
                assert hits == busy == polls == 0
        finally:
            conn.close()
    monkeypatch.setenv("ARKTOS_LANE_SPIN", "fast")
    with pytest.raises(ValueError, match="ARKTOS_LANE_SPIN='fast'"):
        ak.Connection(server.url)
    ak.Connection(server.url, lane=False).close()
    monkeypatch.setenv("ARKTOS_LANE_SPIN", "50us")
    conn = ak.Connection(server.url)
    try:
        assert conn.lane_spin == pytest.approx(50e-6)
    finally:
        conn.close()
    with pytest.raises(ValueError, match="lane_spin=1.0: .* at most 100ms"):
        ak.Connection(server.url, lane_spin=1.0)
    with pytest.raises(ValueError, match="lane_spin='1s': .* at most 100ms"):
        ak.Connection(server.url, lane=False, lane_spin="1s")  # checked even without a lane
    with pytest.raises(TypeError, match="lane_spin must be a number of seconds"):
        ak.Connection(server.url, lane_spin=[1])  # type: ignore[arg-type]


# What Go's time.ParseDuration makes of each, in nanoseconds (None: an
# error), as the server's --lane-spin and the Go client's ARKTOS_LANE_SPIN
# read them (printed by a Go program calling it, Go 1.26).
GO_DURATIONS: dict[str, int | None] = {
    "200us": 200000,
    "200\u00b5s": 200000,
    "200\u03bcs": 200000,
    "0": 0,
    "-0": 0,
    "+0": 0,
    "00": None,
    " 200us": None,
    "200us ": None,
    "1e-4s": None,
    "1ms200us": 1200000,
    ".5ms": 500000,
    "5.ms": 5000000,
    ".ms": None,
    "0.0001s": 100000,
    "100ms": 100000000,
    "1m": 60000000000,
    "200": None,
    "us": None,
    "": None,
    "+200us": 200000,
    "1h": 3600000000000,
    "200 us": None,
    "1.5.2ms": None,
    "0x10ms": None,
    "\u0663ms": None,
    "\uff11ms": None,
    "0.5ns": 0,
    "-0.5ns": 0,
    "-.1ns": 0,
    "100ms0.4ns": 100000000,
    "1ms" * 100: 100000000,
    "9223372036854775807ns": 9223372036854775807,
    "9223372036854775808ns": None,
    "-9223372036854775808ns": -9223372036854775808,
    "1.0000000000000000000001s": 1000000000,
    "2562047h": 9223369200000000000,
    "2562048h": None,
    "0.3333333333333333333333333s": 333333333,
    "1.5h": 5400000000000,
    "-200us": -200000,
    "200US": None,
    "1s1": None,
    "-": None,
    "+": None,
    ".": None,
}


@pytest.mark.parametrize("text", list(GO_DURATIONS))
def test_lane_spin_durations_read_as_go_reads_them(text: str) -> None:
    assert _parse_duration_ns(text) == GO_DURATIONS[text]


@pytest.mark.skipif(ONE_CPU, reason="one CPU: lanes do not poll")
def test_lane_poll_backs_off_when_the_cpu_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A poll that finds the CPU taken by another thread (here every poll
    step counts as that: gap 0) ends, and the next 4, then 8, 16 ... waits
    block without polling; a poll that runs undisturbed halves the
    back-off (transfer/spin.go's TestSpinReaderBacksOff). No reply ever
    comes: each wait ends at its timeout, so a wait that polls when it
    should not is seen (it counts as busy) however late this thread runs."""
    a, b = socket.socketpair()
    # A poll of 50 ms inside waits of 60: the first poll step would have to
    # be held up for 50 ms to end the poll before its second step.
    lane = _Lane(a, "unix", spin=0.05)
    conn_mod = importlib.import_module("arktos.core._transport")
    monkeypatch.setattr(conn_mod, "LANE_SPIN_BUSY_GAP", 0.0)

    def wait() -> None:
        assert not lane.readable(0.001 if lane._skip else 0.06)

    try:
        for n, skip in enumerate((4, 8, 16), 1):
            wait()  # polls, finds the CPU busy, blocks
            assert (lane.spin_busy, lane._skip) == (n, skip)
            for _ in range(skip):
                wait()  # blocks without polling
            assert (lane.spin_busy, lane._skip) == (n, 0)
        lane._backoff = LANE_SPIN_BACKOFF_MAX
        wait()
        assert lane._skip == LANE_SPIN_BACKOFF_MAX
        lane._skip = 0
        monkeypatch.setattr(conn_mod, "LANE_SPIN_BUSY_GAP", 3600.0)
        assert not lane.readable(0.06)  # polls 50 ms undisturbed: the back-off halves
        assert (lane.spin_hits, lane.spin_busy, lane._backoff, lane._skip) == (0, 4, LANE_SPIN_BACKOFF_MAX // 2, 0)
        b.send(b"x")  # a reply already there is no hit (nothing was polled for)
        assert lane.readable(None) and lane.spin_hits == 0
    finally:
        lane.close()
        b.close()


def test_small_arrays_travel_over_the_lane(make_server: Callable[..., Any]) -> None:
    """Uploads and downloads of fewer than LANE_PAYLOAD_MAX bytes take the
    request lane (in frames: a server of 1 KiB frames gets several), bit
    for bit, slices and repr included; larger ones, compressed ones and
    lane=False stay off it."""

    srv = make_server("--frame-size", "1024")
    for lane in (True, False):
        conn = srv.connect(lane=lane)
        try:
            conn.get_config()  # opens the lane
            rng = np.random.default_rng(5)
            x = rng.standard_normal(3000)  # 24,000 bytes: 24 frames of 1 KiB
            before = stats(conn)
            direct = path_counts["lane_direct"]
            a = conn.array(x)
            y = a.to_ndarray()
            part = conn._download(a.name, 10, 20)
            after = stats(conn)
            assert y.tobytes() == x.tobytes() and y.flags.writeable
            assert part.tobytes() == x[10:20].tobytes()
            # both read from the lane straight into their arrays
            assert path_counts["lane_direct"] - direct == (2 if lane else 0)
            # stats itself went over the lane when it is on
            assert after["lane_requests"] - before["lane_requests"] == (4 if lane else 0)
            assert after["uploads"] - before["uploads"] == 1
            z = np.arange(LANE_PAYLOAD_MAX // 8, dtype=np.int64)  # not fewer bytes than the limit
            s0 = stats(conn)
            b = conn.array(z)
            assert (b.to_ndarray() == z).all()
            s1 = stats(conn)
            assert s1["lane_requests"] - s0["lane_requests"] == (1 if lane else 0)  # stats only
        finally:
            conn.close()


@pytest.mark.parametrize("nbytes", [8, 255 << 10, 256 << 10, 700 << 10, LANE_DOWNLOAD_MAX - 8, LANE_DOWNLOAD_MAX])
def test_downloads_under_the_lane_limit_come_inline(server: Any, nbytes: int) -> None:
    """A download of fewer than LANE_DOWNLOAD_MAX bytes (no stream, no
    segment) comes inline over the lane, read from the socket straight into
    the new array, bit for bit, and writable; the server writes one of 16 KiB
    and more from the array in one gathering write (bytes_zero_copy_out).
    One of LANE_DOWNLOAD_MAX bytes does not come inline."""
    conn = server.connect(shm=False)
    try:
        x = np.arange(nbytes // 8, dtype=np.float64) * 0.75 - 3
        x[0] = -0.0
        a = conn.array(x)
        direct = path_counts["lane_direct"]
        before = stats(conn)
        y = a.to_ndarray()
        after = stats(conn)
        assert y.tobytes() == x.tobytes() and y.dtype == x.dtype and y.flags.writeable
        y[0] = 1.0  # its own memory
        assert path_counts["lane_direct"] - direct == (1 if nbytes < LANE_DOWNLOAD_MAX else 0)
        gathered = after["bytes_zero_copy_out"] - before["bytes_zero_copy_out"]
        copied = after["bytes_copied_out"] - before["bytes_copied_out"]
        if nbytes < LANE_DOWNLOAD_MAX:
            assert (gathered, copied) == ((nbytes, 0) if nbytes >= 16 << 10 else (0, nbytes))
        assert a.to_ndarray().tobytes() == x.tobytes()  # the array on the server is as it was
        a.delete()
    finally:
        conn.close()


def test_mid_downloads_take_an_open_stream(server: Any) -> None:
    """Once a bulk stream is open, a download of LANE_PAYLOAD_MAX bytes and
    more goes on it (faster than inline there), a smaller one inline."""
    conn = server.connect(shm=False)
    try:
        conn.array(np.zeros(STREAM_THRESHOLD // 8)).to_ndarray()  # opens the stream
        assert conn._stream is not None
        for nbytes, inline in ((LANE_PAYLOAD_MAX - 8, True), (LANE_PAYLOAD_MAX, False), (700 << 10, False)):
            x = np.arange(nbytes // 8, dtype=np.int64)
            a = conn.array(x)
            direct, before = path_counts["lane_direct"], stats(conn)
            assert a.to_ndarray().tobytes() == x.tobytes()
            after = stats(conn)
            assert path_counts["lane_direct"] - direct == (1 if inline else 0)
            assert after["bytes_stream_out"] - before["bytes_stream_out"] == (0 if inline else nbytes)
            a.delete()
    finally:
        conn.close()


def test_lane_refuses_bulk_commands_and_bad_framing(conn: ak.Connection) -> None:
    """A lane answers a command it does not take with a clear error, and a
    message that breaks the framing with an error and a closed lane; the
    server goes on serving."""
    from arktos.core._protocol import encode_request
    from arktos.core._transport import LANE_MAGIC, _Lane

    sock, _, _ = conn._stream_socket(LANE_MAGIC)
    sock.settimeout(10)
    lane = _Lane(sock, "raw")
    try:
        lane.send(encode_request(7, conn._token, "open_stream", {}))
        reply = decode_header(lane.recv()[0])
        assert reply["id"] == 7 and reply["error"] == "UNKNOWN_COMMAND"
        assert "not taken over a request lane" in reply["message"]
        # A download whose reply would not fit a lane message is refused there.
        big = conn.array(np.zeros(10_000, np.int64))
        lane.send(encode_request(8, conn._token, "download", {"name": big.name, "frame_size": 1024}))
        reply = decode_header(lane.recv()[0])
        assert reply["id"] == 8 and reply["error"] == "ARGUMENT_VALUE"
        assert "does not fit a request lane" in reply["message"]
        sock.sendall(b"\x00\x00\x00\x00")  # a message of no frames
        reply = decode_header(lane.recv()[0])
        assert reply["error"] == "MALFORMED_REQUEST" and "frames" in reply["message"]
        with pytest.raises(ConnectionError):
            lane.recv()
    finally:
        lane.close()
    assert conn.get_config()["protocol_version"] == 1


def test_no_lane_without_streams(make_server: Callable[..., Any]) -> None:
    srv = make_server("--stream-port", "-1")
    conn = srv.connect()
    try:
        assert conn.array(np.arange(5)).sum() == 10
        assert conn._lane is None and conn._lane_failed
    finally:
        conn.close()


def test_refused_stream_is_not_asked_again(make_server: Callable[..., Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that offers no streams refuses open_stream; transport="auto"
    then sends frames without asking again on every large transfer (as Go's
    client does), and the arrays still arrive bit-exact."""
    srv = make_server("--stream-port", "-1")
    conn = srv.connect()
    asked: list[bytes] = []
    real = conn._stream_socket

    def counting(magic: bytes) -> Any:
        asked.append(magic)
        return real(magic)

    monkeypatch.setattr(conn, "_stream_socket", counting)
    try:
        x = np.arange(STREAM_THRESHOLD // 8 + 1000, dtype=np.int64)
        for _ in range(3):
            a = conn.array(x)
            assert np.array_equal(a.to_ndarray(), x)
        assert asked.count(STREAM_MAGIC) == 1, asked
        assert conn._stream is None
    finally:
        conn.close()


def test_passing_stream_refusal_is_asked_again(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal that passes (here SHUTTING_DOWN, once) does not stop the
    connection from asking for a stream at the next large transfer."""
    conn = server.connect(shm=False)
    real = conn._roundtrip
    refused: list[str] = []

    def once(cmd: str, *args: Any, **kwargs: Any) -> Any:
        if cmd == "open_stream" and not refused:
            refused.append(cmd)
            raise ak.ShuttingDownError("the server is shutting down and takes no new work")
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(conn, "_roundtrip", once)
    try:
        x = np.arange(STREAM_THRESHOLD // 8 + 1000, dtype=np.int64)
        assert np.array_equal(conn.array(x).to_ndarray(), x)
        assert refused and not conn._no_stream
        assert np.array_equal(conn.array(x).to_ndarray(), x)
        assert conn._stream is not None
    finally:
        conn.close()


@pytest.mark.parametrize("shm, network", [(False, None), (True, None), (False, "tcp")])
def test_stream_after_server_panic(make_server: Callable[..., Any], shm: bool, network: str | None) -> None:
    """A download whose handler panics on the server after taking the stream
    (ARKTOS_DEBUG_PANIC_WITH_STREAM) is answered INTERNAL and the server
    closes the stream; the client drops its end, and the next downloads
    open another stream and come back bit-exact. Over TCP the array is
    large enough to be striped: the panic comes with the first stream
    taken, and the stripes are dropped with the stream."""
    srv = make_server(env={"ARKTOS_DEBUG_PANIC_WITH_STREAM": "download"})
    conn = srv.connect(shm=shm, stream_network=network)
    try:
        x = np.arange(STREAM_THRESHOLD // 8 * (3 if network is None else 20), dtype=np.float64)
        a = conn.array(x)
        with pytest.raises(ak.InternalError):
            a.to_ndarray()
        striped = stats(conn)["striped_out"]
        for _ in range(2):
            assert np.array_equal(a.to_ndarray(), x)
        # (the first after the drop goes in frames and opens a stream; the
        # second opens its stripes and is striped)
        assert stats(conn)["striped_out"] - striped == (1 if network == "tcp" else 0)
    finally:
        conn.close()


def test_unix_socket_not_made_falls_back_to_tcp(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the unix socket itself cannot be made (say, no descriptors
    left), the stream opens over TCP instead of failing on the cleanup."""
    real = socket.socket

    def no_unix(family: int = -1, *args: Any, **kwargs: Any) -> Any:
        if family == socket.AF_UNIX:
            raise OSError(24, "Too many open files")
        return real(family, *args, **kwargs)

    conn = server.connect(shm=False)
    try:
        monkeypatch.setattr(socket, "socket", no_unix)
        x = np.arange(STREAM_THRESHOLD // 8 + 1000, dtype=np.int64)
        a = conn.array(x)
        assert conn._stream is not None and conn._stream.network == "tcp"
        assert (a.to_ndarray() == x).all()
    finally:
        monkeypatch.undo()
        conn.close()


def test_shm_download_falls_back_when_the_segment_cannot_be_mapped(
        conn: ak.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where this process can map no more segments (vm.max_map_count:
    65,530 mappings by default), a view of the array comes over the stream
    instead, with no error, and the segment lent for it goes back to the
    server; a private copy still comes out of the segment, which it reads
    without mapping."""
    connection = importlib.import_module("arktos.core._transport")
    real = connection.mmap.mmap

    def no_segments(fd: int, length: int, *args: Any, **kwargs: Any) -> Any:
        if fd != -1 and kwargs.get("prot") == connection.mmap.PROT_READ:
            raise OSError(12, "Cannot allocate memory")
        return real(fd, length, *args, **kwargs)

    x = np.arange(SHM_THRESHOLD // 8 + 3, dtype=np.int64)
    a = conn.array(x)
    used = conn.mem_info()["used"]
    before = stats(conn)
    failures, copies = path_counts["shm_map_failures"], path_counts["shm_copies_out"]
    monkeypatch.setattr(connection.mmap, "mmap", no_segments)
    v = a.to_ndarray(copy=False)
    c = a.to_ndarray()
    monkeypatch.undo()
    assert path_counts["shm_map_failures"] - failures == 1
    assert path_counts["shm_copies_out"] - copies == 1
    assert (v == x).all() and not v.flags.writeable
    assert (c == x).all() and c.flags.writeable
    after = stats(conn)
    assert after["bytes_stream_out"] - before["bytes_stream_out"] == x.nbytes
    a.delete()
    assert conn.mem_info()["used"] == used - x.nbytes
    mid = stats(conn)
    b = conn.array(x)  # the deleted array's segment is lent again: no view holds it
    assert stats(conn)["pool_hits"] - mid["pool_hits"] == 1
    w = b.to_ndarray(copy=False)  # and mapping works again
    assert (w == x).all() and not w.flags.writeable


@pytest.mark.parametrize("via", ["lane", "zmq"])
def test_ctrl_c_after_a_stream_upload_request_drops_the_stream(make_server: Callable[..., Any],
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                via: str) -> None:
    """A Ctrl-C after a stream upload's request has left, before any of its
    bytes did, drops the stream: the server, still waiting for those bytes,
    must not take the next upload's as this one's. The next upload is
    bit-exact and quick, and the abandoned one leaves no array behind."""
    srv = make_server()
    conn = srv.connect(shm=False, timeout=30)
    try:
        conn.array(np.arange(3 << 17, dtype=np.int64)).delete()  # opens the stream (and the lane)
        assert conn._stream is not None
        arrays = conn._request("mem_used")[0]["arrays"]
        if via == "lane":
            assert conn._lane is not None
            real_send = _Lane.send

            def lane_send(self: _Lane, header: Any, payload: Any = ()) -> None:
                real_send(self, header, payload)
                if b"upload" in bytes(header):
                    raise KeyboardInterrupt

            monkeypatch.setattr(_Lane, "send", lane_send)
        else:
            conn.lane = False
            conn._drop_lane()
            sock = conn._socket

            class Sock:
                def __getattr__(self, name: str) -> Any:
                    return getattr(sock, name)

                def send(self, header: Any, *args: Any, **kwargs: Any) -> Any:
                    sent = sock.send(header, *args, **kwargs)
                    if b"upload" in bytes(header):
                        raise KeyboardInterrupt
                    return sent

            monkeypatch.setattr(conn, "_socket", Sock())
        with pytest.raises(KeyboardInterrupt):
            conn.array(np.arange(3 << 17, dtype=np.int64))
        monkeypatch.undo()
        assert conn._stream is None
        t0 = time.monotonic()
        x = np.arange(3 << 17, dtype=np.int64) + 7
        a = conn.array(x)
        assert time.monotonic() - t0 < 10
        assert a.to_ndarray().tobytes() == x.tobytes()
        a.delete()
        conn.list_arrays()  # reads the late reply (lane) and deletes what it named
        assert conn._request("mem_used")[0]["arrays"] == arrays
    finally:
        conn.close()


def test_max_streams_falls_back(make_server: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A server at its --max-streams refuses a second connection's lane and
    bulk stream with TOO_MANY_STREAMS: its requests go over ZeroMQ and its
    arrays in frames, bit-exact, without asking again on every request;
    once the first connection has gone it opens both after the pause.
    Before, a refused lane was never asked for again, and the
    server had no cap. Asked for a stream outright, the refusal says what
    to do."""
    # A pause the rounds below cannot outlast on a busy machine (they count
    # refusals within it), short enough to wait out.
    pause = 3.0
    monkeypatch.setattr(importlib.import_module("arktos.core._transport")._RetryAfter, "FIRST", pause)
    srv = make_server("--max-streams", "2")
    x = np.arange(300_000, dtype=np.int64) * 7  # 2.3 MiB: over STREAM_THRESHOLD
    a = srv.connect(shm=False)
    b = srv.connect(shm=False)
    c = srv.connect(shm=False, transport="stream")
    try:
        a.array(x)
        assert a._stream is not None and stats(a)["lanes_open"] == 1
        for _ in range(3):
            got = b.array(x).to_ndarray()
            assert got.tobytes() == x.tobytes()
            assert b._stream is None and b._lane is None
        # One refusal for b's lane and one for its stream: neither asked
        # again within the pause, though each round made requests and
        # transfers.
        assert stats(b)["streams_refused"] == 2
        with pytest.raises(ak.TooManyStreamsError, match="--max-streams"):
            c.array(x)
        assert stats(b)["streams_refused"] == 3

        a.close()
        time.sleep(pause + 0.1)  # past the first pause
        b.get_config()  # opens b's lane (a's ended when a closed it)
        assert b._lane is not None and stats(b)["lanes_open"] == 1
        got = b.array(x).to_ndarray()
        assert got.tobytes() == x.tobytes() and b._stream is not None
        assert stats(b)["streams_reaped"] == 1  # a's stream, found gone
    finally:
        for conn in (a, b, c):
            conn.close()


def test_tcp_keepalive(server: Any) -> None:
    """A TCP lane's and bulk stream's keep-alives and TCP_USER_TIMEOUT
    follow ``heartbeat`` (as Go's client does), so a vanished host fails a
    request on them within about as long as the ZeroMQ socket's heartbeats
    would; before, a blocked read waited for ever (no keep-alive at all)."""
    conn = server.connect(stream_network="tcp", heartbeat=8.0, shm=False)
    try:
        conn.array(np.arange(STREAM_THRESHOLD // 8, dtype=np.int64))  # opens the stream
        conn.list_arrays()  # and the lane
        assert conn._lane is not None and conn._stream is not None
        for sock in (conn._lane.sock, conn._stream.sock):
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 2
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 2
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 4
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 8000
    finally:
        conn.close()


def test_stripe_bounds_match_go() -> None:
    """The stripes of docs/protocol.md, "Bulk streams": the cases of Go's
    TestStripeBounds."""
    from arktos.core._protocol import stripe_bounds
    cases = {
        (3, 10000): [(0, 4096), (4096, 8192), (8192, 10000)],
        (3, (16 << 20) + 12345): [(0, 5599232), (5599232, 11198464), (11198464, 16789561)],
        (4, 1 << 24): [(0, 4194304), (4194304, 8388608), (8388608, 12582912), (12582912, 16777216)],
        (3, 5000): [(0, 4096), (4096, 5000), (5000, 5000)],
        (2, 0): [(0, 0), (0, 0)],
    }
    for (parts, nbytes), want in cases.items():
        assert [stripe_bounds(i, parts, nbytes) for i in range(parts)] == want


@pytest.mark.parametrize("stripes, nbytes, striped", [
    (3, STRIPE_THRESHOLD + 8 * 12345, True),  # not a multiple of 4 KiB
    (3, STRIPE_THRESHOLD - 8, False),
    (1, STRIPE_THRESHOLD * 2, False),
    (16, STRIPE_THRESHOLD, True),
])
def test_striped_transfers(server: Any, stripes: int, nbytes: int, striped: bool,
                           rng: np.random.Generator) -> None:
    """Over TCP streams an array of STRIPE_THRESHOLD bytes or more goes up
    and comes down split across `stripes` streams (the server's striped_in
    and striped_out count it), bit for bit; a smaller one, or any with
    stripes=1, on one stream."""
    conn = ak.Connection(server.url, transport="stream", stream_network="tcp")
    conn.stripes = stripes
    try:
        x = rng.integers(-(1 << 62), 1 << 62, nbytes // 8)
        before = stats(conn)
        a = conn.array(x)
        back = a.to_ndarray()
        after = stats(conn)
        assert back.tobytes() == x.tobytes()
        assert (after["striped_in"] - before["striped_in"], after["striped_out"] - before["striped_out"]) == \
            (int(striped), int(striped))
        assert conn._stream is not None
        assert len(conn._stream.stripes) == (min(stripes, 16) - 1 if striped else 0)
        assert (after["bytes_stream_in"] - before["bytes_stream_in"]) == x.nbytes
    finally:
        conn.close()


def test_interrupted_striped_download_leaves_connection_working(server: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while this thread reads its stripe of a download closes the
    stream and its stripes (the other threads' reads end); the next
    transfers open new ones and get the right bytes."""
    conn = ak.Connection(server.url, transport="stream", stream_network="tcp")
    try:
        x = np.arange(STRIPE_THRESHOLD // 4, dtype=np.int64)
        a = conn.array(x)
        stream = conn._stream
        assert stream is not None and len(stream.stripes) == conn.stripes - 1
        _interrupt_reads(stream, monkeypatch)
        threads = threading.active_count()
        with pytest.raises(KeyboardInterrupt):
            a.to_ndarray()
        assert conn._stream is None
        assert threading.active_count() == threads  # the stripes' threads ended
        before = stats(conn)
        assert (a.to_ndarray() == x).all()
        assert stats(conn)["striped_out"] - before["striped_out"] == 1
    finally:
        conn.close()


def test_stripes_refused(conn: ak.Connection) -> None:
    """Stripes that name no stream, the transfer's own, one twice, or go
    with shared memory are refused, saying so."""
    a = conn.array(np.arange(3))
    for args, message in [
        ({"name": a.name, "stripes": [5]}, "need the transfer's own 'stream'"),
        ({"name": a.name, "stream": 7, "stripes": [7]}, "twice, or the transfer's own"),
        ({"name": a.name, "stream": 7, "stripes": [8, 8]}, "twice"),
        ({"name": a.name, "stream": 7, "shm": True, "stripes": [8]}, "drop one of them"),
        ({"name": a.name, "stream": 7, "stripes": list(range(8, 24))}, "at most 15"),
    ]:
        with pytest.raises(ak.ArktosError, match=message):
            conn._request("download", args)
    assert (a.to_ndarray() == np.arange(3)).all()


@pytest.mark.parametrize("bad", [0, 17, 2.0, True, "3"])
def test_stripes_option_is_checked(bad: Any) -> None:
    with pytest.raises(ValueError, match="stripes must be an int from 1 to 16"):
        ak.Connection("tcp://127.0.0.1:1", stripes=bad)


def test_ranged_download_under_the_threshold_is_not_striped(server: Any) -> None:
    """A ranged download's size is bounded from above (16 bytes an element)
    when it asks: its stripes go with stripe_min, and the server sends the
    4 MiB it is on the stream alone."""
    conn = ak.Connection(server.url, transport="stream", stream_network="tcp")
    try:
        x = (np.arange(4 << 20) % 251).astype(np.int8)
        a = conn.array(x)
        conn.array(np.zeros(STRIPE_THRESHOLD // 8)).delete()  # opens the stripes
        assert conn._stream is not None and conn._stream.stripes
        before = stats(conn)
        back = conn._download(a.name, 1, len(x))
        assert back.tobytes() == x[1:].tobytes()
        assert stats(conn)["striped_out"] == before["striped_out"]
    finally:
        conn.close()


def test_interrupted_striped_upload_frees_and_recovers(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while this thread sends its stripe of an upload closes the
    stream and its stripes (the other threads' sends end); the server frees
    what it reserved, and the next upload is striped and bit for bit."""
    conn = ak.Connection(server.url, transport="stream", stream_network="tcp")
    try:
        x = np.arange(STRIPE_THRESHOLD // 2, dtype=np.int64)  # 64 MiB
        conn.array(x).delete()  # opens the stream and its stripes
        used = conn.mem_info()["used"]
        stream = conn._stream
        assert stream is not None and len(stream.stripes) == conn.stripes - 1
        real = stream.sock.sendall

        def interrupt(data: Any, *args: Any) -> None:
            real(memoryview(data)[:4096])
            raise KeyboardInterrupt

        patched = _Patched(stream.sock, stream.sock.recv_into)
        patched.sendall = interrupt  # type: ignore[attr-defined]
        monkeypatch.setattr(stream, "sock", patched)
        threads = threading.active_count()
        with pytest.raises(KeyboardInterrupt):
            conn.array(x)
        assert conn._stream is None
        assert threading.active_count() == threads
        deadline = time.monotonic() + 20
        while conn.mem_info()["used"] != used:
            assert time.monotonic() < deadline, "the interrupted upload's reservation was not freed"
            time.sleep(0.02)
        before = stats(conn)
        a = conn.array(x)
        assert (a.to_ndarray() == x).all()
        after = stats(conn)
        assert after["striped_in"] - before["striped_in"] == 1
    finally:
        conn.close()

"""CurveZMQ on the ZeroMQ socket and TLS 1.3 on the TCP bulk streams and
request lanes: a client that has the server's public key works as on a plain
server; one without it, or with another key, is refused at once with a
message that says what to do; a stream port that answers with another
certificate than the one pinned over the socket gets nothing; and the bytes on
the wire (read by recording TCP relays between client and server) hold neither
the token nor any array byte, where a plain server's hold both."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SERVER_BIN, free_port

import arktos as ak
from arktos.core._transport import LANE_MAGIC, STREAM_MAGIC, path_counts

_CREATE = socket.create_connection  # the relays' own, past any test's redirect

TOKEN = "tok-3f9a1c5e7b2d4068-never-in-clear"
MARK = b"ARKTOS-PLAINTEXT"  # 16 bytes: the uploaded array's bytes repeat it


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    return tmp_path / "keys" / "server_key"


@pytest.fixture
def encrypted(make_server: Callable[..., Any], key_file: Path) -> Any:
    return make_server("--encrypt", "on", "--server-key-file", str(key_file), token=TOKEN)


def _key(key_file: Path) -> str:
    return Path(str(key_file) + ".pub").read_text().strip()


def test_key_files_and_a_working_connection(encrypted: Any, key_file: Path) -> None:
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = _key(key_file)
    assert len(key) == 40
    conn = ak.Connection(encrypted.url, token=TOKEN, server_key=key)
    assert conn.config["encryption"] == "curve" and conn.config["server_key"] == key
    rng = np.random.default_rng(5)
    keys, vals = rng.integers(0, 100, 200_000), rng.random(200_000)
    k, v = conn.array(keys), conn.array(vals)
    assert np.array_equal(v.to_ndarray(), vals)  # bit for bit
    uk, sums = ak.GroupBy(k).sum(v)
    want = np.zeros(100)
    np.add.at(want, keys, vals)
    assert np.array_equal(uk.to_ndarray(), np.arange(100))
    assert np.allclose(sums.to_ndarray(), want, rtol=1e-12, atol=0)
    conn.close()
    # The path of the .pub file does as well as the key.
    again = ak.Connection(encrypted.url, token=TOKEN, server_key=str(key_file) + ".pub")
    assert again.config["encryption"] == "curve"
    again.close()


def test_without_the_key_or_with_another_it_is_refused_at_once(encrypted: Any, key_file: Path) -> None:
    other = "rq:A<@-6S#rvTy/rr*bb>!&6!?*dkX2XWt!p&IVF"
    for key, says in [(None, "has no server_key: pass server_key="), (other, "is not this server's")]:
        t0 = time.monotonic()
        with pytest.raises(ak.AuthFailedError, match=says):
            ak.Connection(encrypted.url, token=TOKEN, server_key=key, timeout=30)
        assert time.monotonic() - t0 < 10  # (not the 30 s timeout: the handshake's failure is reported)
    with pytest.raises(ValueError, match="40 Z85 characters"):
        ak.Connection(encrypted.url, token=TOKEN, server_key="short")


def test_the_key_survives_a_restart(make_server: Callable[..., Any], key_file: Path) -> None:
    first = make_server("--encrypt", "on", "--server-key-file", str(key_file))
    key = _key(key_file)
    first.stop()
    second = make_server("--encrypt", "on", "--server-key-file", str(key_file), url=first.url)
    conn = ak.Connection(second.url, server_key=key)
    assert conn.config["server_key"] == key
    conn.close()


def test_a_key_file_others_can_read_is_refused(tmp_path: Path, key_file: Path) -> None:
    key_file.parent.mkdir()
    key_file.write_text("x" * 40 + "\n")
    os.chmod(key_file, 0o644)
    run = subprocess.run([str(SERVER_BIN), "--addr", f"tcp://127.0.0.1:{free_port()}", "--encrypt", "on",
                          "--server-key-file", str(key_file)], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "HOME": str(tmp_path)})
    assert run.returncode != 0
    assert "can be read by others" in run.stderr and "chmod 600" in run.stderr


class _Relay:
    """A TCP relay on a free loopback port to `upstream`, keeping every byte
    it forwards either way."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream[len("tcp://"):].rpartition(":")
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.seen = bytearray()
        self.lock = threading.Lock()
        self.socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            up = _CREATE(self.upstream)
            self.socks += [down, up]
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(1 << 16)
                if not data:
                    break
                with self.lock:
                    self.seen += data
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.listener.close()
        for s in self.socks:
            s.close()


@pytest.fixture
def relay() -> Iterator[Callable[[str], _Relay]]:
    made: list[_Relay] = []

    def make(upstream: str) -> _Relay:
        made.append(_Relay(upstream))
        return made[-1]

    yield make
    for r in made:
        r.close()


def _traffic(url: str, key: str | None) -> None:
    """A token'd session that uploads and downloads MARK-filled bytes (over
    ZeroMQ only: the relay carries the ZeroMQ socket, not streams)."""
    conn = ak.Connection(url, token=TOKEN, server_key=key, transport="frames", lane=False)
    data = np.frombuffer(MARK * 4096, dtype=np.uint8)
    a = conn.array(data)
    assert np.array_equal(a.to_ndarray(), data)
    conn.close()


def test_no_token_or_array_byte_in_clear(make_server: Callable[..., Any], encrypted: Any, key_file: Path,
                                         relay: Callable[[str], _Relay]) -> None:
    plain = make_server("--stream-port", "-1", token=TOKEN)
    seen_plain = relay(plain.url)
    _traffic(seen_plain.url, None)
    # The control: a plain server's bytes carry both, so the relay sees them.
    assert TOKEN.encode() in seen_plain.seen and MARK in seen_plain.seen
    seen = relay(encrypted.url)
    _traffic(seen.url, _key(key_file))
    assert len(seen.seen) > len(MARK) * 4096  # the array went through the relay
    assert TOKEN.encode() not in seen.seen and MARK not in seen.seen


def test_ak_server_passes_its_key(tmp_path: Path) -> None:
    key_file = tmp_path / "k" / "server_key"
    with ak.Server(SERVER_BIN, args=["--encrypt", "on", "--server-key-file", str(key_file)]) as srv:
        assert srv.server_key == _key(key_file)
        conn = srv.connection()
        assert conn.config["encryption"] == "curve"
        conn.close()


def _stats(conn: ak.Connection) -> dict[str, int]:
    return {k: int(v) for k, v in conn._request("stats")[0].items()}


def _redirect(monkeypatch: pytest.MonkeyPatch, port: int, to: int) -> None:
    """Send this process's TCP connects to loopback `port` to `to` instead
    (the client dials the stream port open_stream names)."""

    def dial(addr: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        if addr[1] == port:
            addr = (addr[0], to)
        return _CREATE(addr, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", dial)


def test_streams_and_lanes_are_tls_and_carry_nothing_in_clear(make_server: Callable[..., Any], key_file: Path,
                                                              relay: Callable[[str], _Relay],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With the socket encrypted, bulk streams (and their stripes) and the
    request lane are TLS: the array round-trips bit for bit over them, and
    neither relay (ZeroMQ port, stream port) sees the token, an array byte
    or a stream's handshake in clear."""
    port = free_port()
    srv = make_server("--encrypt", "on", "--server-key-file", str(key_file), "--stream-port", str(port), token=TOKEN)
    ctrl, streams = relay(srv.url), relay(f"tcp://127.0.0.1:{port}")
    _redirect(monkeypatch, port, int(streams.url.rpartition(":")[2]))
    before = path_counts["links_tls"]
    conn = ak.Connection(ctrl.url, token=TOKEN, server_key=_key(key_file), stream_network="tcp", shm=False)
    try:
        data = np.frombuffer(MARK * (3 << 20), dtype=np.uint8)  # 48 MiB: striped
        a = conn.array(data)
        assert conn.stream_network == "tcp"
        fills = path_counts["tls_fills"]
        back = a.to_ndarray()
        assert np.array_equal(back, data)
        # Records are read from the kernel in large pieces (_TLSSocket), not
        # one or two system calls per 16 KiB record as ssl.SSLSocket does.
        assert path_counts["tls_fills"] - fills < data.nbytes // (32 << 10)
        for _ in range(5):
            conn.get_config()  # on the lane
        assert conn._lane is not None
        keys = np.arange(5000) % 7
        k, v = conn.array(keys), conn.array(keys * 1.5)  # small: their bytes ride the lane's frames
        uk, sums = ak.GroupBy(k).sum(v)
        assert np.array_equal(uk.to_ndarray(), np.arange(7))
        assert np.array_equal(sums.to_ndarray(), np.bincount(keys, keys * 1.5))
        st = _stats(conn)
    finally:
        conn.close()
    assert path_counts["links_tls"] - before >= 2, "the stream and the lane were not opened with TLS"
    assert st["stream_tls"] >= 2 and st["stream_tls_refused"] == 0
    assert len(streams.seen) > data.nbytes  # the array took the stream (both ways)
    for seen in (ctrl.seen, streams.seen):
        assert TOKEN.encode() not in seen and MARK not in seen
        assert STREAM_MAGIC not in seen and LANE_MAGIC not in seen


def test_a_stream_with_another_certificate_gets_nothing(make_server: Callable[..., Any], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream port that answers with a certificate other than the one
    open_stream pinned (here another encrypted server's) is refused before
    the ticket goes out; the array takes the encrypted socket instead."""
    srv = make_server("--encrypt", "on", "--server-key-file", str(tmp_path / "a"))
    other_port = free_port()
    make_server("--encrypt", "on", "--server-key-file", str(tmp_path / "b"), "--stream-port", str(other_port))
    conn = ak.Connection(srv.url, server_key=(tmp_path / "a.pub").read_text().strip(), stream_network="tcp",
                         shm=False, lane=False)
    try:
        port = int(conn._request("open_stream")[0]["port"])
        _redirect(monkeypatch, port, other_port)
        with pytest.raises(ConnectionError, match="not the one the server named"):
            conn._open_stream()
        data = np.random.default_rng(2).random(1 << 18)
        assert np.array_equal(conn.array(data).to_ndarray(), data)
    finally:
        conn.close()

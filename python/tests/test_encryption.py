"""CurveZMQ on the ZeroMQ socket: a client that has the server's public key
works as on a plain socket; one without it, or with another key, is refused
at once with a message that says what to do; and the bytes on the wire (read
by a recording TCP relay between client and server) hold neither the token
nor any array byte, where a plain server's hold both."""

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
            up = socket.create_connection(self.upstream)
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

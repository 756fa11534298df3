"""A connect where no server listens fails at once, with how to start one;
one that something accepts, however slow to answer, waits its timeout."""

from __future__ import annotations

import socket
import statistics
import time
from pathlib import Path

import pytest

import arktos as ak
from arktos.core._probe import ServerNotListeningError

HINT = r"start one with `make serve` in a checkout of arktos, or .* ak\.connect\(start_server=True\)"


def test_nothing_listens_fails_fast(unused_url: str) -> None:
    took = []
    for _ in range(10):
        start = time.monotonic()
        with pytest.raises(ConnectionRefusedError, match=rf"no arktos-server listens at {unused_url} "
                                                         rf"\(connection refused\); {HINT}") as info:
            ak.Connection(unused_url)  # no timeout given: the handshake would wait 10 s
        took.append(time.monotonic() - start)
        assert isinstance(info.value, ServerNotListeningError) and isinstance(info.value, TimeoutError)
        assert info.value.errno is not None
    assert max(took) < 1.0, took
    print(f"refused connect: p50 {statistics.median(took) * 1e3:.2f} ms, max {max(took) * 1e3:.2f} ms")


def test_module_connect_fails_fast(unused_url: str) -> None:
    start = time.monotonic()
    with pytest.raises(ConnectionRefusedError, match=HINT):
        ak.connect(unused_url)
    assert time.monotonic() - start < 2.0


def test_localhost_name_fails_fast() -> None:
    # tcp://localhost:PORT resolves to 127.0.0.1 and maybe ::1: all must refuse
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ServerNotListeningError, match=f"tcp://localhost:{port}"):
        ak.Connection(f"tcp://localhost:{port}")
    assert time.monotonic() - start < 2.0


def test_ipc_without_socket_file_fails_fast(tmp_path: Path) -> None:
    url = f"ipc://{tmp_path / 'nothing.sock'}"
    with pytest.raises(ServerNotListeningError, match=rf"{url} \(no socket file .*nothing.sock\); {HINT}"):
        ak.Connection(url)


def test_ipc_stale_socket_file_fails_fast(tmp_path: Path) -> None:
    path = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))  # bound, never listening: as a crashed server leaves it
    with pytest.raises(ServerNotListeningError, match="connection refused"):
        ak.Connection(f"ipc://{path}")


def test_real_server_connects(server) -> None:
    with ak.Connection(server.url) as conn:
        assert conn.config["protocol_version"] == 1


def test_ipc_server_connects(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from conftest import start_server

    url = f"ipc://{tmp_path / 'arktos.sock'}"
    srv = start_server(tmp_path_factory.mktemp("home"), url=url)
    try:
        with ak.Connection(url, timeout=10) as conn:
            assert conn.list_arrays() == []
    finally:
        srv.stop()


def test_listening_but_silent_waits_the_timeout() -> None:
    # Something accepts TCP connections but never speaks ZeroMQ (a server
    # that is slow to start, or busy): the probe passes and the handshake
    # gets its whole timeout.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(TimeoutError, match=rf"no reply from {url}.*is arktos-server running\?") as info:
            ak.Connection(url, timeout=0.6)
        took = time.monotonic() - start
        assert not isinstance(info.value, ConnectionRefusedError)
        assert 0.55 < took < 5.0, took

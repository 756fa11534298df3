"""Fixtures that run real arktos-server processes.

The binary is /work/main/bin/arktos-server relative to this file
(../../bin/arktos-server), or $ARKTOS_SERVER_BIN. Tests that need a server
are skipped, with the reason, when the binary is missing. Each server runs
with HOME set to a temporary folder, so a generated token file never lands
in the real ~/.arktos.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zmq

import arktos as ak
from arktos.core._protocol import decode_header, encode_request

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "testdata"
SERVER_BIN = Path(os.environ.get("ARKTOS_SERVER_BIN", REPO / "bin" / "arktos-server"))
START_TIMEOUT = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running arktos-server process."""

    url: str
    process: subprocess.Popen[bytes]
    home: Path
    token: str | None = None

    def connect(self, **kwargs: Any) -> ak.Connection:
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("timeout", 30.0)
        return ak.Connection(self.url, **kwargs)

    def stop(self) -> None:
        # SIGTERM first: a server that stops cleanly removes its unix stream
        # socket's directory (a killed one leaves it in $TMPDIR).
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()  # (read only when it fails to start; left open it warned)


def start_server(home: Path, *flags: str, token: str | None = None,
                 env_extra: dict[str, str] | None = None, url: str | None = None) -> Server:
    """Start arktos-server on a free loopback port (or url: a restart on the
    same one); return once get_config answers."""
    if not SERVER_BIN.exists():
        pytest.skip(f"{SERVER_BIN} not found: build it with `go build -o bin/arktos-server "
                    "./cmd/arktos-server` or set ARKTOS_SERVER_BIN")
    url = url or f"tcp://127.0.0.1:{free_port()}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("ARKTOS_")}
    env["HOME"] = str(home)
    env["ARKTOS_DEBUG_POISON"] = "1"  # pooled buffers poisoned: a reader that kept one breaks loudly
    env.update(env_extra or {})
    command = [str(SERVER_BIN), "--addr", url, "--log-level", "warn", *flags]
    if token is not None:
        command += ["--token", token]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    server = Server(url, process, home, token)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            with process.stderr:
                log = process.stderr.read().decode(errors="replace")
            raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}: {log}")
        try:
            # Without a token the handshake may fail with AUTH_FAILED: that
            # answer is enough to know the server is up.
            server.connect(timeout=0.5, token=token or "").close()
            return server
        except ak.AuthFailedError:
            return server
        except (ak.ShuttingDownError, ak.ConnectionLostError):
            # A server refusing to start (a corrupt --checkpoint) may answer
            # so, or drop the handshake's connection as it exits: the next
            # round sees the exit.
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.01)
        except TimeoutError as err:
            if "still restoring its checkpoint" in str(err):
                return server  # up, and bringing its --checkpoint back
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.01)  # (a refused connect, before the server listens, fails at once)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the caller's ARKTOS_* settings out of every test."""
    for key in list(os.environ):
        if key.startswith("ARKTOS_") and key not in KEPT_ENV:
            monkeypatch.delenv(key)


#: The settings of the test run itself, which tests read: the server binary;
#: ARKTOS_REQUIRE_SIMD=1 (make test: the server must have the AVX-512
#: kernels); ARKTOS_TEST_SIMD=off (the shared server runs --simd=false, so
#: the tests check the plain loops through a real server).
KEPT_ENV = ("ARKTOS_SERVER_BIN", "ARKTOS_REQUIRE_SIMD", "ARKTOS_TEST_SIMD")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The shared server: 2 GiB limit, default frame size, no auth (and the
    plain loops, not the AVX-512 kernels, with ARKTOS_TEST_SIMD=off)."""
    flags = ["--max-memory", "2GiB"]
    if os.environ.get("ARKTOS_TEST_SIMD") == "off":
        flags.append("--simd=false")
    srv = start_server(tmp_path_factory.mktemp("home"), *flags)
    yield srv
    srv.stop()


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start extra servers with special flags; all are killed after the test."""
    started: list[Server] = []

    def make(*flags: str, token: str | None = None, env: dict[str, str] | None = None,
             url: str | None = None) -> Server:
        srv = start_server(tmp_path, *flags, token=token, env_extra=env, url=url)
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture
def conn(server: Server) -> Iterator[ak.Connection]:
    """A connection to the shared server; the test's arrays are deleted after it."""
    connection = server.connect()
    before = {entry["name"] for entry in connection.list_arrays()}
    yield connection
    if not connection.closed:
        leftover = [entry["name"] for entry in connection.list_arrays()
                    if entry["name"] not in before]
        connection.delete(leftover, missing_ok=True)
        connection.close()


@pytest.fixture
def default_conn(server: Server) -> Iterator[ak.Connection]:
    """ak.connect() to the shared server for module-level API tests."""
    yield ak.connect(server.url, timeout=30.0)
    ak.disconnect()


class RawClient:
    """A bare DEALER socket for sending hand-made (often broken) requests."""

    def __init__(self, url: str) -> None:
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVTIMEO, 10_000)
        self.socket.connect(url)
        self.next_id = 1

    def send(self, frames: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """Send frames as one message; return (reply header, payload frames)."""
        self.socket.send_multipart(frames)
        reply = self.socket.recv_multipart()
        return decode_header(reply[0]), reply[1:]

    def request(self, cmd: str, args: dict[str, Any], payload: list[bytes] | None = None,
                token: str = "") -> tuple[dict[str, Any], list[bytes]]:
        """Send a well-formed header with `payload`; check the reply's id."""
        req_id, self.next_id = self.next_id, self.next_id + 1
        header, frames = self.send([encode_request(req_id, token, cmd, args), *(payload or [])])
        assert header["id"] == req_id, header
        return header, frames

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def raw_client() -> Iterator[Callable[[str], RawClient]]:
    """Make RawClients to any URL; all are closed after the test."""
    clients: list[RawClient] = []

    def make(url: str) -> RawClient:
        clients.append(RawClient(url))
        return clients[-1]

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def raw(server: Server, raw_client: Callable[[str], RawClient]) -> RawClient:
    """A RawClient to the shared server."""
    return raw_client(server.url)


@pytest.fixture
def unused_url() -> str:
    """A loopback URL where no server listens."""
    return f"tcp://127.0.0.1:{free_port()}"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data directory for a server of the test's own (io_conn)."""
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def io_conn(make_server: Callable[..., Any], data_dir: Path) -> Iterator[ak.Connection]:
    """A connection to a server of the test's own over data_dir, 2 workers."""
    conn = make_server("--data-dir", str(data_dir), "--workers", "2").connect()
    yield conn
    conn.close()

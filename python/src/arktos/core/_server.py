"""Start an arktos-server from Python: ``ak.Server`` and ``ak.connect(start_server=True)``.

The binary is looked up, in order, at $ARKTOS_SERVER_BIN, in the package
(``arktos/bin/arktos-server``, put there by ``pip install ./python`` when Go
is installed), in ``bin/arktos-server`` of the source checkout this package
comes from (editable installs; ``make build`` puts it there), and on PATH.
A started server runs on a loopback port and is stopped by ``stop()``, on
leaving the ``with`` block, when the Server is garbage collected, or at
interpreter exit.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from . import _default
from ._errors import AuthFailedError, ShuttingDownError
from ._session import DEFAULT_URL, Session, _is_loopback, _split_url

__all__ = ["Server", "find_server_binary"]

BINARY_NAME = "arktos-server"
_SV = TypeVar("_SV", bound="Server")

#: How long start() waits for a new server to answer.
START_TIMEOUT = 30.0
#: How long stop() waits after SIGTERM before it kills the server.
STOP_TIMEOUT = 10.0


def _candidates() -> list[tuple[str, Path | None]]:
    """(where, path) for every place a binary is looked for, in order."""
    here = Path(__file__).resolve().parents[1]  # the package folder (this is arktos/core/_server.py)
    places: list[tuple[str, Path | None]] = []
    env = os.environ.get("ARKTOS_SERVER_BIN")
    places.append(("$ARKTOS_SERVER_BIN", Path(env) if env else None))
    places.append(("bundled with the package", here / "bin" / BINARY_NAME))
    checkout = here.parents[2]  # python/src/arktos -> the repository root
    if (checkout / "go.mod").is_file() and (checkout / "cmd" / BINARY_NAME).is_dir():
        places.append(("the source checkout", checkout / "bin" / BINARY_NAME))
    which = shutil.which(BINARY_NAME)
    places.append(("PATH", Path(which) if which else None))
    return places


def find_server_binary() -> Path:
    """Return the arktos-server binary that ak.Server() would start.

    Looks at $ARKTOS_SERVER_BIN (when set, it must be right), the binary
    bundled in the package, the ``bin/`` folder of a source checkout, then
    PATH; raises FileNotFoundError naming every place tried.

    >>> ak.find_server_binary()
    PosixPath('/home/me/arktos/bin/arktos-server')
    """
    env = os.environ.get("ARKTOS_SERVER_BIN")
    if env and not (Path(env).is_file() and os.access(env, os.X_OK)):
        raise FileNotFoundError(f"ARKTOS_SERVER_BIN is {env!r}, which is not an executable file; "
                                "fix it or unset it to use the bundled or built arktos-server")
    tried: list[str] = []
    for where, path in _candidates():
        if path is None:
            tried.append(f"{where} (not set)" if where.startswith("$") else f"{where} (none)")
            continue
        if path.is_file() and os.access(path, os.X_OK):
            return path
        tried.append(f"{where}: {path} (missing)" if not path.exists() else
                     f"{where}: {path} (not an executable file)")
    raise FileNotFoundError(
        "cannot find the arktos-server binary; looked at " + "; ".join(tried) +
        ". Install the package with Go available (pip install ./python builds it), run "
        "`make build` in the repository, or set ARKTOS_SERVER_BIN to the binary.")


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _stop_process(process: subprocess.Popen[bytes], log_path: str, timeout: float) -> None:
    """SIGTERM (the server stops cleanly), then SIGKILL after `timeout`."""
    try:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
    finally:
        try:
            os.unlink(log_path)
        except OSError:
            pass


class Server:
    """A local arktos-server process (ak.Server, arktos.numpy's subclass,
    types its connections as ak.Connection; its docstring tells the rest).
    """

    def __init__(self, binary: str | os.PathLike[str] | None = None, *, port: int | None = None,
                 url: str | None = None, max_memory: str | int | None = None,
                 workers: int | None = None, token: str | None = None,
                 data_dir: str | os.PathLike[str] | None = None,
                 checkpoint: str | os.PathLike[str] | None = None, log_level: str = "warn",
                 args: Sequence[str] = (), start_timeout: float = START_TIMEOUT) -> None:
        if url is not None and port is not None:
            raise ValueError("give either url or port, not both")
        self._binary = Path(binary) if binary is not None else None
        self._port = port
        self._fixed_url = url
        self.token = token
        self.start_timeout = start_timeout
        flags: list[str] = ["--log-level", log_level]
        for flag, value in (("--max-memory", max_memory), ("--workers", workers),
                            ("--token", token), ("--data-dir", data_dir),
                            ("--checkpoint", checkpoint)):
            if value is not None:
                flags += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
        self._flags = flags + [str(arg) for arg in args]
        self.url: str | None = url
        self.process: subprocess.Popen[bytes] | None = None
        self._log_path: str | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._connections: list[weakref.ref[Session]] = []

    @property
    def binary(self) -> Path:
        """The arktos-server executable this Server runs.

        >>> ak.Server().binary
        PosixPath('/home/me/arktos/bin/arktos-server')
        """
        if self._binary is None:
            self._binary = find_server_binary()
        return self._binary

    @property
    def running(self) -> bool:
        """True while the server process is alive.

        >>> with ak.Server() as srv:
        ...     srv.running
        True
        """
        return self.process is not None and self.process.poll() is None

    def start(self: _SV) -> _SV:
        """Start the server and return once it answers requests (or raise).

        Raises RuntimeError with the server's log when it exits instead, and
        TimeoutError when it does not answer within ``start_timeout`` s.

        >>> srv = ak.Server().start()
        >>> srv.url
        'tcp://127.0.0.1:40213'
        """
        if self.running:
            return self
        binary = self.binary
        attempts = 1 if (self._fixed_url or self._port) else 3
        for attempt in range(attempts):
            url = self._fixed_url or f"tcp://127.0.0.1:{self._port or _free_port('127.0.0.1')}"
            try:
                self._launch(binary, url)
                return self
            except _AddressInUse:
                if attempt == attempts - 1:
                    raise RuntimeError(f"{url} is already in use; pick another port") from None
        return self  # unreachable

    def _launch(self, binary: Path, url: str) -> None:
        fd, log_path = tempfile.mkstemp(prefix="arktos-server-", suffix=".log")
        command = [str(binary), "--addr", url, *self._flags]
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                       start_new_session=True)  # Ctrl-C in a terminal stays with Python
        except OSError as err:
            os.close(fd)
            os.unlink(log_path)
            raise RuntimeError(f"cannot run {binary}: {err}") from err
        os.close(fd)
        self.process, self._log_path, self.url = process, log_path, url
        self._finalizer = weakref.finalize(self, _stop_process, process, log_path, STOP_TIMEOUT)
        try:
            self._wait_ready(command)
        except BaseException:
            self._finalizer()
            self.process = None
            raise

    def _wait_ready(self, command: list[str]) -> None:
        assert self.process is not None and self.url is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.process.poll() is not None:
                log = self.log()
                if "address already in use" in log.lower():
                    raise _AddressInUse()
                raise RuntimeError(f"{' '.join(command)} exited with status {self.process.returncode}:\n"
                                   f"{log.strip()}")
            try:
                # The first answer, even AUTH_FAILED, shows the server is up.
                Session(self.url, token=self.token or "", timeout=0.25).close()
                return
            except AuthFailedError:
                return
            except (TimeoutError, ShuttingDownError):  # (one refusing to start may answer so, then exit)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{' '.join(command)} did not answer within "
                                       f"{self.start_timeout:g} s; its log:\n{self.log().strip()}") from None
                time.sleep(0.01)  # (a refused connect, before the server listens, fails at once)

    def log(self) -> str:
        """The server's log so far (its stderr and stdout).

        >>> print(srv.log())
        """
        if self._log_path is None:
            return ""
        try:
            return Path(self._log_path).read_text(errors="replace")
        except OSError:
            return ""

    @property
    def server_key(self) -> str | None:
        """The public CURVE key of this server when it encrypts its socket
        (started with ``args=["--encrypt", "on", ...]``), read from the
        ``.pub`` file it wrote; None otherwise. connect() and connection()
        pass it on.

        >>> ak.Server(args=["--encrypt", "on"]).start().server_key  # doctest: +SKIP
        'rq:A<@-6S#rvTy/rr*bb>!&6!?*dkX2XWt!p&IVF'
        """
        flags = self._flags
        if "--encrypt" not in flags or flags[flags.index("--encrypt") + 1:][:1] != ["on"]:
            return None
        key_file = Path.home() / ".arktos" / "server_key"
        if "--server-key-file" in flags and flags.index("--server-key-file") + 1 < len(flags):
            key_file = Path(flags[flags.index("--server-key-file") + 1])
        try:
            return Path(str(key_file) + ".pub").read_text().strip() or None
        except OSError:
            return None

    def connect(self, **kwargs: Any) -> Session:
        """Make this server the default connection: ``ak.connect(self.url, ...)``.

        Keyword arguments go to ak.connect(); the token defaults to this
        Server's. The connection is closed when the server stops.

        >>> srv.connect()
        connected to arktos server tcp://127.0.0.1:40213
        """
        if not self.running:
            self.start()
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("server_key", self.server_key)
        conn = _default.connect(self.url, **kwargs)
        self._connections.append(weakref.ref(conn))
        return conn

    def connection(self, **kwargs: Any) -> Session:
        """Return a new ak.Connection to this server (not the default one).

        >>> conn = srv.connection(); conn.array([1, 2, 3])
        """
        if not self.running:
            self.start()
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("server_key", self.server_key)
        conn = _default.connection_class()(self.url, **kwargs)
        self._connections.append(weakref.ref(conn))
        return conn

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Close connections made by connect()/connection(), then stop the
        server (SIGTERM, SIGKILL after `timeout` s). Calling it again does nothing.

        >>> srv.stop()
        """
        for ref in self._connections:
            conn = ref()
            if conn is not None and not conn.closed:
                if conn is _default.current():
                    _default.disconnect()
                else:
                    conn.close()
        self._connections.clear()
        if self._finalizer is not None and self._finalizer.alive:
            self._finalizer.detach()
            assert self.process is not None and self._log_path is not None
            _stop_process(self.process, self._log_path, timeout)
        self._log_path = None

    def __enter__(self: _SV) -> _SV:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        if self.process is None:
            state = "not started"
        elif self.running:
            state = f"running, pid {self.process.pid}"
        else:
            state = f"stopped, exit status {self.process.returncode}"
        return f"<arktos.Server {self.url or '(no url yet)'} ({state})>"


class _AddressInUse(Exception):
    pass


#: The server ak.connect(start_server=True) started, if any.
_auto_server: Server | None = None


def _listening(endpoint: str) -> bool | None:
    """Whether something accepts connections at a zmq endpoint on this host;
    None when that cannot be told (a remote host)."""
    if endpoint.startswith("ipc://"):
        path = endpoint[len("ipc://"):]
        if not os.path.exists(path):
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            return sock.connect_ex(path) == 0
    if not endpoint.startswith("tcp://") or not _is_loopback(endpoint):
        return None
    host, _, port = endpoint[len("tcp://"):].rpartition(":")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        return None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(1.0)
            if sock.connect_ex(address) == 0:
                return True
    return False


def ensure_server(url: str | None, token: str | None = None) -> None:
    """Start a local server at `url` (default $ARKTOS_URL, else the default
    URL) unless something already listens there."""
    global _auto_server

    endpoint, url_token = _split_url(url or os.environ.get("ARKTOS_URL") or DEFAULT_URL)
    listening = _listening(endpoint)
    if listening is None:
        raise ValueError(f"start_server=True starts a server on this host only; {endpoint} is not "
                         "a loopback tcp:// or an ipc:// address")
    if listening:
        return
    if _auto_server is not None:
        _auto_server.stop()
    addr = endpoint.replace("tcp://localhost:", "tcp://127.0.0.1:", 1)
    _auto_server = Server(url=addr, token=token or url_token or os.environ.get("ARKTOS_TOKEN"))
    _auto_server.start()
    print(f"started arktos-server {_auto_server.binary} on {addr}")


_default.use_server_starter(ensure_server)

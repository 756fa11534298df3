"""One client connection to an arktos-server: a ZeroMQ DEALER socket.

A Connection sends one request at a time (a lock serialises threads that
share one) and waits for the reply whose id matches; any other reply is the
late answer to a request abandoned by Ctrl-C or a timeout and is dropped.

Arrays dropped by the garbage collector are not deleted from the finalizer
(finalizers run in any thread, and zmq sockets are not thread-safe): the
finalizer only appends the name to ``_pending_deletes``, a thread-safe deque,
and the names go to the server as one ``delete`` with ``missing_ok`` before the
next request and on close.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np
import zmq
from numpy.typing import ArrayLike, NDArray

from ._dtypes import DTYPES, from_wire, to_wire
from ._errors import ArktosError, AuthFailedError
from ._pdarray import pdarray
from ._protocol import decode_header, encode_request, join_frames, parse_reply, split_frames

__all__ = ["Connection", "DEFAULT_URL"]

DEFAULT_URL = "tcp://localhost:5555"
#: How long the first get_config waits when no timeout is given.
CONNECT_TIMEOUT = 10.0
#: How long close() waits for the server to take pending deletes.
CLOSE_TIMEOUT = 2.0
_SERVER_HINT = "is arktos-server running? start it with `make serve`"
_TOKEN_SOURCES = ("pass token=..., add ?token=... to the URL, set ARKTOS_TOKEN or "
                  "ARKTOS_TOKEN_FILE, or put the token in ~/.arktos/token")


def _split_url(url: str) -> tuple[str, str | None]:
    """Split ``tcp://host:port?token=...`` into the zmq endpoint and the token."""
    endpoint, _, query = url.partition("?")
    params = parse_qs(query, keep_blank_values=True, strict_parsing=False) if query else {}
    unknown = sorted(set(params) - {"token"})
    if unknown:
        raise ValueError(f"unknown URL parameter(s) {', '.join(unknown)} in {url!r}; "
                         "the only one is ?token=...")
    tokens = params.get("token")
    return endpoint, (tokens[-1] if tokens else None)


def _read_token_file(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as err:
        raise FileNotFoundError(f"cannot read the arktos token file {path}: {err.strerror}; "
                                "fix ARKTOS_TOKEN_FILE or unset it") from err


def _given_token(token: str | None, url_token: str | None) -> str | None:
    """The token from, in order: argument, URL, ARKTOS_TOKEN, ARKTOS_TOKEN_FILE."""
    for candidate in (token, url_token, os.environ.get("ARKTOS_TOKEN")):
        if candidate is not None:
            return candidate
    token_file = os.environ.get("ARKTOS_TOKEN_FILE")
    return _read_token_file(Path(token_file)) if token_file else None


def _as_wire_array(x: ArrayLike) -> NDArray[Any]:
    """`x` as a 1-D, C-contiguous, little-endian array; no copy when it already is."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    elif arr.ndim != 1:
        raise ValueError(f"only 1-D arrays are supported, got shape {arr.shape}; "
                         "use x.ravel() to upload the elements in C order")
    return np.ascontiguousarray(arr, dtype=DTYPES[to_wire(arr.dtype)])


class Connection:
    """A connection to one arktos-server.

    ``url`` defaults to $ARKTOS_URL, else ``tcp://localhost:5555``. The token
    comes from ``token``, the URL (``?token=...``), $ARKTOS_TOKEN, the file
    named by $ARKTOS_TOKEN_FILE, and lastly ``~/.arktos/token`` when the server
    refuses a request without one. ``timeout`` (seconds) bounds every request;
    None waits forever, except for the first get_config, which waits at most
    10 s so that a missing server is reported. Requests from several threads
    are serialised; for parallel transfers give each thread its own
    Connection.

    >>> conn = ak.Connection("tcp://localhost:5555")
    >>> a = conn.array([1, 2, 3])
    >>> conn.close()
    """

    def __init__(self, url: str | None = None, token: str | None = None,
                 timeout: float | None = None) -> None:
        self.url, url_token = _split_url(url or os.environ.get("ARKTOS_URL") or DEFAULT_URL)
        self.timeout = timeout
        given = _given_token(token, url_token)
        self._token = given or ""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending_deletes: deque[str] = deque()
        self._socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._close_socket = weakref.finalize(self, self._socket.close, 0)
        try:
            self._socket.connect(self.url)
        except zmq.ZMQError as err:
            self._close_socket()
            raise ValueError(f"cannot connect to {self.url!r}: {err}; "
                             "expected e.g. tcp://host:5555 or ipc:///path") from None
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        try:
            self.config: dict[str, Any] = self._handshake(token_given=given is not None)
        except BaseException:
            self._close_socket()
            raise

    def _handshake(self, *, token_given: bool) -> dict[str, Any]:
        """get_config, retried once with ~/.arktos/token if no token was given."""
        wait = CONNECT_TIMEOUT if self.timeout is None else self.timeout
        try:
            return self._request("get_config", timeout=wait)[0]
        except AuthFailedError as err:
            if token_given:
                raise
            home_file = Path.home() / ".arktos" / "token"
            if not home_file.is_file():
                raise AuthFailedError(f"{err.message}; no token was given: {_TOKEN_SOURCES}") from None
            self._token = _read_token_file(home_file)
            return self._request("get_config", timeout=wait)[0]

    # -- plumbing ---------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once close(), disconnect() or shutdown() ran."""
        return not self._close_socket.alive

    @property
    def max_frame_size(self) -> int:
        """The server's largest payload frame, in bytes (from get_config)."""
        return int(self.config["max_frame_size"])

    def _request(self, cmd: str, args: dict[str, Any] | None = None,
                 payload: Sequence[Any] = (), *, timeout: float | None = None,
                 ) -> tuple[dict[str, Any], list[zmq.Frame]]:
        """Send one request (after pending deletes) and return (result, payload frames)."""
        with self._lock:
            if self.closed:
                raise ConnectionError(f"the connection to {self.url} is closed; "
                                      "connect again with ak.connect()")
            self._flush_deletes(timeout)
            return self._roundtrip(cmd, args or {}, payload, timeout)

    def _flush_deletes(self, timeout: float | None) -> None:
        names: list[str] = []
        while self._pending_deletes:
            names.append(self._pending_deletes.popleft())
        if not names:
            return
        try:
            self._roundtrip("delete", {"names": names, "missing_ok": True}, (), timeout)
        except BaseException:
            self._pending_deletes.extendleft(reversed(names))
            raise

    def _roundtrip(self, cmd: str, args: dict[str, Any], payload: Sequence[Any],
                   timeout: float | None) -> tuple[dict[str, Any], list[zmq.Frame]]:
        if timeout is None:
            timeout = self.timeout
        req_id = next(self._ids)
        header = encode_request(req_id, self._token, cmd, args)
        self._socket.send_multipart([header, *payload], copy=False)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait_ms = None if deadline is None else math.ceil(
                max(0.0, deadline - time.monotonic()) * 1000)
            if not self._poller.poll(wait_ms):
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"no reply from {self.url} to {cmd!r} within "
                                       f"{timeout:g} s; {_SERVER_HINT}")
                continue
            frames = self._socket.recv_multipart(copy=False)
            reply = decode_header(frames[0].buffer)
            reply_id = reply.get("id")
            # id 0 answers a request whose header the server could not read:
            # ours, since abandoned requests were just as readable.
            if reply_id == req_id or (reply_id == 0 and reply.get("status") != 0):
                return parse_reply(reply).result, frames[1:]
            # Any other id is a late reply to an abandoned request: drop it.

    def _download(self, name: str, start: int | None = None,
                  stop: int | None = None) -> NDArray[Any]:
        """Download elements [start, stop) of array `name` into a new ndarray."""
        args: dict[str, Any] = {"name": name}
        if start is not None:
            args["start"] = start
        if stop is not None:
            args["stop"] = stop
        result, frames = self._request("download", args)
        return join_frames([frame.buffer for frame in frames], from_wire(result["dtype"]),
                           int(result["size"]), int(result["frame_size"]))

    def _pdarray(self, result: dict[str, Any], *, owned: bool) -> pdarray:
        return pdarray(self, result["name"], from_wire(result["dtype"]), int(result["size"]),
                       owned=owned)

    # -- public API -------------------------------------------------------

    def array(self, x: ArrayLike, name: str | None = None) -> pdarray:
        """Upload `x` (numpy array, list or scalar) and return a pdarray.

        `x` must be 1-D (a scalar becomes a 1-element array) of a supported
        dtype: int8..int64, uint8..uint64, float32, float64 or bool.
        Non-contiguous, Fortran-ordered and big-endian inputs are converted
        first; a C-contiguous little-endian array is sent without a copy and
        must not change until array() returns. Without `name` the server
        picks one (``arr_<n>``). The returned pdarray owns the server array:
        it is deleted when the pdarray is garbage collected or deleted, so
        keep it (``ak.array(x, name="n")`` on its own frees "n" again).

        >>> a = ak.array(np.arange(5))
        >>> a
        array([0, 1, 2, 3, 4])
        """
        data = _as_wire_array(x)
        frame_size = self.max_frame_size
        args: dict[str, Any] = {"dtype": to_wire(data.dtype), "size": data.size,
                                "frame_size": frame_size}
        if name is not None:
            args["name"] = name
        result, _ = self._request("upload", args, split_frames(data, frame_size))
        return self._pdarray(result, owned=True)

    def attach(self, name: str) -> pdarray:
        """Return a pdarray for the existing server array `name`.

        Unlike ak.array(), the pdarray does not own the array: dropping it
        leaves the array on the server (call .delete() to remove it). Raises
        UnknownArrayError (a KeyError) when there is no such array.

        >>> b = ak.attach("arr_1")
        """
        return self._pdarray(self.info(name), owned=False)

    def info(self, name: str) -> dict[str, Any]:
        """Return ``{name, dtype, size, nbytes}`` of the server array `name`.

        >>> ak.info("arr_1")
        {'dtype': 'int64', 'name': 'arr_1', 'nbytes': 24, 'size': 3}
        """
        return self._request("info", {"name": name})[0]

    def list_arrays(self) -> list[dict[str, Any]]:
        """Return every server array as ``{name, dtype, size, nbytes}``, by name.

        >>> [entry["name"] for entry in ak.list_arrays()]
        ['arr_1', 'arr_2']
        """
        return list(self._request("list")[0]["arrays"])

    def delete(self, names: str | Iterable[str], missing_ok: bool = False) -> int:
        """Delete server arrays by name, all or nothing; return how many went.

        With `missing_ok` unknown names are skipped, else one unknown name
        raises UnknownArrayError and deletes nothing. Prefer pdarray.delete()
        for arrays you hold.

        >>> ak.Connection().delete(["arr_1", "arr_2"])
        2
        """
        names = [names] if isinstance(names, str) else list(names)
        return int(self._request("delete", {"names": names, "missing_ok": missing_ok})[0]["deleted"])

    def get_config(self) -> dict[str, Any]:
        """Ask the server for its configuration (max_frame_size, max_memory, ...).

        >>> ak.get_config()["max_frame_size"]
        16777216
        """
        self.config = self._request("get_config")[0]
        return self.config

    def mem_info(self) -> dict[str, int]:
        """Return the server's memory use: ``{used, limit, free, arrays}``.

        ``used``/``limit``/``free`` are bytes, ``arrays`` a count.

        >>> ak.mem_info()["free"]
        2147483624
        """
        return {key: int(value) for key, value in self._request("mem_used")[0].items()}

    def get_mem_used(self) -> int:
        """Return the bytes the server's arrays use.

        >>> ak.get_mem_used()
        24
        """
        return self.mem_info()["used"]

    def shutdown(self) -> None:
        """Stop the server (it replies, then exits) and close this connection.

        >>> ak.shutdown()
        """
        try:
            self._request("shutdown")
        finally:
            self.close()

    def close(self) -> None:
        """Send pending deletes (best effort, 2 s at most) and close the socket.

        Calling it again does nothing.

        >>> conn.close()
        """
        with self._lock:
            if self.closed:
                return
            try:
                self._flush_deletes(CLOSE_TIMEOUT)
            except (ArktosError, TimeoutError, zmq.ZMQError):
                pass  # the server is gone or refuses: nothing left to free
            finally:
                self._close_socket()

    disconnect = close

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "connected"
        return f"<arktos.Connection {self.url} ({state})>"

"""The Session: one client connection to an arktos-server (a ZeroMQ DEALER socket), its requests, uploads and downloads.

It makes no array handles: ak.Connection (arktos.numpy) adds those. A
Session sends one request at a time (a lock serialises threads that
share one) and waits for the reply whose id matches; any other reply is the
late answer to a request abandoned by Ctrl-C or a timeout and is dropped.

Arrays dropped by the garbage collector are not deleted from the finalizer
(finalizers run in any thread, and zmq sockets are not thread-safe): the
finalizer only appends the name to ``_pending_deletes``, a thread-safe deque,
and the names go to the server as one ``delete`` with ``missing_ok`` before the
next request and on close.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import itertools
import math
import os
import socket
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast, runtime_checkable
from urllib.parse import parse_qs

import numpy as np
import zmq
from numpy.typing import ArrayLike, NDArray
from zmq.utils.monitor import recv_monitor_message

from . import _malloc, _probe
from ._bufpool import POOL
from ._commands import CommandTable
from ._dtypes import DTYPES, from_wire, to_wire
from ._errors import (
    ArgumentValueError,
    ArktosError,
    AuthFailedError,
    RestoringError,
    TooManyStreamsError,
    UnknownCommandError,
)
from ._progress import POLL_INTERVAL, Waiting, transfer_bar
from ._protocol import (
    MAX_STRIPES,
    PROTOCOL_VERSION,
    check_frames,
    decode_header,
    encode_request,
    join_frames,
    n_frames,
    parse_reply,
    split_frames,
)
from ._transport import (
    LANE_MAGIC,
    LANE_SPIN_DEFAULT,
    LANE_SPIN_MAX,
    STREAM_MAGIC,
    ConnectionLostError,
    LinkSocket,
    _close_sockets,
    _keepalive,
    _Lane,
    _LaneFrame,
    _link_tls,
    _MapFailed,
    _monitor,
    _parse_duration_ns,
    _place_download,
    _Placement,
    _PortUnreachable,
    _readable_now,
    _RetryAfter,
    _segment_io,
    _send_whole,
    _Stream,
    _write_lease,
    _Zstd,
    path_counts,
)

__all__ = ["ConnectionLostError", "DEFAULT_URL", "ServerArray", "Session"]


@runtime_checkable
class ServerArray(Protocol):
    """What a Session knows of an array handle (a pdarray): the name of its
    server array. The session layer never imports the array type."""

    def _live_name(self) -> str: ...


DEFAULT_URL = "tcp://localhost:5555"


#: How long the server may leave heartbeats unanswered before the ZeroMQ
#: connection counts as lost (Connection's ``heartbeat``; Go's
#: client.DefaultHeartbeat).
DEFAULT_HEARTBEAT = 30.0


#: A heartbeat's timeout ends only with a whole ZeroMQ frame received
#: (libzmq reads a PONG, like any message, after the frame the server is
#: sending; zeromq/libzmq#2709), so a download over ZeroMQ whose frame took
#: longer than the heartbeat to arrive (a slow link, a far SSH tunnel)
#: counted as lost while its bytes flowed. Such a download asks for frames
#: that take about an eighth of the heartbeat at the rate the last one came
#: at (_link_frame_size), at LINK_RATE_ASSUMED bytes a second before one was
#: measured and again after a lost connection. Go's client does the same.
LINK_RATE_ASSUMED = 1 << 20


#: The smallest frame asked for that way (smaller would cost more than it saves).
LINK_FRAME_MIN = 64 << 10


#: Downloads smaller than this say more about latency than rate: not measured.
LINK_SAMPLE = 1 << 20


#: How often connect asks a server restoring its checkpoint how far it is (s).
RESTORE_POLL = 0.05


#: How long the first get_config waits when no timeout is given, and how
#: long a bulk stream's or lane's connect and handshake may take: a stream
#: port whose packets a firewall drops held each large transfer and each
#: lane retry for the kernel's two minutes of retries before (Go's
#: client.connectTimeout).
CONNECT_TIMEOUT = 10.0


#: How long close() waits for the server to take pending deletes.
CLOSE_TIMEOUT = 2.0


#: Arrays of this many bytes or more travel over a bulk stream (transport
#: "auto"): below it one ZeroMQ message is as fast.
STREAM_THRESHOLD = 1 << 20


#: Arrays of this many bytes or more are uploaded through a shared-memory
#: segment when the bulk stream is a unix socket (the server on this host):
#: below it the lease's extra round trip costs more than it saves (measured
#: when the segment was still mapped and copied into: 1 MiB 0.67 against
#: 1.25 GiB/s over the stream, 8 MiB even, 64 MiB 4.5 against 3.5).
SHM_THRESHOLD = 16 << 20


#: Arrays of this many bytes or more travel striped over several TCP bulk
#: streams (Connection.stripes): one loopback TCP connection moved 2.2-2.5
#: GiB/s here, three 3.4-3.8 (the kernel's work for one connection runs
#: mostly on one core). Below it the threads cost more than they save.
STRIPE_THRESHOLD = 16 << 20


#: Connection.stripes' default: streams a large TCP transfer is split over.
DEFAULT_STRIPES = 3


#: A lane idle this long is checked for a close by its server before a
#: request goes out on it (Go's laneIdleCheck): busy lanes skip the poll.
LANE_IDLE_CHECK = 0.02


#: Uploads and downloads of fewer bytes take the request lane. Measured
#: here (p50, lane against ZeroMQ frames): 800 bytes up 92-97 µs against
#: 515-572, down 88-142 against 462-488; 128 KiB up 180-278 against
#: 744-894, down 227-247 against 554-563; at 256 KiB about even, at 512 KiB
#: the lane's download (read into bytes, then copied) 1.1-1.2 ms against 0.7.
LANE_PAYLOAD_MAX = 256 << 10


#: Downloads of fewer bytes come back inline in the lane's reply while no
#: bulk stream is open, read from the socket straight into the new array
#: (_Placement): no bytes object, no second copy. From 256 KiB to 1 MiB that
#: took 0.5-0.8x the time of ZeroMQ's frames; a bulk stream, once open, was
#: faster still, so with one those go on it (bench/transfer/mid.py; its
#: README's "Mid-size downloads").
LANE_DOWNLOAD_MAX = 1 << 20

#: Arrays of this many bytes and more go straight to and from every locale
#: of a server with several (docs/locales.md); smaller ones through the
#: coordinator, whose one round trip is then the cheaper.
LOCALE_DIRECT_MIN = 1 << 20


#: A lane message has at most 64 frames, the header one of them.
LANE_MAX_FRAMES = 64


TRANSPORTS = ("auto", "frames", "stream")


#: A request's first wait for its reply (ms): most replies come well within it.
_FIRST_WAIT_MS = int(POLL_INTERVAL * 1000)


COMPRESSIONS = (None, "zstd")


_SERVER_HINT = f"is arktos-server running? {_probe.START_HINT}"


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


def _name_arg(x: Any, what: str) -> str:
    """The server name `x` gives: a str as it is, a pdarray's name."""
    if isinstance(x, ServerArray):
        return x._live_name()
    if isinstance(x, str):
        return x
    raise TypeError(f"{what}() takes an array's name (a str) or a pdarray, "
                    f"got {type(x).__name__}")


def _array_names(result: Any) -> list[str]:
    """Names of the arrays an array-creating command's result describes."""
    if isinstance(result, dict):
        if {"name", "dtype", "nbytes"} <= result.keys() and isinstance(result["name"], str):
            return [result["name"]]
        return [n for v in result.values() for n in _array_names(v)]
    if isinstance(result, list):
        return [n for v in result for n in _array_names(v)]
    return []


def _is_loopback(endpoint: str) -> bool:
    """True when a tcp:// endpoint names this host (so its unix socket is ours too)."""
    host = endpoint.partition("://")[2].rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _lane_spin(value: float | str | None) -> float:
    """Connection's lane_spin in seconds: a number of seconds, a duration
    string as --lane-spin takes it, or None for ARKTOS_LANE_SPIN (else
    LANE_SPIN_DEFAULT)."""
    how = "a number of seconds, or a duration such as '200us'"
    where = "lane_spin"
    if value is None:
        env = os.environ.get("ARKTOS_LANE_SPIN", "")
        if not env:
            return LANE_SPIN_DEFAULT
        value, where, how = env, "ARKTOS_LANE_SPIN", "a duration such as 200us"
    if isinstance(value, str):
        ns = _parse_duration_ns(value)
        ok = ns is not None and 0 <= ns <= round(LANE_SPIN_MAX * 1e9)
        secs = (ns or 0) / 1e9
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
        ok = 0 <= secs <= LANE_SPIN_MAX
    else:
        raise TypeError(f"lane_spin must be a number of seconds or a duration such as '200us', got {type(value).__name__}")
    if not ok:
        raise ValueError(f"{where}={value!r}: use {how}, at most {LANE_SPIN_MAX * 1e3:g}ms, or 0 to turn polling off")
    return secs


_T = TypeVar("_T")
_S = TypeVar("_S", bound="Session")


#: Connections not closed yet: closed at the interpreter's exit, so that the
#: arrays their live pdarrays own are deleted (close).
_open_connections: weakref.WeakSet[Session] = weakref.WeakSet()


def _close_at_exit() -> None:
    for conn in list(_open_connections):
        try:
            conn.close()
        except Exception:  # noqa: BLE001 -- best effort at exit: the server may be gone
            pass


def _hook_exit() -> None:
    """Register _close_at_exit, once, after the first connection made its
    weakref finalizers: atexit runs the latest first, and weakref's own exit
    hook (registered with the first finalizer) would close the sockets
    before the deletes could go."""
    global _exit_hooked
    if not _exit_hooked:
        atexit.register(_close_at_exit)
        _exit_hooked = True


_exit_hooked = False


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
    if isinstance(x, np.ma.MaskedArray) and np.ma.is_masked(x):
        # np.asarray keeps the values under the mask: stored silently as data.
        raise ValueError(f"x is a masked array with {int(np.ma.getmaskarray(x).sum())} masked elements, and arktos arrays "
                         "have no missing values; upload x.filled(value) or x.compressed()")
    arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    elif arr.ndim != 1:
        raise ValueError(f"only 1-D arrays are supported, got shape {arr.shape}; "
                         "use x.ravel() to upload the elements in C order")
    return np.ascontiguousarray(arr, dtype=DTYPES[to_wire(arr.dtype)])


#: The monitor events of a ZeroMQ handshake that failed (a CURVE key or
#: mechanism that does not match the server's).
_HANDSHAKE_FAILED = frozenset({zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
                               zmq.EVENT_HANDSHAKE_FAILED_AUTH})


def _server_key(given: str | None) -> str | None:
    """The server's public CURVE key: given (the key, or the path of the
    server's server_key.pub), else $ARKTOS_SERVER_KEY; None when neither."""
    key = given if given is not None else os.environ.get("ARKTOS_SERVER_KEY")
    if not key:
        return None
    path = Path(key).expanduser()
    if path.is_file():
        key = path.read_text().strip()
    elif len(key) != 40:
        raise ValueError(f"server_key must be the server's public key (40 Z85 characters, printed by the "
                         f"server at start) or the path of its server_key.pub; {key!r} is neither")
    if len(key) != 40:
        raise ValueError(f"server_key must be 40 Z85 characters (a CURVE public key), got {len(key)}")
    return key


def _use_curve(sock: zmq.Socket[bytes], server_key: str | None) -> None:
    """Make sock a CurveZMQ client of the server whose public key is
    server_key, with a throwaway key pair of its own (before connect)."""
    if server_key is None:
        return
    if not zmq.has("curve"):
        raise RuntimeError("server_key needs libzmq with CURVE; this pyzmq's has none (pip install pyzmq "
                           "brings one that has)")
    public, secret = zmq.curve_keypair()
    sock.curve_serverkey = server_key.encode()
    sock.curve_publickey = public
    sock.curve_secretkey = secret


class Session:
    """The protocol half of ak.Connection: the ZeroMQ socket, its request
    lane and bulk streams, and the requests that make no arrays (info,
    delete, get_config, ...). ak.Connection (arktos.numpy) adds the methods
    that return pdarrays; its docstring explains the arguments.
    """

    def __init__(self, url: str | None = None, token: str | None = None,
                 timeout: float | None = None, transport: str = "auto",
                 stream_network: str | None = None, compression: str | None = None,
                 shm: bool = True, lane: bool = True, lane_spin: float | str | None = None,
                 heartbeat: float | None = DEFAULT_HEARTBEAT, stripes: int = DEFAULT_STRIPES,
                 server_key: str | None = None) -> None:
        self._server_key = _server_key(server_key)
        # Sessions to the other locales of a --locales set, by URL (their
        # own token in it): opened at first direct transfer, closed with
        # this one. A set shares one server key.
        self._locale_conns: dict[str, Session] = {}
        self._handshake_failures = 0  # in a row, since the last handshake that succeeded
        self._handshake_ok = False  # a handshake has succeeded on this connection
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        if isinstance(stripes, bool) or not isinstance(stripes, int) or not 1 <= stripes <= MAX_STRIPES + 1:
            raise ValueError(f"stripes must be an int from 1 to {MAX_STRIPES + 1}, got {stripes!r}")
        if compression not in COMPRESSIONS:
            raise ValueError(f"compression must be None or 'zstd', got {compression!r}")
        self._zstd = _Zstd() if compression == "zstd" else None
        self._commands = CommandTable()  # the server's, once get_config came (config's setter)
        self.compression = compression
        if stream_network not in (None, "tcp", "unix"):
            raise ValueError(f"stream_network must be None, 'tcp' or 'unix', got {stream_network!r}")
        self.url, url_token = _split_url(url or os.environ.get("ARKTOS_URL") or DEFAULT_URL)
        self.timeout = timeout
        _probe.check_listening(self.url, timeout)  # nothing there: say so now, not after the handshake's timeout
        self.transport = transport
        self.shm = bool(shm)
        self.stream_network = stream_network
        self._stream: _Stream | None = None
        # The server refused a stream (it offers none): transport="auto"
        # sends frames from then on without asking again, as Go's client does.
        self._no_stream = False
        self.lane = bool(lane)
        # ARKTOS_LANE_SPIN is read only where a lane may be opened.
        self.lane_spin = _lane_spin(lane_spin) if self.lane or lane_spin is not None else 0.0
        self._lane: _Lane | None = None
        self._lane_failed = False  # the server offers no lane: do not ask again
        # A lane or stream open that failed for a passing reason (the server
        # at its --max-streams, a failed connect) is not tried again before
        # then: ZeroMQ carries the requests, frames the arrays meanwhile.
        self._lane_retry = _RetryAfter()
        self._stream_retry = _RetryAfter()
        self._stripe_retry = _RetryAfter()
        #: How many TCP bulk streams an array of STRIPE_THRESHOLD (16 MiB) or
        #: more is split across (1: one stream); unix streams take one.
        self.stripes = stripes
        given = _given_token(token, url_token)
        self._token = given or ""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._in_op = False  # inside _op: a drop raises before a request is sent
        self._drop_pending = False  # a drop _dropped saw that _roundtrip has not
        self._pending_deletes: deque[str] = deque()
        # pdarrays that own their server arrays (close deletes those still alive)
        # (by id: a WeakSet would compare pdarrays with ==, which is elementwise)
        self._owned: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        _open_connections.add(self)
        # GroupBys whose ids are not made yet (arktos.pandas): grouped before
        # any request that could change a stored array (_request). Their own
        # lock: grouping one sends a request (under _lock).
        self._lazy_groupbys: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lazy_lock = threading.Lock()
        # Segments of shared-memory views that were unmapped (their numpy
        # arrays collected), told to the server before the next request.
        self._pending_releases: deque[int] = deque()
        # Requests given up on (Ctrl-C, timeout) before their reply: id → (cmd,
        # args). Arrays their late replies created are freed (see _late_reply).
        self._abandoned: dict[int, tuple[str, dict[str, Any]]] = {}
        # Those of them sent on ZeroMQ (not lost with a dropped connection):
        # their replies are looked for before each request (_read_late), so
        # a session that then uses only its lane still frees what they made.
        self._zmq_owed: set[int] = set()
        # The id of the request whose reply this session waits for (cancel()).
        self._running: int | None = None
        _malloc.tune()  # before the first socket starts libzmq's I/O thread
        if heartbeat is not None and not (isinstance(heartbeat, (int, float)) and heartbeat >= 0):
            raise ValueError(f"heartbeat must be a number of seconds >= 0 (0: no heartbeats), got {heartbeat!r}")
        self.heartbeat = float(heartbeat or 0)
        # Bytes a second the last measured download over ZeroMQ came at; 0: none (_link_frame_size).
        self._link_rate = 0.0
        self._socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        _use_curve(self._socket, self._server_key)
        if self.heartbeat > 0:
            # Pings at a quarter of it; the server's libzmq I/O thread
            # answers them however long its handlers run (see _dropped).
            self._socket.setsockopt(zmq.HEARTBEAT_IVL, max(1, int(self.heartbeat * 250)))
            self._socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, max(1, int(self.heartbeat * 1000)))
        self._monitor = _monitor(self._socket)
        self._close_socket = weakref.finalize(self, _close_sockets, self._socket, self._monitor)
        _hook_exit()  # (after a finalizer: see _hook_exit)
        try:
            self._socket.connect(self.url)
        except zmq.ZMQError as err:
            self._close_socket()
            raise ValueError(f"cannot connect to {self.url!r}: {err}; "
                             "expected e.g. tcp://host:5555 or ipc:///path") from None
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)  # a drop ends the wait (_dropped)
        try:
            self.config = self._await_restore(self._handshake(token_given=given is not None))
            self._load_commands()
        except BaseException:
            self._close_socket()
            raise

    @property
    def _handshake_failed(self) -> bool:
        """Whether the server refuses this client's handshake: a key that
        does not fit fails each time. Before any handshake succeeded one
        failure says so; after, twice in a row (ZeroMQ retries in ~0.2 s),
        as once can be a server stopped mid-handshake."""
        return self._handshake_failures >= 2 or bool(self._handshake_failures) and not self._handshake_ok

    def _dropped(self) -> bool:
        """Read the socket monitor's events without blocking: whether the
        ZeroMQ connection dropped since the last call. A request on ZeroMQ
        waits on a socket that reconnects by itself, so a server that died
        mid-request (or a host that vanished: heartbeats) left it waiting
        until its timeout, for ever without one; lanes and streams are
        plain sockets, which see the close themselves."""
        gone = False
        while cast(int, self._monitor.get(zmq.EVENTS)) & zmq.POLLIN:  # (no exception raised when none: cheaper)
            event = recv_monitor_message(self._monitor)["event"]
            # (A connection whose handshake failed carried no request: its
            # end is not a drop, and ZeroMQ tries again.)
            gone = gone or event == zmq.EVENT_DISCONNECTED and not self._handshake_failures
            if event in _HANDSHAKE_FAILED:
                self._handshake_failures += 1
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._handshake_failures, self._handshake_ok = 0, True
        if self._handshake_failed:
            # ZeroMQ retries a failed handshake for ever, quietly: say why now.
            if self._server_key is None:
                why = ("the server encrypts its socket (CurveZMQ) and this client has no server_key: pass "
                       "server_key= (the key the server printed at start, or the path of its "
                       "~/.arktos/server_key.pub) or set ARKTOS_SERVER_KEY")
            else:
                why = ("the server_key given is not this server's (read it again from the server's log or "
                       "its ~/.arktos/server_key.pub), or the server does not encrypt its socket "
                       "(--encrypt off: connect without server_key)")
            raise AuthFailedError(f"the ZeroMQ handshake with {self.url} failed: {why}")
        if gone:
            self._zmq_owed.clear()  # their replies went with the connection
            self._drop_pending = True  # (for _roundtrip, whoever read the event)
        return gone

    @contextlib.contextmanager
    def _op(self) -> Iterator[None]:
        """_lock for one operation (a request, an upload, a download): a drop
        of the ZeroMQ connection before it is forgotten (its requests go on
        the new connection); one during it, before a request of it is sent
        (the server killed while an upload was compressed or copied into a
        lease), raises ConnectionLostError in _roundtrip instead of sending
        the request to wait, without a timeout for ever, on a server that is
        gone."""
        with self._lock:
            if not self.closed:  # (a closed one's _check_open says so)
                self._dropped()
            self._drop_pending = False
            self._in_op = True
            try:
                yield
            finally:
                self._in_op = False

    def _handshake(self, *, token_given: bool) -> dict[str, Any]:
        """get_config, retried once with ~/.arktos/token if no token was given."""
        wait = CONNECT_TIMEOUT if self.timeout is None else self.timeout
        try:
            return self._request("get_config", timeout=wait)[0]
        except TimeoutError as err:
            raise TimeoutError(f"{err}; pass a longer timeout= to connect() to wait longer") from None
        except AuthFailedError as err:
            if token_given or self._handshake_failed:
                raise
            home_file = Path.home() / ".arktos" / "token"
            if not home_file.is_file():
                raise AuthFailedError(f"{err.message}; no token was given: {_TOKEN_SOURCES}") from None
            self._token = _read_token_file(home_file)
            return self._request("get_config", timeout=wait)[0]

    def _await_restore(self, config: dict[str, Any]) -> dict[str, Any]:
        """Waits while the server restores its --checkpoint (get_config's
        "restoring": it runs other requests only once its arrays are back),
        with a progress bar past the configured delay; the connection's
        timeout, when set, bounds the wait."""
        if "restoring" not in config:
            return config
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        bar = transfer_bar(int(config["restoring"]["bytes"]), "restoring the server's checkpoint")

        def still(p: dict[str, Any]) -> TimeoutError:
            return TimeoutError(
                f"the server at {self.url} is still restoring its checkpoint ({p['arrays_done']} of "
                f"{p['arrays']} arrays, {p['bytes_done'] / 2**30:.1f} of {p['bytes'] / 2**30:.1f} GiB, "
                f"for {p['seconds']:.0f} s): pass a longer timeout= to connect() to wait for it")
        try:
            while "restoring" in config:
                p = config["restoring"]
                if bar is not None:
                    bar.total = max(int(p["bytes"]), 1)
                    bar.n = int(p["bytes_done"])
                    bar.refresh()
                if deadline is not None and time.monotonic() >= deadline:
                    raise still(p)
                time.sleep(RESTORE_POLL)
                left = CONNECT_TIMEOUT if deadline is None else max(deadline - time.monotonic(), 0.01)
                try:
                    config = self._request("get_config", timeout=left)[0]
                except TimeoutError as err:
                    # The deadline passed during this poll: say what is known.
                    if deadline is not None and left < CONNECT_TIMEOUT and time.monotonic() >= deadline:
                        raise still(p) from err
                    raise
        finally:
            if bar is not None:
                bar.close()
        return config

    # -- plumbing ---------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once close(), disconnect() or shutdown() ran.

        >>> conn.closed
        False
        """
        return not self._close_socket.alive

    @property
    def max_frame_size(self) -> int:
        """The server's largest payload frame, in bytes (from get_config).

        >>> conn.max_frame_size
        16777216
        """
        return int(self.config["max_frame_size"])

    @property
    def config(self) -> dict[str, Any]:
        """The server's get_config, as the last one read (connect, get_config)."""
        return self._config

    @config.setter
    def config(self, value: dict[str, Any]) -> None:
        self._config = value
        self._commands = CommandTable(value, self._commands.rows if value.get("command_table") else None)

    def _load_commands(self) -> None:
        """Ask for the server's command table (once a connection is made; it
        is not part of get_config, which stays a small request)."""
        if self.config.get("command_table"):
            rows = self._request("commands")[0].get("commands")
            self._commands = CommandTable(self.config, rows)

    def _request(self, cmd: str, args: dict[str, Any] | None = None,
                 payload: Sequence[Any] = (), *, timeout: float | None = None,
                 ) -> tuple[dict[str, Any], list[zmq.Frame]]:
        """Send one request (after pending deletes) and return (result, payload
        frames). One refused because the server (restarted since this
        connection was made) is restoring its checkpoint is sent again once
        it has, as connect waits (RESTORING requests are not run)."""
        if self._lazy_groupbys:
            written = self._commands.writes(cmd, args or {})
            if written is None or written:
                self._group_lazy(written)

        def once() -> tuple[dict[str, Any], list[zmq.Frame]]:
            with self._op():
                self._check_open()
                if self._zmq_owed:
                    self._read_late()
                if self._pending_deletes or self._pending_releases:
                    try:
                        self._flush_deletes(timeout)
                    except RestoringError:
                        # Kept for the next request (a restarted server's
                        # checkpoint holds those arrays too). This one goes
                        # on: get_config, which the wait for the restore
                        # polls, runs during it.
                        pass
                return self._roundtrip(cmd, args or {}, payload, timeout)
        if cmd == "get_config":  # (what _after_restore itself asks)
            return once()
        return self._after_restore(once, timeout)

    def _after_restore(self, f: Callable[[], _T], timeout: float | None = None) -> _T:
        """Run f; when the server refuses it with RESTORING (it restarted
        since connect and restores its checkpoint; nothing was run), read its
        configuration again (it may differ), wait for its restore as connect
        does, and run f once more. f must not hold _lock across the wait."""
        try:
            return f()
        except RestoringError:
            self.config = self._await_restore(self._request("get_config", timeout=timeout)[0])
            self._load_commands()
            path_counts["restore_retries"] += 1
            return f()

    def _lazy_add(self, g: Any) -> None:
        with self._lazy_lock:
            self._lazy_groupbys.add(g)

    def _lazy_discard(self, g: Any) -> None:
        with self._lazy_lock:
            self._lazy_groupbys.discard(g)

    def _group_lazy(self, names: set[str] | None = None) -> None:
        """Make the grouping of every GroupBy not grouped yet whose keys may
        be about to change (a key among `names`; None: any). One that fails
        is left unusable, saying why, and the request goes on: a write never
        fails for a GroupBy's sake."""
        with self._lazy_lock:
            pending = list(self._lazy_groupbys)
        for g in pending:
            if names is None or any(k.name in names for k in g.keys):
                g._group_before_write()

    def _check_open(self) -> None:
        if self.closed:
            raise ConnectionError(f"the connection to {self.url} is closed; "
                                  "connect again with ak.connect()")

    def _flush_deletes(self, timeout: float | None) -> None:
        """Send the pending deletes, and first the pending view releases (so
        that a deleted array's segment can be lent again)."""
        segments: list[int] = []
        while self._pending_releases:
            segments.append(self._pending_releases.popleft())
        if segments:
            try:
                self._roundtrip("shm_release", {"segments": segments}, (), timeout)
            except BaseException:
                self._pending_releases.extendleft(reversed(segments))
                raise
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
                   timeout: float | None, while_waiting: Callable[[], None] | None = None,
                   lane_ok: bool = False, lane_while: bool = False,
                   place: _Placement | None = None) -> tuple[dict[str, Any], list[zmq.Frame]]:
        """One request and its reply: over the lane when there is one and
        the request may take it (no payload either way, or lane_ok: a small
        upload or download, see _lane_payload, or one whose bytes go on a
        stream), else over ZeroMQ. while_waiting runs once the request is
        sent; a request with one takes the lane only with lane_while. A lane
        reply's payload is read into place's array where it gives one."""
        if timeout is None:
            timeout = self.timeout
        if self._zmq_owed:
            self._read_late()  # (also for uploads, downloads and flushes, which come here directly)
        req_id = next(self._ids)
        header = encode_request(req_id, self._token, cmd, args)
        cmds = self._commands
        if (while_waiting is None or lane_while) and (lane_ok if cmds.lane_payload(cmd) else
                                                      not len(payload) and cmds.on_lane(cmd)):
            lane = self._usable_lane()
            if lane is not None:
                try:
                    lane.send(header, payload)
                except OSError:  # the server closed it (restarted?): ZeroMQ takes this one
                    self._drop_lane()
                except BaseException:  # Ctrl-C
                    if lane.sending:  # cut short inside the message: its framing is lost
                        self._drop_lane()
                    else:  # sent whole: its reply is read before the lane is used again
                        lane.owed = req_id
                        self._abandoned[req_id] = (cmd, args)
                    raise
                else:
                    if while_waiting is not None:
                        try:
                            while_waiting()
                        except BaseException:  # Ctrl-C: the reply is owed on the lane
                            lane.owed = req_id
                            self._abandoned[req_id] = (cmd, args)
                            raise
                    self._running = req_id
                    return self._lane_roundtrip(lane, req_id, cmd, args, timeout, place)
        if cmd == "download" and "stream" not in args:
            # Frames the link carries well within a heartbeat.
            size: int | None = self._link_frame_size()
            if size == self.max_frame_size:
                size = None  # the server's own
            if args.get("frame_size") != size:
                if size is None:
                    del args["frame_size"]
                else:
                    args["frame_size"] = size
                header = encode_request(req_id, self._token, cmd, args)
        self._dropped()
        if not self._in_op:
            self._drop_pending = False  # a drop before this request is not about it
        elif self._drop_pending:  # (kept until the operation ends: a fallback it tries fails too)
            path_counts["connections_lost"] += 1
            raise ConnectionLostError(
                f"the connection to {self.url} dropped while {cmd!r} was made ready (the server stopped, "
                "crashed or restarted); it was not sent, and the next request connects again")
        try:
            if len(payload):
                _send_whole(self._socket, [header, *payload])
            else:
                self._socket.send(header)  # one small frame: a copy is cheaper than a zmq.Frame
            if while_waiting is not None:
                while_waiting()
        except BaseException:
            # Ctrl-C once the request left (or while its bytes went on a
            # stream): its reply comes later, and what it made is deleted
            # then. (Not recorded, it was read as a stranger's and leaked.)
            self._abandoned[req_id] = (cmd, args)
            self._zmq_owed.add(req_id)
            raise
        sent = time.monotonic()
        self._running = req_id  # what cancel() from another thread stops
        # The first wait lasts at most POLL_INTERVAL and needs nothing else;
        # the deadline clock and the progress bar (Waiting) are set up only
        # for a reply that takes longer, so a small request pays for neither.
        deadline = None
        waiting: Waiting | None = None
        first_ms = _FIRST_WAIT_MS
        if timeout is not None:
            deadline = time.monotonic() + timeout
            first_ms = min(first_ms, math.ceil(timeout * 1000))
        wait_ms: int | None = first_ms
        try:
            while True:
                ready = self._poller.poll(wait_ms)
                if not any(sock is self._socket for sock, _ in ready):  # (the monitor's, or none)
                    now = time.monotonic()
                    if self._dropped():
                        path_counts["connections_lost"] += 1
                        why = "the server stopped, crashed or restarted"
                        if self.heartbeat > 0:
                            why += f", or answered no heartbeat within {self.heartbeat:g} s"
                        raise ConnectionLostError(
                            f"the connection to {self.url} dropped while {cmd!r} waited for its reply "
                            f"({why}); whether it ran is not known, and the next request connects again")
                    if deadline is not None and now >= deadline:
                        raise TimeoutError(f"no reply from {self.url} to {cmd!r} within "
                                           f"{timeout:g} s; {_SERVER_HINT}")
                    if waiting is None:  # the reply is late: count from the request
                        waiting = Waiting(cmd, start=now - first_ms / 1000)
                    waiting.tick()
                    wait_ms = waiting.poll_ms(None if deadline is None else
                                              math.ceil(max(0.0, deadline - now) * 1000))
                    continue
                frames = self._socket.recv_multipart(copy=False)
                reply = decode_header(frames[0].buffer)
                reply_id = reply.get("id")
                if reply_id == req_id:
                    if cmd == "download":
                        self._measure_link(sum(frame.buffer.nbytes for frame in frames[1:]),
                                           time.monotonic() - sent)
                    if reply.get("status") == 0 and reply.get("v") == PROTOCOL_VERSION:
                        result = reply.get("result")  # parse_reply's answer, without its checks' cost
                        return (result if isinstance(result, dict) else {}), frames[1:]
                    return parse_reply(reply).result, frames[1:]
                # id 0 answers a request whose header the server could not read:
                # ours, since abandoned requests were just as readable.
                if reply_id == 0 and reply.get("status") != 0:
                    return parse_reply(reply).result, frames[1:]
                # Any other id is a late reply to an abandoned request.
                self._late_reply(reply)
        except ConnectionLostError:
            self._link_rate = 0.0  # the link may have slowed: start from LINK_RATE_ASSUMED again
            # Its reply comes only where the drop was an earlier connection's,
            # reported late (the request went on the new one): then what it
            # made is deleted, as an abandoned request's is, unless the caller
            # named it (found by that name; whether it ran is not known).
            if "name" not in args:
                self._abandoned[req_id] = (cmd, args)
                while len(self._abandoned) > 1000:
                    self._abandoned.pop(next(iter(self._abandoned)))
            raise
        except BaseException:
            self._abandoned[req_id] = (cmd, args)
            self._zmq_owed.add(req_id)
            while len(self._abandoned) > 1000:  # a server that never answers
                self._abandoned.pop(next(iter(self._abandoned)))
            self._send_cancel(req_id)  # Ctrl-C or a timeout: the server stops the work too
            raise
        finally:
            self._running = None
            if waiting is not None:
                waiting.close()

    def _send_cancel(self, req_id: int) -> None:
        """Ask the server to stop request req_id, which this session gave up
        on (Ctrl-C, a timeout), without waiting: the cancel's reply, and the
        request's own (CANCELED, or its result when it was already storing
        it, whose arrays are then freed), are read as late replies. The
        server stops the work at its next block boundary, storing nothing."""
        if "cancel" not in self._commands:
            return  # a server from before cancel: the work runs to its end
        cancel_id = next(self._ids)
        try:
            self._socket.send(encode_request(cancel_id, self._token, "cancel", {"id": req_id}),
                              zmq.NOBLOCK)
        except zmq.ZMQError:
            return  # the connection is going: so is the request's reply
        self._abandoned[cancel_id] = ("cancel", {})
        self._zmq_owed.add(cancel_id)

    def cancel(self) -> str | None:
        """Stop the request this session is waiting for, from another thread
        (the waiting thread then gets CanceledError), on a socket of its own.

        Returns the server's word on it: "canceled" (it stops at its next
        block boundary, storing nothing, and everything allocated for it is
        freed), "finishing" (it was already storing its results, or writes
        an array in place, and completes), "unknown" (it had just finished),
        or None when the session waits for nothing. Ctrl-C in the waiting
        thread does the same by itself.

        >>> threading.Timer(1.0, conn.cancel).start()
        >>> conn.argsort(big)        # raises CanceledError after a second
        """
        req_id = self._running
        if req_id is None:
            return None
        peer = self.config.get("peer")
        if "cancel" not in self._commands or not isinstance(peer, str):
            raise RuntimeError(f"the server at {self.url} cannot cancel requests (it is older than "
                               "the cancel command): let the request finish, or restart the server")
        sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        try:
            sock.setsockopt(zmq.LINGER, 0)
            _use_curve(sock, self._server_key)
            sock.connect(self.url)
            sock.send(encode_request(1, self._token, "cancel", {"id": req_id, "peer": peer}))
            if not sock.poll(5000):
                raise TimeoutError(f"no reply from {self.url} to cancel within 5 s; {_SERVER_HINT}")
            state = parse_reply(decode_header(sock.recv_multipart()[0])).result.get("state")
            return str(state) if state is not None else None
        finally:
            sock.close()

    def _read_late(self) -> None:
        """Read, without waiting, the replies already come on the ZeroMQ
        socket to requests abandoned there (_zmq_owed): a request that goes
        on the lane would not read them, and what they made would stay on
        the server until the next request on ZeroMQ. Once the connection has
        dropped the rest will not come. Callers hold _lock; no request of
        ours waits on ZeroMQ then, so every message there is a late reply."""
        while cast(int, self._socket.get(zmq.EVENTS)) & zmq.POLLIN:
            self._late_reply(decode_header(self._socket.recv_multipart(copy=False)[0].buffer))
        if not self._dropped():  # (a drop clears them)
            self._zmq_owed.intersection_update(self._abandoned)  # (evicted unanswered)

    def _link_frame_size(self) -> int:
        """The frame size for a download over ZeroMQ (see LINK_RATE_ASSUMED):
        the server's largest where the link is fast or there are no
        heartbeats."""
        largest = self.max_frame_size
        if self.heartbeat <= 0:
            return largest
        size = (self._link_rate or LINK_RATE_ASSUMED) * self.heartbeat / 8
        if size >= largest:
            return largest
        return min(max(int(size) & ~4095, LINK_FRAME_MIN), largest)  # whole pages: no split element

    def _measure_link(self, nbytes: int, took: float) -> None:
        """Note the rate a download over ZeroMQ of nbytes came at, took
        seconds from request to reply (the server's own time counts as the
        link's: the rate is, if anything, too low)."""
        if nbytes >= LINK_SAMPLE and took > 0:
            self._link_rate = nbytes / took

    # -- request lanes (docs/protocol.md, "Request lanes"); callers hold _lock --

    def _lane_payload(self, nbytes: int, most: int = LANE_PAYLOAD_MAX) -> bool:
        """Whether an upload or download of nbytes may take the lane: a
        small array in plain frames (not compressed, transport "auto"), to a
        server that takes them there (downloads pass LANE_DOWNLOAD_MAX)."""
        return (0 < nbytes < most and self._zstd is None and self.transport == "auto"
                and self._lane_reply_only()
                and n_frames(nbytes, self.max_frame_size) < LANE_MAX_FRAMES)

    def _lane_reply_only(self) -> bool:
        """Whether an upload or download whose bytes go on a stream or in a
        segment may be asked over the lane: a lane, to a server that takes
        uploads and downloads there."""
        return bool(self.lane and self.__dict__.get("_config", {}).get("lane_payload"))

    def _usable_lane(self) -> _Lane | None:
        """The lane to send a small request on, opened on first use; None
        when there is none (lane=False, not offered, or still owed the reply
        of a request given up on)."""
        if not self.lane or self._lane_failed or "_config" not in self.__dict__:
            return None  # no lane before the handshake's get_config is answered
        lane = self._lane
        if (lane is not None and lane.owed is None and time.monotonic() - lane.used > LANE_IDLE_CHECK
                and lane.closed_by_peer()):
            # Closed by a server restarted meanwhile: a request on it would
            # fail (unix) or read the close where its reply should be (TCP).
            self._drop_lane()
            path_counts["lanes_closed_by_peer"] += 1
            lane = None
        if lane is None:
            if self._lane_retry.early():
                return None
            try:
                sock, network, _ = self._stream_socket(LANE_MAGIC)
            except RestoringError:
                return None  # a restarted server: ZeroMQ says so, and the lane opens once it is back
            except (ArgumentValueError, UnknownCommandError):
                self._lane_failed = True  # no streams (--stream-port -1), so no lanes
                return None
            except _PortUnreachable as err:
                self._unreachable(err)
                return None
            except (ArktosError, ConnectionError, OSError):
                self._lane_retry.failed()  # may pass: tried again after a pause
                return None
            self._lane_retry = _RetryAfter()
            sock.settimeout(None)  # replies are awaited with select
            lane = self._lane = _Lane(sock, network, self.lane_spin)
        if lane.owed is not None:
            if not lane.readable(0):
                return None
            try:
                reply = decode_header(lane.recv()[0])
            except (ConnectionError, OSError, ValueError):
                self._drop_lane()
                return None
            lane.owed = None
            self._late_reply(reply)
        return lane

    def _lane_roundtrip(self, lane: _Lane, req_id: int, cmd: str, args: dict[str, Any],
                        timeout: float | None, place: _Placement | None = None) -> tuple[dict[str, Any], list[Any]]:
        """_roundtrip's wait for the reply to a request sent on the lane: the
        same timeout, progress and abandoning."""
        deadline = None
        waiting: Waiting | None = None
        first = _FIRST_WAIT_MS / 1000
        if timeout is not None:
            deadline = time.monotonic() + timeout
            first = min(first, timeout)
        wait: float | None = first
        broken = False  # True while a reply is read: cut short, the lane is lost
        try:
            while True:
                if not lane.readable(wait):
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        raise TimeoutError(f"no reply from {self.url} to {cmd!r} within "
                                           f"{timeout:g} s; {_SERVER_HINT}")
                    if waiting is None:
                        waiting = Waiting(cmd, start=now - first)
                    waiting.tick()
                    ms = waiting.poll_ms(None if deadline is None else
                                         math.ceil(max(0.0, deadline - now) * 1000))
                    wait = ms / 1000
                    continue
                broken = True
                frames = lane.recv(place)
                broken = False
                reply = decode_header(frames[0])
                if reply.get("id") not in (req_id, 0):
                    broken = True
                    raise ConnectionError(f"request lane out of step: reply {reply.get('id')} to request {req_id}")
                rest = [_LaneFrame(f) for f in frames[1:]]
                if reply.get("status") == 0 and reply.get("v") == PROTOCOL_VERSION:
                    result = reply.get("result")
                    return (result if isinstance(result, dict) else {}), rest
                return parse_reply(reply).result, rest
        except BaseException:
            if broken:
                self._drop_lane()  # its position in the byte stream is lost
            else:
                lane.owed = req_id  # read (and its arrays freed) before the lane is used again
                self._abandoned[req_id] = (cmd, args)
                while len(self._abandoned) > 1000:
                    self._abandoned.pop(next(iter(self._abandoned)))
            self._send_cancel(req_id)  # (on ZeroMQ: the lane is the request's until it answers)
            raise
        finally:
            self._running = None
            if waiting is not None:
                waiting.close()

    def _drop_lane(self) -> None:
        if self._lane is not None:
            self._lane.close()
            self._lane = None

    def _late_reply(self, reply: dict[str, Any]) -> None:
        """Free what an abandoned request created, so that Ctrl-C during a long
        upload or operation leaves nothing behind on the server: its result's
        arrays join the pending deletes. Only commands that make new arrays
        count (an in-place operation names an array the user holds)."""
        late = self._abandoned.pop(reply.get("id"), None)  # type: ignore[arg-type]
        self._zmq_owed.discard(reply.get("id"))
        if late is None or reply.get("status") != 0:
            return
        cmd, args = late
        # As the server's command table says (a client's own list drifted:
        # clip, lookup, take_many, ... were once missing).
        if not self._commands.creates(cmd) or "out" in args:
            return
        self._pending_deletes.extend(_array_names(reply.get("result")))

    def _download(self, name: str, start: int | None = None,
                  stop: int | None = None, *, view: bool = False, nbytes: int = 0) -> NDArray[Any]:
        # (A download refused with RESTORING changes nothing: asked again.)
        if (start is None and stop is None and not view and nbytes >= LOCALE_DIRECT_MIN
                and self._spread()):
            return self._download_direct(name)
        out = self._after_restore(lambda: self._download_any(name, start, stop, view=view, nbytes=nbytes))
        if view:
            out.flags.writeable = False  # a mapped segment is read-only already; a copy is made so
        return out

    def _download_any(self, name: str, start: int | None = None,
                      stop: int | None = None, *, view: bool = False, nbytes: int = 0,
                      into: NDArray[Any] | None = None, extra: dict[str, Any] | None = None) -> NDArray[Any]:
        """Download elements [start, stop) of array `name` into a new ndarray.

        A whole-array download goes over the bulk stream when one is open
        (the kernel writes straight into the new array); otherwise in frames,
        after which a stream is opened if the array was large. With `view`
        the result is read-only: with the server on this host it maps the
        array's shared-memory segment (no copy here; none on the server
        either once the array is in a segment), else it is a downloaded copy
        marked read-only. A private (writable) download of the whole array,
        of `nbytes` (the caller's pdarray size) of SHM_THRESHOLD or more, on
        this host reads the segment into a pooled buffer (preadv on several
        threads, nothing mapped), where the unix stream ran at 0.35-0.42x
        memcpy. With `into` (a whole download, not a view) the bytes go
        there, which must have the array's dtype and length; `extra` are
        more arguments of the request.
        """
        args: dict[str, Any] = {"name": name, **(extra or {})}

        def dest(size: int, dtype: np.dtype[Any]) -> NDArray[Any]:
            if into is None:
                return POOL.empty(size, dtype)
            if into.size != size or into.dtype != dtype:
                raise RuntimeError(f"download of '{name}': {size} {dtype} elements do not fit "
                                   f"a destination of {into.size} {into.dtype}")
            return into
        if start is not None:
            args["start"] = start
        if stop is not None:
            args["stop"] = stop
        with self._op():
            self._check_open()
            self._flush_deletes(None)
            whole = start is None and stop is None
            stream = None
            copy_out = not view and whole and nbytes >= SHM_THRESHOLD
            if not whole and start is not None and stop is not None:
                nbytes = max(0, stop - start) * 16  # at most (the widest dtype's items)
            if view or not self._lane_payload(nbytes):
                self._live_stream()  # (a smaller download takes the lane whatever the stream)
            # A small private download takes the lane (no stream, no segment).
            lane_ok = not view and self._lane_payload(
                nbytes, LANE_DOWNLOAD_MAX if self._stream is None else LANE_PAYLOAD_MAX)
            if (view or copy_out) and (stream := self._shm_stream()) is not None:
                args["shm"] = True
            elif self._zstd is not None:
                args["compression"] = "zstd"
            elif not lane_ok and (self.transport == "stream" or (self.transport == "auto" and whole)):
                stream = self._stream if self.transport == "auto" else self._open_stream()
                if stream is not None and (stripes := self._stripes_for(stream, nbytes)):
                    # (nbytes may be a ranged download's upper bound: the
                    # server stripes only what reaches the threshold)
                    args["stripes"], args["stripe_min"] = stripes, STRIPE_THRESHOLD
            if stream is not None:
                args["stream"] = stream.id
            place = (_Placement(_place_download) if lane_ok and stream is None and "compression" not in args
                     and into is None else None)
            try:
                # Its bytes on a stream, or its segment's descriptor, follow
                # a reply that carries none: the request may take the lane.
                result, frames = self._roundtrip("download", args, (), None,
                                                 lane_ok=(lane_ok and stream is None) or
                                                 (stream is not None and self._lane_reply_only()),
                                                 place=place)
            except BaseException:
                if stream is not None:
                    # Abandoned (Ctrl-C, timeout): the server will still write
                    # the bytes, so this stream's position is lost.
                    self._drop_stream()
                raise
            dtype, size = from_wire(result["dtype"]), int(result["size"])
            mapped: NDArray[Any] | None = None
            if result.get("shm") and not view:
                # A private copy: read out of the segment (nothing is mapped).
                try:
                    fd = stream.recv_fd()  # type: ignore[union-attr]
                except BaseException:
                    self._drop_stream()
                    raise
                try:
                    private = dest(size, dtype)
                    _segment_io(fd, private.data.cast("B"), False, "arktos download")
                finally:
                    os.close(fd)
                    if "segment" in result:
                        self._pending_releases.append(int(result["segment"]))
                path_counts["shm_copies_out"] += 1
                return private
            if result.get("shm"):
                try:
                    mapped = stream.recv_view(dtype, size)  # type: ignore[union-attr]
                except _MapFailed:
                    # This process can map no more (vm.max_map_count, 65,530
                    # mappings by default, or address space): the segment
                    # goes back, and the bytes come over the stream, a copy.
                    path_counts["shm_map_failures"] += 1
                    if "segment" in result:
                        self._pending_releases.append(int(result["segment"]))
                    del args["shm"]
                    try:
                        result, frames = self._roundtrip("download", args, (), None)
                    except BaseException:
                        self._drop_stream()
                        raise
                except BaseException:
                    self._drop_stream()
                    raise
            if mapped is not None:
                if "segment" in result and mapped.base is not None:
                    # Once unmapped (the array collected), the server may lend
                    # the segment again after its array is deleted.
                    weakref.finalize(mapped.base, self._pending_releases.append, int(result["segment"]))
                return mapped
            if "stream" in result:
                out = dest(size, dtype)
                try:
                    stream.recv_into(out, "stripes" in result)  # type: ignore[union-attr]
                except BaseException:
                    self._drop_stream()  # its position is lost (Ctrl-C, server gone)
                    raise
                return out
            if result.get("compression") == "zstd" and self._zstd is not None:
                out = dest(size, dtype)
                self._zstd.decompress_into([frame.buffer for frame in frames], out, int(result["frame_size"]))
                return out
            if place is not None and place.out is not None and place.placed == place.out.nbytes:
                # Read from the lane straight into the array: check the framing only.
                check_frames([len(frame.buffer) for frame in frames], place.out.nbytes, int(result["frame_size"]))
                path_counts["lane_direct"] += 1
                return place.out
            out = join_frames([frame.buffer for frame in frames], dtype, size, int(result["frame_size"]),
                              dest(size, dtype))
            if self.transport == "auto" and whole and out.nbytes >= STREAM_THRESHOLD:
                self._try_open_stream()
            return out

    # -- bulk streams (docs/protocol.md, "Bulk streams"); callers hold _lock --

    def _live_stream(self) -> _Stream | None:
        """The open stream, or None: none, or one its server closed (a
        restart), which is dropped. A stream carries only the transfers
        asked for, each read whole, so between them it has nothing to read;
        the check is one poll beside a transfer of a MiB or so."""
        st = self._stream
        if st is not None and any(_readable_now(sock) for sock in [st.sock] + [sk for _, sk in st.stripes]):
            self._drop_stream()
            path_counts["streams_closed_by_peer"] += 1
        return self._stream

    def _open_stream(self) -> _Stream:
        """Return the open stream, opening one (open_stream + handshake) if needed."""
        if self._live_stream() is not None:
            return self._stream  # type: ignore[return-value]
        sock, network, stream_id = self._stream_socket(STREAM_MAGIC)
        sock.settimeout(self.timeout)
        self._stream = _Stream(stream_id, sock, network)
        return self._stream

    def _stream_socket(self, magic: bytes) -> tuple[LinkSocket, str, int]:
        """Ask for a ticket (open_stream), connect (unix on this host, else
        tcp) and hand the server magic + ticket: a bulk stream or a lane.
        Returns the socket, its network and the stream id."""
        result, _ = self._roundtrip("open_stream", {}, (), None)
        ticket, port, unix = bytes(result["ticket"]), int(result["port"]), str(result["unix"])
        host = self.url.partition("://")[2].rpartition(":")[0].strip("[]")
        sock: socket.socket | None = None
        network = ""
        errors: list[str] = []
        if unix and self.stream_network != "tcp" and self.url.startswith("tcp://") and _is_loopback(self.url):
            try:
                sock, network = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), "unix"
                sock.settimeout(CONNECT_TIMEOUT)  # (a server not accepting: its queue full)
                sock.connect(unix)
            except OSError as err:
                errors.append(f"unix {unix}: {err}")
                if sock is not None:  # None: the socket itself could not be made
                    sock.close()
                sock = None
        if sock is None and port and self.stream_network != "unix":
            try:
                sock, network = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT), "tcp"
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _keepalive(sock, self.heartbeat)
            except TimeoutError:
                raise _PortUnreachable(
                    f"the server's stream port {host}:{port} did not answer within {CONNECT_TIMEOUT:g} s (a firewall "
                    "that passes only the ZeroMQ port?); open that port to this client, or connect with "
                    "transport='frames', lane=False") from None
            except OSError as err:
                errors.append(f"tcp {host}:{port}: {err}")
                sock = None
        if sock is None:
            raise ConnectionError(f"cannot open a bulk stream to {self.url} ({'; '.join(errors) or 'none offered'}); "
                                  "use transport='frames'")
        if network == "tcp" and (result.get("tls") is not None or self._server_key is not None):
            # An encrypted server's TCP links are TLS; a client with a server
            # key sends nothing in clear on one whose server names no pin.
            if result.get("tls") is None:
                sock.close()
                raise ConnectionError(f"the server at {self.url} encrypts its socket but names no TLS certificate for "
                                      "its TCP streams; nothing is sent on them in clear (upgrade the server, or "
                                      "connect with transport='frames', lane=False)")
            sock.settimeout(CONNECT_TIMEOUT)  # (the handshake's, then the ticket's below)
            link: LinkSocket = _link_tls(sock, bytes(result["tls"]))
        else:
            link = sock
        try:
            link.settimeout(CONNECT_TIMEOUT)
            link.sendall(magic + ticket)
            if link.recv(1) != b"\x01":
                raise ConnectionError(f"the server refused the bulk stream handshake at {self.url}")
        except BaseException:
            link.close()
            raise
        return link, network, int(result["stream"])

    def _shm_stream(self) -> _Stream | None:
        """The unix stream shared memory travels on, or None where it does
        not apply (shm=False, frames or compression, a remote server)."""
        if not self.shm or self._zstd is not None or self.transport == "frames":
            return None
        stream = self._try_open_stream()
        return stream if stream is not None and stream.network == "unix" else None

    def _try_open_stream(self) -> _Stream | None:
        """Open a stream if the server offers one; None (frames work) if not.
        A server that refused (it offers no streams, or does not know
        open_stream) is not asked again, nor one whose stream port a connect
        timed out on (_PortUnreachable: a warning says so); a passing
        refusal (shutting down, out of memory) is tried again next time, and
        a server at its --max-streams or a failed connect or handshake after
        a pause; RESTORING (a restarted server) is raised."""
        if self._no_stream:
            return None
        if self._stream_retry.early() and self._live_stream() is None:
            return None
        try:
            stream = self._open_stream()
        except (ArgumentValueError, UnknownCommandError):
            self._no_stream = True
            return None
        except RestoringError:
            raise  # a restarted server: the caller waits for it, then has a stream
        except TooManyStreamsError:
            self._stream_retry.failed()
            return None
        except _PortUnreachable as err:
            self._unreachable(err)
            return None
        except ArktosError:
            return None
        except (ConnectionError, OSError):  # (a port not forwarded: an open_stream round trip each time)
            self._stream_retry.failed()
            return None
        self._stream_retry = _RetryAfter()
        return stream

    def _unreachable(self, err: _PortUnreachable) -> None:
        """No more streams or lanes: the stream port cannot be reached."""
        self._no_stream = self._lane_failed = True
        warnings.warn(f"{err}: arrays and requests go over ZeroMQ from now on (slower for large arrays)",
                      RuntimeWarning, stacklevel=2)

    def _drop_stream(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _stripes_for(self, stream: _Stream, nbytes: int) -> list[int]:
        """The ids of the stripes a transfer of `nbytes` over `stream` is
        split across (docs/protocol.md, "Bulk streams"), opening them when
        first needed: none below STRIPE_THRESHOLD, over a unix stream, or
        with stripes=1. A stripe that cannot be opened (the server at its
        --max-streams, a failed connect) leaves the transfer on those
        open, and none is asked for again before a pause."""
        if stream.network != "tcp" or self.stripes <= 1 or nbytes < STRIPE_THRESHOLD:
            return []
        while len(stream.stripes) < min(self.stripes, MAX_STRIPES + 1) - 1 and not self._stripe_retry.early():
            try:
                sock, _, stripe_id = self._stream_socket(STREAM_MAGIC)
            except (ArktosError, OSError):
                self._stripe_retry.failed()
                break
            sock.settimeout(self.timeout)
            stream.stripes.append((stripe_id, sock))
        return [i for i, _ in stream.stripes]

    @property
    def stream_network(self) -> str | None:
        """"unix" or "tcp" when a bulk stream is open (or the forced network).

        >>> conn.array(np.zeros(1 << 20)); conn.stream_network
        'unix'
        """
        if self._stream is not None:
            return self._stream.network
        return self._stream_network

    @stream_network.setter
    def stream_network(self, value: str | None) -> None:
        self._stream_network = value

    # -- public API -------------------------------------------------------

    def _upload(self, data: NDArray[Any], name: str | None, made: Callable[[dict[str, Any]], _T]) -> _T:
        """Upload a wire-ready array, without the wait for a restore, and
        return made(the server's description of the new array): the layer
        above makes its owning handle there, under the lock, so that nothing
        comes between the reply and the handle that would delete it."""
        if name is None and data.nbytes >= LOCALE_DIRECT_MIN and self._spread():
            return self._upload_direct(data, made)
        return self._upload_one(data, name, made)

    def _upload_one(self, data: NDArray[Any], name: str | None, made: Callable[[dict[str, Any]], _T],
                    extra: dict[str, Any] | None = None) -> _T:
        """_upload to this server alone (extra: more arguments)."""
        frame_size = self.max_frame_size
        args: dict[str, Any] = {"dtype": to_wire(data.dtype), "size": data.size,
                                "frame_size": frame_size, **(extra or {})}
        if name is not None:
            args["name"] = name
        with self._op():
            self._check_open()
            self._flush_deletes(None)
            stream = None
            if self._zstd is not None:
                args["compression"] = "zstd"
                frames: Sequence[Any] = self._zstd.compress(split_frames(data, frame_size))
                result, _ = self._roundtrip("upload", args, frames, None)
                return made(result)
            open_stream = self._open_stream if self.transport == "stream" else self._try_open_stream
            if self.transport == "stream" or (self.transport == "auto" and data.nbytes >= STREAM_THRESHOLD):
                stream = open_stream()
            leased = False
            if (stream is not None and self.shm and stream.network == "unix"
                    and data.nbytes >= SHM_THRESHOLD):
                leased = self._fill_lease(stream, data)
                if not leased:  # no segment here or there: the bytes travel
                    stream = open_stream()
            if stream is None:
                result, _ = self._roundtrip("upload", args, split_frames(data, frame_size), None,
                                            lane_ok=self._lane_payload(data.nbytes))
                return made(result)
            del args["frame_size"]
            args["stream"] = stream.id
            if leased:
                args["lease"] = True
            elif stripes := self._stripes_for(stream, data.nbytes):
                args["stripes"] = stripes
            return self._upload_stream(stream, data, args, made, leased=leased)

    def _fill_lease(self, stream: _Stream, data: NDArray[Any]) -> bool:
        """Borrow a shared-memory segment of data.nbytes from the server
        (shm_lease) and copy `data` into it; the upload with lease=true then
        stores it with no copy on the server. A pooled segment's pages are
        in memory already, so this is one copy and no page allocation.
        Returns False when the server could make no segment, or (with the
        stream closed, which ends the lease) when this side cannot write it;
        raises the server's refusal.
        Callers hold _lock."""
        try:
            result, _ = self._roundtrip("shm_lease", {"stream": stream.id, "nbytes": data.nbytes}, (), None)
        except ArktosError:
            raise  # nothing was sent on the stream
        except BaseException:
            self._drop_stream()  # abandoned: the descriptor may still come
            raise
        if not result.get("leased"):
            return False  # the server could make no segment: the bytes stream
        try:
            fd = stream.recv_fd()
        except (OSError, ConnectionError):
            self._end_lease(stream)
            return False
        try:
            _write_lease(fd, data)  # the one copy
        except (OSError, ValueError):
            self._end_lease(stream)
            return False
        except BaseException:  # Ctrl-C
            self._end_lease(stream)
            raise
        finally:
            os.close(fd)
        return True

    def _end_lease(self, stream: _Stream) -> None:
        """Close the stream on both sides, which ends its lease and frees the
        segment's reserved bytes at once (the server would otherwise wait a
        minute for the upload). Best effort. Callers hold _lock."""
        try:
            self._roundtrip("close_stream", {"stream": stream.id}, (), CLOSE_TIMEOUT)
        except (ArktosError, TimeoutError, zmq.ZMQError):
            pass
        finally:
            self._drop_stream()

    def _upload_stream(self, stream: _Stream, data: NDArray[Any], args: dict[str, Any],
                       made: Callable[[dict[str, Any]], _T], *, leased: bool) -> _T:
        """Upload over `stream`: the segment leased on it when `leased`
        (nothing more to send), else the bytes. Callers hold _lock."""
        failure: list[OSError] = []
        sent = [leased]  # every byte is on the stream (or in the segment)

        def send() -> None:
            if leased:
                return
            try:
                stream.send(data, "stripes" in args)  # straight from the array into the kernel
                sent[0] = True
            except OSError as err:  # the server closed it; its reply says why
                failure.append(err)
                self._drop_stream()
            except BaseException:  # Ctrl-C: the server sees the stream end and frees
                self._drop_stream()
                raise

        try:
            # The reply carries no payload: the request may take the lane.
            result, _ = self._roundtrip("upload", args, (), None, send,
                                        lane_ok=self._lane_reply_only(), lane_while=True)
        except ArktosError:
            self._drop_stream()  # the server closes a refused upload's stream
            raise
        except BaseException:
            if not sent[0]:
                # Cut short (Ctrl-C) after the request left but before its
                # bytes did: the server would take the next upload's bytes
                # as this one's, so the stream goes.
                self._drop_stream()
            raise
        if failure:
            raise ConnectionError(f"the bulk stream broke during the upload: {failure[0]}")
        return made(result)

    def info(self, name: str | ServerArray) -> dict[str, Any]:
        """Return ``{name, dtype, size, nbytes}`` of the server array `name`
        (a name, or a pdarray).

        >>> ak.info("arr_1")
        {'dtype': 'int64', 'name': 'arr_1', 'nbytes': 24, 'size': 3}
        """
        return self._request("info", {"name": _name_arg(name, "info")})[0]

    def rename(self, name: str | ServerArray, new_name: str) -> dict[str, Any]:
        """Store the server array `name` under `new_name`, and return its
        ``{name, dtype, size, nbytes}``. Its bytes do not move. Raises
        NameInUseError (and renames nothing) when `new_name` is taken.
        For an array you hold, pdarray.register() renames it and keeps it.

        >>> ak.Connection().rename("arr_1", "fares")["name"]
        'fares'
        """
        if not isinstance(new_name, str):
            raise TypeError(f"new_name must be a str, got {type(new_name).__name__}")
        return self._request("rename", {"name": _name_arg(name, "rename"), "new_name": new_name})[0]

    def list_arrays(self) -> list[dict[str, Any]]:
        """Return every server array as ``{name, dtype, size, nbytes}``, by name.

        >>> [entry["name"] for entry in ak.list_arrays()]
        ['arr_1', 'arr_2']
        """
        return list(self._request("list")[0]["arrays"])

    def delete(self, names: str | ServerArray | Iterable[str | ServerArray], missing_ok: bool = False) -> int:
        """Delete server arrays by name, all or nothing; return how many went.

        With `missing_ok` unknown names are skipped, else one unknown name
        raises UnknownArrayError and deletes nothing. Prefer pdarray.delete()
        for arrays you hold.

        >>> ak.Connection().delete(["arr_1", "arr_2"])
        2
        """
        names = ([_name_arg(names, "delete")] if isinstance(names, (str, ServerArray))
                 else [_name_arg(n, "delete") for n in names])
        return int(self._request("delete", {"names": names, "missing_ok": missing_ok})[0]["deleted"])

    def get_config(self) -> dict[str, Any]:
        """Ask the server for its configuration (max_frame_size, max_memory, ...).

        >>> ak.get_config()["max_frame_size"]
        16777216
        """
        self.config = self._request("get_config")[0]
        return self.config

    def mem_info(self) -> dict[str, int]:
        """Return the server's memory use: ``{used, limit, free, arrays, pooled}``.

        ``used``/``limit``/``free`` are bytes, ``arrays`` a count; ``pooled``
        bytes are freed buffers kept for reuse by later uploads (evicted
        whenever an allocation needs the room, so ``free`` counts them).

        >>> ak.mem_info()["free"]
        2147483624

        On a server with several locales these are their sums; the
        per-locale figures are in ``get_config()["locales"]`` and
        ``locale_mem_info()``.
        """
        return {key: int(value) for key, value in self._request("mem_used")[0].items() if key != "locales"}

    def locale_mem_info(self) -> list[dict[str, int]]:
        """Return each locale's ``used`` and ``limit`` bytes, by rank (one
        entry for a server with one locale).

        >>> [m["rank"] for m in ak.locale_mem_info()]
        [0]
        """
        res = self._request("mem_used")[0]
        if "locales" in res:
            return [{k: int(v) for k, v in m.items()} for m in res["locales"]]
        return [{"rank": 0, "used": int(res["used"]), "limit": int(res["limit"])}]

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
            # Nothing to delete on a stopping server (and a delete must not
            # reach it before its --checkpoint is written).
            self._let_go_of_owned(delete=False)
            self._pending_deletes.clear()
            self.close()

    def _let_go_of_owned(self, *, delete: bool) -> None:
        """Detach the finalizers of the live pdarrays that own arrays here,
        queueing their arrays' deletes when `delete`."""
        for p in list(self._owned.values()):
            fin = p._finalizer
            if fin is not None and fin.detach() is not None and delete:
                self._pending_deletes.append(p.name)

    # -- locales (docs/locales.md): transfers straight to every locale --

    def _spread(self) -> bool:
        """Whether this server spreads arrays over several locales."""
        return int(self.config.get("num_locales", 1)) > 1

    def _locale_session(self, url: str) -> Session:
        """A session of this one's to another locale (url with its token),
        opened at first use and closed with this one."""
        with self._lock:
            conn = self._locale_conns.get(url)
            if conn is None or conn.closed:
                conn = self._locale_conns[url] = Session(url, timeout=self.timeout, transport=self.transport,
                                                         shm=self.shm, server_key=self._server_key)
            return conn

    def _each_locale(self, blocks: list[dict[str, Any]], urls: list[str],
                     run: Callable[[Session | None, dict[str, Any]], Any],
                     results: list[Any]) -> list[Any]:
        """run(session, block) for every block at once, into results[rank]:
        session None for block 0 (this server's own), that locale's
        otherwise. The first error is raised once all have ended (results
        then hold what the others made; None where a block failed)."""
        results[:] = [None] * len(blocks)
        errors: list[BaseException] = []

        def one(rank: int) -> None:
            try:
                results[rank] = run(None if rank == 0 else self._locale_session(urls[rank]), blocks[rank])
            except BaseException as err:  # noqa: BLE001 - raised below, in the calling thread
                errors.append(err)

        threads = [threading.Thread(target=one, args=(r,), daemon=True) for r in range(1, len(blocks))]
        for t in threads:
            t.start()
        one(0)
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

    def _download_direct(self, name: str) -> NDArray[Any]:
        """Download an array spread over locales: every block straight from
        its locale (their bulk streams or segments at once) into its place."""
        loc, _ = self._request("locate", {"name": name})
        out = POOL.empty(int(loc["size"]), from_wire(loc["dtype"]))

        def fetch(conn: Session | None, b: dict[str, Any]) -> None:
            lo, hi = int(b["start"]), int(b["stop"])
            if hi <= lo:
                return
            part = out[lo:hi]
            if conn is None:
                self._after_restore(lambda: self._download_any(b["name"], into=part, extra={"block": True}))
            else:
                conn._download_any(b["name"], nbytes=part.nbytes, into=part)

        self._each_locale(list(loc["blocks"]), list(loc["urls"]), fetch, [])
        path_counts["locale_direct_downloads"] += 1
        return out

    def _upload_direct(self, data: NDArray[Any], made: Callable[[dict[str, Any]], _T]) -> _T:
        """Upload an array to a server that spreads it over locales: every
        locale's block straight to it at once, then the coordinator records
        them as one array (adopt). On a failure the blocks stored go."""
        loc, _ = self._request("locate", {"size": int(data.size)})
        blocks, urls = list(loc["blocks"]), list(loc["urls"])

        def send(conn: Session | None, b: dict[str, Any]) -> str:
            piece = data[int(b["start"]):int(b["stop"])]
            if conn is None:
                res = self._upload_one(piece, None, lambda r: r, {"block": True})
            else:
                res = conn._upload_one(piece, None, lambda r: r)
            return str(res["name"])

        names: list[Any] = []
        try:
            self._each_locale(blocks, urls, send, names)
            with self._op():
                self._check_open()
                result, _ = self._roundtrip("adopt", {"parts": names, "dtype": to_wire(data.dtype),
                                                      "size": int(data.size)}, (), None)
                path_counts["locale_direct_uploads"] += 1
                return made(result)
        except BaseException:
            for rank, part in enumerate(names):
                if part is None:
                    continue
                with contextlib.suppress(Exception):
                    (self if rank == 0 else self._locale_session(urls[rank])).delete([part], missing_ok=True)
            raise

    def close(self) -> None:
        """Send pending deletes (best effort, 2 s at most) and close the socket.

        Calling it again does nothing.

        >>> conn.close()
        """
        with self._lock:
            if self.closed:
                return
            # Arrays still owned by live pdarrays go too: nothing could reach
            # them after the close, and they stayed on the server for good
            # (a script's arrays, each run's). Registered ones stay.
            self._let_go_of_owned(delete=True)
            try:
                self._flush_deletes(CLOSE_TIMEOUT)
            except (ArktosError, TimeoutError, ConnectionError, zmq.ZMQError):
                pass  # the server is gone or refuses: nothing left to free
            finally:
                self._drop_stream()
                self._drop_lane()
                self._close_socket()
        for conn in getattr(self, "_locale_conns", {}).values():  # (absent if __init__ failed early)
            conn.close()

    disconnect = close

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "connected"
        return f"<arktos.Connection {self.url} ({state})>"

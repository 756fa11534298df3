"""A quick look, before ZeroMQ connects, at whether anything listens at a server address.

ZeroMQ connects lazily and retries for ever, so a connect where no server
runs used to wait for the whole handshake timeout (10 s by default) before
it said so. A plain socket connect tells a refused address at once; only
that answer fails fast. A connect that times out or cannot reach the host
(a firewall, a slow link) says nothing for sure, so it falls through to the
normal handshake and its full timeout, as does anything that accepts the
connection, however slowly it later answers.
"""

from __future__ import annotations

import errno
import os
import socket

#: How long the probe's TCP connect may take before it gives up and leaves
#: the decision to the handshake (a refusal comes back within a round trip).
PROBE_TIMEOUT = 1.0

#: How to start a server, for the messages of connects that found none.
START_HINT = ("start one with `make serve` in a checkout of arktos, or let Python start "
              "one here with ak.connect(start_server=True)")


class ServerNotListeningError(ConnectionRefusedError, TimeoutError):
    """Nothing listens at the server's address (the connection was refused,
    or the ipc:// socket file is missing).

    It is also a TimeoutError: that is what such a connect raised before,
    after its timeout, so code that caught TimeoutError still catches it."""


def check_listening(endpoint: str, timeout: float | None = None) -> None:
    """Raise ServerNotListeningError when nothing listens at a tcp:// or
    ipc:// zmq endpoint; return when something does, or when it cannot be
    told (a timeout, an unreachable host or an unresolvable name: the
    handshake then waits as before). `timeout` bounds the probe's connect
    too (at most PROBE_TIMEOUT)."""
    wait = PROBE_TIMEOUT if not timeout else min(PROBE_TIMEOUT, timeout)
    if endpoint.startswith("ipc://"):
        path = endpoint[len("ipc://"):]
        if path.startswith("@"):  # Linux's abstract namespace: no file to look at
            return
        if not os.path.exists(path):
            raise _not_listening(endpoint, f"no socket file {path}", errno.ENOENT)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(wait)
            try:
                sock.connect(path)
            except ConnectionRefusedError:
                raise _not_listening(endpoint, "connection refused", errno.ECONNREFUSED) from None
            except OSError:
                return
        return
    if not endpoint.startswith("tcp://"):
        return
    host, _, port = endpoint[len("tcp://"):].rpartition(":")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        return  # (zmq's connect says what is wrong with it)
    # Fail fast only when every address refuses: one that accepts, times
    # out or cannot be reached leaves it to the handshake.
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(wait)
            try:
                sock.connect(address)
            except ConnectionRefusedError:
                continue
            except OSError:
                return
            return
    raise _not_listening(endpoint, "connection refused", errno.ECONNREFUSED)


def _not_listening(endpoint: str, why: str, code: int) -> ServerNotListeningError:
    err = ServerNotListeningError(f"no arktos-server listens at {endpoint} ({why}); {START_HINT}")
    err.errno = code  # (set after: with it in the arguments the message would open with "[Errno 111]")
    return err

"""Cancel: ak.cancel() from another thread, Ctrl-C in the waiting one and the
server's --max-request-time stop a long sort, group-by or Parquet read on
the server, which stores nothing, frees what it had allocated and is idle
again; every stored array stays as it was.

The arrays are sized so that the work runs for seconds on a 2-core machine
and the cancel comes within its first few hundred ms; what is asserted is
the outcome (CANCELED, the server idle, memory and arrays as before), not a
time: bench/cancel measures how soon the server is idle.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import arktos as ak

N = 30_000_000  # an argsort of this many int64 takes about 2 s on 2 cores


@pytest.fixture
def cancel_conn(make_server: Callable[..., Any], data_dir: Path) -> Iterator[ak.Connection]:
    """The default connection to a server of the test's own (2 workers)."""
    srv = make_server("--data-dir", str(data_dir), "--workers", "2")
    conn = ak.connect(srv.url, timeout=60.0)
    yield conn
    ak.disconnect()


def _stats(conn: ak.Connection) -> dict[str, Any]:
    return conn._request("stats", {})[0]


def _idle(watch: ak.Connection, within: float = 10.0) -> None:
    """Wait until the server runs no request (bounded)."""
    deadline = time.monotonic() + within
    while _stats(watch)["running"] > 0:
        assert time.monotonic() < deadline, "the server still runs the cancelled request"
        time.sleep(0.005)


def _cancel_soon(after: float = 0.2) -> threading.Thread:
    """ak.cancel() from another thread, once the request is running."""
    def run() -> None:
        time.sleep(after)
        for _ in range(1000):  # until the waiting call has sent its request
            if ak.cancel() is not None:
                return
            time.sleep(0.002)
    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.fixture
def big(cancel_conn: ak.Connection) -> ak.pdarray:
    return ak.array(np.random.default_rng(7).integers(0, 2**62, N))


def _state(conn: ak.Connection) -> tuple[int, set[str]]:
    return conn.get_mem_used(), {entry["name"] for entry in conn.list_arrays()}


@pytest.mark.parametrize("work", ["argsort", "groupby"])
def test_cancel_from_another_thread_stops_the_work(cancel_conn: ak.Connection, big: ak.pdarray,
                                                   work: str) -> None:
    watch = ak.Connection(cancel_conn.url)
    before = _state(watch)
    canceled = _stats(watch)["canceled"]
    thread = _cancel_soon()
    with pytest.raises(ak.CanceledError, match="cancelled: the client cancelled it; nothing was stored"):
        if work == "argsort":
            ak.argsort(big)
        else:
            ak.GroupBy(big).size()
    thread.join()
    _idle(watch)
    assert _stats(watch)["canceled"] == canceled + 1
    assert _state(watch) == before  # nothing stored, every reservation given back
    # The connection goes on, and the same work completes when let be.
    perm = ak.argsort(big[:1000]).to_ndarray()
    assert np.array_equal(perm, np.argsort(big[:1000].to_ndarray(), kind="stable"))
    watch.close()


def test_ctrl_c_cancels_the_request_on_the_server(cancel_conn: ak.Connection, big: ak.pdarray) -> None:
    watch = ak.Connection(cancel_conn.url)
    before = _state(watch)
    canceled = _stats(watch)["canceled"]
    # Ctrl-C as a terminal sends it: SIGINT, which interrupts the main
    # thread's wait (interrupt_main would only be seen once the wait ended).
    timer = threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        ak.argsort(big)
    timer.join()
    _idle(watch)
    assert _stats(watch)["canceled"] == canceled + 1
    assert _state(watch) == before
    # The cancelled request's late reply (CANCELED) is read before the next one.
    assert int(ak.sum(big[:10])) == int(big[:10].to_ndarray().sum())
    watch.close()


def test_cancel_stops_a_parquet_read(cancel_conn: ak.Connection, data_dir: Path) -> None:
    rng = np.random.default_rng(3)
    cols = {f"c{i}": ak.array(rng.random(N // 2)) for i in range(4)}
    ak.to_parquet(cols, "big.parquet", compression="zstd")
    del cols
    cancel_conn.get_mem_used()  # (a request: the dropped columns are deleted first)
    watch = ak.Connection(cancel_conn.url)
    before = _state(watch)
    thread = _cancel_soon(0.05)
    with pytest.raises(ak.CanceledError, match="read_parquet"):
        ak.read_parquet("big.parquet")
    thread.join()
    _idle(watch)
    assert _state(watch) == before
    watch.close()


def test_max_request_time_cancels(make_server: Callable[..., Any]) -> None:
    srv = make_server("--workers", "2", "--max-request-time", "200ms")
    ak.connect(srv.url, timeout=60.0)
    a = ak.array(np.random.default_rng(1).integers(0, 2**62, N))
    watch = ak.Connection(srv.url)
    before = _state(watch)
    with pytest.raises(ak.CanceledError, match="--max-request-time of 200ms"):
        ak.argsort(a)
    _idle(watch)
    assert _state(watch) == before
    watch.close()
    ak.disconnect()


def test_cancel_with_nothing_running(cancel_conn: ak.Connection) -> None:
    assert ak.cancel() is None
    # A cancel for a request that finished is answered "unknown" and harms nothing.
    peer = cancel_conn.config["peer"]
    assert cancel_conn._request("cancel", {"id": 10**9, "peer": peer})[0]["state"] == "unknown"
    assert int(ak.sum(ak.arange(10))) == 45

"""The notebook experience: ak.Server, connect(start_server=True), progress
bars, HTML repr, pandas/Arrow interop."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SERVER_BIN, free_port

import arktos as ak
from arktos.core import _progress, _server

pytestmark = pytest.mark.skipif(not SERVER_BIN.exists(), reason=f"{SERVER_BIN} not built")


@pytest.fixture(autouse=True)
def _server_bin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARKTOS_SERVER_BIN", str(SERVER_BIN))


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie (exited, not yet reaped by a dead parent's init) counts as gone.
        try:
            if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


# -- finding and starting the server -------------------------------------

def test_find_server_binary_uses_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ak.find_server_binary() == SERVER_BIN
    monkeypatch.setenv("ARKTOS_SERVER_BIN", "/nonexistent/arktos-server")
    with pytest.raises(FileNotFoundError, match="ARKTOS_SERVER_BIN"):
        ak.find_server_binary()


def test_missing_binary_names_every_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARKTOS_SERVER_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_server, "__file__", str(tmp_path / "arktos" / "core" / "_server.py"))
    with pytest.raises(FileNotFoundError) as err:
        ak.find_server_binary()
    message = str(err.value)
    for place in ("$ARKTOS_SERVER_BIN", "bundled with the package", "PATH", "make build"):
        assert place in message


def test_server_context_manager() -> None:
    with ak.Server(max_memory="256MiB", workers=2) as srv:
        assert srv.running and srv.url.startswith("tcp://127.0.0.1:")
        conn = srv.connect(timeout=30.0)
        assert ak.arange(10).sum() == 45
        assert ak.get_config()["max_memory"] == 256 << 20
        other = srv.connection()
        assert other.list_arrays() == ak.list_arrays()
        pid = srv.process.pid
    assert not srv.running and _gone(pid)
    assert conn.closed and other.closed
    with pytest.raises(ConnectionError, match="not connected"):
        ak.arange(3)
    assert "stopped" in repr(srv)


def test_server_that_fails_reports_its_log() -> None:
    with pytest.raises(RuntimeError, match="max-memory"):
        ak.Server(max_memory="lots").start()


def test_server_is_stopped_at_interpreter_exit(tmp_path: Path) -> None:
    script = ("import arktos as ak\n"
              "srv = ak.Server().start()\n"
              "print(srv.process.pid, flush=True)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "ARKTOS_SERVER_BIN": str(SERVER_BIN)})
    assert out.returncode == 0, out.stderr
    assert _gone(int(out.stdout.split()[-1]))


def test_connect_start_server() -> None:
    url = f"tcp://localhost:{free_port()}"
    try:
        ak.connect(url, start_server=True, timeout=30.0)
        started = _server._auto_server
        assert started is not None and started.running
        a = ak.array(np.arange(5)).register("kept_across_connects")
        b = ak.array(np.arange(3))
        # Something listens now: a second call connects without starting another.
        ak.connect(url, start_server=True, timeout=30.0)
        assert _server._auto_server is started
        # the same server: the registered array is there; what the closed
        # connection's pdarrays owned went with it
        assert ak.info(a.name)["size"] == 5
        assert b.name not in {e["name"] for e in ak.list_arrays()}
        pid = started.process.pid
        ak.shutdown()
        assert _gone(pid)
    finally:
        if _server._auto_server is not None:
            _server._auto_server.stop()
            _server._auto_server = None


def test_connect_start_server_refuses_remote() -> None:
    with pytest.raises(ValueError, match="this host only"):
        ak.connect("tcp://192.0.2.1:5555", start_server=True)


# -- printing --------------------------------------------------------------

def test_repr_html(conn: ak.Connection) -> None:
    a = conn.array(np.arange(1000, dtype=np.int32))
    html = a._repr_html_()
    assert a.name in html and "int32" in html and "size 1,000" in html and "3.9 KiB" in html
    assert "997, 998, 999" in html and "&lt;" not in repr(a)


# -- progress bars ---------------------------------------------------------

def test_progress_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ak.config, "progress", None)
    monkeypatch.setenv("ARKTOS_PROGRESS", "0")
    assert not ak.config.progress_enabled()
    monkeypatch.setenv("ARKTOS_PROGRESS", "1")
    assert ak.config.progress_enabled()
    monkeypatch.delenv("ARKTOS_PROGRESS")
    assert ak.config.progress_enabled() == sys.stderr.isatty()  # pytest: not a terminal
    monkeypatch.setattr(ak.config, "progress", False)
    monkeypatch.setenv("ARKTOS_PROGRESS", "1")
    assert not ak.config.progress_enabled()


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Progress bars on, shown at once, written to a buffer."""
    from tqdm import tqdm

    out = io.StringIO()
    monkeypatch.setattr(ak.config, "progress", True)
    monkeypatch.setattr(ak.config, "progress_delay", 0.0)
    monkeypatch.setattr(_progress, "_tqdm", lambda: lambda *a, **k: tqdm(*a, file=out, **k))
    return out


def test_transfer_progress_bars(conn: ak.Connection, bars: io.StringIO) -> None:
    data = np.arange(8 << 20, dtype=np.float64)  # 64 MiB: over a bulk stream
    a = conn.array(data)
    assert "arktos upload" in bars.getvalue() and "64.0M" in bars.getvalue()
    assert np.array_equal(a.to_ndarray(), data)
    assert "arktos download" in bars.getvalue()
    assert conn.stream_network in ("unix", "tcp")


def test_no_bar_for_small_transfers(conn: ak.Connection, bars: io.StringIO) -> None:
    conn.array(np.arange(1000)).to_ndarray()
    assert bars.getvalue() == ""


def test_waiting_bar(bars: io.StringIO) -> None:
    waiting = _progress.Waiting("argsort")
    assert waiting.poll_ms(None) == int(_progress.POLL_INTERVAL * 1000)
    waiting.tick()
    waiting.close()
    assert "arktos argsort: running on the server" in bars.getvalue()


@pytest.mark.parametrize("shm", [True, False])
def test_ctrl_c_during_upload_with_bar(conn: ak.Connection, bars: io.StringIO,
                                       monkeypatch: pytest.MonkeyPatch, shm: bool) -> None:
    """Ctrl-C half-way through an upload leaves nothing on the server: over
    shared memory it comes during the copy into the leased segment, over the
    stream while the bytes are sent; either way the stream is dropped (which
    ends the lease, or loses its position) and the next upload works."""
    conn.shm = shm
    before = {e["name"] for e in conn.list_arrays()}
    from tqdm import tqdm

    calls = []

    def interrupt(self: tqdm, n: int = 1) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(tqdm, "update", interrupt)
    with pytest.raises(KeyboardInterrupt):
        conn.array(np.ones(16 << 20))  # 128 MiB, interrupted after 32 MiB sent
    monkeypatch.undo()
    assert conn._stream is None
    deadline = time.monotonic() + 10
    while {e["name"] for e in conn.list_arrays()} != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {e["name"] for e in conn.list_arrays()} == before  # the partial array was freed
    again = conn.array(np.arange(4 << 20))
    assert np.array_equal(again.to_ndarray(), np.arange(4 << 20))


# -- pandas and Arrow ------------------------------------------------------

def test_pandas_round_trip(default_conn: ak.Connection) -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"zone": np.array([3, 1, 2], np.int16), "fare": [9.5, 12.0, 7.25],
                       "paid": [True, False, True], "n": pd.array([1, 2, 3], dtype="Int64"),
                       7: np.array([1, 2, 3], np.uint8)})
    cols = ak.from_pandas(df)
    assert list(cols) == ["zone", "fare", "paid", "n", "7"]
    assert cols["zone"].dtype == np.int16 and cols["n"].dtype == np.int64
    back = ak.to_pandas(cols)
    expected = df.rename(columns={7: "7"}).astype({"n": np.int64})
    pd.testing.assert_frame_equal(back, expected)
    s = ak.from_pandas(df["fare"])
    pd.testing.assert_series_equal(s.to_pandas(name="fare"), df["fare"])
    pd.testing.assert_series_equal(ak.to_pandas(ak.from_pandas(pd.Index([4, 5]))),
                                   pd.Series([4, 5]))


def test_pandas_errors(default_conn: ak.Connection) -> None:
    pd = pytest.importorskip("pandas")
    # Strings and categories become Categoricals (test_categorical.py);
    # other dtypes are refused, naming the way out.
    assert isinstance(ak.from_pandas(pd.Series(["a", "b"])), ak.Categorical)
    assert isinstance(ak.from_pandas(pd.Series(["a", "b"], dtype="category")), ak.Categorical)
    with pytest.raises(TypeError, match=r"cannot store.*astype\('int64'\)"):
        ak.from_pandas(pd.Series(pd.to_datetime(["2026-01-01"])))
    with pytest.raises(ValueError, match="missing values"):
        ak.from_pandas(pd.Series([1, None], dtype="Int64"))
    with pytest.raises(TypeError, match="DataFrame"):
        ak.from_pandas([1, 2])
    with pytest.raises(ValueError, match="duplicate"):
        ak.from_pandas(pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_arrow_round_trip(default_conn: ak.Connection) -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"x": pa.array([1, 2, 3], pa.int32()), "y": [0.5, 1.5, 2.5],
                      "b": [True, False, True],
                      "c": pa.chunked_array([[1, 2], [3]], pa.uint64())})
    cols = ak.from_arrow(table)
    assert cols["x"].dtype == np.int32 and cols["c"].dtype == np.uint64
    assert ak.to_arrow(cols).equals(table.combine_chunks())
    one = ak.from_arrow(pa.array(np.arange(10, dtype=np.float32)))
    assert one.to_arrow().equals(pa.array(np.arange(10, dtype=np.float32)))
    batch = pa.record_batch({"v": [1, 2]})
    assert ak.from_arrow(batch)["v"].to_ndarray().tolist() == [1, 2]


def test_arrow_zero_copy_upload(default_conn: ak.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    pa = pytest.importorskip("pyarrow")
    arr = pa.array(np.arange(100, dtype=np.int64))
    seen = []
    upload = ak.Connection.array

    def spy(self: ak.Connection, x: np.ndarray, name: str | None = None) -> ak.pdarray:
        seen.append(x)
        return upload(self, x, name)

    monkeypatch.setattr(ak.Connection, "array", spy)
    ak.from_arrow(arr)
    address = arr.buffers()[1].address
    assert seen[0].__array_interface__["data"][0] == address  # Arrow's own buffer


def test_arrow_errors(default_conn: ak.Connection) -> None:
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match="nulls"):
        ak.from_arrow(pa.array([1, None]))
    assert isinstance(ak.from_arrow(pa.array(["a"])), ak.Categorical)  # strings: test_categorical.py
    with pytest.raises(TypeError, match="Arrow type timestamp"):
        ak.from_arrow(pa.array(np.array(["2026-01-01"], dtype="datetime64[s]")))
    with pytest.raises(TypeError, match="from_arrow takes"):
        ak.from_arrow(np.arange(3))


def test_from_dlpack(default_conn: ak.Connection) -> None:
    x = np.arange(6, dtype=np.int16)
    assert ak.from_dlpack(x).to_ndarray().tolist() == list(range(6))


# -- documentation ---------------------------------------------------------

#: Public names whose docstrings still lack an example (owned elsewhere; remove
#: entries as examples are added).
EXAMPLES_PENDING: set[str] = set()


def test_every_public_function_has_an_example() -> None:
    import inspect

    missing = []
    for name in ak.__all__:
        obj = getattr(ak, name)
        if name in EXAMPLES_PENDING or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        if obj is np.dtype or (inspect.isclass(obj) and issubclass(obj, np.generic)):
            continue  # numpy's own dtypes under Arkouda's names (ak.int64): numpy documents them
        if not callable(obj):
            continue
        if ">>>" not in (inspect.getdoc(obj) or ""):
            missing.append(name)
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                if member.startswith("_") or not (callable(value) or isinstance(value, property)):
                    continue
                if ">>>" not in (inspect.getdoc(value) or ""):
                    missing.append(f"{name}.{member}")
    assert not missing, f"docstrings without a >>> example: {missing}"


def test_namespace_is_the_api() -> None:
    """dir(ak), which a notebook's tab completion lists, holds the API and
    nothing else: before, the typing helpers the module uses (Callable,
    ParamSpec, P, R, functools, inspect, ...) showed up beside it. The
    package's layers (ak.core, ak.numpy, ak.pandas) are there too, as in
    Arkouda, but not in ak.__all__ (a star import must not bind numpy)."""
    extra = [n for n in dir(ak) if not n.startswith("_") and n not in ak.__all__
             and n not in ("core", "numpy", "pandas")]
    assert not extra, f"public names outside ak.__all__: {extra}"


def test_matplotlib_plots_pdarrays(server: ak.Server) -> None:
    """plt.plot(a) and plt.hist(a) plot a pdarray (matplotlib looks for
    pandas' to_numpy; before, plot indexed the pdarray with [:, None] and
    failed)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(20.0) ** 2
    conn = server.connect()
    try:
        a = conn.array(x)
        fig, ax = plt.subplots()
        (line,) = ax.plot(a)
        assert np.array_equal(line.get_ydata(), x)
        counts, edges, _ = ax.hist(a, bins=4)
        want_counts, want_edges = np.histogram(x, bins=4)
        assert np.array_equal(counts, want_counts) and np.array_equal(edges, want_edges)
        plt.close(fig)
        assert np.array_equal(a.to_numpy(), x)
    finally:
        conn.close()

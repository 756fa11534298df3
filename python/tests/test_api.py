"""The module-level API (default connection) and the pdarray surface."""

from __future__ import annotations

import numpy as np
import pytest

import arktos as ak


def test_connect_takes_arkoudas_forms(server) -> None:
    """Arkouda's connect(server, port), port=, connect_url= and timeout=0 (no
    timeout) reach the same server; a port beside a full URL is refused."""
    host, port = server.url.removeprefix("tcp://").rsplit(":", 1)
    for kwargs in ({"url": host, "token": int(port)}, {"server": host, "port": int(port)},
                   {"connect_url": server.url}):
        conn = ak.connect(**kwargs, timeout=0, access_token=server.token)
        try:
            assert conn.url == server.url and conn.timeout is None
            a = ak.arange(3)
            assert (a == "x").to_ndarray().tolist() == [False] * 3  # numpy 2's elementwise answer
            assert (a != "x").to_ndarray().tolist() == [True] * 3
        finally:
            ak.disconnect()
    with pytest.raises(TypeError, match="the port is part of the url"):
        ak.connect(server.url, int(port))


def test_connect_prints_and_module_functions_work(server, capsys) -> None:
    conn = ak.connect(server.url)
    try:
        assert f"connected to arktos server {server.url}" in capsys.readouterr().out
        config = ak.get_config()
        assert config["protocol_version"] == 1
        assert config["max_frame_size"] == conn.max_frame_size > 0
        assert set(config) >= {"server_version", "max_memory", "workers", "auth", "dtypes"}
        before = ak.get_mem_used()
        a = ak.array(np.arange(10, dtype=np.int32))
        assert ak.get_mem_used() == before + 40
        mem = ak.mem_info()
        assert set(mem) == {"used", "limit", "free", "arrays", "pooled"}
        assert mem["used"] + mem["free"] == mem["limit"]
        assert {"name": a.name, "dtype": "int32", "size": 10, "nbytes": 40} in ak.list_arrays()
        assert ak.info(a.name)["size"] == 10
        assert ak.attach(a.name).to_ndarray().tolist() == list(range(10))
        a.delete()
    finally:
        ak.disconnect()
    with pytest.raises(ConnectionError, match=r"call ak\.connect\(\) first"):
        ak.array([1])


def test_url_from_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("ARKTOS_URL", server.url)
    with ak.Connection() as conn:
        assert conn.url == server.url


def test_no_server_fails_fast_with_hint(unused_url: str) -> None:
    # (more in test_probe.py; a TimeoutError too, as it was when it waited)
    url = unused_url
    with pytest.raises(TimeoutError, match=rf"no arktos-server listens at {url} \(connection refused\); "
                                            r"start one with `make serve`.*ak\.connect\(start_server=True\)"):
        ak.Connection(url, timeout=0.3)


def test_bad_url() -> None:
    with pytest.raises(ValueError, match="cannot connect to 'nonsense'"):
        ak.Connection("nonsense", timeout=0.3)


def test_closed_connection_refuses(server) -> None:
    conn = server.connect()
    conn.close()
    conn.close()  # twice is fine
    assert "closed" in repr(conn)
    with pytest.raises(ConnectionError, match="is closed"):
        conn.list_arrays()


def test_pdarray_attributes(conn: ak.Connection) -> None:
    a = conn.array(np.arange(6, dtype=np.uint16))
    assert (a.size, len(a), a.shape, a.ndim, a.itemsize, a.nbytes) == (6, 6, (6,), 1, 2, 12)
    assert a.dtype == np.dtype("uint16")
    assert np.asarray(a).tolist() == list(range(6))
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    assert [int(v) for v in a] == list(range(6))
    with pytest.raises(ValueError, match="always copies"):
        np.asarray(a, copy=False)


@pytest.mark.parametrize("data", [
    np.arange(10), np.arange(100), np.arange(101), np.arange(1000, dtype=np.int8),
    np.linspace(0, 1, 5000), np.array([np.nan, 3e38, -np.inf] * 50, dtype=np.float32),
    np.zeros(0, np.uint8), np.ones(500, bool), np.arange(10**15, 10**15 + 10**7),
    np.arange(10**16 - 200, 10**16, dtype=np.uint64) * 100,
], ids=["10", "100", "101", "int8", "floats", "float32-special", "empty", "bool", "wide",
        "wraps-shape"])
def test_repr_and_str_match_numpy(conn: ak.Connection, data: np.ndarray) -> None:
    a = conn.array(data)
    with np.printoptions(threshold=100, edgeitems=3):
        assert repr(a) == repr(data)
        assert str(a) == str(data)


def test_repr_of_large_array_fetches_only_the_ends(conn: ak.Connection, monkeypatch) -> None:
    a = conn.array(np.arange(1000))
    fetched = []
    download = conn._download

    def spy(name, start=None, stop=None, **kw):
        result = download(name, start, stop, **kw)
        fetched.append(result.size)
        return result

    monkeypatch.setattr(conn, "_download", spy)
    assert repr(a) == "array([  0,   1,   2, ..., 997, 998, 999], shape=(1000,))"
    assert fetched == [3, 3]


def test_iteration_refused_for_huge_arrays(conn: ak.Connection) -> None:
    a = conn.array(np.zeros(10**6 + 1, np.uint8))
    with pytest.raises(ValueError, match=r"to_ndarray\(\)"):
        iter(a)


def test_shutdown_stops_the_server(make_server) -> None:
    srv = make_server()
    ak.connect(srv.url)
    ak.shutdown()
    assert srv.process.wait(timeout=10) == 0
    with pytest.raises(ConnectionError):
        ak.get_config()


def test_readme_session_disconnect_then_shutdown(make_server) -> None:
    """The README's session ends with ak.disconnect(); ak.shutdown(): it must stop the server."""
    srv = make_server()
    ak.connect(srv.url)
    a = ak.array(np.arange(1000))
    assert (a.to_ndarray() == np.arange(1000)).all()
    a.delete()
    ak.disconnect()
    ak.shutdown()
    assert srv.process.wait(timeout=10) == 0

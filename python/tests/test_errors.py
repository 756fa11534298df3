"""Every bad input gets its registry error, and the server keeps its data.

Each test ends with `intact()`: an array stored before the bad request still
downloads unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

import msgpack
import numpy as np
import pytest
import zmq

import arktos as ak
from arktos.core._protocol import decode_header, encode_request

SENTINEL = np.arange(1000, dtype=np.float64) * 1.5


@pytest.fixture
def intact(conn: ak.Connection) -> Callable[[], None]:
    """Store SENTINEL; the returned check asserts it still downloads unchanged."""
    stored = conn.array(SENTINEL)

    def check() -> None:
        assert stored.to_ndarray().tobytes() == SENTINEL.tobytes()

    return check


def assert_error(header: dict, code: int, name: str) -> None:
    assert (header["status"], header["code"], header["error"]) == (1, code, name), header
    assert header["message"], "an error reply must say what was wrong"
    assert header["result"] is None


# -- errors through the client API -----------------------------------------

def test_unknown_array_is_key_error(conn: ak.Connection, intact) -> None:
    with pytest.raises(KeyError) as info:
        conn.attach("no-such-array")
    assert isinstance(info.value, ak.UnknownArrayError)
    assert info.value.code == 9 and "no-such-array" in info.value.message
    with pytest.raises(ak.UnknownArrayError):
        conn._download("no-such-array")
    intact()


def test_delete_is_all_or_nothing(conn: ak.Connection, intact) -> None:
    a = conn.array([1, 2, 3])
    with pytest.raises(KeyError):
        conn.delete([a.name, "no-such-array"])
    assert a.to_ndarray().tolist() == [1, 2, 3]
    assert conn.delete([a.name, "no-such-array"], missing_ok=True) == 1
    intact()


def test_name_in_use(conn: ak.Connection, intact) -> None:
    kept = conn.array([1], name="test_name_in_use")  # dropping it would free the name
    with pytest.raises(ValueError) as info:
        conn.array([2], name="test_name_in_use")
    assert isinstance(info.value, ak.NameInUseError)
    assert kept.to_ndarray().tolist() == [1]
    intact()


@pytest.mark.parametrize(("start", "stop"), [(5, 3), (0, 11), (11, 11)])
def test_download_out_of_range(conn: ak.Connection, intact, start: int, stop: int) -> None:
    a = conn.array(np.arange(10))
    with pytest.raises(IndexError) as info:
        conn._download(a.name, start, stop)
    assert isinstance(info.value, ak.IndexOutOfRangeError)
    intact()


def test_bad_name_is_refused(conn: ak.Connection, intact) -> None:
    with pytest.raises(ValueError):
        conn.array([1], name="has space")
    intact()


def test_over_memory_limit(make_server) -> None:
    with make_server("--max-memory", "1MiB").connect() as small:
        kept = small.array(np.arange(1000))
        used = small.get_mem_used()
        too_big = np.zeros(200_000)  # 1.6 MB
        with pytest.raises(MemoryError) as info:
            small.array(too_big)
        assert isinstance(info.value, ak.OutOfMemoryError)
        message = info.value.message.lower()
        assert "need" in message and "free" in message, message
        assert small.get_mem_used() == used
        assert small.array(np.zeros(10_000)).size == 10_000  # what fits still goes in
        assert kept.to_ndarray().tolist() == list(range(1000))


# -- tokens -------------------------------------------------------------------

@pytest.fixture
def auth_server(make_server):
    return make_server("--auth", token="secret123")


def test_wrong_token_is_permission_error(auth_server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.arktos/token to fall back on
    with pytest.raises(PermissionError) as info:
        ak.Connection(auth_server.url, token="wrong", timeout=10)
    assert isinstance(info.value, ak.AuthFailedError)
    with pytest.raises(ak.AuthFailedError, match="no token was given"):
        ak.Connection(auth_server.url, timeout=10)


def test_token_sources(auth_server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    url = auth_server.url
    with ak.Connection(url, token="secret123") as conn:
        kept = conn.array([4, 5])
        name = kept.name
        kept._finalizer.detach()
    with ak.Connection(f"{url}?token=secret123") as conn:
        assert conn.url == url
        assert conn.attach(name).to_ndarray().tolist() == [4, 5]
    monkeypatch.setenv("ARKTOS_TOKEN", "secret123")
    with ak.Connection(url) as conn:
        conn.info(name)
    monkeypatch.delenv("ARKTOS_TOKEN")
    token_file = tmp_path / "token.txt"
    token_file.write_text("secret123\n")
    monkeypatch.setenv("ARKTOS_TOKEN_FILE", str(token_file))
    with ak.Connection(url) as conn:
        conn.info(name)
    monkeypatch.setenv("ARKTOS_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="ARKTOS_TOKEN_FILE"):
        ak.Connection(url)


def test_home_token_file_fallback(make_server, monkeypatch) -> None:
    """A server with --auth and no --token writes ~/.arktos/token; the client finds it."""
    srv = make_server("--auth")
    token_file = srv.home / ".arktos" / "token"
    assert token_file.is_file()
    monkeypatch.setenv("HOME", str(srv.home))
    with ak.Connection(srv.url, timeout=10) as conn:
        assert conn.array([1]).to_ndarray().tolist() == [1]


def test_raw_wrong_token_runs_nothing(auth_server, raw_client) -> None:
    raw = raw_client(auth_server.url)
    header, _ = raw.request("upload", {"dtype": "int8", "size": 1, "frame_size": 8},
                            [b"\x01"], token="nope")
    assert_error(header, 4, "AUTH_FAILED")
    header, _ = raw.request("list", {}, token="secret123")
    assert header["result"]["arrays"] == []


# -- hand-made requests over a raw DEALER -----------------------------------

MALFORMED = {
    "empty-frame": b"",
    "not-msgpack": b"\xc1",
    "list": msgpack.packb([1, "id", 2]),
    "int": msgpack.packb(7),
    "truncated": encode_request(3, "", "list", {})[:-3],
    "trailing-bytes": encode_request(3, "", "list", {}) + b"\x00",
    "int-keys": msgpack.packb({1: 2}),
    "no-id": msgpack.packb({"v": 1, "token": "", "cmd": "list", "args": {}}),
    "id-string": msgpack.packb({"v": 1, "id": "1", "token": "", "cmd": "list", "args": {}}),
    "id-negative": msgpack.packb({"v": 1, "id": -1, "token": "", "cmd": "list", "args": {}}),
    "no-cmd": msgpack.packb({"v": 1, "id": 3, "token": "", "args": {}}),
    "cmd-int": msgpack.packb({"v": 1, "id": 3, "token": "", "cmd": 5, "args": {}}),
    "args-list": msgpack.packb({"v": 1, "id": 3, "token": "", "cmd": "list", "args": []}),
    "token-bin": msgpack.packb({"v": 1, "id": 3, "token": b"x", "cmd": "list", "args": {}},
                               use_bin_type=True),
    "unknown-key": msgpack.packb({"v": 1, "id": 3, "token": "", "cmd": "list", "args": {},
                                  "extra": 1}),
}


@pytest.mark.parametrize("frame", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_header(raw, intact, frame: bytes) -> None:
    header, payload = raw.send([frame])
    assert_error(header, 2, "MALFORMED_REQUEST")
    assert header["id"] in (0, 3) and payload == []
    intact()


def test_unsupported_version(raw, intact) -> None:
    header, _ = raw.send([encode_request(9, "", "list", {}, version=2)])
    assert header["id"] == 9
    assert_error(header, 3, "UNSUPPORTED_VERSION")
    intact()


UPLOAD_10_INT64 = {"dtype": "int64", "size": 10, "frame_size": 40}

BAD_REQUESTS = [
    ("unknown-command", "frobnicate", {}, [], 5, "UNKNOWN_COMMAND"),
    ("upload-no-dtype", "upload", {"size": 1, "frame_size": 8}, [b"\0"], 6, "MISSING_ARGUMENT"),
    ("info-no-name", "info", {}, [], 6, "MISSING_ARGUMENT"),
    ("info-name-int", "info", {"name": 5}, [], 7, "ARGUMENT_TYPE"),
    ("upload-size-str", "upload", {"dtype": "int8", "size": "1", "frame_size": 8}, [b"\0"],
     7, "ARGUMENT_TYPE"),
    ("delete-names-str", "delete", {"names": "a"}, [], 7, "ARGUMENT_TYPE"),
    ("upload-negative-size", "upload", {"dtype": "int8", "size": -1, "frame_size": 8}, [],
     8, "ARGUMENT_VALUE"),
    ("upload-frame-size-0", "upload", {"dtype": "int8", "size": 1, "frame_size": 0}, [b"\0"],
     8, "ARGUMENT_VALUE"),
    ("unknown-argument", "info", {"name": "x", "nmae": "x"}, [], 8, "ARGUMENT_VALUE"),
    ("unsupported-dtype", "upload", {"dtype": "complex128", "size": 1, "frame_size": 16},
     [b"\0" * 16], 10, "UNSUPPORTED_DTYPE"),
    ("payload-short", "upload", UPLOAD_10_INT64, [b"\0" * 40, b"\0" * 39], 11, "PAYLOAD_LENGTH"),
    ("payload-long", "upload", UPLOAD_10_INT64, [b"\0" * 40, b"\0" * 41], 13, "FRAME_TOO_LARGE"),
    ("too-few-frames", "upload", UPLOAD_10_INT64, [b"\0" * 40], 11, "PAYLOAD_LENGTH"),
    ("no-frames", "upload", UPLOAD_10_INT64, [], 11, "PAYLOAD_LENGTH"),
    ("too-many-frames", "upload", UPLOAD_10_INT64, [b"\0" * 40, b"\0" * 20, b"\0" * 20],
     12, "FRAME_COUNT"),
    ("uneven-frames", "upload", UPLOAD_10_INT64, [b"\0" * 20, b"\0" * 40, b"\0" * 20],
     12, "FRAME_COUNT"),
    ("payload-to-list", "list", {}, [b"x"], 12, "FRAME_COUNT"),
    ("bool-byte-2", "upload", {"dtype": "bool", "size": 2, "frame_size": 8}, [b"\x00\x02"],
     17, "INVALID_DATA"),
]


@pytest.mark.parametrize(("cmd", "args", "payload", "code", "name"),
                         [case[1:] for case in BAD_REQUESTS], ids=[case[0] for case in BAD_REQUESTS])
def test_bad_request(conn: ak.Connection, raw, intact, cmd, args, payload, code, name) -> None:
    before = conn.mem_info()
    header, frames = raw.request(cmd, args, payload)
    assert_error(header, code, name)
    assert frames == []
    assert conn.mem_info() == before
    intact()


def test_download_frame_size_zero(conn: ak.Connection, raw, intact) -> None:
    a = conn.array([1, 2])
    header, _ = raw.request("download", {"name": a.name, "frame_size": 0})
    assert_error(header, 8, "ARGUMENT_VALUE")
    intact()


def test_frame_larger_than_max_frame_size(make_server, raw_client) -> None:
    srv = make_server("--frame-size", "1024")
    raw = raw_client(srv.url)
    with srv.connect() as conn:
        kept = conn.array(np.arange(300))
        # a declared frame_size above the server's limit is a bad argument
        header, _ = raw.request("upload", {"dtype": "uint8", "size": 2048, "frame_size": 2048},
                                [b"\0" * 2048])
        assert_error(header, 8, "ARGUMENT_VALUE")
        # a frame longer than the declared (allowed) frame_size
        header, _ = raw.request("upload", {"dtype": "uint8", "size": 2048, "frame_size": 1024},
                                [b"\0" * 1500, b"\0" * 548])
        assert_error(header, 13, "FRAME_TOO_LARGE")
        assert kept.to_ndarray().tolist() == list(range(300))


def test_frame_over_hard_cap_drops_connection_without_reply(server, conn, intact) -> None:
    """A frame over 4 x max_frame_size (>= 64 MiB) is refused by ZMQ_MAXMSGSIZE: no reply."""
    cap = max(4 * conn.max_frame_size, 64 << 20)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 2000)
    sock.connect(server.url)
    try:
        sock.send_multipart([encode_request(1, "", "upload",
                                            {"dtype": "uint8", "size": cap + 1,
                                             "frame_size": cap + 1}),
                             np.zeros(cap + 1, np.uint8)], copy=False)
        with pytest.raises(zmq.Again):
            decode_header(sock.recv_multipart()[0])
    finally:
        sock.close()
    intact()

"""Unit tests of the wire helpers; no server needed."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

import arktos as ak
from arktos.core._dtypes import DTYPES, from_wire, to_wire
from arktos.core._protocol import decode_header, encode_request, join_frames, n_frames, parse_reply, split_frames
from arktos.core._session import _as_wire_array, _split_url


def test_request_keys_in_protocol_order_and_args_sorted() -> None:
    frame = encode_request(5, "tok", "upload", {"size": 1, "dtype": "int8", "frame_size": 8,
                                               "meta": {"z": 1, "a": [{"y": 2, "b": 3}]}})
    header = msgpack.unpackb(frame)
    assert list(header) == ["v", "id", "token", "cmd", "args"]
    assert list(header["args"]) == ["dtype", "frame_size", "meta", "size"]
    assert list(header["args"]["meta"]) == ["a", "z"]
    assert list(header["args"]["meta"]["a"][0]) == ["b", "y"]


@pytest.mark.parametrize("frame", [b"", b"\xc1", msgpack.packb([1, 2]), b"\x81\xa1v"])
def test_decode_header_rejects_non_maps(frame: bytes) -> None:
    with pytest.raises(ValueError):
        decode_header(frame)


def test_parse_reply_raises_registry_error() -> None:
    header = {"v": 1, "id": 2, "status": 1, "code": 14, "error": "OUT_OF_MEMORY",
              "message": "needs more", "result": None}
    with pytest.raises(MemoryError) as info:
        parse_reply(header)
    assert isinstance(info.value, ak.OutOfMemoryError)


@pytest.mark.parametrize(("nbytes", "frame_size", "expected"),
                         [(0, 8, 0), (1, 8, 1), (8, 8, 1), (9, 8, 2), (80, 8, 10)])
def test_n_frames(nbytes: int, frame_size: int, expected: int) -> None:
    assert n_frames(nbytes, frame_size) == expected


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 1000])
def test_split_then_join_is_identity_and_split_does_not_copy(size: int) -> None:
    data = np.arange(size, dtype=np.int32)
    frames = split_frames(data, 12)
    assert [len(f) for f in frames[:-1]] == [12] * (len(frames) - 1)
    assert len(frames) == n_frames(data.nbytes, 12)
    assert all(np.shares_memory(frame, data) for frame in frames)
    joined = join_frames(frames, data.dtype, size, 12)
    assert joined.tobytes() == data.tobytes()


def test_join_frames_rejects_bad_layout() -> None:
    with pytest.raises(RuntimeError, match="payload frame 0 of 3 bytes"):
        join_frames([b"abc", b"d"], np.dtype("<i2"), 2, 2)
    with pytest.raises(RuntimeError, match="1 payload frames"):
        join_frames([b"ab"], np.dtype("<i2"), 2, 2)


def test_dtype_table_round_trips() -> None:
    assert list(DTYPES) == ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                            "uint64", "float32", "float64", "bool"]
    for name, dtype in DTYPES.items():
        assert to_wire(dtype) == name
        assert to_wire(dtype.newbyteorder(">")) == name
        assert from_wire(name) == dtype
        assert dtype.byteorder in "<|"


@pytest.mark.parametrize("dtype", ["O", "c8", "c16", "M8[ns]", "m8[s]", "U3", "S3", "V8", "f2",
                                   [("a", "i4")]])
def test_unsupported_dtypes_raise_type_error(dtype: object) -> None:
    with pytest.raises(TypeError, match=r"cannot store.*supported dtypes: int8, .*bool"):
        to_wire(dtype)
    with pytest.raises(TypeError):
        _as_wire_array(np.zeros(3, dtype))


def test_from_wire_unknown_name() -> None:
    with pytest.raises(TypeError, match="unknown wire dtype 'int128'"):
        from_wire("int128")


def test_contiguous_little_endian_input_is_not_copied() -> None:
    data = np.arange(10, dtype="<i8")
    assert np.shares_memory(_as_wire_array(data), data)


@pytest.mark.parametrize("make", [
    lambda: np.arange(20, dtype=np.int64)[::2],
    lambda: np.asfortranarray(np.arange(20, dtype=np.int64).reshape(4, 5))[:, 2],
    lambda: np.arange(10, dtype=">i8"),
    lambda: np.arange(10, dtype=">f4")[::-1],
], ids=["strided", "fortran-column", "big-endian", "big-endian-reversed"])
def test_inputs_are_normalised(make) -> None:
    data = make()
    wire = _as_wire_array(data)
    assert wire.flags.c_contiguous and wire.dtype.byteorder in "<|="
    assert wire.dtype.str.startswith("<") or wire.dtype.itemsize == 1
    np.testing.assert_array_equal(wire, data)


def test_scalars_become_one_element_and_2d_is_refused() -> None:
    assert _as_wire_array(3).tolist() == [3]
    assert _as_wire_array(np.float32(2.5)).dtype == np.float32
    with pytest.raises(ValueError, match=r"only 1-D arrays.*shape \(2, 3\).*ravel"):
        _as_wire_array(np.zeros((2, 3)))


def test_url_token_is_split_off() -> None:
    assert _split_url("tcp://h:1?token=abc") == ("tcp://h:1", "abc")
    assert _split_url("ipc:///tmp/x") == ("ipc:///tmp/x", None)
    with pytest.raises(ValueError, match="unknown URL parameter"):
        _split_url("tcp://h:1?tokne=abc")

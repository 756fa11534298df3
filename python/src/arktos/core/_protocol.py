"""Wire protocol version 1: header encoding and array framing.

See docs/protocol.md. A message is ``[header] [payload 0] ... [payload n-1]``;
the header is one msgpack map in canonical encoding (smallest ints, float64,
``str`` for text, ``bin`` for bytes) with keys in the order the protocol gives
and ``args``/``result`` maps -- and maps nested in them -- sorted by key. An
array of ``nbytes`` travels as ``ceil(nbytes / frame_size)`` payload frames,
all ``frame_size`` long except the last. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union, cast

import msgpack
import numpy as np

from ._errors import error_for

__all__ = [
    "PROTOCOL_VERSION",
    "Reply",
    "decode_header",
    "encode_reply",
    "encode_request",
    "join_frames",
    "n_frames",
    "parse_reply",
    "split_frames",
]

PROTOCOL_VERSION = 1
STATUS_OK = 0

#: What a payload frame may be: zmq.Frame.buffer, bytes, a numpy array ...
Buffer = Union[bytes, bytearray, memoryview, "np.ndarray[Any, Any]"]


#: Types _sorted_maps passes through as they are (checked by exact type: fast).
_LEAVES = frozenset({str, int, float, bool, bytes, type(None)})


def _sorted_maps(value: Any) -> Any:
    """Return `value` with every map in it re-built with keys sorted."""
    if isinstance(value, dict):
        return {key: (item if type(item) in _LEAVES else _sorted_maps(item))
                for key, item in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [item if type(item) in _LEAVES else _sorted_maps(item) for item in value]
    return value


def _pack(header: dict[str, Any]) -> bytes:
    return cast(bytes, msgpack.packb(header, use_bin_type=True))


def encode_request(req_id: int, token: str, cmd: str, args: dict[str, Any],
                   *, version: int = PROTOCOL_VERSION) -> bytes:
    """Encode a request header: keys v, id, token, cmd, args; args sorted.

    >>> decode_header(encode_request(1, "", "upload", {"size": 3, "dtype": "int8"}))
    {'v': 1, 'id': 1, 'token': '', 'cmd': 'upload', 'args': {'dtype': 'int8', 'size': 3}}
    """
    return _pack({"v": version, "id": req_id, "token": token, "cmd": cmd,
                  "args": _sorted_maps(args)})


def encode_reply(req_id: int, status: int, code: int, error: str, message: str,
                 result: dict[str, Any] | None, *, version: int = PROTOCOL_VERSION) -> bytes:
    """Encode a reply header (what the server sends; used by tests and vectors).

    >>> decode_header(encode_reply(7, 0, 0, "", "", {"b": 1, "a": 2}))["result"]
    {'a': 2, 'b': 1}
    """
    return _pack({"v": version, "id": req_id, "status": status, "code": code,
                  "error": error, "message": message, "result": _sorted_maps(result)})


def decode_header(frame: bytes | memoryview) -> dict[str, Any]:
    """Decode a header frame into a dict (str for msgpack str, bytes for bin).

    Raises ValueError when the frame is not one msgpack map.

    >>> decode_header(bytes.fromhex("81a17601"))
    {'v': 1}
    """
    try:
        header = msgpack.unpackb(frame, raw=False)
    except Exception as err:  # msgpack raises several unrelated types
        raise ValueError(f"header frame is not valid msgpack: {err}") from err
    if not isinstance(header, dict):
        raise ValueError(f"header frame is a msgpack {type(header).__name__}, not a map")
    return header


@dataclass(frozen=True)
class Reply:
    """A decoded reply header."""

    id: int
    result: dict[str, Any]


def parse_reply(header: dict[str, Any]) -> Reply:
    """Check a decoded reply header; return it, or raise the error it carries.

    An error reply raises the registry's exception for its code (for example
    UnknownArrayError, a KeyError). A header that is not a protocol-1 reply
    raises RuntimeError.

    >>> parse_reply({"v": 1, "id": 3, "status": 0, "code": 0, "error": "",
    ...              "message": "", "result": {"arrays": []}})
    Reply(id=3, result={'arrays': []})
    """
    try:
        version, req_id, status = header["v"], header["id"], header["status"]
    except KeyError as err:
        raise RuntimeError(f"server reply lacks the {err} key: {header!r}") from None
    if version != PROTOCOL_VERSION:
        raise RuntimeError(
            f"server speaks protocol version {version}, this client {PROTOCOL_VERSION}; "
            "install the arktos Python package that matches the server"
        )
    if status != STATUS_OK:
        raise error_for(int(header.get("code", 0)), str(header.get("error", "")),
                        str(header.get("message", "")))
    result = header.get("result")
    return Reply(id=req_id, result=result if isinstance(result, dict) else {})


def n_frames(nbytes: int, frame_size: int) -> int:
    """Number of payload frames for `nbytes` bytes: ceil(nbytes / frame_size).

    >>> n_frames(0, 4), n_frames(8, 4), n_frames(9, 4)
    (0, 2, 3)
    """
    if frame_size <= 0:
        raise ValueError(f"frame_size must be positive, got {frame_size}")
    return -(-nbytes // frame_size)


#: How many bulk streams besides its own a transfer may stripe over
#: (Go's transfer.MaxStripes).
MAX_STRIPES = 15


def stripe_bounds(i: int, parts: int, nbytes: int) -> tuple[int, int]:
    """Byte range [lo, hi) of stripe `i` of `parts` when `nbytes` travel
    striped over bulk streams: ceil(nbytes / parts) rounded up to 4 KiB a
    stripe, the last one shorter or empty (docs/protocol.md, "Bulk
    streams"; Go's transfer.StripeBounds).

    >>> [stripe_bounds(i, 3, 10000) for i in range(3)]
    [(0, 4096), (4096, 8192), (8192, 10000)]
    """
    per = (-(-nbytes // parts) + 4095) & ~4095
    return min(i * per, nbytes), min((i + 1) * per, nbytes)


def split_frames(data: np.ndarray, frame_size: int) -> list[np.ndarray]:
    """Split a 1-D C-contiguous array into payload frames, without copying.

    Each frame is a uint8 view into `data`, ``frame_size`` bytes long except
    the last; an empty array gives no frames. The caller must keep `data`
    unchanged until the frames are sent.

    >>> [len(f) for f in split_frames(np.zeros(5, np.int32), 8)]
    [8, 8, 4]
    """
    if not data.flags.c_contiguous:
        raise ValueError("split_frames needs a C-contiguous array")
    raw = data.reshape(-1).view(np.uint8)
    return [raw[start:start + frame_size]
            for start in range(0, raw.size, frame_size)]


def join_frames(frames: Sequence[Buffer], dtype: np.dtype, size: int, frame_size: int,
                out: np.ndarray | None = None) -> np.ndarray:
    """Assemble received payload frames into a new array of `size` elements
    (`out`, when given: an uninitialised array of that size and dtype).

    Makes exactly one copy: each frame is viewed with np.frombuffer and copied
    into its slice of an array allocated with np.empty. Raises RuntimeError
    when the frames do not follow the framing rule for ``size * itemsize``
    bytes in frames of `frame_size` (a server bug).

    >>> join_frames([b"\\x01\\x00", b"\\x02\\x00"], np.dtype("<i2"), 2, 2)
    array([1, 2], dtype=int16)
    """
    if out is None:
        out = np.empty(size, dtype)
    nbytes = out.nbytes
    srcs = [np.frombuffer(frame, np.uint8) for frame in frames]
    check_frames([src.size for src in srcs], nbytes, frame_size)
    dst = out.view(np.uint8)
    offset = 0
    for src in srcs:
        dst[offset:offset + src.size] = src
        offset += src.size
    return out


def check_frames(sizes: Sequence[int], nbytes: int, frame_size: int) -> None:
    """Raise RuntimeError unless payload frames of these sizes follow the
    framing rule for `nbytes` bytes in frames of `frame_size` (a server bug).

    >>> check_frames([8, 8, 4], 20, 8)
    >>> check_frames([8, 4, 8], 20, 8)
    Traceback (most recent call last):
    ...
    RuntimeError: server sent payload frame 1 of 4 bytes, the protocol says 8 (20 bytes in frames of 8; a server bug)
    """
    expected = n_frames(nbytes, frame_size)
    if len(sizes) != expected:
        raise RuntimeError(
            f"server sent {len(sizes)} payload frames for {nbytes} bytes in frames of "
            f"{frame_size}; the protocol says {expected} (a server bug)"
        )
    offset = 0
    for index, size in enumerate(sizes):
        want = min(frame_size, nbytes - offset)
        if size != want:
            raise RuntimeError(
                f"server sent payload frame {index} of {size} bytes, the protocol says "
                f"{want} ({nbytes} bytes in frames of {frame_size}; a server bug)"
            )
        offset += want

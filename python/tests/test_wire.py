"""Golden header vectors shared with the Go tests (testdata/wire/vectors.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arktos.core._protocol import decode_header, encode_reply, encode_request

VECTORS_FILE = Path(__file__).resolve().parents[2] / "testdata" / "wire" / "vectors.json"


def _vectors() -> list[dict[str, Any]]:
    return json.loads(VECTORS_FILE.read_text())["vectors"]


def _encode(kind: str, fields: dict[str, Any]) -> bytes:
    if kind == "request":
        return encode_request(fields["id"], fields["token"], fields["cmd"], fields["args"],
                              version=fields["v"])
    assert kind == "reply", kind
    return encode_reply(fields["id"], fields["status"], fields["code"], fields["error"],
                        fields["message"], fields["result"], version=fields["v"])


def test_vectors_file_has_both_kinds() -> None:
    kinds = {vector["kind"] for vector in _vectors()}
    assert kinds == {"request", "reply"}


@pytest.mark.parametrize("vector", _vectors(), ids=lambda vector: vector["name"])
def test_encode_matches_golden_hex(vector: dict[str, Any]) -> None:
    assert _encode(vector["kind"], vector["fields"]).hex() == vector["hex"]


@pytest.mark.parametrize("vector", _vectors(), ids=lambda vector: vector["name"])
def test_decode_gives_golden_fields(vector: dict[str, Any]) -> None:
    header = decode_header(bytes.fromhex(vector["hex"]))
    assert header == vector["fields"]
    # Key order is part of the encoding, not only the set of keys.
    assert list(header) == list(vector["fields"])

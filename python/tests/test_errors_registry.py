"""arktos/core/_errors.py holds the same registry as testdata/errors.json."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

import arktos as ak
from arktos.core._errors import REGISTRY, error_for

ERRORS_FILE = Path(__file__).resolve().parents[2] / "testdata" / "errors.json"


def test_registry_equals_errors_json() -> None:
    expected = json.loads(ERRORS_FILE.read_text())["errors"]
    assert [spec._asdict() for spec in REGISTRY] == expected


@pytest.mark.parametrize("spec", REGISTRY, ids=lambda spec: spec.name)
def test_each_code_raises_its_python_exception(spec) -> None:
    err = error_for(spec.code, spec.name, f"message for {spec.name}")
    assert isinstance(err, ak.ArktosError)
    assert isinstance(err, getattr(builtins, spec.python))
    assert (err.code, err.name, err.message) == (spec.code, spec.name, f"message for {spec.name}")
    assert type(err).__name__ in ak.__all__
    assert str(err) == f"message for {spec.name} [{spec.name}]"


def test_unknown_code_keeps_code_and_name() -> None:
    err = error_for(999, "FROM_THE_FUTURE", "newer server")
    assert type(err) is ak.ArktosError
    assert (err.code, err.name, err.message) == (999, "FROM_THE_FUTURE", "newer server")

"""The >>> examples in the docstrings of ak's public names run, against a
real server, and show what they say they show (test_native checks that each
public name has one).

Only the names in CHECKED so far: many older examples are fragments that
use a ``df`` or ``a`` from the surrounding text; each module joins CHECKED
once its examples stand alone."""

from __future__ import annotations

import doctest
import inspect
from typing import Any

import numpy as np
import pytest

import arktos as ak

#: Public names whose examples (and whose members' examples) stand alone.
CHECKED = {"Strings", "Match", "random_strings_uniform", "random_strings_lognormal", "cast", "BigIntArray",
           "bigint_from_uint_arrays"}


def _examples() -> list[tuple[str, Any]]:
    found = []
    for name in sorted(CHECKED):
        obj = getattr(ak, name)
        if inspect.isclass(obj) and (issubclass(obj, BaseException) or issubclass(obj, np.generic)
                                     or obj is np.dtype):
            continue
        if not callable(obj):
            continue
        found.append((name, obj))
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                if isinstance(value, (classmethod, staticmethod)):
                    value = value.__func__
                if not member.startswith("_") and (callable(value) or isinstance(value, property)):
                    found.append((f"{name}.{member}", value))
    return [(n, o) for n, o in found if ">>>" in (inspect.getdoc(o) or "")]


@pytest.mark.parametrize("name,obj", _examples(), ids=lambda x: x if isinstance(x, str) else "")
def test_docstring_examples_run(default_conn: ak.Connection, name: str, obj: Any) -> None:
    doc = inspect.getdoc(obj) or ""
    test = doctest.DocTestParser().get_doctest(doc, {"ak": ak, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    out: list[str] = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)

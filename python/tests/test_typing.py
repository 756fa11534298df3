"""mypy --strict accepts a user's file of pdarray arithmetic and comparisons (typing_user.py), and rejects a wrong one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _mypy(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    # MYPYPATH before site-packages: this checkout's arktos, not an installed one.
    env = {**os.environ, "MYPYPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(path)],
                          cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)


def test_user_file_passes_mypy_strict() -> None:
    done = _mypy(HERE / "typing_user.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_sees_the_operators_result_types(tmp_path: Path) -> None:
    """(So that the test above is not vacuous: a pdarray is no str.)"""
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import arktos as ak\n\n\ndef f(a: ak.pdarray) -> str:\n    return a + 1\n")
    done = _mypy(wrong)
    assert done.returncode == 1 and 'Incompatible return value type (got "pdarray", expected "str")' in done.stdout

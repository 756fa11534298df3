"""Every ```python block of README.md and docs/guide.md runs, against a real
server, so the examples a newcomer copies first keep working.

How a block is run, and the few things changed on the way (nothing else):

- Each block gets a fresh arktos-server (a block may call ak.shutdown()),
  and ARKTOS_URL names it, so the blocks' own ``ak.connect()`` and
  ``ak.connect(start_server=True)`` find it as a user's would find
  ``make serve``'s.
- A URL literal in a block (``"tcp://bighost:5555"``) is replaced by that
  server's URL, and sizes of ``10**8`` by ``10**5`` (the point is that the
  code runs; 800 MB arrays would only make the test slow).
- Fragments use names a user would have (``df``, ``fare``, ``trips``, ...):
  PREAMBLE defines them, on the default connection, before each block.
  ``torch_tensor`` is a numpy array, another DLPack producer (torch is not a
  test dependency).
- Blocks written as a session (``>>>`` prompts) run statement by
  statement; where the block shows an expression's output, the repr must
  be that.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, start_server

import arktos as ak

DOCS = [REPO / "README.md", REPO / "docs" / "guide.md"]

PREAMBLE = """
import numpy as np, pandas as pd, pyarrow as pa
import arktos as ak
ak.connect()
_rng = np.random.default_rng(1)
_n = 1000
trips = {"zone_name": list(_rng.choice(["JFK", "LaGuardia", "Upper East Side", "Upper West Side",
                                        "Central Park"], _n))}
zone = ak.Categorical(trips["zone_name"])
hour = ak.array(_rng.integers(0, 24, _n))
fare = ak.array(_rng.uniform(2.5, 80.0, _n).round(2))
trips_fare = fare
pickup = ak.array(_rng.integers(0, 10, _n))
dropoff = ak.array(_rng.integers(0, 10, _n))
keys, values = pickup, fare
a = ak.array(_rng.uniform(0.0, 10.0, _n))
b = ak.array(_rng.uniform(0.0, 10.0, _n))
df = pd.DataFrame({"fare": fare.to_ndarray(), "hour": hour.to_ndarray()})
table = pa.table({"fare": fare.to_ndarray(), "hour": hour.to_ndarray()})
torch_tensor = np.arange(10.0)
zones = ak.DataFrame({"id": ak.Categorical(sorted(set(trips["zone_name"]))),
                      "borough": ak.array(np.arange(5))})
"""


def blocks() -> list[Any]:
    """(file:line, source) of every ```python block."""
    found = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        start = None
        for number, line in enumerate(lines, 1):
            if start is None and line.strip() == "```python":
                start, body = number, []
            elif start is not None and line.strip() == "```":
                found.append(pytest.param("\n".join(body), id=f"{path.relative_to(REPO)}:{start}"))
                start = None
            elif start is not None:
                body.append(line)
    return found


def adapt(source: str, url: str) -> str:
    source = re.sub(r"""(["'])(tcp|ipc)://[^"']*\1""", repr(url), source)
    return source.replace("10**8", "10**5")


def session(source: str) -> list[tuple[str, str]]:
    """A >>> block's statements, each with the output shown after it."""
    examples: list[tuple[str, str]] = []
    for line in source.splitlines():
        if line.startswith(">>> "):
            examples.append((line[4:], ""))
        elif line.startswith("... ") and examples:
            examples[-1] = (examples[-1][0] + "\n" + line[4:], examples[-1][1])
        elif line.strip() and examples:
            examples[-1] = (examples[-1][0], (examples[-1][1] + "\n" + line).strip())
    return examples


def test_every_block_found() -> None:
    ids = [p.id for p in blocks()]
    assert sum(i.startswith("README.md") for i in ids) >= 2
    assert sum(i.startswith("docs/guide.md") for i in ids) >= 10


@pytest.mark.parametrize("source", blocks())
def test_doc_block(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = start_server(tmp_path)
    monkeypatch.setenv("ARKTOS_URL", srv.url)
    source = adapt(source, srv.url)
    namespace: dict[str, Any] = {}
    try:
        exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
        if source.lstrip().startswith(">>>"):
            for statement, shown in session(source):
                if shown:
                    got = eval(compile(statement, "<doc>", "eval"), namespace)
                    assert repr(got) == shown, statement
                else:
                    exec(compile(statement, "<doc>", "exec"), namespace)
        else:
            exec(compile(source, "<doc>", "exec"), namespace)
    finally:
        namespace.clear()
        ak.disconnect()
        srv.stop()

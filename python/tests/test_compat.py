"""The opt-in arkouda compatibility package (python/compat): Arkouda-style code runs unchanged on Arktos, and a real Arkouda wins."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

COMPAT = Path(__file__).resolve().parents[1] / "compat" / "src"

SCRIPT = """
import numpy as np
import arkouda as ak
import arkouda.core.client
from arkouda.numpy.pdarrayclass import pdarray
from arkouda.numpy.dtypes import dtype as akdtype
from arkouda.numpy.sorting import SortingAlgorithm
from arkouda.testing import assert_equal, assert_almost_equivalent

ak.verbose = False
host, port = {host!r}, {port}
ak.connect(host, port)
cfg = ak.get_config()
assert cfg["numLocales"] == 1 and cfg["numNodes"] == 1 and cfg["ServerPort"] == port, cfg
assert arkouda.core.client._no_op() == "noop"
assert ak.client.get_max_array_rank() == 1
assert ak.get_mem_used() >= 0 and ak.get_mem_status()[0]["locale_id"] == 0
a = ak.randint(0, 100, 1000, seed=1)
assert isinstance(a, pdarray) and akdtype(getattr(ak, "int64")).type(3) == 3
keys = ak.arange(1000) % 10
g = ak.GroupBy(keys, assume_sorted=False)
for op in ak.GroupBy.Reductions:
    v = (a % 2 == 0) if op in ("any", "all", "or", "and", "xor") else a
    assert g.aggregate(v, op)[1].size == 10, op
assert_equal(ak.diff(ak.arange(5)), np.ones(4, dtype=np.int64))
assert_almost_equivalent(ak.arange(3) * 0.1, np.arange(3) * 0.1)
assert list(SortingAlgorithm)
# Arkouda's sort signatures: the algorithm second, ascending a keyword.
x = ak.array([3, 1, 2])
for algo in SortingAlgorithm:
    assert ak.argsort(x, algo).to_list() == [1, 2, 0]
    assert ak.coargsort([x, x], algo, ascending=False).to_list() == [0, 2, 1]
    assert ak.sort(x, algo).to_list() == [1, 2, 3]
assert ak.bigint.name == "bigint" and ak.array(np.arange(3), max_bits=-1, dtype="int64").to_list() == [0, 1, 2]
# Arkouda's bigint calls, as its bigint_* benchmarks make them.
u = ak.array([1, 2, 3], dtype=ak.uint64)
b = ak.bigint_from_uint_arrays([u, u], max_bits=-1)
assert b.dtype == ak.bigint and b.dtype == "bigint" and b.to_ndarray().tolist() == [(v << 64) + v for v in (1, 2, 3)]
assert all((x == y).all() for x, y in zip(b.bigint_to_uint_arrays(), [u, u]))
big = np.array([(1 << 100) + 5, 7], dtype=object)
for kw in (dict(), dict(dtype=ak.bigint), dict(dtype="bigint", unsafe=True, num_bits=128, any_neg=False)):
    assert ak.array(big, max_bits=-1, **kw).to_ndarray().tolist() == big.tolist(), kw
assert ak.array(big, dtype=ak.bigint, max_bits=64).to_ndarray().tolist() == [5, 7]
assert (ak.array(np.array([3, 4]), dtype=ak.bigint) + ak.array(np.array([1, 1]), dtype=ak.bigint) * 10).to_list() == [13, 14]
g = ak.GroupBy([b, ak.array([0, 0, 0])])
assert g.unique_keys[0].to_list() == b.to_list() and g.nkeys == 2
ak.core.client.maxTransferBytes = 1 << 20
s = ak.array(["b", "a"])
assert isinstance(s, ak.Strings) and ak.argsort(s).to_list() == [1, 0]
print("ok", ak.__version__)
"""


def run(code: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_arkouda_code_runs_unchanged(server: Any) -> None:
    host, port = server.url.removeprefix("tcp://").rsplit(":", 1)
    out = run(SCRIPT.format(host=host, port=int(port)), COMPAT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith("ok ")


def test_a_real_arkouda_wins(tmp_path: Path) -> None:
    real = tmp_path / "site" / "arkouda"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    code = textwrap.dedent("""
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            import arkouda
        assert getattr(arkouda, "REAL", False), arkouda.__file__
        assert any("steps aside" in str(x.message) for x in w), [str(x.message) for x in w]
        print("real")
    """)
    out = run(code, COMPAT, tmp_path / "site")
    assert out.returncode == 0 and out.stdout.strip() == "real", out.stderr

"""Arrays spread over several locales (--locales 3 on loopback): every answer
equals numpy's (integers, transfers, min/max/arg*: bit for bit) or one
server's within the documented bound (float sums, means, var); a command
that does not run across locales yet says so; a killed locale fails the
commands that need it with an error naming it, and the coordinator keeps
answering."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import Server, free_port, start_server

import arktos as ak
from arktos.core._transport import path_counts

LOCALES = 3

# Lengths that do not divide by 3, leave blocks empty (0, 1, 2) or hold a
# block boundary inside an 8-byte word (int8, bool).
LENGTHS = [0, 1, 2, 3, 4, 7, 1000, 100_003]
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float32, np.float64]


@pytest.fixture(scope="module")
def locales_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("locales"), "--locales", str(LOCALES), "--max-memory", "512MiB")
    yield srv
    srv.stop()


@pytest.fixture
def lc(locales_server: Server) -> Iterator[ak.Connection]:
    c = locales_server.connect(timeout=30)
    yield c
    c.close()


def _values(dtype: type, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed + n)
    if dtype is np.bool_:
        return rng.random(n) < 0.5
    if np.issubdtype(dtype, np.floating):
        return (rng.standard_normal(n) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dtype)


def test_get_config_and_memory_report_every_locale(lc: ak.Connection) -> None:
    cfg = lc.get_config()
    assert cfg["numLocales"] == cfg["num_locales"] == LOCALES
    assert [loc["rank"] for loc in cfg["locales"]] == list(range(LOCALES))
    assert all(loc["state"] == "up" for loc in cfg["locales"])
    assert len({loc["pid"] for loc in cfg["locales"]}) == LOCALES  # separate processes
    assert cfg["max_memory"] == LOCALES * 512 * 2**20
    assert len(cfg["LocaleConfigs"]) == LOCALES
    per = lc.locale_mem_info()
    assert [m["rank"] for m in per] == list(range(LOCALES))
    before = lc.mem_info()["used"]
    a = lc.array(np.arange(3000, dtype=np.int64))
    assert lc.mem_info()["used"] == before + 3000 * 8
    # Every locale holds its third.
    assert [m["used"] for m in lc.locale_mem_info()] == [o["used"] + 8000 for o in per]
    assert lc.mem_info()["limit"] == LOCALES * 512 * 2**20
    del a


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype_and_length(lc: ak.Connection, dtype: type) -> None:
    for n in LENGTHS:
        x = _values(dtype, n)
        a = lc.array(x)
        assert a.size == n and a.dtype == x.dtype
        back = a.to_ndarray()
        assert back.dtype == x.dtype and back.tobytes() == x.tobytes(), n
        assert lc.info(a.name)["size"] == n


def test_downloads_of_ranges_across_block_boundaries(lc: ak.Connection) -> None:
    x = np.arange(1001, dtype=np.int8)
    a = lc.array(x)
    # repr downloads the head and the tail only.
    assert "..." in repr(a) or str(a)
    raw = lc._request("download", {"name": a.name, "start": 330, "stop": 700})
    assert raw[0]["size"] == 370


def test_elementwise_matches_numpy(lc: ak.Connection) -> None:
    n = 100_003
    x, y = _values(np.int64, n, 1), _values(np.int64, n, 2)
    f = _values(np.float64, n, 3)
    a, b, g = lc.array(x), lc.array(y), lc.array(f)
    with np.errstate(all="ignore"):
        cases = {
            "a+b": (a + b, x + y), "a-3": (a - 3, x - 3), "a*b": (a * b, x * y),
            "a//7": (a // 7, x // 7), "a%5": (a % 5, x % 5), "a<b": (a < b, x < y),
            "a&b": (a & b, x & y), "g*2.5": (g * 2.5, f * 2.5), "g/a": (g / a, f / x),
            "-a": (-a, -x), "abs(g)": (ak.abs(g), np.abs(f)), "sqrt": (ak.sqrt(ak.abs(g)), np.sqrt(np.abs(f))),
            "astype": (a.astype(ak.float32), x.astype(np.float32)),
            "where": (ak.where(a > b, a, g), np.where(x > y, x, f)),
            "clip": (ak.clip(a, -100, 100), np.clip(x, -100, 100)),
        }
    for what, (got, want) in cases.items():
        out = got.to_ndarray()
        assert out.dtype == want.dtype and out.tobytes() == want.tobytes(), what
    # In place: the blocks are written where they are.
    a += 1
    assert a.to_ndarray().tobytes() == (x + 1).tobytes()


def test_lengths_must_match(lc: ak.Connection) -> None:
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(10,\) \(11,\)"):
        lc.array(np.arange(10)) + lc.array(np.arange(11))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_exact_reductions_match_numpy(lc: ak.Connection, dtype: type) -> None:
    for n in [1, 2, 4, 1000, 100_003]:
        x = _values(dtype, n)
        if np.issubdtype(dtype, np.floating) and n > 4:
            x[n // 2] = np.nan  # min/max/arg* keep numpy's NaN rules
        a = lc.array(x)
        for op in ["min", "max", "argmin", "argmax", "any", "all"]:
            got, want = getattr(a, op)(), getattr(np, op)(x)
            assert got == want or (np.isnan(want) and np.isnan(got)), (op, n)
        if not np.issubdtype(dtype, np.floating):
            assert int(a.sum()) == int(x.sum()), n  # integer sums are exact (wrapping as numpy's)
            assert int(a.prod()) == int(np.prod(x)), n


def test_float_reductions_within_bound(lc: ak.Connection, conn: ak.Connection) -> None:
    """Float sums add the blocks' pairwise sums in block order: not one
    pairwise sum over all, so they may differ from one server in the last
    bits; the bound is n * eps * sum(|x|). The same locale count gives the
    same answer every time."""
    x = _values(np.float64, 1_000_003)
    a, one = lc.array(x), conn.array(x)
    eps = np.finfo(np.float64).eps
    for op in ["sum", "mean", "var", "std"]:
        got, ref = float(getattr(a, op)()), float(getattr(one, op)())
        scale = float(np.abs(x).sum()) / (len(x) if op != "sum" else 1)
        if op in ("var", "std"):
            scale = float(np.var(x))
        assert abs(got - ref) <= 16 * eps * max(scale, 1e-300) * np.log2(len(x)), (op, got, ref)
        assert float(getattr(a, op)()) == got  # deterministic
    assert float(a.sum()) == pytest.approx(float(x.sum()), rel=1e-12)


def test_creation_matches_numpy(lc: ak.Connection) -> None:
    for start, stop, step in [(0, 100_003, 1), (5, -1000, -7), (0, 2, 1), (3, 3, 1), (-10, 10**6, 13)]:
        got = ak.arange(start, stop, step, conn=lc).to_ndarray()
        want = np.arange(start, stop, step)
        assert got.tobytes() == want.tobytes(), (start, stop, step)
    z = ak.full(1001, 7, dtype=ak.int8, conn=lc)
    assert z.to_ndarray().tobytes() == np.full(1001, 7, np.int8).tobytes()


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint64, np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_sort_and_argsort_match_one_server(lc: ak.Connection, conn: ak.Connection, dtype: type) -> None:
    """The range partition's sort is numpy's bit for bit (NaN last); argsort
    gives one server's permutation (ties in row order)."""
    for n in [0, 1, 2, 5, 1000, 100_003]:
        x = _values(dtype, n, 5)
        if np.issubdtype(dtype, np.floating) and n > 10:
            x[::7] = np.nan
        if n > 10:
            x[: n // 3] = x[0]  # a run of ties that crosses a block boundary
        a = lc.array(x)
        s = ak.sort(a)
        assert s.to_ndarray().tobytes() == np.sort(x).tobytes(), n
        p = ak.argsort(a).to_ndarray()
        assert p.tobytes() == ak.argsort(conn.array(x)).to_ndarray().tobytes(), n
        # A sort's blocks are not the upload's: elementwise work realigns.
        assert (s - a).to_ndarray().tobytes() == (np.sort(x) - x).tobytes(), n


@pytest.mark.parametrize("op", ["sum", "mean", "min", "max", "count", "size", "first", "var", "std", "nunique", "prod"])
def test_groupby_matches_one_server_bit_for_bit(lc: ak.Connection, conn: ak.Connection, op: str) -> None:
    """Rows of a group arrive at their owner in source-locale, row order, so
    even float sums are one server's bit for bit; keys come out sorted."""
    rng = np.random.default_rng(11)
    n = 200_003
    k1 = rng.integers(0, 700, n)
    k2 = rng.integers(-1, 2, n).astype(np.int8)
    v = rng.standard_normal(n)
    for keys in ([k1], [k1, k2], [np.full(n, 3)], [np.sort(k1)]):
        got_g = ak.GroupBy([lc.array(k) for k in keys] if len(keys) > 1 else lc.array(keys[0]))
        want_g = ak.GroupBy([conn.array(k) for k in keys] if len(keys) > 1 else conn.array(keys[0]))
        if op == "size":
            got, want = got_g.size(), want_g.size()
        else:
            got, want = got_g.aggregate(lc.array(v), op), want_g.aggregate(conn.array(v), op)
        gk, gv = got
        wk, wv = want
        gk = gk if isinstance(gk, tuple) else (gk,)
        wk = wk if isinstance(wk, tuple) else (wk,)
        for a, b in zip(gk, wk, strict=True):
            assert a.to_ndarray().tobytes() == b.to_ndarray().tobytes()
        assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes(), (op, len(keys))
        assert got_g.ngroups == want_g.ngroups


def test_groupby_float_keys_drop_nan_as_one_server(lc: ak.Connection, conn: ak.Connection) -> None:
    rng = np.random.default_rng(12)
    k = rng.integers(0, 50, 10_001).astype(np.float64)
    k[::5] = np.nan
    v = rng.random(10_001)
    gk, gv = ak.GroupBy(lc.array(k)).aggregate(lc.array(v), "sum")
    wk, wv = ak.GroupBy(conn.array(k)).aggregate(conn.array(v), "sum")
    assert gk.to_ndarray().tobytes() == wk.to_ndarray().tobytes()
    assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes()


def test_commands_not_distributed_yet_say_so(lc: ak.Connection) -> None:
    a = lc.array(np.arange(10))
    names = {e["name"] for e in lc.list_arrays()}
    with pytest.raises(NotImplementedError, match=r"'coargsort' does not run yet on a server with several locales"):
        ak.coargsort([a, a])
    with pytest.raises(ak.NotDistributedError, match="ids"):
        ak.GroupBy(a).ids  # noqa: B018
    with pytest.raises(ak.NotDistributedError, match="float arguments"):
        ak.arange(0.0, 1.0, 0.1, conn=lc)
    assert {e["name"] for e in lc.list_arrays()} <= names  # nothing half-made
    assert int(a.sum()) == 45


def test_array_larger_than_any_locale(tmp_path: Path) -> None:
    """3 locales of 48 MiB hold, compute on and reduce a 64 MiB array that
    no one of them could, made on the server or uploaded from here (each
    block straight to its locale); one past all of them is refused with
    the sizes named, and nothing stored is lost."""
    srv = start_server(tmp_path, "--locales", "3", "--max-memory", "48MiB")
    try:
        c = srv.connect(timeout=30)
        n = 8 * 2**20  # 64 MiB of int64
        b = ak.arange(0, n, 1, conn=c)
        b *= 3
        b += 1
        assert int(b.sum()) == 3 * (n * (n - 1) // 2) + n
        assert int(b.max()) == 3 * (n - 1) + 1 and int(b.argmax()) == n - 1
        assert c.mem_info()["used"] == n * 8
        assert max(m["used"] for m in c.locale_mem_info()) < 48 * 2**20
        del b
        x = np.arange(n, dtype=np.int64) * 5
        direct = path_counts["locale_direct_uploads"], path_counts["locale_direct_downloads"]
        b = c.array(x)
        assert b.to_ndarray().tobytes() == x.tobytes()
        assert (path_counts["locale_direct_uploads"], path_counts["locale_direct_downloads"]) == (
            direct[0] + 1, direct[1] + 1)  # straight to and from every locale
        assert int(b.min()) == 0
        # Grouped: an integer sum merges each locale's partial sums (only 7
        # rows a locale move), so the array and its keys fit where no row
        # exchange would.
        k = b % 7
        keys, sums = ak.GroupBy(k).aggregate(b, "sum")
        assert keys.to_ndarray().tolist() == list(range(7))
        assert sums.to_ndarray().tolist() == [int(x[x % 7 == j].sum()) for j in range(7)]
        del k, keys, sums
        # A group-by whose rows must move (a mean) cannot fit: refused before
        # any row moves, naming the locale, with nothing left behind.
        used = n * 8  # b alone
        with pytest.raises(MemoryError, match=r"the exchange of 8388608 rows needs .* on locale \d, but its limit "
                                              r"of 48.0 MiB leaves .* nothing was stored"):
            ak.GroupBy(b).aggregate(b, "mean")
        assert [e["name"] for e in c.list_arrays()] == [b.name]
        deadline = time.monotonic() + 10  # (the locales' scratch is deleted in the background)
        while c.mem_info()["used"] != used and time.monotonic() < deadline:
            time.sleep(0.01)
        assert c.mem_info()["used"] == used and int(b.max()) == 5 * (n - 1)
        with pytest.raises(MemoryError, match="48.0 MiB"):
            c.array(np.zeros(2 * n, np.int64))
        assert [e["name"] for e in c.list_arrays()] == [b.name]  # the refused upload left nothing
        assert int(b.min()) == 0  # still there
        c.close()
    finally:
        srv.stop()


def test_killed_locale_fails_with_its_name(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--locales", "3", "--max-memory", "256MiB")
    try:
        c = srv.connect(timeout=30)
        a = c.array(np.arange(30_000, dtype=np.int64))
        assert int(a.sum()) == 30_000 * 29_999 // 2
        victim = c.get_config()["locales"][2]
        os.kill(victim["pid"], signal.SIGKILL)
        t0 = time.monotonic()
        with pytest.raises(ak.LocaleFailedError, match=r"locale 2 \(tcp://127\.0\.0\.1:\d+\) failed"):
            a.sum()
        with pytest.raises(ConnectionError, match="locale 2"):
            c.array(np.arange(10))
        assert time.monotonic() - t0 < 10  # no hang
        cfg = c.get_config()  # the coordinator still answers
        assert cfg["locales"][2]["state"].startswith("lost")
        assert [loc["state"] for loc in cfg["locales"][:2]] == ["up", "up"]
        assert [e["name"] for e in c.list_arrays()] == [a.name]  # the failed upload left nothing
        c.close()
    finally:
        srv.stop()


def test_rows_move_only_where_they_must(lc: ak.Connection) -> None:
    """Aligned elementwise work and reductions move no row between locales;
    a sort moves rows once (one range partition), and an operand laid out
    otherwise is moved to the other's blocks."""

    def moved() -> tuple[int, int]:
        st = lc._request("stats", {})[0]
        return int(st["exchanges"]), int(st["exchange_bytes"])

    x = np.arange(30_000, dtype=np.int64)[::-1].copy()
    a, b = lc.array(x), lc.array(x * 2)
    before = moved()
    c = a + b
    assert int(c.sum()) == int((3 * x).sum())
    assert moved() == before
    s = ak.sort(a)
    after_sort = moved()
    assert after_sort[0] == before[0] + 1 and after_sort[1] > before[1]
    # The reversed array's sort puts most rows on another locale.
    assert after_sort[1] - before[1] >= 30_000 * 8 // 2
    assert (s + a).to_ndarray().tobytes() == (np.sort(x) + x).tobytes()
    assert moved()[0] == after_sort[0] and moved()[1] > after_sort[1]  # realigned, no partition


def _consecutive_free_ports(k: int) -> int:
    """A port p with p..p+k-1 free a moment ago."""
    import socket
    for _ in range(50):
        base = free_port()
        if base + k > 65535:
            continue
        socks = []
        try:
            for i in range(k):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {k} consecutive free loopback ports")


@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "curve"])
def test_slurm_launch_on_loopback(tmp_path: Path, encrypt: bool) -> None:
    """`srun -n 3 arktos-server --locales slurm`, as Slurm would start it on
    one node (its environment, three tasks on "localhost"): each task finds
    its rank and port (the --addr port plus its SLURM_LOCALID), rank 0 is
    the coordinator, arrays spread over all three, and a client's shutdown
    stops every task. Encrypted, the tasks share one server key file (as
    on a shared home directory): the first to start makes it, and the
    coordinator's links and the client's direct transfers use it."""
    base = _consecutive_free_ports(LOCALES)
    token = "slurm-test-token"
    key_flags = ["--encrypt", "on", "--server-key-file", str(tmp_path / "server_key")] if encrypt else []
    slurm = {"SLURM_NTASKS": str(LOCALES), "SLURM_JOB_NODELIST": "localhost",
             "SLURM_TASKS_PER_NODE": str(LOCALES), "SLURMD_NODENAME": "localhost", "ARKTOS_TOKEN": token}
    servers: list[Server] = []
    try:
        for rank in reversed(range(LOCALES)):  # the locales first: rank 0 waits for them
            env = {**slurm, "SLURM_PROCID": str(rank), "SLURM_LOCALID": str(rank)}
            servers.append(start_server(tmp_path / f"r{rank}", "--addr", f"tcp://127.0.0.1:{base}",
                                        "--locales", "slurm", "--max-memory", "256MiB", "--workers", "1",
                                        *key_flags, token=token, env_extra=env, url=f"tcp://127.0.0.1:{base + rank}"))
        coord = servers[-1]
        key = (tmp_path / "server_key.pub").read_text().strip() if encrypt else None
        with coord.connect(server_key=key) as c:
            cfg = c.get_config()
            assert cfg["numLocales"] == LOCALES and cfg["locale_rank"] == 0
            assert [loc["endpoint"] for loc in cfg["locales"][1:]] == [
                f"tcp://localhost:{base + r}" for r in range(1, LOCALES)]
            x = _values(np.int64, 200_003)  # 1.6 MB: straight to every locale
            v = _values(np.float64, 200_003, seed=1)
            up = path_counts["locale_direct_uploads"]
            a, b = c.array(x), c.array(v)
            assert path_counts["locale_direct_uploads"] == up + 2
            assert [m["used"] > 0 for m in c.locale_mem_info()] == [True] * LOCALES
            np.testing.assert_array_equal(b.to_ndarray(), v)
            np.testing.assert_array_equal(ak.sort(a).to_ndarray(), np.sort(x))
            keys, sums = ak.GroupBy(a).aggregate(b, "sum")
            uk, inv = np.unique(x, return_inverse=True)
            np.testing.assert_array_equal(keys.to_ndarray(), uk)
            np.testing.assert_allclose(sums.to_ndarray(), np.bincount(inv, weights=v), rtol=1e-12)
            c.shutdown()
        for s in servers:
            assert s.process.wait(timeout=15) == 0
    finally:
        for s in servers:
            s.stop()


def test_slurm_launch_refusals(tmp_path: Path) -> None:
    """Started under Slurm without a shared token, or with a task placed
    where the block distribution would not put it, a locale stops at once
    with an error that says what to change."""
    base = _consecutive_free_ports(2)
    slurm = {"SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "localhost", "SLURM_TASKS_PER_NODE": "2",
             "SLURM_PROCID": "1", "SLURM_LOCALID": "1"}
    for extra, says in (({}, "ARKTOS_TOKEN"),
                        ({"ARKTOS_TOKEN": "t", "SLURM_LOCALID": "0"}, "srun -m block"),
                        ({"ARKTOS_TOKEN": "t", "SLURM_PROCID": "2"}, "SLURM_PROCID 2 is not below")):
        with pytest.raises(RuntimeError, match=says):
            start_server(tmp_path, "--addr", f"tcp://127.0.0.1:{base}", "--locales", "slurm",
                         env_extra={**slurm, **extra}, url=f"tcp://127.0.0.1:{base + 1}")


def _stat(c: ak.Connection, key: str) -> int:
    return int(c._request("stats", {})[0][key])


@pytest.mark.parametrize("vdtype", [np.int64, np.int8, np.uint64, np.bool_, np.float64], ids=lambda d: np.dtype(d).name)
def test_groupby_combined_partials_match_one_server(lc: ak.Connection, conn: ak.Connection, vdtype: type) -> None:
    """Aggregations whose partial results merge exactly (counts, integer sums
    and products, min, max, first, any, all, or, and, xor) are aggregated on
    each locale's own rows first, and only those partial results move:
    bit for bit one server's, with keys missing from some locales, NaN keys
    kept or dropped, and float values where only their exact ops combine."""
    rng = np.random.default_rng(21)
    n = 100_003
    k = rng.integers(0, 40, n).astype(np.float64)
    k[: n // 3][k[: n // 3] > 30] = 5  # keys 31..39 only in the later blocks
    k[n - 50:] = 99  # key 99 only in the last block
    k[::7] = np.nan
    v = _values(vdtype, n, seed=3)
    if np.issubdtype(vdtype, np.integer):
        v[::11] = np.iinfo(vdtype).max  # sums and products wrap, as one server's
    ops = ["count", "size", "min", "max", "first"]
    if vdtype is not np.float64:
        ops += ["sum", "prod", "any", "all", "or", "and", "xor"]
    for dropna in (True, False):
        combined, moved = _stat(lc, "groupby_combined"), _stat(lc, "exchange_bytes")
        for op in ops:
            got_g, want_g = ak.GroupBy(lc.array(k), dropna=dropna), ak.GroupBy(conn.array(k), dropna=dropna)
            if op == "size":
                (gk, gv), (wk, wv) = got_g.size(), want_g.size()
            else:
                (gk, gv), (wk, wv) = got_g.aggregate(lc.array(v), op), want_g.aggregate(conn.array(v), op)
            assert gk.to_ndarray().tobytes() == wk.to_ndarray().tobytes(), (op, dropna)
            assert gv.dtype == wv.dtype, (op, dropna)
            assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes(), (op, dropna)
        assert _stat(lc, "groupby_combined") == combined + len(ops)
        # 42 keys at most per locale, not 10^5 rows, moved between locales.
        assert _stat(lc, "exchange_bytes") - moved < len(ops) * 3 * 64 * 16, dropna


def test_groupby_float_sums_by_few_keys_take_turns(lc: ak.Connection, conn: ak.Connection) -> None:
    """A float sum depends on the order of every addition, so partial sums
    may not be merged. By few keys the locales take turns, each continuing
    the running sums it was handed: one server's bit for bit, with keys
    missing from some blocks, NaN keys kept or dropped, -0.0, and lengths
    that leave blocks empty."""
    rng = np.random.default_rng(22)
    for n in (0, 1, 2, 5, 30_001):
        k = rng.integers(0, 5, n).astype(np.float64)
        k[: n // 2] = np.where(k[: n // 2] == 4, 0, k[: n // 2])  # key 4 only in the later blocks
        k[::9] = np.nan
        v = rng.standard_normal(n) * 1e3
        v[::13] = -0.0
        for dropna in (True, False):
            for op in ("sum", "prod", "min", "max", "first"):
                chained = _stat(lc, "groupby_chained")
                gk, gv = ak.GroupBy(lc.array(k), dropna=dropna).aggregate(lc.array(v), op)
                wk, wv = ak.GroupBy(conn.array(k), dropna=dropna).aggregate(conn.array(v), op)
                assert gk.to_ndarray().tobytes() == wk.to_ndarray().tobytes(), (n, dropna, op)
                assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes(), (n, dropna, op)
                if n > 1000:  # (min, max and first merge partial results instead)
                    assert _stat(lc, "groupby_chained") == chained + (op in ("sum", "prod")), op
    # A sort puts every row of one value on one locale: the others' blocks
    # are empty, and their turns are skipped.
    k = np.full(30_001, 2.0)
    k[-3:] = 1.0
    v = rng.standard_normal(30_001)
    chained = _stat(lc, "groupby_chained")
    gk, gv = ak.GroupBy(ak.sort(lc.array(k))).aggregate(lc.array(v), "sum")
    wk, wv = ak.GroupBy(ak.sort(conn.array(k))).aggregate(conn.array(v), "sum")
    assert gk.to_ndarray().tobytes() == wk.to_ndarray().tobytes()
    assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes()
    assert _stat(lc, "groupby_chained") == chained + 1


def test_groupby_float_sums_by_many_keys_move_rows(lc: ak.Connection, conn: ak.Connection) -> None:
    """By many keys, and for means, var and nunique whatever the keys, the
    rows themselves are exchanged: one server's bit for bit, never partial
    results."""
    rng = np.random.default_rng(23)
    before = _stat(lc, "groupby_combined"), _stat(lc, "groupby_chained")
    many, few = rng.integers(0, 20_000, 30_001), rng.integers(0, 5, 30_001)
    v = rng.standard_normal(30_001)
    for k, ops in ((many, ("sum",)), (few, ("mean", "var", "nunique"))):
        for op in ops:
            _, gv = ak.GroupBy(lc.array(k)).aggregate(lc.array(v), op)
            _, wv = ak.GroupBy(conn.array(k)).aggregate(conn.array(v), op)
            assert gv.to_ndarray().tobytes() == wv.to_ndarray().tobytes(), op
    assert (_stat(lc, "groupby_combined"), _stat(lc, "groupby_chained")) == before


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8, np.bool_, np.uint32], ids=lambda d: np.dtype(d).name)
def test_gather_and_mask_match_numpy(lc: ak.Connection, dtype: type) -> None:
    """a[idx] sends every index to the locale owning its row and the value
    back (two range partitions at the blocks' bounds): numpy's answer bit
    for bit, for permutations, repeats, negative indices, index dtypes
    other than int64, empty arrays and lengths that leave blocks uneven;
    a[mask] keeps each locale's rows where they are (no byte moves)."""
    rng = np.random.default_rng(31)
    for n, m in ((1000, 1000), (7, 20), (100_003, 50_001), (5, 0), (2, 3)):
        x = _values(dtype, n, seed=n)
        a = lc.array(x)
        for idx in (rng.permutation(n)[:m] if m <= n else rng.integers(0, n, m),
                    rng.integers(-n, n, m), np.arange(m) % n):
            for idt in (np.int64, np.int32, np.uint64):
                if idt is np.uint64 and idx.min(initial=0) < 0:
                    continue
                i = idx.astype(idt)
                got = a[lc.array(i)].to_ndarray()
                assert got.dtype == x.dtype and got.tobytes() == x[i].tobytes(), (n, m, idt)
        mask = rng.random(n) < 0.3
        before = _stat(lc, "exchange_bytes")
        got = a[lc.array(mask)]
        assert got.to_ndarray().tobytes() == x[mask].tobytes(), n
        assert _stat(lc, "exchange_bytes") == before
        assert (got + got).to_ndarray().tobytes() == (x[mask] + x[mask]).tobytes()  # its own bounds, realigned


def test_gather_refuses_as_numpy(lc: ak.Connection) -> None:
    a = lc.array(np.arange(10))
    names = {e["name"] for e in lc.list_arrays()}
    for bad, says in ((np.array([3, 10]), "index 10 is out of bounds for axis 0 with size 10"),
                      (np.array([-11, 0]), "index -11 is out of bounds for axis 0 with size 10"),
                      (np.array([2**64 - 1], np.uint64), "out of bounds for axis 0 with size 10")):
        b = lc.array(bad)
        with pytest.raises(IndexError, match=says):
            a[b]
        names.add(b.name)
    short = lc.array(np.ones(9, bool))
    names.add(short.name)
    with pytest.raises(IndexError, match="boolean index did not match"):
        a[short]
    assert {e["name"] for e in lc.list_arrays()} <= names  # nothing half-made
    assert a[lc.array(np.array([], np.int64))].size == 0

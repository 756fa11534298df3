"""ak.GroupBy against pandas (integers exactly, floats to 1e-9 relative) and
against a numpy sequential loop (float sums bit for bit)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _opsdata import recorded

import arktos as ak

pd = pytest.importorskip("pandas")

N = 20_000


def _keys(rng: np.random.Generator, kind: str) -> list[np.ndarray]:
    if kind == "int-small":
        return [rng.integers(-20, 20, N)]
    if kind == "int-wide":
        return [rng.integers(-(2**40), 2**40, N)]
    if kind == "int-minmax":
        return [rng.choice(np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, 5]), N)]
    if kind == "uint8":
        return [rng.integers(0, 256, N).astype(np.uint8)]
    if kind == "float-nan":
        return [rng.choice(np.array([np.nan, -1.5, 0.0, 2.25, np.inf]), N)]
    if kind == "bool":
        return [rng.integers(0, 2, N).astype(bool)]
    if kind == "multi":
        return [rng.integers(1, 30, N), rng.integers(0, 24, N).astype(np.int32),
                rng.integers(0, 3, N).astype(np.uint16)]
    raise AssertionError(kind)


KINDS = ["int-small", "int-wide", "int-minmax", "uint8", "float-nan", "bool", "multi"]


def _values(rng: np.random.Generator) -> dict[str, np.ndarray]:
    f = np.round(rng.normal(20, 10, N), 2)
    f[rng.random(N) < 0.05] = np.nan
    return {"float64": f, "int64": rng.integers(-1000, 1000, N), "bool": rng.random(N) < 0.3}


def _pandas(keys: list[np.ndarray], values: np.ndarray, op: str, dropna: bool) -> Any:
    df = pd.DataFrame({f"k{i}": k for i, k in enumerate(keys)})
    df["v"] = values
    g = df.groupby([f"k{i}" for i in range(len(keys))], dropna=dropna, sort=True)["v"]
    if op == "size":
        return g.size()
    if op in ("var", "std"):
        return getattr(g, op)(ddof=1)
    if op in ("argmin", "argmax"):
        # pandas 3 raises for all-NaN groups: those give -1 here
        by = [f"k{i}" for i in range(len(keys))]
        valid = df[df["v"].notna()].groupby(by, dropna=dropna, sort=True)["v"]
        r = valid.idxmin() if op == "argmin" else valid.idxmax()
        return r.reindex(g.size().index, fill_value=-1)
    by = [f"k{i}" for i in range(len(keys))]
    if op == "any":
        df["t"] = df["v"].notna() & (df["v"] != 0)
        return df.groupby(by, dropna=dropna, sort=True)["t"].any()
    if op == "all":
        df["t"] = df["v"].notna() & (df["v"] == 0)
        return df.groupby(by, dropna=dropna, sort=True)["t"].sum() == 0
    if op == "mode":
        return g.apply(lambda s: np.sort(s.dropna().mode().to_numpy())[0] if s.notna().any() else np.nan)
    return getattr(g, op)()


def _check(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, what
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-9, atol=0, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)


@pytest.mark.parametrize("kind", KINDS)
def test_groupby_matches_pandas(conn: ak.Connection, rng: np.random.Generator, kind: str) -> None:
    keys = _keys(rng, kind)
    vals = _values(rng)
    kk = [conn.array(k) for k in keys]
    for dropna in (True, False):
        g = ak.GroupBy(kk if len(kk) > 1 else kk[0], dropna=dropna)
        ref = _pandas(keys, vals["float64"], "size", dropna)
        uk = g.unique_keys if isinstance(g.unique_keys, tuple) else (g.unique_keys,)
        index = ref.index.to_frame().to_numpy().T if len(keys) > 1 else [ref.index.to_numpy()]
        for got, want in zip(uk, index):
            _check(got.to_ndarray(), np.asarray(want).astype(got.dtype), f"{kind} keys")
        for vname, v in vals.items():
            av = conn.array(v)
            ops = ["size", "count", "sum", "mean", "min", "max", "argmin", "argmax", "nunique",
                   "first", "var", "std", "median", "any", "all", "mode", "prod"]
            if vname == "bool":
                ops = ["size", "count", "sum", "mean", "any", "all", "nunique", "min", "max"]
            for op in ops:
                if op == "prod" and vname != "float64":
                    continue
                if op == "mode" and (len(keys) > 1 or kind == "int-wide"):
                    continue  # groupby.apply is slow with many groups; covered by the others
                what = f"{kind}/{vname}/{op}/dropna={dropna}"
                _, got = g.aggregate(av, op, ddof=1)
                want = _pandas(keys, vals[vname] if vname != "float64" else v, op, dropna)
                want = np.asarray(want.to_numpy())
                if op == "prod":
                    got_f = got.to_ndarray()
                    np.testing.assert_allclose(got_f, want, rtol=1e-9, equal_nan=True, err_msg=what)
                    continue
                _check(got.to_ndarray(), want, what)


def test_sum_bit_exact_against_sequential_loop(conn: ak.Connection,
                                                rng: np.random.Generator) -> None:
    keys = rng.integers(0, 50, 5000)
    vals = rng.normal(0, 1e6, 5000) * rng.random(5000)
    g = ak.GroupBy(conn.array(keys))
    _, got = g.sum(conn.array(vals))
    want = np.zeros(50)
    for k, v in zip(keys.tolist(), vals.tolist()):
        want[k] += v
    assert got.to_ndarray().tobytes() == want.tobytes()
    _, mean = g.mean(conn.array(vals))
    counts = np.bincount(keys, minlength=50)
    assert mean.to_ndarray().tobytes() == (want / counts).tobytes()


@pytest.mark.parametrize("strategy", ["dense", "hash", "sort", "wide"])
def test_strategies_agree(conn: ak.Connection, rng: np.random.Generator, strategy: str) -> None:
    keys = rng.integers(-50, 50, N)
    vals = rng.normal(size=N)
    ka, va = conn.array(keys), conn.array(vals)
    g = ak.GroupBy(ka, strategy=strategy)
    assert g.strategy == strategy
    k, s = g.sum(va)
    ref = pd.Series(vals).groupby(keys).sum()
    np.testing.assert_array_equal(k.to_ndarray(), ref.index.to_numpy())
    np.testing.assert_allclose(s.to_ndarray(), ref.to_numpy(), rtol=1e-9)


def test_segments_permutation_broadcast(conn: ak.Connection, rng: np.random.Generator) -> None:
    keys = rng.choice(np.array([np.nan, 1.0, 2.0, 3.0]), 3000)
    g = ak.GroupBy(conn.array(keys))
    assert g.ngroups == 3
    kept = np.flatnonzero(~np.isnan(keys))
    perm = kept[np.argsort(keys[kept], kind="stable")]
    np.testing.assert_array_equal(g.permutation.to_ndarray(), perm)
    np.testing.assert_array_equal(g.segments.to_ndarray(),
                                  np.searchsorted(keys[perm], [1.0, 2.0, 3.0]))
    _, sizes = g.size()
    b = g.broadcast(sizes).to_ndarray()
    want = np.where(np.isnan(keys), 0, pd.Series(keys).map(pd.Series(keys).value_counts()).fillna(0))
    np.testing.assert_array_equal(b, want.astype(np.int64))
    with pytest.raises(ValueError):
        g.broadcast(np.arange(2))


def test_edge_cases(conn: ak.Connection) -> None:
    empty = ak.GroupBy(conn.array(np.array([], dtype=np.int64)))
    assert empty.ngroups == 0
    _, s = empty.sum(conn.array(np.array([], dtype=np.float64)))
    assert s.size == 0
    nan = ak.GroupBy(conn.array(np.full(10, np.nan)))
    assert nan.ngroups == 0 and nan.size()[1].size == 0
    keep = ak.GroupBy(conn.array(np.full(10, np.nan)), dropna=False)
    assert keep.ngroups == 1 and keep.size()[1].to_ndarray().tolist() == [10]
    one = ak.GroupBy(conn.array(np.zeros(100, dtype=np.int8)))
    assert one.count()[1].to_ndarray().tolist() == [100]
    with pytest.raises(ValueError):
        one.aggregate(conn.array(np.zeros(100)), "nope")
    with pytest.raises(ValueError):
        one.sum(conn.array(np.zeros(99)))


@pytest.mark.parametrize("vname", ["float64", "int64", "bool"])
def test_agg_many_equals_each_alone(conn: ak.Connection, rng: np.random.Generator,
                                    vname: str) -> None:
    """g.agg(values, [...]) gives each aggregation bit for bit as g.aggregate does,
    and the group ids from groupby are not re-checked (server stats)."""
    keys = [conn.array(k) for k in _keys(rng, "multi")]
    v = conn.array(_values(rng)[vname])
    g = ak.GroupBy(keys).group()  # the ids are made: aggregations run over them
    ops = ["sum", "size", "count", "mean", "var", "std", "min", "max"]
    before = int(conn._request("stats")[0]["group_id_checks_skipped"])
    _, many = g.agg(v, ops, ddof=1)
    assert int(conn._request("stats")[0]["group_id_checks_skipped"]) == before + 1
    assert list(many) == ops
    for op in ops:
        _, one = g.aggregate(v, op, ddof=1)
        a, b = one.to_ndarray(), many[op].to_ndarray()
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), op
    with pytest.raises(ValueError, match="unknown aggregation"):
        g.agg(v, ["sum", "bogus"])
    # every spelling of var and std defaults to ddof 1, as g.var and pandas
    _, by_default = g.agg(v, ["var", "std"])
    for op in ("var", "std"):
        want = getattr(g, op)(v)[1].to_ndarray().tobytes()
        assert g.aggregate(v, op)[1].to_ndarray().tobytes() == want, op
        assert by_default[op].to_ndarray().tobytes() == want, op
        assert g.agg(x=(v, op))[1]["x"].to_ndarray().tobytes() == want, op


@pytest.mark.parametrize("kind", ["int-small", "float-nan", "multi"])
def test_nlargest_nsmallest_match_pandas(conn: ak.Connection, rng: np.random.Generator,
                                         kind: str) -> None:
    """Long-form top n per group (db-benchmark q8) against pandas'
    groupby(...).nlargest / nsmallest: keys repeated per value, groups in
    key order, values best first, NaN values skipped."""
    keys = _keys(rng, kind)
    g = ak.GroupBy([conn.array(k) for k in keys] if len(keys) > 1 else conn.array(keys[0]))
    for vname, v in _values(rng).items():
        if vname == "bool":
            continue
        av = conn.array(v)
        by = [f"k{i}" for i in range(len(keys))]
        df = pd.DataFrame({b: k for b, k in zip(by, keys)})
        df["v"] = v
        df = df.dropna(subset=["v"])
        for n, largest in ((1, True), (2, True), (3, False)):
            got_keys, got = g.nlargest(av, n) if largest else g.nsmallest(av, n)
            want = (df.sort_values(by + ["v"], ascending=[True] * len(by) + [not largest], kind="stable")
                    .groupby(by, sort=True).head(n))
            gk = got_keys if isinstance(got_keys, tuple) else (got_keys,)
            for b, k in zip(by, gk):
                np.testing.assert_array_equal(k.to_ndarray(), want[b].to_numpy().astype(k.dtype))
            assert got.dtype == v.dtype
            np.testing.assert_array_equal(got.to_ndarray(), want["v"].to_numpy(), err_msg=f"{kind}/{vname}/{n}")
    with pytest.raises(ValueError, match="positive integer"):
        g.nlargest(conn.array(np.zeros(N)), 0)


def test_corr_matches_pandas(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Per-group correlation (db-benchmark q9) against pandas, pairwise
    complete; NaN for one-row and constant groups."""
    keys = _keys(rng, "multi")
    x = rng.integers(1, 6, N)
    y = np.round(x * 0.7 + rng.normal(0, 2, N), 3)
    y[rng.random(N) < 0.05] = np.nan
    g = ak.GroupBy([conn.array(k) for k in keys])
    _, got = g.corr(conn.array(x), conn.array(y))
    df = pd.DataFrame({f"k{i}": k for i, k in enumerate(keys)})
    df["x"], df["y"] = x.astype(np.float64), y
    want = df.groupby([f"k{i}" for i in range(len(keys))], sort=True).apply(
        lambda d: d["x"].corr(d["y"]), include_groups=False)
    np.testing.assert_allclose(got.to_ndarray(), want.to_numpy(), rtol=1e-9, atol=1e-12, equal_nan=True)
    z = rng.integers(1, 16, N)  # two integer arrays: the one-pass integer path
    _, got = g.corr(conn.array(x), conn.array(z))
    df["z"] = z.astype(np.float64)
    want = df.groupby([f"k{i}" for i in range(len(keys))], sort=True).apply(
        lambda d: d["x"].corr(d["z"]), include_groups=False)
    np.testing.assert_allclose(got.to_ndarray(), want.to_numpy(), rtol=1e-9, atol=1e-12, equal_nan=True)
    small = ak.GroupBy(conn.array(np.array([0, 1, 1])))
    _, c = small.corr(conn.array(np.array([1.0, 2.0, 2.0])), conn.array(np.array([3.0, 4.0, 5.0])))
    assert np.isnan(c.to_ndarray()).all()


def test_named_agg_over_several_arrays(conn: ak.Connection, rng: np.random.Generator) -> None:
    """g.agg(out=(values, op), ...) in one request gives each result bit for
    bit as g.aggregate does; bad specs name what was wrong."""
    keys = [conn.array(k) for k in _keys(rng, "multi")]
    vals = {name: conn.array(v) for name, v in _values(rng).items()}
    g = ak.GroupBy(keys)
    _, got = g.agg(s=(vals["float64"], "sum"), m=(vals["int64"], "mean"), sd=(vals["float64"], "std"),
                   n=(None, "size"), b=(vals["bool"], "any"), ddof=1)
    assert list(got) == ["s", "m", "sd", "n", "b"]
    for out, (v, op) in {"s": (vals["float64"], "sum"), "m": (vals["int64"], "mean"),
                         "sd": (vals["float64"], "std"), "n": (None, "size"),
                         "b": (vals["bool"], "any")}.items():
        _, one = g.aggregate(v, op, ddof=1)
        a, b = one.to_ndarray(), got[out].to_ndarray()
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), out
    with pytest.raises(ValueError, match="only 'size'"):
        g.agg(x=(None, "sum"))
    with pytest.raises(ValueError, match="unknown aggregation"):
        g.agg(x=(vals["int64"], "bogus"))
    with pytest.raises(TypeError, match="must be"):
        g.agg(x=vals["int64"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        g.agg(vals["int64"], ["sum"], x=(vals["int64"], "sum"))


def test_agg_takes_functions(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Aggregations given as functions named like them (np.sum, np.max,
    np.amin, builtins' len, ...), as pandas' agg takes them, equal the named
    ones bit for bit; a function with no such name says which to use."""
    keys = conn.array(_keys(rng, "multi")[0])
    v = conn.array(_values(rng)["float64"])
    g = ak.GroupBy(keys)
    for f, name in ((np.sum, "sum"), (np.mean, "mean"), (np.max, "max"), (np.amin, "min"), (np.std, "std"),
                    (np.median, "median"), (len, "size"), (max, "max")):
        _, want = g.aggregate(None if name == "size" else v, name)
        _, got = g.aggregate(None if name == "size" else v, f)
        assert got.to_ndarray().tobytes() == want.to_ndarray().tobytes(), name
    _, many = g.agg(v, [np.sum, "count", np.var])
    assert list(many) == ["sum", "count", "var"]
    _, named = g.agg(total=(v, np.sum), n=(None, len))
    assert named["total"].to_ndarray().tobytes() == g.sum(v)[1].to_ndarray().tobytes()
    assert named["n"].to_ndarray().tobytes() == g.size()[1].to_ndarray().tobytes()
    with pytest.raises(ValueError, match="unknown aggregation.*use one of"):
        g.aggregate(v, np.cumsum)


def test_chained_many_keys(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Keys whose ranges multiply past 2^64 (two float keys and a wide int64)
    group in stages; the answer is the plain one, sums bit for bit."""
    n = 5000
    f1 = rng.choice(np.array([np.nan, -1e300, 0.0, 2.5, np.inf]), n)
    i1 = rng.choice(np.array([-(2**62), 0, 2**62, 7]), n)
    f2 = rng.choice(np.array([np.nan, -3.0, 1e-300]), n)
    vals = rng.normal(size=n)
    g = ak.GroupBy([conn.array(f1), conn.array(i1), conn.array(f2)])
    assert g.strategy == "chained"
    keys, s = g.sum(conn.array(vals))
    want: dict[tuple[float, int, float], float] = {}
    for a, b, c, v in zip(f1.tolist(), i1.tolist(), f2.tolist(), vals.tolist()):
        if a == a and c == c:  # rows with a NaN key are dropped
            want[(a, b, c)] = want.get((a, b, c), 0.0) + v
    order = sorted(want)
    got = list(zip(*(k.to_ndarray().tolist() for k in keys)))
    assert got == order
    assert s.to_ndarray().tobytes() == np.array([want[k] for k in order]).tobytes()


def _fused(conn: ak.Connection) -> int:
    return int(conn._request("stats")[0]["groupby_fused"])


@pytest.mark.parametrize("vname", ["int64", "float64"])
def test_fused_first_aggregation(conn: ak.Connection, rng: np.random.Generator,
                                 vname: str) -> None:
    """The first aggregation of a GroupBy by one small-range integer key goes
    with the grouping and is fused on the server (no ids made); it equals,
    bit for bit, the aggregation over the ids of the same grouping made first,
    and float sums equal a sequential loop. The ids are made when asked for."""
    k = rng.integers(-50, 50, N)
    v = _values(rng)[vname]
    v[::97] = np.nan if vname == "float64" else v[::97]
    ka, va = conn.array(k), conn.array(v)
    ops = ["sum", "size", "count"] + (["mean"] if vname == "float64" else [])
    before = _fused(conn)
    g = ak.GroupBy(ka)
    assert repr(g) == "GroupBy(nkeys=1, not grouped yet)"
    keys, got = g.agg(va, ops)
    assert g.fused and _fused(conn) == before + 1 and g._ids is None
    ref_keys, want = ak.GroupBy(ka).group().agg(va, ops)
    assert _fused(conn) == before + 1
    assert keys.to_ndarray().tobytes() == ref_keys.to_ndarray().tobytes()
    for op in ops:
        a, b = got[op].to_ndarray(), want[op].to_ndarray()
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), op
    if vname == "float64":
        loop: dict[int, float] = {}
        for key, x in zip(k.tolist(), v.tolist()):
            if x == x:
                loop[key] = loop.get(key, 0.0) + x
        assert got["sum"].to_ndarray().tolist() == [loop.get(x, 0.0) for x in keys.to_ndarray().tolist()]
    # Each further fusable aggregation is fused again (no grouping pass);
    # one that is not makes the ids, and later ones use them.
    assert g.sum(va)[1].to_ndarray().tobytes() == want["sum"].to_ndarray().tobytes()
    assert _fused(conn) == before + 2 and g._ids is None
    assert g.max(va)[1].to_ndarray().tobytes() == ak.GroupBy(ka).max(va)[1].to_ndarray().tobytes()
    assert g._ids is not None and not g.fused
    assert g.ids.to_ndarray().tolist() == (k + 50).tolist()  # every key present: ids are the slots
    assert g.ngroups == 100 and g.nkept == N and g.strategy == "dense"


def test_fused_several_columns(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Several columns aggregated by one small-range integer key go with the
    grouping in one request and are fused too (G1 q4's shape: means of two
    int64 columns and a float64 one), bit for bit the aggregation over the
    ids; int64 means equal the float64 sums numpy makes of the groups."""
    k = rng.integers(1, 101, N)
    v1, v2 = rng.integers(1, 6, N), rng.integers(-15, 16, N)
    v3 = np.round(rng.uniform(0, 100, N), 6)
    v3[::89] = np.nan
    ka, a1, a2, a3 = conn.array(k), conn.array(v1), conn.array(v2), conn.array(v3)
    named = {"m1": (a1, "mean"), "m2": (a2, "mean"), "m3": (a3, "mean"), "s2": (a2, "sum"),
             "n": (None, "size")}
    before = _fused(conn)
    g = ak.GroupBy(ka)
    keys, got = g.agg(**named)
    assert g.fused and _fused(conn) == before + 1 and g._ids is None
    ref_keys, want = ak.GroupBy(ka).group().agg(**named)
    assert keys.to_ndarray().tobytes() == ref_keys.to_ndarray().tobytes()
    for out in named:
        x, y = got[out].to_ndarray(), want[out].to_ndarray()
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), out
    slots = k - 1
    counts = np.bincount(slots, minlength=100)
    for out, v in (("m1", v1), ("m2", v2)):
        means = np.bincount(slots, weights=v.astype(np.float64), minlength=100) / counts
        assert got[out].to_ndarray().tobytes() == means.tobytes(), out


@pytest.mark.parametrize("values,fused,strategy", [
    (30_000, True, "hash"),              # one table: fused, hashed
    (100_000, True, "partitioned"),      # past one table, keys repeat: fused by partitions
    (1 << 50, False, "partitioned"),     # nearly one group a row: grouped, then aggregated
])
def test_fused_hashed_and_partitioned(conn: ak.Connection, rng: np.random.Generator,
                                      values: int, fused: bool, strategy: str) -> None:
    """Keys the server hashes or partitions (spread int64, 300,000 rows): the
    first aggregation is fused where the keys repeat enough, and its float sum,
    count and mean equal pandas' and, bit for bit, a sequential loop."""
    n = 300_000
    k = rng.integers(0, values, n) * 2654435761 + 12345
    v = np.round(rng.uniform(0, 100, n), 2)
    v[::101] = np.nan
    ka, va = conn.array(k), conn.array(v)
    before = _fused(conn)
    g = ak.GroupBy(ka)
    keys, got = g.agg(va, ["sum", "count", "mean", "size"])
    assert g.fused == fused and _fused(conn) == before + fused and g.strategy == strategy
    want = pd.DataFrame({"k": k, "v": v}).groupby("k")["v"].agg(["sum", "count", "mean", "size"])
    assert keys.to_ndarray().tolist() == want.index.tolist()
    for op in ("count", "size"):
        assert got[op].to_ndarray().tolist() == want[op].tolist(), op
    np.testing.assert_allclose(got["mean"].to_ndarray(), want["mean"].to_numpy(), rtol=1e-12)
    loop: dict[int, float] = {}
    for key, x in zip(k.tolist(), v.tolist()):
        loop[key] = loop.get(key, 0.0) + x if x == x else loop.get(key, 0.0)
    assert got["sum"].to_ndarray().tolist() == [loop[x] for x in keys.to_ndarray().tolist()]


def test_lazy_grouping_sees_keys_as_made(conn: ak.Connection, rng: np.random.Generator) -> None:
    """A GroupBy groups the keys as they were when it was made: a write to a
    key array (setitem, an in-place operation) first makes the grouping of
    every GroupBy not grouped yet."""
    k = rng.integers(0, 10, N)
    v = rng.integers(0, 1000, N)
    va = conn.array(v)
    want = pd.Series(v).groupby(k).sum()
    for write in ("setitem", "inplace"):
        ka = conn.array(k)
        g = ak.GroupBy(ka)
        if write == "setitem":
            ka[0:100] = 77
        else:
            ka += 1000
        assert g._ids is not None, write
        keys, s = g.sum(va)
        assert keys.to_ndarray().tolist() == want.index.tolist(), write
        assert s.to_ndarray().tolist() == want.tolist(), write
    # Reading requests (a download, an operation making a new array) leave it lazy.
    ka = conn.array(k)
    g = ak.GroupBy(ka)
    (ka * 2).to_ndarray()
    assert g._ids is None
    assert g.sum(va)[1].to_ndarray().tolist() == want.tolist() and g.fused


def test_groupby_errors_at_construction(conn: ak.Connection) -> None:
    """What the client can check is refused when the GroupBy is made, not at
    its first use."""
    a, b = conn.array(np.arange(10)), conn.array(np.arange(11))
    with pytest.raises(ValueError, match="one length"):
        ak.GroupBy([a, b])
    with pytest.raises(ValueError, match="unknown group-by strategy"):
        ak.GroupBy(a, strategy="fast")
    with pytest.raises(TypeError, match="pdarray"):
        ak.GroupBy([])


def test_lazy_grouping_and_deletes(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Deleting a key of a GroupBy not grouped yet groups it first (it stays
    usable, as one made at once would); a grouping that fails before a write
    leaves the write done and that GroupBy unusable, saying why, and no other
    request or GroupBy is affected."""
    k = rng.integers(0, 10, N)
    v = rng.integers(0, 1000, N)
    va = conn.array(v)
    want = pd.Series(v).groupby(k).sum()
    ka = conn.array(k)
    g = ak.GroupBy(ka)
    other = conn.array(np.arange(5))
    ka.delete()
    other.delete()  # an unrelated delete goes through
    assert g._ids is not None
    keys, s = g.sum(va)
    assert keys.to_ndarray().tolist() == want.index.tolist() and s.to_ndarray().tolist() == want.tolist()
    # strategy="dense" on keys spanning 2^40 values: the server refuses to group.
    wide = conn.array(np.array([0, 2**40] * 10))
    bad = ak.GroupBy(wide, strategy="dense")
    good = ak.GroupBy(conn.array(k))
    wide[0:2] = 5  # grouping `bad` first fails; the write goes on
    assert wide.to_ndarray()[:2].tolist() == [5, 5]
    with pytest.raises(RuntimeError, match="could not be grouped before its keys were written"):
        bad.sum(conn.array(np.ones(20)))
    assert good._ids is None  # its keys were not written: still lazy
    assert good.sum(va)[1].to_ndarray().tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"])
def test_bitwise_aggregations_match_numpy(conn: ak.Connection, rng: np.random.Generator, dtype: str) -> None:
    """Arkouda's GroupBy.OR, AND and XOR: numpy's bitwise reduceat over the
    rows sorted by group, bit for bit, in the values' dtype."""
    keys = rng.integers(-30, 30, N)
    if dtype == "bool":
        vals = rng.random(N) < 0.5
    else:
        info = np.iinfo(dtype)
        vals = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    order = np.argsort(keys, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(keys[order]) != 0])
    g = ak.GroupBy(conn.array(keys))
    v = conn.array(vals)
    for name, ufunc in (("OR", np.bitwise_or), ("AND", np.bitwise_and), ("XOR", np.bitwise_xor)):
        k, got = getattr(g, name)(v)
        want = ufunc.reduceat(vals[order], starts)
        assert np.array_equal(k.to_ndarray(), np.unique(keys))
        out = got.to_ndarray()
        assert out.dtype == vals.dtype, name
        assert np.array_equal(out, want), name
        assert np.array_equal(g.aggregate(v, name.lower())[1].to_ndarray(), want)
    # several at once, and the example of the docstrings
    _, r = g.agg(v, ["or", "and", "xor", "size"])
    assert np.array_equal(r["xor"].to_ndarray(), np.bitwise_xor.reduceat(vals[order], starts))
    d = ak.GroupBy(conn.array([1, 2, 1, 3, 2, 1]))
    assert d.OR(conn.array([1, 2, 4, 8, 16, 32]))[1].to_list() == [37, 18, 8]
    assert d.AND(conn.array([7, 6, 5, 4, 3, 12]))[1].to_list() == [4, 2, 4]


def test_bitwise_aggregations_refuse_floats_and_strings(conn: ak.Connection) -> None:
    g = ak.GroupBy(conn.array([1, 2, 1]))
    with pytest.raises(TypeError, match="bitwise"):
        g.XOR(conn.array([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="Categorical"):
        g.aggregate(ak.Categorical(["a", "b", "a"], conn=conn), "or")
    assert g.OR(conn.array([1, 2, 4]))[1].to_list() == [5, 2]  # still usable


@pytest.mark.parametrize("kind", ["int-small", "int-wide", "float-nan", "multi"])
def test_head_tail_match_a_stable_sort(conn: ak.Connection, rng: np.random.Generator, kind: str) -> None:
    """Arkouda's GroupBy.head and tail: each group's first or last n rows in
    row order, groups in key order (pandas' groupby head/tail keep row order
    over all groups instead, so the reference is a stable sort by group)."""
    keys = _keys(rng, kind)
    vals = _values(rng)["float64"]
    g = ak.GroupBy([conn.array(k) for k in keys] if len(keys) > 1 else conn.array(keys[0]))
    ids = g.ids.to_ndarray()
    order = np.argsort(ids, kind="stable")
    order = order[ids[order] >= 0]
    sid = ids[order]
    starts = np.r_[np.flatnonzero(np.r_[True, np.diff(sid) != 0]), len(sid)]
    v = conn.array(vals)
    for n in (0, 1, 3, 100_000):
        head = np.concatenate([order[a:min(b, a + n)] for a, b in zip(starts[:-1], starts[1:])])
        tail = np.concatenate([order[max(a, b - n):b] for a, b in zip(starts[:-1], starts[1:])])
        k, rows = g.head(v, n)
        assert np.array_equal(rows.to_ndarray(), head), n
        assert np.array_equal(g.tail(v, n)[1].to_ndarray(), tail), n
        got = g.head(v, n, return_indices=False)[1].to_ndarray()
        np.testing.assert_array_equal(got, vals[head])
    # Arkouda's docstring example
    a = ak.GroupBy(ak.arange(10, conn=conn) % 3)
    assert a.head(ak.arange(10, conn=conn), 2)[1].to_list() == [0, 3, 1, 4, 2, 5]
    assert a.tail(ak.arange(10, conn=conn), 2)[1].to_list() == [6, 9, 4, 7, 5, 8]
    assert a.tail(-2 * ak.arange(10, conn=conn), 2, return_indices=False)[1].to_list() == [-12, -18, -8, -14, -10, -16]


def test_head_tail_of_categorical_and_refusals(conn: ak.Connection) -> None:
    g = ak.GroupBy(conn.array([2, 1, 2, 2, 1]))
    cat = ak.Categorical(["a", "b", "c", "d", "e"], conn=conn)
    k, h = g.head(cat, 1, return_indices=False)
    assert isinstance(h, ak.Categorical) and h.to_list() == ["b", "a"]
    assert g.tail(cat, 2, return_indices=False)[1].to_list() == ["b", "e", "c", "d"]
    with pytest.raises(ValueError, match="non-negative integer"):
        g.head(cat, -1)
    for bad in (1.5, True):
        with pytest.raises(TypeError, match="n must be an integer"):
            g.head(cat, bad)  # type: ignore[arg-type]
    assert g.head(cat, 2**62)[1].to_list() == [1, 4, 0, 2, 3]  # every row, whatever n
    with pytest.raises(ValueError, match="6 elements but the GroupBy has 5 rows"):
        g.tail(ak.arange(6, conn=conn), 2)
    assert g.most_common(conn.array([5, 6, 7, 7, 6]))[1].to_list() == [6, 7]
    assert (g.nkeys, g.length, ak.GroupBy([ak.arange(3, conn=conn), ak.arange(3, conn=conn)]).nkeys) == (1, 5, 2)


def test_sample_as_arkouda(conn: ak.Connection, rng: np.random.Generator) -> None:
    """GroupBy.sample: how many rows each group gives, that they are its
    own and distinct (without replacement), row order unless
    permute_samples, the same sample for the same random_state, weights of
    zero never drawn, and a heavy weight drawn in proportion."""
    keys = rng.integers(0, 40, N)
    vals = np.arange(N) * 3
    g = ak.GroupBy(conn.array(keys))
    v = conn.array(vals)
    sizes = np.bincount(keys)
    for kwargs, count in (({}, np.ones(40, int)), ({"n": 5}, np.full(40, 5)),
                          ({"frac": 0.1}, np.round(0.1 * sizes).astype(int)),
                          ({"n": 2000, "replace": True}, np.full(40, 2000))):
        rows = g.sample(v, random_state=3, return_indices=True, **kwargs).to_ndarray()
        assert np.array_equal(np.bincount(keys[rows], minlength=40), count), kwargs
        assert np.all(np.diff(rows) >= 0), kwargs  # row order
        if not kwargs.get("replace"):
            assert len(np.unique(rows)) == len(rows), kwargs
        again = g.sample(v, random_state=3, return_indices=True, **kwargs).to_ndarray()
        assert np.array_equal(rows, again), kwargs
    drawn = g.sample(v, n=5, random_state=3, permute_samples=True, return_indices=True).to_ndarray()
    assert np.all(np.diff(keys[drawn]) >= 0)  # group by group
    assert not np.array_equal(drawn, np.sort(drawn))  # in the order drawn
    assert not np.array_equal(g.sample(v, n=5, random_state=4, return_indices=True).to_ndarray(),
                              g.sample(v, n=5, random_state=3, return_indices=True).to_ndarray())
    got = g.sample(v, n=3, random_state=5)
    assert np.all(np.isin(got.to_ndarray(), vals))
    two = g.sample([v, v * 2], n=3, random_state=5)
    assert np.array_equal(two[0].to_ndarray(), got.to_ndarray()) and np.array_equal(two[1].to_ndarray(), 2 * got.to_ndarray())
    # weights: zero never drawn; one row of weight 99 among weight-1 rows
    w = (rng.random(N) < 0.5).astype(np.float64)
    first = np.array([np.flatnonzero(keys == k)[0] for k in range(40)])
    w[first] = 99.0
    wa = conn.array(w)
    for replace in (False, True):
        rows = g.sample(v, n=3, weights=wa, replace=replace, random_state=9, return_indices=True).to_ndarray()
        assert np.all(w[rows] > 0), replace
        assert np.array_equal(np.bincount(keys[rows], minlength=40), np.full(40, 3))
    rows = g.sample(v, n=2000, weights=wa, replace=True, random_state=9, return_indices=True).to_ndarray()
    share = np.mean(np.isin(rows, first))  # each group's heavy row: 99 / (99 + its other weights)
    want = np.mean([99 / (99 + w[keys == k].sum() - 99) for k in range(40)])
    assert abs(share - want) < 0.02, (share, want)


def test_sample_refusals_and_broadcast_unpermuted(conn: ak.Connection) -> None:
    g = ak.GroupBy(conn.array([1, 2, 1, 3, 2, 1]))
    v = conn.array([10, 20, 30, 40, 50, 60])
    with pytest.raises(ValueError, match="n or frac, not both"):
        g.sample(v, n=1, frac=0.5)
    with pytest.raises(ValueError, match="fewer rows than the samples"):
        g.sample(v, n=2)
    assert g.sample(v, n=2, replace=True, random_state=1).size == 6
    with pytest.raises(ValueError, match="below 1 for 1 groups"):
        g.sample(v, frac=0.4)
    with pytest.raises(ValueError, match="finite and not negative; row 1's is -1"):
        g.sample(v, weights=conn.array([1.0, -1.0, 1.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="finite and not negative; row 1's is"):
        g.sample(v, weights=conn.array([1.0, np.inf, 1.0, 1.0, 1.0, 1.0]), replace=True)
    with pytest.raises(ValueError, match="group 0 has 1 rows of positive weight; 2 samples"):
        ak.GroupBy(conn.array([1, 1, 1, 2, 2, 2])).sample(v, n=2, weights=conn.array([1, 0, 0, 1, 1, 0]))
    with pytest.raises(ValueError, match="positive weight"):
        g.sample(v, weights=conn.array([1, 1, 1, 0, 1, 1]))
    with pytest.raises(ValueError, match="7 elements but the GroupBy has 6 rows"):
        g.sample(conn.array(np.arange(7)))
    with pytest.raises(TypeError, match="n must be an integer"):
        g.sample(v, n=1.5)  # type: ignore[arg-type]
    cat = ak.Categorical(["a", "b", "c", "d", "e", "f"], conn=conn)
    one = g.sample(cat, n=1, random_state=2)
    assert isinstance(one, ak.Categorical) and len(one.to_list()) == 3 and "d" in one.to_list()  # group 3's one row
    _, s = g.sum(v)
    assert g.broadcast(s, permute=False).to_list() == [100, 100, 100, 70, 70, 40]
    assert g.broadcast(s).to_list() == [100, 70, 100, 40, 70, 100]
    _, first = g.first(cat)
    assert g.broadcast(first, permute=False).to_list() == ["a", "a", "a", "b", "b", "d"]


def test_weighted_sample_with_replacement_per_group(conn: ak.Connection) -> None:
    """A group's large weights do not swamp a later group's small ones (the
    running sums are each group's own share), and a trailing row of weight
    0 is never drawn."""
    g = ak.GroupBy(conn.array([0, 1, 1]))
    v = conn.array([0, 1, 2])
    rows = g.sample(v, n=4000, replace=True, weights=conn.array([1e20, 3.0, 1.0]), random_state=1,
                    return_indices=True).to_ndarray()
    share = np.mean(rows[rows > 0] == 1)
    assert abs(share - 0.75) < 0.03, share
    rows = g.sample(v, n=4000, replace=True, weights=conn.array([1e17, 3.0, 0.0]), random_state=1,
                    return_indices=True).to_ndarray()
    assert set(rows.tolist()) == {0, 1}


def test_assume_sorted_is_accepted(conn: ak.Connection) -> None:
    k = conn.array([1, 1, 2, 3, 3])
    assert ak.GroupBy(k, assume_sorted=True).size()[1].to_list() == [2, 1, 2]
    with pytest.raises(TypeError, match="assume_sorted"):
        ak.GroupBy(k, assume_sorted=[1])  # type: ignore[arg-type]


def test_sample_is_one_server_request(conn: ak.Connection, rng: np.random.Generator) -> None:
    """With or without replacement, weighted or not, sample is one
    groupby_sample request: no sort, no segments, no running sums or
    searches composed on the client (the requests are recorded)."""
    g = ak.GroupBy(conn.array(rng.integers(0, 50, N)))
    v = conn.array(np.arange(N))
    g.group()
    w = conn.array(rng.random(N) + 0.1)
    with recorded(conn) as sent:
        rows = g.sample(v, n=3, random_state=11, return_indices=True)
        weighted = g.sample(v, n=3, weights=w, random_state=11, return_indices=True)
        again = g.sample(v, n=300, replace=True, random_state=11, return_indices=True)
        heavy = g.sample(v, n=300, weights=w, replace=True, random_state=11, return_indices=True)
    assert sent.count("groupby_sample") == 4, sent
    assert not {"coargsort", "argsort", "sort", "searchsorted", "scan", "groupby_segments"} & set(sent), sent
    assert rows.size == 150 and weighted.size == 150 and again.size == heavy.size == 15000
    for drawn in (again, heavy):
        d = drawn.to_ndarray()
        assert np.all(d[1:] >= d[:-1])  # row order, a row drawn twice twice


def test_groupby_register_attach(server: Any, conn: ak.Connection, rng: np.random.Generator) -> None:
    """A registered GroupBy (an int key and a Categorical key) outlives its
    session: attach in another session aggregates as the original did, its
    unique keys the same (the Categorical's as a Categorical); a taken name
    keeps nothing new; unregister hands the arrays back."""
    k1 = rng.integers(0, 7, N)
    k2 = rng.choice(np.array(["x", "y", "z"]), N)
    v = rng.normal(size=N)
    g = ak.GroupBy([conn.array(k1), ak.Categorical(k2, conn=conn)])
    want_keys, want = g.sum(conn.array(v))
    assert g.register("gb_test") is g and g.is_registered()
    other = server.connect()
    try:
        h = ak.GroupBy.attach("gb_test", conn=other)
        assert h.is_registered() and h.ngroups == g.ngroups and h.nkeys == 2 and h.nkept == N
        keys, got = h.sum(other.array(v))
        assert np.array_equal(got.to_ndarray(), want.to_ndarray())
        assert np.array_equal(keys[0].to_ndarray(), want_keys[0].to_ndarray())
        assert isinstance(keys[1], ak.Categorical) and keys[1].to_list() == want_keys[1].to_list()
        _, u = h.unique(other.array(k1))
        assert u.size == h.ngroups
        g2 = ak.GroupBy(other.array(k1)).group()
        taken = other.array(np.array([1])).register("gb_test2_keys_0")
        before = {e["name"] for e in other.list_arrays()}
        with pytest.raises(ak.NameInUseError):
            g2.register("gb_test2")  # its ids' name is free, its keys' taken
        assert {e["name"] for e in other.list_arrays()} == before and not g2.is_registered()
        assert g2.sum(other.array(v))[1].size == 7
        taken.unregister()
        with pytest.raises(ak.UnknownArrayError):
            ak.GroupBy.attach("gb_test_nope", conn=other)
        h.unregister()
        assert not h.is_registered()
    finally:
        other.close()


def test_most_common_ties_as_arkouda(conn: ak.Connection, rng: np.random.Generator) -> None:
    """most_common: the most frequent value of each group, ties going to the
    one met first in row order (Arkouda's rule; mode takes the smallest),
    NaN skipped, a group of NaNs NaN; a Categorical's as strings."""
    keys = rng.integers(0, 300, N)
    for vals in (rng.integers(0, 4, N), np.where(rng.random(N) < 0.3, np.nan, rng.integers(0, 3, N).astype(float))):
        vals[keys == 7] = np.nan if vals.dtype.kind == "f" else vals[keys == 7]
        g = ak.GroupBy(conn.array(keys))
        k, got = g.most_common(conn.array(vals))
        want = []
        for key in k.to_ndarray():
            seen: dict[Any, list[int]] = {}
            for i in np.flatnonzero(keys == key):
                x = vals[i]
                if x == x:
                    seen.setdefault(x, [0, i])[0] += 1
            want.append(max(seen, key=lambda x: (seen[x][0], -seen[x][1])) if seen else np.nan)
        assert np.array_equal(got.to_ndarray(), np.array(want, dtype=vals.dtype), equal_nan=True)
    cat = ak.Categorical(["b", "a", "a", "b", "c"], conn=conn)
    _, m = ak.GroupBy(conn.array([0, 0, 0, 0, 1])).most_common(cat)
    assert isinstance(m, ak.Categorical) and m.to_list() == ["b", "c"]  # b met first; mode would say a


def test_diff_of_extreme_int64_as_pandas(conn: ak.Connection) -> None:
    """GroupBy.diff of int64 makes the values float before subtracting, as
    pandas' groupby diff: no wrap at the extremes (an int64 subtraction
    gave -1 for max - min), and the same bits past 2**53."""
    info = np.iinfo(np.int64)
    v = np.array([info.min, info.max, info.min, 2**53 + 1, 1, 2**62 + 1, 3, 7, -(2**60)])
    k = np.array([0, 0, 0, 0, 0, 1, 1, 1, 0])
    got = ak.GroupBy(conn.array(k)).diff(conn.array(v)).to_ndarray()
    want = pd.Series(v).groupby(k).diff().to_numpy()
    assert got.dtype == want.dtype == np.float64
    first = np.isnan(want)
    assert (np.isnan(got) == first).all() and got[~first].tobytes() == want[~first].tobytes()

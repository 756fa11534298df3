"""ak.SegArray and GroupBy.unique, against Python lists, numpy and pandas
(integers exactly, float sums bit for bit against a sequential loop)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _opsdata import recorded

import arktos as ak

pd = pytest.importorskip("pandas")

N = 20_000


def _ragged(rng: np.random.Generator, n: int, dtype: Any = np.float64) -> list[np.ndarray]:
    """n sub-arrays of 0..12 values, a fifth of them empty."""
    lens = np.where(rng.random(n) < 0.2, 0, rng.integers(1, 13, n))
    out = []
    for k in lens:
        v = np.round(rng.normal(0, 100, k), 2) if dtype == np.float64 else rng.integers(-5, 6, k)
        out.append(v.astype(dtype))
    return out


def _segarray(conn: ak.Connection, parts: list[np.ndarray]) -> ak.SegArray:
    lens = np.array([len(p) for p in parts], dtype=np.int64)
    flat = np.concatenate(parts) if parts else np.array([], dtype=np.float64)
    return ak.SegArray(conn.array(np.cumsum(lens) - lens), conn.array(flat))


def _sequential_sum(v: np.ndarray) -> Any:
    total = v.dtype.type(0)
    for x in v:
        total = total + x
    return total


def _pairs_sorted(a: np.ndarray, b: np.ndarray) -> list[tuple[Any, Any]]:
    return sorted({(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True) if y == y})


@pytest.mark.parametrize("kind", ["int-small", "int-wide", "float-nan", "multi"])
@pytest.mark.parametrize("dropna", [True, False])
def test_groupby_unique_as_pandas(conn: ak.Connection, rng: np.random.Generator, kind: str,
                                  dropna: bool) -> None:
    """Each group's distinct values, sorted, NaN skipped: pandas' unique per
    group (sorted, NaN dropped), and lengths equal to nunique."""
    if kind == "int-small":
        keys = [rng.integers(-20, 20, N)]
    elif kind == "int-wide":
        keys = [rng.integers(-(2**40), 2**40, N // 4).repeat(4)]
    elif kind == "float-nan":
        keys = [rng.choice(np.array([np.nan, -1.5, 0.0, 2.25, np.inf]), N)]
    else:
        keys = [rng.integers(1, 30, N), rng.integers(0, 24, N).astype(np.int32)]
    vals = {"int": rng.integers(-50, 50, N), "float": np.round(rng.normal(0, 3, N), 0),
            "wide": rng.integers(-(2**62), 2**62, N)}
    vals["float"][rng.random(N) < 0.1] = np.nan
    g = ak.GroupBy([conn.array(k) for k in keys], dropna=dropna)
    df = pd.DataFrame({f"k{i}": k for i, k in enumerate(keys)})
    for name, v in vals.items():
        df["v"] = v
        want = df.groupby([f"k{i}" for i in range(len(keys))], dropna=dropna, sort=True)["v"].unique()
        _, u = g.unique(conn.array(v))
        assert isinstance(u, ak.SegArray) and u.size == g.ngroups == len(want)
        got = u.to_ndarray()
        for i, w in enumerate(want):
            w = np.sort(w[~pd.isna(w)])
            assert got[i].dtype == v.dtype and np.array_equal(got[i], w), (name, i)
        assert np.array_equal(u.lengths.to_ndarray(), g.nunique(conn.array(v))[1].to_ndarray())


def test_groupby_unique_tuples_and_categorical(conn: ak.Connection, rng: np.random.Generator) -> None:
    """A list of arrays: their distinct tuples, one SegArray per array on
    shared segments; a Categorical's distinct strings in string order."""
    k = rng.integers(0, 40, N)
    a = rng.integers(0, 6, N)
    b = rng.choice(np.array([0.5, 1.5, np.nan]), N)
    s = rng.choice(np.array(["pear", "fig", "apple", "kiwi"]), N)
    g = ak.GroupBy(conn.array(k))
    keys, (ua, ub) = g.unique([conn.array(a), conn.array(b)])
    assert ua.segments is ub.segments
    ga, gb = ua.to_ndarray(), ub.to_ndarray()
    for i, key in enumerate(keys.to_ndarray()):
        rows = k == key
        assert list(zip(ga[i].tolist(), gb[i].tolist(), strict=True)) == _pairs_sorted(a[rows], b[rows])
    _, us = g.unique(ak.Categorical(s, conn=conn))
    assert isinstance(us.values, ak.Categorical)
    for i, key in enumerate(keys.to_ndarray()):
        assert us.to_list()[i] == sorted(set(s[k == key].tolist()))


def _paths(conn: ak.Connection) -> dict[str, int]:
    st = conn._request("stats")[0]
    return {p: int(st[f"unique_{p}"]) for p in ("bitmap", "sort", "grouped")}


def test_groupby_unique_is_one_server_pass(conn: ak.Connection, rng: np.random.Generator) -> None:
    """unique is one groupby_unique request (no sort request, no second
    grouping), and a SegArray's aggregations use its own ids: no groupby
    request."""
    g = ak.GroupBy(conn.array(rng.integers(0, 50, N)))
    v = conn.array(rng.integers(0, 1000, N))
    g.group()
    with recorded(conn) as sent:
        _, u = g.unique(v)
        total = u.sum()
        top = u.max()
    assert sent.count("groupby_unique") == 1, sent
    assert not {"groupby", "coargsort", "argsort", "sort", "unique"} & set(sent), sent
    assert total.size == top.size == 50


@pytest.mark.parametrize(("span", "path"), [(1000, "bitmap"), (2**40, "sort"), (2**62, "grouped")])
def test_groupby_unique_paths(conn: ak.Connection, rng: np.random.Generator, span: int, path: str) -> None:
    """The server packs (group, value) into one key and takes a bitmap of
    the keys when their range is small, a sort of them when it is not, and
    groups only when they do not pack in 64 bits (the stats count each);
    every path gives the answer of numpy's unique per group."""
    k = rng.integers(0, 30, N)
    v = rng.integers(-span, span, N)
    g = ak.GroupBy(conn.array(k))
    before = _paths(conn)
    keys, u = g.unique(conn.array(v))
    after = _paths(conn)
    assert {p: after[p] - before[p] for p in after} == {p: int(p == path) for p in after}
    for key, got in zip(keys.to_ndarray(), u.to_ndarray(), strict=True):
        assert np.array_equal(got, np.unique(v[k == key]))


def test_segarray_as_lists(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Indexing, lengths, to_list and each aggregation against the Python
    lists it was made of; float sums bit for bit against a sequential loop."""
    parts = _ragged(rng, 300)
    s = _segarray(conn, parts)
    assert len(s) == s.size == 300 and s.valsize == sum(len(p) for p in parts)
    assert s.lengths.to_ndarray().tolist() == [len(p) for p in parts]
    assert s.non_empty.to_ndarray().tolist() == [len(p) > 0 for p in parts]
    assert [np.array_equal(a, b) for a, b in zip(s.to_ndarray(), parts, strict=True)] == [True] * 300
    assert s.to_list() == [p.tolist() for p in parts]
    for i in (0, 7, -1, -300):
        assert np.array_equal(s[i].to_ndarray(), parts[i])
    assert s[10:40:3].to_list() == [p.tolist() for p in parts[10:40:3]]
    idx = rng.integers(0, 300, 50)
    assert s[conn.array(idx)].to_list() == [parts[i].tolist() for i in idx]
    assert s[idx].to_list() == [parts[i].tolist() for i in idx]
    mask = rng.random(300) < 0.5
    assert s[conn.array(mask)].to_list() == [p.tolist() for p, m in zip(parts, mask, strict=True) if m]
    sums = s.sum().to_ndarray()
    assert [x.tobytes() for x in sums] == [_sequential_sum(p).tobytes() for p in parts]
    with np.errstate(invalid="ignore"):
        for op, f in [("min", np.min), ("max", np.max), ("mean", np.mean), ("prod", np.prod)]:
            got = getattr(s, op)().to_ndarray()
            for g, p in zip(got, parts, strict=True):
                if len(p):
                    assert g == f(p) or (op in ("mean", "prod") and np.isclose(g, f(p), rtol=1e-12)), op
    empty = np.array([len(p) == 0 for p in parts])
    assert np.isnan(s.mean().to_ndarray()[empty]).all() and (sums[empty] == 0).all()
    starts = np.cumsum([0] + [len(p) for p in parts[:-1]])
    want_arg = [int(np.argmin(p)) + st if len(p) else -1 for p, st in zip(parts, starts, strict=True)]
    assert s.argmin().to_ndarray().tolist() == want_arg
    assert s.nunique().to_ndarray().tolist() == [len(set(p.tolist())) for p in parts]
    assert s.unique().to_list() == [sorted(set(p.tolist())) for p in parts]
    ints = _segarray(conn, _ragged(rng, 100, np.int64))
    ip = ints.to_ndarray()
    assert ints.OR().to_ndarray().tolist() == [int(np.bitwise_or.reduce(p)) if len(p) else 0 for p in ip]
    assert ints.any().to_ndarray().tolist() == [bool(p.any()) for p in ip]
    assert ints.all().to_ndarray().tolist() == [bool(p.all()) for p in ip]
    assert ints.aggregate("sum", ints.values * 2).to_ndarray().tolist() == [int(p.sum()) * 2 for p in ip]


def test_segarray_places_and_joins(conn: ak.Connection) -> None:
    """get_jth, get_length_n, prefixes and suffixes, concat and append,
    equality and copy, on a small SegArray checked by hand."""
    s = ak.SegArray(conn.array(np.array([0, 3, 3, 5])), conn.array(np.array([1, 2, 3, 4, 5, 6])))
    assert s.to_list() == [[1, 2, 3], [], [4, 5], [6]]
    val, ok = s.get_jth(1, default=-7)
    assert val.to_list() == [2, -7, 5, -7] and ok.to_list() == [True, False, True, False]
    assert s.get_jth(-1, compressed=True, return_origins=False).to_list() == [3, 5, 6]
    cols, ok = s.get_length_n(2)
    assert [c.to_list() for c in cols] == [[4], [5]] and ok.to_list() == [False, False, True, False]
    cols, ok = s.get_prefixes(1)
    assert [c.to_list() for c in cols] == [[1, 4]] and ok.to_list() == [True, False, True, False]
    cols = s.get_suffixes(1, proper=False, return_origins=False)
    assert [c.to_list() for c in cols] == [[3, 5, 6]]
    assert ak.SegArray.concat([s, s]).to_list() == s.to_list() * 2
    assert s.append(s, axis=1).to_list() == [[1, 2, 3, 1, 2, 3], [], [4, 5, 4, 5], [6, 6]]
    assert s.append_single(9).to_list() == [[1, 2, 3, 9], [9], [4, 5, 9], [6, 9]]
    assert s.prepend_single(conn.array(np.array([7, 8, 9, 10]))).to_list() == [[7, 1, 2, 3], [8], [9, 4, 5], [10, 6]]
    other = ak.SegArray(conn.array(np.array([0, 3, 3, 4])), conn.array(np.array([1, 2, 3, 4, 5, 6])))
    assert (s == other).to_list() == [True, True, False, False]
    assert (s != other).to_list() == [False, False, True, True]
    c = s.copy()
    c.set_jth(conn.array(np.array([0, 2])), 0, 0)
    assert c.to_list() == [[0, 2, 3], [], [0, 5], [6]] and s.to_list()[0] == [1, 2, 3]
    assert ak.SegArray.from_multi_array([conn.array(np.array([1, 2])), conn.array(np.array([3]))]).to_list() == [[1, 2], [3]]
    assert ak.SegArray.from_parts(s.segments, s.values).to_list() == s.to_list()
    assert str(s).splitlines() == ["SegArray([", "[1 2 3]", "[]", "[4 5]", "[6]", "])"]
    long = ak.SegArray(ak.arange(0, 100, 10, conn=conn), ak.arange(100, conn=conn))
    assert str(long).splitlines()[4] == "..." and len(str(long).splitlines()) == 9
    empty = ak.SegArray(conn.array(np.array([], dtype=np.int64)), conn.array(np.array([], dtype=np.int64)))
    assert empty.to_list() == [] and empty.sum().size == 0 and str(empty) == "SegArray([\n])"


def test_segarray_bad_input(conn: ak.Connection) -> None:
    """Each malformed SegArray or index says what was wrong."""
    v = conn.array(np.array([1, 2, 3]))
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda: ak.SegArray(conn.array(np.array([1, 2])), v), ValueError, "must start at 0"),
        (lambda: ak.SegArray(conn.array(np.array([0, 5])), v), ValueError, "at most the number of values"),
        (lambda: ak.SegArray(conn.array(np.array([0, 2, 1])), v), ValueError, "ascending"),
        (lambda: ak.SegArray(conn.array(np.array([0.0])), v), TypeError, "integer pdarray"),
        (lambda: ak.SegArray(conn.array(np.array([0])), [1, 2]), TypeError, "pdarray or Categorical"),
        (lambda: ak.SegArray(conn.array(np.array([], dtype=np.int64)), v), ValueError, "no segments"),
    ]
    s = ak.SegArray(conn.array(np.array([0, 2])), v)
    cases += [
        (lambda: s[2], IndexError, "out of bounds"),
        (lambda: s["a"], TypeError, "SegArray index"),
        (lambda: s.get_jth(1.5), TypeError, "integer"),
        (lambda: s.set_jth(conn.array(np.array([1])), 1, 0), ValueError, "element 1"),
        (lambda: ak.SegArray.concat([s, ak.SegArray(conn.array(np.array([0])), v)], axis=1), ValueError, "one size"),
        (lambda: ak.SegArray.concat([s], axis=2), ValueError, "axis"),
        (lambda: s.append_single(conn.array(np.array([1, 2, 3]))), ValueError, "one value per sub-array"),
        (lambda: s.sum(conn.array(np.array([1.0]))), ValueError, "rows"),
        (lambda: ak.GroupBy(v).unique(conn.array(np.array([1.0]))), ValueError, "rows"),
        (lambda: ak.GroupBy(v).unique([]), ValueError, "non-empty list"),
    ]
    for make, exc, words in cases:
        with pytest.raises(exc, match=words):
            make()
    assert s.to_list() == [[1, 2], [3]]


def test_segarray_register_attach(server: Any, conn: ak.Connection) -> None:
    """A registered SegArray outlives its session; attach finds it (a
    Categorical's values too); a taken name keeps nothing new."""
    s = ak.SegArray(conn.array(np.array([0, 2, 2])), conn.array(np.array([1.5, 2.5, 3.5])))
    c = ak.Categorical(["b", "a", "b"], conn=conn)
    t = ak.SegArray(conn.array(np.array([0, 1])), c)
    s.register("seg_test_s")
    t.register("seg_test_t")
    assert s.is_registered() and t.is_registered()
    other = server.connect()
    try:
        got = ak.SegArray.attach("seg_test_s", conn=other)
        assert got.to_list() == [[1.5, 2.5], [], [3.5]] and got.is_registered()
        cat = ak.SegArray.attach("seg_test_t", conn=other)
        assert isinstance(cat.values, ak.Categorical) and cat.to_list() == [["b"], ["a", "b"]]
        u = ak.SegArray(other.array(np.array([0])), other.array(np.array([7])))
        taken = other.array(np.array([1])).register("seg_test_u_values")
        before = {e["name"] for e in other.list_arrays()}
        with pytest.raises(ak.NameInUseError):
            u.register("seg_test_u")  # its segments' name is free, its values' is taken
        assert {e["name"] for e in other.list_arrays()} == before and not u.is_registered()
        assert u.to_list() == [[7]] and not u.segments.is_registered()
        taken.unregister()
        with pytest.raises(ak.UnknownArrayError):
            ak.SegArray.attach("seg_test_nope", conn=other)
        got.unregister()
        cat.unregister()
    finally:
        other.close()


def test_unique_and_repeat_within_memory(make_server: Any) -> None:
    """Under --max-memory, a unique or repeat too large for it says so
    (OUT_OF_MEMORY) and stores nothing; the arrays already there stay, and
    a smaller one then works."""
    conn = make_server("--max-memory", "48MiB").connect()
    try:
        rng = np.random.default_rng(3)
        n = 1_500_000
        k = conn.array(rng.integers(0, 100_000, n))
        v = conn.array(rng.integers(-(2**40), 2**40, n))  # the sort path: 16 bytes a row of scratch
        g = ak.GroupBy(k).group()
        before = {e["name"] for e in conn.list_arrays()}
        with pytest.raises(ak.OutOfMemoryError, match="max-memory"):
            g.unique(v)
        with pytest.raises(ak.OutOfMemoryError, match="max-memory"):
            np.repeat(v, 10**9)
        with pytest.raises(ak.OutOfMemoryError, match="max-memory"):
            v.repeat(conn.array(np.full(n, 1000)))
        assert {e["name"] for e in conn.list_arrays()} == before
        assert k.to_ndarray().size == n
        small = ak.GroupBy(k[:1000])
        keys, u = small.unique(v[:1000])
        assert u.valsize == 1000 and np.repeat(v[:10], 3).size == 30
    finally:
        conn.close()


def test_segarray_runs_ngrams_and_sets(conn: ak.Connection, rng: np.random.Generator) -> None:
    """remove_repeats, get_ngrams and the per-sub-array set operations
    against Python loops and numpy's intersect1d / union1d / setdiff1d /
    setxor1d of each pair of sub-arrays, empty ones among them."""
    parts = _ragged(rng, 200, np.int64)
    others = _ragged(rng, 200, np.int64)
    a, b = _segarray(conn, parts), _segarray(conn, others)
    runs, mult = a.remove_repeats(return_multiplicity=True)
    want_runs, want_mult = [], []
    for p in parts:
        r: list[int] = []
        m: list[int] = []
        for x in p.tolist():
            if r and r[-1] == x:
                m[-1] += 1
            else:
                r.append(x)
                m.append(1)
        want_runs.append(r)
        want_mult.append(m)
    assert runs.to_list() == want_runs and mult.to_list() == want_mult
    for n in (1, 2, 3):
        cols, origins = a.get_ngrams(n)
        want = [(tuple(p[j:j + n].tolist()), i) for i, p in enumerate(parts) for j in range(len(p) - n + 1)]
        got = list(zip(zip(*[col.to_list() for col in cols], strict=True), origins.to_list(), strict=True))
        assert got == want, n
    for name, f in [("intersect", np.intersect1d), ("union", np.union1d), ("setdiff", np.setdiff1d),
                    ("setxor", np.setxor1d)]:
        got = getattr(a, name)(b)
        assert got.size == a.size
        assert got.to_list() == [f(p, q).tolist() for p, q in zip(parts, others, strict=True)], name
    with pytest.raises(ValueError, match="at most the longest"):
        a.get_ngrams(99)
    with pytest.raises(ValueError, match="200 and 3"):
        a.union(_segarray(conn, others[:3]))
    cat = ak.SegArray(conn.array(np.array([0])), ak.Categorical(["x", "y"], conn=conn))
    with pytest.raises(TypeError, match="Categorical"):
        cat.remove_repeats()


def test_segarray_review_cases(server: Any, conn: ak.Connection) -> None:
    """SegArrays from one GroupBy.unique share their segments: registering
    each keeps both whole; registering a Categorical-keyed GroupBy twice
    under one name keeps it; an empty index list selects nothing; SegArrays
    of strings compare by string; a weighted sample whose group's weights
    add past float64's range is refused."""
    g = ak.GroupBy(conn.array(np.array([0, 0, 1, 1])))
    _, (u0, u1) = g.unique([conn.array(np.array([5, 6, 7, 7])), conn.array(np.array([1.0, 2.0, 3.0, 3.0]))])
    u0.register("rev_u0")
    u1.register("rev_u1")
    other = server.connect()
    try:
        assert ak.SegArray.attach("rev_u0", conn=other).to_list() == [[5, 6], [7]]
        assert ak.SegArray.attach("rev_u1", conn=other).to_list() == [[1.0, 2.0], [3.0]]
    finally:
        other.close()
    u0.unregister()
    u1.unregister()
    cg = ak.GroupBy(ak.Categorical(["a", "b", "a", "b"], conn=conn))
    assert cg.register("rev_cg").register("rev_cg").is_registered()
    cg.unregister()
    s = ak.SegArray(conn.array(np.array([0, 2])), conn.array(np.array([1, 2, 3])))
    assert s[[]].to_list() == [] and s[np.array([], dtype=bool)].size == 0
    with pytest.raises(TypeError, match="shape"):
        s[np.True_]
    c1 = ak.SegArray(conn.array(np.array([0, 1])), ak.Categorical(["x", "y", "z"], conn=conn))
    c2 = ak.SegArray(conn.array(np.array([0, 1])), ak.Categorical(["x", "y", "w"], conn=conn))
    assert (c1 == c2).to_list() == [True, False]
    with pytest.raises(TypeError, match="strings with one of numbers"):
        c1 == ak.SegArray(conn.array(np.array([0, 1])), conn.array(np.array([1, 2, 3])))
    with pytest.raises(ValueError, match="past the largest float64"):
        g.sample(conn.array(np.arange(4)), n=2, replace=True, weights=conn.array(np.array([1e308, 1e308, 1.0, 1.0])))


def test_repeat_is_one_request(conn: ak.Connection) -> None:
    """np.repeat of a pdarray, by counts or by one count, is the server's
    repeat command alone (it was a searchsorted and a gather)."""
    a = conn.array(np.array([3, 1, 2]))
    counts = conn.array(np.array([2, 0, 3]))
    with recorded(conn) as sent:
        by_counts = np.repeat(a, counts)
        each = a.repeat(2)
    assert sent == ["repeat", "repeat"], sent
    assert by_counts.to_list() == [3, 3, 2, 2, 2] and each.to_list() == [3, 3, 1, 1, 2, 2]

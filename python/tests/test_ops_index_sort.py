"""Indexing, assignment, sorting and set operations against numpy."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from _opsdata import DTYPES, N_EDGES, assert_same, forbid_downloads, sample

import arktos as ak


@pytest.fixture(scope="module")
def mconn(server) -> Iterator[ak.Connection]:
    conn = server.connect()
    before = {entry["name"] for entry in conn.list_arrays()}
    yield conn
    # Module-scoped pdarrays may outlive the connection: delete what this
    # module made, so that the shared server's memory is back where it was.
    leftover = [e["name"] for e in conn.list_arrays() if e["name"] not in before]
    conn.delete(leftover, missing_ok=True)
    conn.close()


SLICES = [slice(None), slice(2, 9), slice(None, None, -1), slice(-3, None), slice(10, 2, -3),
          slice(None, None, 7), slice(5, 5), slice(-100, 100, 2), slice(60, None, -11)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem(mconn, dtype) -> None:
    rng = np.random.default_rng(1)
    x = sample(dtype, 60)
    p = mconn.array(x)
    for i in (0, 5, -1, -len(x), len(x) - 1):
        got, want = p[i], x[i]
        assert type(got) is type(want)
        assert_same(got, want)
    for k in (len(x), -len(x) - 1, 10**12):
        with pytest.raises(IndexError, match=f"index {k} is out of bounds for axis 0 with size {len(x)}"):
            p[k]
    for s in SLICES:
        assert_same(p[s], x[s])
    idx = rng.integers(-len(x), len(x), 100)
    for idt in ("int64", "int8", "uint32"):
        ii = idx.astype(idt) if idt != "uint32" else np.abs(idx).astype(idt)
        assert_same(p[mconn.array(ii)], x[ii])
    assert_same(p[mconn.array(np.array([], dtype=np.int64))], x[np.array([], dtype=np.int64)])
    assert_same(p[[]], x[[]])  # an empty list is an empty int index, as numpy's
    with pytest.raises(IndexError, match=f"index {len(x) + 3} is out of bounds for axis 0 with size {len(x)}"):
        p[mconn.array(np.array([0, len(x) + 3, 1]))]
    mask = rng.integers(0, 2, len(x)).astype(bool)
    assert_same(p[mconn.array(mask)], x[mask])
    assert_same(p[p == p], x[x == x])
    with pytest.raises(IndexError):
        p[mconn.array(mask[:-1])]


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem(mconn, dtype) -> None:
    rng = np.random.default_rng(2)
    x = sample(dtype, 60)
    y = sample(dtype, 60, seed=9)
    p = mconn.array(x.copy())
    x = x.copy()

    def both(key_np, key_ak, value_np, value_ak) -> None:
        x[key_np] = value_np
        p[key_ak] = value_ak
        assert_same(p, x)

    v1 = y[3]
    both(4, 4, v1, v1)
    both(-2, -2, y[5], y[5])
    for s in SLICES:
        n = len(range(*s.indices(len(x))))
        both(s, s, y[:n], mconn.array(y[:n]))
        both(s, s, y[7], y[7])
    mask = rng.integers(0, 2, len(x)).astype(bool)
    pm = mconn.array(mask)
    both(mask, pm, y[1], y[1])
    both(mask, pm, y[: mask.sum()], mconn.array(y[: mask.sum()]))
    idx = rng.integers(-len(x), len(x), 200)  # repeated indices: the last write wins
    both(idx, mconn.array(idx), y[2], y[2])
    vals = sample(dtype, 200, seed=4)[:200]
    both(idx, mconn.array(idx), vals, mconn.array(vals))
    # values of another dtype are cast (numpy's unsafe casting)
    both(slice(0, 5), slice(0, 5), np.arange(5, dtype=np.int8), mconn.array(np.arange(5, dtype=np.int8)))
    with pytest.raises(IndexError):
        p[len(x)] = y[0]
    with pytest.raises(ValueError):
        p[mconn.array(np.array([0, 1]))] = mconn.array(y[:3])


def test_setitem_python_values(mconn) -> None:
    p = mconn.array(np.zeros(4, np.int8))
    p[0] = 7.9
    p[1] = True
    assert p.to_ndarray().tolist() == [7, 1, 0, 0]
    with pytest.raises(OverflowError):
        p[2] = 300
    with pytest.raises(ValueError):
        p[2] = float("nan")


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort(mconn, dtype) -> None:
    rng = np.random.default_rng(5)
    x = sample(dtype, 300)
    x = np.concatenate([x, x[rng.integers(0, len(x), 100)]])  # ties
    rng.shuffle(x)
    for data in (x, x[:0], x[:1]):
        p = mconn.array(data)
        assert_same(ak.argsort(p), np.argsort(data, kind="stable"))
        assert_same(ak.sort(p), np.sort(data, kind="stable"))


def test_sort_large_parallel(make_server) -> None:
    rng = np.random.default_rng(6)
    with make_server("--workers", "3").connect() as c:
        for x in (rng.integers(-(2**40), 2**40, 200_000), rng.integers(0, 1000, 200_000).astype(np.uint16),
                  rng.normal(size=200_000)):
            p = c.array(x)
            assert_same(p.argsort(), np.argsort(x, kind="stable"))
            assert_same(ak.sort(p), np.sort(x, kind="stable"))


def test_coargsort(mconn) -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 500).astype(np.int8)
    b = rng.normal(size=500).round(0)
    c = rng.integers(0, 3, 500).astype(np.uint64)
    got = ak.coargsort([mconn.array(a), mconn.array(b), mconn.array(c)])
    assert_same(got, np.lexsort([c, b, a]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(mconn, dtype) -> None:
    rng = np.random.default_rng(8)
    x = sample(dtype, 100)
    x = x[rng.integers(0, len(x), 400)]
    x = x[~((x == 0) & np.signbit(x))] if x.dtype.kind == "f" else x  # -0.0 vs 0.0 ties are unordered in numpy
    for data in (x, x[:0]):
        p = mconn.array(data)
        u, inv, cnt = ak.unique(p, return_inverse=True, return_counts=True)
        wu, winv, wcnt = np.unique(data, return_inverse=True, return_counts=True)
        assert_same(u, wu)
        assert_same(inv, winv)
        assert_same(cnt, wcnt)
        assert_same(ak.unique(p), wu)
        v, c = ak.value_counts(p)
        assert_same(v, wu)
        assert_same(c, wcnt)


@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int8", "int64"), ("float64", "float32"),
                                   ("uint8", "int16"), ("bool", "bool"), ("float64", "int64"),
                                   ("uint64", "uint64")])
def test_sets(mconn, da, db) -> None:
    rng = np.random.default_rng(9)
    a = sample(da, 100)[rng.integers(0, 112, 150)]
    b = sample(db, 100, seed=3)[rng.integers(0, 112, 80)]
    with np.errstate(all="ignore"):
        b = np.concatenate([b, a[:20].astype(db)])
    # numpy leaves the order of -0.0 and 0.0 ties unspecified: use 0.0 only.
    a, b = a + np.zeros(1, a.dtype), b + np.zeros(1, b.dtype)
    pa, pb = mconn.array(a), mconn.array(b)
    assert_same(ak.in1d(pa, pb), np.isin(a, b))
    assert_same(ak.in1d(pa, pb, invert=True), np.isin(a, b, invert=True))
    assert_same(ak.intersect1d(pa, pb), np.intersect1d(a, b))
    assert_same(ak.union1d(pa, pb), np.union1d(a, b))
    assert_same(ak.setdiff1d(pa, pb), np.setdiff1d(a, b))
    e = mconn.array(a[:0])
    assert_same(ak.in1d(e, pb), np.isin(a[:0], b))
    assert_same(ak.union1d(e, e), np.union1d(a[:0], a[:0]))


@pytest.mark.parametrize("da,db", [("int64", "uint64"), ("uint64", "int64"), ("int8", "uint64"), ("uint64", "int32")])
def test_in1d_signed_with_uint64_is_exact(mconn, da, db) -> None:
    """in1d of a signed array and a uint64 one is exact: their promotion
    is float64, where 2**63 - 1 and 2**63 met. (np.isin is exact for small
    arrays and not for larger ones, by the algorithm it picks: the check is
    against Python's integers.)"""
    edges = [2**63, 2**64 - 1, 0, 5, 2**63 - 1, 2**63 + 1, 7, -1, -2**63, 127, -128]
    rng = np.random.default_rng(4)

    def made(dt: str, n: int) -> np.ndarray:
        info = np.iinfo(dt)
        return np.array([v for v in edges if info.min <= v <= info.max] + list(rng.integers(0, 20, n)), dtype=dt)

    a, b = made(da, 60), made(db, 12)
    members = {int(v) for v in b}
    want = np.array([int(v) in members for v in a])
    for invert in (False, True):
        assert_same(ak.in1d(mconn.array(a), mconn.array(b), invert=invert), want ^ invert)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8", "float64", "uint64"])
def test_histogram(mconn, dtype) -> None:
    x = sample(dtype, 500)
    if x.dtype.kind == "f":
        x = x[np.isfinite(x)]
    p = mconn.array(x)
    for bins, rng in [(10, None), (7, None), (1, None), (13, (-50.0, 50.0)), (4, (0.0, 0.0))]:
        c, e = ak.histogram(p, bins, range=rng)
        with np.errstate(over="ignore"):  # edges of a range near the largest floats: numpy's linspace overflows, as the server's
            wc, we = np.histogram(x, bins, range=rng)
        assert_same(c, wc)
        assert_same(e, we)
    c, e = ak.histogram(mconn.array(np.full(5, 3, dtype)), 3)
    wc, we = np.histogram(np.full(5, 3, dtype), 3)
    assert_same(c, wc)
    assert_same(e, we)


def test_histogram_errors(mconn) -> None:
    p = mconn.array(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="autodetected range of"):
        ak.histogram(p, 3)
    with pytest.raises(ValueError, match="max must be larger than min"):
        ak.histogram(p, 3, range=(2.0, 1.0))
    # a constant too large for ±0.5 to widen it: numpy's error (the server
    # panicked on a zero bin width)
    for v in (1e17, 1e308):
        with pytest.raises(ValueError, match="Cannot create 10 finite-sized bins"):
            np.histogram(np.full(10, v), 10)
        with pytest.raises(ValueError, match="Cannot create 10 finite-sized bins"):
            ak.histogram(mconn.array(np.full(10, v)), 10)
    assert mconn._request("stats")[0]["panics"] == 0


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_numpy_array_functions(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.concatenate, np.where, np.sort, np.unique, np.isin, np.intersect1d,
    np.union1d, np.setdiff1d, np.count_nonzero and np.histogram on pdarrays
    run on the server (a pdarray back, no download) and equal numpy's
    answer bit for bit; options the server lacks, and other functions,
    behave as before the hook (numpy's own, on a download)."""
    x = sample(dtype, 300)
    x = x + np.zeros(1, x.dtype)  # numpy leaves the order of -0.0 and 0.0 ties unspecified: 0.0 only
    y = x[::3].copy()
    p, q = mconn.array(x), mconn.array(y)
    cases = [
        (lambda a, b: np.concatenate([a, b, np.array([7], dtype=dtype)]), False),
        (lambda a, b: np.where(a > 0, a, 0), False),
        (lambda a, b: np.sort(a), False),
        (lambda a, b: np.unique(a), False),
        (lambda a, b: np.unique(a, return_inverse=True, return_counts=True), False),
        (lambda a, b: np.isin(a, b), False),
        (lambda a, b: np.isin(a, b, invert=True), False),
        (lambda a, b: np.intersect1d(a, b), False),
        (lambda a, b: np.union1d(a, b), False),
        (lambda a, b: np.setdiff1d(a, b), False),
        (lambda a, b: np.count_nonzero(a), False),
        (lambda a, b: np.histogram(a[np.isfinite(a)] if isinstance(a, np.ndarray) else a[ak.isfinite(a)], 7), False),
        (lambda a, b: np.unique(a, return_index=True), True),  # (numpy's, on a download)
        (lambda a, b: np.diff(a, prepend=0), True),
    ]
    for f, download in cases:
        with np.errstate(all="ignore"):
            want = f(x, y)
            if not download:
                forbid_downloads(monkeypatch)
            got = f(p, q)
            monkeypatch.undo()
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            if not download and not np.isscalar(w):
                assert isinstance(g, ak.pdarray), (f, type(g))
            assert_same(g, w)


@pytest.mark.parametrize("n", [300, 301])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64"])
def test_numpy_statistics(mconn, dtype, n, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.median, np.quantile, np.percentile and their nan* twins, np.diff,
    np.ptp, np.nonzero, np.flatnonzero, np.array_equal, np.nanmax and
    np.nanmin on pdarrays run on the server (one sort and a take of a few
    elements for the order statistics; no download of the array) and equal
    numpy's answer bit for bit, dtype and kind of scalar included;
    np.average, np.nansum and np.nanmean add as the server's sum does
    (docs/operations.md: within rounding of numpy's pairwise sum). Options
    the server lacks take numpy's path, as before."""
    x = sample(dtype, n - N_EDGES)
    x = x + np.zeros(1, x.dtype)  # numpy leaves the order of -0.0 and 0.0 ties unspecified: 0.0 only
    assert len(x) == n
    clean = x[~np.isnan(x)] if x.dtype.kind == "f" else x
    exact = [
        lambda a: np.median(a), lambda a: np.nanmedian(a),
        lambda a: np.quantile(a, 0.3), lambda a: np.quantile(a, 1.0), lambda a: np.quantile(a, 0.0),
        lambda a: np.percentile(a, 37), lambda a: np.percentile(a, [0, 12.5, 50, 99, 100]),
        lambda a: np.quantile(a, np.float32(0.7)), lambda a: np.quantile(a, np.array([0.1, 0.9], np.float32)),
        lambda a: np.quantile(a, np.float64(0.25)), lambda a: np.percentile(a, np.array(33.3)),
        lambda a: np.nanquantile(a, 0.3), lambda a: np.nanpercentile(a, [1, 50, 100]),
        lambda a: np.nanquantile(a, np.float32(0.6)),
        lambda a: np.ptp(a), lambda a: np.nanmax(a), lambda a: np.nanmin(a),
    ]
    arrays = [  # (pdarrays back)
        lambda a: np.diff(a), lambda a: np.diff(a, 2), lambda a: np.diff(a, 0),
        lambda a: np.nonzero(a)[0], lambda a: np.flatnonzero(a),
    ]
    summed = [lambda a: np.average(a), lambda a: np.nansum(a), lambda a: np.nanmean(a),
              lambda a: np.dot(a, a), lambda a: np.dot(a, data[::-1].copy()), lambda a: np.vdot(a, a),
              lambda a: np.inner(a, a), lambda a: np.linalg.norm(a)]
    on_numpy = [lambda a: np.quantile(a, 0.5, method="nearest"), lambda a: np.diff(a, prepend=0)]
    for data in (x, clean) if x.dtype.kind == "f" else (x,):
        p = mconn.array(data)
        for f in exact + arrays + summed + on_numpy:
            with np.errstate(all="ignore"):
                want = f(data)
                if f not in on_numpy:
                    forbid_downloads(monkeypatch)
                got = f(p)
                monkeypatch.undo()
            if f in arrays:
                assert isinstance(got, ak.pdarray), f
            if f in summed and np.asarray(want).dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-6 if data.dtype == np.float32 else 1e-12)
                assert type(got) is type(want)
            else:
                assert_same(got, want)
                assert type(got) is type(want) or isinstance(got, ak.pdarray), (f, type(got), type(want))
        forbid_downloads(monkeypatch)
        changed = data.copy()
        changed[5] += 1
        for other in (data, data[:-1], changed):
            want = np.array_equal(data, other)
            assert np.array_equal(p, other) is want and np.array_equal(other, p) is want
        assert np.array_equal(p, p) is np.array_equal(data, data)
        monkeypatch.undo()
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        np.percentile(p, 101)
    with pytest.raises(ValueError, match="order must be non-negative"):
        np.diff(p, -1)


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_numpy_quantiles_large(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's selection on arrays large enough for its brackets (a
    sample, one pass; docs/operations.md) gives numpy's quantiles bit for
    bit too, NaNs (a fifth of the elements) or not, with nothing downloaded."""
    rng = np.random.default_rng(7)
    x = (rng.normal(0, 1000, 200_001)).astype(dtype)
    if x.dtype.kind == "f":
        x[rng.integers(0, x.size, x.size // 5)] = np.nan
    for data in (x, x[~np.isnan(x)] if x.dtype.kind == "f" else x[::-1]):
        p = mconn.array(data)
        forbid_downloads(monkeypatch)
        for f in (lambda a: np.median(a), lambda a: np.nanmedian(a), lambda a: np.quantile(a, [0.0, 0.01, 0.5, 1.0]),
                  lambda a: np.nanpercentile(a, 99.9), lambda a: np.percentile(a, [25, 75])):
            assert_same(f(p), f(data))
        monkeypatch.undo()


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
def test_numpy_isclose(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.isclose and np.allclose with a pdarray run on the server, numpy's
    formula step for step: a bool pdarray equal to numpy's (NaN, inf,
    scalars either side, equal_nan, other tolerances)."""
    x = sample(dtype, 100)
    with np.errstate(all="ignore"):
        y = (x + (x / 1e6 if x.dtype.kind == "f" else 0)).astype(x.dtype)
        y[::7] = y[::7] + 1
    p, q = mconn.array(x), mconn.array(y)
    cases = [((p, q), (x, y), {}), ((p, y), (x, y), {}), ((x, q), (x, y), {}), ((p, 3), (x, 3), {}),
             ((2.5, q), (2.5, y), {}), ((p, q), (x, y), {"equal_nan": True}),
             ((p, q), (x, y), {"rtol": 0.0, "atol": 1}), ((p, np.inf), (x, np.inf), {}),
             ((p, np.nan), (x, np.nan), {"equal_nan": True})]
    for ours, theirs, kw in cases:
        with np.errstate(all="ignore"):
            want = np.isclose(*theirs, **kw)
            forbid_downloads(monkeypatch)
            got = np.isclose(*ours, **kw)
            whole = np.allclose(*ours, **kw)
            monkeypatch.undo()
        assert isinstance(got, ak.pdarray)
        assert_same(got, want)
        assert whole is bool(want.all())
    assert np.allclose(p, x, equal_nan=True) and np.allclose(x, p, equal_nan=True)
    assert np.allclose(p, x) is np.allclose(x, x)


def test_searchsorted_and_digitize(mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.searchsorted (either side a pdarray, scalars, both sides) and
    np.digitize of a pdarray (increasing or decreasing bins, right or not)
    run on the server and equal numpy's indices, NaN last, across dtype
    pairs; ak.searchsorted alike. Before, both downloaded."""
    for da in ("int8", "uint16", "int64", "float32", "float64"):
        a = np.sort(sample(da, 200))  # (NaN last, as numpy sorts)
        pa = mconn.array(a)
        for dv in ("int8", "int64", "float64"):
            v = sample(dv, 300, seed=1)
            pv = mconn.array(v)
            for side in ("left", "right"):
                want = np.searchsorted(a, v, side=side)
                forbid_downloads(monkeypatch)
                got = np.searchsorted(pa, pv, side=side)
                got_nd = np.searchsorted(a, pv, side=side)  # (a small ndarray: uploaded)
                got_scalar = np.searchsorted(pa, v[3], side=side)
                monkeypatch.undo()
                assert isinstance(got, ak.pdarray) and isinstance(got_nd, ak.pdarray)
                assert_same(got, want)
                assert_same(got_nd, want)
                assert_same(got_scalar, np.searchsorted(a, v[3], side=side))
        assert_same(ak.searchsorted(pa, pa), np.searchsorted(a, a))
    x = sample("float64", 500)
    px = mconn.array(x)
    for bins in (np.array([-50.0, 0.0, 0.5, 10.0, 100.0]), np.array([100, 10, 0, -50]), np.array([3.0])):
        for right in (False, True):
            forbid_downloads(monkeypatch)
            got = np.digitize(px, bins, right=right)
            monkeypatch.undo()
            assert isinstance(got, ak.pdarray)
            assert_same(got, np.digitize(x, bins, right=right))
    with pytest.raises(ValueError, match="monotonically"):
        np.digitize(px, np.array([1.0, 3.0, 2.0]))
    with pytest.raises(ValueError, match="side must be"):
        ak.searchsorted(px, px, side="middle")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_numpy_array_makers(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.zeros_like, np.ones_like, np.full_like, np.empty_like (zeros
    here), np.copy, np.take, np.flip, np.append, np.roll and np.ravel of a
    pdarray give pdarrays made on the server, equal to numpy's (values,
    dtype; the fill cast as numpy casts it). Before, each downloaded."""
    x = sample(dtype, 50)
    p = mconn.array(x)
    cases = [
        lambda a: np.zeros_like(a), lambda a: np.ones_like(a), lambda a: np.full_like(a, 7),
        lambda a: np.full_like(a, 2.7), lambda a: np.full_like(a, 3, dtype=np.float32),
        lambda a: np.zeros_like(a, dtype=np.int16), lambda a: np.copy(a), lambda a: np.take(a, [0, 5, -1]),
        lambda a: np.take(a, np.array([3, 3, 1])), lambda a: np.flip(a), lambda a: np.append(a, x[:4]),
        lambda a: np.roll(a, 3), lambda a: np.roll(a, -7), lambda a: np.roll(a, 0), lambda a: np.ravel(a),
    ]
    for f in cases:
        with np.errstate(all="ignore"):
            want = f(x)
            forbid_downloads(monkeypatch)
            got = f(p)
            monkeypatch.undo()
        assert isinstance(got, ak.pdarray), f
        assert_same(got, want)
    assert_same(np.empty_like(p), np.zeros_like(x))
    assert np.take(p, 2) == x[2]


def test_numpy_bincount(mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.bincount of a pdarray of non-negative integers runs on the
    server (its histogram, a bin a value) and equals numpy's counts;
    negative values raise numpy's ValueError. Before, it downloaded."""
    rng = np.random.default_rng(5)
    for x in (rng.integers(0, 100, 10_000).astype(np.int8), rng.integers(0, 3000, 10_000).astype(np.uint16),
              rng.integers(0, 10**6, 1000), np.array([True, False, True]), np.array([0, 0, 5], np.int32)):
        p = mconn.array(x)
        for minlength in (0, 7, 200):
            forbid_downloads(monkeypatch)
            got = np.bincount(p, minlength=minlength)
            monkeypatch.undo()
            assert isinstance(got, ak.pdarray)
            assert_same(got, np.bincount(x, minlength=minlength))
    with pytest.raises(ValueError, match="no negative elements"):
        np.bincount(mconn.array(np.array([3, -1, 2])))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_more_numpy_functions(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.hstack, np.extract, np.compress, np.repeat, np.tile, np.setxor1d,
    np.unique_values / unique_counts / unique_inverse, np.lexsort,
    np.isposinf, np.isneginf, np.nan_to_num, np.nanargmin / nanargmax,
    np.nancumsum / nancumprod, np.cumulative_sum / cumulative_prod,
    np.nanprod, np.nanvar and np.nanstd of pdarrays run on the server and
    equal numpy's (bit for bit; sums and products, which the server adds in
    its own order, within 1e-12 relative). Before, each downloaded."""
    x = sample(dtype, 50)
    x = x + np.zeros(1, x.dtype)  # numpy leaves the order of -0.0 and 0.0 ties unspecified: 0.0 only
    p = mconn.array(x)
    rng = np.random.default_rng(7)
    ci = sample("int8", 50)
    pci = mconn.array(ci)
    counts = rng.integers(0, 4, x.size)
    pcounts = mconn.array(counts)
    floats = x.dtype.kind == "f"
    exact = [
        lambda a, c, k: np.hstack([a, x[:3]]), lambda a, c, k: np.extract(c, a),
        lambda a, c, k: np.compress(ci[:40] != 0, a), lambda a, c, k: np.compress(c != 0, a),
        lambda a, c, k: np.repeat(a, 3), lambda a, c, k: np.repeat(a, 0), lambda a, c, k: np.repeat(a, k),
        lambda a, c, k: np.repeat(a, counts), lambda a, c, k: np.tile(a, 3), lambda a, c, k: np.tile(a, 0),
        lambda a, c, k: np.setxor1d(a, x[::3]), lambda a, c, k: np.lexsort((a, c)),
        lambda a, c, k: np.lexsort((c, a)),
        lambda a, c, k: np.cumulative_sum(a, include_initial=True) if not floats else np.cumulative_sum(c),
        lambda a, c, k: np.nan_to_num(a), lambda a, c, k: np.nan_to_num(a, nan=5, posinf=1, neginf=-1),
    ]
    if floats:
        exact += [lambda a, c, k: np.isposinf(a), lambda a, c, k: np.isneginf(a), lambda a, c, k: np.nanargmin(a),
                  lambda a, c, k: np.nanargmax(a)]
    for i, f in enumerate(exact):
        with np.errstate(all="ignore"):
            want = f(x, ci, counts)
            forbid_downloads(monkeypatch)
            got = f(p, pci, pcounts)
            monkeypatch.undo()
        assert isinstance(got, (ak.pdarray, np.integer)), (i, type(got))
        assert_same(got, want)
    for got_t, want_t in ((np.unique_counts(p), np.unique(x, return_counts=True)),
                          (np.unique_inverse(p), np.unique(x, return_inverse=True))):
        assert type(got_t).__name__ in ("UniqueCountsResult", "UniqueInverseResult")
        for g, w in zip(got_t, want_t, strict=True):
            assert_same(g, w)
    assert_same(np.unique_values(p), np.unique(x))
    close = [lambda a: np.nancumsum(a), lambda a: np.nancumprod(a[:20]), lambda a: np.nanprod(a[:20]),
             lambda a: np.nanvar(a), lambda a: np.nanstd(a, ddof=1), lambda a: np.cumulative_prod(a[:20])]
    for f in close:
        with np.errstate(all="ignore"):
            want = f(x)
            forbid_downloads(monkeypatch)
            got = f(p)
            monkeypatch.undo()
        assert_same(got, want, ulps=4, rtol=1e-12)
    y = p.copy()
    assert np.nan_to_num(y, copy=False) is y
    assert_same(y, np.nan_to_num(x))
    with pytest.raises(ValueError, match="negative"):
        np.repeat(p, -1)
    with pytest.raises(ValueError, match="negative"):
        np.tile(p, -1)  # (numpy's own error, as before the hook)
    if floats:
        with pytest.raises(ValueError, match="All-NaN"):
            np.nanargmin(mconn.array(np.full(3, np.nan, x.dtype)))


def test_numpy_cov_corrcoef(mconn, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.cov and np.corrcoef of one or two 1-D pdarrays (and Arkouda's
    ak.cov, ak.corr) sum on the server: numpy's shapes and values within
    1e-12 relative. Before, np.cov downloaded both arrays."""
    rng = np.random.default_rng(3)
    for x, y in ((rng.normal(5, 2, 5000), rng.normal(0, 1, 5000)),
                 (rng.normal(3, 1, 4000).astype(np.float32), rng.normal(0, 1, 4000).astype(np.float32)),
                 (rng.integers(-50, 50, 3000), rng.integers(0, 9, 3000).astype(np.uint8))):
        p, q = mconn.array(x), mconn.array(y)
        forbid_downloads(monkeypatch)
        got = [np.cov(p, q), np.cov(p), np.cov(p, q, ddof=0), np.cov(p, bias=True), np.corrcoef(p, q),
               np.corrcoef(p), ak.cov(p, q), ak.corr(p, q)]
        monkeypatch.undo()
        want = [np.cov(x, y), np.cov(x), np.cov(x, y, ddof=0), np.cov(x, bias=True), np.corrcoef(x, y),
                np.corrcoef(x), np.cov(x, y)[0, 1], np.corrcoef(x, y)[0, 1]]
        for g, w in zip(got, want, strict=True):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_mink_maxk(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """ak.mink / ak.maxk are np.sort(a)[:k] / [-k:] and ak.argmink /
    ak.argmaxk np.argsort(a, kind="stable")[:k] / [-k:], ties and NaNs
    included, found by selection then a sort of the few kept; ak.is_sorted
    says whether np.sort would leave a as it is (NaN last)."""
    rng = np.random.default_rng(11)
    for x in (sample(dtype, 300), sample(dtype, 200_000), sample(dtype, 40)[rng.integers(0, 52, 3000)]):
        x = x + np.zeros(1, x.dtype)  # numpy leaves the order of -0.0 and 0.0 ties unspecified: 0.0 only
        p = mconn.array(x)
        n = x.size
        srt, order = np.sort(x, kind="stable"), np.argsort(x, kind="stable")
        for k in (0, 1, 5, 77, n - 1, n, n + 3):
            m = min(k, n)
            forbid_downloads(monkeypatch)
            got = [ak.mink(p, k), ak.maxk(p, k), ak.argmink(p, k), ak.argmaxk(p, k)]
            monkeypatch.undo()
            for g, w in zip(got, [srt[:m], srt[n - m:], order[:m], order[n - m:]], strict=True):
                assert_same(g, w)
        assert not ak.is_sorted(p) or np.array_equal(np.sort(x), x, equal_nan=True)
        assert ak.is_sorted(mconn.array(srt))
    with pytest.raises(ValueError, match="non-negative"):
        ak.mink(p, -1)
    f = mconn.array(np.array([1.0, np.nan, 2.0]))
    assert not ak.is_sorted(f) and ak.is_sorted(mconn.array(np.array([1.0, 2.0, np.nan, np.nan])))
    assert ak.is_sorted(mconn.array(np.array([], np.int8))) and not ak.is_sorted(mconn.array(np.array([2, 1])))

"""Reductions, scans and creation functions against numpy."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from _opsdata import DTYPES, assert_same, forbid_downloads, numpy_quiet, sample

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


def datasets(dtype: str) -> list[np.ndarray]:
    """The sample (edge values at its end), empty, one element, and the
    sample shuffled so that its edges (NaN, infinities, -0.0, the integer
    extremes) fall inside the whole blocks the server's AVX-512 kernels
    take; for floats also without NaN (those kernels answer min, max,
    argmin and argmax then), and zeros of both signs beside negatives, where
    the first of equal extremes must win."""
    x = sample(dtype, 200)
    rng = np.random.default_rng(5)
    out = [x, x[:0], x[:1], rng.permutation(np.resize(x, 1000))]
    if np.dtype(dtype).kind == "f":
        out.append(x[np.isfinite(x) & (np.abs(x) < 1e6)])  # no NaN/inf
        no_nan = np.resize(x[~np.isnan(x)], 1000)
        out.append(rng.permutation(no_nan))
        zeros = -np.abs(rng.permutation(no_nan)) - 1
        zeros[rng.integers(0, zeros.size, 6)] = np.array([0.0, -0.0, 0.0, -0.0, -0.0, 0.0], dtype=dtype)
        out.append(zeros)
    return out


EXACT = {"min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax,
         "any": np.any, "all": np.all}


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(mconn, dtype) -> None:
    for x in datasets(dtype):
        p = mconn.array(x)
        for name, f in EXACT.items():
            try:
                want = f(x)
            except ValueError:
                with pytest.raises(ValueError):
                    getattr(ak, name)(p)
                continue
            got = getattr(p, name)()
            assert type(got) is type(want), (name, type(got), type(want))
            if name in ("min", "max") and got == 0 and want == 0:
                # min/max of 0.0 and -0.0: either is right (IEEE), and numpy's
                # answer differs between its AVX-512 and AVX2 loops.
                continue
            assert_same(got, want)
        assert ak.count_nonzero(p) == np.count_nonzero(x)
        with numpy_quiet():  # (NaN for the empty and one-element arrays, and overflows)
            for name in ("sum", "prod", "mean", "var", "std"):
                want = getattr(np, name)(x)
                got = getattr(p, name)()
                assert np.asarray(got).dtype == np.asarray(want).dtype, name
                if np.dtype(dtype).kind in "iub" and name in ("sum", "prod"):
                    assert_same(got, want)  # integer sums wrap exactly as numpy's
                else:
                    rtol = 1e-4 if want.dtype == np.float32 else 1e-9
                    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)
            for ddof in (1, 2.5):
                np.testing.assert_allclose(p.var(ddof=ddof), np.var(x, ddof=ddof), rtol=1e-4, equal_nan=True)
                np.testing.assert_allclose(p.std(ddof=ddof), np.std(x, ddof=ddof), rtol=1e-4, equal_nan=True)


@pytest.mark.parametrize("dtype", ["int64", "float64", "bool"])
def test_numpy_functions(mconn, dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.sum(a), np.mean(a), np.argmax(a), np.cumsum(a), ... on a pdarray
    run on the server (numpy calls the method with axis, dtype, out,
    keepdims, ...) and equal the method's answer and numpy's on the same
    data. Before, np.sum and np.mean raised TypeError (an unexpected
    'axis') and the others downloaded the array."""
    x = sample(dtype, 200)
    if x.dtype.kind == "f":
        x = x[np.isfinite(x)]
    p = mconn.array(x)
    forbid_downloads(monkeypatch)
    with np.errstate(all="ignore"):
        for f in (np.sum, np.prod, np.min, np.max, np.amin, np.amax, np.mean, np.var, np.std,
                  np.argmin, np.argmax, np.any, np.all):
            got = f(p)
            assert_same(got, getattr(p, f.__name__.removeprefix("a") if f in (np.amin, np.amax) else f.__name__)())
            if f in (np.mean, np.var, np.std) or x.dtype.kind == "f" and f in (np.sum, np.prod):
                np.testing.assert_allclose(got, f(x), rtol=1e-9)  # (numpy adds pairwise; the server in row order)
            else:
                assert_same(got, f(x))
        assert_same(np.std(p, ddof=1), p.std(ddof=1))
        assert_same(p.var(1), p.var(ddof=1))  # (Arkouda's positional ddof)
        assert_same(np.var(p, 0), p.var())  # (numpy's positional axis: numpy's own path)
        assert_same(np.sum(p, axis=0), p.sum())
        assert_same(np.sum(p, dtype=np.float64), p.astype(np.float64).sum())
        for f in (np.cumsum, np.cumprod, np.argsort):
            got = f(p)
            assert isinstance(got, ak.pdarray), f
            assert_same(got, f(x, kind="stable") if f is np.argsort else f(x))
        if x.dtype.kind != "b":
            assert_same(np.clip(p, 2, 5), np.clip(x, 2, 5))
    with pytest.raises(ValueError, match="axis must be None, 0 or -1"):
        np.sum(p, axis=1)
    with pytest.raises(TypeError, match="out=.*not supported"):
        np.max(p, out=np.empty(()))
    with pytest.raises(TypeError, match="keepdims=True.*not supported"):
        np.mean(p, keepdims=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scans(mconn, dtype) -> None:
    for x in datasets(dtype):
        p = mconn.array(x)
        with np.errstate(all="ignore"):
            assert_same(ak.cumsum(p), np.cumsum(x))  # float scans run in numpy's order: exact
            assert_same(p.cumprod(), np.cumprod(x))
    if np.dtype(dtype).kind == "f":
        x = np.array([-0.0, -0.0, 1.0, -1.0, -0.0], dtype=dtype)  # numpy keeps a leading -0.0
        assert_same(ak.cumsum(mconn.array(x)), np.cumsum(x))


def test_float_sum_is_independent_of_workers(make_server) -> None:
    x = np.random.default_rng(3).normal(size=300_000) * 1e6
    sums = set()
    for workers in ("1", "2", "5"):
        with make_server("--workers", workers).connect() as c:
            sums.add(float(c.array(x).sum()))
    assert len(sums) == 1
    np.testing.assert_allclose(sums.pop(), x.sum(), rtol=1e-12)


def test_creation(mconn) -> None:
    for d in DTYPES:
        assert_same(ak.zeros(5, d, conn=mconn), np.zeros(5, d))
        assert_same(ak.ones(7, d, conn=mconn), np.ones(7, d))
    assert_same(ak.full(4, 2.5, conn=mconn), np.full(4, 2.5))
    assert_same(ak.full(4, -3, np.int8, conn=mconn), np.full(4, -3, np.int8))
    assert_same(ak.full(3, True, conn=mconn), np.full(3, True))
    assert_same(ak.zeros(0, conn=mconn), np.zeros(0))
    with pytest.raises(OverflowError):
        ak.full(3, 300, np.int8, conn=mconn)
    for args in [(10,), (3, 17, 4), (10, -3, -2), (5, 5), (0, 1, 0.1), (1.5, -2.0, -0.3),
                 (-(2**62), 2**62, 2**60), (0.0, 1.0, 1 / 3), (7, 3)]:
        assert_same(ak.arange(*args, conn=mconn), np.arange(*args))
    assert_same(ak.arange(0, 10, 2, dtype=np.uint8, conn=mconn), np.arange(0, 10, 2, dtype=np.uint8))
    for start, stop, num, endpoint in [(0, 1, 50, True), (-3.5, 7.25, 11, True), (0, 1, 10, False),
                                       (2, 2, 5, True), (1, 0, 1, True), (0, 1, 0, True), (1e-300, 1e300, 7, True)]:
        assert_same(ak.linspace(start, stop, num, endpoint, conn=mconn), np.linspace(start, stop, num, endpoint=endpoint))


def test_concatenate(mconn) -> None:
    for da, db in [("int8", "uint8"), ("float32", "int64"), ("bool", "int16"), ("uint64", "int64"), ("int32", "int32")]:
        xa, xb = sample(da, 30), sample(db, 17)
        got = ak.concatenate([mconn.array(xa), mconn.array(xb), mconn.array(xa[:0])])
        assert_same(got, np.concatenate([xa, xb, xa[:0]]))


def test_random_reproducible_and_distributed(make_server) -> None:
    n = 200_000
    results = []
    for workers in ("1", "3"):
        with make_server("--workers", workers).connect() as c:
            r = ak.randint(-5, 17, n, seed=42, conn=c).to_ndarray()
            u = ak.uniform(n, -2.0, 3.0, seed=42, conn=c).to_ndarray()
            g = ak.standard_normal(n, seed=7, conn=c).to_ndarray()
            b = ak.randint(0, 2, 1000, dtype=np.bool_, seed=1, conn=c).to_ndarray()
            big = ak.randint(2**63, 2**64 - 1, 1000, dtype=np.uint64, seed=1, conn=c).to_ndarray()
            results.append((r, u, g, b, big))
            other = ak.randint(-5, 17, n, seed=43, conn=c).to_ndarray()
            assert not np.array_equal(r, other)
    for x, y in zip(*results):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    r, u, g, b, big = results[0]
    assert r.dtype == np.int64 and r.min() == -5 and r.max() == 16
    counts = np.bincount(r + 5)
    assert np.all(np.abs(counts - n / 22) < 5 * np.sqrt(n / 22))
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 25 / 12) < 0.05
    assert abs(g.mean()) < 0.01 and abs(g.std() - 1) < 0.01
    assert abs(np.mean(g**3)) < 0.03 and abs(np.mean(g**4) - 3) < 0.1
    assert b.dtype == np.bool_ and 400 < b.sum() < 600
    assert big.dtype == np.uint64 and big.min() >= 2**63


def test_uniform_errors_as_numpy(mconn) -> None:
    """ak.uniform refuses the bounds numpy's Generator.uniform refuses (NaN
    or infinite ranges once gave arrays of NaN), with its exception classes."""
    rng = np.random.default_rng(0)
    for lo, hi in ((np.inf, np.nan), (0.0, np.inf), (np.nan, 1.0), (-1e308, 1e308), (2.0, 1.0)):
        with pytest.raises(Exception) as want:
            rng.uniform(lo, hi, 3)
        with pytest.raises(want.type, match="high - low"):
            ak.uniform(3, lo, hi, conn=mconn)
    assert ak.uniform(3, 1.5, 1.5, conn=mconn).to_ndarray().tolist() == [1.5] * 3


def test_randint_errors(mconn) -> None:
    with pytest.raises(ValueError, match="low >= high"):
        ak.randint(5, 5, 3, conn=mconn)
    with pytest.raises(ValueError, match="out of bounds"):
        ak.randint(0, 300, 3, dtype=np.uint8, conn=mconn)


def test_randint_whole_int64_range(mconn) -> None:
    """randint(-2**63, 2**63) is numpy's whole int64 range (Arkouda's
    sort-cases asks for it); one past it is refused as numpy refuses it."""
    rng = np.random.default_rng(0)
    rng.integers(-(2**63), 2**63, 3, dtype=np.int64)
    x = ak.randint(-(2**63), 2**63, 20000, seed=3, conn=mconn).to_ndarray()
    assert x.dtype == np.int64 and (x < 0).any() and (x > 0).any() and np.unique(x).size > 19990
    assert (ak.randint(2**63 - 2, 2**63, 500, seed=1, conn=mconn).to_ndarray() >= 2**63 - 2).all()
    with pytest.raises(ValueError):
        rng.integers(0, 2**63 + 1, 3, dtype=np.int64)
    with pytest.raises(ValueError, match="out of bounds"):
        ak.randint(0, 2**63 + 1, 3, conn=mconn)

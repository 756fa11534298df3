"""Arkouda's names and habits: register/attach by name, ak.int64 and the
other dtypes, and Arkouda's functions (ak.power, ak.putmask, ak.broadcast,
...), each against numpy's answer."""

from __future__ import annotations

import gc
import uuid

import numpy as np
import pytest
from _opsdata import assert_same

import arktos as ak


def names_on(conn: ak.Connection) -> set[str]:
    return {entry["name"] for entry in conn.list_arrays()}


def unique_name(stem: str) -> str:
    return f"{stem}_{uuid.uuid4().hex[:8]}"


def test_register_outlives_the_pdarray_and_the_session(server) -> None:
    first = server.connect()
    data = np.array([1.5, np.nan, -0.0, 7.25])
    name = unique_name("fares")
    made = first.array(data) * 2.0
    old = made.name
    assert made.owned and not made.is_registered()
    assert made.register(name) is made
    assert made.name == name and made.is_registered() and not made.owned
    del made
    gc.collect()
    first.close()  # a closed session (or a dead kernel) leaves it too

    second = server.connect()
    try:
        assert old not in names_on(second)
        kept = second.attach(name)
        assert kept.is_registered()
        assert kept.to_ndarray().tobytes() == (data * 2.0).tobytes()
        # unregister: this pdarray owns it again, and dropping it deletes it
        kept.unregister()
        assert kept.owned and not kept.is_registered() and kept.name == name
        del kept
        gc.collect()
        assert name not in names_on(second)
    finally:
        second.close()


def test_register_refused_changes_nothing(conn: ak.Connection) -> None:
    taken = unique_name("taken")
    other = conn.array(np.arange(3, dtype=np.int32)).register(taken)
    a = conn.array(np.arange(5))
    old = a.name
    with pytest.raises(ak.NameInUseError, match=f"'{taken}' already exists.*nothing was renamed"):
        a.register(taken)
    assert a.name == old and a.owned and not a.is_registered()
    assert a.to_ndarray().tolist() == [0, 1, 2, 3, 4]
    assert other.to_ndarray().dtype == np.int32 and other.to_list() == [0, 1, 2]
    with pytest.raises(ValueError, match="new_name is empty"):
        a.register("")
    with pytest.raises(TypeError, match="new_name must be a str"):
        a.register(5)  # type: ignore[arg-type]
    # upload's name rule holds for a rename too (a stored name with a byte
    # past ASCII broke every client's list_arrays)
    for bad in ("a b", "a\x00b", "x" * 300, "caf\u00e9"):
        with pytest.raises(ValueError, match="array name"):
            a.register(bad)
    assert a.name == old and a.owned
    assert all(info["name"].isascii() for info in conn.list_arrays())
    other.delete()
    a.delete()
    with pytest.raises(ak.UnknownArrayError, match="was deleted"):
        a.register(unique_name("gone"))


def test_register_again_renames_and_own_name_keeps(conn: ak.Connection) -> None:
    first, second = unique_name("x"), unique_name("y")
    a = conn.array(np.arange(4)).register(first)
    a.register(first)  # its own name: kept as it is
    assert first in names_on(conn)
    a.register(second)
    names = names_on(conn)
    assert second in names and first not in names
    a.delete()  # an explicit delete removes a registered array
    assert second not in names_on(conn)


def test_register_a_key_of_a_groupby_not_yet_grouped(conn: ak.Connection) -> None:
    rng = np.random.default_rng(5)
    keys_np = rng.integers(0, 7, 1000)
    vals_np = rng.integers(-50, 50, 1000)
    keys, vals = conn.array(keys_np), conn.array(vals_np)
    g = ak.GroupBy(keys)
    keys.register(unique_name("keys"))
    k, s = g.sum(vals)
    want_k, inverse = np.unique(keys_np, return_inverse=True)
    assert k.to_ndarray().tolist() == want_k.tolist()
    assert s.to_ndarray().tolist() == np.bincount(inverse, weights=vals_np).astype(np.int64).tolist()
    keys.delete()


def test_names_or_pdarrays_where_a_name_is_asked(conn: ak.Connection) -> None:
    a = conn.array(np.arange(3))
    assert conn.info(a) == conn.info(a.name)
    b = conn.array(np.arange(2))
    name = b.name
    assert conn.delete([b]) == 1
    assert name not in names_on(conn)
    for bad in (3, None, 1.5):
        with pytest.raises(TypeError, match=r"info\(\) takes an array's name \(a str\) or a pdarray"):
            conn.info(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"delete\(\) takes"):
        conn.delete([a.name, 7])  # type: ignore[list-item]
    assert a.name in names_on(conn)  # nothing was sent


def test_dtype_names(default_conn: ak.Connection) -> None:
    for name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64"):
        assert getattr(ak, name) is getattr(np, name)
    assert ak.dtype is np.dtype
    assert ak.zeros(3, dtype=ak.float32).dtype == np.float32
    assert ak.arange(3).astype(ak.uint8).dtype == np.uint8
    assert ak.ones(2, dtype=ak.bool_).to_list() == [True, True]


def test_to_list_and_fill(default_conn: ak.Connection) -> None:
    data = np.array([3, -1, 2**40], dtype=np.int64)
    a = ak.array(data)
    assert a.to_list() == a.tolist() == data.tolist()
    assert all(type(x) is int for x in a.to_list())
    f = ak.array(np.zeros(4))
    f.fill(2.5)
    assert f.to_list() == [2.5] * 4
    a.fill(1.7)  # numpy's cast, as np.ndarray.fill
    want = data.copy()
    want.fill(1.7)
    assert a.to_list() == want.tolist()


DATA = {
    "int64": np.array([0, 5, -3, 2**40, -(2**40), 7, 1, 1], dtype=np.int64),
    "float64": np.array([0.5, -0.0, 3.25, -7.5, 1e300, 2.0, np.inf, 9.0]),
    "uint8": np.array([0, 255, 3, 7, 9, 1, 2, 200], dtype=np.uint8),
    "float32": np.array([1.5, -2.25, 0.0, 3.0, 8.0, -1.0, 2.5, 4.0], dtype=np.float32),
}


def same(got, want) -> None:
    got_np = got.to_ndarray() if isinstance(got, ak.pdarray) else np.asarray(got)
    want_np = np.asarray(want)
    assert got_np.dtype == want_np.dtype, (got_np.dtype, want_np.dtype)
    assert got_np.tobytes() == want_np.tobytes(), (got_np, want_np)


@pytest.mark.parametrize("dt", sorted(DATA))
def test_arkouda_functions_equal_numpy(default_conn: ak.Connection, dt: str) -> None:
    x = DATA[dt]
    y = x[::-1].copy()
    a, b = ak.array(x), ak.array(y)
    with np.errstate(all="ignore"):
        same(ak.power(a, 2), np.power(x, 2))
        same(ak.square(a), np.square(x))
        same(ak.fmod(a, np.array(3, dtype=x.dtype)), np.fmod(x, np.array(3, dtype=x.dtype)))
        same(ak.setxor1d(a, a[:3] + 1), np.setxor1d(x, x[:3] + 1))
        same(ak.zeros_like(a), np.zeros_like(x))
        same(ak.ones_like(a, dtype=ak.float64), np.ones_like(x, dtype=np.float64))
        same(ak.full_like(a, 7), np.full_like(x, 7))
        same(ak.cast(a, ak.int16), x.astype(np.int16))
        same(ak.median(a), np.median(x))
        same(ak.percentile(a, [10, 50, 90]), np.percentile(x, [10, 50, 90]))
        same(ak.quantile(a, 0.25), np.quantile(x, 0.25))
        if dt.startswith("float"):
            assert_same(ak.arctan2(a, b), np.arctan2(x, y), ulps=4)  # Go's math (docs/operations.md)
            assert_same(ak.hypot(a, b), np.hypot(x, y), ulps=4)
            got = ak.dot(a, b)
            want = np.dot(x, y)
            assert got == pytest.approx(want, rel=1e-12, nan_ok=True) and type(got) is type(want)
        else:
            same(ak.dot(a, b), np.dot(x, y))


@pytest.mark.parametrize("values", [
    np.array([3, 2]), np.array([-1]), "same length", 9, 9.5, [-33, -44, -55], np.array([7], np.uint8),
])
def test_putmask_equals_numpy(default_conn: ak.Connection, values) -> None:
    x = np.arange(10, dtype=np.int64)
    mask = (x > 2) & (x != 6)
    vals = x ** 2 if isinstance(values, str) else values
    want = x.copy()
    np.putmask(want, mask, vals)
    a = ak.array(x)
    ak.putmask(a, ak.array(mask), ak.array(vals) if isinstance(vals, np.ndarray) else vals)
    same(a, want)


def test_putmask_refusals(default_conn: ak.Connection) -> None:
    a = ak.arange(4)
    with pytest.raises(ValueError, match="mask must be a bool pdarray of a's length 4"):
        ak.putmask(a, ak.arange(3) > 1, ak.array([1]))
    with pytest.raises(TypeError, match="according to the rule 'safe'"):  # numpy's own refusal
        ak.putmask(a, a > 1, ak.array([2.5]))
    with pytest.raises(ValueError, match="mask must be a bool pdarray"):
        ak.putmask(a, ak.arange(4), 1)
    with pytest.raises(ValueError, match="values is empty but mask selects"):
        ak.putmask(a, a > 1, ak.array(np.zeros(0, dtype=np.int64)))
    with pytest.raises(TypeError, match="putmask takes a pdarray"):
        ak.putmask(np.arange(4), a > 1, 1)  # type: ignore[arg-type]
    assert a.to_list() == [0, 1, 2, 3]


def test_broadcast_equals_numpy(default_conn: ak.Connection) -> None:
    rng = np.random.default_rng(3)
    keys_np = rng.integers(0, 50, 5000)
    vals_np = rng.standard_normal(5000)
    g = ak.GroupBy(ak.array(keys_np))
    _, sums = g.sum(ak.array(vals_np))
    # back to the rows in their original order, as GroupBy.broadcast
    same(ak.broadcast(g.segments, sums, permutation=g.permutation), g.broadcast(sums))
    # in grouped order, and with empty segments (repeated starts)
    seg_np = np.array([0, 2, 2, 5, 9, 9])
    per_np = np.array([10, 20, 30, 40, 50, 60])
    want = per_np[np.searchsorted(seg_np, np.arange(12), side="right") - 1]
    same(ak.broadcast(ak.array(seg_np), ak.array(per_np), size=12), want)
    assert ak.broadcast(ak.array(seg_np), ak.array(per_np), size=0).size == 0
    with pytest.raises(ValueError, match="first segment starts at 2"):
        ak.broadcast(ak.array(seg_np + 2), ak.array(per_np), size=12)
    with pytest.raises(ValueError, match="give size"):
        ak.broadcast(ak.array(seg_np), ak.array(per_np))
    with pytest.raises(ValueError, match="6 segments but 2 values"):
        ak.broadcast(ak.array(seg_np), ak.array(per_np[:2]), size=12)
    with pytest.raises(ValueError, match="differs from the permutation's length"):
        ak.broadcast(g.segments, sums, size=3, permutation=g.permutation)


def test_get_mem_avail(default_conn: ak.Connection) -> None:
    assert ak.get_mem_avail() == ak.mem_info()["free"] > 0


@pytest.mark.parametrize("dt", sorted(DATA))
def test_methods_equal_numpy(default_conn: ak.Connection, dt: str) -> None:
    """numpy's and Arkouda's pdarray methods, each against numpy's answer."""
    x = np.concatenate([DATA[dt], DATA[dt][:3]])
    if dt.startswith("float"):
        x[2] = np.nan
    a = ak.array(x)
    s = a.copy()
    s.sort()  # in place, NaN last
    assert s.name != a.name
    same(s, np.sort(x))
    same(a, x)  # the copy was sorted, not a
    assert s.is_sorted() and a.is_sorted() == bool(np.all(x[:-1] <= x[1:]))
    values, counts = a.value_counts()
    want_v, want_c = np.unique(x, return_counts=True)
    if dt.startswith("float"):  # np.unique counts each NaN apart; value_counts groups them
        keep = ~np.isnan(want_v)
        want_v = np.append(want_v[keep], np.array([np.nan], want_v.dtype))
        want_c = np.append(want_c[keep], np.isnan(x).sum())
    same(values, want_v)
    same(counts, want_c)
    same(a.mink(3), np.sort(x)[:3])
    same(a.maxk(3), np.sort(x)[-3:])
    same(a.argmink(3), np.argsort(x, kind="stable")[:3])
    same(a.argmaxk(3), np.argsort(x, kind="stable")[-3:])
    probe = x[:4].copy()
    same(s.searchsorted(ak.array(probe)), np.searchsorted(np.sort(x), probe))
    same(s.searchsorted(ak.array(probe), side="right"), np.searchsorted(np.sort(x), probe, side="right"))
    (nz,) = a.nonzero()
    same(nz, np.nonzero(x)[0])
    if not dt.startswith("float"):
        same(a.dot(a), x.dot(x))
        same(a.ptp(), np.ptp(x))
    idx = np.array([4, 0, 4, len(x) - 1])
    same(a.take(ak.array(idx)), x.take(idx))
    same(a.repeat(2), x.repeat(2))
    same(a.flatten(), x.flatten())
    assert a.ravel() is a
    assert ak.array(x[:1]).item() == x[:1].item() and type(ak.array(x[:1]).item()) is type(x[:1].item())
    with pytest.raises(ValueError, match="size 1"):
        a.item()
    with pytest.raises(ValueError, match="axis must be None, 0 or -1"):
        a.sort(axis=1)


def test_arkouda_signatures(conn: ak.Connection) -> None:
    """Arkouda's keywords on functions Arktos offers under its names:
    ak.array(dtype=), randint of a float dtype (uniform floats),
    concatenate(ordered=), argsort(ascending=False)."""
    assert conn.array([1, 2, 3], dtype=np.uint64).dtype == np.uint64
    r = ak.randint(0, 1, 1000, dtype=np.float64, seed=3, conn=conn).to_ndarray()
    assert r.dtype == np.float64 and 0 <= r.min() and r.max() < 1 and len(np.unique(r)) > 900
    assert ak.randint(2, 5, 10, dtype=np.float32, seed=3, conn=conn).dtype == np.float32
    a, b = conn.array(np.arange(2)), conn.array(np.arange(3))
    assert ak.concatenate([a, b], ordered=False).to_ndarray().tolist() == [0, 1, 0, 1, 2]
    x = np.array([3.0, np.nan, 1.0, 3.0])
    got = ak.argsort(conn.array(x), ascending=False).to_ndarray()
    assert got.tolist() == np.argsort(x, kind="stable")[::-1].tolist()


@pytest.mark.parametrize("dtype", ["int64", "float64", "uint8", "int16", "bool"])
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_diff_matches_numpy(conn: ak.Connection, dtype: str, n: int) -> None:
    rng = np.random.default_rng(3)
    for size in (0, 1, 4, 1000):
        x = (rng.integers(0, 200, size) > 100) if dtype == "bool" else rng.integers(0, 200, size).astype(dtype)
        got = ak.diff(conn.array(x), n).to_ndarray()
        want = np.diff(x, n)
        assert got.dtype == want.dtype and np.array_equal(got, want), (dtype, n, size)
    with pytest.raises(ValueError, match="non-negative"):
        ak.diff(conn.array(np.arange(3)), -1)


def test_groupby_reductions_all_aggregate(conn: ak.Connection) -> None:
    keys = conn.array(np.arange(100) % 7)
    g = ak.GroupBy(keys)
    assert "sum" in ak.GroupBy.Reductions and "size" not in ak.GroupBy.Reductions
    for op in sorted(ak.GroupBy.Reductions):
        vals = conn.array(np.arange(100) % 3 == 0) if op in ("any", "all") else conn.array(np.arange(100, dtype=np.int64))
        _, res = g.aggregate(vals, op)
        assert res.size == 7, op

"""ak.bigint: arrays of non-negative integers of any size, as uint64 limbs on the server, checked against Python's own ints."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arktos as ak

MAX_BITS = (-1, 0, 1, 31, 63, 64, 65, 100, 127, 128, 200)


def wrap(values: list[int], max_bits: int) -> list[int]:
    return values if max_bits == -1 else [v % (1 << max_bits) for v in values]


def values_of(bits: int, n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    out = [rng.getrandbits(rng.randint(1, bits)) for _ in range(n)]
    # the edges: 0, limbs full and limbs just past full
    edges = [0, 1, (1 << 64) - 1, 1 << 64, (1 << 128) - 1, 1 << 128]
    return [v for v in edges if v.bit_length() <= bits] + out


def test_round_trip_exact(conn: ak.Connection) -> None:
    xs = values_of(260, 500, 1)
    a = conn.array(np.array(xs, dtype=object))
    assert isinstance(a, ak.BigIntArray) and a.dtype == ak.bigint and a.dtype == "bigint"
    assert a.size == len(a) == len(xs) and a.shape == (len(xs),) and a.ndim == 1
    assert len(a.limbs) == 5 and a.nbytes == 8 * 5 * len(xs)
    got = a.to_ndarray()
    assert got.dtype == object and got.tolist() == xs
    assert a.to_list() == xs and all(type(v) is int for v in a.to_list())
    assert a[3] == xs[3] and a[-1] == xs[-1]
    # a list of Python ints past 64 bits is a bigint array unasked
    assert conn.array(xs).to_list() == xs
    # num_bits is a hint of the width; the values still decide
    assert conn.array(xs[:4], dtype=ak.bigint, num_bits=256).to_list() == xs[:4]


@pytest.mark.parametrize("max_bits", MAX_BITS)
def test_max_bits_wraps_every_value(conn: ak.Connection, max_bits: int) -> None:
    xs = values_of(250, 300, max_bits + 2)
    a = conn.array(xs, dtype=ak.bigint, max_bits=max_bits)
    assert a.max_bits == max_bits
    assert a.to_list() == wrap(xs, max_bits)
    # limbs as Arkouda's bigint_from_uint_arrays takes them, most significant first
    hi = conn.array(np.array([v >> 64 & (2**64 - 1) for v in xs], dtype=np.uint64))
    lo = conn.array(np.array([v & (2**64 - 1) for v in xs], dtype=np.uint64))
    b = ak.bigint_from_uint_arrays([hi, lo], max_bits=max_bits)
    assert b.to_list() == wrap([v % (1 << 128) for v in xs], max_bits)
    # setting max_bits wraps what is there
    c = ak.bigint_from_uint_arrays([hi, lo])
    c.max_bits = max_bits
    assert c.to_list() == b.to_list()


@pytest.mark.parametrize("max_bits", MAX_BITS)
def test_operations_match_python_ints(conn: ak.Connection, max_bits: int) -> None:
    xs = values_of(190, 200, 10 + max_bits)
    ys = values_of(190, 200, 20 + max_bits)
    n = min(len(xs), len(ys))
    xs, ys = wrap(xs[:n], max_bits), wrap(ys[:n], max_bits)
    a = conn.array(xs, dtype=ak.bigint, max_bits=max_bits)
    b = conn.array(ys, dtype=ak.bigint, max_bits=max_bits)
    ops: dict[str, Callable[[Any, Any], Any]] = {
        "&": lambda p, q: p & q, "|": lambda p, q: p | q, "^": lambda p, q: p ^ q,
        "+": lambda p, q: p + q, "*": lambda p, q: p * q,
    }
    for name, f in ops.items():
        want = wrap([f(p, q) for p, q in zip(xs, ys, strict=True)], max_bits)
        assert f(a, b).to_list() == want, name
        # an int operand, either side (past 64 bits too), and a uint64 pdarray
        for k in (3, (1 << 70) + 12345, 0):
            assert f(a, k).to_list() == wrap([f(p, k) for p in xs], max_bits), (name, k)
            assert f(k, a).to_list() == wrap([f(k, p) for p in xs], max_bits), (name, k)
        small = conn.array(np.array([q & (2**64 - 1) for q in ys], dtype=np.uint64))
        assert f(a, small).to_list() == wrap([f(p, q & (2**64 - 1)) for p, q in zip(xs, ys, strict=True)],
                                             max_bits), name
    for s in (0, 1, 10, 63, 64, 65, 130, 400):
        assert (a >> s).to_list() == [p >> s for p in xs], s
        assert (a << s).to_list() == wrap([p << s for p in xs], max_bits), s
    cmps: dict[str, Callable[[Any, Any], Any]] = {
        "==": lambda p, q: p == q, "!=": lambda p, q: p != q, "<": lambda p, q: p < q,
        "<=": lambda p, q: p <= q, ">": lambda p, q: p > q, ">=": lambda p, q: p >= q,
    }
    ys2 = list(xs[: n // 2]) + ys[n // 2:]  # half equal, so == and <= meet both answers
    b2 = conn.array(ys2, dtype=ak.bigint, max_bits=max_bits)
    for name, f in cmps.items():
        got = f(a, b2)
        assert got.dtype == np.bool_ and got.to_list() == [f(p, q) for p, q in zip(xs, ys2, strict=True)], name
        assert f(a, 5).to_list() == [f(p, 5) for p in xs], name


def test_subtraction(conn: ak.Connection) -> None:
    xs = values_of(150, 100, 3)
    ys = [v // 3 for v in xs]
    a, b = conn.array(xs, dtype=ak.bigint), conn.array(ys, dtype=ak.bigint)
    assert (a - b).to_list() == [p - q for p, q in zip(xs, ys, strict=True)]
    assert (a - 0).to_list() == xs
    # below zero: refused without max_bits, wrapped with it
    with pytest.raises(ValueError, match="below zero.*max_bits"):
        b - a - 1
    m = 96
    wa, wb = conn.array(xs, dtype=ak.bigint, max_bits=m), conn.array(ys, dtype=ak.bigint, max_bits=m)
    assert (wb - wa).to_list() == [(q % 2**m - p % 2**m) % 2**m for p, q in zip(xs, ys, strict=True)]
    assert (5 - wa).to_list() == [(5 - p % 2**m) % 2**m for p in xs]


def test_stream_as_arkoudas_benchmark(conn: ak.Connection) -> None:
    # bigint_stream.py: c = a + b * alpha, on two-limb values
    rng = np.random.default_rng(4)
    hi, lo = (rng.integers(0, 2**32, 1000, dtype=np.uint64) for _ in range(2))
    a = ak.bigint_from_uint_arrays([conn.array(hi), conn.array(lo)])
    b = ak.bigint_from_uint_arrays([conn.array(lo), conn.array(hi)])
    av = [(int(h) << 64) + int(lo_) for h, lo_ in zip(hi, lo, strict=True)]
    bv = [(int(lo_) << 64) + int(h) for h, lo_ in zip(hi, lo, strict=True)]
    for alpha in (1, 3, 2**40 + 1):
        assert (a + b * alpha).to_list() == [p + q * alpha for p, q in zip(av, bv, strict=True)]
    u = a.bigint_to_uint_arrays()
    assert [x.to_ndarray().tolist() for x in u] == [hi.tolist(), lo.tolist()]


def test_gathers_and_slices(conn: ak.Connection) -> None:
    xs = values_of(200, 300, 5)
    a = conn.array(xs, dtype=ak.bigint, max_bits=180)
    want = wrap(xs, 180)
    perm = np.random.default_rng(2).permutation(len(xs))
    got = a[conn.array(perm)]
    assert isinstance(got, ak.BigIntArray) and got.max_bits == 180
    assert got.to_list() == [want[i] for i in perm]
    mask = np.array([v % 3 == 0 for v in want])
    assert a[conn.array(mask)].to_list() == [v for v, m in zip(want, mask, strict=True) if m]
    assert a[10:20].to_list() == want[10:20] and a[::-7].to_list() == want[::-7]
    assert "dtype=bigint" in repr(a) and repr(a[:2]) == f"array({want[:2]}, dtype=bigint)"


def test_groupby_bigint_keys(conn: ak.Connection) -> None:
    rng = random.Random(6)
    distinct = values_of(200, 40, 6)
    xs = [rng.choice(distinct) for _ in range(3000)]
    a = conn.array(xs, dtype=ak.bigint)
    g = ak.GroupBy(a)
    assert g.nkeys == 1
    keys, counts = g.size()
    assert isinstance(keys, ak.BigIntArray)
    assert keys.to_list() == sorted(set(xs))
    assert counts.to_list() == [xs.count(k) for k in sorted(set(xs))]
    # the same groups whatever the row order (Arkouda's groupby check)
    perm = conn.array(np.random.default_rng(7).permutation(len(xs)))
    g2 = ak.GroupBy(a[perm])
    assert bool((g.unique_keys == g2.unique_keys).all())
    # beside another key; values aggregate as for any key
    other = conn.array(np.array([v % 2 for v in range(len(xs))]))
    vals = conn.array(np.arange(len(xs), dtype=np.int64))
    (k1, k2), sums = ak.GroupBy([a, other]).sum(vals)
    want: dict[tuple[int, int], int] = {}
    for i, v in enumerate(xs):
        want[(v, i % 2)] = want.get((v, i % 2), 0) + i
    assert list(zip(k1.to_list(), k2.to_list(), strict=True)) == sorted(want)
    assert sums.to_list() == [want[k] for k in sorted(want)]
    with pytest.raises(NotImplementedError, match="bigint keys cannot be registered"):
        g.register("bigint_groups")


def test_bad_input_is_refused_clearly(conn: ak.Connection) -> None:
    u = conn.array(np.arange(3, dtype=np.uint64))
    with pytest.raises(ValueError, match="negative"):
        conn.array([-1, 1 << 70], dtype=ak.bigint)
    with pytest.raises(ValueError, match="negative"):
        conn.array(np.array([-1, 2]), dtype=ak.bigint)
    with pytest.raises(TypeError, match="made from ints; got str"):
        conn.array(np.array([1, "x"], dtype=object), dtype=ak.bigint)
    with pytest.raises(TypeError, match="made from ints; got bool"):
        conn.array([True, 1 << 70], dtype=ak.bigint)
    # numpy integers among Python ints are ints
    assert conn.array(np.array([np.uint64(3), 1 << 70], dtype=object)).to_list() == [3, 1 << 70]
    assert conn.array([], dtype=ak.bigint).to_list() == []
    with pytest.raises(TypeError, match="float64"):
        conn.array(np.array([1.5]), dtype=ak.bigint)
    with pytest.raises(ValueError, match="max_bits must be -1"):
        ak.bigint_from_uint_arrays([u], max_bits=-2)
    with pytest.raises(TypeError, match="uint64 pdarrays, got int64.*astype"):
        ak.bigint_from_uint_arrays([conn.array(np.arange(3))])
    with pytest.raises(ValueError, match="one length"):
        ak.bigint_from_uint_arrays([u, u[:2]])
    b = ak.bigint_from_uint_arrays([u])
    with pytest.raises(TypeError, match="non-negative int"):
        b >> -1
    with pytest.raises(ValueError, match="negative values"):
        b + (-3)
    with pytest.raises(ValueError, match="lengths 3 and 2 differ"):
        b + ak.bigint_from_uint_arrays([u[:2]])
    with pytest.raises(TypeError, match="integer operands, got a float64"):
        b + conn.array(np.ones(3))
    with pytest.raises(ValueError, match="names no bigint"):
        conn.array([1 << 70], name="big")
    # nothing stored was lost along the way
    assert u.to_list() == [0, 1, 2] and b.to_list() == [0, 1, 2]


def test_power_of_two_division_and_limbs(conn: ak.Connection) -> None:
    xs = values_of(200, 100, 8)
    a = conn.array(xs, dtype=ak.bigint)
    for k in (0, 1, 7, 64, 65, 130):
        assert (a % (1 << k)).to_list() == [v % (1 << k) for v in xs], k
        assert (a // (1 << k)).to_list() == [v // (1 << k) for v in xs], k
    with pytest.raises(NotImplementedError, match="power of two.*got 10"):
        a % 10
    # as many limbs as the largest value needs, as Arkouda's
    u = conn.array(np.arange(4, dtype=np.uint64))
    z = conn.array(np.zeros(4, dtype=np.uint64))
    assert len(ak.bigint_from_uint_arrays([z, z, u]).bigint_to_uint_arrays()) == 1
    assert len(ak.bigint_from_uint_arrays([u, z], max_bits=200).bigint_to_uint_arrays()) == 2
    assert len(ak.bigint_from_uint_arrays([u, z], max_bits=64).bigint_to_uint_arrays()) == 1

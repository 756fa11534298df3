"""A user's file that mypy --strict must accept (test_typing.py): pdarray operators and the connection API, typed."""

from __future__ import annotations

import numpy as np

import arktos as ak


def arithmetic(a: ak.pdarray, b: ak.pdarray) -> list[ak.pdarray]:
    return [a + b, a - 1, a * 2.5, a / b, a // 2, a % b, a ** 2, a & b, a | 1, a ^ b, a << 1, a >> b,
            1 + a, 2.5 - a, 3 * a, 1 / a, 7 // a, 5 % a, 2 ** a, 1 & a, 1 | a, 1 ^ a, 1 << a, 8 >> a,
            a + np.int32(3), a + [1, 2, 3], a * np.arange(3),
            -a, +a, abs(a), ~a]


def comparisons(a: ak.pdarray, b: ak.pdarray) -> list[ak.pdarray]:
    return [a < b, a <= 1, a > 0.5, a >= b, a == b, a != 1, 1 < a, (a < b) & (a > 0), ~(a == b)]


def in_place(a: ak.pdarray) -> ak.pdarray:
    a += 1
    a *= 2
    a &= 3
    return a


def session(url: str) -> ak.pdarray:
    conn: ak.Connection = ak.connect(url)
    x: ak.pdarray = conn.array([1, 2, 3])
    y: ak.pdarray = ak.array(np.arange(3))
    total = ak.sum(x + y)
    print(total, ak.get_config()["max_frame_size"])
    return ak.where(x > 1, x, y)


def local_server() -> ak.pdarray:
    with ak.Server() as srv:
        conn: ak.Connection = srv.connection()
        return srv.connect().array([1.0]) + conn.attach("x")

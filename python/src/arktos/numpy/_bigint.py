"""Arbitrary-precision non-negative integers on the server (Arkouda's ``ak.bigint``), as uint64 limb arrays.

A bigint array is a list of uint64 pdarrays of one length, its limbs, most
significant first (the order of Arkouda's ``bigint_from_uint_arrays``): value i
is ``sum(limb[j][i] << 64 * (k - 1 - j))``. Every operation is a few
elementwise requests on the limbs (carries as comparisons, a product as
32-bit digits), so it runs on the server's cores and no value crosses the
wire until ``to_ndarray``. ``max_bits`` (-1: none) wraps every result modulo
``2**max_bits``, as Arkouda's does. Unlike Arkouda's, values are never
negative: a subtraction that would go below zero without ``max_bits`` is
refused, saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._pdarray import pdarray

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["BigIntArray", "bigint", "bigint_from_uint_arrays"]

_MASK32 = 0xFFFF_FFFF
_MASK64 = (1 << 64) - 1


class _BigIntDType:
    """Arkouda's ``ak.bigint``: the dtype of a BigIntArray. It compares equal
    to itself and to its name ``"bigint"``.

    >>> ak.bigint.name, ak.array([1 << 70]).dtype == ak.bigint
    ('bigint', True)
    """

    name = "bigint"
    kind = "O"

    def __repr__(self) -> str:
        return "dtype(bigint)"

    def __str__(self) -> str:
        return "bigint"

    def __eq__(self, other: object) -> bool:
        return other is self or other == "bigint" or getattr(other, "name", None) == "bigint"

    def __hash__(self) -> int:
        return hash("bigint")

    def __call__(self, value: Any) -> int:
        return int(value)


#: The bigint dtype (``ak.bigint``; ``ak.bigint.name == "bigint"``).
bigint = _BigIntDType()


def is_bigint_dtype(dtype: Any) -> bool:
    return dtype is bigint or isinstance(dtype, type) and dtype.__name__ == "bigint" or \
        isinstance(dtype, str) and dtype == "bigint" or getattr(dtype, "name", None) == "bigint"


def _limbs_for(max_bits: int) -> int:
    return max(1, -(-max_bits // 64))


def _check_max_bits(max_bits: Any) -> int:
    if isinstance(max_bits, (bool, np.bool_)) or not isinstance(max_bits, (int, np.integer)) or max_bits < -1:
        raise ValueError(f"max_bits must be -1 (no maximum) or a non-negative int, got {max_bits!r}")
    return int(max_bits)


class BigIntArray:
    """A server array of non-negative integers of any size (``ak.bigint``).

    >>> a = ak.bigint_from_uint_arrays([ak.array([1, 0], dtype=ak.uint64), ak.array([5, 7], dtype=ak.uint64)])
    >>> a.to_ndarray()
    array([18446744073709551621, 7], dtype=object)
    """

    __array_priority__ = 1000  # (numpy operands defer to it)

    def __init__(self, limbs: Sequence[pdarray], max_bits: int = -1) -> None:
        limbs = list(limbs)
        if not limbs:
            raise ValueError("a bigint array needs at least one uint64 limb array")
        if not all(isinstance(x, pdarray) and x.dtype == np.uint64 for x in limbs):
            raise TypeError("a bigint array's limbs are uint64 pdarrays; got "
                            + ", ".join(str(getattr(x, "dtype", type(x).__name__)) for x in limbs))
        if any(x.size != limbs[0].size for x in limbs):
            raise ValueError("a bigint array's limbs must have one length, got "
                             + ", ".join(str(x.size) for x in limbs))
        self._max_bits = _check_max_bits(max_bits)
        self.limbs = _wrap(limbs, self._max_bits)

    # -- shape and dtype -------------------------------------------------------

    @property
    def dtype(self) -> _BigIntDType:
        """``ak.bigint``.

        >>> ak.array([1 << 70], dtype=ak.bigint).dtype
        dtype(bigint)
        """
        return bigint

    @property
    def size(self) -> int:
        """The number of values.

        >>> ak.array([1 << 70, 5]).size
        2
        """
        return self.limbs[0].size

    def __len__(self) -> int:
        return self.size

    @property
    def shape(self) -> tuple[int]:
        """``(size,)``: a bigint array is 1-D.

        >>> ak.array([1 << 70, 5]).shape
        (2,)
        """
        return (self.size,)

    @property
    def ndim(self) -> int:
        """1.

        >>> ak.array([1 << 70, 5]).ndim
        1
        """
        return 1

    @property
    def nbytes(self) -> int:
        """Bytes on the server: 8 per limb per value.

        >>> ak.array([1 << 70, 5]).nbytes
        32
        """
        return 8 * self.size * len(self.limbs)

    @property
    def _conn(self) -> Connection:
        return self.limbs[0]._conn

    @property
    def max_bits(self) -> int:
        """Values wrap modulo ``2**max_bits`` (-1: they never do); setting it
        wraps the values there.

        >>> a = ak.array([1 << 70, 300], dtype=ak.bigint)
        >>> a.max_bits = 8
        >>> a.max_bits, a.to_list()
        (8, [0, 44])
        """
        return self._max_bits

    @max_bits.setter
    def max_bits(self, value: int) -> None:
        self._max_bits = _check_max_bits(value)
        self.limbs = _wrap(self.limbs, self._max_bits)

    def _bits_with(self, other: Any) -> int:
        """The max_bits of a result of self and other: the larger bound
        where both have one, else the one that has it."""
        bits = self._max_bits
        if isinstance(other, BigIntArray) and other._max_bits != -1:
            bits = other._max_bits if bits == -1 else max(bits, other._max_bits)
        return bits

    def _like(self, limbs: list[pdarray], other: Any = None) -> BigIntArray:
        return BigIntArray(limbs, self._bits_with(other))

    # -- moving it ---------------------------------------------------------------

    def to_ndarray(self) -> NDArray[np.object_]:
        """The values as Python ints (a numpy object array).

        >>> ak.array([1 << 70, 5]).to_ndarray()
        array([1180591620717411303424, 5], dtype=object)
        """
        # The limbs side by side, big-endian, then one int.from_bytes per
        # value: making the Python ints is the cost (about 0.1 us each);
        # shifts on object arrays or lists made each value twice or more.
        n, k = self.size, len(self.limbs)
        table = np.empty((n, k), dtype=">u8")
        for j, limb in enumerate(self.limbs):
            table[:, j] = limb.to_ndarray()
        raw, w, from_bytes = table.tobytes(), 8 * k, int.from_bytes
        out = np.empty(n, dtype=object)
        out[:] = [from_bytes(raw[i:i + w], "big") for i in range(0, w * n, w)]
        return out

    def to_list(self) -> list[int]:
        """The values as a list of Python ints.

        >>> ak.array([1 << 70, 5]).to_list()
        [1180591620717411303424, 5]
        """
        return [int(v) for v in self.to_ndarray()]

    def bigint_to_uint_arrays(self) -> list[pdarray]:
        """Its uint64 limbs, most significant first, as many as its largest
        value needs (at least one), as Arkouda's.

        >>> [x.to_list() for x in ak.array([1 << 64 | 3, 7]).bigint_to_uint_arrays()]
        [[1, 0], [3, 7]]
        """
        return _trim(list(self.limbs), 1)

    def __repr__(self) -> str:
        if self.size <= 6:
            return f"array({self.to_list()}, dtype=bigint)"
        head, tail = self[:3].to_list(), self[-3:].to_list()
        return f"array([{', '.join(map(str, head))}, ..., {', '.join(map(str, tail))}], dtype=bigint)"

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            v = 0
            for limb in self.limbs:
                v = (v << 64) | int(limb[int(key)])
            return v
        return self._like([limb[key] for limb in self.limbs])

    # -- bitwise -----------------------------------------------------------------

    def _aligned(self, other: Any, what: str) -> tuple[list[pdarray], list[Any]]:
        """Its limbs and other's (a BigIntArray, pdarray or int), padded to
        one count (and to max_bits' count where that is larger)."""
        if isinstance(other, BigIntArray):
            theirs: list[Any] = list(other.limbs)
            if other.size != self.size:
                raise ValueError(f"bigint {what}: lengths {self.size} and {other.size} differ")
        elif isinstance(other, pdarray):
            if other.dtype.kind not in "iub":
                raise TypeError(f"bigint {what} takes integer operands, got a {other.dtype} array")
            if other.dtype.kind == "i" and bool((other < 0).any()):
                raise ValueError(f"bigint {what}: negative values are not held by a bigint array")
            theirs = [other.astype(np.uint64)]
        elif isinstance(other, (int, np.integer)) and not isinstance(other, (bool, np.bool_)):
            if int(other) < 0:
                raise ValueError(f"bigint {what}: negative values are not held by a bigint array (got {other})")
            theirs = _int_limbs(int(other))
        else:
            return NotImplemented, []
        ours: list[Any] = list(self.limbs)
        bits = self._bits_with(other)
        n = max(len(ours), len(theirs), _limbs_for(bits) if bits != -1 else 0)
        return _pad(ours, n), _pad(theirs, n)

    def _bitwise(self, other: Any, op: str) -> Any:
        ours, theirs = self._aligned(other, op)
        if ours is NotImplemented:
            return NotImplemented
        out = [_limb(self, _binop(op, a, b)) for a, b in zip(ours, theirs, strict=True)]
        return self._like(out, other)

    def __and__(self, other: Any) -> Any:
        return self._bitwise(other, "&")

    def __or__(self, other: Any) -> Any:
        return self._bitwise(other, "|")

    def __xor__(self, other: Any) -> Any:
        return self._bitwise(other, "^")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __rshift__(self, shift: Any) -> BigIntArray:
        s = _shift_amount(shift)
        q, r = divmod(s, 64)
        limbs = list(self.limbs[:len(self.limbs) - q]) if q < len(self.limbs) else []
        if not limbs:
            return self._like([_zeros(self)])
        if r:
            shifted = [limbs[0] >> r]
            for hi, lo in zip(limbs, limbs[1:], strict=False):
                shifted.append((lo >> r) | (hi << (64 - r)))
            limbs = shifted
        return self._like(limbs)

    def __lshift__(self, shift: Any) -> BigIntArray:
        s = _shift_amount(shift)
        q, r = divmod(s, 64)
        limbs: list[pdarray] = list(self.limbs)
        if r:
            shifted = [limbs[0] >> (64 - r)]
            for hi, lo in zip(limbs, limbs[1:], strict=False):
                shifted.append((hi << r) | (lo >> (64 - r)))
            shifted.append(limbs[-1] << r)
            limbs = shifted
        limbs += [_zeros(self) for _ in range(q)]
        return self._like(_trim(limbs, len(self.limbs)) if self._max_bits == -1 else limbs)

    # -- arithmetic --------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        ours, theirs = self._aligned(other, "+")
        if ours is NotImplemented:
            return NotImplemented
        out, carry = [], None
        for a, b in zip(reversed(ours), reversed(theirs), strict=True):
            s = _limb(self, a + b)
            c = s < _limb(self, a)
            if carry is not None:
                s2 = s + carry
                c = c | (s2 < carry)
                s = s2
            carry = c.astype(np.uint64)
            out.append(s)
        out.reverse()
        if self._bits_with(other) == -1 and carry is not None and bool(carry.any()):
            out.insert(0, carry)
        return self._like(out, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        ours, theirs = self._aligned(other, "-")
        if ours is NotImplemented:
            return NotImplemented
        return self._subtract(ours, theirs, other)

    def __rsub__(self, other: Any) -> Any:
        ours, theirs = self._aligned(other, "-")
        if ours is NotImplemented:
            return NotImplemented
        return self._subtract(theirs, ours, other)

    def _subtract(self, ours: list[Any], theirs: list[Any], other: Any) -> BigIntArray:
        out, borrow = [], None
        for a, b in zip(reversed(ours), reversed(theirs), strict=True):
            a, b = _limb(self, a), _limb(self, b)
            d = a - b
            c = a < b
            if borrow is not None:
                c = c | (d < borrow)
                d = d - borrow
            borrow = c.astype(np.uint64)
            out.append(d)
        out.reverse()
        if self._bits_with(other) == -1 and borrow is not None and bool(borrow.any()):
            raise ValueError("bigint subtraction went below zero, and a bigint array holds no negative values: "
                             "give the arrays a max_bits to wrap modulo 2**max_bits")
        return self._like(out, other)

    def __mul__(self, other: Any) -> Any:
        ours, theirs = self._aligned(other, "*")
        if ours is NotImplemented:
            return NotImplemented
        # 32-bit digits, least significant first: a digit product plus a
        # digit plus a carry, each below 2**32, is at most 2**64 - 1.
        a_digits = _digits(self, ours)
        b_digits = _digits(self, theirs)
        bounded = self._bits_with(other) != -1
        width = len(a_digits) if bounded else len(a_digits) + len(b_digits)
        acc: list[Any] = [0] * width
        for j, bj in enumerate(b_digits):
            if isinstance(bj, int) and bj == 0:
                continue
            carry: Any = 0
            for i, ai in enumerate(a_digits):
                if i + j >= width:
                    break
                t = _limb(self, ai * bj + acc[i + j] + carry)
                acc[i + j] = t & _MASK32
                carry = t >> 32
            else:  # (no row before this one reached past len(a_digits) + j - 1)
                if len(a_digits) + j < width:
                    acc[len(a_digits) + j] = carry
        digits = [_limb(self, d) for d in acc]
        if len(digits) % 2:
            digits.append(_zeros(self))
        limbs = [(digits[k + 1] << 32) | digits[k] for k in range(0, len(digits), 2)]
        limbs.reverse()
        return self._like(_trim(limbs, len(self.limbs)) if not bounded else limbs, other)

    __rmul__ = __mul__

    def _power_of_two(self, other: Any, what: str) -> int:
        if isinstance(other, (bool, np.bool_)) or not isinstance(other, (int, np.integer)) \
                or other <= 0 or int(other) & (int(other) - 1):
            raise NotImplementedError(f"bigint {what} takes a power of two (a mask or a shift); "
                                      f"got {other!r}: take the values to Python with to_ndarray() for others")
        return int(other).bit_length() - 1

    def __mod__(self, other: Any) -> BigIntArray:
        """Values modulo a power of two (their low bits)."""
        k = self._power_of_two(other, "%")
        masked: BigIntArray = self._bitwise((1 << k) - 1, "&")
        return masked

    def __floordiv__(self, other: Any) -> BigIntArray:
        """Values divided by a power of two, rounded down (a shift)."""
        return self >> self._power_of_two(other, "//")

    # -- comparisons ---------------------------------------------------------------

    def __eq__(self, other: object) -> Any:
        ours, theirs = self._aligned(other, "==")
        if ours is NotImplemented:
            return NotImplemented
        eq = None
        for a, b in zip(ours, theirs, strict=True):
            e = _binop("==", _limb(self, a), b)
            eq = e if eq is None else eq & e
        return eq

    def __ne__(self, other: object) -> Any:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq

    def _less(self, other: Any, strict: bool, what: str) -> Any:
        ours, theirs = self._aligned(other, what)
        if ours is NotImplemented:
            return NotImplemented
        res = None
        for a, b in zip(reversed(ours), reversed(theirs), strict=True):
            a = _limb(self, a)
            lt = _binop("<", a, b)
            if res is None:
                res = lt if strict else lt | _binop("==", a, b)
            else:
                res = lt | (_binop("==", a, b) & res)
        return res

    def __lt__(self, other: Any) -> Any:
        return self._less(other, True, "<")

    def __le__(self, other: Any) -> Any:
        return self._less(other, False, "<=")

    def __gt__(self, other: Any) -> Any:
        le = self._less(other, False, ">")
        return le if le is NotImplemented else ~le

    def __ge__(self, other: Any) -> Any:
        lt = self._less(other, True, ">=")
        return lt if lt is NotImplemented else ~lt

    __hash__ = None  # type: ignore[assignment]


def _binop(op: str, a: Any, b: Any) -> pdarray:
    if op == "&":
        return a & b  # type: ignore[no-any-return]
    if op == "|":
        return a | b  # type: ignore[no-any-return]
    if op == "^":
        return a ^ b  # type: ignore[no-any-return]
    if op == "==":
        return a == b  # type: ignore[no-any-return]
    if op == "<":
        return a < b  # type: ignore[no-any-return]
    raise AssertionError(op)


def _shift_amount(shift: Any) -> int:
    if isinstance(shift, (bool, np.bool_)) or not isinstance(shift, (int, np.integer)) or shift < 0:
        raise TypeError(f"a bigint array shifts by a non-negative int, got {shift!r}")
    return int(shift)


def _filled(conn: Connection, size: int, value: int) -> pdarray:
    """A uint64 array of `value` (the server's full; _ops, which would make
    it, imports this module through _connection)."""
    result, _ = conn._request("full", {"size": int(size), "dtype": "uint64", "value": int(value)})
    return conn._pdarray(result, owned=True)


def _zeros(like: BigIntArray) -> pdarray:
    return _filled(like._conn, like.size, 0)


def _limb(like: BigIntArray, x: Any) -> pdarray:
    """x as a uint64 limb array (an int: filled)."""
    if isinstance(x, pdarray):
        return x if x.dtype == np.uint64 else x.astype(np.uint64)
    return _filled(like._conn, like.size, int(x))


def _int_limbs(v: int) -> list[Any]:
    limbs = []
    while True:
        limbs.append(v & _MASK64)
        v >>= 64
        if not v:
            break
    return limbs[::-1]


def _pad(limbs: list[Any], n: int) -> list[Any]:
    return [0] * (n - len(limbs)) + limbs


def _digits(like: BigIntArray, limbs: list[Any]) -> list[Any]:
    """32-bit digits (uint64 arrays or ints), least significant first."""
    out: list[Any] = []
    for limb in reversed(limbs):
        if isinstance(limb, pdarray):
            out += [limb & _MASK32, limb >> 32]
        else:
            out += [int(limb) & _MASK32, int(limb) >> 32]
    return out


def _trim(limbs: list[pdarray], keep: int) -> list[pdarray]:
    """Drop leading limbs that are zero everywhere, down to `keep`."""
    while len(limbs) > keep and not bool(limbs[0].any()):
        limbs = limbs[1:]
    return limbs


def _wrap(limbs: list[Any], max_bits: int) -> list[pdarray]:
    """The limbs of the values modulo 2**max_bits (-1: as they are)."""
    if max_bits == -1:
        return list(limbs)
    n = _limbs_for(max_bits)
    like = next(x for x in limbs if isinstance(x, pdarray))
    limbs = list(limbs)[-n:]  # (limbs wholly past max_bits are dropped; fewer are not padded)
    top = max_bits - 64 * (n - 1)
    if max_bits == 0:
        limbs = [limbs[-1] & 0]
    elif top < 64 and len(limbs) == n:
        limbs[0] = limbs[0] & ((1 << top) - 1)
    return [x if isinstance(x, pdarray) else _filled(like._conn, like.size, int(x)) for x in limbs]


def bigint_from_uint_arrays(arrays: Sequence[pdarray], max_bits: int = -1) -> BigIntArray:
    """A bigint array from uint64 arrays, the first the most significant
    64 bits and the last the least (Arkouda's).

    >>> ak.bigint_from_uint_arrays([ak.array([1], dtype=ak.uint64), ak.array([2], dtype=ak.uint64)])[0]
    18446744073709551618
    """
    arrays = list(arrays)
    if not arrays or not all(isinstance(x, pdarray) for x in arrays):
        raise TypeError("bigint_from_uint_arrays takes a non-empty sequence of uint64 pdarrays")
    if not all(x.dtype == np.uint64 for x in arrays):
        raise TypeError("bigint_from_uint_arrays takes uint64 pdarrays, got "
                        + ", ".join(str(x.dtype) for x in arrays) + "; convert them with astype(ak.uint64)")
    return BigIntArray(arrays, max_bits)


def _not_an_int(kinds: set[type]) -> type | None:
    """The first of these element types that is not an integer (bool is
    not), else None."""
    return next((k for k in kinds if k is bool or k is np.bool_ or not issubclass(k, (int, np.integer))), None)


def upload_bigint(conn: Connection, x: Any, max_bits: int = -1) -> BigIntArray:
    """Python ints (a list, a numpy object or integer array) as a bigint
    array: split into 64-bit limbs here, each uploaded as a uint64 array."""
    # A list as Python ints: numpy would make a mix past 2**63 float64.
    data = np.array(x, dtype=object) if isinstance(x, (list, tuple)) else np.asarray(x)
    if data.ndim != 1:
        raise ValueError(f"a bigint array is 1-D, got shape {data.shape}")
    if data.dtype.kind in "iu":
        if data.dtype.kind == "i" and data.size and int(data.min()) < 0:
            raise ValueError("a bigint array holds no negative values (Arktos's are non-negative)")
        return BigIntArray([conn.array(data.astype(np.uint64))], max_bits)
    if data.dtype.kind == "b":
        return BigIntArray([conn.array(data.astype(np.uint64))], max_bits)
    if data.dtype != object:
        raise TypeError(f"a bigint array is made from Python ints or an integer array, got {data.dtype}")
    vs: list[Any] = data.tolist()
    kinds = set(map(type, vs))
    if not kinds <= {int}:
        bad = _not_an_int(kinds)
        if bad is not None:
            raise TypeError(f"a bigint array is made from ints; got {bad.__name__}")
        vs = [int(v) for v in vs]  # (numpy integers in an object array)
    if vs and min(vs) < 0:
        raise ValueError("a bigint array holds no negative values (Arktos's are non-negative)")
    # The values decide the limb count (num_bits, Arkouda's hint of it, is
    # not needed); max_bits drops the limbs past it.
    bits = max(vs).bit_length() if vs else 0
    n = _limbs_for(max(bits, 1))
    if max_bits != -1:
        n = min(n, _limbs_for(max_bits))
    if bits > 64 * n:
        mask = (1 << 64 * n) - 1
        vs = [v & mask for v in vs]
    # One fixed-width big-endian encoding per value, read back as n uint64
    # columns: one Python step per value, whatever n is.
    raw = b"".join(v.to_bytes(8 * n, "big") for v in vs)
    table = np.frombuffer(raw, dtype=">u8").reshape(len(vs), n)
    limbs = [conn.array(table[:, j].astype(np.uint64)) for j in range(n)]
    return BigIntArray(limbs, max_bits)


def is_big_ints(x: Any) -> bool:
    """Whether x is Python ints some of which do not fit 64 bits (a list
    or an object array): what ak.array makes a bigint array of unasked."""
    if isinstance(x, np.ndarray):
        if x.dtype != object or x.ndim != 1:
            return False
        values: Any = x
    elif isinstance(x, (list, tuple)):
        values = x
    else:
        return False
    # (every ak.array of a list or object array asks: the element types
    # first, at C speed, so that floats or strings cost one set)
    if not len(values) or _not_an_int(set(map(type, values))) is not None:
        return False
    return bool(max(values) > _MASK64)

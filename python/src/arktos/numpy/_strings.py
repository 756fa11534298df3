"""ak.Strings: an array of UTF-8 strings held on the server (Arkouda's Strings).

A Strings is two server arrays in Arrow's ``large_string`` layout: int64
offsets (one more than the strings) and uint8 bytes. Uploads and
downloads move those two arrays as any others (bulk streams, shared
memory), converted to and from Python text by pyarrow when it is
installed (no loop over the strings in Python), else by a loop. Every
operation runs on the server (docs/protocol.md, "Strings"); strings
compare and sort as Python's ``str`` does.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ..core import _default
from ..core._dtypes import to_wire
from ._pdarray import pdarray

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["Strings", "random_strings_uniform"]

_CHARSETS = ("uppercase", "lowercase", "numeric", "printable")


def _pyarrow() -> Any:
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        return None


def is_text(x: Any) -> bool:
    """Whether ak.array should make x a Strings: a str, a numpy array of
    str (or of objects that are str), a pyarrow string array, or a list or
    tuple whose first element is a str."""
    if isinstance(x, (str, Strings)):
        return True
    if not isinstance(x, (np.ndarray, list, tuple, pdarray)) and hasattr(x, "dtype") and hasattr(x, "__array__"):
        dt = str(x.dtype)
        if dt.startswith(("string", "str", "large_string")):
            return True
        if dt != "object":
            return False
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "UT":
            return True
        return x.dtype.kind == "O" and x.size > 0 and isinstance(x.flat[0], str)
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and isinstance(x[0], str)
    pa = _pyarrow()
    if pa is not None and isinstance(x, (pa.Array, pa.ChunkedArray)):
        return bool(pa.types.is_string(x.type) or pa.types.is_large_string(x.type)
                    or pa.types.is_string_view(x.type))
    return False


def _encode(x: Any) -> tuple[NDArray[np.int64], NDArray[np.uint8]]:
    """x's offsets and UTF-8 bytes, without a Python loop where pyarrow is
    installed."""
    if isinstance(x, str):
        x = [x]
    pa = _pyarrow()
    if hasattr(x, "dtype") and not isinstance(x, np.ndarray) and not (pa and isinstance(x, (pa.Array, pa.ChunkedArray))):
        x = np.asarray(x, dtype=object)  # a pandas Series
    if pa is not None:
        if isinstance(x, np.ndarray) and x.dtype.kind in "TU":
            # pyarrow reads a numpy str array only up to a string's first
            # NUL (numpy keeps all but trailing ones): by str objects.
            x = x.astype(object)
        try:
            arr = x if isinstance(x, (pa.Array, pa.ChunkedArray)) else pa.array(x, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise TypeError(f"ak.Strings holds str only: {e}") from None
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        arr = arr.cast(pa.large_string())
        if arr.null_count:
            raise ValueError(f"the strings hold {arr.null_count} missing values (None), and ak.Strings has none; "
                             "fill them first, e.g. with ''")
        _, off_buf, data_buf = arr.buffers()
        n = len(arr)
        off = np.frombuffer(off_buf, dtype=np.int64, count=n + 1, offset=arr.offset * 8) if off_buf else np.zeros(1, np.int64)
        base = int(off[0])
        data = (np.frombuffer(data_buf, dtype=np.uint8, count=int(off[-1]) - base, offset=base)
                if data_buf else np.zeros(0, np.uint8))
        return (off - base if base else off), data
    items = list(x.tolist() if isinstance(x, np.ndarray) else x)
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"ak.Strings holds str only; element {i} is {type(s).__name__} {s!r}")
    encoded = [s.encode("utf-8", "surrogatepass") for s in items]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=off[1:])
    return off, np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()


class Strings:
    """An array of strings on the server (Arkouda's ``ak.Strings``).

    Made by ``ak.array`` from text (a list of str, a numpy str / object /
    StringDType array, a pyarrow string array, a pandas string Series),
    by ``ak.random_strings_uniform``, ``ak.cast(pda, "str")`` and the
    string operations.

    >>> s = ak.array(["apple", "fig", "kiwi"])
    >>> (s == "fig").to_list()
    [False, True, False]
    >>> s.get_lengths().to_list()
    [5, 3, 4]
    """

    #: Arkouda's object type name.
    objType = "Strings"  # noqa: N815 -- Arkouda's name

    def __init__(self, offsets: pdarray, bytes_: pdarray) -> None:
        if offsets.dtype != np.int64 or bytes_.dtype != np.uint8:
            raise TypeError(f"a Strings is int64 offsets and uint8 bytes, got {offsets.dtype} and {bytes_.dtype}")
        self._offsets, self._bytes = offsets, bytes_
        self._conn: Connection = offsets._conn
        self.size = offsets.size - 1

    # -- making and moving -------------------------------------------------

    @classmethod
    def _from_result(cls, conn: Connection, result: dict[str, Any]) -> Strings:
        return cls(conn._pdarray(result["offsets"], owned=True), conn._pdarray(result["bytes"], owned=True))

    @classmethod
    def _upload(cls, conn: Connection, x: Any) -> Strings:
        if isinstance(x, Strings):
            return x
        off, data = _encode(x)
        offsets, bytes_ = conn.array(off), conn.array(data)
        s = cls(offsets, bytes_)
        conn._request("str_check", {"a": s._names()})
        return s

    def _names(self) -> list[str]:
        return [self._offsets._live_name(), self._bytes._live_name()]

    def _request(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        return self._conn._request(cmd, {"a": self._names(), **args})[0]

    def _new(self, result: dict[str, Any]) -> Strings:
        return Strings._from_result(self._conn, result)

    def _pd(self, result: dict[str, Any]) -> pdarray:
        return self._conn._pdarray(result, owned=True)

    def _buffers(self) -> tuple[NDArray[np.int64], NDArray[np.uint8]]:
        return self._offsets.to_ndarray(), self._bytes.to_ndarray()

    def to_arrow(self) -> Any:
        """A pyarrow ``large_string`` array over the downloaded buffers
        (no copy of the text).

        >>> ak.array(["a", "bc"]).to_arrow().type
        DataType(large_string)
        """
        pa = _pyarrow()
        if pa is None:
            raise ImportError("to_arrow needs pyarrow: pip install pyarrow")
        off, data = self._buffers()
        return pa.LargeStringArray.from_buffers(self.size, pa.py_buffer(off), pa.py_buffer(data))

    def to_list(self) -> list[str]:
        """The strings as a list of Python str.

        >>> ak.array(["a", "", "日本"]).to_list()
        ['a', '', '日本']
        """
        if _pyarrow() is not None:
            return list(self.to_arrow().to_pylist())
        off, data = self._buffers()
        raw = data.tobytes()
        return [raw[off[i]:off[i + 1]].decode("utf-8") for i in range(self.size)]

    def tolist(self) -> list[str]:
        """to_list (numpy's name).

        >>> ak.array(["a", "b"]).tolist()
        ['a', 'b']
        """
        return self.to_list()

    def to_ndarray(self) -> NDArray[Any]:
        """A numpy array: numpy 2's ``StringDType`` where there is one, else
        an object array of str.

        >>> ak.array(["a", "b"]).to_ndarray().tolist()
        ['a', 'b']
        """
        pa = _pyarrow()
        obj = (self.to_arrow().to_numpy(zero_copy_only=False) if pa is not None
               else np.array(self.to_list(), dtype=object))
        string_dtype = getattr(np.dtypes, "StringDType", None)
        return obj.astype(string_dtype()) if string_dtype is not None else obj

    def to_numpy(self) -> NDArray[Any]:
        """to_ndarray (numpy's name).

        >>> ak.array(["a", "b"]).to_numpy().tolist()
        ['a', 'b']
        """
        return self.to_ndarray()

    def to_pandas(self) -> Any:
        """A pandas Series of the strings (pyarrow-backed where pandas can).

        >>> ak.array(["a", "b"]).to_pandas().tolist()
        ['a', 'b']
        """
        import pandas as pd
        return pd.Series(self.to_arrow().to_pandas(types_mapper=None), dtype=object)

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def __len__(self) -> int:
        return self.size

    @property
    def shape(self) -> tuple[int]:
        """(size,): a Strings is one-dimensional.

        >>> ak.array(["a", "b"]).shape
        (2,)
        """
        return (self.size,)

    @property
    def ndim(self) -> int:
        """1.

        >>> ak.array(["a", "b"]).ndim
        1
        """
        return 1

    @property
    def dtype(self) -> np.dtype:
        """numpy's str dtype (Arkouda's ``ak.str_``).

        >>> ak.array(["a"]).dtype
        dtype('<U')
        """
        return np.dtype(np.str_)

    @property
    def nbytes(self) -> int:
        """The strings' UTF-8 bytes (Arkouda's nbytes, less its NUL terminators).

        >>> ak.array(["ab", "日"]).nbytes
        5
        """
        return self._bytes.size

    @property
    def entry(self) -> pdarray:
        """The bytes array (Arkouda code reads ``entry.itemsize``: 1).

        >>> ak.array(["ab", "c"]).entry.itemsize
        1
        """
        return self._bytes

    @property
    def offsets(self) -> pdarray:
        """The int64 offsets (one more than the strings).

        >>> ak.array(["ab", "c"]).offsets
        array([0, 2, 3])
        """
        return self._offsets

    @property
    def name(self) -> str:
        """The offsets array's name, which names the Strings on the server.

        >>> isinstance(ak.array(["a"]).name, str)
        True
        """
        return self._offsets._live_name()

    def __repr__(self) -> str:
        if self.size <= 12:
            shown = self.to_list()
            return f"array({shown!r})"
        head = self[:6].to_list()
        tail = self[self.size - 6:].to_list()
        return f"array({head!r} ... {tail!r}, size={self.size})"

    def __str__(self) -> str:
        return repr(self)

    # -- comparisons ---------------------------------------------------------

    def _compare(self, op: str, other: object) -> pdarray:
        if isinstance(other, (str, np.str_)):
            return self._pd(self._request("str_compare", {"op": op, "scalar": str(other)}))
        if not isinstance(other, Strings):
            if not is_text(other):
                raise TypeError(f"cannot compare Strings with {type(other).__name__}: compare with a str, a list of str or a Strings")
            other = Strings._upload(self._conn, other)
        assert isinstance(other, Strings)
        if other.size != self.size:
            raise ValueError(f"cannot compare {self.size} strings with {other.size}: lengths differ")
        return self._pd(self._request("str_compare", {"op": op, "b": other._names()}))

    def __eq__(self, other: object) -> pdarray:  # type: ignore[override]
        return self._compare("==", other)

    def __ne__(self, other: object) -> pdarray:  # type: ignore[override]
        return self._compare("!=", other)

    def __lt__(self, other: object) -> pdarray:
        return self._compare("<", other)

    def __le__(self, other: object) -> pdarray:
        return self._compare("<=", other)

    def __gt__(self, other: object) -> pdarray:
        return self._compare(">", other)

    def __ge__(self, other: object) -> pdarray:
        return self._compare(">=", other)

    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    # -- indexing ------------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        """s[i] is a str; a slice, an int array or list, or a bool mask
        give a Strings.

        >>> s = ak.array(["a", "b", "c"])
        >>> s[1], s[::-2], s[[0, 0]]
        ('b', array(['c', 'a']), array(['a', 'a']))
        """
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            i = int(key)
            if not -self.size <= i < self.size:
                raise IndexError(f"index {i} is out of bounds for {self.size} strings")
            i %= self.size
            off = self._offsets[i:i + 2].to_ndarray()
            return bytes(self._bytes[int(off[0]):int(off[1])].to_ndarray()).decode("utf-8")
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            idx = self._conn._request("arange", {"start": start, "stop": stop, "step": step})[0]
            return self._take(self._pd(idx))
        if isinstance(key, pdarray):
            if key.dtype == np.bool_:
                return self._new(self._request("str_take", {"mask": key._live_name()}))
            return self._take(key)
        arr = np.asarray(key)
        if arr.dtype == np.bool_:
            return self[self._conn.array(arr)]
        if arr.dtype.kind in "iu":
            return self._take(self._conn.array(arr.astype(np.int64)))
        raise TypeError(f"Strings indices must be ints, slices, int arrays or bool masks, not {type(key).__name__}")

    def _take(self, idx: pdarray) -> Strings:
        if idx.dtype.kind not in "iu":
            raise TypeError(f"Strings indices must be integers, got {idx.dtype}")
        if idx.dtype != np.int64:
            idx = idx.astype(np.int64)
        return self._new(self._request("str_take", {"idx": idx._live_name()}))

    # -- elementwise ---------------------------------------------------------

    def get_lengths(self) -> pdarray:
        """Each string's length in UTF-8 bytes (Arkouda's get_lengths; the
        same as Python's len for ASCII text).

        >>> ak.array(["ab", "日"]).get_lengths()
        array([2, 3])
        """
        return self._pd(self._request("str_lengths", {"unit": "bytes"}))

    def str_len(self) -> pdarray:
        """Each string's length in code points (Python's len).

        >>> ak.array(["ab", "日"]).str_len()
        array([2, 1])
        """
        return self._pd(self._request("str_lengths", {"unit": "chars"}))

    def _search(self, kind: str, pattern: str, regex: bool) -> pdarray:
        if not isinstance(pattern, str):
            raise TypeError(f"the pattern must be a str, got {type(pattern).__name__}")
        return self._pd(self._request("str_search", {"kind": kind, "pattern": pattern, "regex": bool(regex)}))

    def contains(self, substr: str, regex: bool = False) -> pdarray:
        """Whether each string holds substr (Python's ``in``), or with
        regex, matches it anywhere (re.search; RE2 syntax).

        >>> ak.array(["apple", "fig"]).contains("pp")
        array([ True, False])
        >>> ak.array(["a1", "b"]).contains(r"\\d", regex=True)
        array([ True, False])
        """
        return self._search("contains", substr, regex)

    def startswith(self, substr: str, regex: bool = False) -> pdarray:
        """Whether each string starts with substr (or matches it there).

        >>> ak.array(["apple", "fig"]).startswith("f")
        array([False,  True])
        """
        return self._search("startswith", substr, regex)

    def endswith(self, substr: str, regex: bool = False) -> pdarray:
        """Whether each string ends with substr (or matches it there).

        >>> ak.array(["apple", "fig"]).endswith("le")
        array([ True, False])
        """
        return self._search("endswith", substr, regex)

    def fullmatch_mask(self, pattern: str) -> pdarray:
        """Whether re.fullmatch(pattern, s) matches each string.

        >>> ak.array(["ab", "abc"]).fullmatch_mask("a.")
        array([ True, False])
        """
        return self._search("fullmatch", pattern, True)

    def match_mask(self, pattern: str) -> pdarray:
        """Whether re.match(pattern, s) matches each string.

        >>> ak.array(["ab", "cab"]).match_mask("a.")
        array([ True, False])
        """
        return self._search("match", pattern, True)

    def lower(self) -> Strings:
        """Each string in lower case.

        >>> ak.array(["ApPle"]).lower()
        array(['apple'])
        """
        return self._new(self._request("str_case", {"case": "lower"}))

    def upper(self) -> Strings:
        """Each string in upper case.

        >>> ak.array(["ApPle"]).upper()
        array(['APPLE'])
        """
        return self._new(self._request("str_case", {"case": "upper"}))

    def stick(self, other: Strings, delimiter: str = "", toLeft: bool = False) -> Strings:  # noqa: N803 -- Arkouda's
        """Join each string with the other's, delimiter between (Arkouda's
        stick; with toLeft, other's first).

        >>> ak.array(["a", "b"]).stick(ak.array(["x", "y"]), delimiter="-")
        array(['a-x', 'b-y'])
        """
        if not isinstance(other, Strings):
            raise TypeError(f"stick takes a Strings, got {type(other).__name__}")
        first, second = (other, self) if toLeft else (self, other)
        return first._new(first._request("str_stick", {"b": second._names(), "delim": str(delimiter)}))

    def lstick(self, other: Strings, delimiter: str = "") -> Strings:
        """other's strings joined before these (Arkouda's lstick).

        >>> ak.array(["a", "b"]).lstick(ak.array(["x", "y"]))
        array(['xa', 'yb'])
        """
        return self.stick(other, delimiter, toLeft=True)

    def __add__(self, other: Strings) -> Strings:
        return self.stick(other)

    def split(self, delimiter: str, regex: bool = False,
              return_segments: bool = False) -> Any:
        """Every string's pieces at delimiter, all in one Strings
        (Arkouda's split/flatten); with return_segments, also where each
        string's pieces start.

        >>> pieces, starts = ak.array(["a.b", "c"]).split(".", return_segments=True)
        >>> pieces, starts
        (array(['a', 'b', 'c']), array([0, 2]))
        """
        r = self._request("str_split", {"delim": str(delimiter), "regex": bool(regex)})
        pieces = self._new(r["values"])
        if not return_segments:
            return pieces
        segs = self._pd(r["segments"])
        return pieces, segs[:-1]

    def flatten(self, delimiter: str, return_segments: bool = False, regex: bool = False) -> Any:
        """split (Arkouda's older name).

        >>> ak.array(["a.b", "c"]).flatten(".")
        array(['a', 'b', 'c'])
        """
        return self.split(delimiter, regex=regex, return_segments=return_segments)

    def encode(self, toEncoding: str, fromEncoding: str = "UTF-8") -> Strings:  # noqa: N803 -- Arkouda's
        """Each string encoded as Python's ``str.encode(toEncoding)`` does,
        kept as text (Arkouda's encode): "idna" (host names: non-ASCII
        labels as punycode), "ascii" (refusing other text) or "utf-8".

        >>> ak.array(["bücher.de"]).encode("idna")
        array(['xn--bcher-kva.de'])
        """
        if fromEncoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise ValueError(f"Strings hold UTF-8 text; fromEncoding must be UTF-8, got {fromEncoding!r}")
        return self._new(self._request("str_encode", {"encoding": toEncoding.lower(), "decode": False}))

    def decode(self, fromEncoding: str, toEncoding: str = "UTF-8") -> Strings:  # noqa: N803 -- Arkouda's
        """encode's inverse: "idna" punycode labels back to Unicode.

        >>> ak.array(["xn--bcher-kva.de"]).decode("idna")
        array(['bücher.de'])
        """
        if toEncoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise ValueError(f"Strings hold UTF-8 text; toEncoding must be UTF-8, got {toEncoding!r}")
        return self._new(self._request("str_encode", {"encoding": fromEncoding.lower(), "decode": True}))

    def hash(self) -> tuple[pdarray, pdarray]:
        """Each string's 128-bit hash as two uint64 arrays (XXH3; equal
        strings hash equal).

        >>> hi, lo = ak.array(["a", "b", "a"]).hash()
        >>> bool(hi[0] == hi[2] and lo[0] == lo[2])
        True
        """
        r = self._request("str_hash", {})
        return self._pd(r["hi"]), self._pd(r["lo"])

    def astype(self, dtype: DTypeLike) -> Any:
        """The strings read as numbers (Python's int()/float(); "True" and
        "False" for bool), or themselves for str.

        >>> ak.array(["1.5", "-2"]).astype(ak.float64)
        array([ 1.5, -2. ])
        """
        if dtype in (str, "str", np.str_) or np.dtype(dtype).kind in "UT":
            return self
        return self._pd(self._request("str_parse", {"dtype": to_wire(np.dtype(dtype))}))

    # -- sets and sorting ----------------------------------------------------

    def unique(self, return_inverse: bool = False, return_counts: bool = False) -> Any:
        """The distinct strings, sorted; with the inverse and the counts
        as np.unique gives them.

        >>> ak.array(["b", "a", "b"]).unique()
        array(['a', 'b'])
        """
        r = self._request("str_unique", {"return_inverse": bool(return_inverse),
                                         "return_counts": bool(return_counts)})
        out: list[Any] = [self._new(r["values"])]
        if return_inverse:
            out.append(self._pd(r["inverse"]))
        if return_counts:
            out.append(self._pd(r["counts"]))
        return out[0] if len(out) == 1 else tuple(out)

    def value_counts(self) -> tuple[Strings, pdarray]:
        """The distinct strings, sorted, and how often each occurs.

        >>> ak.array(["b", "a", "b"]).value_counts()
        (array(['a', 'b']), array([1, 2]))
        """
        values, counts = self.unique(return_counts=True)
        return values, counts

    def isin(self, values: Any) -> pdarray:
        """Whether each string is among values (exact).

        >>> ak.array(["a", "b", "c"]).isin(["c", "a"])
        array([ True, False,  True])
        """
        other = values if isinstance(values, Strings) else Strings._upload(self._conn, values)
        return self._pd(self._request("str_in1d", {"b": other._names()}))

    def argsort(self, ascending: bool = True) -> pdarray:
        """The stable permutation that sorts the strings as Python does.

        >>> ak.array(["b", "a", "c"]).argsort()
        array([1, 0, 2])
        """
        perm = self._pd(self._request("str_argsort", {}))
        return perm if ascending else perm[::-1]

    def sort_values(self) -> Strings:
        """The strings sorted.

        >>> ak.array(["b", "a", "c"]).sort_values()
        array(['a', 'b', 'c'])
        """
        return self._take(self.argsort())

    def is_sorted(self) -> bool:
        """Whether the strings are in ascending order.

        >>> ak.array(["a", "b"]).is_sorted()
        True
        """
        if self.size < 2:
            return True
        return bool((self[:-1] <= self[1:]).all())

    @classmethod
    def concatenate(cls, arrays: Sequence[Strings]) -> Strings:
        """The arrays' strings one after another.

        >>> ak.Strings.concatenate([ak.array(["a"]), ak.array(["b", "c"])])
        array(['a', 'b', 'c'])
        """
        parts: list[str] = []
        for a in arrays:
            if not isinstance(a, Strings):
                raise TypeError(f"cannot concatenate Strings with {type(a).__name__}")
            parts += a._names()
        if not parts:
            raise ValueError("need at least one Strings to concatenate")
        return Strings._from_result(arrays[0]._conn, arrays[0]._conn._request("str_concat", {"parts": parts})[0])


def format_numbers(a: pdarray) -> Strings:
    """Each element as Python's str() writes it (ak.cast(a, "str"))."""
    return Strings._from_result(a._conn, a._conn._request("str_format", {"a": a._live_name()})[0])


def random_strings_uniform(minlen: int, maxlen: int, size: int, characters: str = "uppercase",
                           seed: int | None = None, *, conn: Connection | None = None) -> Strings:
    """size random strings of lengths uniform in [minlen, maxlen), each
    character uniform from characters (uppercase, lowercase, numeric or
    printable; Arkouda's random_strings_uniform). A seed gives the same
    strings every time.

    >>> ak.random_strings_uniform(1, 5, 3, seed=1).size
    3
    """
    c = conn if conn is not None else cast("Connection", _default.default_connection())
    if characters not in _CHARSETS:
        raise ValueError(f"characters must be one of {', '.join(_CHARSETS)}, got {characters!r}")
    args: dict[str, Any] = {"size": int(size), "minlen": int(minlen), "maxlen": int(maxlen), "characters": characters}
    if seed is not None:
        args["seed"] = int(seed)
    return Strings._from_result(c, c._request("str_random", args)[0])

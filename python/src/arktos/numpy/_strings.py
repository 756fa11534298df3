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
from ._pdarray import _conversion, pdarray

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
        # A pandas Series: pyarrow reads its missing values (None, NaN,
        # pd.NA) as nulls, refused below with the others.
        if pa is not None:
            try:
                x = pa.array(x, type=pa.large_string(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                raise TypeError(f"ak.Strings holds str only: {e}") from None
        else:
            x = np.asarray(x, dtype=object)
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
        """A pandas Series of the strings (object dtype: Python str).

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
        if not isinstance(other, Strings) and hasattr(other, "codes") and hasattr(other, "categories"):
            # A Categorical (arktos.pandas, duck-typed: this layer is below
            # it): its strings, gathered by its codes on the server.
            codes = cast(pdarray, other.codes)
            other = Strings._upload(self._conn, np.asarray(other.categories, dtype=object))[codes]
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
        if arr.size == 0 and arr.ndim == 1:
            arr = arr.astype(np.int64)  # s[[]]: no strings, as numpy gives
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

    def title(self) -> Strings:
        """Each string in title case (Python's str.title: a cased character
        after an uncased one upper, others lower).

        >>> ak.array(["hello wORLD", "x1y"]).title()
        array(['Hello World', 'X1Y'])
        """
        return self._new(self._request("str_case", {"case": "title"}))

    def capitalize(self) -> Strings:
        """Each string's first character upper, the rest lower (Python's
        str.capitalize).

        >>> ak.array(["hello WORLD"]).capitalize()
        array(['Hello world'])
        """
        return self._new(self._request("str_case", {"case": "capitalize"}))

    def _is(self, cls: str) -> pdarray:
        return self._pd(self._request("str_is", {"class": cls}))

    def isalnum(self) -> pdarray:
        """Whether each string passes Python's str.isalnum().

        >>> ak.array(["a1", "a-1", ""]).isalnum()
        array([ True, False, False])
        """
        return self._is("alnum")

    def isalpha(self) -> pdarray:
        """Whether each string passes Python's str.isalpha().

        >>> ak.array(["ab", "a1", "é"]).isalpha()
        array([ True, False,  True])
        """
        return self._is("alpha")

    def isdecimal(self) -> pdarray:
        """Whether each string passes Python's str.isdecimal().

        >>> ak.array(["12", "²", "1.5"]).isdecimal()
        array([ True, False, False])
        """
        return self._is("decimal")

    def isdigit(self) -> pdarray:
        """Whether each string passes Python's str.isdigit().

        >>> ak.array(["12", "²", "1.5"]).isdigit()
        array([ True,  True, False])
        """
        return self._is("digit")

    def islower(self) -> pdarray:
        """Whether each string passes Python's str.islower().

        >>> ak.array(["ab1", "Ab", "1"]).islower()
        array([ True, False, False])
        """
        return self._is("lower")

    def isupper(self) -> pdarray:
        """Whether each string passes Python's str.isupper().

        >>> ak.array(["AB1", "Ab", "1"]).isupper()
        array([ True, False, False])
        """
        return self._is("upper")

    def istitle(self) -> pdarray:
        """Whether each string passes Python's str.istitle().

        >>> ak.array(["Ab Cd", "Ab cd", "AB"]).istitle()
        array([ True, False, False])
        """
        return self._is("title")

    def isspace(self) -> pdarray:
        """Whether each string passes Python's str.isspace().

        >>> ak.array([" \\t", "", " a"]).isspace()
        array([ True, False, False])
        """
        return self._is("space")

    def isempty(self) -> pdarray:
        """Whether each string is empty.

        >>> ak.array(["", "a"]).isempty()
        array([ True, False])
        """
        return self._is("empty")

    def strip(self, chars: str | bytes | None = None) -> Strings:
        """Each string without the leading and trailing characters in chars
        (whitespace by default), as Python's str.strip.

        >>> ak.array([" a ", "xxbx"]).strip(), ak.array(["xxbx"]).strip("x")
        (array(['a', 'xxbx']), array(['b']))
        """
        return self._strip(chars, "both")

    def lstrip(self, chars: str | bytes | None = None) -> Strings:
        """strip at the start only (Python's str.lstrip).

        >>> ak.array([" a "]).lstrip()
        array(['a '])
        """
        return self._strip(chars, "left")

    def rstrip(self, chars: str | bytes | None = None) -> Strings:
        """strip at the end only (Python's str.rstrip).

        >>> ak.array([" a "]).rstrip()
        array([' a'])
        """
        return self._strip(chars, "right")

    def _strip(self, chars: str | bytes | None, side: str) -> Strings:
        if isinstance(chars, bytes):
            chars = chars.decode()
        return self._new(self._request("str_strip", {"chars": chars or "", "side": side}))

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
        return self._split(delimiter, regex, 0, return_segments)

    def _split(self, delimiter: str, regex: bool, maxsplit: int, return_segments: bool) -> Any:
        if isinstance(delimiter, bytes):
            delimiter = delimiter.decode()
        r = self._request("str_split", {"delim": str(delimiter), "regex": bool(regex), "maxsplit": int(maxsplit)})
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

    def regex_split(self, pattern: str | bytes, maxsplit: int = 0, return_segments: bool = False) -> Any:
        """split at each match of pattern, at most maxsplit times per string
        (0: every match), as re.split (Arkouda's regex_split).

        >>> ak.array(["a__b_c", "d"]).regex_split("_+", maxsplit=1)
        array(['a', 'b_c', 'd'])
        """
        if isinstance(pattern, bytes):
            pattern = pattern.decode()
        return self._split(pattern, True, maxsplit, return_segments)

    def peel(self, delimiter: str | bytes, times: int = 1, includeDelimiter: bool = False,  # noqa: N803 -- Arkouda's
             keepPartial: bool = False, fromRight: bool = False, regex: bool = False) -> tuple[Strings, Strings]:
        """Each string cut in two at its times-th delimiter (Arkouda's peel,
        like str.partition): what comes before and what after. With
        includeDelimiter the delimiter ends the first part; a string with
        fewer delimiters goes whole to the second part (the first with
        keepPartial).

        >>> s = ak.array(["a.b", "c.d", "e.f.g"])
        >>> s.peel(".")
        (array(['a', 'c', 'e']), array(['b', 'd', 'f.g']))
        >>> s.peel(".", times=2)
        (array(['', '', 'e.f']), array(['a.b', 'c.d', 'g']))
        """
        if isinstance(delimiter, bytes):
            delimiter = delimiter.decode()
        if int(times) < 1:
            raise ValueError(f"times must be >= 1, got {times}")
        r = self._request("str_peel", {"delim": str(delimiter), "times": int(times), "regex": bool(regex),
                                       "include_delimiter": bool(includeDelimiter),
                                       "keep_partial": bool(keepPartial), "from_right": bool(fromRight)})
        return self._new(r["left"]), self._new(r["right"])

    def rpeel(self, delimiter: str | bytes, times: int = 1, includeDelimiter: bool = False,  # noqa: N803 -- Arkouda's
              keepPartial: bool = False, regex: bool = False) -> tuple[Strings, Strings]:
        """peel from the right (like str.rpartition): with includeDelimiter
        the delimiter starts the second part; a string with fewer
        delimiters goes whole to the first part (the second with
        keepPartial).

        >>> ak.array(["a.b", "e.f.g"]).rpeel(".")
        (array(['a', 'e.f']), array(['b', 'g']))
        """
        return self.peel(delimiter, times, includeDelimiter, keepPartial, fromRight=True, regex=regex)

    def get_prefixes(self, n: int, return_origins: bool = True, proper: bool = True) -> Any:
        """The first n characters of each string longer than n (at least n
        long where proper is False), and with return_origins which strings
        those were (Arkouda's get_prefixes).

        >>> ak.array(["abc", "ab", "a"]).get_prefixes(2)
        (array(['ab']), array([ True, False, False]))
        """
        return self._affix(n, False, return_origins, proper)

    def get_suffixes(self, n: int, return_origins: bool = True, proper: bool = True) -> Any:
        """The last n characters, as get_prefixes takes the first.

        >>> ak.array(["abc", "ab", "a"]).get_suffixes(2, proper=False)
        (array(['bc', 'ab']), array([ True,  True, False]))
        """
        return self._affix(n, True, return_origins, proper)

    def _affix(self, n: int, suffix: bool, return_origins: bool, proper: bool) -> Any:
        r = self._request("str_affix", {"n": int(n), "suffix": suffix, "proper": bool(proper)})
        values, origins = self._new(r["values"]), self._pd(r["origins"])
        return (values, origins) if return_origins else values

    # -- regular expressions (RE2 syntax: Python's re less backreferences
    #    and lookaround; positions in code points, as re gives them) -------

    def find_locations(self, pattern: str | bytes) -> tuple[pdarray, pdarray, pdarray]:
        """Every non-overlapping match of pattern: how many in each string,
        and each match's start and length (Arkouda's find_locations).

        >>> ak.array(["a1b22", "c"]).find_locations(r"\\d+")
        (array([2, 0]), array([1, 3]), array([1, 2]))
        """
        r = self._findall(pattern, text=False)
        return self._pd(r["counts"]), self._pd(r["starts"]), self._pd(r["lengths"])

    def findall(self, pattern: str | bytes, return_match_origins: bool = False) -> Any:
        """Every non-overlapping match of pattern, all strings' in one
        Strings (re.findall's whole matches), and with return_match_origins
        the string each came from.

        >>> ak.array(["a1b22", "c", "3"]).findall(r"\\d+", return_match_origins=True)
        (array(['1', '22', '3']), array([0, 0, 2]))
        """
        r = self._findall(pattern, text=True)
        values = self._new(r["values"])
        return (values, self._pd(r["origins"])) if return_match_origins else values

    def _findall(self, pattern: str | bytes, text: bool) -> dict[str, Any]:
        if isinstance(pattern, bytes):
            pattern = pattern.decode()
        return self._request("str_findall", {"pattern": str(pattern), "text": text})

    def sub(self, pattern: str | bytes, repl: str | bytes, count: int = 0) -> Strings:
        """Each string with its first count matches of pattern (all, with
        count 0) replaced by repl, in re.sub's syntax (``\\1``,
        ``\\g<name>``).

        >>> ak.array(["a1b22", "c"]).sub(r"(\\d+)", r"<\\1>")
        array(['a<1>b<22>', 'c'])
        """
        return self.subn(pattern, repl, count)[0]

    def subn(self, pattern: str | bytes, repl: str | bytes, count: int = 0) -> tuple[Strings, pdarray]:
        """sub, and how many replacements each string had (re.subn).

        >>> ak.array(["a1b22", "c"]).subn(r"\\d", "#", count=2)
        (array(['a#b#2', 'c']), array([2, 0]))
        """
        if isinstance(pattern, bytes):
            pattern = pattern.decode()
        if isinstance(repl, bytes):
            repl = repl.decode()
        r = self._request("str_sub", {"pattern": str(pattern), "repl": str(repl), "count": int(count)})
        return self._new(r["values"]), self._pd(r["counts"])

    def search(self, pattern: str | bytes) -> Match:
        """Where pattern first matches in each string (re.search), as a
        Match.

        >>> ak.array(["1_2___", "____", "3"]).search("_+")
        <ak.Match object: matched=True, span=(1, 2); matched=True, span=(0, 4); matched=False>
        """
        return Match(self, pattern, "SEARCH")

    def match(self, pattern: str | bytes) -> Match:
        """Whether pattern matches at each string's start (re.match), as a
        Match.

        >>> ak.array(["1_2", "__3"]).match("_+").matched()
        array([False,  True])
        """
        return Match(self, pattern, "MATCH")

    def fullmatch(self, pattern: str | bytes) -> Match:
        """Whether pattern matches each whole string (re.fullmatch), as a
        Match.

        >>> ak.array(["__", "__3"]).fullmatch("_+").matched()
        array([ True, False])
        """
        return Match(self, pattern, "FULLMATCH")

    def to_hdf(self, prefix_path: str, dataset: str = "strings_array", mode: str = "truncate",
               save_offsets: bool = True, file_type: str = "distribute") -> str:
        """Write the strings as dataset `dataset` of an HDF5 file on the
        server in Arkouda's layout (a group of ``values``, each string's
        bytes and a NUL, and ``segments``) and file name, as
        pdarray.to_hdf. Returns the file's path.

        >>> ak.array(["a", "é"]).to_hdf("out/s.h5")
        'out/s_LOCALE0000.h5'
        """
        if not save_offsets:
            raise ValueError("save_offsets=False (strings found from their NULs on read) is not supported; "
                             "the segments are always written")
        return str(_conversion("to_hdf")(self, prefix_path, dataset=dataset, mode=mode, file_type=file_type))

    def to_parquet(self, prefix_path: str, dataset: str = "strings_array", mode: str = "truncate",
                   compression: str | None = None) -> str:
        """Write the strings as column `dataset` of a Parquet file on the
        server (Arkouda's file name, as pdarray.to_parquet). Returns the
        file's path.

        >>> ak.array(["a", "é"]).to_parquet("out/s.parquet")
        'out/s_LOCALE0000.parquet'
        """
        return str(_conversion("to_parquet")(self, prefix_path, dataset=dataset, mode=mode,
                                             compression=compression))

    def to_csv(self, prefix_path: str, dataset: str = "strings_array", col_delim: str = ",",
               overwrite: bool = True) -> str:
        """Write the strings as column `dataset` of a CSV file on the server
        (Arkouda's format and file name, as pdarray.to_csv). Returns the
        file's path.

        >>> ak.array(["a", "b,c"]).to_csv("out/s.csv", overwrite=True)
        'out/s_LOCALE0000.csv'
        """
        return str(_conversion("to_csv")(self, prefix_path, dataset=dataset, col_delim=col_delim,
                                         overwrite=overwrite))

    # -- kept by name ------------------------------------------------------------

    def register(self, name: str) -> Strings:
        """Keep the strings on the server under `name` (Arkouda's register):
        the offsets under `name`, the bytes under ``name + "/bytes"``;
        ``ak.Strings.attach(name)`` finds them in a later session. Raises
        NameInUseError, and keeps nothing new, when either name is taken.

        >>> s = ak.array(["kept", "here"]).register("doc_words")
        >>> ak.Strings.attach("doc_words").to_list()
        ['kept', 'here']
        >>> s.unregister(); s.is_registered()
        False
        """
        old_bytes = self._bytes._live_name()
        self._bytes.register(name + "/bytes")
        try:
            self._offsets.register(name)
        except BaseException:
            self._bytes.register(old_bytes)
            self._bytes.unregister()
            raise
        return self

    @classmethod
    def attach(cls, name: str, *, conn: Connection | None = None) -> Strings:
        """The Strings register(name) kept on the server (checked again);
        like ak.attach, the result does not own it.

        >>> _ = ak.array(["a"]).register("doc_attach")
        >>> ak.Strings.attach("doc_attach").size
        1
        """
        c = conn if conn is not None else cast("Connection", _default.default_connection())
        s = cls(c.attach(name), c.attach(name + "/bytes"))
        c._request("str_check", {"a": s._names()})
        return s

    def unregister(self) -> None:
        """Undo register() (or attach()): these Strings own their arrays
        again (dropping them deletes both). The names stay.

        >>> s = ak.array(["a"]).register("doc_unregister")
        >>> s.unregister(); s.is_registered()
        False
        """
        self._offsets.unregister()
        self._bytes.unregister()

    def is_registered(self) -> bool:
        """Whether the arrays outlive these Strings (registered or attached).

        >>> ak.array(["a"]).is_registered()
        False
        """
        return self._offsets.is_registered()

    # -- Arkouda's accessors ---------------------------------------------------

    def equals(self, other: object) -> bool:
        """Whether other is a Strings of the same strings.

        >>> ak.array(["a", "b"]).equals(ak.array(["a", "b"]))
        True
        """
        return isinstance(other, Strings) and other.size == self.size and bool((self == other).all())

    def get_bytes(self) -> pdarray:
        """The UTF-8 bytes (uint8), all strings' one after another (no NUL
        between them, unlike Arkouda's).

        >>> ak.array(["ab", "c"]).get_bytes()
        array([97, 98, 99], dtype=uint8)
        """
        return self._bytes

    def get_offsets(self) -> pdarray:
        """Where each string starts in get_bytes() (int64, one per string).

        >>> ak.array(["ab", "c"]).get_offsets()
        array([0, 2])
        """
        starts: pdarray = self._offsets[:-1]
        return starts

    @property
    def inferred_type(self) -> str:
        """ "string", as pandas' Index.inferred_type says.

        >>> ak.array(["a"]).inferred_type
        'string'
        """
        return "string"

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


def random_strings_lognormal(logmean: float, logstd: float, size: int, characters: str = "uppercase",
                             seed: int | None = None, *, conn: Connection | None = None) -> Strings:
    """size random strings whose lengths are exp(N(logmean, logstd²))
    rounded to an integer (Arkouda's random_strings_lognormal), each
    character uniform from characters.

    >>> ak.random_strings_lognormal(2, 0.25, 5, seed=1).size
    5
    """
    c = conn if conn is not None else cast("Connection", _default.default_connection())
    if characters not in _CHARSETS:
        raise ValueError(f"characters must be one of {', '.join(_CHARSETS)}, got {characters!r}")
    args: dict[str, Any] = {"size": int(size), "distribution": "lognormal", "logmean": float(logmean),
                            "logstd": float(logstd), "characters": characters}
    if seed is not None:
        args["seed"] = int(seed)
    return Strings._from_result(c, c._request("str_random", args)[0])


class Match:
    """Where a regular expression matched each string of a Strings
    (Arkouda's Match, from Strings.search, match and fullmatch).

    >>> m = ak.array(["Isaac Newton", "<->"]).search(r"(\\w+) (\\w+)")
    >>> m.matched(), m.group(2)
    (array([ True, False]), array(['Newton']))
    """

    def __init__(self, parent: Strings, pattern: str | bytes, match_type: str) -> None:
        if isinstance(pattern, bytes):
            pattern = pattern.decode()
        self.re = str(pattern)
        self._parent = parent
        self._type = match_type
        r = self._spans(0, text=False)
        self._matched = parent._pd(r["matched"])
        self._origins = parent._pd(r["origins"])
        self._starts, self._ends = parent._pd(r["starts"]), parent._pd(r["ends"])

    def _spans(self, group: int, text: bool) -> dict[str, Any]:
        kind = {"SEARCH": "search", "MATCH": "match", "FULLMATCH": "fullmatch"}[self._type]
        return self._parent._request("str_match", {"pattern": self.re, "kind": kind, "group": int(group), "text": text})

    def matched(self) -> pdarray:
        """Whether each string matched.

        >>> ak.array(["a1", "b"]).search(r"\\d").matched()
        array([ True, False])
        """
        return self._matched

    def start(self) -> pdarray:
        """Each match's start (the matched strings' only).

        >>> ak.array(["a1", "b", "22"]).search(r"\\d").start()
        array([1, 0])
        """
        return self._starts

    def end(self) -> pdarray:
        """Each match's end (the matched strings' only).

        >>> ak.array(["a1", "b", "22"]).search(r"\\d+").end()
        array([2, 2])
        """
        return self._ends

    def match_type(self) -> str:
        """SEARCH, MATCH or FULLMATCH: which method made this.

        >>> ak.array(["a"]).search("a").match_type()
        'SEARCH'
        """
        return self._type

    def find_matches(self, return_match_origins: bool = False) -> Any:
        """The matched text, one per matched string, and with
        return_match_origins the strings' indices.

        >>> ak.array(["a1", "b", "22"]).search(r"\\d+").find_matches(return_match_origins=True)
        (array(['1', '22']), array([0, 2]))
        """
        return self.group(0, return_group_origins=return_match_origins)

    def group(self, group_num: int = 0, return_group_origins: bool = False) -> Any:
        """Capture group group_num's text in each match (0: the whole
        match; "" where the group took no part), and with
        return_group_origins the matched strings' indices.

        >>> ak.array(["k=v", "x"]).search(r"(\\w)=(\\w)").group(2)
        array(['v'])
        """
        if int(group_num) < 0:
            raise ValueError(f"group_num must be >= 0, got {group_num}")
        r = self._spans(int(group_num), text=True)
        values = self._parent._new(r["values"])
        return (values, self._parent._pd(r["origins"])) if return_group_origins else values

    def __repr__(self) -> str:
        matched = self._matched.to_ndarray()
        starts, ends = self._starts.to_ndarray(), self._ends.to_ndarray()
        shown, k = [], 0
        for m in matched[:100]:
            if m:
                shown.append(f"matched=True, span=({starts[k]}, {ends[k]})")
                k += 1
            else:
                shown.append("matched=False")
        more = "; ..." if matched.size > 100 else ""
        return f"<ak.Match object: {'; '.join(shown)}{more}>"

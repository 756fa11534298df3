"""ak.Strings against Python's str and re, pandas and pyarrow, on a real server."""

from __future__ import annotations

import operator
import random
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arktos as ak

# Text with what breaks naive string code: empties, NULs, shared prefixes
# longer than 8 bytes (the sort's first key), multi-byte runes, delimiters.
_ALPHABET = ["a", "b", "_", "\x00", "é", "日", "Z", "1", ".", " "]
_PREFIXES = ["", "https://example.com/", "abcdefgh", "a"]


def _words(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(_PREFIXES) + "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(12)))
            for _ in range(n)]


@pytest.fixture
def words() -> list[str]:
    return _words(5000) + ["", "fig", "fig", "日本.jp"]


def test_roundtrip_from_every_input(conn: ak.Connection, words: list[str]) -> None:
    inputs = [words, tuple(words), np.array(words), np.array(words, dtype=object),
              pd.Series(words), pa.array(words), pa.array(words, type=pa.large_string()),
              pa.chunked_array([words[:10], words[10:]])]
    if hasattr(np.dtypes, "StringDType"):
        inputs.append(np.array(words, dtype=np.dtypes.StringDType()))
    for x in inputs:
        s = conn.array(x)
        assert isinstance(s, ak.Strings), type(x)
        assert s.size == len(s) == len(words)
        # numpy's fixed-width str drops trailing NULs itself.
        want = x.tolist() if isinstance(x, np.ndarray) and x.dtype.kind == "U" else words
        assert s.to_list() == want, type(x)
    s = conn.array(words)
    assert s.nbytes == sum(len(w.encode()) for w in words)
    assert s.to_arrow().equals(pa.array(words, type=pa.large_string()))
    nd = s.to_ndarray()
    assert nd.tolist() == words and nd.dtype.kind in "TO"
    assert s.to_pandas().tolist() == words
    assert list(s) == words


def test_bad_text_is_refused_and_nothing_is_lost(conn: ak.Connection) -> None:
    with pytest.raises(ValueError, match="missing values"):
        conn.array(pa.array(["a", None]))
    with pytest.raises(TypeError, match="str only"):
        conn.array(["a", 3])
    for missing in [pd.Series(["a", None]), pd.Series(["a", np.nan]), pd.Series(["a", None], dtype="string"),
                    pd.Series(["a", None], dtype="str")]:
        with pytest.raises(ValueError, match="1 missing values"):
            conn.array(missing)
    assert conn.array(["a", "b"])[[]].to_list() == []
    kept = conn.array(["keep", "me"])
    off, data = conn.array(np.array([0, 1, 3], np.int64)), conn.array(np.frombuffer(b"a\xffb", np.uint8))
    with pytest.raises(ak.ArgumentValueError, match="string 1 is not valid UTF-8"):
        conn._request("str_check", {"a": [off.name, data.name]})
    bad_order = conn.array(np.array([0, 2, 1, 3], np.int64))
    with pytest.raises(ak.ArgumentValueError, match="must not decrease"):
        conn._request("str_check", {"a": [bad_order.name, data.name]})
    with pytest.raises(ak.ArgumentValueError, match="bad regular expression"):
        kept.contains("(a", regex=True)
    with pytest.raises(ak.IndexOutOfRangeError):
        kept[conn.array([5])]
    assert kept.to_list() == ["keep", "me"]


def test_check_is_cached_until_a_write(conn: ak.Connection) -> None:
    s = conn.array(["ab", "cd"])

    def skipped() -> int:
        return int(conn._request("stats")[0]["string_checks_skipped"])

    before = skipped()
    s.get_lengths()
    s.get_lengths()
    assert skipped() == before + 2  # str_check at upload vouched for it
    s.entry[1] = 0xFF  # the bytes written: "a\xff" is no longer UTF-8
    with pytest.raises(ak.ArgumentValueError, match="not valid UTF-8"):
        s.get_lengths()
    assert skipped() == before + 2


def test_compare_and_lengths(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    other = _words(len(words), seed=1)
    t = conn.array(other)
    for f in [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]:
        assert f(s, "fig").to_list() == [f(w, "fig") for w in words], f
        assert f(s, t).to_list() == [f(a, b) for a, b in zip(words, other, strict=True)], f
    assert s.get_lengths().to_list() == [len(w.encode()) for w in words]
    assert s.str_len().to_list() == [len(w) for w in words]
    assert (s == words).all()


@pytest.mark.parametrize("pattern,regex", [("a_", False), ("日", False), ("1 ", False), ("[bé]{2}", True),
                                           (r"\d\.", True), ("https", True)])
def test_search_matches_python(conn: ak.Connection, words: list[str], pattern: str, regex: bool) -> None:
    s = conn.array(words)
    rx = re.compile(pattern if regex else re.escape(pattern))
    assert s.contains(pattern, regex=regex).to_list() == [bool(rx.search(w)) for w in words]
    assert s.startswith(pattern, regex=regex).to_list() == [bool(rx.match(w)) for w in words]
    if not regex:
        assert s.endswith(pattern).to_list() == [w.endswith(pattern) for w in words]
    assert s.match_mask(rx.pattern).to_list() == [bool(rx.match(w)) for w in words]
    assert s.fullmatch_mask(rx.pattern).to_list() == [bool(rx.fullmatch(w)) for w in words]


def test_indexing(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    assert s[0] == words[0] and s[-1] == words[-1] and s[3] == words[3]
    for sl in [slice(None), slice(2, 50), slice(None, None, -3), slice(100, 10, -7), slice(5, 5)]:
        assert s[sl].to_list() == words[sl]
    idx = np.random.default_rng(1).integers(-len(words), len(words), 300)
    assert s[conn.array(idx)].to_list() == [words[i] for i in idx]
    assert s[idx.tolist()].to_list() == [words[i] for i in idx]
    mask = np.array([len(w) % 2 == 0 for w in words])
    assert s[conn.array(mask)].to_list() == [w for w, m in zip(words, mask, strict=True) if m]
    with pytest.raises(IndexError):
        s[len(words)]


def test_unique_argsort_in1d(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    values, inverse, counts = s.unique(return_inverse=True, return_counts=True)
    want_v, want_i, want_c = np.unique(np.array(words, dtype=object), return_inverse=True, return_counts=True)
    assert values.to_list() == want_v.tolist()
    assert inverse.to_list() == want_i.ravel().tolist()
    assert counts.to_list() == want_c.tolist()
    assert ak.argsort(s).to_list() == sorted(range(len(words)), key=lambda i: words[i])  # stable
    assert ak.sort(s).to_list() == sorted(words)
    assert ak.is_sorted(ak.sort(s)) and not ak.is_sorted(s)
    probe = words[::7] + ["not there"]
    assert ak.in1d(s, probe).to_list() == [w in set(probe) for w in words]
    assert ak.in1d(s, conn.array(probe), invert=True).to_list() == [w not in set(probe) for w in words]
    k = conn.array(np.arange(len(words)) % 3)
    want = sorted(range(len(words)), key=lambda i: (words[i], int(k[i])))
    assert ak.coargsort([s, k]).to_list() == want


def test_split_case_stick_concat(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    pieces, starts = s.split("_", return_segments=True)
    assert pieces.to_list() == [p for w in words for p in w.split("_")]
    assert starts.to_list() == np.cumsum([0] + [len(w.split("_")) for w in words])[:-1].tolist()
    assert s.split("_+", regex=True).to_list() == [p for w in words for p in re.split("_+", w)]
    assert s.upper().to_list() == [w.upper() for w in words]
    assert s.lower().to_list() == [w.lower() for w in words]
    t = conn.array(words[::-1])
    assert s.stick(t, delimiter="--").to_list() == [a + "--" + b for a, b in zip(words, words[::-1], strict=True)]
    assert (s + t).to_list() == [a + b for a, b in zip(words, words[::-1], strict=True)]
    assert s.lstick(t, "|").to_list() == [b + "|" + a for a, b in zip(words, words[::-1], strict=True)]
    assert ak.concatenate([s, t, s[:3]]).to_list() == words + words[::-1] + words[:3]


def test_casts_match_python(conn: ak.Connection) -> None:
    ints = np.array([0, -5, 2**63 - 1, -(2**63), 42])
    assert ak.cast(conn.array(ints), "str").to_list() == [str(i) for i in ints.tolist()]
    floats = np.array([1.0, 0.1, -0.0, 1e16, 1e15, 1e-5, 1e-4, 123.456, np.nan, np.inf, -np.inf, 2.5e-7, 1 / 3])
    assert ak.cast(conn.array(floats), "str").to_list() == [str(f) for f in floats.tolist()]
    assert ak.cast(conn.array(np.array([True, False])), "str").to_list() == ["True", "False"]
    f32 = np.array([0.1, 1e20, 3.25], dtype=np.float32)
    assert ak.cast(conn.array(f32), "str").to_list() == [str(x) for x in f32]
    text = conn.array(["1.5", " -2", "nan", "1e300", "inf"])
    got = ak.cast(text, ak.float64).to_ndarray()
    np.testing.assert_array_equal(got, np.array([float(x) for x in text.to_list()]))
    assert ak.cast(conn.array(["7", "-8"]), ak.int64).to_list() == [7, -8]
    with pytest.raises(ak.ArgumentValueError, match='string 1, "x", is not a valid int64'):
        ak.cast(conn.array(["1", "x"]), ak.int64)
    # What Python's int() and float() take, and what they refuse.
    good_ints, good_floats = ["1_000", "+5", " 007 ", "-0"], ["1_0.5", "-inf", "Infinity", "1e-3", ".5", "5."]
    assert ak.cast(conn.array(good_ints), ak.int64).to_list() == [int(x) for x in good_ints]
    assert ak.cast(conn.array(good_ints[:3]), ak.uint64).to_list() == [int(x) for x in good_ints[:3]]
    np.testing.assert_array_equal(ak.cast(conn.array(good_floats), ak.float64).to_ndarray(),
                                  [float(x) for x in good_floats])
    for dtype, bad, py in [(ak.int64, "1__0", int), (ak.int64, "_1", int), (ak.int64, "1_", int),
                           (ak.float64, "0x1p-2", float), (ak.float64, "1_.5", float), (ak.int64, "1.0", int)]:
        with pytest.raises(ValueError):
            py(bad)
        with pytest.raises(ak.ArgumentValueError, match="is not a valid"):
            ak.cast(conn.array([bad]), dtype)


def test_hash_and_encode(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    hi, lo = s.hash()
    pairs = list(zip(hi.to_list(), lo.to_list(), strict=True))
    by_word: dict[str, tuple[int, int]] = {}
    for w, p in zip(words, pairs, strict=True):
        assert by_word.setdefault(w, p) == p
    assert len(set(pairs)) == len(set(words))
    hosts = ["example.com", "münchen.de", "日本.jp", "ABC", "Bücher.DE", "straße.de", "ÉCOLE。fr", "Ⅻ.com", "a.b.",
             "x" * 63 + ".com"]
    h = conn.array(hosts)
    assert h.encode("idna").to_list() == [x.encode("idna").decode() for x in hosts]
    assert h.encode("idna").decode("idna").to_list() == [x.encode("idna").decode("idna") for x in hosts]
    with pytest.raises(ak.ArgumentValueError, match="cannot encode string 1"):
        h.encode("ascii")
    for bad in ["a..b", "x" * 64 + ".com", ".a"]:
        with pytest.raises(UnicodeError):
            bad.encode("idna")
        with pytest.raises(ak.ArgumentValueError, match="cannot encode string 0"):
            conn.array([bad]).encode("idna")


def test_random_strings(conn: ak.Connection) -> None:
    a = ak.random_strings_uniform(1, 16, 50_000, seed=7, conn=conn)
    b = ak.random_strings_uniform(1, 16, 50_000, seed=7, conn=conn)
    assert (a == b).all()
    lengths = a.get_lengths().to_ndarray()
    assert lengths.min() == 1 and lengths.max() == 15
    assert set("".join(a[:1000].to_list())) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    digits = ak.random_strings_uniform(4, 5, 100, characters="numeric", conn=conn).to_list()
    assert all(len(x) == 4 and x.isdigit() for x in digits)
    with pytest.raises(ValueError, match="characters must be one of"):
        ak.random_strings_uniform(1, 2, 3, characters="klingon", conn=conn)
    with pytest.raises(ak.ArgumentValueError, match="minlen < maxlen"):
        ak.random_strings_uniform(5, 5, 3, conn=conn)


def test_groupby_strings_matches_pandas(conn: ak.Connection, words: list[str]) -> None:
    s = conn.array(words)
    vals = np.arange(len(words), dtype=np.int64)
    g = ak.GroupBy(s)
    keys, sizes = g.size()
    want = pd.Series(vals).groupby(pd.Series(words)).agg(["size", "sum"])
    assert keys.to_list() == want.index.tolist()
    assert sizes.to_list() == want["size"].tolist()
    assert g.sum(conn.array(vals))[1].to_list() == want["sum"].tolist()
    k2 = np.arange(len(words)) % 2
    (ka, kb), n = ak.GroupBy([s, conn.array(k2)]).size()
    want2 = pd.DataFrame({"s": words, "k": k2}).groupby(["s", "k"]).size()
    assert list(zip(ka.to_list(), kb.to_list(), strict=True)) == want2.index.tolist()
    assert n.to_list() == want2.tolist()


def test_register_and_attach(conn: ak.Connection, server, words: list[str]) -> None:
    s = conn.array(words).register("test_strings_kept")
    other = server.connect()
    try:
        back = ak.Strings.attach("test_strings_kept", conn=other)
        assert back.to_list() == words and back.is_registered()
    finally:
        other.close()
    taken = conn.array(["x"]).register("test_strings_taken")
    before = {e["name"] for e in conn.list_arrays()}
    with pytest.raises(ak.NameInUseError):
        conn.array(["y"]).register("test_strings_taken")
    after = {e["name"] for e in conn.list_arrays()}
    assert {n for n in after - before if n.startswith("test_strings")} == set()
    assert ak.Strings.attach("test_strings_taken", conn=conn).to_list() == ["x"]
    for kept in (s, taken):
        kept.unregister()

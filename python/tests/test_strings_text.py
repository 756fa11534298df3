"""ak.Strings' text methods (case, character classes, strip, peel,
affixes) and regular expressions (Match, findall, sub, regex_split),
checked against Python's str and re on a real server."""

from __future__ import annotations

import random
import re
import sys
import unicodedata

import numpy as np
import pytest

import arktos as ak

# Text with cases, digits of several kinds, spaces, delimiters and
# multi-byte runes, so every predicate and field operation has both answers.
_ALPHABET = ["a", "B", "z", "Q", " ", "\t", ".", "_", "1", "9", "²", "٣", "é", "É", "日", "ǅ", "x", "\x00", "-", "="]


def _text(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = ["", " ", "a.b", "c.d.e", "..", " x ", "\t y\n", "Hello World", "hELLO wORLD", "ÉCOLE été",
           "ǅemal", "x1.y2.z3", "123", "²", "①", "٣", "abc", "ABC", "Abc Def", "aBC", "k=v", "k==v=w"]
    out += ["".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(14))) for _ in range(n)]
    return out


@pytest.fixture
def text() -> list[str]:
    return _text(4000)


# The server's character tables are Unicode 15.0 (Go's); Python 3.11's are
# 14.0. Between them, these characters became lowercase (Other_Lowercase):
# with Python's 14.0 they are the only differences the test allows.
_UNICODE_15_CHANGES = {"\u10fc", "\ua7f2", "\ua7f3", "\ua7f4", "\uab69"}


def _differs_by_version(c: str) -> bool:
    return unicodedata.unidata_version == "14.0.0" and c in _UNICODE_15_CHANGES


def _assigned() -> list[str]:
    """Every code point Python's Unicode database assigns (surrogates
    aside): Go's tables may be a newer Unicode, whose additions Python
    reports as unassigned."""
    return [chr(c) for c in range(sys.maxunicode + 1)
            if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) != "Cn"]


def test_character_classes_match_python_for_every_character(conn: ak.Connection, text: list[str]) -> None:
    chars = _assigned()
    single, words = conn.array(chars), conn.array(text)
    for name in ["isalnum", "isalpha", "isdecimal", "isdigit", "islower", "isupper", "istitle", "isspace"]:
        got = getattr(single, name)().to_ndarray()
        want = np.array([getattr(c, name)() for c in chars])
        wrong = [f"U+{ord(c):04X}" for c, g, w in zip(chars, got, want, strict=True)
                 if g != w and not _differs_by_version(c)]
        assert not wrong, f"{name}: {len(wrong)} characters differ from Python's, first {wrong[:10]}"
        assert getattr(words, name)().to_list() == [getattr(w, name)() for w in text], name
    assert words.isempty().to_list() == [w == "" for w in text]


def test_case_matches_python(conn: ak.Connection, text: list[str]) -> None:
    s = conn.array(text)
    for name in ["lower", "upper", "title", "capitalize"]:
        assert getattr(s, name)().to_list() == [getattr(w, name)() for w in text], name
    # Characters whose Python mapping is one character map the same way
    # (Python's special casing, 'ß'.upper() == 'SS', is not applied).
    chars = [c for c in _assigned() if len(c.lower()) == len(c.upper()) == len(c.title()) == 1]
    single = conn.array(chars)
    for name in ["lower", "upper", "title"]:
        got = getattr(single, name)().to_list()
        wrong = [f"U+{ord(c):04X}" for c, g in zip(chars, got, strict=True) if g != getattr(c, name)()]
        assert not wrong, f"{name}: {len(wrong)} characters differ from Python's, first {wrong[:10]}"


def test_strip_matches_python(conn: ak.Connection, text: list[str]) -> None:
    s = conn.array(text)
    for chars in [None, "", " .", "aé1\x00"]:
        for name in ["strip", "lstrip", "rstrip"]:
            want = [getattr(w, name)(chars or None) for w in text]
            assert getattr(s, name)(chars).to_list() == want, (name, chars)


def _peel(w: str, delim: str, times: int, include: bool, partial: bool, right: bool) -> tuple[str, str]:
    """Arkouda's peel / rpeel from its documentation, one string at a time."""
    cuts = [m.start() for m in re.finditer(re.escape(delim), w)] if not right else []
    if right:
        end = len(w)
        while (k := w.rfind(delim, 0, end)) >= 0:
            cuts.insert(0, k)
            end = k
    if len(cuts) < times:
        return (w, "") if right != partial else ("", w)
    at = cuts[-times] if right else cuts[times - 1]
    if include and not right:
        return w[:at + len(delim)], w[at + len(delim):]
    if include:
        return w[:at], w[at:]
    return w[:at], w[at + len(delim):]


@pytest.mark.parametrize("delim,times,include,partial", [(".", 1, False, False), (".", 2, False, False),
                                                         (".", 2, False, True), (".", 1, True, False),
                                                         ("==", 1, True, True), ("é", 1, False, False)])
def test_peel_and_rpeel(conn: ak.Connection, text: list[str], delim: str, times: int, include: bool,
                        partial: bool) -> None:
    s = conn.array(text)
    for right in [False, True]:
        if right:
            got = s.rpeel(delim, times=times, includeDelimiter=include, keepPartial=partial)
        else:
            got = s.peel(delim, times=times, includeDelimiter=include, keepPartial=partial)
        want = [_peel(w, delim, times, include, partial, right) for w in text]
        assert got[0].to_list() == [a for a, _ in want], right
        assert got[1].to_list() == [b for _, b in want], right
    with pytest.raises(ValueError, match="times must be >= 1"):
        s.peel(".", times=0)
    with pytest.raises(ak.ArgumentValueError, match="matches the empty string"):
        s.peel("x*", regex=True)


def test_prefixes_and_suffixes(conn: ak.Connection, text: list[str]) -> None:
    s = conn.array(text)
    for proper in [True, False]:
        for n in [0, 1, 3]:
            ok = [len(w) > n or (not proper and len(w) == n) for w in text]
            pre, origins = s.get_prefixes(n, proper=proper)
            assert origins.to_list() == ok
            assert pre.to_list() == [w[:n] for w, k in zip(text, ok, strict=True) if k]
            suf = s.get_suffixes(n, return_origins=False, proper=proper)
            assert suf.to_list() == [w[len(w) - n:] for w, k in zip(text, ok, strict=True) if k]


# Patterns whose matches are never empty: there RE2's and Python's
# finditer, sub and split agree exactly.
PATTERNS = [r"\d+", r"[a-zé]\.", r"(\w)=(\w*)", "日|ǅ", r"\s+", r"(?i)abc", r"(x)(?:y)?(\d)?"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_findall_and_locations(conn: ak.Connection, text: list[str], pattern: str) -> None:
    s, rx = conn.array(text), re.compile(pattern)
    found = [(i, m) for i, w in enumerate(text) for m in rx.finditer(w)]
    counts, starts, lens = s.find_locations(pattern)
    assert counts.to_list() == [len(rx.findall(w)) for w in text]
    assert starts.to_list() == [m.start() for _, m in found]
    assert lens.to_list() == [m.end() - m.start() for _, m in found]
    values, origins = s.findall(pattern, return_match_origins=True)
    assert values.to_list() == [m.group(0) for _, m in found]
    assert origins.to_list() == [i for i, _ in found]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("kind", ["search", "match", "fullmatch"])
def test_match_objects(conn: ak.Connection, text: list[str], pattern: str, kind: str) -> None:
    s, rx = conn.array(text), re.compile(pattern)
    ms = [getattr(rx, kind)(w) for w in text]
    m = getattr(s, kind)(pattern)
    assert m.match_type() == kind.upper()
    assert m.matched().to_list() == [x is not None for x in ms]
    assert m.start().to_list() == [x.start() for x in ms if x]
    assert m.end().to_list() == [x.end() for x in ms if x]
    values, origins = m.find_matches(return_match_origins=True)
    assert values.to_list() == [x.group(0) for x in ms if x]
    assert origins.to_list() == [i for i, x in enumerate(ms) if x]
    for g in range(1, rx.groups + 1):
        assert m.group(g).to_list() == [x.group(g) or "" for x in ms if x], g
    with pytest.raises(ak.ArgumentValueError, match=f"group {rx.groups + 1} is not in the pattern"):
        m.group(rx.groups + 1)


@pytest.mark.parametrize("pattern,repl", [(r"\d+", "#"), (r"(\w)=(\w*)", r"\2=\1"), (r"(?P<c>[a-z])\.", r"<\g<c>>"),
                                          (r"\s+", r"\\ $1 \n"), ("日|ǅ", r"\g<0>\g<0>"), (r"[aé]", "\x00\0")])
def test_sub_matches_python(conn: ak.Connection, text: list[str], pattern: str, repl: str) -> None:
    s, rx = conn.array(text), re.compile(pattern)
    for count in [0, 1, 2]:
        got, n = s.subn(pattern, repl, count=count)
        want = [rx.subn(repl, w, count=count) for w in text]
        assert got.to_list() == [w for w, _ in want], count
        assert n.to_list() == [k for _, k in want], count
    assert s.sub(pattern, repl).to_list() == [rx.sub(repl, w) for w in text]


def test_sub_refuses_what_python_refuses(conn: ak.Connection) -> None:
    s = conn.array(["a1"])
    for repl, message in [(r"\2", "refers to group 2"), (r"\g<x>", "does not name"), (r"\q", "unknown escape"),
                          ("x\\", "lone backslash"), (r"\g<1", "without a <group>")]:
        with pytest.raises((re.error, IndexError)):
            re.compile(r"(\d)").sub(repl, "a1")
        with pytest.raises(ak.ArgumentValueError, match=message):
            s.sub(r"(\d)", repl)


@pytest.mark.parametrize("pattern", [r"\.", r"[._]+", r"\s"])
def test_regex_split_matches_re_split(conn: ak.Connection, text: list[str], pattern: str) -> None:
    s = conn.array(text)
    for maxsplit in [0, 1, 2]:
        pieces, starts = s.regex_split(pattern, maxsplit=maxsplit, return_segments=True)
        want = [re.split(pattern, w, maxsplit=maxsplit) for w in text]
        assert pieces.to_list() == [p for w in want for p in w], maxsplit
        assert starts.to_list() == np.cumsum([0] + [len(w) for w in want])[:-1].tolist()


def test_random_strings_lognormal(conn: ak.Connection) -> None:
    a = ak.random_strings_lognormal(2.0, 0.5, 20000, characters="numeric", seed=5, conn=conn)
    b = ak.random_strings_lognormal(2.0, 0.5, 20000, characters="numeric", seed=5, conn=conn)
    assert a.to_list() == b.to_list()
    lens = a.get_lengths().to_ndarray()
    assert abs(np.median(lens) - np.exp(2.0)) < 1  # the median of a lognormal is exp(logmean)
    assert a.isdecimal().to_ndarray()[lens > 0].all()
    with pytest.raises(ak.ArgumentValueError, match="logstd > 0"):
        ak.random_strings_lognormal(2.0, 0.0, 3, conn=conn)

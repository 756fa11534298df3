"""ak.Categorical: strings as codes on the server, against numpy and pandas."""

from __future__ import annotations

import numpy as np
import pytest
from _opsdata import forbid_downloads

import arktos as ak

pd = pytest.importorskip("pandas")

WORDS = np.array(["JFK", "Midtown", "Harlem", "", "Zoë", "midtown", "JFK ", "Astoria", "a", "B"])


def strings(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return WORDS[rng.integers(0, WORDS.size, n)]


def test_round_trip_and_attributes(default_conn) -> None:
    x = strings(1000)
    c = ak.Categorical(x)
    assert c.size == len(c) == 1000 and c.shape == (1000,)
    assert c.categories.tolist() == sorted(set(x.tolist()))
    assert c.codes.dtype == np.int8 and c.nbytes == 1000
    assert c.to_ndarray().tolist() == x.tolist()
    assert c.to_list() == x.tolist() and list(c) == x.tolist()
    assert np.asarray(c).tolist() == x.tolist()
    assert c[3] == x[3] and isinstance(c[3], str)
    assert c[-1] == x[-1]
    assert c[10:20].to_ndarray().tolist() == x[10:20].tolist()
    assert repr(ak.Categorical(["a", "b"])) == "Categorical(['a', 'b'])"
    assert "size=1000" in repr(c) and repr(c).startswith(f"Categorical([{str(x[0])!r}, ")
    many = ak.Categorical(np.array([f"id{i:05d}" for i in range(300)]))
    assert many.codes.dtype == np.int16 and many.to_ndarray()[299] == "id00299"
    empty = ak.Categorical([])
    assert empty.size == 0 and empty.to_ndarray().size == 0
    assert ak.Categorical(np.array([b"x", b"y"])).to_list() == ["x", "y"]


def test_comparisons_and_lookups_run_on_the_server(default_conn, monkeypatch) -> None:
    x, y = strings(500, 1), strings(500, 2)
    c, d = ak.Categorical(x), ak.Categorical(y[:250].tolist() + ["Queens"] * 250)
    y2 = np.concatenate([y[:250], np.array(["Queens"] * 250)])
    forbid_downloads(monkeypatch)  # the answers below stay on the server
    got = {
        "eq": c == "JFK", "ne": c != "JFK", "absent": c == "Bronx", "absent_ne": c != "Bronx",
        "cat_eq": c == d, "cat_ne": c != d, "isin": c.isin(["a", "Zoë", "nope"]),
        "in1d_invert": ak.in1d(c, ["a", "B"], invert=True), "contains": c.contains("id"),
        "starts": c.startswith("M"), "ends": c.endswith(" "), "mask": c[c == "Harlem"].codes,
    }
    monkeypatch.undo()
    want = {
        "eq": x == "JFK", "ne": x != "JFK", "absent": x == "Bronx", "absent_ne": x != "Bronx",
        "cat_eq": x == y2, "cat_ne": x != y2, "isin": np.isin(x, ["a", "Zoë", "nope"]),
        "in1d_invert": ~np.isin(x, ["a", "B"]), "contains": np.char.find(x, "id") >= 0,
        "starts": np.char.startswith(x, "M"), "ends": np.char.endswith(x, " "),
    }
    for key, w in want.items():
        assert got[key].to_ndarray().tolist() == w.tolist(), key
    assert ak.Categorical.from_codes(got["mask"], c.categories).to_list() == x[x == "Harlem"].tolist()
    with pytest.raises(TypeError, match="compares with a str or a Categorical"):
        c == 3  # noqa: B015
    with pytest.raises(ValueError, match="truth value"):
        bool(c)


def test_sort_unique_counts_as_the_strings(default_conn) -> None:
    x = strings(2000, 3)
    c = ak.Categorical(x)
    assert ak.argsort(c).to_ndarray().tolist() == np.argsort(x, kind="stable").tolist()
    assert c.argsort().to_ndarray().tolist() == np.argsort(x, kind="stable").tolist()
    assert ak.sort(c).to_list() == np.sort(x).tolist() == c.sort_values().to_list()
    assert ak.unique(c).to_list() == np.unique(x).tolist()
    values, counts = ak.value_counts(c)
    want_v, want_c = np.unique(x, return_counts=True)
    assert values.to_list() == want_v.tolist() and counts.to_ndarray().tolist() == want_c.tolist()
    part = c[c != "JFK"]  # categories kept, some absent: unique gives those present
    assert part.unique().to_list() == np.unique(x[x != "JFK"]).tolist()
    with pytest.raises(TypeError, match="value_counts"):
        ak.unique(c, return_counts=True)


def test_groupby_equals_pandas(default_conn) -> None:
    rng = np.random.default_rng(4)
    n = 5000
    x = strings(n, 5)
    k2 = rng.integers(0, 3, n)
    v = rng.standard_normal(n)
    c, vals = ak.Categorical(x), ak.array(v)
    df = pd.DataFrame({"s": x, "k": k2, "v": v})

    keys, sums = ak.GroupBy(c).sum(vals)
    want = df.groupby("s", sort=True)["v"].sum()
    assert isinstance(keys, ak.Categorical)
    assert keys.to_list() == want.index.tolist()
    np.testing.assert_allclose(sums.to_ndarray(), want.to_numpy(), rtol=1e-12)

    g = ak.GroupBy([c, ak.array(k2)])
    (ks, kk), counts = g.count()
    want2 = df.groupby(["s", "k"], sort=True)["v"].count()
    assert list(zip(ks.to_list(), kk.to_ndarray().tolist())) == want2.index.tolist()
    assert counts.to_ndarray().tolist() == want2.to_numpy().tolist()
    (tk, _), top = g.nlargest(vals, 1)
    want3 = df.groupby(["s", "k"], sort=True)["v"].max()
    assert isinstance(tk, ak.Categorical) and tk.to_list() == [s for s, _ in want3.index]
    np.testing.assert_array_equal(top.to_ndarray(), want3.to_numpy())
    assert g.broadcast(counts).to_ndarray().tolist() == df.groupby(["s", "k"])["v"].transform("count").tolist()


def test_pandas_interop(default_conn) -> None:
    df = pd.DataFrame({
        "zone": ["b", "a", "b", "c"], "n": [1, 2, 3, 4],
        "cat": pd.Categorical(["y", "x", "y", "x"], categories=["y", "x"]),  # unsorted categories
        "s": pd.array(["p", "q", "p", "q"], dtype="string"),
    })
    cols = ak.from_pandas(df)
    assert isinstance(cols["zone"], ak.Categorical) and isinstance(cols["n"], ak.pdarray)
    assert cols["cat"].categories.tolist() == ["x", "y"]  # sorted, codes renumbered
    assert cols["cat"].to_list() == ["y", "x", "y", "x"]
    back = ak.to_pandas(cols)
    for name in ("zone", "cat", "s"):
        assert back[name].astype(str).tolist() == df[name].astype(str).tolist(), name
        assert isinstance(back[name].dtype, pd.CategoricalDtype)
    assert back["n"].tolist() == [1, 2, 3, 4]
    series = ak.to_pandas(cols["zone"], name="zone")
    assert series.name == "zone" and series.tolist() == ["b", "a", "b", "c"]
    with pytest.raises(ValueError, match="column 'bad'.*missing values"):
        ak.from_pandas(pd.DataFrame({"bad": ["a", None]}))
    with pytest.raises(ValueError, match="missing values"):
        ak.from_pandas(pd.Series(pd.Categorical(["a", None])))
    with pytest.raises(ValueError, match="missing values"):
        ak.from_pandas(pd.Series(pd.array(["a", None], dtype="string")))


def test_refusals(default_conn) -> None:
    with pytest.raises(TypeError, match="holds strings"):
        ak.Categorical([1, 2])
    with pytest.raises(TypeError, match="holds a int at 1"):
        ak.Categorical(np.array(["a", 3], dtype=object))
    with pytest.raises(TypeError, match="not one str"):
        ak.Categorical("abc")
    with pytest.raises(ValueError, match="1-D"):
        ak.Categorical(np.array([["a"]]))
    with pytest.raises(ValueError, match="distinct and sorted"):
        ak.Categorical.from_codes(ak.array(np.array([0, 1], dtype=np.int8)), ["b", "a"])
    with pytest.raises(TypeError, match="integer pdarray"):
        ak.Categorical.from_codes(ak.array([0.5]), ["a"])


def test_register_and_attach_across_sessions(server) -> None:
    import gc
    import uuid

    name = f"zones_{uuid.uuid4().hex[:8]}"
    first = server.connect()
    x = np.array(["Zoë", "JFK", "", "JFK", "日本"])
    c = ak.Categorical(x, conn=first)
    assert not c.is_registered()
    assert c.register(name) is c and c.is_registered()
    del c
    gc.collect()
    first.close()
    second = server.connect()
    try:
        back = ak.Categorical.attach(name, conn=second)
        assert back.is_registered() and back.to_list() == x.tolist()
        assert back.categories.tolist() == sorted(set(x.tolist()))
        # a name taken (here by the categories' arrays' names) keeps nothing new
        other = ak.Categorical(["q"], conn=second)
        with pytest.raises(ak.NameInUseError):
            other.register(name)
        names = {e["name"] for e in second.list_arrays()}
        assert {name, f"{name}/categories", f"{name}/category_lengths"} <= names
        assert not other.is_registered() and other.codes.name != name
        assert sum(n.startswith(name) for n in names) == 3
        # the codes' name taken: the categories stored first are taken back
        taken = second.array(np.arange(2), name=f"{name}_t")
        with pytest.raises(ak.NameInUseError):
            other.register(f"{name}_t")
        assert not {f"{name}_t/categories", f"{name}_t/category_lengths"} & {
            e["name"] for e in second.list_arrays()}
        assert not other.is_registered()
        taken.delete()
        wrong = [second.array(np.arange(3), name=f"{name}x"),  # lengths that do not fit the bytes
                 second.array(np.zeros(1, np.uint8), name=f"{name}x/categories"),
                 second.array(np.array([5]), name=f"{name}x/category_lengths")]
        with pytest.raises(ValueError, match="not a Categorical's categories"):
            ak.Categorical.attach(f"{name}x", conn=second)
        for arr in wrong:
            arr.delete()
        back.delete()  # the codes and the categories
        assert not any(e["name"].startswith(name + "/") or e["name"] == name
                       for e in second.list_arrays())
    finally:
        second.close()


def test_unregister_hands_it_back(default_conn) -> None:
    import gc
    import uuid

    name = f"u_{uuid.uuid4().hex[:8]}"
    c = ak.Categorical(["a", "b"]).register(name)
    c.unregister()
    assert not c.is_registered()
    assert f"{name}/categories" not in {e["name"] for e in ak.list_arrays()}
    del c
    gc.collect()
    assert name not in {e["name"] for e in ak.list_arrays()}


def test_concatenate_over_the_union_of_categories(default_conn) -> None:
    x, y, z = strings(300, 7), np.array(["Queens", "a", "Bronx"]), strings(50, 8)
    parts = [ak.Categorical(x), ak.Categorical(y), ak.Categorical(z)]
    joined = ak.concatenate(parts)
    assert isinstance(joined, ak.Categorical)
    assert joined.to_list() == np.concatenate([x, y, z]).tolist()
    assert joined.categories.tolist() == np.unique(np.concatenate([x, y, z])).tolist()
    same = ak.concatenate([parts[0], parts[0]])
    assert same.to_list() == np.concatenate([x, x]).tolist()
    many = ak.Categorical(np.array([f"w{i:04d}" for i in range(200)]))  # int16 codes after the union
    wide = ak.concatenate([parts[1], many])
    assert wide.codes.dtype == np.int16 and wide.to_list() == y.tolist() + many.to_list()
    with pytest.raises(TypeError, match="Categoricals only"):
        ak.concatenate([parts[0], ak.arange(3)])


def test_factorize_by_hashing_equals_np_unique(default_conn, monkeypatch) -> None:
    """With pandas the codes come from its hashing factorize (np.unique's
    sort of every string took 6x longer at 10^7); they equal np.unique's,
    which answers without pandas."""
    from arktos.pandas import _categorical

    x = np.concatenate([strings(3000, 9), np.array(["é", "e", "E", "ß", "😀"])])
    for values in (x, x.astype(object), list(x)):
        calls = []
        real_unique = np.unique
        monkeypatch.setattr(np, "unique", lambda *a, **k: calls.append(1) or real_unique(*a, **k))
        fast = ak.Categorical(values)
        monkeypatch.undo()
        assert not calls, "np.unique ran: the hashing path was not taken"
        monkeypatch.setattr(_categorical, "_factorize_hashed", lambda arr: None)
        slow = ak.Categorical(values)
        monkeypatch.undo()
        want_c, want_i = np.unique(x, return_inverse=True)
        for c in (fast, slow):
            assert c.categories.dtype.kind == "U" and c.categories.tolist() == want_c.tolist()
            assert c.codes.to_ndarray().tolist() == want_i.tolist()
    with pytest.raises(ValueError, match="1 missing values.*first at 2"):
        ak.Categorical(np.array(["a", "b", None], dtype=object))


def test_arrow_interop(default_conn) -> None:
    pa = pytest.importorskip("pyarrow")
    x = strings(400, 11)
    table = pa.table({"s": pa.array(x), "d": pa.array(x[::-1]).dictionary_encode(),
                      "big": pa.array(x, pa.large_string()), "n": np.arange(400)})
    cols = ak.from_arrow(table)
    for name, want in (("s", x), ("d", x[::-1]), ("big", x)):
        assert isinstance(cols[name], ak.Categorical), name
        assert cols[name].to_list() == want.tolist(), name
    assert isinstance(cols["n"], ak.pdarray)
    out = ak.to_arrow(cols)
    assert pa.types.is_dictionary(out.schema.field("s").type)
    assert out.column("s").to_pylist() == x.tolist()
    # chunks with dictionaries of their own, unsorted
    chunked = pa.chunked_array([pa.array(["q", "b", "q"]).dictionary_encode(),
                                pa.array(["a", "q"]).dictionary_encode()])
    c = ak.from_arrow(chunked)
    assert c.to_list() == ["q", "b", "q", "a", "q"] and c.categories.tolist() == ["a", "b", "q"]
    with pytest.raises(ValueError, match="1 nulls"):
        ak.from_arrow(pa.array(["a", None]))


def test_groupby_aggregates_strings(default_conn) -> None:
    """A Categorical's values: first, mode (the smallest on ties), min and
    max give strings, nunique and count numbers, as pandas' do; broadcast
    of a string per group gives one per row."""
    rng = np.random.default_rng(12)
    n = 3000
    k = rng.integers(0, 40, n)
    x = strings(n, 13)
    df = pd.DataFrame({"k": k, "s": x})
    g = ak.GroupBy(ak.array(k))
    c = ak.Categorical(x)
    grouped = df.groupby("k", sort=True)["s"]
    for op, want in (("first", grouped.first()), ("min", grouped.min()), ("max", grouped.max()),
                     ("mode", grouped.agg(lambda s: s.mode().iloc[0]))):
        keys, got = g.aggregate(c, op)
        assert isinstance(got, ak.Categorical), op
        assert keys.to_ndarray().tolist() == want.index.tolist()
        assert got.to_list() == want.tolist(), op
    assert g.nunique(c)[1].to_ndarray().tolist() == grouped.nunique().tolist()
    assert g.count(c)[1].to_ndarray().tolist() == grouped.count().tolist()
    firsts = g.first(c)[1]
    rows = g.broadcast(firsts)
    assert isinstance(rows, ak.Categorical)
    assert rows.to_list() == grouped.transform("first").tolist()
    with pytest.raises(TypeError, match="cannot take the sum of strings"):
        g.sum(c)
    with pytest.raises(TypeError, match="one aggregation at a time"):
        g.agg(c, ["first", "min"])


def test_registered_categorical_survives_a_checkpoint(make_server, tmp_path) -> None:
    """save_all keeps the three arrays of a registered Categorical by name
    (names with '/' included), and load_all brings it back whole."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    conn = make_server("--data-dir", str(data_dir)).connect()
    x = np.array(["Zoë", "JFK", "JFK", "a/b"])
    ak.Categorical(x, conn=conn).register("trips/zone")
    ak.save_all("ck", conn=conn)
    conn.delete(["trips/zone", "trips/zone/categories", "trips/zone/category_lengths"])
    loaded = ak.load_all("ck", conn=conn)
    assert set(loaded) == {"trips/zone", "trips/zone/categories", "trips/zone/category_lengths"}
    back = ak.Categorical.attach("trips/zone", conn=conn)
    assert back.to_list() == x.tolist()
    conn.close()


def test_decoding_strings_by_numpy_equals_the_loop(monkeypatch) -> None:
    """Categories from the server (UTF-8 bytes and lengths): ASCII ones are
    widened by numpy (the path is taken: the loop is not), the rest decoded
    one by one; both give what numpy makes of the strings themselves."""
    from arktos.pandas import _categorical
    cases = [["", "a", "", "bb"], [""], ["x" * 70000, "y"], ["a\x00b", "a", "\x7f"],
             [f"id{i}" for i in range(300_000)], ["ü", "a", "日本"]]
    real = _categorical._ascii_strings
    called: list[int] = []
    monkeypatch.setattr(_categorical, "_ascii_strings", lambda *a: called.append(1) or real(*a))
    for case in cases:
        raw = "".join(case).encode()
        lens = np.array([len(c.encode()) for c in case], dtype=np.int64)
        called.clear()
        got = _categorical._decode_strings(raw, lens)
        assert bool(called) == raw.isascii()
        np.testing.assert_array_equal(got, np.array(case, dtype=str))
        assert got.dtype == np.array(case, dtype=str).dtype


def test_encoding_strings_by_numpy_equals_the_loop(monkeypatch) -> None:
    """Categories going to the server (to_parquet, register): ASCII ones
    are narrowed by numpy (the path is taken), the rest encoded one by one;
    both give each string's UTF-8 bytes and lengths, and decode back."""
    from arktos.pandas import _categorical
    cases = [["", "a", "", "bb"], [""], [], ["x" * 70000, "y"], ["a\x00b", "a", "\x7f"],
             [f"id{i}" for i in range(300_000)], ["ü", "a", "日本"]]
    real = _categorical._ascii_bytes
    called: list[int] = []
    monkeypatch.setattr(_categorical, "_ascii_bytes", lambda *a: called.append(1) or real(*a))
    for case in cases:
        strings = np.array(case, dtype=str)
        called.clear()
        data, lengths = _categorical._encode_strings(strings)
        assert data.dtype == np.uint8 and lengths.dtype == np.int64
        assert data.tobytes() == "".join(case).encode()
        assert lengths.tolist() == [len(c.encode()) for c in case]
        assert bool(called) == (bool(case) and "".join(case).isascii() and strings.dtype.itemsize > 0)
        np.testing.assert_array_equal(_categorical._decode_strings(data.tobytes(), lengths), strings)


def test_trailing_nul_refused_not_merged(conn: ak.Connection) -> None:
    """Strings ending in NUL are refused: numpy's str arrays, which hold the
    categories, drop trailing NULs, so "a\\x00" silently became "a" (merged
    with it, or 'categories must be unique' from a file). A NUL inside a
    string is kept."""
    pd = pytest.importorskip("pandas")
    for values in (["a", "a\x00", "b"], pd.Series(["x\x00", "y"]), np.array(["a", "b\x00"], dtype=object),
                   pd.Categorical(["q\x00", "r"])):
        with pytest.raises(ValueError, match="ending in a NUL"):
            ak.Categorical(values, conn=conn)
    assert ak.Categorical(["a", "a\x00b", "b"], conn=conn).to_ndarray().tolist() == ["a", "a\x00b", "b"]

"""ak.DataFrame and its group-by, against pandas on the same data
(integers and strings exactly, float sums bit for bit against a sequential
loop in row order, other floats to 1e-12 relative)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _opsdata import recorded

import arktos as ak

pd = pytest.importorskip("pandas")

N = 30_000
ZONES = np.array(["Bronx", "Brooklyn", "EWR", "Manhattan", "Queens", "Staten Island"])


def _frame(rng: np.random.Generator) -> Any:
    """Skewed int keys, float keys with NaN, a string column, float values
    with NaN and ties, int values."""
    zone = (265 * rng.random(N) ** 3).astype(np.int64) + 1
    hour = rng.integers(0, 24, N).astype(np.int8)
    fkey = np.round(rng.normal(0, 2, N)).astype(np.float64)
    fkey[rng.random(N) < 0.05] = np.nan
    fare = np.round(rng.exponential(15, N), 2)
    fare[rng.random(N) < 0.03] = np.nan
    count = rng.integers(-3, 9, N)
    borough = ZONES[rng.integers(0, len(ZONES), N)]
    return pd.DataFrame({"zone": zone, "hour": hour, "fkey": fkey, "fare": fare, "count": count,
                         "borough": borough})


def _pandas_of(got: Any) -> Any:
    """got as pandas (a DataFrame of ours)."""
    return got.to_pandas() if isinstance(got, ak.DataFrame) else got


def _same(got: ak.DataFrame, want: Any, rtol: float = 0.0) -> None:
    """Our DataFrame against pandas': labels, columns and values; categories
    compared as strings, floats to rtol (0: exactly, NaN equal to NaN)."""
    g = _pandas_of(got)
    assert list(g.columns) == [str(c) for c in want.columns]
    assert len(g) == len(want)
    gi, wi = g.index, want.index
    assert gi.nlevels == wi.nlevels and list(gi.names) == list(wi.names)
    for level in range(wi.nlevels):
        a, b = gi.get_level_values(level), wi.get_level_values(level)
        if b.dtype.kind in "iufb":
            np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())  # NaN equal to NaN
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist()
    for c in want.columns:
        a, b = g[str(c)], want[c]
        if isinstance(a.dtype, pd.CategoricalDtype) or b.dtype == object or isinstance(b.dtype, pd.StringDtype):
            assert a.astype(str).tolist() == b.astype(str).tolist(), c
        elif rtol:
            np.testing.assert_allclose(a.to_numpy(np.float64), b.to_numpy(np.float64), rtol=rtol,
                                       equal_nan=True, err_msg=str(c))
        else:
            np.testing.assert_array_equal(a.to_numpy(), b.to_numpy(), err_msg=str(c))


def _row_order_sums(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and each one's sum of non-NaN values, added one by
    one in row order (np.add.at is unbuffered and sequential)."""
    uniq, ids = np.unique(keys, return_inverse=True)
    out = np.zeros(len(uniq))
    np.add.at(out, ids, np.where(np.isnan(values), 0.0, values))
    return uniq, out


def test_build_and_inspect(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    assert df.columns == list(pdf.columns)
    assert df.shape == pdf.shape and len(df) == N and df.size == pdf.size and not df.empty
    assert df.dtypes["zone"] == np.int64 and df.dtypes["hour"] == np.int8
    assert df.dtypes["borough"] == "category" and isinstance(df["borough"], ak.Categorical)
    _same(df, pdf)
    # from a dict of pdarrays, numpy arrays and lists; columns= picks and orders
    d = ak.DataFrame({"a": conn.array(np.arange(3)), "b": np.array([0.5, 1.5, 2.5]), "c": ["x", "y", "x"]},
                     columns=["c", "a"])
    assert d.columns == ["c", "a"] and d["c"].to_list() == ["x", "y", "x"]
    # a list of columns with their names
    assert ak.DataFrame([conn.array([1, 2]), conn.array([3.0, 4.0])], columns=["i", "f"]).columns == ["i", "f"]
    # a non-default index comes along, several levels too
    p2 = pd.DataFrame({"v": [1.0, 2.0, 3.0]}, index=pd.Index([10, 20, 30], name="id"))
    _same(ak.DataFrame(p2, conn=conn), p2)
    p3 = p2.set_index(pd.MultiIndex.from_arrays([[1, 1, 2], ["a", "b", "a"]], names=["x", "y"]))
    _same(ak.DataFrame(p3, conn=conn), p3)
    assert ak.DataFrame().empty and ak.DataFrame().shape == (0, 0)


def test_bad_input_says_what(conn: ak.Connection, server: ak.Server) -> None:
    df = ak.DataFrame({"a": conn.array([1, 2, 3]), "b": conn.array([1.0, 2.0, 3.0])})
    with pytest.raises(KeyError, match=r"no column 'c'; the columns are \['a', 'b'\]"):
        df["c"]
    with pytest.raises(ValueError, match="column 'c' has 2 rows but the DataFrame has 3"):
        df["c"] = conn.array([1, 2])
    other = server.connect()
    try:
        with pytest.raises(ValueError, match="on another connection"):
            df["c"] = other.array([1, 2, 3])
    finally:
        other.close()
    with pytest.raises(ValueError, match="must be 1-D"):
        ak.DataFrame({"m": np.zeros((2, 2))}, conn=conn)
    with pytest.raises(ValueError, match="the mask has 2 elements but the DataFrame has 3 rows"):
        df[conn.array([True, False])]
    with pytest.raises(TypeError, match="bool mask or integer positions, got a float64"):
        df[conn.array([0.0])]
    with pytest.raises(IndexError, match="row 3 is out of bounds for 3 rows"):
        df[3]
    with pytest.raises(KeyError, match=r"no columns \['z'\] to group by"):
        df.groupby("z")
    with pytest.raises(ValueError, match="give by= one of the columns"):
        df.sort_values()
    with pytest.raises(ValueError, match="ascending has 1 values for 2 columns"):
        df.sort_values(["a", "b"], ascending=[True])
    with pytest.raises(ValueError, match="drop removes columns"):
        df.drop("a", axis=0)
    with pytest.raises(ValueError, match="same columns"):
        ak.DataFrame.concat([df, df[["a"]]])
    with pytest.raises(TypeError, match="DataFrame takes a dict"):
        ak.DataFrame(42)
    with pytest.raises(ValueError, match="a list of columns needs columns="):
        ak.DataFrame([conn.array([1])])
    with pytest.raises(ValueError, match="name one column twice"):
        df[["a", "a"]]
    s = ak.DataFrame({"k": conn.array([1, 1, 2]), "s": ak.Categorical(["x", "y", "z"], conn=conn),
                      "v": conn.array([1.0, 2.0, 3.0])})
    with pytest.raises(TypeError, match=r"column 's' holds strings .* cannot take the sum"):
        s.groupby("k").sum()
    with pytest.raises(ValueError, match="unknown aggregation 'total'"):
        s.groupby("k").agg({"v": "total"})
    with pytest.raises(KeyError, match=r"n=: no column 'w'"):
        s.groupby("k").agg(n=("w", "sum"))
    with pytest.raises(ValueError, match="as_index=False the key columns"):
        s.groupby("k", as_index=False).agg(k=("v", "sum"))
    # the frame is as it was after every refusal
    assert df.columns == ["a", "b"] and df["b"].to_ndarray().tolist() == [1.0, 2.0, 3.0]


def test_rows_and_columns(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    mask = pdf["fare"].to_numpy() > 20
    _same(df[df["fare"] > 20], pdf[mask])
    _same(df[mask], pdf[mask])
    pos = rng.integers(0, N, 500)
    _same(df[conn.array(pos)], pdf.iloc[pos])
    _same(df[100:250], pdf.iloc[100:250])
    _same(df.head(7), pdf.head(7))
    _same(df.tail(7), pdf.tail(7))
    _same(df.head(10**9), pdf)
    _same(df[["fare", "zone"]], pdf[["fare", "zone"]])
    # a selection of a selection keeps the first one's labels
    _same(df[df["zone"] > 100][5:9], pdf[pdf["zone"] > 100].iloc[5:9])
    row = df[3]
    assert row["borough"] == pdf["borough"].iloc[3] and row["count"] == pdf["count"].iloc[3]
    df2, p2 = df.copy(), pdf.copy()
    df2["tip"] = df2["fare"] * 0.2
    p2["tip"] = p2["fare"] * 0.2
    df2["one"] = 1
    p2["one"] = 1
    df2["city"] = "NYC"
    p2["city"] = "NYC"
    del df2["hour"]
    del p2["hour"]
    _same(df2, p2)
    assert "hour" in df and df.columns == list(pdf.columns)  # the copy changed, not the original
    _same(df.drop(["hour", "fkey"]), pdf.drop(columns=["hour", "fkey"]))
    _same(df.rename(columns={"fare": "amount"}), pdf.rename(columns={"fare": "amount"}))
    _same(df.rename(columns=str.upper), pdf.rename(columns=str.upper))
    _same(ak.DataFrame.concat([df[:10], df[20:25]]), pd.concat([pdf[:10], pdf[20:25]]))
    _same(df[:3].append(df[-2:]), pd.concat([pdf[:3], pdf[-2:]]))
    _same(ak.DataFrame.concat([df[:3], df[-2:]], ignore_index=True),
          pd.concat([pdf[:3], pdf[-2:]], ignore_index=True))
    _same(df.set_index("zone")[:50], pdf.set_index("zone")[:50])
    _same(df[df["hour"] == 3].reset_index(), pdf[pdf["hour"] == 3].reset_index())
    _same(df[df["hour"] == 3].reset_index(drop=True), pdf[pdf["hour"] == 3].reset_index(drop=True))


@pytest.mark.parametrize("by,ascending", [
    ("fare", True), ("fare", False), (["hour", "fare"], True), (["hour", "fare"], [False, True]),
    (["borough", "count"], [True, False]), (["fkey", "zone"], False), ("count", False),
])
def test_sort_values_as_pandas_stable(conn: ak.Connection, rng: np.random.Generator, by: Any,
                                      ascending: Any) -> None:
    """Ties keep their row order in either direction and NaN comes last, as
    pandas' stable sort (many ties: hour 0..23, count -3..8)."""
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    want = pdf.sort_values(by, ascending=ascending, kind="stable")
    _same(df.sort_values(by, ascending=ascending), want)
    np.testing.assert_array_equal(df.argsort(by, ascending).to_ndarray(), want.index.to_numpy())
    _same(df.sort_values(by, ascending=ascending).sort_index(), pdf)


def test_drop_duplicates(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    for subset in (["hour"], ["borough", "hour"], ["fkey"], None):
        for keep in ("first", "last"):
            _same(df.drop_duplicates(subset, keep=keep), pdf.drop_duplicates(subset, keep=keep))


@pytest.mark.parametrize("keys", ["zone", "borough", ["zone", "hour"], ["borough", "hour"], "fkey"])
@pytest.mark.parametrize("as_index", [True, False])
def test_groupby_as_pandas(conn: ak.Connection, rng: np.random.Generator, keys: Any, as_index: bool) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    g = df.groupby(keys, as_index=as_index)
    pg = pdf.groupby(keys, as_index=as_index, observed=True)
    keyset = [keys] if isinstance(keys, str) else keys
    values = [c for c in ["fare", "count", "fkey", "hour", "zone"] if c not in keyset]
    ints = [c for c in ["count", "hour"] if c not in keyset]
    for op in ("min", "max", "count", "nunique", "first"):
        _same(getattr(g[values], op)(), getattr(pg[values], op)())
    for op in ("mean", "var", "std", "median"):
        _same(getattr(g[values], op)(), getattr(pg[values], op)(), rtol=1e-12)
    # integer sums exactly; float sums bit for bit against the row-order loop
    _same(g[ints].sum(), pg[ints].sum())
    got = g.sum("fare")
    if isinstance(keys, str) and keys != "fkey":
        uniq, sums = _row_order_sums(pdf[keys].to_numpy().astype(str) if keys == "borough"
                                     else pdf[keys].to_numpy(), pdf["fare"].to_numpy())
        assert got["fare"].to_ndarray().tobytes() == sums.tobytes()
    _same(got, pg[["fare"]].sum(), rtol=1e-12)
    _same(g.size(), pg.size() if not as_index else pg.size().to_frame("size"))
    # Categorical values: first, min, max and mode give strings
    if "borough" not in keyset:
        _same(g[["borough"]].min(), pg[["borough"]].min())
        _same(g[["borough"]].nunique(), pg[["borough"]].nunique())


def test_groupby_dropna_false_keeps_nan_keys(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    _same(df.groupby("fkey", dropna=False)[["count"]].sum(),
          pdf.groupby("fkey", dropna=False)[["count"]].sum())


def test_groupby_agg_forms_in_one_request(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Every aggregation of a call goes in one groupby request, the grouping
    with it (the server fuses what it can), as pandas names the columns."""
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    pg = pdf.groupby(["zone", "hour"])
    with recorded(conn) as sent:
        got = df.groupby(["zone", "hour"]).agg(total=("fare", "sum"), n=("fare", "size"),
                                               m=("count", "max"), first=("borough", "first"))
    assert sent == ["groupby"]
    want = pg.agg(total=("fare", "sum"), n=("fare", "size"), m=("count", "max"), first=("borough", "first"))
    _same(got, want, rtol=1e-12)
    with recorded(conn) as sent:
        got = df.groupby("zone").agg({"fare": ["sum", "mean"], "count": "max"})
    assert sent == ["groupby"]
    want = pdf.groupby("zone").agg({"fare": ["sum", "mean"], "count": "max"})
    want.columns = ["fare_sum", "fare_mean", "count"]
    _same(got, want, rtol=1e-12)
    got = df.groupby("zone")[["fare", "count"]].agg(["min", "max"])
    want = pdf.groupby("zone")[["fare", "count"]].agg(["min", "max"])
    want.columns = [f"{a}_{b}" for a, b in want.columns]
    _same(got, want)
    _same(df.groupby("hour")[["fare"]].agg(np.max), pdf.groupby("hour")[["fare"]].agg("max"))


def test_groupby_rows(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    for keys in ("zone", ["borough", "hour"]):
        _same(df.groupby(keys).head(2), pdf.groupby(keys).head(2))
        _same(df.groupby(keys).tail(3), pdf.groupby(keys).tail(3))
    s = df.groupby("borough").sample(n=4, random_state=5)
    assert len(s) == 4 * len(ZONES)
    p = s.to_pandas()
    np.testing.assert_array_equal(p["fare"].to_numpy(), pdf.loc[p.index, "fare"].to_numpy())
    assert (p.groupby("borough", observed=True).size() == 4).all()
    _same(df.groupby("zone").idxmax(["fare"]), pdf.groupby("zone")[["fare"]].idxmax())
    sub, psub = df[df["hour"] < 5], pdf[pdf["hour"] < 5]
    _same(sub.groupby("zone").idxmin(["count"]), psub.groupby("zone")[["count"]].idxmin())


def test_transform_and_broadcast(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    got = df.groupby("zone")["count"].transform("sum")
    assert isinstance(got, ak.pdarray)
    np.testing.assert_array_equal(got.to_ndarray(), pdf.groupby("zone")["count"].transform("sum").to_numpy())
    _same(df.groupby("borough")[["count", "hour"]].transform("max"),
          pdf.groupby("borough", observed=True)[["count", "hour"]].transform("max"))
    g = df.groupby("zone")
    np.testing.assert_array_equal(g.broadcast(g.size()["size"]).to_ndarray(),
                                  pdf.groupby("zone")["zone"].transform("size").to_numpy())


def test_repr_shows_ends(conn: ak.Connection) -> None:
    df = ak.DataFrame({"a": conn.array(np.arange(1000)), "s": ak.Categorical(["x", "y"] * 500, conn=conn)})
    text = repr(df)
    assert "[1000 rows x 2 columns]" in text and "999" in text and ".." in text
    assert "1000 rows × 2 columns" in df._repr_html_()
    small = ak.DataFrame({"a": conn.array([1, 2])})
    assert repr(small) == repr(pd.DataFrame({"a": [1, 2]}))


def test_to_parquet_and_back(make_server: Any, tmp_path: Any, rng: np.random.Generator) -> None:
    conn = make_server("--data-dir", str(tmp_path)).connect()
    try:
        pdf = _frame(rng).dropna().reset_index(drop=True)
        ak.DataFrame(pdf, conn=conn).to_parquet("frame.parquet")
        _same(ak.DataFrame(ak.read_parquet("frame.parquet", conn=conn)), pdf)
        assert (tmp_path / "frame.parquet").exists()
    finally:
        conn.close()


def test_rows_are_one_request(conn: ak.Connection, rng: np.random.Generator) -> None:
    """Selecting rows gathers every column (strings' codes too) and the
    labels in one request: compress_many by a mask (the positions are the
    new labels), take_many by positions; a sort's permutation is the new
    labels, so nothing gathers them."""
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    mask = df["fare"] > 20
    gathered = int(conn._request("stats")[0]["compress_gathered"])
    with recorded(conn) as sent:
        sub = df[mask]
    assert sent == ["compress_many"]
    # the mask's positions (the labels) found once, every column gathered by them
    assert int(conn._request("stats")[0]["compress_gathered"]) == gathered + 1
    pos = conn.array(np.array([5, 1, -1]))
    with recorded(conn) as sent:
        sub2 = sub[pos]
    assert sent == ["take_many"], sent
    want = pdf[pdf["fare"].to_numpy() > 20]
    _same(sub2, want.iloc[[5, 1, -1]])
    with recorded(conn) as sent:
        srt = df.sort_values("hour")
    assert sent.count("take_many") == 1 and "compress_many" not in sent and len(sent) == 2, sent
    _same(srt, pdf.sort_values("hour", kind="stable"))


def _merge_frames(rng: np.random.Generator, n: int, m: int) -> tuple[Any, Any]:
    """Many-to-many keys (ints, strings with different categories on each
    side, floats with NaN), and columns both have."""
    left = pd.DataFrame({"k": rng.integers(0, 60, n), "s": ZONES[rng.integers(0, 4, n)],
                         "f": np.round(rng.normal(0, 2, n)), "v": rng.random(n), "c": rng.integers(0, 9, n)})
    left.loc[rng.random(n) < 0.05, "f"] = np.nan
    right = pd.DataFrame({"k": rng.integers(30, 90, m), "s": ZONES[rng.integers(2, 6, m)],
                          "f": np.round(rng.normal(0, 2, m)), "w": rng.random(m), "c": rng.integers(0, 9, m)})
    right.loc[rng.random(m) < 0.05, "f"] = np.nan
    return left, right


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
@pytest.mark.parametrize("on", ["k", ["k", "s"], "s", ["f"], ["s", "f", "k"]])
def test_merge_as_pandas(conn: ak.Connection, rng: np.random.Generator, how: str, on: Any) -> None:
    """Rows, their order, columns and suffixes as pandas' merge; a side
    without a match gets NaN and its integers become float64."""
    left, right = _merge_frames(rng, 3000, 400)
    lk = [on] if isinstance(on, str) else on
    if how != "inner":  # strings cannot be missing: keep only numbers on the side that may miss
        if how in ("left", "outer"):
            right = right.drop(columns=[c for c in ["s"] if c not in lk])
        if how in ("right", "outer"):
            left = left.drop(columns=[c for c in ["s"] if c not in lk])
    L, R = ak.DataFrame(left, conn=conn), ak.DataFrame(right, conn=conn)
    got = L.merge(R, on=on, how=how)
    want = pd.merge(left, right, on=on, how=how)
    _same(got, want.reset_index(drop=True))
    _same(ak.merge(L, R, on=on, how=how), want.reset_index(drop=True))


def test_merge_left_on_right_on_and_edges(conn: ak.Connection, rng: np.random.Generator) -> None:
    left, right = _merge_frames(rng, 500, 80)
    right = right.rename(columns={"k": "key"})
    L, R = ak.DataFrame(left, conn=conn), ak.DataFrame(right, conn=conn)
    _same(L.merge(R, left_on="k", right_on="key", suffixes=("_l", "_r")),
          pd.merge(left, right, left_on="k", right_on="key", suffixes=("_l", "_r")))
    _same(L.merge(R.drop("s"), left_on="k", right_on="key", how="left"),
          pd.merge(left, right.drop(columns="s"), left_on="k", right_on="key", how="left"))
    # no match at all, and an empty side
    none = ak.DataFrame(right.assign(key=right["key"] + 1000), conn=conn)
    assert len(L.merge(none, left_on="k", right_on="key")) == 0
    _same(L.merge(none.drop("s"), left_on="k", right_on="key", how="left"),
          pd.merge(left, right.assign(key=right["key"] + 1000).drop(columns="s"), left_on="k", right_on="key",
                   how="left"))
    _same(L.merge(R[0:0].drop("s"), left_on="k", right_on="key", how="left"),
          pd.merge(left, right[0:0].drop(columns="s"), left_on="k", right_on="key", how="left"))
    # outer: every row of both, in key order; a side's key column NaN where it has no row
    _same(L.drop("s").merge(R.drop("s"), left_on="k", right_on="key", how="outer"),
          pd.merge(left.drop(columns="s"), right.drop(columns="s"), left_on="k", right_on="key", how="outer"))
    for lf, rf in ((L.drop("s")[0:0], R.drop("s")), (L.drop("s"), R.drop("s")[0:0]),
                   (L.drop("s")[0:0], R.drop("s")[0:0])):
        _same(lf.rename(columns={"k": "key"}).merge(rf, on="key", how="outer"),
              pd.merge(lf.to_pandas().rename(columns={"k": "key"}), rf.to_pandas(), on="key", how="outer"))
    # on= by default: the columns both have
    _same(L[["k", "v"]].merge(R.rename(columns={"key": "k"})[["k", "w"]]),
          pd.merge(left[["k", "v"]], right.rename(columns={"key": "k"})[["k", "w"]]))


def test_merge_bad_input(conn: ak.Connection) -> None:
    L = ak.DataFrame({"k": conn.array([1, 2]), "s": ak.Categorical(["a", "b"], conn=conn)})
    R = ak.DataFrame({"k": conn.array([2, 3]), "t": ak.Categorical(["x", "y"], conn=conn)})
    with pytest.raises(ValueError, match="how must be 'inner', 'left', 'right' or 'outer'"):
        L.merge(R, on="k", how="cross")
    with pytest.raises(ValueError, match=r"columns \['s'\] \(strings or bools\) cannot hold the missing"):
        L.merge(R, on="k", how="outer")
    with pytest.raises(KeyError, match=r"no columns \['z'\] in the right DataFrame"):
        L.merge(R, left_on="k", right_on="z")
    with pytest.raises(TypeError, match="one holds strings and the other numbers"):
        L.merge(R, left_on="s", right_on="k")
    with pytest.raises(ValueError, match=r"columns \['t'\] \(strings or bools\) cannot hold the missing"):
        L.merge(R, on="k", how="left")
    with pytest.raises(ValueError, match="as many columns each"):
        L.merge(R, left_on=["k", "s"], right_on="k")
    with pytest.raises(ValueError, match="no column in both"):
        L[["s"]].merge(R[["t"]])
    assert L.merge(R, on="k")["t"].to_list() == ["x"]


@pytest.mark.parametrize("how", ["inner", "left", "right"])
@pytest.mark.parametrize("cover", ["all", "some"])
def test_merge_lookup_table(conn: ak.Connection, rng: np.random.Generator, how: str, cover: str) -> None:
    """A table of distinct keys (at most one match a row: no row repeats),
    every key matched or only some; a left merge that matches every row
    keeps the left's columns as they are (nothing gathered)."""
    trips = pd.DataFrame({"zone": rng.integers(1, 40, 5000), "fare": np.round(rng.exponential(15, 5000), 2),
                          "tag": ZONES[rng.integers(0, 6, 5000)]})
    keys = np.arange(1, 40) if cover == "all" else np.arange(1, 40, 3)
    table = pd.DataFrame({"zone": rng.permutation(keys), "rate": np.round(rng.random(len(keys)), 2),
                          "code": rng.integers(0, 5, len(keys))})
    if how == "right":
        trips = trips.drop(columns="tag")
    T, Z = ak.DataFrame(trips, conn=conn), ak.DataFrame(table, conn=conn)
    looked = int(conn._request("stats")[0]["lookup_dense"])
    got = T.merge(Z, on="zone", how=how)
    _same(got, pd.merge(trips, table, on="zone", how=how))
    # one integer key: the server's lookup of each row's key in the other's
    # (a slot per zone); a right merge looks the zones up in the trips',
    # which repeat, and groups instead
    assert int(conn._request("stats")[0]["lookup_dense"]) == looked + (how != "right")
    if how == "left" and cover == "all":
        assert got["fare"] is T["fare"] and got["tag"] is T["tag"]


def test_review_findings_as_pandas(conn: ak.Connection) -> None:
    """What a review found against pandas: transform and idxmin/idxmax with
    as_index=False, transform of rows with NaN keys, suffixes that collide,
    left_on and right_on of one name, negative head and tail, reset_index
    of 0 .. n-1."""
    p = pd.DataFrame({"a": [10, 10, 20, 20], "b": [1.0, 2.0, 3.0, 0.5], "c": [4, 2, 9, 9]})
    df = ak.DataFrame(p, conn=conn)
    got = df.groupby("a", as_index=False)["b"].transform("sum")
    np.testing.assert_array_equal(got.to_ndarray(), p.groupby("a", as_index=False)["b"].transform("sum"))
    _same(df.groupby("a", as_index=False)[["b", "c"]].transform("max"),
          p.groupby("a", as_index=False)[["b", "c"]].transform("max"))
    _same(df.groupby("a", as_index=False).idxmin(), p.groupby("a", as_index=False).idxmin())
    _same(df[1:].groupby("a").idxmax(), p[1:].groupby("a").idxmax())
    with pytest.raises(ValueError, match="no value but NaN"):
        ak.DataFrame({"a": conn.array([1, 2]), "b": conn.array([np.nan, 1.0])}).groupby("a").idxmin()
    # rows of NaN keys (dropna): NaN, integers as float, as pandas
    q = pd.DataFrame({"k": [1.0, np.nan, 1.0, 2.0], "v": [1, 2, 3, 4], "s": ["x", "y", "x", "z"]})
    dq = ak.DataFrame(q, conn=conn)
    np.testing.assert_array_equal(dq.groupby("k")["v"].transform("sum").to_ndarray(),
                                  q.groupby("k")["v"].transform("sum").to_numpy())
    with pytest.raises(ValueError, match=r"\['s'\] \(strings or bools\) cannot hold a missing one"):
        dq.groupby("k")[["s"]].transform("first")
    _same(dq.groupby("k", dropna=False)[["s"]].transform("first"),
          q.groupby("k", dropna=False)[["s"]].transform("first"))
    # suffixes that give one name twice are refused before any work, as pandas refuses them
    left = ak.DataFrame({"k": conn.array([1, 2]), "v": conn.array([10, 20]), "v_x": conn.array([5, 6])})
    right = ak.DataFrame({"k": conn.array([1, 2]), "v": conn.array([7, 8])})
    with recorded(conn) as sent, pytest.raises(ValueError, match=r"two columns named \['v_x'\]"):
        left.merge(right, on="k")
    assert sent == []
    left = left.drop("v_x")
    pl_, pr_ = left.to_pandas(), right.to_pandas()
    _same(left.merge(right, left_on="k", right_on="k"), pd.merge(pl_, pr_, left_on="k", right_on="k"))
    _same(left.merge(right, left_on=["k", "v"], right_on=["k", "v"], how="left"),
          pd.merge(pl_, pr_, left_on=["k", "v"], right_on=["k", "v"], how="left"))
    for n in (-1, -3, -10, 0, 2):
        _same(df.head(n), p.head(n))
        _same(df.tail(n), p.tail(n))
    _same(df.reset_index(), p.reset_index())
    _same(df[2:].reset_index(), p[2:].reset_index())


def test_register_and_attach(conn: ak.Connection, server: ak.Server, rng: np.random.Generator) -> None:
    """A DataFrame kept by name outlives its session: another connection
    attaches it (strings, an index of two levels); a name taken keeps
    nothing new; a column already registered elsewhere, or twice in the
    frame, is copied; unregister hands the arrays back."""
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    by = df.groupby(["borough", "hour"]).agg(total=("fare", "sum"), n=("fare", "size"))
    want = by.to_pandas()
    by.register("df-test-by")
    assert by.is_registered() and not df.is_registered()
    other = server.connect()
    try:
        back = ak.DataFrame.attach("df-test-by", conn=other)
        _same(back, want)
        assert isinstance(back["total"], ak.pdarray) and back.index[0].categories.tolist() == \
            sorted(set(pdf["borough"]))
    finally:
        other.close()
    del by
    _same(ak.DataFrame.attach("df-test-by", conn=conn), want)
    # a name taken: nothing new kept, the frame as it was
    small = ak.DataFrame({"a": conn.array([1, 2]), "b": conn.array([0.5, 1.5])})
    conn.array(np.arange(3)).register("df-test-2/column_1")
    with pytest.raises(ak.NameInUseError):
        small.register("df-test-2")
    names = [a["name"] for a in conn.list_arrays()]
    assert [n for n in names if n.startswith("df-test-2")] == ["df-test-2/column_1"], names
    assert not small.is_registered() and small["a"].to_list() == [1, 2]
    conn.delete(["df-test-2/column_1"])
    # one array twice in the frame, and one registered elsewhere: copied
    kept = conn.array([7, 8]).register("df-test-kept")
    twice = ak.DataFrame({"x": kept, "y": kept, "z": small["a"]})
    twice.register("df-test-3")
    assert conn.attach("df-test-kept").to_list() == [7, 8]
    back3 = ak.DataFrame.attach("df-test-3", conn=conn)
    assert back3.columns == ["x", "y", "z"] and back3["y"].to_list() == [7, 8]
    back3.unregister()
    assert not back3.is_registered()
    with pytest.raises(KeyError):
        ak.DataFrame.attach("df-test-3", conn=conn)
    ak.DataFrame.attach("df-test-by", conn=conn).unregister()
    conn.delete(["df-test-kept"])


def test_column_summaries_as_pandas(conn: ak.Connection, rng: np.random.Generator) -> None:
    """count, nunique, sum, mean, std, var, min, max and describe of every
    column, NaN skipped, against pandas' (sums of integers exactly, float
    statistics to 1e-12)."""
    pdf = _frame(rng)
    pdf["allnan"] = np.nan
    pdf["flag"] = pdf["count"] > 3
    df = ak.DataFrame(pdf, conn=conn)
    num = pdf.drop(columns=["borough"])
    for name in ("count", "nunique"):
        got, want = getattr(df, name)(), getattr(pdf, name)()
        assert got.index.tolist() == want.index.tolist()
        np.testing.assert_array_equal(got.to_numpy(dtype=float), want.to_numpy(dtype=float), err_msg=name)
    for name in ("sum", "mean", "std", "var", "min", "max"):
        got, want = getattr(df, name)(numeric_only=True), getattr(num, name)()
        assert got.index.tolist() == want.index.tolist(), name
        np.testing.assert_allclose(got.to_numpy(dtype=float), want.to_numpy(dtype=float), rtol=1e-12,
                                   equal_nan=True, err_msg=name)
    assert df[["count", "zone"]].sum().tolist() == pdf[["count", "zone"]].sum().tolist()
    assert df.min()["borough"] == pdf["borough"].min() and df.max()["borough"] == pdf["borough"].max()
    with pytest.raises(TypeError, match="column 'borough' holds strings, which have no sum"):
        df.sum()
    got, want = df.describe(), pdf.describe()
    assert got.columns.tolist() == want.columns.tolist() and got.index.tolist() == want.index.tolist()
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12, equal_nan=True)


def test_iloc_and_loc_as_pandas(conn: ak.Connection, rng: np.random.Generator) -> None:
    pdf = _frame(rng)
    df = ak.DataFrame(pdf, conn=conn)
    pos = [5, 1, -1, 7]
    _same(df.iloc[pos], pdf.iloc[pos])
    _same(df.iloc[10:20:3], pdf.iloc[10:20:3])
    _same(df.iloc[10:20, [0, 3]], pdf.iloc[10:20, [0, 3]])
    _same(df.iloc[:, 1:3][:5], pdf.iloc[:, 1:3][:5])
    np.testing.assert_array_equal(df.iloc[3:9, 3].to_ndarray(), pdf.iloc[3:9, 3].to_numpy())
    assert df.iloc[4, 1] == pdf.iloc[4, 1] and df.iloc[4]["borough"] == pdf.iloc[4]["borough"]
    mask = pdf["fare"].to_numpy() > 30
    _same(df.loc[df["fare"] > 30], pdf.loc[mask])
    _same(df.loc[df["fare"] > 30, ["zone", "borough"]], pdf.loc[mask, ["zone", "borough"]])
    np.testing.assert_array_equal(df.loc[mask, "count"].to_ndarray(), pdf.loc[mask, "count"].to_numpy())
    _same(df.loc[3:8], pdf.loc[3:8])
    _same(df.loc[[4, 0, 9], ["fare"]], pdf.loc[[4, 0, 9], ["fare"]])
    assert df.loc[7, "zone"] == pdf.loc[7, "zone"]
    # labels of a selection's index, found by the server's lookup
    sub, psub = df[df["hour"] == 5], pdf[pdf["hour"] == 5]
    labels = psub.index.to_numpy()[[3, 0, 2]]
    _same(sub.loc[labels], psub.loc[labels])
    assert sub.loc[int(labels[1]), "fare"] == psub.loc[labels[1], "fare"] or np.isnan(psub.loc[labels[1], "fare"])
    with pytest.raises(KeyError, match="labels not in the index"):
        sub.loc[[int(labels[0]), -5]]
    with pytest.raises(KeyError, match="no row labelled"):
        df.loc[N]
    with pytest.raises(TypeError, match="loc slices labels of a 0 .. n-1 index only"):
        sub.loc[2:5]
    # writes in place, as pandas' loc and iloc assignments
    d2, p2 = df.copy(), pdf.copy()
    d2.loc[d2["fare"] > 30, "count"] = -1
    p2.loc[p2["fare"] > 30, "count"] = -1
    d2.iloc[0:3, 4] = 99
    p2.iloc[0:3, 4] = 99
    _same(d2, p2)
    with pytest.raises(TypeError, match="cannot be written in place"):
        d2.loc[d2["fare"] > 30, "borough"] = "x"


@pytest.mark.parametrize("seed", range(12))
def test_random_merges_and_sorts_as_pandas(conn: ak.Connection, seed: int) -> None:
    """Random frames (int, uint, float with NaN, string keys; sides of 0 to
    60 rows; keys distinct or repeated) merged every way and sorted, against
    pandas: the lookup, the grouping and the outer paths and their edges."""
    r = np.random.default_rng(1000 + seed)
    kind = ["int", "uint", "float", "str"][seed % 4]
    span = int(r.integers(1, 12))

    def keys(k: int, distinct: bool) -> Any:
        v = r.permutation(span * 3)[:k] if distinct and k <= span * 3 else r.integers(0, span, k)
        if kind == "uint":
            return v.astype(np.uint32)
        if kind == "float":
            f = v.astype(np.float64)
            f[r.random(k) < 0.15] = np.nan
            return f
        if kind == "str":
            return np.array([f"k{x}" for x in v])
        return v.astype(np.int64)

    n, m = int(r.integers(0, 60)), int(r.integers(0, 60))
    left = pd.DataFrame({"key": keys(n, False), "a": r.integers(-5, 5, n), "v": r.random(n)})
    right = pd.DataFrame({"key": keys(m, bool(seed % 2)), "b": r.integers(0, 9, m), "v": r.random(m)})
    L, R = ak.DataFrame(left, conn=conn), ak.DataFrame(right, conn=conn)
    for how in ("inner", "left", "right", "outer"):
        _same(L.merge(R, on="key", how=how), pd.merge(left, right, on="key", how=how))
    if n:
        _same(L.sort_values(["key", "a"], ascending=[bool(seed % 3), False]),
              left.sort_values(["key", "a"], ascending=[bool(seed % 3), False], kind="stable"))
        _same(L.drop_duplicates(["key"], keep="last"), left.drop_duplicates(["key"], keep="last"))


def test_second_review_findings(conn: ak.Connection, server: ak.Server) -> None:
    """What a second review found, each against pandas or the registration
    it must keep whole."""
    p = pd.DataFrame({"a": [1, 2, 3, 4], "b": [0.5, 1.5, 2.5, 3.5], "s": ["x", "y", "x", "z"],
                      "u": np.array([1, 2, 3, 4], dtype=np.uint64)})
    df = ak.DataFrame(p, conn=conn)
    # registering again under the same name keeps it whole (its strings too)
    df.register("df-review-A")
    df.register("df-review-A")
    _same(ak.DataFrame.attach("df-review-A", conn=conn), p)
    # a frame made from a registered one unregisters its arrays, not the description
    sub = df[["a"]]
    sub.unregister()
    assert isinstance(ak.DataFrame.attach("df-review-A", conn=conn)["s"], ak.Categorical)
    ak.DataFrame.attach("df-review-A", conn=conn).unregister()
    with pytest.raises(KeyError):
        ak.DataFrame.attach("df-review-A", conn=conn)
    # a frame without columns registers and unregisters too
    empty = ak.DataFrame(index=conn.array([5, 6]))
    empty.register("df-review-E")
    assert empty.is_registered()
    empty.unregister()
    with pytest.raises(KeyError):
        ak.DataFrame.attach("df-review-E", conn=conn)
    df = ak.DataFrame(p, conn=conn)
    # iloc: a bool mask of columns, no rows, a column of no rows
    _same(df.iloc[:, [True, False, True, False]], p.iloc[:, [True, False, True, False]])
    _same(df.iloc[[]], p.iloc[[]])
    assert df.iloc[[], 0].size == 0
    with pytest.raises(ValueError, match="one of them twice"):
        df.iloc[:, [0, 0]]
    # loc: label slices past either end, bool and float labels
    for sl in (slice(-2, None), slice(None, -2), slice(1, 10), slice(5, 9)):
        _same(df.loc[sl], p.loc[sl])
    with pytest.raises(KeyError):
        df.loc[True]
    assert df.loc[1.0]["a"] == p.loc[1.0]["a"]
    di = df[conn.array([3, 1])]
    _same(di.loc[[]], p.iloc[[3, 1]].loc[[]])
    with pytest.raises(KeyError, match="not in the index"):
        di.loc[[-1]]
    # writes: checked first, refused when the dtype would change, and as copy-on-write
    shared = df[["a", "b"]]
    with pytest.raises(TypeError, match="holds strings"):
        df.iloc[0] = 1
    with pytest.raises(TypeError, match="would change"):
        df.iloc[0, 0] = 2.5
    assert df["b"].to_list() == [0.5, 1.5, 2.5, 3.5]  # nothing written before the refusal
    df.iloc[0, 0] = 100
    df.loc[df["b"] > 2, "b"] = 0.0
    assert df["a"].to_list() == [100, 2, 3, 4] and df["b"].to_list() == [0.5, 1.5, 0.0, 0.0]
    assert shared["a"].to_list() == [1, 2, 3, 4] and shared["b"].to_list() == [0.5, 1.5, 2.5, 3.5]
    # summaries' dtypes as pandas'
    assert ak.DataFrame(index=conn.array([1])).count().dtype == np.int64
    mixed = df[["a", "u"]].sum()
    assert mixed.dtype == p[["a", "u"]].sum().dtype == np.float64


@pytest.mark.parametrize("keys", ["zone", ["borough", "hour"], "fkey"])
def test_group_scans_as_pandas(conn: ak.Connection, rng: np.random.Generator, keys: Any) -> None:
    """cumsum, cumprod, cummax, cummin, cumcount, diff and shift within each
    group against pandas' (NaN values skipped, rows of NaN keys NaN,
    integers int64 unless rows are dropped); float running sums also bit
    for bit against numpy's sequential cumsum of each group (pandas adds
    with Kahan's compensation, so to 1e-12 against it)."""
    pdf = _frame(rng)
    pdf["small"] = np.round(rng.uniform(0.9, 1.1, N), 3)  # products that stay finite
    df = ak.DataFrame(pdf, conn=conn)
    g, pg = df.groupby(keys), pdf.groupby(keys, observed=True)
    cols = ["fare", "count", "small"]
    for op in ("cumsum", "cumprod", "cummax", "cummin", "diff", "shift"):
        got, want = getattr(g[cols], op)(), getattr(pg[cols], op)()
        for c in cols:
            a, b = got[c].to_ndarray(), want[c].to_numpy()
            if op == "cumprod" and c != "small":
                continue  # (products of fares overflow; of counts wrap: compared below)
            assert a.dtype == b.dtype, (op, c, a.dtype, b.dtype)
            if b.dtype.kind != "f":
                np.testing.assert_array_equal(a, b, err_msg=f"{op} {c}")
            else:
                np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True, err_msg=f"{op} {c}")
            if op == "cumsum" and b.dtype.kind == "f":
                def running(s: Any) -> Any:
                    x = s.to_numpy(dtype=np.float64)
                    r = np.nancumsum(x)
                    r[np.isnan(x)] = np.nan
                    return r
                loop = pg[c].transform(running).to_numpy(dtype=np.float64)
                fine = ~np.isnan(loop)
                assert a[fine].tobytes() == loop[fine].tobytes() and np.isnan(a[~fine]).all(), c
    np.testing.assert_array_equal(g.cumcount().to_ndarray(), pg.cumcount().to_numpy())
    # a single column selected by name gives its array
    assert isinstance(g["fare"].cumsum(), ak.pdarray)
    with pytest.raises(TypeError, match="holds strings"):
        g[["borough"]].cumsum()


def test_groupby_numeric_only_as_pandas(conn: ak.Connection, rng: np.random.Generator) -> None:
    """numeric_only=True leaves the string columns out of a groupby's
    aggregation, as pandas' does (Arkouda users' code passes it)."""
    pdf = _frame(rng)[["zone", "fare", "count", "borough"]]
    df = ak.DataFrame(pdf, conn=conn)
    for op in ("sum", "mean", "min", "max", "var", "std", "median", "prod"):
        got = getattr(df.groupby("zone"), op)(numeric_only=True)
        want = getattr(pdf.groupby("zone"), op)(numeric_only=True)
        assert sorted(got.columns) == sorted(want.columns), op
        for c in want.columns:
            np.testing.assert_allclose(got[c].to_ndarray(), want[c].to_numpy(dtype=np.float64),
                                       rtol=1e-9, equal_nan=True, err_msg=f"{op} {c}")

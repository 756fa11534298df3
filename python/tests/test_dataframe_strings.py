"""DataFrames with ak.Strings columns (Arkouda's usual text column),
checked against pandas on a real server."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import arktos as ak


@pytest.fixture
def frame(conn: ak.Connection) -> tuple[ak.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(4)
    n = 3000
    words = np.array(["apple", "fig", "", "日本", "kiwi", "fig "], dtype=object)
    host = [f"h{k}.example.com" for k in rng.integers(0, 400, n)]
    pdf = pd.DataFrame({"host": host, "word": words[rng.integers(0, words.size, n)],
                        "x": rng.integers(-50, 50, n), "y": rng.random(n)})
    df = ak.DataFrame({"host": conn.array(pdf["host"].tolist()), "word": conn.array(pdf["word"].tolist()),
                       "x": conn.array(pdf["x"].to_numpy()), "y": conn.array(pdf["y"].to_numpy())})
    return df, pdf


def test_build_select_and_download(frame: tuple[ak.DataFrame, pd.DataFrame]) -> None:
    df, pdf = frame
    assert isinstance(df["host"], ak.Strings)
    assert df.dtypes["host"] == "str" and df.shape == pdf.shape
    pd.testing.assert_frame_equal(df.to_pandas(), pdf)
    pd.testing.assert_frame_equal(df.head(7).to_pandas(), pdf.head(7))
    assert df.tail(5).to_pandas()["host"].tolist() == pdf.tail(5)["host"].tolist()
    mask = (df["x"] > 0) & (df["word"] != "fig")
    want = pdf[(pdf["x"] > 0) & (pdf["word"] != "fig")]
    got = df[mask].to_pandas()
    assert got["host"].tolist() == want["host"].tolist() and got["x"].tolist() == want["x"].tolist()
    idx = np.random.default_rng(1).integers(-len(pdf), len(pdf), 500)
    got = df[idx].to_pandas()
    assert got["word"].tolist() == pdf["word"].iloc[idx].tolist()
    assert df.iloc[3]["host"] == pdf["host"].iloc[3]
    assert "host" in repr(df)


@pytest.mark.parametrize("by,ascending", [("host", True), ("word", False), (["word", "x"], [True, False]),
                                          (["x", "host"], True)])
def test_sort_values_as_pandas(frame: tuple[ak.DataFrame, pd.DataFrame], by, ascending) -> None:
    df, pdf = frame
    got = df.sort_values(by, ascending=ascending).to_pandas()
    want = pdf.sort_values(by, ascending=ascending, kind="stable")
    assert got["y"].tolist() == want["y"].tolist()


def test_groupby_and_duplicates(frame: tuple[ak.DataFrame, pd.DataFrame]) -> None:
    df, pdf = frame
    got = df.groupby("word")[["x", "y"]].sum().to_pandas()
    want = pdf.groupby("word")[["x", "y"]].sum()
    assert got.index.tolist() == want.index.tolist()
    np.testing.assert_array_equal(got["x"].to_numpy(), want["x"].to_numpy())
    np.testing.assert_allclose(got["y"].to_numpy(), want["y"].to_numpy(), rtol=1e-12)
    by_host = df.groupby(["host", "word"]).agg({"x": "sum"}).to_pandas()
    want = pdf.groupby(["host", "word"]).agg({"x": "sum"})
    assert by_host.index.tolist() == want.index.tolist() and by_host["x"].tolist() == want["x"].tolist()
    for op in ["min", "max", "first", "nunique", "count"]:
        g = getattr(df.groupby("word")["host"], op)().to_pandas()["host"]
        w = getattr(pdf.groupby("word")["host"], op)()
        assert [str(v) if op in ("min", "max", "first") else int(v) for v in g.tolist()] == w.tolist(), op
    with pytest.raises(TypeError, match="holds strings"):
        df.groupby("word").sum()
    dd = df.drop_duplicates(["word"]).to_pandas()
    assert dd["word"].tolist() == pdf.drop_duplicates(["word"])["word"].tolist()
    assert df.count()["host"] == len(pdf)


def test_concat_register_attach(conn: ak.Connection, server, frame: tuple[ak.DataFrame, pd.DataFrame]) -> None:
    df, pdf = frame
    both = ak.DataFrame.concat([df, df], ignore_index=True)
    assert both["host"].to_list() == pdf["host"].tolist() * 2
    df.register("test_df_strings")
    other = server.connect()
    try:
        back = ak.DataFrame.attach("test_df_strings", conn=other)
        assert isinstance(back["word"], ak.Strings)
        pd.testing.assert_frame_equal(back.to_pandas(), pdf)
    finally:
        other.close()
    df.unregister()
    with pytest.raises(TypeError, match="holds strings"):
        df.iloc[0, 0] = "x"


def test_merge_on_strings(conn: ak.Connection) -> None:
    left = pd.DataFrame({"k": ["a", "b", "c", "b", "日"], "x": range(5)})
    right = pd.DataFrame({"k": ["b", "c", "d", "日"], "y": [10, 20, 30, 40]})
    a = ak.DataFrame({"k": conn.array(left["k"].tolist()), "x": conn.array(left["x"].to_numpy())})
    b = ak.DataFrame({"k": conn.array(right["k"].tolist()), "y": conn.array(right["y"].to_numpy())})
    for how in ["inner", "left"]:
        got = ak.merge(a, b, on="k", how=how).to_pandas()
        want = pd.merge(left, right, on="k", how=how)
        key = ["k", "x"]
        got, want = got.sort_values(key).reset_index(drop=True), want.sort_values(key).reset_index(drop=True)
        assert got["k"].tolist() == want["k"].tolist(), how
        assert got["x"].tolist() == want["x"].tolist(), how


def test_segarray_columns(conn: ak.Connection) -> None:
    """A SegArray column (Arkouda's frames hold them) is selected, gathered,
    concatenated and downloaded as an object column of arrays; what it
    cannot do (sort by, group by, register, to_parquet) is refused by name."""
    seg = ak.SegArray(conn.array(np.array([0, 2, 2, 5])), conn.array(np.arange(7)))
    df = ak.DataFrame({"s": seg, "x": conn.array(np.arange(4)), "w": conn.array(["a", "b", "c", "d"])})
    assert df.dtypes["s"] == "SegArray"
    want = [[0, 1], [], [2, 3, 4], [5, 6]]
    assert [list(v) for v in df.to_pandas()["s"]] == want
    assert [list(v) for v in df[conn.array(np.array([3, 0]))].to_pandas()["s"]] == [want[3], want[0]]
    assert [list(v) for v in df[df["x"] > 1].to_pandas()["s"]] == want[2:]
    assert [list(v) for v in df.head(2).to_pandas()["s"]] == want[:2]
    both = ak.DataFrame.concat([df, df], ignore_index=True)
    assert [list(v) for v in both.to_pandas()["s"]] == want * 2
    assert df._get_head_tail()["w"].tolist() == ["a", "b", "c", "d"]
    assert df.count()["s"] == 4
    with pytest.raises(TypeError, match="SegArray column has no order"):
        df.sort_values("s")
    with pytest.raises(TypeError, match="cannot be a group-by key"):
        df.groupby("s")
    with pytest.raises(NotImplementedError, match="SegArray"):
        df.register("test_df_segarray")
    assert "test_df_segarray/column_1" not in {e["name"] for e in conn.list_arrays()}

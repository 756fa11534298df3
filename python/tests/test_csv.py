"""CSV files on the server (ak.read_csv / ak.to_csv, Arkouda's format)
against pandas' reader and writer, on a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import arktos as ak


def _columns(conn: ak.Connection, n: int) -> tuple[dict[str, Any], pd.DataFrame]:
    rng = np.random.default_rng(3)
    words = ["", "a", "é日", "with,comma", 'a "quote"', "line\nbreak", " spaced ", "x" * 50]
    pdf = pd.DataFrame({
        "i": rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64, endpoint=True),
        "u": rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True),
        "f": np.concatenate([rng.standard_normal(n - 4) * 1e6, [np.inf, -np.inf, 0.1, -0.0]]),
        "b": rng.random(n) < 0.5,
        "s": [words[k] for k in rng.integers(0, len(words), n)],
    })
    cols = {k: conn.array(pdf[k].tolist() if k == "s" else pdf[k].to_numpy()) for k in pdf}
    return cols, pdf


def test_round_trip_every_dtype(io_conn: ak.Connection, data_dir: Path) -> None:
    cols, pdf = _columns(io_conn, 5000)
    path = ak.to_csv(cols, "out/all.csv")
    assert path == "out/all_LOCALE0000.csv"
    text = (data_dir / path).read_text(encoding="utf-8")
    assert text.startswith("**HEADER**\nint64,uint64,float64,bool,str\n*/HEADER/*\ni,u,f,b,s\n")
    back = ak.read_csv("out/all*", conn=io_conn)
    assert list(back) == ["i", "u", "f", "b", "s"]
    for k in ["i", "u", "b"]:
        assert back[k].to_ndarray().tolist() == pdf[k].tolist(), k
    np.testing.assert_array_equal(back["f"].to_ndarray().view(np.uint64), pdf["f"].to_numpy().view(np.uint64))
    assert isinstance(back["s"], ak.Strings) and back["s"].to_list() == pdf["s"].tolist()
    # pandas reads what we wrote (past the header), with the same values
    got = pd.read_csv(data_dir / path, skiprows=3, keep_default_na=False, dtype={"s": str, "u": np.uint64})
    assert got["s"].tolist() == pdf["s"].tolist() and got["i"].tolist() == pdf["i"].tolist()
    np.testing.assert_array_equal(got["f"].to_numpy(), pdf["f"].to_numpy())
    with pytest.raises(ak.ArgumentValueError, match="exists.*overwrite=True"):
        ak.to_csv(cols, "out/all.csv", overwrite=False)
    ak.to_csv(cols, "out/all.csv")  # replaced, as Arkouda's benchmarks expect


def test_read_pandas_files(io_conn: ak.Connection, data_dir: Path) -> None:
    """A file pandas wrote has no typing header: every column is text,
    unless dtypes says; two files read one after another."""
    pdf = pd.DataFrame({"x": np.arange(1000), "y": np.arange(1000) * 0.5, "z": [f"v{k}" for k in range(1000)]})
    pdf.iloc[:600].to_csv(data_dir / "p1.csv", index=False)
    pdf.iloc[600:].to_csv(data_dir / "p2.csv", index=False)
    text = ak.read_csv("p*.csv", conn=io_conn)
    assert all(isinstance(c, ak.Strings) for c in text.values())
    assert text["x"].to_list() == [str(v) for v in pdf["x"]]
    typed = ak.read_csv(["p1.csv", "p2.csv"], datasets=["y", "x"], dtypes={"x": "int64", "y": np.float64},
                        conn=io_conn)
    assert list(typed) == ["y", "x"]
    assert typed["x"].to_ndarray().tolist() == pdf["x"].tolist()
    assert typed["y"].to_ndarray().tolist() == pdf["y"].tolist()
    df = ak.DataFrame(ak.read_csv("p*.csv", dtypes={"x": "int64"}, conn=io_conn))
    assert df["z"].to_list() == pdf["z"].tolist()


def test_bad_files_name_what_is_wrong(io_conn: ak.Connection, data_dir: Path) -> None:
    before = {e["name"] for e in io_conn.list_arrays()}
    (data_dir / "bad1.csv").write_text("**HEADER**\nint64,str\n*/HEADER/*\na,b\n1,x\n2\n")
    with pytest.raises(ak.ArgumentValueError, match=r"bad1\.csv.*line 6"):
        ak.read_csv("bad1.csv", conn=io_conn)
    (data_dir / "bad2.csv").write_text("**HEADER**\nint64\n*/HEADER/*\na\n1\nzz\n")
    with pytest.raises(ak.ArgumentValueError, match=r"bad2\.csv.*line 6.*'a'|bad2\.csv.*line 6.*a"):
        ak.read_csv("bad2.csv", conn=io_conn)
    (data_dir / "bad3.csv").write_bytes(b"s\nok\n\xff\xfe\n")
    with pytest.raises(ak.ArgumentValueError, match="UTF-8"):
        ak.read_csv("bad3.csv", conn=io_conn)
    with pytest.raises(ValueError, match="dtypes"):
        ak.read_csv("bad3.csv", dtypes={"s": "complex128"}, conn=io_conn)
    with pytest.raises(ak.ArgumentValueError, match='no file matches "none'):
        ak.read_csv("none*.csv", conn=io_conn)
    assert {e["name"] for e in io_conn.list_arrays()} == before  # nothing half-stored
    assert io_conn.mem_info()["used"] == sum(e["nbytes"] for e in io_conn.list_arrays())


def test_pdarray_strings_and_frame_to_csv(io_conn: ak.Connection, data_dir: Path) -> None:
    a = io_conn.array(np.arange(5))
    assert a.to_csv("o/a.csv", overwrite=True) == "o/a_LOCALE0000.csv"
    assert ak.read_csv("o/a_*", conn=io_conn)["array"].to_ndarray().tolist() == list(range(5))
    s = io_conn.array(["x", "y,z"])
    s.to_csv("o/s.csv", overwrite=True)
    assert ak.read_csv("o/s_*", conn=io_conn)["strings_array"].to_list() == ["x", "y,z"]
    df = ak.DataFrame({"k": io_conn.array(["b", "a"]), "v": io_conn.array(np.array([1.5, 2.5]))})
    df.to_csv("o/df.csv", overwrite=True)
    back = ak.read_csv("o/df_*", conn=io_conn)
    assert back["k"].to_list() == ["b", "a"] and back["v"].to_ndarray().tolist() == [1.5, 2.5]
    cat = ak.Categorical(np.array(["z", "y", "z", "é"]), conn=io_conn)  # written as its strings
    ak.to_csv({"c": cat}, "o/c.csv")
    assert ak.read_csv("o/c_*", conn=io_conn)["c"].to_list() == ["z", "y", "z", "é"]

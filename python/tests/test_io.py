"""Parquet, Arrow IPC and checkpoints on the server (arktos.pandas._io), compared
bit for bit with pyarrow."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import arktos as ak

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
feather = pytest.importorskip("pyarrow.feather")

N = 20_000



def table(rng: np.random.Generator, n: int = N) -> Any:
    return pa.table({
        "i64": rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64, endpoint=True),
        "key": rng.integers(0, 50, n),
        "f64": np.concatenate([rng.standard_normal(n - 4), [np.nan, np.inf, -np.inf, -0.0]]),
        "f32": rng.random(n).astype(np.float32),
        "i8": rng.integers(-128, 128, n).astype(np.int8),
        "u16": rng.integers(0, 2**16, n).astype(np.uint16),
        "u32": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "u64": rng.integers(0, 2**64 - 1, n, dtype=np.uint64),
        "b": rng.random(n) < 0.3,
    })


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("codec", ["zstd", "snappy", "gzip", "none"])
def test_read_parquet_matches_pyarrow(io_conn: ak.Connection, data_dir: Path,
                                      rng: np.random.Generator, codec: str) -> None:
    t = table(rng)
    pq.write_table(t, data_dir / "t.parquet", compression=codec, row_group_size=6000)
    cols = ak.read_parquet("t.parquet", conn=io_conn)
    want = pq.read_table(data_dir / "t.parquet")
    assert list(cols) == t.column_names
    for name in t.column_names:
        assert same_bits(cols[name].to_ndarray(), want[name].to_numpy()), name


def test_read_many_files_and_columns(io_conn: ak.Connection, data_dir: Path,
                                     rng: np.random.Generator) -> None:
    (data_dir / "trips").mkdir()
    parts = [table(rng, 3000 + k) for k in range(3)]
    for k, t in enumerate(parts):
        pq.write_table(t, data_dir / "trips" / f"part{k}.parquet", row_group_size=1000)
    cols = ak.read_parquet("trips/*.parquet", columns=["u64", "key"], conn=io_conn)
    assert list(cols) == ["u64", "key"]
    want = pa.concat_tables(parts)
    for name in cols:
        assert same_bits(cols[name].to_ndarray(), want[name].to_numpy())


def test_nulls(io_conn: ak.Connection, data_dir: Path, rng: np.random.Generator) -> None:
    n = 5000
    nulls = rng.random(n) < 0.01
    t = pa.table({"f": pa.array(rng.random(n), mask=nulls), "i": pa.array(np.arange(n), mask=nulls)})
    pq.write_table(t, data_dir / "n.parquet")
    with pytest.warns(UserWarning, match="NaN"):
        f = ak.read_parquet("n.parquet", columns=["f"], conn=io_conn)["f"].to_ndarray()
    assert np.array_equal(np.isnan(f), nulls)
    with pytest.raises(ak.InvalidDataError, match='"i".*nulls="mask"'):
        ak.read_parquet("n.parquet", conn=io_conn)
    got = ak.read_parquet("n.parquet", nulls="fill", fill_value=-1, conn=io_conn)
    assert np.array_equal(got["i"].to_ndarray(), np.where(nulls, -1, np.arange(n)))
    got = ak.read_parquet("n.parquet", nulls="mask", conn=io_conn)
    assert sorted(got) == ["f", "f_mask", "i", "i_mask"]
    assert np.array_equal(got["i_mask"].to_ndarray(), nulls)
    assert np.array_equal(got["i"].to_ndarray()[~nulls], np.arange(n)[~nulls])
    with pytest.raises(ValueError, match="fit"):
        ak.read_parquet("n.parquet", nulls="fill", fill_value=0.5, conn=io_conn)


@pytest.mark.parametrize("page_version,encoding", [("1.0", "PLAIN"), ("2.0", "PLAIN"), ("2.0", "RLE")])
def test_bool_pages(io_conn: ak.Connection, data_dir: Path, rng: np.random.Generator,
                    page_version: str, encoding: str) -> None:
    """Bool columns (read by the direct page reader) in every page kind
    pyarrow writes, with nulls: values, masks and fills as pyarrow's."""
    n = 30_000
    b = (np.arange(n) % 1000 < 500) | (rng.random(n) < 0.3)
    nulls = rng.random(n) < 0.01
    t = pa.table({"b": pa.array(b, mask=nulls), "r": pa.array(b)},
                 schema=pa.schema([pa.field("b", pa.bool_()), pa.field("r", pa.bool_(), nullable=False)]))
    pq.write_table(t, data_dir / "b.parquet", data_page_version=page_version, use_dictionary=False,
                   column_encoding={"b": encoding, "r": encoding}, row_group_size=7000, data_page_size=1000)
    got = ak.read_parquet("b.parquet", nulls="mask", conn=io_conn)
    assert np.array_equal(got["b_mask"].to_ndarray(), nulls)
    assert np.array_equal(got["b"].to_ndarray(), np.where(nulls, False, b))
    assert np.array_equal(got["r"].to_ndarray(), b)
    got = ak.read_parquet("b.parquet", nulls="fill", fill_value=True, conn=io_conn)
    assert np.array_equal(got["b"].to_ndarray(), np.where(nulls, True, b))


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("codec", ["zstd", "none"])
def test_delta_and_byte_stream_split(io_conn: ak.Connection, data_dir: Path, rng: np.random.Generator,
                                     page_version: str, codec: str) -> None:
    """DELTA_BINARY_PACKED integers and BYTE_STREAM_SPLIT floats, as
    parquet-cpp writes them (DuckDB's and Spark's v2 writers choose these),
    with nulls: the same bits as pyarrow reads."""
    t = table(rng)
    ints = ["i64", "key", "i8", "u16", "u32", "u64"]
    nulls = rng.random(N) < 0.02
    t = t.append_column("f_nulls", pa.array(t["f64"].to_numpy(), mask=nulls))
    t = t.append_column("i_nulls", pa.array(t["key"].to_numpy(), mask=nulls))
    t = t.append_column("i64_split", t["i64"]).append_column("i8_split", t["i8"])  # format 2.11: integers too
    enc = ({c: "DELTA_BINARY_PACKED" for c in [*ints, "i_nulls"]}
           | {c: "BYTE_STREAM_SPLIT" for c in ["f64", "f32", "f_nulls", "i64_split", "i8_split"]})
    pq.write_table(t, data_dir / "d.parquet", use_dictionary=False, column_encoding=enc, compression=codec,
                   data_page_version=page_version, row_group_size=7000, data_page_size=20_000)
    md = pq.ParquetFile(data_dir / "d.parquet").metadata
    assert "DELTA_BINARY_PACKED" in md.row_group(0).column(0).encodings
    got = ak.read_parquet("d.parquet", nulls="mask", conn=io_conn)
    want = pq.read_table(data_dir / "d.parquet")
    for name in [*ints, "f64", "f32", "i64_split", "i8_split"]:
        assert same_bits(got[name].to_ndarray(), want[name].to_numpy()), name
    assert np.array_equal(got["f_nulls_mask"].to_ndarray(), nulls)
    assert np.array_equal(got["i_nulls_mask"].to_ndarray(), nulls)
    keep = ~nulls
    assert same_bits(got["f_nulls"].to_ndarray()[keep], t["f64"].to_numpy()[keep])
    assert same_bits(got["i_nulls"].to_ndarray()[keep], t["key"].to_numpy()[keep])


def test_unsupported_columns(io_conn: ak.Connection, data_dir: Path) -> None:
    t = pa.table({"x": [1, 2], "s": ["a", "b"], "l": [[1], [2]]})
    pq.write_table(t, data_dir / "u.parquet")
    with pytest.raises(TypeError) as err:
        ak.read_parquet("u.parquet", conn=io_conn)
    message = str(err.value)
    assert "l: nested" in message and "readable columns: x (int64), s (string)" in message
    assert ak.read_parquet("u.parquet", columns=["x"], conn=io_conn)["x"].to_ndarray().tolist() == [1, 2]


def test_read_string_columns_as_categoricals(io_conn: ak.Connection, data_dir: Path,
                                             rng: np.random.Generator) -> None:
    """String columns come back as Categoricals equal to pyarrow's strings:
    dictionary and plain pages, several row groups and files (their own
    dictionaries), codes in the smallest int, the columns in the order
    asked; a string column with nulls is refused and nothing is stored."""
    words = np.array(["JFK", "Midtown", "Zoë", "", "a", "B", "日本", "JFK "])
    n = 40_000
    zone = words[rng.integers(0, words.size, n)]
    ids = np.array([f"id{k:07d}" for k in rng.integers(0, 10**6, n)])  # > 32767 distinct: int32 codes
    t = pa.table({"fare": rng.random(n), "zone": pa.array(zone), "id": pa.array(ids),
                  "flag": pa.array(np.where(rng.random(n) < 0.3, "Y", "N")).dictionary_encode()})
    pq.write_table(t.slice(0, 23_000), data_dir / "s1.parquet", row_group_size=5_000, compression="zstd")
    # (the second file's columns in another order: each file's own place for each)
    pq.write_table(t.slice(23_000).select(["id", "flag", "fare", "zone"]), data_dir / "s2.parquet",
                   row_group_size=4_000, use_dictionary=False,
                   compression="snappy")
    got = ak.read_parquet("s*.parquet", conn=io_conn)
    assert set(got) == {"fare", "zone", "id", "flag"}
    for name in ("zone", "id", "flag"):
        c = got[name]
        assert isinstance(c, ak.Categorical), name
        assert c.to_list() == t[name].to_pylist(), name
        assert c.categories.tolist() == sorted(set(t[name].to_pylist())), name
    assert got["zone"].codes.dtype == np.int8 and got["id"].codes.dtype == np.int32
    assert same_bits(got["fare"].to_ndarray(), t["fare"].to_numpy())
    keys, means = ak.GroupBy(got["zone"]).mean(got["fare"])
    want = t.to_pandas().groupby("zone", sort=True)["fare"].mean()
    assert keys.to_list() == want.index.tolist()
    np.testing.assert_allclose(means.to_ndarray(), want.to_numpy(), rtol=1e-12)
    picked = ak.read_parquet("s1.parquet", columns=["flag", "fare"], conn=io_conn)
    assert list(picked) == ["flag", "fare"]
    before = {e["name"] for e in io_conn.list_arrays()}
    # only the codes stay on the server: the categories' parts were deleted
    assert not [e for e in io_conn.list_arrays() if e["dtype"] == "uint8"]
    nulls = pa.table({"x": [1, 2, 3], "s": pa.array(["a", None, "b"])})
    pq.write_table(nulls, data_dir / "n.parquet")
    with pytest.raises(ValueError, match="string column \"s\" has nulls.*null_string="):
        ak.read_parquet("n.parquet", conn=io_conn)
    assert {e["name"] for e in io_conn.list_arrays()} == before  # nothing stored
    na = ak.read_parquet("n.parquet", null_string="N/A", conn=io_conn)["s"]
    assert na.to_list() == ["a", "N/A", "b"] and na.categories.tolist() == ["N/A", "a", "b"]
    na.delete()
    assert ak.read_parquet("n.parquet", columns=["x"], conn=io_conn)["x"].to_ndarray().tolist() == [1, 2, 3]
    # Written back (Categoricals as Parquet strings), pyarrow reads the same table.
    stored_before = {e["name"] for e in io_conn.list_arrays()}
    ak.to_parquet(got, "out.parquet", row_group_size=7_000)
    assert {e["name"] for e in io_conn.list_arrays()} == stored_before  # the uploaded categories are gone
    back = pq.read_table(data_dir / "out.parquet")
    for name in ("zone", "id", "flag"):
        assert back.schema.field(name).type == pa.string(), name
        assert back[name].to_pylist() == t[name].to_pylist(), name
    assert same_bits(back["fare"].to_numpy(), t["fare"].to_numpy())
    # every reservation given back: what is used is what is stored
    stored = sum(e["nbytes"] for e in io_conn.list_arrays())
    assert io_conn.mem_info()["used"] == stored


def test_read_string_columns_as_strings(io_conn: ak.Connection, data_dir: Path,
                                        rng: np.random.Generator) -> None:
    """strings="strings" reads string columns as ak.Strings, each row's
    text as it is: dictionary and plain pages, several row groups and
    files, nulls refused or read as null_string; invalid UTF-8 refused;
    every reservation given back."""
    words = np.array(["JFK", "Midtown", "Zoë", "", "a", "B", "日本", "JFK ", "x\x00y"])
    n = 30_000
    zone = words[rng.integers(0, words.size, n)].tolist()
    ids = [f"id{k:07d}" for k in rng.integers(0, 10**6, n)]
    t = pa.table({"fare": rng.random(n), "zone": pa.array(zone), "id": pa.array(ids),
                  "flag": pa.array(np.where(rng.random(n) < 0.3, "Y", "N")).dictionary_encode()})
    pq.write_table(t.slice(0, 17_000), data_dir / "r1.parquet", row_group_size=5_000, compression="zstd")
    pq.write_table(t.slice(17_000).select(["id", "flag", "fare", "zone"]), data_dir / "r2.parquet",
                   row_group_size=4_000, use_dictionary=False, compression="snappy")
    before = {e["name"] for e in io_conn.list_arrays()}
    got = ak.read_parquet("r*.parquet", strings="strings", conn=io_conn)
    for name in ("zone", "id", "flag"):
        c = got[name]
        assert isinstance(c, ak.Strings), name
        assert c.to_list() == t[name].to_pylist(), name
    assert same_bits(got["fare"].to_ndarray(), t["fare"].to_numpy())
    # Read already checked: the first string command does not check again.
    skipped = io_conn._request("stats")[0]["string_checks_skipped"]
    assert (got["zone"] == "JFK").sum() == zone.count("JFK")
    assert io_conn._request("stats")[0]["string_checks_skipped"] == skipped + 1
    nulls = pa.table({"s": pa.array(["a", None, "bé", None])})
    pq.write_table(nulls, data_dir / "n.parquet")
    with pytest.raises(ValueError, match="has nulls.*null_string="):
        ak.read_parquet("n.parquet", strings="strings", conn=io_conn)
    assert ak.read_parquet("n.parquet", strings="strings", null_string="?",
                           conn=io_conn)["s"].to_list() == ["a", "?", "bé", "?"]
    bad = pa.table({"s": pa.array([b"ok", b"\xff\xfe"], type=pa.binary()).cast(pa.string(), safe=False)})
    pq.write_table(bad, data_dir / "bad.parquet")
    with pytest.raises(ak.ArgumentValueError, match="string 1 is not valid UTF-8"):
        ak.read_parquet("bad.parquet", strings="strings", conn=io_conn)
    with pytest.raises(ValueError, match='strings must be "categorical" or "strings"'):
        ak.read_parquet("n.parquet", strings="text", conn=io_conn)
    # Written back (a Strings as Parquet strings), pyarrow and read_parquet read the same text.
    ak.to_parquet({"zone": got["zone"], "fare": got["fare"]}, "back.parquet")
    assert pq.read_table(data_dir / "back.parquet")["zone"].to_pylist() == zone
    again = ak.read_parquet("back.parquet", strings="strings", conn=io_conn)["zone"]
    assert again.to_list() == zone
    del again
    for c in got.values():
        c.delete() if isinstance(c, ak.pdarray) else None
    del got, c
    import gc
    gc.collect()
    io_conn.list_arrays()  # (the pending deletes go with a request)
    assert {e["name"] for e in io_conn.list_arrays()} == before
    assert io_conn.mem_info()["used"] == sum(e["nbytes"] for e in io_conn.list_arrays())


def test_write_categorical_parquet(io_conn: ak.Connection, data_dir: Path,
                                   rng: np.random.Generator) -> None:
    """A Categorical is written as a Parquet string column that pyarrow and
    pandas read as the same strings: each row group a dictionary of only the
    strings it uses (plain when they would not fit a dictionary page, or
    with dictionary="off"), exact min and max statistics; ak.read_parquet
    gives the Categorical back. Non-ASCII, empty, unsigned and registered
    ones too."""
    n = 12_000
    words = np.array(["", "JFK", "Midtown", "Zoë", "a\x00b", "日本", "zz"])
    zone = ak.Categorical(words[rng.integers(0, words.size, n)], conn=io_conn)
    ids = ak.Categorical(np.array([f"id{k:06d}" for k in rng.integers(0, 10**5, n)]), conn=io_conn)
    # 600 strings of 2 kB: a row group's overflow a dictionary page
    wide = ak.Categorical(np.array(["w%03d" % k + "x" * 2_000 for k in range(600)])[rng.integers(0, 600, n)],
                          conn=io_conn)
    fare = io_conn.array(rng.random(n))
    zone.register("zones")
    reg = ak.Categorical.attach("zones", conn=io_conn)
    stored = {e["name"] for e in io_conn.list_arrays()}
    info = ak.to_parquet({"zone": reg, "id": ids, "fare": fare, "wide": wide}, "cat.parquet",
                         row_group_size=4_000)
    assert info["rows"] == n
    assert {e["name"] for e in io_conn.list_arrays()} == stored
    path = data_dir / "cat.parquet"
    back = pq.read_table(path)
    want = {"zone": zone.to_ndarray(), "id": ids.to_ndarray(), "wide": wide.to_ndarray()}
    for name, values in want.items():
        assert back.schema.field(name).type == pa.string(), name
        assert back[name].to_pylist() == values.tolist(), name
    assert same_bits(back["fare"].to_numpy(), fare.to_ndarray())
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 3
    for rg in range(3):
        rows = slice(rg * 4_000, (rg + 1) * 4_000)
        for name in ("zone", "id"):
            col = meta.row_group(rg).column(back.column_names.index(name))
            assert "RLE_DICTIONARY" in col.encodings or "PLAIN_DICTIONARY" in col.encodings, name
            assert col.statistics.min == min(want[name][rows]), name
            assert col.statistics.max == max(want[name][rows]), name
        wcol = meta.row_group(rg).column(back.column_names.index("wide"))
        assert not {"RLE_DICTIONARY", "PLAIN_DICTIONARY"} & set(wcol.encodings)
    pd = pytest.importorskip("pandas")
    assert pd.read_parquet(path)["zone"].tolist() == want["zone"].tolist()
    got = ak.read_parquet("cat.parquet", conn=io_conn)
    assert isinstance(got["zone"], ak.Categorical)
    assert got["zone"].categories.tolist() == sorted(set(want["zone"].tolist()))
    assert got["zone"].to_list() == want["zone"].tolist()
    ak.to_parquet({"id": ids}, "plain.parquet", dictionary="off", compression="snappy")
    col = pq.ParquetFile(data_dir / "plain.parquet").metadata.row_group(0).column(0)
    assert not {"RLE_DICTIONARY", "PLAIN_DICTIONARY"} & set(col.encodings)
    assert pq.read_table(data_dir / "plain.parquet")["id"].to_pylist() == want["id"].tolist()
    unsigned = ak.Categorical.from_codes(io_conn.array(np.array([1, 0, 1], dtype=np.uint8)), ["a", "b"])
    ak.to_parquet({"u": unsigned}, "u.parquet")
    assert pq.read_table(data_dir / "u.parquet")["u"].to_pylist() == ["b", "a", "b"]
    unsigned.codes.delete()
    strided = ak.Categorical.from_codes(io_conn.array(np.array([1, 0], dtype=np.int8)),
                                        np.array(["aa", "bb", "cc", "dd"])[::2])  # (not contiguous)
    ak.to_parquet({"s": strided}, "strided.parquet")
    assert pq.read_table(data_dir / "strided.parquet")["s"].to_pylist() == ["cc", "aa"]
    strided.codes.delete()
    # A null string's rows go out as nulls, and come back as it.
    flags = ak.Categorical(np.array(["Y", "N/A", "N", "N/A", "Y"]), conn=io_conn)
    ak.to_parquet({"f": flags}, "nulls.parquet", null_string="N/A")
    ak.to_arrow_file({"f": flags}, "nulls.arrow", null_string="N/A")
    for name, table_of in (("nulls.parquet", pq.read_table), ("nulls.arrow", feather.read_table)):
        t = table_of(data_dir / name)
        assert t.schema.field("f").nullable and t["f"].to_pylist() == ["Y", None, "N", None, "Y"], name
        reader = ak.read_parquet if name.endswith("parquet") else ak.read_arrow
        back = reader(name, null_string="N/A", conn=io_conn)["f"]
        assert back.to_list() == flags.to_list(), name
        back.delete()
    assert pd.read_parquet(data_dir / "nulls.parquet")["f"].isna().sum() == 2
    flags.codes.delete()
    empty = ak.Categorical(np.array([], dtype=str), conn=io_conn)
    ak.to_parquet({"e": empty}, "empty.parquet")
    assert pq.read_table(data_dir / "empty.parquet")["e"].to_pylist() == []
    kept = {v.codes.name if isinstance(v, ak.Categorical) else v.name for v in got.values()}
    assert {e["name"] for e in io_conn.list_arrays()} == stored | kept | {empty.codes.name}
    assert io_conn.mem_info()["used"] == sum(e["nbytes"] for e in io_conn.list_arrays())


def test_arrow_ipc_strings(io_conn: ak.Connection, data_dir: Path,
                           rng: np.random.Generator) -> None:
    """Arrow IPC string columns, as pyarrow and pandas write them (utf8,
    large_utf8, a pandas category column's dictionary; several record
    batches) read as Categoricals equal to pyarrow's strings; a Categorical
    written to IPC is a dictionary column pandas reads as a category of the
    same strings; nulls are refused and nothing is stored."""
    n = 30_000
    words = np.array(["JFK", "", "Zoë", "a\x00b", "日本", "Midtown"])
    zone = words[rng.integers(0, words.size, n)]
    ids = np.array([f"id{k:05d}" for k in rng.integers(0, 50_000, n)])
    t = pa.table({"zone": pa.array(zone), "big": pa.array(ids, type=pa.large_string()),
                  "cat": pa.array(zone).dictionary_encode(), "x": np.arange(n)})
    feather.write_feather(t, data_dir / "s.arrow", chunksize=7_000, compression="zstd")
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"z": pd.Categorical(zone)})
    pdf.to_feather(data_dir / "pandas.arrow")
    before = {e["name"] for e in io_conn.list_arrays()}
    got = ak.read_arrow("s.arrow", columns=["x", "zone", "big", "cat"], conn=io_conn)
    assert list(got) == ["x", "zone", "big", "cat"]
    for name in ("zone", "big", "cat"):
        assert isinstance(got[name], ak.Categorical), name
        assert got[name].to_list() == t[name].to_pylist(), name
        assert got[name].categories.tolist() == sorted(set(t[name].to_pylist())), name
    assert got["x"].to_ndarray().tolist() == list(range(n))
    p = ak.read_arrow("pandas.arrow", conn=io_conn)["z"]
    assert p.to_list() == pd.read_feather(data_dir / "pandas.arrow")["z"].tolist()
    want = t["zone"].to_pylist()  # (pyarrow reads numpy's "a\x00b" as "a")
    # A Categorical out to IPC: a dictionary column of its categories.
    ak.to_arrow_file({"zone": got["zone"], "x": got["x"]}, "out.arrow", compression="lz4")
    back = feather.read_table(data_dir / "out.arrow")
    assert pa.types.is_dictionary(back.schema.field("zone").type)
    assert back["zone"].to_pylist() == want
    frame = pd.read_feather(data_dir / "out.arrow")
    assert isinstance(frame["zone"].dtype, pd.CategoricalDtype)
    assert frame["zone"].tolist() == want
    again = ak.read_arrow("out.arrow", conn=io_conn)["zone"]
    assert again.to_list() == want
    stored = {e["name"] for e in io_conn.list_arrays()}
    feather.write_feather(pa.table({"s": pa.array(["a", None, "b"])}), data_dir / "n.arrow")
    with pytest.raises(ValueError, match='string column "s" has nulls'):
        ak.read_arrow("n.arrow", conn=io_conn)
    assert {e["name"] for e in io_conn.list_arrays()} == stored
    na = ak.read_arrow("n.arrow", null_string="", conn=io_conn)["s"]
    assert na.to_list() == ["a", "", "b"]
    na.delete()
    assert stored - before  # (what was read is there; the failed read added nothing)
    assert io_conn.mem_info()["used"] == sum(e["nbytes"] for e in io_conn.list_arrays())


def test_write_parquet_and_arrow(io_conn: ak.Connection, data_dir: Path,
                                 rng: np.random.Generator) -> None:
    t = table(rng)
    arrays = {name: io_conn.array(t[name].to_numpy()) for name in t.column_names}
    info = ak.to_parquet(arrays, "out/t.parquet", compression="zstd", row_group_size=7000)
    assert info["rows"] == N
    back = pq.read_table(data_dir / "out" / "t.parquet")
    assert pq.ParquetFile(data_dir / "out" / "t.parquet").metadata.num_row_groups == 3
    for name in t.column_names:
        assert same_bits(back[name].to_numpy(), t[name].to_numpy()), name
    assert os.listdir(data_dir / "out") == ["t.parquet"]  # no temporary file left
    ak.to_parquet(arrays, "out/t19.parquet", compression_level=19)
    t19 = pq.read_table(data_dir / "out" / "t19.parquet")
    assert all(same_bits(t19[c].to_numpy(), back[c].to_numpy()) for c in t.column_names)
    with pytest.raises(ValueError, match='compression "snappy" has no levels'):
        ak.to_parquet(arrays, "out/x.parquet", compression="snappy", compression_level=3)
    ak.to_arrow_file(arrays, "t.arrow", compression="lz4")
    back = feather.read_table(data_dir / "t.arrow")
    for name in t.column_names:
        assert same_bits(back[name].to_numpy(), t[name].to_numpy()), name
    got = ak.read_arrow("t.arrow", conn=io_conn)
    for name in t.column_names:
        assert same_bits(got[name].to_ndarray(), t[name].to_numpy()), name
    feather.write_feather(t, data_dir / "py.arrow")  # pyarrow's own file
    got = ak.read_arrow("py.arrow", columns=["f64", "b"], conn=io_conn)
    assert same_bits(got["f64"].to_ndarray(), t["f64"].to_numpy())


def test_paths_stay_in_data_dir(io_conn: ak.Connection, data_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    pq.write_table(pa.table({"x": [1]}), outside / "secret.parquet")
    (data_dir / "link").symlink_to(outside)
    x = io_conn.array(np.arange(3))
    for path in ["../outside/secret.parquet", str(outside / "secret.parquet"), "link/secret.parquet"]:
        with pytest.raises(ValueError, match="data directory"):
            ak.read_parquet(path, conn=io_conn)
        with pytest.raises(ValueError, match="data directory"):
            ak.to_parquet({"x": x}, path.replace("secret", "new"))
    assert not (outside / "new.parquet").exists()


def test_checkpoint_across_restart(make_server: Callable[..., Any], tmp_path: Path,
                                   rng: np.random.Generator) -> None:
    ckpt = tmp_path / "ckpt"
    flags = ("--checkpoint", str(ckpt), "--data-dir", str(tmp_path / "data"))
    srv = make_server(*flags)
    conn = srv.connect()
    data = {"zones": rng.integers(0, 300, 100_000), "fares": rng.random(50_000),
            "flags": rng.random(10) < 0.5, "empty": np.zeros(0, np.int16)}
    kept = [conn.array(values, name=name) for name, values in data.items()]
    conn.shutdown()  # a clean shutdown: the server saves the checkpoint, then exits
    del kept
    assert srv.process.wait(timeout=30) == 0
    manifest = json.loads((ckpt / "manifest.json").read_text())
    assert sorted(e["name"] for e in manifest["arrays"]) == sorted(data)

    srv = make_server(*flags)
    conn = srv.connect()
    assert sorted(e["name"] for e in conn.list_arrays()) == sorted(data)
    for name, values in data.items():
        assert same_bits(conn.attach(name).to_ndarray(), values)
    conn.close()
    srv.stop()

    # A corrupted file: the server refuses to start (rather than start empty
    # and overwrite the checkpoint at the next shutdown), naming the array.
    entry = next(e for e in manifest["arrays"] if e["name"] == "fares")
    blob = bytearray((ckpt / entry["file"]).read_bytes())
    blob[100] ^= 0xFF
    (ckpt / entry["file"]).write_bytes(bytes(blob))
    with pytest.raises(RuntimeError, match="fares.*checksum"):
        make_server(*flags)


def test_connect_waits_for_restore(make_server: Callable[..., Any], tmp_path: Path) -> None:
    """A server restoring its checkpoint answers at once but serves arrays
    only once they are back: connect waits for that, within its timeout."""
    flags = ("--checkpoint", str(tmp_path / "ckpt"))
    srv = make_server(*flags)
    conn = srv.connect()
    kept = conn.array(np.arange(5), name="kept")  # held: a collected pdarray deletes its array
    conn.shutdown()
    del kept
    assert srv.process.wait(timeout=30) == 0

    start = time.monotonic()  # before the server: the delay counts from its start, however slow
    srv = make_server(*flags, env={"ARKTOS_DEBUG_RESTORE_DELAY": "3s"})
    conn = srv.connect()
    assert time.monotonic() - start >= 3.0  # it waited for the restore
    assert "restoring" not in conn.config
    assert same_bits(conn.attach("kept").to_ndarray(), np.arange(5))
    conn.close()

    srv = make_server(*flags, env={"ARKTOS_DEBUG_RESTORE_DELAY": "1h"})
    with pytest.raises(TimeoutError, match=r"still restoring its checkpoint \(0 of 1 arrays.*longer timeout="):
        srv.connect(timeout=0.3)


@pytest.mark.parametrize("network", ["unix", "tcp"])
def test_requests_after_a_restart(make_server: Callable[..., Any], tmp_path: Path, network: str) -> None:
    """A connection made before its server restarted on a checkpoint goes
    on: its idle lane and its bulk stream, closed by the old server, are
    replaced before a request goes out on them, and a request or download
    the new server refuses while it restores waits for the restore and is
    sent again."""
    from arktos.core._transport import path_counts

    flags = ("--checkpoint", str(tmp_path / "ckpt"))
    srv = make_server(*flags)
    conn = srv.connect(stream_network=network, shm=False)
    kept = conn.array(np.arange(5), name="kept")
    assert conn.info("kept")["size"] == 5  # over the lane
    x = np.arange(1 << 18) * 3  # 2 MiB: opens the bulk stream
    large = conn.array(x, name="large")
    assert same_bits(large.to_ndarray(), x) and conn._stream is not None
    srv.process.send_signal(signal.SIGTERM)  # a clean stop saves the checkpoint
    assert srv.process.wait(timeout=30) == 0
    closed, streams = path_counts["lanes_closed_by_peer"], path_counts["streams_closed_by_peer"]
    make_server(*flags, env={"ARKTOS_DEBUG_RESTORE_DELAY": "1s"}, url=srv.url)
    # first a download over the stream the old server held, refused meanwhile
    assert same_bits(large.to_ndarray(), x)
    assert path_counts["streams_closed_by_peer"] - streams == 1
    assert conn.info("kept")["size"] == 5
    assert path_counts["lanes_closed_by_peer"] - closed == 1
    assert same_bits(kept.to_ndarray(), np.arange(5))
    conn.close()


def test_uploads_after_a_restart(make_server: Callable[..., Any], tmp_path: Path) -> None:
    """Connections made before their server restarted on a checkpoint
    upload (over the lane, a bulk stream and a shared-memory lease) and view
    an array while the new server restores: each is refused with RESTORING
    once, waits for the restore and is sent again, and the server holds each
    upload once."""
    from arktos.core._session import SHM_THRESHOLD
    from arktos.core._transport import path_counts

    flags = ("--checkpoint", str(tmp_path / "ckpt"))
    srv = make_server(*flags)
    conns = [srv.connect(), srv.connect(shm=False), srv.connect(), srv.connect()]
    before = np.arange(1 << 18) * 7 + 1  # 2 MiB: opens each connection's bulk stream
    kept = [c.array(before, name=f"before{i}") for i, c in enumerate(conns)]
    small, leased = np.arange(3), np.arange(SHM_THRESHOLD // 8) ^ 0x55
    srv.process.send_signal(signal.SIGTERM)  # a clean stop saves the checkpoint
    assert srv.process.wait(timeout=30) == 0
    retries = path_counts["restore_retries"]
    make_server(*flags, env={"ARKTOS_DEBUG_RESTORE_DELAY": "1500ms"}, url=srv.url)
    work = [lambda: conns[0].array(small, name="small"),
            lambda: conns[1].array(before, name="large"),
            lambda: conns[2].array(leased, name="leased"),
            lambda: kept[3].to_ndarray(copy=False)]  # noqa: F821 -- (deleted below, after the calls)
    with ThreadPoolExecutor(len(work)) as pool:
        results = [f.result() for f in [pool.submit(w) for w in work]]
    assert path_counts["restore_retries"] - retries == len(work)  # each refused once
    assert same_bits(results[3], before) and not results[3].flags.writeable
    assert conns[3]._request("stats")[0]["shm_views"] == 1  # it maps the new server's segment
    for name, want in {"small": small, "large": before, "leased": leased}.items():
        assert same_bits(conns[0].attach(name).to_ndarray(), want)
    assert sorted(e["name"] for e in conns[0].list_arrays()) == [
        "before0", "before1", "before2", "before3", "large", "leased", "small"]
    del kept, results
    for c in conns:
        c.close()


def test_deletes_after_a_restart(make_server: Callable[..., Any], tmp_path: Path) -> None:
    """Names left to delete (an array a late reply made, or one collected)
    are kept when the delete is refused with RESTORING by a restarted
    server, whose checkpoint holds those arrays too, and deleted once it
    has restored (as Go's flushDeletes)."""
    from arktos.core._transport import path_counts

    flags = ("--checkpoint", str(tmp_path / "ckpt"))
    srv = make_server(*flags)
    conn = srv.connect()
    late = conn.array(np.arange(3), name="late")  # (held: a collected one is deleted)
    kept = conn.array(np.arange(3), name="kept")
    srv.process.send_signal(signal.SIGTERM)  # a clean stop saves the checkpoint
    assert srv.process.wait(timeout=30) == 0
    make_server(*flags, env={"ARKTOS_DEBUG_RESTORE_DELAY": "1s"}, url=srv.url)
    conn._pending_deletes.append("late")
    retries = path_counts["restore_retries"]
    assert same_bits(conn.attach("kept").to_ndarray(), np.arange(3))
    assert path_counts["restore_retries"] > retries  # refused while restoring
    assert [e["name"] for e in conn.list_arrays()] == ["kept"]
    assert not conn._pending_deletes
    del late, kept
    conn.close()


def test_save_load_all(io_conn: ak.Connection, data_dir: Path) -> None:
    a = io_conn.array(np.arange(1000.0), name="a_io")
    info = ak.save_all("ck/one", conn=io_conn)
    assert info["arrays"] >= 1
    a.delete()
    loaded = ak.load_all("ck/one", conn=io_conn)
    assert same_bits(loaded["a_io"].to_ndarray(), np.arange(1000.0))
    io_conn.delete(list(loaded))
    entry = next(e for e in json.loads((data_dir / "ck/one/manifest.json").read_text())["arrays"]
                 if e["name"] == "a_io")
    path = data_dir / "ck" / "one" / entry["file"]
    path.write_bytes(path.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ak.InvalidDataError, match="checksum.*nothing was loaded"):
        ak.load_all("ck/one", conn=io_conn)
    assert io_conn.list_arrays() == []


def test_files_a_differential_run_broke(io_conn: ak.Connection, data_dir: Path) -> None:
    """Files a helper's differential run against pyarrow found misread:
    a zero-row bool column (the server panicked), a column name with a dot
    (taken for a nested one), a null mask whose name a real column has (one
    of the two was lost), and a column nullable only in a later file (its
    nulls became 0s with no mask)."""
    import pyarrow.ipc as ipc

    ak.to_arrow_file({"flag": io_conn.array(np.zeros(0, bool))}, "empty_bool.arrow")
    got = ak.read_arrow("empty_bool.arrow", conn=io_conn)["flag"].to_ndarray()
    assert got.dtype == np.bool_ and got.size == 0
    t = pa.table({"x": [1, 2, 3], "b": [True, False, True]})
    with ipc.new_file(data_dir / "eb.arrow", t.schema) as w:
        empty = pa.record_batch([c.chunk(0)[2:2] for c in t.columns], schema=t.schema)
        for b in (t.slice(0, 2).to_batches()[0], empty, t.slice(2, 1).to_batches()[0]):
            w.write_batch(b)
    got = ak.read_arrow("eb.arrow", conn=io_conn)
    assert got["b"].to_ndarray().tolist() == [True, False, True] and got["x"].to_ndarray().tolist() == [1, 2, 3]

    pq.write_table(pa.table({"a.b": [1, 2, 3]}), data_dir / "dot.parquet")
    assert ak.read_parquet("dot.parquet", conn=io_conn)["a.b"].to_ndarray().tolist() == [1, 2, 3]
    ak.to_parquet({"price.usd": io_conn.array(np.arange(3))}, "dot2.parquet")
    assert ak.read_parquet("dot2.parquet", conn=io_conn)["price.usd"].to_ndarray().tolist() == [0, 1, 2]

    pq.write_table(pa.table({"a": pa.array([1, None, 3]), "a_mask": [True, True, True]}), data_dir / "clash.parquet")
    with pytest.raises(ValueError, match="'s null mask would be named \"a_mask\""):
        ak.read_parquet("clash.parquet", nulls="mask", conn=io_conn)
    assert ak.read_parquet("clash.parquet", nulls="mask", columns=["a"], conn=io_conn)["a_mask"].to_ndarray().tolist() == [
        False, True, False]

    pq.write_table(pa.table({"x": pa.array([5, 6], pa.int64())},
                            schema=pa.schema([pa.field("x", pa.int64(), nullable=False)])), data_dir / "m_a.parquet")
    pq.write_table(pa.table({"x": pa.array([7, None], pa.int64())}), data_dir / "m_b.parquet")
    for files, mask in ((["m_a.parquet", "m_b.parquet"], [False, False, False, True]),
                        (["m_b.parquet", "m_a.parquet"], [False, True, False, False])):
        got = ak.read_parquet(files, nulls="mask", conn=io_conn)
        assert got["x_mask"].to_ndarray().tolist() == mask, files
    # a later file's extra column, read whole: refused in either order
    pq.write_table(pa.table({"a": [1]}), data_dir / "t1.parquet")
    pq.write_table(pa.table({"a": [2], "s": ["x"]}), data_dir / "t3.parquet")
    for files in (["t1.parquet", "t3.parquet"], ["t3.parquet", "t1.parquet"]):
        with pytest.raises(ak.InvalidDataError, match='column "s"'):
            ak.read_parquet(files, conn=io_conn)
    assert ak.read_parquet(["t1.parquet", "t3.parquet"], columns=["a"], conn=io_conn)["a"].to_ndarray().tolist() == [1, 2]
    # two columns of one name: refused, not one of them dropped
    t = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    pq.write_table(t, data_dir / "dup.parquet")
    feather.write_feather(t, data_dir / "dup.arrow")
    for read in (lambda: ak.read_parquet("dup.parquet", conn=io_conn), lambda: ak.read_arrow("dup.arrow", conn=io_conn),
                 lambda: ak.read_arrow("dup.arrow", columns=["x"], conn=io_conn)):
        with pytest.raises(ValueError, match='2 columns named "x"'):
            read()
    # writing under a file names the file in the way
    with pytest.raises(ValueError, match="a part of it is a file"):
        ak.to_parquet({"x": io_conn.array(np.arange(3))}, "dup.parquet/out.parquet")
    # NaN payloads and signs survive a dictionary-encoded write (written plain)
    v = np.array([np.nan, 1.0, 0.0, 0.0, 2.0])
    v.view(np.uint64)[2:4] = [0x7FF8000000000123, 0xFFF8000000000000]
    for dictionary in ("auto", "on"):
        ak.to_parquet({"x": io_conn.array(v)}, f"nan_{dictionary}.parquet", dictionary=dictionary)
        got = pq.read_table(data_dir / f"nan_{dictionary}.parquet").column("x").to_numpy()
        assert got.tobytes() == v.tobytes(), dictionary
    # strings ending in NUL: refused (numpy's str arrays drop the NULs)
    pq.write_table(pa.table({"s": ["a", "a\x00", "b"]}), data_dir / "nul.parquet")
    with pytest.raises(ak.InvalidDataError, match="ending in a NUL"):
        ak.read_parquet("nul.parquet", conn=io_conn)
    assert io_conn._request("stats")[0]["panics"] == 0


def test_checkpoint_on_demand(make_server: Callable[..., Any], tmp_path: Path) -> None:
    """ak.checkpoint() saves --checkpoint now; unchanged arrays are linked,
    and a restart brings back exactly what it saved."""
    ckpt = tmp_path / "ckpt"
    srv = make_server("--checkpoint", str(ckpt))
    conn = srv.connect()
    a = conn.array(np.arange(10, dtype=np.int64))
    a.register("kept")
    first = ak.checkpoint(conn=conn)
    assert first["skipped"] is False and first["arrays"] == 1 and first["linked"] == 0
    assert ak.checkpoint(conn=conn)["skipped"] is True
    b = conn.array(np.linspace(0, 1, 5))
    b.register("added")
    second = ak.checkpoint(conn=conn)
    assert second["arrays"] == 2 and second["linked"] == 1 and second["written"] == b.nbytes
    conn.close()
    srv.process.kill()  # SIGKILL: no shutdown save; the checkpoint is what there is
    srv.process.wait()
    again = make_server("--checkpoint", str(ckpt))
    conn = again.connect()
    assert sorted(a["name"] for a in conn.list_arrays()) == ["added", "kept"]
    assert np.array_equal(conn.attach("kept").to_ndarray(), np.arange(10))
    assert np.array_equal(conn.attach("added").to_ndarray(), np.linspace(0, 1, 5))
    conn.close()


def test_checkpoint_needs_a_directory(conn: ak.Connection) -> None:
    with pytest.raises(ValueError, match="--checkpoint DIR"):
        ak.checkpoint(conn=conn)


@pytest.mark.parametrize("prefix,file", [("out/r.parquet", "out/r_LOCALE0000.parquet"), ("out/r", "out/r_LOCALE0000")])
def test_pdarray_to_parquet_arkouda_names(io_conn: ak.Connection, data_dir: Path, prefix: str, file: str) -> None:
    """pdarray.to_parquet writes Arkouda's file name, uncompressed by default;
    pyarrow reads it bit for bit and read_parquet's glob finds it."""
    x = np.random.default_rng(5).standard_normal(1000)
    a = io_conn.array(x)
    assert a.to_parquet(prefix) == file
    t = pq.read_table(data_dir / file)
    assert t.column_names == ["array"]
    assert t.column("array").to_numpy().tobytes() == x.tobytes()
    assert pq.ParquetFile(data_dir / file).metadata.row_group(0).column(0).compression == "UNCOMPRESSED"
    back = ak.read_parquet(prefix.removesuffix(".parquet") + "*", conn=io_conn).popitem()[1]
    assert back.to_ndarray().tobytes() == x.tobytes()
    with pytest.raises(ValueError, match="mode='append' is not supported"):
        a.to_parquet(prefix, mode="append")

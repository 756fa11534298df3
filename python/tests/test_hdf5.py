"""HDF5 files on the server in Arkouda's layout (ak.to_hdf / ak.read_hdf /
ak.load / ak.ls) against h5py, on a real server: files Arktos writes
read in h5py as Arkouda lays them out, and files h5py writes (Arkouda's
layout, and h5py's own defaults) read in Arktos, bit for bit."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import arktos as ak

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "bool"]
WORDS = ["", "a", "é日本", "with\x01ctrl", "x" * 300, " spaced ", "\U0001f600"]


def _sample(dtype: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(n) < 0.5
    if dtype.startswith("float"):
        a = rng.standard_normal(n).astype(dtype) * 1e6
        if n >= 4:
            a[:4] = [np.nan, np.inf, -np.inf, -0.0]
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [0, 1, 100_003])
def test_round_trip_every_dtype_h5py_reads_arkouda_layout(io_conn: ak.Connection, data_dir: Path, n: int) -> None:
    want = {d: _sample(d, n, seed=i) for i, d in enumerate(DTYPES)}
    words = [WORDS[i % len(WORDS)] for i in range(n)]
    cols: dict[str, ak.pdarray | ak.Strings] = {d: io_conn.array(a) for d, a in want.items()}
    cols["s"] = io_conn.array(words) if n else ak.Strings._upload(io_conn, np.array([], dtype=object))
    path = ak.to_hdf(cols, f"out/all{n}.h5")
    assert path == f"out/all{n}_LOCALE0000.h5"
    with h5py.File(data_dir / path) as f:
        assert int(f.attrs["File_Format"]) == 1
        for d, a in want.items():
            ds = f[d]
            assert int(ds.attrs["ObjType"]) == 1 and float(ds.attrs["file_version"]) == 2.0
            if d == "bool":
                assert ds.dtype == np.uint8 and int(ds.attrs["isBool"]) == 1
                _same(ds[...].astype(bool), a)
            else:
                assert "isBool" not in ds.attrs
                _same(ds[...], a)
            assert ds.id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
        g = f["s"]
        assert int(g.attrs["ObjType"]) == 2
        values, segs = g["values"][...], g["segments"][...]
        assert values.dtype == np.uint8 and segs.dtype == np.int64
        enc = [w.encode() for w in words]
        assert values.tobytes() == b"".join(e + b"\0" for e in enc)
        assert segs.tolist() == (np.cumsum([len(e) + 1 for e in enc]) - [len(e) + 1 for e in enc]).tolist()
    back = ak.read_hdf("out/" + f"all{n}_LOCALE*", conn=io_conn)
    assert list(back) == sorted(cols)  # Arkouda's order: the file's, by name
    for d, a in want.items():
        _same(back[d].to_ndarray(), a)
    assert back["s"].to_list() == words


def test_reads_h5py_files_arkouda_layout_and_plain(io_conn: ak.Connection, data_dir: Path) -> None:
    """A file set made with h5py exactly as Arkouda's server writes one
    (two locales' parts, segments local to each file), and h5py's own
    defaults (no attributes, chunked and compressed, enum bools)."""
    parts = [(np.arange(5, dtype=np.int64), ["a", "", "é"]), (np.arange(5, 9, dtype=np.int64), ["日本", "z"])]
    for i, (ints, strs) in enumerate(parts):
        with h5py.File(data_dir / f"ak_LOCALE{i:04d}.h5", "w") as f:
            f.attrs.create("File_Format", 1, dtype="<i8")
            d = f.create_dataset("ints", data=ints)
            d.attrs.create("ObjType", 1, dtype="<i8")
            b = f.create_dataset("flags", data=(ints % 2).astype(np.uint8))
            b.attrs.create("ObjType", 1, dtype="<i8")
            b.attrs.create("isBool", 1, dtype="<i8")
            g = f.create_group("strings_array")
            g.attrs.create("ObjType", 2, dtype="<i8")
            g.attrs.create("arkouda_version", np.bytes_("v2026.07.15"))
            enc = [s.encode() + b"\0" for s in strs]
            g.create_dataset("values", data=np.frombuffer(b"".join(enc), np.uint8))
            lens = np.array([len(e) for e in enc], dtype=np.int64)
            g.create_dataset("segments", data=np.cumsum(lens) - lens)
    back = ak.read_hdf("ak_LOCALE*", conn=io_conn)
    assert back["ints"].to_list() == list(range(9))
    assert back["flags"].dtype == np.bool_ and back["flags"].to_list() == [bool(i % 2) for i in range(9)]
    assert back["strings_array"].to_list() == ["a", "", "é", "日本", "z"]
    assert ak.load("ak.h5", dataset="strings_array", conn=io_conn)["strings_array"].to_list() == ["a", "", "é", "日本", "z"]
    assert ak.ls("ak_LOCALE0000.h5", conn=io_conn) == ["flags", "ints", "strings_array"]
    assert ak.get_datasets("ak_LOCALE*", conn=io_conn) == ["flags", "ints", "strings_array"]
    # calc_string_offsets: the strings from the NULs, segments unread
    got = ak.read_hdf("ak_LOCALE*", "strings_array", calc_string_offsets=True, conn=io_conn)
    assert got["strings_array"].to_list() == ["a", "", "é", "日本", "z"]

    rng = np.random.default_rng(5)
    plain = {"i32": rng.integers(-9, 9, 1000, dtype=np.int32), "f32": rng.random(1000, dtype=np.float32),
             "bools": rng.random(1000) < 0.5, "be": np.arange(1000, dtype=">i8")}
    with h5py.File(data_dir / "plain.h5", "w") as f:
        for k, v in plain.items():
            f[k] = v
        f.create_dataset("gz", data=np.arange(300_000), chunks=(4096,), compression="gzip", shuffle=True)
    back = ak.read_hdf("plain.h5", conn=io_conn)
    for k in ["i32", "f32"]:
        _same(back[k].to_ndarray(), plain[k])
    assert back["bools"].to_ndarray().tolist() == plain["bools"].tolist()
    _same(back["be"].to_ndarray(), np.arange(1000, dtype=np.int64))  # big-endian, converted by libhdf5
    _same(back["gz"].to_ndarray(), np.arange(300_000))


def test_fast_paths_taken(io_conn: ak.Connection, data_dir: Path) -> None:
    """Contiguous datasets are read and written by positioned I/O on the
    server's workers; a chunked one goes through libhdf5 (the reply's
    "fast" says which ran)."""
    a = io_conn.array(np.arange(1_000_000))
    s = io_conn.array(["ab", "c"] * 1000)
    path = "out/fast.h5"
    result, _ = io_conn._request("to_hdf", {"path": path, "names": [a.name, s.offsets.name], "columns": ["a", "s"],
                                            "bytes": ["", s.entry.name]})
    assert result["fast"] is True
    result, _ = io_conn._request("read_hdf", {"paths": [path], "datasets": ["a"]})
    assert result["fast"] is True
    with h5py.File(data_dir / "chunked.h5", "w") as f:
        f.create_dataset("c", data=np.arange(10_000), chunks=(1000,))
    result, _ = io_conn._request("read_hdf", {"paths": ["chunked.h5"]})
    assert result["fast"] is False


def test_modes_single_and_append(io_conn: ak.Connection, data_dir: Path) -> None:
    a = io_conn.array(np.arange(4))
    assert a.to_hdf("out/one.h5", file_type="single") == "out/one.h5"
    with h5py.File(data_dir / "out/one.h5") as f:
        assert int(f.attrs["File_Format"]) == 0
    io_conn.array(["x", "y"]).to_hdf("out/one.h5", dataset="s", mode="append", file_type="single")
    assert ak.ls("out/one.h5", conn=io_conn) == ["array", "s"]
    with pytest.raises(ValueError, match="already in .*overwrite=True"):
        a.to_hdf("out/one.h5", mode="append", file_type="single")
    ak.update_hdf({"array": io_conn.array(np.arange(2))}, "out/one.h5", file_type="single")
    back = ak.read_hdf("out/one.h5", conn=io_conn)
    assert back["array"].to_list() == [0, 1] and back["s"].to_list() == ["x", "y"]
    # truncate replaces the file whole
    io_conn.array(np.arange(3)).to_hdf("out/one.h5", dataset="z", file_type="single")
    assert ak.ls("out/one.h5", conn=io_conn) == ["z"]


def test_dataframe_and_categorical(io_conn: ak.Connection) -> None:
    df = ak.DataFrame({"k": io_conn.array(np.arange(5)), "name": io_conn.array(["a", "b", "a", "c", "é"])})
    assert df.to_hdf("out/df.h5") == "out/df_LOCALE0000.h5"
    back = ak.DataFrame(ak.read_hdf("out/df_LOCALE*", conn=io_conn))
    assert back["k"].to_list() == [0, 1, 2, 3, 4] and back["name"].to_list() == ["a", "b", "a", "c", "é"]
    cat = ak.Categorical(["u", "v", "u"], conn=io_conn)
    ak.to_hdf({"c": cat}, "out/cat.h5")
    assert ak.read_hdf("out/cat_LOCALE*", conn=io_conn)["c"].to_list() == ["u", "v", "u"]


def test_bad_files_and_arguments(io_conn: ak.Connection, data_dir: Path) -> None:
    (data_dir / "notes.h5").write_text("not hdf5")
    with pytest.raises(ValueError, match="not an HDF5 file"):
        ak.read_hdf("notes.h5", conn=io_conn)
    a = io_conn.array(np.arange(1000))
    path = a.to_hdf("out/cut.h5")
    full = (data_dir / path).read_bytes()
    (data_dir / "out/cut2.h5").write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError):
        ak.read_hdf("out/cut2.h5", conn=io_conn)
    with pytest.raises(ValueError, match='dataset "nope" is not in'):
        ak.read_hdf(path, "nope", conn=io_conn)
    with pytest.raises(ValueError, match="no file matches"):
        ak.read_hdf("out/none*", conn=io_conn)
    with pytest.raises(ValueError, match="outside the server's data directory"):
        ak.read_hdf("../x.h5", conn=io_conn)
    # disagreeing files, and an object Arktos does not read
    with h5py.File(data_dir / "d1.h5", "w") as f:
        f["x"] = np.arange(3)
        g = f.create_group("gb")
        g.attrs.create("ObjType", 5, dtype="<i8")
        f["m"] = np.zeros((2, 2))
    with h5py.File(data_dir / "d2.h5", "w") as f:
        f["x"] = np.arange(3.0)
    with pytest.raises(ValueError, match="int64 pdarray in d1.h5 but a float64 pdarray in d2.h5"):
        ak.read_hdf("d*.h5", "x", conn=io_conn)
    with pytest.raises(ValueError, match="GroupBy"):
        ak.read_hdf("d1.h5", "gb", conn=io_conn)
    with pytest.raises(ValueError, match="2 dimensions"):
        ak.read_hdf("d1.h5", "m", conn=io_conn)
    # Strings whose values lack their NULs
    with h5py.File(data_dir / "s.h5", "w") as f:
        g = f.create_group("s")
        g["values"] = np.frombuffer(b"abc", np.uint8)
        g["segments"] = np.array([0, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="NUL"):
        ak.read_hdf("s.h5", conn=io_conn)
    with pytest.raises(ValueError, match="mode must be"):
        ak.to_hdf({"a": a}, "out/m.h5", mode="w")
    with pytest.raises(ValueError, match="dataset name"):
        ak.to_hdf({"a/b": a}, "out/m.h5")
    # what was stored before still reads
    assert a.sum() == 499500


def test_reads_arkouda_categorical_file_set(io_conn: ak.Connection, data_dir: Path) -> None:
    """A Categorical as Arkouda's server writes one over two locales: its
    categories one distributed Strings (unsorted, with Arkouda's "N/A"),
    its codes indexing them; NA_Codes on the first part."""
    cats = ["zeta", "alpha", "N/A", "é"]
    codes = [0, 1, 3, 1, 0, 3]
    parts = [(cats[:2], codes[:4], [2]), (cats[2:], codes[4:], [])]
    for i, (c, k, na) in enumerate(parts):
        with h5py.File(data_dir / f"cat_LOCALE{i:04d}.h5", "w") as f:
            f.attrs.create("File_Format", 1, dtype="<i8")
            g = f.create_group("c")
            g.attrs.create("ObjType", 4, dtype="<i8")
            g.create_dataset("codes", data=np.array(k, dtype=np.int64))
            g.create_dataset("NA_Codes", data=np.array(na, dtype=np.int64))
            s = g.create_group("categories")
            s.attrs.create("ObjType", 2, dtype="<i8")
            enc = [x.encode() + b"\0" for x in c]
            s.create_dataset("values", data=np.frombuffer(b"".join(enc), np.uint8))
            lens = np.array([len(e) for e in enc], dtype=np.int64)
            s.create_dataset("segments", data=np.cumsum(lens) - lens)
    got = ak.read_hdf("cat_LOCALE*", conn=io_conn)["c"]
    assert isinstance(got, ak.Categorical)
    assert got.to_list() == [cats[k] for k in codes]
    assert list(got.categories) == ["alpha", "zeta", "é"]  # sorted, the unused N/A dropped
    with h5py.File(data_dir / "badcat.h5", "w") as f:
        g = f.create_group("c")
        g.attrs.create("ObjType", 4, dtype="<i8")
        g.create_dataset("codes", data=np.array([0, 5], dtype=np.int64))
        g.create_dataset("NA_Codes", data=np.array([0], dtype=np.int64))
        s = g.create_group("categories")
        s.create_dataset("values", data=np.frombuffer(b"a\0", np.uint8))
        s.create_dataset("segments", data=np.array([0], dtype=np.int64))
    with pytest.raises(ValueError, match="code 5 .* not one of its 1 categories"):
        ak.read_hdf("badcat.h5", conn=io_conn)

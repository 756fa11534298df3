"""Columnar files and checkpoints on the server (docs/protocol.md, "Files").

Paths name files on the *server*, relative to its ``--data-dir`` (default
``arktos-data`` in the server's working directory); a path that leaves that
folder (``..``, an absolute path elsewhere, a symlink out) is refused with
ValueError. Every function takes the default connection, or ``conn=``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..numpy import _pdarray
from ..numpy._ops import _default_conn
from ..numpy._pdarray import pdarray
from ..numpy._strings import Strings
from ._categorical import Categorical, _decode_strings, _encode_strings, _from_strings

if TYPE_CHECKING:
    from ..numpy._connection import Connection

__all__ = ["checkpoint", "get_datasets", "load", "load_all", "ls", "read_arrow", "read_csv", "read_hdf",
           "read_parquet", "save_all", "to_arrow_file", "to_csv", "to_hdf", "to_parquet", "update_hdf"]

NULL_MODES = ("auto", "fill", "mask", "error")


def _conn(conn: Connection | None) -> Connection:
    return _default_conn(conn)


def _null_string_arg(args: dict[str, Any], null_string: str | None) -> None:
    if null_string is not None:
        if not isinstance(null_string, str):
            raise TypeError(f"null_string must be a str, got {type(null_string).__name__}")
        args["null_string"] = null_string


def _read_args(columns: Sequence[str] | None, nulls: str, fill_value: Any,
               null_string: str | None = None) -> dict[str, Any]:
    if nulls not in NULL_MODES:
        raise ValueError(f"nulls must be one of {', '.join(NULL_MODES)}, got {nulls!r}")
    args: dict[str, Any] = {"nulls": nulls}
    _null_string_arg(args, null_string)
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        args["columns"] = list(columns)
    if fill_value is not None:
        if hasattr(fill_value, "item"):
            fill_value = fill_value.item()  # numpy scalar -> Python scalar
        args["fill_value"] = fill_value
    elif nulls == "fill":
        raise ValueError('nulls="fill" needs a fill_value')
    return args


def _categorical(conn: Connection, entry: dict[str, Any]) -> Categorical:
    """A string column the server read: its codes stay there; its sorted
    distinct strings (UTF-8 bytes and lengths) come here and go there."""
    codes = conn._pdarray(entry["codes"], owned=True)
    data = conn._pdarray(entry["categories"], owned=False)
    lengths = conn._pdarray(entry["category_lengths"], owned=False)
    try:
        raw, lens = data.to_ndarray().tobytes(), lengths.to_ndarray()
    finally:
        conn._pending_deletes.extend([data.name, lengths.name])  # with the next request
    return Categorical._wrap(codes, _decode_strings(raw, lens))


def _hdf_categorical(conn: Connection, entry: dict[str, Any]) -> Categorical:
    """An Arkouda Categorical read_hdf read: its codes stay on the server;
    its categories come here, sorted (a Categorical's are), the codes
    remapped on the server when that moved them, and Arkouda's "N/A"
    category dropped when no row holds it."""
    codes = conn._pdarray(entry["codes"], owned=True)
    cats = Strings(conn._pdarray(entry["categories"]["offsets"], owned=True),
                   conn._pdarray(entry["categories"]["bytes"], owned=True))
    labels = [str(x) for x in cats.to_list()]
    na = int(entry["na_code"])
    unused_na = na >= 0 and labels[na] == "N/A" and not bool((codes == na).any())
    keep = np.array([i for i in range(len(labels)) if not (unused_na and i == na)], dtype=np.int64)
    uniq, inverse = np.unique(np.array([labels[i] for i in keep], dtype=str), return_inverse=True)
    remap = np.full(len(labels), -1, dtype=np.int64)
    remap[keep] = inverse
    if not np.array_equal(remap, np.arange(len(labels))):
        codes = conn.array(remap)[codes]
    return Categorical._wrap(codes, uniq.astype(str))


def _columns(conn: Connection, result: dict[str, Any], nulls: str,
             order: Sequence[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {entry["column"]: conn._pdarray(entry, owned=True) for entry in result["arrays"]}
    for entry in result.get("strings", []):
        if "offsets" in entry:  # read as Strings
            out[entry["column"]] = Strings(conn._pdarray(entry["offsets"], owned=True),
                                           conn._pdarray(entry["bytes"], owned=True))
        else:
            out[entry["column"]] = _categorical(conn, entry)
    for entry in result.get("categoricals", []):
        out[entry["column"]] = _hdf_categorical(conn, entry)
    if order is not None:  # the columns as asked (a mask after its column)
        rank = {name: i for i, name in enumerate(order)}
        out = dict(sorted(out.items(), key=lambda kv: (rank.get(kv[0].removesuffix("_mask"), len(rank)),
                                                       kv[0].endswith("_mask"))))
    if nulls == "auto":
        filled = {col: int(n) for col, n in result.get("nulls", {}).items() if n}
        if filled:
            warnings.warn("nulls filled with NaN (nulls='auto'): "
                          + ", ".join(f"{col}: {n}" for col, n in sorted(filled.items()))
                          + "; pass nulls='mask' to know where", stacklevel=3)
    return out


def read_parquet(paths: str | Sequence[str], columns: Sequence[str] | None = None, *,
                 nulls: str = "auto", fill_value: Any = None, null_string: str | None = None,
                 strings: str = "categorical",
                 conn: Connection | None = None) -> dict[str, pdarray | Categorical | Strings]:
    """Read Parquet files on the server into new arrays, one per column.

    `paths` is a path or glob pattern (``"trips/*.parquet"``) or a list of
    them, relative to the server's data directory; the files are read in
    sorted order, one after another, and must hold the same columns.
    `columns` picks columns (default: all). Numeric and bool columns are
    read as pdarrays, and string columns as Categoricals (their codes on
    the server); a decimal, timestamp or nested column is refused with an
    error naming it and the readable columns. A string column's nulls are
    refused unless `null_string` is given: they are then read as that
    string, one more category (Arkouda's ``NAvalue="N/A"``). With
    ``strings="strings"`` string columns come back as ak.Strings instead
    (Arkouda's type: the text as it is, offsets and bytes, with no
    numbering of distinct values; faster to read where most values
    differ).

    Nulls: ``nulls="auto"`` (default) fills nulls of float columns with NaN
    (with a warning saying how many) and refuses nulls in other columns;
    ``"fill"`` writes `fill_value` into null slots; ``"mask"`` fills (with
    `fill_value`, else NaN for floats and 0 otherwise) and adds a bool array
    ``"<column>_mask"`` per nullable column, true where the value was null;
    ``"error"`` refuses any null.

    >>> cols = ak.read_parquet("trips/*.parquet", columns=["PULocationID", "fare_amount"])
    >>> cols["fare_amount"]
    array([12.5, 7.0, ..., 9.5], shape=(50000000,))
    >>> ak.read_parquet("t.parquet", nulls="mask")["fare_amount_mask"].sum()
    """
    c = _conn(conn)
    args = _read_args(columns, nulls, fill_value, null_string)
    if strings not in ("categorical", "strings"):
        raise ValueError(f'strings must be "categorical" or "strings", got {strings!r}')
    if strings != "categorical":
        args["strings"] = strings
    args["paths"] = [paths] if isinstance(paths, str) else list(paths)
    result, _ = c._request("read_parquet", args)
    return _columns(c, result, nulls, None if columns is None else list(columns))


def read_arrow(path: str, columns: Sequence[str] | None = None, *, nulls: str = "auto",
               fill_value: Any = None, null_string: str | None = None,
               conn: Connection | None = None) -> dict[str, pdarray | Categorical]:
    """Read an Arrow IPC file (Feather v2) on the server into new arrays.

    Columns, nulls and null_string work as in read_parquet; string columns (utf8,
    large_utf8, plain or dictionary-encoded, as pandas' category columns
    are written) come back as Categoricals.

    >>> ak.read_arrow("data.arrow")
    {'x': array([1, 2, 3]), 'y': array([0.5, 1.5, 2.5])}
    """
    c = _conn(conn)
    args = _read_args(columns, nulls, fill_value, null_string)
    args["path"] = path
    result, _ = c._request("read_arrow", args)
    return _columns(c, result, nulls, None if columns is None else list(columns))


def _write(cmd: str, columns: Mapping[str, pdarray | Categorical | Strings], path: str, null_string: str | None,
           **extra: Any) -> dict[str, Any]:
    """Run a write command; a Categorical's categories are uploaded for it
    and deleted after, whatever happens (a Strings is written as the
    Categorical of its distinct strings)."""
    if not isinstance(columns, Mapping) or not columns:
        raise TypeError("give the columns as a non-empty dict {column name: pdarray or Categorical}")
    columns = {k: _from_strings(v) if isinstance(v, Strings) else v for k, v in columns.items()}
    conn: Connection | None = None
    for col, arr in columns.items():
        if isinstance(arr, Categorical):
            arr = arr.codes
        if not isinstance(arr, pdarray):
            raise TypeError(f"column {col!r} must be a pdarray or a Categorical, got {type(arr).__name__}; "
                            "upload it first with ak.array() or ak.Categorical()")
        if conn is not None and arr._conn is not conn:
            raise ValueError(f"column {col!r} lives on another server connection than the others; "
                             "write columns of one connection")
        conn = conn or arr._conn
    assert conn is not None
    names = [arr.codes.name if isinstance(arr, Categorical) else arr.name for arr in columns.values()]
    args: dict[str, Any] = {"path": path, "columns": [str(k) for k in columns], "names": names, **extra}
    _null_string_arg(args, null_string)
    made: list[pdarray] = []
    try:
        if any(isinstance(arr, Categorical) for arr in columns.values()):
            args["categories"], args["category_lengths"] = [], []
            for arr in columns.values():
                if isinstance(arr, Categorical):
                    data, lengths = _encode_strings(arr.categories)
                    made += [conn.array(data), conn.array(lengths)]
                    args["categories"].append(made[-2].name)
                    args["category_lengths"].append(made[-1].name)
                else:
                    args["categories"].append("")
                    args["category_lengths"].append("")
        return conn._request(cmd, args)[0]
    finally:
        for m in made:
            m.delete()


def to_parquet(columns: Mapping[str, pdarray | Categorical | Strings], path: str, compression: str = "zstd", *,
               row_group_size: int = 1 << 20, dictionary: str = "auto",
               compression_level: int | None = None, null_string: str | None = None) -> dict[str, Any]:
    """Write server arrays as one Parquet file on the server, atomically.

    `columns` maps column names to pdarrays or Categoricals of one length; a
    Categorical is written as a string column (its categories are uploaded
    for the write and deleted after), each row group dictionary-encoded
    with only the strings it uses when they fit a dictionary page, as
    pyarrow and pandas read it. `compression` is "zstd" (default),
    "snappy", "gzip", "lz4", "brotli" or "none"; `compression_level` the
    codec's level (None: its default; zstd 1..22, default 3, where
    pyarrow's is 1; gzip 1..9; brotli 1..11). `row_group_size` rows go
    in each row group. With `null_string`, a Categorical's rows of that
    string are written as nulls (the column nullable; read_parquet's
    null_string reads them back). `dictionary` "auto" (default) dictionary-encodes a
    numeric column only when a sample says its dictionary fits one page;
    "on"/"off" force it. The file appears under its name only once
    complete. Returns ``{path, rows, bytes, file_bytes, seconds}``.

    >>> ak.to_parquet({"zone": z, "fare": f}, "out/fares.parquet", compression="zstd")
    >>> ak.to_parquet({"borough": ak.Categorical(names), "fare": f}, "out/boroughs.parquet")
    """
    extra: dict[str, Any] = {"compression": compression, "row_group_size": int(row_group_size),
                             "dictionary": dictionary}
    if compression_level is not None:
        extra["compression_level"] = int(compression_level)
    return _write("to_parquet", columns, path, null_string, **extra)


def to_arrow_file(columns: Mapping[str, pdarray | Categorical | Strings], path: str, compression: str = "none",
                  *, null_string: str | None = None) -> dict[str, Any]:
    """Write server arrays as an Arrow IPC file (Feather v2) on the server, atomically.

    `compression` is "none" (default), "zstd" or "lz4" (buffer compression).
    A Categorical is a dictionary-encoded string column (its categories the
    dictionary, its codes the indices), which pandas reads as a category;
    `null_string` writes that string's rows as nulls, as to_parquet.

    >>> ak.to_arrow_file({"x": x, "y": y}, "data.arrow")
    """
    return _write("to_arrow_file", columns, path, null_string, compression=compression)


def save_all(path: str, *, conn: Connection | None = None) -> dict[str, Any]:
    """Save every array on the server to the checkpoint directory `path`.

    One raw file per array plus ``manifest.json`` (name, dtype, size and an
    xxh3 checksum of each); an existing checkpoint there is replaced only
    once the new one is complete. A path that holds anything else (a file,
    a folder of other files) raises ValueError and is left as it was: the
    checkpoint replaces its directory whole. Returns ``{path, arrays,
    bytes, seconds}``.

    >>> ak.save_all("ckpt/monday")
    {'arrays': 2, 'bytes': 16000000, 'path': 'ckpt/monday', 'seconds': 0.02}
    """
    return _conn(conn)._request("save_all", {"path": path})[0]


def checkpoint(force: bool = False, *, conn: Connection | None = None) -> dict[str, Any]:
    """Save every array to the server's ``--checkpoint`` directory now.

    Arrays unchanged since the last checkpoint keep their files (hard
    links: ``linked`` counts them); with nothing changed nothing is written
    (``skipped``) unless `force`. A server started without ``--checkpoint``
    raises ValueError. What a crash can lose: docs/io.md, "What a crash
    can lose". Returns ``{path, skipped, arrays, bytes, written, linked,
    seconds}``.

    >>> ak.checkpoint()["skipped"]
    False
    """
    return _conn(conn)._request("checkpoint", {"force": True} if force else {})[0]


def load_all(path: str, *, conn: Connection | None = None) -> dict[str, pdarray]:
    """Load a checkpoint saved by save_all: every array under its saved name.

    Every checksum is verified first; a damaged file raises ValueError and
    loads nothing; a name already in use raises NameInUseError. The returned
    pdarrays do not own the arrays (dropping them leaves them on the server).

    >>> arrays = ak.load_all("ckpt/monday")
    >>> sorted(arrays)
    ['fares', 'zones']
    """
    c = _conn(conn)
    result, _ = c._request("load_all", {"path": path})
    return {entry["name"]: c._pdarray(entry, owned=False) for entry in result["arrays"]}


def _pdarray_to_parquet(a: pdarray | Strings, prefix_path: str, *, dataset: str = "array", mode: str = "truncate",
                        compression: str | None = None) -> str:
    """pdarray.to_parquet: Arkouda's file name (prefix_LOCALE0000 + suffix)."""
    if mode != "truncate":
        raise ValueError(f"to_parquet's mode={mode!r} is not supported yet; use mode='truncate' "
                         "(write a new file), or ak.to_parquet with several columns at once")
    stem, ext = os.path.splitext(prefix_path)
    if ext not in (".parquet", ".pq"):
        stem, ext = prefix_path, ""
    path = f"{stem}_LOCALE0000{ext}"
    to_parquet({dataset: a}, path, "none" if compression is None else compression)
    return path


_pdarray.register_conversion("to_parquet", _pdarray_to_parquet)


# -- CSV ---------------------------------------------------------------------

_CSV_DTYPES = {"int64", "uint64", "float64", "bool", "str"}


def read_csv(filenames: str | Sequence[str], datasets: str | Sequence[str] | None = None,
             column_delim: str = ",", allow_errors: bool = False, *, dtypes: Mapping[str, Any] | None = None,
             conn: Connection | None = None) -> dict[str, pdarray | Strings]:
    """Read CSV files on the server into new arrays, one per column
    (Arkouda's read_csv): `filenames` a path or glob (``"out/x*"``), or a
    list, relative to the server's data directory, read in sorted order
    one after another. A file Arkouda (or ak.to_csv) wrote starts with a
    typing header (``**HEADER**`` / ``int64,str`` / ``*/HEADER/*``) and
    its columns come back as those types; a file without one (pandas',
    say) gives every column as ak.Strings, unless `dtypes` names a
    column's type ("int64", "uint64", "float64", "bool", "str"; cast
    later with ak.cast otherwise). `datasets` picks columns. Parsed on
    the server's workers; a bad field is an error naming its file, line
    and column.

    >>> ak.to_csv({"x": ak.arange(3), "s": ak.array(["a", "b", "c"])}, "out/t.csv")
    'out/t_LOCALE0000.csv'
    >>> ak.read_csv("out/t*")["s"].to_list()
    ['a', 'b', 'c']
    """
    if allow_errors:
        raise ValueError("allow_errors=True (skipping files that fail) is not supported; every file must read")
    c = _conn(conn)
    args: dict[str, Any] = {"paths": [filenames] if isinstance(filenames, str) else list(filenames),
                            "delim": column_delim}
    order = None
    if datasets is not None:
        order = [datasets] if isinstance(datasets, str) else list(datasets)
        args["columns"] = order
    if dtypes:
        wire = []
        for col, dt in dtypes.items():
            name = "str" if dt in (str, "str") else str(np.dtype(dt))
            if name not in _CSV_DTYPES:
                raise ValueError(f"dtypes[{col!r}] = {dt!r}: CSV columns are int64, uint64, float64, bool or str")
            wire.append(name)
        args["dtype_columns"], args["dtypes"] = list(dtypes), wire
    result, _ = c._request("read_csv", args)
    return _columns(c, result, "error", order)


def to_csv(columns: Mapping[str, pdarray | Strings] | Sequence[pdarray | Strings], prefix_path: str,
           names: Sequence[str] | None = None, col_delim: str = ",", overwrite: bool = True) -> str:
    """Write columns (a dict, or a list with `names`) as one CSV file on
    the server in Arkouda's format (its typing header, then the column
    names, then a row per element; Arkouda's file name: ``out/x.csv``
    writes ``out/x_LOCALE0000.csv``, one file per locale). A Categorical
    is written as its strings. A file there is replaced (atomically, as
    Arkouda's own benchmarks rewrite theirs), unless `overwrite` is False.
    Returns the file's path.

    >>> ak.to_csv({"x": ak.arange(3)}, "out/t.csv", overwrite=True)
    'out/t_LOCALE0000.csv'
    """
    if not isinstance(columns, Mapping):
        cols = list(columns)
        if names is None or len(names) != len(cols):
            raise ValueError("give a dict of columns, or a list of columns and names= with a name for each")
        columns = dict(zip(names, cols))
    if not columns:
        raise TypeError("give the columns as a non-empty dict {column name: pdarray or Strings}")
    arrays: list[str] = []
    byte_names: list[str] = []
    conn: Connection | None = None
    kept: list[Any] = []  # (a Categorical's strings, made for the write)
    for col, arr in columns.items():
        if isinstance(arr, Categorical):  # its categories up, then gathered by its codes on the server
            arr = Strings._upload(arr.codes._conn, np.asarray(arr.categories, dtype=object))[arr.codes]
            kept.append(arr)
        if isinstance(arr, Strings):
            arrays.append(arr.offsets._live_name())
            byte_names.append(arr.entry._live_name())
            arr_conn = arr._conn
        elif isinstance(arr, pdarray):
            arrays.append(arr._live_name())
            byte_names.append("")
            arr_conn = arr._conn
        else:
            raise TypeError(f"column {col!r} must be a pdarray or Strings, got {type(arr).__name__}")
        if conn is not None and arr_conn is not conn:
            raise ValueError(f"column {col!r} lives on another server connection than the others")
        conn = conn or arr_conn
    assert conn is not None
    stem, ext = os.path.splitext(prefix_path)
    if ext != ".csv":
        stem, ext = prefix_path, ""
    path = f"{stem}_LOCALE0000{ext}"
    conn._request("to_csv", {"path": path, "columns": [str(k) for k in columns], "names": arrays,
                             "bytes": byte_names, "delim": col_delim, "overwrite": bool(overwrite)})
    return path


def _pdarray_to_csv(a: pdarray, prefix_path: str, dataset: str = "array", col_delim: str = ",",
                    overwrite: bool = True) -> str:
    """pdarray.to_csv (Arkouda's): one column, named dataset."""
    return to_csv({dataset: a}, prefix_path, col_delim=col_delim, overwrite=overwrite)


_pdarray.register_conversion("to_csv", _pdarray_to_csv)


# -- HDF5 --------------------------------------------------------------------

_FILE_TYPES = {"single": 0, "distribute": 1}


def _hdf_path(prefix_path: str, file_type: str) -> str:
    """The file Arkouda's server writes for `prefix_path`: the path itself
    (file_type "single"), else this locale's part, ``prefix_LOCALE0000``
    with the extension kept after it (``out/x.h5`` -> ``out/x_LOCALE0000.h5``)."""
    if file_type not in _FILE_TYPES:
        raise ValueError(f"file_type must be 'single' or 'distribute', got {file_type!r}")
    if file_type == "single":
        return prefix_path
    stem, ext = os.path.splitext(prefix_path)
    return f"{stem}_LOCALE0000{ext}"


def _column_names(columns: Mapping[str, Any] | Sequence[Any] | Any, names: Sequence[str] | None,
                  what: str) -> dict[str, Any]:
    if isinstance(columns, (pdarray, Strings, Categorical)):
        columns = [columns]
    if not isinstance(columns, Mapping):
        cols = list(columns)
        if names is None or len(names) != len(cols):
            raise ValueError(f"{what}: give a dict of columns, or a list of columns and names= with a name for each")
        columns = dict(zip(names, cols))
    if not columns:
        raise TypeError(f"{what}: give the columns as a non-empty dict {{dataset name: pdarray or Strings}}")
    return dict(columns)


def to_hdf(columns: Mapping[str, pdarray | Strings | Categorical] | Sequence[pdarray | Strings],
           prefix_path: str, names: Sequence[str] | None = None, mode: str = "truncate",
           file_type: str = "distribute", *, overwrite: bool = False) -> str:
    """Write columns (a dict, or a list with `names`) as datasets of an HDF5
    file on the server in Arkouda's layout, which Arkouda and h5py read:
    a pdarray is a dataset (bools as uint8 with ``isBool``), Strings a
    group of ``values`` (each string's bytes and a NUL) and ``segments``.
    File names are Arkouda's: file_type "distribute" writes this locale's
    part ``prefix_LOCALE0000`` (extension kept: ``out/x.h5`` writes
    ``out/x_LOCALE0000.h5``), "single" writes `prefix_path` itself.
    ``mode="truncate"`` replaces the file; "append" adds datasets to it (a
    dataset already there raises ValueError unless `overwrite`; see
    ak.update_hdf). A Categorical is written as its strings. Written
    atomically: a failed write leaves the file as it was. Returns the
    file's path.

    >>> ak.to_hdf({"x": ak.arange(3), "s": ak.array(["a", "é", ""])}, "out/t.h5")
    'out/t_LOCALE0000.h5'
    >>> ak.read_hdf("out/t_LOCALE*")["s"].to_list()
    ['a', 'é', '']
    """
    if mode not in ("truncate", "append"):
        raise ValueError(f"mode must be 'truncate' or 'append', got {mode!r}")
    cols = _column_names(columns, names, "to_hdf")
    arrays: list[str] = []
    byte_names: list[str] = []
    conn: Connection | None = None
    kept: list[Any] = []  # (a Categorical's strings, made for the write)
    for col, arr in cols.items():
        if isinstance(arr, Categorical):
            arr = Strings._upload(arr.codes._conn, np.asarray(arr.categories, dtype=object))[arr.codes]
            kept.append(arr)
        if isinstance(arr, Strings):
            arrays.append(arr.offsets._live_name())
            byte_names.append(arr.entry._live_name())
        elif isinstance(arr, pdarray):
            arrays.append(arr._live_name())
            byte_names.append("")
        else:
            raise TypeError(f"column {col!r} must be a pdarray, Strings or Categorical, got {type(arr).__name__}")
        arr_conn = arr._conn
        if conn is not None and arr_conn is not conn:
            raise ValueError(f"column {col!r} lives on another server connection than the others")
        conn = conn or arr_conn
    assert conn is not None
    path = _hdf_path(prefix_path, file_type)
    conn._request("to_hdf", {"path": path, "columns": [str(k) for k in cols], "names": arrays,
                             "bytes": byte_names, "mode": mode, "file_format": _FILE_TYPES[file_type],
                             "overwrite": bool(overwrite)})
    return path


def update_hdf(columns: Mapping[str, pdarray | Strings | Categorical] | Sequence[pdarray | Strings],
               prefix_path: str, names: Sequence[str] | None = None, repack: bool = True,
               file_type: str = "distribute") -> str:
    """Replace (or add) datasets of an HDF5 file on the server: to_hdf with
    ``mode="append", overwrite=True``. (HDF5 does not give back a replaced
    dataset's space; `repack` is accepted for Arkouda's signature, and the
    file is not repacked.)

    >>> ak.update_hdf({"x": ak.arange(4)}, "out/t.h5")
    'out/t_LOCALE0000.h5'
    """
    return to_hdf(columns, prefix_path, names, mode="append", file_type=file_type, overwrite=True)


def read_hdf(filenames: str | Sequence[str], datasets: str | Sequence[str] | None = None,
             iterative: bool = False, strict_types: bool = True, allow_errors: bool = False,
             calc_string_offsets: bool = False, tag_data: bool = False, *,
             conn: Connection | None = None) -> dict[str, pdarray | Strings | Categorical]:
    """Read datasets of HDF5 files on the server into new arrays
    (Arkouda's read_hdf): `filenames` a path or glob, or a list (sorted,
    then read one after another, a file set's parts concatenated in
    order, as Arkouda's server does), `datasets` the datasets to read
    (default: every pdarray and Strings of the first file). Every file
    must hold every dataset, with one type. Returns a dict {dataset:
    pdarray, Strings or Categorical}, even for one dataset (as Arkouda
    does); an Arkouda Categorical's categories come back sorted.
    Files written by Arkouda, by ak.to_hdf and by h5py read alike: a
    one-dimensional dataset is a pdarray (its own dtype; ``isBool`` and
    h5py's bools read as bool), a group with ``values`` Strings. Contiguous
    datasets are read straight into the array's memory by the server's
    workers. `calc_string_offsets` finds strings from the NULs of their
    values instead of reading ``segments``.

    >>> ak.arange(5).to_hdf("out/r.h5")
    'out/r_LOCALE0000.h5'
    >>> ak.read_hdf("out/r_LOCALE*")["array"].to_list()
    [0, 1, 2, 3, 4]
    """
    del iterative, strict_types  # (one request reads them all; types are always checked)
    if allow_errors:
        raise ValueError("allow_errors=True (skipping files that fail) is not supported; every file must read")
    if tag_data:
        raise ValueError("tag_data=True (a column of file codes) is not supported yet")
    c = _conn(conn)
    args: dict[str, Any] = {"paths": [filenames] if isinstance(filenames, str) else list(filenames)}
    if datasets is not None:
        args["datasets"] = [datasets] if isinstance(datasets, str) else list(datasets)
    if calc_string_offsets:
        args["calc_string_offsets"] = True
    result, _ = c._request("read_hdf", args)
    return _columns(c, result, "error", result["columns"])


def load(path_prefix: str, file_format: str = "INFER", dataset: str = "array",
         calc_string_offsets: bool = False, column_delim: str = ",", *,
         conn: Connection | None = None) -> dict[str, pdarray | Strings | Categorical]:
    """Load dataset `dataset` of a file set an Arkouda (or ak.to_hdf)
    distributed write made: every ``prefix_LOCALE*`` part (extension
    kept after it), as Arkouda's load. Returns ``{dataset: array}``.

    >>> ak.arange(3).to_hdf("out/l.h5")
    'out/l_LOCALE0000.h5'
    >>> ak.load("out/l.h5")["array"].to_list()
    [0, 1, 2]
    """
    del column_delim
    if "*" in path_prefix:
        raise ValueError("load takes the prefix a write was given, without '*'; for a glob use ak.read_hdf")
    if file_format.upper() not in ("INFER", "HDF5"):
        raise ValueError(f"load reads HDF5 file sets (file_format 'INFER' or 'HDF5'), got {file_format!r}; "
                         "for Parquet use ak.read_parquet")
    stem, ext = os.path.splitext(path_prefix)
    return read_hdf(f"{stem}_LOCALE*{ext}", dataset, calc_string_offsets=calc_string_offsets, conn=conn)


def ls(filename: str, col_delim: str = ",", read_nested: bool = True, *,
       conn: Connection | None = None) -> list[str]:
    """The top-level datasets of an HDF5 file on the server (the first
    file a glob matches), in name order, as Arkouda's ls.

    >>> ak.ls("out/t_LOCALE0000.h5")
    ['s', 'x']
    """
    del col_delim, read_nested
    result, _ = _conn(conn)._request("ls_hdf", {"path": filename})
    return [d["name"] for d in result["datasets"]]


def get_datasets(filenames: str | Sequence[str], allow_errors: bool = False, column_delim: str = ",",
                 read_nested: bool = True, *, conn: Connection | None = None) -> list[str]:
    """The datasets of the first of `filenames` that holds any (Arkouda's
    get_datasets); RuntimeError when none does.

    >>> ak.get_datasets("out/t_LOCALE*")
    ['s', 'x']
    """
    for name in [filenames] if isinstance(filenames, str) else list(filenames):
        try:
            found = ls(name, conn=conn)
        except ValueError:
            if not allow_errors:
                raise
            continue
        if found:
            return found
    raise RuntimeError("Unable to identify datasets.")


def _pdarray_to_hdf(a: pdarray | Strings, prefix_path: str, dataset: str = "array", mode: str = "truncate",
                    file_type: str = "distribute") -> str:
    """pdarray.to_hdf / Strings.to_hdf (Arkouda's): one dataset."""
    return to_hdf({dataset: a}, prefix_path, mode=mode, file_type=file_type)


_pdarray.register_conversion("to_hdf", _pdarray_to_hdf)

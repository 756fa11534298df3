"""Generate the tiny Parquet fixtures of arrowio's tests (run from anywhere):

    .venv/bin/python testdata/parquet/gen.py

Column values are functions of the row index i (see values() and the Go
test's want()), so the Go test recomputes them instead of storing them.
Nulls, where a file has them, are the rows with i % 10 == 3.
"""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
N = 200


def values(n: int = N) -> dict[str, pa.Array]:
    i = np.arange(n, dtype=np.int64)
    return {
        "i64": pa.array(i * 7919 - 500_000),
        "f64": pa.array(i * 0.25 - 3.0),
        "i32": pa.array((i * 31 - 7000).astype(np.int32)),
        "f32": pa.array((i * 0.5).astype(np.float32)),
        "b": pa.array(i % 3 == 0),
        "i8": pa.array((i % 200 - 100).astype(np.int8)),
        "i16": pa.array((i * 13 % 60000 - 30000).astype(np.int16)),
        "u8": pa.array((i % 250).astype(np.uint8)),
        "u16": pa.array((i * 61 % 65000).astype(np.uint16)),
        "u32": pa.array((i * 4_000_000 % 4_000_000_000).astype(np.uint32)),
        "u64": pa.array(i.astype(np.uint64) * np.uint64(90_000_000_000_000_000)),
        "key": pa.array(i % 7),  # few distinct values: dictionary-encoded
    }


def main() -> None:
    table = pa.table(values())
    for codec in ("none", "snappy", "gzip", "zstd", "brotli", "lz4"):
        pq.write_table(table, HERE / f"codec_{codec}.parquet", compression=codec, row_group_size=64, store_schema=False)
    pq.write_table(table, HERE / "plain.parquet", use_dictionary=False, compression="none", row_group_size=80, store_schema=False)
    pq.write_table(table, HERE / "dict_v2.parquet", use_dictionary=True, data_page_version="2.0",
                   compression="zstd", row_group_size=200, data_page_size=256)
    pq.write_table(table.select(["i64", "i32", "b", "f64", "f32"]), HERE / "delta_rle_bss.parquet", use_dictionary=False,
                   column_encoding={"i64": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED", "b": "RLE",
                                    "f64": "BYTE_STREAM_SPLIT", "f32": "BYTE_STREAM_SPLIT"},
                   compression="snappy", row_group_size=50)
    nulls = np.arange(N) % 10 == 3
    nt = pa.table({name: pa.array(col.to_numpy(zero_copy_only=False), mask=nulls)
                   for name, col in values().items() if name in ("i64", "f64", "b", "i8")})
    pq.write_table(nt, HERE / "nulls.parquet", compression="zstd", row_group_size=64, store_schema=False)
    pq.write_table(nt, HERE / "nulls_nostats.parquet", compression="zstd", row_group_size=64, write_statistics=False, store_schema=False)
    other = pa.table({
        "i64": values()["i64"],
        "s": pa.array([f"s{k}" for k in range(N)]),
        "ts": pa.array(np.arange(N).astype("datetime64[us]")),
        "lst": pa.array([[k] for k in range(N)]),
    })
    pq.write_table(other, HERE / "unsupported.parquet", compression="none", store_schema=False)


if __name__ == "__main__":
    main()

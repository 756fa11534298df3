"""Server-side ak.Strings against pyarrow, pandas, polars and duckdb, side by side.

    .venv/bin/python bench/strings/run.py [--rows 1e6] [--trials 7] [--workers N] [--json PATH]
        [--peers pyarrow,pandas_obj,pandas_pa,polars,duckdb] [--server bin/arktos-server]

Data (seed 0, built once with pyarrow.compute in this process): a ``url``
column of N mostly distinct URL-like ids
``host-<0..1e8>.example.<tld>/<section>/<0..1e5>`` (about 24-43 bytes,
a tenth of the rows repeating another's: about 90% distinct; a few
sections upper case or non-ASCII: ``Static/IMG``, ``café/menü``,
``docs/日本``), and a ``host`` column ``host-<h>.example.<tld>`` with
about 10^4 distinct values (skewed: h = floor(10^4 u^2)). Times, p50 and
p90 over --trials calls after one warm-up call (a call whose warm-up took
over 1 s gets 3 trials; over 5 s, the warm-up alone is reported, marked †):

- moving: ak.array(pyarrow large_string array), ak.array(numpy object
  array) (pyarrow's conversion in the client, then the same upload) and
  s.to_arrow(); their ceiling is the same number of bytes (offsets + text)
  as one plain uint8 pdarray up (ak.array) and down (.to_ndarray()), in the
  same run. GB/s counts offsets + text.
- on the server (data already there, results left there): ==, contains
  (literal and RE2 regex), startswith, lower, get_lengths (bytes),
  str_len (code points), value_counts (sorted unique + counts), argsort
  (stable), in1d against 1000 probes (half present, uploaded once), a
  gather by N random int64 indices (uploaded once) and hash. Their
  ceiling is a scan of the column's text bytes on the server, the faster
  of ``s.entry == 47`` (reads each byte, writes a one-byte mask per byte)
  and ``s.entry.sum()``: each op's "ratio to ceiling" is its time over
  that scan's (numpy's time for both in this process is printed beside).
- peers in this process on the same data: pyarrow.compute, pandas
  (object dtype and "string[pyarrow]" .str methods), polars and duckdb
  where installed (results fetched as Arrow), with their thread counts set
  to --workers where the library has one (pyarrow.set_cpu_count,
  POLARS_MAX_THREADS before the import, duckdb SET threads); pandas' string
  methods run on one thread.

Every answer is checked before any time counts: Arktos' exactly against
pyarrow's (masks, lengths, sorted unique values and counts, the stable
argsort permutation, in1d, gathered and lower-cased strings; hash: one
distinct hi word per distinct string, and a gather's hashes are the
hashes gathered); a mismatch aborts. A peer whose answer differs from
pyarrow's is timed anyway and marked ≠ (explained below the table).
Prints a markdown table; --json PATH writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))

SECTIONS = ["path", "api/v2/items", "users", "Static/IMG", "search", "café/menü", "docs/日本"]
SECTION_P = [0.30, 0.25, 0.15, 0.12, 0.10, 0.05, 0.03]
TLDS = ["com", "org", "net", "io", "de"]
CONTAINS = "/api/v2/"
REGEX = r"\.(?:org|net)/api/v\d/items/\d*7$"
STARTS = "host-12"
PEERS = ["pyarrow", "pandas_obj", "pandas_pa", "polars", "duckdb"]
SLOW, VERY_SLOW = 1.0, 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def timed(f: Callable[[], Any], trials: int) -> dict[str, float]:
    """p50 and p90 seconds of f after one warm-up call (fewer trials for a
    slow f: see the module docstring)."""
    t0 = time.perf_counter()
    f()
    warm = time.perf_counter() - t0
    if warm > VERY_SLOW:
        return {"p50": warm, "p90": warm, "trials": 0}
    k = trials if warm < SLOW else min(trials, 3)
    ts = []
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return {"p50": float(np.percentile(ts, 50)), "p90": float(np.percentile(ts, 90)), "trials": k}


def make_data(n: int) -> dict[str, Any]:
    """The url and host columns (pyarrow large_string), probes and a gather index."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(0)
    tlds = pa.array(TLDS)
    h, k = rng.integers(0, 10**8, n), rng.integers(0, 10**5, n)
    sec = rng.choice(len(SECTIONS), n, p=SECTION_P)
    dup = np.flatnonzero(rng.random(n) < 0.1)  # a tenth repeat another row's url
    src = rng.integers(0, n, dup.size)
    h[dup], k[dup], sec[dup] = h[src], k[src], sec[src]
    url = pc.binary_join_element_wise(
        "host-", pc.cast(pa.array(h), pa.string()), ".example.", tlds.take(pa.array(h % len(TLDS))), "/",
        pa.array(SECTIONS).take(pa.array(sec)), "/", pc.cast(pa.array(k), pa.string()), "")
    hid = np.floor(10**4 * rng.random(n) ** 2).astype(np.int64)
    host = pc.binary_join_element_wise("host-", pc.cast(pa.array(hid), pa.string()), ".example.",
                                       tlds.take(pa.array(hid % len(TLDS))), "")
    url, host = url.cast(pa.large_string()), host.cast(pa.large_string())
    present = url.take(pa.array(rng.choice(n, 500, replace=False)))
    absent = pa.array([f"nohost-{i}.example.com/path/{i}" for i in range(500)], type=pa.large_string())
    return {"url": url, "host": host, "probes": pa.concat_arrays([present, absent]),
            "idx": rng.integers(0, n, n).astype(np.int64)}


# -- answers in one form, to compare ------------------------------------------

def canon(kind: str, lib: str, r: Any) -> Any:
    """r (a library's result for an op of this kind) as a numpy array, a
    pyarrow large_string array, or (values, counts)."""
    import pyarrow as pa

    if kind == "none":
        return None
    if lib == "duckdb":
        if kind == "vc":
            return (r.column(0).combine_chunks().cast(pa.large_string()), r.column(1).to_numpy().astype(np.int64))
        if r.num_columns == 2:  # (row id, answer): rows in the join's order
            out = np.zeros(r.num_rows, dtype=bool if kind == "mask" else np.int64)
            out[r.column(0).to_numpy()] = r.column(1).to_numpy()
            return out
        r = r.column(0).combine_chunks()
        lib = "pyarrow"
    if lib == "polars":
        if kind == "vc":
            return (r[:, 0].to_arrow().cast(pa.large_string()), r[:, 1].to_numpy().astype(np.int64))
        r = r.to_arrow()
        lib = "pyarrow"
    if lib in ("pandas_obj", "pandas_pa"):
        if kind == "vc":
            return (pa.array(r.index.to_numpy(dtype=object), type=pa.large_string()), r.to_numpy().astype(np.int64))
        if kind == "str":
            return pa.array(r.to_numpy(dtype=object), type=pa.large_string())
        return r.to_numpy(dtype=bool if kind == "mask" else np.int64)
    if lib == "pyarrow":
        if kind == "vc":
            return (r[0].cast(pa.large_string()), r[1].to_numpy().astype(np.int64))
        if kind == "str":
            return r.cast(pa.large_string())
        return r.to_numpy(zero_copy_only=False).astype(bool if kind == "mask" else np.int64)
    # arktos
    if kind == "vc":
        return (r[0].to_arrow(), r[1].to_ndarray().astype(np.int64))
    if kind == "str":
        return r.to_arrow()
    return r.to_ndarray().astype(bool if kind == "mask" else np.int64)


def same(kind: str, a: Any, b: Any) -> bool:
    if kind == "vc":
        return bool(a[0].equals(b[0]) and np.array_equal(a[1], b[1]))
    if kind == "str":
        return bool(a.equals(b))
    return bool(np.array_equal(a, b))


def first_difference(kind: str, a: Any, b: Any) -> str:
    if kind == "vc":
        return f"values {len(a[0])} vs {len(b[0])}, counts equal: {np.array_equal(a[1], b[1])}"
    x = a.to_pylist() if kind == "str" else a.tolist()
    y = b.to_pylist() if kind == "str" else b.tolist()
    if len(x) != len(y):
        return f"lengths {len(x)} vs {len(y)}"
    i = next(i for i in range(len(x)) if x[i] != y[i])
    return f"first at {i}: {x[i]!r} vs {y[i]!r}"


# -- the run ----------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--json", help="write the raw numbers here")
    ap.add_argument("--server", default=str(REPO / "bin" / "arktos-server"),
                    help="the arktos-server binary (a copy keeps a rebuild during the run out of it)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help=f"which peers to time, of {','.join(PEERS)} (the checks use pyarrow always)")
    args = ap.parse_args()
    n, w = int(args.rows), args.workers
    chosen = set(args.peers.split(","))
    if chosen - set(PEERS):
        raise SystemExit(f"unknown peers {sorted(chosen - set(PEERS))}; choose from {PEERS}")

    os.environ["POLARS_MAX_THREADS"] = str(w)  # read at polars' import
    import arktos as ak
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    pa.set_cpu_count(w)
    pa.set_io_thread_count(w)
    missing: dict[str, str] = {}
    try:
        import polars as pl
    except ImportError as e:
        pl = None
        missing["polars"] = str(e)
    try:
        import duckdb
    except ImportError as e:
        duckdb = None
        missing["duckdb"] = str(e)

    load0 = os.getloadavg()
    t_setup = time.perf_counter()
    d = make_data(n)
    url, host, probes, idx = d["url"], d["host"], d["probes"], d["idx"]
    eq_url, eq_host = url[n // 3].as_py(), host[n // 2].as_py()
    url_obj = url.to_numpy(zero_copy_only=False)
    frames = {"url": url, "host": host}
    po: dict[str, Any] = {}
    pp: dict[str, Any] = {}
    if chosen & {"pandas_obj", "pandas_pa"}:
        po = {"url": pd.Series(url_obj, dtype=object), "host": pd.Series(host.to_numpy(zero_copy_only=False), dtype=object)}
        if "pandas_pa" in chosen:
            pp = {c: pd.Series(po[c], dtype="string[pyarrow]") for c in frames}
        if "pandas_obj" not in chosen:
            po = {}
    probes_list = probes.to_pylist()
    idx_pa = pa.array(idx)
    if pl is not None and "polars" not in chosen:
        pl = None
        missing["polars"] = "not chosen (--peers)"
    if duckdb is not None and "duckdb" not in chosen:
        duckdb = None
        missing["duckdb"] = "not chosen (--peers)"
    if pl is not None:
        pls = {c: pl.from_arrow(a).alias(c) for c, a in frames.items()}
        pl_probes = pl.from_arrow(probes)
    if duckdb is not None:
        con = duckdb.connect()
        con.execute(f"SET threads = {w}")
        tbl = pa.table({"i": pa.array(np.arange(n, dtype=np.int64)), "url": url, "host": host})
        ptbl = pa.table({"p": probes})
        con.execute("CREATE TABLE t AS SELECT * FROM tbl")
        con.execute("CREATE TABLE probes AS SELECT * FROM ptbl")
        del tbl, ptbl

        def q(sql: str) -> Callable[[], Any]:
            return lambda: con.sql(sql).to_arrow_table()

    def lit(s: str) -> str:
        return "'" + s.replace("'", "''") + "'"

    nbytes = {c: int(pc.sum(pc.binary_length(a)).as_py()) for c, a in frames.items()}
    wire = nbytes["url"] + 8 * (n + 1)  # offsets + text
    off_np = np.frombuffer(url.buffers()[1], dtype=np.int64, count=n + 1, offset=url.offset * 8)
    plain = np.concatenate([off_np.view(np.uint8), np.frombuffer(url.buffers()[2], dtype=np.uint8,
                                                                  count=nbytes["url"])])
    setup_s = time.perf_counter() - t_setup

    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    data_dir = tempfile.mkdtemp(prefix="arktos-bench-strings-")
    server_info = f"{args.server} (modified {time.strftime('%Y-%m-%d %H:%M', time.localtime(os.path.getmtime(args.server)))})"
    proc = subprocess.Popen([args.server, "--addr", addr, "--data-dir", data_dir,
                             "--workers", str(w), "--log-level", "warn"])
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                ak.connect(addr)
                break
            except Exception:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        s = {c: ak.array(a) for c, a in frames.items()}
        plain_ak = ak.array(plain)
        probes_ak = ak.array(probes)
        idx_ak = ak.array(idx)
        if not (s["url"].to_arrow().equals(url) and s["host"].to_arrow().equals(host)
                and ak.array(url_obj).to_arrow().equals(url)):
            raise SystemExit("MISMATCH: the strings downloaded differ from those uploaded")
        if not np.array_equal(plain_ak.to_ndarray(), plain):
            raise SystemExit("MISMATCH: the uint8 ceiling array came back different")

        # (name, column, kind, arktos, {peer: fn}); kind says how to compare answers
        def peers_of(col: str, pyarrow: Any = None, pandas_obj: Any = None, pandas_pa: Any = None,
                     polars: Any = None, duckdb_sql: str | None = None) -> dict[str, Any]:
            out = {"pyarrow": pyarrow, "pandas_obj": pandas_obj, "pandas_pa": pandas_pa,
                   "polars": polars if pl is not None else None,
                   "duckdb": q(duckdb_sql) if duckdb is not None and duckdb_sql else None}
            return {k: v for k, v in out.items() if v is not None and (k in chosen or k == "pyarrow")}

        def vc_pa(a: Any) -> Callable[[], Any]:
            def f() -> Any:
                vc = pc.value_counts(a)
                o = pc.sort_indices(vc.field("values"))
                return vc.field("values").take(o), vc.field("counts").take(o)
            return f

        ops: list[tuple[str, str, str, Callable[[], Any], dict[str, Any]]] = []
        for col, x in (("url", eq_url), ("host", eq_host)):
            a, o, p_ = frames[col], po.get(col), pp.get(col)
            ops.append((f"{col} == one value ({len(x.encode())} bytes)", col, "mask", lambda c=col, x=x: s[c] == x, peers_of(
                col, pyarrow=lambda a=a, x=x: pc.equal(a, x), pandas_obj=lambda o=o, x=x: o == x,
                pandas_pa=lambda p_=p_, x=x: p_ == x,
                polars=(lambda c=col, x=x: pls[c] == x) if pl is not None else None,
                duckdb_sql=f"SELECT {col} = {lit(x)} FROM t")))
        a, o, p_ = url, po.get("url"), pp.get("url")
        P = pls["url"] if pl is not None else None
        ops += [
            (f"contains({CONTAINS!r})", "url", "mask", lambda: s["url"].contains(CONTAINS), peers_of(
                "url", pyarrow=lambda: pc.match_substring(a, CONTAINS),
                pandas_obj=lambda: o.str.contains(CONTAINS, regex=False),
                pandas_pa=lambda: p_.str.contains(CONTAINS, regex=False),
                polars=lambda: P.str.contains(CONTAINS, literal=True),
                duckdb_sql=f"SELECT contains(url, {lit(CONTAINS)}) FROM t")),
            ("contains(regex)", "url", "mask", lambda: s["url"].contains(REGEX, regex=True), peers_of(
                "url", pyarrow=lambda: pc.match_substring_regex(a, REGEX),
                pandas_obj=lambda: o.str.contains(REGEX, regex=True),
                pandas_pa=lambda: p_.str.contains(REGEX, regex=True),
                polars=lambda: P.str.contains(REGEX),
                duckdb_sql=f"SELECT regexp_matches(url, {lit(REGEX)}) FROM t")),
            (f"startswith({STARTS!r})", "url", "mask", lambda: s["url"].startswith(STARTS), peers_of(
                "url", pyarrow=lambda: pc.starts_with(a, STARTS),
                pandas_obj=lambda: o.str.startswith(STARTS), pandas_pa=lambda: p_.str.startswith(STARTS),
                polars=lambda: P.str.starts_with(STARTS),
                duckdb_sql=f"SELECT starts_with(url, {lit(STARTS)}) FROM t")),
            ("lower()", "url", "str", lambda: s["url"].lower(), peers_of(
                "url", pyarrow=lambda: pc.utf8_lower(a), pandas_obj=lambda: o.str.lower(),
                pandas_pa=lambda: p_.str.lower(), polars=lambda: P.str.to_lowercase(),
                duckdb_sql="SELECT lower(url) FROM t")),
            ("get_lengths() (bytes)", "url", "int", lambda: s["url"].get_lengths(), peers_of(
                "url", pyarrow=lambda: pc.binary_length(a), polars=lambda: P.str.len_bytes(),
                duckdb_sql="SELECT strlen(url) FROM t")),
            ("str_len() (code points)", "url", "int", lambda: s["url"].str_len(), peers_of(
                "url", pyarrow=lambda: pc.utf8_length(a), pandas_obj=lambda: o.str.len(),
                pandas_pa=lambda: p_.str.len(), polars=lambda: P.str.len_chars(),
                duckdb_sql="SELECT length(url) FROM t")),
        ]
        for col in ("url", "host"):
            a, o, p_ = frames[col], po.get(col), pp.get(col)
            P = pls[col] if pl is not None else None
            ops += [
                (f"{col} value_counts (sorted)", col, "vc", lambda c=col: s[c].value_counts(), peers_of(
                    col, pyarrow=vc_pa(a),
                    pandas_obj=lambda o=o: o.value_counts(sort=False).sort_index(),
                    pandas_pa=lambda p_=p_: p_.value_counts(sort=False).sort_index(),
                    polars=(lambda P=P, c=col: P.value_counts().sort(c)) if pl is not None else None,
                    duckdb_sql=f"SELECT {col}, count(*) FROM t GROUP BY {col} ORDER BY {col}")),
                (f"{col} argsort (stable)", col, "int", lambda c=col: s[c].argsort(), peers_of(
                    col, pyarrow=lambda a=a: pc.sort_indices(a),
                    pandas_obj=lambda o=o: o.argsort(kind="stable"),
                    pandas_pa=lambda p_=p_: p_.argsort(kind="stable"),
                    polars=(lambda P=P: P.arg_sort()) if pl is not None else None,
                    duckdb_sql=f"SELECT i FROM t ORDER BY {col}, i")),
            ]
        a, o, p_ = url, po.get("url"), pp.get("url")
        P = pls["url"] if pl is not None else None
        ops += [
            ("in1d(1000 probes)", "url", "mask", lambda: ak.in1d(s["url"], probes_ak), peers_of(
                "url", pyarrow=lambda: pc.is_in(a, value_set=probes),
                pandas_obj=lambda: o.isin(probes_list), pandas_pa=lambda: p_.isin(probes_list),
                polars=lambda: P.is_in(pl_probes.implode()),
                duckdb_sql="SELECT i, url IN (SELECT p FROM probes) FROM t")),
            ("gather s[random int64 idx]", "url", "str", lambda: s["url"][idx_ak], peers_of(
                "url", pyarrow=lambda: a.take(idx_pa), pandas_obj=lambda: o.take(idx),
                pandas_pa=lambda: p_.take(idx), polars=lambda: P.gather(idx))),
            ("hash() (128-bit)", "url", "none", lambda: s["url"].hash(), peers_of(
                "url", pandas_obj=lambda: pd.util.hash_pandas_object(o, index=False),
                pandas_pa=lambda: pd.util.hash_pandas_object(p_, index=False),
                polars=lambda: P.hash(), duckdb_sql="SELECT hash(url) FROM t")),
        ]

        # -- check every answer before timing anything
        mismatch: dict[tuple[str, str], str] = {}
        for name, col, kind, fa, peers in ops:
            if kind == "none":
                continue
            ref = canon(kind, "pyarrow", peers["pyarrow"]())
            got = canon(kind, "arktos", fa())
            if not same(kind, got, ref):
                raise SystemExit(f"MISMATCH in {name}: Arktos differs from pyarrow ({first_difference(kind, got, ref)})")
            for lib, fp in peers.items():
                if lib == "pyarrow":
                    continue
                r = canon(kind, lib, fp())
                if not same(kind, r, ref):
                    mismatch[(name, lib)] = first_difference(kind, r, ref)
        hi, lo = s["url"].hash()
        hi_np, lo_np = hi.to_ndarray(), lo.to_ndarray()
        n_distinct = len(pc.unique(url))
        if np.unique(hi_np).size != n_distinct:
            raise SystemExit(f"MISMATCH in hash: {np.unique(hi_np).size} distinct hi words, {n_distinct} distinct strings")
        ghi, glo = s["url"][idx_ak].hash()
        if not (np.array_equal(ghi.to_ndarray(), hi_np[idx]) and np.array_equal(glo.to_ndarray(), lo_np[idx])):
            raise SystemExit("MISMATCH in hash: the hashes of s[idx] are not hash(s)[idx]")
        del hi, lo, ghi, glo

        # -- moving
        rt = timed(ak.get_config, 50)
        up_ceil = timed(lambda: ak.array(plain), args.trials)
        down_ceil = timed(plain_ak.to_ndarray, args.trials)
        rows.append({"op": "upload ak.array(pyarrow large_string)", "bytes": wire, "arktos": timed(
            lambda: ak.array(url), args.trials), "ceiling": up_ceil, "peers": {}})
        rows.append({"op": "upload ak.array(numpy object array)", "bytes": wire, "arktos": timed(
            lambda: ak.array(url_obj), args.trials), "ceiling": up_ceil, "peers": {
            "pyarrow": timed(lambda: pa.array(url_obj, type=pa.large_string()), args.trials)}})
        rows.append({"op": "download s.to_arrow()", "bytes": wire, "arktos": timed(
            s["url"].to_arrow, args.trials), "ceiling": down_ceil, "peers": {}})
        notes.append("Moving rows: ceiling = the same bytes (offsets + text) as one uint8 pdarray (ak.array / "
                     ".to_ndarray()); GB/s counts offsets + text. The numpy-object row's pyarrow cell is "
                     "pa.array(object array, large_string) alone: the client-side conversion inside that upload.")

        # -- on the server, and the peers
        scans, scan_notes = {}, []
        for c in frames:
            eq = timed(lambda c=c: s[c].entry == 47, args.trials)
            sm = timed(lambda c=c: s[c].entry.sum(), args.trials)
            scans[c] = min(eq, sm, key=lambda t: t["p50"])
            text = np.frombuffer(frames[c].buffers()[2], dtype=np.uint8, count=nbytes[c])
            np_eq, np_sum = timed(lambda text=text: text == 47, args.trials), timed(text.sum, args.trials)
            scan_notes.append(f"{c} ({nbytes[c] / 1e6:.1f} MB): server entry == 47 {ms(eq['p50'])} ms, "
                              f"entry.sum() {ms(sm['p50'])} ms; numpy in this process (one thread) "
                              f"== 47 {ms(np_eq['p50'])} ms, sum {ms(np_sum['p50'])} ms")
        notes.append("Server rows' ceiling, the faster of two scans of the column's text bytes on the server: "
                     + "; ".join(scan_notes) + ".")
        for name, col, kind, fa, peers in ops:
            row = {"op": name, "bytes": nbytes[col], "arktos": timed(fa, args.trials), "ceiling": scans[col],
                   "peers": {lib: timed(fp, args.trials) for lib, fp in peers.items() if lib in chosen}}
            row["mismatch"] = {lib: why for (nm, lib), why in mismatch.items() if nm == name}
            rows.append(row)
    finally:
        ak.disconnect()
        proc.terminate()
        proc.wait(timeout=10)
    load1 = os.getloadavg()

    threads = {"arktos (server --workers)": w, "pyarrow (cpu_count)": pa.cpu_count(), "pandas": 1}
    if pl is not None:
        threads["polars (thread_pool_size)"] = pl.thread_pool_size()
    if duckdb is not None:
        threads["duckdb (threads)"] = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    versions = {"pyarrow": pa.__version__, "pandas": pd.__version__, "numpy": np.__version__}
    if pl is not None:
        versions["polars"] = pl.__version__
    if duckdb is not None:
        versions["duckdb"] = duckdb.__version__
    meta = {"rows": n, "url_text_bytes": nbytes["url"], "host_text_bytes": nbytes["host"],
            "url_wire_bytes": wire, "url_distinct": n_distinct, "workers": w, "trials": args.trials,
            "threads": threads, "versions": versions, "missing": missing, "cpus": os.cpu_count(),
            "server": server_info, "loadavg_start": load0, "loadavg_end": load1, "round_trip_get_config": rt, "setup_s": setup_s,
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    report(meta, rows, notes)
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str) + "\n")


# -- printing -----------------------------------------------------------------

def ms(t: float) -> str:
    v = t * 1e3
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def cell(t: dict[str, float] | None, bytes_: int | None = None) -> str:
    if t is None:
        return "—"
    txt = f"{ms(t['p50'])} ({ms(t['p90'])})" + ("†" if t["trials"] == 0 else "")
    if bytes_:
        txt += f", {bytes_ / t['p50'] / 1e9:.2f} GB/s"
    return txt


def report(meta: dict[str, Any], rows: list[dict[str, Any]], notes: list[str]) -> None:
    n = meta["rows"]
    print(f"\n## ak.Strings, {n:,} rows ({meta['date']})\n")
    print(f"- url: {meta['url_text_bytes']:,} text bytes ({meta['url_text_bytes'] / n:.1f} per string), "
          f"{meta['url_distinct']:,} distinct; offsets + text = {meta['url_wire_bytes']:,} bytes; "
          f"host: {meta['host_text_bytes']:,} text bytes, about 10^4 distinct")
    print(f"- threads: {', '.join(f'{k} {v}' for k, v in meta['threads'].items())}; {meta['cpus']} CPUs")
    print(f"- transport: loopback TCP, warm; {meta['trials']} trials after a warm-up (3 for calls over "
          f"{SLOW:.0f} s, † = the warm-up alone, over {VERY_SLOW:.0f} s)")
    print(f"- load average (1, 5, 15 min) before the run {tuple(round(x, 2) for x in meta['loadavg_start'])}, "
          f"at its end {tuple(round(x, 2) for x in meta['loadavg_end'])} (this run's own threads included)")
    print(f"- server: {meta['server']}")
    print(f"- versions: {', '.join(f'{k} {v}' for k, v in meta['versions'].items())}")
    for lib, why in meta["missing"].items():
        print(f"- {lib}: {why if why.startswith('not chosen') else f'not installed ({why})'}; its column is empty")
    rt = meta["round_trip_get_config"]
    print(f"- one request's round trip (get_config): p50 {rt['p50'] * 1e6:.0f} µs, p90 {rt['p90'] * 1e6:.0f} µs")
    print("\nTimes in ms, p50 (p90). Ratio to ceiling = Arktos p50 / ceiling p50; "
          "arktos/best-peer = Arktos p50 / the fastest peer's p50 (above 1: Arktos slower).\n")
    heads = ["operation", "arktos p50 (p90)", "ceiling p50", "ratio to ceiling", "pyarrow p50 (p90)",
             "pandas object", "pandas string[pyarrow]", "polars", "duckdb", "arktos/best-peer"]
    print("| " + " | ".join(heads) + " |\n|" + "---|" + "---:|" * (len(heads) - 1))
    marks: list[str] = []
    for r in rows:
        moving = r["op"].startswith(("upload", "download"))
        a, c = r["arktos"], r["ceiling"]
        peers = r["peers"]
        cells = [r["op"], cell(a, r["bytes"] if moving else None),
                 ms(c["p50"]) + (f", {r['bytes'] / c['p50'] / 1e9:.2f} GB/s" if moving else ""),
                 f"{a['p50'] / c['p50']:.2f}"]
        for lib in PEERS:
            t = cell(peers.get(lib))
            if lib in r.get("mismatch", {}):
                t += " ≠"
                marks.append(f"{r['op']}, {lib}: {r['mismatch'][lib]}")
            cells.append(t)
        fair = {k: v for k, v in peers.items() if k not in r.get("mismatch", {})}
        best = min(fair.values(), key=lambda t: t["p50"])["p50"] if fair and not moving else None
        cells.append(f"{a['p50'] / best:.2f}" if best else "—")
        print("| " + " | ".join(cells) + " |")
    print()
    for note in notes:
        print(f"- {note}")
    print("- Server rows: Arktos' results stay on the server; the peers' are in this process (duckdb's fetched "
          "as an Arrow table). value_counts is sorted by value everywhere (pyarrow: value_counts, then "
          "sort_indices on the values). pandas' take carries its index; hash algorithms differ by library "
          "(Arktos XXH3-128, pandas SipHash-based, polars and duckdb 64-bit). duckdb's in1d returns "
          "(row id, answer) pairs: its join gives rows in another order.")
    for m in marks:
        print(f"- ≠ {m} (the peer's answer differs from pyarrow's; not counted in best-peer)")


if __name__ == "__main__":
    main()

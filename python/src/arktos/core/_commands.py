"""Command properties the client keeps by hand: which commands create arrays, keep them, or stay off the lane.

All four together here, so that reading them from the server's get_config
instead is a change to this module alone.
"""

from __future__ import annotations

# Commands that stay on the ZeroMQ socket (bulk bytes, descriptors, streams).
_NOT_ON_LANE = frozenset({"open_stream", "close_stream", "shm_lease", "shm_release", "shutdown"})

# Requests a lane carries with payload frames (or that get them in the
# reply) when the caller says so (_roundtrip's lane_ok): arrays of less than
# LANE_PAYLOAD_MAX bytes, to a server whose get_config says "lane_payload".
_LANE_PAYLOAD = frozenset({"upload", "download"})

#: Commands whose result names arrays they newly created (unless given an
#: "out" array to write in place); a late reply to one of these, abandoned by
#: Ctrl-C, is freed. A server that lists them (get_config "creating") is
#: believed instead.
_CREATING = frozenset({
    "upload", "full", "arange", "linspace", "random", "concatenate", "binop", "unop", "astype",
    "where", "scan", "slice", "take", "compress", "repeat", "getitem", "sort", "argsort", "coargsort",
    "unique", "in1d", "setop", "histogram", "reduce", "groupby", "groupby_agg",
    "groupby_segments", "groupby_broadcast", "groupby_topk", "groupby_corr", "groupby_head",
    "groupby_sample", "groupby_unique", "read_parquet", "read_arrow", "load_all",
    "clip", "compress_many", "take_many", "lookup", "searchsorted", "groupby_scan",
})

#: Commands that never change what a stored array's name holds, unless given
#: "out" (a write in place): a GroupBy not grouped yet need not be grouped
#: before them (_request). Any other command (setitem, load_all, read_parquet,
#: delete, ...) groups them first.
_KEEPS_ARRAYS = frozenset({
    "get_config", "info", "list", "mem_used", "stats", "download", "shm_release", "shm_lease",
    "open_stream", "close_stream", "reduce", "binop", "unop", "astype", "where", "scan", "full",
    "arange", "linspace", "random", "concatenate", "getitem", "slice", "take", "compress", "repeat", "sort",
    "argsort", "coargsort", "unique", "in1d", "setop", "histogram", "order_stats", "groupby",
    "groupby_agg", "groupby_segments", "groupby_broadcast", "groupby_topk", "groupby_corr",
    "groupby_head", "groupby_sample", "groupby_unique", "to_parquet", "to_arrow_file", "save_all", "shutdown",
})

"""The client follows the server's command table (the commands command, read at connect), not a list of its own."""

from __future__ import annotations

import arktos as ak
from arktos.core._commands import CommandTable


def test_table_comes_from_the_server(conn: ak.Connection) -> None:
    table = conn._commands
    assert conn.config["command_table"] is True and "commands" not in conn.config  # get_config stays small
    rows = conn._request("commands")[0]["commands"]
    assert len(rows) >= 50 and all(cmd in table for cmd in rows)
    # The commands once missing from the client's hand-kept lists.
    for cmd in ("clip", "compress_many", "take_many", "lookup", "searchsorted", "groupby_scan"):
        assert table.creates(cmd), cmd
        assert table.writes(cmd, {"a": "x"}) == set(), cmd
    assert sorted(c for c in rows if table.creates(c)) == conn.config["creating"]
    assert not table.on_lane("shutdown") and not table.on_lane("open_stream") and table.on_lane("binop")
    assert table.lane_payload("upload") and not table.lane_payload("binop")
    assert table.writes("binop", {"a": "x", "b": "y"}) == set()
    assert table.writes("binop", {"a": "x", "b": "y", "out": "x"}) == {"x"}
    assert table.writes("setitem", {"a": "x", "index": 0}) == {"x"}
    assert table.writes("delete", {"names": ["p", "q"]}) == {"p", "q"}
    assert table.writes("load_all", {"path": "ck"}) is None


def test_an_older_server_is_treated_cautiously() -> None:
    table = CommandTable({"creating": ["upload"]})
    assert table.creates("upload") and not table.creates("binop")
    assert not table.on_lane("info") and not table.lane_payload("upload")
    assert table.writes("binop", {}) is None  # may change anything
    empty = CommandTable()
    assert not empty.creates("upload") and not empty.on_lane("get_config")


def test_lazy_groupby_stays_lazy_across_reads(conn: ak.Connection) -> None:
    keys = conn.array([3, 1, 3, 2])
    g = ak.GroupBy(keys)
    other = conn.array([1.0, 2.0, 3.0, 4.0])
    _ = (other + 1).to_ndarray()  # changes no stored array: the grouping may wait
    _, counts = g.size()
    assert counts.to_ndarray().tolist() == [1, 1, 2]

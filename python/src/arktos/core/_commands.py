"""The server's command table as the client reads it from get_config: which commands create arrays, change them, or take the lane.

The server declares every command once (server/commands.go) and sends the
table in answer to the commands command (get_config says "command_table"),
which a connection asks once; the client keeps no list of its own. A
server older than the table is treated cautiously: nothing on the lane,
its "creating" list for what creates arrays, and any command may change
any array.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class CommandTable:
    """The commands command's table (docs/protocol.md, "The command table"),
    with get_config's "creating" for a server older than it."""

    def __init__(self, config: Mapping[str, Any] | None = None, rows: Any = None) -> None:
        self._rows: dict[str, Mapping[str, Any]] = dict(rows) if isinstance(rows, Mapping) else {}
        creating = config.get("creating") if config else None
        self._creating = frozenset(creating or ())

    @property
    def rows(self) -> dict[str, Mapping[str, Any]]:
        """The table, by command name (empty from a server without one)."""
        return self._rows

    def __contains__(self, cmd: object) -> bool:
        return cmd in self._rows

    def on_lane(self, cmd: str) -> bool:
        """May `cmd` go over a request lane (without payload frames)?"""
        return bool(self._rows.get(cmd, {}).get("lane"))

    def lane_payload(self, cmd: str) -> bool:
        """May `cmd` go over a lane with payload frames, or get them back?"""
        return bool(self._rows.get(cmd, {}).get("lane_payload"))

    def creates(self, cmd: str) -> bool:
        """Does `cmd` store new arrays, named in its result?"""
        row = self._rows.get(cmd)
        return bool(row.get("creates")) if row is not None else cmd in self._creating

    def writes(self, cmd: str, args: Mapping[str, Any]) -> set[str] | None:
        """The stored arrays a request may change or remove (an empty set:
        none; None: it may change any)."""
        row = self._rows.get(cmd)
        if row is None:
            return None
        keys = row.get("writes") or ()
        if "*" in keys:
            return None
        names: set[str] = set()
        for key in keys:
            v = args.get(key)
            if isinstance(v, str):
                names.add(v)
            elif isinstance(v, (list, tuple)):
                names.update(str(n) for n in v)
        return names

"""Arkouda's ``arkouda.core.client`` over Arktos: connect, disconnect, shutdown, get_config, memory and the no-op round trip."""

from __future__ import annotations

from typing import Any

from arktos import connect, disconnect, get_config, shutdown
from arktos.core._default import default_connection

__all__ = ["connect", "disconnect", "get_config", "get_max_array_rank", "get_mem_avail",
           "get_mem_status", "get_mem_used", "ruok", "shutdown"]

#: Arkouda's cap on one download's bytes. Arktos streams an array of any
#: size (within the server's --max-memory), so the cap is kept for code that
#: sets or reads it and is not enforced.
maxTransferBytes: int = 1 << 30  # noqa: N816 -- Arkouda's name

_UNITS = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}


def _scaled(n: int, unit: str, as_percent: bool, limit: int) -> int | float:
    if as_percent:
        return 100.0 * n / limit if limit else 0.0
    try:
        return n // _UNITS[unit.lower()]
    except KeyError:
        raise ValueError(f"unit must be one of {', '.join(_UNITS)}, got {unit!r}") from None


def get_mem_used(unit: str = "b", as_percent: bool = False) -> int | float:
    """Bytes the server's arrays use (Arkouda's units: b, kb, mb, gb, tb, pb)."""
    m = default_connection().mem_info()
    return _scaled(m["used"], unit, as_percent, m["limit"])


def get_mem_avail(unit: str = "b", as_percent: bool = False) -> int | float:
    """Bytes the server may still store (its --max-memory less what is used)."""
    m = default_connection().mem_info()
    return _scaled(m["free"], unit, as_percent, m["limit"])


def get_mem_status() -> list[dict[str, Any]]:
    """Per locale (one server process is one): memory in Arkouda's keys."""
    m = default_connection().mem_info()
    cfg = default_connection().config
    return [{"locale_id": 0, "locale_hostname": cfg.get("serverHostname", ""),
             "total_mem": cfg.get("physicalMemory", m["limit"]), "avail_mem": m["free"],
             "arkouda_mem_alloc": m["used"], "mem_used": m["used"],
             "mem_avail": m["free"], "pct_avail_mem": 100.0 * m["free"] / m["limit"] if m["limit"] else 0.0}]


def get_max_array_rank() -> int:
    """The most dimensions an array may have: 1 (Arktos' arrays are 1-D)."""
    return int(default_connection().config.get("maxArrayDims", 1))


def ruok() -> str:
    """"imok" when the server answers."""
    _no_op()
    return "imok"


def _no_op() -> str:
    """One round trip that does nothing on the server (its noop command)."""
    default_connection()._request("noop")
    return "noop"

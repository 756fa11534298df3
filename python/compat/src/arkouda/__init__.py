"""Arkouda's module layout over Arktos, so that code written for Arkouda (``import arkouda as ak``) runs on an arktos-server.

Opt in with ``pip install ./python/compat`` (README, "Arkouda users"). A real
Arkouda found elsewhere on ``sys.path`` wins: this module then loads it in
its own place, says so once (a warning), and steps aside.
"""

from __future__ import annotations

import importlib.util as _util
import os as _os
import sys as _sys
import warnings as _warnings

#: Marks this package as Arktos' stand-in (a real Arkouda has no such name).
ARKTOS_COMPAT = True


def _real_arkouda() -> str | None:
    """The __init__.py of another arkouda package on sys.path, if any."""
    here = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    for entry in _sys.path:
        root = _os.path.abspath(entry or _os.getcwd())
        init = _os.path.join(root, "arkouda", "__init__.py")
        if root == here or not _os.path.isfile(init):
            continue
        with open(init, encoding="utf-8", errors="replace") as f:
            if "ARKTOS_COMPAT = True" not in f.read():
                return init
    return None


_real = None if _os.environ.get("ARKTOS_ARKOUDA_FORCE") else _real_arkouda()
if _real is not None:
    _warnings.warn(f"a real Arkouda is installed ({_os.path.dirname(_real)}): arktos' arkouda "
                   "compatibility module steps aside and imports it (set ARKTOS_ARKOUDA_FORCE=1 for Arktos)",
                   stacklevel=2)
    _spec = _util.spec_from_file_location("arkouda", _real, submodule_search_locations=[_os.path.dirname(_real)])
    assert _spec is not None and _spec.loader is not None
    _module = _util.module_from_spec(_spec)
    _sys.modules["arkouda"] = _module
    _spec.loader.exec_module(_module)
else:
    from arktos import *  # noqa: F403 -- the whole top-level API, as Arkouda's ak.* has it
    from arktos import __version__ as __version__  # noqa: F401

    from . import client, core, numpy, pandas, testing  # noqa: F401 -- Arkouda's subpackages
    from .core.client import get_max_array_rank, get_mem_status  # noqa: F401
    from .core.client import get_mem_used as get_mem_used  # type: ignore[assignment]  # Arkouda's units
    from .numpy.dtypes import bigint, bigint_from_uint_arrays  # noqa: F401
    from .numpy.pdarraycreation import array  # type: ignore[assignment]  # noqa: F401 -- Arkouda's signature
    from .numpy.sorting import SortingAlgorithm, argsort, coargsort, sort  # noqa: F401 -- Arkouda's signatures

    #: Arkouda prints what it does unless told not to; Arktos is quiet either way.
    verbose = False

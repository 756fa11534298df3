"""Arkouda's older ``arkouda.client`` path: the same functions as ``arkouda.core.client``."""

from .core.client import *  # noqa: F403
from .core.client import __all__ as __all__  # noqa: F401
from .core.client import _no_op as _no_op  # noqa: F401

"""Client settings: ``ak.config``."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

__all__ = ["config"]


@dataclass
class Config:
    """Settings of the Python client, changed by assignment: ``ak.config.progress = False``.

    - ``progress``: show progress bars (tqdm) for transfers and server
      operations that take longer than ``progress_delay`` seconds. ``None``
      (the default) decides from $ARKTOS_PROGRESS (``0`` off, ``1`` on) and
      else shows them only when interactive: in Jupyter or with stderr on a
      terminal.
    - ``progress_delay``: seconds a transfer or operation runs before its bar appears.

    >>> ak.config.progress = False      # no bars, e.g. in scripts that log
    >>> ak.config.progress_delay = 2.0
    """

    progress: bool | None = None
    progress_delay: float = 1.0

    def progress_enabled(self) -> bool:
        """Whether progress bars are shown now (see ``progress``).

        >>> ak.config.progress_enabled()
        True
        """
        if self.progress is not None:
            return bool(self.progress)
        env = os.environ.get("ARKTOS_PROGRESS", "").strip().lower()
        if env in ("0", "false", "no", "off"):
            return False
        if env in ("1", "true", "yes", "on"):
            return True
        return _in_jupyter() or _stderr_is_tty()


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _in_jupyter() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


config = Config()

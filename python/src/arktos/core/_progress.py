"""Progress bars for long transfers and long server operations (tqdm).

Bars appear only after ``ak.config.progress_delay`` seconds and only when
``ak.config.progress_enabled()``; tqdm is imported on first use, so short,
non-interactive work never pays for it.
"""

from __future__ import annotations

import time
from typing import Any

from ._config import config

#: Transfers smaller than this never get a bar (they finish in well under a second).
MIN_TRANSFER_BYTES = 32 << 20
#: Bytes sent per sendall() while a bar is shown.
SEND_CHUNK = 16 << 20
#: How often (seconds) a waiting request wakes up to refresh its bar.
POLL_INTERVAL = 0.2
#: The longest wait for a reply without a deadline and without a bar (ms).
SIGNAL_SLICE_MS = 1000


def _tqdm() -> Any:
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tqdm.auto warns when ipywidgets is missing
            from tqdm.auto import tqdm  # type: ignore[import-untyped,unused-ignore]
        return tqdm
    except ImportError:
        return None


def transfer_bar(nbytes: int, desc: str) -> Any:
    """A tqdm bar over `nbytes` bytes that shows after the configured delay,
    or None when bars are off or the transfer is small."""
    if nbytes < MIN_TRANSFER_BYTES or not config.progress_enabled():
        return None
    tqdm = _tqdm()
    if tqdm is None:
        return None
    return tqdm(total=nbytes, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                delay=config.progress_delay, leave=False, dynamic_ncols=True)


class Waiting:
    """Shows an elapsed-time bar while a request waits for its reply longer
    than the configured delay (counted from ``start``, a time.monotonic(),
    default now). ``poll_ms`` caps each wait so it can refresh."""

    def __init__(self, cmd: str, start: float | None = None) -> None:
        self.cmd = cmd
        self.enabled = config.progress_enabled()
        self.start = time.monotonic() if start is None else start
        self.bar: Any = None

    def poll_ms(self, wait_ms: int | None) -> int:
        """The next wait (ms), at most wait_ms (None: no deadline). Never
        endless: a Ctrl-C that lands after Python's last look at its signals
        and before the blocking poll starts is only seen when the poll
        returns."""
        if not self.enabled:
            return SIGNAL_SLICE_MS if wait_ms is None else wait_ms
        step = int(POLL_INTERVAL * 1000)
        return step if wait_ms is None else min(wait_ms, step)

    def tick(self) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < config.progress_delay:
                return
            tqdm = _tqdm()
            if tqdm is None:
                self.enabled = False
                return
            self.bar = tqdm(total=None, desc=f"arktos {self.cmd}", leave=False,
                            bar_format="{desc}: running on the server {elapsed}")
            self.bar.start_t -= time.monotonic() - self.start  # count from the request
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

"""pandas and pyarrow, imported on first use: arktos needs neither until a conversion runs."""

from __future__ import annotations

from typing import Any


def _import(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise ImportError(f"this needs {module}: pip install {module}") from None

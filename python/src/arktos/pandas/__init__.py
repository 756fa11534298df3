"""The pandas-like layer: Categorical, GroupBy, SegArray, DataFrame, pandas/Arrow interop and file I/O on the server; the top layer, which nothing in arktos.core or arktos.numpy imports."""

from . import _interop, _io
from ._categorical import Categorical
from ._dataframe import DataFrame, DataFrameGroupBy, merge
from ._groupby import GroupBy
from ._interop import *  # noqa: F403 -- pandas and Arrow interop
from ._io import *  # noqa: F403 -- Parquet, Arrow IPC and checkpoints on the server
from ._segarray import SegArray

__all__ = ["Categorical", "DataFrame", "DataFrameGroupBy", "GroupBy", "SegArray", "merge"]
__all__ += _interop.__all__
__all__ += _io.__all__

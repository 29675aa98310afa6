"""Chunked statistics from files larger than memory (CSV or Parquet via pyarrow)."""

from __future__ import annotations

from typing import Callable, Iterable

import pandas as pd

from .record_map import RecordMap
from .stats import SufficientStats


def stream_stats(
    chunks: Iterable[pd.DataFrame],
    record_map: RecordMap,
    progress: Callable[[int], None] | None = None,
) -> SufficientStats:
    """Accumulate :class:`SufficientStats` of ``record_map.stats(chunk)`` over ``chunks``.

    Peak memory is that of one chunk plus ``O(p^2)`` per class.
    """
    st = record_map.empty()
    offset = 0
    for df in chunks:
        st = st.merge(record_map.stats(df, offset))
        offset += len(df)
        del df  # hold one chunk at a time, not two, while the next one is read
        if progress is not None:
            progress(offset)
    return st

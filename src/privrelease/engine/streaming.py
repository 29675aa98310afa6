"""Chunked statistics from files larger than memory (CSV or Parquet via pyarrow)."""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import pandas as pd

from .stats import SufficientStats


def stream_stats(
    chunks: Iterable[pd.DataFrame],
    encode: Callable[[pd.DataFrame, int], np.ndarray],
    p: int,
    labels: Callable[[pd.DataFrame], np.ndarray] | None = None,
    n_classes: int | None = None,
    progress: Callable[[int], None] | None = None,
    second_moment: bool = True,
) -> SufficientStats:
    """Accumulate :class:`SufficientStats` over ``chunks``.

    ``encode(df, row_offset)`` maps a chunk to its encoded matrix; ``labels(df)`` to
    integer class codes. Peak memory is that of one chunk plus ``O(p^2)`` per class.
    """
    st = SufficientStats(p=p, second_moment=second_moment)
    offset = 0
    for df in chunks:
        X = encode(df, offset)
        y = labels(df) if labels is not None else None
        st.update(X, y, n_classes)
        offset += len(df)
        del X, y, df  # hold one chunk at a time, not two, while the next one is read
        if progress is not None:
            progress(offset)
    return st

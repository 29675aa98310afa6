"""Sufficient statistics over a Dask collection (when one machine is not enough).

Each partition is encoded and reduced to :class:`SufficientStats` where it lives;
only the ``O(p^2)`` statistics travel, and they are merged by exact addition in a
tree reduction. The result equals the in-memory and streamed statistics up to
floating-point summation order, so every moment-based mechanism runs unchanged on
top of it (``mechanism.fit_stats(stats)``).
"""

from __future__ import annotations

from typing import Callable

from .stats import SufficientStats


def dask_stats(
    ddf,
    encode: Callable,
    p: int,
    labels: Callable | None = None,
    n_classes: int | None = None,
    second_moment: bool = True,
    scheduler: str | None = None,
) -> SufficientStats:
    """Statistics of a ``dask.dataframe.DataFrame`` (or anything with ``to_delayed()``).

    ``encode(df, row_offset)`` and ``labels(df)`` are as in :func:`stream_stats`;
    row offsets are not known per partition, so error messages report rows within
    the partition.
    """
    import dask

    def part(df):
        X = encode(df, 0)
        y = labels(df) if labels is not None else None
        return SufficientStats.from_matrix(X, y, n_classes, second_moment=second_moment) if len(df) else \
            SufficientStats(p=p, second_moment=second_moment)

    parts = [dask.delayed(part)(d) for d in ddf.to_delayed()]
    while len(parts) > 1:  # pairwise tree reduction
        parts = [dask.delayed(SufficientStats.merge)(a, b) if b is not None else a
                 for a, b in zip(parts[::2], parts[1::2] + [None] * (len(parts) % 2))]
    if not parts:
        return SufficientStats(p=p, second_moment=second_moment)
    (result,) = dask.compute(parts[0], scheduler=scheduler)
    return result

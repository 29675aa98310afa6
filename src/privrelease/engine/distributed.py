"""Sufficient statistics over a Dask collection (when one machine is not enough).

Each partition runs the same per-record map as the local engine
(:meth:`~privrelease.engine.RecordMap.stats`: encode, label codes, per-record
preprocessing, sums) where it lives; only the ``O(p^2)`` statistics travel, and they
are merged by exact addition in a tree reduction. The result equals the in-memory and
streamed statistics up to floating-point summation order, so every moment-based
mechanism runs unchanged on top of it (``mechanism.fit_stats(stats)``).
"""

from __future__ import annotations

from .record_map import RecordMap
from .stats import SufficientStats


def dask_stats(ddf, record_map: RecordMap, scheduler: str | None = None) -> SufficientStats:
    """Statistics of a ``dask.dataframe.DataFrame`` (or anything with ``to_delayed()``).

    Row offsets are not known per partition, so error messages report rows within the
    partition.
    """
    import dask

    parts = [dask.delayed(record_map.stats)(d) for d in ddf.to_delayed()]
    while len(parts) > 1:  # pairwise tree reduction
        parts = [dask.delayed(SufficientStats.merge)(a, b) if b is not None else a
                 for a, b in zip(parts[::2], parts[1::2] + [None] * (len(parts) % 2))]
    if not parts:
        return record_map.empty()
    (result,) = dask.compute(parts[0], scheduler=scheduler)
    return result

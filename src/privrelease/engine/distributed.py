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


def dask_stats(ddf, record_map: RecordMap, scheduler: str | None = None, client=None) -> SufficientStats:
    """Statistics of a ``dask.dataframe.DataFrame`` (or anything with ``to_delayed()``), computed
    on ``client`` (a ``distributed.Client``) or the local ``scheduler``.

    Row offsets are not known per partition, so error messages report rows within the
    partition.
    """
    from .passes import DaskPasses

    ex = DaskPasses(ddf.to_delayed(), record_map, client=client, scheduler=scheduler)
    st = ex.map_frames(record_map.stats, SufficientStats.merge)
    return st if st is not None else record_map.empty()

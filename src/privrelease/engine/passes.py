"""Passes as data: one executor runs a mechanism's passes locally or on a Dask cluster.

A *pass* is a pure map from one encoded chunk ``(X, y)`` (features after the schema's
encoding, label codes or None) to a mergeable value, plus the merge (default
:func:`add`: ``+``, element-wise for tuples; ``None`` is the empty value). The mechanism
then takes a noisy step on the merged value, on the client. An *indexed* pass's map also
receives the global index of the chunk's first record (``fn(X, y, row_offset)``), the same
on every engine however the input is cut into chunks or partitions, so that per-record
randomness keyed by the record's position (e.g. a copula's jitter inside an atom) is the same
everywhere. An executor runs a pass over the whole input:

- :class:`ChunkPasses` over a callable giving fresh ``(X, y)`` chunk iterators (the local
  streamed engine, and in-memory fits with one chunk);
- :class:`DaskPasses` over the partitions of a Dask collection: every partition is encoded
  and mapped where it lives, and only the merged values (``O(p^2)`` for moments) travel,
  summed in a pairwise tree.

Because the map is the same function on every engine, clipping and every other per-record
step happen identically everywhere; the results agree up to floating-point summation
order. Each executor records ``(records, clip counts)`` of every pass it ran in ``passes``.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..errors import InputDataError
from .record_map import RecordMap


def add(a, b):
    """The default merge: ``a + b`` (element-wise for tuples); ``None`` is the empty value."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(add(u, v) for u, v in zip(a, b))
    return a + b


def _add_counts(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


class ChunkPasses:
    """Run passes over ``make_chunks()``, a callable giving a fresh iterator of ``(X, y)`` each time."""

    def __init__(self, make_chunks: Callable[[], Iterable]):
        self.make_chunks = make_chunks
        self.passes: list[tuple[int, dict]] = []

    def run(self, fn: Callable, merge: Callable = add, indexed: bool = False):
        """``merge`` of ``fn(X, y)`` (``fn(X, y, row_offset)`` when ``indexed``) over every chunk."""
        total, n = None, 0
        for X, y in self.make_chunks():
            v = fn(X, y, n) if indexed else fn(X, y)
            n += len(X)
            total = v if total is None else merge(total, v)
        self.passes.append((n, {}))
        return total


def _map_partition(df, record_map: RecordMap, fn, merge, offset: int | None = None):
    """On a worker: encode one partition, map it; returns (value, records, clip counts, [records]).

    ``offset``: the global index of the partition's first record (an indexed pass), or None."""
    if not len(df):
        return None, 0, {}, [0]
    ch = record_map.encode(df, 0 if offset is None else offset)
    value = fn(ch.X, ch.y) if offset is None else fn(ch.X, ch.y, offset)
    return value, len(df), dict(ch.clip_counts), [len(df)]


def _merge_mapped(a, b, merge):
    value = b[0] if a[0] is None else (a[0] if b[0] is None else merge(a[0], b[0]))
    return value, a[1] + b[1], _add_counts(a[2], b[2]), a[3] + b[3]  # lengths stay in partition order


def _no_value(X, y):
    return None


def tree_reduce(parts: list, merge2):
    """Pairwise tree of delayed ``merge2`` calls over delayed ``parts`` (depth log2 of the count)."""
    import dask

    while len(parts) > 1:
        nxt = [dask.delayed(merge2)(a, b) for a, b in zip(parts[::2], parts[1::2])]
        parts = nxt + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0] if parts else None


class DaskPasses:
    """Run passes over the partitions of a Dask collection (``to_delayed()``).

    Parameters
    ----------
    frames : the partitions (delayed pandas DataFrames)
    record_map : the per-record map (encoding, clip counting) run on the workers
    client : a ``dask.distributed.Client`` to compute on, or None for ``scheduler``
    scheduler : a local Dask scheduler name (e.g. ``"synchronous"``) when there is no client
    """

    def __init__(self, frames: list, record_map: RecordMap, client=None, scheduler: str | None = None):
        self.frames, self.record_map = list(frames), record_map
        self.client, self.scheduler = client, scheduler
        self.passes: list[tuple[int, dict]] = []
        self.lengths: list[int] | None = None  # records per partition, known after the first pass

    def compute(self, obj):
        if self.client is not None:
            return self.client.compute(obj, sync=True)
        import dask

        return dask.compute(obj, scheduler=self.scheduler)[0]

    def map_frames(self, fn_df: Callable, merge2: Callable):
        """``fn_df(partition)`` on every partition, merged by ``merge2`` in a tree (None without partitions)."""
        import dask

        root = tree_reduce([dask.delayed(fn_df)(d) for d in self.frames], merge2)
        return None if root is None else self.compute(root)

    def run(self, fn: Callable, merge: Callable = add, indexed: bool = False):
        """``merge`` of ``fn(X, y)`` (``fn(X, y, row_offset)`` when ``indexed``) over every partition,
        mapped where the partition lives and merged in a tree."""
        import dask
        from functools import partial

        if indexed and self.lengths is None:
            self.run(_no_value)  # the partitions' lengths (one pass without a value)
        offsets = [None] * len(self.frames)
        if indexed:
            offsets = [int(o) for o in np.concatenate([[0], np.cumsum(self.lengths)[:-1]])]
        # the map and the record map are graph nodes of their own, shipped once to a worker and
        # shared by every partition's task (a fitted map, e.g. a copula transform, is ~120 KB pickled:
        # embedded in each task it would cross the scheduler once per partition)
        rmap, fn_ = dask.delayed(self.record_map, traverse=False), dask.delayed(fn, traverse=False)
        mapped = [dask.delayed(_map_partition)(d, rmap, fn_, merge, o) for d, o in zip(self.frames, offsets)]
        root = tree_reduce(mapped, partial(_merge_mapped, merge=merge))
        out = None if root is None else self.compute(root)
        value, n, counts, lengths = out if out is not None else (None, 0, {}, [])
        if self.lengths is not None and list(lengths) != list(self.lengths):
            raise InputDataError("the input changed between two passes (partition lengths differ)")
        self.lengths = list(lengths)
        self.passes.append((n, counts))
        return value

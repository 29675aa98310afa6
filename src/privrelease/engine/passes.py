"""Passes as data: one executor runs a mechanism's passes locally or on a Dask cluster.

A *pass* is a pure map from one encoded chunk ``(X, y)`` (features after the schema's
encoding, label codes or None) to a mergeable value, plus the merge (default
:func:`add`: ``+``, element-wise for tuples; ``None`` is the empty value). The mechanism
then takes a noisy step on the merged value, on the client. An executor runs a pass over
the whole input:

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

    def run(self, fn: Callable, merge: Callable = add):
        total, n = None, 0
        for X, y in self.make_chunks():
            n += len(X)
            v = fn(X, y)
            total = v if total is None else merge(total, v)
        self.passes.append((n, {}))
        return total


def _map_partition(df, record_map: RecordMap, fn, merge):
    """On a worker: encode one partition, map it; returns (value, records, clip counts)."""
    if not len(df):
        return None, 0, {}
    ch = record_map.encode(df)
    return fn(ch.X, ch.y), len(df), dict(ch.clip_counts)


def _merge_mapped(a, b, merge):
    value = b[0] if a[0] is None else (a[0] if b[0] is None else merge(a[0], b[0]))
    return value, a[1] + b[1], _add_counts(a[2], b[2])


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

    def run(self, fn: Callable, merge: Callable = add):
        from functools import partial

        out = self.map_frames(partial(_map_partition, record_map=self.record_map, fn=fn, merge=merge),
                              partial(_merge_mapped, merge=merge))
        value, n, counts = out if out is not None else (None, 0, {})
        self.passes.append((n, counts))
        return value

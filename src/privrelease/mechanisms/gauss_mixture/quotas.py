"""Quota decoding of gauss-copula: records take levels by their latent scores so that each group's
counts meet its released quotas (post-processing of released values)."""

from __future__ import annotations

import numpy as np


def quota_assign(scores: np.ndarray, freqs: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Levels for the rows of ``scores`` (n x k) whose counts meet the quotas ``round(n * freqs)``.

    Rounds of proposals: every unassigned row proposes its highest-scoring level among
    those with room left; a level with more proposals than room keeps the highest
    scores and is then full. Each round fills a level or places every proposer, so at
    most k + 1 rounds; every row gets a level because the quotas sum to n. (One group of
    :func:`quota_assign_groups`.)
    """
    group = np.zeros(np.asarray(scores).shape[0], dtype=np.int64)
    return quota_assign_groups(scores, group, np.atleast_2d(np.asarray(freqs, dtype=np.float64)), gen)


def rows_largest_remainder(f: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """:func:`~privrelease.dp.rounding.largest_remainder` of every row of weights ``f`` to its total in
    ``sizes`` (negative weights 0, an all-zero row equal weights; ties to the earlier part)."""
    w = np.clip(np.asarray(f, dtype=np.float64), 0.0, None)
    tot = w.sum(axis=1, keepdims=True)
    w = np.where(tot > 0, w, 1.0)
    raw = w / w.sum(axis=1, keepdims=True) * np.asarray(sizes, dtype=np.float64)[:, None]
    base = np.floor(raw).astype(np.int64)
    rest = np.asarray(sizes, dtype=np.int64) - base.sum(axis=1)
    rank = np.empty_like(base)
    np.put_along_axis(rank, np.argsort(-(raw - base), axis=1, kind="stable"), np.arange(w.shape[1])[None, :], axis=1)
    return base + (rank < rest[:, None])


def quota_assign_groups(scores: np.ndarray, group: np.ndarray, freqs: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """:func:`quota_assign` for many groups of rows at once: row ``i`` belongs to ``group[i]`` and
    the rows of group ``g`` meet the quotas ``round(size_g * freqs[g])``. Each group's rounds of
    proposals are those of :func:`quota_assign` on its own rows; the groups share the numpy calls."""
    n, k = scores.shape
    f = np.asarray(freqs, dtype=np.float64)
    sizes = np.bincount(group, minlength=f.shape[0])
    left = rows_largest_remainder(f, sizes)
    s = np.asarray(scores, dtype=np.float64) + 1e-9 * gen.random(scores.shape)  # random tie-breaks
    s[left[group] <= 0] = -np.inf  # a full level takes no proposal
    out = np.full(n, -1, dtype=np.int64)
    free = np.arange(n)
    while free.size:
        S = s if free.size == n else s[free]
        best = np.argmax(S, axis=1)
        key = group[free] * k + best
        # proposals grouped by (group, level), highest score first (stable); each keeps its room
        order = np.lexsort((-S[np.arange(free.size), best], key))
        ks = key[order]
        rank = np.arange(ks.size) - np.searchsorted(ks, ks, side="left")
        keep = rank < left.ravel()[ks]
        out[free[order[keep]]] = ks[keep] % k
        taken = np.bincount(ks[keep], minlength=left.size).reshape(left.shape)
        left -= taken
        filled = (left <= 0) & (taken > 0)
        free = free[out[free] < 0]
        if free.size and filled.any():
            if left.shape[0] == 1:  # one group: whole columns
                s[:, filled[0]] = -np.inf
            else:
                hit = free[filled[group[free]].any(axis=1)]
                s[hit] = np.where(filled[group[hit]], -np.inf, s[hit])
    return out

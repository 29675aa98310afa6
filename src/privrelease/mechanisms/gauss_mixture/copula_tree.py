"""The public cells of a numeric column in gauss-copula: a tree over the column's public range,
refined down to its declared resolution, and the release of its noisy levels.

A :class:`NumericTree` is public geometry only (bounds, resolution, branching, a cap on the number
of leaves): its leaves are the grid points ``k * resolution`` inside the bounds when there are few
enough of them (every leaf an atom, so discrete values anywhere in the range come back exactly),
otherwise an atom at each public bound and equal-width intervals between. Internal levels group
``branching`` consecutive nodes; a column with ``missing: allowed`` has one more leaf, the missing
one, first, which is a node of its own at every level; the leaf at each public bound is a node of its
own at every level below the coarsest (values piled on a bound are common: a column's zeros, values
clipped to the range). The counting pass keeps the exact leaf
counts; the counts of every level are sums of them (:meth:`NumericTree.level_counts`).

The trees are public geometry, part of the plan (:mod:`.copula_plan`). Which nodes are measured, and
how their noisy counts are made consistent, is :func:`~.copula_estimate.refine_levels` (the choice and
the post-processing) with :func:`~.copula_measure.level_measurer` (the noise). Sensitivities and
accounting: the Notes of :class:`~privrelease.mechanisms.gauss_mixture.gauss_copula.GaussCopula`
and ``docs/derivations.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ...schema.precision import shortest_decimal
from . import copula_defaults as D


def leaf_cap(columns: int, groups: int) -> int:
    """Leaves per column: a power of two sharing :data:`TOTAL_LEAVES` among ``columns x groups``."""
    share = D.TOTAL_LEAVES // max(1, int(columns) * max(1, int(groups)))
    return int(min(D.MAX_LEAVES, max(D.MIN_LEAVES, 2 ** int(math.floor(math.log2(max(share, 1)))))))


def _depth(leaves: int, branching: int) -> int:
    depth, width = 1, branching
    while width < leaves:
        depth, width = depth + 1, width * branching
    return depth


class NumericTree:
    """Public cells of one encoded numeric column (values in [0, 1] by the public bounds) as a tree.

    Parameters
    ----------
    lower, upper : the public bounds (value units); resolution : the public precision (``k *
    resolution`` are the values the column holds), 0 or None for a continuous column; missing : the
    column may be missing (NaN in the encoded coordinate); branching : children per node;
    max_leaves : cap on the leaves (a grid with more points gets intervals instead); top_nodes : the
    coarsest level gets at most this many nodes, the branching lowered as far as that needs and the depth
    kept (None: the branching alone).

    Attributes
    ----------
    n_cells : number of leaves; lo, hi : each leaf's encoded extent (an atom has lo == hi; the
    missing leaf NaN); atom : leaf is a single value; grid : the value leaves are grid points;
    levels : per level (coarsest first, the leaves last) the leaf index where each node starts,
    and ``n_cells`` at the end (node i covers leaves ``levels[l][i] : levels[l][i + 1]``);
    weights : each leaf's share of its node when a node's mass is spread (its width; atoms at the
    bounds and the missing leaf 0).
    """

    def __init__(self, lower: float, upper: float, resolution: float | None = None, missing: bool = False,
                 branching: int = D.DEFAULT_BRANCHING, max_leaves: int = D.MAX_LEAVES, top_nodes: int | None = None):
        self._args = (lower, upper, resolution, missing, branching, max_leaves, top_nodes)
        self.lower, self.upper, self.span = float(lower), float(upper), float(upper) - float(lower)
        r = float(resolution or 0.0)
        self.resolution, self.missing, self.branching = r, bool(missing), int(branching)
        self.off = int(self.missing)
        if r > 0:
            self.k_lo = math.ceil(self.lower / r - 1e-9)
            self.k_hi = max(self.k_lo, math.floor(self.upper / r + 1e-9))
        size = self.k_hi - self.k_lo + 1 if r > 0 else 0
        self.grid = 0 < size <= int(max_leaves)
        if self.grid:
            vals = (self.k_lo + np.arange(size)) * r
            lo = hi = np.clip((vals - self.lower) / self.span, 0.0, 1.0)
            weights = np.ones(size)
            self.tol = 0.0
        else:
            bins = max(1, int(max_leaves) - 2)
            edges = np.linspace(0.0, 1.0, bins + 1)
            lo = np.concatenate([[0.0], edges[:-1], [1.0]])
            hi = np.concatenate([[0.0], edges[1:], [1.0]])
            weights = hi - lo
            self.bins = bins
            self.tol = 0.5 * r / self.span if r > 0 else 1e-12  # within half a step of a bound: the bound
        if self.missing:
            lo, hi, weights = (np.concatenate([[np.nan], a]) for a in (lo, hi, weights))
            weights[0] = 0.0
        self.lo, self.hi, self.weights = lo, hi, weights
        self.n_cells = lo.size
        self.atom = ~(hi - lo > 0)  # NaN (missing) counts as an atom
        width = np.nan_to_num(hi - lo)
        self._inside = (width > 0).astype(np.float64)
        self._width = np.where(width > 0, width, 1.0)
        values = self.n_cells - self.off
        self.edge = int(values >= 3)  # each public bound's leaf a node of its own
        inner = values - 2 * self.edge
        depth = _depth(inner, self.branching)
        if top_nodes is not None and depth > 1:  # the coarsest level: at most top_nodes nodes, the depth kept
            b = 2
            while b ** (depth - 1) * int(top_nodes) < inner:
                b += 1
            self.branching = min(self.branching, b)
        self.levels = [self._starts(self.branching ** (depth - lev), lev == 1) for lev in range(1, depth + 1)]
        self.set_grid_parts(D.GRID_PARTS)

    def _starts(self, stride: int, coarsest: bool = False) -> np.ndarray:
        """Where each node of a level starts when its inner nodes hold ``stride`` leaves. The missing leaf is a node
        of its own at every level; the leaf at each public bound is one below the coarsest level, where it is part of
        the first or the last node (the histograms' tails then read as before), unless that level is the leaves.
        Values piled on a bound (a column's zeros, values clipped to the range) are thus a child of their own once
        their node is split, measured alone rather than inside a run of small values, whose shrinkage toward a spread
        could dilute them (:meth:`bound_nodes`)."""
        off, e, end = self.off, self.edge, self.n_cells
        inner = np.arange(off + e, end - e, int(stride))
        if e and coarsest and stride > 1:
            return np.concatenate([[0] if off else [], [off], inner[1:], [end]]).astype(np.int64)
        return np.concatenate([[0] if off else [], [off] if e else [], inner,
                               [end - 1] if e else [], [end]]).astype(np.int64)

    def __reduce__(self):
        """Pickled as its public parameters and its grid parts (a few numbers), rebuilt where it is unpickled: its
        arrays, up to a million entries each (3 MB a tree at 2 ** 16 leaves), are derived from them. A Dask pass ships
        the trees to the workers inside its map; pickled whole they made a pass's graph 20-70 MB on a table of nine
        continuous columns."""
        return _rebuild_tree, (self._args, self.grid_parts)

    def set_grid_parts(self, parts: int) -> None:
        """Set :attr:`grids`: the measured levels and, between two of them, the coarser one's nodes cut
        into ``parts`` runs of equally many children (when ``parts`` divides the branching; public
        geometry, coarsest first); :attr:`grid_parts` records ``parts``."""
        b = self.branching
        self.grid_parts = parts = int(parts)
        depth, out = len(self.levels), []
        for lev, starts in enumerate(self.levels):
            if lev > 0 and 1 < parts < b and b % parts == 0:
                out.append(self._starts((b // parts) * b ** (depth - lev - 1)))
            out.append(starts)
        self.grids = out

    @property
    def precision(self) -> float:
        """The precision a released value has, in value units (public): the resolution when there is
        one, else the width of a leaf (a value is the shortest decimal of its leaf)."""
        return self.resolution if self.resolution > 0 else self.span / self.bins

    @property
    def depth(self) -> int:
        return len(self.levels)

    def index(self, x: np.ndarray) -> np.ndarray:
        """The leaf of every encoded value (NaN: the missing leaf)."""
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x) if self.missing else None
        if nan is not None:
            x = np.where(nan, 0.0, x)
        if self.grid:
            r = self.resolution
            k = np.rint((self.lower + x * self.span) / r) - self.k_lo
            k = np.clip(k, 0, self.k_hi - self.k_lo).astype(np.int64)
        else:
            k = np.minimum(x * self.bins, self.bins - 1).astype(np.int64) + 1  # floor: x >= 0
            k[x < self.tol] = 0
            k[x > 1.0 - self.tol] = self.bins + 1
        k += self.off
        if nan is not None:
            k[nan] = 0
        return k

    def position(self, x: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Where x sits inside its leaf, in [0, 1] (atoms: undefined, returns 0)."""
        lo = np.nan_to_num(self.lo[k])
        return np.clip((np.nan_to_num(x) - lo) / self._width[k], 0.0, 1.0) * self._inside[k]

    def values(self, k: np.ndarray, frac: np.ndarray) -> np.ndarray:
        """Encoded values at relative positions ``frac`` inside leaves ``k``, snapped to the resolution
        (the grid points inside the bounds); the missing leaf gives NaN."""
        lo = np.nan_to_num(self.lo[k])
        v = np.clip(lo + frac * np.nan_to_num(self.hi[k] - self.lo[k]), 0.0, 1.0)
        if self.resolution > 0 and not self.grid:
            r = self.resolution
            g = np.clip(np.rint((self.lower + v * self.span) / r), self.k_lo, self.k_hi)
            v = np.clip((g * r - self.lower) / self.span, 0.0, 1.0)
        elif self.resolution == 0:  # no declared precision: the shortest number of a leaf, never a bound's neighbour
            inner = self._inside[k] > 0
            if inner.any():
                a = self.lower + lo[inner] * self.span
                b = self.lower + np.nan_to_num(self.hi[k][inner]) * self.span
                v[inner] = np.clip((shortest_decimal(a, b) - self.lower) / self.span, 0.0, 1.0)
        if self.missing:
            v = np.where(k == 0, np.nan, v)
        return v

    def level_counts(self, leaf_counts: np.ndarray, level: int) -> np.ndarray:
        """Counts of the nodes of ``level`` (0 = coarsest) from ``(groups, n_cells)`` leaf counts."""
        return np.add.reduceat(leaf_counts, self.levels[level][:-1], axis=-1)

    def parents(self, level: int) -> np.ndarray:
        """For every node of ``level`` (>= 1), its parent at ``level - 1``."""
        return np.searchsorted(self.levels[level - 1], self.levels[level][:-1], side="right") - 1

    def level_of(self, budget: int) -> int:
        """The finest grid (:attr:`grids`) with at most ``budget`` nodes (0 when even the coarsest has more)."""
        ok = [g for g, s in enumerate(self.grids) if s.size - 1 <= budget]
        return ok[-1] if ok else 0

    def grid_counts(self, leaf_counts: np.ndarray, grid: int) -> np.ndarray:
        """Counts of the nodes of ``grid`` (an index into :attr:`grids`) from ``(groups, n_cells)`` leaf counts."""
        return np.add.reduceat(leaf_counts, self.grids[grid][:-1], axis=-1)

    def coarse_index(self, x: np.ndarray, grid: int) -> np.ndarray:
        """The node of ``grid`` holding every encoded value (cells for two-way marginals)."""
        return np.searchsorted(self.grids[grid], self.index(x), side="right") - 1

    def bound_nodes(self, level: int) -> list:
        """The nodes of ``level`` that hold a public bound's value alone (:meth:`_starts`): the first and the last
        value node below the coarsest level, or at it when it is the leaves; none otherwise."""
        return [self.off, len(self.levels[level]) - 2] if self.edge and (level > 0 or self.depth == 1) else []

    def level_weights(self, level: int) -> np.ndarray:
        """Each node's weight at ``level``: the sum of its leaves' :attr:`weights` (its width)."""
        return self.level_counts(self.weights[None, :], level)[0]

    def centres(self, level: int) -> np.ndarray:
        """Each node's centre at ``level`` (encoded units): its leaves' midpoints averaged by their weights, so that
        a parent's centre is its children's centres averaged by theirs; a node of no weight (the missing leaf, a
        bound's atom alone) 0."""
        mid = np.nan_to_num(0.5 * (self.lo + self.hi)) * self.weights
        w = self.level_weights(level)
        return np.where(w > 0, self.level_counts(mid[None, :], level)[0] / np.where(w > 0, w, 1.0), 0.0)


def _rebuild_tree(args: tuple, grid_parts: int) -> NumericTree:
    """A :class:`NumericTree` from its constructor's arguments and its grid parts (:meth:`NumericTree.__reduce__`)."""
    tree = NumericTree(*args)
    tree.set_grid_parts(grid_parts)
    return tree

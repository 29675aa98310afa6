"""The pieces of gauss-copula below the mechanism: public cells, histogram post-processing, the
budget split, quota decoding, and the two per-chunk maps its passes run (cell counts, and the
copula transform of a chunk into the mixture's latent rows).

The maps are plain picklable objects: they run on chunks locally and on partitions of a Dask
cluster, so every per-record step is the same on every engine. Derivations: the Notes of
:class:`~privrelease.mechanisms.gauss_mixture.gauss_copula.GaussCopula` and
``docs/derivations.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np
from scipy.special import ndtri

from ...dp.calibration import calibrate_rho, epsilon_for
from ...engine.passes import add
from ...errors import InputDataError
from ...noise.counter import counter_uniforms_at
from ...schema.encoding import EncodedDomain
from .copula_tree import NumericTree
from .quotas import quota_assign
from ..base import check_one_hot

#: Share of the total zCDP rho spent on the one-way histograms (chosen on census_income_kdd, gas_drift, musk2).
DEFAULT_MARGINAL_SHARE = 0.55
#: ... of what the pair tree leaves, when the tree is on (chosen on census_income_kdd at 20,000 and 66,508
#: records, docs/results/mixed-pairs.md): the tree carries the categorical pairs the mixture carried.
TREE_MARGINAL_SHARE = 0.8
#: ... and on a table whose one-way histograms the noise dominates anyway (``auto_marginal_share``).
NOISY_MARGINAL_SHARE = 0.3
#: Expected 1-way TVD from the noise alone above which a table counts as such (release.advice's threshold).
NOISY_TVD = 0.1
#: Cells of a numeric column in that estimate (the 1-way TVD's bins).
NOISY_NUMERIC_CELLS = 20
#: ``by_label="auto"``: per class when n / C records would fill 8 cells of this many noise stds each.
CELL_SIGMAS = 8.0
#: Noisy cells below this many noise stds are set to 0 before normalising (post-processing).
DEFAULT_THRESHOLD = 0.0
#: Normal scores are clipped to [-L, L] and scaled to [0, 1] for the mixture. At L = 2 (4.6 % of
#: scores clipped) a numeric coordinate has about 1.8 times the spread it has at L = 4, so the
#: mixture's noise (the same on every coordinate) hides less of the numeric columns' dependence:
#: chosen on census_income_kdd, gas_drift and musk2 (docs/results/latent-scale.md).
LATENT_BOUND = 2.0
#: Nodes of a numeric column's one-hot block in the mixture (``coarse_cells``; 0: none): the finest grid with at
#: most this many (12: the same as the pair cells, so the tree can decode the column on its block).
COARSE_CELLS = 12



def histogram_sensitivity(n_columns: int) -> float:
    """L2 sensitivity of the one-way histograms of ``d`` columns stacked: ``sqrt(2 d)``.

    Each record falls in exactly one cell of each column's histogram. Replacing it moves
    at most two cells of each histogram, one down by 1 and one up by 1 (none when the
    two records share the cell), so the stacked difference has at most ``2 d`` entries
    of absolute value 1.
    """
    return math.sqrt(2.0 * int(n_columns))


def denoise(noisy: np.ndarray, total: float, floor: float) -> np.ndarray:
    """Counts summing to ``total`` from a noisy histogram (post-processing).

    Cells below ``floor`` (a multiple of the noise std) are set to 0 and the others scaled
    to the total; when no cell passes, the Euclidean projection onto the simplex is used.
    """
    if floor > 0:
        v = np.where(noisy >= floor, noisy, 0.0)
        if v.sum() > 0:
            return v * (total / v.sum())
    return project_to_simplex(noisy, total)


def project_to_simplex(v: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{c >= 0, sum c = total}`` (post-processing)."""
    v = np.asarray(v, dtype=np.float64)
    if total <= 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, v.size + 1)
    r = int(np.nonzero(u - css / k > 0)[0][-1])
    theta = css[r] / (r + 1.0)
    return np.maximum(v - theta, 0.0)


@lru_cache(maxsize=256)
def auto_marginal_share(domain, n: int, epsilon: float, n_classes: int, share, tree: bool = False) -> float:
    """The histograms' share of rho: ``share`` when a number; for "auto", ``NOISY_MARGINAL_SHARE``
    when the noise alone is expected to move each column's one-way distribution by more than
    ``NOISY_TVD`` (``tau = mean cells x d / (epsilon n)`` over the d columns, the label's
    ``n_classes`` levels included: the budget warning's yardstick), else ``TREE_MARGINAL_SHARE``
    when the pair tree is on (``tree``, itself decided from public quantities) and
    ``DEFAULT_MARGINAL_SHARE`` when it is off. Public quantities only.

    With the tree on, census_income_kdd (3 seeds) gave 2-way TVD 0.0540 / 0.0507 / 0.0519 at shares
    0.55 / 0.8 / 0.9 (20,000 records) and 0.0328 / 0.0321 / 0.0319 (66,508 records), with LR AUC
    0.809 / 0.813 / 0.801 and 0.821 / 0.836 / 0.843; with the tree off, 0.8 changed little (0.0599 to
    0.0593, LR AUC 0.822 to 0.819), so tables where the tree is off keep 0.55.

    On gas_drift and musk2 (tau 0.55 and 0.72: 128 and 166 numeric columns) a share of 0.3 raised
    train-on-release scores by 2 to 12 points and cost 0.03-0.04 of 1-way TVD, which the noise had
    already put above 0.13; census_income_kdd (tau 0.03) keeps 0.55 (docs/results/mixed-default.md)."""
    if share != "auto":
        return float(share)
    cells = NOISY_NUMERIC_CELLS * domain.p1 + sum(b - a for a, b in domain.blocks) + int(n_classes)
    default = TREE_MARGINAL_SHARE if tree else DEFAULT_MARGINAL_SHARE
    if math.isinf(epsilon):
        return default
    tau = cells / (epsilon * max(n, 1))  # mean cells x d / (epsilon n)
    return NOISY_MARGINAL_SHARE if tau > NOISY_TVD else default


def split_budget(epsilon: float, delta: float, mode: str, share: float) -> tuple[float, float, float, float]:
    """``(rho, rho_hist, rho_mix, eps_mix)``: the total zCDP rho of ``(epsilon, delta)``, the
    histograms' part, the mixture's part and the epsilon the mixture is given.

    The mixture calibrates ``eps_mix`` itself (:func:`calibrate_rho`, the same function), so
    ``rho_mix`` is what it will spend; ``eps_mix`` is taken where ``(1 - share) rho`` (a hair
    less) is ``(eps_mix, delta)``-DP, and the histograms get exactly ``rho - rho_mix``.
    """
    rho = calibrate_rho(epsilon, delta, mode, 0.0)
    eps_mix = epsilon_for((1.0 - share) * rho * (1.0 - 1e-6), delta, mode)
    rho_mix = calibrate_rho(eps_mix, delta, mode, 0.0)
    return rho, rho - rho_mix, rho_mix, eps_mix


def marginals_from_noisy(parts: list, n_feat: int, n: int, labelled: bool, floor: float):
    """Post-processing of the noisy histograms: ``(marginals, label weights, group sizes)``.

    ``parts``: the noisy ``(groups, cells)`` histograms of the ``n_feat`` feature columns, then
    (one group, labelled) the label's. With several groups (classes) the class sizes are the
    inverse-variance average of every feature histogram's row sums (noise variance ``K_j std^2``)
    projected onto the counts summing to the public n; each class row is then made a distribution
    summing to its class size (:func:`denoise` with ``floor``) and divided by it.
    """
    G = parts[0].shape[0] if parts else 1
    label = None
    if G > 1:
        w = np.array([1.0 / h.shape[1] for h in parts[:n_feat]])
        est = sum(wj * h.sum(axis=1) for wj, h in zip(w, parts[:n_feat])) / w.sum()
        sizes = project_to_simplex(est, float(n))
    else:
        sizes = np.array([float(n)])
        if labelled:
            label = denoise(parts[n_feat].ravel(), float(n), floor)
    safe = np.maximum(sizes, 1e-12)
    marginals = [np.stack([denoise(h[c], sizes[c], floor) / safe[c] for c in range(G)]) for h in parts[:n_feat]]
    weights = (sizes / n if G > 1 else label / n) if labelled else None
    return marginals, weights, sizes


#: Below this many split thresholds per group (n / G < SMALL_TABLE_SPLITS * split * sigma) a split could
#: hardly happen: the numeric trees are released at their coarsest level only (and the release says so).
SMALL_TABLE_SPLITS = 2.0


def plan_cells(n: int, classes: int, n_cat: int, depths: list, nm: float, by_label, split: float,
               label: bool) -> tuple[int, tuple, int, bool]:
    """``(groups, depths, d, coarse)`` from public quantities only: n, the classes, the number of
    categorical histograms, each numeric tree's depth and the noise multiplier ``nm``.

    Per class (``by_label="auto"``) when ``n / C`` records would fill 8 cells of ``CELL_SIGMAS`` noise
    stds each. ``d`` counts the histograms over every level (each record in one cell of each): the
    categorical ones, the label's when not per class, and every level of every tree. Small tables
    (``coarse``): when ``n / G < SMALL_TABLE_SPLITS * split * sigma`` a node could hardly be split,
    so every tree is measured at its coarsest level only.
    """
    sigma_c = histogram_sensitivity(n_cat + sum(depths)) * nm
    if by_label == "auto":
        by = classes > 1 and (n / classes / (CELL_SIGMAS * sigma_c) >= 8 if sigma_c > 0 else True)
    else:
        by = bool(by_label) and classes > 1
    G = classes if by else 1
    extra = int(G == 1 and label)
    sigma = histogram_sensitivity(n_cat + extra + sum(depths)) * nm
    coarse = bool(depths) and max(depths) > 1 and n / G < SMALL_TABLE_SPLITS * split * sigma
    depths = tuple([1] * len(depths)) if coarse else tuple(depths)
    return G, depths, n_cat + extra + sum(depths), coarse


def cumulative_masses(marginals: list) -> tuple[list, list]:
    """Per numeric marginal ``(G, K)``: the left masses ``F`` ``(G, K + 1)``, and for every cell the
    last non-empty cell at or before it (rounding at u -> 1 must not land in an empty trailing cell)."""
    cdf = [np.concatenate([np.zeros((m.shape[0], 1)), np.cumsum(m, axis=1)], axis=1) for m in marginals]
    nonempty = [np.maximum.accumulate(np.where(m > 0, np.arange(m.shape[1]), 0), axis=1) for m in marginals]
    return cdf, nonempty


def rank_match(z: np.ndarray, cells: NumericTree, F: np.ndarray, masses: np.ndarray, nonempty: np.ndarray,
               gen: np.random.Generator) -> np.ndarray:
    """Values of one numeric column for m sampled latent scores ``z``: the i-th smallest takes the
    released quantile at ``(i + U) / m`` (ties broken at random). ``F``, ``masses``: the released
    left masses and masses of the column's cells (one group); ``nonempty``: the last non-empty
    cell at or before each cell. An atom's quantile is its value (the missing leaf: NaN); an interval's
    is linear inside it, snapped to the column's resolution."""
    m = z.size
    order = np.argsort(z + 1e-12 * gen.standard_normal(m), kind="stable")
    u = np.empty(m)
    u[order] = (np.arange(m) + gen.random(m)) / m
    # u in [F_k, F_{k+1}) lies in cell k; side="right" skips empty cells (F_k = F_{k+1})
    k = np.clip(np.searchsorted(F, u, side="right") - 1, 0, cells.n_cells - 1)
    k = nonempty[k]  # trailing empty cells (rounding at u -> 1): the last non-empty one
    frac = np.clip((u - F[k]) / np.where(masses[k] > 0, masses[k], 1.0), 0.0, 1.0)
    return cells.values(k, frac)


@dataclass(frozen=True)
class CoarsePlan:
    """Public plan of the numeric columns' node blocks in the mixture: the latent domain (the
    encoded columns, then one one-hot block per numeric column with at least 2 nodes) and the
    tree grid (:attr:`~.copula_tree.NumericTree.grids`) of each column's nodes."""

    domain: EncodedDomain   # of the latent rows
    levels: tuple    # per numeric column: the tree grid of its nodes
    offsets: tuple   # per numeric column: (start, stop) of its block, or None

    def block(self, j: int):
        return self.offsets[j] if j < len(self.offsets) else None


def coarse_plan(domain, trees, cells: int) -> CoarsePlan:
    """The node blocks for ``cells`` nodes per column (public: from the domain and the trees).

    Each block adds 1 to the squared norm bound of a latent row, and so to the noise of the
    mixture's second moments; the blocks are added only when the numeric columns are at most as
    many as the categorical ones (the bound grows by at most half). On all-numeric tables
    (gas_drift, 128 columns) the blocks doubled that noise and lost 22 points of train-on-release
    accuracy; on census_income_kdd (7 numeric, 33 categorical) they lowered the 2-way TVD by 5 %."""
    cells = cells if len(trees) <= len(domain.blocks) else 0
    levels, offsets, blocks, p = [], [], list(domain.blocks), int(domain.p)
    for t in trees:
        lev = t.level_of(cells + int(t.missing)) if cells > 0 else 0
        k = int(t.grids[lev].size - 1)
        levels.append(lev)
        if cells > 0 and k >= 2:
            offsets.append((p, p + k))
            blocks.append((p, p + k))
            p += k
        else:
            offsets.append(None)
    dom = EncodedDomain(p=p, numeric=tuple(domain.numeric), blocks=tuple(blocks))
    return CoarsePlan(dom, tuple(levels), tuple(offsets))


def numeric_values(Z: np.ndarray, col: int, coarse, j: int, cells: NumericTree, F: np.ndarray, masses: np.ndarray,
                   nonempty: np.ndarray, gen: np.random.Generator, node: np.ndarray | None = None) -> np.ndarray:
    """Values of numeric column ``j`` (encoded column ``col``) for sampled latent rows ``Z`` of one
    group: by :func:`rank_match` on its normal score, or, when it has a node block in the mixture
    (``coarse``), its node by :func:`quota_assign` on the block (meeting the released node masses;
    or ``node``, already decoded) and its value inside the node by :func:`rank_match_within`."""
    block = None if coarse is None else coarse.block(j)
    if block is None:
        return rank_match(Z[:, col], cells, F, masses, nonempty, gen)
    level = coarse.levels[j]
    if node is None:
        node = quota_assign(Z[:, block[0]:block[1]], cells.grid_counts(masses, level), gen)
    return rank_match_within(Z[:, col], node, cells, level, F, masses, gen)


def rank_match_within(z: np.ndarray, node: np.ndarray, cells: NumericTree, level: int, F: np.ndarray,
                      masses: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Values of one numeric column for records already given their node of ``level``: inside each
    node, the i-th smallest latent score of its m records takes the released quantile at
    ``(i + U) / m`` of the node's leaves (as :func:`rank_match` does for the whole column)."""
    m = z.size
    starts = cells.grids[level]
    order = np.lexsort((z + 1e-12 * gen.standard_normal(m), node))
    ns = node[order]
    cnt = np.bincount(node, minlength=starts.size - 1)
    first = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    lo, hi = F[starts[ns]], F[starts[ns + 1]]
    u = lo + (np.arange(m) - first[ns] + gen.random(m)) / cnt[ns] * (hi - lo)
    k = np.clip(np.searchsorted(F, u, side="right") - 1, starts[ns], starts[ns + 1] - 1)
    k = np.where(masses[k] > 0, k, _heaviest_leaf(masses, starts, ns, k))
    frac = np.clip((u - F[k]) / np.where(masses[k] > 0, masses[k], 1.0), 0.0, 1.0)
    out = np.empty(m)
    out[order] = cells.values(k, frac)
    return out


def _heaviest_leaf(masses, starts, nodes, k):
    """For records whose leaf has no mass (a node with no released mass): the node's first leaf
    with the most mass (its first leaf when none has any)."""
    out = k.copy()
    for v in np.unique(nodes):
        a, b = starts[v], starts[v + 1]
        out[nodes == v] = a + int(np.argmax(masses[a:b]))
    return out


# ---- the per-chunk maps (module level and picklable: they run on Dask workers) ---------------
def check_encoded(X, p: int, blocks=(), nan_ok: tuple = ()) -> np.ndarray:
    """A finite 2-d chunk of ``p`` encoded columns in [0, 1], one-hot in the categorical ``blocks``
    (NaN allowed in the columns ``nan_ok``: numeric columns that may be missing)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != p:
        raise InputDataError(f"X must be a finite 2-d encoded matrix with {p} columns")
    finite = np.isfinite(X)
    some = finite.any()  # a chunk whose values are all missing has no range to check
    if nan_ok:
        finite[:, list(nan_ok)] |= np.isnan(X[:, list(nan_ok)])
    if not finite.all():
        raise InputDataError(f"X must be a finite 2-d encoded matrix with {p} columns")
    if some and (np.nanmin(X) < -1e-12 or np.nanmax(X) > 1 + 1e-12):
        raise InputDataError("X must be encoded into [0, 1] (use privrelease.schema.Encoder)")
    check_one_hot(X, blocks)
    return X


def check_labels(y, rows: int, n_classes: int | None) -> np.ndarray:
    """Label codes of a chunk: as many as its rows, each in ``[0, n_classes)``."""
    y = np.asarray(y, dtype=np.int64)
    if y.shape != (rows,):
        raise InputDataError("X and y have different numbers of records")
    if n_classes is not None and y.size and (y.min() < 0 or y.max() >= n_classes):
        raise InputDataError(f"a label code is outside the declared {n_classes} classes")
    return y


@dataclass(frozen=True)
class CellCounter:
    """Pass 1 of one chunk: the counts of every column's public cells, per label class.

    ``fn(X, y) -> (records, labelled records, counts, label counts, classes seen)``: ``counts``
    holds one ``(groups, leaves)`` array per numeric column (its :class:`NumericTree`), then per
    categorical block (its levels); ``groups`` is the number of classes when it is above 1
    (an unlabelled chunk counts in group 0), else 1. Label counts need a declared
    ``n_classes`` (else None); ``classes seen`` is the largest label code + 1 (0 without labels).
    Merged by :func:`merge_cell_counts`.
    """

    p: int
    numeric: tuple
    cells: tuple
    blocks: tuple
    n_classes: int | None
    nan_ok: tuple = ()  # encoded numeric columns that may be missing (NaN)

    @property
    def groups(self) -> int:
        return self.n_classes if (self.n_classes or 0) > 1 else 1

    def __call__(self, X, y):
        X = check_encoded(X, self.p, self.blocks, self.nan_ok)
        G, rows = self.groups, X.shape[0]
        g = np.zeros(rows, dtype=np.int64)
        label = None
        seen = 0
        if y is not None:
            y = check_labels(y, rows, self.n_classes)
            g = y if G > 1 else g
            seen = int(y.max()) + 1 if rows else 0
            if self.n_classes is not None:
                label = np.bincount(y, minlength=self.n_classes)[None, :].astype(np.float64)
        cols = [(c.index(X[:, j]), c.n_cells) for j, c in zip(self.numeric, self.cells)]
        cols += [(np.argmax(X[:, a:e], axis=1), e - a) for a, e in self.blocks]
        counts = tuple(np.bincount(g * K + k, minlength=G * K).reshape(G, K).astype(np.float64) for k, K in cols)
        return rows, (rows if y is not None else 0), counts, label, seen


def merge_cell_counts(a, b):
    """Merge two :class:`CellCounter` values: sums, and the larger number of classes seen."""
    return (a[0] + b[0], a[1] + b[1], add(a[2], b[2]), add(a[3], b[3]), max(a[4], b[4]))


@dataclass(frozen=True)
class CopulaTransform:
    """The copula map of one chunk: every numeric column through its released marginal to a
    normal score, clipped to ``[-LATENT_BOUND, LATENT_BOUND]`` and scaled to [0, 1]; categorical
    blocks unchanged. Post-processing of the released marginals applied to each record alone.

    Inside an atom the record's position is a uniform from :func:`counter_uniforms_at` keyed by
    ``key`` (drawn once per release), the column and the record's global index, so the same
    record gets the same latent row in every pass and on every engine.
    """

    p: int
    numeric: tuple
    cells: tuple
    cdf: tuple       # per numeric column: (groups, cells + 1) released left masses
    masses: tuple    # per numeric column: (groups, cells) released masses
    grouped: bool    # marginals per label class
    key: int
    coarse: "CoarsePlan | None" = None  # numeric columns' one-hot node blocks after the p columns

    def __call__(self, X, y, row_offset: int) -> np.ndarray:
        # the chunk was checked by the cell-count pass; the mixture's maps check the latent rows
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.p:
            raise InputDataError(f"X must be a 2-d encoded matrix with {self.p} columns")
        width = self.p if self.coarse is None else self.coarse.domain.p
        Z = np.zeros((X.shape[0], width))
        Z[:, :self.p] = X
        if self.coarse is not None:
            for j, (col, cells) in enumerate(zip(self.numeric, self.cells)):
                block = self.coarse.block(j)
                if block is not None:
                    node = cells.coarse_index(X[:, col], self.coarse.levels[j])
                    Z[np.arange(X.shape[0]), block[0] + node] = 1.0
        g = np.asarray(y, dtype=np.int64) if (self.grouped and y is not None) else None
        for j, (col, cells) in enumerate(zip(self.numeric, self.cells)):
            x = X[:, col]
            k = cells.index(x)
            a = cells.position(x, k)
            atoms = np.flatnonzero(cells.atom[k])  # inside an atom: the record's own uniform
            a[atoms] = counter_uniforms_at(self.key, j, row_offset + atoms)
            F, m = (self.cdf[j][0][k], self.masses[j][0][k]) if g is None else (self.cdf[j][g, k], self.masses[j][g, k])
            u = np.clip(F + a * m, 1e-12, 1.0 - 1e-12)
            z = np.clip(ndtri(u), -LATENT_BOUND, LATENT_BOUND)
            Z[:, col] = (z + LATENT_BOUND) / (2.0 * LATENT_BOUND)
        return Z


def _latent_map(X, y, row_offset, transform, fn, indexed):
    Z = transform(X, y, row_offset)
    return fn(Z, y, row_offset) if indexed else fn(Z, y)


class LatentPasses:
    """A pass executor whose chunks are the copula-transformed ones: the mixture's maps run on
    ``transform(X, y, row_offset)`` where the chunks are (an indexed pass of ``inner``)."""

    def __init__(self, inner, transform: CopulaTransform):
        self.inner, self.transform = inner, transform

    def run(self, fn, merge=add, indexed: bool = False):
        return self.inner.run(partial(_latent_map, transform=self.transform, fn=fn, indexed=indexed), merge,
                              indexed=True)


def decode_latent(mech, Z: np.ndarray, y, tree=None) -> np.ndarray:
    """Encoded records from the mixture's latent rows ``Z`` (classes ``y``) of a fitted gauss-copula
    ``mech``: numeric columns rank-matched to the released marginals (through their node when they
    have a node block), categorical levels by quotas; with a fitted pair tree, its attributes decoded
    along it (post-processing of released values)."""
    gen, dom, n = mech.source_.generator, mech.domain_, Z.shape[0]
    X = np.zeros((n, dom.p))
    if not mech.cells_:  # numeric columns on their encoded scale (no copula)
        idx = np.asarray(dom.numeric, dtype=int)
        X[:, idx] = np.clip(Z[:, idx], 0.0, 1.0)
    if not mech.marginals_:  # no histogram released: argmax decoding
        for a, e in dom.blocks:
            X[np.arange(n), a + np.argmax(Z[:, a:e], axis=1)] = 1.0
        return X
    g = mech._groups(y, n)
    off = len(mech.cells_)
    fixed = {} if tree is None else tree.decode(mech, Z, g, gen)
    for c in range(mech.groups_):
        rows = np.flatnonzero(g == c)
        if rows.size == 0:
            continue
        Zc = Z[rows]  # one copy of the group's latent rows for all its columns
        for j, col in enumerate(dom.numeric[:off]):
            X[rows, col] = numeric_values(Zc, col, mech.coarse_, j, mech.cells_[j], mech._cdf[j][c],
                                          mech.marginals_[j][c], mech._nonempty[j][c], gen,
                                          None if j not in fixed else fixed[j][rows])
        for b, (a, e) in enumerate(dom.blocks):
            codes = fixed[off + b][rows] if off + b in fixed else \
                quota_assign(Zc[:, a:e], mech.marginals_[off + b][c], gen)
            X[rows, a + codes] = 1.0
    return X

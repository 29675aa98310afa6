"""gauss-copula's estimation stage: the model fitted to the released measurements.

Everything here is post-processing: it sees the noisy answers of :mod:`.copula_measure` and their noise
stds (and public geometry: the trees, the coarse plan), never a record and never the budget. It turns

* the released histograms into one-way distributions per group (:func:`marginals_from_noisy`: class
  sizes averaged over every histogram and projected onto the public n, each histogram projected onto
  the counts summing to its class size) and the numeric trees' finer rounds (one measurement per level,
  naming its nodes) into consistent leaf masses (:func:`refine_levels`: each split node's noisy children
  shrunk toward its spread mass, :func:`shrink`, and projected onto it; it also chooses, from released
  masses, the nodes the next round measures);
* the one-way histograms and the graphical model's measured marginals into one model (:class:`ModelFit`,
  with :mod:`privrelease.estimation.graphical`).

The mixture (:class:`~.gauss_pca.GaussPCA`) fits itself to its own released statistics.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from . import copula_defaults as D
from .copula_plan import pair_counts
from .copula_tree import NumericTree


# ---- one-way histograms -------------------------------------------------------------------------------
def denoise(noisy: np.ndarray, total: float, floor: float, tails: bool = False, unordered: int = 0,
            std: float = 0.0) -> np.ndarray:
    """Counts summing to ``total`` from a noisy histogram (post-processing).

    Cells below ``floor`` (a multiple of the noise std) are set to 0 and the others scaled to the total; with
    ``tails`` (an ordered histogram: a numeric tree's level; ``std`` its noise std) only those outside the cells
    :func:`kept_cells` keeps, those kept at their noisy counts (negative ones at 0). The first
    ``unordered`` cells (a numeric column's missing values) are no part of the ordered range: kept at their noisy
    counts (negative ones at 0) and no tail's end. When no cell passes, the Euclidean projection onto the simplex
    is used.
    """
    if floor > 0:
        if tails:
            v = np.zeros_like(noisy, dtype=np.float64)
            v[:unordered] = np.maximum(noisy[:unordered], 0.0)
            kept = kept_cells(np.asarray(noisy[unordered:], dtype=np.float64), floor, std)
            v[unordered:] = np.where(kept, np.maximum(noisy[unordered:], 0.0), 0.0)
        else:
            v = np.where(noisy >= floor, noisy, 0.0)
        if v.sum() > 0:
            return v * (total / v.sum())
    return project_to_simplex(noisy, total)


def kept_cells(noisy: np.ndarray, floor: float, std: float) -> np.ndarray:
    """Which ordered cells a histogram keeps, from their noisy counts (std ``std``; none when no cell reaches
    ``floor``): post-processing of released counts and the public std.

    The kept range grows from the largest cell outward, one side at a time. A cell at or above the floor next to
    the range joins it; a cell apart from it (empty-looking cells between) joins, with the cells between, only if
    it passes the floor's false-positive rate once for all the ``m`` cells beyond the range on its side, not once
    for itself: its count must reach ``std * Phi^-1(1 - q / m)``, ``q = 1 - Phi(floor / std)`` (Bonferroni; ``m =
    1`` is the floor). The outermost cells, which hold the public bounds' values, join at the floor, alone: a pile
    at a bound (a top-coded 99,999) is a far mode tables often have, and the cells between it and the range stay
    empty. Where the data end, each of the ``m`` empty cells passes the floor by its noise alone with probability
    ``q`` (2.3 % at 2 stds), and one that did carried the range out to it, every cell between keeping its noise: on
    drafted bounds at powers of two (ages bounded by 256) a release placed a few percent of its records far beyond
    the data (``docs/derivations.md``, "Tails apart from the range")."""
    ok = noisy >= floor
    kept = np.zeros(noisy.size, dtype=bool)
    if not ok.any():
        return kept
    q = float(ndtr(-floor / std)) if std > 0 else 0.0
    k = noisy.size
    top = int(np.argmax(noisy))
    kept[top] = True
    for step, cells in ((1, range(top + 1, k)), (-1, range(top - 1, -1, -1))):
        end = top
        for p in cells:
            if not ok[p]:
                continue
            beyond = k - 1 - end if step > 0 else end
            apart = abs(p - end) > 1
            if apart and p in (0, k - 1) and q > 0:  # a bound's cell: at the floor, alone
                kept[p] = True
            elif not apart or q <= 0 or noisy[p] >= std * float(ndtri(1.0 - q / beyond)):
                kept[min(p, end):max(p, end) + 1] = True
            else:
                continue
            end = p
    return kept


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


def marginals_from_noisy(parts: list, n_feat: int, n: int, labelled: bool, floor, tails: int = 0, stds=None,
                         unordered=()):
    """Post-processing of the noisy histograms: ``(marginals, label weights, group sizes)``.

    ``parts``: the noisy ``(groups, cells)`` histograms of the ``n_feat`` feature columns, then
    (one group, labelled) the label's; ``stds``: each one's noise std (None: all alike). With several groups
    (classes) the class sizes are the inverse-variance average of every feature histogram's row sums (noise
    variance ``K_j std_j^2``)
    projected onto the counts summing to the public n; each class row is then made a distribution
    summing to its class size (:func:`denoise` with ``floor``: one for all histograms, or one per feature
    histogram; on the tails only of the first ``tails`` histograms, the first ``unordered[j]`` cells of histogram
    ``j`` no part of its tails) and divided by it.
    """
    floors = list(floor) if np.ndim(floor) else [float(floor)] * n_feat
    G = parts[0].shape[0] if parts else 1
    label = None
    if G > 1:
        std = np.ones(n_feat) if stds is None else np.asarray(stds[:n_feat], dtype=np.float64)
        std = np.where(std > 0, std, 1.0)  # the noiseless test mode: every histogram alike
        w = np.array([1.0 / h.shape[1] for h in parts[:n_feat]]) / std ** 2
        est = sum(wj * h.sum(axis=1) for wj, h in zip(w, parts[:n_feat])) / w.sum()
        sizes = class_sizes(est, float(n), 1.0 / math.sqrt(w.sum()) if stds is not None and min(stds[:n_feat]) > 0
                            else 0.0)
    else:
        sizes = np.array([float(n)])
        if labelled:
            label = denoise(parts[n_feat].ravel(), float(n), 0.0 if np.ndim(floor) else float(floor))
    safe = np.maximum(sizes, 1e-12)
    skip = list(unordered) + [0] * (n_feat - len(unordered))
    sd = [0.0] * n_feat if stds is None else [float(x) for x in stds[:n_feat]]
    marginals = [np.stack([denoise(h[c], sizes[c], f, j < tails, skip[j], sd[j]) / safe[c] for c in range(G)])
                 for j, (h, f) in enumerate(zip(parts[:n_feat], floors))]
    weights = (sizes / n if G > 1 else label / n) if labelled else None
    return marginals, weights, sizes


def class_sizes(est: np.ndarray, n: float, std: float) -> np.ndarray:
    """The classes' sizes from their noisy estimates ``est`` (std ``std`` each; 0: noiseless): a class whose estimate is
    below ``CLASS_SIZE_SIGMAS`` stds, which an empty class reaches by its noise alone, gets no records; the others are
    projected onto the counts summing to the public ``n``. Post-processing.

    A class the data leave (nearly) empty, such as the ``(other)`` level a draft adds to a label, otherwise got a
    few dozen records whose every column came from its own histograms, pure noise: on a held-out table of 5,940
    records 39 rows of sex ``(other)`` with ages up to 1,004 (``docs/derivations.md``, "Empty classes")."""
    live = est >= D.CLASS_SIZE_SIGMAS * std
    if not live.any():
        return project_to_simplex(est, n)
    sizes = np.zeros(est.shape, dtype=np.float64)
    sizes[live] = project_to_simplex(est[live], n)
    return sizes


def cumulative_masses(marginals: list) -> tuple[list, list]:
    """Per numeric marginal ``(G, K)``: the left masses ``F`` ``(G, K + 1)``, and for every cell the
    last non-empty cell at or before it (rounding at u -> 1 must not land in an empty trailing cell)."""
    cdf = [np.concatenate([np.zeros((m.shape[0], 1)), np.cumsum(m, axis=1)], axis=1) for m in marginals]
    nonempty = [np.maximum.accumulate(np.where(m > 0, np.arange(m.shape[1]), 0), axis=1) for m in marginals]
    return cdf, nonempty


# ---- the numeric trees' finer levels ------------------------------------------------------------------
def spread(parent_mass: np.ndarray, tree: NumericTree, level: int, floor: float = 0.0) -> np.ndarray:
    """Masses of the nodes of ``level`` when every parent's mass is spread over its children by a density that is
    linear inside the parent (:func:`linear_slopes`; flat where its neighbours give no slope, or where it or a
    neighbour holds less than ``floor``): each child gets its
    share of the parent's weight (the leaf weights; equal shares where a parent has no weight) times ``1 + t (x_c -
    x_p)``, ``x`` the nodes' centres, the slope ``t`` kept within what leaves every child non-negative. The centres are
    weight averages, so the children's masses sum to the parent's. A public bound's node is not a part of the density
    (its neighbour is flat at that side). Post-processing of released masses and public geometry."""
    w = tree.level_weights(level)
    par = tree.parents(level)
    wp = np.bincount(par, weights=w, minlength=parent_mass.shape[-1])
    nodes = np.bincount(par, minlength=parent_mass.shape[-1]).astype(np.float64)
    share = np.where(wp[par] > 0, w / np.where(wp[par] > 0, wp[par], 1.0), 1.0 / nodes[par])
    centres = tree.centres(level - 1)
    offset = np.where(wp[par] > 0, tree.centres(level) - centres[par], 0.0)
    inner = wp.copy()
    inner[tree.bound_nodes(level - 1)] = 0.0  # a bound's node is a value of its own, not a part of the density
    t = linear_slopes(parent_mass, centres, inner, floor)
    reach = np.zeros(wp.size)
    np.maximum.at(reach, par, np.abs(offset))
    bound = np.where(reach > 0, 1.0 / np.where(reach > 0, reach, 1.0), 0.0)
    t = np.clip(t, -bound, bound)  # every child non-negative, so the children sum to the parent
    return parent_mass[:, par] * share[None, :] * (1.0 + t[:, par] * offset[None, :])


def linear_slopes(mass: np.ndarray, centres: np.ndarray, weights: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """``(groups, nodes)``: the relative slope ``t`` of a density linear inside each node (density ``d (1 + t (x -
    x_node))``), from its neighbours' densities (mass / weight) by the monotonised central limiter of finite-volume
    schemes: the central difference, but at most twice either one-sided one and 0 where they disagree in sign (a
    mode, a hole), so the line never leaves the range of the neighbours' densities at the node's edges and stays
    non-negative. Nodes of no weight, the first and the last value node, and nodes where it or a neighbour holds
    less than ``floor`` (or nothing) are flat (``t = 0``): a thin node's slope would be its neighbours' noise."""
    out = np.zeros(mass.shape, dtype=np.float64)
    idx = np.flatnonzero(weights > 0)
    if idx.size < 3:
        return out
    x, d = centres[idx], mass[:, idx] / weights[idx]
    left = (d[:, 1:-1] - d[:, :-2]) / (x[1:-1] - x[:-2])
    right = (d[:, 2:] - d[:, 1:-1]) / (x[2:] - x[1:-1])
    central = (d[:, 2:] - d[:, :-2]) / (x[2:] - x[:-2])
    same = np.sign(left) == np.sign(right)
    s = np.where(same, np.sign(central) * np.minimum(np.abs(central), 2 * np.minimum(np.abs(left), np.abs(right))), 0.0)
    m = mass[:, idx]
    thick = (np.minimum(np.minimum(m[:, :-2], m[:, 2:]), m[:, 1:-1]) >= floor) & (m[:, 1:-1] > 0)
    out[:, idx[1:-1]] = np.where(thick, s / np.where(thick, d[:, 1:-1], 1.0), 0.0)
    return out


def split_mask(tree: NumericTree, level: int, mass: np.ndarray, threshold: float) -> np.ndarray:
    """``(groups, nodes of level)``: the nodes whose parent is split (estimate >= threshold, and
    more than one child)."""
    par = tree.parents(level)
    kids = np.bincount(par, minlength=mass.shape[-1])
    split = (mass > 0) & (mass >= threshold) & (kids[None, :] > 1)
    return split[:, par]


def shrink(noisy: np.ndarray, prior: np.ndarray, std: float) -> np.ndarray:
    """The positive-part James-Stein estimate of the true counts behind ``noisy`` (independent Gaussian noise of
    std ``std`` on each), shrunk toward ``prior`` (post-processing: released counts, a public std, a prior from
    released values): ``prior + lam (noisy - prior)`` with ``lam = max(0, 1 - (K - 2) std^2 / ||noisy - prior||^2)``
    for ``K`` > 2 counts (unchanged for fewer, or without noise). Where the counts differ from the prior by far
    more than the noise (an atom, a mode) ``lam`` is near 1 and they are kept; where the noise explains their
    spread (a smooth run of ages, an empty tail) they fall back to the prior. For ``K`` >= 3 its expected squared
    error is below the noisy counts' own, whatever the true counts (``docs/derivations.md``, "Tree levels")."""
    k = noisy.size
    if k <= 2 or std <= 0:
        return noisy
    r = noisy - prior
    ss = float(r @ r)
    lam = max(0.0, 1.0 - (k - 2) * std * std / ss) if ss > 0 else 0.0
    return prior + lam * r


def make_consistent(noisy: np.ndarray, mask: np.ndarray, spread_mass: np.ndarray, tree: NumericTree,
                    level: int, project, std: float) -> np.ndarray:
    """Node masses of ``level``: where measured (``mask``), the noisy children of each split parent shrunk
    toward the parent's mass spread by the leaf weights (:func:`shrink`, the noise std ``std``; a public bound's
    node, a value of its own that no spread predicts, is kept as measured where :func:`bound_kept` says so, else
    empty) and projected onto the counts summing to the parent's mass (``project(v, total)``); elsewhere the spread
    mass. Children of a parent are contiguous, so each split parent is one slice."""
    out = spread_mass.copy()
    par = tree.parents(level)
    starts = np.searchsorted(par, np.arange(par[-1] + 2))
    dense = np.ones(par.size, dtype=bool)
    bounds = tree.bound_nodes(level)
    dense[bounds] = False  # a bound's node is a value of its own: kept as measured, or empty
    empty = [i for i in bounds if not bound_kept(noisy[:, i], mask[:, i], std)]
    for g, p in zip(*np.nonzero(_split_parents(mask, par))):
        a, b = starts[p], starts[p + 1]
        prior, v, d = spread_mass[g, a:b], noisy[g, a:b].copy(), dense[a:b]
        v[d] = shrink(v[d], prior[d], std)
        v[[i - a for i in empty if a <= i < b]] = 0.0
        out[g, a:b] = project(v, float(prior.sum()))
    return out


def bound_kept(noisy: np.ndarray, measured: np.ndarray, std: float) -> bool:
    """Whether a public bound's node holds records: its noisy counts summed over the groups that measured it reach
    ``BOUND_SIGMAS`` stds of that sum, as a tail's cell must at the coarsest level (post-processing of released
    counts and the public std). Kept as measured whatever its size, an empty bound's node kept its positive noise:
    on a held-out table of 4,600 records (std 65 a count) 1.3 % of the ages released at the lower bound 0 and up to
    0.8 % of another column at its upper bound, where the data hold none (``docs/derivations.md``, "Bound nodes")."""
    if std <= 0:
        return True
    k = int(np.count_nonzero(measured))
    return k > 0 and float(noisy[measured].sum()) >= D.BOUND_SIGMAS * std * math.sqrt(k)


def _split_parents(mask: np.ndarray, par: np.ndarray) -> np.ndarray:
    """``(groups, parents)``: which parents have their children measured."""
    out = np.zeros((mask.shape[0], int(par[-1]) + 1), dtype=bool)
    g, i = np.nonzero(mask)
    out[g, par[i]] = True
    return out


def refine_levels(trees, top_mass, depths, threshold, measure, project, record=None) -> list:
    """Leaf masses ``(groups, n_cells)`` of every tree, from the released masses of its coarsest
    level ``top_mass`` down: at each level below, the children of every split node of the columns
    measured that deep (``depths``) are released together by ``measure(level, masks)`` (given for each
    column the ``(groups, nodes)`` mask of the nodes to measure; one Gaussian release per level, a
    :class:`~.copula_measure.Measurement` whose query ``("tree_level", level, nodes)`` names the
    ``(column, group, node)`` of each noisy count, or None when it measured nothing) and made consistent
    with their parent; every other node gets its parent's mass spread by the leaf weights. What is
    measured is decided from released masses and public quantities (post-processing); the noisy counts
    are placed by their query alone. ``record``: a list that gets every level's measurement, in order."""
    mass = [np.asarray(m, dtype=np.float64) for m in top_mass]
    for lev in range(1, max((t.depth for t in trees), default=1)):
        masks = {j: split_mask(t, lev, mass[j], threshold) for j, t in enumerate(trees) if lev < min(t.depth, depths[j])}
        measured = measure(lev, masks) if masks else None
        if record is not None and measured is not None:
            record.append(measured)
        placed = _by_column(measured, lev)
        for j, t in enumerate(trees):
            if lev >= t.depth:
                continue
            spread_mass = spread(mass[j], t, lev, threshold)
            if j in placed:
                (g, i), values = placed[j]
                noisy, got = np.zeros_like(spread_mass), np.zeros(spread_mass.shape, dtype=bool)
                noisy[g, i], got[g, i] = values, True
                mass[j] = make_consistent(noisy, got, spread_mass, t, lev, project, measured.noise_std)
            else:
                mass[j] = spread_mass
    return mass


def _by_column(measured, level: int) -> dict:
    """``{column: ((groups, nodes), noisy counts)}`` of one level's measurement, read from its query."""
    if measured is None:
        return {}
    name, lev, nodes = measured.query
    if (name, lev) != ("tree_level", level) or nodes.shape != (np.size(measured.noisy), 3):
        raise ValueError(f"a measurement of {measured.query[:2]} is not one of tree level {level}")
    rows = {j: nodes[:, 0] == j for j in np.unique(nodes[:, 0]).tolist()}
    return {j: ((nodes[r, 1], nodes[r, 2]), measured.noisy[r]) for j, r in rows.items()}


# ---- the graphical model ------------------------------------------------------------------------------
def level_counts(mech, a: int) -> np.ndarray:
    """Released one-way counts of attribute ``a``'s cells summed over the groups (post-processing: the
    estimated marginals times the released group sizes)."""
    return mech.class_sizes_ @ mech.marginals_[a]


def one_way_measurements(mech, attrs, stds) -> list:
    """The released one-way histograms as the model's first measurements: each feature's counts per group
    on its attribute cells (a numeric column's tree masses summed onto its cells), joint with the label
    when the histograms are per class, and the label's own counts otherwise; ``stds``: round 1's noise std of
    each histogram, in order. Post-processing of :func:`marginals_from_noisy`'s estimates (``mech.marginals_``,
    ``mech.class_sizes_``)."""
    from ...estimation.graphical import MarginalMeasurement

    sizes, k, label = mech.class_sizes_, len(mech.cells_), attrs.label
    out = []
    for a in range(len(attrs.sizes) - int(label is not None)):
        std, m = weight_std(stds[a]), mech.marginals_[a]
        if a < k:
            m = attrs.cell_counts(a, m)
        elif attrs.block_merges[a - k] is not None:  # summed onto the compressed cells
            cell = np.asarray(attrs.block_merges[a - k])
            m = np.stack([np.bincount(cell, weights=row, minlength=int(cell.max()) + 1) for row in m])
        table = m * sizes[:, None]  # (groups, cells)
        if table.shape[0] > 1:
            out.append(MarginalMeasurement((a, label), np.ascontiguousarray(table.T).ravel(), std))
        else:
            out.append(MarginalMeasurement((a,), table[0], std))
    if label is not None and mech.groups_ == 1:
        out.append(MarginalMeasurement((label,), mech.label_weights_ * mech.n_,
                                       weight_std(stds[len(attrs.sizes) - 1])))
    return out


def empty_tails(first: list, sizes, numeric: int, unordered=()) -> list:
    """The structural zeros of the model (post-processing): for each numeric attribute's one-way measurement
    (the first ``numeric`` of ``first``, :func:`one_way_measurements`), its empty tails in every group, ``(attrs,
    mask)``: the nodes whose released count is 0 beyond the group's last node with a count, or before its first.
    A numeric tree's coarsest cells below ``MODEL_NUMERIC_THRESHOLD`` noise stds in its tails are set to 0 so that
    a heavy tail's empty nodes keep no noise as mass (:func:`denoise` with ``tails``); without the zeros the model still gave each such node a share
    (census_income_kdd's capital gains: 22 records in each of its six empty nodes above 40,000, whose values the
    sampler then took from a node the histograms call empty). An empty node between two with counts is more
    likely a thin run below the threshold than a hole, and stays free: made zeros too, on a table of 4,178
    listings held out of every choice, they cost 0.008 of 2-way TVD (``docs/benchmarks.md``). The first
    ``unordered[j]`` nodes of attribute ``j`` (its missing values) are no part of its tails: a zero there only
    where its released count is 0."""
    out = []
    skip = list(unordered) + [0] * (numeric - len(unordered))
    for m, u in zip(first[:numeric], skip):
        filled = np.asarray(m.values).reshape(sizes[m.attrs[0]], -1) != 0  # (nodes, groups)
        node = np.arange(filled.shape[0])[:, None]
        last = np.where(filled[u:], node[u:], -1).max(axis=0, initial=-1)  # -1 (all empty): every node a tail
        lowest = np.where(filled[u:], node[u:], filled.shape[0]).min(axis=0, initial=filled.shape[0])
        tail = ((node > last) | (node < lowest)) & ((node >= u) | ~filled)  # empty by construction
        out.append((m.attrs, tail.reshape([sizes[a] for a in m.attrs])))
    return out


def weight_std(std: float) -> float:
    """A measurement's std as the model weighs it: the noiseless test mode (std 0) weighs every measurement 1."""
    return float(std) if std > 0 else 1.0


class ModelFit:
    """The graphical model fitted to every measurement so far (post-processing): the estimation side of the
    model's rounds. ``record`` adds a released :class:`~.copula_measure.Measurement`; ``estimate`` returns the
    current model's counts of every candidate, refitting the model (warm-started) every ``batch`` measurements;
    ``open_`` the candidates that overlap none measured since the last refit, less those ``fits`` has refused on the
    model's current graph; ``fits(r)`` whether candidate ``r`` keeps the model within ``MAX_MODEL_CELLS`` (public: a
    function of the plan and the measured set).

    ``batch`` is 1 (a refit after every measurement) unless the rounds outnumber ``EVERY_ROUND_REFITS`` (then
    ``WIDE_REFITS`` refits: the cost of a wide table's refits, in :mod:`.copula_defaults`). Scored against
    a model a few measurements old, the last rounds measured pairs whose joint effect no round was left to see:
    on census_income_kdd (41 rounds) a pair measured in the last round of a batch of five left two independent
    columns 0.13 apart in TVD (2-way TVD 0.0577 on that seed); refitted after every round, its 2-way TVD fell from
    0.0486 to 0.0466 (6 seeds)."""

    def __init__(self, plan, first: list, n: int, gen: np.random.Generator, zeros=()):
        from ...estimation import graphical as G

        self._g, self.plan, self.n, self.gen = G, plan, float(n), gen
        self.sizes = tuple(int(s) for s in plan.attributes.sizes)
        self.measurements, self.zeros = list(first), list(zeros)
        self.model, self._cached, self._fresh, self._inside = None, None, [], None
        # the sizes of candidates on the model's current graph; the candidates refused on each graph
        self._sizer, self._refused = None, {}
        T = int(plan.rounds)
        self.batch = 1 if T <= D.EVERY_ROUND_REFITS else -(-T // D.WIDE_REFITS)  # rounds between two refits
        refits = -(-T // self.batch)
        self.iters = max(1, min(D.ROUND_ITERS, D.REFIT_ITERS // max(1, refits)))  # iterations of each refit
        # records drawn to score the candidates no clique holds: their counting work bounded (SCORE_WORK)
        self.scoring = int(max(1, min(self.n, D.SCORE_RECORDS, D.SCORE_WORK // max(1, len(plan.pairs)))))

    def record(self, r: int, measurement) -> None:
        self.measurements.append(self._g.MarginalMeasurement(tuple(measurement.query[1]), measurement.noisy,
                                                             weight_std(measurement.noise_std)))
        self._fresh.append(self.plan.pairs[r])
        self._sizer = None

    def fit(self, iters: int):
        self.model = self._g.fit_model(self.sizes, self.measurements, self.n, iters=iters, warm=self.model,
                                    zeros=self.zeros)
        self._fresh, self._cached, self._sizer = [], None, None
        return self.model

    def estimate(self) -> list:
        if self.model is None or len(self._fresh) >= self.batch:
            self.fit(self.iters)
        if self._cached is None:
            self._cached = self._counts()
        return self._cached

    def open_(self) -> np.ndarray:
        """The candidates a round may offer: none overlapping a candidate measured since the last refit (one inside
        the other, from the candidates' and the fresh sets' attribute indicators), and none that :meth:`fits` has
        refused on the model's current graph (its answer there is already known: leaving it out of the draw
        leaves the exponential mechanism over the candidates that fit as it was, see
        :func:`~.copula_measure.model_rounds`)."""
        ok = np.ones(len(self.plan.pairs), dtype=bool)
        ok[list(self._refused.get(self._sized().edges, ()))] = False
        if not self._fresh:
            return ok
        C = self._indicators()
        F = np.zeros((len(self._fresh), len(self.sizes)))
        for i, f in enumerate(self._fresh):
            F[i, list(f)] = 1.0
        shared = C @ F.T  # attributes a candidate and a fresh set share
        inside = shared == C.sum(axis=1)[:, None]  # every attribute of the candidate in the fresh set
        holds = shared == F.sum(axis=1)[None, :]   # every attribute of the fresh set in the candidate
        return ok & ~(inside | holds).any(axis=1)

    def _counts(self) -> list:
        """Every candidate's counts under the current model: exact for a candidate inside one of its cliques
        (a sum of the clique's marginal), else from ``scoring`` records drawn from the model and scaled to n
        (exact inference onto a pair no clique holds costs a product along the junction tree, for each of
        thousands of candidates, every refit)."""
        inside = self._inside_cliques()
        rest = [c for c, ok in zip(self.plan.pairs, inside) if not ok]
        if rest:
            m = self.scoring
            drawn = iter(c * (self.n / m) for c in pair_counts(self.model.sample(m, self.gen), self.sizes, rest))
        return [np.asarray(self.model.project(c)).ravel() if ok else next(drawn) for c, ok in zip(self.plan.pairs, inside)]

    def _inside_cliques(self) -> np.ndarray:
        """Which candidates lie inside one of the model's cliques (a candidate's attributes outside a clique:
        ``C (1 - Q)^T``, with ``C`` and ``Q`` the candidates' and cliques' attribute indicators)."""
        q = np.ones((len(self.model.cliques), len(self.sizes)))
        for i, c in enumerate(self.model.cliques):
            q[i, list(c)] = 0.0
        return ((self._indicators() @ q.T) == 0).any(axis=1)

    def _indicators(self) -> np.ndarray:
        """``(candidates, attributes)``: 1 where a candidate holds an attribute (made once: the plan is fixed)."""
        if self._inside is None:
            self._inside = np.zeros((len(self.plan.pairs), len(self.sizes)))
            for i, c in enumerate(self.plan.pairs):
                self._inside[i, list(c)] = 1.0
        return self._inside

    def fits(self, r: int) -> bool:
        """Whether candidate ``r`` keeps the model's junction tree within ``MAX_MODEL_CELLS``: the tree the next refit
        builds, from the measured sets, the current model's cliques (a warm start carries them) and the candidate.
        Counting the measured sets alone let the carried cliques merge past the bound: census_income_kdd's final
        model held 867,140 cells against 2 ** 18 on one seed (44 s of CPU; with them counted, 13 s).

        The answer depends on the graph those cliques draw (which attributes share one) and the candidate alone, so
        a refusal is remembered while the graph stays as it was: a model at its bound keeps its graph for many
        rounds, and each refusal was a junction tree built again (the 101-column table: 4,652 trees, 1,742 of them
        distinct, 8.8 of its 23 s)."""
        sizer = self._sized()
        if r in self._refused.get(sizer.edges, ()):
            return False
        ok = sizer.cells_with(self.plan.pairs[r]) <= D.MAX_MODEL_CELLS
        if not ok:
            self._refused.setdefault(sizer.edges, set()).add(r)
        return ok

    def _sized(self):
        """The size test's state on the model's current graph (the measured sets and the current model's cliques),
        made again after each measurement and each refit; its ``edges`` name the graph."""
        if self._sizer is None:
            carried = list(self.model.cliques) if self.model is not None else []
            self._sizer = self._g.ModelSizer(self.sizes, [m.attrs for m in self.measurements] + carried)
        return self._sizer

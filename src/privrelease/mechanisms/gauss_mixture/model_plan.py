"""gauss-copula's plan of the graphical model: its attributes, candidates, rounds and budget, from public facts only.

The attributes (:class:`~.copula_plan.Attributes`: numeric columns' coarse nodes,
categorical columns, the label), each numeric column on the grid of its public tree with the most nodes up to
``MODEL_NODE_CELLS`` (:func:`model_grid`); the candidates, rounds and the :class:`~.copula_plan.CopulaBudget` follow
from the schema, n and (epsilon, delta). Nothing here reads a record or draws noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...dp.calibration import calibrate_rho
from . import copula_defaults as D
from .copula_plan import Attributes, CopulaBudget


def model_budget(epsilon: float, delta: float, mode: str, plan) -> CopulaBudget:
    """The budget of a release whose dependence is the graphical model (``plan``: a :class:`ModelPlan`): ``rho``
    is the largest total whose release (the Gaussian histograms and measurements, plus ``plan.rounds``
    exponential mechanisms of ``sqrt(8 rho_select / rounds)`` each) is ``(epsilon, delta)``-DP; the rounds get
    ``plan.share`` of it (``SELECT_FRACTION`` of that on the selections), the histograms the rest."""
    common = {"epsilon": float(epsilon), "delta": float(delta), "accounting": mode, "marginal_share": 1.0 - plan.share,
              "pair_share": plan.share, "select_fraction": D.SELECT_FRACTION, "pair_rounds": plan.rounds,
              "rho_mixture": 0.0, "epsilon_mixture": 0.0, "mixture": False}
    if math.isinf(epsilon):
        return CopulaBudget(rho=math.inf, rho_marginals=math.inf, rho_pairs_measure=math.inf,
                            rho_pairs_select=math.inf, **common)
    rho, rho_select, rho_measure = _model_rho(epsilon, delta, mode, plan.share, plan.rounds)
    return CopulaBudget(rho=rho, rho_marginals=rho - rho_select - rho_measure, rho_pairs_measure=rho_measure,
                        rho_pairs_select=rho_select, **common)



def _model_rho(epsilon: float, delta: float, mode: str, share: float, rounds: int) -> tuple[float, float, float]:
    """``(rho, rho_select, rho_measure)``: the total calibrated for ``rounds`` selections, and the rounds'
    ``share`` of it split between the selections (``SELECT_FRACTION``) and the measurements."""
    sel = share * D.SELECT_FRACTION
    rho = calibrate_rho(epsilon, delta, mode, sel, rounds)
    return rho, sel * rho, share * (1.0 - D.SELECT_FRACTION) * rho


@dataclass(frozen=True)
class ModelPlan:
    """Public plan of the graphical model: its attributes (numeric columns' coarse nodes, categorical
    columns, the label), the candidate marginals its rounds choose from (``pairs``: tuples of attribute
    indices, ascending), the number of rounds and the model's share of rho."""

    attributes: Attributes
    pairs: tuple
    rounds: int
    share: float


def cells_of(sizes, attrs) -> int:
    return int(np.prod([sizes[a] for a in attrs], dtype=np.int64))


def model_candidates(sizes, label) -> tuple:
    """The candidates (public: the schema's sizes): every pair of features, every feature with the label, and
    every pair of features with the label, each of at most ``MAX_PAIR_CELLS`` cells; the triples are left out,
    largest first, while all candidates together would hold more than ``MAX_CANDIDATE_TOTAL`` cells."""
    feats = [a for a in range(len(sizes)) if a != label]
    pairs = [(a, b) for i, a in enumerate(feats) for b in feats[i + 1:] if sizes[a] * sizes[b] <= D.MAX_PAIR_CELLS]
    if label is None:
        return tuple(pairs)
    ones = [(a, label) for a in feats if sizes[a] * sizes[label] <= D.MAX_PAIR_CELLS]
    triples = sorted((pr + (label,) for pr in pairs if cells_of(sizes, pr + (label,)) <= D.MAX_PAIR_CELLS),
                     key=lambda t: cells_of(sizes, t))
    total = sum(cells_of(sizes, c) for c in pairs + ones)
    keep = []
    for t in triples:
        total += cells_of(sizes, t)
        if total > D.MAX_CANDIDATE_TOTAL:
            break
        keep.append(t)
    return tuple(pairs + ones + sorted(keep))


def model_grid(tree) -> None:
    """Give ``tree`` the node grid (:meth:`~.copula_tree.NumericTree.set_grid_parts`) whose finest grid with at
    most ``MODEL_NODE_CELLS`` value nodes has the most (public geometry: a deep tree's coarsest level may hold
    only a few nodes, cut here into equal runs of children)."""
    cap = D.MODEL_NODE_CELLS + int(tree.missing)
    best, best_nodes = 1, -1
    for parts in (1, 2, 4, 8):
        if parts > 1 and (parts >= tree.branching or tree.branching % parts):
            continue
        tree.set_grid_parts(parts)
        nodes = int(tree.grids[tree.level_of(cap)].size - 1)
        if best_nodes < nodes <= cap:
            best, best_nodes = parts, nodes
    tree.set_grid_parts(best)


def plan_rounds(sizes, candidates, n: int, epsilon: float, delta: float, share: float) -> int:
    """The number of the model's rounds, from public facts (the schema's sizes, n, epsilon, delta): as many as
    keep the typical candidate's expected L1 noise (its cells the geometric mean of the candidates'), as a share of
    the table (``sqrt(2 / pi) sigma_T cells / 2n``,
    ``sigma_T = sqrt(T / rho_measure)`` at ``T`` equal rounds), at most ``ROUND_NOISE_TVD``; at least
    ``MODEL_ROUNDS_PER_ATTRIBUTE`` and at most ``MAX_ROUNDS_PER_ATTRIBUTE`` per attribute, and no more than
    the candidates. ``rho_measure`` is the zCDP calibration's (the same in either accounting up to the
    selections' composition: only the count depends on it)."""
    d = len(sizes)
    low = max(1, round(D.MODEL_ROUNDS_PER_ATTRIBUTE * d))
    if not math.isfinite(epsilon) or D.ROUND_NOISE_TVD <= 0:
        return low
    rho_measure = _model_rho(epsilon, delta, "zcdp", share, d)[2]
    cells = float(np.exp(np.mean(np.log([cells_of(sizes, c) for c in candidates]))))
    most = rho_measure * (D.ROUND_NOISE_TVD * 2.0 * n / (math.sqrt(2.0 / math.pi) * cells)) ** 2
    return int(max(low, min(math.floor(most), round(D.MAX_ROUNDS_PER_ATTRIBUTE * d), len(candidates))))


def plan_model(domain, trees, n_classes: int, n: int, epsilon: float, delta: float, share=None) -> ModelPlan | None:
    """The graphical model's public plan, or None when the table keeps the mixture (fewer than two
    attributes, or no candidate)."""
    k = len(trees)
    for t in trees:
        model_grid(t)
    attrs = Attributes(domain.p, tuple(domain.numeric[:k]), tuple(trees), tuple(domain.blocks), int(n_classes or 0),
                       D.MODEL_NODE_CELLS)
    sizes = attrs.sizes
    if len(sizes) < 2:
        return None
    cands = model_candidates(sizes, attrs.label)
    if not cands:
        return None
    share = float(D.MODEL_SHARE if share is None else share)
    return ModelPlan(attrs, cands, plan_rounds(sizes, cands, n, epsilon, delta, share), share)


def mass_cuts(tree, mass: np.ndarray, cells: int, allowed=None) -> tuple | None:
    """A numeric column's cells in the model cut from its released leaf masses ``mass`` (summed over the groups):
    at most ``cells`` runs of the units between consecutive ``allowed`` leaf boundaries (every leaf when None), the
    missing leaf a cell of its own, each run holding about an equal share of a blend of the released mass and the
    public width (``CUT_WIDTH_WEIGHT`` of the width to one of the mass): with weight ``lam``, no run holds much more
    than ``(1 + lam) / cells`` of the records nor spans much more than ``(1 + lam) / (lam cells)`` of the range, so
    the runs are fine where the records are and the range's empty stretches still get cells of their own (their
    structural zeros: :func:`~.copula_estimate.empty_tails`).

    A unit holding at least an equal share of what the others leave (an atom: a zero of spending, 40 hours a week)
    is a run of its own (found by fixed point: each such unit lowers the others' share); the rest is cut greedily
    from the lowest unit, each run taking the remaining light share over the remaining light runs and ending where
    it is nearest that share, never across an atom. Returns the leaf where each run starts, then the leaf count
    (:meth:`~.copula_plan.Attributes.starts`); None when the column has no released mass. Post-processing of
    released values and public geometry."""
    off = int(tree.missing)
    edges = np.arange(off, tree.n_cells + 1) if allowed is None else np.asarray(allowed, dtype=np.int64)
    edges = np.unique(np.concatenate([[off, tree.n_cells], edges[edges >= off]]))
    v = np.maximum(np.add.reduceat(np.asarray(mass, dtype=np.float64), edges[:-1]), 0.0)
    total, L = float(v.sum()), v.size
    if total <= 0:
        return None
    w = np.add.reduceat(np.asarray(tree.weights, dtype=np.float64), edges[:-1])
    if D.CUT_WIDTH_WEIGHT > 0 and w.sum() > 0:  # the blend of released mass and public width the runs share
        v = v + D.CUT_WIDTH_WEIGHT * total * w / w.sum()
        total = float(v.sum())
    tiny = total * 1e-12
    heavy = np.zeros(L, dtype=bool)
    while cells - heavy.sum() > 0:
        new = ~heavy & (v >= max((total - v[heavy].sum()) / (cells - heavy.sum()), tiny))
        if not new.any():
            break
        heavy |= new
    light = np.concatenate([[0.0], np.cumsum(np.where(heavy, 0.0, v))])  # light[i]: light mass before unit i
    after = np.concatenate([np.cumsum(heavy[::-1])[::-1], [0]])            # after[i]: atoms at or after unit i
    nxt = np.concatenate([np.where(heavy, np.arange(L), L), [L]])
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]                            # nxt[i]: first atom at or after i
    atoms = np.concatenate([np.cumsum(np.where(heavy, v, 0.0)[::-1])[::-1], [0.0]])  # atoms[i]: their mass from i
    bounds, start, left = [0], 0, int(cells)
    while start < L and left > 1:
        h = int(nxt[start])
        if h == start:
            e = start + 1
        elif light[h] - light[start] <= tiny:  # nothing between here and the next atom (or the end)
            e = h + 1
        else:
            k = left - int(after[start])
            share = (light[L] - light[start]) / max(k, 1)
            e = h if k <= 1 else int(np.searchsorted(light, light[start] + share, side="left"))
            e = min(max(e, start + 1), h)
            if e - 1 > start and abs(light[e - 1] - light[start] - share) < abs(light[e] - light[start] - share):
                e -= 1
        if e >= L or light[L] - light[e] + atoms[e] <= tiny:  # the rest is empty: one run
            break
        bounds.append(e)
        start, left = e, left - 1
    bounds.append(L)
    return tuple([0] * off + edges[bounds].tolist())


def measured_edges(tree, grid: int, j: int, rounds) -> np.ndarray:
    """The leaf boundaries of numeric column ``j``'s nodes whose masses were released (public geometry and the
    released measurement plan): its tree's coarsest level, the model's public ``grid`` (an index into
    :attr:`~.copula_tree.NumericTree.grids`), and every node a finer round measured, in any group (``rounds``: per
    finer round, its level and the ``(column, group, node)`` of each released count). A cell edge elsewhere would
    split a node whose mass was only spread from its parent."""
    out = [tree.levels[0], tree.grids[grid]]
    for level, nodes in rounds:
        ids = np.unique(np.asarray(nodes)[np.asarray(nodes)[:, 0] == j, 2])
        if ids.size:  # a deeper round than this tree's measured no node of it
            out += [tree.levels[level][ids], tree.levels[level][ids + 1]]
    return np.unique(np.concatenate(out))


def compress_plan(plan: ModelPlan, totals: list, floor, masses=(), rounds=()) -> ModelPlan:
    """The plan on cells made from the released one-way histograms (post-processing):

    * numeric columns (``masses``: each one's released leaf counts summed over the groups): their cells cut by
      :func:`mass_cuts` into as many runs as the public grid has nodes (the sizes, and so the plan's rounds, kept)
      of the nodes whose masses were released (:func:`measured_edges`; ``rounds``: the finer rounds' nodes),
      of about equal shares of released mass and width, in place of the grid's equal-width nodes, so that the cells
      lie where the records are (a drafted range far wider than the values, two near-identical measurements);
    * categorical blocks (MST's domain compression): the levels whose count in ``totals`` (one array per block, summed
      over the groups) is below ``floor`` (one for every block, or one per block) become one cell when there are two or more of them, so the rounds'
      candidates hold far fewer cells whose noise would outweigh their counts, and a large code's levels that matter
      are measured with their groups.

    The candidates are those of the new sizes (:func:`model_candidates`); the rounds and the share unchanged."""
    merges = []
    floors = np.broadcast_to(np.asarray(floor, dtype=np.float64), (len(totals),))
    for t, f in zip(totals, floors):
        t = np.asarray(t, dtype=np.float64)
        rare = t < f
        if rare.sum() < 2:
            merges.append(None)
            continue
        cell = np.cumsum(~rare) - 1
        cell[rare] = int((~rare).sum())
        merges.append(tuple(int(c) for c in cell))
    attrs = plan.attributes
    cuts = tuple(mass_cuts(t, m, attrs.sizes[j] - int(t.missing), measured_edges(t, attrs.levels[j], j, rounds))
                 for j, (t, m) in enumerate(zip(attrs.trees, masses)))
    if all(m is None for m in merges) and all(c is None for c in cuts):
        return plan
    attrs = replace(attrs, merges=tuple(merges), cuts=cuts)
    return replace(plan, attributes=attrs, pairs=model_candidates(attrs.sizes, attrs.label))

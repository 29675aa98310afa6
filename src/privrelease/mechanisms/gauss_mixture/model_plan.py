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
    keep the median candidate's expected L1 noise, as a share of the table (``sqrt(2 / pi) sigma_T cells / 2n``,
    ``sigma_T = sqrt(T / rho_measure)`` at ``T`` equal rounds), at most ``ROUND_NOISE_TVD``; at least
    ``MODEL_ROUNDS_PER_ATTRIBUTE`` and at most ``MAX_ROUNDS_PER_ATTRIBUTE`` per attribute, and no more than
    the candidates. ``rho_measure`` is the zCDP calibration's (the same in either accounting up to the
    selections' composition: only the count depends on it)."""
    d = len(sizes)
    low = max(1, round(D.MODEL_ROUNDS_PER_ATTRIBUTE * d))
    if not math.isfinite(epsilon) or D.ROUND_NOISE_TVD <= 0:
        return low
    rho_measure = _model_rho(epsilon, delta, "zcdp", share, d)[2]
    cells = float(np.median([cells_of(sizes, c) for c in candidates]))
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


def compress_plan(plan: ModelPlan, totals: list, floor: float) -> ModelPlan:
    """The plan on compressed categorical domains (MST's domain compression): in each categorical block, the
    levels whose count in ``totals`` (one array per block: the released histograms' counts summed over the
    groups) is below ``floor`` become one cell when there are two or more of them; the candidates are those of
    the compressed sizes (:func:`model_candidates`), the rounds and the share unchanged. Post-processing of the
    released histograms: the rounds' candidates then hold far fewer cells whose noise would outweigh their
    counts, and a large code's levels that matter are measured with their groups."""
    merges = []
    for t in totals:
        t = np.asarray(t, dtype=np.float64)
        rare = t < floor
        if rare.sum() < 2:
            merges.append(None)
            continue
        cell = np.cumsum(~rare) - 1
        cell[rare] = int((~rare).sum())
        merges.append(tuple(int(c) for c in cell))
    if all(m is None for m in merges):
        return plan
    attrs = replace(plan.attributes, merges=tuple(merges))
    return replace(plan, attributes=attrs, pairs=model_candidates(attrs.sizes, attrs.label))

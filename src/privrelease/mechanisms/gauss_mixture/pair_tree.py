"""gauss-copula's pair tree: a spanning tree of two-way marginals, chosen privately, measured, and
honoured when the release's categorical columns and numeric nodes are decoded.

The copula decodes each categorical column (and each numeric column's coarse node) on its own, from
the mixture's latent scores and the column's DP quotas, so two columns that nearly determine each
other (a detailed code and its major group, relationship and marital status) keep only the part of
their relation the linear mixture holds. The tree stage measures such relations directly:

1. one more pass counts every candidate pair of *tree attributes* exactly (the categorical columns
   and the numeric columns that enter the mixture as node blocks, on the same coarse nodes;
   :class:`~.pairs.PairCounter`, on every engine);
2. ``T`` rounds (at most one fewer than the attributes) of the pair stage's private selection and
   measurement (:func:`~.pairs.select_and_measure`: exponential mechanism on the L1 distance between
   each pair's exact counts and the copula's own, Gaussian mechanism on the chosen counts), restricted as
   Kruskal's algorithm restricts a maximum spanning tree: a candidate whose two attributes are
   already joined is not offered (the restriction depends on earlier choices only, which are public);
3. post-processing (:mod:`privrelease.estimation.tables`): each measured table is projected onto the
   released one-way marginals of its two attributes, mixed with a little of the copula's own table and
   split per class of the label by raking to the classes' released marginals;
4. sampling: the mixture draws every record's latent scores as before; along the tree (from a root,
   breadth first) each attribute is decoded by quotas within every (class, parent level) group from
   the conditional of its measured table, the records taking its levels by their latent scores
   (:func:`~.quotas.quota_assign_groups`), so the measured pairs hold up to their noise and every other
   relation still comes from the mixture. A root is decoded as without the tree;
5. halved nodes: where the stage's noise yardstick with them is at most ``HALF_MAX_NOISE``, every
   node of a numeric column's measured levels is cut in two for the tree and the mixture's node
   blocks (public geometry; the one-way measurements are unchanged);
6. second parents, where the stage's noise yardstick with them is at most ``SECOND_MAX_NOISE``:
   ``round(SECOND_PARENTS T)`` more rounds, once the tree is complete, offer the pairs whose later
   attribute (in the tree's decoding order) has no second parent yet, scored against the tree model's
   own counts; a child with two measured parents is decoded within (class, parent, second parent)
   groups, its quotas from both conditionals (:func:`joint_quotas`). Chosen on census_small and
   census_income_kdd (``docs/results/mixed-pairs.md``, "Second parents").

Privacy: the same selection and measurement as the pair stage (``docs/derivations.md``); the tree
restriction, the estimation and the decoding read released values only.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from ...dp.calibration import calibrate_rho
from ...estimation import class_tables, fitted_table
from .copula_parts import coarse_plan
from .quotas import quota_assign_groups
from . import pairs as pair_stage
from . import copula_defaults as D
from .pairs import (Attributes, PairPlan, candidates, count_pairs, n_nodes,
                    pair_counts, pair_level, select_and_measure)



def tree_attributes(domain, trees, coarse) -> tuple:
    """Indices (in :class:`~.pairs.Attributes` order: numeric columns, then categorical blocks) of the
    attributes the tree can decode: every categorical column, and each numeric column whose node block
    in the mixture (``coarse``) sits at its pair level (public)."""
    k = len(trees)
    num = tuple(j for j, t in enumerate(trees)
                if coarse.block(j) is not None and coarse.levels[j] == pair_level(t) and n_nodes(t, pair_level(t)) >= 2)
    return num + tuple(k + b for b in range(len(domain.blocks)))


def tree_noise(plan: PairPlan, n: int, epsilon: float, delta: float, mode: str) -> float:
    """Expected total variation that a measurement's noise alone puts on a candidate pair, averaged
    over the candidates: ``sqrt(2 / pi) sigma cells / (2 n)``, with ``sigma`` the measurement std of
    ``plan.rounds`` rounds (public: the plan, n and the budget)."""
    if math.isinf(epsilon):
        return 0.0
    rho = calibrate_rho(epsilon, delta, mode) * plan.share * (1.0 - D.SELECT_FRACTION)
    sigma = math.sqrt(plan.rounds / rho)
    sizes = plan.attributes.sizes
    cells = np.mean([sizes[a] * sizes[b] for a, b in plan.pairs])
    return math.sqrt(2.0 / math.pi) * sigma * float(cells) / (2.0 * n)


def plan_tree(domain, trees, coarse, n: int, n_classes: int, epsilon: float, delta: float, mode: str, rounds,
              share: float):
    """The tree stage's public plan (a :class:`~.pairs.PairPlan`), or None when
    fewer than two attributes can be decoded along a tree, or, with ``rounds="auto"``, when the
    measurements would be mostly noise (:func:`tree_noise` above ``TREE_MAX_NOISE``)."""
    if rounds == 0:
        return None
    k = len(trees)
    attrs = Attributes(domain.p, tuple(domain.numeric[:k]), tuple(trees), tuple(domain.blocks), int(n_classes or 0))
    usable = set(tree_attributes(domain, trees, coarse))
    pairs = tuple(pr for pr in candidates(attrs.sizes) if pr[0] in usable and pr[1] in usable)
    if len(usable) < 2 or not pairs:
        return None
    most = len(usable) - 1
    plan = PairPlan(attrs, pairs, most if rounds == "auto" else min(int(rounds), most), float(share))
    if rounds == "auto" and tree_noise(plan, n, epsilon, delta, mode) > D.TREE_MAX_NOISE:
        return None
    extra = int(round(D.SECOND_PARENTS * most))
    if rounds == "auto" and extra > 0:  # second parents where the measurements stay precise
        wider = PairPlan(attrs, pairs, most + extra, float(share))
        if tree_noise(wider, n, epsilon, delta, mode) <= D.SECOND_MAX_NOISE:
            plan = wider
    return plan


def plan_pair_stage(mech, n_classes: int, epsilon: float, delta: float, mode: str):
    """The pair tree of a gauss-copula ``mech`` (after its trees and n are set), from public
    quantities only; None when off."""
    share = D.TREE_PAIR_SHARE if mech.pair_share == "auto" else float(mech.pair_share)

    def tree_plan():
        coarse = coarse_plan(mech.domain_, mech.cells_, int(mech.coarse_cells))
        return plan_tree(mech.domain_, mech.cells_, coarse, mech.n_, n_classes, epsilon, delta, mode,
                         mech.pair_rounds, share)
    plan = tree_plan()
    if plan is not None and mech.pair_rounds == "auto" and D.HALF_MAX_NOISE > 0:  # halved nodes where precise
        parts = [t.grid_parts for t in mech.cells_]
        for t in mech.cells_:
            t.set_grid_parts(D.HALVED_PARTS)
        half = tree_plan()
        if half is not None and tree_noise(half, mech.n_, epsilon, delta, mode) <= D.HALF_MAX_NOISE:
            return half
        for t, k in zip(mech.cells_, parts):
            t.set_grid_parts(k)
    return plan


@dataclass(frozen=True)
class PairTree:
    """The fitted tree: attributes in decoding order, each with its parent (-1: a root) and, for a
    child, its conditionals ``P(level | class, parent level)`` (``(G, parent cells, cells)``)."""

    order: tuple
    parents: tuple
    conditionals: tuple
    seconds: tuple = ()   # per position: (second parent, its conditionals) or None

    def decode(self, mech, Z: np.ndarray, g: np.ndarray, gen) -> dict:
        """Codes of every tree attribute for latent rows ``Z`` of classes ``g``: ``{attribute: codes}``."""
        codes = {}
        seconds = self.seconds or (None,) * len(self.order)
        for a, parent, cond, second in zip(self.order, self.parents, self.conditionals, seconds):
            lo, hi = attribute_block(mech, a)
            S = Z[:, lo:hi]
            if second is not None:  # (class, parent, second parent) groups, quotas from both measured pairs
                q, cond_q = second
                marg = class_counts(mech, a)
                P, Q = cond.shape[1], cond_q.shape[1]
                freqs = np.zeros((mech.groups_ * P * Q, S.shape[1]))
                for c in range(mech.groups_):
                    rows = np.flatnonzero(g == c)
                    T = joint_quotas(codes[parent][rows], codes[q][rows], cond[c], cond_q[c], marg[c])
                    freqs[c * P * Q:(c + 1) * P * Q] = T.reshape(P * Q, -1)
                key = (g * P + codes[parent]) * Q + codes[q]
                out = quota_assign_groups(S, key, freqs, gen)
            elif parent < 0:  # a root: the copula's per-class quotas
                out = quota_assign_groups(S, g, class_counts(mech, a), gen)
            else:  # (class, parent level) groups, each decoded by its quotas
                out = quota_assign_groups(S, g * cond.shape[1] + codes[parent], cond.reshape(-1, cond.shape[2]), gen)
            codes[a] = out
        return codes


def joint_quotas(cp, cq, cond_p, cond_q, marg, sweeps: int = 20) -> np.ndarray:
    """``(parent levels, second parent levels, levels)`` quotas of a child with two measured parents
    for records whose parents' codes are ``cp`` and ``cq``: the product of the two conditionals over
    the child's marginal, raked so that each (parent, second parent) group keeps its records and the
    groups of each parent meet that parent's conditional (post-processing)."""
    P, Q = cond_p.shape[0], cond_q.shape[0]
    N = np.bincount(cp * Q + cq, minlength=P * Q).reshape(P, Q).astype(np.float64)
    m = np.asarray(marg, dtype=np.float64)
    m = m / max(m.sum(), 1e-300)
    T = cond_p[:, None, :] * cond_q[None, :, :] / np.maximum(m, 1e-12)[None, None, :] + 1e-12
    T *= (N / T.sum(axis=2))[:, :, None]
    tp = N.sum(axis=1)[:, None] * cond_p   # (P, levels)
    tq = N.sum(axis=0)[:, None] * cond_q   # (Q, levels)
    for i in range(sweeps):  # the second parent's table first, so that the sweeps end on the groups
        if i < sweeps // 2:  # and the first parent's conditional (both always attainable together)
            T *= (tq / np.maximum(T.sum(axis=0), 1e-300))[None, :, :]
        T *= (tp / np.maximum(T.sum(axis=1), 1e-300))[:, None, :]
        T *= (N / np.maximum(T.sum(axis=2), 1e-300))[:, :, None]
    return T


def attribute_block(mech, a: int) -> tuple:
    """The latent columns of attribute ``a``: a numeric column's node block, or a categorical block."""
    k = len(mech.cells_)
    return mech.coarse_.block(a) if a < k else mech.domain_.blocks[a - k]


def class_counts(mech, a: int) -> np.ndarray:
    """Released one-way counts of attribute ``a`` per group (``(G, cells)``): its DP marginal (a
    numeric column's leaf masses summed to its pair level) times the group's released size."""
    k, n = len(mech.cells_), mech.n_
    sizes = np.asarray(mech.label_weights_) * n if (mech.groups_ > 1 and mech.label_weights_ is not None) \
        else np.array([float(n)])
    marg = mech.cells_[a].grid_counts(mech.marginals_[a], pair_level(mech.cells_[a])) if a < k \
        else mech.marginals_[a]
    marg = np.asarray(marg, dtype=np.float64)
    marg = marg / np.maximum(marg.sum(axis=1, keepdims=True), 1e-300)
    return marg * sizes[:, None]


def model_counts(mech, plan: PairPlan, tree=None) -> list:
    """The copula model's counts of every candidate (post-processing: a sample of the fitted model,
    decoded along ``tree`` if given, scaled to n), the estimate the selection scores against."""
    attrs, n = plan.attributes, mech.n_
    m = int(max(1, min(n, D.PRIOR_RECORDS, D.PRIOR_VALUES // max(len(attrs.sizes), 1))))
    X, y = mech._sample_copula(m, tree)
    return [c * (n / m) for c in pair_counts(attrs.codes(X, y), attrs.sizes, plan.pairs)]


def fit_tree(mech, passes, plan: PairPlan, rho_measure: float, rho_select: float) -> None:
    """The tree stage of ``mech`` (a fitted :class:`GaussCopula`): one counting pass, the private
    rounds, the fitted :class:`PairTree` (``mech.pair_tree_``) and ``mech.pairs_measured_``.

    Notes
    -----
    The selections and measurements are those of :func:`~.pairs.select_and_measure` (its Notes give
    the sensitivities, noise and accounting); offering only the candidates that join two parts of the tree is a choice
    made from earlier outputs, and the estimate scored against (the copula's own counts) is
    post-processing of the released model, fixed before the rounds. The score is the L1 distance
    alone, without AIM's expected-noise term: every round adds an edge whatever the scores, and the
    term steered the tree away from the large tables of detailed codes and their groups, the pairs
    the copula fits worst (census_income_kdd, 3 seeds: 2-way TVD 0.0575 with it, 0.0545 without).
    """
    exact = count_pairs(passes, plan, mech.n_)
    model = model_counts(mech, plan)
    chosen, noisy, n_tree = tree_rounds(mech, exact, plan, rho_measure, rho_select, model)
    mech.pair_tree_ = orient(mech, plan, [(r, noisy[r], model[r]) for r in chosen], n_tree)
    mech.pairs_measured_ = [plan.pairs[r] for r in chosen]
    mech.sensitivities_.update({"pairs_score_linf": pair_stage.SCORE_SENSITIVITY,
                                "pairs_l2": pair_stage.MEASURE_SENSITIVITY})


def tree_rounds(mech, exact: list, plan: PairPlan, rho_measure: float, rho_select: float, model: list) -> tuple:
    """The private rounds of the tree: ``(chosen candidates in order, {candidate: noisy counts})``.

    :func:`~.pairs.select_and_measure` against the fixed estimate ``model``, offering in each round
    only the candidates whose attributes are not yet joined (Kruskal's rule), the score without the
    expected-noise term."""
    part = np.arange(len(plan.attributes.sizes))  # the tree's parts (union by relabelling)
    noisy, tree_edges, state = {}, [], {"pos": None, "second": set(), "estimate": model}

    def joinable():
        return np.array([part[a] != part[b] for a, b in plan.pairs])

    def allowed():
        ok = joinable()
        if ok.any() or not D.SECOND_PARENTS:
            return ok
        if state["pos"] is None:  # the tree is complete: orient it, score against its own model
            tree = orient(mech, plan, [(r, noisy[r], model[r]) for r in tree_edges], len(tree_edges))
            state["pos"] = {a: i for i, a in enumerate(tree.order)}
            state["estimate"] = model_counts(mech, plan, tree)
        pos = state["pos"]
        return np.array([max(a, b, key=pos.get) not in state["second"] for a, b in plan.pairs])

    def record(r, values, sigma):
        a, b = plan.pairs[r]
        if part[a] != part[b]:
            part[part == part[b]] = part[a]
            tree_edges.append(r)
        else:
            state["second"].add(max(a, b, key=state["pos"].get))
        noisy[r] = values

    chosen = select_and_measure(mech, exact, plan, rho_measure, rho_select, lambda: state["estimate"], record,
                                allowed, penalised=False)
    return chosen, noisy, len(tree_edges)


def bfs(usable, edges) -> tuple:
    """Decoding order and tree parents: from each part's root (its attribute of most edges), breadth first."""
    nbrs = {a: [] for a in usable}
    for a, b in edges:
        nbrs[a].append(b)
        nbrs[b].append(a)
    order, parents, seen = [], [], set()
    for root in sorted(usable, key=lambda a: (-len(nbrs[a]), a)):
        if root in seen:
            continue
        seen.add(root)
        queue = [(root, -1)]
        while queue:
            a, parent = queue.pop(0)
            order.append(a)
            parents.append(parent)
            for b in nbrs[a]:
                if b not in seen:
                    seen.add(b)
                    queue.append((b, a))
    return order, parents


def orient(mech, plan: PairPlan, measured: list, n_tree: int | None = None) -> PairTree:
    """Roots (the attribute of most tree edges in each part), breadth-first order and conditionals;
    a measured pair after the first ``n_tree`` (the tree's edges) gives its later attribute a second
    parent."""
    sizes, usable = plan.attributes.sizes, sorted({a for pr in plan.pairs for a in pr})
    n_tree = len(measured) if n_tree is None else n_tree
    tables = {}
    for r, values, prior in measured:
        a, b = plan.pairs[r]
        rows, cols = class_counts(mech, a), class_counts(mech, b)
        T = fitted_table(values.reshape(sizes[a], sizes[b]), prior.reshape(sizes[a], sizes[b]),
                         rows.sum(axis=0), cols.sum(axis=0) * (rows.sum() / max(cols.sum(), 1e-300)), D.PRIOR_SHARE)
        tables[(a, b)], tables[(b, a)] = T, T.T
    order, parents = bfs(usable, [plan.pairs[r] for r, _, _ in measured[:n_tree]])
    pos = {a: i for i, a in enumerate(order)}
    second = {}
    for r, _, _ in measured[n_tree:]:
        a, b = plan.pairs[r]
        late, early = (a, b) if pos[a] > pos[b] else (b, a)
        second[late] = (early, class_tables(tables[(early, late)], class_counts(mech, early), class_counts(mech, late)))
    conds = [None if parent < 0 else class_tables(tables[(parent, a)], class_counts(mech, parent), class_counts(mech, a))
             for a, parent in zip(order, parents)]
    seconds = tuple(second.get(a) if parent >= 0 else None for a, parent in zip(order, parents))
    return PairTree(tuple(order), tuple(parents), tuple(conds), seconds)

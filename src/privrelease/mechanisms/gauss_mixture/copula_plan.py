"""gauss-copula's plan: what the release measures and with how much of the budget, from public facts only.

The public facts are the schema (each numeric column's bounds, resolution and whether it may be missing,
the categorical levels, the label's classes: the encoded domain and the numeric trees of
:mod:`.copula_tree`), the public number of records n, and (epsilon, delta) with the accounting. From
them alone this module fixes

* the numeric columns' trees and coarse nodes (:class:`CoarsePlan`), the histogram groups (per class or
  pooled) and the tree levels that may be measured (:func:`plan_cells`);
* the pair tree's attributes, candidates and rounds (:class:`PairPlan`, :func:`plan_pair_stage`);
* the :class:`CopulaBudget`: every part's share of the total zCDP rho, the mixture's epsilon, the
  sensitivities and noise multipliers; the certificate prints it.

Nothing here reads a record or draws noise; the measurement stage (:mod:`.copula_measure`) follows the
plan. The tuning constants are in :mod:`.copula_defaults`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from ...dp.calibration import calibrate_rho, epsilon_for, zcdp_noise_multiplier
from ...errors import ParameterError
from ...schema.encoding import EncodedDomain
from . import copula_defaults as D

#: L-infinity sensitivity of the pair selection's score (replace one record: the exact counts move in two
#: cells by 1).
SCORE_SENSITIVITY = 2.0
#: L2 sensitivity of one measured two-way marginal (replace one record: two cells by 1 each).
MEASURE_SENSITIVITY = math.sqrt(2.0)


def histogram_sensitivity(n_columns: int) -> float:
    """L2 sensitivity of the one-way histograms of ``d`` columns stacked: ``sqrt(2 d)``.

    Each record falls in exactly one cell of each column's histogram. Replacing it moves
    at most two cells of each histogram, one down by 1 and one up by 1 (none when the
    two records share the cell), so the stacked difference has at most ``2 d`` entries
    of absolute value 1.
    """
    return math.sqrt(2.0 * int(n_columns))


# ---- the budget --------------------------------------------------------------------------------------
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
    already put above 0.13; census_income_kdd (tau 0.03) keeps 0.55 (docs/history/mixed-default.md)."""
    if share != "auto":
        return float(share)
    cells = D.NOISY_NUMERIC_CELLS * domain.p1 + sum(b - a for a, b in domain.blocks) + int(n_classes)
    default = D.TREE_MARGINAL_SHARE if tree else D.DEFAULT_MARGINAL_SHARE
    if math.isinf(epsilon):
        return default
    tau = cells / (epsilon * max(n, 1))  # mean cells x d / (epsilon n)
    return D.NOISY_MARGINAL_SHARE if tau > D.NOISY_TVD else default


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


@lru_cache(maxsize=256)
def split_with_pairs(epsilon: float, delta: float, mode: str, marginal_share: float, pair_share: float,
                     rounds: int) -> tuple:
    """``(rho, rho_hist, rho_mix, eps_mix, rho_measure, rho_select)`` with the pair stage on.

    ``rho`` is the largest total whose release (the Gaussian parts, plus ``rounds`` exponential
    mechanisms of ``eps_sel = sqrt(8 rho_select / rounds)`` each) is ``(epsilon, delta)``-DP
    (:func:`calibrate_rho`); the pair stage gets ``pair_share rho`` (a ``SELECT_FRACTION`` of it for
    the selections), the histograms and the mixture split the rest as without pairs.
    """
    sel = pair_share * D.SELECT_FRACTION
    rho = calibrate_rho(epsilon, delta, mode, sel, rounds)
    rho_select, rho_measure = sel * rho, pair_share * (1.0 - D.SELECT_FRACTION) * rho
    rest = rho - rho_select - rho_measure
    eps_mix = epsilon_for((1.0 - marginal_share) * rest * (1.0 - 1e-6), delta, mode)
    rho_mix = calibrate_rho(eps_mix, delta, mode, 0.0)
    return rho, rest - rho_mix, rho_mix, eps_mix, rho_measure, rho_select


@dataclass(frozen=True)
class CopulaBudget:
    """The release's budget, fixed from public facts before any noise is drawn: every part's share of
    the total zCDP ``rho``, the sensitivities and noise multipliers of the histograms and the pair
    measurements, and the epsilon the mixture calibrates itself with (its own split, over its
    statistics, is the mixture's). Printed by the certificate (:meth:`as_dict`).

    ``histograms`` is the number ``d`` of one-record-per-histogram count vectors over every tree level
    (set once the groups and depths are planned: :func:`plan_cells`)."""

    epsilon: float
    delta: float
    accounting: str
    rho: float
    marginal_share: float
    rho_marginals: float
    rho_mixture: float
    epsilon_mixture: float
    pair_share: float = 0.0
    select_fraction: float = 0.0
    pair_rounds: int = 0
    rho_pairs_measure: float = 0.0
    rho_pairs_select: float = 0.0
    histograms: int = 0
    mixture: bool = True   # False: the graphical model's rounds (the "pairs" fields) replace the mixture

    @property
    def pairs(self) -> bool:
        return self.pair_rounds > 0

    @property
    def marginals_l2(self) -> float:
        """L2 sensitivity of all the histograms' rounds together (:func:`histogram_sensitivity`)."""
        return histogram_sensitivity(self.histograms)

    @property
    def marginals_noise_multiplier(self) -> float:
        return zcdp_noise_multiplier(self.rho_marginals)

    @property
    def pairs_noise_multiplier(self) -> float:
        """Of each of the ``pair_rounds`` measurements (0 without the stage or with an infinite budget)."""
        finite = self.pairs and math.isfinite(self.rho_pairs_measure)
        return zcdp_noise_multiplier(self.rho_pairs_measure / self.pair_rounds) if finite else 0.0

    @property
    def pairs_select_epsilon(self) -> float:
        """Each selection's exponential mechanism: ``sqrt(8 rho_select / T)``."""
        if not self.pairs:
            return 0.0
        return math.sqrt(8.0 * self.rho_pairs_select / self.pair_rounds) if math.isfinite(self.rho) else math.inf

    def rho_split(self) -> dict:
        """The zCDP rho of every part: histograms, mixture and, with the pair tree, its measurements and
        selections."""
        if not self.mixture:
            return {"marginals": self.rho_marginals, "model_measure": self.rho_pairs_measure,
                    "model_select": self.rho_pairs_select}
        pairs = {"pairs_measure": self.rho_pairs_measure, "pairs_select": self.rho_pairs_select} if self.pairs else {}
        return {"marginals": self.rho_marginals, "mixture": self.rho_mixture, **pairs}

    def as_dict(self) -> dict:
        """Every field and derived scale, as the certificate prints them."""
        out = asdict(self)
        out.update(marginals_l2=self.marginals_l2, marginals_noise_multiplier=self.marginals_noise_multiplier)
        if self.pairs:
            out.update(pairs_l2=MEASURE_SENSITIVITY, pairs_score_linf=SCORE_SENSITIVITY,
                       pairs_noise_multiplier=self.pairs_noise_multiplier,
                       pairs_select_epsilon=self.pairs_select_epsilon)
        return out


def plan_budget(epsilon: float, delta: float, mode: str, marginal_share: float, pair_plan, histograms: bool = True,
                user_share=None) -> CopulaBudget:
    """The budget from public facts: (epsilon, delta), the accounting ``mode``, the histograms' share, the
    pair tree's plan (None: off) and whether any histogram is released (``histograms``).

    Infinite epsilon: every part gets an infinite rho (the test-only noiseless mode). No histogram and no
    pair stage: the mixture gets the whole budget. Otherwise :func:`split_budget` (no pair stage) or
    :func:`split_with_pairs`; a share that leaves a part nothing is refused (``user_share``: the parameter
    as given, for the message)."""
    pair_share = pair_plan.share if pair_plan is not None else 0.0
    rounds = pair_plan.rounds if pair_plan is not None else 0
    common = dict(epsilon=float(epsilon), delta=float(delta), accounting=mode, marginal_share=float(marginal_share),
                  pair_share=pair_share, select_fraction=D.SELECT_FRACTION if pair_plan is not None else 0.0,
                  pair_rounds=rounds)
    if math.isinf(epsilon):
        inf = math.inf if pair_plan is not None else 0.0
        return CopulaBudget(rho=math.inf, rho_marginals=math.inf, rho_mixture=math.inf, epsilon_mixture=math.inf,
                            rho_pairs_measure=inf, rho_pairs_select=inf, **common)
    share = marginal_share if histograms else 0.0
    if share == 0 and pair_plan is None:  # no histogram is released: the mixture gets the whole budget
        rho = calibrate_rho(epsilon, delta, mode, 0.0)
        return CopulaBudget(rho=rho, rho_marginals=0.0, rho_mixture=rho, epsilon_mixture=float(epsilon), **common)
    share = float(share) or 1e-9
    if pair_plan is None:
        rho, rho_hist, rho_mix, eps_mix = split_budget(epsilon, delta, mode, share)
        rho_measure = rho_select = 0.0
    else:
        rho, rho_hist, rho_mix, eps_mix, rho_measure, rho_select = split_with_pairs(
            epsilon, delta, mode, share, pair_plan.share, pair_plan.rounds)
    if not (rho_hist > 0 and rho_mix > 0):
        raise ParameterError(f"marginal_share={user_share} leaves no budget for one of the two parts")
    return CopulaBudget(rho=rho, rho_marginals=rho_hist, rho_mixture=rho_mix, epsilon_mixture=eps_mix,
                        rho_pairs_measure=rho_measure, rho_pairs_select=rho_select, **common)


def accounting_epsilon(budget: CopulaBudget, rho_mixture_spent: float) -> float:
    """The epsilon (at delta) of what a fitted gauss-copula spent: its Gaussian parts (histograms, the
    mixture's ``rho_mixture_spent``, pair measurements) and, with the pair stage, its ``rounds`` selections."""
    gauss = budget.rho_marginals + rho_mixture_spent + budget.rho_pairs_measure
    if not budget.pairs:
        return epsilon_for(gauss, budget.delta, budget.accounting)
    T = budget.pair_rounds
    return epsilon_for(gauss, budget.delta, budget.accounting, math.sqrt(8.0 * budget.rho_pairs_select / T), T)


# ---- the histograms' groups and depths, the numeric columns' coarse nodes ------------------------------
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
        by = classes > 1 and (n / classes / (D.CELL_SIGMAS * sigma_c) >= 8 if sigma_c > 0 else True)
    else:
        by = bool(by_label) and classes > 1
    G = classes if by else 1
    extra = int(G == 1 and label)
    sigma = histogram_sensitivity(n_cat + extra + sum(depths)) * nm
    coarse = bool(depths) and max(depths) > 1 and n / G < D.SMALL_TABLE_SPLITS * split * sigma
    depths = tuple([1] * len(depths)) if coarse else tuple(depths)
    return G, depths, n_cat + extra + sum(depths), coarse


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


# ---- the pair tree ----------------------------------------------------------------------------------
def pair_level(tree) -> int:
    """The level of a numeric column's tree whose nodes are its cells in a pair (public): the finest
    with at most ``PAIR_CELLS`` value nodes (the missing leaf one more)."""
    return tree.level_of(D.PAIR_CELLS + int(tree.missing))


def n_nodes(tree, level: int) -> int:
    return int(tree.grids[level].size - 1)


def coarse_codes(x: np.ndarray, tree, level: int | None = None) -> np.ndarray:
    """Coarse cells of an encoded numeric column (values in [0, 1] on the public bounds, NaN missing):
    its node at ``level`` (default :func:`pair_level`) of the column's public tree; the missing leaf
    is a node of its own. (The one place the pair stage defines a numeric column's cells.)"""
    return tree.coarse_index(x, pair_level(tree) if level is None else level)


@dataclass(frozen=True)
class Attributes:
    """The attributes of the pair stage: numeric columns (coarse cells of their trees at ``levels``),
    categorical blocks, the label."""

    p: int
    numeric: tuple
    trees: tuple
    blocks: tuple
    n_classes: int   # 0: no label attribute
    node_cells: int = 0  # value nodes of a numeric column at most (0: PAIR_CELLS)
    merges: tuple = ()  # per categorical block: its levels' cells (a tuple of ints), or None (one cell a level)

    @property
    def levels(self) -> tuple:
        if self.node_cells:
            return tuple(t.level_of(self.node_cells + int(t.missing)) for t in self.trees)
        return tuple(pair_level(t) for t in self.trees)

    @property
    def nan_ok(self) -> tuple:
        return tuple(int(j) for j, t in zip(self.numeric, self.trees) if t.missing)

    @property
    def sizes(self) -> tuple:
        return (tuple(n_nodes(t, lev) for t, lev in zip(self.trees, self.levels))
                + tuple(e - a if m is None else max(m) + 1 for (a, e), m in zip(self.blocks, self.block_merges))
                + ((self.n_classes,) if self.n_classes else ()))

    @property
    def block_merges(self) -> tuple:
        return self.merges or (None,) * len(self.blocks)

    @property
    def label(self) -> int | None:
        return len(self.sizes) - 1 if self.n_classes else None

    def codes(self, X: np.ndarray, y) -> np.ndarray:
        """(rows, attributes) cell codes of encoded rows (and their label codes)."""
        cols = [coarse_codes(X[:, j], t, lev) for j, t, lev in zip(self.numeric, self.trees, self.levels)]
        for (a, e), m in zip(self.blocks, self.block_merges):
            level = np.argmax(X[:, a:e], axis=1)
            cols.append(level if m is None else np.asarray(m, dtype=np.int64)[level])
        if self.n_classes:
            cols.append(np.asarray(y, dtype=np.int64))
        return np.stack(cols, axis=1) if cols else np.zeros((X.shape[0], 0), dtype=np.int64)


def candidates(sizes) -> tuple:
    """Every pair of attributes whose marginal has at most ``MAX_PAIR_CELLS`` cells (public)."""
    A = len(sizes)
    return tuple((a, b) for a in range(A) for b in range(a + 1, A) if sizes[a] * sizes[b] <= D.MAX_PAIR_CELLS)


def pair_counts(codes: np.ndarray, sizes, pairs) -> list:
    """Counts of every marginal ``(a, b, ...)`` of attributes over rows of cell ``codes`` (row-major, in the
    tuple's order)."""
    cols = np.ascontiguousarray(np.asarray(codes).T)  # one contiguous row per attribute
    out = []
    for attrs in pairs:
        key = cols[attrs[0]].astype(np.int64)
        for a in attrs[1:]:
            key = key * sizes[a] + cols[a]
        out.append(np.bincount(key, minlength=int(np.prod([sizes[a] for a in attrs]))))
    return out


@dataclass(frozen=True)
class PairPlan:
    """Public plan of the pair stage: attributes, candidates, rounds and the budget split."""

    attributes: Attributes
    pairs: tuple
    rounds: int
    share: float


def tree_attributes(domain, trees, coarse) -> tuple:
    """Indices (in :class:`Attributes` order: numeric columns, then categorical blocks) of the
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
    """The tree stage's public plan (a :class:`PairPlan`), or None when
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

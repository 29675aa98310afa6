"""gauss-copula's plan: what the release measures and with how much of the budget, from public facts only.

The public facts are the schema (each numeric column's bounds, resolution and whether it may be missing,
the categorical levels, the label's classes: the encoded domain and the numeric trees of
:mod:`.copula_tree`), the public number of records n, and (epsilon, delta) with the accounting. From
them alone this module fixes

* the numeric columns' trees and coarse nodes (:class:`CoarsePlan`), the histogram groups (per class or
  pooled) and the tree levels that may be measured (:func:`plan_cells`);
* the attributes of the graphical model (:class:`Attributes`; its plan: :mod:`.model_plan`);
* the :class:`CopulaBudget`: every part's share of the total zCDP rho, the mixture's epsilon, the
  sensitivities and noise multipliers; the certificate prints it.

Nothing here reads a record or draws noise; the measurement stage (:mod:`.copula_measure`) follows the
plan. The tuning constants are in :mod:`.copula_defaults`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import cached_property, lru_cache

import numpy as np
from scipy.special import ndtr

from ...dp.calibration import calibrate_rho, epsilon_for, zcdp_noise_multiplier
from ...errors import ParameterError
from ...schema.encoding import EncodedDomain
from . import copula_defaults as D

#: L-infinity sensitivity of the model's selection score (replace one record: the exact counts move in two
#: cells by 1, which moves the L1 distance by at most 2 and the error the fit would keep of a measurement by at
#: most Phi(FIT_SHIFT_STDS), the largest slope of :func:`~.copula_measure.kept_error`:
#: :func:`~.copula_measure.model_rounds`). The shift is read once, at import, with the sensitivity it sets, so that
#: a run that changes the defaults module cannot pair one shift with another's sensitivity.
FIT_SHIFT = float(D.FIT_SHIFT_STDS)
SCORE_SENSITIVITY = 2.0 + float(ndtr(FIT_SHIFT))
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
def histogram_weights(cells, weighted) -> tuple:
    """Each round-1 histogram's weight in the stacked release (public: its cells per group, ``cells``, and which
    histograms are a categorical feature's, ``weighted``): a categorical feature's ``w_j`` proportional to ``K_j **
    (1 / 3)``, scaled so that their squares sum to their number; a numeric tree's coarsest level and the label's own
    histogram 1.

    The release adds noise of one std ``sigma`` to the weighted counts ``w_j h_j``; dividing by ``w_j`` leaves
    histogram ``j`` with std ``sigma / w_j``. A record moves two cells of each histogram by one, so the weighted
    vector moves by ``sqrt(2 sum w_j ** 2)``: with the scaling, the sensitivity (:func:`histogram_sensitivity`) and
    the budget are those of the unweighted release. The exponent minimises the summed one-way L1 error ``sum_j c K_j
    sigma_j`` of flat histograms (each of ``K_j`` cells off by about its noise) at a fixed cost ``sum_j 1 / sigma_j **
    2``: the Lagrange condition ``K_j = 2 lam / sigma_j ** 3`` gives ``sigma_j`` proportional to ``K_j ** (-1 / 3)``
    (``docs/derivations.md``, "Histogram weights"). A tree is not a flat histogram (its one-way error is its finer
    levels', measured where its nodes hold records at the release's std), nor is the label's (every candidate with
    the label builds on it): weighted by their cells too, census_income_kdd's 2-way TVD was 0.0441 against 0.0420
    (12 seeds), the generated 101 columns' 0.0887 against 0.0867 (6 seeds), and the census cut's first 4,000
    records (its label's own histogram) 0.0496 against 0.0481 (6 seeds). Equal cells: every weight 1."""
    k = np.asarray([max(int(c), 1) for c in cells], dtype=np.float64)
    on = np.asarray(weighted, dtype=bool)
    if on.shape != k.shape:
        raise ValueError(f"{on.size} flags for {k.size} histograms")
    w = np.ones(k.size)
    if on.any():
        v = k[on] ** (1.0 / 3.0)
        w[on] = v * math.sqrt(v.size / float(v @ v))
    return tuple(float(x) for x in w)


@lru_cache(maxsize=256)
def auto_marginal_share(domain, n: int, epsilon: float, n_classes: int, share) -> float:
    """The mixture's histograms' share of rho: ``share`` when a number; for "auto", ``NOISY_MARGINAL_SHARE``
    when the noise alone is expected to move each column's one-way distribution by more than
    ``NOISY_TVD`` (``tau = mean cells x d / (epsilon n)`` over the d columns, the label's
    ``n_classes`` levels included: the budget warning's yardstick), else ``DEFAULT_MARGINAL_SHARE``.
    Public quantities only.

    On gas_drift and musk2 (tau 0.55 and 0.72: 128 and 166 numeric columns) a share of 0.3 raised
    train-on-release scores by 2 to 12 points and cost 0.03-0.04 of 1-way TVD, which the noise had
    already put above 0.13; census_income_kdd (tau 0.03) keeps 0.55 (docs/history/mixed-default.md)."""
    if share != "auto":
        return float(share)
    cells = D.NOISY_NUMERIC_CELLS * domain.p1 + sum(b - a for a, b in domain.blocks) + int(n_classes)
    if math.isinf(epsilon):
        return D.DEFAULT_MARGINAL_SHARE
    tau = cells / (epsilon * max(n, 1))  # mean cells x d / (epsilon n)
    return D.NOISY_MARGINAL_SHARE if tau > D.NOISY_TVD else D.DEFAULT_MARGINAL_SHARE


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


@dataclass(frozen=True)
class CopulaBudget:
    """The release's budget, fixed from public facts before any noise is drawn: every part's share of
    the total zCDP ``rho``, the sensitivities and noise multipliers of the histograms and of the graphical
    model's measurements (the "pairs" fields, filled by :func:`~.model_plan.model_budget`), or the epsilon
    the mixture calibrates itself with (its own split, over its statistics, is the mixture's). Printed by
    the certificate (:meth:`as_dict`).

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
    histogram_weights: tuple = ()  # round 1's histograms' weights (:func:`histogram_weights`), in release order
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
        """Of each of the ``pair_rounds`` measurements (0 with the mixture or with an infinite budget)."""
        finite = self.pairs and math.isfinite(self.rho_pairs_measure)
        return zcdp_noise_multiplier(self.rho_pairs_measure / self.pair_rounds) if finite else 0.0

    @property
    def pairs_select_epsilon(self) -> float:
        """Each selection's exponential mechanism: ``sqrt(8 rho_select / T)``."""
        if not self.pairs:
            return 0.0
        return math.sqrt(8.0 * self.rho_pairs_select / self.pair_rounds) if math.isfinite(self.rho) else math.inf

    def rho_split(self) -> dict:
        """The zCDP rho of every part: histograms, and the mixture or the graphical model's measurements and
        selections."""
        if not self.mixture:
            return {"marginals": self.rho_marginals, "model_measure": self.rho_pairs_measure,
                    "model_select": self.rho_pairs_select}
        return {"marginals": self.rho_marginals, "mixture": self.rho_mixture}

    def as_dict(self) -> dict:
        """Every field and derived scale, as the certificate prints them."""
        out = asdict(self)
        out.update(marginals_l2=self.marginals_l2, marginals_noise_multiplier=self.marginals_noise_multiplier)
        if self.pairs:
            out.update(pairs_l2=MEASURE_SENSITIVITY, pairs_score_linf=SCORE_SENSITIVITY,
                       pairs_noise_multiplier=self.pairs_noise_multiplier,
                       pairs_select_epsilon=self.pairs_select_epsilon)
        return out


def plan_budget(epsilon: float, delta: float, mode: str, marginal_share: float, histograms: bool = True,
                user_share=None) -> CopulaBudget:
    """The mixture's budget from public facts: (epsilon, delta), the accounting ``mode``, the histograms' share
    and whether any histogram is released (``histograms``).

    Infinite epsilon: every part gets an infinite rho (the test-only noiseless mode). No histogram: the
    mixture gets the whole budget. Otherwise :func:`split_budget`; a share that leaves a part nothing is
    refused (``user_share``: the parameter as given, for the message)."""
    common = {"epsilon": float(epsilon), "delta": float(delta), "accounting": mode,
              "marginal_share": float(marginal_share)}
    if math.isinf(epsilon):
        return CopulaBudget(rho=math.inf, rho_marginals=math.inf, rho_mixture=math.inf, epsilon_mixture=math.inf,
                            **common)
    share = marginal_share if histograms else 0.0
    if share == 0:  # no histogram is released: the mixture gets the whole budget
        rho = calibrate_rho(epsilon, delta, mode, 0.0)
        return CopulaBudget(rho=rho, rho_marginals=0.0, rho_mixture=rho, epsilon_mixture=float(epsilon), **common)
    rho, rho_hist, rho_mix, eps_mix = split_budget(epsilon, delta, mode, float(share))
    if not (rho_hist > 0 and rho_mix > 0):
        raise ParameterError(f"marginal_share={user_share} leaves no budget for one of the two parts")
    return CopulaBudget(rho=rho, rho_marginals=rho_hist, rho_mixture=rho_mix, epsilon_mixture=eps_mix, **common)


def accounting_epsilon(budget: CopulaBudget, rho_mixture_spent: float) -> float:
    """The epsilon (at delta) of what a fitted gauss-copula spent: its Gaussian parts (histograms, the
    mixture's ``rho_mixture_spent``, the graphical model's measurements) and, with the model, its ``rounds``
    selections."""
    gauss = budget.rho_marginals + rho_mixture_spent + budget.rho_pairs_measure
    if not budget.pairs:
        return epsilon_for(gauss, budget.delta, budget.accounting)
    T = budget.pair_rounds
    return epsilon_for(gauss, budget.delta, budget.accounting, math.sqrt(8.0 * budget.rho_pairs_select / T), T)


# ---- the histograms' groups and depths, the numeric columns' coarse nodes ------------------------------
def plan_cells(n: int, classes: int, n_cat: int, depths: list, nm: float, by_label, split: float,
               label: bool, max_classes: int | None = None) -> tuple[int, tuple, int, bool]:
    """``(groups, depths, d, coarse)`` from public quantities only: n, the classes, the number of
    categorical histograms, each numeric tree's depth and the noise multiplier ``nm``.

    Per class (``by_label="auto"``) when ``n / C`` records would fill 8 cells of ``CELL_SIGMAS`` noise
    stds each, and the label has at most ``max_classes`` classes (None: any number; the graphical model
    passes ``MODEL_MAX_CLASSES``). ``d`` counts the histograms over every level (each record in one cell of each): the
    categorical ones, the label's when not per class, and every level of every tree. Small tables
    (``coarse``): when ``n / G < SMALL_TABLE_SPLITS * split * sigma`` a node could hardly be split,
    so every tree is measured at its coarsest level only.
    """
    sigma_c = histogram_sensitivity(n_cat + sum(depths)) * nm
    if by_label == "auto":
        few = max_classes is None or classes <= max_classes
        by = classes > 1 and few and (n / classes / (D.CELL_SIGMAS * sigma_c) >= 8 if sigma_c > 0 else True)
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


# ---- the attributes of the graphical model ----------------------------------------------------------
@dataclass(frozen=True)
class Attributes:
    """The attributes of the graphical model: numeric columns (runs of their trees' leaves: the finest grid with at
    most ``node_cells`` value nodes, or ``cuts`` made from released masses; the missing leaf a cell of its own),
    categorical blocks (their levels, or ``merges`` of rare ones), the label."""

    p: int
    numeric: tuple
    trees: tuple
    blocks: tuple
    n_classes: int   # 0: no label attribute
    node_cells: int  # value nodes of a numeric column at most
    merges: tuple = ()  # per categorical block: its levels' cells (a tuple of ints), or None (one cell a level)
    cuts: tuple = ()    # per numeric column: the leaf where each cell starts, then its leaves' count; or None (grid)

    @cached_property
    def levels(self) -> tuple:
        return tuple(t.level_of(self.node_cells + int(t.missing)) for t in self.trees)

    @cached_property
    def _starts(self) -> tuple:
        cuts = self.cuts or (None,) * len(self.trees)
        return tuple(np.asarray(c, dtype=np.int64) if c is not None else t.grids[lv]
                     for c, t, lv in zip(cuts, self.trees, self.levels))

    @property
    def nan_ok(self) -> tuple:
        return tuple(int(j) for j, t in zip(self.numeric, self.trees) if t.missing)

    def starts(self, j: int) -> np.ndarray:
        """The leaf where each cell of numeric attribute ``j`` starts, and its tree's leaf count at the end (made once
        per attributes: a frozen instance, whose cuts and trees do not change)."""
        return self._starts[j]

    def cell_counts(self, j: int, leaf_counts: np.ndarray) -> np.ndarray:
        """Counts of numeric attribute ``j``'s cells from ``(groups, leaves)`` counts."""
        return np.add.reduceat(leaf_counts, self.starts(j)[:-1], axis=-1)

    @cached_property
    def sizes(self) -> tuple:
        return (tuple(self.starts(j).size - 1 for j in range(len(self.trees)))
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
        cols = [np.searchsorted(self.starts(i), t.index(X[:, j]), side="right") - 1
                for i, (j, t) in enumerate(zip(self.numeric, self.trees))]
        for (a, e), m in zip(self.blocks, self.block_merges):
            level = np.argmax(X[:, a:e], axis=1)
            cols.append(level if m is None else np.asarray(m, dtype=np.int64)[level])
        if self.n_classes:
            cols.append(np.asarray(y, dtype=np.int64))
        return np.stack(cols, axis=1) if cols else np.zeros((X.shape[0], 0), dtype=np.int64)


#: Rows counted together by :func:`pair_counts` (its cached keys: a few hundred arrays of this many rows at most).
PAIR_COUNT_ROWS = 16_384


def pair_counts(codes: np.ndarray, sizes, pairs) -> list:
    """Counts of every marginal ``(a, b, ...)`` of attributes over rows of cell ``codes`` (row-major, in the
    tuple's order). A marginal whose attributes begin another one's with one more (a pair and the pair with
    the label) is that one's counts summed over its last attribute, not counted again.

    A marginal's key is its first attribute's code times the cells of the rest, plus the rest's key; the rest
    (``(b, label)`` for every triple with the label) is keyed once for all the marginals that end in it, so a
    marginal costs one product, one sum and one ``bincount`` (rows taken ``PAIR_COUNT_ROWS`` at a time)."""
    codes = np.asarray(codes, dtype=np.int64)
    wanted = {tuple(map(int, attrs)) for attrs in pairs}
    parent = {d[:-1]: d for d in wanted if len(d) > 1}
    counted = [(d, d[1:], math.prod(sizes[a] for a in d[1:])) for d in wanted if d not in parent]
    counted.sort(key=lambda c: c[1])  # the marginals of one rest together, its key in cache
    done = {d: np.zeros(math.prod(sizes[a] for a in d), dtype=np.int64) for d, _, _ in counted}
    for start in range(0, codes.shape[0], PAIR_COUNT_ROWS):
        cols = np.ascontiguousarray(codes[start:start + PAIR_COUNT_ROWS].T)  # one contiguous row per attribute
        tails = {}  # the key of every rest, made once
        for d, rest, cells in counted:
            if rest not in tails:
                tails[rest] = _row_major_key(cols, sizes, rest)
            done[d] += np.bincount(cols[d[0]] * cells + tails[rest], minlength=done[d].size)
    for attrs in sorted(parent, key=len, reverse=True):  # a longer marginal before the ones it holds
        full = parent[attrs]
        done[attrs] = done[full].reshape(-1, sizes[full[-1]]).sum(axis=1)
    return [done[tuple(map(int, attrs))] for attrs in pairs]


def _row_major_key(cols: np.ndarray, sizes, attrs: tuple):
    """Each row's cell of the marginal ``attrs`` in row-major order (0 for no attribute)."""
    if not attrs:
        return 0
    key = cols[attrs[0]]
    for a in attrs[1:]:
        key = key * sizes[a] + cols[a]
    return key

"""Measured two-way structure for gauss-copula: the candidate marginals (pairs of attributes on coarse
cells), their exact counts in one more pass, and the private rounds that choose and measure them.

After the copula release exists (one-way marginals and mixture), one more pass counts every
candidate marginal exactly (:class:`PairCounter`; mergeable sums, so the same map runs on streamed
chunks and Dask partitions). Then each round (:func:`select_and_measure`), without reading the data
again, the exponential mechanism picks a candidate by how badly the current release fits it (AIM's
score, McKenna et al. 2022) and the Gaussian mechanism measures its counts. The pair tree
(:mod:`.pair_tree`) restricts the candidates of each round and decodes the release along what it
measured.

The attributes are the feature columns and the label; a numeric column's cells here are coarse
(:func:`coarse_codes`: the nodes of the finest grid of its public :class:`~.copula_tree.NumericTree`, a
measured level or such a level's nodes halved, with at most ``PAIR_CELLS`` nodes, the missing leaf a
node of its own). The privacy derivation is in the Notes of :func:`select_and_measure` and in
``docs/derivations.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...dp.calibration import calibrate_rho, epsilon_for, zcdp_noise_multiplier
from ...dp.selection import exponential_mechanism
from ...errors import InputDataError
from . import copula_defaults as D
from .copula_parts import check_encoded, check_labels, split_budget

#: L-infinity sensitivity of the selection score (replace one record: the exact counts move in two cells by 1).
SCORE_SENSITIVITY = 2.0
#: L2 sensitivity of one measured marginal (replace one record: two cells by 1 each).
MEASURE_SENSITIVITY = math.sqrt(2.0)


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

    @property
    def levels(self) -> tuple:
        return tuple(pair_level(t) for t in self.trees)

    @property
    def nan_ok(self) -> tuple:
        return tuple(int(j) for j, t in zip(self.numeric, self.trees) if t.missing)

    @property
    def sizes(self) -> tuple:
        return (tuple(n_nodes(t, lev) for t, lev in zip(self.trees, self.levels))
                + tuple(e - a for a, e in self.blocks) + ((self.n_classes,) if self.n_classes else ()))

    @property
    def label(self) -> int | None:
        return len(self.sizes) - 1 if self.n_classes else None

    def codes(self, X: np.ndarray, y) -> np.ndarray:
        """(rows, attributes) cell codes of encoded rows (and their label codes)."""
        cols = [coarse_codes(X[:, j], t, lev) for j, t, lev in zip(self.numeric, self.trees, self.levels)]
        cols += [np.argmax(X[:, a:e], axis=1) for a, e in self.blocks]
        if self.n_classes:
            cols.append(np.asarray(y, dtype=np.int64))
        return np.stack(cols, axis=1) if cols else np.zeros((X.shape[0], 0), dtype=np.int64)


def candidates(sizes) -> tuple:
    """Every pair of attributes whose marginal has at most ``MAX_PAIR_CELLS`` cells (public)."""
    A = len(sizes)
    return tuple((a, b) for a in range(A) for b in range(a + 1, A) if sizes[a] * sizes[b] <= D.MAX_PAIR_CELLS)


def pair_counts(codes: np.ndarray, sizes, pairs) -> list:
    """Counts of every pair ``(a, b)`` of attributes over rows of cell ``codes`` (row-major, a then b)."""
    cols = np.ascontiguousarray(np.asarray(codes).T)  # one contiguous row per attribute
    return [np.bincount(cols[a] * sizes[b] + cols[b], minlength=sizes[a] * sizes[b]) for a, b in pairs]


@dataclass(frozen=True)
class PairCounter:
    """The pair pass of one chunk: ``(records, exact counts of every candidate, concatenated)``.

    Plain sums, merged by addition (the executors' default merge), on every engine."""

    attributes: Attributes
    pairs: tuple

    def __call__(self, X, y):
        X = check_encoded(X, self.attributes.p, self.attributes.blocks, self.attributes.nan_ok)
        if self.attributes.n_classes:
            if y is None:
                raise InputDataError("the pair stage was planned with a label and a chunk has none")
            y = check_labels(y, X.shape[0], self.attributes.n_classes)
        parts = pair_counts(self.attributes.codes(X, y), self.attributes.sizes, self.pairs)
        flat = np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)
        return X.shape[0], flat


@dataclass(frozen=True)
class PairPlan:
    """Public plan of the pair stage: attributes, candidates, rounds and the budget split."""

    attributes: Attributes
    pairs: tuple
    rounds: int
    share: float


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


def split_budget_with(plan, epsilon: float, delta: float, mode: str, share: float) -> tuple:
    """``((rho, rho_hist, rho_mix, eps_mix), pair rhos)``: gauss-copula's split with or without the stage."""
    if plan is None:
        return split_budget(epsilon, delta, mode, share), {}
    out = split_with_pairs(epsilon, delta, mode, share, plan.share, plan.rounds)
    return out[:4], {"pairs_measure": out[4], "pairs_select": out[5]}


def accounting_epsilon(mech) -> float:
    """The epsilon (at ``delta``) of what a fitted gauss-copula spent: its Gaussian parts (histograms,
    mixture, pair measurements) and, with the pair stage, its ``rounds`` selections."""
    pr, delta, mode = mech._pair_rho, float(mech.delta), mech.accounting_mode_
    gauss = mech.rho_split_["marginals"] + mech.mixture_.rho_ + pr.get("pairs_measure", 0.0)
    if not pr:
        return epsilon_for(gauss, delta, mode)
    T = mech.pair_plan_.rounds
    return epsilon_for(gauss, delta, mode, math.sqrt(8.0 * pr["pairs_select"] / T), T)


def count_pairs(passes, plan: PairPlan, n: int) -> list:
    """The pair pass: exact counts of every candidate marginal (one array per candidate)."""
    sizes = plan.attributes.sizes
    out = passes.run(PairCounter(plan.attributes, plan.pairs))
    if out is None or int(out[0]) != n:
        raise InputDataError("the input changed between two passes (the pair pass saw another number of records)")
    offsets = np.concatenate([[0], np.cumsum([sizes[a] * sizes[b] for a, b in plan.pairs])]).astype(int)
    return [out[1][offsets[r]:offsets[r + 1]] for r in range(len(plan.pairs))]


def select_and_measure(mech, exact: list, plan: PairPlan, rho_measure: float, rho_select: float, estimate,
                       record, allowed=None, penalised: bool = True) -> list:
    """The private rounds: returns the measured candidates' indices, in order.

    ``estimate()``: the current release's counts of every candidate (post-processing of earlier
    outputs); ``record(r, noisy, sigma)``: hands a measurement to the estimation; ``allowed()``
    (optional): which candidates a round may offer, from earlier outputs only (a round with none left
    ends the stage early, spending less than planned); ``penalised``: whether the score subtracts the
    measurement's expected noise (a data-independent constant per candidate). Each round:
    exponential mechanism on AIM's score (:func:`scores`) with ``eps_t = sqrt(8 rho_select / T)``
    and L-infinity sensitivity ``SCORE_SENSITIVITY``, then the Gaussian mechanism on the chosen
    candidate's counts (L2 sensitivity ``MEASURE_SENSITIVITY``, ``rho_measure / T``-zCDP). A
    candidate is measured at most once (the measured set is public).

    Notes
    -----
    Neighbours: one record (label included) replaced, n public. Each candidate's exact counts
    move in at most two cells by 1 each, so (i) its score ``||x_r - e_r||_1 - c_r`` moves by at most
    2 (``e_r``, the release's counts, depends only on earlier outputs: adaptive composition), and
    the exponential mechanism with ``eps_t = sqrt(8 rho_select / T)`` is ``eps_t``-DP and
    ``eps_t^2 / 8``-zCDP; (ii) the measured counts have L2 sensitivity ``sqrt 2``, and Gaussian
    noise of std ``sigma_t = sqrt 2 / sqrt(2 rho_measure / T)`` makes each measurement
    ``rho_measure / T``-zCDP. ``T`` rounds spend ``rho_select + rho_measure`` in zCDP; in the
    ``"gaussian"`` accounting each selection is composed as randomized response with ``eps_t``.
    """
    T, sizes, n = plan.rounds, plan.attributes.sizes, mech.n_
    finite = math.isfinite(rho_measure)
    nm = zcdp_noise_multiplier(rho_measure / T) if finite else 0.0
    eps_t = math.sqrt(8.0 * rho_select / T) if finite else math.inf
    mech.source_.set_value_bound(float(max(n, 1)))  # every count lies in [0, n] (n public)
    sigma = mech.source_.gaussian_noise_std(MEASURE_SENSITIVITY, nm, 1)
    cells = np.array([sizes[a] * sizes[b] for a, b in plan.pairs], dtype=np.float64)
    taken = np.zeros(len(plan.pairs), dtype=bool)
    chosen = []
    for _ in range(T):
        closed = taken if allowed is None else (taken | ~np.asarray(allowed(), dtype=bool))
        if closed.all():
            break
        score = scores(exact, estimate(), cells, sigma if penalised else 0.0)
        r = exponential_mechanism(score, eps_t, SCORE_SENSITIVITY, mech.source_,
                                  log_base=np.where(closed, -np.inf, 0.0))
        taken[r] = True
        noisy = mech._gaussian("pairs_std", exact[r], MEASURE_SENSITIVITY, nm, exact[r].size)
        record(r, noisy, mech.noise_scales_["pairs_std"])
        chosen.append(int(r))
    mech.noise_scales_["pairs_select_epsilon"] = eps_t
    return chosen


def scores(exact: list, est: list, cells: np.ndarray, sigma: float) -> np.ndarray:
    """AIM's score of every candidate: the L1 distance between its exact counts and the current
    release's, less the expected L1 norm of its measurement noise (``sqrt(2 / pi) sigma cells``)."""
    l1 = np.array([np.abs(x - e).sum() for x, e in zip(exact, est)])
    return l1 - math.sqrt(2.0 / math.pi) * sigma * cells


def run_pairs(mech, passes, fit) -> None:
    """The pair stage of a fitted gauss-copula when its plan has one (one more pass), else nothing;
    ``fit`` (:func:`~.pair_tree.fit_tree`) takes the mechanism, the passes, the plan and the
    measurement and selection rhos."""
    if mech.pair_plan_ is None:
        return
    fit(mech, passes, mech.pair_plan_, mech.rho_split_["pairs_measure"], mech.rho_split_["pairs_select"])
    mech.passes_ += 1

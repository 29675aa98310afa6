"""gauss-copula's measurement stage: the only code of the default that reads records or draws noise.

A reviewer audits the default's privacy by reading this module (with :mod:`.copula_plan`, which fixes
from public facts every share, sensitivity input and round before any record is read, and the mixture's
own Gaussian releases in :class:`~.gauss_pca.GaussPCA`, an audited mechanism of its own). Everything
here either counts records exactly (the per-chunk maps, run where the records are, on every engine) or
releases those counts through the Gaussian or the exponential mechanism. What leaves is a
:class:`Measurement` (the query, its noisy answer, its noise std) or a released model; what comes back
into an adaptive round (which tree nodes to split, which pair to measure next) is computed by the
estimation and sampling stages from released values only, through the callables this module is given.

The stages:

1. one-way histograms (:class:`CellCounter`, one pass): every numeric column's tree leaves and every
   categorical column's levels, per class; :func:`measure_top_levels` releases round 1 (the coarsest
   tree levels with the categorical and label histograms), :func:`level_measurer` each finer round
   (a :class:`Measurement` naming its nodes);
2. the mixture: :class:`CopulaTransform` maps every record to its latent row (through the released
   marginals, post-processing applied to each record alone) and :func:`measure_mixture` fits the
   gauss-pca mixture on those rows with its own passes and noise;
3. or, in place of the mixture, the graphical model (:class:`PairCounter`, one more pass, counts every
   candidate marginal): :func:`model_rounds` chooses (exponential mechanism) and measures (Gaussian
   mechanism) its marginals.

Derivations: the Notes of :class:`~.gauss_copula.GaussCopula`, of :func:`model_rounds`, and
``docs/derivations.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.special import ndtr, ndtri

from ...dp.calibration import zcdp_noise_multiplier
from ...dp.selection import exponential_mechanism
from ...engine.passes import add
from ...errors import InputDataError
from ...noise.counter import counter_uniforms_at
from ..base import check_one_hot
from . import copula_defaults as D
from .copula_plan import (
    FIT_SHIFT,
    MEASURE_SENSITIVITY,
    SCORE_SENSITIVITY,
    Attributes,
    CoarsePlan,
    histogram_sensitivity,
    pair_counts,
)
from .gauss_pca import GaussPCA
from .model_plan import ModelPlan, cells_of


@dataclass(frozen=True)
class Measurement:
    """One released query: what was asked (``query``: a name and its public cells), the noisy answer
    and the std of the Gaussian noise it carries (the histograms of round 1: one std per histogram). The only
    thing that crosses to the estimation."""

    query: tuple
    noisy: np.ndarray
    noise_std: float | tuple


# ---- pass 1: the one-way histograms ----------------------------------------------------------------
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


def count_cells(passes, counter: CellCounter):
    """Pass 1: ``(records, labelled records, counts, label counts, classes seen)`` over every chunk."""
    out = passes.run(counter, merge=merge_cell_counts)
    return out if out is not None else (0, 0, (), None, 0)


def pooled_counts(counts: list, labelled: bool, groups: int, label_counts):
    """The exact counts in the groups the plan chose: the unlabelled group alone without labels, summed
    over the classes when the histograms are not per class (then the label's own histogram added)."""
    counts = [h if labelled else h[:1] for h in counts]
    if groups == 1 and counts and counts[0].shape[0] > 1:
        counts = [h.sum(axis=0, keepdims=True) for h in counts]
    return counts + [label_counts] if (groups == 1 and label_counts is not None) else counts


def measure_top_levels(mech, counts: list, n: int, d: int, nm: float, weights=()) -> Measurement:
    """Round 1 of the histograms: the coarsest level of every numeric tree (``mech.cells_``) with the
    categorical (and label) histograms, stacked, each times its public weight (``weights``, from
    :func:`~.copula_plan.histogram_weights`; none: all 1), through the Gaussian mechanism with L2 sensitivity
    ``sqrt(2 d)`` (:func:`histogram_sensitivity` of the ``d`` histograms over all rounds: the weights' squares sum
    to their number) and noise multiplier ``nm``, then divided by the weights. ``noisy`` holds the released
    ``(groups, cells)`` histograms, in order; ``noise_std`` each one's std (the release's std over its weight)."""
    k = len(mech.cells_)
    sens = histogram_sensitivity(d)
    mech.sensitivities_ = {"marginals_l2": sens}
    mech.noise_scales_ = {}
    top = [t.level_counts(h, 0) for t, h in zip(mech.cells_, counts[:k])] + list(counts[k:])
    w = np.asarray(weights if len(weights) else [1.0] * len(top), dtype=np.float64)
    check_weights(w, len(top))
    # every cell count lies in [0, n] (n public), a weighted one in [0, n w_j]; the finer rounds' in [0, n]
    mech.source_.set_value_bound(float(max(n, 1)) * max(1.0, float(w.max(initial=1.0))))
    scale = np.concatenate([np.full(c.size, wj) for c, wj in zip(top, w)]) if top else np.zeros(0)
    flat = np.concatenate([c.ravel() for c in top]).astype(np.float64) * scale
    noisy = mech._gaussian("marginals_std", flat, sens, nm, flat.size) / scale
    parts, start = [], 0
    for c in top:
        parts.append(noisy[start:start + c.size].reshape(c.shape))
        start += c.size
    std = mech.noise_scales_["marginals_std"]
    return Measurement(("histograms", 0), parts, tuple(std / wj for wj in w))


def check_weights(w: np.ndarray, count: int) -> None:
    """The weights of ``count`` stacked histograms keep the sensitivity ``sqrt(2 d)``: one each, their squares
    summing to ``count`` (a weighted count vector moves by ``sqrt(2 sum w_j ** 2)``)."""
    if w.size != count or not np.all(w > 0) or abs(float(w @ w) - count) > 1e-9 * max(count, 1):
        raise ValueError(f"{w.size} histogram weights whose squares sum to {float(w @ w):g} for {count} histograms")


def selected_counts(trees, leaf_counts, level: int, masks: dict):
    """The exact counts of the nodes of ``level`` chosen in ``masks`` (``{column: (groups, nodes) bool}``,
    from released values), columns in order (each column's in the order of :func:`level_nodes`); None
    when there are none."""
    values = [trees[j].level_counts(leaf_counts[j], level)[m] for j, m in sorted(masks.items())]
    return np.concatenate(values) if values and sum(v.size for v in values) else None


def level_nodes(masks: dict) -> np.ndarray:
    """``(count, 3)``: the ``(column, group, node)`` of every node chosen in ``masks``, in the order
    :func:`selected_counts` stacks their counts (columns in order, each mask's nodes row by row)."""
    ids = [np.column_stack([np.full(g.size, j), g, i]) for j, m in sorted(masks.items()) for g, i in [np.nonzero(m)]]
    return np.concatenate(ids).astype(np.int64) if ids else np.zeros((0, 3), dtype=np.int64)


def level_measurer(mech, leaf_counts, d: int, nm: float):
    """``measure(level, masks)``: round ``level`` of the histograms, the Gaussian mechanism on the exact
    counts of the chosen nodes (:func:`selected_counts`) with the round-1 sensitivity and noise multiplier
    (every round's std is the same; the rounds together cost what one release of all ``d`` histograms
    would). Returns the :class:`Measurement` ``("tree_level", level, nodes)`` with ``nodes`` the
    ``(column, group, node)`` of each released count (:func:`level_nodes`); None when no node is chosen."""
    sens = histogram_sensitivity(d)

    def measure(level: int, masks: dict):
        exact = selected_counts(mech.cells_, leaf_counts, level, masks)
        if exact is None:
            return None
        key = f"tree_level{level}_std"
        noisy = mech._gaussian(key, exact.astype(np.float64), sens, nm, exact.size)
        return Measurement(("tree_level", level, level_nodes(masks)), noisy, mech.noise_scales_[key])

    return measure


# ---- the mixture: the copula map of every record, then gauss-pca's own releases ------------------------
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
    coarse: CoarsePlan | None = None  # numeric columns' one-hot node blocks after the p columns

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
            z = np.clip(ndtri(u), -D.LATENT_BOUND, D.LATENT_BOUND)
            Z[:, col] = (z + D.LATENT_BOUND) / (2.0 * D.LATENT_BOUND)
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


def measure_mixture(passes, transform: CopulaTransform, epsilon: float, delta: float, n_components, n_classes,
                    accounting: str, domain, source) -> GaussPCA:
    """The mixture: :class:`GaussPCA` fitted, with its own passes, sensitivities and noise, on the latent
    rows ``transform`` gives each chunk where it lies (its budget: ``epsilon``, calibrated by it)."""
    mix = GaussPCA(epsilon, delta, n_components=n_components, n_classes=n_classes, accounting=accounting,
                   domain=domain, rng=source)
    return mix.fit_executor(LatentPasses(passes, transform))


# ---- the graphical model: one more pass, then the private rounds ---------------------------------------
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
                raise InputDataError("the graphical model was planned with a label and a chunk has none")
            y = check_labels(y, X.shape[0], self.attributes.n_classes)
        parts = pair_counts(self.attributes.codes(X, y), self.attributes.sizes, self.pairs)
        flat = np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)
        return X.shape[0], flat


def count_pairs(passes, plan: ModelPlan, n: int) -> list:
    """The pair pass: exact counts of every candidate marginal (one array per candidate)."""
    sizes = plan.attributes.sizes
    out = passes.run(PairCounter(plan.attributes, plan.pairs))
    if out is None or int(out[0]) != n:
        raise InputDataError("the input changed between two passes (the pair pass saw another number of records)")
    offsets = np.concatenate([[0], np.cumsum([cells_of(sizes, c) for c in plan.pairs])]).astype(int)
    return [out[1][offsets[r]:offsets[r + 1]] for r in range(len(plan.pairs))]


def kept_error(x: np.ndarray, sigma: float) -> float:
    """The L1 error the fitted model is expected to keep of counts ``x`` measured with Gaussian noise of std
    ``sigma``: ``sum_i h(x_i)``, ``h(x) = min(E|max(x + Z - t, 0) - x|, c sigma)`` for ``Z ~ N(0, sigma^2)``,
    ``t = FIT_SHIFT_STDS sigma`` and ``c = FIT_CELL_STDS`` (:mod:`.copula_defaults`: calibrated on the fit's own
    errors). In closed form, with ``a = (t - x) / sigma``: ``E|...| = x Phi(a) + sigma (phi(s) - s Phi(-s)) +
    [x > 0] (t (Phi(s) - Phi(a)) - sigma (phi(a) - phi(s)))`` for ``s = t / sigma``. An empty cell keeps
    ``sigma (phi(s) - s Phi(-s))`` (0.17 sigma at s = 0.6), a cell well above the noise ``c sigma``. ``h' =
    Phi(a)`` up to the cap, in (0, Phi(s)]: the score's sensitivity (``docs/derivations.md``, "Selection")."""
    if sigma <= 0:
        return 0.0
    s = FIT_SHIFT  # read with the sensitivity it sets (copula_plan)
    u = np.asarray(x, dtype=np.float64) / sigma
    a = s - u
    phi_a, phi_s = np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi), math.exp(-0.5 * s * s) / math.sqrt(2.0 * math.pi)
    inner = np.where(a < s, s * (ndtr(s) - ndtr(a)) - (phi_a - phi_s), 0.0)  # Z between a and s
    e = u * ndtr(a) + (phi_s - s * ndtr(-s)) + inner
    return float(np.sum(np.minimum(e, float(D.FIT_CELL_STDS))) * sigma)


def scores(exact: list, est: list, kept: np.ndarray) -> np.ndarray:
    """The score of every candidate: the L1 distance between its exact counts and the current release's, less
    ``kept``, the expected L1 error its measurement would leave (:func:`kept_error` of its exact counts)."""
    if not len(exact):
        return np.zeros(0) - kept
    starts = np.cumsum([0] + [x.size for x in exact[:-1]])
    return np.add.reduceat(np.abs(np.concatenate(exact) - np.concatenate(est)), starts) - kept


# ---- the graphical model's rounds ------------------------------------------------------------------------
def model_rounds(mech, exact: list, plan, rho_measure: float, rho_select: float, estimate, open_, fits, record) -> list:
    """The graphical model's private rounds (AIM's loop, at a fixed noise): returns the measured candidates'
    indices, in order.

    ``exact``: the exact counts of every candidate of ``plan.pairs`` (one pass); ``estimate()``: the current
    model's counts of every candidate (post-processing: the model fitted to every earlier measurement);
    ``open_()``: which candidates the round may offer (a function of the measured set, less candidates ``fits``
    has already refused on the same measured set: a draw of them would be refused); ``fits(r)``:
    whether the model stays within its public size bound with candidate ``r`` (a function of the measured set
    only); ``record(r, measurement)``: hands a :class:`Measurement` to the estimation. Each of the
    ``T = plan.rounds`` rounds: the exponential mechanism on :func:`scores` (each candidate's L1 error under the
    current model less the error the fit is expected to keep of its measurement, :func:`kept_error`) with
    ``eps_t = sqrt(8 rho_select / T)`` and L-infinity sensitivity ``SCORE_SENSITIVITY``, over the open candidates not yet measured that ``fits``; then
    the Gaussian mechanism on the chosen candidate's counts (L2 sensitivity ``MEASURE_SENSITIVITY``, ``rho_measure
    / T``-zCDP).

    ``fits`` is asked of the drawn candidate only: a draw it refuses is put aside and the mechanism drawn again
    without it. The accepted draw is distributed exactly as the exponential mechanism over the candidates that
    fit (a public set within the round, fixed by the measured set). A refusal left out of ``open_`` in a later
    round (the estimation keeps it while the model's graph stays) changes which draws are tried, never the
    accepted draw's distribution, so no round's output depends on a draw that was not released. A candidate is
    measured at most once (the measured set is public).

    Notes
    -----
    Neighbours: one record (label included) replaced, n public. Each candidate's exact counts move in at
    most two cells by 1 each, whatever its arity: one cell down by 1, another up by 1. So (i) its score
    ``||x_r - e_r||_1 - k(x_r)`` moves by at most 2 in its first term (``e_r``, the model's counts, depends only
    on earlier outputs: adaptive composition) and by at most ``Phi(s)`` in its second (``k = sum_i h(x_i)`` with
    ``h`` non-decreasing and ``h' <= Phi(s)``, ``s = FIT_SHIFT_STDS``: the cell that loses a record lowers it by at
    most ``Phi(s)``, the cell that gains one raises it by at most ``Phi(s)``, so their sum moves within
    ``[-Phi(s), Phi(s)]``): ``SCORE_SENSITIVITY = 2 + Phi(s)`` (2.73), and the
    exponential mechanism with ``eps_t = sqrt(8 rho_select / T)`` is ``eps_t``-DP and ``eps_t^2 / 8``-zCDP;
    (ii) the measured counts have L2 sensitivity ``sqrt 2``, and Gaussian noise of std
    ``sigma_t = sqrt 2 / sqrt(2 rho_measure / T)`` makes each measurement ``rho_measure / T``-zCDP. ``T``
    rounds spend ``rho_select + rho_measure`` in zCDP; in the ``"gaussian"`` accounting each selection is
    composed as randomized response with ``eps_t``.
    """
    T = plan.rounds
    finite = math.isfinite(rho_measure)
    nm = zcdp_noise_multiplier(rho_measure / T) if finite else 0.0
    eps_t = math.sqrt(8.0 * rho_select / T) if finite else math.inf
    mech.source_.set_value_bound(float(max(mech.n_, 1)))  # every count lies in [0, n] (n public)
    sigma = mech.source_.gaussian_noise_std(MEASURE_SENSITIVITY, nm, 1)
    kept = np.array([kept_error(x, sigma) for x in exact])  # the measurement's error depends on x alone
    taken = np.zeros(len(plan.pairs), dtype=bool)
    chosen, last, score = [], None, None
    for _ in range(T):
        est = estimate()
        if est is not last:  # the model's counts change only when it is refitted
            score, last = scores(exact, est, kept), est
        r = _draw_fitting(score, taken | ~np.asarray(open_(), dtype=bool), eps_t, mech.source_, fits)
        if r is None:
            break
        taken[r] = True
        noisy = mech._gaussian("model_std", exact[r].astype(np.float64), MEASURE_SENSITIVITY, nm, exact[r].size)
        record(r, Measurement(("marginal", plan.pairs[r]), noisy, mech.noise_scales_["model_std"]))
        chosen.append(r)
    mech.noise_scales_["model_select_epsilon"] = eps_t
    return chosen


def _draw_fitting(score, closed, eps_t: float, source, fits) -> int | None:
    """One round's draw of :func:`model_rounds`: the exponential mechanism over the candidates not ``closed``,
    drawn again without any draw ``fits`` refuses; None when none is left."""
    closed = closed.copy()
    while not closed.all():
        r = int(exponential_mechanism(score, eps_t, SCORE_SENSITIVITY, source, log_base=np.where(closed, -np.inf, 0.0)))
        if fits(r):
            return r
        closed[r] = True
    return None

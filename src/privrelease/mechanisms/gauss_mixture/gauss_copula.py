"""gauss-copula: DP one-way marginals on public cells, a Gaussian copula, and the gauss-pca mixture.

``gauss-pca`` models the encoded matrix directly: numeric columns in [0, 1] by public
bounds, categorical columns one-hot, decoded by clipping and argmax. Its released
marginals are those of a Gaussian mixture: atoms (a value held by many records, such
as 0 in a zero-inflated column, or 40 hours a week) are smeared, and argmax decoding
inflates every majority level. This mechanism spends a share of the zCDP budget on
DP one-way histograms over public cells, uses them to map every numeric column to
normal scores before fitting :class:`~privrelease.mechanisms.gauss_mixture.gauss_pca.GaussPCA` (a
Gaussian copula), and, after sampling, maps numeric columns back through the DP
quantiles and assigns categorical levels so that their frequencies meet the DP
marginals. Atoms are cells of their own, so they come back as exact values.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, ClassVar, Iterable

import numpy as np
from scipy.special import ndtri

from numbers import Integral, Real

from ...dp.calibration import calibrate_rho, epsilon_for, zcdp_noise_multiplier
from ...dp.costs import check_delta
from ...dp.rounding import largest_remainder
from ...errors import InputDataError, ParameterError
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, Capabilities, SyntheticMechanism
from ..constraints import BOOL, COMMON, FRACTION, Instance, Interval, N_CLASSES, Options
from .gauss_pca import GaussPCA

#: Share of the total zCDP rho spent on the one-way histograms (chosen on census_income_kdd, gas_drift, musk2).
DEFAULT_MARGINAL_SHARE = 0.55
#: Equal-width interval cells of a numeric column not on a small integer grid: "auto" picks a
#: power of two in [MIN_BINS, FINE_BINS] from the public n, the number of groups and the noise.
DEFAULT_BINS = "auto"
FINE_BINS = 64
MIN_BINS = 4
#: Numeric columns get the copula when at least this many cells could hold CELL_SIGMAS noise stds each.
MIN_COPULA_BINS = 16
#: "auto" bins: the mean count of a cell should be at least this many noise stds.
CELL_SIGMAS = 8.0
#: Noisy cells below this many noise stds are set to 0 before normalising (post-processing).
DEFAULT_THRESHOLD = 0.0
#: An integer column with at most this many values gets one cell (an atom) per value.
DEFAULT_MAX_INTEGER_CELLS = 128
#: Normal scores are clipped to [-L, L] and scaled to [0, 1] for the mixture.
LATENT_BOUND = 4.0


def histogram_sensitivity(n_columns: int) -> float:
    """L2 sensitivity of the one-way histograms of ``d`` columns stacked: ``sqrt(2 d)``.

    Each record falls in exactly one cell of each column's histogram. Replacing it moves
    at most two cells of each histogram, one down by 1 and one up by 1 (none when the
    two records share the cell), so the stacked difference has at most ``2 d`` entries
    of absolute value 1.
    """
    return math.sqrt(2.0 * int(n_columns))


def auto_bins(n_group: float, sigma: float) -> int:
    """Largest power of two ``K <= FINE_BINS`` with ``n_group / K >= CELL_SIGMAS sigma`` (at least MIN_BINS).

    Only public quantities enter: n (public under R1), the number of groups and the noise std.
    """
    if sigma <= 0:
        return FINE_BINS
    ratio = n_group / (CELL_SIGMAS * sigma)
    if ratio < 1:
        return MIN_BINS
    return int(min(FINE_BINS, max(MIN_BINS, 2 ** int(math.floor(math.log2(ratio))))))


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


class NumericCells:
    """Public cells of one encoded numeric column (values in [0, 1]).

    ``steps > 0`` and ``steps + 1 <= max_cells``: the column is an integer grid with
    ``steps`` steps between its bounds; every grid value is an atom (``steps + 1`` cells).
    Otherwise: an atom at each bound (0 and 1: the lower and upper public bounds, where
    zero-inflated and top-coded values sit) and ``bins`` equal-width open intervals between.
    """

    def __init__(self, steps: int, bins: int, max_cells: int):
        self.steps = int(steps)
        self.grid = 0 < self.steps and self.steps + 1 <= int(max_cells)
        self.bins = int(bins)
        if self.grid:
            self.n_cells = self.steps + 1
            self.atom = np.ones(self.n_cells, dtype=bool)
            self.lo = np.arange(self.n_cells) / self.steps
            self.hi = self.lo.copy()
        else:
            self.n_cells = self.bins + 2
            self.atom = np.zeros(self.n_cells, dtype=bool)
            self.atom[[0, -1]] = True
            edges = np.linspace(0.0, 1.0, self.bins + 1)
            self.lo = np.concatenate([[0.0], edges[:-1], [1.0]])
            self.hi = np.concatenate([[0.0], edges[1:], [1.0]])
        # an integer column off the grid: a value equals a bound when within half a step of it
        self.tol = 0.5 / self.steps if self.steps > 0 else 1e-12

    def index(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self.grid:
            return np.clip(np.rint(x * self.steps), 0, self.steps).astype(np.int64)
        k = 1 + np.minimum(np.floor(x * self.bins), self.bins - 1).astype(np.int64)
        k[x < self.tol] = 0
        k[x > 1.0 - self.tol] = self.n_cells - 1
        return k

    def position(self, x: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Where x sits inside its cell, in [0, 1] (atoms: undefined, returns 0)."""
        w = self.hi[k] - self.lo[k]
        return np.where(w > 0, np.clip((x - self.lo[k]) / np.where(w > 0, w, 1.0), 0.0, 1.0), 0.0)


class GaussCopula(SyntheticMechanism):
    """Gaussian copula over DP one-way marginals, with the gauss-pca mixture as its dependence model.

    Parameters
    ----------
    epsilon : float in (0, inf]
    delta : float in (0, 1), default 1e-5
    marginal_share : float in (0, 1), default 0.55
        Share of the total zCDP rho spent on the one-way histograms; the rest goes to
        the mixture (:class:`GaussPCA`, with its own default split of that rest).
    bins : "auto" or int >= 1, default "auto"
        Equal-width interval cells of a numeric column that is not a small integer grid.
        ``"auto"``: the largest power of two up to 64 (at least 4) for which a cell's mean
        count is at least 8 noise stds, from the public n, number of groups and noise
        (:func:`auto_bins`); counts are taken on 64 cells and merged before the noise.
    integer_steps : sequence of int or None
        For each numeric column of the domain (in order), ``upper - lower`` when it is an
        integer column, 0 otherwise (public, from the schema; the release passes it).
        None: every numeric column is continuous.
    max_integer_cells : int >= 2, default 128
        Integer columns with at most this many values get an atom per value.
    by_label : True, False or "auto", default "auto"
        With a label: every feature histogram is taken per class (the joint histogram of
        the label and the column), so that each column's relation to the label is measured
        directly; the copula maps each record through its class's marginal, and samples are
        rank-matched and quota-assigned class by class. ``"auto"``: per class when
        ``n / C`` records would fill at least 8 cells with 8 noise stds each.
    threshold : float >= 0, default 0
        Post-processing of each noisy histogram: 0 projects it onto the counts summing to
        its total; t > 0 first sets the cells below t noise stds to 0 (:func:`denoise`).
    n_components : int or None
        The mixture's dimension P (None: ``min(20, p)``).
    n_classes : int or None
        Number of label levels (public; the release passes it from the schema).
    accounting : "auto", "gaussian" or "zcdp" (as for gauss-pca)
    domain : EncodedDomain or None
    rng : None, int, numpy Generator (or a privrelease RandomSource)

    Attributes
    ----------
    cells_ : list of :class:`NumericCells`, one per numeric column
    marginals_ : list of (G, cells) arrays, the post-processed DP cell/level frequencies of
        every numeric column, then every categorical block, per group (G classes with
        ``by_label``, else one group)
    label_weights_ : DP class shares (None without a label)
    mixture_ : the fitted :class:`GaussPCA` on the latent matrix
    rho_, rho_split_, privacy_cost_, sensitivities_, noise_scales_, budget_split_

    Notes
    -----
    Guarantee: ``(epsilon, delta)``-DP under R1 with the label inside the record (one
    record, label included, replaced; n public). Budget: the total zCDP ``rho`` is
    calibrated from ``(epsilon, delta)`` exactly as for gauss-pca
    (:func:`~privrelease.dp.calibration.calibrate_rho`). The mixture is given the
    epsilon at which ``(1 - marginal_share) rho`` is ``(epsilon_m, delta)``-DP; its own
    calibration of that epsilon returns ``rho_mix`` (at most the target, by
    construction of the inversion), and the histograms get exactly
    ``rho_hist = rho - rho_mix``. Gaussian mechanisms compose in zCDP by adding their
    rho, and the mixture uses only released quantities besides its own Gaussian queries
    (adaptive composition), so the whole release is ``rho``-zCDP and, in the tight
    Gaussian mode, has the profile of one Gaussian mechanism with that rho, hence
    ``(epsilon, delta)``-DP.

    1. One-way histograms (pass 1). Cells are public: numeric columns on their integer
       grid (an atom per value) when small, else an atom at each public bound plus
       ``bins`` equal-width intervals; categorical columns at their levels. With a label
       and ``by_label``, each feature column's histogram is joint with the label (cells
       ``class x cell``); otherwise the label gets its own histogram. Every record is in
       exactly one cell of each of the ``d`` histograms (``d`` = feature columns, + 1 for a
       separate label histogram). Replacing one record, its label included, changes each
       histogram in at most two cells by 1 each, so the stacked count vector has L2
       sensitivity ``sqrt(2 d)`` (:func:`histogram_sensitivity`). Gaussian noise with
       ``sigma = sqrt(2 d) / sqrt(2 rho_hist)``. Post-processing: class sizes are the
       inverse-variance average over the columns of the noisy row sums, projected onto
       the counts summing to the public n; each noisy (class) histogram is projected onto
       the counts summing to its class size (:func:`project_to_simplex`). The class shares
       replace the mixture's class weights (post-processing).
    2. Copula transform (post-processing of the released marginals, applied to each
       record alone). A numeric value in cell k of released left mass ``F_k`` and mass
       ``m_k`` goes to ``u = F_k + a m_k``, with ``a`` its relative position inside an
       interval cell, or uniform on [0, 1) inside an atom (jitter from a seed drawn once,
       so that every pass sees the same latent row); ``z = Phi^{-1}(u)`` clipped to
       ``[-L, L]`` and scaled to [0, 1] (with ``by_label``, through its class's marginal).
       Categorical blocks are kept one-hot. The
       transformed rows lie in the same encoded domain (numeric coordinates in [0, 1],
       one-hot blocks), and each depends on its own record only.
    3. Mixture: :class:`GaussPCA` fitted on the transformed rows with its own passes,
       its own sensitivities (derived in its docstring for rows of this domain) and
       ``rho_mix``.
    4. Sampling (post-processing): records drawn from the mixture; within each class
       (with ``by_label``; else all records at once) every numeric column
       is rank-matched to the released marginal (the i-th smallest latent value of m
       draws takes the released quantile at ``(i + U) / m``; an atom's quantile is its
       value, an interval's is linear inside it); every categorical column gets level
       counts from the released frequencies (largest remainders) and levels are
       assigned greedily by the sampled one-hot scores, highest first, until each level's
       quota is full.

    Which histograms are released is decided from public quantities only (n, the schema,
    the classes and the nominal noise std): numeric columns are histogrammed and mapped
    through the copula when ``n / (8 sigma) >= 16``; otherwise (many columns, small n,
    e.g. 200 numeric columns and 7,000 records at epsilon 1) their marginals would be
    mostly noise, so they enter the mixture on their encoded scale as in gauss-pca; when no
    histogram is left the mixture gets the whole budget (``rho_hist = 0``).

    Passes: one for the histograms, then those of GaussPCA (two, three with labels).
    Memory ``O(sum of cells + C p^2)``, independent of n.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "marginal_share": FRACTION,
        "bins": [Options("auto"), Interval(Integral, 1, None, closed="left")],
        "integer_steps": [None, Instance(tuple, list, np.ndarray, what="a sequence of ints")],
        "max_integer_cells": [Interval(Integral, 2, None, closed="left")],
        "by_label": [BOOL, Options("auto")],
        "threshold": [Interval(Real, 0, None, closed="left")],
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "n_classes": N_CLASSES,
        "accounting": [Options("auto", "gaussian", "zcdp")],
    }

    name: ClassVar[str] = "gauss-copula"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = ("Gaussian copula: DP one-way marginals on public cells (atoms kept), gauss-pca mixture "
                              "on normal scores, quantile and quota decoding; zCDP accounting")
    supervised: ClassVar[bool] = False
    uses_delta: ClassVar[bool] = True
    capabilities: ClassVar[Capabilities] = Capabilities(passes="multi-pass", samples_in_chunks=True,
                                                        uses_label=True, estimates_covariance=True)

    def __init__(self, epsilon=1.0, delta=1e-5, *, marginal_share=DEFAULT_MARGINAL_SHARE, bins=DEFAULT_BINS,
                 integer_steps=None, max_integer_cells=DEFAULT_MAX_INTEGER_CELLS, by_label="auto",
                 threshold=DEFAULT_THRESHOLD, n_components=None, n_classes=None, accounting="auto", domain=None,
                 rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.marginal_share = marginal_share
        self.bins = bins
        self.integer_steps = integer_steps
        self.max_integer_cells = max_integer_cells
        self.by_label = by_label
        self.threshold = threshold
        self.n_components = n_components
        self.n_classes = n_classes
        self.accounting = accounting
        self.domain = domain
        self.rng = rng

    @classmethod
    def schema_params(cls, encoder, label_encoder) -> dict:
        """Public facts from the schema: label levels and each numeric column's integer steps."""
        steps = []
        for c in encoder.columns:
            if c.kind == "numeric":
                span = float(c.upper) - float(c.lower)
                steps.append(int(round(span)) if c.integer and span == round(span) else 0)
        out = {"integer_steps": tuple(steps)}
        if label_encoder is not None and label_encoder.columns[0].kind == "categorical":
            out["n_classes"] = len(label_encoder.columns[0].categories)
        return out

    # ---- validation --------------------------------------------------------------------
    def _setup(self, p: int):
        eps, _, _, dom = self._check_common(None, p=p)
        delta = check_delta(self.delta)
        if not math.isinf(eps) and delta <= 0:
            raise ParameterError("gauss-copula needs delta > 0 (an (epsilon, delta)-DP mechanism)")
        self._check_fraction(self.marginal_share, "marginal_share")
        if self.bins != "auto":
            self._check_int(self.bins, "bins", 1)
        if self.by_label not in (True, False, "auto"):
            raise ParameterError(f"by_label must be True, False or 'auto', got {self.by_label!r}")
        th = self.threshold
        if isinstance(th, bool) or not isinstance(th, (int, float)) or not (th >= 0) or not math.isfinite(th):
            raise ParameterError(f"threshold must be a number >= 0, got {th!r}")
        self._check_int(self.max_integer_cells, "max_integer_cells", 2)
        if self.accounting not in ("auto", "gaussian", "zcdp"):
            raise ParameterError(f"accounting must be 'auto', 'gaussian' or 'zcdp', got {self.accounting!r}")
        p1 = dom.p1
        steps = self.integer_steps
        if steps is None:
            steps = (0,) * p1
        try:
            steps = tuple(int(s) for s in steps)
        except (TypeError, ValueError):
            raise ParameterError(f"integer_steps must be a sequence of integers, got {self.integer_steps!r}") from None
        if len(steps) != p1 or any(s < 0 for s in steps):
            raise ParameterError(f"integer_steps must give one integer >= 0 per numeric column ({p1}), got {steps}")
        self.domain_ = dom
        self._steps = steps
        fine = FINE_BINS if self.bins == "auto" else int(self.bins)
        self.cells_ = [NumericCells(s, fine, self.max_integer_cells) for s in steps]
        return eps, delta

    def _calibrate(self, eps: float, delta: float, share: float):
        mode = self.accounting
        if mode == "auto":
            mode = "zcdp" if self.source_.secure else "gaussian"
        self.accounting_mode_ = mode
        if math.isinf(eps):
            self.rho_ = math.inf
            self.rho_split_ = {"marginals": math.inf, "mixture": math.inf}
            return math.inf
        if share == 0:  # no histogram is released: the mixture gets the whole budget
            self.rho_ = calibrate_rho(eps, delta, mode, 0.0)
            self.rho_split_ = {"marginals": 0.0, "mixture": self.rho_}
            return eps
        rho, rho_hist, rho_mix, eps_mix = split_budget(eps, delta, mode, float(share))
        if not (rho_hist > 0 and rho_mix > 0):
            raise ParameterError(f"marginal_share={self.marginal_share} leaves no budget for one of the two parts")
        self.rho_ = rho
        self.rho_split_ = {"marginals": rho_hist, "mixture": rho_mix}
        return eps_mix

    # ---- pass 1: histograms ----------------------------------------------------------------
    def _count(self, X, g, counts):
        """Add the chunk's cell counts; ``g`` is each record's group (its class with ``by_label``, else 0)."""
        dom = self.domain_
        G = counts[0].shape[0] if counts else 1
        cols = [(cells.index(X[:, col]), cells.n_cells) for col, cells in zip(dom.numeric, self.cells_)]
        cols += [(np.argmax(X[:, a:e], axis=1), e - a) for a, e in dom.blocks]
        for j, (k, K) in enumerate(cols):
            counts[j] += np.bincount(g * K + k, minlength=G * K).reshape(G, K)

    def _release_marginals(self, counts, n):
        """Gaussian mechanism on the stacked histograms, then projection to valid distributions."""
        d = len(counts)
        flat = np.concatenate([c.ravel() for c in counts]).astype(np.float64)
        sens = histogram_sensitivity(d)
        nm = zcdp_noise_multiplier(self.rho_split_["marginals"])
        self.sensitivities_ = {"marginals_l2": sens}
        self.noise_scales_ = {}
        self.source_.set_value_bound(float(max(n, 1)))  # every cell count lies in [0, n] (n public)
        noisy = self._gaussian("marginals_std", flat, sens, nm, flat.size)
        std = self.noise_scales_["marginals_std"]
        parts, start = [], 0
        for c in counts:
            parts.append(noisy[start:start + c.size].reshape(c.shape))
            start += c.size
        n_feat = len(self.cells_) + len(self.domain_.blocks)
        G = parts[0].shape[0] if parts else 1
        if G > 1:
            # class sizes: every feature histogram's row sums estimate them (noise variance K_j std^2);
            # inverse-variance average over the columns, then scaled to the public n
            w = np.array([1.0 / h.shape[1] for h in parts[:n_feat]])
            est = sum(wj * h.sum(axis=1) for wj, h in zip(w, parts[:n_feat])) / w.sum()
            sizes = project_to_simplex(est, float(n))
        elif self.labelled_:
            sizes = np.array([float(n)])
            label = denoise(parts[n_feat].ravel(), float(n), float(self.threshold) * std)
        else:
            sizes = np.array([float(n)])
        safe = np.maximum(sizes, 1e-12)
        floor = float(self.threshold) * std
        self.marginals_ = [np.stack([denoise(h[c], sizes[c], floor) / safe[c] for c in range(G)])
                           for h in parts[:n_feat]]
        self.label_weights_ = (sizes / n if G > 1 else label / n) if self.labelled_ else None
        self._cdf = [np.concatenate([np.zeros((G, 1)), np.cumsum(m, axis=1)], axis=1)
                     for m in self.marginals_[:len(self.cells_)]]
        self._nonempty = [np.maximum.accumulate(np.where(m > 0, np.arange(m.shape[1]), 0), axis=1)
                          for m in self.marginals_[:len(self.cells_)]]

    def _groups(self, y, n):
        return np.asarray(y, dtype=np.int64) if (self.groups_ > 1 and y is not None) else np.zeros(n, dtype=np.int64)

    # ---- copula transform -----------------------------------------------------------------
    def _latent(self, X, y, chunk_index: int):
        Z = np.array(X, dtype=np.float64, copy=True)
        g = self._groups(y, X.shape[0])
        gen = np.random.default_rng([self._jitter_seed, int(chunk_index)])
        for j, (col, cells) in enumerate(zip(self.domain_.numeric, self.cells_)):
            x = X[:, col]
            k = cells.index(x)
            a = np.where(cells.atom[k], gen.random(x.size), cells.position(x, k))
            F, m = self._cdf[j][g, k], self.marginals_[j][g, k]
            u = np.clip(F + a * m, 1e-12, 1.0 - 1e-12)
            z = np.clip(ndtri(u), -LATENT_BOUND, LATENT_BOUND)
            Z[:, col] = (z + LATENT_BOUND) / (2.0 * LATENT_BOUND)
        return Z

    def _check_chunk(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.domain_.p or not np.all(np.isfinite(X)):
            raise InputDataError(f"X must be a finite 2-d encoded matrix with {self.domain_.p} columns")
        if X.size and (X.min() < -1e-12 or X.max() > 1 + 1e-12):
            raise InputDataError("X must be encoded into [0, 1] (use privrelease.schema.Encoder)")
        return X

    # ---- fitting ------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit on an encoded matrix (all passes in memory)."""
        _, X, y, _ = self._check_common(X, y)
        if y is not None and len(y) != X.shape[0]:
            raise InputDataError("X and y have different numbers of records")
        return self.fit_passes(lambda: iter([(X, y)]))

    def fit_marginals(self, make_chunks) -> float:
        """Pass 1: count every column's public cells and release the DP one-way marginals.

        Returns the epsilon handed to the mixture (see the Notes on the budget).
        """
        p = self.domain.p if isinstance(self.domain, EncodedDomain) else None
        if p is None:  # no declared domain: read the width from the first chunk
            for X, _ in make_chunks():
                p = np.asarray(X).shape[1]
                break
            if p is None:
                raise InputDataError("the input has no records")
        eps, delta = self._setup(p)
        self._eps_delta = (eps, delta)
        self.notes_ = []
        dom = self.domain_
        C = None if self.n_classes is None else self._check_int(self.n_classes, "n_classes", 1)
        counts, label_counts, labelled, n = None, None, False, 0
        for X, y in make_chunks():
            X = self._check_chunk(X)
            if counts is None:  # the first chunk says whether the input is labelled
                labelled = y is not None
                if labelled and C is None:
                    C = self._classes_from_labels(make_chunks)
                self.groups_ = C if (labelled and C > 1) else 1  # counted per class; grouped after the pass
                widths = [c.n_cells for c in self.cells_] + [b - a for a, b in dom.blocks]
                counts = [np.zeros((self.groups_, K)) for K in widths]
                label_counts = np.zeros((1, C)) if labelled else None
            n += X.shape[0]
            if labelled:
                if y is None:
                    raise InputDataError("some chunks have labels and others not")
                y = np.asarray(y, dtype=np.int64)
                if y.shape[0] != X.shape[0]:
                    raise InputDataError("X and y have different numbers of records")
                if y.size and (y.min() < 0 or y.max() >= C):
                    raise InputDataError(f"a label code is outside the declared {C} classes")
                if label_counts is not None:
                    label_counts[0] += np.bincount(y, minlength=C)
            self._count(X, self._groups(y if labelled else None, X.shape[0]), counts)
        if n == 0:
            raise InputDataError("the input has no records")
        self.n_ = n
        self.labelled_ = labelled
        counts = self._choose_cells(counts, n, label_counts)
        eps_mix = self._calibrate(eps, delta, float(self.marginal_share) if counts else 0.0)
        if counts:
            self._release_marginals(counts, n)
        else:
            self.sensitivities_, self.noise_scales_ = {}, {}
            self.marginals_, self.label_weights_, self._cdf, self._nonempty = [], None, [], []
        return eps_mix

    def _choose_cells(self, counts, n, label_counts):
        """Which histograms, groups and interval cells: from public quantities only (n, the
        schema, the classes, the nominal noise std); fine counts are merged before any noise.

        Numeric columns get the copula only when their marginals can be informative: when
        ``n / (CELL_SIGMAS sigma) >= MIN_COPULA_BINS`` (each of that many cells would hold
        the mean count of ``CELL_SIGMAS`` noise stds). Otherwise they enter the mixture on
        their encoded scale, as in gauss-pca, and are not histogrammed; when no histogram
        is left (an all-numeric table), the whole budget goes to the mixture.
        """
        eps, delta = self._eps_delta
        mode = "zcdp" if (self.accounting == "zcdp" or (self.accounting == "auto" and self.source_.secure)) \
            else "gaussian"
        rho_h = math.inf if math.isinf(eps) else split_budget(eps, delta, mode, float(self.marginal_share))[1]
        nm = zcdp_noise_multiplier(rho_h)
        n_feat = len(counts)
        C = self.groups_
        sigma_all = histogram_sensitivity(n_feat + (label_counts is not None)) * nm
        p1 = len(self.cells_)
        self.numeric_copula_ = p1 > 0 and (sigma_all == 0 or n / (CELL_SIGMAS * sigma_all) >= MIN_COPULA_BINS)
        if not self.numeric_copula_ and p1 > 0:
            counts = counts[p1:]
            self.cells_ = []
            n_feat = len(counts)
            self.notes_.append("numeric columns enter the mixture on their encoded scale: with this n, number of "
                               "columns and budget their one-way marginals would be mostly noise")
            if n_feat == 0:  # no categorical column: no histogram at all
                self.groups_ = 1
                return []
        sigma_c = histogram_sensitivity(n_feat) * nm
        sigma_1 = histogram_sensitivity(n_feat + (label_counts is not None)) * nm
        if self.by_label == "auto":
            by = C > 1 and n / C / (CELL_SIGMAS * sigma_c) >= 8 if sigma_c > 0 else C > 1
        else:
            by = bool(self.by_label) and C > 1
        G = C if by else 1
        if G == 1 and C > 1:
            counts = [h.sum(axis=0, keepdims=True) for h in counts]
        self.groups_ = G
        if self.bins == "auto":
            K = auto_bins(n / G, sigma_c if G > 1 else sigma_1)
            cells = []
            for j, (h, s) in enumerate(zip(counts[:len(self.cells_)], self._steps)):
                c = NumericCells(s, K, self.max_integer_cells)
                if not c.grid and K < FINE_BINS:
                    r = FINE_BINS // K
                    counts[j] = np.concatenate([h[:, :1], h[:, 1:-1].reshape(G, K, r).sum(axis=2), h[:, -1:]], axis=1)
                cells.append(c)
            self.cells_ = cells
            self.bins_ = K
        else:
            self.bins_ = int(self.bins)
        if G == 1 and label_counts is not None:
            counts = counts + [label_counts]
        return counts

    def _classes_from_labels(self, make_chunks) -> int:
        # Without a declared number of classes the largest code is read from the data; the
        # release always passes the schema's level count, so this is only for direct use.
        C = 0
        for _, y in make_chunks():
            if y is not None and len(y):
                C = max(C, int(np.max(y)) + 1)
        self.notes_.append("n_classes was not declared: the number of classes was read from the labels (not private)")
        return C

    def fit_stats(self, stats):
        """Not available: the copula needs its marginal pass before the mixture's statistics exist,
        so one pass of raw statistics cannot fit it (an engine that computes only statistics is refused)."""
        raise ParameterError(f"mechanism '{self.name}' needs a marginal pass before its moments; one pass of "
                             f"statistics cannot fit it: use --engine local")

    def fit_executor(self, passes):
        """Not yet available on a cluster: the latent transform of the mixture's passes depends on the
        released marginals, and its per-chunk map is not written as a pass executor's map."""
        raise ParameterError(f"mechanism '{self.name}' does not run its passes on the dask engine yet; use "
                             f"--engine local, or --mechanism gauss-pca on a cluster")

    def fit_passes(self, make_chunks: Callable[[], Iterable[tuple[np.ndarray, np.ndarray | None]]]):
        """Streamed fit: ``make_chunks()`` yields fresh ``(X_chunk, y_chunk)`` pairs on every call.

        Pass 1 (:meth:`fit_marginals`) counts the public cells (mergeable histograms) and
        releases the DP marginals; GaussPCA then makes its own passes over the
        copula-transformed chunks.
        """
        eps_mix = self.fit_marginals(make_chunks)
        eps, delta = float(self.epsilon), float(self.delta)
        dom = self.domain_
        self._jitter_seed = int(self.source_.generator.integers(2**63))
        mix = GaussPCA(eps_mix, delta, n_components=self.n_components, n_classes=self.n_classes,
                       accounting=self.accounting_mode_, domain=dom, rng=self.source_)

        def latent_chunks():
            for i, (X, y) in enumerate(make_chunks()):
                yield self._latent(self._check_chunk(X), y, i), y

        mix.fit_passes(latent_chunks)
        if math.isfinite(self.rho_) and mix.rho_ > self.rho_split_["mixture"] * (1 + 1e-9):
            raise ParameterError("internal accounting mismatch: the mixture spent more than its share")
        if self.label_weights_ is not None and mix.class_weights_.shape == self.label_weights_.shape:
            # post-processing: class shares from the histograms (averaged over every column) replace the
            # mixture's own noisy counts
            mix.class_weights_ = self.label_weights_.copy()
        self.mixture_ = mix
        self.n_components_ = mix.n_components_
        self.n_classes_ = mix.n_classes_
        self.sensitivities_.update({f"mixture_{k}": v for k, v in mix.sensitivities_.items()})
        self.noise_scales_.update({f"mixture_{k}": v for k, v in mix.noise_scales_.items()})
        self.budget_split_ = {"rho_marginals": float(self.rho_split_["marginals"]),
                              **{f"rho_mixture_{k}": float(v) for k, v in mix.rho_split_.items()}}
        self.passes_ = 1 + int(mix.passes_)
        self._set_cost(float(eps), float(delta) if math.isfinite(eps) else 0.0,
                       self.rho_ if math.isfinite(self.rho_) else None)
        return self

    # ---- sampling -----------------------------------------------------------------------------
    def sample(self, n: int):
        """Draw ``n`` records; returns ``(X, y)`` in the encoded domain (y None without labels)."""
        n = self._check_int(n, "n", 1)
        Z, y = self.mixture_.sample(n)
        gen = self.source_.generator
        dom = self.domain_
        X = np.zeros_like(Z)
        if not self.cells_:  # numeric columns on their encoded scale (no copula)
            idx = np.asarray(dom.numeric, dtype=int)
            X[:, idx] = np.clip(Z[:, idx], 0.0, 1.0)
        if not self.marginals_:  # no histogram released: argmax decoding
            for a, e in dom.blocks:
                X[np.arange(n), a + np.argmax(Z[:, a:e], axis=1)] = 1.0
            return X, y
        g = self._groups(y, n)
        off = len(self.cells_)
        for c in range(self.groups_):
            rows = np.flatnonzero(g == c)
            m = rows.size
            if m == 0:
                continue
            for j, col in enumerate(dom.numeric[:off]):
                order = np.argsort(Z[rows, col] + 1e-12 * gen.standard_normal(m), kind="stable")
                u = np.empty(m)
                u[order] = (np.arange(m) + gen.random(m)) / m
                X[rows, col] = self._quantile(j, c, u)
            for b, (a, e) in enumerate(dom.blocks):
                X[rows, a + quota_assign(Z[rows, a:e], self.marginals_[off + b][c], gen)] = 1.0
        return X, y

    def _quantile(self, j: int, c: int, u: np.ndarray) -> np.ndarray:
        cells, F, m = self.cells_[j], self._cdf[j][c], self.marginals_[j][c]
        # u in [F_k, F_{k+1}) lies in cell k; side="right" skips empty cells (F_k = F_{k+1})
        k = np.clip(np.searchsorted(F, u, side="right") - 1, 0, cells.n_cells - 1)
        k = self._nonempty[j][c][k]  # trailing empty cells (rounding at u -> 1): the last non-empty one
        frac = np.clip((u - F[k]) / np.where(m[k] > 0, m[k], 1.0), 0.0, 1.0)
        return np.clip(cells.lo[k] + frac * (cells.hi[k] - cells.lo[k]), 0.0, 1.0)

    def certificate_extra(self) -> dict:
        d = {
            "rho_zcdp": self.rho_,
            "rho_split": dict(self.rho_split_),
            "accounting": self.accounting_mode_,
            "marginal_cells": [int(c.n_cells) for c in self.cells_],
            "marginals": "DP one-way histograms on public cells (Gaussian mechanism, L2 sensitivity sqrt(2 d))",
            "n_components": int(self.n_components_),
            "mixture": {k: v for k, v in self.mixture_.certificate_extra().items()
                        if k in ("rho_zcdp", "rho_split", "clip_radius", "basis", "passes")},
            "passes": int(self.passes_),
            "n_treated_as_public": True,
        }
        if math.isfinite(self.rho_):
            d["epsilon_check_dp_accounting"] = epsilon_for(self.rho_split_["marginals"] + self.mixture_.rho_,
                                                           float(self.delta), self.accounting_mode_)
            d["epsilon_target"] = float(self.epsilon)
            d["delta"] = float(self.delta)
        return d


def quota_assign(scores: np.ndarray, freqs: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Levels for the rows of ``scores`` (n x k) whose counts meet the quotas ``round(n * freqs)``.

    Rounds of proposals: every unassigned row proposes its highest-scoring level among
    those with room left; a level with more proposals than room keeps the highest
    scores and is then full. Each round fills a level or places every proposer, so at
    most k + 1 rounds; every row gets a level because the quotas sum to n.
    """
    n, k = scores.shape
    f = np.asarray(freqs, dtype=np.float64)
    left = largest_remainder(f / f.sum() if f.sum() > 0 else np.full(k, 1.0 / k), n)
    s = np.asarray(scores, dtype=np.float64) + 1e-9 * gen.random(scores.shape)  # random tie-breaks
    out = np.full(n, -1, dtype=np.int64)
    free = np.arange(n)
    while free.size:
        open_ = left > 0
        masked = np.where(open_[None, :], s[free], -np.inf)
        best = np.argmax(masked, axis=1)
        for lv in np.unique(best):
            rows = free[best == lv]
            if rows.size > left[lv]:
                rows = rows[np.argsort(-s[rows, lv], kind="stable")[:left[lv]]]
            out[rows] = lv
            left[lv] -= rows.size
        free = free[out[free] < 0]
    return out

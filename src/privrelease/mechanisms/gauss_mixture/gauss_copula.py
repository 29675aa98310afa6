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
from numbers import Integral, Real
from typing import Callable, ClassVar, Iterable

import numpy as np

from ...dp.calibration import accounting_mode, calibrate_rho, epsilon_for, zcdp_noise_multiplier
from ...dp.costs import check_delta
from ...engine.passes import ChunkPasses
from ...errors import InputDataError, ParameterError
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, Capabilities, SyntheticMechanism
from ..constraints import BOOL, COMMON, FRACTION, Instance, Interval, N_CLASSES, Options
from .copula_parts import (CELL_SIGMAS, DEFAULT_BINS, DEFAULT_MARGINAL_SHARE, DEFAULT_MAX_INTEGER_CELLS,
                           DEFAULT_THRESHOLD, FINE_BINS, LATENT_BOUND, MIN_BINS, MIN_COPULA_BINS, CellCounter,
                           CopulaTransform, LatentPasses, NumericCells, auto_bins, cumulative_masses, denoise,
                           histogram_sensitivity, marginals_from_noisy, merge_cell_counts, project_to_simplex,
                           quota_assign, rank_match, split_budget)
from .gauss_pca import GaussPCA

__all__ = ["GaussCopula", "NumericCells", "CellCounter", "CopulaTransform", "histogram_sensitivity", "auto_bins",
           "denoise", "project_to_simplex", "quota_assign", "split_budget", "CELL_SIGMAS", "DEFAULT_BINS",
           "DEFAULT_MARGINAL_SHARE", "DEFAULT_MAX_INTEGER_CELLS", "DEFAULT_THRESHOLD", "FINE_BINS", "LATENT_BOUND",
           "MIN_BINS", "MIN_COPULA_BINS"]


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
        Number of label levels (public; the release passes it from the schema). Required to
        fit labelled data: it is never read from the labels.
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
       interval cell, or uniform on [0, 1) inside an atom (jitter keyed by a seed drawn
       once, the column and the record's global index, :func:`~privrelease.noise.counter.counter_uniforms_at`,
       so that every pass and every engine sees the same latent row); ``z = Phi^{-1}(u)`` clipped to
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

    Passes: one for the histograms, then those of GaussPCA (two, three with labels), all
    run by a pass executor (streamed chunks locally, partitions on Dask): the maps (cell
    counts, copula transform, the mixture's sums) run where the records are, the noise on
    the merged sums. Memory ``O(sum of cells + C p^2)``, independent of n.
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
        """The checks that depend on the domain (each parameter's own range is declared in
        ``_parameter_constraints`` and checked before any fit method); the public cells."""
        eps, _, _, dom = self._check_common(None, p=p)
        delta = check_delta(self.delta)
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
        mode = accounting_mode(self.accounting, self.source_.secure)
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
        self.marginals_, self.label_weights_ = marginals_from_noisy(parts, n_feat, n, self.labelled_,
                                                                    float(self.threshold) * std)
        self._cdf, self._nonempty = cumulative_masses(self.marginals_[:len(self.cells_)])

    def _groups(self, y, n):
        return np.asarray(y, dtype=np.int64) if (self.groups_ > 1 and y is not None) else np.zeros(n, dtype=np.int64)


    # ---- fitting ------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit on an encoded matrix (all passes in memory)."""
        _, X, y, _ = self._check_common(X, y)
        if y is not None and len(y) != X.shape[0]:
            raise InputDataError("X and y have different numbers of records")
        return self.fit_executor(ChunkPasses(lambda: iter([(X, y)])), p=X.shape[1])

    def fit_passes(self, make_chunks: Callable[[], Iterable[tuple[np.ndarray, np.ndarray | None]]]):
        """Streamed fit: ``make_chunks()`` yields fresh ``(X_chunk, y_chunk)`` pairs on every call
        (see :meth:`fit_executor`)."""
        p = None
        if not isinstance(self.domain, EncodedDomain):  # no declared domain: the width of the first chunk
            p = next((np.asarray(X).shape[1] for X, _ in make_chunks()), None)
            if p is None:
                raise InputDataError("the input has no records")
        return self.fit_executor(ChunkPasses(make_chunks), p=p)

    def fit_executor(self, passes, p: int | None = None):
        """Fit by running the passes on ``passes`` (a :mod:`privrelease.engine.passes` executor:
        streamed chunks locally, or partitions on a Dask cluster).

        Pass 1 (:meth:`fit_marginals`) maps each chunk to its public cells' counts
        (:class:`CellCounter`) and releases the DP marginals here; the mixture's passes then run
        their maps on the copula-transformed chunks (:class:`CopulaTransform`, applied where the
        chunks are, keyed by each record's global index so that every engine sees the same
        latent rows). ``p``: the encoded width when no ``domain`` is declared.
        """
        eps_mix = self.fit_marginals(passes, p)
        self._jitter_seed = int(self.source_.generator.integers(2**63))
        mix = GaussPCA(eps_mix, float(self.delta), n_components=self.n_components, n_classes=self._n_classes,
                       accounting=self.accounting_mode_, domain=self.domain_, rng=self.source_)
        mix.fit_executor(LatentPasses(passes, self.copula_transform()))
        self._adopt_mixture(mix)
        return self

    def copula_transform(self) -> CopulaTransform:
        """The fitted per-chunk copula map (post-processing of the released marginals)."""
        dom, k = self.domain_, len(self.cells_)
        return CopulaTransform(p=dom.p, numeric=tuple(dom.numeric[:k]), cells=tuple(self.cells_),
                               cdf=tuple(self._cdf), masses=tuple(self.marginals_[:k]), grouped=self.groups_ > 1,
                               key=self._jitter_seed)

    def _adopt_mixture(self, mix: GaussPCA):
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
        eps = float(self.epsilon)
        self._set_cost(eps, float(self.delta) if math.isfinite(eps) else 0.0,
                       self.rho_ if math.isfinite(self.rho_) else None)

    def fit_marginals(self, passes, p: int | None = None) -> float:
        """Pass 1: count every column's public cells and release the DP one-way marginals.

        Returns the epsilon handed to the mixture (see the Notes on the budget).
        """
        if isinstance(self.domain, EncodedDomain):
            p = self.domain.p
        elif p is None:
            raise ParameterError("gauss-copula needs a declared domain (or the encoded width p) to fit on passes")
        eps, delta = self._setup(p)
        self._eps_delta = (eps, delta)
        self.notes_ = []
        C = None if self.n_classes is None else self._check_int(self.n_classes, "n_classes", 1)
        out = self._count_cells(passes, C)
        if out[1] and C is None:
            C = self._declared_classes()  # raises: refused before any noise is drawn
        n, n_labelled, counts, label_counts, _ = out
        self._n_classes = C
        if n == 0:
            raise InputDataError("the input has no records")
        if 0 < n_labelled < n:
            raise InputDataError("some chunks have labels and others not")
        self.n_ = int(n)
        self.labelled_ = labelled = n_labelled > 0
        self.groups_ = C if (labelled and (C or 0) > 1) else 1  # counted per class; grouped after the pass
        counts = [h if labelled else h[:1] for h in counts]
        counts = self._choose_cells(counts, self.n_, label_counts if labelled else None)
        eps_mix = self._calibrate(eps, delta, float(self.marginal_share) if counts else 0.0)
        if counts:
            self._release_marginals(counts, self.n_)
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
        mode = accounting_mode(self.accounting, self.source_.secure)
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


    def _count_cells(self, passes, n_classes):
        """One pass of :class:`CellCounter` (per class when ``n_classes`` is known)."""
        dom = self.domain_
        counter = CellCounter(p=dom.p, numeric=tuple(dom.numeric), cells=tuple(self.cells_),
                              blocks=tuple(dom.blocks), n_classes=n_classes)
        out = passes.run(counter, merge=merge_cell_counts)
        return out if out is not None else (0, 0, (), None, 0)

    def fit_stats(self, stats):
        """Not available: the copula needs its marginal pass before the mixture's statistics exist,
        so one pass of raw statistics cannot fit it (an engine that computes only statistics is refused)."""
        raise ParameterError(f"mechanism '{self.name}' needs a marginal pass before its moments; one pass of "
                             f"statistics cannot fit it: use --engine local")


    # ---- sampling -----------------------------------------------------------------------------
    def with_source(self, source):
        """A shallow copy drawing from ``source``, its mixture too (every draw of a part from one source)."""
        m = super().with_source(source)
        m.mixture_ = self.mixture_.with_source(source)
        return m

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
                X[rows, col] = rank_match(Z[rows, col], self.cells_[j], self._cdf[j][c], self.marginals_[j][c],
                                          self._nonempty[j][c], gen)
            for b, (a, e) in enumerate(dom.blocks):
                X[rows, a + quota_assign(Z[rows, a:e], self.marginals_[off + b][c], gen)] = 1.0
        return X, y

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



"""gauss-copula: DP one-way marginals on public cells, a Gaussian copula, and the gauss-pca mixture.

``gauss-pca`` models the encoded matrix directly, so atoms are smeared and argmax decoding
inflates majority levels. This mechanism spends a share of the zCDP budget on DP one-way
histograms (numeric columns as trees of cells refined to their resolution, atoms anywhere in
the range kept), maps every numeric column to normal scores through them before fitting
:class:`~privrelease.mechanisms.gauss_mixture.gauss_pca.GaussPCA` (a Gaussian copula), and after
sampling maps numeric columns back through the DP quantiles and assigns categorical levels so
that their frequencies meet the DP marginals.

The mechanism reads plan -> measure -> estimate -> sample, one module each: :mod:`.copula_plan` (public
facts only: trees, groups, the :class:`~.copula_plan.CopulaBudget`), :mod:`.copula_measure`
(the only code that reads records or draws noise), :mod:`.copula_estimate` (the model fitted to the
released measurements) and :mod:`.copula_sample` (records drawn from it); tuning constants in
:mod:`.copula_defaults`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import replace
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ...dp.calibration import accounting_mode, zcdp_noise_multiplier
from ...dp.costs import check_delta
from ...engine.passes import ChunkPasses
from ...errors import DataWarning, InputDataError, ParameterError
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, Capabilities, SyntheticMechanism
from ..constraints import BOOL, COMMON, FRACTION, N_CLASSES, Instance, Interval, Options
from . import copula_defaults as D
from .copula_dependence import GraphicalDependence, MixtureDependence
from .copula_estimate import (
    cumulative_masses,
    marginals_from_noisy,
    project_to_simplex,
    refine_levels,
)
from .copula_measure import (
    CellCounter,
    count_cells,
    level_measurer,
    measure_mixture,
    measure_top_levels,
    pooled_counts,
)
from .copula_plan import (
    accounting_epsilon,
    auto_marginal_share,
    coarse_plan,
    histogram_weights,
    plan_budget,
    plan_cells,
)
from .copula_sample import sample_copula, sample_model
from .copula_tree import NumericTree, leaf_cap
from .model_plan import model_budget, plan_model

__all__ = ["GaussCopula"]


class GaussCopula(GraphicalDependence, MixtureDependence, SyntheticMechanism):
    """Gaussian copula over DP one-way marginals, with the gauss-pca mixture as its dependence model.

    Parameters
    ----------
    epsilon : float in (0, inf]
    delta : float in (0, 1), default 1e-5
    marginal_share : float in (0, 1) or "auto" (default)
        Share of the total spent on the histograms (the rest: the mixture); see ``auto_marginal_share``.
        With the graphical model: the histograms' share of the total (the rest: the model's rounds; "auto":
        ``1 - MODEL_SHARE``).
    dependence : "auto" (default), "graphical" or "mixture"
        The model of the columns' joint structure. "graphical": one graphical model over the categorical columns,
        the label and the numeric columns' coarse nodes, fitted to the one-way histograms and to the marginals
        its rounds choose and measure (:func:`~.copula_measure.model_rounds`, ``docs/derivations.md``); numeric
        values inside a node from their class's tree. "mixture": the gauss-pca mixture on normal scores (the
        parameters ``n_components`` and ``coarse_cells`` are the mixture's, refused with the graphical model). "auto": the mixture on a wide numeric table
        (``WIDE_NUMERIC`` numeric columns or more, more than the categorical ones), else the graphical model.
    grids : sequence of (lower, upper, resolution) or None
        For each numeric column of the domain (in order), its public bounds and precision
        (``resolution`` 0 for a continuous column); public, from the schema (the release passes
        it). None: every column continuous on [0, 1].
    missing : sequence of bool or None
        For each numeric column, whether it may be missing (``missing: allowed``; NaN in the
        encoded coordinate). None: none may.
    branching : int >= 2, default 16
        Children per node of each numeric column's tree (:class:`NumericTree`; fewer where the coarsest level
        would hold more than TOP_NODES nodes).
    split_sigmas : float >= 0, default 3
        A tree node's children are measured when its released count reaches this many noise stds.
    max_leaves : int >= 4 or None
        Cap on the leaves of one column (None: :func:`~.copula_tree.leaf_cap`, 2^22 leaves
        shared by all numeric columns and classes, between 2^10 and 2^20 per column).
    by_label : True, False or "auto", default "auto"
        With a label: every feature histogram is taken per class (the joint histogram of
        the label and the column), so that each column's relation to the label is measured
        directly; the copula maps each record through its class's marginal, and samples are
        rank-matched and quota-assigned class by class. ``"auto"``: per class when
        ``n / C`` records would fill at least 8 cells with 8 noise stds each and, with the graphical
        model, the label has at most ``MODEL_MAX_CLASSES`` (3) classes.
    threshold : float >= 0 or "auto" (default)
        Post-processing of each noisy histogram: 0 projects it onto the counts summing to
        its total; t > 0 first sets the cells below t noise stds to 0 (:func:`~.copula_estimate.denoise`).
        ``"auto"``: with the graphical model, ``MODEL_NUMERIC_THRESHOLD`` on the numeric trees' coarsest
        cells' tails only (so that a heavy tail's empty nodes keep no noise as mass, while a thin run between
        two counted cells keeps its count) and 0 elsewhere; 0 with the mixture.
    n_components : int or None
        The mixture's dimension P (None: ``min(20, p)``).
    coarse_cells : int >= 0, default COARSE_CELLS
        Each numeric column also enters the mixture as a one-hot block of its tree's nodes on the
        finest grid with at most this many (0: off), so that it can hold non-monotone dependence
        (:func:`~.copula_sample.numeric_values` samples the node, then the value inside it).
    n_classes : int or None
        Number of label levels (public; the release passes it from the schema). Required to
        fit labelled data: it is never read from the labels.
    accounting : "auto", "gaussian" or "zcdp" (as for gauss-pca)
    domain : EncodedDomain or None
    rng : None, int, numpy Generator (or a privrelease RandomSource)

    Attributes
    ----------
    cells_ : list of :class:`NumericTree`, one per numeric column
    depths_ : levels of each tree that may be measured (public); n_histograms_ : the number of
        one-record-per-histogram count vectors over all levels (``d`` of the sensitivity)
    marginals_ : list of (G, cells) arrays, the post-processed DP cell/level frequencies of
        every numeric column, then every categorical block, per group (G classes with
        ``by_label``, else one group)
    label_weights_ : DP class shares (None without a label)
    mixture_ : the fitted :class:`GaussPCA` on the latent matrix
    budget_ : the :class:`~.copula_plan.CopulaBudget` (every share, sensitivity and noise multiplier)
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

    1. One-way histograms (pass 1; the counts of every level are sums of the exact leaf counts
       it keeps). Cells are public: each numeric column is a :class:`NumericTree` over its
       bounds (leaves: its grid points ``k * resolution`` when few enough, else an atom at each
       bound and equal-width intervals; a missing leaf first when it may be missing), levels of
       ``branching`` children (fewer where the coarsest level would hold more than ``TOP_NODES`` nodes);
       categorical columns at their levels. With a label and
       ``by_label`` every histogram is joint with the label (cells ``class x cell``), else the
       label gets its own. Round 1 releases the coarsest level of every tree with the
       categorical (and label) histograms; round l releases, at level l, the children of the
       nodes whose released count reached ``split_sigmas`` noise stds (a choice made from
       released values only). Each round's vector holds, per column measured at that level, at
       most one cell containing a given record, so replacing one record (its label too) moves
       at most two cells per histogram by 1: ``sqrt(2 d_l)`` for the ``d_l`` histograms of
       round l. Every round uses the same std ``sigma = sqrt(2 d) / sqrt(2 rho_hist)`` with
       ``d = sum_l d_l`` fixed in advance from the public depths (:func:`~.copula_plan.plan_cells`), so
       round l is ``d_l / sigma^2``-zCDP and adaptive composition gives
       ``d / sigma^2 = rho_hist``: the rounds cost what one Gaussian release of all levels
       would (:func:`~.copula_plan.histogram_sensitivity` of ``d``). In round 1 each categorical feature's
       histogram is released times a public weight ``w_j`` (proportional to the cube root of its cells, the
       weights' squares summing to their number; the trees and the label's own histogram 1:
       :func:`~.copula_plan.histogram_weights`) and divided by it after the noise: the weighted vector moves by
       ``sqrt(2 d_1)`` still, and histogram j carries std ``sigma / w_j``. Post-processing: class sizes from the
       round-1 row sums (inverse-variance average, projected onto the public n); each round-1
       histogram projected onto the counts summing to its class size
       (:func:`~.copula_estimate.project_to_simplex`); measured children projected onto the counts summing to
       their parent's estimate; an unsplit node's estimate spread over its leaves by width.
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

    Groups and depths are decided from public quantities only (:func:`~.copula_plan.plan_cells`): with few
    records every tree is released at its coarsest level (a warning says so), never piled
    onto the bounds (an unsplit node spreads nothing onto a bound's atom).

    Passes: one for the histograms, then those of GaussPCA (two, three with labels), all
    run by a pass executor (streamed chunks locally, partitions on Dask): the maps (cell
    counts, copula transform, the mixture's sums) run where the records are, the noise on
    the merged sums. Memory ``O(sum of cells + C p^2)``, independent of n.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "marginal_share": [Options("auto"), *FRACTION],
        "grids": [None, Instance(tuple, list, what="a sequence of (lower, upper, resolution)")],
        "missing": [None, Instance(tuple, list, np.ndarray, what="a sequence of bools")],
        "branching": [Interval(Integral, 2, None, closed="left")],
        "split_sigmas": [Interval(Real, 0, None, closed="left")],
        "max_leaves": [None, Interval(Integral, 4, None, closed="left")],
        "by_label": [BOOL, Options("auto")],
        "threshold": [Options("auto"), Interval(Real, 0, None, closed="left")],
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "coarse_cells": [Interval(Integral, 0, None, closed="left")],
        "n_classes": N_CLASSES,
        "accounting": [Options("auto", "gaussian", "zcdp")],
        "dependence": [Options("auto", "graphical", "mixture")],
    }

    name: ClassVar[str] = "gauss-copula"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = ("DP one-way marginals on public cells (atoms kept) and one graphical model fitted to "
                              "them and to the pairs and pairs-with-label its rounds choose and measure (AIM's "
                              "selection, each candidate charged the error its measurement would leave); numeric "
                              "cells cut where the released mass lies; values inside each cell from the trees (per "
                              "class for a label of up to three classes), placed as the cells covary and toward a "
                              "level's side of its cell; wide numeric tables: a gauss-pca mixture on normal scores "
                              "instead; zCDP accounting")
    supervised: ClassVar[bool] = False
    uses_delta: ClassVar[bool] = True
    capabilities: ClassVar[Capabilities] = Capabilities(passes="multi-pass", samples_in_chunks=True,
                                                        uses_label=True, estimates_covariance=True,
                                                        missing_numeric=True, calendar_parts=True)

    def __init__(self, epsilon=1.0, delta=1e-5, *, marginal_share="auto", grids=None, missing=None,
                 branching=D.DEFAULT_BRANCHING, split_sigmas=D.DEFAULT_SPLIT_SIGMAS, max_leaves=None, by_label="auto",
                 threshold="auto", n_components=None, coarse_cells=D.COARSE_CELLS, n_classes=None, accounting="auto", dependence="auto", domain=None, rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.marginal_share = marginal_share
        self.grids = grids
        self.missing = missing
        self.branching = branching
        self.split_sigmas = split_sigmas
        self.max_leaves = max_leaves
        self.by_label = by_label
        self.threshold = threshold
        self.n_components = n_components
        self.coarse_cells = coarse_cells
        self.n_classes = n_classes
        self.accounting = accounting
        self.dependence = dependence
        self.domain = domain
        self.rng = rng

    @classmethod
    def schema_params(cls, encoder, label_encoder) -> dict:
        """Public facts from the schema: label levels, each numeric column's bounds, resolution and
        whether it may be missing."""
        nums = [c for c in encoder.columns if c.kind == "numeric"]
        out = {"grids": tuple((float(c.lower), float(c.upper), float(c.resolution or 0.0)) for c in nums),
               "missing": tuple(getattr(c, "missing", None) == "allowed" for c in nums)}
        if label_encoder is not None and label_encoder.columns[0].kind == "categorical":
            out["n_classes"] = len(label_encoder.columns[0].categories)
        return out

    # ---- validation --------------------------------------------------------------------
    def _setup(self, p: int, groups: int = 1):
        """The checks that depend on the domain (each parameter's own range is declared in
        ``_parameter_constraints`` and checked before any fit method); the public trees."""
        eps, _, _, dom = self._check_common(None, p=p)
        delta = check_delta(self.delta)
        p1 = dom.p1
        grids = self.grids if self.grids is not None else ((0.0, 1.0, 0.0),) * p1
        try:
            grids = tuple((float(lo), float(hi), float(r)) for lo, hi, r in grids)
        except (TypeError, ValueError):
            raise ParameterError(f"grids must be a sequence of (lower, upper, resolution), got {self.grids!r}") from None
        if len(grids) != p1 or any(not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and r >= 0)
                                   for lo, hi, r in grids):
            raise ParameterError(f"grids must give finite (lower < upper, resolution >= 0) for each numeric column "
                                 f"({p1}), got {grids}")
        missing = tuple(bool(v) for v in self.missing) if self.missing is not None else (False,) * p1
        if len(missing) != p1:
            raise ParameterError(f"missing must give one bool per numeric column ({p1}), got {self.missing!r}")
        self.domain_ = dom
        cap = int(self.max_leaves) if self.max_leaves is not None else leaf_cap(p1, groups)
        self.cells_ = [NumericTree(lo, hi, r, miss, int(self.branching), cap, D.TOP_NODES)
                       for (lo, hi, r), miss in zip(grids, missing)]
        self._nan_ok = tuple(int(dom.numeric[j]) for j in range(p1) if missing[j])
        self.dependence_ = "graphical" if self._graphical(len(dom.blocks)) else "mixture"
        if self.dependence_ == "graphical":
            self._refuse_mixture_parameters()
        return eps, delta

    def _mode(self) -> str:
        return accounting_mode(self.accounting, self.source_.secure)

    # ---- fitting: plan -> measure -> estimate -> sample ------------------------------------------------
    def fit(self, X, y=None):
        """Fit on an encoded matrix (all passes in memory; NaN only in the numeric columns declared
        ``missing``, checked by the counting pass)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise InputDataError(f"X must be a 2-d encoded matrix with records, got shape {X.shape}")
        y = None if y is None else np.asarray(y)
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
        streamed chunks locally, or partitions on a Dask cluster); ``p``: the encoded width when no
        ``domain`` is declared. The maps (cell counts, copula transform, the mixture's sums, candidate counts)
        run where the records are, the noise on the merged sums."""
        self.model_ = None  # a refit forgets an earlier dependence stage
        eps_mix = self.fit_marginals(passes, p)  # plan; pass 1 measured; one-way marginals estimated
        if self.model_plan_ is not None:  # one more pass: the graphical model's rounds, then its fit
            self._fit_model(passes)
            return self
        self._jitter_seed = int(self.source_.generator.integers(2**63))
        self.coarse_ = coarse_plan(self.domain_, self.cells_, int(self.coarse_cells) if self.marginals_ else 0)
        self._adopt_mixture(measure_mixture(passes, self.copula_transform(), eps_mix, float(self.delta),
                                            self.n_components, self._n_classes, self.accounting_mode_,
                                            self.coarse_.domain, self.source_))
        return self

    def fit_marginals(self, passes, p: int | None = None) -> float:
        """Pass 1: count every column's public cells, plan the release from public facts (n, the
        classes, the budget) and release the DP one-way marginals. Returns the mixture's epsilon."""
        if isinstance(self.domain, EncodedDomain):
            p = self.domain.p
        elif p is None:
            raise ParameterError("gauss-copula needs a declared domain (or the encoded width p) to fit on passes")
        C = None if self.n_classes is None else self._check_int(self.n_classes, "n_classes", 1)
        eps, delta = self._setup(p, C or 1)
        self._eps_delta, self.notes_ = (eps, delta), []
        n, n_labelled, counts, label_counts, _ = count_cells(passes, self._counter(C))
        if n_labelled and C is None:
            C = self._declared_classes()  # raises: refused before any noise is drawn
        if n == 0:
            raise InputDataError("the input has no records")
        if 0 < n_labelled < n:
            raise InputDataError("some chunks have labels and others not")
        self._n_classes = C
        self._plan(int(n), n_labelled > 0, C, len(counts) - len(self.cells_), label_counts is not None)
        counts = pooled_counts(list(counts), self.labelled_, self.groups_, label_counts if self.labelled_ else None)
        if counts:
            self._release_marginals(counts, self.n_)
        else:
            self.sensitivities_, self.noise_scales_ = {}, {}
            self.marginals_, self.label_weights_, self._cdf, self._nonempty = [], None, [], []
        return self.budget_.epsilon_mixture

    def _plan(self, n: int, labelled: bool, C, n_cat: int, label: bool) -> None:
        """The public plan (:mod:`.copula_plan`, :mod:`.model_plan`): the graphical model's plan, the histograms'
        share, groups and depths, and the budget, from n, the classes, (epsilon, delta) and the schema's trees only."""
        (eps, delta), mode = self._eps_delta, self._mode()
        self.n_, self.labelled_, self.accounting_mode_ = n, labelled, mode
        classes = C if labelled else 0
        self.groups_ = C if (labelled and (C or 0) > 1) else 1  # counted per class; grouped after the pass
        share = None if self.marginal_share == "auto" else 1.0 - float(self.marginal_share)
        self.model_plan_ = plan_model(self.domain_, self.cells_, classes, n, eps, delta, share) if self.dependence_ == "graphical" \
            else None
        if self.model_plan_ is not None:
            budget = model_budget(eps, delta, mode, self.model_plan_)
            self.marginal_share_ = budget.marginal_share
        else:
            self.marginal_share_ = auto_marginal_share(self.domain_, n, eps, classes, self.marginal_share)
            budget = plan_budget(eps, delta, mode, self.marginal_share_, user_share=self.marginal_share)
        G, self.depths_, self.n_histograms_, coarse = plan_cells(
            n, self.groups_, n_cat, [t.depth for t in self.cells_], zcdp_noise_multiplier(budget.rho_marginals),
            self.by_label, float(self.split_sigmas), labelled and label,
            D.MODEL_MAX_CLASSES if self.model_plan_ is not None else None)
        self.groups_ = G
        if coarse:
            msg = (f"gauss-copula: with n = {n} records, {n_cat + len(self.cells_)} columns and epsilon = {eps:g}, "
                   f"the numeric columns are released on the coarsest cells of their trees only (at most "
                   f"{int(self.branching)} cells each; values uniform inside a cell)")
            self.notes_.append(msg)
            warnings.warn(msg, DataWarning, stacklevel=5)
        histograms = len(self.cells_) + n_cat + int(G == 1 and labelled and label) > 0
        if self.model_plan_ is None:
            budget = plan_budget(eps, delta, mode, self.marginal_share_, histograms, self.marginal_share)
        blocks, own = self.domain_.blocks, int(G == 1 and labelled and label)  # own: the label's histogram
        cells = [t.levels[0].size - 1 for t in self.cells_] + [e - a for a, e in blocks] + [classes] * own
        weighted = [False] * len(self.cells_) + [True] * len(blocks) + [False] * own
        self.budget_ = replace(budget, histograms=self.n_histograms_,
                               histogram_weights=histogram_weights(cells, weighted))
        self.rho_, self.rho_split_ = self.budget_.rho, self.budget_.rho_split()

    def _counter(self, n_classes) -> CellCounter:
        dom = self.domain_
        return CellCounter(p=dom.p, numeric=tuple(dom.numeric), cells=tuple(self.cells_), blocks=tuple(dom.blocks),
                           n_classes=n_classes, nan_ok=self._nan_ok)

    def _release_marginals(self, counts, n):
        """The histograms: round 1 measured (the coarsest tree levels with the categorical and label
        histograms), the one-way marginals estimated, then the finer tree levels measured round by round
        on the nodes the estimate splits."""
        k = len(self.cells_)
        nm = zcdp_noise_multiplier(self.rho_split_["marginals"])
        first = measure_top_levels(self, counts, n, self.n_histograms_, nm, self.budget_.histogram_weights)
        n_feat, stds = k + len(self.domain_.blocks), first.noise_std  # one std per histogram
        tails = 0
        if self.threshold == "auto":  # with the model, the numeric trees' coarsest cells only (their tails)
            t = D.MODEL_NUMERIC_THRESHOLD if self.model_plan_ is not None else 0.0
            floors, tails = [t * s for s in stds[:k]] + [0.0] * (n_feat - k), k
        else:
            floors = [float(self.threshold) * s for s in stds[:n_feat]]
        marg, self.label_weights_, sizes = marginals_from_noisy(first.noisy, n_feat, n, self.labelled_, floors, tails,
                                                                stds, [t.off for t in self.cells_])
        sizes = np.asarray(sizes, dtype=np.float64)
        self.class_sizes_, self._first_stds = sizes, stds
        rounds = []  # the finer levels' measurements, in order (each at the release's std, weight 1)
        leaves = refine_levels(self.cells_, [m * sizes[:, None] for m in marg[:k]], self.depths_,
                               float(self.split_sigmas) * self.noise_scales_["marginals_std"],
                               level_measurer(self, counts[:k], self.n_histograms_, nm), project_to_simplex, rounds)
        self.measured_nodes_ = [r.query[2] for r in rounds]  # per finer round: (column, group, node) of each count
        self.measured_levels_ = [int(r.query[1]) for r in rounds]  # ... and its tree level
        self.marginals_ = [m / np.maximum(sizes, 1e-12)[:, None] for m in leaves] + marg[k:]
        self._cdf, self._nonempty = cumulative_masses(self.marginals_[:k])

    def _groups(self, y, n):
        return np.asarray(y, dtype=np.int64) if (self.groups_ > 1 and y is not None) else np.zeros(n, dtype=np.int64)

    def fit_stats(self, stats):
        """Not available: the copula needs its marginal pass before the mixture's statistics exist,
        so one pass of raw statistics cannot fit it (an engine that computes only statistics is refused)."""
        raise ParameterError(f"mechanism '{self.name}' needs a marginal pass before its moments; one pass of "
                             f"statistics cannot fit it: use --engine local")

    # ---- sampling -----------------------------------------------------------------------------
    def with_source(self, source):
        """A shallow copy drawing from ``source``, its mixture too (every draw of a part from one source)."""
        m = super().with_source(source)
        if getattr(self, "model_", None) is None:
            m.mixture_ = self.mixture_.with_source(source)
        return m

    def sample(self, n: int):
        """Draw ``n`` records; returns ``(X, y)`` in the encoded domain (y None without labels)."""
        n = self._check_int(n, "n", 1)
        if getattr(self, "model_", None) is not None:
            return sample_model(self, n)
        return sample_copula(self, n)

    def certificate_extra(self) -> dict:
        d = {
            "rho_zcdp": self.rho_,
            "rho_split": dict(self.rho_split_),
            "accounting": self.accounting_mode_,
            "marginal_cells": [int(c.n_cells) for c in self.cells_], "released_precision": [c.precision for c in self.cells_],
            "tree_levels": [int(d) for d in getattr(self, "depths_", ())],
            "budget": self.budget_.as_dict(),
            "marginals": ("DP one-way histograms on public cells, numeric columns as trees measured level by "
                          "level (Gaussian mechanism, L2 sensitivity sqrt(2 d), d histograms over all levels)"),
            "passes": int(self.passes_),
            "n_treated_as_public": True,
        }
        if self.model_ is not None:
            d["dependence"] = {"model": "graphical model on the attributes' coarse cells, fitted by mirror descent "
                                        "to the one-way histograms and every measured marginal",
                               "measured": [list(map(int, c)) for c in self.marginals_measured_],
                               "junction_tree_cliques": [list(map(int, c)) for c in self.model_.cliques]}
            spent = 0.0
        else:
            d.update({"n_components": int(self.n_components_),
                      "node_blocks": sum(b is not None for b in self.coarse_.offsets),
                      "mixture": {k: v for k, v in self.mixture_.certificate_extra().items()
                                  if k in ("rho_zcdp", "rho_split", "clip_radius", "basis", "passes")}})
            spent = self.mixture_.rho_
        if math.isfinite(self.rho_):
            d["epsilon_check_dp_accounting"] = accounting_epsilon(self.budget_, spent)
            d["epsilon_target"] = float(self.epsilon)
            d["delta"] = float(self.delta)
        return d

"""gauss-copula: DP one-way marginals on public cells, a Gaussian copula, and the gauss-pca mixture.

``gauss-pca`` models the encoded matrix directly, so atoms are smeared and argmax decoding
inflates majority levels. This mechanism spends a share of the zCDP budget on DP one-way
histograms (numeric columns as trees of cells refined to their resolution, atoms anywhere in
the range kept), maps every numeric column to normal scores through them before fitting
:class:`~privrelease.mechanisms.gauss_mixture.gauss_pca.GaussPCA` (a Gaussian copula), and after
sampling maps numeric columns back through the DP quantiles and assigns categorical levels so
that their frequencies meet the DP marginals.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Callable, ClassVar, Iterable

import numpy as np

from ...dp.calibration import accounting_mode, calibrate_rho, zcdp_noise_multiplier
from ...dp.costs import check_delta
from ...engine.passes import ChunkPasses
from ...errors import DataWarning, InputDataError, ParameterError
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, Capabilities, SyntheticMechanism
from ..constraints import BOOL, COMMON, FRACTION, Instance, Interval, N_CLASSES, Options
from . import copula_defaults as D
from .copula_parts import (CellCounter, CopulaTransform, LatentPasses, auto_marginal_share, coarse_plan, cumulative_masses, denoise,
                           decode_latent, histogram_sensitivity, marginals_from_noisy, merge_cell_counts, plan_cells,
                           project_to_simplex, quota_assign, split_budget)
from .copula_tree import NumericTree, leaf_cap, refine_levels
from .gauss_pca import GaussPCA
from .pair_tree import fit_tree, plan_pair_stage
from .pairs import accounting_epsilon, run_pairs, split_budget_with

__all__ = ["GaussCopula", "NumericTree", "CellCounter", "CopulaTransform", "histogram_sensitivity", "denoise",
           "project_to_simplex", "quota_assign", "split_budget", "plan_cells"]

class GaussCopula(SyntheticMechanism):
    """Gaussian copula over DP one-way marginals, with the gauss-pca mixture as its dependence model.

    Parameters
    ----------
    epsilon : float in (0, inf]
    delta : float in (0, 1), default 1e-5
    marginal_share : float in (0, 1) or "auto" (default)
        Share of what the pair stage leaves spent on the histograms (the rest: the mixture); see ``auto_marginal_share``.
    grids : sequence of (lower, upper, resolution) or None
        For each numeric column of the domain (in order), its public bounds and precision
        (``resolution`` 0 for a continuous column); public, from the schema (the release passes
        it). None: every column continuous on [0, 1].
    missing : sequence of bool or None
        For each numeric column, whether it may be missing (``missing: allowed``; NaN in the
        encoded coordinate). None: none may.
    branching : int >= 2, default 16
        Children per node of each numeric column's tree (:class:`NumericTree`; fewer in a two-level tree: TOP_NODES).
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
        ``n / C`` records would fill at least 8 cells with 8 noise stds each.
    threshold : float >= 0, default 0
        Post-processing of each noisy histogram: 0 projects it onto the counts summing to
        its total; t > 0 first sets the cells below t noise stds to 0 (:func:`denoise`).
    pair_rounds : "auto" (default) or int >= 0
        Measured pairs of the pair tree (:mod:`.pair_tree`: a spanning tree of pairs of categorical
        columns and numeric node blocks, the release decoded along it; 0: no pair stage). ``"auto"``:
        one fewer than the attributes it can decode (a spanning tree), with second parents and halved
        nodes where the measurements are precise, off where they would be mostly noise.
    pair_share : "auto" (default) or float in (0, 1)
        The pair stage's share of the total zCDP rho (the rest split as above); ``"auto"``: 0.2.
    n_components : int or None
        The mixture's dimension P (None: ``min(20, p)``).
    coarse_cells : int >= 0, default COARSE_CELLS
        Each numeric column also enters the mixture as a one-hot block of its tree's nodes on the
        finest grid with at most this many (0: off), so that it can hold non-monotone dependence
        (:func:`~.copula_parts.numeric_values` samples the node, then the value inside it).
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
       ``branching`` children (fewer in a two-level tree); categorical columns at their levels. With a label and
       ``by_label`` every histogram is joint with the label (cells ``class x cell``), else the
       label gets its own. Round 1 releases the coarsest level of every tree with the
       categorical (and label) histograms; round l releases, at level l, the children of the
       nodes whose released count reached ``split_sigmas`` noise stds (a choice made from
       released values only). Each round's vector holds, per column measured at that level, at
       most one cell containing a given record, so replacing one record (its label too) moves
       at most two cells per histogram by 1: ``sqrt(2 d_l)`` for the ``d_l`` histograms of
       round l. Every round uses the same std ``sigma = sqrt(2 d) / sqrt(2 rho_hist)`` with
       ``d = sum_l d_l`` fixed in advance from the public depths (:func:`plan_cells`), so
       round l is ``d_l / sigma^2``-zCDP and adaptive composition gives
       ``d / sigma^2 = rho_hist``: the rounds cost what one Gaussian release of all levels
       would (:func:`histogram_sensitivity` of ``d``). Post-processing: class sizes from the
       round-1 row sums (inverse-variance average, projected onto the public n); each round-1
       histogram projected onto the counts summing to its class size
       (:func:`project_to_simplex`); measured children projected onto the counts summing to
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

    5. Pair tree (:mod:`.pair_tree`): one more pass counts the candidate pairs;
       a privately chosen spanning tree of them (and second parents where precise) is measured and the
       categorical columns and numeric nodes are decoded along it (derivation in its Notes).

    Groups and depths are decided from public quantities only (:func:`plan_cells`): with few
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
        "threshold": [Interval(Real, 0, None, closed="left")],
        "pair_rounds": [Options("auto"), Interval(Integral, 0, None, closed="left")],
        "pair_share": [Options("auto"), *FRACTION],
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "coarse_cells": [Interval(Integral, 0, None, closed="left")],
        "n_classes": N_CLASSES,
        "accounting": [Options("auto", "gaussian", "zcdp")],
    }

    name: ClassVar[str] = "gauss-copula"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = ("Gaussian copula: DP one-way marginals on public cells (atoms kept), gauss-pca mixture "
                              "on normal scores, a privately chosen spanning tree of measured pairs, quantile and "
                              "quota decoding along it; zCDP accounting")
    supervised: ClassVar[bool] = False
    uses_delta: ClassVar[bool] = True
    capabilities: ClassVar[Capabilities] = Capabilities(passes="multi-pass", samples_in_chunks=True,
                                                        uses_label=True, estimates_covariance=True,
                                                        missing_numeric=True)

    def __init__(self, epsilon=1.0, delta=1e-5, *, marginal_share="auto", grids=None, missing=None,
                 branching=D.DEFAULT_BRANCHING, split_sigmas=D.DEFAULT_SPLIT_SIGMAS, max_leaves=None, by_label="auto",
                 threshold=D.DEFAULT_THRESHOLD, pair_rounds="auto", pair_share="auto", n_components=None,
                 coarse_cells=D.COARSE_CELLS,
                 n_classes=None, accounting="auto", domain=None, rng=None):
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
        self.pair_rounds, self.pair_share = pair_rounds, pair_share
        self.n_components = n_components
        self.coarse_cells = coarse_cells
        self.n_classes = n_classes
        self.accounting = accounting
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
        return eps, delta

    def _mode(self) -> str:
        return accounting_mode(self.accounting, self.source_.secure)

    def _split(self, eps: float, delta: float, mode: str, share: float) -> tuple:
        """``((rho, rho_hist, rho_mix, eps_mix), pair rhos)``: without the pair stage, :func:`split_budget`."""
        if self.pair_plan_ is None:
            return split_budget(eps, delta, mode, share), {}
        return split_budget_with(self.pair_plan_, eps, delta, mode, share)

    def _calibrate(self, eps: float, delta: float, share: float):
        self.accounting_mode_, self._pair_rho = (mode := self._mode()), {}
        if math.isinf(eps):
            self.rho_ = math.inf
            self._pair_rho = {} if self.pair_plan_ is None else {"pairs_measure": math.inf, "pairs_select": math.inf}
            self.rho_split_ = {"marginals": math.inf, "mixture": math.inf, **self._pair_rho}
            return math.inf
        if share == 0 and self.pair_plan_ is None:  # no histogram is released: the mixture gets the whole budget
            self.rho_ = calibrate_rho(eps, delta, mode, 0.0)
            self.rho_split_ = {"marginals": 0.0, "mixture": self.rho_}
            return eps
        (rho, rho_hist, rho_mix, eps_mix), self._pair_rho = self._split(eps, delta, mode, float(share) or 1e-9)
        if not (rho_hist > 0 and rho_mix > 0):
            raise ParameterError(f"marginal_share={self.marginal_share} leaves no budget for one of the two parts")
        self.rho_ = rho
        self.rho_split_ = {"marginals": rho_hist, "mixture": rho_mix, **self._pair_rho}
        return eps_mix

    # ---- pass 1: histograms ----------------------------------------------------------------
    def _release_marginals(self, counts, n):
        """Gaussian mechanism on the coarsest level of every numeric tree with the categorical (and
        label) histograms, projection to valid distributions, then the finer tree levels."""
        k = len(self.cells_)
        sens = histogram_sensitivity(self.n_histograms_)
        nm = zcdp_noise_multiplier(self.rho_split_["marginals"])
        self.sensitivities_ = {"marginals_l2": sens}
        self.noise_scales_ = {}
        self.source_.set_value_bound(float(max(n, 1)))  # every cell count lies in [0, n] (n public)
        top = [t.level_counts(h, 0) for t, h in zip(self.cells_, counts[:k])] + list(counts[k:])
        flat = np.concatenate([c.ravel() for c in top]).astype(np.float64)
        noisy = self._gaussian("marginals_std", flat, sens, nm, flat.size)
        std = self.noise_scales_["marginals_std"]
        parts, start = [], 0
        for c in top:
            parts.append(noisy[start:start + c.size].reshape(c.shape))
            start += c.size
        n_feat = k + len(self.domain_.blocks)
        marg, self.label_weights_, sizes = marginals_from_noisy(parts, n_feat, n, self.labelled_,
                                                                float(self.threshold) * std)

        def measure(level, exact):
            return self._gaussian(f"tree_level{level}_std", exact.astype(np.float64), sens, nm, exact.size)

        sizes = np.asarray(sizes, dtype=np.float64)
        self.measured_nodes_ = []  # per finer round: (column, group, node) of each released count
        leaves = refine_levels(self.cells_, counts[:k], [m * sizes[:, None] for m in marg[:k]], self.depths_,
                               float(self.split_sigmas) * std, measure, project_to_simplex, self.measured_nodes_)
        safe = np.maximum(sizes, 1e-12)[:, None]
        self.marginals_ = [m / safe for m in leaves] + marg[k:]
        self._cdf, self._nonempty = cumulative_masses(self.marginals_[:k])

    def _groups(self, y, n):
        return np.asarray(y, dtype=np.int64) if (self.groups_ > 1 and y is not None) else np.zeros(n, dtype=np.int64)

    # ---- fitting ------------------------------------------------------------------------------
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
        streamed chunks locally, or partitions on a Dask cluster).

        Pass 1 (:meth:`fit_marginals`) maps each chunk to its public cells' counts
        (:class:`CellCounter`) and releases the DP marginals here; the mixture's passes then run
        their maps on the copula-transformed chunks (:class:`CopulaTransform`, applied where the
        chunks are, keyed by each record's global index so that every engine sees the same
        latent rows). ``p``: the encoded width when no ``domain`` is declared.
        """
        self.pair_tree_ = None  # a refit forgets an earlier pair stage
        eps_mix = self.fit_marginals(passes, p)
        self._jitter_seed = int(self.source_.generator.integers(2**63))
        self.coarse_ = coarse_plan(self.domain_, self.cells_, int(self.coarse_cells) if self.marginals_ else 0)
        mix = GaussPCA(eps_mix, float(self.delta), n_components=self.n_components, n_classes=self._n_classes,
                       accounting=self.accounting_mode_, domain=self.coarse_.domain, rng=self.source_)
        mix.fit_executor(LatentPasses(passes, self.copula_transform()))
        self._adopt_mixture(mix)
        run_pairs(self, passes, fit_tree)  # the pair tree (one more pass)
        return self

    def copula_transform(self) -> CopulaTransform:
        """The fitted per-chunk copula map (post-processing of the released marginals)."""
        dom, k = self.domain_, len(self.cells_)
        return CopulaTransform(p=dom.p, numeric=tuple(dom.numeric[:k]), cells=tuple(self.cells_),
                               cdf=tuple(self._cdf), masses=tuple(self.marginals_[:k]), grouped=self.groups_ > 1,
                               key=self._jitter_seed, coarse=self.coarse_)

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
                              **{f"rho_{k}": float(v) for k, v in self._pair_rho.items()},
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
        C = None if self.n_classes is None else self._check_int(self.n_classes, "n_classes", 1)
        eps, delta = self._setup(p, C or 1)
        self._eps_delta, self.notes_ = (eps, delta), []
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
        self.pair_plan_ = plan_pair_stage(self, C if labelled else 0, eps, delta, self._mode())
        self.marginal_share_ = auto_marginal_share(self.domain_, self.n_, eps, C if labelled else 0, self.marginal_share,
                                                   self.pair_plan_ is not None)
        counts = [h if labelled else h[:1] for h in counts]
        counts = self._choose_cells(counts, self.n_, label_counts if labelled else None)
        eps_mix = self._calibrate(eps, delta, self.marginal_share_ if counts else 0.0)
        if counts:
            self._release_marginals(counts, self.n_)
        else:
            self.sensitivities_, self.noise_scales_ = {}, {}
            self.marginals_, self.label_weights_, self._cdf, self._nonempty = [], None, [], []
        return eps_mix

    def _choose_cells(self, counts, n, label_counts):
        """Which groups and tree levels, from public quantities only (:func:`plan_cells`); the exact
        leaf counts are kept (summed over the classes when not per class)."""
        eps, delta = self._eps_delta
        rho_h = math.inf if math.isinf(eps) else \
            self._split(eps, delta, self._mode(), self.marginal_share_)[0][1]
        n_cat = len(counts) - len(self.cells_)
        G, self.depths_, self.n_histograms_, coarse = plan_cells(
            n, self.groups_, n_cat, [t.depth for t in self.cells_], zcdp_noise_multiplier(rho_h), self.by_label,
            float(self.split_sigmas), label_counts is not None)
        if G == 1 and self.groups_ > 1:
            counts = [h.sum(axis=0, keepdims=True) for h in counts]
        self.groups_ = G
        if coarse:
            msg = (f"gauss-copula: with n = {n} records, {len(counts)} columns and epsilon = {eps:g}, the numeric "
                   f"columns are released on the coarsest cells of their trees only (at most "
                   f"{int(self.branching)} cells each; values uniform inside a cell)")
            self.notes_.append(msg)
            warnings.warn(msg, DataWarning, stacklevel=4)
        return counts + [label_counts] if (G == 1 and label_counts is not None) else counts

    def _count_cells(self, passes, n_classes):
        """One pass of :class:`CellCounter` (per class when ``n_classes`` is known)."""
        dom = self.domain_
        counter = CellCounter(p=dom.p, numeric=tuple(dom.numeric), cells=tuple(self.cells_),
                              blocks=tuple(dom.blocks), n_classes=n_classes, nan_ok=self._nan_ok)
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
        return self._sample_copula(n, getattr(self, "pair_tree_", None))

    def _sample_copula(self, n: int, tree=None):
        """``n`` records of the copula model (the mixture, rank matching and quotas); with a fitted
        :class:`~.pair_tree.PairTree`, its attributes decoded along it."""
        Z, y = self.mixture_.sample(n)
        return decode_latent(self, Z, y, tree), y

    def certificate_extra(self) -> dict:
        d = {
            "rho_zcdp": self.rho_,
            "rho_split": dict(self.rho_split_),
            "accounting": self.accounting_mode_,
            "marginal_cells": [int(c.n_cells) for c in self.cells_],
            "tree_levels": [int(d) for d in getattr(self, "depths_", ())],
            "marginals": ("DP one-way histograms on public cells, numeric columns as trees measured level by "
                          "level (Gaussian mechanism, L2 sensitivity sqrt(2 d), d histograms over all levels)"),
            "n_components": int(self.n_components_),
            "node_blocks": sum(b is not None for b in self.coarse_.offsets),
            "mixture": {k: v for k, v in self.mixture_.certificate_extra().items()
                        if k in ("rho_zcdp", "rho_split", "clip_radius", "basis", "passes")},
            "passes": int(self.passes_),
            "n_treated_as_public": True,
        }
        if math.isfinite(self.rho_):
            d["epsilon_check_dp_accounting"] = accounting_epsilon(self)
            d["epsilon_target"] = float(self.epsilon)
            d["delta"] = float(self.delta)
        return d


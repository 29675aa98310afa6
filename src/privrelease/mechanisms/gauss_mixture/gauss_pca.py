"""gauss-pca: a Gaussian-mechanism probabilistic-PCA mixture with L2 row clipping (the mixture inside the default release, gauss-copula).

The seed mechanisms calibrate Laplace noise to box bounds, so their second-moment
sensitivities grow with the square of the dimension (ALGORITHMS.md T1, 3.11). This
mechanism clips encoded rows to an L2 ball around a DP centre and releases every
statistic with the Gaussian mechanism, whose second-moment sensitivity is the squared
radius whatever the dimension (T2); it accounts in zero-concentrated DP and converts to
``(epsilon, delta)`` with ``dp_accounting`` (:mod:`privrelease.dp.calibration`).
"""

from __future__ import annotations

import math
from functools import partial
from numbers import Integral, Real
from typing import Callable, ClassVar, Iterable

import numpy as np

from ...dp.calibration import accounting_mode, calibrate_rho, epsilon_for
from ...dp.costs import check_delta
from ...engine.passes import ChunkPasses
from ...engine.stats import SufficientStats
from ...errors import InputDataError, ParameterError
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, Capabilities, SyntheticMechanism
from ..constraints import BOOL, COMMON, FRACTION, Instance, Interval, N_CLASSES, Options, PUBLIC_ARRAY, SHARES
from .pca_parts import (_centre_pass_map, _centre_stats, _clipped_stats_map, mean_direction_basis, mixture_from_moments,
                        mixture_from_within, sample_mixture, shrink_covariances)
from .pca_releases import (DEFAULT_COMPONENT_GRID, DEFAULT_COMPONENTS, DEFAULT_SELECTION_SHARE, DEFAULT_SPLIT,
                           DEFAULT_WITHIN_RADIUS_SHARE, PARTS, MixtureReleases)
from .sensitivities import (COUNT_SENSITIVITY, centre_sensitivity, domain_radius, moment_sensitivity,
                            residual_sensitivity, sq_distance_sensitivity, sum_sensitivity)

#: Names defined beside the class and used with it (the sensitivities its Notes derive, the
#: constants of its defaults, the per-chunk maps of its passes).
__all__ = ["GaussPCA", "DEFAULT_COMPONENT_GRID", "DEFAULT_COMPONENTS", "DEFAULT_SELECTION_SHARE", "DEFAULT_SPLIT",
           "DEFAULT_WITHIN_RADIUS_SHARE", "PARTS", "COUNT_SENSITIVITY", "centre_sensitivity", "domain_radius",
           "moment_sensitivity", "residual_sensitivity", "sq_distance_sensitivity", "sum_sensitivity",
           "mean_direction_basis", "_centre_pass_map", "_clipped_stats_map"]




class GaussPCA(MixtureReleases, SyntheticMechanism):
    """Gaussian-mechanism probabilistic-PCA mixture with L2 row clipping and residual variance.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Target epsilon. ``inf`` releases the exact (clipped) statistics, no noise.
    delta : float in (0, 1), default 1e-5
    n_components : int, None or "select", default None
        P, the dimension of the basis; None means ``min(DEFAULT_COMPONENTS, p)``. ``"select"`` chooses P from ``component_grid`` with
        the exponential mechanism, paid with ``selection_share`` of the budget.
    clip_radius : "auto", "schema" or float, default "auto"
        Radius R of the L2 ball around the DP centre that rows are clipped to.
        ``"auto"``: ``radius_factor`` times a DP estimate of the root-mean-square distance
        of the rows to the DP centre; ``"schema"``: the largest distance the schema allows
        (no clipping, one pass suffices); a float: a public radius declared by the user.
    radius_factor : float, default 1.0 (chosen on gas_drift: 1.0 beat 1.5)
    budget_split : dict or None
        Shares of the total zCDP rho for the parts ``centre, radius, basis, counts,
        sums, moments, residual`` (normalised to sum to 1; omitted parts keep their
        default share). Parts that a configuration does not use (counts without labels,
        radius with a fixed radius, basis with a public basis, the residual variance when the
        basis has all p dimensions, the within-class radius with one class) give their share
        to the others.
    covariance : "class" or "pooled", default "class"
        One covariance per class, or one pooled within-class covariance.
    centring : "class" or "global", default "class"
        ``"class"`` (labelled data, three passes; chosen on gas_drift: 0.752 vs 0.721
        accuracy for ``"global"``): per-class second moments are taken around
        the released class means and clipped to a DP within-class radius ``R_w``, whose
        squared value replaces ``R^2`` in the moment sensitivity (ALGORITHMS.md 3.5 spirit,
        helps when classes are far apart). The one-pass :meth:`fit_stats` cannot do it and
        uses ``"global"``.
    mean_directions : bool, default True
        With labels: the class sums are released in the full space (sensitivity ``2 R``,
        the same as in the basis) and the released class-mean contrasts (C - 1 directions)
        are put first in the basis, completed by the top eigenvectors of the noisy second
        moment on their orthogonal complement (post-processing of released quantities).
    shrinkage : float >= 0
        Post-processing of the noisy covariances: eigenvalues are lowered by ``shrinkage``
        times the expected spectral norm of their noise (``2 sqrt(P) sigma_m / n_c``) and
        clipped at 0, so that noise does not inflate the variance of small classes.
    basis : array (p x P) or None
        A public basis (orthonormalised), e.g. from public data; no budget is spent on it.
    component_grid : tuple of int
        Candidates for ``n_components="select"``.
    selection_share : float in (0, 1), default 0.05
    n_classes : int or None
        Number of label levels (public; the release passes it from the schema). Required to
        fit labelled data: it is never read from the labels.
    row_norm_bound : float or None
        Public bound B on ``||x||_2`` of encoded rows (the schema's ``row_norm_bound``);
        rows are scaled into that ball first.
    accounting : "auto", "gaussian" or "zcdp"
        ``"auto"`` (= ``"zcdp"``): the zCDP conversion, proven for the secure source's
        discrete Gaussian noise and used by seeded runs too, so that they measure the noise a
        real release adds. ``"gaussian"``: the tight profile of continuous Gaussian noise, for
        seeded experiments only (refused with the secure source).
    domain : EncodedDomain or None
    rng : None, int or numpy.random.Generator

    Attributes
    ----------
    centre_ : DP centre (p,)
    radius_ : clip radius R
    components_ : (P, p) orthonormal rows, the basis
    class_weights_, class_means_, class_covariances_ : per-class model in the basis
    residual_variance_ : sigma^2, the per-coordinate variance outside the basis
    rho_ : total zCDP parameter; ``rho_split_`` its parts
    privacy_cost_, sensitivities_, noise_scales_, budget_split_

    Notes
    -----
    Guarantee: ``(epsilon, delta)``-DP under R1 with the label inside the record (one
    record, label included, replaced; n public). Every release below is a Gaussian
    mechanism on a query of bounded L2 sensitivity, hence ``Delta^2 / (2 sigma^2)``-zCDP;
    the parts compose adaptively (later queries use earlier releases, never the raw data
    beyond the stated query), so the total is ``rho = sum of the parts``, converted to
    ``(epsilon, delta)`` by :func:`~privrelease.dp.calibration.calibrate_rho`.

    Steps and sensitivities (encoded rows x: numeric in [0, 1], one-hot blocks;
    ``p1`` numeric columns, ``p2`` categorical variables):

    1. DP centre (pass 1). ``sum_i x_i`` plus Gaussian noise, L2 sensitivity
       ``min(sqrt(p1 + 2 p2), 2 B)`` (:func:`centre_sensitivity`); ``c`` = noisy sum / n,
       clipped into [0, 1]. The centre is a DP release, not public knowledge; clipping is
       around it.
    2. DP radius (``clip_radius="auto"``). ``T = sum_i ||x_i - c||^2``, computed from
       pass-1 accumulators ``sum ||x||^2`` and ``sum x`` once c is released; each term
       lies in ``[0, r_dom(c)^2]`` with ``r_dom(c)`` the largest distance the schema
       allows from c (:func:`domain_radius`), so the sensitivity is ``r_dom^2``.
       ``R = radius_factor * sqrt(T~ / n)``. This is a DP estimate of the RMS distance
       (a second-moment statistic), not a quantile: it needs no extra pass.
    3. Clipping (pass 2). ``z_i = (x_i - c) min(1, R / ||x_i - c||)``, ``||z_i|| <= R``.
       Pass 2 accumulates per-class ``n_c``, ``sum z`` and ``sum z z^T``
       (:class:`~privrelease.engine.SufficientStats` of the clipped rows).
    4. DP basis (Analyze Gauss, Dwork et al. 2014; ALGORITHMS.md 3.7). ``upper(sum_i z_i
       z_i^T)`` plus Gaussian noise with sensitivity ``sqrt(2) R^2`` (R1 replace-one
       constant of T2, scaled by R^2; the add/remove constant would be R^2);
       mirrored; V = top-P eigenvectors. Skipped with a public ``basis``.
    5. Optional private P: exponential mechanism over ``component_grid`` with utility
       ``u(P) = tr(V_P^T A V_P) - 2 C P^{3/2} sigma_m`` (captured energy of the clipped rows
       minus the expected spectral error of the C per-class moment releases, a
       data-independent penalty); ``||V_P^T z||^2`` lies in [0, R^2], so the utility's
       sensitivity is ``R^2``; exact sampling (:mod:`privrelease.dp.selection`);
       ``eps_sel = sqrt(8 rho_sel)``.
    6. Per-class statistics: counts (sensitivity ``sqrt(2)``: a class change moves two
       counts; skipped without labels, n being public) and stacked class sums of the
       clipped rows ``z_i`` in the full space (``2 R``, :func:`sum_sensitivity`), both
       released before the basis; with ``mean_directions`` (labelled data, private basis)
       the released class-mean contrasts become the first ``C - 1`` basis directions, the
       rest are the top eigenvectors of the noisy second moment on their orthogonal
       complement (post-processing: no extra charge). The sums in the basis are
       ``S1 V`` (post-processing). Then the stacked upper triangles of the second moments
       of ``t_i = V^T z_i`` (``||t_i|| <= R``; ``sqrt(2) R^2``, :func:`moment_sensitivity`).
       With ``centring="class"`` (labelled data, the default) the second moments are
       replaced by a third pass (:meth:`_within_class_pass`): a DP within-class radius
       ``R_w`` (``sum_i ||t_i - m_{y_i}||^2`` with the released class means ``m_c`` moved
       into the ball of radius R, each term in ``[0, 4 R^2]``: sensitivity ``4 R^2``), then
       the stacked upper triangles of ``sum w w^T`` per class, ``w_i = clip(t_i - m_{y_i},
       R_w)``, sensitivity ``sqrt(2) R_w^2`` (same argument as :func:`moment_sensitivity`).
    7. Residual variance. ``sum_i (||z_i||^2 - ||t_i||^2)``, each term in [0, R^2]:
       sensitivity ``R^2``. ``sigma^2 = residual~ / (n (p - P))``.
    8. Model (post-processing): ``mu_c = S1_c / n_c``, ``Sigma_c = PSD(S2_c / n_c - mu_c
       mu_c^T)`` (or pooled); records are drawn from the probabilistic-PCA mixture
       ``x = c + V t + sigma (I - V V^T) g``, ``t ~ N(mu_c, Sigma_c)``, ``g ~ N(0, I_p)``,
       so released records are full rank (ALGORITHMS.md 3.11), and decoded through the
       schema (numeric clipped to bounds, categorical by argmax).

    Passes over the data: two (``clip_radius`` "auto" or a float): pass 1 for n,
    ``sum x`` and ``sum ||x||^2``; pass 2 for the statistics of the clipped rows; a third
    with labels and ``centring="class"``.
    :meth:`fit_stats` on raw statistics is the one-pass variant: it cannot clip, so it
    uses R = ``r_dom(c)`` (no record is ever clipped) and centres algebraically.
    Memory is ``O(C p^2)``, independent of n. Cost ``O(n p^2 + p^3 + m p P)``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_components": [None, Interval(Integral, 1, None, closed="left"), Options("select")],
        "clip_radius": [Options("auto", "schema"), Interval(Real, 0, None, closed="neither")],
        "radius_factor": [Interval(Real, 0, None, closed="neither")],
        "budget_split": SHARES,
        "covariance": [Options("class", "pooled")],
        "basis": PUBLIC_ARRAY,
        "component_grid": [Instance(tuple, list, what="a sequence of ints")],
        "selection_share": FRACTION,
        "n_classes": N_CLASSES,
        "row_norm_bound": [None, Interval(Real, 0, None, closed="neither")],
        "shrinkage": [Interval(Real, 0, None, closed="left")],
        "centring": [Options("global", "class")],
        "mean_directions": [BOOL],
        "accounting": [Options("auto", "gaussian", "zcdp")],
    }

    name: ClassVar[str] = "gauss-pca"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = ("Gaussian-mechanism PCA mixture: L2 clipping around a DP centre, Analyze Gauss basis, "
                              "per-class moments, residual variance; zCDP accounting (default)")
    supervised: ClassVar[bool] = False
    uses_delta: ClassVar[bool] = True
    # per-class model when the schema has a label; sample(k) chunk by chunk draws from the same released model
    capabilities: ClassVar[Capabilities] = Capabilities(passes="multi-pass", samples_in_chunks=True,
                                                        uses_label=True, estimates_covariance=True)

    _passes = None  # the pass executor during fit_executor (the within-class pass runs on it)

    def __init__(self, epsilon=1.0, delta=1e-5, *, n_components=None, clip_radius="auto", radius_factor=1.0,
                 budget_split=None, covariance="class", basis=None, component_grid=DEFAULT_COMPONENT_GRID,
                 selection_share=DEFAULT_SELECTION_SHARE, n_classes=None, row_norm_bound=None,
                 shrinkage=0.0, centring="class", mean_directions=True, accounting="auto", domain=None,
                 rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_components = n_components
        self.clip_radius = clip_radius
        self.radius_factor = radius_factor
        self.budget_split = budget_split
        self.covariance = covariance
        self.basis = basis
        self.component_grid = component_grid
        self.selection_share = selection_share
        self.n_classes = n_classes
        self.row_norm_bound = row_norm_bound
        self.shrinkage = shrinkage
        self.centring = centring
        self.mean_directions = mean_directions
        self.accounting = accounting
        self.domain = domain
        self.rng = rng

    # ---- validation and calibration -----------------------------------------------
    def _check_options(self, p: int) -> bool:
        """The checks that depend on p or on several parameters together (each parameter's own
        range is declared in ``_parameter_constraints`` and checked before any fit method);
        returns whether the dimension is selected privately."""
        if self.basis is not None:
            V = np.asarray(self.basis, dtype=np.float64)
            if V.ndim != 2 or V.shape[0] != p or not (1 <= V.shape[1] <= p) or not np.all(np.isfinite(V)):
                raise ParameterError(f"basis must be a finite p x P array with p = {p} rows, got shape {V.shape}")
        select = isinstance(self.n_components, str)
        if select:
            if self.basis is not None:
                raise ParameterError("n_components='select' needs a private basis (basis=None)")
            grid = [int(g) for g in self.component_grid if 1 <= int(g) <= p]
            if not grid:
                raise ParameterError(f"component_grid has no value in [1, {p}]")
        elif self.basis is None and self.n_components is not None:
            self._check_int(self.n_components, "n_components", 1, p)
        return select

    def _possible_dimensions(self, p: int, select: bool) -> list[int]:
        """Every basis dimension P this configuration can release (public: it does not read the data)."""
        if self.basis is not None:
            return [np.asarray(self.basis).shape[1]]
        if select:
            return [int(g) for g in self.component_grid if 1 <= int(g) <= p]
        return [min(DEFAULT_COMPONENTS, p) if self.n_components is None else int(self.n_components)]

    def _validate(self, p: int, labelled: bool, radius_mode, one_pass: bool = False) -> dict:
        """The shares of rho per released part, after checking the parameters."""
        select = self._check_options(p)
        # shares
        split = dict(DEFAULT_SPLIT)
        if self.budget_split is not None:
            if not isinstance(self.budget_split, dict):
                raise ParameterError(f"budget_split must be a dict of shares, got {type(self.budget_split).__name__}")
            unknown = sorted(set(self.budget_split) - set(PARTS) - {"within_radius"})
            if unknown:
                raise ParameterError(f"budget_split has unknown part(s) {unknown}; parts: {list(PARTS)}")
            for k, v in self.budget_split.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0):
                    raise ParameterError(f"budget_split['{k}'] must be a number > 0, got {v!r}")
                split[k] = float(v)
        # parts that do not run give their share to the others: the within-class pass needs two classes,
        # the residual variance a basis smaller than p (every P the configuration allows is public)
        within = self.centring == "class" and labelled and not one_pass and self._declared_classes() > 1
        if within:
            split["within_radius"] = split.get("within_radius", DEFAULT_WITHIN_RADIUS_SHARE)
        if not labelled:
            split.pop("counts")
        if min(self._possible_dimensions(p, select)) >= p:
            split.pop("residual")
        if radius_mode != "auto":
            split.pop("radius")
        if self.basis is not None:
            split.pop("basis")
        total = sum(split.values())
        shares = {k: v / total for k, v in split.items()}
        if select:
            s = float(self.selection_share)
            shares = {k: v * (1 - s) for k, v in shares.items()}
            shares["selection"] = s
        return shares

    def _calibrate(self, eps: float, delta: float, shares: dict) -> tuple[float, str]:
        mode = accounting_mode(self.accounting, self.source_.secure)
        if math.isinf(eps):
            return math.inf, mode
        return calibrate_rho(eps, delta, mode, float(shares.get("selection", 0.0))), mode

    # ---- fitting ------------------------------------------------------------------------
    def record_preprocessing(self) -> tuple:
        """Rows are scaled into the public ball ``||x|| <= row_norm_bound`` before any sum."""
        return () if self.row_norm_bound is None else (("row_norm_bound", float(self.row_norm_bound)),)

    def fit(self, X, y=None):
        """Fit on an encoded matrix (both passes in memory)."""
        _, X, y, _ = self._check_common(X, y)
        return self.fit_passes(lambda: iter([(X, y)]))

    def fit_passes(self, make_chunks: Callable[[], Iterable[tuple[np.ndarray, np.ndarray | None]]]):
        """Streaming passes: ``make_chunks()`` yields fresh ``(X_chunk, y_chunk)`` pairs each time
        (see :meth:`fit_executor`)."""
        return self.fit_executor(ChunkPasses(make_chunks))

    def fit_executor(self, passes):
        """Fit by running the passes on ``passes`` (a :mod:`privrelease.engine.passes` executor:
        streamed chunks locally, or partitions on a Dask cluster).

        Pass 1 maps each encoded chunk to n, ``sum x``, ``sum ||x||^2`` (O(p) per record); pass 2
        to the per-class statistics of the clipped rows (O(p^2) per record); with class centring,
        pass 3 to the within-class second moments. The maps (row scaling, clipping) run where the
        chunks are; the noise is added here, on the merged sums. Memory O(C p^2).
        """
        B = self.row_norm_bound
        blocks = self.domain.blocks if isinstance(self.domain, EncodedDomain) else ()  # checked in every chunk
        first = passes.run(partial(_centre_pass_map, bound=B, blocks=blocks))
        if first is None or first[0] == 0:
            raise InputDataError("the input has no records")
        n, s1, sq, labelled = first
        labelled = bool(labelled)
        n_classes = self._declared_classes() if labelled else None
        self.fit_centre(int(n), s1, float(sq), labelled=labelled)
        stats = passes.run(partial(_clipped_stats_map, centre=self.centre_, radius=self.radius_, bound=B,
                                   n_classes=n_classes, blocks=blocks), merge=SufficientStats.merge)
        self._passes = passes if (self.centring == "class" and labelled) else None
        try:
            return self.fit_stats(stats)
        finally:
            self._passes = None

    def fit_centre(self, n: int, s1: np.ndarray, sq_norm_sum: float | None, labelled: bool = False,
                   radius_mode=None, one_pass: bool = False):
        """Pass-1 releases: the DP centre and (``clip_radius="auto"``) the DP radius.

        ``s1 = sum_i x_i`` and ``sq_norm_sum = sum_i ||x_i||^2`` of the encoded rows
        (after scaling into the public ball when ``row_norm_bound`` is set).
        """
        eps, _, _, dom = self._check_common(None, p=len(s1))
        delta = check_delta(self.delta)
        if not math.isinf(eps) and delta <= 0:
            raise ParameterError("gauss-pca needs delta > 0 (an (epsilon, delta)-DP mechanism)")
        self.domain_ = dom
        cr = self.clip_radius if radius_mode is None else radius_mode
        shares = self._validate(dom.p, labelled, cr, one_pass)
        rho, mode = self._calibrate(eps, delta, shares)
        self.rho_ = rho
        self.rho_split_ = {k: rho * v for k, v in shares.items()}
        self.accounting_mode_ = mode
        self.sensitivities_, self.noise_scales_, self.notes_ = {}, {}, []
        self.n_ = int(n)
        self.labelled_ = bool(labelled)
        B = self.row_norm_bound
        # public bound on every noised value, for the secure grid: per record, coordinates in
        # [0, 1], squared distances to c and squared radii at most (||x|| + ||c||)^2 <= r_max^2
        r_max = dom.max_l2_norm + math.sqrt(dom.p)
        self.source_.set_value_bound(float(n) * max(1.0, 4.0 * r_max**2))
        s1n = self._gauss(s1, centre_sensitivity(dom, B), "centre", coords=dom.p)
        self.centre_ = np.clip(s1n / n, 0.0, 1.0)
        r_dom = domain_radius(dom, self.centre_, B)
        self.domain_radius_ = r_dom
        if cr == "auto":
            if sq_norm_sum is None:
                raise ParameterError("clip_radius='auto' needs sum ||x||^2 from the first pass")
            c = self.centre_
            T = float(sq_norm_sum) - 2.0 * float(c @ s1) + n * float(c @ c)
            Tn = float(self._gauss(np.array([T]), sq_distance_sensitivity(r_dom), "radius", coords=1)[0])
            rms = math.sqrt(max(Tn, 0.0) / n)
            self.rms_distance_ = rms
            self.radius_ = float(min(max(float(self.radius_factor) * rms, 1e-3 * r_dom), r_dom))
            self.radius_source_ = "DP estimate: radius_factor x RMS distance to the DP centre"
        elif cr == "schema":
            self.radius_ = r_dom
            self.radius_source_ = "schema: largest distance from the DP centre to the encoded domain (no clipping)"
        else:
            self.radius_ = float(min(float(cr), r_dom))
            self.radius_source_ = "public radius declared by the user"
        self._stage = "centre-fitted"
        return self

    def fit_stats(self, stats: SufficientStats, p=None):
        """Stage 2 from the per-class statistics of the clipped rows (after :meth:`fit_centre`).

        Called on *raw* statistics without :meth:`fit_centre` first, this is the one-pass
        variant: centre from ``stats.s1``, radius = the schema's bound around it (no row
        is clipped), statistics of ``x - c`` obtained algebraically.

        Notes
        -----
        The one-pass sensitivities (centre ``min(diam, 2 B)``, sums and moments with the radius
        ``r_dom(c, B)``) hold only for rows already scaled into the public ball ``||x|| <= B``:
        one replaced record then moves each sum by at most ``||x - x'|| <= 2 B``. Raw statistics
        of unscaled rows would move by up to the domain's diameter (5 times more for one column
        in [0, 1] with B = 0.1), so statistics whose ``preprocessing`` is not
        :meth:`record_preprocessing` are refused (docs/derivations.md).
        """
        if stats.s2 is None:
            raise InputDataError("gauss-pca needs second moments in the statistics")
        one_pass = getattr(self, "_stage", None) != "centre-fitted"
        if one_pass and stats.preprocessing != self.record_preprocessing():
            # the centre's and the sums' sensitivities assume every row inside the public ball
            raise ParameterError(
                f"gauss-pca with row_norm_bound={self.row_norm_bound} needs statistics of rows scaled into that "
                f"ball; these were computed with preprocessing {list(stats.preprocessing) or 'none'} (compute "
                f"them with SufficientStats.from_matrix(X, preprocessing=mechanism.record_preprocessing()))")
        if one_pass:
            if stats.classes:
                self._declared_classes()  # before any noise is drawn
            # one pass on raw statistics: no clipping is possible, radius from the schema
            self.fit_centre(stats.n, stats.s1, None, labelled=bool(stats.classes), radius_mode="schema",
                            one_pass=True)
            if self.clip_radius != "schema":
                self.notes_.append("one pass on raw statistics: no clipping, radius from the schema")
            stats = _centre_stats(stats, self.centre_)
        self._stage = None
        self.within_radius_ = None
        self._fit_model(stats)
        self.passes_ = 1 if one_pass else (3 if self.within_radius_ is not None else 2)
        return self

    def _fit_model(self, stats: SufficientStats):
        """Steps 3-8 of the Notes on the per-class statistics of the clipped rows (noise in that order)."""
        R, n, p = self.radius_, self.n_, self.domain_.p
        if stats.n != n:
            raise InputDataError(f"the two passes saw different numbers of records ({n} and {stats.n})")
        if self.labelled_ and stats.classes:
            C = self._declared_classes()
            if max(stats.classes) >= C or min(stats.classes) < 0:
                raise InputDataError(f"a label code is outside the declared {C} classes")
            cls = [stats.classes.get(c) or SufficientStats(p=p) for c in range(C)]
        else:
            C, cls = 1, [stats]
        A = sum((c.s2 for c in cls), np.zeros((p, p)))
        # counts and class sums first, in the full space (same sensitivity 2 R as in the basis,
        # so projecting them later is free): their mean directions can join the basis
        counts = np.array([float(c.n) for c in cls])
        if "counts" in self.rho_split_:
            counts = self._gauss(counts, COUNT_SENSITIVITY, "counts", coords=2)
        S1_full = self._gauss(np.stack([c.s1 for c in cls]), sum_sensitivity(R), "sums", coords=2 * p).reshape(C, p)
        V = self._release_basis(A, S1_full, counts, C, R)
        self.n_components_ = P = V.shape[1]
        S1 = S1_full @ V  # C x P (post-processing of the released sums)
        pooled = self.covariance == "pooled"
        if self._passes is not None and C > 1:  # second moments centred at the released class means
            W2 = self._within_class_pass(V, S1, counts, cls, C, P, R)
            means, covs = self.class_centres_, mixture_from_within(W2, counts, pooled)
        else:
            means, covs = mixture_from_moments(S1, self._release_moments(cls, V, R), counts, pooled)
        self._release_residual(A, V, R)
        self.components_ = V.T
        w = np.maximum(counts, 0.0)
        self.class_weights_ = w / w.sum() if w.sum() > 0 else np.full(C, 1.0 / C)
        self.class_means_ = means
        self.class_covariances_ = shrink_covariances(covs, counts, self.noise_scales_.get("moments_std", 0.0),
                                                     self.shrinkage, pooled)
        self.n_classes_ = C
        self.budget_split_ = {f"rho_{k}": float(v) for k, v in self.rho_split_.items()}  # zCDP units
        eps = float(self.epsilon)
        self._set_cost(eps, float(self.delta) if math.isfinite(eps) else 0.0,
                       self.rho_ if math.isfinite(self.rho_) else None)
        return self

    # ---- sampling ------------------------------------------------------------------------
    def sample(self, n: int):
        """Draw ``n`` records from the released model; returns ``(X, y)`` (y None without labels)."""
        n = self._check_int(n, "n", 1)
        X, y = sample_mixture(self.source_.generator, n, self.class_weights_, self.class_means_,
                              self.class_covariances_, self.components_.T, self.centre_, self.residual_variance_)
        return X, (y if self.labelled_ else None)

    def certificate_extra(self) -> dict:
        eps, delta = float(self.epsilon), float(self.delta)
        d = {
            "rho_zcdp": self.rho_,
            "rho_split": dict(self.rho_split_),
            "accounting": self.accounting_mode_,
            "n_components": int(self.n_components_),
            "clip_radius": self.radius_,
            "clip_radius_source": self.radius_source_,
            "centre": "DP (Gaussian mechanism on the sum); rows clipped around it",
            "basis": self.basis_source_,
            "passes": int(self.passes_),
            "n_treated_as_public": True,
        }
        if math.isfinite(self.rho_):
            sel = math.sqrt(8.0 * self.rho_split_["selection"]) if "selection" in self.rho_split_ else 0.0
            d["epsilon_check_dp_accounting"] = epsilon_for(self.rho_ - self.rho_split_.get("selection", 0.0), delta,
                                                           self.accounting_mode_, sel)
            d["epsilon_target"] = eps
            d["delta"] = delta
        if getattr(self, "selection_", None):
            d["dimension_selection"] = dict(self.selection_)
        return d

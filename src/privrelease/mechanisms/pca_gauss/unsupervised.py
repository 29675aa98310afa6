"""pca-gauss: Algorithm 1 of PCA-Gauss (unsupervised), see :mod:`privrelease.mechanisms.pca_gauss.common`."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...engine.stats import SufficientStats
from ...errors import InputDataError, ParameterError
from ...linalg import psd_repair, sorted_eigh
from ..base import R1
from ..constraints import Options
from .basis import centred_second_moment, public_centre
from .common import moment_sensitivities, spectrum_sensitivity, _PCAGaussBase, _COMMON_DOC


# ---- Algorithm 1 --------------------------------------------------------------------

class PCAGauss(_PCAGaussBase):

    _parameter_constraints: ClassVar[dict] = {
        **_PCAGaussBase._parameter_constraints,
        "centre": [Options("public", "empirical")],
    }
    __doc__ = """PCA-Gauss Algorithm 1 (unsupervised): a DP Gaussian model of PCA-reduced records.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Total budget (basis + model). ``inf``: no noise (exact PCA and moments).
    centre : "public" or "empirical", default "public"
        For ``pca_source="same-data"`` only: centre at the public midpoint or at the empirical mean.
""" + _COMMON_DOC.format(sources="'same-data', 'laplace', 'analyze-gauss', 'public', 'split'",
                         default="same-data") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 (bounded, n public); (epsilon, delta)-DP with
    ``pca_source="analyze-gauss"`` (the certificate then says so).

    ``pca_source="same-data"`` (the paper's Algorithm 1, corrected, ALGORITHMS.md 3.3).
    With ``V`` the eigenvectors of ``S = sum u u^T`` on the same data, ``V^T S V / N`` is
    exactly diagonal, so only the top-P eigenvalues carry information. They get
    ``Lap(Delta / eps)`` with ``Delta = min(P, 2) M / 4`` (public centre) or
    ``min(P, 2) M (N-1)/N`` (empirical centre), both in the scale of ``S`` (see
    :func:`spectrum_sensitivity`; the paper's constant ignores the empirical centring, E9,
    and noises zero entries, E10). Samples ``N(0, diag(lambda^) / N)`` in the reduced space,
    columns ``pc1..pcP``; the basis is not released, so no map back (E10 caveat: the
    synthetic data carry no directions).

    Independent basis. ``z = V(x - c)`` (optionally clipped); release ``sum z +
    Lap(2 sqrt(P) R / eps_mu)`` and ``upper(sum z z^T) + Lap(P R^2 / eps_Sigma)``
    (:func:`moment_sensitivities`), ``mu = S1/N``, ``Sigma = PSD(S2/N - mu mu^T)``;
    with output in the original space, also the residual variance (:func:`residual_sensitivity`).
    Default shares of the model budget: mean 0.1, covariance 0.85, residual 0.05.
    Sequential composition with the basis cost (parallel for ``split``).
    Cost ``O(N M^2 + M^3 + N_syn P^2)``.
    """

    name: ClassVar[str] = "pca-gauss"
    relation: ClassVar[str] = R1
    summary: ClassVar[str] = ("PCA-Gauss Alg. 1: DP Gaussian on PCA-reduced data; by default (same-data spectrum) "
                              "columns pc1..pcP, NOT the schema's; an independent LapPCA/AG-PCA/public/split "
                              "basis gives the schema's columns")
    columns: ClassVar[str] = ("pc1..pcP, the reduced space, NOT the schema's columns, with the default "
                              "pca_source=same-data (no basis is released, so nothing maps back); the schema's "
                              "columns with --param pca_source=laplace (or analyze-gauss, public, split)")
    default_shares: ClassVar[dict] = {"mean": 0.10, "covariance": 0.85, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="same-data", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="auto", centre="public", model_shares=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.pca_source = pca_source
        self.pca_share = pca_share
        self.delta = delta
        self.public_components = public_components
        self.public_data = public_data
        self.split_fraction = split_fraction
        self.clip_radius = clip_radius
        self.output_space = output_space
        self.centre = centre
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        return self._fit(eps, dom, X, SufficientStats.from_matrix(X))

    def fit_stats(self, stats: SufficientStats, p=None):
        eps, _, _, dom = self._check_common(None, p=stats.p)
        return self._fit(eps, dom, None, stats)

    def _fit(self, eps, dom, X, stats):
        k = self._validate(dom.p)
        if self.centre not in ("public", "empirical"):
            raise ParameterError(f"centre must be 'public' or 'empirical', got {self.centre!r}")
        if stats.n < 2:
            raise InputDataError("pca-gauss needs at least 2 records")
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(stats.n, dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.residual_var_ = 0.0
        self.n_ = stats.n
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        if self.pca_source == "same-data":
            self._fit_same_data(eps, dom, X, stats, k)
            self._set_cost(eps)
            return self
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        R = self._radius(dom.p)
        self.radius_ = R
        if X is not None:
            Xm = X if mask is None else X[mask]
            zs = SufficientStats.from_matrix(self._project(basis, Xm))
            base_stats = stats if mask is None else SufficientStats.from_matrix(Xm)
        else:
            if self.clip_radius is not None:
                raise ParameterError("clip_radius needs the records (fit), not merged statistics (fit_stats)")
            zs = self._reduced_stats(stats, basis)
            base_stats = stats
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R, class_change=False)
        self.sensitivities_.update({"sums_l1": sens["sums_l1"],
                                    "second_moments_upper_l1": sens["second_moments_upper_l1"]})
        self.budget_split_.update(e)
        n = zs.n
        if math.isinf(eps):
            self.mean_, self.covariance_ = zs.mean, psd_repair(zs.covariance)
        else:
            self.mean_, self.covariance_ = self._noisy_gaussian(zs, sens, e["mean"], e["covariance"], n, "")
        if self.output_space_ == "original":
            self.residual_var_ = self._exact_residual(base_stats, basis) if math.isinf(eps) else \
                self._residual(base_stats, basis, e["residual"])
        self._finish_common(basis, k)
        self._finish_cost(eps, e)
        return self

    @staticmethod
    def _exact_residual(stats, basis):
        S = centred_second_moment(stats, basis.centre)
        p, k = basis.components.shape[1], basis.n_components
        r = float(np.trace(S) - np.trace(basis.components @ S @ basis.components.T))
        return max(r, 0.0) / (stats.n * max(p - k, 1))

    def _fit_same_data(self, eps, dom, X, stats, k):
        n = stats.n
        emp = self.centre == "empirical"
        S = stats.covariance * n if emp else centred_second_moment(stats, public_centre(dom.p))
        lam, _ = sorted_eigh(S, k)
        sens = spectrum_sensitivity(k, dom.p, emp, n)
        self.sensitivities_, self.noise_scales_ = {"spectrum_l1": sens}, {}
        noisy = self._laplace("spectrum", lam, sens, eps, coords=k)
        self.budget_split_ = {"spectrum": eps}
        self.released_ = {"spectrum_sum_scale": noisy}
        self.spectrum_ = np.maximum(noisy / n, 0.0)
        self.mean_ = np.zeros(k)
        self.covariance_ = np.diag(np.maximum(self.spectrum_, 1e-12))
        self.radius_ = math.sqrt(dom.p) / 2.0
        self.basis_ = None
        self.output_columns_ = [f"pc{i + 1}" for i in range(k)]

    def sample(self, n: int):
        gen = self.source_.generator
        Z = self._sample_reduced(self.mean_, self.covariance_, int(n), gen)
        if self.pca_source == "same-data":
            return Z, None
        return self._to_output(Z, gen), None



"""pca-gauss-supervised: Algorithm 2 of PCA-Gauss (regression), see :mod:`privrelease.mechanisms.pca_gauss.common`."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...engine.stats import SufficientStats
from ...errors import InputDataError
from ...linalg import psd_repair
from ..base import Capabilities
from .common import moment_sensitivities, _PCAGaussBase, _COMMON_DOC
from .unsupervised import PCAGauss


# ---- Algorithm 2 --------------------------------------------------------------------

class PCAGaussSupervised(_PCAGaussBase):
    __doc__ = """PCA-Gauss Algorithm 2 (regression): joint Gaussian of projected features and the target.

    Parameters
    ----------
    epsilon : float in (0, inf]
""" + _COMMON_DOC.format(sources="'laplace', 'analyze-gauss', 'public', 'split'", default="laplace") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 (one record, target included, replaced; n public);
    (epsilon, delta)-DP with ``pca_source="analyze-gauss"``.

    ``fit(X, y)`` takes the encoded features X and the encoded target ``y in [0, 1]``
    (the schema's ``role: target`` column). ``w = (V (x - c), y - 1/2)``; the basis is
    independent of the model (public, or DP and paid from the budget: with a same-data
    basis every projected record changes when one record changes, Prop. 4). Release
    ``sum w + Lap(Delta_1 / eps_mu)`` and ``upper(sum w w^T) + Lap(Delta_2 / eps_Sigma)``
    with ``Delta_1 = 2 sqrt(P) R + 1`` and ``Delta_2 = P R^2 + sqrt(P) R + 1/4``
    (:func:`moment_sensitivities`, target variant). The paper's ``(P^2 + 4P + 1) a^2 / N``
    holds for uncentred box data but its centred use is wrong (E9); ours is derived for
    the domain actually used. Samples ``(z, t) ~ N(mu, PSD(Sigma))``; the target is
    returned as ``y`` (encoded, clipped to [0, 1]). Default shares: mean 0.1, covariance
    0.85, residual 0.05.
    """

    name: ClassVar[str] = "pca-gauss-supervised"
    relation: ClassVar[str] = "bounded (R1): one record replaced, its target included; n public"
    capabilities: ClassVar[Capabilities] = Capabilities(passes="memory", samples_in_chunks=True, needs_target=True,
                                                        estimates_covariance=True)
    contract_release: ClassVar[bool] = False  # needs a 'role: target' column (tested in tests/unit/test_pca_gauss.py)
    summary: ClassVar[str] = "PCA-Gauss Alg. 2: DP joint Gaussian of (independent-PCA features, target)"
    columns: ClassVar[str] = "the schema's columns (pc1..pcP and the target with --param output_space=reduced)"
    default_shares: ClassVar[dict] = {"mean": 0.10, "covariance": 0.85, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="laplace", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="original", model_shares=None, domain=None, rng=None):
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
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if y is None:
            raise InputDataError("pca-gauss-supervised needs a target y (a 'role: target' column in the schema)")
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != X.shape[0]:
            raise InputDataError("X and y have different numbers of records")
        if not np.all(np.isfinite(y)) or y.min() < -1e-12 or y.max() > 1 + 1e-12:
            raise InputDataError("the target must be encoded into [0, 1]")
        k = self._validate(dom.p)
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(X.shape[0], dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        stats = SufficientStats.from_matrix(X)
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        Xm, ym = (X, y) if mask is None else (X[mask], y[mask])
        R = self._radius(dom.p)
        self.radius_ = R
        W = np.column_stack([self._project(basis, Xm), ym - 0.5])
        ws = SufficientStats.from_matrix(W)
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R, target=True, class_change=False)
        self.sensitivities_.update({"sums_l1": sens["sums_l1"],
                                    "second_moments_upper_l1": sens["second_moments_upper_l1"]})
        self.budget_split_.update(e)
        if math.isinf(eps):
            self.mean_, self.covariance_ = ws.mean, psd_repair(ws.covariance)
            self.residual_var_ = PCAGauss._exact_residual(SufficientStats.from_matrix(Xm), basis) \
                if self.output_space_ == "original" else 0.0
        else:
            self.mean_, self.covariance_ = self._noisy_gaussian(ws, sens, e["mean"], e["covariance"], ws.n, "")
            self.residual_var_ = self._residual(SufficientStats.from_matrix(Xm), basis, e["residual"]) \
                if self.output_space_ == "original" else 0.0
        self._finish_common(basis, k)
        self._finish_cost(eps, e)
        return self

    def sample(self, n: int):
        gen = self.source_.generator
        W = self._sample_reduced(self.mean_, self.covariance_, int(n), gen)
        Z, t = W[:, :-1], np.clip(W[:, -1] + 0.5, 0.0, 1.0)
        return self._to_output(Z, gen), t



"""Jiang et al. 2013, sec. 3.1: differentially private PCA publishing (PCA-based PPDP)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...dp.sensitivities import first_and_second_moment_l1
from ...engine.stats import SufficientStats
from ...linalg import mirror, sorted_eigh, upper
from ...schema.encoding import EncodedDomain
from ..base import Capabilities, RowAlignedMechanism
from ..constraints import COMMON, FRACTION, POSITIVE_INT


def moment_sensitivity(domain: EncodedDomain) -> float:
    """L1 sensitivity of ``(sum x, upper(sum x x^T))`` under replacement of one record.

    ``s_mix = (p1 + 2 p2) + p1 (p1 + 1) / 2 + 2 p1 p2 + p2 (p2 + 1)`` (derived in
    docs/derivations.md, "Encoded rows"). For numeric-only data (p2 = 0) this is the paper's ``p + p (p + 1) / 2``.
    """
    return first_and_second_moment_l1(domain)


def paper_moment_sensitivity(domain: EncodedDomain) -> float:
    """The paper's mixed-data value ``(p1 + 2 p2) + [(p1+p2)(p1+p2+1) + p2(p2+1)] / 2`` (too small, E2)."""
    p1, p2 = domain.p1, domain.p2
    return float((p1 + 2 * p2) + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2)


def projection_sensitivity(domain: EncodedDomain, k: int) -> float:
    """L1 sensitivity of one projected row ``U_k (x - mu)``: ``sqrt(k) * sqrt(p1 + 2 p2)`` (T6)."""
    return math.sqrt(k) * domain.max_l2_diff


class JiangPCA(RowAlignedMechanism):
    """Differentially private PCA publishing: noisy moments, noisy projection, one row per record.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Total budget. ``inf`` gives the non-private rank-k PCA reconstruction.
    n_components : int, default 5
        k, the number of principal components kept (1 <= k <= p).
    moment_share : float in (0, 1), default 0.5
        Share of epsilon spent on the moments (the paper splits evenly).
    domain : EncodedDomain or None
        Public structure of the encoded matrix (numeric in [0, 1], one-hot blocks).
    rng : None, int or numpy.random.Generator
        None: floating-point-safe noise (real releases); int/Generator: seeded (experiments).

    Attributes
    ----------
    mean_ : noisy mean (p,)
    components_ : (k, p) top-k eigenvectors of the noisy covariance, rows orthonormal
    explained_variance_ : (k,) their noisy eigenvalues
    sensitivities_, noise_scales_, budget_split_, privacy_cost_

    Notes
    -----
    Guarantee: epsilon-DP under R1 (bounded: one record replaced, n public). n is
    used as a public divisor, as in every proof of the paper (erratum E3: the paper's
    Definition 1 is add/remove, but its proofs replace a record and divide by n).

    Steps (Jiang et al. sec. 3.1, ALGORITHMS.md 2.1):

    1. ``T = (sum_i x_i, upper(sum_i x_i x_i^T))``; release ``T + Lap(s / eps_1)``,
       ``eps_1 = moment_share * epsilon``, and mirror the noisy upper triangle.
    2. ``mu = S1~ / n``, ``D = S2~ / n - mu mu^T``; ``U_k`` = its top-k eigenvectors.
    3. Release ``Y = (X - mu) U_k^T + Lap(Delta_proj / eps_2)`` row by row,
       ``eps_2 = epsilon - eps_1``, and ``Xhat = Y U_k + mu``.

    Sensitivity of step 1 (derived; erratum E2 corrects the paper's mixed-data value).
    Encoded rows have numeric entries in [0, 1] and one-hot blocks. Replacing x by x'
    changes: the numeric part of ``sum x`` by at most p1 and its dummy part by 2 p2
    (two dummies flip per categorical variable); numeric x numeric products (upper
    triangle with diagonal) by at most 1 each, ``p1 (p1 + 1) / 2``; numeric x dummy
    products by at most 2 per (numeric, categorical) pair (one product leaves, one
    enters), ``2 p1 p2``; dummy x dummy: the diagonal by 2 per variable and one
    nonzero product per pair of distinct variables leaves and one enters,
    ``2 p2 + p2 (p2 - 1) = p2 (p2 + 1)``. Total
    ``s = (p1 + 2 p2) + p1 (p1 + 1) / 2 + 2 p1 p2 + p2 (p2 + 1)`` (= 134 for Jiang's
    Adult encoding; the paper's formula gives 104, and a vertex witness reaches 114).

    Sensitivity of step 3. Given ``U_k`` and ``mu`` (functions of the step-1 release
    only), row i of Y depends on record i only; for rows x, x',
    ``||U_k (x - x')||_1 <= sqrt(k) ||U_k (x - x')||_2 <= sqrt(k) ||x - x'||_2
    <= sqrt(k (p1 + 2 p2))`` (Cauchy-Schwarz; orthonormal rows; encoded rows). The
    paper's ``sqrt(k p)`` (Lemma 2) is also valid and larger for mixed data.

    Composition: eps_1 + eps_2 = epsilon (sequential; step 3 conditions on step 1).
    Decoding is post-processing. Cost O(n p^2 + p^3 + n p k); streams in two passes.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "n_components": POSITIVE_INT,
        "moment_share": FRACTION,
    }

    name: ClassVar[str] = "jiang-pca"
    capabilities: ClassVar[Capabilities] = Capabilities(passes="statistics", estimates_covariance=True)
    summary: ClassVar[str] = ("Jiang et al. 2013 sec. 3.1 DP PCA publishing: noisy moments (sensitivity corrected, "
                              "erratum E2), top-k eigenvectors, noisy k-dim projection")

    def __init__(self, epsilon=1.0, *, n_components=5, moment_share=0.5, domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.moment_share = moment_share
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=np.float64)
        self._check_common(X)
        return self.fit_stats(SufficientStats.from_matrix(X))

    def fit_stats(self, stats: SufficientStats, p=None):
        eps, _, _, dom = self._check_common(None, p=stats.p)
        k = self._check_int(self.n_components, "n_components", 1, dom.p)
        share = float(self.moment_share)
        if stats.n < 2:
            from ..errors import InputDataError

            raise InputDataError("jiang-pca needs at least 2 records")
        eps1, eps2 = eps * share, eps * (1 - share)
        n, p = stats.n, dom.p
        s = moment_sensitivity(dom)
        T = np.concatenate([stats.s1, upper(stats.s2)])
        # public bound for the secure grid: every entry of x and x x^T lies in [0, 1]
        self.source_.set_value_bound(float(n))
        self.noise_scales_ = {}
        T_noisy = self._laplace("moments", T, s, eps1, coords=T.size)
        s1 = T_noisy[:p]
        s2 = mirror(T_noisy[p:], p)
        self.n_ = n
        self.mean_ = s1 / n
        D = s2 / n - np.outer(self.mean_, self.mean_)
        w, V = sorted_eigh(D, k)
        self.components_ = V.T
        self.explained_variance_ = w
        self.domain_ = dom
        self.sensitivities_ = {"moments_l1": s, "projection_l1": projection_sensitivity(dom, k)}
        self.budget_split_ = {"moments": eps1, "projection": eps2}
        self.projection_bound_ = dom.max_l2_norm + float(np.linalg.norm(self.mean_))
        with self.source_.value_bound(self.projection_bound_):
            self.noise_scales_["projection"] = self.source_.laplace_noise_scale(self.sensitivities_["projection_l1"],
                                                                                eps2, k)
        self._set_cost(eps)
        return self

    def transform(self, X):
        """Noisy projection of each row (step 3); reads the fitted state, never writes it.

        ``|(x - mu) . u| <= ||x|| + ||mu||`` is the public bound of the projected values.
        """
        X = np.asarray(X, dtype=np.float64)
        Y = (X - self.mean_) @ self.components_.T
        with self.source_.value_bound(self.projection_bound_):
            Y, _ = self.source_.add_laplace(Y, self.sensitivities_["projection_l1"],
                                            self.budget_split_["projection"], coords=Y.shape[1])
        return Y @ self.components_ + self.mean_

    def certificate_extra(self) -> dict:
        return {"n_components": int(self.components_.shape[0]), "n_treated_as_public": True}

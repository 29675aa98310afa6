"""modips: Liu 2016, Gaussian instantiation with a posterior draw (a PCA-Gauss baseline, ALGORITHMS.md 3.10)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...engine.stats import SufficientStats
from ...dp.rounding import largest_remainder
from ...dp.sensitivities import box_second_moment_l1
from ...linalg import mirror, psd_repair, upper
from ..base import R1, SyntheticMechanism
from ..constraints import COMMON, N_CLASSES, SHARES
from ..pca_gauss.basis import CENTRE
from ..pca_gauss.common import gaussian_sample


# ---- MODIPS ----------------------------------------------------------------------------

def modips_sensitivities(domain, class_change: bool) -> dict:
    """L1 sensitivities of sums of ``u = x - c`` and of ``upper(sum u u^T)`` (R1; docs/derivations.md).

    Sums: ``||u - u'||_1 <= p1 + 2 p2`` (a class move: ``||u||_1 + ||u'||_1 <= M``, M = p1 + ... width;
    we use ``max(p1 + 2 p2, M)``). Second moments: entries of ``u u^T`` lie in [-1/4, 1/4];
    within a class T1 with ``a = 1/2`` gives ``M (M + 1) / 8``; a class move removes one
    upper triangle and adds another, each of L1 norm at most ``M (M + 1) / 8``: ``M (M + 1) / 4``.
    """
    M = domain.p
    return {"counts_l1": 2.0,
            "sums_l1": float(max(domain.max_l1_diff, M if class_change else 0)),
            "second_moments_upper_l1": (2.0 if class_change else 1.0) * box_second_moment_l1(M, CENTRE)}


class MODIPS(SyntheticMechanism):
    """MODIPS (Liu 2016), Gaussian instantiation: noisy moments, a posterior draw, synthetic records.

    Parameters
    ----------
    epsilon : float in (0, inf]
    shares : dict or None, relative shares of counts / mean / covariance (default 0.05 / 0.15 / 0.80;
        counts only with labels)
    n_classes : int or None (public label-set size; with ``fit(X, y)``)
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1 (R1 with the label in the record when ``y`` is given).
    Per class (or once without labels): ``sum u + Lap(Delta_s / eps_mu)``,
    ``upper(sum u u^T) + Lap(Delta_S / eps_Sigma)`` (:func:`modips_sensitivities`), noisy
    counts with ``Lap(2 / eps_N)``; ``C^ = PSD(S~/n^ - mu mu^T)``; then (post-processing)
    ``Sigma* ~ InvWishart(n^ - 1, n^ C^)``, ``mu* ~ N(mu~, Sigma*/n^)`` and records from
    ``N(mu*, Sigma*)`` (ALGORITHMS.md 3.10.4). Cost ``O(N M^2 + C M^3)``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "shares": SHARES,
        "n_classes": N_CLASSES,
    }

    name: ClassVar[str] = "modips"
    relation: ClassVar[str] = R1
    summary: ClassVar[str] = "MODIPS (Liu 2016): DP Gaussian (per class) in the original space with a posterior draw"

    def __init__(self, epsilon=1.0, *, shares=None, n_classes=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.shares = shares
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
            st = SufficientStats.from_matrix(X - CENTRE, y, C)
        else:
            C = None
            st = SufficientStats.from_matrix(X - CENTRE)
        return self._fit(eps, dom, st, C)

    def _fit(self, eps, dom, st, C):
        sh = {"counts": 0.05, "mean": 0.15, "covariance": 0.80}
        if self.shares is not None:
            sh.update(self.shares)
        labelled = C is not None
        if not labelled:
            sh.pop("counts")
        tot = sum(sh.values())
        e = {k: eps * v / tot for k, v in sh.items()}
        sens = modips_sensitivities(dom, labelled)
        self.sensitivities_, self.budget_split_, self.noise_scales_ = dict(sens), e, {}
        if not labelled:
            sens = dict(sens, sums_l1=float(dom.max_l1_diff))
            self.sensitivities_ = {k: v for k, v in sens.items() if k != "counts_l1"}
        per = [st.classes.get(c, SufficientStats(p=dom.p)) for c in range(C)] if labelled else [st]
        counts = np.array([s.n for s in per], dtype=float)
        p = dom.p
        self.source_.set_value_bound(float(st.n))  # counts, sums of |x - c| <= 1/2 and of products <= 1/4
        if labelled and math.isfinite(eps):
            counts = self._laplace("counts", counts, 2.0, e["counts"], coords=C)
        n_hat = np.maximum(counts, 2.0)
        S1 = np.concatenate([s.s1 for s in per])
        U = np.concatenate([upper(s.s2) for s in per])
        if math.isfinite(eps):
            S1 = self._laplace("sums", S1, sens["sums_l1"], e["mean"], coords=p)
            U = self._laplace("second_moments", U, sens["second_moments_upper_l1"], e["covariance"],
                              coords=p * (p + 1) // 2)
        m = p * (p + 1) // 2
        self.means_ = S1.reshape(len(per), p) / n_hat[:, None]
        self.covariances_ = np.array([psd_repair(mirror(U[c * m:(c + 1) * m], p) / n_hat[c]
                                                 - np.outer(self.means_[c], self.means_[c]))
                                      for c in range(len(per))])
        self.class_counts_ = n_hat
        self.labelled_ = labelled
        self.posterior_draw_ = math.isfinite(eps)
        self.domain_ = dom
        self._set_cost(eps)
        return self

    def sample(self, n: int):
        from scipy.stats import invwishart

        gen = self.source_.generator
        m = largest_remainder(self.class_counts_ / self.class_counts_.sum(), int(n))
        Xs, ys = [], []
        for c, mc in enumerate(m):
            mu, S, nh = self.means_[c], self.covariances_[c], self.class_counts_[c]
            if self.posterior_draw_ and nh - 1 > S.shape[0] - 1:
                # one column: scipy returns the draw as a scalar, not a 1 x 1 matrix
                S = psd_repair(np.atleast_2d(invwishart(df=nh - 1, scale=nh * S).rvs(random_state=gen)))
                mu = gaussian_sample(gen, mu, S / nh, 1)[0]
            Xs.append(gaussian_sample(gen, mu, S, int(mc)) + CENTRE)
            ys.append(np.full(int(mc), c))
        X, y = np.vstack(Xs), np.concatenate(ys)
        return X, (y if self.labelled_ else None)



"""pca-gmm: Algorithm 3 of PCA-Gauss, corrected (one Gaussian per class), see :mod:`privrelease.mechanisms.pca_gauss.common`."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...engine.stats import SufficientStats
from ...errors import InputDataError, ParameterError
from ...dp.rounding import largest_remainder
from ...linalg import mirror, psd_repair, upper
from ..base import R1_LABEL
from ..constraints import N_CLASSES
from .common import moment_sensitivities, _PCAGaussBase, _COMMON_DOC
from .unsupervised import PCAGauss


# ---- Algorithm 3 --------------------------------------------------------------------

class PCAGMM(_PCAGaussBase):

    _parameter_constraints: ClassVar[dict] = {
        **_PCAGaussBase._parameter_constraints,
        "n_classes": N_CLASSES,
    }
    __doc__ = """PCA-Gauss Algorithm 3, corrected: a DP Gaussian mixture (one Gaussian per class).

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_classes : int or None
        Size of the public label set (codes 0..C-1). None: ``max(y) + 1`` (noted in the
        certificate, since it is read from the data).
""" + _COMMON_DOC.format(sources="'laplace', 'analyze-gauss', 'public', 'split'", default="laplace") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 with the label inside the record (a replacement may
    move a record between classes); (epsilon, delta)-DP with ``pca_source="analyze-gauss"``.

    The paper's Algorithm 3 is not DP (E13): the private class size ``N_c`` sits in the
    noise scale (T7), ``N_c`` records are synthesized per class, and class-centring adds
    the factor of T4; its parallel composition over classes needs add/remove neighbours
    (E8). Corrected version (ALGORITHMS.md 3.5), with ``z = V (x - c)``:

    1. In one pass over the data: per class, ``n_c``, ``sum z`` and ``sum z z^T``
       (:class:`~privrelease.engine.SufficientStats`; ``fit_stats`` does it from merged
       statistics of ``x`` for the streaming path).
    2. ``n_c + Lap(2 / eps_N)``, ``sum z + Lap(2 sqrt(P) R / eps_mu)``,
       ``upper(sum z z^T) + Lap((P + 1) R^2 / eps_Sigma)`` for every class; these L1
       bounds hold for the concatenation over classes, a record moving class included
       (:func:`moment_sensitivities`); every scale is data-independent.
    3. ``n^_c = max(1, noisy count)``, ``mu_c = S1^_c / n^_c``,
       ``Sigma_c = PSD(S2^_c / n^_c - mu_c mu_c^T)``; ``round(N_syn n^_c / sum n^)`` samples
       per class (largest remainder), labelled ``c``.

    Default shares of the model budget: counts 0.05, means 0.10, covariances 0.80,
    residual 0.05 (residual only for output in the original space; otherwise the
    others are renormalised). Sequential with the basis cost (parallel for ``split``).
    Cost ``O(N M^2 + M^3 + C P^3 + N_syn P^2)`` (``O(N M P)`` with a given basis in memory).
    """

    name: ClassVar[str] = "pca-gmm"
    relation: ClassVar[str] = R1_LABEL
    supervised: ClassVar[bool] = True
    summary: ClassVar[str] = ("PCA-Gauss Alg. 3 corrected: DP Gaussian mixture per class on independent-PCA "
                              "features (noisy counts, sums, second moments)")
    columns: ClassVar[str] = "the schema's columns (pc1..pcP and the label with --param output_space=reduced)"
    default_shares: ClassVar[dict] = {"counts": 0.05, "mean": 0.10, "covariance": 0.80, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="laplace", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="original", n_classes=None, model_shares=None, domain=None, rng=None):
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
        self.n_classes = n_classes
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def _labels(self, y, n):
        y = np.asarray(y)
        if y.shape[0] != n:
            raise InputDataError("X and y have different numbers of records")
        if not np.issubdtype(y.dtype, np.integer):
            if not np.all(np.isfinite(y.astype(float))) or np.any(y.astype(float) != np.round(y.astype(float))):
                raise InputDataError("pca-gmm needs integer class codes 0..C-1 as y")
            y = y.astype(np.int64)
        if y.size and y.min() < 0:
            raise InputDataError("class codes must be >= 0")
        return y

    def _n_classes(self, observed_max):
        if self.n_classes is None:
            self.notes_ = ["label set size read from the data (max code + 1): declare n_classes (the public "
                           "label set) to avoid it"]
            return int(observed_max) + 1
        C = self._check_int(self.n_classes, "n_classes", 1)
        if observed_max >= C:
            raise InputDataError(f"a class code {observed_max} is >= n_classes = {C}")
        return C

    def fit(self, X, y=None):
        eps, X, y, dom = self._check_common(X, y)
        y = self._labels(y, X.shape[0])
        self.notes_ = []
        C = self._n_classes(int(y.max(initial=0)))
        stats = SufficientStats.from_matrix(X, y, C)
        return self._fit(eps, dom, X, y, stats, C)

    def fit_stats(self, stats: SufficientStats, p=None):
        # labels live inside the per-class statistics
        eps, _, _, dom = self._check_common(None, y=np.zeros(0, dtype=np.int64), p=stats.p)
        self.notes_ = []
        if not stats.classes:
            raise InputDataError("pca-gmm needs per-class statistics (a label column)")
        C = self._n_classes(max(stats.classes))
        return self._fit(eps, dom, None, None, stats, C)

    def _fit(self, eps, dom, X, y, stats, C):
        k = self._validate(dom.p)
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(stats.n, dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.n_ = stats.n
        self.classes_ = np.arange(C)
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        R = self._radius(dom.p)
        self.radius_ = R
        zs, base_stats = self._projected_stats(X, y, stats, basis, mask, C)
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R)
        self.sensitivities_.update(sens)
        self.budget_split_.update(e)
        self._class_gaussians(zs, sens, e, eps, k, C)
        if self.output_space_ == "original":
            self.residual_var_ = PCAGauss._exact_residual(base_stats, basis) if math.isinf(eps) else \
                self._residual(base_stats, basis, e["residual"])
        else:
            self.residual_var_ = 0.0
        self._finish_common(basis, k)
        self._finish_cost(eps, e)
        return self

    def _projected_stats(self, X, y, stats, basis, mask, C):
        """Per-class statistics of the projected records, and the statistics the residual is taken from."""
        if X is not None:
            Xm, ym = (X, y) if mask is None else (X[mask], y[mask])
            zs = SufficientStats.from_matrix(self._project(basis, Xm), ym, C)
            base_stats = stats if mask is None else SufficientStats.from_matrix(Xm)
        else:
            if self.clip_radius is not None:
                raise ParameterError("clip_radius needs the records (fit), not merged statistics (fit_stats)")
            zs = self._reduced_stats(stats, basis)
            base_stats = stats
        return zs, base_stats

    def _class_gaussians(self, zs, sens, e, eps, k, C) -> None:
        """Noisy class counts, class sums and class second moments, then one Gaussian per class."""
        empty = SufficientStats(p=k)
        per = [zs.classes.get(c, empty) for c in range(C)]
        counts = np.array([s.n for s in per], dtype=np.float64)
        if math.isinf(eps):
            n_hat = np.maximum(counts, 1.0)
            self.means_ = np.array([s.s1 / h for s, h in zip(per, n_hat)])
            self.covariances_ = np.array([psd_repair(s.s2 / h - np.outer(m, m))
                                          for s, h, m in zip(per, n_hat, self.means_)])
        else:
            noisy_counts = self._laplace("counts", counts, sens["counts_l1"], e["counts"], coords=C)
            n_hat = np.maximum(noisy_counts, 1.0)
            # all class sums in one Laplace release, all class second moments in another
            S1 = np.concatenate([s.s1 for s in per])
            U = np.concatenate([upper(s.s2) for s in per])
            S1n = self._laplace("sums", S1, sens["sums_l1"], e["mean"], coords=k)
            Un = self._laplace("second_moments", U, sens["second_moments_upper_l1"], e["covariance"],
                               coords=k * (k + 1) // 2)
            self.released_ = {"counts": noisy_counts, "sums": S1n, "second_moment_upper": Un}
            m = k * (k + 1) // 2
            self.means_ = S1n.reshape(C, k) / n_hat[:, None]
            self.covariances_ = np.array([
                psd_repair(mirror(Un[c * m:(c + 1) * m], k) / n_hat[c] - np.outer(self.means_[c], self.means_[c]))
                for c in range(C)])
        self.class_counts_ = n_hat
        self.weights_ = n_hat / n_hat.sum()

    def sample(self, n: int):
        gen = self.source_.generator
        m = largest_remainder(self.weights_, int(n))
        Zs, ys = [], []
        for c, mc in enumerate(m):
            Zs.append(self._sample_reduced(self.means_[c], self.covariances_[c], int(mc), gen))
            ys.append(np.full(int(mc), c, dtype=np.int64))
        Z, y = np.vstack(Zs), np.concatenate(ys)
        perm = gen.permutation(Z.shape[0])
        return self._to_output(Z[perm], gen), y[perm]

    def certificate_extra(self) -> dict:
        d = super().certificate_extra()
        d["n_classes"] = int(len(self.classes_))
        d["class_counts"] = "noisy (released): " + ", ".join(f"{v:.1f}" for v in self.class_counts_)
        return d



"""blocki-jl: Blocki et al. 2012 JL transform of the data matrix and a Gaussian model (a PCA-Gauss baseline, ALGORITHMS.md 3.10)."""

from __future__ import annotations

from numbers import Real

import math
from typing import ClassVar

import numpy as np

from ...errors import ParameterError
from ...dp.rounding import largest_remainder
from ...linalg import psd_repair
from ..base import SyntheticMechanism
from ..constraints import COMMON, Interval, N_CLASSES, POSITIVE_INT
from ..pca_gauss.basis import CENTRE
from ..pca_gauss.common import gaussian_sample
from ...dp.costs import PrivacyCost, check_delta


# ---- Blocki et al. JL ---------------------------------------------------------------------

def blocki_w(r: int, epsilon: float, delta: float) -> float:
    """``w = 16 sqrt(r ln(2/delta)) / eps * ln(16 r / delta)`` (Blocki et al. 2012, Alg. 1; RECALLED).

    This constant is recalled from the cited paper (ALGORITHMS.md 3.10.5 [R]) and could not
    be verified against its full text here; later versions revised the constants. The
    release is therefore labelled "(epsilon,delta)-DP as claimed by Blocki et al., constant
    not re-verified" in the certificate.
    """
    return 16.0 * math.sqrt(r * math.log(2.0 / delta)) / epsilon * math.log(16.0 * r / delta)


class BlockiJL(SyntheticMechanism):
    """Blocki et al. 2012 JL transform + Gaussian model (the adaptation of PCA-Gauss, 3.10.5).

    Parameters
    ----------
    epsilon : float in (0, inf)
    delta : float in (0, 1), default 1e-5
    n_projections : int, default 1000
        r, the number of projected rows.
    n_classes : int or None
        Per-class model with ``fit(X, y)``; classes composed in parallel over the class
        partition, which needs R1 neighbours that keep the label (see Notes).
    domain, rng

    Notes
    -----
    Guarantee: (epsilon, delta)-DP as claimed by Blocki et al. for neighbouring matrices
    whose rows differ by a vector of L2 norm at most 1, WITH THE RECALLED CONSTANT of
    :func:`blocki_w` (not re-verified). Rows are scaled to ``A = (X - c) / sqrt(p1 + 2 p2)``
    so a replacement changes one row by L2 norm <= 1. ``A' = [A; w I]``, ``R = G A'`` with
    ``G`` i.i.d. N(0, 1) (computed as ``G1 A + w G2``), ``Sigma = (R^T R / r - w^2 I) * s^2 / N``
    (``s`` the scale), PSD repair, Gaussian samples. With labels the per-class models use
    disjoint records; a replacement that changes a record's class touches two classes, so
    the label variant is stated for neighbours with the same label (ALGORITHMS.md E8) and
    the noisy class counts use a separate ``Lap(2/eps_N)`` with 5% of epsilon.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_projections": POSITIVE_INT,
        "n_classes": N_CLASSES,
    }

    name: ClassVar[str] = "blocki-jl"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = "rows differing by L2 norm <= 1 after public scaling (one record replaced, n public)"
    uses_delta: ClassVar[bool] = True
    summary: ClassVar[str] = "Blocki et al. 2012 JL transform of the data matrix + Gaussian model (recalled constant)"

    def __init__(self, epsilon=1.0, *, delta=1e-5, n_projections=1000, n_classes=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_projections = n_projections
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if math.isinf(eps):
            raise ParameterError("blocki-jl needs a finite epsilon (its w depends on it)")
        delta = check_delta(self.delta)
        if delta == 0:
            raise ParameterError("blocki-jl needs delta > 0")
        r = self._check_int(self.n_projections, "n_projections", 1)
        s = dom.max_l2_diff
        gen = self.source_.generator
        groups = [(None, X)]
        e_model = eps
        self.budget_split_, self.noise_scales_ = {}, {}
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
            counts = np.bincount(y, minlength=C).astype(float)
            self.source_.set_value_bound(float(X.shape[0]))  # counts are within [0, n]
            counts = self._laplace("counts", counts, 2.0, 0.05 * eps, coords=C)
            self.class_counts_ = np.maximum(counts, 1.0)
            e_model = 0.95 * eps
            self.budget_split_["counts"] = 0.05 * eps
            groups = [(c, X[y == c]) for c in range(C)]
        w = blocki_w(r, e_model, delta)
        self.budget_split_["jl"] = e_model
        self.w_ = w
        self.means_, self.covariances_ = [], []
        for c, Xc in groups:
            A = (Xc - CENTRE) / s
            nA = max(A.shape[0], 1)
            Rm = gen.standard_normal((r, A.shape[0])) @ A + w * gen.standard_normal((r, dom.p))
            Sig = (Rm.T @ Rm / r - w ** 2 * np.eye(dom.p)) * s ** 2 / nA
            self.covariances_.append(psd_repair(Sig))
            self.means_.append(np.zeros(dom.p))
        self.labelled_ = y is not None
        if not self.labelled_:
            self.class_counts_ = np.array([1.0])
        self.sensitivities_ = {"row_l2_after_scaling": 1.0, "scale": s}
        self.noise_scales_["w"] = w
        self.domain_ = dom
        self.privacy_cost_ = PrivacyCost(eps, delta)
        return self

    def certificate_extra(self) -> dict:
        return {"w_constant": "recalled from Blocki et al. 2012 Alg. 1, not re-verified",
                "model": "zero-mean Gaussian around the public centre 0.5 (as in the 002 adaptation)"}

    def sample(self, n: int):
        gen = self.source_.generator
        m = largest_remainder(self.class_counts_ / self.class_counts_.sum(), int(n))
        Xs = [gaussian_sample(gen, self.means_[c], self.covariances_[c], int(mc)) + CENTRE
              for c, mc in enumerate(m)]
        ys = np.concatenate([np.full(int(mc), c) for c, mc in enumerate(m)])
        return np.vstack(Xs), (ys if self.labelled_ else None)



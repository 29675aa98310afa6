"""blr: Blum-Ligett-Roth exponential mechanism over a data-independent candidate pool (a PCA-Gauss baseline, ALGORITHMS.md 3.10)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...dp.selection import exponential_mechanism
from ..base import R1_LABEL, SyntheticMechanism
from ..constraints import COMMON, N_CLASSES, POSITIVE_INT
from ..pca_gauss.basis import CENTRE


# ---- BLR ------------------------------------------------------------------------------

def blr_utility_sensitivity(n: int) -> float:
    """``u(D, D^) = -max_q |q(D) - q(D^)|`` with fractional counts: one replaced record moves every
    ``q(D)`` by at most ``1/n``, hence ``u`` by at most ``1/n`` (R1)."""
    return 1.0 / n


class BLR(SyntheticMechanism):
    """Blum-Ligett-Roth exponential mechanism over a data-independent pool of candidate data sets.

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_candidates : int, default 200 (K)
    candidate_size : int, default 1000 (m records per candidate)
    n_queries : int, default 200 (random halfspace counting queries)
    n_classes : int or None (labelled candidates and class-conditional queries with ``fit(X, y)``)
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1 (label included when given). The pool (K candidates of m
    records uniform on [0, 1]^M, labels uniform) and the queries
    ``q(x) = [w . (x - c) >= t]`` (``w`` uniform on the sphere, ``t`` uniform on
    ``[-sqrt(M)/2, sqrt(M)/2]``; with labels ``[... and label = c_q]``) are drawn before
    the data are read, from the post-processing generator. Utility ``u = -max_q |q(D) -
    q(D^)|`` with fractional counts has sensitivity ``1/N`` (one record changes each
    fraction by at most 1/N). The candidate is selected by the exponential mechanism,
    probability proportional to ``exp(eps u / (2 Delta_u))``, sampled exactly
    (:func:`~privrelease.dp.selection.exponential_mechanism`).
    Output: the selected candidate, resampled with replacement to the requested size.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "n_candidates": POSITIVE_INT,
        "candidate_size": POSITIVE_INT,
        "n_queries": POSITIVE_INT,
        "n_classes": N_CLASSES,
    }

    name: ClassVar[str] = "blr"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = "Blum-Ligett-Roth exponential mechanism over a data-independent candidate pool"

    def __init__(self, epsilon=1.0, *, n_candidates=200, candidate_size=1000, n_queries=200, n_classes=None,
                 domain=None, rng=None):
        self.epsilon = epsilon
        self.n_candidates = n_candidates
        self.candidate_size = candidate_size
        self.n_queries = n_queries
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def _answers(self, X, y, Wq, t, cq):
        H = ((X - CENTRE) @ Wq.T >= t)
        if y is not None:
            H &= (np.asarray(y)[:, None] == cq[None, :])
        return H.mean(axis=0)

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        K = self._check_int(self.n_candidates, "n_candidates", 1)
        m = self._check_int(self.candidate_size, "candidate_size", 1)
        Q = self._check_int(self.n_queries, "n_queries", 1)
        gen = self.source_.generator
        p = dom.p
        C = None
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
        Wq = gen.standard_normal((Q, p))
        Wq /= np.linalg.norm(Wq, axis=1, keepdims=True)
        t = (gen.random(Q) - 0.5) * math.sqrt(p)
        cq = gen.integers(0, C, Q) if C else None
        pool = gen.random((K, m, p))
        pool_y = gen.integers(0, C, (K, m)) if C else None
        true = self._answers(X, y, Wq, t, cq)
        scores = np.array([-np.max(np.abs(self._answers(pool[k], None if C is None else pool_y[k], Wq, t, cq)
                                          - true)) for k in range(K)])
        du = blr_utility_sensitivity(X.shape[0])
        k_sel = exponential_mechanism(scores, eps, du, self.source_)
        self.selected_ = k_sel
        self.scores_ = scores
        self.chosen_ = pool[k_sel]
        self.chosen_y_ = None if C is None else pool_y[k_sel]
        self.sensitivities_ = {"utility": du}
        self.budget_split_ = {"selection": eps}
        self.noise_scales_ = {"selection_temperature_in_utility_units": 2 * du / eps if math.isfinite(eps) else 0.0}
        self.domain_ = dom
        self._set_cost(eps)
        return self

    def sample(self, n: int):
        idx = self.source_.generator.integers(0, self.chosen_.shape[0], int(n))
        return self.chosen_[idx], (None if self.chosen_y_ is None else self.chosen_y_[idx])

"""Audit entry point for the statistical privacy tests: the project's audit API when present.

Fallback (same interface): Clopper-Pearson bounds on the probability of an event
under two neighbouring datasets; ``epsilon_lower = ln(P0_low / P1_high)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

try:  # pragma: no cover - depends on the installed version
    from privrelease.evaluation.audit import audit_epsilon  # noqa: F401
except ImportError:  # pragma: no cover
    from scipy.stats import beta as _beta

    @dataclass
    class AuditResult:
        epsilon_lower: float
        p0: float
        p1: float
        trials: int
        claimed: float | None = None

    def _cp(k, n, alpha):
        lo = 0.0 if k == 0 else _beta.ppf(alpha / 2, k, n - k + 1)
        hi = 1.0 if k == n else _beta.ppf(1 - alpha / 2, k + 1, n - k)
        return lo, hi

    def audit_epsilon(run=None, d0=None, d1=None, event=None, trials=2000, alpha=0.05, seed=0, batch=None):
        rng = np.random.default_rng(seed)
        if batch is None:
            def batch(data, g, k):
                return np.array([run(data, g) for _ in range(k)])
        s0 = np.asarray(batch(d0, rng, trials))
        s1 = np.asarray(batch(d1, rng, trials))
        if event is None:
            raise ValueError("this fallback needs an explicit event")
        k0, k1 = int(np.sum(event(s0))), int(np.sum(event(s1)))
        lo0, _ = _cp(k0, trials, alpha)
        _, hi1 = _cp(k1, trials, alpha)
        eps = math.log(lo0 / hi1) if lo0 > 0 else -math.inf
        return AuditResult(eps, k0 / trials, k1 / trials, trials)

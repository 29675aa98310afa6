"""Shared helpers for the PCA-Gauss family privacy audits.

Uses :func:`privrelease.audit.audit_epsilon` when present; otherwise a minimal
Clopper-Pearson audit with a fixed event (same formula, user event only).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta as _beta

from privrelease.audit import HalvedNoiseSource

try:  # pragma: no cover - depends on which foundation modules are present
    from privrelease.audit import audit_epsilon as _audit
except ImportError:  # pragma: no cover
    _audit = None

#: The accounting the gauss-pca / gauss-copula audits run: the tight profile of continuous Gaussian noise
#: (seeded runs only). Releases calibrate with the zCDP conversion, which adds more noise for the same
#: claim (docs/derivations.md), so the audits check the tightest calibration the code can make and their
#: events (thresholds from ``calibrate_rho(eps, delta)``, the "gaussian" mode) stay as designed.
AUDITED_ACCOUNTING = "gaussian"

#: Noise factor of the runs: 1 for the real mechanism, 0.5 for the halved-noise mutant.
NOISE = {"factor": 1.0}


def source(rng):
    """The run's randomness: the Generator itself, or the mutant source scaling every noise draw."""
    return rng if NOISE["factor"] == 1 else HalvedNoiseSource(rng, factor=NOISE["factor"])


def halve_noise(monkeypatch):
    """Switch the runs to the mutant (every noise draw of the audited call halved) for this test."""
    monkeypatch.setitem(NOISE, "factor", 0.5)


class _Result:
    def __init__(self, lower):
        self.epsilon_lower = lower


def _cp(count, n, a, side):
    if side == "lower":
        return 0.0 if count <= 0 else float(_beta.ppf(a, count, n - count + 1))
    return 1.0 if count >= n else float(_beta.ppf(1 - a, count + 1, n - count))


def audit(run, d0, d1, event, trials=2000, seed=0, delta=0.0, alpha=0.05):
    """Lower confidence bound on epsilon for the event, both directions (two-sided CP at alpha/2)."""
    if _audit is not None:
        return _audit(run=run, d0=d0, d1=d1, event=event, trials=trials, seed=seed, delta=delta, alpha=alpha)
    ss = np.random.SeedSequence(seed)
    g0, g1 = (np.random.default_rng(s) for s in ss.spawn(2))
    s0 = np.array([np.atleast_1d(run(d0, g0)) for _ in range(trials)])
    s1 = np.array([np.atleast_1d(run(d1, g1)) for _ in range(trials)])
    c0, c1 = int(np.sum(event(s0))), int(np.sum(event(s1)))
    a = alpha / 4
    lo0, hi0, lo1, hi1 = _cp(c0, trials, a, "lower"), _cp(c0, trials, a, "upper"), _cp(c1, trials, a, "lower"), \
        _cp(c1, trials, a, "upper")
    b = []
    for lo, hi in ((lo0, hi1), (lo1, hi0)):
        b.append(math.log((lo - delta) / hi) if lo - delta > 0 and hi > 0 else 0.0)
    return _Result(max(0.0, *b))


def far_side_event(v0, v1):
    """Event 'every coordinate that differs lies on d0's far side': the Laplace privacy-loss maximum.

    For independent Laplace noise of scale b on coordinates shifted by ``v1 - v0``, this event has
    probability ``2^-k`` under d0 and ``2^-k exp(-||v1 - v0||_1 / b)`` under d1, so its log-ratio is
    exactly the privacy loss ``||v1 - v0||_1 / b`` (= epsilon when the sensitivity is attained).
    """
    v0, v1 = np.asarray(v0, float), np.asarray(v1, float)
    idx = np.flatnonzero(np.abs(v1 - v0) > 1e-12)
    up = v0[idx] > v1[idx]

    def event(stats):
        s = np.asarray(stats, float).reshape(len(stats), -1)[:, idx]
        ok = np.where(up, s >= v0[idx], s <= v0[idx])
        return ok.all(axis=1)

    return event

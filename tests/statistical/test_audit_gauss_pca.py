"""Statistical privacy tests of `gauss-pca` with the empirical audit.

Worst-case neighbours come from the sensitivity derivations in the mechanism's docstring:

* DP centre (``sum x``, L2 sensitivity ``sqrt(p1 + 2 p2)``): with one numeric column, one
  record moves from 0 to 1, so the sum moves by exactly the sensitivity. The statistic is
  the released centre (``c = noisy sum / n``), a monotone function of the Gaussian
  log-likelihood ratio; the whole budget goes to the centre (other shares ~ 0).
* DP basis (Analyze Gauss on ``upper(sum z z^T)``, sensitivity ``sqrt(2) R^2``): with two
  numeric columns, the other records sit at the centre and the target record is
  ``c + R e1`` in d0 and ``c + R e2`` in d1 (orthogonal, on the clip sphere: the T2 witness).
  The statistic ``A~_11 - A~_22`` of the noisy second moment (minus the other records' part,
  known from the released centre) shifts by ``2 R^2`` while its
  noise std is ``2 R^2 / sqrt(2 rho_basis)``: it carries the whole privacy loss of that
  release. The noisy statistics are read from the mechanism's own transcript through a
  recording noise source (the release is a post-processing of that transcript).

Each test asserts the audit's lower bound stays at or below the claimed epsilon for the real
mechanism and exceeds it for a mutant whose noise is halved: the mechanism runs on a
:class:`~privrelease.audit.HalvedNoiseSource` that halves that release's draw, so
nothing of the mechanism is patched.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privrelease.mechanisms.gauss_mixture.gauss_pca as gp
from privrelease.audit import HalvedNoiseSource, audit_epsilon
from privrelease.dp.calibration import calibrate_rho
from privrelease.noise.samplers import RandomSource, SeededSource
from pca_audit_helpers import AUDITED_ACCOUNTING

PARTS = ("centre", "radius", "basis", "counts", "sums", "moments", "residual")


def _split(main: str) -> dict:
    return {k: (1.0 if k == main else 1e-9) for k in PARTS}


class RecordingSource(RandomSource):
    """Seeded noise that keeps every noisy Gaussian release (the mechanism's transcript)."""

    secure = False
    description = "seeded, recording (audit only)"

    def __init__(self, rng):
        self._inner = SeededSource(rng)
        self.releases = []

    @property
    def generator(self):
        return self._inner.generator

    def laplace(self, scale, size):
        return self._inner.laplace(scale, size)

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        return self._inner.add_laplace(value, l1_sensitivity, epsilon, coords)

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        out = self._inner.add_gaussian(value, l2_sensitivity, noise_multiplier, coords)
        self.releases.append(out[0])
        return out

    def uniform(self, size):
        return self._inner.uniform(size)


# ---- centre ---------------------------------------------------------------------------

N_CENTRE = 100


def centre_pair():
    others = np.full((N_CENTRE - 1, 1), 0.5)
    return np.vstack([[1.0], others]), np.vstack([[0.0], others])  # d0 has the larger sum


def centre_batch(eps, factor=1.0):
    """k centre releases; ``factor`` < 1: the mutant (fit_centre with the schema radius makes one draw, the centre)."""
    def batch(X, rng, k):
        src = rng if factor == 1 else HalvedNoiseSource(rng, factor=factor)
        m = gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=eps, n_components=1, clip_radius="schema", budget_split=_split("centre"), rng=src)
        s1, sq = X.sum(axis=0), float((X**2).sum())
        return np.array([m.fit_centre(len(X), s1, sq).centre_[0] for _ in range(k)])

    return batch


def centre_event(eps):
    """stat >= (d1 mean) + 3 mutant stds: decided from the design, before any run."""
    mu = math.sqrt(2 * calibrate_rho(eps, 1e-5) * (1 - 6e-9))
    sigma_real = 1.0 / mu / N_CENTRE  # centre std: sensitivity 1 times the noise multiplier, over n
    mean_d1 = (0.5 * (N_CENTRE - 1)) / N_CENTRE
    thr = mean_d1 + 3 * sigma_real / 2
    return lambda stats: np.asarray(stats) >= thr


def audit_centre(eps, trials, seed, factor=1.0):
    d0, d1 = centre_pair()
    return audit_epsilon(batch=centre_batch(eps, factor), d0=d0, d1=d1, event=centre_event(eps), trials=trials,
                         seed=seed, delta=1e-5, claimed=eps)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_centre_audit_ci_slice():
    real = audit_centre(2.0, 30_000, seed=1)
    assert real.epsilon_lower <= 2.0, real.summary()
    mutant = audit_centre(2.0, 30_000, seed=2, factor=0.5)
    assert mutant.epsilon_lower > 2.0, mutant.summary()


@pytest.mark.slow
def test_centre_audit_epsilon_one():
    real = audit_centre(1.0, 100_000, seed=3)
    assert real.epsilon_lower <= 1.0, real.summary()
    mutant = audit_centre(1.0, 100_000, seed=4, factor=0.5)
    assert mutant.epsilon_lower > 1.0, mutant.summary()


# ---- basis (second moment, T2 constant) -------------------------------------------------

N_BASIS, R, Q = 1000, 0.3, 0.5  # the other records sit at (Q, Q)


def basis_pair():
    others = np.full((N_BASIS - 1, 2), Q)
    return np.vstack([[Q + R, Q], others]), np.vstack([[Q, Q + R], others])


BASIS_DRAW = 2  # draws: centre, class sums, basis, moments (no labels, public radius, P = p)


def basis_batch(eps, factor=1.0):
    def batch(X, rng, k):
        out = np.empty(k)
        for i in range(k):
            src = RecordingSource(rng)
            if factor != 1:  # the mutant: only the basis draw's noise scaled
                src = HalvedNoiseSource(src, draw=BASIS_DRAW, factor=factor)
            split = _split("basis")
            split["centre"] = 0.05
            m = gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=eps, n_components=2, clip_radius=R, budget_split=split, rng=src).fit(X)
            # releases: centre, sums (2 values), basis [A11, A12, A22], moments
            rec = src if factor == 1 else src.inner
            A = rec.releases[BASIS_DRAW].ravel()
            # post-processing: remove the other records' known contribution (they sit at Q, c is released)
            o = Q - m.centre_
            out[i] = A[0] - A[2] - (N_BASIS - 1) * (o[0] ** 2 - o[1] ** 2)
        return out

    return batch


def basis_event(eps):
    rho_b = calibrate_rho(eps, 1e-5) * (1 - 5e-9) / 1.05
    std = 2 * R**2 / math.sqrt(2 * rho_b)  # std of A11 - A22 for the real mechanism
    thr = -R**2 + 3 * std / 2  # d1 mean + 3 mutant stds
    return lambda stats: np.asarray(stats) >= thr


@pytest.mark.slow
def test_basis_audit():
    eps = 2.0
    d0, d1 = basis_pair()
    real = audit_epsilon(batch=basis_batch(eps), d0=d0, d1=d1, event=basis_event(eps), trials=20_000, seed=5,
                         delta=1e-5, claimed=eps)
    assert real.epsilon_lower <= eps, real.summary()
    mutant = audit_epsilon(batch=basis_batch(eps, 0.5), d0=d0, d1=d1, event=basis_event(eps), trials=20_000, seed=6,
                           delta=1e-5, claimed=eps)
    assert mutant.epsilon_lower > eps, mutant.summary()

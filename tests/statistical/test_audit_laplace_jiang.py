"""Statistical privacy tests of `laplace` and `jiang-pca` with the empirical audit.

Worst-case neighbours come from the sensitivity derivations in the mechanisms'
docstrings:

* laplace (identity query, L1 sensitivity p1 + 2 p2): one record moves from the
  all-zeros row to the all-ones row, so every numeric coordinate moves by 1 and the
  L1 distance equals the sensitivity p. The statistic ``sum_j clip(y_j, 0, 1)`` of the
  record's released row is a monotone function of the Laplace log-likelihood ratio.
* jiang-pca, step 1 (moments ``(sum x, upper(sum x x^T))``, sensitivity
  ``p + p (p + 1) / 2`` for numeric data): the same 0 -> 1 move changes every entry
  of ``sum x`` and of the upper triangle of ``sum x x^T`` by exactly 1, so the L1
  change equals the sensitivity. With ``n_components = p`` the noisy moments are
  recovered exactly from the fitted ``mean_``, ``components_``, ``explained_variance_``
  (post-processing), and the statistic is ``sum_j clip(T~_j - T_j(d0), 0, 1)``.
* jiang-pca, step 3 (projection, sensitivity ``sqrt(k) sqrt(p)``): conditional on a
  step-1 release (``U_k``, ``mu`` public), the released row of the target record is
  ``U_k (x - mu) + Lap``; for k = 1 the worst pair is ``x = 0``, ``x' = 1`` with ``u``
  near ``(1, ..., 1)/sqrt(p)`` (strongly correlated data), where
  ``|u . (x - x')| = ||u||_1`` reaches ``sqrt(p)``. The statistic is ``(xhat - mu) . u``.

Each test asserts the audit's lower bound stays at or below the claimed epsilon for
the real mechanism, and exceeds it for a mutant whose noise scale is halved: the mechanism
runs on a :class:`~privrelease.audit.HalvedNoiseSource` (each audited call makes
one noise draw, the audited statistic's), so nothing of the mechanism is patched.
"""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest

import privrelease.mechanisms.jiang.pca as jiang_module
from privrelease.engine import SufficientStats
from privrelease.audit import HalvedNoiseSource, audit_epsilon
from privrelease.linalg import upper
from privrelease.mechanisms import JiangPCA, LaplaceIdentity
from privrelease.noise import make_source
from privrelease.schema.encoding import EncodedDomain

EPS = 1.0
NOISE_FACTOR = 1.0  # 0.5 in the mutant tests (the half_noise fixture)


def source(rng):
    """The seeded source, or the mutant with its noise times NOISE_FACTOR."""
    return rng if NOISE_FACTOR == 1 else HalvedNoiseSource(rng, factor=NOISE_FACTOR)


@pytest.fixture
def half_noise(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "NOISE_FACTOR", 0.5)


# ---- laplace ---------------------------------------------------------------------------

def laplace_pair(p: int):
    other = np.linspace(0.2, 0.8, p)
    d0 = np.vstack([np.zeros(p), other])
    d1 = np.vstack([np.ones(p), other])
    return d0, d1


def laplace_batch(factor, secure=False, eps=EPS):
    """k independent runs: the rows of a tiled dataset get independent noise (parallel composition).

    ``factor`` < 1: the mutant (the identity release is the mechanism's only draw)."""

    def batch(data, rng, k):
        src = None if secure else rng
        if factor != 1:
            src = HalvedNoiseSource(src, factor=factor)
        mech = LaplaceIdentity(epsilon=eps, rng=src).fit(data)
        out = mech.transform(np.tile(data, (k, 1))).reshape(k, data.shape[0], data.shape[1])
        return np.clip(out[:, 0, :], 0.0, 1.0).sum(axis=1)  # target record's row

    return batch


def audit_laplace(factor, trials, seed, p=3, secure=False, alpha=0.05):
    d0, d1 = laplace_pair(p)
    return audit_epsilon(batch=laplace_batch(factor, secure), d0=d0, d1=d1, trials=trials, alpha=alpha, seed=seed,
                         claimed=EPS)


def test_laplace_audit_quick():
    real = audit_laplace(1.0, 20000, seed=1)
    assert real.epsilon_lower <= EPS, real.summary()
    assert real.epsilon_lower > 0.6, real.summary()  # the audit is tight enough to mean something
    mutant = audit_laplace(0.5, 20000, seed=1)
    assert mutant.epsilon_lower > EPS, mutant.summary()


def test_laplace_audit_secure_source():
    """The rng=None path (grid-snapped discrete Laplace from OS entropy) passes the same audit.

    The secure path is not seeded, so alpha is small (1e-3) to keep the test from flaking.
    """
    real = audit_laplace(1.0, 30000, seed=None, secure=True, alpha=1e-3)
    assert real.epsilon_lower <= EPS, real.summary()
    assert real.epsilon_lower > 0.5, real.summary()
    mutant = audit_laplace(0.5, 30000, seed=None, secure=True, alpha=1e-3)
    assert mutant.epsilon_lower > EPS, mutant.summary()


@pytest.mark.slow
@pytest.mark.ci_slice
def test_laplace_audit_ci_slice():
    real = audit_laplace(1.0, 10000, seed=2, p=2)
    mutant = audit_laplace(0.5, 10000, seed=2, p=2)
    assert real.epsilon_lower <= EPS < mutant.epsilon_lower, (real.summary(), mutant.summary())


@pytest.mark.slow
@pytest.mark.parametrize("p", [1, 5])
def test_laplace_audit_heavy(p):
    """Ten independent audits: the real mechanism is refuted at most once, the mutant every time."""
    real_refuted = sum(audit_laplace(1.0, 100000, seed=s, p=p, alpha=0.01).caught for s in range(10))
    mutant_caught = sum(audit_laplace(0.5, 100000, seed=s, p=p, alpha=0.01).caught for s in range(10))
    assert real_refuted <= 1
    assert mutant_caught == 10


# ---- jiang-pca step 1: the moments ------------------------------------------------------

def moment_pair(p: int, n: int = 30, seed: int = 0):
    rest = np.random.default_rng(seed).random((n - 1, p))
    d0 = np.vstack([np.zeros(p), rest])
    d1 = np.vstack([np.ones(p), rest])
    return d0, d1


def recovered_moments(mech: JiangPCA) -> np.ndarray:
    """Noisy ``(sum x, upper(sum x x^T))`` from a fit with n_components = p (post-processing)."""
    n, mu = mech.n_, mech.mean_
    V, w = mech.components_, mech.explained_variance_
    D = (V.T * w) @ V
    return np.concatenate([mu * n, upper(n * (D + np.outer(mu, mu)))])


def moment_run(base_T: np.ndarray, share: float, eps=EPS):
    def run(data, rng):
        stats = SufficientStats.from_matrix(data)
        mech = JiangPCA(epsilon=eps, n_components=data.shape[1], moment_share=share, rng=source(rng)).fit_stats(stats)
        return np.clip(recovered_moments(mech) - base_T, 0.0, 1.0).sum()

    return run


def audit_moments(trials, seed, p=1, share=0.9, alpha=0.05):
    d0, d1 = moment_pair(p)
    base_T = np.concatenate([d0.sum(axis=0), upper(d0.T @ d0)])
    diff = np.concatenate([d1.sum(axis=0), upper(d1.T @ d1)]) - base_T
    assert np.allclose(diff, 1.0)  # every moment entry moves by 1: L1 change = p + p (p + 1) / 2
    assert np.isclose(diff.sum(), jiang_module.moment_sensitivity(EncodedDomain.numeric_box(p)))
    return audit_epsilon(run=moment_run(base_T, share), d0=d0, d1=d1, trials=trials, alpha=alpha, seed=seed,
                         claimed=EPS)


def test_jiang_moments_audit_quick():
    """Step 1 spends share * epsilon = 0.9; its audit must stay below that (and below epsilon)."""
    real = audit_moments(2000, seed=3)
    assert real.epsilon_lower <= 0.9 * EPS, real.summary()


def test_jiang_moments_mutant_quick(half_noise):
    mutant = audit_moments(2000, seed=3)
    assert mutant.epsilon_lower > EPS, mutant.summary()


@pytest.mark.slow
def test_jiang_moments_audit_heavy_p3():
    real = audit_moments(30000, seed=4, p=3)
    assert real.epsilon_lower <= 0.9 * EPS, real.summary()


@pytest.mark.slow
def test_jiang_moments_mutant_heavy_p3(half_noise):
    mutant = audit_moments(30000, seed=4, p=3)
    assert mutant.epsilon_lower > EPS, mutant.summary()


# ---- jiang-pca step 3: the projection ---------------------------------------------------

def projection_setup(p: int = 2, n: int = 20000, seed: int = 7, share: float = 0.1):
    """A step-1 release on strongly correlated data (top component near (1,..,1)/sqrt(p))."""
    data = np.zeros((n, p))
    data[1::2] = 1.0
    base = JiangPCA(epsilon=EPS, n_components=1, moment_share=share, rng=seed).fit(data)
    u = base.components_[0]
    assert np.all(u > 0) and np.abs(u).sum() > 0.99 * np.sqrt(p)  # near the worst case
    return base, np.zeros(p), np.ones(p)


def projection_batch(base: JiangPCA):
    def batch(x, rng, k):
        mech = copy.copy(base)
        mech.source_ = make_source(source(rng))
        out = mech.transform(np.tile(x, (k, 1)))
        return (out - mech.mean_) @ mech.components_[0]

    return batch


def audit_projection(trials, seed, alpha=0.05, **kw):
    base, x0, x1 = projection_setup(**kw)
    return audit_epsilon(batch=projection_batch(base), d0=x0, d1=x1, trials=trials, alpha=alpha, seed=seed,
                         claimed=EPS)


def test_jiang_projection_audit_quick():
    """Step 3 spends (1 - share) * epsilon = 0.9 given the step-1 release."""
    real = audit_projection(20000, seed=5)
    assert real.epsilon_lower <= 0.9 * EPS, real.summary()
    assert real.epsilon_lower > 0.5, real.summary()


def test_jiang_projection_mutant_quick(half_noise):
    mutant = audit_projection(20000, seed=5)
    assert mutant.epsilon_lower > EPS, mutant.summary()


@pytest.mark.slow
@pytest.mark.ci_slice
def test_jiang_projection_ci_slice(monkeypatch):
    real = audit_projection(10000, seed=6)
    assert real.epsilon_lower <= 0.9 * EPS, real.summary()
    monkeypatch.setattr(sys.modules[__name__], "NOISE_FACTOR", 0.5)
    mutant = audit_projection(10000, seed=6)
    assert mutant.epsilon_lower > EPS, mutant.summary()


@pytest.mark.slow
def test_jiang_full_mechanism_heavy():
    """Whole mechanism per run (moments and projection both redrawn): bound <= epsilon."""
    base, x0, x1 = projection_setup(p=2, n=2000)
    rest = np.zeros((1999, 2))
    rest[::2] = 1.0
    d0, d1 = np.vstack([x0, rest]), np.vstack([x1, rest])

    def run(data, rng):
        mech = JiangPCA(epsilon=EPS, n_components=1, moment_share=0.1, rng=rng).fit(data)
        out = mech.transform(data[:1])
        u = mech.components_[0]
        return float((out[0] - mech.mean_) @ u)

    res = audit_epsilon(run=run, d0=d0, d1=d1, trials=10000, seed=8, claimed=EPS)
    assert res.epsilon_lower <= EPS, res.summary()

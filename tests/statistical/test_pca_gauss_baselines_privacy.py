"""Privacy audits of the PCA-Gauss baselines on worst-case neighbours, with halved-noise mutants.

The mutants scale the noise draws of the audited call through the source
(``pca_audit_helpers.halve_noise``); randomized response is run at twice its epsilon.

blocki-jl is audited in test_blocki_jl_privacy.py: its privacy loss sits in a variance ratio of
about 1 + 1/(4 w^2), so a halved-w mutant cannot be caught there; that file catches w / 2000.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pca_audit_helpers import audit, far_side_event, halve_noise, source
from privrelease.dp.selection import exponential_mechanism
from privrelease.mechanisms import baselines as B
from privrelease.noise import make_source

pytestmark = pytest.mark.slow

EPS = 1.0
TRIALS = 3000


def _check(run, d0, d1, event, monkeypatch, trials=TRIALS):
    real = audit(run, d0, d1, event, trials=trials, seed=1)
    assert real.epsilon_lower <= EPS, real.epsilon_lower
    halve_noise(monkeypatch)
    mut = audit(run, d0, d1, event, trials=trials, seed=2)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower


def test_compressive(monkeypatch):
    def run(X, rng):
        m = B.Compressive(EPS, n_components=1, output_space="reduced", rng=source(rng)).fit(X)
        return m.transform(X)[0, 0] * m.components_[0, 0]  # r = +-1 (public): shift by exactly 1

    X0, X1 = np.array([[0.0], [0.5]]), np.array([[1.0], [0.5]])
    _check(run, X0, X1, far_side_event([-0.5], [0.5]), monkeypatch)


def test_jiang_public(monkeypatch):
    V = np.ones((1, 2)) / math.sqrt(2)

    def run(X, rng):
        return B.JiangPublic(EPS, n_components=1, public_components=V, output_space="reduced",
                             rng=source(rng)).fit(X).transform(X)[0, 0]

    X0, X1 = np.array([[0.0, 0.0], [0.5, 0.5]]), np.array([[1.0, 1.0], [0.5, 0.5]])
    _check(run, X0, X1, far_side_event([-1 / math.sqrt(2)], [1 / math.sqrt(2)]), monkeypatch)


def test_modips_sums(monkeypatch):
    def run(X, rng):
        m = B.MODIPS(EPS, shares={"mean": 1e6, "covariance": 1.0}, rng=source(rng)).fit(X)
        return m.means_[0, 0] * X.shape[0]

    base = np.full((4, 1), 0.5)
    X0, X1 = base.copy(), base.copy()
    X0[0], X1[0] = 0.0, 1.0  # sum of u moves by 1 = p1
    real = audit(run, X0, X1, far_side_event([-0.5], [0.5]), trials=TRIALS, seed=1)
    assert real.epsilon_lower <= EPS
    halve_noise(monkeypatch)  # the sums' draw (and the negligible covariance's) halved
    mut = audit(run, X0, X1, far_side_event([-0.5], [0.5]), trials=TRIALS, seed=2)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower


def test_blr_exponential_selection(monkeypatch):
    n = 10
    du = B.blr_utility_sensitivity(n)
    # worst case for two candidates: one record raises candidate 0's utility by du and lowers candidate 1's
    s0, s1 = np.array([0.0, 0.0]), np.array([du, -du])

    def run(scores, rng):
        return float(exponential_mechanism(scores, EPS, B.blr_utility_sensitivity(n), make_source(source(rng))))

    event = lambda s: np.asarray(s).ravel() == 1.0  # noqa: E731
    real = audit(run, s0, s1, event, trials=6000, seed=1)
    assert real.epsilon_lower <= EPS
    halve_noise(monkeypatch)
    mut = audit(run, s0, s1, event, trials=6000, seed=2)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower


def test_randomized_response(monkeypatch):
    def run(y, rng):
        return float(B.randomized_response(y, 2, run.eps, make_source(rng))[0])

    run.eps = EPS
    event = lambda s: np.asarray(s).ravel() == 0.0  # noqa: E731
    real = audit(run, np.array([0]), np.array([1]), event, trials=4000, seed=1)
    assert real.epsilon_lower <= EPS
    run.eps = 2 * EPS  # the mutant keeps the label too often
    mut = audit(run, np.array([0]), np.array([1]), event, trials=4000, seed=2)
    assert mut.epsilon_lower > EPS

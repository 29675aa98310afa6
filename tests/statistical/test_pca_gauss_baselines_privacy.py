"""Privacy audits of the PCA-Gauss baselines on worst-case neighbours, with halved-noise mutants.

blocki-jl is audited in test_blocki_jl_privacy.py: its privacy loss sits in a variance ratio of
about 1 + 1/(4 w^2), so a halved-w mutant cannot be caught there; that file catches w / 2000.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pca_audit_helpers import audit, far_side_event
from privrelease.dp.selection import exponential_mechanism
from privrelease.mechanisms import pca_gauss_baselines as B
from privrelease.noise import make_source

pytestmark = pytest.mark.slow

EPS = 1.0
TRIALS = 3000


def _halve(monkeypatch, name):
    orig = getattr(B, name)
    monkeypatch.setattr(B, name, lambda *a, **k: orig(*a, **k) / 2)


def _check(run, d0, d1, event, monkeypatch, fn, trials=TRIALS):
    real = audit(run, d0, d1, event, trials=trials, seed=1)
    assert real.epsilon_lower <= EPS, real.epsilon_lower
    _halve(monkeypatch, fn)
    mut = audit(run, d0, d1, event, trials=trials, seed=2)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower


def test_compressive(monkeypatch):
    def run(X, rng):
        m = B.Compressive(EPS, n_components=1, output_space="reduced", rng=rng).fit(X)
        return m.transform(X)[0, 0] * m.components_[0, 0]  # r = +-1 (public): shift by exactly 1

    X0, X1 = np.array([[0.0], [0.5]]), np.array([[1.0], [0.5]])
    _check(run, X0, X1, far_side_event([-0.5], [0.5]), monkeypatch, "compressive_sensitivity")


def test_jiang_public(monkeypatch):
    V = np.ones((1, 2)) / math.sqrt(2)

    def run(X, rng):
        return B.JiangPublic(EPS, n_components=1, public_components=V, output_space="reduced",
                             rng=rng).fit(X).transform(X)[0, 0]

    X0, X1 = np.array([[0.0, 0.0], [0.5, 0.5]]), np.array([[1.0, 1.0], [0.5, 0.5]])
    _check(run, X0, X1, far_side_event([-1 / math.sqrt(2)], [1 / math.sqrt(2)]), monkeypatch,
           "projection_l1_sensitivity")


def test_modips_sums(monkeypatch):
    def run(X, rng):
        m = B.MODIPS(EPS, shares={"mean": 1e6, "covariance": 1.0}, rng=rng).fit(X)
        return m.means_[0, 0] * X.shape[0]

    base = np.full((4, 1), 0.5)
    X0, X1 = base.copy(), base.copy()
    X0[0], X1[0] = 0.0, 1.0  # sum of u moves by 1 = p1
    real = audit(run, X0, X1, far_side_event([-0.5], [0.5]), trials=TRIALS, seed=1)
    assert real.epsilon_lower <= EPS
    # mutant: the unlabelled path's sum sensitivity is the domain's max_l1_diff; halve it
    mut_dom = type("D", (), {"p": 1, "p1": 1, "p2": 0, "max_l1_diff": 0.5})()

    def run_mut(X, rng):
        m = B.MODIPS(EPS, shares={"mean": 1e6, "covariance": 1.0}, rng=rng)
        m._check_common(X)
        st = B.SufficientStats.from_matrix(X - B.CENTRE)
        m._fit(EPS, mut_dom, st, None)
        return m.means_[0, 0] * X.shape[0]

    mut = audit(run_mut, X0, X1, far_side_event([-0.5], [0.5]), trials=TRIALS, seed=2)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower


def test_blr_exponential_selection(monkeypatch):
    n = 10
    du = B.blr_utility_sensitivity(n)
    # worst case for two candidates: one record raises candidate 0's utility by du and lowers candidate 1's
    s0, s1 = np.array([0.0, 0.0]), np.array([du, -du])

    def run(scores, rng):
        return float(exponential_mechanism(scores, EPS, B.blr_utility_sensitivity(n), make_source(rng)))

    event = lambda s: np.asarray(s).ravel() == 1.0  # noqa: E731
    real = audit(run, s0, s1, event, trials=6000, seed=1)
    assert real.epsilon_lower <= EPS
    _halve(monkeypatch, "blr_utility_sensitivity")
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

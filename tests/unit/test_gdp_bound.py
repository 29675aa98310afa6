"""Unit tests of the GDP lower bound and the joint audit of a mechanism's draws (privrelease.audit.gdp_bound)."""

import math

import numpy as np
import pytest

from privrelease.audit import MuResult, audit_draws, audit_mu, capture_all, mu_lower_bound
from privrelease.dp.calibration import epsilon_for
from privrelease.errors import ParameterError
from privrelease.noise import make_source


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_bound_is_near_but_below_a_known_mu(mu):
    g = np.random.default_rng(mu.__hash__() % 1000)
    res = mu_lower_bound(g.normal(0, 1, 200_000), g.normal(mu, 1, 200_000), claimed=mu)
    assert isinstance(res, MuResult)
    assert 0.9 * mu < res.mu_lower <= mu, res.summary()
    assert res.caught is False and "consistent" in res.summary()


def test_either_side_and_refutation():
    g = np.random.default_rng(1)
    res = mu_lower_bound(g.normal(1.0, 1, 100_000), g.normal(0, 1, 100_000), claimed=0.5)
    assert res.side == "<=" and res.caught is True and res.mu_lower > 0.9


def test_identical_worlds_give_a_small_bound_and_few_trials_raise():
    g = np.random.default_rng(2)
    assert mu_lower_bound(g.normal(0, 1, 50_000), g.normal(0, 1, 50_000)).mu_lower < 0.05
    with pytest.raises(ParameterError, match="too few trials"):
        mu_lower_bound(np.zeros(10), np.ones(10))


def test_audit_mu_runs_a_batch():
    res = audit_mu(lambda d, rng, k: d + rng.normal(0, 1, k), 0.0, 0.8, trials=100_000, seed=3, claimed=0.8)
    assert 0.7 < res.mu_lower <= 0.8


class _Toy:
    """A Laplace count, then two Gaussian sums of sensitivity 1: multiplier 2 (0.5-GDP) and 1 (1-GDP)."""

    def __init__(self, rng):
        self.source_ = make_source(rng)

    def fit(self, x):
        x = np.asarray(x, float)
        c, sc = self.source_.add_laplace(np.array([float(len(x))]), 1.0, 0.25, coords=1)
        s, s_std = self.source_.add_gaussian(np.array([x.sum()]), 1.0, 2.0, coords=1)
        q, q_std = self.source_.add_gaussian(np.array([np.sum(x**2) * (s[0] > -1e9)]), 1.0, 1.0, coords=1)
        self.noise_scales_ = {"count": sc, "sum": s_std, "squares": q_std}
        return self


def _fit(x, source):
    return _Toy(source).fit(x)


def test_audit_draws_composes_the_gaussian_draws():
    d0, d1 = [0.0, 0.0], [0.0, 1.0]
    pairs = capture_all(_fit, d0, d1, only=["sum", "squares"])
    assert [c0.index for c0, _ in pairs] == [1, 2]
    res = audit_draws(_fit, d0, d1, trials=200_000, claimed_mu=math.sqrt(1.25), only=["sum", "squares"])
    assert res.shifts == pytest.approx([0.5, 1.0]) and res.sensitivity_ratios == pytest.approx([1.0, 1.0])
    assert res.mu_exact == pytest.approx(math.sqrt(1.25))
    assert 0.9 * res.mu_exact < res.mu.mu_lower <= res.mu_exact, res.summary()
    with pytest.raises(ParameterError, match="Gaussian draws"):
        audit_draws(_fit, d0, d1, trials=1000)  # the Laplace count is not composed here


def test_audit_draws_edited_reference_and_epsilon():
    seen = []

    def edit(draws, ref):
        seen.append((len(draws), sorted(ref.noise_scales_)))
        draws[1].output = np.array([5.0])

    claim = epsilon_for(0.5, 1e-3)  # the 1-GDP draw: rho 1/2
    res = audit_draws(_fit, [0.0], [1.0], trials=50_000, only=[2], edit_reference=edit, claimed_epsilon=claim,
                      delta=1e-3)
    assert seen == [(3, ["count", "squares", "sum"])]
    assert res.shifts == pytest.approx([1.0]) and 0.5 * claim < res.epsilon.epsilon_lower <= claim

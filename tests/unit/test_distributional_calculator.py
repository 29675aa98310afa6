"""Theorem IV.6 calculator and the exact pair-audit formula (ALGORITHMS.md section 4)."""

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from privrelease.errors import ParameterError
from privrelease.evaluation.distributional import (
    audit_pair,
    example_iii6_pair,
    log_likelihood_ratio,
    theorem_iv6_alpha,
)
from privrelease.mechanisms.compression.bounds import C_PAPER, normalized_covariance
from privrelease.mechanisms.compression.mechanism import Compression


def test_theorem_iv6_by_hand():
    n, p, m, dmax = 10**6, 10, 500, 0.001
    r = theorem_iv6_alpha(n, p, m, delta_max=dmax, lambda_min=0.5, lambda_min_ref=0.8, ref_norm=2.0)
    tau = C_PAPER * math.sqrt(math.log(2 * n * p) / m) + dmax
    dfro = p * dmax
    psi = tau + 2 * dfro * 4.0 / (p * 0.5 * 0.8)
    assert math.isclose(r["tau"], tau)
    assert math.isclose(r["alpha_bound"], m * p * dfro * psi / (2 * 0.5 * 0.8))
    assert r["conditions"]["lemma_IV4_holds"] is True
    assert any("worst case" in a for a in r["assumed"])


def test_theorem_alpha_grows_with_p_and_m():
    a = [theorem_iv6_alpha(10**6, p, 2000)["alpha_bound"] for p in (5, 10, 20)]
    assert a[0] < a[1] < a[2]
    b = [theorem_iv6_alpha(10**6, 10, m)["alpha_bound"] for m in (500, 1000, 2000)]
    assert b[0] < b[1] < b[2]
    with pytest.raises(ParameterError):
        theorem_iv6_alpha(100, 3, 10, lambda_min=0)


def test_formula_matches_gaussian_densities_on_mechanism_draws():
    X1, X2 = example_iii6_pair(50, 4, 0.5, seed=3)
    S1, S2 = normalized_covariance(X1), normalized_covariance(X2)
    m = 30
    for seed in range(5):
        Xt = Compression(m=m, rng=seed).fit(X1).compressed_
        direct = multivariate_normal(cov=S1).logpdf(Xt).sum() - multivariate_normal(cov=S2).logpdf(Xt).sum()
        assert math.isclose(log_likelihood_ratio(Xt.T @ Xt / m, S1, S2, m), direct, rel_tol=1e-9, abs_tol=1e-9)


def test_flipping_every_sign_of_a_row_is_invisible():
    X1, X2 = example_iii6_pair(40, 3, 0.9, seed=1)  # all 3 signs flipped: x x^T unchanged
    a = audit_pair(X1, X2, 20)
    assert a.loss_bound_on_acceptance_set == pytest.approx(0.0, abs=1e-9)


def test_pair_audit_terms():
    X1, X2 = example_iii6_pair(2000, 6, 0.34, seed=0)
    a = audit_pair(X1, X2, 300)
    assert a.reference.startswith("Sigma_1")
    # with the reference Sigma_1 the centre term is m KL(N(0,S1) || N(0,S2))
    assert a.centre_term == pytest.approx(a.kl_per_release, rel=1e-6)
    assert a.total_bound == pytest.approx(a.loss_bound_on_acceptance_set + a.renormalisation_term)
    assert a.renormalisation_how.startswith("Lemma IV.4")
    assert a.theorem_iv6["alpha_bound"] > 0
    singular = audit_pair(np.ones((10, 2)), np.ones((10, 2)), 3)
    assert math.isinf(singular.loss_bound_on_acceptance_set)

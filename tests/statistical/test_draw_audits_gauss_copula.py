"""GDP audits of every noised statistic of `gauss-copula` (the default release) at its default split,
and of the whole release at once (pairs and claims: ``copula_audit_cases.py``).

Each audit's lower bound on mu must stay at or below the claim (``sqrt(2 rho_part)``, or
``sqrt(2 rho)`` for the whole release); the mutants that must be caught are in ``mutants.py``
(``test_mutants.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from copula_audit_cases import BY_ID, CASES, CI_TRIALS, DELTA, EPS, FULL_TRIALS, REAL_ALPHA, A, copula_fit, table
from privrelease.audit import record_transcript
from privrelease.dp.calibration import calibrate_rho
from privrelease.noise import make_source


def test_every_copula_release_is_audited():
    """The per-part cases cover every noise scale the mechanism reports in these configurations
    (a new noised statistic fails here until it has an audit)."""
    cases = [c for c in CASES if c.parts is not None]
    reported = set().union(*(c.fit(c.d0, 0).noise_scales_ for c in cases))
    assert reported == {p for c in cases for p in c.parts}


def spent_rho(fit, data) -> float:
    """The zCDP rho of every Gaussian draw of a run, from what it handed to the noise source."""
    _, draws = record_transcript(fit, data, 0)
    src = make_source(np.random.default_rng(0))
    rho = 0.0
    for d in draws:
        assert d.kind == "gaussian", d
        sigma = src.gaussian_noise_std(d.sensitivity, d.param, d.coords)
        rho += d.sensitivity**2 / (2.0 * sigma**2)
    return rho


@pytest.mark.parametrize("labelled", [False, True])
@pytest.mark.parametrize("kw", [{}, {"n_components": 1}, {"by_label": False}])
def test_total_spend_is_the_claim(labelled, kw):
    """The draws' rho, read from the transcript, adds up to the reported split and to at most the
    rho calibrated from (epsilon, delta): the total of the default release, audited by accounting."""
    fit = copula_fit(**kw)
    data = table(A, 0 if labelled else None)
    spent = spent_rho(fit, data)
    m = fit(data, 0)
    claim = calibrate_rho(EPS, DELTA, "gaussian")
    assert spent <= claim * (1 + 1e-9), (spent, claim)
    assert math.isclose(spent, sum(v for k, v in m.budget_split_.items()
                                   if k.replace("rho_", "") + "_std" in m.noise_scales_), rel_tol=1e-9)


def check_real(case, trials, seed):
    res = case.run(trials, seed, alpha=REAL_ALPHA)
    claim = case.claim()
    assert res.mu.mu_lower <= claim, f"real mechanism refuted: {res.summary()} (claim {claim:.4f})"
    assert max(res.sensitivity_ratios) <= 1 + 1e-9, res.sensitivity_ratios
    return res


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_ci_slice(case):
    check_real(case, CI_TRIALS, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_full(case):
    check_real(case, FULL_TRIALS, seed=2)


def test_pairs_reach_the_sensitivity():
    """Every per-part pair moves its statistic by its whole declared sensitivity (tight audits; the
    class-centred moments by 0.99995 of it)."""
    for c in CASES:
        if c.parts is not None:
            r = c.run(1000, 0)
            assert min(r.sensitivity_ratios) > 0.9999, (c.id, r.sensitivity_ratios)
    assert BY_ID["total"].run(1000, 0).mu_exact > 0.9 * BY_ID["total"].claim()


def check_on_passes(monkeypatch, case_id: str, make_passes, halved=None, trials: int = CI_TRIALS // 4) -> None:
    """The case ``case_id`` with its passes from ``make_passes(data)``: the captured queries equal the in-memory ones,
    the real release is not refuted and a mutant with the noise of ``halved`` (keys of ``noise_scales_``; None: the
    case's parts) halved is caught."""
    from dataclasses import replace

    from mutants import scale_noise
    from privrelease.audit import capture_all

    local = BY_ID[case_id]
    case = replace(local, fit=local.fit.on(make_passes))
    there = capture_all(case.fit, case.d0, case.d1, edit_reference=case.edit, only=case.parts)
    here = capture_all(local.fit, local.d0, local.d1, edit_reference=local.edit, only=local.parts)
    for (a0, a1), (b0, b1) in zip(there, here, strict=True):
        np.testing.assert_allclose(a0.value, b0.value, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(a1.value, b1.value, rtol=1e-12, atol=1e-9)
    claim = case.claim()
    real = case.run(trials, seed=11, alpha=REAL_ALPHA)
    assert real.mu.mu_lower <= claim, real.summary()
    for key in halved or case.parts:
        scale_noise(key)(monkeypatch)
    mutant = case.run(trials, seed=12)
    assert mutant.mu.mu_lower > claim, mutant.summary()


def streamed(data):
    """Chunks of 4 records."""
    from privrelease.engine.passes import ChunkPasses

    X, y = data
    return ChunkPasses(lambda: ((X[i:i + 4], None if y is None else y[i:i + 4]) for i in range(0, len(X), 4)))


@pytest.mark.slow
@pytest.mark.ci_slice
def test_weighted_histograms_audit_on_streamed_chunks(monkeypatch):
    """The histograms of unequal weights with the records counted chunk by chunk."""
    check_on_passes(monkeypatch, "marginals (unequal levels)", streamed)

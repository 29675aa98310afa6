"""Every mutant of ``mutants.py`` is caught by its audit (the statistic's bound exceeds its claim).

``-m slow`` runs the whole list; ``-m ci_slice`` the entries marked ``ci``.
"""

from __future__ import annotations

import pytest

from copula_audit_cases import CI_TRIALS, CopulaCase
from mutants import MUTANTS, Mutant, audits
from test_audit_gauss_copula_model import ModelCase

AUDITS = audits()


def caught(mutant: Mutant, monkeypatch, trials: int, seed: int) -> tuple[float, float, str]:
    """``(bound, claim, summary)`` of the mutant's audit (the claim taken from the unchanged code)."""
    case = AUDITS[mutant.audit]
    if isinstance(case, CopulaCase):
        claim = case.claim()
        mutant.apply(monkeypatch)
        res = case.run(trials, seed)
        return res.mu.mu_lower, claim, res.summary()
    if isinstance(case, ModelCase):
        mutant.apply(monkeypatch)
        res = case.run(trials, seed)
        return res.epsilon_lower, case.claimed, res.summary()
    assert mutant.apply is None, "a per-draw case's mutant is its own halved-noise source"
    res = case.run(min(trials, 200_000), seed)
    return res.mutant.epsilon_lower, case.claimed, res.summary()


def test_every_audit_has_a_mutant_and_every_mutant_an_audit():
    named = {m.audit for m in MUTANTS}
    assert named <= set(AUDITS), sorted(named - set(AUDITS))
    assert set(AUDITS) - named <= {c for c, a in AUDITS.items() if getattr(a, "xfail", None)}, \
        sorted(set(AUDITS) - named)


def _check(mutant, monkeypatch, trials, seed):
    bound, claim, summary = caught(mutant, monkeypatch, trials, seed)
    assert bound > claim, f"mutant not caught: {mutant.id}: {summary} (claim {claim:.4g})"


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.id) for m in MUTANTS if m.ci])
def test_mutant_caught_ci_slice(mutant, monkeypatch):
    _check(mutant, monkeypatch, CI_TRIALS, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.id) for m in MUTANTS])
def test_mutant_caught(mutant, monkeypatch):
    _check(mutant, monkeypatch, CI_TRIALS, seed=4)

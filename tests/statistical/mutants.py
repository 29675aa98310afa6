"""The mutant list: each entry is a change of the code that spends more privacy than the claim, and
the audit that must catch it. ``test_mutants.py`` runs them all (``-m slow``; the entries with
``ci=True`` also in the CI slice), so that "every noised statistic is audited" is checked.

An entry names

* ``name``: what the mutant does;
* ``audit``: the id of the audit that must catch it, a key of :data:`AUDITS` (the cases of
  ``copula_audit_cases.py``, GDP bounds against the claimed mu, the per-draw cases of
  ``draw_audit_cases.py`` and the graphical model's ``MODEL_CASES`` of ``test_audit_gauss_copula_model.py``,
  epsilon bounds against the claimed epsilon);
* ``apply(monkeypatch)``: the change, made with pytest's monkeypatch (so it is undone after the
  test); None for a per-draw case, whose own halved-noise source is the mutant
  (:class:`~privrelease.audit.HalvedNoiseSource`).

To add a statistic: add its audit (a :class:`~copula_audit_cases.CopulaCase` whose pair moves the
statistic by its sensitivity, or a ``DrawCase``) and at least its halved-noise mutant, usually
``Mutant("... noise x0.5", "<case id>", scale_noise("<key>_std"))`` where the key is the name the
mechanism gives the release in ``noise_scales_`` (``SyntheticMechanism._gaussian``'s first argument).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
import privrelease.mechanisms.gauss_mixture.copula_plan as plan_mod
import privrelease.mechanisms.gauss_mixture.gauss_copula as gc
from privrelease.mechanisms.base import SyntheticMechanism


@dataclass(frozen=True)
class Mutant:
    name: str
    audit: str
    apply: Callable | None = None
    ci: bool = False

    @property
    def id(self) -> str:
        return f"{self.name} [{self.audit}]"


# ---- how mutants are made ------------------------------------------------------------------------
def scale_noise(key: str, factor: float = 0.5) -> Callable:
    """The Gaussian release named ``key`` (its ``noise_scales_`` key, in any mechanism) gets ``factor``
    times its noise: the sensitivity handed to the noise source is scaled, nothing else changes."""
    def apply(mp):
        real = SyntheticMechanism._gaussian

        def _gaussian(self, k, value, l2_sensitivity, noise_multiplier, coords):
            s = l2_sensitivity * factor if k == key else l2_sensitivity
            return real(self, k, value, s, noise_multiplier, coords)

        mp.setattr(SyntheticMechanism, "_gaussian", _gaussian)

    return apply


def histogram_sensitivity_as(fn: Callable[[int], float]) -> Callable:
    """gauss-copula's stacked histograms calibrated with ``fn(d)`` instead of ``sqrt(2 d)``."""
    def apply(mp):
        mp.setattr(measure_mod, "histogram_sensitivity", fn)

    return apply


def histograms_with_whole_budget(mp) -> None:
    """gauss-copula's histograms noised with the whole rho (the mixture keeps its share): 1.45x the spend."""
    real = gc.GaussCopula._release_marginals

    def _release_marginals(self, counts, n):
        saved = self.rho_split_["marginals"]
        self.rho_split_["marginals"] = self.rho_
        try:
            real(self, counts, n)
        finally:
            self.rho_split_["marginals"] = saved

    mp.setattr(gc.GaussCopula, "_release_marginals", _release_marginals)


def mixture_with_whole_budget(mp) -> None:
    """gauss-copula's mixture given the whole epsilon (the histograms keep their share)."""
    real = plan_mod.split_budget

    def split_budget(epsilon, delta, mode, share):
        rho, rho_hist, _, _ = real(epsilon, delta, mode, share)
        return rho, rho_hist, rho, epsilon

    mp.setattr(plan_mod, "split_budget", split_budget)


def unnormalised_weights(mp) -> None:
    """gauss-copula's histogram weights ``K_j ** (1 / 3)`` without their scaling (squares summing to more than the
    number of histograms, the sensitivity still ``sqrt(2 d)``), the measurement's check of them removed."""
    mp.setattr(gc, "histogram_weights", lambda cells, weighted: tuple(float(k) ** (1.0 / 3.0) for k in cells))
    mp.setattr(measure_mod, "check_weights", lambda w, count: None)


def score_sensitivity_halved(mp) -> None:
    """gauss-copula's model selection (exponential mechanism) calibrated with half its score sensitivity."""
    mp.setattr(measure_mod, "SCORE_SENSITIVITY", measure_mod.SCORE_SENSITIVITY / 2)


# ---- the list ------------------------------------------------------------------------------------
_ROOT2 = math.sqrt(2.0)
MUTANTS = [
    Mutant("histogram noise ignores the number of columns d", "marginals (3 columns)",
           histogram_sensitivity_as(lambda d: _ROOT2), ci=True),
    Mutant("histograms noised with the whole budget", "marginals (3 columns)", histograms_with_whole_budget, ci=True),
    Mutant("histograms noised with the whole budget", "total", histograms_with_whole_budget),
    # On the whole-release pair the mixture's statistics move by part of their sensitivity only, so the
    # total audit separates this mutant by a hair (mu 0.54 against 0.53); the per-statistic audit of
    # the sums, whose claim is the unchanged split's, sees it plainly.
    Mutant("mixture calibrated with the whole budget", "total", mixture_with_whole_budget),
    Mutant("mixture calibrated with the whole budget", "mixture sums", mixture_with_whole_budget, ci=True),
    Mutant("label histogram left out of d", "marginals (+ label histogram)",
           histogram_sensitivity_as(lambda d: math.sqrt(2.0 * max(d - 1, 1))), ci=True),
    Mutant("per-class histograms noise x0.5", "marginals (per class)", scale_noise("marginals_std")),
    Mutant("label histogram noise x0.5", "marginals (+ label histogram)", scale_noise("marginals_std")),
    Mutant("histogram noise x0.5", "marginals (3 columns)", scale_noise("marginals_std")),
    Mutant("histogram noise x0.5 (unequal weights)", "marginals (unequal levels)", scale_noise("marginals_std"),
           ci=True),
    Mutant("histogram weights not normalised (the measurement's check off)", "marginals (unequal levels)",
           unnormalised_weights, ci=True),
] + [
    Mutant(f"{part} noise x0.5", f"mixture {part.replace('_', '-')}", scale_noise(f"{part}_std"),
           ci=part in ("sums", "radius"))
    for part in ("centre", "radius", "sums", "basis", "moments", "residual", "counts", "within_radius")
] + [
    Mutant("moments (class centring) noise x0.5", "mixture moments (class centring)", scale_noise("moments_std")),
    # the model's mutants run in CI in its audit file's local tests
    Mutant("model measurement noise x0.5", "model measurement", scale_noise("model_std")),
    Mutant("model selection score sensitivity x0.5", "model selection", score_sensitivity_halved),
]


def _draw_case_mutants() -> list:
    """The per-draw audits' own halved-noise (or quarter-noise) mutants, one per case."""
    from draw_audit_cases import all_cases

    return [Mutant(f"noise x{c.mutant_factor:g}", c.id) for c in all_cases() if not c.xfail]


MUTANTS += _draw_case_mutants()


def audits() -> dict:
    """Every audit a mutant may name: id -> case (copula cases, per-draw cases and the graphical model's)."""
    from copula_audit_cases import BY_ID
    from draw_audit_cases import all_cases
    from test_audit_gauss_copula_model import MODEL_CASES

    out = {c.id: c for c in all_cases()}
    out.update(BY_ID)
    out.update(MODEL_CASES)
    return out

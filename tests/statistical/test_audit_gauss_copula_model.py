"""Statistical privacy tests of gauss-copula's graphical-model rounds with the empirical audit: the measurement
of a chosen marginal (Gaussian mechanism) and the choice itself (exponential mechanism).

Both run through the mechanism's own path: :meth:`GaussCopula.fit_marginals` plans the model (``dependence=
"graphical"``) and splits the budget (:func:`model_plan.model_budget`), :func:`copula_measure.count_pairs`
counts every candidate on the pass executor (one chunk, streamed chunks, or Dask partitions in
``test_audit_gauss_copula_model_dask``), and :func:`copula_measure.model_rounds` takes the noisy steps. The
model's estimate of every candidate (post-processing of earlier outputs, fixed given them) is pinned by the
test to a worst case; the size bound offers every candidate.

The witnesses are those of the pair tree's audits (``test_audit_gauss_copula_pairs``, derived there): two
binary columns whose one candidate's ``noisy[00] - noisy[11]`` moves its mean by 2 (the whole L2
sensitivity sqrt 2), and three binary columns whose pinned estimate moves every log-odds of choosing ab by
``eps_t``. The rounds are lowered to one (``MODEL_ROUNDS_PER_ATTRIBUTE``) and the model gets 0.99 of the
budget, ``SELECT_FRACTION`` 0.01 for the measurement (it carries 0.98 of the loss) and 0.99 for the
selection. The real stage passes at the claimed epsilon; a mutant with halved noise (halved sensitivity) is
caught.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import test_audit_gauss_copula_pairs as pairs_audit
from test_audit_gauss_copula_pairs import (
    CAT,
    CAT2,
    DELTA,
    SELECTION_ACCOUNTING,
    N,
    WordsRecordingSource,
    in_memory,
    pinned_estimate,
    selection_pair,
    streamed,
    tree_measurement_pair,
)

import privrelease.mechanisms.gauss_mixture.copula_defaults as D
import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
from privrelease.audit import audit_epsilon
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula


def fitted(eps, src, dom, passes, accounting="auto"):
    m = GaussCopula(eps, DELTA, dependence="graphical", rng=src, accounting=accounting, domain=dom)
    m.fit_marginals(passes)
    assert m.model_plan_ is not None and m.model_plan_.rounds == 1
    return m


def _choice(m, exact, est):
    chosen = measure_mod.model_rounds(m, exact, m.model_plan_, m.rho_split_["model_measure"],
                                      m.rho_split_["model_select"], lambda: est,
                                      lambda: np.ones(len(exact), dtype=bool), lambda r: True, lambda r, meas: None)
    return chosen[0]


def _plan(m):
    return m.model_plan_


def measure_batch(eps, make_passes):
    return pairs_audit.measure_batch(eps, make_passes, fitted, _choice, _plan)


def select_batch(eps, make_passes, est):
    return pairs_audit.select_batch(eps, make_passes, est, fitted, _choice, _plan)


def audit_measurement(eps, trials, seed, make_passes):
    d0, d1 = tree_measurement_pair()
    rho = fitted(eps, WordsRecordingSource(np.random.default_rng(0)), CAT2, make_passes(d0)).rho_split_["model_measure"]
    thr = -1.0 + 3.0 * (2.0 / math.sqrt(2.0 * rho)) / 2.0  # d1's mean + 3 mutant stds: fixed by the design
    return audit_epsilon(batch=measure_batch(eps, make_passes), d0=d0, d1=d1, event=lambda s: np.asarray(s) >= thr,
                         trials=trials, seed=seed, delta=DELTA, claimed=eps)


def audit_selection(eps, trials, seed, make_passes):
    d0, d1 = selection_pair()
    m = fitted(eps, WordsRecordingSource(np.random.default_rng(0)), CAT, make_passes(d0), SELECTION_ACCOUNTING)
    est = pinned_estimate(measure_mod.count_pairs(make_passes(d0), m.model_plan_, N))
    return audit_epsilon(batch=select_batch(eps, make_passes, est), d0=d0, d1=d1,
                         event=lambda s: np.asarray(s) != 0, trials=trials, seed=seed, delta=DELTA, claimed=eps)


@dataclass(frozen=True)
class ModelCase:
    """A model-round audit as the mutant list runs it: ``run(trials, seed)`` gives the epsilon bound."""

    id: str
    audit: Callable
    select_fraction: float
    rounds_per_attribute: float
    trials: int
    claimed: float = 2.0

    def patch(self, mp) -> None:
        mp.setattr(D, "SELECT_FRACTION", self.select_fraction)
        mp.setattr(D, "MODEL_SHARE", 0.99)
        mp.setattr(D, "MODEL_ROUNDS_PER_ATTRIBUTE", self.rounds_per_attribute)

    def run(self, trials: int, seed: int, make_passes=in_memory):
        with pytest.MonkeyPatch.context() as mp:
            self.patch(mp)
            return self.audit(self.claimed, min(trials, self.trials), seed, make_passes)


MEASUREMENT = ModelCase("model measurement", audit_measurement, 0.01, 0.5, 40_000)
SELECTION = ModelCase("model selection", audit_selection, 0.99, 0.34, 20_000)
MODEL_CASES = {c.id: c for c in (MEASUREMENT, SELECTION)}


def _check_real_and_mutant(monkeypatch, case, mutant_attr, mutant_value, eps, trials, seeds, make_passes):
    case.patch(monkeypatch)
    real = case.audit(eps, trials, seeds[0], make_passes)
    print("real", real.summary())
    assert real.epsilon_lower <= eps, real.summary()
    monkeypatch.setattr(measure_mod, mutant_attr, mutant_value)
    mutant = case.audit(eps, trials, seeds[1], make_passes)
    print("mutant", mutant.summary())
    assert mutant.epsilon_lower > eps, mutant.summary()


def check_measurement(monkeypatch, eps, trials, seeds, make_passes=in_memory):
    _check_real_and_mutant(monkeypatch, MEASUREMENT, "MEASURE_SENSITIVITY", math.sqrt(2.0) / 2, eps, trials, seeds,
                           make_passes)


def check_selection(monkeypatch, eps, trials, seeds, make_passes=in_memory):
    _check_real_and_mutant(monkeypatch, SELECTION, "SCORE_SENSITIVITY", 1.0, eps, trials, seeds, make_passes)


# The CI slice runs the local path here and the Dask path in ``test_audit_gauss_copula_model_dask``; the
# streamed path (the same counting map over chunks, merged by addition) in the slow run.
@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_model_measurement_audit(monkeypatch, make_passes):
    check_measurement(monkeypatch, 2.0, 40_000, (31, 32), make_passes)


@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_model_selection_audit(monkeypatch, make_passes):
    check_selection(monkeypatch, 2.0, 20_000, (33, 34), make_passes)

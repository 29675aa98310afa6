"""Statistical privacy tests of gauss-copula's graphical-model rounds with the empirical audit: the measurement
of a chosen marginal (Gaussian mechanism) and the choice itself (exponential mechanism).

Both run through the mechanism's own path: :meth:`GaussCopula.fit_marginals` plans the model (``dependence=
"graphical"``) and splits the budget (:func:`model_plan.model_budget`), :func:`copula_measure.count_pairs`
counts every candidate on the pass executor (one chunk, streamed chunks, or Dask partitions in
``test_audit_gauss_copula_model_dask``), and :func:`copula_measure.model_rounds` takes the noisy steps. The
model's estimate of every candidate (post-processing of earlier outputs, fixed given them) is pinned by the
test to a worst case; the size bound offers every candidate. The rounds are lowered to one
(``MODEL_ROUNDS_PER_ATTRIBUTE``, and ``ROUND_NOISE_TVD`` to 0 so that none are added) and the model gets 0.99 of the budget.

Measurement witness (derivation: the Notes of :func:`copula_measure.model_rounds`): two binary columns
(one candidate, 4 cells); the target record moves from (0, 0) to (1, 1), the others sit at (0, 1).
The statistic ``noisy[00] - noisy[11]`` of the measurement (the last Gaussian release of the
transcript) moves its mean by 2, the whole L2 sensitivity ``sqrt 2`` of two coordinates; its std is
``2 / sqrt(2 rho_measure)``. ``SELECT_FRACTION`` is lowered to 0.01, so this one measurement carries
0.98 of the release's privacy loss.

Selection witness: three binary categorical columns a, b, c (candidates ab, ac, bc, 4 cells each;
the first round offers every candidate). The target record moves from (0, 0, 0) to (0, 1, 1); the others
sit at (0, 1, 0). The pinned estimate puts ab's exact counts below/above the estimate so that its L1
distance grows by 2, and those of ac and bc so that theirs shrink by 2. The error the fit is expected to keep
of a measurement (``kept_error``) falls by almost its largest slope Phi(FIT_SHIFT_STDS) for ab (the record leaves
a cell of 1 for one of N) and rises by as much for ac (it leaves a cell of N for an empty one): ab's score gains
about 2.7 and ac's loses about 2.7, so the log-odds of choosing ab over ac moves by almost ``eps_t`` (the most the
score's sensitivity 2 + Phi(FIT_SHIFT_STDS) allows). Event: ab is not chosen. With ``SELECT_FRACTION`` raised to 0.99 the selection
carries most of the loss.

The real stage passes at the claimed epsilon; a mutant with halved noise (halved sensitivity) is caught.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from test_audit_gauss_copula_tree import in_memory, streamed
from test_audit_gauss_pca import RecordingSource

import privrelease.mechanisms.gauss_mixture.copula_defaults as D
import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
from privrelease.audit import audit_epsilon
from privrelease.audit.gdp_bound import audit_mu
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.schema.encoding import EncodedDomain


class WordsRecordingSource(RecordingSource):
    """The recording source with its seeded source's random words (the selection's exact sampler draws them)."""

    def words(self, n):
        return self._inner.words(n)


N, DELTA = 1000, 1e-5
#: The selection witness runs with the tight accounting (seeded runs may choose it): each selection composed
#: as randomized response with eps_t, so eps_t is close to the claim and the halved sensitivity exceeds it;
#: under zCDP eps_t = sqrt(8 rho_select) is well below the claim and no single selection could show it.
SELECTION_ACCOUNTING = "gaussian"
CAT = EncodedDomain(p=6, numeric=(), blocks=((0, 2), (2, 4), (4, 6)))
CAT2 = EncodedDomain(p=4, numeric=(), blocks=((0, 2), (2, 4)))


def measurement_pair():
    others = np.tile([1.0, 0.0, 0.0, 1.0], (N - 1, 1))  # (0, 1)
    return (np.vstack([[1.0, 0.0, 1.0, 0.0], others]), None), (np.vstack([[0.0, 1.0, 0.0, 1.0], others]), None)


def onehot(codes):
    codes = np.asarray(codes)
    X = np.zeros((codes.shape[0], 6))
    for j in range(3):
        X[np.arange(len(codes)), 2 * j + codes[:, j]] = 1.0
    return X


def selection_pair():
    others = np.tile([0, 1, 0], (N - 1, 1))
    return (onehot(np.vstack([[0, 0, 0], others])), None), (onehot(np.vstack([[0, 1, 1], others])), None)


def pinned_estimate(exact0):
    """Per candidate (ab, ac, bc: cells 00, 01, 10, 11): ab's distance grows from d0 to d1, the others' shrink."""
    ab, ac, bc = (np.asarray(e, dtype=float).copy() for e in exact0)
    ab[0] += 5.0   # the target leaves 00 (exact below the estimate): +1
    ab[1] -= 5.0   # and enters 01 (exact above the estimate): +1
    ac[0] -= 5.0   # leaves 00 (exact above): -1
    ac[1] += 5.0   # enters 01 (exact below): -1
    bc[0] -= 5.0   # leaves 00
    bc[3] += 5.0   # enters 11
    return [ab, ac, bc]


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


def measure_batch(eps, make_passes):
    """The measurement's statistic: two binary columns, cells 00 and 11."""

    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            src = WordsRecordingSource(rng)
            m = fitted(eps, src, CAT2, passes)
            exact = measure_mod.count_pairs(passes, m.model_plan_, m.n_)
            assert len(exact) == 1, "one candidate"
            _choice(m, exact, [np.zeros(exact[0].size)])
            noisy = src.releases[-1]
            out[i] = noisy[0] - noisy[3]
        return out

    return run


def select_batch(eps, make_passes, est):
    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            m = fitted(eps, WordsRecordingSource(rng), CAT, passes, accounting=SELECTION_ACCOUNTING)
            exact = measure_mod.count_pairs(passes, m.model_plan_, m.n_)
            assert m.model_plan_.pairs == ((0, 1), (0, 2), (1, 2))
            out[i] = _choice(m, exact, est)
        return out

    return run


def measurement_rho(eps, make_passes) -> float:
    """The measured round's rho as the mechanism derives it (public: its budget, not its noise)."""
    d0 = measurement_pair()[0]
    return fitted(eps, WordsRecordingSource(np.random.default_rng(0)), CAT2, make_passes(d0)).rho_split_["model_measure"]


def audit_measurement(eps, trials, seed, make_passes):
    d0, d1 = measurement_pair()
    rho = measurement_rho(eps, make_passes)
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
        mp.setattr(D, "ROUND_NOISE_TVD", 0.0)  # no rounds beyond those: one round

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
    """The real round's epsilon bound at most the claim; the halved-noise mutant's GDP bound on the same statistic
    above the round's own claim ``mu = sqrt(2 rho_measure)`` (one round; ``noisy[00] - noisy[11]`` carries the whole
    sensitivity: a shift of 2 against noise of std ``sqrt(2 / rho)``). The epsilon bound caught this mutant with
    little margin even at 40,000 trials (2.23 against 2); the mu bound uses the whole trade-off curve."""
    MEASUREMENT.patch(monkeypatch)
    real = audit_measurement(eps, trials, seeds[0], make_passes)
    assert real.epsilon_lower <= eps, real.summary()
    claim = math.sqrt(2.0 * measurement_rho(eps, make_passes))
    monkeypatch.setattr(measure_mod, "MEASURE_SENSITIVITY", math.sqrt(2.0) / 2)
    d0, d1 = measurement_pair()
    mutant = audit_mu(batch=measure_batch(eps, make_passes), d0=d0, d1=d1, trials=trials, seed=seeds[1],
                      claimed=claim)
    assert mutant.caught, mutant.summary()


def check_selection(monkeypatch, eps, trials, seeds, make_passes=in_memory):
    _check_real_and_mutant(monkeypatch, SELECTION, "SCORE_SENSITIVITY", 1.0, eps, trials, seeds, make_passes)


def test_pinned_estimate_moves_every_score_by_the_sensitivity(monkeypatch):
    """The witness is nearly the worst case the derivation allows: ab's score +(2 + h(1) - h(0)), ac's as much
    down (bc's -2), at the round's noise std, h's step within 0.1 of its largest slope Phi(FIT_SHIFT_STDS)."""
    SELECTION.patch(monkeypatch)
    d0, d1 = selection_pair()
    m = fitted(2.0, WordsRecordingSource(np.random.default_rng(0)), CAT, in_memory(d0), SELECTION_ACCOUNTING)
    x0, x1 = (measure_mod.count_pairs(in_memory(d), m.model_plan_, N) for d in (d0, d1))
    est = pinned_estimate(x0)
    sigma = math.sqrt(m.model_plan_.rounds / m.rho_split_["model_measure"])  # the round's noise std
    diff = (measure_mod.scores(x1, est, np.array([measure_mod.kept_error(x, sigma) for x in x1]))
            - measure_mod.scores(x0, est, np.array([measure_mod.kept_error(x, sigma) for x in x0])))
    step = measure_mod.kept_error(np.ones(1), sigma) - measure_mod.kept_error(np.zeros(1), sigma)
    np.testing.assert_allclose(diff, [2 + step, -2 - step, -2.0], atol=0.02)
    assert step > measure_mod.SCORE_SENSITIVITY - 2 - 0.1
    assert diff.max() - diff.min() <= 2 * measure_mod.SCORE_SENSITIVITY


def test_kept_error_is_the_shifted_clipped_noise_and_its_slope_bounded():
    """h(0) = sigma (phi(s) - s Phi(-s)), h(x) -> FIT_CELL_STDS sigma, slope in [0, Phi(s)] (the sensitivity's
    premise, s = FIT_SHIFT_STDS); checked against a simulation."""
    from scipy.special import ndtr

    sigma, s = 7.0, D.FIT_SHIFT_STDS
    phi = math.exp(-0.5 * s * s) / math.sqrt(2 * math.pi)
    assert measure_mod.kept_error(np.zeros(1), sigma) == pytest.approx(sigma * (phi - s * ndtr(-s)))
    assert measure_mod.kept_error(np.full(1, 1e4), sigma) == pytest.approx(D.FIT_CELL_STDS * sigma)
    x = np.linspace(0, 60, 601)
    h = np.array([measure_mod.kept_error(np.array([v]), sigma) for v in x])
    slope = np.diff(h) / np.diff(x)
    assert slope.min() > -1e-9 and slope.max() <= ndtr(s) + 1e-9
    assert measure_mod.SCORE_SENSITIVITY == pytest.approx(2 + ndtr(s))
    z = np.random.default_rng(0).normal(0, sigma, 200_000)
    for v in (0.0, 3.0, 20.0):
        sim = min(np.abs(np.maximum(v + z - s * sigma, 0) - v).mean(), D.FIT_CELL_STDS * sigma)
        assert measure_mod.kept_error(np.array([v]), sigma) == pytest.approx(sim, rel=0.01)


# The CI slice runs the local path here and the Dask path in ``test_audit_gauss_copula_model_dask``; the
# streamed path (the same counting map over chunks, merged by addition) in the slow run.
@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_model_measurement_audit(monkeypatch, make_passes):
    check_measurement(monkeypatch, 2.0, 10_000, (31, 32), make_passes)


@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_model_selection_audit(monkeypatch, make_passes):
    check_selection(monkeypatch, 2.0, 20_000, (33, 34), make_passes)

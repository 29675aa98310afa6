"""Statistical privacy tests of gauss-copula's pair stage with the empirical audit: the measurement of a
chosen two-way marginal (Gaussian mechanism) and the choice itself (exponential mechanism).

Both run through the mechanism's own path: :meth:`GaussCopula.fit_marginals` plans the pair tree and
splits the budget, :func:`copula_measure.count_pairs` runs the counting map on the pass executor (one chunk,
streamed chunks, or Dask partitions in ``test_audit_gauss_copula_pairs_dask``), and
:func:`copula_measure.tree_rounds` takes the noisy steps (:func:`copula_measure.select_and_measure`, with the tree's
restriction of the candidates and a score without the expected-noise term). The release's estimate of
every candidate (post-processing of earlier outputs, fixed given them) is pinned by the test to a worst
case.

Measurement witness (derivation: the Notes of :func:`copula_measure.select_and_measure`): two binary columns
(one candidate, 4 cells); the target record moves from (0, 0) to (1, 1), the others sit at (0, 1).
The statistic ``noisy[00] - noisy[11]`` of the pair measurement (the last Gaussian release of the
transcript) moves its mean by 2, the whole L2 sensitivity ``sqrt 2`` of two coordinates; its std is
``2 / sqrt(2 rho_measure)``. The pair stage gets 0.99 of the budget and ``SELECT_FRACTION`` is
lowered to 0.01, so this one measurement carries 0.98 of the release's privacy loss.

Selection witness: three binary categorical columns a, b, c (candidates ab, ac, bc, 4 cells each;
the first round offers every candidate). The target record moves from (0, 0, 0) to (1, 0, 1). The
pinned estimate puts ab's exact counts below/above the estimate so that its L1 distance grows by 2,
and those of ac and bc so that theirs shrink by 2: every log-odds of choosing ab moves by ``eps_t``
(the most the score's sensitivity 2 allows). Event: ab is not chosen. With ``SELECT_FRACTION`` raised
to 0.99 the selection carries most of the loss.

The real stage passes at the claimed epsilon; a mutant with halved noise (halved sensitivity)
is caught.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from test_audit_gauss_pca import RecordingSource

import privrelease.mechanisms.gauss_mixture.copula_defaults as D
import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
import privrelease.mechanisms.gauss_mixture.copula_plan as plan_mod
from privrelease.audit import audit_epsilon
from privrelease.engine.passes import ChunkPasses
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.schema.encoding import EncodedDomain


class WordsRecordingSource(RecordingSource):
    """The recording source with its seeded source's random words (the pair selection's exact sampler draws them)."""

    def words(self, n):
        return self._inner.words(n)


N, DELTA, SHARE = 1000, 1e-5, 0.99
#: The selection witness runs with the tight accounting (seeded runs may choose it): each selection composed
#: as randomized response with eps_t, so eps_t is close to the claim and the halved sensitivity exceeds it;
#: under zCDP eps_t = sqrt(8 rho_select) is well below the claim and no single selection could show it.
SELECTION_ACCOUNTING = "gaussian"
CAT = EncodedDomain(p=6, numeric=(), blocks=((0, 2), (2, 4), (4, 6)))
CAT2 = EncodedDomain(p=4, numeric=(), blocks=((0, 2), (2, 4)))


def in_memory(data):
    X, y = data
    return ChunkPasses(lambda: iter([(X, y)]))


def streamed(data):
    """Chunks of 300 records (the counts are merged across chunks)."""
    X, y = data
    return ChunkPasses(lambda: ((X[i:i + 300], None if y is None else y[i:i + 300]) for i in range(0, len(X), 300)))


def tree_measurement_pair():
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
    return (onehot(np.vstack([[0, 0, 0], others])), None), (onehot(np.vstack([[1, 0, 1], others])), None)


def pinned_estimate(exact0):
    """Per candidate (ab, ac, bc: cells 00, 01, 10, 11): ab's distance grows from d0 to d1, the others' shrink."""
    ab, ac, bc = (np.asarray(e, dtype=float).copy() for e in exact0)
    ab[0] += 5.0   # the target leaves 00 (exact below the estimate): +1
    ab[2] -= 5.0   # and enters 10 (exact above the estimate): +1
    ac[0] -= 5.0   # leaves 00 (exact above): -1
    ac[3] += 5.0   # enters 11 (exact below): -1
    bc[0] -= 5.0
    bc[1] += 5.0
    return [ab, ac, bc]


def fitted(eps, src, dom, passes, accounting="auto"):
    m = GaussCopula(eps, DELTA, marginal_share=0.5, pair_rounds=1, pair_share=SHARE, rng=src, accounting=accounting, dependence="mixture",
                    domain=dom)
    m.fit_marginals(passes)
    assert m.pair_plan_ is not None and m.pair_plan_.rounds == 1
    return m


def _tree_choice(m, exact, est):
    return measure_mod.tree_rounds(m, exact, m.pair_plan_, m.rho_split_["pairs_measure"], m.rho_split_["pairs_select"],
                                est)[0][0]


def measure_batch(eps, make_passes, fit=None, choose=None, plan=lambda m: m.pair_plan_):
    """The measurement's statistic: two binary columns, cells 00 and 11 (``fit``, ``choose`` and ``plan``: the
    stage's own fitting, rounds and plan; the pair tree's by default)."""
    fit, choose = fit or fitted, choose or _tree_choice

    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            src = WordsRecordingSource(rng)
            m = fit(eps, src, CAT2, passes)
            exact = measure_mod.count_pairs(passes, plan(m), m.n_)
            assert len(exact) == 1, "one candidate"
            choose(m, exact, [np.zeros(exact[0].size)])
            noisy = src.releases[-1]
            out[i] = noisy[0] - noisy[3]
        return out

    return run


def select_batch(eps, make_passes, est, fit=None, choose=None, plan=lambda m: m.pair_plan_):
    fit, choose = fit or fitted, choose or _tree_choice

    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            m = fit(eps, WordsRecordingSource(rng), CAT, passes, accounting=SELECTION_ACCOUNTING)
            exact = measure_mod.count_pairs(passes, plan(m), m.n_)
            assert plan(m).pairs == ((0, 1), (0, 2), (1, 2))
            out[i] = choose(m, exact, est)
        return out

    return run


def measure_event(eps):
    """stat >= d1 mean + 3 mutant stds: fixed from the design before any run."""
    rho = plan_mod.split_with_pairs(eps, DELTA, "zcdp", 0.5, SHARE, 1)[4]  # "auto" accounting is zCDP
    std_real = 2.0 / math.sqrt(2.0 * rho)
    thr = -1.0 + 3.0 * std_real / 2.0
    return lambda stats: np.asarray(stats) >= thr


def audit_measurement(eps, trials, seed, make_passes):
    d0, d1 = tree_measurement_pair()
    return audit_epsilon(batch=measure_batch(eps, make_passes), d0=d0, d1=d1, event=measure_event(eps),
                         trials=trials, seed=seed, delta=DELTA, claimed=eps)


def audit_selection(eps, trials, seed, make_passes):
    d0, d1 = selection_pair()
    est = pinned_estimate(measure_mod.count_pairs(make_passes(d0), _plan_for(eps, make_passes(d0)), N))
    return audit_epsilon(batch=select_batch(eps, make_passes, est), d0=d0, d1=d1,
                         event=lambda s: np.asarray(s) != 0, trials=trials, seed=seed, delta=DELTA, claimed=eps)


def _plan_for(eps, passes):
    return fitted(eps, WordsRecordingSource(np.random.default_rng(0)), CAT, passes,
                  accounting=SELECTION_ACCOUNTING).pair_plan_


@dataclass(frozen=True)
class PairCase:
    """A pair-stage audit as the mutant list (``mutants.py``) runs it: the witness above on one chunk,
    ``run(trials, seed)`` gives the epsilon bound to compare with ``claimed``."""

    id: str
    audit: Callable
    select_fraction: float
    trials: int
    claimed: float = 2.0

    def run(self, trials: int, seed: int, make_passes=in_memory):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(D, "SELECT_FRACTION", self.select_fraction)
            plan_mod.split_with_pairs.cache_clear()
            try:
                return self.audit(self.claimed, min(trials, self.trials), seed, make_passes)
            finally:
                plan_mod.split_with_pairs.cache_clear()


# the measurement carries 0.98 of the loss; the selection most of it
MEASUREMENT = PairCase("pair tree measurement", audit_measurement, 0.01, 40_000)
SELECTION = PairCase("pair tree selection", audit_selection, 0.99, 20_000)
PAIR_CASES = {c.id: c for c in (MEASUREMENT, SELECTION)}


def _check_real_and_mutant(monkeypatch, case, mutant_attr, mutant_value, eps, trials, seeds, make_passes):
    """The real stage is not refuted at ``eps``; the mutant (``measure_mod.<mutant_attr> = mutant_value``) is."""
    monkeypatch.setattr(D, "SELECT_FRACTION", case.select_fraction)
    plan_mod.split_with_pairs.cache_clear()
    real = case.audit(eps, trials, seeds[0], make_passes)
    print("real", real.summary())
    assert real.epsilon_lower <= eps, real.summary()
    monkeypatch.setattr(measure_mod, mutant_attr, mutant_value)
    mutant = case.audit(eps, trials, seeds[1], make_passes)
    plan_mod.split_with_pairs.cache_clear()
    print("mutant", mutant.summary())
    assert mutant.epsilon_lower > eps, mutant.summary()


def check_measurement(monkeypatch, eps, trials, seeds, make_passes=in_memory, case=MEASUREMENT):
    _check_real_and_mutant(monkeypatch, case, "MEASURE_SENSITIVITY", math.sqrt(2.0) / 2, eps, trials, seeds,
                           make_passes)


def check_selection(monkeypatch, eps, trials, seeds, make_passes=in_memory, case=SELECTION):
    _check_real_and_mutant(monkeypatch, case, "SCORE_SENSITIVITY", 1.0, eps, trials, seeds, make_passes)


def test_pinned_estimate_moves_every_score_by_the_sensitivity():
    """The witness is the worst case the derivation allows: ab's score +2, ac's and bc's -2."""
    d0, d1 = selection_pair()
    plan = _plan_for(2.0, in_memory(d0))
    x0, x1 = (measure_mod.count_pairs(in_memory(d), plan, N) for d in (d0, d1))
    est = pinned_estimate(x0)
    cells = np.full(3, 4.0)
    diff = measure_mod.scores(x1, est, cells, 1.0) - measure_mod.scores(x0, est, cells, 1.0)
    np.testing.assert_allclose(diff, [2.0, -2.0, -2.0])


# The CI slice runs the local path (the pair tree is the mixture's, off the default's path since the graphical
# model; its counts' Dask path is audited in the slow run here and, for the same counting map, in the CI slice
# of test_audit_gauss_copula_model_dask); the streamed path in the slow run.
@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_pair_tree_measurement_audit_ci_slice(monkeypatch, make_passes):
    check_measurement(monkeypatch, 2.0, 40_000, (21, 22), make_passes)


@pytest.mark.slow
@pytest.mark.parametrize("make_passes", [pytest.param(in_memory, marks=pytest.mark.ci_slice), streamed],
                         ids=["local", "streamed"])
def test_pair_tree_selection_audit_ci_slice(monkeypatch, make_passes):
    check_selection(monkeypatch, 2.0, 20_000, (23, 24), make_passes)

"""Neighbouring-dataset audits of the DP schema draft's primitives (privrelease.dp.quantiles / .partition).

Quantile (exponential mechanism, utility sensitivity 1). Grid {0, 1}, q = 1/2, n = 2;
d0 = [0.5, -1] and d1 = [0.5, 1.5] differ in one record. Utilities (minus the distance from
q n = 1 to [#{x < c}, #{x <= c}]): d0 -> (0, -1), d1 -> (-1, 0). Event "output 0": the exact
loss is epsilon/2 (the mechanism's factor 2 covers the normaliser, which does not move
here); a halved-noise mutant realises epsilon and is caught against the calibrated loss
epsilon/2; a quarter-noise mutant realises 2 epsilon and is caught against the claim.

Partition selection (Laplace scale b = 2/epsilon, threshold tau). Two levels present in
both datasets: d0 = {a: ca, b: cb}, d1 = {a: ca + 1, b: cb - 1} (one record moved from b to
a), with ca + 1 <= tau <= cb - 1 so both decisions sit in the Laplace tails. Event "a kept,
b dropped" has the exact loss 2/b = epsilon (no delta is involved: no level appears or
disappears); a halved-noise mutant (scale b/2, same threshold) realises 2 epsilon and is caught.
"""

import math

import numpy as np
import pytest

import privrelease.dp.partition as part
import privrelease.dp.quantiles as quant
from privrelease.audit import audit_epsilon
from privrelease.noise import make_source

EPS = 2.0
GRID = np.array([0.0, 1.0])
D0, D1 = [0.5, -1.0], [0.5, 1.5]


def _quantile_batch(data, rng, k):
    return quant.dp_quantile(data, 0.5, EPS, GRID, make_source(rng), size=k)


def _quantile_audit(seed, trials):
    return audit_epsilon(batch=_quantile_batch, d0=D0, d1=D1, event=lambda s: s == 0.0, trials=trials, seed=seed)


def test_quantile_utilities_of_the_audit_pair():
    assert quant.quantile_scores(D0, 0.5, GRID).tolist() == [0.0, -1.0]
    assert quant.quantile_scores(D1, 0.5, GRID).tolist() == [-1.0, 0.0]


def _quantile_mutants(monkeypatch, trials):
    res = _quantile_audit(0, trials)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.4 * EPS, res  # tight on this pair (exact loss EPS/2)
    monkeypatch.setattr(quant, "QUANTILE_SENSITIVITY", 0.5)  # halved noise
    half = _quantile_audit(1, trials)
    assert half.epsilon_lower > 0.5 * EPS, half
    monkeypatch.setattr(quant, "QUANTILE_SENSITIVITY", 0.25)
    quarter = _quantile_audit(2, trials)
    assert quarter.epsilon_lower > EPS, quarter


TRIALS = [pytest.param(200_000, marks=pytest.mark.slow, id="full"),
          pytest.param(20_000, marks=[pytest.mark.slow, pytest.mark.ci_slice], id="slice")]


@pytest.mark.parametrize("trials", TRIALS)
def test_quantile_audit_and_mutants(monkeypatch, trials):
    _quantile_mutants(monkeypatch, trials)


DELTA = 1e-3


def _pair():
    _, tau = part.partition_parameters(EPS, DELTA)
    ca, cb = math.floor(tau) - 1, math.ceil(tau) + 1
    return np.array([ca, cb]), np.array([ca + 1, cb - 1])


def _partition_batch(counts, rng, k):
    return part.keep_mask(counts, EPS, DELTA, make_source(rng), size=k)


def _partition_audit(seed, trials):
    d0, d1 = _pair()
    return audit_epsilon(batch=_partition_batch, d0=d0, d1=d1, event=lambda s: (s[:, 0] > 0) & (s[:, 1] == 0),
                         trials=trials, seed=seed)


def _partition_mutant(monkeypatch, trials):
    res = _partition_audit(0, trials)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.75 * EPS, res  # tight: the exact loss of the event is EPS
    orig = part.partition_parameters
    monkeypatch.setattr(part, "partition_parameters", lambda e, d: (orig(e, d)[0] / 2, orig(e, d)[1]))
    half = _partition_audit(1, trials)
    assert half.epsilon_lower > EPS, half


@pytest.mark.parametrize("trials", TRIALS)
def test_partition_selection_audit_and_halved_noise_mutant(monkeypatch, trials):
    _partition_mutant(monkeypatch, trials)


def test_a_level_held_by_one_record_is_kept_with_probability_below_delta():
    """The delta part: a level only one dataset holds (count 1) is kept with probability delta0 < delta."""
    keep = part.keep_mask([1], EPS, DELTA, make_source(0), size=200_000)
    assert keep.mean() < DELTA

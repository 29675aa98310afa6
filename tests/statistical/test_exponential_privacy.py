"""Empirical privacy audit of the per-record exponential mechanism.

Neighbours: one numeric attribute (Delta = 1), the record x = 0 replaced by x' = 1;
event: output 0. The grid is symmetric, so both normalisers are equal and the exact
loss of this event is epsilon/2 (the exponential mechanism's factor 2 is not needed
here). Each row of a row-aligned release is an independent run on its record, so k
runs are one transform of k copies of the record.

* the real mechanism: lower bound <= epsilon (and near epsilon/2);
* a halved-temperature mutant (the noise of the exponential mechanism halved) realises
  epsilon on this pair: it is caught against the calibrated loss epsilon/2;
* a quarter-temperature mutant realises 2 epsilon and is caught against the claim.

The mutants draw the mechanism's selection at 1/factor times its rate through
:class:`~privrelease.audit.HalvedNoiseSource` (the exponential mechanism at epsilon / factor).
"""

import numpy as np
import pytest

from privrelease.audit import HalvedNoiseSource, audit_epsilon
from privrelease.mechanisms.baselines.exponential import ExponentialRecords

EPS = 1.0


def _batch_for(factor):
    def batch(data, rng, k):
        X = np.full((k, 1), float(data))
        src = rng if factor == 1 else HalvedNoiseSource(rng, factor=factor)  # its only noise: the selection
        return ExponentialRecords(EPS, rng=src).fit(X).transform(X)[:, 0]
    return batch


def _event(stats):
    return stats == 0.0


def _audit(seed, factor=1.0):
    return audit_epsilon(batch=_batch_for(factor), d0=0.0, d1=1.0, event=_event, trials=200_000, alpha=0.05, seed=seed)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_exponential_audit_and_mutants():
    res = _audit(0)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.4 * EPS, res  # the audit is tight on this pair (exact loss eps/2)
    half = _audit(1, 0.5)
    assert half.epsilon_lower > 0.5 * EPS, half
    quarter = _audit(2, 0.25)
    assert quarter.epsilon_lower > EPS, quarter

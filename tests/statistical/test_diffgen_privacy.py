"""Empirical privacy audit of DiffGen's noisy leaf counts (and a halved-noise mutant).

h = 0 and one categorical attribute: the whole budget goes to the two (root, class)
cells. Worst-case neighbours under R1: one record changes class (10/10 -> 9/11), which
moves both counts by 1: L1 change 2, the sensitivity used. Event: count_0 >= 11 and
count_1 <= 9, in the tails of both (rounded-up) Laplace counts, where the likelihood
ratio is exactly exp(epsilon); the halved-noise mutant reaches exp(2 epsilon).
"""

import numpy as np
import pytest

from privrelease.mechanisms.diffgen import DiffGen
from privrelease.schema.encoding import EncodedDomain

from privrelease.evaluation.audit import HalvedNoiseSource, audit_epsilon

EPS = 1.0
DOM = EncodedDomain(p=2, numeric=(), blocks=((0, 2),))


def _data(n0):
    X = np.zeros((20, 2))
    X[:, 0] = 1
    y = np.r_[np.zeros(n0), np.ones(20 - n0)].astype(int)
    return X, y


def _batch_for(factor):
    """``factor`` < 1: the mutant (h = 0 and no numeric attribute: the leaf counts are the only draw)."""
    def batch(data, rng, k):
        X, y = data
        out = np.zeros((k, 2))
        for i in range(k):
            src = rng if factor == 1 else HalvedNoiseSource(rng, factor=factor)
            m = DiffGen(EPS, n_specializations=0, domain=DOM, n_classes=2, rng=src).fit(X, y)
            out[i, m.cell_labels_] = m.cell_counts_
        return out
    return batch


def _event(s):
    return (s[:, 0] >= 11) & (s[:, 1] <= 9)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_diffgen_counts_audit_and_halved_noise_mutant():
    res = audit_epsilon(batch=_batch_for(1.0), d0=_data(10), d1=_data(9), event=_event, trials=3000, seed=0)
    assert res.epsilon_lower <= EPS, res
    res_m = audit_epsilon(batch=_batch_for(0.5), d0=_data(10), d1=_data(9), event=_event, trials=3000, seed=1)
    assert res_m.epsilon_lower > EPS, res_m

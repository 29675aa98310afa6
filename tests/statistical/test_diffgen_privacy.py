"""Empirical privacy audit of DiffGen's noisy leaf counts (and a halved-noise mutant).

h = 0 and one categorical attribute: the whole budget goes to the two (root, class)
cells. Worst-case neighbours under R1: one record changes class (10/10 -> 9/11), which
moves both counts by 1: L1 change 2, the sensitivity used. Event: count_0 >= 11 and
count_1 <= 9, in the tails of both (rounded-up) Laplace counts, where the likelihood
ratio is exactly exp(epsilon); the halved-noise mutant reaches exp(2 epsilon).
"""

import numpy as np
import pytest

from privrelease.mechanisms.baselines.diffgen import DiffGen
from privrelease.schema.encoding import EncodedDomain

from privrelease.audit import HalvedNoiseSource, audit_epsilon

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


# ---- the split-point exponential mechanism (h = 1) ----------------------------------------

EPS_SPLIT = 16.0  # one numeric attribute, h = 1: eps' = epsilon / (2 (1 + 1 + 2)) = 2
NUM = EncodedDomain(p=1, numeric=(0,), blocks=())


def _split_data(v1):
    # InfoGain (Delta_u = 1 for two classes) is 1 exactly for splits between 0.50 and v1, 0 elsewhere
    return np.array([[0.50], [v1]]), np.array([0, 1])


def _split_batch(data, rng, k):
    X, y = data
    out = np.empty(k)
    for i in range(k):
        m = DiffGen(EPS_SPLIT, score="infogain", n_specializations=1, domain=NUM, n_classes=2, rng=rng).fit(X, y)
        out[i] = m.cut_[0][0][1]  # the released boundary: the root's split point
    return out


def _in_narrow_gain_interval(s):
    return (s > 0.50) & (s <= 0.51)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_diffgen_split_point_audit_and_doubled_epsilon_mutant(monkeypatch):
    """The root split point is an eps'-DP exponential mechanism (eps' = 2 here): replacing the record
    at 0.51 by one at 0.01 moves the InfoGain-1 interval from (0.50, 0.51] to (0.01, 0.50], so splits in
    (0.50, 0.51] are likelier on the first dataset (exact loss ln(e (0.49 e + 0.51) / (0.01 e + 0.99))
    = 1.59 <= 2). The mutant that runs the mechanism at 2 eps' (half the temperature) reaches 3.36
    and is caught."""
    d0, d1 = _split_data(0.51), _split_data(0.01)
    res = audit_epsilon(batch=_split_batch, d0=d0, d1=d1, event=_in_narrow_gain_interval, trials=6000, seed=0)
    eps_prime = EPS_SPLIT / 8
    assert res.epsilon_lower <= eps_prime, res
    real_choose = DiffGen._choose

    def doubled(self, utilities, eps_prime, log_base=None):
        return real_choose(self, utilities, 2 * eps_prime, log_base)

    monkeypatch.setattr(DiffGen, "_choose", doubled)
    res_m = audit_epsilon(batch=_split_batch, d0=d0, d1=d1, event=_in_narrow_gain_interval, trials=6000, seed=1)
    assert res_m.epsilon_lower > eps_prime, res_m

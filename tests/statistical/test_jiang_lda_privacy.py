"""Empirical privacy audit of the corrected DP-LDA release (and a halved-noise mutant).

Worst-case neighbours from the sensitivity derivation: one numeric feature (p1 = 1,
p2 = 0, L = 1), two classes; the differing record is (x = 1, class 0) in d0 and
(x = 1, class 1) in d1, which moves n_1 by 1 and the concatenated class sums by
2 = 2L (the second moment does not change). The statistic is the released
(n_0^, S1_0~, S1_1~); the event is the joint tail where every coordinate favours d0.
With budget shares (0.45, 0.45, 0.10) these neighbours realise a privacy loss of
0.9 epsilon; a mutant with half the noise realises 1.8 epsilon.
"""

import numpy as np
import pytest

from privrelease.audit import HalvedNoiseSource, audit_epsilon
from privrelease.mechanisms.jiang.lda import JiangLDA
from privrelease.schema.encoding import EncodedDomain

EPS = 1.0
SHARES = (0.45, 0.45, 0.10)
DOM = EncodedDomain.numeric_box(1)


def _data(label_of_last):
    X = np.array([[0.5], [0.2], [0.9], [1.0]])
    y = np.array([0, 1, 1, label_of_last])
    return X, y


def _batch(factor=1.0):
    """``factor`` < 1: the mutant, every noise draw (counts, sums, second moment) scaled by it."""
    def batch(data, rng, k):
        X, y = data
        out = np.empty((k, 3))
        for i in range(k):
            src = rng if factor == 1 else HalvedNoiseSource(rng, factor=factor)
            m = JiangLDA(EPS, budget_shares=SHARES, domain=DOM, rng=src).fit(X, y)
            out[i] = (m.class_counts_[0], m.class_sums_[0, 0], m.class_sums_[1, 0])
        return out
    return batch


def _event(stats):
    # d0 has the record in class 0: larger n_0, larger S1_0, smaller S1_1
    return (stats[:, 0] >= 3) & (stats[:, 1] >= 1.5) & (stats[:, 2] <= 1.1)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_corrected_lda_passes_and_halved_noise_mutant_is_caught():
    d0, d1 = _data(0), _data(1)
    res = audit_epsilon(batch=_batch(), d0=d0, d1=d1, event=_event, trials=2000, alpha=0.05, seed=1)
    assert res.epsilon_lower <= EPS, res
    res_m = audit_epsilon(batch=_batch(0.5), d0=d0, d1=d1, event=_event, trials=2000, alpha=0.05, seed=2)
    assert res_m.epsilon_lower > EPS, res_m

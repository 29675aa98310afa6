"""Unit tests of the per-record exponential mechanism (EXP baseline)."""

import math

import numpy as np
import pytest

from privrelease.errors import ParameterError
from privrelease.mechanisms.baselines.exponential import ExponentialRecords, utility_sensitivity
from privrelease.schema.encoding import EncodedDomain


def test_distribution_matches_exponential_weights():
    dom = EncodedDomain(p=4, numeric=(0,), blocks=((1, 4),))
    eps = 3.0
    n = 60000
    X = np.tile([0.3, 0.0, 1.0, 0.0], (n, 1))
    out = ExponentialRecords(eps, grid_step=0.25, domain=dom, rng=0).fit(X).transform(X)
    delta = utility_sensitivity(dom)
    assert delta == 3
    grid = np.linspace(0, 1, 5)
    w = np.exp(-eps * np.abs(0.3 - grid) / (2 * delta))
    freq = np.array([(out[:, 0] == g).mean() for g in grid])
    assert np.allclose(freq, w / w.sum(), atol=0.01)
    wc = np.exp(-eps * 2 * np.array([1, 0, 1]) / (2 * delta))
    assert np.allclose(out[:, 1:].mean(0), wc / wc.sum(), atol=0.01)
    assert np.all(out[:, 1:].sum(1) == 1)


def test_inf_rounds_to_grid():
    X = np.array([[0.26, 0.74]])
    out = ExponentialRecords(math.inf, domain=None, rng=0).fit(X).transform(X)
    assert np.allclose(out, [[0.25, 0.75]])


@pytest.mark.parametrize("step", [0, 0.3, 2, "a"])
def test_bad_grid(step):
    with pytest.raises(ParameterError):
        ExponentialRecords(1.0, grid_step=step, rng=0).fit(np.zeros((2, 2)))

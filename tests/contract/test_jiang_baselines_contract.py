"""Contract checks for jiang-lda, exponential and diffgen: fit returns self, params unchanged,
same seed same output, epsilon = inf behaviour, registry metadata."""

import math

import numpy as np
import pytest

from privrelease.mechanisms import get_mechanism
from privrelease.schema.encoding import EncodedDomain


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    dom = EncodedDomain(p=5, numeric=(0, 1), blocks=((2, 5),))
    X = np.zeros((n, 5))
    X[:, :2] = rng.random((n, 2))
    X[np.arange(n), 2 + rng.integers(0, 3, n)] = 1
    y = (X[:, 0] > 0.5).astype(int)
    return X, y, dom


NAMES = [n for n in ("jiang-lda", "exponential", "diffgen")]


def _make(name, eps, rng=0):
    cls = get_mechanism(name)
    X, y, dom = _data()
    return cls(epsilon=eps, domain=dom, rng=rng), X, y


def _output(m, X, y):
    if m.output_kind == "row-aligned":
        return m.fit(X, y).transform(X), None
    m.fit(X, y)
    return m.sample(50)


def _registered(name):
    try:
        get_mechanism(name)
        return True
    except Exception:
        return False


@pytest.mark.parametrize("name", NAMES)
def test_contract(name):
    if not _registered(name):
        pytest.skip(f"{name} not registered")
    m, X, y = _make(name, 1.0)
    before = m.get_params()
    assert m.fit(X, y) is m
    assert m.get_params() == before
    assert m.privacy_cost_.epsilon == pytest.approx(1.0)
    a = _output(_make(name, 1.0, rng=7)[0], X, y)
    b = _output(_make(name, 1.0, rng=7)[0], X, y)
    assert np.array_equal(a[0], b[0])
    if a[1] is not None:
        assert np.array_equal(a[1], b[1])
    info = type(m).info()
    assert info["guarantee"] == "epsilon-DP" and info["name"] == name


def test_exponential_epsilon_inf_is_the_grid_rounding():
    if not _registered("exponential"):
        pytest.skip("exponential not registered")
    m, X, y = _make("exponential", math.inf)
    out = m.fit(X).transform(X)
    assert np.allclose(out[:, :2], np.round(X[:, :2] * 20) / 20)
    assert np.array_equal(out[:, 2:], X[:, 2:])


def test_lda_epsilon_inf_is_deterministic_in_the_seed():
    m, X, y = _make("jiang-lda", math.inf, rng=1)
    a = m.fit(X, y).sample()
    b = _make("jiang-lda", math.inf, rng=2)[0].fit(X, y).sample()
    assert np.array_equal(a[0], b[0])

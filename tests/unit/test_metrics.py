"""Unit tests of the utility metrics (Jiang et al. Fig. 2)."""

import numpy as np
import pytest

from privrelease.errors import InputDataError
from privrelease.evaluation.metrics import frobenius_error, mse


def test_values_match_definitions():
    rng = np.random.default_rng(0)
    X = rng.random((50, 4))
    Xhat = X + rng.normal(0, 0.1, X.shape)
    f = frobenius_error(X, Xhat)
    assert np.isclose(f, np.linalg.norm(X - Xhat, "fro") ** 2)
    assert np.isclose(mse(X, Xhat), f / X.size)


def test_perfect_release_is_zero_and_noise_is_worse():
    X = np.random.default_rng(1).random((20, 3))
    assert frobenius_error(X, X) == 0.0 and mse(X, X) == 0.0
    assert mse(X, X + 0.2) > mse(X, X + 0.1) > 0


def test_bad_input_raises():
    with pytest.raises(InputDataError, match="same shape"):
        mse(np.zeros((3, 2)), np.zeros((2, 3)))
    with pytest.raises(InputDataError, match="2-d"):
        frobenius_error(np.zeros(3), np.zeros(3))
    with pytest.raises(InputDataError, match="finite"):
        mse(np.zeros((2, 2)), np.full((2, 2), np.nan))
    with pytest.raises(InputDataError, match="empty"):
        mse(np.zeros((0, 2)), np.zeros((0, 2)))

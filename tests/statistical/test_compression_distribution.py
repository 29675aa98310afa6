"""Given X, the rows of the untruncated release are i.i.d. N(0, Sigma_X); the truncation conditions exactly."""

import math

import numpy as np
from scipy import stats

from privrelease.mechanisms.compression.mechanism import Compression
from privrelease.mechanisms.compression.bounds import compressed_covariance, normalized_covariance


def _X(n=300, seed=0):
    rng = np.random.default_rng(seed)
    A = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.2, -0.5, 0.9]])
    return rng.random((n, 3)) @ A.T + rng.normal(size=(n, 3)) * 0.1


def _rows(X, draws=150, m=100, **kw):
    return np.stack([Compression(m=m, C=math.inf, rng=s, **kw).fit(X).compressed_ for s in range(draws)])


def test_rows_are_gaussian_with_the_normalised_covariance():
    X = _X()
    sigma = normalized_covariance(X)
    R = _rows(X)  # draws x m x p
    rows = R.reshape(-1, 3)
    # quadratic form x^T Sigma^-1 x ~ chi2(p)
    q = np.einsum("ij,jk,ik->i", rows, np.linalg.inv(sigma), rows)
    assert stats.kstest(q, stats.chi2(df=3).cdf).pvalue > 1e-3
    # a fixed projection, standardised, ~ N(0, 1)
    v = np.array([0.3, -1.0, 0.7])
    z = rows @ v / math.sqrt(v @ sigma @ v)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # rows of one release are independent: the lag-1 correlation across rows is ~ 0
    lag = np.corrcoef(R[:, :-1, 0].ravel(), R[:, 1:, 0].ravel())[0, 1]
    assert abs(lag) < 4 / math.sqrt(rows.shape[0])
    # the test has power: the covariance WITHOUT the column normalisation is rejected
    raw = X.T @ X / X.shape[0]
    q_wrong = np.einsum("ij,jk,ik->i", rows, np.linalg.inv(raw), rows)
    assert stats.kstest(q_wrong, stats.chi2(df=3).cdf).pvalue < 1e-6


def test_truncation_is_exact_conditioning():
    """Accepted releases follow the untruncated law conditioned on the acceptance box (eq. 14)."""
    X = _X(n=200, seed=1)
    m = 40
    sigma = normalized_covariance(X)
    free = _rows(X, draws=600, m=m)
    dev_free = np.array([np.max(np.abs(compressed_covariance(r) - sigma)) for r in free])
    tau = float(np.median(dev_free))
    C = tau / math.sqrt(math.log(2 * 200 * 3) / m)
    acc, draws = [], []
    for s in range(300):
        mech = Compression(m=m, C=C, delta_max=0.0, rng=10_000 + s).fit(X)
        acc.append(mech.max_deviation_)
        draws.append(mech.draws_)
    acc = np.array(acc)
    assert np.all(acc <= tau + 1e-12)
    cond = dev_free[dev_free <= tau]
    assert stats.ks_2samp(acc, cond).pvalue > 1e-3
    # about half of the draws are rejected: mean number of draws ~ 1 / P(accept) = 2
    assert 1.6 < np.mean(draws) < 2.5

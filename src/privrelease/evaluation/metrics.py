"""Utility metrics for released tables (Jiang et al. 2013, Fig. 2: F-norm error and MSE).

Both compare the encoded original matrix ``X`` (n x p, numeric columns in [0, 1],
one-hot blocks) with the row-aligned release ``Xhat`` of the same shape.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputDataError

__all__ = ["frobenius_error", "mse"]


def _pair(X, Xhat) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    Xhat = np.asarray(Xhat, dtype=np.float64)
    if X.ndim != 2 or Xhat.ndim != 2:
        raise InputDataError(f"X and Xhat must be 2-d matrices, got shapes {X.shape} and {Xhat.shape}")
    if X.shape != Xhat.shape:
        raise InputDataError(f"X and Xhat must have the same shape (row-aligned release), got {X.shape} vs {Xhat.shape}")
    if X.size == 0:
        raise InputDataError("X is empty")
    if not (np.isfinite(X).all() and np.isfinite(Xhat).all()):
        raise InputDataError("X and Xhat must be finite")
    return X, Xhat


def frobenius_error(X, Xhat) -> float:
    """Squared Frobenius-norm error ``||X - Xhat||_F^2 = sum_ij (X_ij - Xhat_ij)^2``.

    Name: F-norm error (Jiang et al. 2013, Fig. 2a, "F-norm"). Goal: lower is better
    (0 means the release equals the data). Range: [0, inf); for encoded data in [0, 1]
    compared with a release clipped to [0, 1] it is at most ``n p``.

    >>> frobenius_error([[0., 1.], [1., 1.]], [[0., 0.], [1., 3.]])
    5.0
    """
    X, Xhat = _pair(X, Xhat)
    d = X - Xhat
    return float(np.einsum("ij,ij->", d, d))


def mse(X, Xhat) -> float:
    """Mean squared error per entry ``||X - Xhat||_F^2 / (n p)``.

    Name: MSE (Jiang et al. 2013, Fig. 2b). Goal: lower is better (0 is a perfect
    release). Range: [0, inf); at most 1 for encoded data in [0, 1] compared with a
    release clipped to [0, 1].

    >>> mse([[0., 1.], [1., 1.]], [[0., 0.], [1., 3.]])
    1.25
    """
    X, Xhat = _pair(X, Xhat)
    return frobenius_error(X, Xhat) / X.size

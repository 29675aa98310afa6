"""Per-record preprocessing steps that every engine applies inside its per-chunk map.

A step is a ``(name, value)`` pair; a mechanism declares the steps its statistics need
(:meth:`~privrelease.mechanisms.base.Mechanism.record_preprocessing`) and the statistics
record the steps they were computed with (:attr:`SufficientStats.preprocessing`), so a
mechanism can refuse statistics that skipped one.

Steps
-----
``("row_norm_bound", B)``
    Scale each encoded row into the public L2 ball ``||x|| <= B``:
    ``x -> x min(1, B / ||x||)``. Rows already inside are unchanged, so applying it twice
    is the same as once.
"""

from __future__ import annotations

import numpy as np

STEPS = ("row_norm_bound",)


def scale_rows_to_ball(X: np.ndarray, bound: float) -> np.ndarray:
    """Rows of ``X`` scaled into ``||x||_2 <= bound`` (rows inside are returned unchanged)."""
    X = np.asarray(X, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if np.all(norms <= bound):
        return X
    return X * np.minimum(1.0, bound / np.maximum(norms, 1e-300))[:, None]


def check_steps(steps) -> tuple:
    """Normalise preprocessing steps to a hashable tuple of ``(name, float)`` pairs."""
    out = []
    for name, value in tuple(steps or ()):
        if name not in STEPS:
            raise ValueError(f"unknown preprocessing step {name!r}; known: {STEPS}")
        out.append((str(name), float(value)))
    return tuple(out)


def apply_steps(X: np.ndarray, steps) -> np.ndarray:
    """Apply the preprocessing steps, in order, to an encoded chunk."""
    for name, value in check_steps(steps):
        if name == "row_norm_bound":
            X = scale_rows_to_ball(X, value)
    return X

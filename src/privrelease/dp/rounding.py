"""Rounding of (released) weights to integer counts: largest remainders (Hamilton's method).

Post-processing only: the input is a released (noisy) vector or a public one.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError


def largest_remainder(weights, n: int, minimum: int = 0) -> np.ndarray:
    """Integers ``>= minimum`` summing to ``n``, proportional to ``weights`` (largest remainders).

    Negative weights count as 0; all-zero weights as equal weights. When ``n`` is too
    small to give every part ``minimum``, the minimum is dropped. Ties in the remainders
    go to the earlier part (stable order), so the result is deterministic.

    >>> largest_remainder([0.5, 0.26, 0.24], 10).tolist()
    [5, 3, 2]
    >>> largest_remainder([0.0, 1.0, 0.0], 5, minimum=1).tolist()
    [1, 3, 1]
    """
    w = np.clip(np.asarray(weights, dtype=np.float64).ravel(), 0.0, None)
    n = int(n)
    if n < 0:
        raise ParameterError(f"the total to allocate must be >= 0, got {n}")
    k = w.size
    if k == 0:
        raise ParameterError("cannot allocate over zero parts")
    if n < minimum * k:
        minimum = 0
    if not np.all(np.isfinite(w)):
        raise ParameterError("weights must be finite")
    if w.sum() <= 0:
        w = np.ones(k)
    free = n - minimum * k
    raw = w / w.sum() * free
    base = np.floor(raw).astype(np.int64)
    rest = free - int(base.sum())
    if rest > 0:
        base[np.argsort(-(raw - base), kind="stable")[:rest]] += 1
    return base + minimum

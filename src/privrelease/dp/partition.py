"""Stable partition selection: which levels of a categorical column to declare, under (epsilon, delta)-DP.

Each level present in the data gets its count plus Laplace noise; the level is kept when
the noisy count exceeds a threshold calibrated to delta, so a level held by a single
record (which would identify it) is kept only with probability about delta. Levels not
kept are merged into one "other" level of the drafted schema. Only the kept levels are
released, never the counts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import ParameterError


def partition_parameters(epsilon: float, delta: float) -> tuple[float, float]:
    """``(b, tau)``: the Laplace scale and threshold of :func:`select_partitions` for (epsilon, delta)-DP
    under the replace-one relation.

    >>> b, tau = partition_parameters(1.0, 1e-6); round(b, 3), round(tau, 2)
    (2.0, 29.19)
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not (0 < delta < 1):
        raise ParameterError(f"partition selection needs a delta in (0, 1), got {delta}")
    b = 2.0 / epsilon
    delta0 = delta / (1.0 + math.exp(epsilon / 2.0))
    tau = 1.0 + b * math.log(1.0 / (2.0 * delta0))
    return b, tau


def select_partitions(values, epsilon: float, delta: float, source) -> list[str]:
    """The levels of ``values`` (missing values ignored) whose noisy count clears the threshold, sorted.

    Parameters
    ----------
    values : 1-d array-like (the private column)
    epsilon, delta : the privacy parameters of this selection
    source : privrelease.noise.RandomSource

    Notes
    -----
    Add/remove analysis first (one record added or removed touches the count of exactly one
    level). A level present in both datasets has its count moved by 1: the Laplace noise of
    scale ``b`` makes its keep/drop decision ``1/b``-DP. A level present only in the larger
    dataset has count 1 there and does not exist in the smaller one (never kept); it is kept
    with probability ``P[1 + Lap(b) > tau] = exp(-(tau - 1)/b) / 2 =: delta0``. So one
    addition or removal is ``(1/b, delta0)``-DP. Replacing one record is a removal followed
    by an addition; group privacy over these two steps gives ``(2/b, delta0 (1 + e^{1/b}))``.
    With ``b = 2/epsilon`` and ``delta0 = delta / (1 + e^{epsilon/2})``, i.e.
    ``tau = 1 + b ln(1 / (2 delta0))``, the selection is (epsilon, delta)-DP under the
    replace-one relation (Korolova et al. 2009; Desfontaines, Voss, Gipson, Mandayam 2022).
    See docs/derivations.md.

    >>> from privrelease.noise import make_source
    >>> select_partitions(["a"] * 500 + ["b"] * 400 + ["rare"], 1.0, 1e-6, make_source(0))
    ['a', 'b']
    """
    s = pd.Series(np.asarray(values, dtype=object)).dropna().astype(str)
    counts = s.value_counts()
    if counts.empty:
        return []
    keep = keep_mask(counts.to_numpy(), epsilon, delta, source)[0]
    return sorted(counts.index[keep].tolist())


def keep_mask(counts, epsilon: float, delta: float, source, size: int = 1) -> np.ndarray:
    """``size`` independent keep/drop decisions for levels with the given (positive) counts:
    a ``(size, levels)`` boolean array, ``count + Lap(b) > tau`` (see :func:`select_partitions`)."""
    b, tau = partition_parameters(float(epsilon), float(delta))
    counts = np.asarray(counts, dtype=np.float64)
    noisy = counts[None, :] + np.asarray(source.laplace(b, (int(size), counts.size)), dtype=np.float64)
    return noisy > tau

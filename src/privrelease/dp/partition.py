"""Stable partition selection: which levels of a categorical column to declare, under (epsilon, delta)-DP.

Each level present in the data gets its count plus Laplace noise; the level is kept when
the noisy count exceeds a threshold calibrated to delta, so a level held by a single
record (which would identify it) is kept only with probability about delta. Levels not
kept are merged into one "other" level of the drafted schema. The missing values count as one
more, public, key: never subject to the threshold. The noisy counts of the kept levels and of
the missing key are post-processed into the draft's missing-value flag and its warning on the
share of records in "other"; they are never written into the schema.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from typing import NamedTuple

from ..errors import ParameterError


class Selection(NamedTuple):
    """What :func:`select_levels` releases: the kept levels (sorted), their noisy counts, the noisy count
    of the missing values, and the Laplace scale ``b`` of every count."""

    levels: list
    counts: np.ndarray
    missing: float
    b: float


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
    return select_levels(values, epsilon, delta, source).levels


def select_levels(values, epsilon: float, delta: float, source) -> Selection:
    """:func:`select_partitions` with the noisy counts of the kept levels and of the missing values
    (None or NaN in ``values``): the same (epsilon, delta)-DP.

    Notes
    -----
    The missing values are one more key, public (every column may have them), so never
    thresholded: adding or removing a missing value moves its count by 1, a ``1/b``-DP step like a
    level present in both datasets. A kept level's noisy count is released only when the level is
    kept: for a level in both datasets it is the Laplace mechanism (``1/b``, which also covers
    its keep/drop decision); a level only in the larger dataset is released (decision and count)
    with probability ``delta0``. So every add/remove step stays ``(1/b, delta0)``-DP and the
    replace-one guarantee of :func:`select_partitions` holds. See docs/derivations.md.
    """
    v = pd.Series(np.asarray(values, dtype=object))
    s = v.dropna().astype(str)
    counts = s.value_counts()
    noisy, b, tau = noisy_counts(np.r_[counts.to_numpy(dtype=np.float64), float(len(v) - len(s))], epsilon, delta,
                                 source)
    noisy = noisy[0]
    keep = noisy[:-1] > tau
    order = np.argsort(counts.index[keep].to_numpy(dtype=object).astype(str), kind="stable")
    return Selection(counts.index[keep].to_numpy(dtype=object)[order].tolist(), noisy[:-1][keep][order],
                     float(noisy[-1]), b)


def noisy_counts(counts, epsilon: float, delta: float, source, size: int = 1) -> tuple[np.ndarray, float, float]:
    """``size`` independent noisy copies of ``counts`` (a ``(size, keys)`` array, ``count + Lap(b)``) with the
    scale ``b`` and threshold ``tau`` of :func:`partition_parameters`."""
    b, tau = partition_parameters(float(epsilon), float(delta))
    counts = np.asarray(counts, dtype=np.float64)
    return counts[None, :] + np.asarray(source.laplace(b, (int(size), counts.size)), dtype=np.float64), b, tau


def keep_mask(counts, epsilon: float, delta: float, source, size: int = 1) -> np.ndarray:
    """``size`` independent keep/drop decisions for levels with the given (positive) counts:
    a ``(size, levels)`` boolean array, ``count + Lap(b) > tau`` (see :func:`select_partitions`)."""
    noisy, _, tau = noisy_counts(counts, epsilon, delta, source, size)
    return noisy > tau

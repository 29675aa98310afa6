"""The public precision of a numeric column: the grid its released values lie on.

A column with a resolution (``step``, or 1 for ``integer: true``) releases only absolute
multiples of it, ``k * step``, restricted to the grid points inside ``[lower, upper]``. A
released value is the double nearest to the decimal ``k * step`` (written with as many
decimals as the step: 0.1 gives 0.3, never 0.30000000000000004), so that a CSV holds it at
the declared precision and a Parquet file holds the same number. Snapping is post-processing
of a released value: it costs no privacy.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

#: Largest magnitude of a whole-number column written as int64 (above it a double cannot count units).
_EXACT = 2.0**53


def decimals(step: float) -> int:
    """Decimals needed to write multiples of ``step`` (0.1 -> 1, 0.25 -> 2, 5 -> 0).

    >>> decimals(0.1), decimals(0.25), decimals(5), decimals(1e-3)
    (1, 2, 0, 3)
    """
    exponent = Decimal(repr(float(step))).normalize().as_tuple().exponent
    return max(0, -int(exponent))


def grid_range(lower: float, upper: float, step: float) -> tuple[int, int]:
    """``(kmin, kmax)``: the multiples ``k * step`` inside ``[lower, upper]`` (kmin > kmax: none).

    >>> grid_range(0.3, 1.0, 0.1), grid_range(0.5, 10.5, 1.0), grid_range(0.1, 0.2, 0.3)
    ((3, 10), (1, 10), (1, 0))
    """
    lo, hi = lower / step, upper / step
    return (math.ceil(lo - 1e-9 * max(1.0, abs(lo))), math.floor(hi + 1e-9 * max(1.0, abs(hi))))


def snap(v: np.ndarray, lower: float, upper: float, step: float) -> np.ndarray:
    """Values moved to the nearest multiple of ``step`` inside ``[lower, upper]`` (NaN stays NaN).

    >>> snap(np.array([0.04, 0.26, 0.99, np.nan]), 0.1, 0.9, 0.1).tolist()
    [0.1, 0.3, 0.9, nan]
    >>> snap(np.array([-0.04]), -1.0, 1.0, 0.1).tolist()  # zero, never -0.0
    [0.0]
    """
    kmin, kmax = grid_range(lower, upper, step)
    k = np.clip(np.rint(np.asarray(v, dtype=np.float64) / step), kmin, kmax) + 0.0  # -0.0 -> 0.0
    out = k * step
    d = decimals(step)
    return np.round(out, d) if d <= 15 else out


def is_whole(lower: float, upper: float, step: float | None) -> bool:
    """Whether a column's released values are whole numbers that int64 holds exactly."""
    return (step is not None and float(step) == round(step)
            and max(abs(lower), abs(upper)) < _EXACT)


def shortest_decimal(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The decimal with the fewest significant digits in each interval ``[lo, hi)`` (``lo`` where
    ``hi <= lo``).

    A column declared without a precision is released inside public cells; a value drawn inside a
    fine cell is written as the shortest number the cell holds, so that a value recorded as 27 comes
    back as 27, not 27.0000087 (the cells are public: this is post-processing).

    >>> shortest_decimal(np.array([26.99996, 0.1234]), np.array([27.00004, 0.1266])).tolist()
    [27.0, 0.124]
    """
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    width = hi - lo
    out = lo.copy()
    ok = width > 0
    if not ok.any():
        return out
    e = np.floor(np.log10(width[ok]))  # 10**e <= width: a multiple of 10**e lies in [lo, hi)
    a, b, chosen = lo[ok], hi[ok], np.full(int(ok.sum()), np.nan)
    for extra in (3, 2, 1, 0):  # the coarsest power of ten with a multiple inside wins
        unit = 10.0 ** (e + extra)
        c = np.ceil(a / unit) * unit
        inside = np.isnan(chosen) & (c >= a) & (c < b)
        chosen[inside] = c[inside]
    out[ok] = np.where(np.isnan(chosen), a, chosen)
    return out


def significant(v: np.ndarray, digits: int = 12) -> np.ndarray:
    """``v`` rounded to ``digits`` significant digits (drops the last bits that a mapping through the
    encoded scale adds, so 27.000000000000004 is written 27).

    >>> significant(np.array([27.000000000000004, 0.30000000000000004, 0.0])).tolist()
    [27.0, 0.3, 0.0]
    """
    v = np.asarray(v, dtype=np.float64)
    mag = np.where(np.isfinite(v) & (v != 0), np.floor(np.log10(np.abs(np.where(v == 0, 1.0, v)))), 0.0)
    scale = 10.0 ** (digits - 1 - mag)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.rint(v * scale) / scale
    return np.where(np.isfinite(r), r, v)

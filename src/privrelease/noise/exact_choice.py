"""Exact sampling of the exponential mechanism's distribution from random bits (every source's selection).

:func:`exponential_choice` returns, for each row of ``scores`` (the candidates on the last axis),
the index k with probability exactly

    base_k exp(rate scores_k) / sum_j base_j exp(rate scores_j)

for the given floating-point numbers (``scores`` finite or ``-inf``, ``base >= 0``, ``rate > 0``),
read as exact rationals. It is inverse-CDF sampling of an infinitely precise uniform U whose bits
are drawn lazily:

* Fast path (vectorised). The weights ``base_k exp(-rate (s_max - s_k))`` and their cumulative
  sums are computed in floating point; every cumulative probability is then within
  :func:`fast_margin` of the exact one (relative rounding of the gap, the product, ``exp`` (assumed
  within 2^-50, a few ulps; libraries are within 1-4), the cumulative sum of m non-negative terms
  (m 2^-53) and the final division; the absolute error of underflowed weights is below 2^-1070,
  negligible because the total is at least 2^-900 on this path). U's first 53 bits give the
  interval ``[u0, u0 + 2^-53)``; when it lies inside one candidate's cell with that margin on both
  sides, every U in it selects that candidate, so the choice is exact.
* Exact path (:func:`_exact_row`, for the rare rest: probability about ``2 m margin`` per row). The
  cumulative probabilities are enclosed in intervals with ``decimal`` arithmetic (directed
  rounding for sums and products, ``exp`` correctly rounded and widened by one unit), and U's
  bits are doubled with fresh ones (the digits following them) until U's interval lies in one
  cell. This terminates with probability 1.

Every candidate with positive weight is therefore possible, however far it trails (a Gumbel-max
draw from floating-point uniforms cannot pick a candidate more than about 40.5 behind in logit),
and the probabilities are those of the formula, not an approximation of them. The running time
depends on the data (the exact path's precision); a release is an offline computation whose only
output is the selection, so the time is not part of what is published.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Callable

import numpy as np

from ..errors import ParameterError

_ROWS = 1 << 15  # rows per block of the fast path (bounds temporary memory)
_TOTAL_FLOOR = 2.0**-900  # below this total weight a row takes the exact path (underflow matters)


def fast_margin(m: int) -> float:
    """A bound on the error of every floating-point cumulative probability of m candidates.

    The cumulative sum of m weights each within 2^-42 (relative) of its exact value has relative
    error below ``m 2^-53 + 2^-42``; the ratio of two such sums (plus its rounding) below twice that
    plus 2^-53. ``2^-40 + (m + 2) 2^-50`` exceeds it for every m.
    """
    return 2.0**-40 + (m + 2) * 2.0**-50


def exponential_choice(scores, rate: float, base, words: Callable[[int], np.ndarray]) -> np.ndarray:
    """Index per row of ``scores`` (B x m), drawn exactly from ``base_k exp(rate scores_k)`` (normalised).

    ``base``: None (all ones) or non-negative weights broadcastable to ``scores`` (data-independent);
    ``words(n)``: n uniform random 64-bit words (the source's bits).
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] == 0:
        raise ParameterError(f"selection scores must be a non-empty (rows, candidates) array, got shape {S.shape}")
    if not (rate > 0) or not math.isfinite(rate):
        raise ParameterError(f"the selection rate must be a finite number > 0, got {rate}")
    b = np.ones_like(S) if base is None else np.broadcast_to(np.asarray(base, dtype=np.float64), S.shape)
    valid = (b > 0) & (S > -np.inf)
    if np.any(np.isnan(S)) or np.any(np.isnan(b)) or np.any(S == np.inf) or np.any(b < 0):
        raise ParameterError("selection scores must be finite or -inf and the base measure finite and >= 0")
    if not valid.any(axis=1).all():
        raise ParameterError("a selection has no candidate of positive base measure")
    out = np.empty(S.shape[0], dtype=np.int64)
    for start in range(0, S.shape[0], _ROWS):
        rows = slice(start, start + _ROWS)
        out[rows] = _choose_block(S[rows], float(rate), b[rows], valid[rows], words)
    return out


def _choose_block(S, rate, b, valid, words) -> np.ndarray:
    B, m = S.shape
    smax = np.max(np.where(valid, S, -np.inf), axis=1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = rate * (smax[:, None] - S)
        w = np.where(valid, b * np.exp(-np.where(valid, x, 0.0)), 0.0)
    csum = np.cumsum(w, axis=1)
    total = csum[:, -1].copy()
    cdf = csum / total[:, None]
    cdf[:, -1] = 1.0  # exact
    top = words(B) >> np.uint64(11)
    u0 = top.astype(np.float64) * 2.0**-53  # exact: 53-bit integers
    k = np.minimum((cdf <= u0[:, None]).sum(axis=1), m - 1)
    r = np.arange(B)
    margin = fast_margin(m)
    lower = np.where(k > 0, cdf[r, np.maximum(k - 1, 0)] + margin, 0.0)
    upper = np.where(k < m - 1, cdf[r, k] - margin, 1.0)
    ok = (u0 >= lower) & (u0 + 2.0**-53 <= upper) & (total >= _TOTAL_FLOOR) & valid[r, k]
    for i in np.flatnonzero(~ok):
        k[i] = _exact_row(S[i], rate, b[i], valid[i], int(top[i]), words)
    return k


def _exp_interval(t: decimal.Decimal, ctx: decimal.Context) -> tuple[decimal.Decimal, decimal.Decimal]:
    """An interval holding ``exp(t)`` for ``t <= 0`` (``exp`` is correctly rounded; one unit either side)."""
    if t < -decimal.Decimal(10) ** 15:  # below the exponent range: (0, tiniest)
        return decimal.Decimal(0), decimal.Decimal(1).scaleb(ctx.Etiny(), ctx)
    e = t.exp(ctx)
    return e.next_minus(ctx), e.next_plus(ctx)


def _exact_row(s, rate: float, b, valid, top53: int, words, digits: int = 40) -> int:
    """The exact inverse-CDF choice for one row, U's first 53 bits being ``top53``."""
    D = decimal.Decimal
    idx = np.flatnonzero(valid)
    num, bits = top53, 53  # U in [num / 2^bits, (num + 1) / 2^bits)
    while True:
        lo_ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_FLOOR, Emin=decimal.MIN_EMIN,
                                 Emax=decimal.MAX_EMAX)
        hi_ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_CEILING, Emin=decimal.MIN_EMIN,
                                 Emax=decimal.MAX_EMAX)
        smax = max(D(float(s[j])) for j in idx)
        lo_sum, hi_sum = D(0), D(0)
        cum_lo, cum_hi = [], []
        for j in range(len(s)):
            if valid[j]:
                t_lo = lo_ctx.multiply(D(rate), lo_ctx.subtract(D(float(s[j])), smax))  # t <= 0, rounded down
                t_hi = hi_ctx.multiply(D(rate), hi_ctx.subtract(D(float(s[j])), smax))
                e_lo, _ = _exp_interval(t_lo, lo_ctx)
                _, e_hi = _exp_interval(min(t_hi, D(0)), hi_ctx)
                lo_sum = lo_ctx.add(lo_sum, lo_ctx.multiply(D(float(b[j])), e_lo))
                hi_sum = hi_ctx.add(hi_sum, hi_ctx.multiply(D(float(b[j])), e_hi))
            cum_lo.append(lo_sum)
            cum_hi.append(hi_sum)
        total_lo, total_hi = Fraction(lo_sum), Fraction(hi_sum)
        u_lo, u_hi = Fraction(num, 1 << bits), Fraction(num + 1, 1 << bits)
        prev_hi = Fraction(0)  # upper bound of the cell's left end
        for j in range(len(s)):
            right_lo = Fraction(1) if j == len(s) - 1 else Fraction(cum_lo[j]) / total_hi
            if valid[j] and prev_hi <= u_lo and u_hi <= right_lo:
                return j
            prev_hi = Fraction(1) if j == len(s) - 1 else min(Fraction(1), Fraction(cum_hi[j]) / total_lo)
        more = -(-bits // 64)  # U's bits double, and the digits follow them
        for w in words(more):
            num = (num << 64) | int(w)
        bits += 64 * more
        digits = max(digits, 30 + (bits * 31) // 100)

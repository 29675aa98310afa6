"""DP bounds of a numeric column: the scale first, then DP quantiles over public candidates.

Used to propose numeric bounds without reading them off the data
(:func:`privrelease.dp.draft.dp_draft`). Two steps (:func:`dp_scaled_bounds`):

* the scale (:func:`approx_range`, as SmartNoise's and Google's ``approx_bounds``): a Laplace
  histogram over signed octaves (and one bin of the missing values), kept where the noisy
  count clears a threshold;
* two exponential-mechanism quantiles (:func:`dp_quantile`) over the readable numbers (two
  significant digits, :func:`default_grid`) inside that range, or over an evenly spaced grid
  of a public range ``[lo, hi]`` given by the user (:func:`range_grid`).

Quantiles over the whole wide grid alone (2,881 candidates from -9.9e12 to 9.9e12) are useless
at small budgets: every candidate beyond the data scores about ``-q n`` and there are
thousands of them (measured in docs/history/dp-draft.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import ParameterError
from .selection import exponential_mechanism

QUANTILE_SENSITIVITY = 1.0  # L-infinity sensitivity of the quantile utility (see dp_quantile)
MANTISSAS = tuple(round(1 + 0.1 * i, 1) for i in range(90))  # 1.0, 1.1, ..., 9.9: two significant digits
EXPONENTS = range(-3, 13)


def default_grid() -> np.ndarray:
    """The wide public grid: 0 and ``±m·10^k`` (two significant digits, 0.001 to 9.9e12), sorted.

    >>> g = default_grid(); len(g), float(g[len(g) // 2]), float(g[-1]), 17.0 in g, 0.0023 in g
    (2881, 0.0, 9900000000000.0, True, True)
    """
    pos = sorted({float(f"{m}e{k}") for k in EXPONENTS for m in MANTISSAS})
    return np.array([-v for v in reversed(pos)] + [0.0] + pos)


def range_grid(lo: float, hi: float, n_points: int = 1001) -> np.ndarray:
    """``n_points`` evenly spaced public candidates on ``[lo, hi]``, rounded to readable decimals.

    >>> range_grid(0, 1, 11).tolist()[:4]
    [0.0, 0.1, 0.2, 0.3]
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError(f"a public range needs finite lo < hi, got [{lo}, {hi}]")
    if int(n_points) < 2:
        raise ParameterError(f"a grid needs at least 2 points, got {n_points}")
    step = (hi - lo) / (int(n_points) - 1)
    digits = max(0, 2 - math.floor(math.log10(step)))
    return np.unique(np.round(np.linspace(lo, hi, int(n_points)), digits))


def quantile_scores(values, q: float, grid) -> np.ndarray:
    """The utility of every candidate of ``grid`` as the ``q``-quantile of ``values`` (see :func:`dp_quantile`)."""
    if not (0.0 <= float(q) <= 1.0):
        raise ParameterError(f"q must be in [0, 1], got {q}")
    x = np.sort(np.asarray(values, dtype=np.float64))
    grid = np.asarray(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or np.any(np.diff(grid) <= 0):
        raise ParameterError("the candidate grid must be a non-empty increasing 1-d array")
    below = np.searchsorted(x, grid, side="left")  # B(c) = #{x < c}
    upto = np.searchsorted(x, grid, side="right")  # A(c) = #{x <= c}
    target = float(q) * x.size
    return -(np.maximum(target - upto, 0.0) + np.maximum(below - target, 0.0))


def dp_quantile(values, q: float, epsilon: float, grid, source, size: int | None = None):
    """An epsilon-DP estimate of the ``q``-quantile of ``values``: one candidate of the public ``grid``.

    Parameters
    ----------
    values : 1-d array of finite numbers (the private column)
    q : float in [0, 1]
    epsilon : float > 0
    grid : sorted 1-d array of public candidates (fixed before the data are seen)
    source : privrelease.noise.RandomSource
    size : None for one estimate (a float), or the number of independent estimates (an array)

    Notes
    -----
    Utility of candidate ``c``: minus the distance from ``q n`` to the interval
    ``[B(c), A(c)]`` with ``B(c) = #{x_i < c}`` and ``A(c) = #{x_i <= c}``, i.e. ``u(c) = 0``
    when ``c`` is a q-quantile (ties included: with a point mass, e.g. most values 0, the
    candidate at the mass scores 0 rather than tying with every candidate below the data).
    Replacing one record changes each of ``B(c)`` and ``A(c)`` by at most 1 (the old value
    leaves, the new one enters), the distance from a fixed point (``n`` is public under the
    replace-one relation) to an interval is 1-Lipschitz in its endpoints, so the L-infinity
    sensitivity of ``u`` is 1. The exponential mechanism
    (:func:`~privrelease.dp.selection.exponential_mechanism`) with ``Delta_u = 1`` picks a
    candidate with probability proportional to ``exp(epsilon u(c) / 2)``: epsilon-DP. The
    grid is public, so which candidates exist reveals nothing. See docs/derivations.md.

    >>> from privrelease.noise import make_source
    >>> x = np.arange(1000.0)
    >>> dp_quantile(x, 0.5, 10.0, range_grid(0, 1000, 101), make_source(0))
    500.0
    """
    scores = quantile_scores(values, q, grid)
    grid = np.asarray(grid, dtype=np.float64)
    if size is not None:
        scores = np.broadcast_to(scores, (int(size), scores.size))
    idx = exponential_mechanism(scores, float(epsilon), QUANTILE_SENSITIVITY, source)
    return grid[idx] if size is not None else float(grid[idx])


def dp_bounds(values, epsilon: float, grid, source, quantiles=(0.01, 0.99)) -> tuple[float, float]:
    """Lower and upper bounds as the DP ``quantiles`` of ``values``: epsilon-DP in total (epsilon/2 each).

    When noise puts the lower bound at or above the upper one, the upper becomes the next
    grid candidate (post-processing).
    """
    lo_q, hi_q = quantiles
    lo = dp_quantile(values, lo_q, epsilon / 2, grid, source)
    hi = dp_quantile(values, hi_q, epsilon / 2, grid, source)
    if hi <= lo:
        grid = np.asarray(grid, dtype=np.float64)
        above = grid[grid > lo]
        hi = float(above[0]) if above.size else lo + 1.0
    return lo, hi


# ---- the scale first: a signed magnitude histogram (as SmartNoise's and Google's approx_bounds) ----

MAGNITUDE_EXPONENTS = range(-10, 43)  # bin edges +-2^-10 .. +-2^42
SCALE_SENSITIVITY = 2.0  # L1: one record replaced moves one bin count down by 1 and one up by 1
SCALE_FALSE_BIN_RATE = 0.001  # the chance that some empty bin widens the range
SCALE_STEP_RATE = 0.05  # the chance that a run grows from its end into a given empty bin
SCALE_HELD_SHARE = 0.9  # a range holding less of the (noisy) values is not supported: no bound
SCALE_MARGIN = (2, 2)  # octaves added to the range towards 0 and away from 0 (tails too thin for their bins)
MIN_QUANTILE_SIGNAL = 3.0  # below it, the quantile step is skipped (see dp_scaled_bounds)
QUANTILE_MISS_RATE = 0.1  # the quantile step runs where its choice lands beyond the data at most this often
MIN_THINNED = 8  # a thinned grid of a date's candidates (dp_scaled_bounds) holds at least this many
FIRST_YEAR, LAST_YEAR = 1900, 2100  # a date column's year bins (approx_year_range); dates beyond count in the end bins


def magnitude_edges() -> np.ndarray:
    """The public edges of the signed magnitude bins: ``-2^42 < ... < -2^-10 < 2^-10 < ... < 2^42``
    (105 bins: one per octave on each side and one around 0; values beyond the ends count in the end bins).

    >>> e = magnitude_edges(); e.size - 1, float(e[0]), float(e[52]), float(e[53])
    (105, -4398046511104.0, -0.0009765625, 0.0009765625)
    """
    pos = [2.0 ** k for k in MAGNITUDE_EXPONENTS]
    return np.array([-v for v in reversed(pos)] + pos)


def magnitude_counts(values) -> np.ndarray:
    """How many of ``values`` fall in each bin of :func:`magnitude_edges`, and how many are missing (NaN) in
    one more bin at the end (106 counts: one record, one bin; values beyond the ends count in the end bins).

    >>> magnitude_counts([1.5, 3.0, np.nan])[[63, 64, 105]].tolist()
    [1.0, 1.0, 1.0]
    """
    return bin_counts(values, magnitude_edges())


def bin_counts(values, edges: np.ndarray) -> np.ndarray:
    """How many of ``values`` fall in each bin between consecutive ``edges`` (values beyond the ends in the end
    bins), and how many are missing (NaN) in one more bin at the end: one record, one bin."""
    v = np.asarray(values, dtype=np.float64)
    idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, edges.size - 2)
    idx[np.isnan(v)] = edges.size - 1  # the missing bin
    return np.bincount(idx, minlength=edges.size).astype(np.float64)


def noisy_magnitudes(values, epsilon: float, source) -> tuple[np.ndarray, float]:
    """The epsilon-DP magnitude histogram of ``values`` (its last bin: the missing values) and its Laplace
    scale ``b = 2 / epsilon``.

    Notes
    -----
    Every record is in exactly one bin of :func:`magnitude_counts` (a missing value in the missing
    bin), or in none (a value that is not a number, counted nowhere). Replacing one record moves
    one count down by at most 1 and one up by at most 1: L1 sensitivity 2, so Laplace noise of
    scale ``2 / epsilon`` in every bin is epsilon-DP. The missing bin costs nothing more: it is
    one more bin of the same histogram. This is the only access to the values;
    :func:`magnitude_range` and the draft's missing-value flag are post-processing. See
    docs/derivations.md.
    """
    counts = magnitude_counts(values)
    noisy, b = source.add_laplace(counts, SCALE_SENSITIVITY, float(epsilon), counts.size)
    return np.asarray(noisy, dtype=np.float64), float(b)


def laplace_threshold(b: float, rate: float, bins: int = 1) -> float:
    """The noisy count that an empty bin exceeds with probability ``rate / bins``: ``b ln(bins / (2 rate))``
    (``P[Lap(b) > t] = exp(-t / b) / 2``); with ``bins`` bins, some empty one does with probability at most ``rate``."""
    return float(b) * math.log(bins / (2.0 * rate))


def kept_span(h: np.ndarray, b: float, present: float, zero: int | None = None) -> tuple[int, int] | None:
    """The first and last bins of the kept runs of a noisy histogram (:func:`magnitude_range` says which runs are
    kept; runs split at bin ``zero``, which is kept on the run threshold alone, and a run beside it kept with it),
    or None when none is kept or they hold less than :data:`SCALE_HELD_SHARE` of ``present`` (post-processing)."""
    above = h > laplace_threshold(b, SCALE_STEP_RATE)
    kept = np.zeros(h.size, dtype=bool)
    if zero is not None:
        kept[zero] = above[zero]
    runs, start = [], None
    for k in range(h.size + 1):  # the runs, split at the zero bin
        if start is not None and (k == h.size or not above[k] or k == zero):
            runs.append((h[start:k].sum(), start, k))
            start = None
        if k < h.size and k != zero and above[k] and start is None:
            start = k
    step = laplace_threshold(b, SCALE_STEP_RATE)
    for mass, a, c in runs:
        # a run next to the kept zero bin grows from it, as a run grows from its end (SCALE_STEP_RATE a bin)
        beside = zero is not None and bool(kept[zero]) and (a == zero + 1 or c == zero)
        if beside or run_is_kept(mass - (c - a) * step, c - a, b, h.size):
            kept[a:c] = True
    if not kept.any():
        return None
    i, j = int(np.flatnonzero(kept)[0]), int(np.flatnonzero(kept)[-1])
    held = h[i:j + 1].sum() + b * math.sqrt(2.0 * (j - i + 1))  # give or take one standard deviation
    return (i, j) if held >= SCALE_HELD_SHARE * float(present) else None


def run_is_kept(excess: float, k: int, b: float, bins: int) -> bool:
    """Whether a run of ``k`` neighbouring bins, each above the run threshold ``t = b ln(1 / (2 SCALE_STEP_RATE))``, and
    together ``excess`` above ``k t``, is kept (post-processing): when empty bins would give such a run, from a
    given bin, with probability at most ``SCALE_FALSE_BIN_RATE / (bins 2^k)``.

    Above ``t`` the Laplace noise of an empty bin is ``t`` plus an exponential of mean ``b`` (its tail is
    memoryless), and it clears ``t`` with probability ``SCALE_STEP_RATE``: ``k`` empty bins in a row clear it with
    probability ``SCALE_STEP_RATE^k`` and then exceed it by a Gamma(k, b) sum. A run is kept when ``SCALE_STEP_RATE^k
    P[Gamma(k, b) >= excess] <= SCALE_FALSE_BIN_RATE / (bins 2^k)``: summed over the run lengths and the ``bins``
    starts, an empty bin starts a kept run in at most ``SCALE_FALSE_BIN_RATE`` of drafts. One bin: its count above
    ``b ln(2 bins / (2 SCALE_FALSE_BIN_RATE))``. A run's total tested against the one-bin threshold, as before,
    kept two or three noisy far bins in a row in 0.5 % of the drafts of one column (a public table's experience,
    -1 to 51, drafted from -2^42; ``docs/derivations.md``).

    >>> b = 2 / 0.0385
    >>> run_is_kept(610 - 119.6, 1, b, 105), run_is_kept(338 + 236 - 2 * 119.6, 2, b, 105)
    (True, False)
    """
    from scipy.stats import gamma

    if excess <= 0:
        return False
    return SCALE_STEP_RATE ** k * float(gamma.sf(excess / b, k)) <= SCALE_FALSE_BIN_RATE / (bins * 2.0 ** k)


def year_edges() -> np.ndarray:
    """The public edges of the calendar-year bins of a date column, as days since 1970-01-01: 1 January of
    every year from :data:`FIRST_YEAR` to :data:`LAST_YEAR` + 1 (dates beyond the ends count in the end bins)."""
    years = np.array([f"{y}-01-01" for y in range(FIRST_YEAR, LAST_YEAR + 2)], dtype="datetime64[D]")
    return (years - np.datetime64("1970-01-01", "D")).astype(np.float64)


def year_counts(days) -> np.ndarray:
    """How many of the dates ``days`` fall in each calendar year of :func:`year_edges`, and how many are missing
    (NaN) in one more bin at the end (one record, one bin; dates beyond the ends count in the end bins)."""
    return bin_counts(days, year_edges())


def noisy_years(days, epsilon: float, source) -> tuple[np.ndarray, float]:
    """The epsilon-DP year histogram of a date column (its last bin: the missing values) and its Laplace scale
    ``b = 2 / epsilon``: :func:`year_counts` with Laplace noise (L1 sensitivity 2, as :func:`noisy_magnitudes`).
    The only access to the values in :func:`approx_year_range`."""
    counts = year_counts(days)
    noisy, b = source.add_laplace(counts, SCALE_SENSITIVITY, float(epsilon), counts.size)
    return np.asarray(noisy, dtype=np.float64), float(b)


def approx_year_range(days, epsilon: float, source, n: float | None = None) -> Scale:
    """An epsilon-DP range of whole calendar years holding the dates ``days`` (days since 1970-01-01, NaN:
    missing), and the noisy count of the missing ones: the scale step of a date column.

    Notes
    -----
    The magnitudes of day numbers are a poor scale for dates (every date from 1992 to 2014 lies in one octave),
    so a date column's histogram has a bin per calendar year (public edges, :func:`year_edges`) and one for the
    missing values. One record is in one bin: replacing it moves one count down and one up by at most 1, L1
    sensitivity 2, Laplace noise of scale ``2 / epsilon`` in every bin, epsilon-DP; the range (runs, kept runs,
    support: :func:`kept_span`) is post-processing, from 1 January of the first kept year to 31 December of
    the last. See docs/derivations.md.
    """
    edges = year_edges()
    noisy, b = noisy_years(days, epsilon, source)
    h, missing = noisy[:-1], float(noisy[-1])
    present = h.sum() if n is None else float(n) - min(max(missing, 0.0), float(n))
    span = kept_span(h, float(b), present)
    if span is None:
        return Scale(math.nan, math.nan, False, missing, float(b))
    return Scale(float(edges[span[0]]), float(edges[span[1] + 1]) - 1.0, True, missing, float(b))


def integer_bins() -> np.ndarray:
    """The bins of :func:`magnitude_edges` that can hold an integer: the zero bin and those of magnitude 1 and more
    (the bins strictly between -1 and 1 hold fractions only).

    >>> k = integer_bins(); int(k.size), float(magnitude_edges()[k[42]]), float(magnitude_edges()[k[44]])
    (86, -1.0, 1.0)
    """
    e = magnitude_edges()
    k = np.arange(e.size - 1)
    return k[(k == k.size // 2) | (np.abs(e[:-1]) >= 1.0)]


def magnitude_range(noisy, b: float, present: float, margin=SCALE_MARGIN,
                    integer: bool = False) -> tuple[float, float, bool]:
    """The range of the values read from their noisy magnitude histogram (post-processing): ``(lo, hi, supported)``.

    *Runs*: maximal runs of neighbouring bins whose noisy counts exceed
    ``laplace_threshold(b, SCALE_STEP_RATE)``, split at the zero bin (a run never crosses 0). A
    run is *kept* when empty bins would give it with probability at most ``SCALE_FALSE_BIN_RATE / (bins 2^k)``
    (:func:`run_is_kept`: one bin above ``laplace_threshold(b, SCALE_FALSE_BIN_RATE / 2, bins)``, a longer run by its
    excess over the run threshold), so that an empty bin starts a kept run in at most 0.1 % of drafts; the zero bin
    (named in advance, and harmless when kept: a bound of 0) is kept when it exceeds the run
    threshold, and a run beside it is kept with it (it grows from the zero bin as a run grows from its end, each
    empty bin with probability ``SCALE_STEP_RATE``; a column of small counts, most of them 0, has its ones and
    twos in such a run). With ``integer`` (the column's stated kind: public) the bins strictly between -1 and 1
    but the zero bin are left out (:func:`integer_bins`): they hold no value, so ``[1, 2)`` is the zero bin's
    neighbour. The range runs from the lowest to the highest kept bin. It is *supported* when
    its noisy count, plus one standard deviation of its noise, holds at least
    :data:`SCALE_HELD_SHARE` of ``present``; else ``(nan, nan, False)``: the budget cannot tell
    where the values are, and no bound is written. A supported range is widened by
    ``margin`` octaves (towards 0, away from 0; :data:`SCALE_MARGIN`) at each end (tails too thin
    for their bins to show); an end within ``2^margin[0]`` of 0 on the side of 0 becomes 0.

    >>> h = np.zeros(105); h[[63, 64, 65]] = 1000.0  # [1, 8)
    >>> magnitude_range(h, 10.0, 3000.0)
    (0.0, 32.0, True)
    >>> magnitude_range(h, 10.0, 6000.0)[2]  # half of the values are not in the range
    False
    """
    h = np.asarray(noisy, dtype=np.float64)
    edges, zero = magnitude_edges(), h.size // 2
    bins = integer_bins() if integer else np.arange(h.size)
    span = kept_span(h[bins], b, present, int(np.flatnonzero(bins == zero)[0]))
    if span is None:
        return math.nan, math.nan, False
    i, j = (int(bins[k]) for k in span)
    inward, outward = (2.0 ** m for m in margin)
    lo = edges[i] * outward if i < zero else (0.0 if i == zero or edges[i] <= inward else edges[i] / inward)
    if j > zero:
        hi = edges[j + 1] * outward
    else:
        hi = 1.0 if i == zero else (0.0 if j == zero or -edges[j + 1] <= inward else edges[j + 1] / inward)
    return float(lo), float(hi), True


class Scale(NamedTuple):
    """What the magnitude histogram says of a column: its range (``nan`` when not ``supported``), the noisy
    count of its missing values and the Laplace scale ``b`` of every count."""

    lo: float
    hi: float
    supported: bool
    missing: float
    b: float
    quantiles: bool = False  # the bounds are DP quantiles (else the range's magnitudes)


def approx_range(values, epsilon: float, source, n: float | None = None, margin=SCALE_MARGIN,
                 integer: bool = False) -> Scale:
    """An epsilon-DP range of the values (NaN: missing) and the noisy count of the missing ones.

    :func:`noisy_magnitudes` (the measurement) then :func:`magnitude_range` (post-processing) with
    ``present``: the public ``n`` less the noisy missing count (in ``[0, n]``), or without ``n`` the
    noisy total of the value bins. See docs/derivations.md.
    """
    noisy, b = noisy_magnitudes(values, epsilon, source)
    h, missing = noisy[:-1], float(noisy[-1])
    present = h.sum() if n is None else float(n) - min(max(missing, 0.0), float(n))
    lo, hi, supported = magnitude_range(h, b, present, margin, integer)
    return Scale(lo, hi, supported, missing, b)


def outer_edges(lo: float, hi: float) -> tuple[float, float]:
    """The magnitude edges next below ``lo`` and next above ``hi`` (themselves at the ends).

    >>> outer_edges(16.0, 128.0)
    (8.0, 256.0)
    """
    edges = magnitude_edges()
    i, j = int(np.searchsorted(edges, lo)), int(np.searchsorted(edges, hi))
    return float(edges[max(i - 1, 0)]), float(edges[min(j + 1, edges.size - 1)])


def readable_grid(lo: float, hi: float) -> np.ndarray:
    """The readable candidates of :func:`default_grid` inside ``[lo, hi]``, with ``lo`` and ``hi`` themselves.

    >>> g = readable_grid(16, 128); float(g[0]), 17.0 in g, 90.0 in g, float(g[-1]), len(g)
    (16.0, True, True, 128.0, 88)
    """
    g = default_grid()
    return np.unique(np.r_[float(lo), g[(g > lo) & (g < hi)], float(hi)])


def dp_scaled_bounds(values, epsilon: float, source, quantiles=(0.01, 0.99), scale_share: float = 0.4,
                     n: int | None = None, candidates=None, margin=SCALE_MARGIN, dates: bool = False,
                     integer: bool = False) -> Scale:
    """Bounds in two steps, epsilon-DP in total: :func:`approx_range` with ``scale_share * epsilon``,
    then :func:`dp_bounds` over the readable candidates of that range (and the next magnitude
    edge on each side, and 0) with the rest. ``values``: the column's numbers, NaN for its missing
    values; ``n``: the public number of records (else ``len(values)``). ``candidates(lo, hi)``
    replaces the readable candidates (e.g. evenly spaced days for dates); ``margin`` goes to
    :func:`approx_range`, with ``integer`` (the column holds whole numbers: public).

    When the quantiles cannot tell candidates apart (``epsilon_q min(q, 1 - q) n / 2`` below
    :data:`MIN_QUANTILE_SIGNAL` for the public ``n``: every candidate beyond the data is then
    nearly as likely as the quantile), the range's edges are the bounds and the scale gets all
    of epsilon; when that signal is below ``ln(K / QUANTILE_MISS_RATE)`` for the ``K`` candidates of the
    range found, the range's edges are the bounds too (the quantiles' share unspent). With ``dates`` (days
    since 1970-01-01) the range is whole calendar years (:func:`approx_year_range`) and, where the signal is
    below that line, the quantiles choose among evenly spaced candidates of the grid, ``K =
    QUANTILE_MISS_RATE e^signal`` of them (at least :data:`MIN_THINNED`), each chosen bound then moved to the
    next candidate outward. Returns the
    :class:`Scale` of :func:`approx_range` with the bounds as ``lo`` and ``hi``.
    """
    n = len(values) if n is None else int(n)
    signal = (1.0 - scale_share) * epsilon / 2 * min(quantiles[0], 1.0 - quantiles[1]) * n / 2  # eps_q min(q) n / 2
    scaled = (lambda e: approx_year_range(values, e, source, n)) if dates else (
        lambda e: approx_range(values, e, source, n, margin, integer))
    if signal < MIN_QUANTILE_SIGNAL:
        return scaled(epsilon)
    scale = scaled(scale_share * epsilon)
    if not scale.supported:  # no bound: the quantiles' share is left unspent
        return scale
    # the threshold is strict, so the bins at the ends of the data often miss it: one candidate
    # further out on each side (the next edge), not a whole bin of candidates beyond the data,
    # and 0 (a tail of the other sign, too thin for its bins to clear the threshold)
    a, b = scale.lo, scale.hi
    grid = (candidates or readable_grid)(a, b) if dates else np.union1d((candidates or readable_grid)(a, b),
                                                                         np.r_[outer_edges(a, b), 0.0])
    coarse = False
    if signal < math.log(grid.size / QUANTILE_MISS_RATE):
        # each of the grid's candidates beyond the data is exp(-signal) as likely as the quantile: with this
        # many of them the choice would often land beyond the data, past the range's own edges (the
        # quantiles' share is left unspent; the grid is public given the range) ...
        k = int(QUANTILE_MISS_RATE * math.exp(signal))
        if not dates or k < MIN_THINNED:
            return scale
        # ... or, for dates (whose range is whole years), every m-th candidate, as many as the signal tells
        # apart, each bound then widened to the next one outward
        grid = grid[np.unique(np.round(np.linspace(0, grid.size - 1, k)).astype(int))]
        coarse = True
    x = np.asarray(values, dtype=np.float64)
    lo, hi = dp_bounds(x[~np.isnan(x)], (1.0 - scale_share) * epsilon, grid, source, quantiles)
    if coarse:
        lo = float(grid[max(int(np.searchsorted(grid, lo)) - 1, 0)])
        hi = float(grid[min(int(np.searchsorted(grid, hi)) + 1, grid.size - 1)])
    return scale._replace(lo=lo, hi=hi, quantiles=True)

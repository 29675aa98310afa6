"""The schema draft's warnings (:mod:`privrelease.dp.draft`): each says, from the draft's noisy counts
(post-processing) or public facts, what the draft could not decide and the fix, one line per column, or one line
for several columns that the same thing befell."""

from __future__ import annotations

import math

import numpy as np

from ..errors import shorten_list
from ..schema.values import integer_unsure_line
from .quantiles import laplace_threshold

OTHER_NOTABLE_SHARE = 0.01  # a share of the records in '(other)' worth a warning
MISSING_SURE_RATE = 0.001  # the chance that a column without missing values is drafted so without a warning


def say_summaries(ctx, profile_epsilon: float) -> None:
    """The warnings that name several columns at once, each in one line."""
    _say_magnitudes(ctx)
    if ctx.unsure:
        ctx.warnings.append(integer_unsure_line(ctx.unsure, profile_epsilon, ctx.n))
    _say_unread(ctx)
    for kind, said in ctx.undecided.items():
        ctx.warnings.append(said[0][2] if len(said) == 1 else _said_together(kind, said, ctx.n))


def _said_together(kind: str, said: list, n: int) -> str:
    """One line for the columns that the budget could not draft alike (``said``: ``(name, figure, line)``, the
    figure a level's threshold in records or a column's epsilon for its bounds)."""
    names, figures = [c for c, _, _ in said], [f for _, f, _ in said]
    if kind == "levels":
        what = (f"no level cleared the DP threshold (a level needs about {max(figures):,.0f} records at this budget, "
                f"n = {n:,}): declare their levels (--levels FILE)")
    else:
        eps = f"{min(figures):.3g}" + (f" to {max(figures):.3g}" if max(figures) > min(figures) else "")
        what = (f"the budget ({eps} for a column's bounds, n = {n:,}) cannot tell where their values are; no bounds "
                f"drafted: state them in the schema (public), or give --range COLUMN=lo,hi")
    return f"{len(said)} columns: {what}, or more epsilon: {shorten_list(names, len(names))}"


def _say_magnitudes(ctx) -> None:
    """One warning naming the columns whose drafted bounds are magnitudes (:func:`dp_scaled_bounds` skipped
    their quantiles), with the fix."""
    if ctx.magnitudes:
        ctx.warnings.append(
            f"{len(ctx.magnitudes)} column(s) got bounds at powers of two around their values, not their "
            f"{ctx.quantiles[0]:g} and {ctx.quantiles[1]:g} quantiles: at epsilon {ctx.eps_c:.3g} a column "
            f"(n = {ctx.n:,}) the quantiles would be mostly noise, and such wide bounds leave room for a release's "
            f"noise to place a few values far beyond the data; state public bounds (--range, or in the schema) "
            f"or draft with more epsilon: {shorten_list(ctx.magnitudes, 12)}")


def _say_unread(ctx) -> None:
    """One warning naming the columns of declared levels drafted ``missing: allowed`` without a look (their levels
    cost nothing, so nothing of them was read), with the fix: a complete one would get a few missing values, the
    noise's share of its missing cell (Ecdat's OFP: 0.2-1.9 % in each of seven complete yes/no columns)."""
    if ctx.unread:
        ctx.warnings.append(
            f"{len(ctx.unread)} column(s) with declared levels were not read (their levels cost nothing) and allow "
            f"missing values; if they have none, state it (--complete {','.join(ctx.unread)}), or the release will "
            f"write a few missing values in them")


def say_missing(name: str, noisy: float, b: float, ctx) -> None:
    """Say, with its DP estimate, that a column was drafted ``missing: allowed`` on a noisy missing count that a
    column holding none reaches more than ``MISSING_SURE_RATE`` of the time (Laplace ``b``), so that it may hold
    none: at the public threshold a complete column is drafted so ``MISSING_FLAG_RATE`` of the time, and the
    release then writes a few missing values in it (post-processing of the released noisy count)."""
    sd = b * math.sqrt(2.0)
    if noisy < laplace_threshold(b, MISSING_SURE_RATE):
        ctx.warnings.append(
            f"column '{name}': drafted 'missing: allowed' on about {100 * noisy / ctx.n:.1f}% of its records missing (a "
            f"DP estimate, give or take {100 * sd / ctx.n:.1f}%); if it holds none, state it (--complete {name}), or "
            f"the release will write a few missing values in it")


def say_other_share(name: str, other: str, sel, ctx) -> None:
    """Say, with its DP estimate, how much of a column went to ``other`` when that share is notable: above
    :data:`OTHER_NOTABLE_SHARE` of n and twice the standard deviation of its noise (post-processing of
    the selection's noisy counts)."""
    rest = ctx.n - float(np.sum(sel.counts)) - max(sel.missing, 0.0)
    sd = sel.b * math.sqrt(2.0 * (len(sel.counts) + 1))
    if rest > max(OTHER_NOTABLE_SHARE * ctx.n, 2.0 * sd):
        ctx.warnings.append(
            f"column '{name}': about {100 * rest / ctx.n:.1f}% of its records (a DP estimate, give or take "
            f"{100 * sd / ctx.n:.1f}%) hold levels too rare to keep under DP and are released as '{other}'; declare "
            f"its levels (--levels FILE) to keep them")

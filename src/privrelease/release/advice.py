"""Warnings at release time from public quantities only: the number of records n, epsilon and the schema.

Nothing here reads the data, so the warnings cost no budget and say nothing about any record.
Both rules compare the noise a release needs with the records it has, through one noise scale:

    sigma = 2 d / epsilon

the scale of the Laplace noise on each cell of a one-way histogram when epsilon is split evenly
over the d columns' histograms (one record replaced moves two cells of each histogram by one).
It is a yardstick, not any one mechanism's exact noise (the default spends its budget in zCDP
over more statistics), chosen because every mechanism must at least describe each column.

Budget rule
    A column of k cells (k = 20 for a numeric column, as the 1-way TVD of ``evaluate`` bins it;
    its levels for a categorical one) receives noise of expected absolute size sigma in each cell,
    so its released distribution is off by about ``tau = k sigma / (2 n) = k d / (epsilon n)`` in
    total variation from the noise alone. With k the mean over the columns: warn when tau > 0.1,
    and name the epsilon that brings it to 0.1. Measured on samples of the Adult table with the
    default mechanism (docs/history/public-warnings.md): releases with tau > 0.1 had a 1-way TVD of
    0.27 to 0.71; with tau <= 0.043, 0.007 to 0.17.

Label rule
    A label of L levels leaves about n / L records per class, and every per-class statistic
    (class counts, per-class marginals or moments) carries noise of about sigma. Warn when the
    average class holds fewer than 10 sigma records (the noise then exceeds a tenth of the class),
    that is when ``n / L < 20 d / epsilon``, and name the epsilon that meets it.
"""

from __future__ import annotations

import warnings

from ..errors import BudgetWarning

NUMERIC_CELLS = 20  #: cells of a numeric column in the budget rule (the 1-way TVD's bins)
MAX_NOISE_TVD = 0.1  #: the budget rule's threshold on tau
CLASS_NOISE_RATIO = 10  #: the label rule: records per class >= this many times sigma


def noise_scale(d: int, epsilon: float) -> float:
    """sigma = 2 d / epsilon: Laplace scale per histogram cell with epsilon split over d columns."""
    return 2.0 * d / epsilon


def expected_noise_tvd(schema, n: int, epsilon: float) -> float:
    """tau = mean cells x d / (epsilon n): the 1-way TVD the noise alone causes, about (module docstring)."""
    cells = [NUMERIC_CELLS if c.kind == "numeric" else c.width for c in schema.columns]
    return sum(cells) / len(cells) * noise_scale(len(cells), epsilon) / (2.0 * n)


def warn_public(schema, n: int, epsilon: float | None) -> None:
    """The release-time warnings of the module docstring (nothing without an epsilon or a column)."""
    if epsilon is None or not schema.columns or n < 1:
        return
    d = len(schema.columns)
    tau = expected_noise_tvd(schema, n, epsilon)
    if tau > MAX_NOISE_TVD:
        need = epsilon * tau / MAX_NOISE_TVD
        warnings.warn(
            f"epsilon={epsilon:g} is small for {n:,} records and {d} columns: noise alone is expected to move each "
            f"column's distribution by about {min(tau, 1.0):.2g} in total variation (mean cells per column x columns "
            f"/ (epsilon x n) = {tau:.2g} > {MAX_NOISE_TVD:g}); epsilon >= {need:.2g}, fewer columns or fewer "
            f"levels bring it under {MAX_NOISE_TVD:g}", BudgetWarning, stacklevel=3)
    label = schema.label
    if label is None or label.kind != "categorical":
        return
    levels, sigma = label.width, noise_scale(d, epsilon)
    if n / levels < CLASS_NOISE_RATIO * sigma:
        need = CLASS_NOISE_RATIO * 2.0 * d * levels / n
        merge = "merge rare levels or " if levels > 2 else ""
        warnings.warn(
            f"label column '{label.name}' has {levels} levels: {n:,} records give about {n / levels:,.0f} per level, "
            f"fewer than {CLASS_NOISE_RATIO} x the noise scale 2 x {d} columns / epsilon = {sigma:,.0f}, so "
            f"per-class statistics are mostly noise; {merge}use epsilon >= {need:.2g}", BudgetWarning, stacklevel=3)

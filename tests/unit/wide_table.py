"""A generated wide table like the tables users bring (46 columns: counts, money with exact zeros,
ratios, heavy tails) and the check of drafted bounds against it (issue 35, item 7)."""

import math

import numpy as np
import pandas as pd


def wide_table(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """46 numeric columns of the kinds a survey or claims table holds, ``n`` records."""
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(8):  # counts: small whole numbers, max about 10..30
        cols[f"count_{i}"] = rng.negative_binomial(1 + i % 3, 0.3 + 0.05 * i, n)
    for i in range(4):  # counts with a long tail (visits, nights)
        cols[f"visits_{i}"] = np.minimum(rng.geometric(0.05 + 0.03 * i, n) - 1, 400)
    for i in range(10):  # money with exact zeros: a zero share, cents, lognormal amounts
        amount = rng.lognormal(5.0 + 0.4 * i, 1.2, n).round(2)
        cols[f"spend_{i}"] = np.where(rng.random(n) < 0.2 + 0.05 * i, 0.0, amount)
    for i in range(6):  # incomes and prices: all positive, thousands to millions
        cols[f"income_{i}"] = rng.lognormal(10.5 + 0.3 * i, 0.5 + 0.1 * i, n).round(-2)
    for i in range(8):  # ratios and shares in [0, 1]
        cols[f"ratio_{i}"] = rng.beta(0.5 + i, 2.0 + i % 4, n).round(4)
    for i in range(4):  # heavy tails: Pareto-like sizes
        cols[f"size_{i}"] = ((rng.pareto(1.5 + 0.5 * i, n) + 1) * 10 ** (i % 3)).round(1)
    for i in range(4):  # signed amounts: balances, changes
        cols[f"balance_{i}"] = (rng.normal(0, 1, n) * rng.lognormal(6 + i, 1, n)).round(2)
    for i in range(2):  # ages and scores: a location away from zero
        cols[f"age_{i}"] = rng.integers(18 + 10 * i, 90, n)
    return pd.DataFrame(cols)


def bound_problems(df: pd.DataFrame, columns: dict) -> list[str]:
    """Every drafted bound that leaves more than 10 % of the data outside (the draft writes a range only
    when its noisy count holds 90 % of n: the bulk), or misses the 10 %..90 % range, or lies more than
    2^4 beyond the magnitude of its extreme (an absent bound is no problem)."""
    out = []
    for name, spec in columns.items():
        v = df[name].dropna().to_numpy(dtype=float)
        p5, p95 = np.quantile(v, [0.10, 0.90])
        lo, hi = spec.get("lower"), spec.get("upper")
        inside = np.mean((v >= (-np.inf if lo is None else lo)) & (v <= (np.inf if hi is None else hi)))
        if inside < 0.9:
            out.append(f"{name}: only {inside:.1%} of the values inside [{lo}, {hi}]")
        if lo is not None:
            if lo > p5:
                out.append(f"{name}: lower {lo:g} > p10 {p5:g}")
            if lo < _far(v.min(), -1):
                out.append(f"{name}: lower {lo:g} far below min {v.min():g}")
        if hi is not None:
            if hi < p95:
                out.append(f"{name}: upper {hi:g} < p90 {p95:g}")
            if hi > _far(v.max(), 1):
                out.append(f"{name}: upper {hi:g} far above max {v.max():g}")
    return out


def _far(x: float, side: int) -> float:
    """16 times as far out as ``x`` on ``side`` (+1 above, -1 below); from 0 (or the other sign),
    one unit plus 0: a count's lower bound may not be negative, a ratio's upper bound at most 16."""
    mag = abs(x) if np.sign(x) == side else 0.0
    return side * (16 * mag if mag >= 1 else 16 * max(mag, 2.0 ** -4)) if mag else 0.0 if side < 0 else 16.0

"""Numeric bounds of the DP schema draft at small budgets: which candidate scheme gives usable bounds.

Compares, per numeric column and per-column bounds budget, the former flat-score quantiles over
the wide default grid with the magnitude-histogram scale step followed by quantiles over the
readable candidates of its range (three splits), and the scale step alone. A bound pair is
*usable* when it covers at least 90 % of the column's values and is at most 10 times as wide as
its 1 %..99 % range. Data (none of them Adult or diabetes130): census_income_kdd (30,000 records
sampled), communities_crime (1,994), gfe (30,000 sampled), and two generated columns.

Run: ``nice python benchmarks/bench_draft_bounds.py`` (about 3 minutes); the table is in
docs/history/dp-draft.md.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from privrelease.dp.quantiles import approx_range, default_grid, dp_bounds, dp_scaled_bounds
from privrelease.noise import make_source

DATA = Path("/work/shared/datasets")
N = 30_000
BUDGETS = (0.01, 0.05, 0.25)
SEEDS = range(10)


def columns() -> dict:
    """name -> values of the numeric columns measured (those whose files are present)."""
    rng = np.random.default_rng(0)
    out = {"generated lognormal": rng.lognormal(11, 1, N).round(-3),
           "generated normal (negatives)": rng.normal(5000, 3000, N).round(2)}
    kdd = DATA / "census_income_kdd" / "census-income.test.gz"
    if kdd.exists():
        df = pd.read_csv(kdd, header=None, skipinitialspace=True).sample(N, random_state=0)
        for i, name in ((0, "age"), (5, "wage per hour"), (16, "capital gains"), (18, "dividends"),
                        (24, "instance weight"), (39, "weeks worked")):
            out[f"kdd {name}"] = df[i].to_numpy(dtype=float)
    crime = DATA / "communities_crime" / "communities.csv.gz"
    if crime.exists():
        df = pd.read_csv(crime, na_values="?")
        for name in ("population", "medIncome", "ViolentCrimesPerPop"):
            out[f"crime {name} (n=1,994)"] = df[name].dropna().to_numpy(dtype=float)
    gfe = DATA / "gfe" / "gfe.csv.gz"
    if gfe.exists():
        with gzip.open(gfe, "rt") as f:
            df = pd.read_csv(f, usecols=["timestamp", "0x", "0z"])
        df = df.sample(min(N, len(df)), random_state=0)
        for name in ("timestamp", "0x", "0z"):
            out[f"gfe {name}"] = df[name].to_numpy(dtype=float)
    return out


METHODS = {
    "flat quantiles, default grid (former)": lambda v, e, s: dp_bounds(v, e, default_grid(), s),
    "scale 0.2 + quantiles": lambda v, e, s: dp_scaled_bounds(v, e, s, scale_share=0.2)[:2],
    "scale 0.4 + quantiles (chosen)": lambda v, e, s: dp_scaled_bounds(v, e, s, scale_share=0.4)[:2],
    "scale 0.6 + quantiles": lambda v, e, s: dp_scaled_bounds(v, e, s, scale_share=0.6)[:2],
    "scale step alone": lambda v, e, s: approx_range(v, e, s)[:2],
}


def usable(v, lo, hi) -> tuple[bool, float]:
    q1, q99 = np.quantile(v, [0.01, 0.99])
    cover = np.mean((v >= lo) & (v <= hi))
    ratio = (hi - lo) / max(q99 - q1, 1e-12)
    return bool(cover >= 0.9 and ratio <= 10), ratio


def main() -> None:
    cols = columns()
    lines = ["| bounds budget per column | " + " | ".join(METHODS) + " |",
             "|---|" + "---|" * len(METHODS)]
    for eps in BUDGETS:
        cells = []
        for method in METHODS.values():
            ok, ratios = [], []
            for v in cols.values():
                for seed in SEEDS:
                    lo, hi = method(v, eps, make_source(seed))
                    u, r = usable(v, lo, hi)
                    ok.append(u)
                    ratios.append(r)
            cells.append(f"{np.mean(ok):.0%} (x{np.median(ratios):.2g})")
        lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
    print(f"{len(cols)} columns: {', '.join(cols)}; {len(SEEDS)} seeds each")
    print("\n".join(lines))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

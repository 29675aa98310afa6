"""Benchmark: a date-time column released as its calendar parts (day, time of day) against one column.

    PYTHONPATH=src python benchmarks/bench_calendar.py --seeds 3 --out benchmarks/results/calendar.json

On a generated police-stops-like table (a stop's minute over 2022-2023 with an hour-of-day pattern, fewer stops on
Sundays, the stop's reason following the hour and the arrest following the reason; about 31,000 records): the hour
of the day's and the weekday's TVD, (hour, reason) TVD, and the evaluation's 1-way and 2-way TVD (20 and 10 bins of
each column's whole range), with the default's ``capabilities.calendar_parts`` on and off, the same seeds.
Epsilon 1, delta 1e-6. The table is generated here (a tuning table: no real data).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REASONS = ["dui", "speed", "equipment", "other"]
SCHEMA = {"columns": {
    "stopped_at": {"type": "datetime", "lower": "2022-01-01", "upper": "2023-12-31", "step": "minute"},
    "district": {"type": "categorical", "categories": [f"D{i}" for i in range(8)]},
    "reason": {"type": "categorical", "categories": REASONS},
    "driver_age": {"type": "numeric", "lower": 16, "upper": 90, "integer": True},
    "arrest": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}}


def stops(n: int = 40_000, seed: int = 0) -> pd.DataFrame:
    """The generated table: days of 2022-2023 (Sundays half as busy, Fridays the busiest), 35 % of stops at night
    (21:00-02:59, mostly for drink-driving) and the rest from 07:00 to 20:59."""
    g = np.random.default_rng(seed)
    day = g.integers(0, 730, n)
    weekday = (day + 5) % 7  # 2022-01-01 was a Saturday
    keep = g.random(n) < np.where(weekday == 6, 0.5, np.where(weekday == 4, 1.0, 0.8))
    day = day[keep]
    m = day.size
    night = g.random(m) < 0.35
    hour = np.where(night, g.choice([21, 22, 23, 0, 1, 2], m, p=[.15, .2, .25, .2, .12, .08]),
                    g.choice(np.arange(7, 21), m))
    t = np.datetime64("2022-01-01T00:00") + (day * 1440 + hour * 60 + g.integers(0, 60, m)).astype("timedelta64[m]")
    reason = np.where(night, g.choice(REASONS, m, p=[.4, .3, .2, .1]), g.choice(REASONS, m, p=[.03, .6, .25, .12]))
    age = np.clip(np.round(g.normal(np.where(night, 27, 38), 10)), 16, 90).astype(int)
    arrest = np.where(g.random(m) < np.where(reason == "dui", 0.6, 0.06), "yes", "no")
    return pd.DataFrame({"stopped_at": pd.Series(t).dt.strftime("%Y-%m-%dT%H:%M"),
                         "district": g.choice([f"D{i}" for i in range(8)], m), "reason": reason, "driver_age": age,
                         "arrest": arrest})


def _tvd(a: pd.Series, b: pd.Series) -> float:
    return 0.5 * float(a.value_counts(normalize=True).sub(b.value_counts(normalize=True), fill_value=0).abs().sum())


def measure(real: pd.DataFrame, schema, parts: bool, seed: int) -> dict:
    from privrelease.evaluation.fidelity import tvd_1way, tvd_2way
    from privrelease.mechanisms import get_mechanism
    from privrelease.release import release

    cls = get_mechanism("gauss-copula")
    declared = cls.capabilities
    cls.capabilities = dataclasses.replace(declared, calendar_parts=parts)
    try:
        out = release(real, schema, "gauss-copula", 1.0, delta=1e-6, rng=seed).data
    finally:
        cls.capabilities = declared
    rt, st = pd.to_datetime(real["stopped_at"]), pd.to_datetime(out["stopped_at"])
    return {"hour_tvd": _tvd(rt.dt.hour, st.dt.hour), "weekday_tvd": _tvd(rt.dt.dayofweek, st.dt.dayofweek),
            "hour_reason_tvd": _tvd(rt.dt.hour.astype(str) + real["reason"], st.dt.hour.astype(str) + out["reason"]),
            "tvd_1way": float(np.mean(list(tvd_1way(real, out, schema).values()))),
            "tvd_2way": float(np.mean(list(tvd_2way(real, out, schema).values())))}


def main(argv=None):
    from privrelease.schema import Schema

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "calendar.json")
    a = ap.parse_args(argv)
    real, schema = stops(), Schema.from_dict(SCHEMA)
    runs = {name: [dict(seed=s, **measure(real, schema, parts, s)) for s in range(a.seeds)]
            for name, parts in (("one column", False), ("calendar parts", True))}
    summary = {name: {k: [float(np.mean([r[k] for r in rs])), float(np.std([r[k] for r in rs]))]
                      for k in rs[0] if k != "seed"} for name, rs in runs.items()}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE, check=False).stdout.strip()
    a.out.write_text(json.dumps({"commit": commit, "records": len(real), "command": "python benchmarks/bench_calendar.py "
                                 + " ".join(argv or sys.argv[1:]), "summary": summary, "runs": runs}, indent=1))
    for name, s in summary.items():
        print(name, " ".join(f"{k}={v[0]:.4f}±{v[1]:.4f}" for k, v in s.items()))


if __name__ == "__main__":
    main()

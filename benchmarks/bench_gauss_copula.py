"""Benchmarks of the gauss-copula release (numbers reported in docs/history/mixed-default.md).

Usage (from the repository root, PRIVRELEASE_DATA pointing at the shared data sets)::

    PYTHONPATH=src python benchmarks/bench_gauss_copula.py tune     # census_kdd, gas_drift, musk2 only
    PYTHONPATH=src python benchmarks/bench_gauss_copula.py report   # adult, diabetes130, hapt: 3 seeds

``tune`` writes ``docs/history/tuning-logs/gauss_copula_tune.jsonl`` (one line per configuration
and data set, appended); ``report`` writes ``benchmarks/results/gauss_copula_report.json``.
epsilon = 1, delta = min(1e-5, 0.1 / n), seeded noise (reproducible experiments).
The defaults were chosen on census_kdd, gas_drift and musk2; Adult, diabetes130 and HAPT
were not used to choose them.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from privrelease.experiments import mixed_tables as mt

OUT = Path(__file__).resolve().parent / "results"
LOGS = Path(__file__).resolve().parents[1] / "docs" / "history" / "tuning-logs"
TUNE_SETS = ("census_kdd", "gas_drift", "musk2")
TUNE_LOAD = {"census_kdd": {"max_train": 20_000}}  # 20,000 training rows keep the grid affordable
REPORT_SETS = ("adult", "diabetes130", "hapt")
GRID = {"by_label": ("auto", False), "marginal_share": (0.15, 0.25, 0.4)}


def _runs(name, data, mechanism, seeds, **params):
    runs = [mt.run_one(data, mechanism, s, pairs=(name != "hapt"), **params) for s in seeds]
    return {"data": name, "mechanism": mechanism, "params": params, "n_train": len(data[0]),
            "summary": mt.summarise(runs), "runs": runs}


def tune(sets=TUNE_SETS, seeds=(0,), grid=GRID):
    OUT.mkdir(exist_ok=True)
    keys = list(grid)
    with open(LOGS / "gauss_copula_tune.jsonl", "a") as f:
        for name in sets:
            data = mt.LOADERS[name](0, **TUNE_LOAD.get(name, {}))
            for values in itertools.product(*(grid[k] for k in keys)):
                params = {k: v for k, v in zip(keys, values) if v is not None}
                rec = _runs(name, data, "gauss-copula", seeds, **params)
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(name, params, {k: round(v["mean"], 4) for k, v in rec["summary"].items()}, flush=True)


def report(sets=REPORT_SETS, seeds=(0, 1, 2), mechanisms=("gauss-copula", "gauss-pca")):
    OUT.mkdir(exist_ok=True)
    out = []
    for name in sets:
        data = mt.LOADERS[name](0)
        real = mt.measure(data[0], data[0], data[1], data[2], data[3], pairs=False)  # train on real
        out.append({"data": name, "mechanism": "real data", "summary": real})
        print(name, "real", {k: round(v, 4) for k, v in real.items()}, flush=True)
        for mech in mechanisms:
            rec = _runs(name, data, mech, seeds)
            out.append(rec)
            print(name, mech, {k: (round(v["mean"], 4), round(v["sd"], 4)) for k, v in rec["summary"].items()},
                  flush=True)
            (OUT / "gauss_copula_report.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "report"
    sets = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    fn = {"tune": tune, "report": report}[cmd]
    fn(sets) if sets else fn()

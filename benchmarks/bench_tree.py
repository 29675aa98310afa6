"""Per-column fidelity of gauss-copula's numeric columns (the numbers in docs/history/numeric-trees.md).

    PYTHONPATH=src python benchmarks/bench_tree.py tune      # census_kdd, generated tables: the grid
    PYTHONPATH=src python benchmarks/bench_tree.py report    # adult, diabetes130: 3 seeds, defaults

For every numeric column: the two-sample KS statistic between real and released values, the
released median and p90 against the real ones (relative error; absolute, in steps, where the real
value is 0), the largest gap between the real and released share of a real atom (a value held by
at least 1 % of the records), and the share of released values at a bound where the real data has
none. Released values are compared at the column's resolution. ``report`` adds the benchmark's
1-way TVD and train-on-release scores (:func:`privrelease.experiments.mixed_tables.measure`) and
the release's CPU time. Raw results: ``docs/history/tuning-logs/tree_{tune,report}.jsonl`` (appended).
Defaults were chosen on census_kdd and the generated tables only; Adult and diabetes130 are
measured, not tuned on.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from privrelease.experiments import mixed_tables as mt
from privrelease.release import release
from privrelease.schema import Schema

OUT = Path(__file__).resolve().parents[1] / "docs" / "history" / "tuning-logs"


def generated(seed=0, n=20000):
    """Heavy-tailed money (0..2,000,000, median ~2,000, 6.7 % zeros, some negative bills), 0.1-step
    indicators with 10-26 values (40 % at one value), an integer count, two categoricals, a label."""
    g = np.random.default_rng(seed)
    y = (g.random(n) < 0.25).astype(int)
    money = np.where(g.random(n) < 0.067, 0, np.round(np.exp(g.normal(7.6 + 0.5 * y, 1.6, n))))
    bill = np.round(np.where(g.random(n) < 0.02, -g.exponential(300, n), g.exponential(900, n)))
    ind1 = np.round(np.where(g.random(n) < 0.4, 0.3, g.choice(np.arange(0, 2.6, 0.1), n)), 1)
    ind2 = np.round(np.clip(g.normal(0.5 + 0.2 * y, 0.2, n), 0, 0.9), 1)
    count = np.minimum(g.poisson(2 + y, n), 40)
    df = pd.DataFrame({"money": np.clip(money, 0, 2e6), "bill": np.clip(bill, -50000, 200000), "ind1": ind1,
                       "ind2": ind2, "count": count, "cat": g.choice(list("abcd"), n, p=[.4, .3, .2, .1]),
                       "sex": g.choice(["f", "m"], n), "label": np.where(y == 1, "yes", "no")})
    schema = Schema.from_dict({"columns": {
        "money": {"type": "numeric", "lower": 0, "upper": 2000000, "integer": True},
        "bill": {"type": "numeric", "lower": -50000, "upper": 200000, "integer": True},
        "ind1": {"type": "numeric", "lower": 0, "upper": 2.5, "step": 0.1},
        "ind2": {"type": "numeric", "lower": 0, "upper": 0.9, "step": 0.1},
        "count": {"type": "numeric", "lower": 0, "upper": 40, "integer": True},
        "cat": {"type": "categorical", "categories": list("abcd")},
        "sex": {"type": "categorical", "categories": ["f", "m"]},
        "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}})
    k = int(0.7 * n)
    return df.iloc[:k].reset_index(drop=True), df.iloc[k:].reset_index(drop=True), schema, "label"


def small(seed=0, n=344):
    """A table of 344 records: 4 numeric columns (0.1-step lengths, integer sizes) on wide public bounds."""
    g = np.random.default_rng(seed)
    sp = g.choice(3, n, p=[.44, .2, .36])
    df = pd.DataFrame({"length": np.round(38.8 + np.array([0, 10, 8.7])[sp] + g.normal(0, 2.7, n), 1),
                       "depth": np.round(np.array([18.3, 18.4, 15.0])[sp] + g.normal(0, 1.1, n), 1),
                       "flipper": np.round(np.array([190, 196, 217])[sp] + g.normal(0, 6.5, n)),
                       "mass": np.round(np.array([3700, 3733, 5076])[sp] + g.normal(0, 450, n)),
                       "island": g.choice(list("abc"), n), "sex": g.choice(["f", "m"], n),
                       "year": g.choice(["2007", "2008", "2009"], n), "species": np.array(list("ACG"))[sp]})
    schema = Schema.from_dict({"columns": {
        "length": {"type": "numeric", "lower": 0, "upper": 100, "step": 0.1},
        "depth": {"type": "numeric", "lower": 0, "upper": 40, "step": 0.1},
        "flipper": {"type": "numeric", "lower": 0, "upper": 300, "integer": True},
        "mass": {"type": "numeric", "lower": 0, "upper": 10000, "integer": True},
        "island": {"type": "categorical", "categories": list("abc")},
        "sex": {"type": "categorical", "categories": ["f", "m"]},
        "year": {"type": "categorical", "categories": ["2007", "2008", "2009"]},
        "species": {"type": "categorical", "categories": list("ACG"), "role": "label"}}})
    return df, df, schema, "species"


LOADERS = {"generated": generated, "small": small,
           "census_kdd": lambda seed=0: mt.load_census_kdd(0, max_train=20_000)}


def column_metrics(real: pd.Series, rel: pd.Series, col) -> dict:
    """KS, median / p90 error, worst atom gap and bound share of one numeric column."""
    r = col.resolution
    a, b = real.dropna().to_numpy(float), rel.dropna().to_numpy(float)
    if r:
        a, b = np.round(a / r) * r, np.round(b / r) * r
    out = {"ks": float(ks_2samp(a, b).statistic)}
    for name, q in (("median", 0.5), ("p90", 0.9)):
        qa, qb = np.quantile(a, q), np.quantile(b, q)
        out[name] = float(abs(qb - qa) / abs(qa)) if qa != 0 else float(abs(qb - qa) / (r or 1.0))
        out[name + "_real"], out[name + "_released"] = float(qa), float(qb)
    vals, cnt = np.unique(a, return_counts=True)
    atoms = vals[cnt >= 0.01 * a.size]
    gaps = [abs(np.mean(np.isclose(a, v)) - np.mean(np.isclose(b, v))) for v in atoms]
    out["atom_gap"] = float(max(gaps)) if gaps else 0.0
    out["atoms"] = int(atoms.size)
    bounds = (col.lower, col.upper)
    out["at_bound_real"] = float(np.mean(np.isin(a, bounds)))
    out["at_bound_released"] = float(np.mean(np.isin(b, bounds)))
    out["median_err_range"] = float(abs(np.median(b) - np.median(a)) / (col.upper - col.lower))
    return out


def run(name, data, seed, tstr=False, **params) -> dict:
    train, test, schema, label = data
    delta = min(1e-5, 0.1 / len(train))
    t = time.process_time()
    res = release(train, schema, "gauss-copula", 1.0, delta=delta, rng=seed, **params)
    cpu = time.process_time() - t
    cols = {c.name: column_metrics(train[c.name], res.data[c.name], c) for c in schema.columns
            if c.kind == "numeric" and c.name != label}
    rec = {"data": name, "seed": seed, "params": params, "code": os.environ.get("BENCH_CODE", "this branch"),
           "cpu_seconds": cpu, "columns": cols,
           "ks_worst": max(v["ks"] for v in cols.values()), "ks_mean": float(np.mean([v["ks"] for v in cols.values()]))}
    if tstr:
        rec["measure"] = mt.measure(train, res.data, test, schema, label, pairs=False)
    return rec


def _write(path, rec):
    OUT.mkdir(exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")
    short = {k: round(v, 3) for k, v in rec.items() if isinstance(v, float)}
    worst = {c: (round(v["ks"], 3), round(v["median"], 3), round(v["p90"], 3), round(v["atom_gap"], 3))
             for c, v in rec["columns"].items()}
    print(rec["data"], rec["seed"], rec["params"], short, worst, rec.get("measure", ""), flush=True)


def tune(sets=("generated", "small", "census_kdd"), seeds=(0, 1)):
    grid = [{}] + [{"branching": b} for b in (4, 8, 32)] + [{"split_sigmas": s} for s in (1.0, 6.0)]
    for name in sets:
        for seed in seeds:
            data = LOADERS[name](seed)
            for params in grid:
                _write(OUT / "tree_tune.jsonl", run(name, data, seed, **params))


def report(sets=("adult", "diabetes130"), seeds=(0, 1, 2)):
    for name in sets:
        data = mt.LOADERS[name](0)
        for seed in seeds:
            _write(OUT / "tree_report.jsonl", run(name, data, seed, tstr=True))


def summary():
    """Markdown tables of the raw results (means over seeds): per data set / code / parameters, then
    per column for the report sets."""
    rows = [json.loads(x) for f in ("tree_tune.jsonl", "tree_report.jsonl") if (OUT / f).exists()
            for x in open(OUT / f)]
    groups = {}
    for r in rows:
        groups.setdefault((r["data"], r.get("code", "this branch"), json.dumps(r["params"])), []).append(r)
    print("| data | code | params | seeds | KS worst | KS mean | median err (worst col) | p90 err (worst col) "
          "| atom gap (worst) | at a bound (worst col, real) | CPU s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (data, code, params), rs in groups.items():
        def worst(key):
            return np.mean([max(c[key] for c in r["columns"].values()) for r in rs])
        bound = np.mean([max(c["at_bound_released"] - c["at_bound_real"] for c in r["columns"].values()) for r in rs])
        print(f"| {data} | {code} | {params} | {len(rs)} | {np.mean([r['ks_worst'] for r in rs]):.3f} | "
              f"{np.mean([r['ks_mean'] for r in rs]):.3f} | {worst('median'):.3f} | {worst('p90'):.3f} | "
              f"{worst('atom_gap'):.3f} | {bound:.3f} | {np.mean([r['cpu_seconds'] for r in rs]):.2f} |")
    for (data, code, params), rs in groups.items():
        if "measure" not in rs[0]:
            continue
        m = {k: np.mean([r["measure"][k] for r in rs]) for k in rs[0]["measure"]}
        print(f"\n{data}, {code}: " + ", ".join(f"{k} {v:.4f}" for k, v in m.items()))
        print("\n| column | KS | median real / released | median err | p90 real / released | p90 err | atoms | worst atom gap |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for col in rs[0]["columns"]:
            cs = [r["columns"][col] for r in rs]
            mean = {k: np.mean([c[k] for c in cs]) for k in cs[0]}
            print(f"| {col} | {mean['ks']:.3f} | {mean['median_real']:g} / {mean['median_released']:g} | "
                  f"{mean['median']:.3f} | {mean['p90_real']:g} / {mean['p90_released']:g} | {mean['p90']:.3f} | "
                  f"{cs[0]['atoms']} | {mean['atom_gap']:.3f} |")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "report"
    sets = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    fn = {"tune": tune, "report": report, "summary": summary}[cmd]
    fn(sets) if sets else fn()


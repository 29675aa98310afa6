"""Benchmark: the joint structure a release keeps, the default's graphical model beside the mixture.

    PYTHONPATH=src python benchmarks/bench_structure.py --seeds 3 --out benchmarks/results/structure.json

On the generated loans table of ``bench_constraints.py`` (25,000 training records, 5,000 held out; no
constraint stated, so every rule must come from the model): 1-way, 2-way and 3-way (pair, label) TVD, a
sub-grade inside its grade (a code and its group), a rate inside its grade's range (a number inside its
area: A 6-10, B 10-14, C 15-19, one point of slack), logistic regression trained on the release, and each
heavy-tailed column's mean and 99th percentile against the real ones. Epsilon 1, delta 1e-6, the same seeds
for both releases. On census-income (``bench_mixed.py``'s tuning subset, when ``../shared/datasets`` is there):
the share of released rows whose detailed industry (occupation) code sits in the major group the real table gives
that code, per seed: of the default's releases, and with ``--census-releases DIR`` of every release a
``bench_mixed.py --save-releases DIR`` run saved (the peers, on the same data and seeds).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RANGE = {"A": 6, "B": 10, "C": 15}


def measure(train, test, schema, dependence: str, seed: int) -> dict:
    from bench_constraints import GRADE

    from privrelease.evaluation.fidelity import evaluate
    from privrelease.release import release

    t = time.process_time()
    r = release(train, schema, "gauss-copula", 1.0, delta=1e-6, rng=seed, dependence=dependence).data
    cpu = time.process_time() - t
    ev = evaluate(train, r, schema, test, "default", sdmetrics=False, baseline=False, seed=seed).summary()
    lo = r["grade"].map(RANGE)
    out = {"cpu_seconds": cpu, "tvd_1way": ev["tvd_1way"], "tvd_2way": ev["tvd_2way"], "tvd_3way": ev["tvd_3way"],
           "lr_auc": ev.get("lr_auc"), "sub_grade_in_grade": float(np.mean(r["sub_grade"].map(GRADE) == r["grade"])),
           "rate_in_grade_range": float(((r["rate"] >= lo - 1) & (r["rate"] <= lo + 4)).mean())}
    for c in ("fees", "interest", "total_paid"):
        out[f"{c}_mean_ratio"] = float(r[c].mean() / train[c].mean())
        out[f"{c}_p99_ratio"] = float(r[c].quantile(0.99) / train[c].quantile(0.99))
    return out


CODES = {"industry": ("detailed industry recode", "major industry code"),
         "occupation": ("detailed occupation recode", "major occupation code")}


def census_codes(seeds: int, releases: Path | None = None) -> dict | None:
    """The codes inside their groups on census-income (None when its data are absent): of the default's
    releases, and of every release ``bench_mixed.py --save-releases DIR`` saved under ``DIR/census_kdd``
    (``<release>-seed<k>.csv``: the peers' releases of that run, the same data, seeds and bounds)."""
    import pandas as pd
    from bench_mixed import load

    from privrelease.release import release

    try:
        train, _, schema, _ = load("census_kdd", None)
    except (FileNotFoundError, OSError):
        return None
    group = {k: train.groupby(c)[g].agg(lambda v: v.value_counts().index[0]) for k, (c, g) in CODES.items()}

    def in_groups(r) -> dict:
        return {k: float((r[g] == r[c].map(group[k])).mean()) for k, (c, g) in CODES.items()}

    runs = [{"release": "gauss-copula", "seed": seed,
             **in_groups(release(train, schema, "gauss-copula", 1.0, delta=1e-6, rng=seed).data)}
            for seed in range(seeds)]
    saved = sorted((releases / "census_kdd").glob("*-seed*.csv")) if releases is not None else []
    runs += [{"release": f.stem.rsplit("-seed", 1)[0], "seed": int(f.stem.rsplit("-seed", 1)[1]),
              **in_groups(pd.read_csv(f, dtype={c: str for pair in CODES.values() for c in pair}))} for f in saved]
    return {"real": in_groups(train), "runs": runs}


def main(argv=None):
    import sys

    sys.path.insert(0, str(HERE))
    from bench_constraints import loans

    from privrelease.schema import Schema

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "structure.json")
    ap.add_argument("--census-releases", type=Path, default=None,
                    help="measure census-income's codes on the releases a bench_mixed.py --save-releases run saved")
    a = ap.parse_args(argv)
    df, cols, _ = loans(30000)
    train, test = df.iloc[:25000].drop(columns=["loan_id"]), df.iloc[25000:].drop(columns=["loan_id"])
    schema = Schema.from_dict({"columns": cols})
    real = {"sub_grade_in_grade": 1.0,
            "rate_in_grade_range": float(((train["rate"] >= train["grade"].map(RANGE) - 1)
                                          & (train["rate"] <= train["grade"].map(RANGE) + 4)).mean())}
    runs = {dep: [dict(seed=s, **measure(train, test, schema, dep, s)) for s in range(a.seeds)]
            for dep in ("graphical", "mixture")}
    summary = {dep: {k: [float(np.mean([r[k] for r in rs])), float(np.std([r[k] for r in rs]))]
                     for k in rs[0] if k != "seed" and rs[0][k] is not None} for dep, rs in runs.items()}
    codes = census_codes(a.seeds, a.census_releases)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip()
    a.out.write_text(json.dumps({"commit": commit, "command": "python benchmarks/bench_structure.py "
                                 + " ".join(argv or sys.argv[1:]), "real": real, "summary": summary, "runs": runs,
                                 "census_codes": codes}, indent=1))
    if codes:
        print("census-income codes in their groups", codes["runs"])
    for dep, s in summary.items():
        print(dep, " ".join(f"{k}={v[0]:.3f}±{v[1]:.3f}" for k, v in s.items()))


if __name__ == "__main__":
    main()

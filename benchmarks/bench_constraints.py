"""The same release with and without the schema's constraints: shares of rows holding each rule, the
fidelity of the columns (1-, 2- and 3-way TVD, KS, train on release / test on real) and release CPU.

    python benchmarks/bench_constraints.py --seeds 0 1 2 --out benchmarks/results/constraints.json
    python benchmarks/bench_constraints.py --table listings.csv --schema plain.yaml --constrained c.yaml

Without ``--table`` it generates a loans table whose rules are those of a real loans book: a
sub-grade determines its grade, the balance is at most the loan, the last payment is after the
issue date, the total paid is the sum of its parts, and the loan id is unique. The evaluation uses
the schema without constraints for both releases, so the numbers compare the same columns.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from privrelease import Synthesizer
from privrelease.evaluation.fidelity import evaluate
from privrelease.schema import Schema
from privrelease.schema.constraints import ConstraintSet

SUBS = ["A1", "A2", "A3", "B1", "B2", "C1", "C2"]
GRADE = {s: s[0] for s in SUBS}


def loans(n: int, seed: int = 12345) -> tuple[pd.DataFrame, dict, list]:
    """A generated loans table, its schema's columns and its constraints."""
    rng = np.random.default_rng(seed)
    sub = rng.choice(SUBS, n, p=[.2, .15, .1, .2, .1, .15, .1])
    rate = np.array([{"A": 6, "B": 10, "C": 15}[s[0]] + int(s[1]) for s in sub]) + rng.normal(0, 0.5, n)
    loan = rng.integers(10, 400, n) * 100
    bal = np.round(loan * rng.beta(2, 2, n), 2)
    interest = np.round(bal * rate / 100 * rng.uniform(0.5, 1.5, n), 2)
    fees = np.where(rng.random(n) < 0.8, 0.0, np.round(rng.exponential(30, n), 2)).clip(0, 500)
    default = rng.random(n) < 1 / (1 + np.exp(-(rate - 12) / 2))
    issued = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 1000, n), unit="D")
    last = issued + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    df = pd.DataFrame({"loan_id": rng.permutation(n) + 100000, "grade": [GRADE[s] for s in sub], "sub_grade": sub,
                       "rate": rate.round(2), "loan_amount": loan, "balance": bal, "interest": interest, "fees": fees,
                       "total_paid": np.round(bal + interest + fees, 2), "issued": issued.strftime("%Y-%m-%d"),
                       "last_payment": last.strftime("%Y-%m-%d"), "default": np.where(default, "yes", "no")})
    columns = {
        "grade": {"type": "categorical", "categories": ["A", "B", "C"]},
        "sub_grade": {"type": "categorical", "categories": SUBS},
        "rate": {"type": "numeric", "lower": 0, "upper": 30, "step": 0.01},
        "loan_amount": {"type": "numeric", "lower": 0, "upper": 40000, "integer": True},
        "balance": {"type": "numeric", "lower": 0, "upper": 40000, "step": 0.01},
        "interest": {"type": "numeric", "lower": 0, "upper": 10000, "step": 0.01},
        "fees": {"type": "numeric", "lower": 0, "upper": 500, "step": 0.01},
        "total_paid": {"type": "numeric", "lower": 0, "upper": 60000, "step": 0.01},
        "issued": {"type": "datetime", "lower": "2015-01-01", "upper": "2017-12-31", "step": "day"},
        "last_payment": {"type": "datetime", "lower": "2015-01-01", "upper": "2019-12-31", "step": "day"},
        "default": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}
    constraints = [
        {"type": "hierarchy", "child": "sub_grade", "parent": "grade", "map": GRADE},
        {"type": "inequality", "low": "balance", "high": "loan_amount"},
        {"type": "inequality", "low": "issued", "high": "last_payment"},
        {"type": "formula", "column": "total_paid", "expression": "balance + interest + fees"},
        {"type": "unique", "column": "loan_id"}]
    return df, columns, constraints


def run(real, test, plain: Schema, constrained: Schema, seed: int, epsilon: float) -> list[dict]:
    rows = []
    rules = ConstraintSet(constrained, constrained.constraints)
    for name, schema in (("without", plain), ("with", constrained)):
        t0 = time.process_time()
        out = Synthesizer(schema, epsilon=epsilon, rng=seed).fit(real).released_
        cpu = time.process_time() - t0
        ev = evaluate(real, out, plain, test, sdmetrics=False)
        s = ev.summary()
        row = {"seed": seed, "constraints": name, "cpu_s": round(cpu, 3),
               **{k: s.get(k) for k in ("tvd_1way", "tvd_2way", "tvd_3way", "ks_max", "lr_auc", "gbdt_auc",
                                         "lr_macro_f1", "gbdt_macro_f1") if s.get(k) is not None}}
        touched = {n for c in constrained.constraints for n in (*c.reads, *c.derived) if n in plain.names}
        row["tvd_1way_touched"] = float(np.mean([v for k, v in ev.tvd_1way.items() if k in touched]))
        row["tvd_2way_touched"] = float(np.mean([v for (a, b), v in ev.tvd_2way.items() if a in touched or b in touched]))
        for label, share in rules.shares(out.assign(**({} if "loan_id" in out else {"loan_id": np.arange(len(out))}))).items():
            row[f"holds: {label}"] = share
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--rows", type=int, default=20000, help="generated table's records (train; a quarter more for test)")
    ap.add_argument("--table", help="a real table instead of the generated one (CSV)")
    ap.add_argument("--schema", help="with --table: its schema without constraints")
    ap.add_argument("--constrained", help="with --table: the same schema with constraints")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.table:
        plain, constrained = Schema.from_yaml(args.schema), Schema.from_yaml(args.constrained)
        text = {c.name: str for c in plain.categorical}
        df = pd.read_csv(args.table, dtype=text)
        df = df.sample(frac=1.0, random_state=0)
    else:
        df, columns, constraints = loans(args.rows + args.rows // 4)
        plain = Schema.from_dict({"columns": columns})
        constrained = Schema.from_dict({"columns": columns, "constraints": constraints})
    cut = len(df) * 4 // 5
    real, test = df.iloc[:cut].reset_index(drop=True), df.iloc[cut:].reset_index(drop=True)
    Synthesizer(plain, epsilon=args.epsilon, rng=0).fit(real.head(2000))  # compile the numba kernels before timing
    rows = [r for seed in args.seeds for r in run(real, test, plain, constrained, seed, args.epsilon)]
    table = pd.DataFrame(rows)
    print(table.to_string())
    summary = table.drop(columns="seed").groupby("constraints").agg(["mean", "std"]).round(4)
    print(summary.T.to_string())
    if args.out:
        import subprocess

        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip()
        args.out.write_text(json.dumps({"command": "python benchmarks/bench_constraints.py " + " ".join(argv or []),
                                        "commit": commit + (" (src modified)" if dirty else ""),
                                        "table": args.table or f"generated loans ({args.rows} + {args.rows // 4})",
                                        "epsilon": args.epsilon, "rows": rows}, indent=1))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])

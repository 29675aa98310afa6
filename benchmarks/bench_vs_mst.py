"""Benchmark: the default `gauss-pca` release against MST (smartnoise-synth) on UCI Adult, same run.

Both release the bundled Adult train file (30,162 records) at epsilon = 1, delta = 1e-5; a
standardised logistic regression is trained on each release and tested on the real Adult test
file (the evaluation of ``privrelease reproduce gauss-pca-bench``). Times are wall-clock seconds
of the release alone, measured in this run, and printed with their ratio.

MST needs discrete data. To keep bounds public, numeric columns are binned here into
``--bins`` equal-width bins over the schema's declared bounds (no preprocessing budget) and
decoded to bin midpoints; categorical columns are passed as they are.

MST runs in a separate Python environment that has ``smartnoise-synth`` (it pins versions of
OpenDP and pandas that differ from ours), e.g.::

    python -m venv /tmp/mstvenv && /tmp/mstvenv/bin/pip install smartnoise-synth
    PYTHONPATH=src python benchmarks/bench_vs_mst.py --mst-python /tmp/mstvenv/bin/python --runs 3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MST_CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
from snsynth import Synthesizer
a = json.loads(sys.argv[1])
df = pd.read_csv(a["train"], dtype=str)
for c, (lo, hi) in a["numeric"].items():
    x = pd.to_numeric(df[c]).clip(lo, hi).to_numpy(float)
    df[c] = np.minimum(((x - lo) / (hi - lo) * a["bins"]).astype(int), a["bins"] - 1).astype(str)
t = time.perf_counter()
synth = Synthesizer.create("mst", epsilon=a["epsilon"], delta=a["delta"])
out = synth.fit_sample(df, categorical_columns=list(df.columns), preprocessor_eps=0.0, nullable=False)
sec = time.perf_counter() - t
for c, (lo, hi) in a["numeric"].items():
    b = pd.to_numeric(out[c]).to_numpy(float)
    out[c] = lo + (b + 0.5) * (hi - lo) / a["bins"]
out.to_csv(a["out"], index=False)
print(json.dumps({"seconds": sec}))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mst-python", required=True, help="a Python with smartnoise-synth installed")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bins", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    a = ap.parse_args(argv)

    import pandas as pd

    from privrelease.datasets import example_paths, load_example
    from privrelease.experiments.gauss_pca_bench import evaluate
    from privrelease.release import release

    train, schema = load_example("adult", "train")
    test, _ = load_example("adult", "test")
    label = schema.label.name
    numeric = {c.name: (float(c.lower), float(c.upper)) for c in schema.columns if c.kind == "numeric"}
    rows = {"gauss-pca": [], "mst": []}
    with tempfile.TemporaryDirectory(prefix="privrelease-mst-") as d:
        train_csv = Path(d) / "train.csv"
        train[schema.names].to_csv(train_csv, index=False)  # the schema's columns only
        for r in range(a.runs):
            t = time.perf_counter()
            res = release(train, schema, "gauss-pca", a.epsilon, delta=a.delta, rng=None)
            sec = time.perf_counter() - t
            rows["gauss-pca"].append({**evaluate(res.data, test, schema, label), "seconds": sec})
            out = Path(d) / f"mst{r}.csv"
            args = {"train": str(train_csv), "numeric": numeric, "bins": a.bins, "epsilon": a.epsilon,
                    "delta": a.delta, "out": str(out)}
            proc = subprocess.run([a.mst_python, "-c", MST_CHILD, json.dumps(args)], capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit("MST failed: " + proc.stderr.strip().splitlines()[-1])
            sec = json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
            syn = pd.read_csv(out, dtype={c.name: str for c in schema.columns if c.kind != "numeric"})
            rows["mst"].append({**evaluate(syn, test, schema, label), "seconds": sec})
            print(f"run {r + 1}: gauss-pca {rows['gauss-pca'][-1]}, mst {rows['mst'][-1]}", file=sys.stderr)
    summary = {k: {m: float(np.mean([x[m] for x in v])) for m in ("accuracy", "auc", "seconds")}
               for k, v in rows.items()}
    print(f"\nAdult train -> test, epsilon = {a.epsilon}, delta = {a.delta}, {a.runs} runs each, "
          f"secure noise for gauss-pca; MST with {a.bins} public-bound bins per numeric column\n")
    print("| release | accuracy | AUC | seconds | MST time / this |")
    print("|---|---:|---:|---:|---:|")
    for k, v in summary.items():
        print(f"| {k} | {v['accuracy']:.3f} | {v['auc']:.3f} | {v['seconds']:.2f} | "
              f"{summary['mst']['seconds'] / v['seconds']:.1f} |")
    if a.json:
        a.json.write_text(json.dumps({"summary": summary, "runs": rows, "bins": a.bins}, indent=2))


if __name__ == "__main__":
    main()

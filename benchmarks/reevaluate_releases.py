"""Re-evaluate released tables saved by ``bench_mixed.py --save-releases DIR`` with today's measures.

    PYTHONPATH=src python benchmarks/reevaluate_releases.py DIR --datasets adult --out OUT.json

Every CSV under ``DIR/<data set>/`` (``<release>-seed<k>.csv``) is measured against the real training
table with :func:`privrelease.evaluation.fidelity.evaluate` (no SDMetrics, no train-on-release: the
cheap measures inside the bins and the 3-way TVD), so that peers run before a measure existed get it
without being run again. The 1-way and 2-way TVD are printed beside, to check them against the run
that produced the release.
"""

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mixed import load  # noqa: E402

KEYS = ("tvd_1way", "tvd_2way", "tvd_3way", "ks_max", "ks_mean", "w1_range_max", "atom_gap_max")


def main(argv=None):
    from privrelease.evaluation.fidelity import evaluate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("releases", type=Path)
    ap.add_argument("--datasets", default="adult")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    out = {}
    for ds in args.datasets.split(","):
        train, _test, schema = load(ds, args.data_dir)[:3]
        for f in sorted((args.releases / ds).glob("*.csv")):
            rel = pd.read_csv(f, dtype={c.name: str for c in schema.categorical})
            s = evaluate(train, rel, schema, None, sdmetrics=False, baseline=False).summary()
            out[f"{ds}/{f.stem}"] = {k: s.get(k) for k in KEYS}
            print(f"{ds}/{f.stem}: " + ", ".join(f"{k} {out[f'{ds}/{f.stem}'][k]:.3f}" for k in KEYS))
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

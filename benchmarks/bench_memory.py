"""Benchmark: peak memory of a streamed release as n grows (it should stay flat).

Generates numeric Parquet files of ``n x p`` rows (values in [0, 1], a few latent
factors) for each ``n`` given, releases each with ``release_file`` in its own
subprocess and prints the peak resident set size (``VmHWM``) after the imports
(baseline) and after the release, and the ratio of each peak to the smallest ``n``'s.

Usage::

    PYTHONPATH=src python benchmarks/bench_memory.py [--n 100000 400000 1000000] [--p 100]
        [--mechanism gauss-pca] [--chunk-rows 50000] [--categorical 0] [--param KEY=VALUE ...]

``--categorical K`` adds K categorical columns of :data:`LEVELS` levels cut from the same latent factors, so that
gauss-copula's graphical model runs; the table also lists the stages the release reported (one per pass
over the data, then the writing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys
args = json.loads(sys.argv[1])
from privrelease.release import release_file
from privrelease.schema import Schema
def hwm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
base = hwm()
stages = []
def progress(stage, rows):
    if not stages or stages[-1] != stage:
        stages.append(stage)
release_file(args["input"], Schema.from_yaml(args["schema"]), args["out"], mechanism=args["mechanism"],
             epsilon=1.0, rng=0, chunk_rows=args["chunk_rows"], progress=progress, **args["params"])  # delta: min(1e-5, 1/(10 n))
print(json.dumps({"baseline_mb": base, "peak_mb": hwm(), "stages": stages}))
"""


#: Levels of each generated categorical column (``--categorical``).
LEVELS = 6


def _generate(path: Path, n: int, p: int, seed: int = 0, categorical: int = 0, levels: int = LEVELS):
    """``p`` numeric columns in [0, 1] and ``categorical`` columns of ``levels`` levels (latent factors
    cut at their quantiles, so that the columns depend on each other and pairs are worth measuring)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    load = rng.normal(size=(4, p + categorical))
    names = [f"x{j:03d}" for j in range(p)] + [f"c{j:03d}" for j in range(categorical)]
    noise = 0.1 / 0.15  # numeric columns: 0.5 + 0.15 (factors + noise), clipped (as before the categorical ones)
    cuts = [statistics.NormalDist().inv_cdf(q) for q in np.linspace(0, 1, levels + 1)[1:-1]]
    sd = np.sqrt((load[:, p:] ** 2).sum(axis=0) + noise ** 2)
    writer = None
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        Z = rng.normal(size=(m, 4)) @ load + rng.normal(0, noise, (m, p + categorical))
        X = np.clip(0.5 + 0.15 * Z[:, :p], 0.0, 1.0)
        cols = {a: X[:, j] for j, a in enumerate(names[:p])}
        cols.update({a: np.searchsorted(cuts, Z[:, p + j] / sd[j]).astype(str) for j, a in enumerate(names[p:])})
        table = pa.table(cols)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    return names


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 400_000, 1_000_000])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--mechanism", default="gauss-pca")
    ap.add_argument("--chunk-rows", type=int, default=50_000)
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="a mechanism parameter, read as the CLI's --param is, e.g. dependence=mixture")
    ap.add_argument("--categorical", type=int, default=0,
                    help=f"categorical columns of {LEVELS} levels besides the numeric ones (gauss-copula's graphical model runs on them)")
    a = ap.parse_args(argv)
    import yaml

    from privrelease.cli.common import parse_params

    rows = []
    with tempfile.TemporaryDirectory(prefix="privrelease-mem-") as d:
        d = Path(d)
        for n in a.n:
            data = d / f"d{n}.parquet"
            names = _generate(data, n, a.p, categorical=a.categorical)
            schema = d / "schema.yaml"
            schema.write_text(yaml.safe_dump({"columns": {
                c: {"type": "numeric", "lower": 0.0, "upper": 1.0} if c.startswith("x")
                else {"type": "categorical", "categories": [str(k) for k in range(LEVELS)]} for c in names}}))
            args = {"input": str(data), "schema": str(schema), "out": str(d / f"o{n}.parquet"),
                    "mechanism": a.mechanism, "chunk_rows": a.chunk_rows, "params": parse_params(a.param)}
            t = time.time()
            res = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True,
                                 check=True)
            r = json.loads(res.stdout.strip().splitlines()[-1])
            r.update(n=n, wall_s=time.time() - t)
            rows.append(r)
            data.unlink()
            print(f"n = {n:,}: peak {r['peak_mb']:.0f} MB", file=sys.stderr)
    first = rows[0]["peak_mb"]
    print(f"\n{a.mechanism} {' '.join(a.param)}, p = {a.p} numeric + {a.categorical} categorical, "
          f"chunk_rows = {a.chunk_rows:,}\n")
    print("| n | wall (s) | baseline RSS (MB) | peak RSS (MB) | peak x smallest n | stages reported |")
    print("|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['wall_s']:.1f} | {r['baseline_mb']:.0f} | {r['peak_mb']:.0f} | {r['peak_mb'] / first:.2f} "
              f"| {', '.join(r['stages'])} |")


if __name__ == "__main__":
    main()

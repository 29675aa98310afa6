"""The default release's CPU and wall time with OpenBLAS's default threads against one BLAS thread.

    PYTHONPATH=src python benchmarks/bench_release_threads.py adult diabetes130 musk2 gas_drift hapt

Each table: one warm-up release, then alternately the default thread count and one BLAS thread
(``threadpoolctl``), ``--repeats`` times each, seed 0, epsilon 1. Since releases run with
:func:`privrelease.engine.release_threads`, the "default threads" arm only exists when that
context is bypassed, so the script patches it out for that arm.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    pipeline = importlib.import_module("privrelease.release.pipeline")
    from privrelease.experiments import mixed_tables as mt
    from privrelease.release import release

    single = pipeline.release_threads
    print("| table | BLAS threads | wall s | CPU s |\n| --- | --- | --- | --- |")
    for name in a.tables:
        train, _, schema, _ = mt.LOADERS[name](0)
        delta = min(1e-5, 0.1 / len(train))
        release(train, schema, "gauss-copula", 1.0, delta=delta, rng=9)
        times = {"default": [], "1": []}
        for _ in range(a.repeats):
            for arm in times:
                pipeline.release_threads = single if arm == "1" else contextlib.nullcontext
                t, c = time.perf_counter(), time.process_time()
                release(train, schema, "gauss-copula", 1.0, delta=delta, rng=0)
                times[arm].append((time.perf_counter() - t, time.process_time() - c))
        pipeline.release_threads = single
        for arm, v in times.items():
            w, c = np.mean(v, axis=0)
            print(f"| {name} | {arm} | {w:.2f} | {c:.2f} |", flush=True)


if __name__ == "__main__":
    main()

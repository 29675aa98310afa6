"""Benchmark: release the bundled Adult train file (30,162 records, 33 feature columns + label)
with jiang-lda, end to end (read, encode, noisy statistics, greedy L1 sampler, decode, write).

Run: PYTHONPATH=src python benchmarks/bench_jiang_lda.py [--repeats 3]
Target: at most 10 s per release on 2 cores. Prints the first run (which includes the
one-off numba compilation when the on-disk cache is cold, e.g. after the module changed)
and the best of the repeats, plus the sampler alone.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads (0: library default). On an oversubscribed machine multi-threaded "
                         "OpenBLAS spin-waits: a 30,000 x 33 Gram matrix then takes seconds instead of ms.")
    args = ap.parse_args(argv)
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.blas_threads, user_api="blas")

    from privrelease.datasets import example_paths, load_example
    from privrelease.mechanisms.jiang_lda import JiangLDA
    from privrelease.release import release_file
    from privrelease.schema import Encoder, Schema

    data_path, schema_path = example_paths("adult")
    schema = Schema.from_yaml(schema_path)
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "released.csv"
        for i in range(args.repeats):
            t0 = time.perf_counter()
            cert = release_file(data_path, schema, out, mechanism="jiang-lda", epsilon=args.epsilon, rng=i)
            times.append(time.perf_counter() - t0)
        n_out = cert.n_output_records
    df, _ = load_example("adult")
    feats = [c.name for c in schema.columns if c.role != "label"]
    enc = Encoder(schema, feats)
    X = enc.encode(df).X
    y = Encoder(schema, [schema.label.name]).encode(df).X.argmax(1)
    m = JiangLDA(args.epsilon, domain=enc.domain, rng=0).fit(X, y)
    t0 = time.perf_counter()
    m.sample()
    sampler = time.perf_counter() - t0
    result = {
        "records": int(n_out), "feature_columns": int(X.shape[1]), "cpus": os.cpu_count(),
        "release_file_first_s": round(times[0], 3), "release_file_best_s": round(min(times), 3),
        "sampler_only_s": round(sampler, 3), "blas_threads": args.blas_threads or "default", "target_s": 10.0, "ok_warm": bool(min(times) <= 10.0), "ok_first": bool(times[0] <= 10.0),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()

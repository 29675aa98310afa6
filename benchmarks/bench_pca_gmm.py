"""Benchmark: release time of pca-gmm as a ratio to the one-pass floor, and peak memory against n.

Usage::

    PYTHONPATH=src python benchmarks/bench_pca_gmm.py [--rows 1000000] [--cols 100] [--chunk-rows 100000]

Prints, for (a) the HAPT training features (7,415 x 206, 6 classes, if the data set is
present) and (b) a generated Parquet file of ``rows x cols`` numeric columns plus a 3-class
label, streamed in chunks:

* ``floor``: one pass over the file - read each chunk, encode it, accumulate the per-class
  sufficient statistics (``stream_stats``); no mechanism can release from the file faster
  than one pass;
* ``fit``: the same pass plus the pca-gmm fit (basis, noisy moments) via ``release_file``'s
  streaming path, without writing output (``fit / floor`` ratio);
* ``release``: ``release_file`` end to end with ``n`` synthetic records written as Parquet
  (``release / floor`` ratio; writing n records is extra work the floor does not do).

Peak memory (VmHWM of a fresh subprocess) and CPU time are measured for the floor pass and the release
at n/4 and n rows: with chunked streaming it should not grow with n beyond the output
writer's buffers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def generate(path: Path, rows: int, cols: int, seed: int = 0, chunk: int = 100_000):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(cols)]
    centres = rng.uniform(0.3, 0.7, (3, cols))
    writer = None
    for start in range(0, rows, chunk):
        m = min(chunk, rows - start)
        y = rng.integers(0, 3, m)
        X = np.clip(centres[y] + 0.1 * rng.standard_normal((m, cols)), 0, 1).astype(np.float32)
        table = pa.table({**{n: X[:, j] for j, n in enumerate(names)},
                          "label": pa.array(np.array(["a", "b", "c"])[y])})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    schema = {"columns": {**{n: {"type": "numeric", "lower": 0, "upper": 1} for n in names},
                          "label": {"type": "categorical", "categories": ["a", "b", "c"], "role": "label"}}}
    return schema


def _child(mode: str, path: str, schema_json: str, chunk_rows: int, out: str):
    """Runs in a fresh process; prints JSON with the elapsed time and peak RSS."""
    sys.path.insert(0, str(SRC))
    from privrelease.engine import RecordMap, stream_stats
    from privrelease.evaluation.resources import peak_rss_mb
    from privrelease.io import iter_table_chunks
    from privrelease.release import release_file
    from privrelease.schema import Encoder, Schema

    schema = Schema.from_dict(json.loads(schema_json))
    base_mb = peak_rss_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    if mode == "floor":
        feats = [c.name for c in schema.columns if c.role != "label"]
        enc, lab = Encoder(schema, feats), Encoder(schema, [schema.label.name])
        st = stream_stats(iter_table_chunks(path, schema, chunk_rows),
                          RecordMap(enc, lab, n_classes=len(schema.label.categories)))
        n = st.n
    elif mode == "fit":
        from privrelease.release import build_mechanism

        # the streaming fit path of release_file, without sampling / writing
        feats = [c.name for c in schema.columns if c.role != "label"]
        enc, lab = Encoder(schema, feats), Encoder(schema, [schema.label.name])
        st = stream_stats(iter_table_chunks(path, schema, chunk_rows),
                          RecordMap(enc, lab, n_classes=len(schema.label.categories)))
        m = build_mechanism("pca-gmm", 1.0, None, 0, enc.domain, n_components=10,
                              n_classes=len(schema.label.categories))
        m.fit_stats(st)
        n = st.n
    else:
        cert = release_file(path, schema, out, mechanism="pca-gmm", epsilon=1.0, rng=0, chunk_rows=chunk_rows,
                            n_components=10)
        n = cert.n_input_records
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(json.dumps({"seconds": dt, "cpu_seconds": cpu, "peak_rss_mb": peak_rss_mb(), "baseline_rss_mb": base_mb,
                      "n": n}))


def run_child(mode, path, schema, chunk_rows, out):
    cmd = [sys.executable, __file__, "--child", mode, str(path), json.dumps(schema), str(chunk_rows), str(out)]
    env = dict(os.environ, PYTHONPATH=str(SRC), OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
               OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_file(label, path, schema, chunk_rows, tmp):
    floor = run_child("floor", path, schema, chunk_rows, "")
    fit = run_child("fit", path, schema, chunk_rows, "")
    rel = run_child("release", path, schema, chunk_rows, Path(tmp) / f"{label}_out.parquet")
    print(f"{label}: n = {floor['n']:,}")
    print(f"  one-pass floor   wall {floor['seconds']:8.2f} s   cpu {floor['cpu_seconds']:8.2f} s   "
          f"peak RSS {floor['peak_rss_mb']:7.0f} MB (after imports {floor['baseline_rss_mb']:.0f} MB)")
    for name, r, note in (("pca-gmm fit    ", fit, ""), ("pca-gmm release", rel, "  (includes writing n synthetic records)")):
        print(f"  {name}  wall {r['seconds']:8.2f} s   cpu {r['cpu_seconds']:8.2f} s   "
              f"ratio wall {r['seconds'] / floor['seconds']:5.2f} cpu {r['cpu_seconds'] / floor['cpu_seconds']:5.2f}   "
              f"peak RSS {r['peak_rss_mb']:7.0f} MB{note}")
    return floor, fit, rel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--chunk-rows", type=int, default=100_000)
    ap.add_argument("--skip-hapt", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not a.skip_hapt:
            sys.path.insert(0, str(SRC))
            from privrelease.datasets import shared_datasets_dir

            base = shared_datasets_dir()
            if base is not None and (base / "hapt_features").is_dir():
                import pandas as pd

                df = pd.read_csv(base / "hapt_features" / "hapt_train.csv.gz")
                feats = [c for c in df.columns if c not in ("activity", "subject")]
                lo, hi = df[feats].min(), df[feats].max()  # benchmark only: bounds from the data
                schema = {"columns": {**{f: {"type": "numeric", "lower": float(lo[f]),
                                             "upper": float(hi[f]) if hi[f] > lo[f] else float(lo[f]) + 1}
                                         for f in feats},
                                      "activity": {"type": "categorical", "categories": [str(i) for i in range(1, 7)],
                                                   "role": "label"}}}
                p = Path(tmp) / "hapt.parquet"
                df[feats + ["activity"]].astype({"activity": str}).to_parquet(p)
                bench_file("HAPT train", p, schema, a.chunk_rows, tmp)
            else:
                print("HAPT features not available: skipped")
        results = {}
        for rows in (a.rows // 4, a.rows):
            p = Path(tmp) / f"gen_{rows}.parquet"
            t0 = time.perf_counter()
            schema = generate(p, rows, a.cols)
            print(f"(generated {rows:,} x {a.cols} in {time.perf_counter() - t0:.1f} s, "
                  f"{p.stat().st_size / 1e6:.0f} MB on disk)")
            results[rows] = bench_file(f"generated {rows:,} x {a.cols}", p, schema, a.chunk_rows, tmp)
            p.unlink()
        small, big = results[a.rows // 4], results[a.rows]
        print(f"peak RSS growth from n/4 to n: floor {big[0]['peak_rss_mb'] / small[0]['peak_rss_mb']:.2f}x, "
              f"fit {big[1]['peak_rss_mb'] / small[1]['peak_rss_mb']:.2f}x, "
              f"release {big[2]['peak_rss_mb'] / small[2]['peak_rss_mb']:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:5], int(sys.argv[5]), sys.argv[6])
    else:
        main()

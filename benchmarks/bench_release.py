"""Benchmark: streamed releases versus the I/O-plus-one-pass floor.

Times ``jiang-pca`` and ``laplace`` releases through
:func:`privrelease.release.release_file` of

(a) the bundled Adult train file (``privrelease.datasets.example_paths("adult")``), and
(b) a generated ``ROWS x COLS`` numeric Parquet file (values in [0, 1]),

and prints each time as a ratio to the *floor* measured in the same run: reading the
same file with pyarrow in the same chunks, turning each chunk into a float64 matrix
of the encoded width (one-hot blocks via dictionary codes) and one pass of
``X^T X`` with numpy. A release must at least read the data and form ``X^T X``;
``jiang-pca`` additionally reads the file a second time, projects, adds noise,
decodes and writes the output; ``laplace`` adds noise to every entry and writes.

Both wall-clock time and the child's CPU time (user + system) are reported; on a
shared machine the CPU time is the steadier of the two, so the ratios to the floor
are given for both. Every measurement runs in its own subprocess, so the peak resident set size
(``VmHWM``) is that measurement's alone; the table also shows the process size
right after the imports ("baseline") so the increment is visible.

Usage::

    PYTHONPATH=src python benchmarks/bench_release.py                # full run
    PYTHONPATH=src python benchmarks/bench_release.py --rows 100000  # smaller synthetic file
    PYTHONPATH=src python benchmarks/bench_release.py --randomness secure seeded
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHUNK_ROWS = 200_000


# ---- child: one measurement ---------------------------------------------------------

def _load_schema(path: str):
    from privrelease.schema import Schema

    return Schema.from_yaml(path)


def _floor(input_path: str, schema_path: str, chunk_rows: int) -> dict:
    """Read in the same chunks with pyarrow, build the encoded-width float matrix, one X^T X pass."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = _load_schema(schema_path)
    cols = schema.columns
    width = schema.encoded_width
    G = np.zeros((width, width))
    n = 0

    def batches():
        if input_path.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            yield from pq.ParquetFile(input_path, pre_buffer=False).iter_batches(
                batch_size=chunk_rows, columns=schema.names, use_threads=False)
        else:
            import pyarrow.csv as pcsv

            reader = pcsv.open_csv(input_path, convert_options=pcsv.ConvertOptions(
                include_columns=schema.names,
                column_types={c.name: pa.string() for c in schema.categorical}))
            yield from reader

    for batch in batches():
        m = batch.num_rows
        X = np.empty((m, width))
        j = 0
        for c in cols:
            arr = batch.column(c.name)
            if c.kind == "categorical":
                codes = pc.index_in(arr, value_set=pa.array(list(c.categories))).to_numpy(zero_copy_only=False)
                block = np.zeros((m, len(c.categories)))
                block[np.arange(m), codes] = 1.0
                X[:, j:j + len(c.categories)] = block
                j += len(c.categories)
            else:
                v = arr.to_numpy(zero_copy_only=False).astype(np.float64)
                X[:, j] = (v - c.lower) / (c.upper - c.lower)
                j += 1
        G += X.T @ X
        n += m
    return {"rows": n, "trace": float(np.trace(G))}


def _release(input_path: str, schema_path: str, mechanism: str, randomness: str, chunk_rows: int,
             out_dir: str, params: dict) -> dict:
    from privrelease.release import release_file

    schema = _load_schema(schema_path)
    out = Path(out_dir) / f"out-{mechanism}-{randomness}.parquet"
    cert = release_file(input_path, schema, out, mechanism=mechanism, epsilon=1.0,
                        rng=None if randomness == "secure" else 0, chunk_rows=chunk_rows, **params)
    size = out.stat().st_size
    out.unlink()
    return {"rows": cert.n_output_records, "output_bytes": size, "randomness_label": cert.randomness}


def child(spec: dict) -> None:
    import pyarrow

    if spec.get("threads"):
        pyarrow.set_cpu_count(spec["threads"])
        pyarrow.set_io_thread_count(spec["threads"])
    import numpy  # noqa: F401  (imports count in the baseline, not in the timing)
    import pandas  # noqa: F401
    import pyarrow.compute  # noqa: F401
    import pyarrow.csv  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    import privrelease.release  # noqa: F401
    from privrelease.evaluation.resources import peak_rss_mb

    base = peak_rss_mb()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if spec["task"] == "floor":
        info = _floor(spec["input"], spec["schema"], spec["chunk_rows"])
    else:
        info = _release(spec["input"], spec["schema"], spec["task"], spec["randomness"], spec["chunk_rows"],
                        spec["out_dir"], spec.get("params", {}))
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mb": peak_rss_mb(), "baseline_rss_mb": base, **info}))


# ---- parent ---------------------------------------------------------------------------------

def make_numeric_parquet(path: Path, rows: int, cols: int, seed: int = 0) -> Path:
    """A ``rows x cols`` Parquet file of uniform [0, 1] values (written in 200k-row groups) and its schema."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import yaml

    rng = np.random.default_rng(seed)
    names = [f"x{j:02d}" for j in range(cols)]
    writer = None
    for start in range(0, rows, CHUNK_ROWS):
        m = min(CHUNK_ROWS, rows - start)
        # correlated columns so PCA has structure: a few latent factors plus noise, squashed into [0, 1]
        Z = rng.normal(size=(m, 4)) @ rng.normal(size=(4, cols)) * 0.15 + rng.normal(0, 0.1, (m, cols))
        X = np.clip(0.5 + Z, 0.0, 1.0)
        table = pa.table({n: X[:, j] for j, n in enumerate(names)})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    schema_path = path.with_suffix(".yaml")
    schema_path.write_text(yaml.safe_dump(
        {"name": "synthetic-numeric", "columns": {n: {"type": "numeric", "lower": 0.0, "upper": 1.0} for n in names}},
        sort_keys=False))
    return schema_path


def measure(spec: dict, src: str | None = None) -> dict:
    env = dict(os.environ)
    src = src or str(Path(__file__).resolve().parents[1] / "src")
    if spec.get("threads"):
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(spec["threads"])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"measurement {spec} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS)
    ap.add_argument("--mechanisms", nargs="+", default=["jiang-pca", "laplace"])
    ap.add_argument("--randomness", nargs="+", default=["secure"], choices=["secure", "seeded"],
                    help="secure = rng=None (real releases); seeded = rng=0 (experiments)")
    ap.add_argument("--repeat", type=int, default=1, help="repeat each measurement; the lowest CPU time is reported")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS and Arrow threads per measurement (1: CPU time comparable on a shared machine; 0: defaults)")
    ap.add_argument("--src", default=None,
                    help="privrelease source tree to benchmark (default: this checkout's src/); e.g. an older commit")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0

    from privrelease.datasets import example_paths
    from privrelease.schema import Schema

    with tempfile.TemporaryDirectory(prefix="privrelease-bench-") as tmp:
        datasets = []
        if not args.skip_adult:
            a_in, a_schema = example_paths("adult")
            datasets.append(("Adult train (bundled csv.gz)", str(a_in), str(a_schema)))
        if not args.skip_synthetic:
            pq_path = Path(tmp) / f"numeric_{args.rows}x{args.cols}.parquet"
            t0 = time.perf_counter()
            schema_path = make_numeric_parquet(pq_path, args.rows, args.cols)
            print(f"generated {pq_path.name} ({pq_path.stat().st_size / 2**20:.0f} MiB) in "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
            datasets.append((f"numeric {args.rows:,} x {args.cols} (parquet)", str(pq_path), str(schema_path)))

        rows = []
        for label, path, schema_path in datasets:
            width = Schema.from_yaml(schema_path).encoded_width
            base = dict(input=path, schema=schema_path, chunk_rows=args.chunk_rows, out_dir=tmp, threads=args.threads)
            tasks = [("floor", "-")] + [(m, r) for m in args.mechanisms for r in args.randomness]
            floor = None
            for task, rnd in tasks:
                runs = [measure(dict(base, task=task, randomness=rnd), args.src) for _ in range(max(1, args.repeat))]
                best = min(runs, key=lambda r: r["cpu_seconds"])
                if task == "floor":
                    floor = best
                rows.append((label, best["rows"], width, task, rnd, best["seconds"], best["cpu_seconds"],
                             best["cpu_seconds"] / floor["cpu_seconds"], best["seconds"] / floor["seconds"],
                             best["peak_rss_mb"], best["peak_rss_mb"] - best["baseline_rss_mb"]))
                print(f"{label}: {task} [{rnd}] wall {best['seconds']:.2f} s, cpu {best['cpu_seconds']:.2f} s, "
                      f"peak RSS {best['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)

    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"chunk_rows = {args.chunk_rows:,}; threads = {args.threads or 'default'}; repeats = {args.repeat} "
          f"(lowest CPU time kept); epsilon = 1; output written as Parquet.\n")
    print("| data | rows | encoded p | task | randomness | wall (s) | CPU (s) | CPU x floor | wall x floor "
          "| peak RSS (MB) | RSS over baseline (MB) |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for label, n, p, task, rnd, wall, cpu, cratio, wratio, peak, inc in rows:
        print(f"| {label} | {n:,} | {p} | {task} | {rnd} | {wall:.2f} | {cpu:.2f} | {cratio:.1f} | {wratio:.1f} "
              f"| {peak:.0f} | {inc:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

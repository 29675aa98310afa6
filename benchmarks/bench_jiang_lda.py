"""Benchmark: jiang-lda releases of the Adult train file against a floor measured in the same run.

The data: the bundled Adult train file (``privrelease.datasets.example_paths("adult")``,
30,162 records, 33 encoded feature columns plus the label). Target (issue text): a
jiang-lda release of it in at most 10 seconds on 2 cores.

Every measurement runs in its own subprocess (as in ``bench_release.py``, whose floor and
release functions are reused), and every time is also printed as a ratio to

* the **floor**: reading the same file with pyarrow, building the encoded float matrix and
  one ``X^T X`` pass (what any release must at least do), and
* the **jiang-pca** release of the same file (the foundation's mechanism), as a familiar
  reference.

Tasks:

* ``jiang-lda cold``: the first release with an empty numba cache (a fresh
  ``NUMBA_CACHE_DIR``), so it includes the one-off compilation of the sampler loop, as
  on the first use after installation;
* ``jiang-lda``: the same release with the cache now warm (every later use);
* ``jiang-lda numpy``: with ``NUMBA_DISABLE_JIT=1``, i.e. the numpy fallback of the sampler
  (what runs where numba is missing);
* ``sampler``: the greedy L1 sampler alone (fit outside the timing), warm cache.

Randomness: secure (rng=None, as real releases) unless ``--randomness seeded``.

Usage::

    PYTHONPATH=src python benchmarks/bench_jiang_lda.py [--repeat 3] [--skip-numpy]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_release as br  # noqa: E402

TARGET_S = 10.0


def _sampler(schema_path: str, randomness: str) -> dict:
    from privrelease.datasets import load_example
    from privrelease.mechanisms.jiang.lda import JiangLDA
    from privrelease.schema import Encoder

    df, schema = load_example("adult")
    feats = [c.name for c in schema.columns if c.role != "label"]
    enc = Encoder(schema, feats)
    X = enc.encode(df).X
    y = Encoder(schema, [schema.label.name]).encode(df).X.argmax(1)
    m = JiangLDA(1.0, domain=enc.domain, n_classes=2, rng=None if randomness == "secure" else 0).fit(X, y)
    m.sample(50)  # compile or load the sampler outside the timing
    t0, c0 = time.perf_counter(), time.process_time()
    Xs, _ = m.sample()
    return {"rows": int(Xs.shape[0]), "inner_seconds": time.perf_counter() - t0,
            "inner_cpu_seconds": time.process_time() - c0}


def child(spec: dict) -> None:
    import numpy  # noqa: F401  (imports are not timed)
    import pandas  # noqa: F401
    import pyarrow.csv  # noqa: F401

    import privrelease.release  # noqa: F401

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if spec["task"] == "floor":
        info = br._floor(spec["input"], spec["schema"], br.CHUNK_ROWS)
    elif spec["task"] == "sampler":
        info = _sampler(spec["schema"], spec["randomness"])
    else:
        info = br._release(spec["input"], spec["schema"], spec["mechanism"], spec["randomness"], br.CHUNK_ROWS,
                           spec["out_dir"], {})
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if "inner_seconds" in info:  # the sampler alone: report its own time, not the set-up
        seconds, cpu = info.pop("inner_seconds"), info.pop("inner_cpu_seconds")
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, **info}))


def measure(spec: dict, env_extra: dict) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(env_extra)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"measurement {spec['label']} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=3, help="repeats of the warm measurements (lowest wall kept)")
    ap.add_argument("--randomness", default="secure", choices=["secure", "seeded"])
    ap.add_argument("--skip-numpy", action="store_true", help="skip the numpy-fallback measurement")
    ap.add_argument("--json", type=Path, default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0

    from privrelease.datasets import example_paths

    data_path, schema_path = (str(p) for p in example_paths("adult"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="privrelease-bench-lda-") as tmp:
        cache = {"NUMBA_CACHE_DIR": str(Path(tmp) / "numba-cache")}
        base = dict(input=data_path, schema=schema_path, out_dir=tmp, randomness=args.randomness)
        plan = [
            ("floor (read + encode + X^T X)", dict(task="floor"), {}, args.repeat),
            ("jiang-pca release", dict(task="release", mechanism="jiang-pca"), {}, args.repeat),
            ("jiang-lda release, cold numba cache", dict(task="release", mechanism="jiang-lda"), cache, 1),
            ("jiang-lda release", dict(task="release", mechanism="jiang-lda"), cache, args.repeat),
            ("greedy sampler alone", dict(task="sampler"), cache, args.repeat),
        ]
        if not args.skip_numpy:
            plan.append(("jiang-lda release, numpy fallback", dict(task="release", mechanism="jiang-lda"),
                         {"NUMBA_DISABLE_JIT": "1"}, 1))
        results = {}
        for label, spec, env_extra, reps in plan:
            runs = [measure(dict(base, label=label, **spec), env_extra) for _ in range(max(1, reps))]
            best = min(runs, key=lambda r: r["seconds"])
            best["runs_wall"] = [round(r["seconds"], 3) for r in runs]
            results[label] = best
            print(f"{label}: wall {best['seconds']:.2f} s, cpu {best['cpu_seconds']:.2f} s", file=sys.stderr,
                  flush=True)
    floor = results["floor (read + encode + X^T X)"]
    pca = results["jiang-pca release"]
    for label, r in results.items():
        rows.append({"task": label, "records": r["rows"], "wall_s": round(r["seconds"], 3),
                     "cpu_s": round(r["cpu_seconds"], 3),
                     "wall_x_floor": round(r["seconds"] / floor["seconds"], 2),
                     "cpu_x_floor": round(r["cpu_seconds"] / floor["cpu_seconds"], 2),
                     "wall_x_jiang_pca": round(r["seconds"] / pca["seconds"], 2),
                     "runs_wall_s": r["runs_wall"]})
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    warm = results["jiang-lda release"]["seconds"]
    cold = results["jiang-lda release, cold numba cache"]["seconds"]
    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f}, Python "
          f"{platform.python_version()}; Adult train, epsilon = 1, randomness {args.randomness}; BLAS 1 thread; "
          f"warm rows: best of {args.repeat}.\n")
    print("| task | records | wall (s) | CPU (s) | wall x floor | CPU x floor | wall x jiang-pca |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['task']} | {r['records']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['wall_x_floor']:.1f} "
              f"| {r['cpu_x_floor']:.1f} | {r['wall_x_jiang_pca']:.1f} |")
    print(f"\ntarget {TARGET_S:.0f} s: warm release {warm:.2f} s -> {'met' if warm <= TARGET_S else 'NOT met'}; "
          f"first release after installation (compiles) {cold:.2f} s -> {'met' if cold <= TARGET_S else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps({"load_average": load, "cpus": os.cpu_count(), "rows": rows,
                                         "target_s": TARGET_S, "warm_met": warm <= TARGET_S,
                                         "cold_met": cold <= TARGET_S}, indent=2))
    return 0 if warm <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

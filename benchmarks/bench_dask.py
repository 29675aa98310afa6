"""Benchmark: the same release streamed locally and on a Dask cluster of 1 and 2 workers.

Generates a ``ROWS x COLS`` numeric Parquet dataset in ``FILES`` files (under a temporary
directory, never in the repository), then releases it with each ``--mechanism`` (default both
``gauss-copula``, the default mechanism: a cell-count pass, then the gauss-pca mixture's centre
and clipped-moment passes over the copula-transformed rows; and ``gauss-pca`` alone: the two
mixture passes) on every engine, through :func:`privrelease.release.release_file`:

- ``local``: the streamed local engine (chunks read in this process);
- ``dask-N``: ``engine="dask"`` on a ``LocalCluster`` of N worker processes (one thread each),
  named by its scheduler address as ``--scheduler`` would.

A small synthetic output (``--n-synthetic``) keeps the measurement on the passes. Reported per
run: wall time and CPU time (release process plus workers: on a shared machine the steadier
measure), records per second (input rows times passes over wall time), peak resident
memory (``VmHWM``) of the release process and of each Dask worker, the summed compute time of
the per-partition map tasks and of the partition reads (and the mean per task), the machine's
load average before and after the run, and the pickled size of one partition's moment
statistics (what travels per partition and per tree merge). Every run is a separate
subprocess so its peak memory is its own; ``--repeat`` repeats the whole set; ``--worker-env``
sets variables in the workers' environment before they start (e.g. the allocator's thresholds).

Usage::

    PYTHONPATH=src nice -n 10 python benchmarks/bench_dask.py --repeat 3 --data /tmp/dask-data  # 10M x 50
    PYTHONPATH=src python benchmarks/bench_dask.py --rows 200000 --files 4 --mechanism gauss-pca   # smoke run
    ... --out benchmarks/results/dask.json
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_release import make_numeric_parquet  # noqa: E402


def generate(folder: Path, rows: int, cols: int, files: int) -> Path:
    """``files`` Parquet files of about ``rows / files`` rows each; returns the schema's path."""
    folder.mkdir(parents=True, exist_ok=True)
    schema = None
    for k in range(files):
        m = rows // files + (1 if k < rows % files else 0)
        schema = make_numeric_parquet(folder / f"part-{k:03d}.parquet", m, cols, seed=k)
    (folder / "schema.yaml").write_text(schema.read_text())
    for f in folder.glob("part-*.yaml"):
        f.unlink()
    return folder / "schema.yaml"


# ---- child: one release ------------------------------------------------------------------------

# task key prefixes: the per-partition map (``dask.delayed(partial(_map_partition, ...))`` is keyed
# by the wrapped function's name) and the partition reads (pyarrow row groups; dask.dataframe's
# own Parquet/CSV readers before)
MAP_KEYS = ("_map_partition",)
READ_KEYS = ("read_parquet_row_groups", "read_parquet", "readparquet", "read-parquet", "read_csv", "read-csv")


def _task_name(t) -> str:
    key = t.get("key")
    return str(key[0] if isinstance(key, tuple) else key).strip("('\"").lower()


def _task_times(task_stream, prefixes) -> list[float]:
    """Compute seconds of each task in a task stream whose key starts with one of ``prefixes``."""
    return [sum(s["stop"] - s["start"] for s in t.get("startstops", ()) if s.get("action") == "compute")
            for t in task_stream if _task_name(t).startswith(prefixes)]


def _task_counts(task_stream) -> dict:
    """Tasks per key name (the key without its token): which tasks a release ran."""
    counts: dict = {}
    for t in task_stream:
        name = _task_name(t).split("-", 1)[0]
        counts[name] = counts.get(name, 0) + 1
    return counts


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _warm_up():
    import privrelease.release  # noqa: F401  (numba, scikit-learn, ...: seconds on a loaded machine)


def child(spec: dict) -> dict:
    from privrelease.evaluation.resources import peak_rss_mb
    from privrelease.release import release_file
    from privrelease.schema import Schema

    schema = Schema.from_yaml(spec["schema"])
    mech = spec["mechanism"]
    out = Path(spec["tmp"]) / f"out-{mech}-{spec['engine']}-{spec['workers']}.parquet"
    kw = dict(n_synthetic=spec["n_synthetic"], rng=0, overwrite=True, chunk_rows=spec["chunk_rows"])
    info: dict = {"mechanism": mech, "engine": spec["engine"], "workers": spec["workers"]}
    if spec["engine"] == "local":
        t0, c0 = time.perf_counter(), _cpu_s()
        cert = release_file(spec["input"], schema, out, mech, 1.0, engine="local", **kw)
        info["wall_s"] = time.perf_counter() - t0
        info["cpu_s"] = _cpu_s() - c0
    else:
        import dask
        from distributed import Client, LocalCluster, get_task_stream

        info["worker_env"] = spec.get("worker_env") or {}
        pre_spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ"), **info["worker_env"]}
        with dask.config.set({"distributed.nanny.pre-spawn-environ": pre_spawn}), \
                LocalCluster(n_workers=spec["workers"], threads_per_worker=1, processes=True,
                             dashboard_address=":0", memory_limit=0) as cluster, Client(cluster) as client:
            client.run(_warm_up)  # a long-lived cluster has the package imported; time the release, not imports
            cpu0 = client.run(_cpu_s)
            t0, c0 = time.perf_counter(), _cpu_s()
            with get_task_stream(client) as ts:
                cert = release_file(spec["input"], schema, out, mech, 1.0, engine="dask",
                                    scheduler=cluster.scheduler_address, **kw)
            info["wall_s"] = time.perf_counter() - t0
            info["client_cpu_s"] = _cpu_s() - c0
            info["worker_cpu_s"] = sorted(v - cpu0[k] for k, v in client.run(_cpu_s).items())
            info["cpu_s"] = info["client_cpu_s"] + sum(info["worker_cpu_s"])
            info["tasks"] = _task_counts(ts.data)
            for kind, prefixes in (("map", MAP_KEYS), ("read", READ_KEYS)):
                times = _task_times(ts.data, prefixes)
                info[f"{kind}_tasks"] = len(times)
                info[f"{kind}_compute_s"] = sum(times)
                info[f"{kind}_mean_s"] = sum(times) / max(len(times), 1)
            info["worker_peak_rss_mb"] = sorted(client.run(peak_rss_mb).values())
    info["passes"] = cert.extra.get("passes")
    info["rows"] = cert.n_input_records
    info["rows_per_s"] = cert.n_input_records * info["passes"] / info["wall_s"]
    info["process_peak_rss_mb"] = peak_rss_mb()
    return info


def stats_bytes(cols: int) -> int:
    """Pickled size of one unlabelled partition's gauss-pca pass-2 value (the largest that travels)."""
    from privrelease.engine import SufficientStats

    return len(pickle.dumps(SufficientStats(p=cols)))


# ---- parent ------------------------------------------------------------------------------------

def run(spec: dict) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    load0 = os.getloadavg()
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info["load_avg_before"], info["load_avg_after"] = load0, os.getloadavg()
    info["utc"] = time.strftime("%H:%M", time.gmtime())
    return info


def _commit() -> str:
    """The repository's commit (``+dirty`` with uncommitted changes), or ``unknown``."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--chunk-rows", type=int, default=200_000)
    ap.add_argument("--n-synthetic", type=int, default=10_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--mechanism", action="append", help="mechanism to release with (repeatable; "
                    "default gauss-copula and gauss-pca), each on every engine")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions of the whole set of runs")
    ap.add_argument("--worker-env", action="append", default=[], metavar="NAME=VALUE",
                    help="environment variable set before each Dask worker starts (repeatable), e.g. "
                    "MALLOC_MMAP_THRESHOLD_=67108864")
    ap.add_argument("--local", action=argparse.BooleanOptionalAction, default=True,
                    help="include the streamed local engine (--no-local: the Dask runs only)")
    ap.add_argument("--data", help="dataset folder (with schema.yaml) to use, generated there if absent")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "data"
        t0 = time.perf_counter()
        exists = args.data and (data / "schema.yaml").exists()
        schema = data / "schema.yaml" if exists else generate(data, args.rows, args.cols, args.files)
        gen_s = time.perf_counter() - t0
        base = {"input": str(data), "schema": str(schema), "tmp": tmp, "chunk_rows": args.chunk_rows,
                "n_synthetic": args.n_synthetic, "worker_env": dict(e.split("=", 1) for e in args.worker_env)}
        mechanisms = args.mechanism or ["gauss-copula", "gauss-pca"]
        results = []
        for rep in range(args.repeat):
            for mech in mechanisms:
                for engine, workers in [("local", 0)] * args.local + [("dask", w) for w in args.workers]:
                    results.append(dict(run(dict(base, mechanism=mech, engine=engine, workers=workers)), rep=rep))
                    print(json.dumps(results[-1]), flush=True)
    report = {"rows": args.rows, "cols": args.cols, "files": args.files, "generate_s": gen_s,
              "commit": _commit(), "stats_bytes": stats_bytes(args.cols), "cpu_count": os.cpu_count(),
              "load_avg_at_end": os.getloadavg(), "python": platform.python_version(), "runs": results}
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

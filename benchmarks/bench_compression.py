"""Peak memory of the compression mechanism on a streamed input: it must not grow with n.

Usage: PYTHONPATH=src python benchmarks/bench_compression.py [--n 1000000 10000000] [--p 50] [--m 2000]

Each n runs in its own subprocess (clean peak RSS). The input is generated chunk by
chunk (uniform [0, 1] values, 100,000 rows per chunk) and never written to disk: a
10^7 x 50 CSV would take ~10 GB and its parsing would dominate the time. The mechanism
sees exactly what ``release_file`` hands it: a callable returning a fresh iterator of
encoded chunks. Reported: wall time, tracemalloc peak (numpy buffers included), peak
RSS of the process (``VmHWM``: ``ru_maxrss`` would carry the parent's peak across
``exec``), draws and passes over the input. ``--out FILE`` also writes the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

CHUNK = 100_000


def one(n: int, p: int, m: int) -> dict:
    from privrelease.evaluation.resources import peak_rss_mb
    from privrelease.mechanisms.compression.mechanism import Compression

    def chunks():
        rng = np.random.default_rng(12345)
        for start in range(0, n, CHUNK):
            yield rng.random((min(CHUNK, n - start), p))

    rss0 = peak_rss_mb()
    tracemalloc.start()
    t = time.perf_counter()
    cpu0 = time.process_time()
    mech = Compression(m=m, rng=0).fit_stream(chunks)
    wall = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = peak_rss_mb()
    return {"n": n, "p": p, "m": m, "seconds": round(wall, 1), "tracemalloc_peak_MiB": round(peak / 2**20, 1),
            "peak_rss_MiB": round(rss, 1), "rss_before_fit_MiB": round(rss0, 1),
            "cpu_seconds": round(time.process_time() - cpu0, 1),
            "draws": mech.draws_, "passes": mech.passes_, "block_rows": max(1, 2**21 // m),
            "chunk_rows": CHUNK, "accumulator_MiB": round(m * p * 8 / 2**20, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--out", default=None, help="also write the rows as JSON to this file")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.n[0], a.p, a.m)))
        return
    rows = []
    for n in a.n:
        out = subprocess.run([sys.executable, __file__, "--one", "--n", str(n), "--p", str(a.p), "--m", str(a.m)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(r)
        print(f"n = {n:>12,}  p = {a.p}  m = {a.m}: {r['seconds']:>8.1f} s, tracemalloc peak "
              f"{r['tracemalloc_peak_MiB']:.1f} MiB, peak RSS {r['peak_rss_MiB']:.1f} MiB, draws {r['draws']}, "
              f"passes {r['passes']}", flush=True)
    if len(rows) > 1:
        print(f"peak RSS ratio (largest n / smallest n): {rows[-1]['peak_rss_MiB'] / rows[0]['peak_rss_MiB']:.3f}; "
              f"tracemalloc ratio: {rows[-1]['tracemalloc_peak_MiB'] / rows[0]['tracemalloc_peak_MiB']:.3f}")
    print(json.dumps(rows))
    if a.out:
        import platform
        with open(a.out, "w") as fh:
            json.dump({"benchmark": "compression peak memory on a streamed input", "machine": platform.platform(),
                       "cpus": os.cpu_count(), "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()

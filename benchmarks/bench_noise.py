"""Benchmark: floating-point-safe noise versus numpy's seeded samplers, same run.

Times ``add_laplace`` and ``add_gaussian`` of :class:`privrelease.noise.SecureSource`
(grid-snapped discrete noise from OS entropy) on ``N`` coordinates and prints the time
per sample and the ratio to the seeded path (numpy's continuous samplers through
:class:`privrelease.noise.SeededSource`), measured in the same process. Optionally
(``--opendp``) also times OpenDP's exact ``make_laplace`` on a smaller vector, if
OpenDP is installed.

Usage::

    PYTHONPATH=src python benchmarks/bench_noise.py [--n 2000000] [--opendp]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privrelease.noise import make_source


def _best(f, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--opendp", action="store_true")
    a = ap.parse_args(argv)
    x = np.zeros(a.n)
    secure, seeded = make_source(None), make_source(0)
    rows = []
    for kind, call in [("laplace", lambda s: s.add_laplace(x, 1.0, 1.0, coords=1)),
                       ("gaussian", lambda s: s.add_gaussian(x, 1.0, 1.0, coords=1))]:
        ts = _best(lambda: call(secure), a.repeat)
        tn = _best(lambda: call(seeded), a.repeat)
        rows.append((kind, ts, tn))
    print(f"N = {a.n:,} coordinates; CPU time, best of {a.repeat}\n")
    print("| noise | secure ns/sample | seeded ns/sample | secure x seeded |")
    print("|---|---:|---:|---:|")
    for kind, ts, tn in rows:
        print(f"| {kind} | {ts / a.n * 1e9:.0f} | {tn / a.n * 1e9:.0f} | {ts / tn:.1f} |")
    if a.opendp:
        try:
            import opendp.prelude as dp
        except ImportError:
            print("\nOpenDP not installed: skipped")
            return
        dp.enable_features("contrib")
        m = 20_000
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 1.0)
        t = time.process_time()
        meas([0.0] * m)
        to = time.process_time() - t
        print(f"\nOpenDP make_laplace (float vector, {m:,} values): {to / m * 1e9:.0f} ns/sample, "
              f"{to / m / (rows[0][1] / a.n):.0f} x ours")


if __name__ == "__main__":
    main()

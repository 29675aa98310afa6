"""Benchmark: owner-side perturbation throughput (records per second) on HAPT at K = 5.

Public data: a balanced sample of the HAPT window features (``datasets/hapt_features``,
activity utility, subject privacy; ``--public-per-cell`` records per activity x subject
cell, 20 by default as in Table I's training part x 2.5). The JUPA projection
(rho0 = 1e-3, rho1 = rho1' = 1) and the MMD reference sets and kernel width are fitted
on them; then ``--records`` other windows are perturbed (projection + MMD label
changing, literal update, T_max = 1000, random targets) in one vectorised call.

Reports the fit time and, for the perturbation, wall-clock and CPU time (on a shared
machine CPU time is the steadier), records per second for both, the mean number of
MMD iterations and the fraction of records whose label reached its target.

Usage::

    PYTHONPATH=src python benchmarks/bench_perturb.py
    PYTHONPATH=src python benchmarks/bench_perturb.py --records 5000 --update gradient
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2000, help="owner records to perturb")
    ap.add_argument("--public-per-cell", type=int, default=8, help="public records per activity x subject cell")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--update", default="literal", choices=["literal", "gradient"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)

    from privrelease.audit.inference_attack import balanced_sample
    from privrelease.experiments.zhuang import load_hapt
    from privrelease.mechanisms.projections.mmd import JUPAMMDPerturbation

    X, act, subj = load_hapt()
    rng = np.random.default_rng(args.seed)
    pub = balanced_sample(act, subj, args.public_per_cell, rng)
    rest = np.setdiff1d(np.arange(X.shape[0]), pub)
    own = rng.choice(rest, min(args.records, rest.size), replace=False)
    mu, sd = X[pub].mean(0), X[pub].std(0)
    sd[sd == 0] = 1.0
    P, R = (X[pub] - mu) / sd, (X[own] - mu) / sd

    t0 = time.perf_counter()
    mech = JUPAMMDPerturbation(public_X=P, public_utility=act[pub], public_privacy=subj[pub], projection="jupa",
                               projection_params={"n_components": args.k, "rho0": 1e-3, "rho1": 1.0,
                                                  "rho1_prime": 1.0},
                               max_iter=args.max_iter, update=args.update, rng=args.seed).fit()
    fit_s = time.perf_counter() - t0
    c0, t0 = time.process_time(), time.perf_counter()
    Z = mech.transform(R)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    info = mech.last_info_
    res = {
        "data": "HAPT window features", "k": args.k, "public_records": int(pub.size), "records": int(R.shape[0]),
        "features": int(X.shape[1]), "update": args.update, "max_iter": args.max_iter,
        "fit_seconds": round(fit_s, 3), "perturb_wall_seconds": round(wall, 3), "perturb_cpu_seconds": round(cpu, 3),
        "records_per_second_wall": round(R.shape[0] / wall, 1),
        "records_per_second_cpu": round(R.shape[0] / max(cpu, 1e-9), 1),
        "mean_iterations": round(float(info["iterations"].mean()), 1),
        "flipped_fraction": round(float(info["flipped"].mean()), 3), "output_shape": list(Z.shape),
    }
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(f"HAPT, K={args.k}, {res['public_records']} public records, {res['records']} records perturbed "
              f"({args.update}, T_max={args.max_iter})")
        print(f"  fit (JUPA + MMD sigma CV): {fit_s:.2f} s")
        print(f"  perturb: {wall:.2f} s wall ({res['records_per_second_wall']:,.0f} records/s), "
              f"{cpu:.2f} s CPU ({res['records_per_second_cpu']:,.0f} records/s)")
        print(f"  mean MMD iterations {res['mean_iterations']}, label reached target for "
              f"{100 * res['flipped_fraction']:.1f}% of records")
    return res


if __name__ == "__main__":
    main()

"""Benchmark: the budget rule of the release-time warnings (``privrelease.release.advice``) against the
1-way TVD that releases actually reach.

Samples of n records of the bundled Adult table (11 columns) are released with the default
mechanism at several epsilons (3 seeds each); for each (n, epsilon) the script prints the rule's
tau = mean cells x d / (epsilon n), the mean 1-way TVD of the releases (20 bins per numeric column,
as ``evaluate``) and, for scale, the 1-way TVD of a bootstrap resample of the sample (no noise).
The numbers are in docs/history/public-warnings.md.

Usage::

    PYTHONPATH=src nice python benchmarks/bench_public_warnings.py
"""

from __future__ import annotations

import warnings

import numpy as np

from privrelease import release
from privrelease.datasets import load_example
from privrelease.evaluation.fidelity import tvd_1way
from privrelease.release.advice import MAX_NOISE_TVD, expected_noise_tvd


def main() -> None:
    warnings.simplefilter("ignore")
    df, schema = load_example("adult")
    df = df[schema.names]
    print("| n | epsilon | tau (rule) | warned | 1-way TVD of the release | 1-way TVD of a resample |")
    print("| ---: | ---: | ---: | :---: | ---: | ---: |")
    for n in (342, 3000, 30000):
        sub = df.sample(n, random_state=0).reset_index(drop=True)
        floor = np.mean(list(tvd_1way(sub, sub.sample(n, replace=True, random_state=1), schema).values()))
        for eps in (0.01, 0.1, 1, 10):
            tvd = np.mean([np.mean(list(tvd_1way(sub, release(sub, schema, "gauss-copula", eps, rng=seed).data,
                                                 schema).values())) for seed in range(3)])
            tau = expected_noise_tvd(schema, n, eps)
            print(f"| {n:,} | {eps:g} | {tau:.3g} | {'yes' if tau > MAX_NOISE_TVD else 'no'} | {tvd:.3f} | "
                  f"{floor:.3f} |", flush=True)


if __name__ == "__main__":
    main()

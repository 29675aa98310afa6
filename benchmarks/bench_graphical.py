"""CPU time and accuracy of the graphical-model estimator (estimation/graphical.py) on a generated model.

    PYTHONPATH=src python benchmarks/bench_graphical.py [--attributes 100] [--iters 50,100,200]

The model: ``--attributes`` attributes of 2 to 16 levels and a label of 2; its cliques are a random
spanning tree of attribute pairs, each pair joined with the label (maximal cliques {label, a, b}),
with random potentials, 50,000 records. 200 measurements (one-way, pair and pair-with-label
marginals, drawn at random) get Gaussian noise of std 20. For each number of iterations, with and
without momentum: the fit's CPU seconds, its loss, and the mean over the measurements of the L1
distance between the fitted and the true marginal as a share of the records (the raw noisy answers'
own distance is printed first). Then the CPU time of sampling 50,000 records, of one
``model_cells`` call and of projections onto pairs that no clique holds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privrelease.estimation.graphical import (GraphicalModel, MarginalMeasurement, fit_model, junction_tree,
                                              model_cells)

RECORDS = 50_000.0
NOISE_STD = 20.0


def problem(n: int, n_measurements: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = tuple(int(s) for s in rng.integers(2, 17, n)) + (2,)
    perm = rng.permutation(n)
    pairs = [(int(perm[i]), int(perm[rng.integers(0, i)])) for i in range(1, n)]
    cliques = [p + (n,) for p in pairs]
    tree, edges = junction_tree(sizes, cliques)
    truth = GraphicalModel(sizes, tree, edges, [rng.normal(size=[sizes[a] for a in c]) for c in tree], RECORDS)
    kinds = [(a,) for a in range(n + 1)] + pairs + cliques
    measurements = []
    for i in rng.choice(len(kinds), min(n_measurements, len(kinds)), replace=False):
        exact = truth.project(kinds[i]).ravel()
        measurements.append(MarginalMeasurement(kinds[i], exact + rng.normal(0, NOISE_STD, exact.size), NOISE_STD))
    return sizes, measurements, cliques, truth


def cpu(f):
    start = time.process_time()
    out = f()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attributes", type=int, default=100)
    parser.add_argument("--iters", default="50,100,200")
    args = parser.parse_args()
    sizes, ms, cliques, truth = problem(args.attributes)

    def error(values_of):
        return np.mean([np.abs(values_of(m) - truth.project(m.attrs).ravel()).sum() / RECORDS for m in ms])

    def loss(model):
        return sum(float(((model.project(m.attrs).ravel() - m.values) ** 2).sum()) / (2 * m.std**2) for m in ms)

    print(f"{len(sizes)} attributes, {len(ms)} measurements, {model_cells(sizes, cliques)} model cells; "
          f"raw answers' mean L1 share {error(lambda m: m.values):.4f}")
    model = None
    for momentum in (True, False):
        for iters in (int(i) for i in args.iters.split(",")):
            seconds, model_ = cpu(lambda: fit_model(sizes, ms, RECORDS, iters=iters, cliques_extra=cliques,
                                                      momentum=momentum))
            model = model if model is not None else model_
            print(f"momentum={momentum!s:5} iters={iters:4d}  CPU {seconds:6.2f} s  loss {loss(model_):10.1f}"
                  f"  mean L1 share {error(lambda m: model_.project(m.attrs).ravel()):.4f}")
    seconds, _ = cpu(lambda: model.sample(50_000, np.random.default_rng(0)))
    print(f"sample 50,000 records: CPU {seconds:.2f} s")
    seconds, _ = cpu(lambda: [model_cells(sizes, cliques + [(0, 1)]) for _ in range(100)])
    print(f"model_cells: {seconds * 10:.2f} ms a call")
    rng = np.random.default_rng(1)
    far = [tuple(int(a) for a in rng.choice(len(sizes) - 1, 2, replace=False)) for _ in range(100)]
    seconds, _ = cpu(lambda: [model.project(p) for p in far])
    print(f"project onto a pair: {seconds * 10:.2f} ms a call")


if __name__ == "__main__":
    main()

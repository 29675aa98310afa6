"""Benchmark of gauss-copula's pair stage (numbers in docs/history/mixed-pairs.md).

Usage (from the repository root, PRIVRELEASE_DATA pointing at the shared data sets)::

    PYTHONPATH=src python benchmarks/bench_pairs.py census_kdd --seeds 0,1,2 \\
        --variants "pair_rounds=0" "pair_rounds=6"

Each variant is a comma-separated list of ``key=value``: gauss-copula parameters, or module
constants of ``privrelease.mechanisms.gauss_mixture.copula_defaults`` (upper-case names, for exploring the
stage's settings; a derived value, such as ``PAIR_CELLS`` from ``NODE_CELLS``, is set on its own), or
``noiseless=<parts>`` (a diagnostic: :data:`NOISELESS_FACTOR`). Every release is measured with
:func:`privrelease.evaluation.fidelity.evaluate` (1-way and 2-way TVD, train-on-release scores), the
3-way TVD of every (feature pair, label) triple on the same 10 bins as the 2-way TVD, the share of
duplicated released records, and the release's CPU time. Lines are appended to ``--out``
(default ``docs/history/tuning-logs/pairs_tune.jsonl``). Only the tuning tables (census_kdd, its Adult-shaped cut census_small, gas_drift, musk2)
are meant to choose settings.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "docs" / "history" / "tuning-logs" / "pairs_tune.jsonl"


def tvd_3way_label(real, released, schema, label, bins=10) -> float:
    """Mean TVD of the joint (a, b, label) tables over every pair of feature columns."""
    from privrelease.evaluation.fidelity import _cell_codes

    r, cards = _cell_codes(real, schema, bins)
    s, _ = _cell_codes(released, schema, bins)
    names = [c.name for c in schema.columns]
    li = names.index(label)
    C = cards[li]
    feats = [j for j in range(len(names)) if j != li]
    out = []
    for a, b in itertools.combinations(feats, 2):
        size = cards[a] * cards[b] * C
        hr = np.bincount((r[:, a] * cards[b] + r[:, b]) * C + r[:, li], minlength=size) / len(r)
        hs = np.bincount((s[:, a] * cards[b] + s[:, b]) * C + s[:, li], minlength=size) / len(s)
        out.append(0.5 * np.abs(hr - hs).sum())
    return float(np.mean(out))


def _value(v: str):
    """A parameter's value from its text: True / False, an int, a float, or the text itself (e.g. "auto", "tree")."""
    if v in ("True", "False"):
        return v == "True"
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v


#: ``noiseless=<parts>`` (a diagnostic, never a release): the Gaussian releases of these parts of
#: gauss-copula get a thousandth of their noise, to see how much of a table's error each part's noise
#: makes. Parts: "histograms" (the one-way histograms and their tree levels), "levels" (the numeric
#: trees' levels below the coarsest only), "pairs" (the pair
#: measurements; the selections keep their noise), "mixture" (every statistic of the latent mixture),
#: "mixture_<part>" (one of its parts: centre, radius, within_radius, basis, counts, sums, moments, residual).
NOISELESS_FACTOR = 1e-3


#: The parts a gauss-copula release belongs to, by the first word of its ``noise_scales_`` key.
_PARTS = {"marginals": {"histograms"}, "tree_level": {"histograms", "levels"}, "pairs": {"pairs"}}


def _parts_of(mech, key: str) -> set:
    if type(mech).__name__ == "GaussPCA":
        return {"mixture", "mixture_" + key.removesuffix("_std")}
    return next((parts for prefix, parts in _PARTS.items() if key.startswith(prefix)), set())


def noiseless(parts) -> None:
    """Scale the noise of the named parts' Gaussian releases by ``NOISELESS_FACTOR`` (this process only)."""
    from privrelease.mechanisms.base import SyntheticMechanism

    real = getattr(SyntheticMechanism._gaussian, "_real", SyntheticMechanism._gaussian)
    if not parts:
        SyntheticMechanism._gaussian = real
        return

    def _gaussian(self, key, value, l2_sensitivity, noise_multiplier, coords):
        s = l2_sensitivity * (NOISELESS_FACTOR if _parts_of(self, key) & set(parts) else 1.0)
        return real(self, key, value, s, noise_multiplier, coords)

    _gaussian._real = real
    SyntheticMechanism._gaussian = _gaussian


def _apply(spec: str) -> dict:
    import privrelease.mechanisms.gauss_mixture.copula_defaults as defaults
    import privrelease.mechanisms.gauss_mixture.copula_plan as plan

    params = {}
    noiseless(())
    for item in filter(None, spec.split(",")):
        k, v = item.split("=")
        if k == "noiseless":
            noiseless(tuple(v.split("+")))
            continue
        if hasattr(defaults, k) and k.isupper():
            cur = getattr(defaults, k)
            setattr(defaults, k, _value(v) if isinstance(cur, (str, bool)) else type(cur)(float(v)))
        else:
            params[k] = _value(v)
    plan.split_with_pairs.cache_clear()
    plan.auto_marginal_share.cache_clear()
    return params


def run(name: str, seeds, variants, epsilon=1.0, out: Path = OUT, max_train: int | None = None):
    from privrelease.evaluation.fidelity import evaluate
    from privrelease.experiments import mixed_tables as mt
    from privrelease.release import release

    if name == "census_kdd" and max_train is None:
        max_train = 20_000
    data = mt.LOADERS[name](0, **({"max_train": max_train} if name.startswith("census") and max_train is not None else {}))
    train, test, schema, label = data
    delta = min(1e-5, 0.1 / len(train))
    out.parent.mkdir(exist_ok=True)
    for spec in variants:
        for seed in seeds:
            params = _apply(spec)
            t = time.process_time()
            res = release(train, schema, "gauss-copula", epsilon, delta=delta, rng=seed, **params)
            cpu = time.process_time() - t
            ev = evaluate(train, res.data, schema, test, label, sdmetrics=False, baseline=False).summary()
            rec = {"data": name, "variant": spec, "seed": seed, "n_train": len(train), "epsilon": epsilon,
                   "delta": delta, **{k: v for k, v in ev.items() if isinstance(v, float)},
                   "tvd_3way_label": tvd_3way_label(train, res.data, schema, label),
                   "duplicates": float(res.data.duplicated().mean()), "cpu_seconds": cpu,
                   "measured": [list(p) for p in getattr(res.mechanism, "pairs_measured_", [])]}
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rec.items()
                              if k != "measured"}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--variants", nargs="+", default=["pair_rounds=0", "pair_rounds=6"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=OUT, help="JSON lines appended here")
    ap.add_argument("--max-train", type=int, default=None,
                    help="census_kdd's (default 20,000) or census_small's (default 30,000) training rows "
                         "(the first of its shuffled split; 0: all)")
    a = ap.parse_args()
    run(a.data, [int(s) for s in a.seeds.split(",")], a.variants, a.epsilon, a.out, a.max_train)


if __name__ == "__main__":
    main()

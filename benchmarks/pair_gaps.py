"""Where the default's 2-way TVD differs from a peer's, pair by pair (numbers in docs/history/mixed-pairs.md).

Usage (from the repository root, PRIVRELEASE_DATA pointing at the shared data sets)::

    PYTHONPATH=src python benchmarks/bench_mixed.py --datasets census_kdd --seed-list 0 \\
        --ours gauss-copula --peers mst-mbi2 --save-releases /tmp/rel --out /tmp/r.json --markdown /tmp/r.md
    PYTHONPATH=src python benchmarks/pair_gaps.py census_kdd /tmp/rel/census_kdd/mst-mbi2-seed0.csv --seed 0

Releases the default (gauss-copula, epsilon 1, delta 1e-6, the given seed) on a tuning table, reads the
peer's saved release, and prints the mean 2-way TVD (10 bins) by kind of pair
(categorical / numeric), by whether the label is in it, and the pairs where the default is furthest behind.
"""

from __future__ import annotations

import argparse

import pandas as pd


def pair_table(real, releases: dict, schema, label, bins=10) -> pd.DataFrame:
    """One row per pair of columns: its kind, whether the label is in it, and each release's
    TVD (:func:`privrelease.evaluation.fidelity.tvd_2way`, schema order)."""
    from privrelease.evaluation.fidelity import tvd_2way

    kind = {c.name: "n" if c.kind == "numeric" else "c" for c in schema.columns}
    tvds = {k: tvd_2way(real, df, schema, bins) for k, df in releases.items()}
    rows = [{"a": a, "b": b, "kind": "".join(sorted(kind[a] + kind[b])), "label": label in (a, b),
             **{k: t[(a, b)] for k, t in tvds.items()}}
            for a, b in next(iter(tvds.values()))]
    return pd.DataFrame(rows)


def main():
    from privrelease.experiments import mixed_tables as mt
    from privrelease.release import release

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", choices=sorted(mt.LOADERS))
    ap.add_argument("peer", help="a peer's saved release (CSV of decoded values, bench_mixed.py --save-releases)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-train", type=int, default=20_000)
    args = ap.parse_args()
    train, _, schema, label = mt.LOADERS[args.data](0, **({"max_train": args.max_train}
                                                          if args.data == "census_kdd" else {}))
    res = release(train, schema, "gauss-copula", 1.0, delta=1e-6, rng=args.seed)
    t = pair_table(train, {"default": res.data, "peer": pd.read_csv(args.peer)}, schema, label)
    pd.set_option("display.width", 200)
    for by in ("kind", "label"):
        print(t.groupby(by)[["default", "peer"]].agg(["mean", "count"]).round(4), "\n")
    print("all pairs:", t[["default", "peer"]].mean().round(4).to_dict())
    t["gap"] = t["default"] - t["peer"]
    print(t.sort_values("gap", ascending=False).head(12).round(4).to_string(index=False))


if __name__ == "__main__":
    main()

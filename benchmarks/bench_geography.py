"""Benchmark: points inside their area, on a generated city, the default beside MST.

    PYTHONPATH=src python benchmarks/bench_geography.py --seeds 3 --peer-venvs /work/peer-venvs \
        --out benchmarks/results/geography.json

The city: 36 neighbourhoods on an irregular 6 x 6 grid of latitude and longitude bands (bands from 0.004 to
0.09 degrees wide), their sizes Zipf-distributed (10,000 stops in the largest, about 50 in the smallest), six
precincts of six neighbourhoods each, a reason that depends on the latitude, an age on the longitude and an
arrest on the reason (the label). Stops lie inside their neighbourhood, latitude and longitude at 5 decimals.
30,000 records released, 6,000 held out; epsilon 1, delta 1e-6, the same seeds for every release. MST (mbi 2.0,
``benchmarks/peers/mbi2_peer.py``) on the harness's 20 equal-width bins, decoded uniformly inside them.

Measured: the share of released stops inside their neighbourhood's box, the spread of latitude inside a
neighbourhood (mean over neighbourhoods, weighted by their real size, of ``|log(sd released / sd real)|``), a
precinct that agrees with its neighbourhood, and ``evaluate``'s 1-, 2- and 3-way TVD. ``--variant NAME`` files
the default's runs under that name (an earlier commit run with ``PYTHONPATH`` pointing at its ``src``), beside
the others already in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REASONS = ["speed", "equipment", "dui", "other"]


def city(n: int = 36_000, seed: int = 0):
    """The generated city: ``(table, schema dict, each neighbourhood's (lat lo, lat hi, lon lo, lon hi))``."""
    g = np.random.default_rng(seed)
    la = np.sort(np.r_[47.50, 47.75, g.uniform(47.50, 47.75, 5)])
    lo = np.sort(np.r_[-122.45, -122.25, g.uniform(-122.45, -122.25, 5)])
    names = [f"N{i}{j}" for i in range(6) for j in range(6)]
    box = np.array([(la[i], la[i + 1], lo[j], lo[j + 1]) for i in range(6) for j in range(6)])
    w = g.zipf(1.6, 36).astype(float)
    nb = g.choice(36, n, p=w / w.sum())
    b = box[nb]
    lat = b[:, 0] + (b[:, 1] - b[:, 0]) * g.beta(2, 2, n)
    lon = b[:, 2] + (b[:, 3] - b[:, 2]) * g.beta(2, 2, n)
    precinct = np.array([f"P{(k // 6) // 2 * 2 + (k % 6) // 3}" for k in range(36)])
    reason = np.where(g.random(n) < 0.3 + 0.4 * (lat > 47.65), "speed", g.choice(REASONS[1:], n))
    age = np.clip(np.round(g.normal(35 + 10 * (lon > -122.35), 11)), 16, 90).astype(int)
    arrest = np.where(g.random(n) < np.where(reason == "dui", 0.5, 0.08), "yes", "no")
    df = pd.DataFrame({"lat": np.round(lat, 5), "lon": np.round(lon, 5), "neighbourhood": np.array(names)[nb],
                       "precinct": precinct[nb], "reason": reason, "age": age, "arrest": arrest})
    schema = {"columns": {
        "lat": {"type": "numeric", "lower": 47.5, "upper": 47.75, "step": 1e-5},
        "lon": {"type": "numeric", "lower": -122.45, "upper": -122.25, "step": 1e-5},
        "neighbourhood": {"type": "categorical", "categories": names},
        "precinct": {"type": "categorical", "categories": sorted(set(precinct))},
        "reason": {"type": "categorical", "categories": REASONS},
        "age": {"type": "numeric", "lower": 16, "upper": 90, "integer": True},
        "arrest": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}}
    return df, schema, dict(zip(names, box))


def structure(real: pd.DataFrame, rel: pd.DataFrame, boxes: dict) -> dict:
    b = np.array([boxes[k] for k in rel["neighbourhood"]])
    inside = (rel.lat >= b[:, 0]) & (rel.lat <= b[:, 1]) & (rel.lon >= b[:, 2]) & (rel.lon <= b[:, 3])
    sd_real, sd_rel = real.groupby("neighbourhood").lat.std(), rel.groupby("neighbourhood").lat.std()
    w = real.neighbourhood.value_counts(normalize=True)
    spread = (np.log(sd_rel / sd_real).abs() * w).dropna()
    precinct = dict(zip(real.neighbourhood, real.precinct))
    return {"inside_area": float(inside.mean()), "lat_spread_log_ratio": float(spread.sum() / w[spread.index].sum()),
            "precinct_agrees": float((rel.precinct == rel.neighbourhood.map(precinct)).mean())}


def measure(train, test, schema, rel, boxes, seed) -> dict:
    from privrelease.evaluation.fidelity import evaluate

    ev = evaluate(train, rel, schema, test, "arrest", sdmetrics=False, baseline=False, seed=seed).summary()
    return {**structure(train, rel, boxes), **{k: ev[k] for k in ("tvd_1way", "tvd_2way", "tvd_3way")}}


def ours(train, test, schema, boxes, seed) -> dict:
    from privrelease.release import release

    t = time.process_time()
    rel = release(train, schema, "gauss-copula", 1.0, delta=1e-6, rng=seed).data
    return {"seed": seed, "cpu_seconds": time.process_time() - t, **measure(train, test, schema, rel, boxes, seed)}


def mst(train, test, schema, boxes, seed, venvs: Path) -> dict:
    sys.path.insert(0, str(HERE))
    import bench_mixed as bm

    from privrelease.experiments.mixed_bench import from_cells, to_cells

    args = argparse.Namespace(peer_venvs=venvs, epsilon=1.0, delta=1e-6, privbayes_degree=2, peer_timeout=3600)
    work = Path("/tmp/privrelease-geography")
    work.mkdir(exist_ok=True)
    r = bm.run_peer("mst-mbi2", to_cells(train, schema, 20), schema, 20, args, seed, work)
    if r["status"] != "ok":
        return {"seed": seed, "status": r["status"]}
    rel = from_cells(r["codes"], schema, 20, rng=np.random.default_rng(seed))
    return {"seed": seed, "cpu_seconds": r.get("cpu_seconds"), **measure(train, test, schema, rel, boxes, seed)}


def main(argv=None):
    from privrelease.schema import Schema

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--peer-venvs", type=Path, default=Path("/work/peer-venvs"))
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--variant", default=None, help="file the default's runs under this name (no peer)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "geography.json")
    a = ap.parse_args(argv)
    df, sch, boxes = city()
    train, test = df.iloc[:30_000], df.iloc[30_000:]
    schema = Schema.from_dict(sch)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    result = json.loads(a.out.read_text()) if a.out.exists() else {"real": structure(train, train, boxes), "runs": {}}
    name = a.variant or "gauss-copula (default)"
    command = "python benchmarks/bench_geography.py " + " ".join(argv or sys.argv[1:])
    result["runs"][name] = {"commit": a.variant or commit, "command": command,
                            "seeds": [ours(train, test, schema, boxes, s) for s in range(a.seeds)]}
    if not (a.no_peer or a.variant):
        result["runs"]["MST, mbi 2.0"] = {"commit": commit, "command": command,
                                          "seeds": [mst(train, test, schema, boxes, s, a.peer_venvs)
                                                    for s in range(a.seeds)]}
    for k, v in result["runs"].items():
        ok = [r for r in v["seeds"] if "inside_area" in r]
        v["summary"] = {m: [float(np.mean([r[m] for r in ok])), float(np.std([r[m] for r in ok]))]
                        for m in ("inside_area", "lat_spread_log_ratio", "precinct_agrees", "tvd_1way", "tvd_2way",
                                  "tvd_3way", "cpu_seconds") if ok and ok[0].get(m) is not None}
        print(k, " ".join(f"{m}={s[0]:.4f}±{s[1]:.4f}" for m, s in v["summary"].items()))
    a.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

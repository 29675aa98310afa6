"""Benchmark: our releases beside MST, AIM and PrivBayes on mixed tables, same data, cells, metrics and run.

    PYTHONPATH=src python benchmarks/bench_mixed.py --datasets adult,diabetes130,hapt --seeds 3 \\
        --out benchmarks/results/mixed.json

For each data set and seed: every release named by ``--ours`` (our mechanisms, in process)
and every peer (each in its own virtual environment under ``--peer-venvs``, created on first
use with ``python -m venv`` and pip from the package index) releases the real training table
at the same epsilon and delta; each release is measured against the real table and tested on
the real held-out records with :func:`privrelease.evaluation.fidelity.evaluate` (1-way, 2-way and
3-way (pair, label) TVD over the schema's public bins and levels; per numeric column KS, W1 over
the public range, quantiles and atom shares; SDMetrics quality, correlation difference, logistic
regression and gradient boosting trained on the release, the majority-class rate). Release time is the wall
and CPU time of the release alone (peers: fit + sample inside their process, with the CPU of
their worker processes).

The peers get the same public cells as the metric: numeric columns in ``--bins`` equal-width
bins over the schema bounds, categorical columns at their declared levels (the full public
domain, occurring or not); released bins are decoded uniformly inside the bin
(``--decode``). MST and AIM sample with the upstream repair of mbi's sampler (see
``benchmarks/peers/snsynth_peer.py``); AIM and PrivBayes are time-bounded, and a run that
exceeds its bound is reported as a timeout. Results are written after every release, so a
long run can be watched and an interrupted one keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PEERS = {
    # name: (venv, helper, method)
    "mst": ("smartnoise", "snsynth_peer.py", "mst"),
    "aim": ("smartnoise", "snsynth_peer.py", "aim"),
    "privbayes": ("datasynthesizer", "privbayes_peer.py", "privbayes"),
    "mst-mbi2": ("mbi2", "mbi2_peer.py", "mst"),
    "aim-mbi2": ("mbi2", "mbi2_peer.py", "aim"),
    "aim-opendp": ("opendp", "opendp_peer.py", "aim"),
}
# smartnoise-synth 1.0.8 also requires opacus (and so torch with its CUDA wheels, gigabytes) for its
# neural synthesizers only; MST and AIM do not import it, so the venv gets the other requirements.
VENV_INSTALL = {
    "smartnoise": [["--no-deps", "smartnoise-synth==1.0.8"],
                   ["Faker>=17", "disjoint-set>=0.9,<0.10", "mbi==1.1.0", "pac-synth>=0.0.8,<0.0.9",
                    "smartnoise-sql>=1.0.10"]],
    "datasynthesizer": [["DataSynthesizer==0.1.13"]],
    # mbi 2.x ships estimation only; MST and AIM are written on it in peers/mbi2_peer.py.
    "mbi2": [["mbi==2.0.0", "jax==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6", "scipy==1.17.1", "pandas==3.1.1"]],
    # OpenDP 0.16's AIM with exactly what it pins (mbi 1.1.0, polars 1.36.1).
    "opendp": [["opendp[mbi]==0.16.0", "jax==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6", "pandas==3.1.1"]],
}
# Bounded peers (time in seconds); every other peer gets --peer-timeout.
BOUNDED = {"aim": "aim_timeout", "privbayes": "privbayes_timeout"}
# How each peer written for this benchmark works (printed with its versions in the report).
PEER_NOTES = {
    "mst-mbi2": "MST (McKenna, Miklau and Sheldon 2021) written in `benchmarks/peers/mbi2_peer.py` on mbi 2's "
                "estimation, after the paper with the defaults of Private-PGM's reference mechanism: rho split "
                "1/3 one-way marginals, 1/3 selecting a maximum spanning tree of pairs (exponential mechanism on "
                "each pair's L1 error under the one-way model), 1/3 the tree's two-way marginals; cells with a "
                "noisy count below 3 sigma merged; mirror descent, 5,000 iterations; JAX in float64.",
    "aim-mbi2": "AIM (McKenna, Mullins, Sheldon and Miklau 2022) written in `benchmarks/peers/mbi2_peer.py` on "
                "mbi 2's estimation with the defaults of Private-PGM's reference mechanism: workload every pair "
                "(at most 10,000 cells), candidates its downward closure; every one-way marginal measured "
                "first; 16 x columns rounds to start with, 90 % of a round on the Gaussian measurement and 10 % "
                "on the exponential-mechanism selection; model bound 80 MB scaled by the budget spent; budget "
                "annealing (noise halved when a measurement moves the model less than the expected noise); "
                "mirror descent, 1,000 iterations per round, warm-started; JAX in float64, its compiled programs "
                "dropped after each round.",
    "aim-opendp": "AIM of the OpenDP Library (`opendp.extras.mbi.AIM` through its contingency table, "
                  "`benchmarks/peers/opendp_peer.py`) on the mbi it pins, with its defaults (half of rho on "
                  "the one-way marginals, 80 MB, 16 x columns rounds) but the same degree-2 workload "
                  "(`queries=2`); OpenDP draws its noise from its own generator, so the seed fixes the sampling "
                  "only; i.i.d. sampling over the junction tree's maximal cliques (the repair above).",
}
PEER_NOTES_COMMON = (
    "These peers turn (epsilon, delta) into zero-concentrated DP by the conversion of Canonne, Kamath and "
    "Steinke (2020) (rho = 0.02436 at epsilon 1, delta 1e-6; the same figure OpenDP's own conversion gives), "
    "under their own neighbouring relation, one record added or removed (each marginal has L2 sensitivity 1); "
    "under ours, one record replaced, the same noise guarantees at most 4 rho (2 rho for the Gaussian "
    "measurements, whose L2 sensitivity becomes sqrt 2; 4 rho for the selections, whose sensitivity doubles). They are bounded only by the peer "
    "time bound ({bound:.0f} s), so that they run to completion; peak memory and rho are in the results JSON.")
METRICS = [("lr_accuracy", "LR acc"), ("lr_auc", "LR AUC"), ("lr_macro_f1", "LR macro-F1"),
           ("gbdt_accuracy", "GBDT acc"), ("gbdt_auc", "GBDT AUC"), ("gbdt_macro_f1", "GBDT macro-F1"),
           ("tvd_1way", "1-way TVD"), ("tvd_2way", "2-way TVD"), ("tvd_3way", "3-way TVD"),
           ("ks_max", "KS worst"), ("ks_mean", "KS mean"), ("w1_range_max", "W1/range worst"),
           ("quantile_error_max", "quantile err. worst"), ("atom_gap_max", "atom gap worst"), ("sdm_overall", "SDM overall"),
           ("sdm_column_shapes", "SDM shapes"), ("sdm_column_pair_trends", "SDM pair trends"),
           ("correlation_difference", "corr. diff."), ("wall_seconds", "wall s"), ("cpu_seconds", "CPU s")]
WIDE_REASON = ("not run: {p} continuous columns ({pairs:,} column pairs of {b}x{b} cells); the marginal-based "
               "peers need every numeric column binned and search over all pairs; pass --peers-on-wide to try "
               "under the time bound")


def log(msg):
    print(f"[{datetime.now(UTC):%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


# ---- peers --------------------------------------------------------------------------------------

def ensure_venv(root: Path, name: str) -> Path:
    """The peer venv's python, creating the venv (python -m venv + pip) when it is missing."""
    py = root / name / "bin" / "python"
    if py.exists():
        return py
    log(f"creating the peer venv {root / name}")
    subprocess.run([sys.executable, "-m", "venv", str(root / name)], check=True)
    for reqs in VENV_INSTALL[name]:
        subprocess.run([str(py), "-m", "pip", "install", "-q", *reqs], check=True)
    return py


def save_release(released, root: Path, ds, name, seed) -> str:
    """A peer's released table (decoded values) as CSV under ``root``, for re-evaluation later."""
    path = root / ds / f"{name}-seed{seed}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    released.to_csv(path, index=False)
    return str(path)


def run_peer(peer: str, cells, schema, bins, args, seed, work: Path) -> dict:
    """One peer release: codes in, codes out, through the peer's helper in its venv."""
    from privrelease.experiments.mixed_bench import cell_cardinalities

    venv, helper, method = PEERS[peer]
    py = ensure_venv(args.peer_venvs, venv)
    inp, out, res, spec = (work / f"{peer}-{seed}.{x}" for x in ("in.csv", "out.csv", "result.json", "spec.json"))
    cells.to_csv(inp, index=False)
    spec.write_text(json.dumps({
        "method": method, "input": str(inp), "output": str(out), "result": str(res), "seed": seed,
        "cardinalities": cell_cardinalities(schema, bins), "epsilon": args.epsilon, "delta": args.delta,
        "rows": len(cells), "degree": args.privbayes_degree}))
    limit = getattr(args, BOUNDED[peer]) if peer in BOUNDED else args.peer_timeout
    t = time.perf_counter()
    try:
        proc = subprocess.run([str(py), str(HERE / "peers" / helper), str(spec)],
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "time_bound_seconds": limit}
    if proc.returncode != 0 or not res.exists():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "failed", "error": tail[:300], "seconds": time.perf_counter() - t}
    r = json.loads(res.read_text())
    import pandas as pd

    r["codes"] = pd.read_csv(out)
    r["status"] = "ok"
    r["helper_log_tail"] = proc.stderr.strip().splitlines()[-3:]
    return r


# ---- ours ---------------------------------------------------------------------------------------

def parse_ours(spec: str) -> tuple[str, dict]:
    """``name`` or ``name@key=value+key=value``: a mechanism and parameters (numbers parsed as numbers)."""
    name, _, rest = spec.partition("@")
    params = {}
    for item in filter(None, rest.split("+")):
        k, _, v = item.partition("=")
        try:
            params[k] = int(v) if v.lstrip("-").isdigit() else float(v)
        except ValueError:
            params[k] = {"true": True, "false": False}.get(v.lower(), v)
    return name, params


def run_ours(spec, train, schema, args, seed) -> dict:
    from privrelease.mechanisms import get_mechanism
    from privrelease.release import release

    name, params = parse_ours(spec)
    delta = args.delta if "delta" in get_mechanism(name).guarantee else None
    t, c = time.perf_counter(), time.process_time()
    res = release(train, schema, name, args.epsilon, delta=delta, rng=seed, **params)
    return {"status": "ok", "wall_seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c,
            "data": res.data}


# ---- the run ------------------------------------------------------------------------------------

def load(name, data_dir):
    """A data set by name; ``name:column`` the same table with ``column`` (categorical) as its label in place of the
    table's own (which becomes a feature): the tuning tables' multi-class labels."""
    base, _, column = name.partition(":")
    train, test, schema, label = _load(base, data_dir)
    if not column:
        return train, test, schema, label
    from privrelease.schema import Schema

    spec = schema.to_dict()
    if spec["columns"].get(column, {}).get("type") != "categorical":
        raise SystemExit(f"{name!r}: {column!r} is not a categorical column of {base}")
    spec["columns"][label].pop("role", None)
    spec["columns"][column]["role"] = "label"
    return train, test, Schema.from_dict(spec), column


def _load(name, data_dir):
    from privrelease.experiments import mixed_bench as mb

    if name == "adult":
        return mb.load_adult()
    if name == "diabetes130":
        return mb.load_diabetes130(data_dir)
    if name == "hapt":
        return mb.load_hapt()
    if name == "census_kdd":  # the tuning subset (20,000 training records)
        from privrelease.experiments.mixed_tables import load_census_kdd

        return load_census_kdd(0, max_train=20_000)
    if name == "census_small":  # the Adult-shaped tuning cut of census_kdd
        from privrelease.experiments.mixed_tables import load_census_small

        return load_census_small(0)
    if name == "wide_mixed":  # a generated table of 101 columns (50,000 training records)
        from privrelease.experiments.mixed_tables import load_wide_mixed

        return load_wide_mixed(0)
    raise SystemExit(f"unknown data set {name!r}: adult, diabetes130, hapt, census_kdd, census_small, wide_mixed")


def summarize(runs) -> dict:
    from privrelease.experiments.mixed_bench import mean_sd

    ok = [r for r in runs if r.get("status") == "ok"]
    out = {"n_ok": len(ok), "statuses": sorted({r["status"] for r in runs})}
    for key, _ in METRICS:
        vals = [r["metrics"].get(key) if key in r.get("metrics", {}) else r.get(key) for r in ok]
        vals = [v for v in vals if v is not None]
        if vals:
            out[key] = mean_sd(vals)
    return out


def versions() -> dict:
    import importlib.metadata as md

    v = {p: md.version(p) for p in ("numpy", "pandas", "scikit-learn", "sdmetrics")}
    from privrelease._version import __version__

    v["privrelease"] = __version__
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, cwd=HERE, capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "src"], check=False, cwd=HERE,
                               capture_output=True, text=True).stdout.strip()
        v["git_commit"] = head + ("+dirty" if dirty else "")  # numbers from uncommitted code say so
    except OSError:
        pass
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="adult,diabetes130,hapt")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed-list", default=None, help="comma-separated seeds to run (overrides --seeds)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "mixed.json")
    ap.add_argument("--markdown", type=Path, default=HERE.parent / "docs" / "results" / "benchmark-mixed.md")
    ap.add_argument("--ours", default=None, help="our mechanisms by name (default: the default mechanism "
                                                  "and jiang-lda; \"\" for none)")
    ap.add_argument("--peers", default="mst,privbayes,aim")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6, help="the same for everyone; must be below 1/n")
    ap.add_argument("--bins", type=int, default=20, help="bins per numeric column (the 1-way metric's)")
    ap.add_argument("--decode", choices=("uniform", "midpoint"), default="uniform")
    ap.add_argument("--peer-venvs", type=Path, default=Path(os.environ.get("PRIVRELEASE_PEER_VENVS",
                                                                          "/work/peer-venvs")))
    ap.add_argument("--peer-timeout", type=float, default=3600)
    ap.add_argument("--aim-timeout", type=float, default=600)
    ap.add_argument("--privbayes-timeout", type=float, default=600)
    ap.add_argument("--privbayes-degree", type=int, default=2)
    ap.add_argument("--save-releases", type=Path, default=None,
                    help="write each peer's released table (decoded CSV) under DIR/DATASET/PEER-seedS.csv")
    ap.add_argument("--peers-on-wide", action="store_true", help="also try the peers on all-numeric wide tables")
    ap.add_argument("--sdmetrics-max-columns", type=int, default=60,
                    help="skip SDMetrics on wider tables (its pair trends cover every pair)")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--max-rows", type=int, default=None, help="a quick look: at most this many train and test "
                                                                "records (a fixed random subset)")
    ap.add_argument("--markdown-from", type=Path, default=None,
                    help="only rewrite --markdown from this results JSON (no release is run)")
    a = ap.parse_args(argv)
    if a.markdown_from is not None:
        a.markdown.write_text(markdown(json.loads(a.markdown_from.read_text())))
        return

    from privrelease.evaluation.columns import majority_rate
    from privrelease.evaluation.fidelity import evaluate, tstr
    from privrelease.experiments.mixed_bench import from_cells, to_cells
    from privrelease.release import DEFAULT_MECHANISM

    ours = [m for m in (f"{DEFAULT_MECHANISM},jiang-lda" if a.ours is None else a.ours).split(",") if m]
    peers = [p for p in a.peers.split(",") if p]
    for p in peers:
        if p not in PEERS:
            raise SystemExit(f"unknown peer {p!r}: {sorted(PEERS)}")
    seeds = [int(x) for x in a.seed_list.split(",")] if a.seed_list else list(range(a.seeds))
    started = time.perf_counter()
    result = {"config": {"command": " ".join([Path(sys.argv[0]).name] + (argv or sys.argv[1:])),
                         "epsilon": a.epsilon, "delta": a.delta, "bins_1way": a.bins, "bins_2way": 10,
                         "peer_bins": a.bins, "decode": a.decode, "seeds": seeds, "ours": ours,
                         "peers": peers, "aim_timeout": a.aim_timeout, "privbayes_timeout": a.privbayes_timeout,
                         "peer_timeout": a.peer_timeout, "max_rows": a.max_rows, "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                         "started_utc": datetime.now(UTC).isoformat(timespec="seconds"),
                         "versions": versions(), "peer_versions": {}},
              "datasets": {}}

    def save():
        result["config"]["elapsed_seconds"] = time.perf_counter() - started
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(result, indent=1, default=float))
        a.markdown.parent.mkdir(parents=True, exist_ok=True)
        a.markdown.write_text(markdown(result))

    with tempfile.TemporaryDirectory(prefix="privrelease-bench-") as tmp:
        work = Path(tmp)
        for ds in [d for d in a.datasets.split(",") if d]:
            train, test, schema, label = load(ds, a.data_dir)
            if a.max_rows:
                train, test = (f.sample(n=min(a.max_rows, len(f)), random_state=0).reset_index(drop=True)
                               for f in (train, test))
            n = len(train)
            if not a.delta < 1.0 / n:
                raise SystemExit(f"delta {a.delta} is not below 1/n = {1 / n:.3g} on {ds}")
            wide = not schema.categorical[1:] and len(schema.numeric) > 100  # only the label is categorical
            use_sdm = len(schema.columns) <= a.sdmetrics_max_columns
            entry = {"n_train": n, "n_test": len(test), "n_columns": len(schema.columns),
                     "n_numeric": len(schema.numeric), "label": label, "label_levels": len(schema[label].categories),
                     "majority_rate": majority_rate(train, test, schema[label]),
                     "sdmetrics": use_sdm if use_sdm else f"skipped: {len(schema.columns)} columns",
                     "real": tstr(train, test, schema, label), "releases": {}}
            result["datasets"][ds] = entry
            log(f"{ds}: {n:,} train, {len(test):,} test records, {len(schema.columns)} columns")
            cells = to_cells(train, schema, a.bins) if peers and not (wide and not a.peers_on_wide) else None
            for seed in seeds:
                for name in ours + peers:
                    rel = entry["releases"].setdefault(name, {"kind": "ours" if name in ours else "peer", "runs": []})
                    if name in peers and cells is None:
                        pairs = len(schema.columns) * (len(schema.columns) - 1) // 2
                        rel["not_run"] = WIDE_REASON.format(p=len(schema.numeric), pairs=pairs, b=a.bins)
                        continue
                    log(f"{ds} seed {seed}: {name} ...")
                    if name in ours:
                        r = run_ours(name, train, schema, a, seed)
                        released = r.pop("data")
                    else:
                        r = run_peer(name, cells, schema, a.bins, a, seed, work)
                        if r["status"] == "ok":
                            released = from_cells(r.pop("codes"), schema, a.bins, a.decode, rng=seed)
                            result["config"]["peer_versions"][name] = r.pop("versions")
                            if a.save_releases is not None:
                                r["release_csv"] = save_release(released, a.save_releases, ds, name, seed)
                    r["seed"] = seed
                    if r["status"] == "ok":
                        ev = evaluate(train, released, schema, test, label, sdmetrics=use_sdm, baseline=False,
                                      bins_1way=a.bins, seed=seed)
                        r["metrics"] = ev.summary()
                        r["tvd_1way_per_column"] = ev.tvd_1way
                        r["numeric_columns"] = ev.numeric  # KS, W1 / range, quantiles, atoms, missing shares
                        three = ev.to_dict()["tvd_3way"]
                        r["tvd_3way_worst"] = dict(list(three["per_pair"].items())[:10]) if three else None
                    rel["runs"].append(r)
                    rel["summary"] = summarize(rel["runs"])
                    log(f"{ds} seed {seed}: {name} {r['status']} "
                        + " ".join(f"{k}={v:.3f}" for k, v in (r.get("metrics") or {}).items())
                        + (f" wall={r['wall_seconds']:.1f}s" if "wall_seconds" in r else ""))
                    save()
    result["config"]["finished_utc"] = datetime.now(UTC).isoformat(timespec="seconds")
    save()
    log(f"done in {time.perf_counter() - started:.0f} s: {a.out}, {a.markdown}")


# ---- report -------------------------------------------------------------------------------------

def _cell(v, key):
    if v is None:
        return ""
    m, s = v
    if not np.isfinite(m):
        return ""
    if key.endswith("seconds"):
        return f"{m:.1f} ± {s:.1f}" if m >= 1 else f"{m:.2f} ± {s:.2f}"
    return f"{m:.3f} ± {s:.3f}"


def markdown(result) -> str:
    c = result["config"]
    lines = ["# Mixed-table benchmark: our releases beside MST, AIM and PrivBayes", "",
             "Generated by `benchmarks/bench_mixed.py` (do not edit by hand; rerun it). Every number below was "
             "measured in one run of",
             "", f"    PYTHONPATH=src python benchmarks/{c['command']}", "",
             f"epsilon = {c['epsilon']}, delta = {c['delta']:g} for every release (below 1/n on every data set); "
             f"seeds {c['seeds']}; cells: numeric columns in {c['bins_1way']} equal-width bins over the schema's "
             f"public bounds (10 for pairs), categorical columns at their declared levels. The peers get the "
             f"same {c['peer_bins']} bins and the full public domain; their bins are decoded {c['decode']}ly "
             f"inside the bin. MST and AIM sample i.i.d. from the model re-expressed over its junction tree's "
             f"maximal cliques (the upstream repair of mbi's sampler, ryan112358/mbi#145). AIM is bounded to "
             f"{c['aim_timeout']:.0f} s and PrivBayes to {c['privbayes_timeout']:.0f} s per release; beyond "
             f"that a release counts as a timeout. Entries are mean ± sd over the seeds that finished "
             f"(the spread is the sample sd across seeds).", "",
             f"Started {c['started_utc']}" + (f", finished {c['finished_utc']}" if c.get("finished_utc") else
                                              " (still running or interrupted)")
             + f"; elapsed {c.get('elapsed_seconds', 0) / 60:.0f} min on {c['machine']} (shared machine: "
               "times are indicative; compare the ratios within a run).", "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in c["versions"].items()) + "."]
    if c.get("note"):
        lines += ["", f"**Note.** {c['note']}"]
    ran = {n for e in result["datasets"].values() for n in e["releases"]}
    described = {**c.get("peer_versions", {}), **{p: {} for p in PEER_NOTES if p in ran and p not in
                                                 c.get("peer_versions", {})}}
    for peer, v in described.items():
        lines += ["", f"Peer {peer} (own venv): " + (", ".join(f"{k} {x}" for k, x in v.items()) + "."
                                                     if v else "no release finished.")
                  + (f" {PEER_NOTES[peer]}" if peer in PEER_NOTES else "")]
    if set(described) & set(PEER_NOTES):
        lines += ["", PEER_NOTES_COMMON.format(bound=c.get("peer_timeout", 0))]
    lines.append("")
    for ds, e in result["datasets"].items():
        multi = e["label_levels"] > 2
        keys = [(k, h) for k, h in METRICS if (("auc" not in k) if multi else ("macro_f1" not in k))]
        lines += ["", f"## {ds}", "",
                  f"{e['n_train']:,} training records (released), {e['n_test']:,} real test records, "
                  f"{e['n_columns']} columns ({e['n_numeric']} numeric), label `{e['label']}` "
                  f"({e['label_levels']} levels). SDMetrics: "
                  + ("computed" if e["sdmetrics"] is True else str(e["sdmetrics"])) + "."
                  + (f" Majority-class rate on the test records (the accuracy of predicting the real table's most "
                     f"frequent label for everyone): {e['majority_rate']:.3f}." if "majority_rate" in e else ""), "",
                  "| release | " + " | ".join(h for _, h in keys) + " | runs |",
                  "| --- |" + " --- |" * (len(keys) + 1)]
        real = e["real"]
        rv = {"lr_accuracy": real["logistic_regression"]["accuracy"],
              "gbdt_accuracy": real["gradient_boosting"]["accuracy"]}
        second = "macro_f1" if multi else "auc"
        rv[f"lr_{second}"] = real["logistic_regression"][second]
        rv[f"gbdt_{second}"] = real["gradient_boosting"][second]
        lines.append("| real data (train on real) | " + " | ".join(
            f"{rv[k]:.3f}" if k in rv else ("0" if k.startswith("tvd") else "-") for k, _ in keys) + " | - |")
        for name, rel in e["releases"].items():
            s = rel.get("summary", {})
            if rel.get("not_run"):
                lines.append(f"| {name} | " + rel["not_run"] + " |" + " |" * len(keys))
                continue
            runs = rel["runs"]
            note = f"{s.get('n_ok', 0)}/{len(runs)} ok"
            bad = [r for r in runs if r["status"] != "ok"]
            if bad:
                note += "; " + ", ".join(f"seed {r['seed']}: {r['status']}"
                                         + (f" at {r['time_bound_seconds']:.0f} s" if r["status"] == "timeout"
                                            else f" ({r.get('error', '')})") for r in bad)
            label = f"{name} (ours)" if rel["kind"] == "ours" else name
            lines.append(f"| {label} | " + " | ".join(_cell(s.get(k), k) for k, _ in keys) + f" | {note} |")
        lines += per_column_markdown(e)
    lines += ["", "TVD: total variation distance of each column's (pair's) histogram, real against released, "
              "mean over columns (pairs); lower is better. 3-way TVD: the same over (pair, label) triples. "
              "KS: two-sample Kolmogorov-Smirnov statistic of a numeric column's values (worst column, mean over "
              "numeric columns). W1/range: Wasserstein-1 distance over the public range. quantile err.: "
              "|released - real| / |real| of the median, p90 or p99 (in steps where the real one is 0), the worst. "
              "atom gap: the largest change in the share of a value held by at least 1 % of the real records. "
              "Definitions: docs/evaluation.md. SDM: SDMetrics QualityReport (higher is better). "
              "corr. diff.: mean |r_real - r_released| over encoded column pairs of different columns. LR / GBDT: "
              "standardised logistic regression / HistGradientBoostingClassifier trained on the release, tested "
              "on the real test records. Times: the release alone (fit + sample).", ""]
    return "\n".join(lines)


def per_column_markdown(e, most: int = 15) -> list[str]:
    """Per numeric column, worst first: KS and W1 / range of every release (mean over its seeds), real and
    released median and p90 (mean over seeds); at most ``most`` columns (the worst by KS over the releases)."""
    runs = {name: [r for r in rel.get("runs", []) if r.get("status") == "ok" and r.get("numeric_columns")]
            for name, rel in e["releases"].items()}
    runs = {k: v for k, v in runs.items() if v}
    if not runs:
        return []
    cols = list(next(iter(runs.values()))[0]["numeric_columns"])

    def mean(name, col, get):
        vals = [get(r["numeric_columns"][col]) for r in runs[name] if col in r["numeric_columns"]]
        vals = [v for v in vals if v is not None and np.isfinite(v)]
        return float(np.mean(vals)) if vals else float("nan")

    worst = sorted(cols, key=lambda c: -max(mean(n, c, lambda m: m["ks"]) for n in runs))
    shown = worst[:most]
    lines = ["", f"Numeric columns, worst KS first ({len(shown)} of {len(cols)}): KS / W1 over the range, and the "
             "released median / p90 (real in the header), mean over seeds.", "",
             "| column (real median / p90) | " + " | ".join(runs) + " |", "| --- |" + " --- |" * len(runs)]
    for c in shown:
        q = next(iter(runs.values()))[0]["numeric_columns"][c]["quantiles"]
        cells = []
        for n in runs:
            med = mean(n, c, lambda m: m["quantiles"]["median"]["released"])
            p90 = mean(n, c, lambda m: m["quantiles"]["p90"]["released"])
            cells.append(f"{mean(n, c, lambda m: m['ks']):.3f} / {mean(n, c, lambda m: m['w1_range']):.3f}; "
                         f"{med:.4g} / {p90:.4g}")
        lines.append(f"| {c} ({q['median']['real']:.4g} / {q['p90']['real']:.4g}) | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    main()

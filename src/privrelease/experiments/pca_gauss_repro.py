"""PCA-Gauss (Chanyaswad, Liu, Mittal; seed 002): Tables II-IV and Figure 1 on the project's data.

Substitutions (the paper's data sets are not available; see docs/history/pca-gauss.md):

* clustering (Table II): GFE with 16 of 18 videos (23,572 frames, 300 coordinates);
* classification (Table III): the derived HAPT window features (206 features; binary
  "moving" = walking / upstairs / downstairs, and the 6-class activity task) and the gas
  sensor drift data (8 of 10 batches, 128 features, 6 gases) instead of Realdisp;
* regression (Table IV): Communities and Crime (ViolentCrimesPerPop) instead of Twitter Buzz.

Encoding. Every feature is min-max scaled to [0, 1] with bounds taken from train and test
together - treated as public, as the paper's scaling to [-1, 1] was (a stated assumption,
not a private computation). Communities and Crime: the columns with '?' values are dropped
(which columns have them is documented in the data set's public description), as are the
5 non-predictive columns.

Learners (declared, not tuned): K-means with k = 9 (the expressions) and silhouette;
SVM (RBF, C = 1, gamma = "scale", standardised on the training data); kernel ridge (RBF,
alpha = 1, gamma = 1/d). Models trained on released data are tested on real held-out data;
methods released in a reduced space are tested on the test data mapped with the same
public or released projection.

Hyper-parameters (E16). The paper reports the best dimension P (and the best eps_PCA split)
chosen on the results, which is not private. We report both: "best over grid" (as the
paper) and one fixed declared choice (P = 10, pca_share = 0.2), fixed before any run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..evaluation.utility import kmeans_silhouette, krr_rmse, svm_accuracy
from ..mechanisms import get_mechanism
from ..mechanisms.baselines.projected import randomized_response
from ..noise import make_source
from ._pca_gauss_data import load_crime, load_gas, load_gfe, load_hapt
from .registry import pyplot, save_figure, write_json

PAPER = "Chanyaswad, Liu, Mittal 2017 (PCA-Gauss, arXiv:1709.00054)"
FIXED = {"P": 10, "pca_share": 0.2}
P_GRID = [5, 10, 20]
SHARE_GRID = [0.1, 0.5]
DELTA = 1e-5
LABEL_SHARE = 0.1  # row-aligned baselines: share of epsilon for randomized-response labels / noisy targets


# ---- data -------------------------------------------------------------------------------

def _limited(fn):
    """Run with one BLAS/OpenMP thread: these workloads are many small matrices, where threads only contend."""
    import functools

    @functools.wraps(fn)
    def wrapper(*a, **k):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return fn(*a, **k)

    return wrapper


# ---- methods: each returns (train_X, train_y, test_X) in the space the learner uses ------------

def _pcagmm(task, eps, P, share, seed, source):
    C = task["C"]
    common = dict(n_components=P, output_space="reduced", rng=seed)
    if task["kind"] == "class":
        cls = get_mechanism("pca-gmm")
        common["n_classes"] = C
    else:
        cls = get_mechanism("pca-gauss-supervised")
    if source == "public":
        m = cls(eps, pca_source="public", public_data=task["Xpub"], **common)
    elif source == "laplace":
        m = cls(eps, pca_source="laplace", pca_share=share, **common)
    else:
        m = cls(eps, pca_source="analyze-gauss", pca_share=share, delta=DELTA, **common)
    m.fit(task["X"], task["y"])
    Xs, ys = m.sample(task["X"].shape[0])
    if task["kind"] == "reg":
        ys = ys  # encoded target in [0, 1] = the data's own scale here
    return Xs, ys, m.basis_.project(task["Xte"])


def _noisy_labels(task, eps, seed):
    src = make_source(seed + 7)
    if task["kind"] == "class":
        return randomized_response(task["y"], task["C"], eps, src)
    t, _ = src.add_laplace(task["y"], 1.0, eps, coords=1)
    return t


def _row_aligned(task, eps, P, seed, name, **kw):
    e_x, e_y = eps * (1 - LABEL_SHARE), eps * LABEL_SHARE
    m = get_mechanism(name)(e_x, n_components=P, output_space="reduced", rng=seed, **kw).fit(task["X"])
    Y = m.transform(task["X"])
    return Y, _noisy_labels(task, e_y, seed), (task["Xte"] - 0.5) @ m.components_.T


def _joint_synthetic(task, eps, seed, name, **kw):
    """Original-space synthesizers: labels via per-class models; a regression target as an extra column."""
    if task["kind"] == "class":
        m = get_mechanism(name)(eps, rng=seed, n_classes=task["C"], **kw).fit(task["X"], task["y"])
        Xs, ys = m.sample(task["X"].shape[0])
        return Xs, ys, task["Xte"]
    Z = np.column_stack([task["X"], task["y"]])
    m = get_mechanism(name)(eps, rng=seed, **kw).fit(Z)
    Zs, _ = m.sample(task["X"].shape[0])
    return Zs[:, :-1], np.clip(Zs[:, -1], 0, 1), task["Xte"]


def _methods(task, quick):
    blr_kw = dict(n_candidates=20 if quick else 200, candidate_size=200 if quick else 1000,
                  n_queries=100 if quick else 300)
    jl_kw = dict(n_projections=200 if quick else 1000)
    out = {
        "Li et al. (identity, Bernoulli RP)": lambda eps, P, sh, s: _row_aligned(task, eps, P, s, "compressive"),
        "Jiang et al. PubPCA (identity)": lambda eps, P, sh, s: _row_aligned(
            task, eps, P, s, "jiang-public", public_data=task["Xpub"]),
        "Blum et al. (exp. mechanism, BLR pool)": lambda eps, P, sh, s: _joint_synthetic(task, eps, s, "blr", **blr_kw),
        "Liu (MODIPS, Gaussian)": lambda eps, P, sh, s: _joint_synthetic(task, eps, s, "modips"),
        "Blocki et al. adaptation (Gaussian, JL)": lambda eps, P, sh, s: _joint_synthetic(
            task, eps, s, "blocki-jl", delta=DELTA, **jl_kw),
        "PCA-Gauss + PubPCA": lambda eps, P, sh, s: _pcagmm(task, eps, P, sh, s, "public"),
        "PCA-Gauss + LapPCA": lambda eps, P, sh, s: _pcagmm(task, eps, P, sh, s, "laplace"),
        "PCA-Gauss + AG-PCA": lambda eps, P, sh, s: _pcagmm(task, eps, P, sh, s, "analyze-gauss"),
    }
    if task["kind"] == "class":
        out["Jiang et al. PubLDA (identity)"] = lambda eps, P, sh, s: _row_aligned(
            task, eps, min(P, task["C"] - 1), s, "jiang-public", public_data=task["Xpub"],
            public_labels=task["ypub"], method="lda")
    return out


def _score(task, Xtr, ytr, Xte, seed, max_train):
    if task["kind"] == "class":
        return svm_accuracy(Xtr, ytr, Xte, task["yte"], seed=seed, max_train=max_train)
    return krr_rmse(Xtr, ytr, Xte, task["yte"], seed=seed, max_train=max_train)


def _uses_grid(name):
    return name.startswith("PCA-Gauss")


def _evaluate_task(task, eps, trials, quick, seed, progress=None):
    max_train = 1500 if quick else 3000
    res = {}
    real = _score(task, task["X"], task["y"], task["Xte"], seed, max_train)
    pub = _score(task, task["Xpub"], task["ypub"], task["Xte"], seed, max_train)
    res["Real data (non-private)"] = {"fixed": real}
    res["Public records only"] = {"fixed": pub}
    for name, fn in _methods(task, quick).items():
        t0 = time.time()
        row = {}
        configs = {"fixed": (FIXED["P"], FIXED["pca_share"])}
        if not quick and _uses_grid(name):
            shares = SHARE_GRID if ("LapPCA" in name or "AG-PCA" in name) else [FIXED["pca_share"]]
            for P in P_GRID:
                for sh in shares:
                    configs[f"P={P},share={sh}"] = (P, sh)
        for key, (P, sh) in configs.items():
            vals = []
            for t in range(trials):
                Xtr, ytr, Xte = fn(eps, P, sh, seed * 1000 + t)
                vals.append(_score(task, Xtr, ytr, Xte, seed, max_train))
            row[key] = float(np.mean(vals))
            if len(vals) > 1:
                row[key + "_sd"] = float(np.std(vals))
        grid = {k: v for k, v in row.items() if not k.endswith("_sd")}
        better = max if task["kind"] == "class" else min
        best_key = better(grid, key=grid.get)
        row["best_over_grid"] = grid[best_key]
        row["best_config (non-private choice, E16)"] = best_key
        res[name] = row
        if progress:
            progress(f"{name}: {row['fixed']:.3f} ({time.time() - t0:.0f} s)")
    return res


def _bar(ax, res, title, metric):
    names = list(res)
    vals = [res[n]["fixed"] for n in names]
    ax.barh(range(len(names)), vals, color=["#888" if "Real" in n or "Public" in n else
                                           ("#2a7" if "PCA-Gauss" in n else "#59c") for n in names])
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(metric + " (fixed P = 10)")


# ---- Table III --------------------------------------------------------------------------

@_limited
def run_table3(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict:
    plt = pyplot()

    out_dir = Path(out_dir)
    tasks = {**load_hapt(data_dir, quick, seed), **load_gas(data_dir, quick, seed)}
    if quick:
        tasks = {k: tasks[k] for k in ("hapt-moving", "gas-6class")}
    trials = 1 if quick else 2
    results = {name: _evaluate_task(t, 1.0, trials, quick, seed, progress) for name, t in tasks.items()}
    claims = {
        "pubpca_vs_blocki": "PCA-Gauss + PubPCA more than 15% (accuracy points) better than the Blocki adaptation",
        "lap_ag_cost": "LapPCA / AG-PCA lose about 2% / 5% against PubPCA and still beat all baselines",
        "public_only": "training on the 600 public records alone: 62.71% (Realdisp)",
    }
    checks = {}
    for name, r in results.items():
        pub, lap, ag = (r[f"PCA-Gauss + {s}"]["fixed"] for s in ("PubPCA", "LapPCA", "AG-PCA"))
        blocki = r["Blocki et al. adaptation (Gaussian, JL)"]["fixed"]
        base = max(v["fixed"] for k, v in r.items() if not k.startswith(("PCA-Gauss", "Real", "Public")))
        checks[name] = {"pubpca_minus_blocki": pub - blocki, "pubpca_minus_lappca": pub - lap,
                        "pubpca_minus_agpca": pub - ag, "best_baseline": base,
                        "pca_gauss_beats_all_baselines": bool(min(lap, ag, pub) > base)}
    ok = [n for n, c in checks.items() if c["pubpca_minus_blocki"] > 0.15]
    verdict = (f"PubPCA beats Blocki by > 15 points on {len(ok)}/{len(checks)} tasks ({', '.join(ok) or 'none'}); "
               + "; ".join(f"{n}: Pub-Lap {c['pubpca_minus_lappca']:+.3f}, Pub-AG {c['pubpca_minus_agpca']:+.3f}, "
                           f"all PCA-Gauss beat baselines: {c['pca_gauss_beats_all_baselines']}"
                           for n, c in checks.items()))
    out = {"name": "pca-gauss-table3", "paper": PAPER, "quick": quick, "epsilon": 1.0, "delta_for_AG_and_Blocki": DELTA,
           "fixed_choice": FIXED, "grid": {"P": P_GRID, "pca_share": SHARE_GRID}, "trials": trials,
           "paper_claims": claims, "paper_numbers": "Table III numbers were lost in extraction; claims only",
           "ours": results, "checks": checks, "verdict": verdict,
           "substitutions": "HAPT derived features and gas drift (8 of 10 batches) instead of Realdisp; "
                            "600-record public slice held out of the training data (200 in quick mode)"}
    write_json(out, out_dir, "pca-gauss-table3")
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4.5))
    for ax, (name, r) in zip(np.atleast_1d(axes), results.items()):
        _bar(ax, r, name, "SVM accuracy")
    fig.tight_layout()
    save_figure(fig, out_dir, "pca-gauss-table3")
    return out


# ---- Table IV ---------------------------------------------------------------------------------

@_limited
def run_table4(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict:
    plt = pyplot()

    out_dir = Path(out_dir)
    tasks = load_crime(data_dir, quick, seed)
    trials = 1 if quick else 5
    results = {n: _evaluate_task(t, 1.0, trials, quick, seed, progress) for n, t in tasks.items()}
    r = results["crime"]
    pub = r["PCA-Gauss + PubPCA"]["fixed"]
    real = r["Real data (non-private)"]["fixed"]
    blocki = r["Blocki et al. adaptation (Gaussian, JL)"]["fixed"]
    verdict = (f"RMSE: real {real:.4f}, PCA-Gauss+PubPCA {pub:.4f} (ratio {pub / real:.2f}; paper: about equal), "
               f"Blocki {blocki:.4f} ({blocki / pub:.1f}x PubPCA; paper: about 200x on Twitter Buzz)")
    out = {"name": "pca-gauss-table4", "paper": PAPER, "quick": quick, "epsilon": 1.0, "fixed_choice": FIXED,
           "trials": trials, "paper_claims": {"pubpca_vs_real": "statistically equal RMSE",
                                               "vs_blocki": "about 200x better", "public_only_rmse": 0.07},
           "ours": results, "verdict": verdict,
           "substitutions": "Communities and Crime (1,994 records) instead of Twitter Buzz (583k); columns with "
                            "'?' dropped publicly: " + ", ".join(tasks["crime"]["dropped_columns"]),
           "n_features": int(tasks["crime"]["X"].shape[1])}
    write_json(out, out_dir, "pca-gauss-table4")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    _bar(ax, r, "Communities and Crime", "KRR RMSE")
    ax.set_xscale("log")
    save_figure(fig, out_dir, "pca-gauss-table4")
    return out


# ---- Table II -----------------------------------------------------------------------------------

def _table2_methods(X, eps, quick) -> dict:
    """Table II's methods: ``(seed, P) -> released table`` (in the space it is released in)."""
    n = X.shape[0]
    blr_kw = dict(n_candidates=20 if quick else 100, candidate_size=200 if quick else 500,
                  n_queries=100 if quick else 300)
    return {
        "Li et al. (identity, Bernoulli RP)": lambda s, P: get_mechanism("compressive")(
            eps, n_components=P, output_space="reduced", rng=s).fit(X).transform(X),
        "Jiang et al. (identity, DP PCA)": lambda s, P: get_mechanism("jiang-pca")(
            eps, n_components=P, rng=s).fit(X).transform(X),
        "Blum et al. (exp. mechanism, BLR pool)": lambda s, P: get_mechanism("blr")(
            eps, rng=s, **blr_kw).fit(X).sample(n)[0],
        "Liu (MODIPS, Gaussian)": lambda s, P: get_mechanism("modips")(eps, rng=s).fit(X).sample(n)[0],
        "Blocki et al. adaptation (Gaussian, JL)": lambda s, P: get_mechanism("blocki-jl")(
            eps, delta=DELTA, n_projections=200 if quick else 1000, rng=s).fit(X).sample(n)[0],
        "PCA-Gauss (Alg. 1, same-data spectrum)": lambda s, P: get_mechanism("pca-gauss")(
            eps, n_components=P, rng=s).fit(X).sample(n)[0],
        "PCA-Gauss (Alg. 1, LapPCA basis, full Gaussian)": lambda s, P: get_mechanism("pca-gauss")(
            eps, n_components=P, pca_source="laplace", output_space="reduced", rng=s).fit(X).sample(n)[0],
    }


def _table2_result(res, quick, trials, ss, n) -> dict:
    real = res["Real data (non-private)"]["fixed"]
    pg = res["PCA-Gauss (Alg. 1, same-data spectrum)"]
    bl = res["Blocki et al. adaptation (Gaussian, JL)"]["fixed"]
    verdict = (f"silhouette: real {real:.3f}; PCA-Gauss {pg['fixed']:.3f} (fixed P) / {pg['best_over_grid']:.3f} "
               f"(best P), gap to real {real - pg['best_over_grid']:+.3f} (paper: about 0.06 below); "
               f"Blocki {bl:.3f}, ratio {pg['best_over_grid'] / bl if bl > 0 else float('inf'):.1f}x (paper: about 4x)")
    return {"name": "pca-gauss-table2", "paper": PAPER, "quick": quick, "epsilon": 1.0, "fixed_choice": FIXED,
            "trials": trials, "k_clusters": 9, "silhouette_sample": ss,
            "paper_claims": {"vs_real": "PCA-Gauss about 0.06 below real data", "vs_blocki": "about 4x better"},
            "ours": res, "verdict": verdict,
            "caveats": ["silhouettes of releases in a reduced space are computed in that space (as released)",
                        "E10: the same-data Algorithm 1 releases only a noisy spectrum; its samples carry no "
                        "cluster structure, so a high silhouette reflects K-means on an anisotropic Gaussian"],
            "substitutions": f"GFE with 16 of 18 videos ({n} frames, 300 coordinates)"}


@_limited
def run_table2(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict:
    plt = pyplot()

    out_dir = Path(out_dir)
    X = load_gfe(data_dir, quick, seed)
    n, eps, P = X.shape[0], 1.0, FIXED["P"]
    trials = 1 if quick else 2
    ss = 1000 if quick else 5000

    def sil(Z, s):
        return kmeans_silhouette(Z, 9, seed=s, sample_size=ss)

    res = {"Real data (non-private)": {"fixed": sil(X, seed)}}
    grid = [] if quick else [2, 5, 10, 20]
    for name, fn in _table2_methods(X, eps, quick).items():
        row = {"fixed": float(np.mean([sil(fn(seed * 1000 + t, P), seed) for t in range(trials)]))}
        if grid and name.startswith("PCA-Gauss"):
            for q in grid:
                row[f"P={q}"] = float(np.mean([sil(fn(seed * 1000 + t, q), seed) for t in range(trials)]))
        g = {k: v for k, v in row.items()}
        row["best_over_grid"] = max(g.values())
        row["best_config (non-private choice, E16)"] = max(g, key=g.get)
        res[name] = row
        if progress:
            progress(f"{name}: {row['fixed']:.3f}")
    out = _table2_result(res, quick, trials, ss, n)
    write_json(out, out_dir, "pca-gauss-table2")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    _bar(ax, res, "GFE clustering", "silhouette")
    save_figure(fig, out_dir, "pca-gauss-table2")
    return out


# ---- Figure 1 ----------------------------------------------------------------------------------

@_limited
def run_fig1(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict:
    plt = pyplot()

    out_dir = Path(out_dir)
    eps_list = [1.0] if quick else [0.25, 0.5, 1.0, 2.0, 4.0]
    P_list = [2, 5] if quick else [2, 3, 5, 10, 20, 40]
    X = load_gfe(data_dir, quick, seed)
    cls = load_hapt(data_dir, quick, seed)["hapt-6class"]
    reg = load_crime(data_dir, quick, seed)["crime"]
    max_train = 1500 if quick else 6000
    curves = {"clustering (GFE, silhouette)": {}, "classification (HAPT 6-class, SVM accuracy)": {},
              "regression (Crime, KRR RMSE)": {}}
    trials = 1 if quick else 3
    refs = [kmeans_silhouette(X, 9, seed=seed, sample_size=1000 if quick else 5000),
            svm_accuracy(cls["X"], cls["y"], cls["Xte"], cls["yte"], seed=seed, max_train=max_train),
            krr_rmse(reg["X"], reg["y"], reg["Xte"], reg["yte"], seed=seed)]
    for eps in eps_list:
        c1, c2, c3 = [], [], []
        for P in P_list:
            v1, v2, v3 = [], [], []
            for t in range(trials):
                s = seed * 1000 + t
                Z = get_mechanism("pca-gauss")(eps, n_components=P, rng=s).fit(X).sample(X.shape[0])[0]
                v1.append(kmeans_silhouette(Z, 9, seed=seed, sample_size=1000 if quick else 5000))
                Xs, ys, Xte = _pcagmm(cls, eps, P, FIXED["pca_share"], s, "public")
                v2.append(svm_accuracy(Xs, ys, Xte, cls["yte"], seed=seed, max_train=max_train))
                Xs, ys, Xte = _pcagmm(reg, eps, P, FIXED["pca_share"], s, "public")
                v3.append(krr_rmse(Xs, ys, Xte, reg["yte"], seed=seed))
            c1.append(float(np.mean(v1)))
            c2.append(float(np.mean(v2)))
            c3.append(float(np.mean(v3)))
        for key, c in zip(curves, (c1, c2, c3)):
            curves[key][str(eps)] = c
        if progress:
            progress(f"epsilon {eps} done")
    out = {"name": "pca-gauss-fig1", "paper": PAPER, "quick": quick, "P": P_list, "epsilons": eps_list,
           "trials": trials, "real_data (non-private, original features)": dict(zip(curves, refs)),
           "methods": "clustering: pca-gauss same-data spectrum; classification: pca-gmm + PubPCA; "
                      "regression: pca-gauss-supervised + PubPCA",
           "paper_claims": "utility against P at several epsilons (values lost); trend: smaller P better at "
                           "small epsilon",
           "ours": curves,
           "verdict": "; ".join(f"{k}: best P per epsilon " + ", ".join(
               f"{e}:{P_list[int(np.argmax(v) if 'RMSE' not in k else np.argmin(v))]}" for e, v in c.items())
               for k, c in curves.items())}
    write_json(out, out_dir, "pca-gauss-fig1")
    _fig1_figure(plt, curves, refs, P_list, out_dir)
    return out


def _fig1_figure(plt, curves, refs, P_list, out_dir):
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, (k, c), ref in zip(axes, curves.items(), refs):
        for e, v in c.items():
            ax.plot(P_list, v, marker="o", label=f"eps={e}")
        ax.axhline(ref, color="k", ls="--", lw=1, label="real data")
        ax.set_xscale("log")
        ax.set_xticks(P_list)
        ax.set_xticklabels([str(q) for q in P_list])
        ax.minorticks_off()
        ax.set_xlabel("P")
        ax.set_title(k, fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, out_dir, "pca-gauss-fig1")

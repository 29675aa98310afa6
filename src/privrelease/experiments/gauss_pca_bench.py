"""gauss-pca benchmark: the targets of the default release, measured on real data.

* HAPT window features (206 numeric columns, 6 activities, 7,415 training windows of 21
  subjects; test on the 9 other subjects): accuracy of a logistic regression trained on the
  release at epsilon = 1, delta = 1e-5, no public data. Target 0.85; a faithful corrected
  ``pca-gmm`` reaches about 0.30 there, train on real 0.955.
* UCI Adult (bundled complete rows; tested on the real test file): accuracy and AUC at
  epsilon = 1, delta = 1e-5 against MST (0.801 / 0.816 in about 107 s, mean of 3 runs, as
  measured for the issue; ``smartnoise-synth`` is not installed here, so these are quoted)
  and the time ratio to MST's 107 s (target: at least 50x faster).
* Release time of a streamed n x 100 Parquet file (1,000,000 rows in the full run) against
  the one-pass floor (read + encode + sufficient statistics, then sample and write n rows
  from a Gaussian), and peak memory (VmHWM of this process).

HAPT's numeric bounds are the training table's min and max (a stand-in for published
ranges: NOT private, stated in the JSON). The defaults of gauss-pca were chosen on
gas_drift (and musk2), not on these data. Seeded noise (continuous Gaussian) calibrated
as a real release (the zCDP conversion), so the numbers describe a real release.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ..evaluation.resources import peak_rss_mb
from ..linalg import psd_sqrt
from .registry import pyplot, save_figure, write_json

NAME = "gauss-pca-bench"
EPS, DELTA = 1.0, 1e-5
REFERENCE = {
    "hapt": {"target_accuracy": 0.85, "pca_gmm_accuracy": 0.30, "prototype_accuracy": 0.82,
             "train_on_real_accuracy_issue": 0.955},
    "adult": {"mst_accuracy": 0.801, "mst_auc": 0.816, "mst_seconds": 107.0, "privbayes_accuracy": 0.776,
              "privbayes_auc": 0.827, "privbayes_seconds": 684.0, "target_speedup": 50.0},
    "stream": {"target_ratio_to_floor": 2.0},
}


# ---- data ----------------------------------------------------------------------------------

def _numeric_schema(train, features, label, levels):
    from ..schema import Schema

    cols = {}
    for f in features:
        lo, hi = float(train[f].min()), float(train[f].max())
        cols[f] = {"type": "numeric", "lower": lo, "upper": hi if hi > lo else lo + 1.0}
    cols[label] = {"type": "categorical", "categories": [str(v) for v in levels], "role": "label"}
    return Schema.from_dict({"columns": cols})


def load_hapt():
    import pandas as pd

    from ..datasets import require_dataset

    d = require_dataset("hapt_features")
    tr = pd.read_csv(d / "hapt_train.csv.gz")
    te = pd.read_csv(d / "hapt_test.csv.gz")
    feats = [c for c in tr.columns if c not in ("activity", "subject")]
    for df in (tr, te):
        df["activity"] = df["activity"].astype(str)
    schema = _numeric_schema(tr, feats, "activity", sorted(tr["activity"].unique(), key=int))
    return tr[feats + ["activity"]], te[feats + ["activity"]], schema, "activity"


def load_adult():
    from ..datasets import load_example

    tr, schema = load_example("adult", "train")
    te, _ = load_example("adult", "test")
    return tr, te, schema, schema.label.name


# ---- evaluation ------------------------------------------------------------------------------

def evaluate(train_df, test_df, schema, label) -> dict:
    """Logistic regression (standardised encoded features) trained on ``train_df``, tested on ``test_df``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..schema import Encoder

    enc = Encoder(schema, [c.name for c in schema.columns if c.name != label])
    Xtr, Xte = enc.encode(train_df).X, enc.encode(test_df).X
    ytr = train_df[label].astype(str).to_numpy()
    yte = test_df[label].astype(str).to_numpy()
    if len(np.unique(ytr)) < 2:
        return {"accuracy": float(np.mean(yte == ytr[0])), "auc": 0.5}
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)).fit(Xtr, ytr)
    out = {"accuracy": float(clf.score(Xte, yte))}
    if len(clf.classes_) == 2:
        out["auc"] = float(roc_auc_score(yte == clf.classes_[1], clf.predict_proba(Xte)[:, 1]))
    return out


def run_release(train, test, schema, label, seed, **params) -> dict:
    from ..release import release

    t = time.perf_counter()
    res = release(train, schema, "gauss-pca", EPS, delta=DELTA, rng=seed, **params)
    sec = time.perf_counter() - t
    out = evaluate(res.data, test, schema, label)
    out.update(seconds=sec, n_components=res.certificate.extra["n_components"],
               clip_radius=res.certificate.extra["clip_radius"], seed=seed)
    return out


def repeat(data, seeds, **params) -> dict:
    train, test, schema, label = data
    runs = [run_release(train, test, schema, label, s, **params) for s in seeds]
    keys = [k for k in ("accuracy", "auc", "seconds") if k in runs[0]]
    agg = {k: float(np.mean([r[k] for r in runs])) for k in keys}
    agg.update({f"std_{k}": float(np.std([r[k] for r in runs])) for k in keys})
    agg["n_runs"] = len(runs)
    agg["runs"] = runs
    return agg


# ---- streaming ---------------------------------------------------------------------------------

def stream(n: int, p: int = 100, chunk_rows: int = 200_000, seed: int = 0) -> dict:
    """Streamed release of an n x p Parquet file against the one-pass floor."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..engine import RecordMap, stream_stats
    from ..io import iter_table_chunks
    from ..release import release_file
    from ..release.output import write_frames
    from ..schema import Encoder, Schema

    tmp = Path(tempfile.mkdtemp(prefix="gpca_stream_"))
    try:
        src = tmp / "big.parquet"
        rng = np.random.default_rng(seed)
        cols = [f"x{j}" for j in range(p)]
        L = rng.standard_normal((p, 5)) / 5
        writer = None
        for start in range(0, n, chunk_rows):
            k = min(chunk_rows, n - start)
            X = np.clip(0.5 + rng.standard_normal((k, 5)) @ L.T + 0.05 * rng.standard_normal((k, p)), 0, 1)
            t = pa.Table.from_pandas(pd.DataFrame(X, columns=cols), preserve_index=False)
            writer = writer or pq.ParquetWriter(src, t.schema)
            writer.write_table(t)
        writer.close()
        schema = Schema.from_dict({"columns": {c: {"type": "numeric", "lower": 0, "upper": 1} for c in cols}})
        enc = Encoder(schema)
        rss_before = peak_rss_mb()

        t = time.perf_counter()
        st = stream_stats(iter_table_chunks(src, schema, chunk_rows), RecordMap(enc))
        t_read = time.perf_counter() - t
        gen = np.random.default_rng(1)
        Lc = psd_sqrt(st.covariance)

        def frames():
            for s in range(0, n, chunk_rows):
                k = min(chunk_rows, n - s)
                yield enc.decode(st.mean + gen.standard_normal((k, p)) @ Lc.T)

        write_frames(frames(), tmp / "floor.parquet", "parquet")
        t_floor = time.perf_counter() - t

        t = time.perf_counter()
        # delta: the default min(1e-5, 1/(10 n)) (a fixed 1e-5 would be >= 1/n from n = 100,000)
        cert = release_file(src, schema, tmp / "out.parquet", "gauss-pca", EPS, rng=seed, chunk_rows=chunk_rows)
        t_rel = time.perf_counter() - t
        return {"n": n, "p": p, "chunk_rows": chunk_rows, "file_mb": src.stat().st_size / 2**20,
                "one_pass_read_stats_s": t_read, "one_pass_floor_s": t_floor, "gauss_pca_release_s": t_rel,
                "ratio_to_floor": t_rel / t_floor, "peak_rss_mb_before": rss_before,
                "peak_rss_mb_after": peak_rss_mb(), "n_output": cert.n_output_records,
                "passes": cert.extra.get("passes")}
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


# ---- the reproduction ----------------------------------------------------------------------------

def run(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict:
    out_dir = Path(out_dir)
    seeds = [seed] if quick else list(range(seed, seed + 5))
    say = progress or (lambda msg: None)
    result = {"name": NAME, "epsilon": EPS, "delta": DELTA, "quick": bool(quick), "seeds": seeds,
              "reference": REFERENCE, "notes": [
                  "seeded (continuous Gaussian) noise calibrated as a real release (zCDP conversion)",
                  "HAPT numeric bounds = training min/max (stand-in for published ranges, NOT private)",
                  "MST and PrivBayes numbers are quoted from the issue (smartnoise-synth not installed here)",
                  "defaults chosen on gas_drift and musk2, not on HAPT or Adult",
              ]}

    say("gauss-pca-bench: HAPT")
    hapt = load_hapt()
    if quick:  # a real slice: every third training window
        hapt = (hapt[0].iloc[::3].reset_index(drop=True),) + hapt[1:]
    result["hapt"] = {"n_train": len(hapt[0]), "n_test": len(hapt[1]),
                      "real": evaluate(hapt[0], hapt[1], hapt[2], hapt[3]),
                      "gauss_pca": repeat(hapt, seeds)}

    say("gauss-pca-bench: Adult")
    adult = load_adult()
    if quick:
        adult = (adult[0].sample(8000, random_state=0).reset_index(drop=True),) + adult[1:]
    a = repeat(adult, seeds)
    a["speedup_vs_mst"] = REFERENCE["adult"]["mst_seconds"] / a["seconds"]
    result["adult"] = {"n_train": len(adult[0]), "n_test": len(adult[1]),
                       "real": evaluate(adult[0], adult[1], adult[2], adult[3]), "gauss_pca": a}

    say("gauss-pca-bench: streamed Parquet")
    result["stream"] = stream(20_000 if quick else 1_000_000, 100, 5_000 if quick else 200_000, seed)

    h, ad, s = result["hapt"]["gauss_pca"], result["adult"]["gauss_pca"], result["stream"]
    checks = {
        "hapt_accuracy>=0.85": h["accuracy"] >= 0.85,
        "adult_accuracy>mst": ad["accuracy"] > REFERENCE["adult"]["mst_accuracy"],
        "adult_auc>mst": ad["auc"] > REFERENCE["adult"]["mst_auc"],
        "adult_speedup>=50": ad["speedup_vs_mst"] >= 50,
        "stream_ratio<=2": s["ratio_to_floor"] <= 2.0,
    }
    result["targets_met"] = checks
    result["verdict"] = (
        f"HAPT accuracy {h['accuracy']:.3f} (target 0.85, pca-gmm 0.30, real {result['hapt']['real']['accuracy']:.3f}); "
        f"Adult accuracy {ad['accuracy']:.3f} / AUC {ad['auc']:.3f} vs MST 0.801 / 0.816, "
        f"{ad['seconds']:.2f} s ({ad['speedup_vs_mst']:.0f}x faster than MST's 107 s); "
        f"stream {s['n']:,} x {s['p']}: {s['gauss_pca_release_s']:.1f} s vs one-pass floor "
        f"{s['one_pass_floor_s']:.1f} s (ratio {s['ratio_to_floor']:.2f}); targets met: "
        f"{', '.join(k for k, v in checks.items() if v) or 'none'}; missed: "
        f"{', '.join(k for k, v in checks.items() if not v) or 'none'}")
    write_json(result, out_dir, NAME)
    _figure(result, out_dir)
    return result


def _figure(result, out_dir):
    plt = pyplot()

    fig, ax = plt.subplots(1, 3, figsize=(11, 3.4))
    h = result["hapt"]
    vals = [0.30, h["gauss_pca"]["accuracy"], h["real"]["accuracy"]]
    ax[0].bar(["pca-gmm\n(quoted)", "gauss-pca", "real"], vals, color=["#bbb", "#1f77b4", "#555"],
              yerr=[0, h["gauss_pca"]["std_accuracy"], 0])
    ax[0].axhline(0.85, ls="--", c="r", lw=1, label="target 0.85")
    ax[0].set_title("HAPT activity accuracy, eps=1")
    ax[0].set_ylim(0, 1)
    ax[0].legend(fontsize=7)
    a = result["adult"]
    x = np.arange(2)
    ax[1].bar(x - 0.27, [0.801, 0.816], 0.27, label="MST (quoted)", color="#bbb")
    ax[1].bar(x, [a["gauss_pca"]["accuracy"], a["gauss_pca"]["auc"]], 0.27, label="gauss-pca", color="#1f77b4")
    ax[1].bar(x + 0.27, [a["real"]["accuracy"], a["real"]["auc"]], 0.27, label="real", color="#555")
    ax[1].set_xticks(x, ["accuracy", "AUC"])
    ax[1].set_ylim(0.5, 1)
    ax[1].set_title(f"Adult, eps=1 ({a['gauss_pca']['seconds']:.1f} s vs MST 107 s)")
    ax[1].legend(fontsize=7)
    s = result["stream"]
    ax[2].bar(["one-pass floor", "gauss-pca"], [s["one_pass_floor_s"], s["gauss_pca_release_s"]],
              color=["#555", "#1f77b4"])
    ax[2].axhline(2 * s["one_pass_floor_s"], ls="--", c="r", lw=1, label="2x floor")
    ax[2].set_title(f"streamed {s['n']:,} x {s['p']} Parquet (s)")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out_dir, NAME)

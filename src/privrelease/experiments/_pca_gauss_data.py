"""Data of the PCA-Gauss reproductions: the substitute tables, min-max scaled with public bounds.

Each loader returns tasks ``dict(X, y, Xpub, ypub, Xte, yte, C, kind)``: private training records,
a public split of the training data, real held-out test records, the number of classes (None for
regression) and ``kind`` ("class" or "reg"); ``load_gfe`` returns the GFE coordinates alone.
``quick=True`` caps the tables at a small real slice.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..datasets import require_dataset


def _root(data_dir, folder):
    if data_dir is not None:
        p = Path(data_dir) / folder
        if p.is_dir():
            return p
    return require_dataset(folder)


def _minmax(*frames):
    lo = np.min([f.min(axis=0) for f in frames], axis=0)
    hi = np.max([f.max(axis=0) for f in frames], axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return [np.clip((f - lo) / span, 0.0, 1.0) for f in frames]


def _split_public(X, y, n_pub, rng):
    idx = rng.permutation(X.shape[0])
    pub, priv = idx[:n_pub], idx[n_pub:]
    return X[priv], y[priv], X[pub], y[pub]


def _cap(X, y, n, rng):
    if n is None or X.shape[0] <= n:
        return X, y
    idx = rng.choice(X.shape[0], n, replace=False)
    return X[idx], y[idx]


def load_hapt(data_dir=None, quick=False, seed=0, n_public=600):
    d = _root(data_dir, "hapt_features")
    tr = pd.read_csv(d / "hapt_train.csv.gz")
    te = pd.read_csv(d / "hapt_test.csv.gz")
    feats = [c for c in tr.columns if c not in ("activity", "subject")]
    Xtr, Xte = _minmax(tr[feats].to_numpy(float), te[feats].to_numpy(float))
    ytr, yte = tr["activity"].to_numpy() - 1, te["activity"].to_numpy() - 1
    rng = np.random.default_rng(seed)
    if quick:
        Xtr, ytr = _cap(Xtr, ytr, 1000, rng)
        Xte, yte = _cap(Xte, yte, 400, rng)
        n_public = 200
    Xp_, yp_, Xpub, ypub = _split_public(Xtr, ytr, n_public, rng)
    tasks = {}
    for name, f, C in (("hapt-moving", lambda v: (v <= 2).astype(int), 2), ("hapt-6class", lambda v: v, 6)):
        tasks[name] = dict(X=Xp_, y=f(yp_), Xpub=Xpub, ypub=f(ypub), Xte=Xte, yte=f(yte), C=C, kind="class")
    return tasks


def load_gas(data_dir=None, quick=False, seed=0, n_public=600):
    d = _root(data_dir, "gas_drift")
    df = pd.read_csv(d / "gas_drift.csv.gz")
    feats = [f"f{i}" for i in range(1, 129)]
    X = df[feats].to_numpy(float)
    y = df["gas"].to_numpy() - 1
    rng = np.random.default_rng(seed + 1)
    idx = rng.permutation(len(df))
    n_te = int(0.3 * len(df))
    Xte, yte, Xtr, ytr = X[idx[:n_te]], y[idx[:n_te]], X[idx[n_te:]], y[idx[n_te:]]
    Xtr, Xte = _minmax(Xtr, Xte)
    if quick:
        Xtr, ytr = _cap(Xtr, ytr, 1000, rng)
        Xte, yte = _cap(Xte, yte, 400, rng)
        n_public = 200
    Xp_, yp_, Xpub, ypub = _split_public(Xtr, ytr, n_public, rng)
    return {"gas-6class": dict(X=Xp_, y=yp_, Xpub=Xpub, ypub=ypub, Xte=Xte, yte=yte, C=6, kind="class")}


def load_crime(data_dir=None, quick=False, seed=0, n_public=300):
    d = _root(data_dir, "communities_crime")
    df = pd.read_csv(d / "communities.csv.gz", na_values=["?"])
    drop = ["state", "county", "community", "communityname", "fold"]
    cols = [c for c in df.columns if c not in drop and c != "ViolentCrimesPerPop"]
    missing = [c for c in cols if df[c].isna().any()]
    cols = [c for c in cols if c not in missing]
    X = df[cols].to_numpy(float)  # already in [0, 1] (donor's normalisation)
    t = df["ViolentCrimesPerPop"].to_numpy(float)
    rng = np.random.default_rng(seed + 2)
    idx = rng.permutation(len(df))
    n_te = int(0.25 * len(df))
    Xte, tte = X[idx[:n_te]], t[idx[:n_te]]
    Xtr, ttr = X[idx[n_te:]], t[idx[n_te:]]
    if quick:
        n_public = 150
    Xp_, tp_, Xpub, tpub = _split_public(Xtr, ttr, n_public, rng)
    return {"crime": dict(X=Xp_, y=tp_, Xpub=Xpub, ypub=tpub, Xte=Xte, yte=tte, C=None, kind="reg",
                          dropped_columns=missing)}


def load_gfe(data_dir=None, quick=False, seed=0):
    d = _root(data_dir, "gfe")
    df = pd.read_csv(d / "gfe.csv.gz")
    coords = [c for c in df.columns if c not in ("timestamp", "target", "user", "expression")]
    X = _minmax(df[coords].to_numpy(float))[0]
    if quick:
        X = X[np.random.default_rng(seed).choice(len(X), 800, replace=False)]
    return X

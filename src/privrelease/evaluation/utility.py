"""Utility of released data for downstream learning (PCA-Gauss experiments, Chanyaswad et al. Table I).

Every metric trains on released (or real) data and evaluates on real data the release never
saw, or scores the released data themselves (silhouette). Learners and their settings are
fixed here (the paper's K, SVM and KRR settings were lost in extraction; ours are declared
defaults, not tuned on results). Large training sets are subsampled with a fixed seed to a
declared cap so that runs are comparable and fast; the cap is a parameter.
"""

from __future__ import annotations

import numpy as np


def _sub(X, y, cap, seed):
    if cap is None or X.shape[0] <= cap:
        return X, y
    idx = np.random.default_rng(seed).choice(X.shape[0], size=cap, replace=False)
    return X[idx], (None if y is None else np.asarray(y)[idx])


def kmeans_silhouette(X, n_clusters: int = 9, seed: int = 0, sample_size: int | None = 5000) -> float:
    """Silhouette coefficient of a K-means clustering of ``X`` (higher is better, in [-1, 1]).

    K-means (k-means++, 4 restarts) is fitted on ``X``; the silhouette of its labels is
    computed on at most ``sample_size`` points (seeded). The default ``n_clusters = 9``
    is the number of facial expressions in GFE (the paper's K was lost).
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    X = np.asarray(X, dtype=np.float64)
    labels = KMeans(n_clusters=n_clusters, n_init=4, random_state=seed).fit_predict(X)
    if len(np.unique(labels)) < 2:
        return 0.0
    return float(silhouette_score(X, labels, sample_size=min(sample_size or len(X), len(X)), random_state=seed))


def svm_accuracy(X_train, y_train, X_test, y_test, *, C: float = 1.0, kernel: str = "rbf",
                 max_train: int | None = 8000, seed: int = 0, standardize: bool = True) -> float:
    """Accuracy on real test data of an SVM trained on (released) training data.

    ``SVC(kernel, C, gamma="scale")``; with ``standardize`` the scaler is fitted on the
    training data (released data only: nothing of the test set is used).
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X_train, y_train = _sub(np.asarray(X_train, float), np.asarray(y_train), max_train, seed)
    if len(np.unique(y_train)) < 2:
        return float(np.mean(np.asarray(y_test) == y_train[0])) if len(y_train) else 0.0
    steps = ([StandardScaler()] if standardize else []) + [SVC(C=C, kernel=kernel, gamma="scale")]
    model = make_pipeline(*steps).fit(X_train, y_train)
    return float(np.mean(model.predict(np.asarray(X_test, float)) == np.asarray(y_test)))


def krr_rmse(X_train, t_train, X_test, t_test, *, alpha: float = 1.0, kernel: str = "rbf",
             gamma: float | None = None, max_train: int | None = 3000, seed: int = 0,
             center_target: bool = True) -> float:
    """RMSE on real test data of kernel ridge regression trained on (released) data (lower is better).

    ``KernelRidge(alpha=1, kernel="rbf", gamma=1/d)`` by default, ``d`` the number of features.
    Kernel ridge has no intercept: far from every training point an RBF model predicts 0. With
    ``center_target`` (default) it is fitted to ``t - mean(t_train)`` and the training mean is added
    back, so a release whose features carry no information scores about the target's standard
    deviation (the mean predictor) rather than the RMSE of predicting 0.
    """
    from sklearn.kernel_ridge import KernelRidge

    X_train, t_train = _sub(np.asarray(X_train, float), np.asarray(t_train, float), max_train, seed)
    X_test = np.asarray(X_test, float)
    g = gamma if gamma is not None else 1.0 / max(X_train.shape[1], 1)
    offset = float(np.mean(t_train)) if center_target and t_train.size else 0.0
    model = KernelRidge(alpha=alpha, kernel=kernel, gamma=g).fit(X_train, t_train - offset)
    pred = model.predict(X_test) + offset
    return float(np.sqrt(np.mean((pred - np.asarray(t_test, float)) ** 2)))


def tstr(X_syn, y_syn, X_test, y_test, *, model: str = "logistic", max_train: int | None = 20000,
         seed: int = 0) -> dict:
    """Train on synthetic, test on real: accuracy and (binary or one-vs-rest macro) AUC.

    Works in the original encoded columns (or any common feature space). ``model`` is
    "logistic" (standardised multinomial logistic regression) or "forest" (random forest).
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X_syn, y_syn = _sub(np.asarray(X_syn, float), np.asarray(y_syn), max_train, seed)
    y_test = np.asarray(y_test)
    classes = np.unique(np.concatenate([y_syn, y_test]))
    if len(np.unique(y_syn)) < 2:
        return {"accuracy": float(np.mean(y_test == y_syn[0])), "auc": 0.5}
    if model == "logistic":
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    elif model == "forest":
        clf = RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=-1)
    else:
        raise ValueError(f"model must be 'logistic' or 'forest', got {model!r}")
    clf.fit(X_syn, y_syn)
    X_test = np.asarray(X_test, float)
    acc = float(np.mean(clf.predict(X_test) == y_test))
    proba = clf.predict_proba(X_test)
    seen = list(clf.classes_)
    try:
        if len(classes) == 2 and len(seen) == 2:
            auc = float(roc_auc_score(y_test, proba[:, 1]))
        else:
            full = np.zeros((len(X_test), len(classes)))
            for j, c in enumerate(seen):
                full[:, list(classes).index(c)] = proba[:, j]
            present = np.isin(classes, y_test)
            full = full[:, present] / np.maximum(full[:, present].sum(1, keepdims=True), 1e-12)
            auc = float(roc_auc_score(y_test, full, multi_class="ovr", labels=classes[present]))
    except ValueError:
        auc = float("nan")
    return {"accuracy": acc, "auc": auc}

"""Train-on-release, test-on-real classification utility: accuracy (ACA) and AUC.

Jiang et al. 2013 sec. 4.4 train an LDA classifier and C4.5 on the released data and
test on held-out real records. Here:

* ``lda``: scikit-learn's LinearDiscriminantAnalysis (SVD solver, no shrinkage);
* ``c45``: a C4.5-style decision tree, DecisionTreeClassifier(criterion="entropy")
  (information-gain splits) with ``min_samples_leaf=25`` as a stand-in for C4.5's
  error-based pruning (our choice: unpruned trees memorise the noise of synthetic
  records). sklearn's CART has binary splits on one-hot columns, C4.5 multiway splits
  on categorical attributes; the split criterion is the same.

AUC uses the predicted probability of the positive class (binary labels) or the
one-vs-rest macro average (more classes). A released training set with one class
only gives a constant predictor (AUC 0.5).
"""

from __future__ import annotations

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.tree import DecisionTreeClassifier

CLASSIFIERS = ("lda", "c45")


def make_classifier(name: str, seed: int = 0):
    if name == "lda":
        return LinearDiscriminantAnalysis()
    if name == "c45":
        return DecisionTreeClassifier(criterion="entropy", min_samples_leaf=25, random_state=seed)
    raise ValueError(f"unknown classifier {name!r}; available: {CLASSIFIERS}")


def _auc(y_true, proba, classes, n_classes):
    full = np.zeros((len(y_true), n_classes))
    full[:, classes] = proba
    if n_classes == 2:
        return float(roc_auc_score(y_true, full[:, 1])) if len(np.unique(y_true)) == 2 else float("nan")
    return float(roc_auc_score(y_true, full, multi_class="ovr", labels=list(range(n_classes))))


def train_test_scores(X_train, y_train, X_test, y_test, classifiers=CLASSIFIERS, n_classes=None, seed=0) -> dict:
    """ACA and AUC of each classifier trained on (X_train, y_train), tested on (X_test, y_test).

    Returns ``{name: {"accuracy": float, "auc": float}}``.

    >>> import numpy as np
    >>> X = np.r_[np.zeros((50, 2)), np.ones((50, 2))] + np.linspace(0, 0.1, 100)[:, None] * [1, -1]
    >>> y = np.r_[np.zeros(50), np.ones(50)].astype(int)
    >>> train_test_scores(X, y, X, y, ["lda"])["lda"]["accuracy"]
    1.0
    """
    X_train, X_test = np.asarray(X_train, float), np.asarray(X_test, float)
    y_train, y_test = np.asarray(y_train).astype(int), np.asarray(y_test).astype(int)
    K = int(n_classes) if n_classes is not None else int(max(y_train.max(initial=0), y_test.max(initial=0))) + 1
    out = {}
    present = np.unique(y_train)
    for name in classifiers:
        if present.size < 2:
            pred = np.full(len(y_test), present[0] if present.size else 0)
            out[name] = {"accuracy": float(accuracy_score(y_test, pred)), "auc": 0.5}
            continue
        clf = make_classifier(name, seed)
        try:
            clf.fit(X_train, y_train)
        except (ValueError, IndexError, np.linalg.LinAlgError):  # degenerate released data
            major = int(np.bincount(y_train).argmax())
            out[name] = {"accuracy": float(np.mean(y_test == major)), "auc": 0.5}
            continue
        out[name] = {"accuracy": float(accuracy_score(y_test, clf.predict(X_test))),
                     "auc": _auc(y_test, clf.predict_proba(X_test), clf.classes_.astype(int), K)}
    return out

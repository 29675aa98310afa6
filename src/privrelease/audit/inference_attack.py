"""Inference-attack evaluation of owner-side perturbations (Zhuang and Chang, sec. V-B).

Protocol (ALGORITHMS.md 5.4; choices marked [A] are ours):

1. Balanced sampling: ``per_combination`` records from every utility x privacy cell.
2. Each cell is split into public training records (projection, MMD reference sets,
   utility classifier), owners' test records and adversary-training records, in the
   paper's proportions 0.4 / 0.2 / 0.4, so every cell stays balanced in every subset.
3. Features are standardised with the mean and standard deviation of the training
   records [A] (the paper does not say how it scaled them).
4. For each projection: the utility classifier is an RBF-SVM trained on the projected
   training records; the paper's attacker an RBF-SVM trained on the projected
   adversary records with their privacy labels (``W`` is public). Both are chosen by a
   cross-validated grid search over ``C`` and ``gamma`` (10-fold in the paper; grid
   [A]) and evaluated on the projected test records ("Coarse") and on the MMD-perturbed
   test records ("Fine").
5. Mechanism-aware attacker (E17): the adversary runs the *whole* mechanism (same
   public projection and MMD reference sets, fresh random targets) on her own
   adversary-training records and trains the RBF-SVM on the perturbed records with
   their true privacy labels; it is evaluated on the Fine test records.
6. Everything is repeated ``repetitions`` times (15 in the paper) with fresh samples.

Accuracies are reported in percent. ``fine_target_rate`` is the fraction of the paper
attacker's Fine predictions equal to the owner's secret target ``t``: close to 1 means
the paper's attacker outputs ``t`` (which is why its Fine accuracy sits at chance).

Statistical check of this family (it has no formal guarantee, so there is no epsilon to
audit): :func:`evaluate` measures and reports the mechanism-aware attacker's accuracy,
and a perturbation that does not move records is exposed because its Fine attack
accuracy stays at the Coarse level (``tests/statistical/test_inference_attack.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..errors import InputDataError, ParameterError
from ..mechanisms.projections.mmd import MMDPerturbation
from ..mechanisms.projections.jupa import make_projection

PAPER_GRID = {"C": [10.0 ** k for k in range(-3, 4)], "gamma": [10.0 ** k for k in range(-3, 4)]}
FAST_GRID = {"C": [1.0, 10.0, 100.0, 1000.0], "gamma": [0.01, 0.1, 1.0]}
SPLIT_FRACTIONS = (0.4, 0.2, 0.4)  # training (public) / testing (owners) / adversary training


@dataclass(frozen=True)
class Method:
    """One row of a table: a label, a projection name and its parameters."""

    label: str
    projection: str
    params: dict = field(default_factory=dict)


JUPA_GRID = [(r1, r1p) for r1 in (1.0, 1e2, 1e4) for r1p in (1.0, 1e2, 1e4)]


def table_methods(rho0: float = 1e-3, rho: float = 1e-3) -> list[Method]:
    """The 14 rows of the paper's tables: full-dimensional, random projection, PCA, DCA, MDR, JUPA 3 x 3."""
    rows = [
        Method("Full-Dimensional", "full-dimensional"),
        Method("Random Projection", "random-projection"),
        Method("PCA", "pca"),
        Method("DCA", "dca", {"rho": rho}),
        Method("MDR", "mdr", {"rho": rho}),
    ]
    for r1, r1p in JUPA_GRID:
        rows.append(Method(f"JUPA r={r1:g}, r'={r1p:g}", "jupa", {"rho0": rho0, "rho1": r1, "rho1_prime": r1p}))
    return rows


# ---- sampling ---------------------------------------------------------------------------------

def balanced_sample(y_utility, y_privacy, per_combination: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``per_combination`` records drawn without replacement from every (utility, privacy) cell.

    Every combination of an observed utility class and an observed privacy class must hold
    at least ``per_combination`` records.
    """
    yu, yp = np.asarray(y_utility), np.asarray(y_privacy)
    _, cu = np.unique(yu, return_inverse=True)
    _, cp = np.unique(yp, return_inverse=True)
    cu, cp = cu.ravel(), cp.ravel()
    n_p = cp.max() + 1
    cell = cu * n_p + cp
    n_cells = (cu.max() + 1) * n_p
    counts = np.bincount(cell, minlength=n_cells)
    if counts.min() < per_combination:
        bad = int(np.argmin(counts))
        raise InputDataError(
            f"cell (utility {np.unique(yu)[bad // n_p]!r}, privacy {np.unique(yp)[bad % n_p]!r}) has "
            f"{counts.min()} records, fewer than per_combination = {per_combination}")
    # a random key per record, then the first per_combination of each cell in key order (vectorised)
    order = np.lexsort((rng.random(cell.size), cell))
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(cell.size) - start[cell[order]]
    return np.sort(order[rank < per_combination])


def split_cells(idx, y_utility, y_privacy, fractions=SPLIT_FRACTIONS, rng=None):
    """Split sampled indices into (train, test, adversary) with the same fractions inside every cell."""
    yu, yp = np.asarray(y_utility)[idx], np.asarray(y_privacy)[idx]
    _, cu = np.unique(yu, return_inverse=True)
    _, cp = np.unique(yp, return_inverse=True)
    cell = cu.ravel() * (cp.max() + 1) + cp.ravel()
    counts = np.bincount(cell)
    order = np.lexsort((rng.random(cell.size), cell))
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(cell.size) - start[cell[order]]
    size = counts[cell[order]]
    f = np.asarray(fractions, dtype=float)
    f = f / f.sum()
    n_tr = np.floor(size * f[0] + 1e-9)
    n_te = np.floor(size * f[1] + 1e-9)
    part = np.where(rank < n_tr, 0, np.where(rank < n_tr + n_te, 1, 2))
    chosen = idx[order]
    return chosen[part == 0], chosen[part == 1], chosen[part == 2]


# ---- classifiers ------------------------------------------------------------------------------

def svm_grid_search(X, y, cv: int = 10, grid: dict | None = None, n_jobs: int | None = None, seed: int = 0):
    """RBF-SVM (on standardised inputs) chosen by a stratified ``cv``-fold grid search over C and gamma."""
    grid = PAPER_GRID if grid is None else grid
    y = np.asarray(y)
    min_class = np.bincount(np.unique(y, return_inverse=True)[1].ravel()).min()
    folds = max(2, min(int(cv), int(min_class)))
    pipe = make_pipeline(StandardScaler(), SVC(kernel="rbf"))
    params = {"svc__C": list(grid["C"]), "svc__gamma": list(grid["gamma"])}
    search = GridSearchCV(pipe, params, cv=StratifiedKFold(folds, shuffle=True, random_state=seed),
                          n_jobs=n_jobs, refit=True)
    search.fit(np.asarray(X, dtype=np.float64), y)
    return search


def _majority_share(pred) -> float:
    """Share of the predictions that fall in the most frequent predicted class.

    1.0 means the attacker answers one constant class; on the balanced test cells its
    accuracy is then exactly chance (e.g. 50.00 % or 3.33 %).
    """
    _, counts = np.unique(np.asarray(pred), return_counts=True)
    return float(counts.max() / counts.sum())


def _acc(clf, X, y) -> float:
    return float(np.mean(clf.predict(X) == np.asarray(y)) * 100.0)


# ---- the protocol -----------------------------------------------------------------------------

def evaluate(X, y_utility, y_privacy, *, methods: list[Method] | None = None, per_combination: int = 20,
             n_components: int | None = None, repetitions: int = 15, fractions=SPLIT_FRACTIONS, fine: bool = True,
             mechanism_aware: bool = True, cv: int = 10, grid: dict | None = None, update: str = "literal",
             max_iter: int = 1000, lam: float = 1e-3, alpha: float = 0.1, mmd_factory=None,
             n_jobs: int | None = None, seed: int = 0, progress=None) -> dict:
    """Run the sec. V-B protocol on a feature matrix with utility and privacy labels.

    Parameters
    ----------
    X : (n, M) numeric features; y_utility, y_privacy : labels (any hashable values)
    methods : rows to evaluate (default :func:`table_methods`)
    per_combination : records sampled per utility x privacy cell
    n_components : K (default: number of utility classes - 1)
    repetitions : independent repetitions (fresh sample, split, projection, targets)
    cv, grid : folds and C / gamma grid of the SVM searches (default 10-fold, 10^-3..10^3)
    update, max_iter, lam, alpha : MMD parameters (:class:`~privrelease.mechanisms.projections.mmd.MMDPerturbation`)
    mmd_factory : optional callable ``(seed) -> MMDPerturbation``-like object (for testing broken variants)
    n_jobs : parallel jobs of the grid searches

    Returns
    -------
    dict with ``rows`` (one per method: mean and sd of ``utility_coarse``, ``utility_fine``,
    ``privacy_coarse``, ``privacy_fine``, ``privacy_fine_aware`` in percent; ``flipped``,
    ``iterations``, ``fine_target_rate`` (share of the paper's attacker's Fine predictions equal
    to the secret target), ``fine_majority_rate`` (share of those predictions in their most
    frequent class: 1.0 = a constant attacker, whose accuracy on the balanced cells is exactly
    chance), ``sigma``) and the settings.
    """
    X, yu_all, yp_all = _checked_inputs(X, y_utility, y_privacy, repetitions)
    methods = table_methods() if methods is None else methods
    rng = np.random.default_rng(seed)
    search = dict(cv=cv, grid=grid, n_jobs=n_jobs)
    mmd = dict(lam=lam, alpha=alpha, max_iter=max_iter, update=update, factory=mmd_factory) if fine else None
    acc = {m.label: {k: [] for k in _KEYS} for m in methods}
    t_start = time.perf_counter()
    for rep in range(repetitions):
        split = _standardised_split(X, yu_all, yp_all, per_combination, fractions, rng)
        for m in methods:
            t0 = time.perf_counter()
            rep_seed = int(rng.integers(2**31))
            r = acc[m.label]
            _score_method(r, m, split, n_components, rep_seed, search, mmd, mechanism_aware)
            r["seconds"].append(time.perf_counter() - t0)
            if progress:
                progress(_progress_line(rep, repetitions, m.label, r, fine, mechanism_aware))
    n_u, n_p = np.unique(yu_all).size, np.unique(yp_all).size
    settings = {
        "per_combination": per_combination, "repetitions": repetitions, "fractions": list(fractions),
        "n_components": n_components, "cv_folds": cv, "grid": grid or PAPER_GRID, "fine": fine,
        "mechanism_aware": mechanism_aware, "mmd": {"update": update, "max_iter": max_iter, "lam": lam,
                                                     "alpha": alpha, "sigma": "2-fold CV of the MMD label"},
        "n_features": X.shape[1], "utility_classes": int(n_u), "privacy_classes": int(n_p),
        "records_per_repetition": int(per_combination * n_u * n_p), "seed": seed,
    }
    return {"rows": _summary_rows(methods, acc), "settings": settings,
            "chance": {"utility": 100.0 / n_u, "privacy": 100.0 / n_p}, "seconds": time.perf_counter() - t_start}


_KEYS = ("utility_coarse", "utility_fine", "privacy_coarse", "privacy_fine", "privacy_fine_aware",
         "flipped", "iterations", "fine_target_rate", "fine_majority_rate", "sigma", "seconds")


def _checked_inputs(X, y_utility, y_privacy, repetitions):
    X = np.asarray(X, dtype=np.float64)
    yu_all, yp_all = np.asarray(y_utility), np.asarray(y_privacy)
    if X.ndim != 2 or X.shape[0] != yu_all.shape[0] or X.shape[0] != yp_all.shape[0]:
        raise InputDataError("X, y_utility and y_privacy must have the same number of records")
    if not np.all(np.isfinite(X)):
        raise InputDataError("X contains NaN or infinite values")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ParameterError(f"repetitions must be an integer >= 1, got {repetitions!r}")
    return X, yu_all, yp_all


def _standardised_split(X, yu_all, yp_all, per_combination, fractions, rng) -> dict:
    """One repetition's balanced sample, split into training / test / adversary records (steps 1-3)."""
    idx = balanced_sample(yu_all, yp_all, per_combination, rng)
    tr, te, adv = split_cells(idx, yu_all, yp_all, fractions, rng)
    mu = X[tr].mean(0)
    sd = X[tr].std(0)
    sd[sd == 0] = 1.0
    return {"Xtr": (X[tr] - mu) / sd, "Xte": (X[te] - mu) / sd, "Xadv": (X[adv] - mu) / sd,
            "yu_tr": yu_all[tr], "yu_te": yu_all[te], "yp_tr": yp_all[tr], "yp_te": yp_all[te],
            "yp_adv": yp_all[adv]}


def _score_method(r, m: Method, split: dict, n_components, rep_seed, search, mmd, mechanism_aware):
    """Step 4 for one method: fit its projection, the utility classifier and the attacker; append to ``r``."""
    s = split
    params = dict(m.params)
    if n_components is not None and m.projection not in ("full-dimensional", "identity"):
        params.setdefault("n_components", n_components)
    if m.projection == "random-projection":
        params.setdefault("rng", rep_seed)
    proj = make_projection(m.projection, **params).fit(s["Xtr"], s["yu_tr"], s["yp_tr"])
    Htr, Hte, Hadv = proj.transform(s["Xtr"]), proj.transform(s["Xte"]), proj.transform(s["Xadv"])
    util = svm_grid_search(Htr, s["yu_tr"], search["cv"], search["grid"], search["n_jobs"], rep_seed)
    attack = svm_grid_search(Hadv, s["yp_adv"], search["cv"], search["grid"], search["n_jobs"], rep_seed)
    r["utility_coarse"].append(_acc(util, Hte, s["yu_te"]))
    r["privacy_coarse"].append(_acc(attack, Hte, s["yp_te"]))
    if mmd is not None:
        _score_fine(r, s, Htr, Hte, Hadv, util, attack, rep_seed, search, mmd, mechanism_aware)


def _score_fine(r, s, Htr, Hte, Hadv, util, attack, rep_seed, search, mmd, mechanism_aware):
    """The MMD-perturbed ("Fine") test records against both attackers (steps 4-5)."""
    if mmd["factory"] is not None:
        pert = mmd["factory"](rep_seed)
    else:
        pert = MMDPerturbation(lam=mmd["lam"], alpha=mmd["alpha"], max_iter=mmd["max_iter"], update=mmd["update"],
                               rng=rep_seed)
    pert.fit(Htr, s["yp_tr"])
    Zte, info = pert.perturb(Hte)
    r["utility_fine"].append(_acc(util, Zte, s["yu_te"]))
    pred = attack.predict(Zte)
    r["privacy_fine"].append(float(np.mean(pred == s["yp_te"]) * 100.0))
    r["fine_target_rate"].append(float(np.mean(pred == info["target"])))
    r["fine_majority_rate"].append(_majority_share(pred))
    r["flipped"].append(float(np.mean(info["flipped"])))
    r["iterations"].append(float(np.mean(info["iterations"])))
    r["sigma"].append(float(pert.sigma_))
    if mechanism_aware:
        Zadv, _ = pert.perturb(Hadv)
        aware = svm_grid_search(Zadv, s["yp_adv"], search["cv"], search["grid"], search["n_jobs"], rep_seed)
        r["privacy_fine_aware"].append(_acc(aware, Zte, s["yp_te"]))


def _progress_line(rep, repetitions, label, r, fine, mechanism_aware) -> str:
    return (f"repetition {rep + 1}/{repetitions} {label}: utility {r['utility_coarse'][-1]:.1f}"
            + (f"/{r['utility_fine'][-1]:.1f}" if fine else "")
            + f", privacy {r['privacy_coarse'][-1]:.1f}"
            + (f"/{r['privacy_fine'][-1]:.1f}" if fine else "")
            + (f", aware {r['privacy_fine_aware'][-1]:.1f}" if fine and mechanism_aware else ""))


def _summary_rows(methods, acc) -> list[dict]:
    """Mean (and sd, except for time and sigma) of every measure, one row per method."""
    rows = []
    for m in methods:
        r = acc[m.label]
        row = {"method": m.label, "projection": m.projection, "params": dict(m.params)}
        for k in _KEYS:
            v = np.asarray(r[k], dtype=float)
            row[k] = float(v.mean()) if v.size else None
            if k not in ("seconds", "sigma") and v.size:
                row[k + "_sd"] = float(v.std(ddof=1)) if v.size > 1 else 0.0
        rows.append(row)
    return rows

"""Fidelity of a released table to the real one: marginals, associations, SDMetrics, train-on-release.

Everything here reads the real (private) table: the numbers are for the custodian who
chooses a mechanism, NOT for publication beside the release.

Definitions (all public choices, fixed before looking at any data):

* **Cells.** A numeric column is cut into ``bins`` equal-width bins over its schema's
  PUBLIC bounds ``[lower, upper]``; values outside are clipped into the first or last bin.
  A categorical column keeps its declared levels. One more cell collects what fits none
  (a missing numeric value, a level the schema does not declare), so a release that
  writes such values is charged for them rather than silently ignored.
* **1-way TVD** of a column: ``TVD(P, Q) = 1/2 sum_cells |P(cell) - Q(cell)|`` between the
  real and released empirical distributions over its cells (20 bins by default).
  0 means the same histogram, 1 disjoint support.
* **2-way TVD** of a pair of columns: the same over the cells of the pair (10 bins per
  numeric column by default), for every pair of columns.
* **Correlation difference**: every column is encoded as in a release (numeric: the value
  clipped to its bounds; categorical: one-hot at its declared levels) and Pearson's
  correlation is taken between every two encoded columns that belong to DIFFERENT schema
  columns (pairs inside one one-hot block are forced negative by construction and left
  out). The score is the mean absolute difference between the real and released
  correlations over those pairs; a constant encoded column has correlation 0 with every
  other. 0 is a perfect match, 2 the largest possible.
* **SDMetrics quality**: SDMetrics' own ``QualityReport`` (KS complement / TV complement
  for column shapes, correlation / contingency similarity for column pair trends), with its
  metadata built from the schema (numeric -> ``numerical``, categorical -> ``categorical``).
* **TSTR** (train on the release, test on real records the release never saw): features
  are the encoded non-label columns; a standardised logistic regression and scikit-learn's
  ``HistGradientBoostingClassifier`` (``GBDT_PARAMS``, fixed ``random_state``: an L2 penalty
  on the leaf values, which bounds a leaf's Newton step where a class's probabilities have
  saturated (a near-deterministic label), and all 100 iterations, without the early stop
  that scikit-learn turns on above 10,000 records, so that the model does not depend on the
  table's size). Accuracy always; ROC AUC of the positive (second declared) level for a
  binary label; macro-F1 over the declared levels otherwise. A training set with one class
  only gives the constant predictor (AUC 0.5). A model whose accuracy is below the
  majority-class rate has failed to fit: the table and the JSON (``tstr_below_majority``)
  say which.
* **Inside the bins** (:mod:`privrelease.evaluation.columns`, defined there): per numeric
  column the two-sample KS statistic, Wasserstein-1 over the public range, real and released
  quantiles (median, p90, p99), the real and released share of every atom (a value held by
  at least 1 % of the real records) and of missing values; the 3-way TVD of every (pair,
  label) triple; the majority-class rate beside the train-on-release scores.

Model fitting and the correlation matrices run on one BLAS/OpenMP thread: on tables of
this size the parallel gain is small, and on a shared machine oversubscribed threads made
the same evaluation ten times slower; the scores do not depend on the thread count.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputDataError, SchemaError
from ..schema import Schema
from .cells import as_read, declared_text, label_codes, numeric_values
from .cells import cell_codes as _cell_codes
from .cells import check_columns as _check_columns
from .cells import tvd as _tvd
from .columns import calendar_tvd, majority_rate, numeric_columns, tvd_3way

__all__ = ["tvd_1way", "tvd_2way", "correlation_difference", "sdmetrics_quality", "tstr", "evaluate", "evaluate_read",
           "Evaluation", "PRIVATE_NOTICE"]

PRIVATE_NOTICE = ("this evaluation reads the real (private) data: its numbers are NOT differentially private "
                  "and NOT for publication")


# ---- cells ----------------------------------------------------------------------------------------

def tvd_1way(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, bins: int = 20) -> dict[str, float]:
    """Total variation distance of each column's marginal, real against released.

    Numeric columns in ``bins`` equal-width bins over the schema's public bounds (values
    clipped into them), categorical columns at their declared levels (module notes).

    >>> s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["a", "b"]}}})
    >>> tvd_1way(pd.DataFrame({"c": ["a", "a", "b", "b"]}), pd.DataFrame({"c": ["a", "b", "b", "b"]}), s)
    {'c': 0.25}
    """
    _check_columns(real, schema, "real")
    _check_columns(synth, schema, "released")
    r, cards = _cell_codes(real, schema, bins)
    s, _ = _cell_codes(synth, schema, bins)
    return {c.name: _tvd(r[:, j], s[:, j], cards[j]) for j, c in enumerate(schema.columns)}


def tvd_2way(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, bins: int = 10) -> dict[tuple[str, str], float]:
    """Total variation distance of every pair of columns' joint marginal (schema order pairs).

    >>> s = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 1},
    ...                                   "c": {"type": "categorical", "categories": ["a", "b"]}}})
    >>> real = pd.DataFrame({"x": [0.1, 0.9], "c": ["a", "b"]})
    >>> tvd_2way(real, pd.DataFrame({"x": [0.1, 0.9], "c": ["b", "a"]}), s)
    {('x', 'c'): 1.0}
    """
    _check_columns(real, schema, "real")
    _check_columns(synth, schema, "released")
    r, cards = _cell_codes(real, schema, bins)
    s, _ = _cell_codes(synth, schema, bins)
    out = {}
    for i, j in itertools.combinations(range(len(schema.columns)), 2):
        size = cards[i] * cards[j]
        out[(schema.columns[i].name, schema.columns[j].name)] = _tvd(
            r[:, i] * cards[j] + r[:, j], s[:, i] * cards[j] + s[:, j], size)
    return out


# ---- associations -------------------------------------------------------------------------------

def _design(df: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    """Encoded columns (numeric clipped to bounds, categorical one-hot) and the schema column of each."""
    blocks, owner = [], []
    for j, c in enumerate(schema.columns):
        if c.kind == "numeric":
            v = numeric_values(df[c.name], c)
            v = np.clip(np.where(np.isnan(v), c.lower, v), c.lower, c.upper)
            blocks.append(v[:, None])
            owner.append(j)
        else:
            codes = label_codes(df[c.name], c)  # as a release reads it: 'other' and missing as declared
            blocks.append((codes[:, None] == np.arange(len(c.categories))[None, :]).astype(float))
            owner.extend([j] * len(c.categories))
    return np.hstack(blocks), np.asarray(owner)


def _one_thread():
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _corr(X: np.ndarray) -> np.ndarray:
    Xc = X - X.mean(axis=0)
    sd = np.sqrt((Xc ** 2).mean(axis=0))
    ok = sd > 1e-12 * np.maximum(np.abs(X).max(axis=0), 1.0)
    Z = np.where(ok, Xc / np.where(ok, sd, 1.0), 0.0)
    return np.clip(Z.T @ Z / len(X), -1.0, 1.0)


def correlation_difference(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema) -> float:
    """Mean absolute difference of the real and released correlation matrices (module notes).

    Pairs of encoded columns from the same schema column are left out; ``nan`` when the
    schema has a single column.

    >>> s = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 3},
    ...                                   "y": {"type": "numeric", "lower": 0, "upper": 3}}})
    >>> real = pd.DataFrame({"x": [0, 1, 2, 3], "y": [0, 1, 2, 3]})
    >>> correlation_difference(real, pd.DataFrame({"x": [0, 1, 2, 3], "y": [3, 2, 1, 0]}), s)
    2.0
    """
    _check_columns(real, schema, "real")
    _check_columns(synth, schema, "released")
    Xr, owner = _design(real, schema)
    Xs, _ = _design(synth, schema)
    between = owner[:, None] < owner[None, :]
    if not between.any():
        return float("nan")
    with _one_thread():
        return float(np.abs(_corr(Xr) - _corr(Xs))[between].mean())


# ---- SDMetrics ----------------------------------------------------------------------------------

def _sdmetrics_frame(df: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    out = {}
    for c in schema.columns:
        if c.kind == "numeric":
            out[c.name] = numeric_values(df[c.name], c)
        else:
            out[c.name] = declared_text(df[c.name], c).astype(object)
    return pd.DataFrame(out)


def sdmetrics_metadata(schema: Schema) -> dict:
    """SDMetrics single-table metadata built from the schema (no data read)."""
    return {"columns": {c.name: {"sdtype": "numerical" if c.kind == "numeric" else "categorical"}
                        for c in schema.columns}}


def sdmetrics_quality(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema) -> dict:
    """SDMetrics' ``QualityReport`` scores: ``{"overall", "column_shapes", "column_pair_trends"}`` in [0, 1].

    Computed by SDMetrics itself on the schema's columns, its metadata built from the
    schema. Higher is better.
    """
    import warnings

    with warnings.catch_warnings():  # SDMetrics announces a multi-table successor; this is the single-table report
        warnings.simplefilter("ignore", FutureWarning)
        from sdmetrics.reports.single_table import QualityReport

    _check_columns(real, schema, "real")
    _check_columns(synth, schema, "released")
    report = QualityReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report.generate(_sdmetrics_frame(real, schema), _sdmetrics_frame(synth, schema),
                        sdmetrics_metadata(schema), verbose=False)
    props = report.get_properties().set_index("Property")["Score"]
    return {"overall": float(report.get_score()),
            "column_shapes": float(props.get("Column Shapes", np.nan)),
            "column_pair_trends": float(props.get("Column Pair Trends", np.nan))}


# ---- train on release, test on real -------------------------------------------------------------

TSTR_MODELS = ("logistic_regression", "gradient_boosting")
#: Gradient boosting's settings (module notes): a bounded leaf step and a fixed number of iterations.
GBDT_PARAMS = {"l2_regularization": 1.0, "early_stopping": False}


def _label_column(schema: Schema, label: str | None):
    name = label if label is not None else (schema.label.name if schema.label is not None else None)
    if name is None:
        raise SchemaError("no label: give one, or mark a categorical column with role: label in the schema")
    col = schema[name]
    if col.kind != "categorical":
        raise SchemaError(f"the label '{name}' must be a categorical column (it is numeric)")
    return col


def _xy(df: pd.DataFrame, schema: Schema, label_col) -> tuple[np.ndarray, np.ndarray]:
    feats = schema.without([label_col.name])
    X, _ = _design(df, feats)
    y = label_codes(df[label_col.name], label_col)
    keep = y >= 0  # records whose label is not a declared level cannot be scored
    return X[keep], y[keep]


def _model(name: str, seed: int):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "logistic_regression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return HistGradientBoostingClassifier(random_state=seed, **GBDT_PARAMS)


def _scores(y_test: np.ndarray, proba: np.ndarray, k: int) -> dict:
    from sklearn.metrics import f1_score, roc_auc_score

    pred = proba.argmax(axis=1)
    out = {"accuracy": float(np.mean(pred == y_test))}
    if k == 2:
        out["auc"] = float(roc_auc_score(y_test, proba[:, 1])) if len(np.unique(y_test)) == 2 else float("nan")
    else:
        out["macro_f1"] = float(f1_score(y_test, pred, labels=list(range(k)), average="macro", zero_division=0))
    return out


def tstr(synth: pd.DataFrame, test: pd.DataFrame, schema: Schema, label: str | None = None,
         *, seed: int = 0) -> dict:
    """Train on ``synth`` (the release), test on ``test`` (real records it never saw).

    Returns ``{"logistic_regression": {...}, "gradient_boosting": {...}}``, each with
    ``accuracy`` and ``auc`` (binary label) or ``macro_f1`` (more levels); see the module
    notes. ``label`` defaults to the schema's label column.
    """
    col = _label_column(schema, label)
    _check_columns(synth, schema, "released")
    _check_columns(test, schema, "test")
    X, y = _xy(synth, schema, col)
    Xt, yt = _xy(test, schema, col)
    if len(yt) == 0:
        raise InputDataError(f"no test record has a declared level of the label '{col.name}'")
    k = len(col.categories)
    with _one_thread():
        return _fit_score(X, y, Xt, yt, k, seed)


def _fit_score(X, y, Xt, yt, k: int, seed: int) -> dict:
    out = {}
    for name in TSTR_MODELS:
        present = np.unique(y)
        proba = np.zeros((len(yt), k))
        if present.size < 2:  # constant predictor
            proba[:, present[0] if present.size else 0] = 1.0
        else:
            m = _model(name, seed).fit(X, y)
            proba[:, m.classes_] = m.predict_proba(Xt)
        out[name] = _scores(yt, proba, k)
    return out


# ---- all together -------------------------------------------------------------------------------

@dataclass
class Evaluation:
    """The fidelity of one release (reads private data: not for publication)."""

    n_real: int
    n_released: int
    tvd_1way: dict[str, float]
    tvd_2way: dict[tuple[str, str], float]
    correlation_difference: float
    numeric: dict[str, dict] = field(default_factory=dict)
    tvd_3way: dict[tuple[str, str], float] | None = None
    sdmetrics: dict | None = None
    tstr: dict | None = None
    tstr_real: dict | None = None
    majority_rate: float | None = None
    n_test: int | None = None
    label: str | None = None
    label_3way: str | None = None
    bins_1way: int = 20
    bins_2way: int = 10
    constraints: dict | None = None  # each declared constraint: {"real": share of rows holding it, "released": ...}
    calendar: dict | None = None  # each date column: {"weekday": TVD, "hour_of_day": TVD (finer than a day)}
    notice: str = field(default=PRIVATE_NOTICE)

    @property
    def tvd_1way_mean(self) -> float:
        return float(np.mean(list(self.tvd_1way.values())))

    @property
    def tvd_2way_mean(self) -> float:
        return float(np.mean(list(self.tvd_2way.values()))) if self.tvd_2way else float("nan")

    @property
    def tvd_3way_mean(self) -> float:
        return float(np.mean(list(self.tvd_3way.values()))) if self.tvd_3way else float("nan")

    def _numeric_summary(self) -> dict:
        if not self.numeric:
            return {}
        col = {k: [m[k] for m in self.numeric.values()] for k in ("ks", "w1_range", "quantile_error", "atom_gap")}
        return {"ks_max": max(col["ks"]), "ks_mean": float(np.mean(col["ks"])),
                "w1_range_max": float(np.nanmax(col["w1_range"])) if not np.isnan(col["w1_range"]).all() else None,
                "quantile_error_max": float(np.nanmax(col["quantile_error"]))
                if not np.isnan(col["quantile_error"]).all() else None,
                "atom_gap_max": max(col["atom_gap"])}

    def summary(self) -> dict:
        """The headline numbers, flat (``lr_accuracy``, ``gbdt_auc``, ``tvd_1way``, ``ks_max``...)."""
        d = {"tvd_1way": self.tvd_1way_mean, "tvd_2way": self.tvd_2way_mean,
             "correlation_difference": self.correlation_difference}
        d.update({k: v for k, v in self._numeric_summary().items() if v is not None})
        if self.tvd_3way:
            d["tvd_3way"] = self.tvd_3way_mean
        if self.sdmetrics:
            d.update({f"sdm_{k}": v for k, v in self.sdmetrics.items()})
        for short, name in (("lr", "logistic_regression"), ("gbdt", "gradient_boosting")):
            for k, v in ((self.tstr or {}).get(name) or {}).items():
                d[f"{short}_{k}"] = v
        if self.majority_rate is not None:
            d["majority_rate"] = self.majority_rate
        for kind in ("weekday", "hour_of_day"):
            vals = [c[kind] for c in (self.calendar or {}).values() if kind in c]
            if vals:
                d[f"{kind}_tvd_max"] = max(vals)
        return d

    @property
    def tstr_below_majority(self) -> list[str]:
        """The train-on-release models (and real-data baselines) whose accuracy is below the majority-class
        rate: they failed to fit, and their scores are no reference."""
        if self.majority_rate is None:
            return []
        rows = [("release", self.tstr), ("real data", self.tstr_real)]
        return [f"{name.replace('_', ' ')} ({who})" for who, res in rows if res for name in TSTR_MODELS
                if res[name]["accuracy"] < self.majority_rate]

    def below_majority_warning(self) -> str | None:
        """One line naming :attr:`tstr_below_majority`, or None."""
        bad = self.tstr_below_majority
        return (f"warning: {', '.join(bad)} scored below the majority-class rate: the model failed to fit, its "
                f"scores are no reference") if bad else None

    def to_dict(self) -> dict:
        """JSON-able form (pairs are written ``"a | b"``; per-column measures worst first)."""
        def pairs(m):
            return {f"{a} | {b}": v for (a, b), v in sorted(m.items(), key=lambda kv: -kv[1])}

        return {
            "notice": self.notice,
            "n_real": self.n_real, "n_released": self.n_released, "n_test": self.n_test, "label": self.label,
            "tvd_1way": {"bins": self.bins_1way, "mean": self.tvd_1way_mean,
                         "per_column": dict(sorted(self.tvd_1way.items(), key=lambda kv: -kv[1]))},
            "tvd_2way": {"bins": self.bins_2way, "mean": self.tvd_2way_mean,
                         "max": max(self.tvd_2way.values()) if self.tvd_2way else None,
                         "per_pair": pairs(self.tvd_2way)},
            "tvd_3way": None if self.tvd_3way is None else {
                "bins": self.bins_2way, "label": self.label_3way, "mean": self.tvd_3way_mean,
                "max": max(self.tvd_3way.values()) if self.tvd_3way else None, "per_pair": pairs(self.tvd_3way)},
            "numeric_columns": self.numeric,
            "correlation_difference": self.correlation_difference,
            "sdmetrics": self.sdmetrics,
            "tstr": self.tstr,
            "tstr_real": self.tstr_real,
            "majority_rate": self.majority_rate,
            "tstr_below_majority": self.tstr_below_majority,
            "constraints": self.constraints,
            "calendar": self.calendar,
            "summary": self.summary(),
        }

    def to_table(self) -> str:
        """A short text table of the headline numbers, then each numeric column worst first."""
        from .columns import numeric_table

        worst = sorted(self.tvd_1way, key=lambda k: -self.tvd_1way[k])
        lines = [f"# {self.notice}",
                 f"records: real {self.n_real:,}, released {self.n_released:,}"
                 + (f", test {self.n_test:,} (label {self.label})" if self.n_test is not None else ""),
                 f"{'1-way TVD, mean over %d columns (%d bins)' % (len(self.tvd_1way), self.bins_1way):<46} "
                 f"{self.tvd_1way_mean:.3f}  (worst: "
                 + ", ".join(f"{k} {self.tvd_1way[k]:.3f}" for k in worst[:3]) + ")",
                 f"{'2-way TVD, mean over %d pairs (%d bins)' % (len(self.tvd_2way), self.bins_2way):<46} "
                 f"{self.tvd_2way_mean:.3f}"]
        if self.tvd_3way:
            top = max(self.tvd_3way, key=self.tvd_3way.get)
            lines.append(f"{'3-way TVD (pair, label), mean over %d pairs' % len(self.tvd_3way):<46} "
                         f"{self.tvd_3way_mean:.3f}  (worst: {' & '.join(top)} {self.tvd_3way[top]:.3f})")
        lines.append(f"{'correlation difference (mean |r_real - r_rel|)':<46} {self.correlation_difference:.3f}")
        for name, c in (self.calendar or {}).items():
            lines.append(f"{name + ': TVD of ' + ' and '.join(k.replace('_', ' ') for k in c):<46} "
                         + ", ".join(f"{v:.3f}" for v in c.values()))
        if self.sdmetrics:
            lines += [f"{'SDMetrics quality: overall':<46} {self.sdmetrics['overall']:.3f}",
                      f"{'  column shapes':<46} {self.sdmetrics['column_shapes']:.3f}",
                      f"{'  column pair trends':<46} {self.sdmetrics['column_pair_trends']:.3f}"]
        if self.tstr:
            lines += self._tstr_lines()
        for name, share in (self.constraints or {}).items():
            lines.append(f"{'rows holding ' + name:<46} real {share['real']:.3f}, released {share['released']:.3f}")
        if self.numeric:
            lines += ["", *numeric_table(self.numeric)]
        return "\n".join(lines)

    def _tstr_lines(self) -> list[str]:
        second = "auc" if "auc" in self.tstr[TSTR_MODELS[0]] else "macro_f1"
        lines = [f"{'train on release, test on real':<46} {'accuracy':>8} {second:>8}"]
        rows = [("release", self.tstr)] + ([("real data", self.tstr_real)] if self.tstr_real else [])
        for who, res in rows:
            for name in TSTR_MODELS:
                r = res[name]
                lines.append(f"{'  ' + name.replace('_', ' ') + ' (' + who + ')':<46} "
                             f"{r['accuracy']:>8.3f} {r[second]:>8.3f}")
        if self.majority_rate is not None:
            lines.append(f"{'  majority class for everyone':<46} {self.majority_rate:>8.3f}")
        if self.below_majority_warning():
            lines.append(self.below_majority_warning())
        return lines


def evaluate(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, test: pd.DataFrame | None = None,
             label: str | None = None, *, sdmetrics: bool = True, baseline: bool = True,
             bins_1way: int = 20, bins_2way: int = 10, seed: int = 0) -> Evaluation:
    """Every fidelity measure of ``released`` against ``real`` (reads private data: not for publication).

    ``test`` (real records neither table contains) enables train-on-release scores for
    ``label`` (default: the schema's label column) and the majority-class rate; with
    ``baseline`` the same models are also trained on ``real``, the reference a release is
    measured against. The 3-way TVD needs a label (``label`` or the schema's), not ``test``. The real tables'
    declared spellings of a missing value are read as missing first (:func:`~.cells.as_read`), as a release reads them.
    """
    return evaluate_read(as_read(real, schema), released, schema, None if test is None else as_read(test, schema),
                         label, sdmetrics=sdmetrics, baseline=baseline, bins_1way=bins_1way, bins_2way=bins_2way,
                         seed=seed)


def evaluate_read(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, test: pd.DataFrame | None = None,
                  label: str | None = None, *, sdmetrics: bool = True, baseline: bool = True,
                  bins_1way: int = 20, bins_2way: int = 10, seed: int = 0) -> Evaluation:
    """:func:`evaluate` of real tables already read (:func:`~.cells.as_read`), for a caller that reads them once."""
    has_label = test is not None or label is not None or schema.label is not None
    col = _label_column(schema, label) if has_label else None  # a bad label fails before any measure
    ev = Evaluation(
        n_real=len(real), n_released=len(released),
        tvd_1way=tvd_1way(real, released, schema, bins_1way),
        tvd_2way=tvd_2way(real, released, schema, bins_2way),
        correlation_difference=correlation_difference(real, released, schema),
        numeric=numeric_columns(real, released, schema),
        bins_1way=bins_1way, bins_2way=bins_2way, calendar=calendar_tvd(real, released, schema) or None,
    )
    if col is not None and len(schema.columns) >= 3:
        ev.tvd_3way, ev.label_3way = tvd_3way(real, released, schema, col.name, bins_2way), col.name
    if schema.constraints:
        from ..schema.constraints import ConstraintSet

        cs = ConstraintSet(schema, schema.constraints)
        ev.constraints = {k: {"real": v, "released": cs.shares(released)[k]} for k, v in cs.shares(real).items()}
    if sdmetrics:
        ev.sdmetrics = sdmetrics_quality(real, released, schema)
    if test is not None:
        ev.label, ev.n_test = col.name, len(test)
        ev.tstr = tstr(released, test, schema, col.name, seed=seed)
        ev.majority_rate = majority_rate(real, test, col)
        if baseline:
            ev.tstr_real = tstr(real, test, schema, col.name, seed=seed)
    return ev

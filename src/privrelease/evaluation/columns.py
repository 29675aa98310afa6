"""Measures that see inside the bins: each numeric column's values, and the (pair, label) triples.

Everything here reads the real (private) table: the numbers are for the custodian, NOT for
publication. Definitions (``r`` the real values of one numeric column, ``s`` the released
ones, missing values left out of both unless said otherwise; :func:`cells.numeric_values`
reads them, dates as units of the column's step):

* **Comparison precision** ``h``: 0 for a column with a declared resolution (``step``; 1 for an
  integer column), whose released values lie on its grid; 0.1 % of the range for a column
  without one (``PRECISION_SHARE``), which a release writes at a precision of its own (the
  default: the shortest decimal of each public cell, stated in the certificate): a real value
  1.60943794250488 released as 1.60943 is the same value at that precision.
* **KS**: the two-sample Kolmogorov-Smirnov statistic ``max_x |F_r(x) - F_s(x)|`` between the
  empirical distribution functions (exact, ties included), with values allowed to move by up
  to ``h``: ``max_x max(F_r(x - h) - F_s(x), F_s(x - h) - F_r(x), 0)`` (the plain statistic at
  ``h = 0``). 0 for the same values, 1 for disjoint ones; 1 when one side has values and the
  other none, 0 when neither has any.
* **W1 / range**: the Wasserstein-1 (earth mover's) distance ``integral |F_r(x) - F_s(x)| dx``
  divided by the public range ``upper - lower``: how far, as a share of the range, the values
  have to move on average. ``nan`` when a side has no values.
* **Quantiles**: the median, 90th and 99th percentiles of ``r`` and of ``s`` (numpy's linear
  interpolation). The **quantile error** of one quantile is ``|q_s - q_r| / max(|q_r|, t)``
  with ``t`` the column's declared resolution (``step``; 1 for an integer column), else 0.1 %
  of the range: 0.1 means "within 10 % of the real value". The column's quantile error is the
  largest of its three.
* **Atoms**: every value held by at least 1 % of the real records (``ATOM_SHARE``). For each,
  its share of the real records and its share of the released records, both counting the
  values within ``h`` of it (equal values, to a relative 1e-9, when ``h = 0``); the **atom gap**
  of the column is the largest ``|released - real|`` share (0 without atoms).
* **Missing share**: the share of records whose value is missing, real and released.
* **Dates**: a date column's quantiles and atoms are numbers of units of its step, and also
  ``real_date``, ``released_date`` and ``value_date`` texts, written as the HTML report writes
  them (``2020-06-30``, or ``2020-01-02 10:00`` for a step finer than a day).
* **3-way TVD** of a pair of non-label columns: the total variation distance of the joint
  distribution of (column a, column b, label) over the 2-way TVD's cells (``bins`` per
  numeric column, declared levels, one cell for what fits none): the structure a classifier
  reads, which 1- and 2-way marginals can get right while the triples are wrong.
* **Majority-class rate**: the share of the test records whose label is the most frequent
  label level of the real table: the accuracy of predicting that level for everyone, the
  floor every train-on-release accuracy is read against.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..schema import Schema
from .cells import cell_codes, check_columns, is_datetime, label_codes, numeric_values, tvd
from .figures import _date

__all__ = ["ks_statistic", "wasserstein_1", "numeric_column", "numeric_columns", "tvd_3way", "majority_rate",
           "ATOM_SHARE", "QUANTILES"]

ATOM_SHARE = 0.01
PRECISION_SHARE = 1e-3  #: a column without a declared step is compared at this share of its range
QUANTILES = (("median", 0.5), ("p90", 0.9), ("p99", 0.99))


def _cdfs(r: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted distinct values of both samples and each sample's distribution function there."""
    r, s = np.sort(r), np.sort(s)
    x = np.unique(np.concatenate([r, s]))
    return x, np.searchsorted(r, x, side="right") / len(r), np.searchsorted(s, x, side="right") / len(s)


def ks_statistic(r, s, h: float = 0.0) -> float:
    """Two-sample KS statistic of two samples, values allowed to move by up to ``h`` (``nan`` values
    left out; module notes).

    >>> ks_statistic([1, 2, 3], [1, 2, 3]), ks_statistic([1, 2], [5, 6]), ks_statistic([1, 2], [2, 3])
    (0.0, 1.0, 0.5)
    >>> ks_statistic([1.0, 2.0], [1.001, 2.0]), ks_statistic([1.0, 2.0], [1.001, 2.0], h=0.01)
    (0.5, 0.0)
    """
    r, s = np.sort(_clean(r)), np.sort(_clean(s))
    if len(r) == 0 or len(s) == 0:
        return 0.0 if len(r) == len(s) else 1.0
    # the sup of F_a(x - h) - F_b(x) is reached where F_a(x - h) jumps: x = a_i + h
    d_rs = np.searchsorted(r, r, side="right") / len(r) - np.searchsorted(s, r + h, side="right") / len(s)
    d_sr = np.searchsorted(s, s, side="right") / len(s) - np.searchsorted(r, s + h, side="right") / len(r)
    return float(max(d_rs.max(), d_sr.max(), 0.0))


def wasserstein_1(r, s) -> float:
    """Wasserstein-1 distance of two samples in their own units (``nan`` values left out).

    >>> wasserstein_1([0, 0], [1, 3])
    2.0
    """
    r, s = _clean(r), _clean(s)
    if len(r) == 0 or len(s) == 0:
        return float("nan")
    x, fr, fs = _cdfs(r, s)
    return float((np.abs(fr - fs)[:-1] * np.diff(x)).sum())


def _clean(v) -> np.ndarray:
    v = np.asarray(v, dtype=float).ravel()
    return v[~np.isnan(v)]


def _tolerance(col) -> float:
    res = getattr(col, "resolution", None)
    return float(res) if res else PRECISION_SHARE * float(col.upper - col.lower)


def comparison_precision(col) -> float:
    """``h`` of the module notes: 0 with a declared resolution, else PRECISION_SHARE of the range."""
    return 0.0 if getattr(col, "resolution", None) else PRECISION_SHARE * float(col.upper - col.lower)


def _atoms(rv: np.ndarray, sv: np.ndarray, n_r: int, n_s: int, col) -> list[dict]:
    vals, counts = np.unique(rv, return_counts=True)
    h = comparison_precision(col)
    out = []
    for v in vals[counts >= ATOM_SHARE * n_r]:
        tol = max(h, 1e-9 * max(abs(float(v)), 1e-6 * float(col.upper - col.lower), 1e-300))
        out.append({"value": float(v), "real": float(np.count_nonzero(np.abs(rv - v) <= tol)) / n_r,
                    "released": float(np.count_nonzero(np.abs(sv - v) <= tol)) / n_s})
    return out


def numeric_column(real: pd.Series, released: pd.Series, col) -> dict:
    """Every per-column measure of one numeric column (module notes), as a JSON-able dict."""
    r_all, s_all = numeric_values(real, col), numeric_values(released, col)
    rv, sv = _clean(r_all), _clean(s_all)
    span = float(col.upper - col.lower) or 1.0
    quant = {}
    for name, q in QUANTILES:
        qr = float(np.quantile(rv, q)) if len(rv) else float("nan")
        qs = float(np.quantile(sv, q)) if len(sv) else float("nan")
        quant[name] = {"real": qr, "released": qs, "error": abs(qs - qr) / max(abs(qr), _tolerance(col))}
    atoms = _atoms(rv, sv, len(r_all), len(s_all), col)
    if is_datetime(col):
        def text(v: float) -> str | None:
            return _date(col, v) if np.isfinite(v) else None

        for v in quant.values():
            v.update(real_date=text(v["real"]), released_date=text(v["released"]))
        for a in atoms:
            a["value_date"] = text(a["value"])
    errors = [v["error"] for v in quant.values()]
    return {
        "ks": ks_statistic(rv, sv, comparison_precision(col)),
        "w1_range": wasserstein_1(rv, sv) / span,
        "quantiles": quant,
        "quantile_error": float(np.nanmax(errors)) if not np.isnan(errors).all() else float("nan"),
        "atoms": atoms,
        "atom_gap": max((abs(a["released"] - a["real"]) for a in atoms), default=0.0),
        "missing": {"real": 1 - len(rv) / len(r_all), "released": 1 - len(sv) / len(s_all)},
    }


def numeric_columns(real: pd.DataFrame, released: pd.DataFrame, schema: Schema) -> dict[str, dict]:
    """:func:`numeric_column` of every numeric column, worst KS first (ties in schema order).

    >>> s = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 10}}})
    >>> m = numeric_columns(pd.DataFrame({"x": [0, 0, 5, 10]}), pd.DataFrame({"x": [0, 5, 5, 10]}), s)
    >>> m["x"]["ks"], m["x"]["atoms"][0]
    (0.25, {'value': 0.0, 'real': 0.5, 'released': 0.25})
    """
    check_columns(real, schema, "real")
    check_columns(released, schema, "released")
    out = {c.name: numeric_column(real[c.name], released[c.name], c) for c in schema.columns if c.kind == "numeric"}
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["ks"]))


def tvd_3way(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, label: str,
             bins: int = 10) -> dict[tuple[str, str], float]:
    """3-way TVD of (a, b, label) for every pair of non-label columns (schema order; module notes).

    >>> s = Schema.from_dict({"columns": {"a": {"type": "categorical", "categories": ["0", "1"]},
    ...     "b": {"type": "categorical", "categories": ["0", "1"]},
    ...     "y": {"type": "categorical", "categories": ["0", "1"]}}})
    >>> real = pd.DataFrame({"a": list("0011"), "b": list("0101"), "y": list("0110")})
    >>> tvd_3way(real, real.assign(y=list("1001")), s, "y")
    {('a', 'b'): 1.0}
    """
    check_columns(real, schema, "real")
    check_columns(released, schema, "released")
    r, cards = cell_codes(real, schema, bins)
    s, _ = cell_codes(released, schema, bins)
    y = schema.names.index(label)
    others = [j for j in range(len(schema.columns)) if j != y]
    out = {}
    for i, j in itertools.combinations(others, 2):
        size = cards[i] * cards[j] * cards[y]
        out[(schema.columns[i].name, schema.columns[j].name)] = tvd(
            (r[:, i] * cards[j] + r[:, j]) * cards[y] + r[:, y], (s[:, i] * cards[j] + s[:, j]) * cards[y] + s[:, y],
            size)
    return out


def calendar_tvd(real: pd.DataFrame, released: pd.DataFrame, schema) -> dict[str, dict]:
    """For every date column: the TVD of its values' weekdays and, at a step finer than a day, of their hours of
    the day (the cycles a reader of dates and times looks at, which the bins of the whole range never show).

    >>> from privrelease.schema import Schema
    >>> s = Schema.from_dict({"columns": {"t": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31",
    ...                                         "step": "hour"}}})
    >>> a = pd.DataFrame({"t": ["2020-01-06T08:00", "2020-01-07T09:00"]})  # a Monday and a Tuesday morning
    >>> calendar_tvd(a, pd.DataFrame({"t": ["2020-01-06T08:00", "2020-01-06T20:00"]}), s)
    {'t': {'weekday': 0.5, 'hour_of_day': 0.5}}
    """
    from ..schema.dates import UNITS_PER_DAY, DatetimeColumn, TimeColumn

    out = {}
    for col in schema.columns:
        if not isinstance(col, DatetimeColumn) or col.name not in released.columns:
            continue
        r, s = (d[col.name].to_numpy(dtype=float) if pd.api.types.is_numeric_dtype(d[col.name]) else
                col.to_units(d[col.name]) for d in (real, released))  # units already, or dates
        r, s = r[~np.isnan(r)], s[~np.isnan(s)]
        if not r.size or not s.size:
            continue
        day = UNITS_PER_DAY[col.unit]
        res = {} if isinstance(col, TimeColumn) else {  # a time of day: no weekday
            "weekday": _cycle_tvd((np.floor_divide(r, day) + 3) % 7, (np.floor_divide(s, day) + 3) % 7, 7)}
        if day > 1:
            per_hour = day // 24
            res["hour_of_day"] = _cycle_tvd(np.floor_divide(r % day, per_hour), np.floor_divide(s % day, per_hour), 24)
        out[col.name] = res
    return out


def _cycle_tvd(a: np.ndarray, b: np.ndarray, k: int) -> float:
    pa, pb = np.bincount(a.astype(np.int64), minlength=k) / a.size, np.bincount(b.astype(np.int64), minlength=k) / b.size
    return float(0.5 * np.abs(pa - pb).sum())


def majority_rate(real: pd.DataFrame, test: pd.DataFrame, label_col) -> float:
    """Share of ``test`` records whose label is the real table's most frequent declared level (module notes).

    >>> from privrelease.schema import CategoricalColumn
    >>> col = CategoricalColumn("y", ("a", "b"))
    >>> majority_rate(pd.DataFrame({"y": list("aab")}), pd.DataFrame({"y": list("abbb")}), col)
    0.25
    """
    r = label_codes(real[label_col.name], label_col)
    t = label_codes(test[label_col.name], label_col)
    top = int(np.bincount(r[r >= 0], minlength=len(label_col.categories)).argmax())
    return float(np.mean(t[t >= 0] == top)) if (t >= 0).any() else float("nan")


def _g(v: float) -> str:
    return "-" if v is None or not np.isfinite(v) else f"{v:.4g}"


def numeric_table(numeric: dict[str, dict]) -> list[str]:
    """Aligned text lines: one per numeric column (worst KS first) with KS, W1 / range, the three quantiles
    (real, released), the atom whose share moved most (value, real share, released share) and the missing share."""
    head = ["numeric column (worst KS first)", "KS", "W1/range"]
    for q, _ in QUANTILES:
        head += [f"{q} real", "released"]
    head += ["worst atom", "real", "released", "missing real", "released"]
    rows = [head]
    for name, m in numeric.items():
        row = [name, f"{m['ks']:.3f}", "-" if np.isnan(m["w1_range"]) else f"{m['w1_range']:.4f}"]
        for v in m["quantiles"].values():
            row += [v.get("real_date") or _g(v["real"]), v.get("released_date") or _g(v["released"])]
        atom = max(m["atoms"], key=lambda a: abs(a["released"] - a["real"]), default=None)
        row += ([atom.get("value_date") or _g(atom["value"]), f"{atom['real']:.1%}", f"{atom['released']:.1%}"]
                if atom else ["none", "", ""])
        row += [f"{m['missing']['real']:.1%}", f"{m['missing']['released']:.1%}"]
        rows.append(row)
    widths = [max(len(r[j]) for r in rows) for j in range(len(head))]
    return ["  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]

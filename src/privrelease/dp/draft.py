"""A schema drafted under differential privacy: DP quantile bounds and DP-selected levels.

:func:`dp_draft_schema` proposes a :class:`~privrelease.schema.Schema` from the private
table itself, spending a declared (epsilon, delta): every numeric column gets bounds from
two DP quantiles (:mod:`.quantiles`) over a public candidate grid, every categorical
column gets the levels that survive stable partition selection (:mod:`.partition`), plus
an ``other`` level that receives every level not selected (and missing values). The
costs compose sequentially over the columns. The schema's ``provenance`` records the
draft and its cost, and every release certificate using the schema repeats it.

What is treated as public: the column names, the number of records n (replace-one
relation, as in every release), and each column's kind, taken from the file's parsed
types (numbers or text) or from ``categorical=`` / the label; the drafted schema says so.
"""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np
import pandas as pd

from ..errors import ParameterError, SchemaError, shorten_list
from ..noise import make_source
from ..schema import CategoricalColumn, NumericColumn, Schema
from .costs import PrivacyCost, check_delta, check_epsilon
from .partition import select_partitions
from .quantiles import default_grid, dp_bounds, range_grid

OTHER = "(other)"
DEFAULT_QUANTILES = (0.01, 0.99)


def _kinds(df: pd.DataFrame, label, categorical) -> dict:
    kinds = {}
    for name in df.columns:
        s = df[name]
        if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
            raise SchemaError(f"column '{name}' holds dates/times: convert it to numbers (or text) before drafting")
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        kinds[name] = "categorical" if (name == label or name in categorical or not numeric) else "numeric"
    return kinds


def draft_cost(df: pd.DataFrame, epsilon: float, delta: float | None, *, label: str | None = None,
               categorical=()) -> PrivacyCost:
    """What :func:`dp_draft_schema` will spend on ``df`` (known before any value is read: delta only
    when some column is categorical)."""
    kinds = _kinds(df, label, set(categorical))
    has_cat = any(k == "categorical" for k in kinds.values())
    return PrivacyCost(check_epsilon(epsilon, allow_inf=False), check_delta(delta) if has_cat and delta else 0.0)


def dp_draft_schema(df: pd.DataFrame, epsilon: float, delta: float | None = None, *, rng=None,
                    label: str | None = None, ranges: dict | None = None, categorical=(),
                    quantiles=DEFAULT_QUANTILES) -> tuple[Schema, PrivacyCost]:
    """Draft a schema from ``df`` under (epsilon, delta)-DP (replace-one relation, n public).

    Parameters
    ----------
    df : the private table
    epsilon : total epsilon of the draft, split evenly over the 2 quantiles of every numeric
        column and the level selection of every categorical column
    delta : total delta, split evenly over the categorical columns (only they spend it);
        needed when the table has categorical columns
    rng : None (OS entropy, real use) or a seed/Generator (experiments)
    label : a column to mark as the label (categorical)
    ranges : ``{column: (lo, hi)}`` public ranges: the candidates of that column's bounds are
        1001 points of ``[lo, hi]`` instead of the wide default grid; ``{"*": (lo, hi)}`` for all
    categorical : names of numeric-looking columns to treat as categorical
    quantiles : the quantiles that become the lower and upper bounds

    Returns
    -------
    (schema, cost): the drafted schema (with ``provenance``) and the privacy cost spent.

    Notes
    -----
    Each numeric column: two exponential-mechanism quantiles of ``epsilon_q`` each
    (:func:`~privrelease.dp.quantiles.dp_quantile`, utility sensitivity 1). Each categorical
    column: stable partition selection with ``(epsilon_q, delta_c)``
    (:func:`~privrelease.dp.partition.select_partitions`). With ``k_n`` numeric and ``k_c``
    categorical columns, ``epsilon_q = epsilon / (2 k_n + k_c)`` and ``delta_c = delta / k_c``;
    sequential composition gives (epsilon, delta)-DP for the whole draft. Integer flags
    (from the parsed type), the label role and the ``other`` level are post-processing or
    public facts. See docs/derivations.md.
    """
    eps = check_epsilon(epsilon, allow_inf=False)
    _check_draft_args(df, label, categorical, quantiles)
    kinds = _kinds(df, label, set(categorical))
    k_num = sum(k == "numeric" for k in kinds.values())
    k_cat = len(kinds) - k_num
    total_delta = _categorical_delta(delta, k_cat)
    eps_q = eps / (2 * k_num + k_cat)
    delta_c = total_delta / k_cat if k_cat else 0.0
    ranges = dict(ranges or {})
    source = make_source(rng)
    cols = [_numeric_column(df[name], name, 2 * eps_q, _range(ranges, name), source, quantiles)
            if kinds[name] == "numeric" else
            _categorical_column(df[name], name, eps_q, delta_c, source, name == label)
            for name in df.columns]  # in the table's order: the noise is drawn column by column
    per_query = {"quantile_epsilon": eps_q, "quantiles": list(quantiles),
                 "partition_epsilon": eps_q if k_cat else None, "partition_delta": delta_c if k_cat else None}
    grid = {c: _grid_note(_range(ranges, c)) for c, k in kinds.items() if k == "numeric"}
    provenance = _provenance(eps, total_delta, per_query, grid, source.description)
    return Schema(columns=tuple(cols), provenance=provenance), PrivacyCost(eps, total_delta)


def _provenance(eps: float, total_delta: float, per_query: dict, grid: dict, randomness: str) -> dict:
    """What the drafted schema says of its making (every release certificate using it repeats it)."""
    return {
        "method": "dp-draft",
        "guarantee": "(epsilon,delta)-DP" if total_delta else "epsilon-DP",
        "neighbouring_relation": "bounded (R1): one record replaced, n public",
        "epsilon": eps,
        "delta": total_delta,
        "per_query": per_query,
        "grid": grid,
        "public_facts": "column names, n, and column kinds (from the parsed types) are treated as public",
        "randomness": randomness,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _check_draft_args(df: pd.DataFrame, label, categorical, quantiles) -> None:
    """The label and the ``categorical`` names are columns of ``df``; the quantiles are ordered in [0, 1]."""
    if label is not None and label not in df.columns:
        raise SchemaError(f"label column '{label}' is not in the table; its columns: {shorten_list(df.columns)}")
    unknown = [c for c in categorical if c not in df.columns]
    if unknown:
        raise SchemaError(f"--categorical names column(s) not in the table: {shorten_list(unknown)}")
    lo_q, hi_q = quantiles
    if not (0 <= lo_q < hi_q <= 1):
        raise ParameterError(f"quantiles must satisfy 0 <= lower < upper <= 1, got {quantiles}")


def _categorical_delta(delta, k_cat: int) -> float:
    """The draft's total delta: checked and > 0 when some column is categorical (only they spend it), else 0."""
    if k_cat and delta is None:
        raise ParameterError("discovering categorical levels privately needs a delta (--delta, e.g. 1e-6)")
    total_delta = check_delta(delta) if k_cat else 0.0
    if k_cat and not total_delta > 0:
        raise ParameterError("discovering categorical levels privately needs a delta > 0")
    return total_delta


def _range(ranges: dict, name) -> tuple | None:
    """The public range of a column's candidate bounds: its own, else the one for all columns (``"*"``)."""
    return ranges.get(name, ranges.get("*"))


def _grid_note(r) -> list | str:
    """How the provenance describes a column's candidate grid."""
    return list(map(float, r)) if r else "default wide grid (0, +-m 10^k)"


def _numeric_column(s: pd.Series, name, epsilon: float, r, source, quantiles) -> NumericColumn:
    """A numeric column with DP bounds: two quantiles spending ``epsilon`` together over the grid of ``r``
    (the default wide grid when None); an integer column's bounds are widened to integers."""
    grid = range_grid(*r) if r is not None else default_grid()
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
    lo, hi = dp_bounds(v[np.isfinite(v)], epsilon, grid, source, quantiles)
    integer = pd.api.types.is_integer_dtype(s)
    if integer:
        lo, hi = float(math.floor(lo)), float(math.ceil(hi))
    return NumericColumn(name=str(name), lower=lo, upper=hi, integer=integer)


def _categorical_column(s: pd.Series, name, epsilon: float, delta: float, source, is_label: bool):
    """A categorical column of the levels kept by stable partition selection, plus an ``other`` level that
    receives the levels not kept and missing values."""
    levels = select_partitions(s.to_numpy(dtype=object), epsilon, delta, source)
    other = OTHER if OTHER not in levels else OTHER + " "
    return CategoricalColumn(name=str(name), categories=tuple(levels) + (other,),
                             role="label" if is_label else None, missing=other, other=other)

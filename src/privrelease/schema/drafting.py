"""Schema drafts read from the data (NOT private): a proposal for a human to review before any release.

The DP draft (:mod:`privrelease.dp.draft`) decides kinds by the same rule from noisy counts.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import NotPrivateWarning, SchemaError, shorten_list
from .schema import CategoricalColumn, Schema


def draft_schema(df, max_levels: int = 50, label: str | None = None) -> Schema:
    """Propose a schema from data, for a human to review before any release (see :func:`draft_schema_dict`).

    This reads the (possibly private) data: bounds and levels taken from it are
    **not** differentially private, so a :class:`NotPrivateWarning` is issued.
    """
    from .values import StatedFacts

    return Schema.from_dict(draft_schema_dict(df, max_levels, StatedFacts.of(label)))


def draft_schema_dict(df, max_levels: int = 50, facts=None) -> dict:
    """Propose a schema mapping (YAML form) from data, for a human to review before any release.

    Reads the (possibly private) data: **not** differentially private (a
    :class:`NotPrivateWarning` says so). Each value is read as its canonical text; the kind
    of a column not stated in ``facts`` follows from its exact class counts by the rule the
    DP draft applies to noisy ones (:func:`~privrelease.schema.values.decide_kind`). Missing
    spellings found go to ``na_values``; a numeric column with missing values gets
    ``missing: allowed`` (released as missing), a label with missing values a warning (a
    release refuses them) and declared levels ``missing: allowed``. Empty and identifier-like
    columns are left out with a warning. Numeric bounds are widened to round numbers.
    """
    from .values import NA_TOKENS, ColumnCounts, StatedFacts, canonical_text, decide_kind, declared_levels_spec, \
        drafted_step, identifier_name, levels_apart_from_spellings, missing_tokens, value_classes, whole_numbers, \
        with_timezone

    facts = facts or StatedFacts()
    if facts.label is not None and facts.label not in df.columns:
        raise SchemaError(f"label column '{facts.label}' is not in the table; its columns: {shorten_list(df.columns)}")
    warnings.warn("schema drafting read the data: the drafted bounds and categories are not private; "
                  "review them and replace them by public knowledge before releasing", NotPrivateWarning, stacklevel=2)
    cols: dict[str, dict] = {}
    na: set = set()
    for name in map(str, df.columns):
        text = canonical_text(df[name])
        counts = ColumnCounts.exact(text)
        kind = facts.kind(name)
        if kind is None:
            kind = "identifier" if identifier_name(name) else decide_kind(counts, len(df))
        elif kind == "numeric":
            kind = "integer" if whole_numbers(counts) else "numeric"
        if kind in ("empty", "identifier"):
            _warn_left_out(name, kind)
            continue
        na.update(t for t in missing_tokens(text) if t)
        has_missing = counts.classes[0] > 0
        if name in (facts.levels or {}):
            cols[name] = declared_levels_spec(facts.levels[name], name == facts.label, missing=has_missing)
            continue
        present = text[value_classes(text) != 0]
        if kind == "time":  # a day's bounds; the step as stated, else the finest the values use
            cols[name] = {"type": "time", "step": facts.step(name) or ("second" if present.str.fullmatch(
                r"\s*\d{1,2}:\d{2}:\d{2}.*").any() else "minute"), **({"missing": "allowed"} if has_missing else {})}
            continue
        cols[name] = (_drafted_levels(name, present, has_missing, name == facts.label, max_levels)
                      if kind == "categorical" else with_timezone(_drafted_bounds(kind, present, has_missing,
                                                                                  facts.step(name)), counts))
        step = drafted_step(counts) if kind == "numeric" else None
        if step is not None:
            cols[name]["step"] = step
    if not cols:
        raise SchemaError("the draft kept no column (every column was empty or identifier-like)")
    out: dict = {"na_values": [t for t in NA_TOKENS if t in na]} if na else {}
    out["columns"] = cols
    return levels_apart_from_spellings(out)


def _finest_unit(days: np.ndarray) -> str:
    """The coarsest of day, hour, minute and second at which every one of these day numbers is whole."""
    from .dates import UNITS_PER_DAY

    for unit in ("day", "hour", "minute"):
        per_day = UNITS_PER_DAY[unit]
        x = days * per_day
        if np.all(np.abs(x - np.round(x)) < 1e-6 * max(1.0, per_day / 1440)):
            return unit
    return "second"


def _warn_left_out(name: str, kind: str) -> None:
    from ..errors import DataWarning

    from .values import fresh_identifiers_hint

    what = "holds (almost) no values" if kind == "empty" else "looks like an identifier"
    warnings.warn(f"column '{name}' left out of the draft: it {what}; state its kind (--numeric, --categorical, "
                  f"--datetime) to keep it" + ("; " + fresh_identifiers_hint(name) if kind == "identifier" else ""),
                  DataWarning, stacklevel=3)


def _drafted_bounds(kind: str, present, has_missing: bool, step: str | None = None) -> dict:
    """A numeric (integer) or datetime column's spec from its present values (min and max, widened; a date column's
    step as stated, else the finest its values use)."""
    from .values import as_days, as_numbers, iso_day

    if kind == "datetime":
        v = as_days(present)
        v = v[np.isfinite(v)]
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
        spec = {"type": "datetime", "lower": iso_day(lo), "upper": iso_day(max(math.ceil(hi), math.floor(lo) + 1)),
                "step": step or _finest_unit(v)}
    else:
        v = as_numbers(present)
        v = v[np.isfinite(v)]
        lo, hi = (_nice_floor(float(v.min())), _nice_ceil(float(v.max()))) if v.size else (0.0, 1.0)
        spec = {"type": "numeric", "lower": lo, "upper": hi if hi > lo else lo + 1}
        if kind == "integer":
            spec["integer"] = True
    if has_missing:
        spec["missing"] = "allowed"
    return spec


def _drafted_levels(name: str, present, has_missing: bool, is_label: bool, max_levels: int) -> dict:
    """A categorical column's spec: its levels (sorted), ``missing: allowed`` when values are missing (a label:
    a warning instead, a release refuses them)."""
    from ..errors import DataWarning
    from .encoding import warn_one_class
    from .values import label_missing_line

    counts = present.value_counts()
    if is_label and len(counts) > max_levels:
        raise SchemaError(f"label column '{name}' has {len(counts):,} distinct values; a label is "
                          f"categorical with at most {max_levels} classes")
    levels = sorted(counts.index.tolist())
    spec: dict = {"type": "categorical", "categories": levels}
    if has_missing and is_label:
        warnings.warn(label_missing_line(name, None), DataWarning, stacklevel=3)
    elif has_missing:
        spec["missing"] = "allowed"
    if is_label:
        spec["role"] = "label"
        if levels:
            warn_one_class(CategoricalColumn(name=name, categories=tuple(levels)), counts.reindex(levels).to_numpy())
    return spec


def _nice_ceil(v: float) -> float:
    """The smallest number >= v with one significant digit, as it is written (0.3, not 0.30000000000000004).

    >>> _nice_ceil(0.27), _nice_ceil(0.3), _nice_ceil(1234.5), _nice_ceil(-0.27)
    (0.3, 0.3, 2000.0, -0.2)
    """
    if v <= 0:
        return -_nice_floor(-v)
    exp = math.floor(math.log10(v))
    return _one_digit(math.ceil(round(v / 10.0 ** exp, 9)), exp)


def _nice_floor(v: float) -> float:
    """The largest number <= v with one significant digit, as it is written.

    >>> _nice_floor(0.37), _nice_floor(0.7), _nice_floor(17), _nice_floor(-0.27)
    (0.3, 0.7, 10.0, -0.3)
    """
    if v <= 0:
        return -_nice_ceil(-v) if v < 0 else 0.0
    exp = math.floor(math.log10(v))
    return _one_digit(math.floor(round(v / 10.0 ** exp, 9)), exp)


def _one_digit(digit: int, exp: int) -> float:
    """``digit * 10**exp`` parsed from its decimal text, so it prints as written."""
    return float(f"{digit}e{exp}")

"""The values and public cells every fidelity measure reads (see :mod:`privrelease.evaluation.fidelity`).

* :func:`numeric_values` turns one numeric column of a table into floats in the column's own
  units: numbers as they are; for a datetime column (a numeric column whose released values
  are ISO dates or date-times) dates are parsed with pandas and counted in whole units of
  the column's step (day by default) since 1970-01-01, the units of its public bounds. A
  value that is missing or cannot be read is ``nan``.
* :func:`as_read` reads a table's declared spellings of a missing value as missing, as a release does.
* :func:`cell_codes` puts every value in a public cell: numeric columns in equal-width bins
  over the schema's bounds, categorical columns at their declared levels, and cell 0 for
  what fits none (a missing number, an undeclared level).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputDataError
from ..schema import Schema
from ..schema.dates import TimeColumn, parse_iso
from ..schema.encoding import read_missing
from .distribution import discretize

UNIT_SECONDS = {"day": 86400.0, "hour": 3600.0, "minute": 60.0, "second": 1.0}


def check_columns(df: pd.DataFrame, schema: Schema, what: str) -> None:
    missing = [n for n in schema.names if n not in df.columns]
    if missing:
        raise InputDataError(f"the {what} table lacks the schema's columns {missing}")
    if len(df) == 0:
        raise InputDataError(f"the {what} table is empty")


def as_read(df: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """``df`` with every declared spelling of a missing value (the schema's ``na_values`` and a column's own) read as
    missing, as a release reads the table; a date column already in units (numbers) is left as it is."""
    cols = {c.name: read_missing(df[c.name], schema, c) for c in schema.columns
            if c.name in df.columns and schema.missing_spellings(c)
            and not (is_datetime(c) and pd.api.types.is_numeric_dtype(df[c.name]))}
    return df.assign(**cols) if cols else df


def is_datetime(col) -> bool:
    """Whether a schema column holds dates (a datetime column, a subclass of the numeric column)."""
    return type(col).__name__.lower().startswith("datetime") or getattr(col, "type", None) == "datetime"


def unit_seconds(col) -> float:
    """Seconds in one unit of a datetime column (its step: day, hour, minute or second; day by default)."""
    for attr in ("unit", "precision", "step"):
        u = getattr(col, attr, None)
        if isinstance(u, str) and u in UNIT_SECONDS:
            return UNIT_SECONDS[u]
    return UNIT_SECONDS["day"]


def numeric_values(s: pd.Series, col) -> np.ndarray:
    """The values of numeric column ``col`` as floats in its own units (``nan`` for missing / unreadable).

    >>> numeric_values(pd.Series(["1.5", None, "x"]), None).tolist()
    [1.5, nan, nan]
    """
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return _seconds(s) / unit_seconds(col)
    if isinstance(col, TimeColumn) and not pd.api.types.is_numeric_dtype(s.dtype):
        return col.to_units(s, strict=False)  # a time of day: units since midnight
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    if col is not None and is_datetime(col) and not pd.api.types.is_numeric_dtype(s.dtype):
        text = s.notna().to_numpy() & np.isnan(v)
        if text.any():
            dates = parse_iso(s[text].astype(str))
            v[text] = _seconds(dates) / unit_seconds(col)
    return v


def _seconds(s: pd.Series) -> np.ndarray:
    if getattr(s.dt, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    ns = s.astype("datetime64[ns]").to_numpy().astype("int64").astype(float)
    return np.where(s.isna().to_numpy(), np.nan, ns / 1e9)


def cell_codes(df: pd.DataFrame, schema: Schema, bins: int) -> tuple[np.ndarray, list[int]]:
    """Cell index of every value (n, columns) and the number of cells of each column.

    Cell 0 is "fits no declared cell" (missing numeric value, undeclared level); cells
    ``1..k`` are the bins or levels.
    """
    if int(bins) < 1:
        raise InputDataError(f"bins must be a positive integer, got {bins!r}")
    frame = {}
    missing = {}
    for c in schema.columns:
        s = df[c.name]
        if c.kind == "numeric":
            v = numeric_values(s, c)
            missing[c.name] = np.isnan(v)
            s = pd.Series(np.where(np.isnan(v), c.lower, v), index=df.index)
        else:
            s = declared_text(s, c)
        frame[c.name] = s
    codes = discretize(pd.DataFrame(frame, index=df.index), schema, bins=int(bins)) + 1
    for j, c in enumerate(schema.columns):
        if c.kind == "numeric":
            codes[missing[c.name], j] = 0
    cards = [int(bins) + 1 if c.kind == "numeric" else len(c.categories) + 1 for c in schema.columns]
    return codes, cards


def tvd(a: np.ndarray, b: np.ndarray, size: int) -> float:
    """Total variation distance between the empirical distributions of two arrays of cell indices."""
    p = np.bincount(a, minlength=size) / len(a)
    q = np.bincount(b, minlength=size) / len(b)
    return float(0.5 * np.abs(p - q).sum())


def label_codes(s: pd.Series, col) -> np.ndarray:
    """Index of each value among a categorical column's declared levels (-1: undeclared; missing as declared)."""
    return pd.Categorical(declared_text(s, col), categories=list(col.categories)).codes.astype(int)


def declared_text(s: pd.Series, col) -> pd.Series:
    """A categorical column's values as a release reads them: text without surrounding spaces, a missing value as
    its declared level (if any), and a value outside the declared levels as the declared ``other`` level (if any),
    so that a real table's rare levels and a release's ``(other)`` fall in the same cell."""
    s = s.where(s.isna(), s.astype(str).str.strip())
    if col.missing is not None:
        s = s.fillna(col.missing)
    if col.other is not None:
        s = s.where(s.isna() | s.isin([str(v) for v in col.levels]), col.other)
    return s

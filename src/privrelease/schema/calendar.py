"""A date column's calendar parts: the week, the day of the week and the time of day, released as columns of their own.

A date-time column is a whole number of units (seconds, minutes, hours or days) since 1970-01-01. Released as one
number, its daily and weekly cycles are details finer than any noisy count can reach: a tree over two years at
the minute needs nodes of an hour inside one day to show the hour of the day, and each holds a few records, so a
mechanism that meets the noise with coarser nodes spreads the day's hours evenly (a generated table of police stops,
two years at the minute: the hour of the day's TVD 0.17, its weekday's 0.05). The cycles are public geometry, so the
column is mapped, record by record, to

- ``<column> (week)``: the weeks since the Monday before 1970-01-01, an integer column on the public bounds' weeks;
- ``<column> (weekday)``: Monday to Sunday, a categorical column (when the bounds span at least :data:`MIN_WEEKS`
  weeks; a shorter span's weekday is its date);
- ``<column> (time of day)``: the units since midnight, an integer column from 0 to a day's units less one (when the
  unit is finer than a day and the bounds span at least :data:`MIN_DAYS` days),

and a released record's parts are put back together (:meth:`CalendarParts.complete`). The map reads one record
at a time and public facts only (the bounds, the unit), so it changes neither the neighbouring relation nor any
sensitivity: the mechanism releases a table with more columns, each bounded by public facts
(docs/derivations.md, "Calendar parts"). A value outside the column's bounds is clipped to them first, and counted
(or refused) under the column's own name, as the encoder does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputDataError

#: Days since 1970-01-01 (a Thursday) plus this are days since the Monday before it.
_MONDAY_OFFSET = 3
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: The weekday is a part of its own when the bounds span at least this many weeks ...
MIN_WEEKS = 4
#: ... and the time of day when they span at least this many days.
MIN_DAYS = 2
_PER_DAY = {"day": 1, "hour": 24, "minute": 1440, "second": 86_400}


def calendar_parts(schema) -> tuple:
    """The :class:`CalendarParts` of every date column of ``schema`` that has at least one part (not for a label
    or a target, and not for a column that a constraint derives)."""
    from .dates import DatetimeColumn

    derived = {n for c in schema.constraints for n in c.derived}
    out = []
    for col in schema.columns:
        if not isinstance(col, DatetimeColumn) or col.role in ("label", "target") or col.name in derived:
            continue
        per_day = _PER_DAY[col.unit]
        days = (col.upper - col.lower + 1) / per_day
        parts = CalendarParts(col.name, weekday=days >= 7 * MIN_WEEKS, time=per_day > 1 and days >= MIN_DAYS)
        if parts.weekday or parts.time:
            out.append(parts)
    return tuple(out)


@dataclass(frozen=True)
class CalendarParts:
    """A date column released as its week, weekday and time of day (the module's docstring says how)."""

    column: str
    weekday: bool
    time: bool
    type: str = "calendar"

    @property
    def label(self) -> str:
        return f"calendar parts of {self.column}"

    @property
    def reads(self) -> tuple:
        return (self.column,)

    @property
    def derived(self) -> tuple:
        return (self.column,)

    @property
    def names(self) -> tuple:
        """The part columns' names: (week or day, weekday or None, time of day or None)."""
        first = f"{self.column} (week)" if self.weekday else f"{self.column} (day)"
        return (first, f"{self.column} (weekday)" if self.weekday else None,
                f"{self.column} (time of day)" if self.time else None)

    def to_dict(self) -> dict:
        return {"type": self.type, "column": self.column, "weekday": self.weekday, "time": self.time}

    def _split(self, units: np.ndarray, col) -> tuple:
        """(week or day, weekday, time of day) of whole units since 1970-01-01 (NaN stays NaN)."""
        per_day = _PER_DAY[col.unit]
        day = np.floor_divide(units, per_day)
        tod = units - day * per_day
        if not self.weekday:
            return day, None, tod
        d = day + _MONDAY_OFFSET
        return np.floor_divide(d, 7), d - 7 * np.floor_divide(d, 7), tod

    def part_columns(self, schema) -> list:
        """The columns that stand for the date column in what the mechanism releases."""
        from .schema import CategoricalColumn, NumericColumn

        col = schema[self.column]
        lo, _, _ = self._split(np.array([col.lower]), col)
        hi, _, _ = self._split(np.array([col.upper]), col)
        missing = "allowed" if col.missing == "allowed" else None
        first, wd, tod = self.names
        upper = float(hi[0]) if hi[0] > lo[0] else float(lo[0]) + 1.0
        out = [NumericColumn(first, float(lo[0]), upper, integer=True, missing=missing)]
        if wd is not None:
            out.append(CategoricalColumn(wd, WEEKDAYS, missing=missing))
        if tod is not None:
            out.append(NumericColumn(tod, 0.0, float(_PER_DAY[col.unit] - 1), integer=True, missing=missing))
        return out

    def prepare(self, df: pd.DataFrame, schema, policy: str, row_offset: int) -> int:
        """The part columns of the input records (the date clipped to its bounds first); returns how many were
        clipped (refused in one line with ``policy="error"``, as the encoder refuses)."""
        col = schema[self.column]
        units = col.to_units(df[self.column], row_offset)
        out = (units < col.lower) | (units > col.upper)
        if out.any() and policy == "error":
            rows = (np.flatnonzero(out)[:5] + row_offset).tolist()
            raise InputDataError(f"column '{col.name}' has {int(out.sum())} value(s) outside the declared bounds "
                                 f"[{col.iso(col.lower)}, {col.iso(col.upper)}] (first rows {rows}); use "
                                 f"--on-out-of-bounds clip to clip them")
        units = np.where(np.isnan(units), np.nan, np.clip(units, col.lower, col.upper))
        first, wd, tod = self._split(units, col)
        names = self.names
        df[names[0]] = first
        if names[1] is not None:
            df[names[1]] = pd.Series(np.asarray(WEEKDAYS, dtype=object)[np.nan_to_num(wd).astype(int)],
                                     index=df.index).where(~np.isnan(units), None)
        if names[2] is not None:
            df[names[2]] = tod
        return int(out.sum())

    def complete(self, out: pd.DataFrame, schema) -> None:
        """The date column of released records from their parts (which are removed). A missing week makes the
        date missing; a weekday or time of day released as missing beside a present week takes one of the other
        released records' in turn (post-processing). A date that falls outside the bounds (a first or last week holds
        days outside them) moves by whole weeks to the nearest one inside, keeping its weekday and time of day,
        and is clipped to the bounds if none is (a span under a week)."""
        from .dates import format_units

        col = schema[self.column]
        per_day = _PER_DAY[col.unit]
        first_name, wd_name, tod_name = self.names
        first = pd.to_numeric(out.pop(first_name), errors="coerce").to_numpy(dtype=float)
        present = ~np.isnan(first)
        if wd_name is not None:
            wd = out.pop(wd_name).map({w: i for i, w in enumerate(WEEKDAYS)}).to_numpy(dtype=float)
            day = 7 * first + _fill(wd, present) - _MONDAY_OFFSET
        else:
            day = first
        tod = _fill(pd.to_numeric(out.pop(tod_name), errors="coerce").to_numpy(dtype=float), present) \
            if tod_name is not None else np.zeros(first.size)
        units = day * per_day + tod
        if wd_name is not None:  # whole weeks toward the bounds, then the bounds
            week = 7 * per_day
            units = np.where(units < col.lower, units + week * np.ceil((col.lower - units) / week), units)
            units = np.where(units > col.upper, units - week * np.ceil((units - col.upper) / week), units)
        units = np.where(present, np.clip(units, col.lower, col.upper), np.nan)
        out[self.column] = format_units(units, col.unit, col.timezone)


def _fill(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``values`` where ``present``, those missing there replaced by the other present records' values in turn
    (the released records are in random order)."""
    gap = present & np.isnan(values)
    pool = values[present & ~np.isnan(values)]
    if gap.any():
        values = values.copy()
        values[gap] = pool[np.arange(int(gap.sum())) % pool.size] if pool.size else 0.0
    return values

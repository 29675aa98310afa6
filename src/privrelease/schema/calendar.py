"""A date-time column's calendar parts: the day and the time of day, released as columns of their own.

A date-time column is a whole number of units (seconds, minutes or hours) since 1970-01-01. Released as one
number, its daily cycle is a detail finer than any noisy count can reach: a tree over two years at the minute needs
nodes of an hour inside one day to show the hour of the day, and each holds a few records, so a mechanism that
meets the noise with coarser nodes spreads the day's hours evenly (a generated table of police stops, two years at
the minute: the hour of the day's TVD 0.17). The cycle is public geometry, so the column is mapped, record by
record, to

- ``<column> (day)``: the days since 1970-01-01, an integer column on the public bounds' days;
- ``<column> (time of day)``: the units since midnight, an integer column from 0 to a day's units less one,

when its unit is finer than a day and its bounds span at least :data:`MIN_DAYS` days, and a released record's parts
are put back together (:meth:`CalendarParts.complete`). The map reads one record at a time and public facts only
(the bounds, the unit), so it changes neither the neighbouring relation nor any sensitivity: the mechanism releases
a table with one more column, each bounded by public facts (docs/derivations.md, "a date-time column's calendar
parts"). A value outside the column's bounds is clipped to them first, and counted (or refused) under the column's
own name, as the encoder does.

A weekday part (the week and the day of the week as two columns) was measured and left out: the day of a date that
holds structure of its own at the day (the first of each month, a month's last day) is then put together from a
week and a weekday drawn from a coarser model, and that structure is lost; the day's own tree keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


def _per_day(unit: str) -> int:
    """Units of a date-time's step in one day (:data:`~.dates.UNITS_PER_DAY`; imported here, not at the top: the
    dates module imports the schema, which imports this module through the constraints)."""
    from .dates import UNITS_PER_DAY

    return UNITS_PER_DAY[unit]

#: The time of day is a part of its own when the bounds span at least this many days.
MIN_DAYS = 2


def calendar_parts(schema) -> tuple:
    """The :class:`CalendarParts` of every date-time column of ``schema`` (a unit finer than a day, bounds at
    least :data:`MIN_DAYS` days apart; not a label or a target, nor a column that a constraint derives)."""
    from .dates import DatetimeColumn, TimeColumn

    derived = {n for c in schema.constraints for n in c.derived}
    return tuple(CalendarParts(col.name) for col in schema.columns
                 if isinstance(col, DatetimeColumn) and not isinstance(col, TimeColumn)
                 and col.role not in ("label", "target")
                 and col.name not in derived and _per_day(col.unit) > 1
                 and (col.upper - col.lower + 1) / _per_day(col.unit) >= MIN_DAYS)


@dataclass(frozen=True)
class CalendarParts:
    """A date-time column released as its day and its time of day (the module's docstring says how)."""

    column: str
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
        """The part columns' names: (day, time of day)."""
        return f"{self.column} (day)", f"{self.column} (time of day)"

    def to_dict(self) -> dict:
        return {"type": self.type, "column": self.column}

    def part_columns(self, schema) -> list:
        """The columns that stand for the date-time column in what the mechanism releases."""
        from .schema import NumericColumn

        col = schema[self.column]
        per_day = _per_day(col.unit)
        missing = "allowed" if col.missing == "allowed" else None
        day, tod = self.names
        return [NumericColumn(day, float(col.lower // per_day), float(col.upper // per_day), integer=True,
                              missing=missing),
                NumericColumn(tod, 0.0, float(per_day - 1), integer=True, missing=missing)]

    def prepare(self, df: pd.DataFrame, schema, policy: str, row_offset: int) -> int:
        """The part columns of the input records (the date clipped to its bounds first); returns how many were
        clipped (refused in one line with ``policy="error"``, as the encoder refuses)."""
        col = schema[self.column]
        units = col.to_units(df[self.column], row_offset)
        out = (units < col.lower) | (units > col.upper)
        if out.any() and policy == "error":
            from .encoding import out_of_bounds_error

            raise out_of_bounds_error(col, out, row_offset)
        units = np.clip(units, col.lower, col.upper)  # NaN stays NaN
        day = np.floor_divide(units, _per_day(col.unit))
        df[self.names[0]] = day
        df[self.names[1]] = units - day * _per_day(col.unit)
        return int(out.sum())

    def complete(self, out: pd.DataFrame, schema) -> None:
        """The date-time column of released records from their parts (which are removed): a missing day makes it
        missing; a time of day released as missing beside a present day takes the next present record's
        (post-processing; the released records are in random order). Clipped to the bounds (the first and last
        days hold times outside them)."""
        from .dates import format_units

        col = schema[self.column]
        day = pd.to_numeric(out.pop(self.names[0]), errors="coerce").to_numpy(dtype=float)
        tod = pd.to_numeric(out.pop(self.names[1]), errors="coerce").to_numpy(dtype=float)
        present = ~np.isnan(day)
        gap = present & np.isnan(tod)
        pool = tod[present & ~np.isnan(tod)]
        if gap.any():
            tod[gap] = pool[np.arange(int(gap.sum())) % pool.size] if pool.size else 0.0
        units = np.where(present, np.clip(day * _per_day(col.unit) + tod, col.lower, col.upper), np.nan)
        out[self.column] = format_units(units, col.unit, col.timezone)

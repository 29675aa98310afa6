"""Date and date-time columns: public bounds given as ISO dates, values counted in whole units.

A :class:`DatetimeColumn` is a :class:`~privrelease.schema.NumericColumn` whose values are whole
units of its ``unit`` (day, hour, minute or second) since 1970-01-01 (UTC): every mechanism
treats it as an integer column on its public bounds. The encoder reads ISO strings, Python
dates and datetime columns (a value is floored to its unit: at day precision 2020-01-01T18:00
is 2020-01-01); the decoder writes ISO dates, or date-times at the unit's precision.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputDataError, SchemaError, shorten, shorten_list
from .schema import NumericColumn

#: The step of a datetime column -> numpy's unit code.
UNITS = {"day": "D", "hour": "h", "minute": "m", "second": "s"}
_SHOWN = {"day": "D", "hour": "m", "minute": "m", "second": "s"}  # an hour is written 2020-01-01T13:00
_NS = {"day": 86_400 * 10**9, "hour": 3_600 * 10**9, "minute": 60 * 10**9, "second": 10**9}
#: Units of each step in one day (1 for a day): a date-time's day and time of day, a time column's bounds.
UNITS_PER_DAY = {unit: _NS["day"] // ns for unit, ns in _NS.items()}


@dataclass(frozen=True)
class DatetimeColumn(NumericColumn):
    """A date (or date-time) column with public bounds, released at the precision of ``unit``.

    ``lower`` and ``upper`` are ISO strings, dates or datetimes (or numbers, taken as units since
    1970-01-01); they are stored as whole units since 1970-01-01 (``lower`` rounded up, ``upper``
    down to the unit). An ``upper`` given as a date holds its whole day: its last unit (with a
    ``step`` of a second, 2017-12-31 is 2017-12-31T23:59:59). ``missing="allowed"`` lets the column hold missing values. ``timezone="UTC"``
    says the values are written with their UTC offset: date-times are released with a ``Z``.

    >>> c = DatetimeColumn("when", "2020-01-01", "2020-12-31")
    >>> c.lower, c.upper, c.resolution, c.to_dict()["upper"]
    (18262.0, 18627.0, 1.0, '2020-12-31')
    """

    unit: str = "day"
    timezone: str | None = None

    def __post_init__(self):
        if self.timezone not in (None, "UTC"):
            raise SchemaError(f"column '{self.name}': the timezone of a datetime column can only be UTC (values are "
                              f"read and released in UTC), got {shorten(self.timezone)}")
        if self.unit not in UNITS:
            raise SchemaError(f"column '{self.name}': the step of a datetime column must be one of "
                              f"{', '.join(UNITS)}, got {shorten(self.unit)}")
        if self.step is not None:
            raise SchemaError(f"column '{self.name}': give a datetime column's precision as its step "
                              f"({', '.join(UNITS)})")
        object.__setattr__(self, "lower", _bound_units(self, "lower", math.ceil))
        object.__setattr__(self, "upper", _bound_units(self, "upper", math.floor))
        object.__setattr__(self, "integer", True)
        super().__post_init__()

    def _spec(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": "datetime", "lower": self.iso(self.lower), "upper": self.iso(self.upper),
                             "step": self.unit}
        if self.timezone is not None:
            d["timezone"] = self.timezone
        return d

    def to_dict(self) -> dict:
        d = self._spec()
        if self.missing is not None:
            d["missing"] = self.missing
        if self.na_values:
            d["na_values"] = list(self.na_values)
        if self.role not in (None, "feature"):
            d["role"] = self.role
        return d

    def iso(self, units: float) -> str:
        """The ISO text of a whole number of units since 1970-01-01."""
        return str(format_units(np.array([units], dtype=np.float64), self.unit)[0])

    def format_values(self, v: np.ndarray) -> np.ndarray:
        """The released texts of whole units (None where NaN), in the column's convention."""
        return format_units(v, self.unit, self.timezone)

    def to_units(self, s: pd.Series, row_offset: int = 0) -> np.ndarray:
        """Whole units since 1970-01-01 of a column of dates (NaN where missing); unreadable text is refused.

        Each value is read on its own, so that no record changes how another is read: a value with
        a UTC offset (``2020-01-05T02:00+05:00``, ``...Z``) is converted to UTC, a value without one
        is taken as UTC.
        """
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s) and not s.isna().all():
            raise InputDataError(f"column '{self.name}' is a datetime column but holds numbers; give its values "
                                 f"as ISO dates (2020-01-31) or date-times")
        if pd.api.types.is_datetime64_any_dtype(s):
            t = s.dt.tz_convert("UTC") if getattr(s.dt, "tz", None) is not None else s
        else:
            text = s.map(lambda v: v.strip() if isinstance(v, str) else v)
            t = parse_iso(text)
            bad = t.isna().to_numpy() & text.notna().to_numpy() & (text.astype(str) != "").to_numpy()
            if bad.any():
                rows = (np.flatnonzero(bad)[:5] + row_offset).tolist()
                raise InputDataError(
                    f"column '{self.name}' is a datetime column but has {int(bad.sum())} value(s) that are not "
                    f"ISO dates (first rows {rows}), e.g. {shorten_list(sorted(map(str, s[bad].unique()))[:5])}")
        if getattr(t.dt, "tz", None) is not None:
            t = t.dt.tz_localize(None)
        ns = t.astype("datetime64[ns]")
        out = np.full(len(ns), np.nan)
        ok = ns.notna().to_numpy()
        out[ok] = np.floor_divide(ns.to_numpy()[ok].view(np.int64), _NS[self.unit])
        return out


_TIME_UNITS = ("hour", "minute", "second")
_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d*)?)?")


@dataclass(frozen=True)
class TimeColumn(DatetimeColumn):
    """A time of day (``13:45``, ``07:05:30``; no date), released at the precision of ``unit`` (hour, minute or
    second) as ``HH:MM`` (``HH:MM:SS`` at the second): whole units since midnight, on the public bounds of one day
    (00:00 to the day's last unit), so every mechanism treats it as an integer column. ``missing="allowed"`` lets it
    hold missing values.

    >>> c = TimeColumn("at", 0, 1, unit="minute")
    >>> c.lower, c.upper, c.to_units(pd.Series(["13:45", "7:05:59", None])).tolist(), c.iso(825)
    (0.0, 1439.0, [825.0, 425.0, nan], '13:45')
    """

    unit: str = "minute"

    def __post_init__(self):
        if self.unit not in _TIME_UNITS:
            raise SchemaError(f"column '{self.name}': the step of a time column must be one of "
                              f"{', '.join(_TIME_UNITS)}, got {shorten(self.unit)}")
        if self.step is not None or self.timezone is not None:
            raise SchemaError(f"column '{self.name}': a time column takes its precision as its step "
                              f"({', '.join(_TIME_UNITS)}) and no timezone")
        object.__setattr__(self, "lower", 0.0)
        object.__setattr__(self, "upper", float(UNITS_PER_DAY[self.unit] - 1))
        object.__setattr__(self, "integer", True)
        NumericColumn.__post_init__(self)

    def _spec(self) -> dict[str, Any]:
        return {"type": "time", "step": self.unit}

    def iso(self, units: float) -> str:
        return str(self.format_values(np.array([units], dtype=np.float64))[0])

    def format_values(self, v: np.ndarray) -> np.ndarray:
        out = np.full(len(v), None, dtype=object)
        ok = ~np.isnan(v)
        sec = np.rint(v[ok]).astype(np.int64) * (_NS[self.unit] // _NS["second"])
        h, m, s = sec // 3600, sec // 60 % 60, sec % 60
        out[ok] = [f"{a:02d}:{b:02d}:{c:02d}" if self.unit == "second" else f"{a:02d}:{b:02d}"
                   for a, b, c in zip(h.tolist(), m.tolist(), s.tolist())]
        return out

    def to_units(self, s: pd.Series, row_offset: int = 0, strict: bool = True) -> np.ndarray:
        """Whole units since midnight of a column of times of day (``H:MM``, ``HH:MM:SS``, Python times; NaN where
        missing), each value read on its own; anything else is refused (NaN when not ``strict``)."""
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s) and not s.isna().all():
            raise InputDataError(f"column '{self.name}' is a time column but holds numbers; give its values as "
                                 f"times of day (13:45 or 13:45:30)")
        codes, uniq = pd.factorize(s, use_na_sentinel=True)  # each distinct value read once, on its own
        secs = np.array([_seconds_of_day(v) for v in uniq], dtype=np.float64)
        per = _NS[self.unit] // _NS["second"]
        got = np.where(codes >= 0, secs[np.maximum(codes, 0)], np.nan) if len(uniq) else np.full(len(s), np.nan)
        bad = (codes >= 0) & np.isinf(got)
        out = np.where(bad, np.nan, np.floor_divide(got, per))
        if bad.any() and strict:
            rows = (np.flatnonzero(bad)[:5] + row_offset).tolist()
            raise InputDataError(f"column '{self.name}' is a time column but has {int(bad.sum())} value(s) that are "
                                 f"not times of day (first rows {rows}), e.g. "
                                 f"{shorten_list(sorted(map(str, s[bad].unique()))[:5])}")
        return out


def _seconds_of_day(v) -> float:
    """Seconds since midnight of one time of day (text ``H:MM``, ``HH:MM:SS`` or a Python time); NaN for an empty
    text, inf for anything else."""
    if isinstance(v, _dt.time):
        return float(v.hour * 3600 + v.minute * 60 + v.second)
    text = str(v).strip()
    if not text:
        return math.nan
    m = _TIME.fullmatch(text)
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59 or int(m.group(3) or 0) > 59:
        return math.inf
    return float(int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0))


def time_from_dict(name: str, spec) -> TimeColumn:
    """A :class:`TimeColumn` from its YAML form ``{type: time, step, missing, role}``."""
    return TimeColumn(name=name, lower=0.0, upper=1.0, role=spec.get("role"), missing=spec.get("missing"),
                      na_values=spec.get("na_values", ()),
                      unit=spec.get("step", "minute"))


def parse_iso(values: pd.Series) -> pd.Series:
    """ISO dates and date-times as UTC instants (NaT where not one), each value read on its own.

    A value with a UTC offset or ``Z`` is converted to UTC, one without is taken as UTC. pandas
    reads a naive value that follows an offset-bearing one in the same call with that offset, so
    the two kinds (told apart by each value's own text: a zone after the time) are parsed apart.

    >>> parse_iso(pd.Series(["2020-01-05T02:00+05:00", "2020-01-05T02:00", "2020-01-05", "x"])).tolist()
    [Timestamp('2020-01-04 21:00:00+0000', tz='UTC'), Timestamp('2020-01-05 02:00:00+0000', tz='UTC'), \
Timestamp('2020-01-05 00:00:00+0000', tz='UTC'), NaT]
    """
    zoned = np.array([_zoned(v) for v in values], dtype=bool)
    out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns, UTC]")
    for part in (zoned, ~zoned):
        if part.any():
            t = pd.to_datetime(values[part], errors="coerce", format="ISO8601", utc=True)
            out[part] = t.dt.as_unit("ns") if hasattr(t.dt, "as_unit") else t
    return out


_ZONE = re.compile(r"[Tt ]\S*[zZ+-]")  # a zone after the time: 2020-01-05T02:00Z, ...T02:00+05:00, ... 02:00 -0500


def _zoned(v) -> bool:
    """Whether one value carries its own time zone (text with a zone after its time, or an aware datetime)."""
    if isinstance(v, str):
        return _ZONE.search(v) is not None
    return getattr(v, "tzinfo", None) is not None


def format_units(v: np.ndarray, unit: str, timezone: str | None = None) -> np.ndarray:
    """ISO texts of whole units since 1970-01-01 (None where ``v`` is NaN); with ``timezone="UTC"``,
    date-times end in ``Z`` (dates are written as dates)."""
    out = np.full(len(v), None, dtype=object)
    ok = ~np.isnan(v)
    t = np.rint(v[ok]).astype(np.int64).astype(f"datetime64[{UNITS[unit]}]")
    out[ok] = np.datetime_as_string(t, unit=_SHOWN[unit], timezone="UTC" if timezone and unit != "day" else "naive")
    return out


def _bound_units(c: DatetimeColumn, bound: str, rounding) -> float:
    """A datetime column's bound as whole units since 1970-01-01."""
    v = getattr(c, bound)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v) if not math.isfinite(v) else float(rounding(round(float(v), 9)))
    try:
        t = pd.Timestamp(v)
    except (TypeError, ValueError, OverflowError):
        t = None
    if t is None or t is pd.NaT:
        raise SchemaError(f"column '{c.name}': '{bound}' of a datetime column must be an ISO date such as "
                          f"2020-01-31 (or a date-time), got {shorten(v)}")
    if t.tzinfo is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    if bound == "upper" and _date_only(v):  # the whole day: its last unit, not its midnight
        t += pd.Timedelta(days=1) - pd.Timedelta(_NS[c.unit], unit="ns")
    ns = t.as_unit("ns").value
    return float(rounding(ns / _NS[c.unit]) if ns % _NS[c.unit] else ns // _NS[c.unit])


def _date_only(v) -> bool:
    """Whether a bound is a date without a time of day (``2017-12-31``, or a YAML date)."""
    if isinstance(v, str):
        return re.fullmatch(r"\d{4}-\d{2}-\d{2}", v.strip()) is not None
    return isinstance(v, _dt.date) and not isinstance(v, _dt.datetime)


def datetime_from_dict(name: str, spec) -> DatetimeColumn:
    """A :class:`DatetimeColumn` from its YAML form ``{type: datetime, lower, upper, step, timezone, missing, role}``."""
    for k in ("lower", "upper"):
        if k not in spec:
            raise SchemaError(f"column '{name}': a datetime column needs '{k}' (a public bound, an ISO date)")
    return DatetimeColumn(name=name, lower=spec["lower"], upper=spec["upper"], role=spec.get("role"),
                          missing=spec.get("missing"), unit=spec.get("step", "day"), timezone=spec.get("timezone"),
                          na_values=spec.get("na_values", ()))


def dates_as_numbers(df: pd.DataFrame, schema) -> pd.DataFrame:
    """``df`` with each datetime column of ``schema`` as whole units since 1970-01-01 (NaN where
    missing, a declared spelling of a missing value included), so that code comparing numeric columns (the
    evaluation) sees dates as numbers."""
    from .encoding import read_missing

    cols = [c for c in schema.columns if isinstance(c, DatetimeColumn) and c.name in df.columns]
    return df.assign(**{c.name: c.to_units(read_missing(df[c.name], schema, c)) for c in cols}) if cols else df

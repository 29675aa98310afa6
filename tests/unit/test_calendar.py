"""A date-time column's calendar parts: the day and the time of day as columns of their own, put back together
exactly, each record read on its own, and the default release keeping a table's daily cycle."""

import numpy as np
import pandas as pd
import pytest

from privrelease.errors import InputDataError
from privrelease.mechanisms import get_mechanism
from privrelease.release import release
from privrelease.release.construct import release_encoders
from privrelease.schema import Schema
from privrelease.schema.calendar import CalendarParts, calendar_parts
from privrelease.schema.constraints import ConstraintSet


def _schema(step="minute", lower="2022-01-01", upper="2023-12-31", missing=None, extra=None):
    col = {"type": "datetime", "lower": lower, "upper": upper, "step": step}
    if missing:
        col["missing"] = missing
    return Schema.from_dict({"columns": {"t": col, "v": {"type": "numeric", "lower": 0, "upper": 1}, **(extra or {})}})


def _roundtrip(schema, values):
    cs = ConstraintSet(schema, calendar_parts(schema))
    df = pd.DataFrame({"t": values, "v": 0.5})
    prepared, counts = cs.prepare(df)
    mech = cs.mechanism_schema()
    released = prepared[[c.name for c in mech.columns]]  # what a perfect mechanism would release
    return cs, prepared, counts, cs.complete(released)


@pytest.mark.parametrize("step,values", [
    ("minute", ["2022-01-01T00:00", "2022-03-15T13:47", "2023-12-31T23:59", "2026-11-28T00:00"]),
    ("second", ["2022-01-01T00:00:00", "2022-07-04T08:09:10", "2023-12-31T23:59:59"]),
    ("hour", ["2022-01-03T05:00", "2023-06-30T23:00"]),
])
def test_parts_put_back_together_give_the_dates(step, values):
    schema = _schema(step, upper="2026-12-31")
    _, _, counts, out = _roundtrip(schema, values)
    assert counts == {}
    assert list(out.columns) == ["t", "v"]
    assert schema["t"].to_units(out["t"]).tolist() == schema["t"].to_units(pd.Series(values)).tolist()


def test_the_day_and_the_time_of_day():
    schema = _schema("minute", upper="2026-12-31")
    _, prepared, _, _ = _roundtrip(schema, ["2026-11-28T13:05", "2022-01-03T00:30"])
    assert prepared["t (time of day)"].tolist() == [13 * 60 + 5, 30]
    assert prepared["t (day)"].tolist() == [(pd.Timestamp(d) - pd.Timestamp("1970-01-01")).days
                                            for d in ("2026-11-28", "2022-01-03")]


def test_which_columns_are_split():
    assert calendar_parts(_schema("day")) == ()  # a date: its day is the whole value
    assert calendar_parts(_schema("hour", upper="2022-01-01")) == ()  # one day: the time of day is the value
    assert calendar_parts(_schema("hour", upper="2022-01-02")) == (CalendarParts("t"),)
    label = Schema.from_dict({"columns": {"t": {"type": "datetime", "lower": "2022-01-01", "upper": "2023-12-31",
                                                "step": "second"},
                                          "y": {"type": "categorical", "categories": ["a", "b"], "role": "label"}}})
    assert calendar_parts(label) == (CalendarParts("t"),)
    mech = ConstraintSet(_schema("minute"), calendar_parts(_schema("minute"))).mechanism_schema()
    assert [c.name for c in mech.columns] == ["t (day)", "t (time of day)", "v"]
    assert mech["t (time of day)"].upper == 1439 and mech["t (day)"].upper - mech["t (day)"].lower == 729


def test_missing_dates_stay_missing_and_a_missing_part_is_filled():
    schema = _schema("minute", missing="allowed")
    cs, prepared, _, out = _roundtrip(schema, ["2022-05-05T10:00", None, "2023-01-01T00:00"])
    assert out["t"].isna().tolist() == [False, True, False]
    released = prepared[[c.name for c in cs.mechanism_schema().columns]].copy()
    released.loc[0, "t (time of day)"] = np.nan  # a part released missing beside a present week
    filled = cs.complete(released)
    assert filled["t"].notna().tolist() == [True, False, True]


def test_a_date_outside_its_bounds_is_clipped_and_counted_under_its_name_or_refused():
    schema = _schema("minute")
    cs, _, counts, out = _roundtrip(schema, ["2021-06-01T10:00", "2022-02-02T02:02"])
    assert counts == {"t": 1}
    assert out["t"].tolist()[0] == "2022-01-01T00:00"
    with pytest.raises(InputDataError, match="column 't' has 1 value"):
        cs.prepare(pd.DataFrame({"t": ["2021-06-01T10:00"], "v": [0.1]}), on_violation="error")


def test_a_released_time_outside_the_bounds_is_clipped_to_them():
    schema = _schema("minute", lower="2022-01-05T12:00", upper="2022-03-31T06:00")
    cs = ConstraintSet(schema, calendar_parts(schema))
    day = cs.prepare(pd.DataFrame({"t": ["2022-01-05T13:00"], "v": [0.1]}))[0]["t (day)"].iloc[0]
    out = cs.complete(pd.DataFrame({"t (day)": [day, day], "t (time of day)": [60, 800], "v": [0.1, 0.2]}))
    assert out["t"].tolist() == ["2022-01-05T12:00", "2022-01-05T13:20"]


def test_each_record_is_read_on_its_own():
    schema = _schema("minute")
    cs = ConstraintSet(schema, calendar_parts(schema))
    a = pd.DataFrame({"t": ["2022-01-05T10:00", "2022-06-05T23:59", "2023-03-01T00:01"], "v": [0.1, 0.2, 0.3]})
    b = a.copy()
    b.loc[1, "t"] = "2023-07-01T05:00+05:00"
    pa, pb = cs.prepare(a)[0], cs.prepare(b)[0]
    assert pa.drop(index=1).equals(pb.drop(index=1))


def test_the_default_declares_the_parts_and_other_mechanisms_keep_the_column():
    schema = _schema("minute")
    enc, _ = release_encoders(schema, get_mechanism("gauss-copula"), {})
    assert enc.constraints.split_dates == ("t",)
    enc, _ = release_encoders(schema, get_mechanism("pca-gauss"), {})
    assert not enc.constraints


def _stops(n, seed):
    g = np.random.default_rng(seed)
    day = g.integers(0, 728, n)
    weekday = (day + 5) % 7  # 2022-01-01 was a Saturday
    keep = g.random(n) < np.where(weekday == 6, 0.3, 1.0)
    day = day[keep]
    night = g.random(day.size) < 0.4
    hour = np.where(night, g.choice([22, 23, 0, 1], day.size), g.integers(8, 18, day.size))
    t = np.datetime64("2022-01-01T00:00") + (day * 1440 + hour * 60 + g.integers(0, 60, day.size)).astype(
        "timedelta64[m]")
    reason = np.where(night, g.choice(["dui", "speed"], day.size, p=[0.7, 0.3]), g.choice(["dui", "speed"], day.size,
                                                                                          p=[0.05, 0.95]))
    return pd.DataFrame({"t": pd.Series(t).dt.strftime("%Y-%m-%dT%H:%M"), "reason": reason})


def test_the_default_release_keeps_the_hour_of_the_day():
    schema = Schema.from_dict({"columns": {
        "t": {"type": "datetime", "lower": "2022-01-01", "upper": "2023-12-31", "step": "minute"},
        "reason": {"type": "categorical", "categories": ["dui", "speed"], "role": "label"}}})
    real = _stops(12_000, 0)
    out = release(real, schema, "gauss-copula", 1.0, delta=1e-6, rng=1)
    assert any("calendar parts" in note for note in out.certificate.notes)
    r, s = pd.to_datetime(real["t"]), pd.to_datetime(out.data["t"])

    def tvd(a, b, k):
        return 0.5 * np.abs(np.bincount(a, minlength=k) / a.size - np.bincount(b, minlength=k) / b.size).sum()

    assert tvd(r.dt.hour.to_numpy(), s.dt.hour.to_numpy(), 24) < 0.1  # 0.054; as one number 0.41
    night = s.dt.hour.isin([22, 23, 0, 1])
    assert (out.data["reason"][night] == "dui").mean() > 0.5  # the label follows the hour: 0.71 (real 0.7; 0.31)


def test_the_evaluation_shows_the_hours_and_weekdays():
    from privrelease.evaluation.fidelity import evaluate

    schema = Schema.from_dict({"columns": {
        "t": {"type": "datetime", "lower": "2022-01-01", "upper": "2023-12-31", "step": "minute"},
        "reason": {"type": "categorical", "categories": ["dui", "speed"], "role": "label"}}})
    real = _stops(3000, 0)
    flat = real.assign(t=pd.to_datetime(real["t"]).dt.strftime("%Y-%m-%dT12:00"))  # every stop at noon
    ev = evaluate(real, flat, schema, sdmetrics=False)
    assert set(ev.calendar["t"]) == {"weekday", "hour_of_day"} and ev.calendar["t"]["weekday"] == 0.0
    assert ev.calendar["t"]["hour_of_day"] > 0.9 and ev.summary()["hour_of_day_tvd_max"] > 0.9
    assert "t: TVD of weekday and hour of day" in ev.to_table()

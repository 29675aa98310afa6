"""A time-of-day column (``type: time``): read from ``HH:MM`` text on its own, released as ``HH:MM`` at its step,
drafted when stated, and evaluated by its hours of the day."""

import numpy as np
import pandas as pd
import pytest

from privrelease.dp.draft import dp_draft
from privrelease.errors import InputDataError, SchemaError
from privrelease.evaluation.columns import calendar_tvd
from privrelease.release import release
from privrelease.schema import Schema
from privrelease.schema.values import StatedFacts


def _schema(step="minute", missing=None):
    t = {"type": "time", "step": step, **({"missing": missing} if missing else {})}
    return Schema.from_dict({"columns": {"t": t, "y": {"type": "categorical", "categories": ["a", "b"],
                                                      "role": "label"}}})


def _table(n=8000, seed=0):
    g = np.random.default_rng(seed)
    night = g.random(n) < 0.4
    hour = np.where(night, g.choice([22, 23, 0, 1], n), g.integers(8, 18, n))
    return pd.DataFrame({"t": [f"{h:02d}:{m:02d}" for h, m in zip(hour, g.integers(0, 60, n))],
                         "y": np.where(g.random(n) < np.where(night, 0.8, 0.1), "a", "b")})


def test_a_time_column_is_a_days_units_and_round_trips_through_yaml():
    s = _schema("second", "allowed")
    assert (s["t"].lower, s["t"].upper) == (0.0, 86_399.0)
    import yaml

    assert Schema.from_dict(yaml.safe_load(s.to_yaml()))["t"] == s["t"]
    assert s.to_dict()["columns"]["t"] == {"type": "time", "step": "second", "missing": "allowed"}
    assert s["t"].to_units(pd.Series(["00:00:00", "23:59:59", "7:05", None])).tolist()[:3] == [0, 86_399, 25_500]
    with pytest.raises(SchemaError, match="one of hour, minute, second"):
        _schema("day")
    with pytest.raises(SchemaError, match="unknown keys"):
        Schema.from_dict({"columns": {"t": {"type": "time", "lower": "08:00"}}})


@pytest.mark.parametrize("bad", ["25:00", "12:60", "noon", "2020-01-01"])
def test_a_value_that_is_not_a_time_of_day_is_refused_in_one_line(bad):
    with pytest.raises(InputDataError, match=r"column 't' is a time column but has 1 value\(s\) that are not times"):
        _schema()["t"].to_units(pd.Series(["08:00", bad]))


def test_the_default_release_writes_times_and_keeps_the_hours():
    real = _table()
    out = release(real, _schema(), "gauss-copula", 1.0, delta=1e-6, rng=0).data
    assert out["t"].str.fullmatch(r"\d\d:\d\d").all()
    tvd = calendar_tvd(real, out, _schema())["t"]
    assert set(tvd) == {"hour_of_day"} and tvd["hour_of_day"] < 0.06, tvd
    night = pd.to_datetime(out["t"], format="%H:%M").dt.hour.isin([22, 23, 0, 1])
    assert (out["y"][night] == "a").mean() > 0.6  # the label follows the hour (real 0.8, 0.1 by day)


def test_a_stated_time_column_is_drafted_with_its_step():
    real = _table(3000)
    d = dp_draft(real, 1.0, 1e-6, rng=0, facts=StatedFacts.of("y", time=["t"], steps={"t": "second"}))
    assert d.schema["columns"]["t"] == {"type": "time", "step": "second"}
    d = dp_draft(real, 1.0, 1e-6, rng=0, facts=StatedFacts.of("y", time=["t"]))
    assert d.schema["columns"]["t"]["step"] == "minute"
    assert StatedFacts.of(time=["t"], datetime=["t"]).conflicts() == ["t"]


def test_the_evaluation_reads_times_as_units_since_midnight():
    from privrelease.evaluation.cells import numeric_values

    col = _schema()["t"]
    assert numeric_values(pd.Series(["13:45", "bad", None]), col).tolist()[:1] == [825.0]
    assert np.isnan(numeric_values(pd.Series(["13:45", "bad", None]), col)[1:]).all()

"""Dates and date-times: every value read on its own (offsets, ``Z``), written back in the input's
convention, and date-only upper bounds that hold their whole day."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from privrelease.engine.record_map import RecordMap
from privrelease.io import iter_table_chunks, read_table
from privrelease.schema import Encoder, Schema
from privrelease.schema.dates import parse_iso

HOURS = Schema.from_dict({"columns": {
    "when": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31", "step": "hour"},
    "v": {"type": "numeric", "lower": 0, "upper": 1}}})
OFFSET = "2020-01-05T02:00+05:00"  # 2020-01-04T21:00 in UTC


def _base(n=12, dates=True) -> pd.DataFrame:
    days = [f"2020-01-{d:02d}" for d in range(1, n + 1)]
    when = [f"{d}T{(3 * i) % 24:02d}:00" if i % 3 or not dates else d for i, d in enumerate(days)]
    return pd.DataFrame({"when": when, "v": np.linspace(0, 1, n)})


def _neighbour(i: int, dates=True) -> tuple[pd.DataFrame, pd.DataFrame]:
    a = _base(dates=dates)
    b = a.copy()
    b.loc[i, "when"] = OFFSET
    return a, b


def _others_equal(Xa: np.ndarray, Xb: np.ndarray, i: int) -> bool:
    keep = np.arange(len(Xa)) != i
    return bool(np.array_equal(Xa[keep], Xb[keep]))


@pytest.mark.parametrize("dates", [True, False], ids=["dates-and-times", "times"])
@pytest.mark.parametrize("i", [0, 5, 11])
def test_one_records_utc_offset_moves_no_other_record_in_memory(i, dates):
    """Issue 35, item 4: an offset on the first row moved every other record's value (a later one crashed)."""
    enc = Encoder(HOURS)
    a, b = _neighbour(i, dates)
    Xa, Xb = enc.encode(a).X, enc.encode(b).X
    assert _others_equal(Xa, Xb, i)
    assert enc.decode(Xb[[i]])["when"].tolist() == ["2020-01-04T21:00"]  # the offset applied to that value only


@pytest.mark.parametrize("dates", [True, False], ids=["dates-and-times", "times"])
@pytest.mark.parametrize("i", [0, 4, 6])
def test_one_records_utc_offset_moves_no_other_record_in_streamed_chunks(tmp_path, i, dates):
    """The same on the streamed path, where row 4 opens a chunk (chunks of 4 rows)."""
    enc = Encoder(HOURS)
    a, b = _neighbour(i, dates)
    encoded, whole = [], []
    for name, df in (("a", a), ("b", b)):
        path = tmp_path / f"{name}.csv"
        df.to_csv(path, index=False)
        chunks, offset = [], 0
        for chunk in iter_table_chunks(path, HOURS, chunk_rows=4):
            chunks.append(RecordMap(enc).encode(chunk, offset).X)
            offset += len(chunk)
        encoded.append(np.vstack(chunks))
        whole.append(enc.encode(read_table(path, HOURS)).X)
    assert _others_equal(*encoded, i)
    assert np.array_equal(encoded[0], whole[0]) and np.array_equal(encoded[1], whole[1])  # as in memory


FORMS = ["2020-01-05", "2020-01-05T02:00", "2020-01-05T02:00Z", "2020-01-05T02:00z", "2020-01-05T02:00+05:00",
         "2020-01-05 02:00:30 -0330", "2020-01-05T02:00:00.25+01", "20200105T020000+0200", "not a date", "",
         pd.Timestamp("2020-01-05T02:00", tz="Asia/Tokyo"), dt.datetime(2020, 1, 5, 2), dt.date(2020, 1, 5)]


def test_every_value_is_read_as_it_is_read_alone():
    """pandas reads a naive value after an offset-bearing one with that offset: each value must be read alone."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        values = pd.Series([FORMS[k] for k in rng.integers(0, len(FORMS), 6)], dtype=object)
        together = parse_iso(values).tolist()
        alone = [parse_iso(pd.Series([v], dtype=object))[0] for v in values]
        assert [None if pd.isna(t) else t for t in together] == [None if pd.isna(t) else t for t in alone], values


def test_the_evaluation_reads_each_date_alone_too():
    from privrelease.evaluation.cells import numeric_values

    col = HOURS["when"]
    together = numeric_values(pd.Series([OFFSET, "2020-01-02T03:00"]), col)
    assert together.tolist() == [numeric_values(pd.Series([v]), col)[0] for v in (OFFSET, "2020-01-02T03:00")]


# ---- a date-only upper bound holds its whole day (issue 35, item 12) ----------------------------

@pytest.mark.parametrize("step, first, last", [("second", "2017-12-31T18:30:59", "2017-12-31T23:59:59"),
                                               ("minute", "2017-12-31T18:30", "2017-12-31T23:59"),
                                               ("hour", "2017-12-31T18:00", "2017-12-31T23:00"),
                                               ("day", "2017-12-31", "2017-12-31")])
@pytest.mark.parametrize("upper", ["2017-12-31", dt.date(2017, 12, 31)], ids=["text", "yaml-date"])
def test_a_date_upper_bound_holds_the_whole_day(step, first, last, upper):
    """An upper bound 2017-12-31 meant its midnight: every time of the last day was clipped."""
    s = Schema.from_dict({"columns": {"t": {"type": "datetime", "lower": "2017-01-01", "upper": upper, "step": step}}})
    c = s["t"]
    assert c.iso(c.upper) == last and Schema.from_dict(s.to_dict()) == s
    enc = Encoder(s)
    e = enc.encode(pd.DataFrame({"t": ["2017-12-31T18:30:59", "2017-12-31T23:59:59Z", "2018-01-01T00:00"]}), warn=False)
    assert e.clip_counts.get("t", 0) == 1  # the next day only
    assert enc.decode(e.X)["t"].tolist() == [first, last, last]


def test_an_upper_bound_with_a_time_is_taken_as_written():
    c = Schema.from_dict({"columns": {"t": {"type": "datetime", "lower": "2017-01-01",
                                            "upper": "2017-12-31T00:00", "step": "hour"}}})["t"]
    assert c.iso(c.upper) == "2017-12-31T00:00"

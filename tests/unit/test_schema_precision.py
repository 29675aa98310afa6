"""A column's public precision (step), missing numeric values, and dates: schema, encoder, decoder, writer."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest
import yaml

from privrelease import Synthesizer, release
from privrelease.errors import InputDataError, SchemaError
from privrelease.mechanisms.base import Capabilities
from privrelease.release import release_file
from privrelease.release.construct import check_missing_numeric
from privrelease.schema import DatetimeColumn, Encoder, NumericColumn, Schema

COLUMNS = {
    "x": {"type": "numeric", "lower": 0.05, "upper": 9.97, "step": 0.1},
    "n": {"type": "numeric", "lower": 0.5, "upper": 50.5, "integer": True},
    "c": {"type": "categorical", "categories": ["a", "b"]},
}


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": np.round(rng.uniform(0.1, 9.9, n), 1), "n": rng.integers(1, 51, n),
                         "c": rng.choice(["a", "b"], n)})


def _on_grid(v, step, lower, upper):
    k = np.asarray(v, dtype=float) / step
    return bool(np.all(np.abs(k - np.rint(k)) < 1e-9) and np.all((v >= lower) & (v <= upper)))


# ---- step -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, msg", [
    ({"lower": 0.1, "upper": 0.2, "step": 0.3}, "no multiple of its step 0.3 lies within"),
    ({"lower": 0.2, "upper": 0.8, "integer": True}, "no multiple of its step 1 lies within"),
    ({"lower": 0, "upper": 1, "step": 0}, "'step' must be a number > 0"),
    ({"lower": 0, "upper": 1, "step": "fine"}, "'step' must be a number > 0"),
])
def test_step_without_a_grid_point_is_refused(spec, msg):
    with pytest.raises(SchemaError, match=msg):
        Schema.from_dict({"columns": {"a": {"type": "numeric", **spec}}})


def test_decode_snaps_to_absolute_multiples_inside_the_bounds():
    enc = Encoder(Schema.from_dict({"columns": COLUMNS}))
    X = np.random.default_rng(1).uniform(-0.2, 1.2, (500, enc.width))
    out = enc.decode(X)
    assert _on_grid(out["x"], 0.1, 0.05, 9.97) and out["x"].min() == 0.1 and out["x"].max() == 9.9
    assert out["n"].dtype == np.int64 and out["n"].min() == 1 and out["n"].max() == 50
    assert {repr(v) for v in out["x"]} <= {repr(round(k / 10, 1)) for k in range(1, 100)}  # 0.3, not 0.30000000000000004


@pytest.mark.parametrize("mechanism", ["laplace", "gauss-copula", "gauss-pca", "jiang-lda"])
def test_every_mechanism_releases_values_on_the_grid(mechanism):
    schema = Schema.from_dict({"columns": {**COLUMNS, "c": {**COLUMNS["c"], "role": "label"}}})
    out = release(_table(), schema, mechanism, 1.0, rng=0).data
    assert _on_grid(out["x"], 0.1, 0.05, 9.97), out["x"].head()
    assert _on_grid(out["n"], 1.0, 0.5, 50.5) and out["n"].dtype == np.int64


def test_csv_written_at_the_declared_precision_and_parquet_snapped(tmp_path):
    schema = Schema.from_dict({"columns": COLUMNS})
    data = tmp_path / "in.csv"
    _table().to_csv(data, index=False)
    release_file(data, schema, tmp_path / "out.csv", "laplace", 1.0, rng=0)
    rows = (tmp_path / "out.csv").read_text().splitlines()[1:]
    xs, ns = [r.split(",")[0] for r in rows], [r.split(",")[1] for r in rows]
    assert all(len(x.split(".")[1]) == 1 for x in xs), xs[:5]
    assert all(n.isdigit() for n in ns), ns[:5]
    release_file(data, schema, tmp_path / "out.parquet", "laplace", 1.0, rng=0, engine="dask")  # decoded on workers
    back = pd.read_parquet(tmp_path / "out.parquet")
    assert back["x"].dtype == np.float64 and back["n"].dtype == np.int64
    assert [repr(v) for v in back["x"]] == xs


# ---- missing numeric values ---------------------------------------------------------------------

def _missing_schema():
    return Schema.from_dict({"columns": {**COLUMNS, "x": {**COLUMNS["x"], "missing": "allowed"},
                                         "n": {**COLUMNS["n"], "missing": "allowed"}}})


def test_missing_allowed_is_nan_in_its_coordinate_and_comes_back_missing():
    enc = Encoder(_missing_schema())
    df = _table(6)
    df.loc[[1, 4], "x"] = np.nan
    df.loc[2, "n"] = None
    X = enc.encode(df).X
    assert np.isnan(X[:, 0]).tolist() == [False, True, False, False, True, False]
    assert np.isnan(X[:, 1]).sum() == 1 and not np.isnan(X[:, 2:]).any()
    out = enc.decode(X)
    assert out["x"].isna().tolist() == df["x"].isna().tolist()
    assert str(out["n"].dtype) == "Int64" and out["n"].isna().tolist() == df["n"].isna().tolist()
    assert out["n"].dropna().tolist() == df["n"].dropna().astype(int).tolist()


def test_missing_numeric_without_missing_allowed_names_the_fix():
    df = _table(10)
    df.loc[3, "x"] = np.nan
    with pytest.raises(InputDataError, match=r"^column 'x' has 1 missing value\(s\) \(first rows \[3\]\); declare "
                                             r"'missing: allowed' for it in the schema"):
        Encoder(Schema.from_dict({"columns": COLUMNS})).encode(df)


MISSING_REFUSAL = ("column 'x' declares 'missing: allowed', which mechanism '{}' cannot release; ")


@pytest.mark.parametrize("mechanism", ["laplace", "gauss-pca"])
def test_a_mechanism_without_the_capability_refuses_before_any_charge(tmp_path, mechanism):
    from privrelease.accounting.ledger import Ledger

    df = _table()
    df.loc[0, "x"] = np.nan
    led = Ledger(tmp_path / "budget.sqlite")
    kwargs = dict(ledger=led, dataset_id="d", budget=5.0)
    with pytest.raises(SchemaError, match="^" + MISSING_REFUSAL.format(mechanism)):
        release(df, _missing_schema(), mechanism, 1.0, rng=0, **kwargs)
    with pytest.raises(SchemaError, match="^" + MISSING_REFUSAL.format(mechanism)):
        Synthesizer(_missing_schema(), mechanism, 1.0, rng=0, **kwargs).fit(df)
    data = tmp_path / "in.csv"
    df.to_csv(data, index=False)
    for engine in ("local", "dask"):
        with pytest.raises(SchemaError, match="^" + MISSING_REFUSAL.format(mechanism)):
            release_file(data, _missing_schema(), tmp_path / "out.csv", mechanism, 1.0, rng=0, engine=engine,
                         **kwargs)
    assert not (tmp_path / "out.csv").exists() and led.history("d") == []


def test_the_refusal_names_the_mechanisms_that_can():
    with pytest.raises(SchemaError, match=r"use one that can \(gauss-copula\)"):
        release(_table(), _missing_schema(), "laplace", 1.0, rng=0)


def test_the_default_releases_missing_values_at_their_rate_on_every_path(tmp_path):
    """gauss-copula declares missing_numeric: the missing share of x (30 %) comes back, on the grid elsewhere."""
    df = _table(2000)
    df.loc[df.sample(frac=0.3, random_state=1).index, "x"] = np.nan
    outs = [release(df, _missing_schema(), "gauss-copula", 4.0, rng=0).data,
            Synthesizer(_missing_schema(), "gauss-copula", 4.0, rng=0).fit(df).sample(2000)]
    data = tmp_path / "in.csv"
    df.to_csv(data, index=False)
    for engine in ("local", "dask"):
        out = tmp_path / f"out-{engine}.csv"
        release_file(data, _missing_schema(), out, "gauss-copula", 4.0, rng=0, engine=engine)
        outs.append(pd.read_csv(out))
    for got in outs:
        share = got["x"].isna().mean()
        assert abs(share - 0.3) < 0.05, share
        assert _on_grid(got["x"].dropna().to_numpy(), 0.1, 0.0, 10.0)


def test_the_declared_capability_lets_the_schema_through():
    class Able:
        name = "able"
        capabilities = Capabilities(missing_numeric=True)

    class Unable(Able):
        name = "unable"
        capabilities = Capabilities()

    check_missing_numeric(Able, _missing_schema())
    check_missing_numeric(Unable, Schema.from_dict({"columns": COLUMNS}))
    with pytest.raises(SchemaError, match="'unable' cannot release"):
        check_missing_numeric(Unable, _missing_schema())


def test_categorical_missing_level_is_enough_and_written_once():
    s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["a", "b"], "missing": "Unknown"}}})
    assert s["c"].categories == ("a", "b", "Unknown")
    assert s.to_dict()["columns"]["c"] == {"type": "categorical", "categories": ["a", "b", "Unknown"],
                                           "missing": "Unknown"}
    assert Schema.from_dict(yaml.safe_load(s.to_yaml())) == s
    out = Encoder(s).decode(Encoder(s).encode(pd.DataFrame({"c": ["a", None, "b"]})).X)
    assert out["c"].tolist() == ["a", "Unknown", "b"]


def test_na_values_match_their_usual_spellings():
    s = Schema.from_dict({"na_values": ["NA", -999], "columns": {
        "x": {"type": "numeric", "lower": 0, "upper": 10, "missing": "allowed"},
        "c": {"type": "categorical", "categories": ["a"], "missing": "none"}}})
    df = pd.DataFrame({"x": ["1", " na ", "N/A", "-999.0", "NA"], "c": ["a", "Na", "-999", " -999.0", "a"]})
    df.loc[2, "x"] = "2"
    X = Encoder(s).encode(df).X
    assert np.isnan(X[:, 0]).tolist() == [False, True, False, True, True]
    assert Encoder(s).decode(X)["c"].tolist() == ["a", "none", "none", "none", "a"]
    floats = pd.DataFrame({"x": [1.0, -999.0, 3.0], "c": ["a", "a", "a"]})
    assert np.isnan(Encoder(s).encode(floats).X[:, 0]).tolist() == [False, True, False]


def test_a_columns_own_missing_spellings_apply_in_that_column_only():
    """A survey writes a missing number of children as 98 or 99, while 98 hours a year is a value (PSID): the
    column's own ``na_values`` read its codes as missing and leave the same number in another column alone, in
    the release's encoder, in the rules' reader and in the evaluation; they round-trip through YAML."""
    s = Schema.from_dict({"na_values": ["?"], "columns": {
        "kids": {"type": "numeric", "lower": 0, "upper": 15, "integer": True, "missing": "allowed",
                 "na_values": [98, 99]},
        "hours": {"type": "numeric", "lower": 0, "upper": 6000, "integer": True, "missing": "allowed"},
        "when": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31", "missing": "allowed",
                 "na_values": "9999-99-99"},
        "c": {"type": "categorical", "categories": ["a", "b"], "missing": "allowed", "na_values": ["DK"]}}})
    assert s.missing_spellings(s["kids"]) == ("?", "98", "99") and s.missing_spellings(s["hours"]) == ("?",)
    assert Schema.from_dict(yaml.safe_load(s.to_yaml())) == s
    assert s.to_dict()["columns"]["when"]["na_values"] == ["9999-99-99"]
    df = pd.DataFrame({"kids": [1, 99, 98, 2], "hours": [98, 99, 5, "?"],
                       "when": ["2020-01-02", "9999-99-99", None, "2020-03-01"], "c": ["a", " dk ", "b", "DK"]})
    X = Encoder(s).encode(df).X
    out = Encoder(s).decode(X)
    assert np.isnan(X[:, 0]).tolist() == [False, True, True, False]
    assert out["hours"].tolist()[:3] == [98, 99, 5] and pd.isna(out["hours"].iloc[3])
    assert out["when"].isna().tolist() == [False, True, True, False]
    assert out["c"].isna().tolist() == [False, True, False, True]
    from privrelease.evaluation.cells import as_read
    from privrelease.evaluation.fidelity import evaluate
    from privrelease.schema.constraint_kinds import _values

    assert np.isnan(_values(s, "kids", df)).tolist() == [False, True, True, False]
    read = as_read(df, s)
    assert read["kids"].isna().tolist() == [False, True, True, False] and read["hours"].iloc[0] == 98
    two = s.select(["kids", "hours"])
    ev = evaluate(df[two.names], read[two.names], two, sdmetrics=False)
    assert ev.numeric["kids"]["missing"] == {"real": 0.5, "released": 0.5} and ev.tvd_1way["kids"] == 0.0


def test_a_missing_spelling_that_is_not_text_or_a_number_is_refused():
    with pytest.raises(SchemaError, match=r"column 'x': 'na_values' must be a list of strings or numbers"):
        Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 1, "na_values": {"a": 1}}}})


# ---- dates ---------------------------------------------------------------------------------------

DATES = """
columns:
  when: {type: datetime, lower: 2020-01-01, upper: "2024-12-31", missing: allowed}
  at: {type: datetime, lower: "2020-01-01T00:00", upper: 2020-01-03, step: hour}
"""


def test_datetime_yaml_bounds_units_and_round_trip():
    s = Schema.from_dict(yaml.safe_load(DATES))
    when, at = s["when"], s["at"]
    assert isinstance(when, DatetimeColumn) and isinstance(when, NumericColumn) and when.kind == "numeric"
    assert (when.lower, when.upper, when.resolution) == (18262.0, 20088.0, 1.0)
    assert (at.lower, at.upper) == (18262 * 24, 18264 * 24 + 23)  # a date as upper bound: its whole day
    assert s.to_dict()["columns"] == {
        "when": {"type": "datetime", "lower": "2020-01-01", "upper": "2024-12-31", "step": "day",
                 "missing": "allowed"},
        "at": {"type": "datetime", "lower": "2020-01-01T00:00", "upper": "2020-01-03T23:00", "step": "hour"}}
    assert Schema.from_dict(yaml.safe_load(s.to_yaml())) == s
    assert s.with_role("at", "target")["at"] == DatetimeColumn("at", at.lower, at.upper, unit="hour", role="target")


@pytest.mark.parametrize("spec, msg", [
    ({"lower": "2020-01-01", "upper": "2020-13-01"}, "'upper' of a datetime column must be an ISO date"),
    ({"lower": "2020-01-01", "upper": "2021-01-01", "step": "week"}, "must be one of day, hour, minute, second"),
    ({"lower": "2020-01-02", "upper": "2020-01-01"}, "must be smaller than upper"),
    ({"lower": "2020-01-01"}, "have no bounds"),
    ({"lower": "2020-01-01", "upper": "2021-01-01", "integer": True}, "unknown keys"),
])
def test_bad_datetime_columns(spec, msg):
    with pytest.raises(SchemaError, match=msg):
        Schema.from_dict({"columns": {"d": {"type": "datetime", **spec}}})


def test_datetime_encoder_reads_text_dates_and_datetimes_and_writes_iso():
    s = Schema.from_dict(yaml.safe_load(DATES))
    enc = Encoder(s)
    df = pd.DataFrame({"when": [" 2020-03-04", None, dt.date(2021, 1, 1), "2024-12-31T23:59"],
                       "at": pd.to_datetime(["2020-01-01 05:59", "2020-01-02 00:00", "2020-01-02 23:00",
                                             "2020-01-01 00:00"])})
    out = enc.decode(enc.encode(df).X)
    assert out["when"].tolist() == ["2020-03-04", None, "2021-01-01", "2024-12-31"]
    assert out["at"].tolist() == ["2020-01-01T05:00", "2020-01-02T00:00", "2020-01-02T23:00", "2020-01-01T00:00"]
    parquet_dates = pd.DataFrame({"when": pd.to_datetime(["2020-03-04"]).tz_localize("UTC"),
                                  "at": ["2020-01-01T01:00"]})
    assert enc.decode(enc.encode(parquet_dates).X)["when"].tolist() == ["2020-03-04"]


def test_datetime_input_refusals_name_the_column():
    s = Schema.from_dict(yaml.safe_load(DATES))
    with pytest.raises(InputDataError, match=r"column 'when' is a datetime column but has 1 value\(s\) that are not "
                                             r"ISO dates \(first rows \[1\]\), e.g. \['soon'\]"):
        Encoder(s, ["when"]).encode(pd.DataFrame({"when": ["2020-01-01", "soon"]}))
    with pytest.raises(InputDataError, match="'when' is a datetime column but holds numbers"):
        Encoder(s, ["when"]).encode(pd.DataFrame({"when": [18262, 18263]}))
    with pytest.raises(InputDataError, match="'at' has 1 missing value"):
        Encoder(s, ["at"]).encode(pd.DataFrame({"at": ["2020-01-01", None]}))
    plain = Schema.from_dict({"columns": {"d": {"type": "numeric", "lower": 0, "upper": 1}}})
    with pytest.raises(InputDataError, match="non-numeric value.*; for dates declare it 'type: datetime'$"):
        Encoder(plain).encode(pd.DataFrame({"d": ["2020-01-01", "2020-02-01"]}))
    with pytest.raises(InputDataError, match="holds dates/times; declare it 'type: datetime'"):
        Encoder(plain).encode(pd.DataFrame({"d": pd.to_datetime(["2020-01-01"])}))


def test_a_datetime_column_is_released_by_a_mechanism_as_iso_dates():
    s = Schema.from_dict({"columns": {"when": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31"},
                                      **COLUMNS}})
    df = _table().assign(when=pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(300) % 366, unit="D"))
    out = release(df, s, "gauss-copula", 1.0, rng=0).data
    days = pd.to_datetime(out["when"], format="%Y-%m-%d")
    assert days.min() >= pd.Timestamp("2020-01-01") and days.max() <= pd.Timestamp("2020-12-31")
    assert out["when"].str.fullmatch(r"\d{4}-\d\d-\d\d").all()


def test_a_csv_date_column_is_read_as_written(tmp_path):
    """Dates written 20200131 were parsed as numbers by the CSV reader, and then refused as numbers."""
    s = Schema.from_dict({"columns": {"d": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31"},
                                      "v": {"type": "numeric", "lower": 0, "upper": 1}}})
    data = tmp_path / "in.csv"
    data.write_text("d,v\n20200131,0.5\n20200301,0.25\n")
    out = release_file(data, s, tmp_path / "out.csv", "laplace", 1.0, rng=0)
    assert out.n_output_records == 2 and pd.read_csv(tmp_path / "out.csv")["d"].str.fullmatch(r"2020-\d\d-\d\d").all()


def test_only_a_mechanism_declaring_missing_numeric_accepts_nan_coordinates():
    from privrelease.mechanisms.base import Mechanism

    class Plain(Mechanism):
        def __init__(self, epsilon=1.0, rng=None):
            self.epsilon, self.rng = epsilon, rng

    class Able(Plain):
        capabilities = Capabilities(missing_numeric=True)

    X = np.array([[0.5, np.nan], [0.25, 1.0]])
    with pytest.raises(InputDataError, match="NaN or infinite"):
        Plain(rng=0)._check_common(X)
    assert np.isnan(Able(rng=0)._check_common(X)[1]).sum() == 1
    with pytest.raises(InputDataError, match="NaN or infinite"):
        Able(rng=0)._check_common(np.array([[np.inf, np.nan]]))
    with pytest.raises(InputDataError, match="encoded into"):
        Able(rng=0)._check_common(np.array([[1.5, np.nan]]))

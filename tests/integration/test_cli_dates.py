"""Date-time columns through the CLI: ISO timestamps ending in ``Z`` drafted and released as they came."""

import numpy as np
import pandas as pd
import pytest
import yaml

from cli_helpers import run_cli


def _stamps(tmp_path, n=3000, zone="Z"):
    """Timestamps of 2017 at second precision, written ``2017-01-01T00:14:22Z`` (the common export form)."""
    rng = np.random.default_rng(0)
    t = pd.Timestamp("2017-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 365 * 86_400, n)), unit="s")
    df = pd.DataFrame({"stop": t.strftime("%Y-%m-%dT%H:%M:%S") + zone, "speed": rng.uniform(0, 100, n).round(1),
                       "kind": rng.choice(["car", "bike"], n)})
    path = tmp_path / "stops.csv"
    df.to_csv(path, index=False)
    return path


DP = ["--epsilon", "2", "--seed", "0", "--range", "speed=0,100"]


@pytest.mark.parametrize("dp", [[], DP], ids=["read", "dp"])
@pytest.mark.parametrize("stated", [["--datetime", "stop"], []], ids=["stated", "inferred"])
def test_a_draft_of_utc_timestamps_is_a_utc_datetime_column(tmp_path, capsys, dp, stated):
    """Issue 35, item 2: --datetime exited 1 (OutOfBoundsTimedelta) or drafted 1970-01-01; without it the
    column became a categorical of (other)."""
    code, out, err = run_cli(["schema", "draft", str(_stamps(tmp_path)), *stated, *dp], capsys)
    assert code == 0, err
    stop = yaml.safe_load(out)["columns"]["stop"]
    assert stop["type"] == "datetime" and stop["timezone"] == "UTC", stop
    assert "2000-01-01" <= stop["lower"] <= "2017-01-01" <= "2017-12-31" <= stop["upper"], stop  # not 1970
    if not dp:
        assert (stop["lower"], stop["upper"], stop["step"]) == ("2017-01-01", "2018-01-01", "second")


def test_a_stated_step_is_drafted_and_a_wrong_one_refused_in_one_line(tmp_path, capsys):
    code, out, err = run_cli(["schema", "draft", str(_stamps(tmp_path)), "--datetime", "stop=minute", *DP], capsys)
    assert code == 0, err
    assert yaml.safe_load(out)["columns"]["stop"]["step"] == "minute"
    code, out, err = run_cli(["schema", "draft", str(_stamps(tmp_path)), "--datetime", "stop=week", *DP], capsys)
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1 and "stop=week" in err, err


@pytest.mark.parametrize("dp", [[], DP], ids=["read", "dp"])
def test_a_draft_of_naive_timestamps_states_no_time_zone(tmp_path, capsys, dp):
    code, out, err = run_cli(["schema", "draft", str(_stamps(tmp_path, zone="")), *dp], capsys)
    assert code == 0, err
    stop = yaml.safe_load(out)["columns"]["stop"]
    assert stop["type"] == "datetime" and "timezone" not in stop


@pytest.mark.parametrize("zone, written", [("UTC", r"Z"), (None, r"")])
def test_the_release_writes_times_in_the_schemas_convention(tmp_path, capsys, zone, written):
    stop = {"type": "datetime", "lower": "2017-01-01", "upper": "2017-12-31", "step": "second"}
    if zone:
        stop["timezone"] = zone
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump({"columns": {
        "stop": stop, "speed": {"type": "numeric", "lower": 0, "upper": 100},
        "kind": {"type": "categorical", "categories": ["car", "bike"]}}}))
    out = tmp_path / "rel.csv"
    code, _, err = run_cli(["release", str(_stamps(tmp_path)), "--schema", str(schema), "-e", "1", "--seed", "0",
                            "--out", str(out)], capsys)
    assert code == 0, err
    stops = pd.read_csv(out, dtype=str)["stop"]
    assert stops.str.fullmatch(r"2017-\d\d-\d\dT\d\d:\d\d:\d\d" + written).all(), stops.head()


def test_a_time_zone_other_than_utc_is_refused_in_one_line(tmp_path, capsys):
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump({"columns": {
        "stop": {"type": "datetime", "lower": "2017-01-01", "upper": "2017-12-31", "timezone": "Europe/Paris"},
        "speed": {"type": "numeric", "lower": 0, "upper": 100}}}))
    code, out, err = run_cli(["schema", "check", str(schema)], capsys)
    assert code == 2 and "timezone" in err and "UTC" in err and len(err.strip().splitlines()) == 1, err


def test_evaluate_prints_date_quantiles_as_the_report_does(tmp_path, capsys):
    """Issue 35, item 14: the text table printed a date column's quantiles as numbers of units (1.7e+04)."""
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump({"columns": {
        "day": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31"},
        "at": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-01-31", "step": "hour"},
        "kind": {"type": "categorical", "categories": ["car", "bike"]}}}))
    real, released = tmp_path / "real.csv", tmp_path / "released.csv"
    pd.DataFrame({"day": ["2020-03-01"] * 4 + ["2020-06-30"] * 6, "at": ["2020-01-02T10:00"] * 10,
                  "kind": ["car", "bike"] * 5}).to_csv(real, index=False)
    pd.DataFrame({"day": ["2020-03-02"] * 10, "at": ["2020-01-03T11:00Z"] * 10,
                  "kind": ["car"] * 10}).to_csv(released, index=False)
    out_json = tmp_path / "ev.json"
    code, out, err = run_cli(["evaluate", str(real), str(released), "--schema", str(schema), "--no-sdmetrics",
                              "--json", str(out_json)], capsys)
    assert code == 0, err
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("day ", "at "))}
    assert rows["day"][3:5] == ["2020-06-30", "2020-03-02"], out  # median real, released
    assert rows["at"][3:7] == ["2020-01-02", "10:00", "2020-01-03", "11:00"], out  # as the HTML report writes it
    m = yaml.safe_load(out_json.read_text())["numeric_columns"]
    assert m["day"]["quantiles"]["median"]["real_date"] == "2020-06-30"
    assert m["at"]["quantiles"]["p90"]["released_date"] == "2020-01-03 11:00"
    assert isinstance(m["day"]["quantiles"]["median"]["real"], float)  # the numbers stay (units of the step)


def test_a_columns_own_missing_spelling_is_read_by_release_and_evaluate(tmp_path, capsys):
    """A survey's codes for a missing value stated on their columns (``na_values``): the release reads them as
    missing, and evaluate reads the real table the same way; a date column's code would otherwise stop the
    evaluation (not an ISO date) and a number's count as a value outside the range."""
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump({"columns": {
        "day": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-12-31", "missing": "allowed",
                "na_values": ["9999-99-99"]},
        "kids": {"type": "numeric", "lower": 0, "upper": 15, "integer": True, "missing": "allowed",
                 "na_values": [98, 99]},
        "hours": {"type": "numeric", "lower": 0, "upper": 6000, "integer": True}}}))
    rng = np.random.default_rng(0)
    n = 2000
    real = pd.DataFrame({"day": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D"),
                         "kids": rng.integers(0, 5, n), "hours": rng.choice([98, 99, 2000], n)})
    real["day"] = real["day"].dt.strftime("%Y-%m-%d")
    real.loc[: n // 5 - 1, "day"] = "9999-99-99"
    real.loc[n // 2: n // 2 + n // 10 - 1, "kids"] = 99
    path, out_csv, out_json = tmp_path / "real.csv", tmp_path / "rel.csv", tmp_path / "ev.json"
    real.to_csv(path, index=False)
    code, _, err = run_cli(["release", str(path), "--schema", str(schema), "--epsilon", "4", "--seed", "0",
                            "--out", str(out_csv), "--certificate", str(tmp_path / "c.json")], capsys)
    assert code == 0, err
    rel = pd.read_csv(out_csv)
    assert abs(rel["day"].isna().mean() - 0.2) < 0.05 and abs(rel["kids"].isna().mean() - 0.1) < 0.05
    assert rel["hours"].notna().all() and rel["kids"].max() <= 15
    code, _, err = run_cli(["evaluate", str(path), str(out_csv), "--schema", str(schema), "--no-sdmetrics",
                            "--json", str(out_json)], capsys)
    assert code == 0, err
    m = yaml.safe_load(out_json.read_text())["numeric_columns"]
    assert m["day"]["missing"]["real"] == pytest.approx(0.2) and m["kids"]["missing"]["real"] == pytest.approx(0.1)

"""``privrelease release`` on a table with a date column, a column recorded to 0.1 and a numeric column
with missing values: dates come back as ISO dates, the 0.1 column at one decimal, and a mechanism that
cannot release missing numeric values refuses them in one line, writing and charging nothing."""

import re

import numpy as np
import pandas as pd
import yaml

from cli_helpers import run_cli

SCHEMA = {"columns": {
    "visit": {"type": "datetime", "lower": "2020-01-01", "upper": "2024-12-31"},
    "reading": {"type": "numeric", "lower": 0, "upper": 20, "step": 0.1},
    "dose": {"type": "numeric", "lower": 0, "upper": 100, "missing": "allowed"},
    "ward": {"type": "categorical", "categories": ["A", "B", "C"], "role": "label"},
}}


def _files(tmp_path, schema):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({
        "visit": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1827, n), unit="D")).strftime("%Y-%m-%d"),
        "reading": np.round(rng.gamma(4.0, 1.5, n).clip(0, 20), 1),
        "dose": np.where(rng.random(n) < 0.2, np.nan, np.round(rng.uniform(0, 100, n), 2)),
        "ward": rng.choice(["A", "B", "C"], n),
    })
    data, s = tmp_path / "visits.csv", tmp_path / "schema.yaml"
    df.to_csv(data, index=False)
    s.write_text(yaml.safe_dump(schema, sort_keys=False))
    return data, s


def _release(capsys, tmp_path, schema, mechanism, *extra):
    data, s = _files(tmp_path, schema)
    return run_cli(["release", str(data), "--schema", str(s), "-m", mechanism, "-e", "1", "--seed", "0",
                    "--out", str(tmp_path / "out.csv"), *extra], capsys)


def test_missing_numeric_values_refused_in_one_line_nothing_written_or_charged(tmp_path, capsys):
    led = tmp_path / "budget.sqlite"
    code, _, err = _release(capsys, tmp_path, SCHEMA, "laplace", "--ledger", str(led), "--dataset-id", "v",
                            "--budget", "3", "--certificate", str(tmp_path / "cert.json"))
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(
        "error: column 'dose' declares 'missing: allowed', which mechanism 'laplace' cannot release; "), err
    assert "remove 'missing: allowed'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schema.yaml", "visits.csv"]


def test_dates_and_a_tenth_step_released_at_their_precision(tmp_path, capsys):
    schema = {"columns": {k: v for k, v in SCHEMA["columns"].items() if k != "dose"}}
    code, _, err = _release(capsys, tmp_path, schema, "gauss-copula")
    assert code == 0, err
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert list(out.columns) == ["visit", "reading", "ward"]
    assert out["visit"].str.fullmatch(r"\d{4}-\d\d-\d\d").all(), out["visit"].head()
    days = pd.to_datetime(out["visit"])
    assert days.min() >= pd.Timestamp("2020-01-01") and days.max() <= pd.Timestamp("2024-12-31")
    assert out["reading"].map(lambda v: re.fullmatch(r"\d+\.\d", v) is not None).all(), out["reading"].head()


def test_schema_check_refuses_a_step_without_a_grid_point(tmp_path, capsys):
    s = tmp_path / "schema.yaml"
    s.write_text(yaml.safe_dump({"columns": {"r": {"type": "numeric", "lower": 0.1, "upper": 0.2, "step": 0.5}}}))
    code, _, err = run_cli(["schema", "check", str(s)], capsys)
    assert code == 2 and err.strip() == ("error: column 'r': no multiple of its step 0.5 lies within [0.1, 0.2]; "
                                         "widen the bounds or declare a finer step"), err
    s.write_text(yaml.safe_dump(SCHEMA, sort_keys=False))
    code, out, err = run_cli(["schema", "check", str(s)], capsys)
    assert code == 0 and out.startswith("ok: 4 columns"), err


def test_evaluate_measures_a_date_column(tmp_path, capsys):
    """The evaluation read released ISO dates as non-numbers: every date fell in the 'missing' cell of both
    tables and the column's 1-way TVD was 0 whatever was released."""
    import json

    schema = {"columns": {k: v for k, v in SCHEMA["columns"].items() if k != "dose"}}
    _files(tmp_path, schema)
    (tmp_path / "late.csv").write_text("visit,reading,ward\n" + "2024-12-31,1.0,A\n" * 400)
    code, _, err = run_cli(["evaluate", str(tmp_path / "visits.csv"), str(tmp_path / "late.csv"), "--schema",
                            str(tmp_path / "schema.yaml"), "--no-sdmetrics", "--json", str(tmp_path / "e.json")], capsys)
    assert code == 0, err
    tvd = json.loads((tmp_path / "e.json").read_text())["tvd_1way"]["per_column"]
    assert tvd["visit"] > 0.9, tvd

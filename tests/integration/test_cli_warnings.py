"""What a user is told on the console about their data: clipped values, extra columns, one-class labels,
unknown labels in a draft, and values too long to echo."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from cli_helpers import run_cli

SCHEMA = {"columns": {
    "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
    "when": {"type": "numeric", "lower": 0, "upper": 1000},
    "color": {"type": "categorical", "categories": ["red", "blue"]},
    "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
}}


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(0, 101, n), "when": rng.uniform(0, 1000, n),
                         "color": rng.choice(["red", "blue"], n), "label": rng.choice(["no", "yes"], n)})


def _files(tmp_path, df, fmt="csv", schema=SCHEMA):
    data = tmp_path / f"data.{fmt}"
    df.to_csv(data, index=False) if fmt == "csv" else df.to_parquet(data, index=False)
    s = tmp_path / "schema.yaml"
    s.write_text(yaml.safe_dump(schema))
    return data, s


def _release(capsys, tmp_path, data, schema, mechanism="laplace"):
    return run_cli(["release", str(data), "--schema", str(schema), "-m", mechanism, "-e", "1", "--seed", "0",
                    "--out", str(tmp_path / "out.csv")], capsys)


def _warnings(err):
    return [line for line in err.splitlines() if line.startswith("warning: ")]


@pytest.mark.parametrize("mechanism", ["laplace", "gauss-pca"])  # in memory / several streamed passes
def test_clipped_columns_are_named_without_their_count(tmp_path, capsys, mechanism):
    """Pins the silent clipping: values outside the declared bounds were clipped without a word."""
    df = _table()
    df.loc[:4, "age"] = 150
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df), mechanism=mechanism)
    assert code == 0, err
    lines = [w for w in _warnings(err) if "'age'" in w]
    # that clipping happened, not how often: the count is an exact private fact (in the private diagnostics)
    assert lines == ["warning: PRIVATE (depends on single records of the input; keep out of shared logs): values of "
                     "column 'age' outside the declared bounds [0, 100] were clipped to them (how many: in the "
                     "private diagnostics)"], err


def test_wholesale_clipping_is_said_without_counts(tmp_path, capsys):
    """Pins the silent wholesale clipping of a column whose bounds do not describe it, and (privacy issue,
    defect 8) the exact count of clipped values printed on the console."""
    df = _table()
    df["when"] = df["when"] * 1e6
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df, fmt="parquet"))
    assert code == 0, err
    (line,) = [w for w in _warnings(err) if "'when'" in w]
    assert line.startswith("warning: PRIVATE") and "values of column 'when' outside the declared bounds" in line
    assert "60" not in line


def test_parquet_datetime_in_a_numeric_column_names_type_datetime(tmp_path, capsys):
    """Dates in a column declared numeric were read as nanoseconds and clipped wholesale."""
    df = _table()
    df["when"] = pd.date_range("2020-01-01", periods=len(df), freq="D")
    code, out, err = _release(capsys, tmp_path, *_files(tmp_path, df, fmt="parquet"))
    assert code == 2 and not (tmp_path / "out.csv").exists()
    assert err.strip().splitlines()[-1] == ("error: column 'when' is numeric in the schema but holds dates/times; "
                                            "declare it 'type: datetime' with ISO bounds"), err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_extra_data_column_is_named(tmp_path, capsys, fmt):
    """Pins the silent dropping of a data column the schema does not declare."""
    df = _table().assign(ssn=lambda d: np.arange(len(d)))
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df, fmt=fmt))
    assert code == 0, err
    assert any("not declared in the schema" in w and "'ssn'" in w for w in _warnings(err)), err


@pytest.mark.parametrize("mechanism", ["laplace", "jiang-lda"])
def test_one_class_label_is_warned(tmp_path, capsys, mechanism):
    """Pins the silent release of a label holding a single class (supervised mechanisms learn nothing)."""
    df = _table().assign(label="yes")
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df), mechanism=mechanism)
    assert code == 0, err
    assert any("label column 'label' holds a single class ('yes') in all 60 records" in w
               for w in _warnings(err)), err


def test_clean_data_release_has_no_warning(tmp_path, capsys):
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, _table(n=3000)))
    assert code == 0 and _warnings(err) == [], err


def test_schema_draft_unknown_label_is_an_error(tmp_path, capsys):
    """Pins ``schema draft --label nosuch`` succeeding silently without any label."""
    data, _ = _files(tmp_path, _table())
    code, out, err = run_cli(["schema", "draft", str(data), "--label", "nosuch"], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "error: label column 'nosuch' is not in the table; its columns: ['age', 'when', 'color', 'label']"]


def test_schema_draft_one_class_label_is_warned(tmp_path, capsys):
    data, _ = _files(tmp_path, _table().assign(label="no"))
    code, _, err = run_cli(["schema", "draft", str(data), "--label", "label"], capsys)
    assert code == 0 and any("single class ('no')" in w for w in _warnings(err)), err


def test_long_category_value_is_cut_in_the_error(tmp_path, capsys):
    """Pins a 20,000-character unknown category echoed whole in the error message."""
    df = _table()
    df.loc[3, "color"] = "z" * 20_000
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df))
    assert code == 2
    (line,) = err.strip().splitlines()[-1:]
    assert line.startswith("error: column 'color' has 1 value(s)") and "(20,000 characters)" in line
    assert len(line) < 300


def test_schema_draft_writes_readable_bounds_and_utf8_names(tmp_path, capsys):
    """Pins drafted bounds like 0.30000000000000004 and names escaped as \\xE9 in the YAML."""
    df = pd.DataFrame({"durée": np.linspace(0.01, 0.27, 40), "année": np.arange(1990, 2030),
                       "ville": ["Zürich", "Genève"] * 20})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    code, out, err = run_cli(["schema", "draft", str(data)], capsys)
    assert code == 0, err
    assert "durée:" in out and "année:" in out and "Zürich" in out and "\\x" not in out
    assert "0.30000000000000004" not in out
    cols = yaml.safe_load(out)["columns"]
    assert cols["durée"]["upper"] == 0.3 and cols["année"]["lower"] == 1000.0


def test_private_warnings_go_to_the_diagnostics_file_not_the_console(tmp_path, capsys):
    """Issue 35, item 6: with a certificate, a warning present because of one record (clipping, one class)
    is written to NAME.private-diagnostics.json, marked private, and the console's lines are the same as for
    a table without it."""
    df = _table(n=3000)
    df.loc[:4, "age"] = 150
    data, schema = _files(tmp_path, df)
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "1", "--seed", "0",
                            "--out", str(tmp_path / "out.csv"), "--certificate", str(tmp_path / "c.json")], capsys)
    assert code == 0 and _warnings(err) == [] and "clipped" not in err, err
    held = json.loads((tmp_path / "c.private-diagnostics.json").read_text())["warnings"]
    assert len(held) == 1 and held[0].startswith("PRIVATE") and "'age'" in held[0] and "clipped" in held[0]


def test_private_warning_on_the_console_says_it_is_private(tmp_path, capsys):
    """Issue 35, item 6: without a diagnostics file the custodian still sees the warning, marked private."""
    df = _table()
    df.loc[:4, "age"] = 150
    code, _, err = _release(capsys, tmp_path, *_files(tmp_path, df))
    assert code == 0, err
    (line,) = [w for w in _warnings(err) if "'age'" in w]
    assert line.startswith("warning: PRIVATE"), line

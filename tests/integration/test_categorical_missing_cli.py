"""A categorical column declared ``missing: allowed`` through the CLI (issue 35, item 10): the release writes
its missing values as blanks (never a level's text), the evaluation reads them back, and a label with missing
values is refused in one line with nothing written."""

import numpy as np
import pandas as pd
import yaml

from cli_helpers import run_cli

SCHEMA = {"columns": {"age": {"type": "numeric", "lower": 18, "upper": 90, "integer": True},
                      "job": {"type": "categorical", "categories": ["clerk", "nurse", "cook"], "missing": "allowed"},
                      "y": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}}


def _data(tmp_path, n=3000, label_missing=False):
    rng = np.random.default_rng(0)
    job = rng.choice(["clerk", "nurse", "cook"], n).astype(object)
    job[rng.random(n) < 0.4] = None
    y = rng.choice(["no", "yes"], n).astype(object)
    if label_missing:
        y[5] = None
    path = tmp_path / "data.csv"
    pd.DataFrame({"age": rng.integers(18, 90, n), "job": job, "y": y}).to_csv(path, index=False)
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(SCHEMA))
    return path, schema


def test_missing_categorical_values_are_released_as_missing(tmp_path, capsys):
    data, schema = _data(tmp_path)
    rel = tmp_path / "rel.csv"
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-e", "1", "--seed", "0",
                            "--out", str(rel)], capsys)
    assert code == 0, err
    out = pd.read_csv(rel, keep_default_na=False)
    assert set(out["job"]) <= {"clerk", "nurse", "cook", ""}  # blanks, never '(missing)' nor '(other)'
    assert 0.3 < (out["job"] == "").mean() < 0.5 and set(out["y"]) <= {"no", "yes"}
    code, shown, err = run_cli(["evaluate", str(data), str(rel), "--schema", str(schema), "--no-sdmetrics"], capsys)
    assert code == 0, err
    assert "1-way TVD" in shown


def test_a_label_with_missing_values_is_refused_in_one_line(tmp_path, capsys):
    data, schema = _data(tmp_path, label_missing=True)
    rel = tmp_path / "rel.csv"
    code, out, err = run_cli(["release", str(data), "--schema", str(schema), "-e", "1", "--seed", "0",
                              "--out", str(rel)], capsys)
    assert code != 0 and not rel.exists()
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert len(lines) == 1 and "'y'" in lines[0] and "label" in lines[0], err

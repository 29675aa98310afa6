"""``privrelease schema draft DATA --epsilon E``: a private draft, charged to the ledger, recorded in later certificates."""

import json

import numpy as np
import pandas as pd
import yaml

from cli_helpers import run_cli


def _data(tmp_path, n=3000):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 71, n), "score": rng.uniform(0, 1, n),
                       "city": rng.choice(["Paris", "Lyon"], n), "y": rng.choice(["no", "yes"], n)})
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_dp_draft_charged_to_the_ledger_and_recorded_by_the_release(tmp_path, capsys):
    data, ledger = _data(tmp_path), tmp_path / "budget.sqlite"
    code, out, err = run_cli(["schema", "draft", str(data), "--epsilon", "6", "--delta", "1e-6", "--label", "y",
                              "--range", "score=0,1", "--seed", "0", "--ledger", str(ledger), "--dataset-id", "d",
                              "--budget", "10,1e-4", "--complete", "age,score,city,y"], capsys)
    assert code == 0, err
    assert "drafted privately" in err and "NOT private" not in err
    sch = yaml.safe_load(out)
    assert sch["provenance"]["method"] == "dp-draft" and sch["provenance"]["ledger"] == {"dataset_id": "d", "entry": 1}
    assert sch["columns"]["score"]["lower"] <= 0.05 and sch["columns"]["score"]["upper"] >= 0.95
    code, shown, _ = run_cli(["ledger", "show", str(ledger), "--json"], capsys)
    (d,) = json.loads(shown)
    assert d["epsilon_spent"] == 6.0 and d["delta_spent"] == 1e-6
    schema = tmp_path / "schema.yaml"
    schema.write_text(out)
    cert = tmp_path / "cert.json"
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "1", "--seed", "0",
                            "--out", str(tmp_path / "rel.csv"), "--certificate", str(cert)], capsys)
    assert code == 0, err
    c = json.loads(cert.read_text())
    assert c["schema_provenance"]["method"] == "dp-draft" and c["schema_provenance"]["epsilon"] == 6.0
    assert any("drafted from the data under differential privacy" in note for note in c["notes"])


def test_dp_draft_over_budget_is_refused_and_prints_nothing(tmp_path, capsys):
    data, ledger = _data(tmp_path), tmp_path / "budget.sqlite"
    code, out, err = run_cli(["schema", "draft", str(data), "--epsilon", "6", "--ledger", str(ledger),
                              "--dataset-id", "d", "--budget", "5,1e-4"], capsys)
    assert code == 2 and out == "" and "budget" in err


def test_dp_options_without_epsilon_are_refused(tmp_path, capsys):
    code, out, err = run_cli(["schema", "draft", str(_data(tmp_path)), "--range", "0,1"], capsys)
    assert code == 2 and "give --epsilon" in err


def test_several_columns_in_one_range_are_refused_in_one_line(tmp_path, capsys):
    data, ledger = _data(tmp_path), tmp_path / "budget.sqlite"
    code, out, err = run_cli(["schema", "draft", str(data), "--epsilon", "1", "--range", "score=0,1,age=0,100",
                              "--ledger", str(ledger), "--dataset-id", "d"], capsys)
    assert code == 2 and out == "" and "give each its own --range" in err and len(err.strip().splitlines()) == 1
    assert not ledger.exists() or "epsilon_spent" not in run_cli(["ledger", "show", str(ledger), "--json"], capsys)[1]


def _messy(tmp_path, n=3000):
    """A table as users have them: missing spellings, a date, an identifier, an all-empty column."""
    rng = np.random.default_rng(1)
    age = rng.integers(18, 90, n).astype(object)
    age[:60] = "NA"
    job = rng.choice(["clerk", "nurse", "?"], n)
    df = pd.DataFrame({"id": np.arange(n), "age": age, "job": job, "empty": [""] * n,
                       "visit": pd.date_range("2022-01-01", periods=n, freq="6h").strftime("%Y-%m-%d"),
                       "y": rng.choice(["no", "yes"], n)})
    path = tmp_path / "messy.csv"
    df.to_csv(path, index=False)
    return path


def test_non_private_draft_writes_missing_values_dates_and_leaves_out_ids_and_empty_columns(tmp_path, capsys):
    code, out, err = run_cli(["schema", "draft", str(_messy(tmp_path)), "--label", "y"], capsys)
    assert code == 0, err
    s = yaml.safe_load(out)
    assert set(s["columns"]) == {"age", "job", "visit", "y"} and set(s["na_values"]) == {"NA", "?"}
    assert s["columns"]["age"] == {"type": "numeric", "lower": 10.0, "upper": 90.0, "integer": True,
                                   "missing": "allowed"}
    assert s["columns"]["job"]["categories"] == ["clerk", "nurse"]
    assert s["columns"]["job"]["missing"] == "allowed"  # released as missing (issue 35, item 10)
    assert s["columns"]["visit"] == {"type": "datetime", "lower": "2022-01-01", "upper": "2024-01-20", "step": "day"}
    assert "column 'id' left out" in err and "column 'empty' left out" in err


def test_dp_draft_with_stated_kinds_and_declared_levels(tmp_path, capsys):
    levels = tmp_path / "levels.yaml"
    levels.write_text("y: ['no', 'yes']\n")
    code, out, err = run_cli(["schema", "draft", str(_messy(tmp_path)), "--label", "y", "--epsilon", "3",
                              "--integer", "age", "--categorical", "job", "--datetime", "visit", "--levels",
                              str(levels), "--seed", "0"], capsys)
    assert code == 0, err
    s = yaml.safe_load(out)
    assert s["columns"]["y"]["categories"] == ["no", "yes"] and s["columns"]["y"]["role"] == "label"
    assert s["columns"]["age"]["integer"] is True and s["columns"]["visit"]["type"] == "datetime"
    assert s["provenance"]["stated"] == {"id": "identifier", "age": "integer", "job": "categorical",
                                         "visit": "datetime", "y": "categorical"}
    assert s["provenance"]["per_column"]["epsilon"] == 0.75  # age, job, visit, empty spend; id and y do not
    assert "column 'id' left out" in err


def test_dp_draft_refuses_a_column_stated_twice_and_charges_nothing(tmp_path, capsys):
    ledger = tmp_path / "b.sqlite"
    code, out, err = run_cli(["schema", "draft", str(_data(tmp_path)), "--epsilon", "1", "--numeric", "age",
                              "--categorical", "age", "--ledger", str(ledger), "--dataset-id", "d"], capsys)
    assert code == 2 and out == "" and "two kinds" in err
    assert not ledger.exists() or "epsilon_spent\": 0" in run_cli(["ledger", "show", str(ledger), "--json"], capsys)[1]


def test_a_release_refuses_a_label_with_one_level_and_charges_nothing(tmp_path, capsys):
    data, ledger = _data(tmp_path), tmp_path / "budget.sqlite"
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump({"columns": {
        "age": {"type": "numeric", "lower": 20, "upper": 70},
        "y": {"type": "categorical", "categories": ["(other)"], "other": "(other)", "role": "label"}}}))
    code, out, err = run_cli(["release", str(data), "--schema", str(schema), "-e", "1", "--out",
                              str(tmp_path / "r.csv"), "--ledger", str(ledger), "--dataset-id", "d", "--budget", "3"],
                             capsys)
    assert code == 2 and "label column 'y'" in err and "at least two classes" in err
    assert [ln.startswith("error:") for ln in err.splitlines()].count(True) == 1 and not (tmp_path / "r.csv").exists()
    if ledger.exists():
        _, shown, _ = run_cli(["ledger", "show", str(ledger), "--json"], capsys)
        assert all(d["epsilon_spent"] == 0 for d in json.loads(shown))


def test_a_parquet_files_declared_types_are_stated_facts(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 71, 3000), "score": rng.uniform(0, 1, 3000),
                       "y": rng.choice(["no", "yes"], 3000)})
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    code, out, err = run_cli(["schema", "draft", str(path), "--label", "y", "--epsilon", "4", "--seed", "0"], capsys)
    assert code == 0, err
    s = yaml.safe_load(out)
    assert s["provenance"]["stated"] == {"age": "integer", "score": "numeric", "y": "categorical"}
    assert s["columns"]["age"]["integer"] is True and "integer" not in s["columns"]["score"]


def test_a_parquet_files_declared_types_do_not_depend_on_its_values(tmp_path, capsys):
    """Issue 35, item 5: two neighbouring files (one null added) declare the same kinds (pandas would
    load the int64 column with a null as float64 and the bool one as object)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    n = 3000
    age, flag = rng.integers(20, 71, n).tolist(), rng.choice([True, False], n).tolist()
    stated = []
    for with_null in (False, True):
        a, f = list(age), list(flag)
        if with_null:
            a[0], f[0] = None, None
        path = tmp_path / f"d{int(with_null)}.parquet"
        pq.write_table(pa.table({"age": pa.array(a, pa.int64()), "flag": pa.array(f, pa.bool_())}), path)
        code, out, err = run_cli(["schema", "draft", str(path), "--epsilon", "4", "--delta", "1e-6", "--seed", "0"],
                                 capsys)
        assert code == 0, err
        stated.append(yaml.safe_load(out)["provenance"]["stated"])
    assert stated[0] == stated[1] == {"age": "integer", "flag": "categorical"}


def test_columns_option_drafts_only_the_chosen_columns(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": rng.integers(0, 100, 500), "b": rng.choice(["x", "y"], 500), "secret": rng.random(500)}
                 ).to_csv(data, index=False)
    code, out, err = run_cli(["schema", "draft", str(data), "--columns", "a,b", "--integer", "a",
                              "--epsilon", "4", "--seed", "0"], capsys)
    assert code == 0, err
    assert list(yaml.safe_load(out)["columns"]) == ["a", "b"]
    code, out, err = run_cli(["schema", "draft", str(data), "--columns", "a,nope", "--epsilon", "1"], capsys)
    assert code == 2 and "--columns names ['nope']" in err and len(err.strip().splitlines()) == 1, err


def test_columns_stated_complete_are_drafted_without_missing_values(tmp_path, capsys):
    """``--complete``: columns stated to hold no missing values (a public fact) are drafted without ``missing:
    allowed``, declared levels too (which are otherwise not read, so may be missing); others as drafted."""
    data, levels = _data(tmp_path), tmp_path / "levels.yaml"
    levels.write_text("city: [Paris, Lyon]\n")
    args = ["schema", "draft", str(data), "--label", "y", "--epsilon", "0.05", "--integer", "age", "--numeric",
            "score", "--levels", str(levels)]
    for seed in range(8):  # at epsilon 0.05 a noisy missing count clears the threshold now and then
        code, out, err = run_cli(args + ["--seed", str(seed), "--complete", "age,score,city"], capsys)
        assert code == 0, err
        cols = yaml.safe_load(out)["columns"]
        assert all("missing" not in spec for spec in cols.values()), cols
        assert cols["city"]["categories"] == ["Paris", "Lyon"] and "other" not in cols["city"]
    code, out, err = run_cli(args + ["--seed", "0"], capsys)
    assert code == 0 and yaml.safe_load(out)["columns"]["city"]["missing"] == "allowed"

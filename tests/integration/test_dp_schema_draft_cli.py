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
                              "--budget", "10,1e-4"], capsys)
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

"""`privrelease evaluate` end to end: a seeded release of Adult measured against the real table."""

import json

import pandas as pd

from cli_helpers import run_cli
from privrelease.datasets import example_paths, load_example


def _slices(tmp_path):
    train, schema = load_example("adult")
    test, _ = load_example("adult", "test")
    real, held = tmp_path / "real.csv", tmp_path / "test.csv"
    train.iloc[:3000].to_csv(real, index=False)
    test.iloc[:2000].to_csv(held, index=False)
    return real, held, example_paths("adult")[1]


def test_evaluate_a_release_writes_table_and_json(tmp_path, capsys):
    real, held, schema = _slices(tmp_path)
    rel = tmp_path / "rel.csv"
    code, _, err = run_cli(["release", str(real), "--schema", str(schema), "-m", "jiang-pca", "-e", "1",
                            "--seed", "0", "--out", str(rel)], capsys)
    assert code == 0, err
    out_json = tmp_path / "eval.json"
    code, out, err = run_cli(["evaluate", str(real), str(rel), "--schema", str(schema), "--test", str(held),
                              "--json", str(out_json)], capsys)
    assert code == 0, err
    assert (out + err).count("NOT differentially private") == 1  # the private-data notice, said once
    assert out.startswith("# ") and "NOT for publication" in out.splitlines()[0]
    for row in ("1-way TVD", "2-way TVD", "3-way TVD (pair, label)", "SDMetrics quality: overall",
                "column pair trends", "logistic regression (release)", "gradient boosting (real data)",
                "majority class for everyone", "numeric column (worst KS first)", "capital-gain"):
        assert row in out
    d = json.loads(out_json.read_text())
    assert d["n_real"] == 3000 and d["n_test"] == 2000 and d["label"] == "income"
    assert 0 < d["tvd_1way"]["mean"] < 1 and len(d["tvd_2way"]["per_pair"]) == 55
    assert 0 < d["sdmetrics"]["overall"] <= 1
    assert 0.5 < d["tstr_real"]["gradient_boosting"]["auc"] <= 1
    assert 0.5 < d["majority_rate"] < 0.9 and len(d["tvd_3way"]["per_pair"]) == 45
    ks = [m["ks"] for m in d["numeric_columns"].values()]
    assert len(ks) == 5 and ks == sorted(ks, reverse=True) and d["summary"]["ks_max"] == ks[0]


def test_evaluate_example_and_bad_input(tmp_path, capsys):
    test, _ = load_example("adult", "test")
    rel = tmp_path / "rel.csv"
    test.iloc[:1000].to_csv(rel, index=False)
    code, out, err = run_cli(["evaluate", "--example", "adult", str(rel), "--no-sdmetrics"], capsys)
    assert code == 0, err
    assert "records: real 30,162, released 1,000, test 15,060 (label income)" in out
    assert "SDMetrics" not in out
    # bad input: one-line error, exit 2, no JSON left behind
    out_json = tmp_path / "e.json"
    code, _, err = run_cli(["evaluate", "--example", "adult", str(tmp_path / "nope.csv"), "--json", str(out_json)],
                           capsys)
    assert code == 2 and "does not exist" in err and not out_json.exists()
    code, _, err = run_cli(["evaluate", "--example", "adult", str(rel), "--label", "age", "--no-sdmetrics",
                            "--json", str(out_json)], capsys)
    assert code == 2 and "categorical" in err and not out_json.exists()
    pd.DataFrame({"age": [30]}).to_csv(rel, index=False)
    code, _, err = run_cli(["evaluate", "--example", "adult", str(rel)], capsys)
    assert code == 2 and "lacks the schema's columns" in err and len(err.strip().splitlines()) == 1


def test_a_table_without_a_label_is_evaluated_and_reported_with_test_left_out(tmp_path, capsys):
    """The README's own-data step 3 passes --test; on a table without a label there is no classifier to score, so
    evaluate and report say so in one note and measure the rest, where they had stopped with 'no label'."""
    import numpy as np

    g = np.random.default_rng(0)
    df = pd.DataFrame({"x": g.uniform(0, 10, 400).round(1), "c": g.choice(["a", "b"], 400)})
    real, held, rel = tmp_path / "real.csv", tmp_path / "held.csv", tmp_path / "rel.csv"
    df.iloc[:300].to_csv(real, index=False)
    df.iloc[300:].to_csv(held, index=False)
    df.sample(frac=1.0, random_state=1).iloc[:300].to_csv(rel, index=False)
    schema = tmp_path / "s.yaml"
    schema.write_text("columns:\n  x: {type: numeric, lower: 0, upper: 10, step: 0.1}\n"
                      "  c: {type: categorical, categories: [a, b]}\n")
    code, out, err = run_cli(["evaluate", str(real), str(rel), "--schema", str(schema), "--test", str(held),
                              "--no-sdmetrics"], capsys)
    assert code == 0, err
    assert "names no label, so --test" in err and "1-way TVD" in out and "logistic regression" not in out
    page = tmp_path / "r.html"
    code, _, err = run_cli(["report", str(real), str(rel), "--schema", str(schema), "--test", str(held),
                            "--no-sdmetrics", "--out", str(page)], capsys)
    assert code == 0, err
    assert "names no label, so --test" in err and page.exists()

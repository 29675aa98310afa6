"""jiang-lda end to end on the bundled Adult example: API, certificate and CLI."""

import json

import pandas as pd
import pytest

from privrelease.cli.app import main
from privrelease.datasets import example_paths, load_example
from privrelease.release import release


@pytest.fixture(scope="module")
def adult_slice():
    df, schema = load_example("adult")
    return df.iloc[:2000].reset_index(drop=True), schema


def test_release_api_decodes_labelled_records(adult_slice):
    df, schema = adult_slice
    res = release(df, schema, mechanism="jiang-lda", epsilon=1.0, rng=0)
    assert list(res.data.columns) == schema.names
    assert len(res.data) == len(df)
    assert set(res.data["income"]) <= {"<=50K", ">50K"}
    c = res.certificate
    assert c.guarantee == "epsilon-DP" and c.epsilon == 1.0
    assert c.extra["n_classes"] == 2 and c.extra["differentially_private"] is True
    assert set(c.budget_split) == {"counts", "class_sums", "second_moment"}


def test_release_paper_faithful_certificate_says_not_private(adult_slice):
    df, schema = adult_slice
    res = release(df, schema, mechanism="jiang-lda", epsilon=1.0, rng=0, paper_faithful=True)
    c = res.certificate
    assert "NOT differentially private" in c.guarantee
    assert any("NOT differentially private" in n for n in c.notes)
    assert c.extra["differentially_private"] is False


def test_cli_release(tmp_path, adult_slice):
    df, _ = adult_slice
    inp = tmp_path / "in.csv"
    df.to_csv(inp, index=False)
    _, schema_path = example_paths("adult")
    out, cert = tmp_path / "out.csv", tmp_path / "cert.json"
    code = main(["release", str(inp), "--schema", str(schema_path), "--mechanism", "jiang-lda", "--epsilon", "0.5",
                 "--seed", "3", "--out", str(out), "--certificate", str(cert)])
    assert code in (0, None)
    rel = pd.read_csv(out)
    assert len(rel) == len(df) and "income" in rel.columns
    assert json.loads(cert.read_text())["mechanism"] == "jiang-lda"

"""Small real slices of the PCA-Gauss reproductions (CI) and the CLI path."""

from __future__ import annotations

import json

import pytest

from privrelease.datasets import shared_datasets_dir

NEEDS = {"pca-gauss-table2": ["gfe"], "pca-gauss-table3": ["hapt_features", "gas_drift"],
         "pca-gauss-table4": ["communities_crime"],
         "pca-gauss-fig1": ["gfe", "hapt_features", "communities_crime"]}


def _skip_without(folders):
    base = shared_datasets_dir()
    missing = [f for f in folders if base is None or not (base / f).is_dir()]
    if missing:
        pytest.skip(f"real data set(s) {missing} not available")


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("name", sorted(NEEDS))
def test_reproduction_quick_slice(name, tmp_path):
    _skip_without(NEEDS[name])
    from privrelease.experiments.registry import get_reproduction

    out = get_reproduction(name).run(tmp_path, quick=True, seed=0)
    assert (tmp_path / f"{name}.json").exists() and (tmp_path / f"{name}.png").exists()
    assert out["verdict"]
    data = json.loads((tmp_path / f"{name}.json").read_text())
    if name == "pca-gauss-table3":
        for task, res in data["ours"].items():
            real = res["Real data (non-private)"]["fixed"]
            assert 0.5 < real <= 1.0
            assert 0.0 <= res["PCA-Gauss + PubPCA"]["fixed"] <= 1.0
    if name == "pca-gauss-table4":
        r = data["ours"]["crime"]
        assert r["Real data (non-private)"]["fixed"] < 0.2  # target sd is 0.233
    if name == "pca-gauss-table2":
        assert -1 <= data["ours"]["Real data (non-private)"]["fixed"] <= 1


def test_cli_release_pca_gmm_on_adult(tmp_path):
    from privrelease.cli.app import main

    out = tmp_path / "out.csv"
    cert = tmp_path / "cert.json"
    rc = main(["release", "--example", "adult", "--mechanism", "pca-gmm", "--epsilon", "1", "--seed", "0",
               "--out", str(out), "--certificate", str(cert), "-p", "n_components=5"])
    assert rc in (0, None)
    c = json.loads(cert.read_text())
    assert c["mechanism"] == "pca-gmm" and c["extra"]["output_space"] == "original"
    import pandas as pd

    df = pd.read_csv(out)
    assert "income" in df.columns and len(df) > 1000


def test_cli_reproduce_lists_pca_gauss():
    from privrelease.experiments.registry import list_reproductions

    names = {r.name for r in list_reproductions()}
    assert {"pca-gauss-table2", "pca-gauss-table3", "pca-gauss-table4", "pca-gauss-fig1"} <= names

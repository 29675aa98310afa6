"""Owner-side perturbation and the Zhuang-Chang evaluation from the command line."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from cli_helpers import run_cli
from privrelease.datasets import shared_datasets_dir


@pytest.fixture
def labelled(tmp_path):
    rng = np.random.default_rng(0)
    n = 240
    act = rng.choice(["walk", "sit", "lie"], n)
    who = rng.choice(["ann", "bob"], n)
    df = pd.DataFrame({
        "f1": np.clip(0.5 + 0.25 * (act == "walk") - 0.25 * (act == "lie") + rng.normal(0, 0.08, n), 0, 1),
        "f2": np.clip(0.3 + 0.4 * (who == "bob") + rng.normal(0, 0.08, n), 0, 1),
        "f3": rng.random(n),
        "color": rng.choice(["red", "blue"], n),
        "activity": act,
        "subject": who,
    })
    schema = {"columns": {
        "f1": {"type": "numeric", "lower": 0.0, "upper": 1.0},
        "f2": {"type": "numeric", "lower": 0.0, "upper": 1.0},
        "f3": {"type": "numeric", "lower": 0.0, "upper": 1.0},
        "color": {"type": "categorical", "categories": ["red", "blue"]},
        "activity": {"type": "categorical", "categories": ["walk", "sit", "lie"]},
        "subject": {"type": "categorical", "categories": ["ann", "bob"]},
    }}
    paths = {"public": tmp_path / "public.csv", "records": tmp_path / "records.csv", "schema": tmp_path / "s.yaml",
             "all": tmp_path / "all.csv"}
    df.iloc[:160].to_csv(paths["public"], index=False)
    df.iloc[160:].drop(columns=["activity", "subject"]).to_csv(paths["records"], index=False)
    df.to_csv(paths["all"], index=False)
    paths["schema"].write_text(yaml.safe_dump(schema))
    return paths


@pytest.mark.parametrize("projection", ["jupa", "dca", "full-dimensional"])
def test_perturb_cli(labelled, tmp_path, capsys, projection):
    out, cert = tmp_path / "out.csv", tmp_path / "cert.json"
    code, _, err = run_cli(["perturb", str(labelled["records"]), "--public", str(labelled["public"]),
                            "--schema", str(labelled["schema"]), "--utility-label", "activity",
                            "--privacy-label", "subject", "--projection", projection, "--out", str(out),
                            "-p", "max_iter=200", "-p", "rho0=0.001" if projection == "jupa" else "max_iter=200",
                            "--seed", "1", "--certificate", str(cert)], capsys)
    assert code == 0, err
    z = pd.read_csv(out)
    k = 5 if projection == "full-dimensional" else 2  # 3 numeric + 2 one-hot columns; K = 3 activities - 1
    assert z.shape == (80, k) and np.isfinite(z.to_numpy()).all()
    c = json.loads(cert.read_text())
    assert c["guarantee"] == "none (empirical)" and c["epsilon"] is None
    assert c["extra"]["n_components"] == k and "flipped_fraction" not in c["extra"]
    # the exact share of changed labels is a fact of the owner's records: private diagnostics only
    private = cert.with_name(cert.stem + ".private-diagnostics.json")
    assert private.read_text().startswith('{\n  "warning": "PRIVATE')
    assert 0.0 <= json.loads(private.read_text())["flipped_fraction"] <= 1.0


def test_perturb_cli_refuses_unknown_label_and_parameter(labelled, tmp_path, capsys):
    base = ["perturb", str(labelled["records"]), "--public", str(labelled["public"]), "--schema",
            str(labelled["schema"]), "--privacy-label", "subject", "--out", str(tmp_path / "o.csv")]
    code, _, err = run_cli(base + ["--utility-label", "nope"], capsys)
    assert code != 0 and "nope" in err
    code, _, err = run_cli(base + ["--utility-label", "activity", "-p", "bogus=1"], capsys)
    assert code != 0 and "bogus" in err
    assert not (tmp_path / "o.csv").exists()


def test_reproduce_zhuang_table_on_any_csv(labelled, tmp_path, capsys):
    out = tmp_path / "res"
    code, stdout, err = run_cli(["reproduce", "zhuang-table", "--quick", "--data", str(labelled["all"]),
                                 "--schema", str(labelled["schema"]), "--utility-label", "activity",
                                 "--privacy-label", "subject", "--k", "2", "--per-combination", "25",
                                 "--out", str(out)], capsys)
    assert code == 0, err
    res = json.loads((out / "zhuang-table.json").read_text())
    assert (out / "zhuang-table.png").stat().st_size > 0
    assert res["k"] == 2 and res["settings"]["per_combination"] == 25 and res["chance"]["privacy"] == 50.0
    labels = [r["method"] for r in res["rows"]]
    assert "Full-Dimensional" in labels and "DCA" in labels
    for r in res["rows"]:
        for key in ("utility_coarse", "utility_fine", "privacy_coarse", "privacy_fine", "privacy_fine_aware"):
            assert 0.0 <= r[key] <= 100.0
    assert "mechanism-aware" in stdout
    # the utility label survives the JUPA projection on this easy table
    jupa = next(r for r in res["rows"] if r["method"].startswith("JUPA r=1,"))
    assert jupa["utility_coarse"] > 60
    # the Markdown table holds every row, ours beside the paper's diagnostics
    md = (out / "zhuang-table.md").read_text()
    assert all(f"| {lab} |" in md for lab in labels) and "commonest class" in md
    assert all(0.0 < r["fine_majority_rate"] <= 1.0 for r in res["rows"])


def test_reproduce_zhuang_update_switch(labelled, tmp_path, capsys):
    """--update selects the reading of the MMD update rule; an unknown one is refused before any work."""
    common = ["reproduce", "zhuang-table", "--quick", "--data", str(labelled["all"]), "--schema",
              str(labelled["schema"]), "--utility-label", "activity", "--privacy-label", "subject",
              "--per-combination", "20"]
    code, _, err = run_cli(common + ["--update", "gradient", "--out", str(tmp_path / "g")], capsys)
    assert code == 0, err
    res = json.loads((tmp_path / "g" / "zhuang-table.json").read_text())
    assert res["settings"]["mmd"]["update"] == "gradient"
    assert "(gradient update)" in (tmp_path / "g" / "zhuang-table.md").read_text()
    code, _, err = run_cli(common + ["--update", "momentum", "--out", str(tmp_path / "bad")], capsys)
    assert code != 0 and "momentum" in err
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("name", ["zhuang-table1", "zhuang-table2", "zhuang-table3"])
def test_named_tables_quick_slice(name, tmp_path):
    """A reduced real slice of each table (two rows, one repetition) through the registry."""
    base = shared_datasets_dir()
    folder = "hapt_features" if name == "zhuang-table1" else "adult"
    if base is None or not (base / folder).is_dir():
        pytest.skip(f"shared data set {folder} is not available")
    from privrelease.experiments import get_reproduction

    res = get_reproduction(name).run(tmp_path, quick=True, seed=0,
                                     methods=["Full-Dimensional", "JUPA r=1, r'=1"])
    assert (tmp_path / f"{name}.json").exists() and (tmp_path / f"{name}.png").exists()
    rows = {r["method"]: r for r in res["rows"]}
    assert set(rows) == {"Full-Dimensional", "JUPA r=1, r'=1"}
    for r in rows.values():
        assert r["paper"] is not None  # the paper's numbers sit beside ours
        assert r["utility_coarse"] > res["chance"]["utility"] + 10  # the utility target survives
        assert r["privacy_fine_aware"] is not None
    assert "mechanism-aware" in res["verdict"]


def test_perturb_keeps_a_clip_warning_in_its_private_diagnostics(labelled, tmp_path, capsys):
    """Issue 35, item 6: the owner's clipped values are warned about in the private diagnostics (marked
    private), not on the console, when a certificate is written."""
    records = pd.read_csv(labelled["records"])
    records.loc[0, "f1"] = 7.0
    records.to_csv(labelled["records"], index=False)
    cert = tmp_path / "cert.json"
    code, _, err = run_cli(["perturb", str(labelled["records"]), "--public", str(labelled["public"]),
                            "--schema", str(labelled["schema"]), "--utility-label", "activity",
                            "--privacy-label", "subject", "--projection", "pca", "--out", str(tmp_path / "o.csv"),
                            "-p", "max_iter=20", "--seed", "1", "--certificate", str(cert)], capsys)
    assert code == 0 and "clipped" not in err, err
    (held,) = json.loads(cert.with_name("cert.private-diagnostics.json").read_text())["warnings"]
    assert held.startswith("PRIVATE") and "'f1'" in held

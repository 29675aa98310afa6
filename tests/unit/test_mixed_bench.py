"""Pieces of the mixed-table benchmark: public cells, decoding, the person-level loader, the report (no peer needed); the peer helpers in their venvs (slow)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privrelease.errors import InputDataError
from privrelease.evaluation.fidelity import tvd_1way
from privrelease.experiments.mixed_bench import (
    diabetes130_persons,
    diabetes130_schema,
    from_cells,
    load_diabetes130,
    to_cells,
)
from privrelease.schema import Encoder, Schema
from repo_scripts import load_script

SCHEMA = Schema.from_dict({"columns": {
    "age": {"type": "numeric", "lower": 17, "upper": 90, "integer": True},
    "gain": {"type": "numeric", "lower": 0, "upper": 99999, "integer": True},
    "score": {"type": "numeric", "lower": -1.0, "upper": 1.0},
    "few": {"type": "numeric", "lower": 0, "upper": 3, "integer": True},
    "c": {"type": "categorical", "categories": ["a", "b", "c"]},
}})


@pytest.mark.parametrize("how", ["uniform", "midpoint"])
def test_decoded_values_fall_in_the_released_bin(how):
    """Peers' bins decode to values that the metric puts back in the same bin (so TVD sees the peer's own bins)."""
    rng = np.random.default_rng(0)
    n = 3000
    cells = pd.DataFrame({"age": rng.integers(0, 20, n), "gain": rng.integers(0, 20, n),
                          "score": rng.integers(0, 20, n), "few": rng.integers(0, 20, n),
                          "c": rng.integers(0, 3, n)})
    dec = from_cells(cells, SCHEMA, bins=20, how=how, rng=1)
    back = to_cells(dec, SCHEMA, bins=20)
    # 'few' has 4 integers for 20 bins: an empty bin decodes to its rounded midpoint, which lies elsewhere
    for col in ("age", "gain", "score", "c"):
        assert (back[col] == cells[col]).all(), col
    for col in ("age", "gain", "few"):
        assert (dec[col] == np.round(dec[col])).all()
    assert dec["c"].isin(["a", "b", "c"]).all()
    if how == "uniform":  # values spread inside the bins: more distinct values than bins
        assert dec["score"].nunique() > 1000 and dec["age"].nunique() > 20


def test_uniform_integer_decoding_covers_every_integer_of_a_bin():
    one = Schema.from_dict({"columns": {"age": {"type": "numeric", "lower": 17, "upper": 90, "integer": True}}})
    dec = from_cells(pd.DataFrame({"age": np.zeros(4000, dtype=int)}), one, bins=20, how="uniform", rng=0)
    # bin 0 of [17, 90] in 20 bins has width 3.65: the integers 17, 18, 19, 20
    assert sorted(dec["age"].unique()) == [17, 18, 19, 20]


def test_to_cells_refuses_undeclared_levels_and_clips_numbers():
    df = pd.DataFrame({"age": [5, 200], "gain": [0, 0], "score": [0.0, 0.0], "few": [0, 0], "c": ["a", "zz"]})
    with pytest.raises(InputDataError, match="column 'c'.*'zz'"):
        to_cells(df, SCHEMA)
    ok = to_cells(df.assign(c=["a", "b"]), SCHEMA)
    assert ok["age"].tolist() == [0, 19]


def _raw_encounters():
    schema = diabetes130_schema()
    row = {c.name: (c.categories[0] if c.kind == "categorical" else str(int(c.lower) + 1)) for c in schema.columns}
    rows = []
    for enc, patient, diag, readm, race in ((30, 7, "250.83", "<30", "?"), (10, 7, "428", "NO", "Caucasian"),
                                            (20, 8, "V57", ">30", "Asian"), (40, 9, "?", "NO", "Other")):
        r = dict(row, encounter_id=enc, patient_nbr=patient, diag_1=diag, readmitted=readm, race=race)
        rows.append({k: str(v) for k, v in r.items()})
    return pd.DataFrame(rows)


def test_diabetes130_persons_keeps_the_first_encounter_of_each_patient():
    persons = diabetes130_persons(_raw_encounters())
    schema = diabetes130_schema()
    assert list(persons.columns) == schema.names and len(persons) == 3
    assert persons["diag_1"].tolist() == ["Circulatory", "Other", "Missing"]  # patient 7: encounter 10, not 30
    assert persons["readmitted"].tolist() == ["NO", "YES", "NO"]
    assert persons["race"].tolist() == ["Caucasian", "Asian", "Other"]
    Encoder(schema).encode(persons, on_out_of_bounds="error")  # every value is declared
    raw = _raw_encounters().assign(race="?")
    assert diabetes130_persons(raw)["race"].tolist() == ["Missing"] * 3


def test_load_diabetes130_person_split(shared_data):
    if not (shared_data / "diabetes130" / "diabetic_data.csv.gz").exists():
        pytest.skip("diabetes130 is not in the shared data sets folder")
    train, test, schema, label = load_diabetes130(shared_data)
    assert len(train) + len(test) == 71518 and len(test) == round(0.2 * 71518)
    assert label == "readmitted" and set(train[label]) == {"NO", "YES"}
    Encoder(schema).encode(train)  # every level is declared
    assert max(tvd_1way(train, test, schema).values()) < 0.02  # a random split by person


def test_report_marks_timeouts_and_wide_tables():
    bench = load_script("benchmarks/bench_mixed.py")
    runs = [{"status": "ok", "seed": 0, "wall_seconds": 2.0, "cpu_seconds": 1.0,
             "metrics": {"lr_accuracy": 0.8, "lr_auc": 0.85, "tvd_1way": 0.1}},
            {"status": "ok", "seed": 1, "wall_seconds": 4.0, "cpu_seconds": 1.0,
             "metrics": {"lr_accuracy": 0.7, "lr_auc": 0.75, "tvd_1way": 0.3}},
            {"status": "timeout", "seed": 2, "time_bound_seconds": 600}]
    s = bench.summarize(runs)
    assert s["n_ok"] == 2 and s["lr_accuracy"][0] == pytest.approx(0.75)
    assert s["lr_accuracy"][1] == pytest.approx(np.std([0.8, 0.7], ddof=1))
    real = {m: {"accuracy": 0.84, "auc": 0.9} for m in ("logistic_regression", "gradient_boosting")}
    result = {"config": {"command": "bench_mixed.py", "epsilon": 1.0, "delta": 1e-6, "seeds": [0, 1, 2],
                         "bins_1way": 20, "peer_bins": 20, "decode": "uniform", "aim_timeout": 600,
                         "privbayes_timeout": 600, "started_utc": "t", "machine": "m", "versions": {}},
              "datasets": {"adult": {"n_train": 10, "n_test": 5, "n_columns": 3, "n_numeric": 1, "label": "y",
                                     "label_levels": 2, "sdmetrics": True, "real": real,
                                     "releases": {"aim": {"kind": "peer", "runs": runs, "summary": s},
                                                  "mst": {"kind": "peer", "runs": [], "not_run": "not run: wide"}}}}}
    md = bench.markdown(result)
    assert "| aim | 0.750 ± 0.071 | 0.800 ± 0.071 |" in md
    assert "2/3 ok; seed 2: timeout at 600 s" in md
    assert "| mst | not run: wide |" in md and "(still running or interrupted)" in md


@pytest.mark.slow
@pytest.mark.parametrize("peer", ["mst", "privbayes", "mst-mbi2", "aim-mbi2", "aim-opendp"])
def test_peer_releases_the_public_cells(tmp_path, peer):
    """A peer run through its helper in its own venv returns codes inside the public domain, with the joint kept."""
    import argparse
    import os

    bench = load_script("benchmarks/bench_mixed.py")
    root = Path(os.environ.get("PRIVRELEASE_PEER_VENVS", "/work/peer-venvs"))
    if not (root / bench.PEERS[peer][0] / "bin" / "python").exists():
        pytest.skip(f"the {peer} venv is not under {root} (bench_mixed.py creates it on first use)")
    schema = Schema.from_dict({"columns": {
        "x": {"type": "numeric", "lower": 0, "upper": 1},
        "c": {"type": "categorical", "categories": ["a", "b", "c", "never"]},
        "y": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}})
    rng = np.random.default_rng(0)
    c = rng.choice(["a", "b", "c"], 4000)
    df = pd.DataFrame({"x": rng.random(4000), "c": c, "y": np.where(c == "a", "yes", "no")})
    args = argparse.Namespace(peer_venvs=root, epsilon=1.0, delta=1e-6, privbayes_degree=2, aim_timeout=600,
                              privbayes_timeout=600, peer_timeout=600)
    r = bench.run_peer(peer, to_cells(df, schema, 5), schema, 5, args, 0, tmp_path)
    assert r["status"] == "ok", r
    codes = r["codes"]
    assert codes.shape == (4000, 3) and codes["x"].between(0, 4).all() and codes["c"].between(0, 3).all()
    released = from_cells(codes, schema, 5, rng=0)
    from privrelease.evaluation.fidelity import tvd_2way

    assert tvd_2way(df, released, schema)[("c", "y")] < 0.1


def test_join_concatenates_runs_split_across_files():
    join = load_script("benchmarks/join_mixed_results.py")

    def part(seed, acc, peer_versions):
        run = {"status": "ok", "seed": seed, "metrics": {"lr_accuracy": acc}}
        return {"config": {"command": f"bench_mixed.py --seed-list {seed}", "started_utc": f"t{seed}",
                           "elapsed_seconds": 10.0 * (seed + 1), "peers": ["aim-mbi2"], "ours": [],
                           "versions": {}, "peer_versions": peer_versions},
                "datasets": {"adult": {"n_train": 10, "releases": {"aim-mbi2": {"kind": "peer", "runs": [run]}}}}}

    out = join.join([part(1, 0.7, {"aim-mbi2": {"mbi": "2.0.0"}}), part(0, 0.8, {"mst-mbi2": {"mbi": "2.0.0"}})])
    rel = out["datasets"]["adult"]["releases"]["aim-mbi2"]
    assert [r["seed"] for r in rel["runs"]] == [0, 1] and rel["summary"]["n_ok"] == 2
    assert rel["summary"]["lr_accuracy"][0] == pytest.approx(0.75)
    assert set(out["config"]["peer_versions"]) == {"aim-mbi2", "mst-mbi2"} and out["config"]["seeds"] == [0, 1]
    assert out["config"]["started_utc"] == "t0" and out["config"]["elapsed_seconds"] == 20.0
    assert len(out["config"]["parts"]) == 2 and "finished_utc" not in out["config"]


def _toy_table(rng, n: int) -> pd.DataFrame:
    """A table of SCHEMA whose columns depend on age (the benchmark scripts' tests)."""
    age = rng.integers(17, 91, n)
    return pd.DataFrame({"age": age, "gain": np.where(age > 50, 60000, 0), "score": rng.uniform(-1, 1, n),
                         "few": age % 4, "c": np.where(age > 40, "a", "b")})


def test_pair_gaps_sees_only_the_pair_a_release_breaks():
    """benchmarks/pair_gaps.py: a release equal to the real table has no gap; shuffling one column
    breaks exactly its pairs."""
    pair_table = load_script("benchmarks/pair_gaps.py").pair_table
    rng = np.random.default_rng(0)
    real = _toy_table(rng, 2000)
    broken = real.assign(c=rng.permutation(real["c"].to_numpy()))
    one = real.assign(c="a")  # moves the records of level b: every pair with c is off by P(c = b) in TVD
    t = pair_table(real, {"same": real, "broken": broken, "one": one}, SCHEMA, "c")
    assert t["same"].max() == 0.0
    assert t.loc[t["a"].eq("few") & t["b"].eq("c"), "one"].item() == pytest.approx((real["c"] == "b").mean())
    with_c = t["a"].eq("c") | t["b"].eq("c")
    assert t.loc[~with_c, "broken"].max() == 0.0 and t.loc[with_c, "broken"].min() > 0.01
    assert t["label"].sum() == 4  # the label c with each of the four features
    assert set(t["kind"]) == {"nn", "cn"}


def test_census_small_is_the_declared_cut_of_census_kdd(shared_data, monkeypatch):
    if not (shared_data / "census_income_kdd" / "census-income.test.gz").exists():
        pytest.skip("census_income_kdd is not in the shared data sets folder")
    from privrelease.experiments.mixed_tables import CENSUS_SMALL_COLUMNS, CENSUS_SMALL_TRAIN, load_census_kdd, load_census_small

    monkeypatch.setenv("PRIVRELEASE_DATA", str(shared_data))
    train, test, schema, label = load_census_small(0)
    assert set(schema.names) == set(CENSUS_SMALL_COLUMNS) and list(train.columns) == schema.names == list(test.columns)
    assert len(train) == CENSUS_SMALL_TRAIN and label == "income"
    full = load_census_kdd(0, max_train=CENSUS_SMALL_TRAIN)[0]
    assert train.equals(full[schema.names])  # the same records as census_kdd's tuning split, fewer columns
    Encoder(schema).encode(train)


def test_a_tuning_table_relabelled_and_our_parameters_parsed(monkeypatch):
    """``name:column`` gives the table with that categorical column as its label (the former label a feature);
    ``mechanism@key=value`` parses numbers and booleans."""
    bench = load_script("benchmarks/bench_mixed.py")
    schema = Schema.from_dict({"columns": {"a": {"type": "categorical", "categories": ["x", "y", "z"]},
                                           "b": {"type": "numeric", "lower": 0, "upper": 1},
                                           "y": {"type": "categorical", "categories": ["no", "yes"], "role": "label"}}})
    monkeypatch.setattr(bench, "_load", lambda name, data_dir: ("train", "test", schema, "y"))
    _, _, relabelled, label = bench.load("t:a", None)
    assert label == "a" and relabelled.label.name == "a" and relabelled["y"].role is None
    assert bench.load("t", None)[3] == "y"
    with pytest.raises(SystemExit):
        bench.load("t:b", None)
    assert bench.parse_ours("gauss-copula@by_label=false+branching=8") == ("gauss-copula",
                                                                          {"by_label": False, "branching": 8})

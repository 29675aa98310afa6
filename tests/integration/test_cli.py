"""The CLI end to end: real release of the bundled Adult example, and bad input."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from cli_helpers import run_cli
from privrelease.datasets import example_paths
from privrelease.schema import Encoder, Schema


@pytest.mark.parametrize("mechanism", ["jiang-pca", "laplace"])
def test_release_adult_example(tmp_path, capsys, mechanism):
    out, cert = tmp_path / "rel.csv", tmp_path / "cert.json"
    code, _, err = run_cli(["release", "--example", "adult", "--mechanism", mechanism, "--epsilon", "1",
                            "--out", str(out), "--certificate", str(cert)], capsys)
    assert code == 0, err
    data_path, schema_path = example_paths("adult")
    schema = Schema.from_yaml(schema_path)
    df = pd.read_csv(out, dtype={c.name: str for c in schema.categorical})
    assert list(df.columns) == schema.names and len(df) == 30162
    Encoder(schema).encode(df, on_out_of_bounds="error")
    c = json.loads(cert.read_text())
    assert c["mechanism"] == mechanism and c["epsilon"] == 1.0 and c["guarantee"] == "epsilon-DP"
    assert c["randomness"].startswith("secure")
    for key in ("neighbouring_relation", "budget_split", "sensitivities", "n_treated_as_public",
                "package_version", "output_sha256"):
        assert key in c
    # exact private facts are kept apart, in a file that says it is private
    assert "clip_counts" not in c and "input_sha256" not in c
    diag = tmp_path / "cert.private-diagnostics.json"
    assert diag.read_text().splitlines()[0].startswith('{"warning": "PRIVATE')
    assert {"clip_counts", "input_sha256"} <= set(json.loads(diag.read_text()))
    import hashlib

    assert c["output_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()


def test_seeded_release_is_reproducible_and_labelled(tmp_path, capsys):
    outs = []
    for i in range(2):
        out, cert = tmp_path / f"r{i}.parquet", tmp_path / f"c{i}.json"
        code, _, err = run_cli(["release", "--example", "adult", "-m", "jiang-pca", "-e", "0.5", "--seed", "3",
                                "--param", "n_components=3", "--out", str(out), "--certificate", str(cert)], capsys)
        assert code == 0, err
        outs.append(pd.read_parquet(out))
        assert "not for real releases" in json.loads(cert.read_text())["randomness"]
    pd.testing.assert_frame_equal(*outs)


def test_mechanisms_listing(capsys):
    code, out, _ = run_cli(["mechanisms", "--json"], capsys)
    infos = {m["name"]: m for m in json.loads(out)}
    assert infos["jiang-pca"]["guarantee"] == "epsilon-DP"
    assert "R1" in infos["laplace"]["neighbouring_relation"]


def test_schema_draft_warns(tmp_path, capsys):
    data_path, _ = example_paths("adult")
    code, out, err = run_cli(["schema", "draft", str(data_path), "--label", "income"], capsys)
    assert code == 0 and "not private" in err.lower()
    import yaml

    d = yaml.safe_load(out)
    assert d["columns"]["income"]["role"] == "label"
    Schema.from_dict(d)


@pytest.fixture
def files(tmp_path, small_schema, small_df):
    sp = tmp_path / "s.yaml"
    sp.write_text(small_schema.to_yaml())
    good = tmp_path / "good.csv"
    small_df.to_csv(good, index=False)
    return tmp_path, sp, good, small_df


def _bad_cases(tmp, df):
    cases = {}
    (tmp / "empty.csv").write_text("")
    cases["empty"] = (tmp / "empty.csv", [], "empty")
    df.iloc[:0].to_csv(tmp / "header.csv", index=False)
    cases["header only"] = (tmp / "header.csv", [], "no records")
    df.iloc[:1].to_csv(tmp / "one.csv", index=False)
    cases["one row"] = (tmp / "one.csv", [], "at least 2")
    d = df.copy(); d.loc[3, "score"] = None; d.to_csv(tmp / "nan.csv", index=False)
    cases["nan"] = (tmp / "nan.csv", [], "missing value")
    d = df.copy(); d.loc[3, "color"] = "purple"; d.to_csv(tmp / "unk.csv", index=False)
    cases["unknown category"] = (tmp / "unk.csv", [], "purple")
    d = df.copy(); d.loc[3, "age"] = 500; d.to_csv(tmp / "oob.csv", index=False)
    cases["out of bounds"] = (tmp / "oob.csv", ["--on-out-of-bounds", "error"], "outside the declared bounds")
    d = df.copy().astype({"age": object}); d.loc[3, "age"] = "old"; d.to_csv(tmp / "text.csv", index=False)
    cases["wrong type"] = (tmp / "text.csv", [], "non-numeric")
    d = df.drop(columns=["color"]); d.to_csv(tmp / "nocol.csv", index=False)
    cases["missing column"] = (tmp / "nocol.csv", [], "no column")
    df.head(5).to_csv(tmp / "small.csv", index=False)
    cases["n smaller than p"] = (tmp / "small.csv", [], "needs n > p")
    cases["no file"] = (tmp / "absent.csv", [], "does not exist")
    return cases


@pytest.mark.parametrize("case", ["empty", "header only", "one row", "nan", "unknown category", "out of bounds",
                                  "wrong type", "missing column", "n smaller than p", "no file"])
def test_bad_input_one_line_error_no_output(files, capsys, case):
    tmp, sp, _, df = files
    inp, extra, msg = _bad_cases(tmp, df)[case]
    out = tmp / "out.csv"
    code, _, err = run_cli(["release", str(inp), "--schema", str(sp), "-m", "jiang-pca", "-e", "1", "--out", str(out),
                            "--certificate", str(tmp / "c.json")] + extra, capsys)
    assert code == 2
    lines = [l for l in err.strip().splitlines() if l.startswith("error:")]
    assert len(lines) == 1 and msg in lines[0], err
    assert "Traceback" not in err
    assert not out.exists() and not (tmp / "c.json").exists()
    assert not list(tmp.glob(".out.csv*"))  # no temporary file left behind


@pytest.mark.parametrize("args, msg", [
    (["-e", "0"], "epsilon"), (["-e", "-1"], "epsilon"), (["-e", "nan"], "epsilon"),
    (["-e", "1", "-m", "no-such"], "unknown mechanism"),
    (["-e", "1", "--param", "n_components=999"], "n_components"),
    (["-e", "1", "--param", "bogus=1"], "no parameter"),
])
def test_bad_parameters(files, capsys, args, msg):
    tmp, sp, good, _ = files
    out = tmp / "out.csv"
    code, _, err = run_cli(["release", str(good), "--schema", str(sp), "--out", str(out)] + args, capsys)
    assert code == 2 and msg in err and "Traceback" not in err
    assert not out.exists()


def test_bad_schema_file(files, capsys):
    tmp, _, good, _ = files
    bad = tmp / "bad.yaml"
    bad.write_text("columns: {a: {type: numeric, lower: 3, upper: 1}}")
    code, _, err = run_cli(["release", str(good), "--schema", str(bad), "-e", "1", "--out", str(tmp / "o.csv")], capsys)
    assert code == 2 and "smaller than upper" in err


def test_installed_entry_point_help():
    """The console script's module runs as a program (what `privrelease --help` does)."""
    r = subprocess.run([sys.executable, "-m", "privrelease.cli.app", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "release" in r.stdout


def test_help_leads_with_the_default_and_the_release_workflow(capsys):
    """``privrelease --help`` says what the tool does, names the default mechanism, and lists the
    commands of a release (release first; schema, evaluate, report, ledger) before the papers' own."""
    code, out, _ = run_cli(["--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "gauss-copula" in text and "differential privacy" in text
    commands = " ".join(out[out.index("Commands"):].replace("│", " ").split())
    workflow = [commands.index(f" {name} ") for name in ("release", "schema", "evaluate", "report", "ledger")]
    papers = [commands.index(f" {name} ") for name in ("reproduce", "perturb", "distributional-privacy")]
    assert workflow[0] == min(workflow) and max(workflow) < min(papers), out


def test_reproduce_list_and_fig1(tmp_path, capsys):
    code, out, _ = run_cli(["reproduce", "--list"], capsys)
    assert "jiang-fig1" in out
    code, out, err = run_cli(["reproduce", "jiang-fig1", "--quick", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    res = json.loads((tmp_path / "jiang-fig1.json").read_text())
    assert res["paper"]["mse_attribute_wise"] == 6197.27
    assert (tmp_path / "jiang-fig1.png").stat().st_size > 1000
    assert "lower MSE at every epsilon" in res["verdict"]


def test_interrupt_leaves_nothing(files, capsys, monkeypatch):
    """Ctrl-C during a release: exit 130, no output, no temporary file."""
    from privrelease.mechanisms import JiangPCA

    tmp, sp, good, _ = files

    def boom(self, X):
        raise KeyboardInterrupt

    monkeypatch.setattr(JiangPCA, "transform", boom)
    out = tmp / "out.csv"
    code, _, err = run_cli(["release", str(good), "--schema", str(sp), "-m", "jiang-pca", "-e", "1", "--out",
                            str(out), "--certificate", str(tmp / "c.json")], capsys)
    assert code == 130 and "nothing was written" in err
    assert not out.exists() and not (tmp / "c.json").exists() and not list(tmp.glob(".out.csv*"))


def test_version_and_usage_errors(capsys):
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and out.strip()
    code, _, err = run_cli(["release", "--bogus"], capsys)
    assert code == 2 and "bogus" in err


def test_a_param_that_the_release_itself_takes_is_refused_in_one_line(tmp_path, capsys):
    """``--param delta=1e-6`` reached release_file twice: an internal TypeError (exit 1)."""
    from cli_helpers import run_cli

    code, _, err = run_cli(["release", "--example", "adult", "-e", "1", "--seed", "0", "--param", "delta=1e-6",
                            "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 2 and "--param delta=... is not a mechanism parameter" in err and "--delta" in err, err
    assert len(err.strip().splitlines()) <= 2 and "TypeError" not in err and not (tmp_path / "o.csv").exists()


def test_the_release_options_reach_the_pipeline_as_one_typed_value(tmp_path, capsys, monkeypatch):
    """The CLI builds the release's own options once (:class:`ReleaseOptions`) and hands that value
    down, with the mechanism's parameters apart; ``release_file``'s keywords build the same value."""
    import contextlib
    import dataclasses

    from privrelease.release import pipeline
    from privrelease.release.options import ReleaseOptions

    class Captured(Exception):
        pass

    seen = []

    def capture(*args, **kw):
        seen.append((args, kw))
        raise Captured

    monkeypatch.setattr(pipeline, "run_release", capture)
    with contextlib.suppress(Captured):
        run_cli(["release", "--example", "adult", "-e", "0.5", "--delta", "1e-7", "--seed", "3", "--chunk-rows",
                 "500", "--param", "n_components=2", "--out", str(tmp_path / "o.csv")], capsys)
    (args, kw), = seen
    opts = kw["options"]
    assert isinstance(opts, ReleaseOptions)
    assert (opts.delta, opts.rng, opts.chunk_rows, opts.engine, opts.overwrite) == (1e-7, 3, 500, "local", False)
    assert args[4] == 0.5 and kw["params"] == {"n_components": 2}
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.delta = 1.0
    seen.clear()
    with contextlib.suppress(Captured):
        pipeline.release_file("in.csv", None, tmp_path / "o.csv", "laplace", 1.0, delta=1e-7, rng=3, chunk_rows=500,
                              n_components=2)
    assert seen[0][1]["options"] == opts and seen[0][1]["params"] == {"n_components": 2}

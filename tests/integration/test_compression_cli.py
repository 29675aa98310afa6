"""The compression mechanism end to end: CLI refusal rules, release API, certificate wording."""

import json

import numpy as np
import pandas as pd
import pytest

from privrelease.cli.app import main
from privrelease.datasets import load_example
from privrelease.errors import ParameterError
from privrelease.release import release


def _run(args):
    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code


def test_cli_requires_acknowledgement_and_refuses_epsilon(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert _run(["release", "--example", "adult", "-m", "compression", "--out", str(out), "--seed", "1"]) == 2
    assert "NOT differential privacy" in capsys.readouterr().err
    assert _run(["release", "--example", "adult", "-m", "compression", "--out", str(out), "--seed", "1",
                 "--accept-distributional-privacy", "--epsilon", "1"]) == 2
    assert "no --epsilon" in capsys.readouterr().err
    assert not out.exists()


def test_cli_release_writes_m_rows_and_certificate(tmp_path):
    out, cert = tmp_path / "out.csv", tmp_path / "cert.json"
    main_args = ["release", "--example", "adult", "-m", "compression", "--out", str(out), "-c", str(cert),
                 "--seed", "1", "--accept-distributional-privacy", "--param", "m=400", "--chunk-rows", "7000"]
    try:
        main(main_args)
    except SystemExit as e:
        assert e.code in (0, None)
    df = pd.read_csv(out)
    c = json.loads(cert.read_text())
    assert len(df) == 400 and c["n_output_records"] == 400
    assert c["guarantee"] == "distributional" and c["epsilon"] is None
    assert "NOT differential privacy" in c["extra"]["explanation"]
    assert c["extra"]["draws"] == 1 + c["extra"]["rejected_draws"]
    assert c["n_input_records"] == 30162
    assert "age" in df.columns  # encoded column names


def test_api_release_and_epsilon_refused():
    df, schema = load_example("adult")
    df = df.head(3000)
    res = release(df, schema, mechanism="compression", epsilon=None, m=300, rng=0)
    assert res.data.shape[0] == 300
    assert res.certificate.guarantee == "distributional"
    with pytest.raises(ParameterError, match="takes no epsilon"):
        release(df, schema, mechanism="compression", epsilon=1.0, m=300, rng=0)
    # the file and in-memory paths agree (same seed, same blocks)
    assert np.isfinite(res.data.to_numpy(dtype=float)).all()


def test_mechanisms_lists_explanation(capsys):
    code = None
    try:
        main(["mechanisms"])
    except SystemExit as e:
        code = e.code
    assert code in (None, 0)
    out = capsys.readouterr().out
    assert "Distributional privacy is NOT differential privacy" in out
    assert "--param m=...: number of released rows" in out


def test_distributional_privacy_command(capsys):
    code = None
    try:
        main(["distributional-privacy", "--n", "1000000", "--p", "50", "--m", "2000", "--json"])
    except SystemExit as e:
        code = e.code
    assert code in (None, 0)
    r = json.loads(capsys.readouterr().out)
    assert r["alpha_bound"] > 1 and r["conditions"]["lemma_IV4_min_m"] == 376
    try:
        main(["distributional-privacy", "--n", "1000000", "--p", "5", "--m", "400"])
    except SystemExit:
        pass
    assert "NOT differential privacy" in capsys.readouterr().out

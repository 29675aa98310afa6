"""The mechanism listing a user reads before choosing ``--param`` values."""

import json

from cli_helpers import run_cli


def test_listing_explains_every_param(capsys):
    """Pins ``parameters: null`` for 15 of 16 mechanisms in ``privrelease mechanisms --json``."""
    code, out, _ = run_cli(["mechanisms", "--json"], capsys)
    assert code == 0
    infos = json.loads(out)
    assert all(i["parameters"] for i in infos), [i["name"] for i in infos if not i["parameters"]]
    jp = {i["name"]: i for i in infos}["jiang-pca"]["parameters"]
    assert "n_components" in jp and len(jp["n_components"]) > 20


def test_text_listing_shows_params_with_their_flags(capsys):
    code, out, _ = run_cli(["mechanisms"], capsys)
    assert code == 0
    assert "--param n_components=...:" in out and "--epsilon:" in out and "--seed:" in out
    assert "--param domain" not in out and "--param rng" not in out  # set by the release, not by --param


def test_reduced_space_release_says_so(tmp_path, capsys):
    """Pins ``pca-gauss`` writing pc1..pc5 without saying that these are not the schema's columns."""
    out = tmp_path / "pg.csv"
    code, _, err = run_cli(["release", "--example", "adult", "-m", "pca-gauss", "-e", "1", "--seed", "0",
                            "--out", str(out)], capsys)
    assert code == 0, err
    assert out.read_text().splitlines()[0] == "pc1,pc2,pc3,pc4,pc5"
    (note,) = [line for line in err.splitlines() if line.startswith("note: ")]
    assert "pc1, pc2, pc3, ..., pc5" in note and "NOT the schema's columns" in note and "pca_source=laplace" in note
    code, listing, _ = run_cli(["mechanisms"], capsys)
    block = listing.split("pca-gauss ", 1)[1].split("pca-gauss-supervised", 1)[0]
    assert "columns: pc1..pcP, the reduced space, NOT the schema's columns" in block


def test_schema_column_release_has_no_note(tmp_path, capsys):
    for mechanism in ("laplace", "jiang-lda"):
        code, _, err = run_cli(["release", "--example", "adult", "-m", mechanism, "-e", "1", "--seed", "0",
                                "--out", str(tmp_path / f"{mechanism}.csv")], capsys)
        assert code == 0 and "note:" not in err, err

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

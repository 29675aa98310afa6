"""``privrelease reproduce NAME --quick`` never replaces a committed full result unless told to."""

import json

from cli_helpers import run_cli

FULL = {"name": "jiang-fig1", "quick": False, "trials_per_point": 500, "marker": "committed full result"}


def _setup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    full = tmp_path / "results" / "jiang-fig1.json"
    full.parent.mkdir()
    full.write_text(json.dumps(FULL))
    return full


def test_quick_run_from_the_repository_root_leaves_full_results_alone(tmp_path, monkeypatch, capsys):
    """Pins ``reproduce NAME --quick`` from the repository root overwriting the committed results/NAME.json."""
    full = _setup(tmp_path, monkeypatch)
    code, _, err = run_cli(["reproduce", "jiang-fig1", "--quick"], capsys)
    assert code == 0, err
    assert json.loads(full.read_text()) == FULL
    quick = json.loads((tmp_path / "results" / "quick" / "jiang-fig1.json").read_text())
    assert quick["quick"] is True and "results/quick" in err


def test_quick_run_into_a_folder_with_a_full_result_is_refused(tmp_path, monkeypatch, capsys):
    full = _setup(tmp_path, monkeypatch)
    code, out, err = run_cli(["reproduce", "jiang-fig1", "--quick", "--out", "results"], capsys)
    assert code == 2 and "holds a full result" in err and "--overwrite" in err
    assert json.loads(full.read_text()) == FULL and not (tmp_path / "results" / "jiang-fig1.png").exists()
    code, _, err = run_cli(["reproduce", "jiang-fig1", "--quick", "--out", "results", "--overwrite"], capsys)
    assert code == 0, err
    assert json.loads(full.read_text())["quick"] is True
    # a quick result may be replaced by another quick run without --overwrite
    code, _, err = run_cli(["reproduce", "jiang-fig1", "--quick", "--out", "results"], capsys)
    assert code == 0, err

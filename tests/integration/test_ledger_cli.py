"""The budget ledger end to end: release_file / release / the CLI on a slice of the bundled Adult data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from privrelease.accounting import Ledger
from privrelease.cli.app import main
from privrelease.datasets import example_paths
from privrelease.errors import BudgetExceededError
from privrelease.mechanisms.baselines.laplace import LaplaceIdentity
from privrelease.release import release, release_file
from privrelease.schema import Schema

SRC = Path(__file__).resolve().parents[2] / "src"


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


# ---- library -----------------------------------------------------------------------------------

def test_refused_release_writes_nothing(tmp_path, adult_slice):
    data, schema_path = adult_slice
    schema = Schema.from_yaml(schema_path)
    led = tmp_path / "budget.sqlite"
    release_file(data, schema, tmp_path / "a.csv", "laplace", 0.6, rng=1, ledger=led, dataset_id="adult",
                 budget=1.0)
    before = _files(tmp_path)
    with pytest.raises(BudgetExceededError, match="spent epsilon=0.6, requested epsilon=0.6, total epsilon=1"):
        release_file(data, schema, tmp_path / "b.csv", "laplace", 0.6, rng=1, ledger=led, dataset_id="adult",
                     certificate_path=tmp_path / "b.json")
    assert _files(tmp_path) == before  # no output, no certificate, no temporary file
    with pytest.raises(BudgetExceededError):
        release(pd.read_csv(data), schema, "laplace", 0.6, rng=1, ledger=led, dataset_id="adult")
    assert [h["status"] for h in Ledger(led).history("adult")] == ["committed"]


def test_total_equals_declared_budget_after_several_releases(tmp_path, adult_slice):
    data, schema_path = adult_slice
    schema = Schema.from_yaml(schema_path)
    led = Ledger(tmp_path / "budget.sqlite")
    df = pd.read_csv(data)
    release_file(data, schema, tmp_path / "0.csv", "laplace", 0.1, rng=0, ledger=led, dataset_id="adult", budget=0.7)
    release_file(data, schema, tmp_path / "1.parquet", "jiang-pca", 0.2, rng=0, ledger=led, dataset_id="adult",
                 n_components=3)
    res = release(df, schema, "jiang-pca", 0.3, rng=0, ledger=led, dataset_id="adult", n_components=2)
    assert res.certificate.epsilon == 0.3
    release(df, schema, "laplace", 0.1, rng=0, ledger=str(led.path), dataset_id="adult", budget=0.7)
    assert led.spent("adult").epsilon == pytest.approx(0.7, abs=1e-12)
    hist = led.history("adult")
    assert [h["mechanism"] for h in hist] == ["laplace", "jiang-pca", "jiang-pca", "laplace"]
    assert [h["details"].get("n_components") for h in hist] == [None, 3, 2, None]
    assert all(h["status"] == "committed" for h in hist)
    with pytest.raises(BudgetExceededError):
        release(df, schema, "laplace", 0.01, rng=0, ledger=led, dataset_id="adult")


def test_mechanism_failure_midway_charges_nothing(tmp_path, adult_slice, monkeypatch):
    data, schema_path = adult_slice
    schema = Schema.from_yaml(schema_path)
    led = Ledger(tmp_path / "budget.sqlite")

    def broken(self, stats, p=None):
        raise FloatingPointError("eigendecomposition failed")

    monkeypatch.setattr(LaplaceIdentity, "fit_stats", broken)
    with pytest.raises(FloatingPointError):
        release_file(data, schema, tmp_path / "out.csv", "laplace", 0.9, rng=0, ledger=led, dataset_id="adult",
                     budget=1.0)
    assert not (tmp_path / "out.csv").exists()
    (h,) = led.history("adult")
    assert h["status"] == "cancelled" and "FloatingPointError" in h["note"]
    assert led.spent("adult").epsilon == 0.0


def test_unwritable_output_charges_nothing(tmp_path, adult_slice):
    """An unwritable output folder is found before the ledger is charged (nothing reserved at all)."""
    from privrelease.errors import OutputError

    data, schema_path = adult_slice
    schema = Schema.from_yaml(schema_path)
    led = Ledger(tmp_path / "budget.sqlite")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the output folder should be")
    with pytest.raises(OutputError):
        release_file(data, schema, blocker / "out.csv", "laplace", 0.9, rng=0, ledger=led, dataset_id="adult",
                     budget=1.0)
    assert _files(tmp_path) - {"budget.sqlite", "budget.sqlite-wal", "budget.sqlite-shm"} == {"not-a-folder"}
    assert led.history("adult") == []
    release_file(data, schema, tmp_path / "out.csv", "laplace", 0.9, rng=0, ledger=led, dataset_id="adult",
                 budget=1.0)
    assert led.spent("adult").epsilon == 0.9


# ---- command line ------------------------------------------------------------------------------

def test_cli_release_refusal_and_show(tmp_path, adult_slice, capsys):
    data, schema = adult_slice
    led = tmp_path / "budget.sqlite"
    common = ["release", data, "--schema", schema, "-m", "laplace", "--seed", 3, "--ledger", led,
              "--dataset-id", "adult"]
    assert _cli(capsys, *common, "-e", 0.5, "--out", tmp_path / "a.csv", "--budget", 1.0)[0] == 0
    assert _cli(capsys, *common, "-e", 0.25, "--out", tmp_path / "b.csv")[0] == 0
    code, _, err = _cli(capsys, *common, "-e", 0.5, "--out", tmp_path / "c.csv", "--certificate", tmp_path / "c.json")
    assert code == 2
    assert err.strip().splitlines()[-1] == ("error: privacy budget of dataset 'adult' exceeded in epsilon: spent "
                                            "epsilon=0.75, requested epsilon=0.5, total epsilon=1, delta=0.0001; "
                                            "nothing was released")
    assert not (tmp_path / "c.csv").exists() and not (tmp_path / "c.json").exists()
    code, _, err = _cli(capsys, *common, "-e", 0.1, "--out", tmp_path / "d.csv", "--budget", 5)
    assert code == 2 and "declared with a total budget of epsilon=1" in err
    assert not (tmp_path / "d.csv").exists()

    code, out, _ = _cli(capsys, "ledger", "show", led)
    assert code == 0
    assert out.strip() == ("adult: total epsilon 1, delta 0.0001; spent 0.75, delta 0 (2 committed, 0 pending, "
                           "0 cancelled); remaining 0.25, delta 0.0001")
    code, out, _ = _cli(capsys, "ledger", "show", led, "--dataset-id", "adult")
    assert code == 0 and out.count("committed epsilon=") == 2 and "laplace" in out
    code, out, _ = _cli(capsys, "ledger", "show", led, "--json")
    (summary,) = json.loads(out)
    assert summary["epsilon_spent"] == 0.75 and summary["epsilon_remaining"] == 0.25
    assert _cli(capsys, "ledger", "show", tmp_path / "absent.sqlite")[0] == 2
    code, _, err = _cli(capsys, "ledger", "show", led, "--dataset-id", "other")
    assert code == 2 and "no budget" in err


def test_a_first_release_without_a_budget_refuses_and_makes_no_ledger(tmp_path, adult_slice, capsys):
    data, schema = adult_slice
    led = tmp_path / "budget.sqlite"
    code, _, err = _cli(capsys, "release", data, "--schema", schema, "-m", "laplace", "-e", 0.5, "--seed", 3,
                        "--ledger", led, "--dataset-id", "adult", "--out", tmp_path / "a.csv")
    assert code == 2 and err.strip().splitlines()[-1] == (
        f"error: dataset 'adult' has no budget in the ledger {led.name}: declare its total epsilon at its first "
        "release (--budget, or `privrelease ledger declare`)")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_cli_declare_delta_budget(tmp_path, capsys):
    led = tmp_path / "budget.sqlite"
    code, out, _ = _cli(capsys, "ledger", "declare", led, "--dataset-id", "census", "--epsilon", 2, "--delta", 1e-5)
    assert code == 0 and "census" in out
    assert Ledger(led).budget("census").delta == 1e-5
    code, _, err = _cli(capsys, "ledger", "declare", led, "--dataset-id", "census", "--epsilon", 3)
    assert code == 2 and "refused" in err


def test_killed_cli_release_leaves_pending_charge(tmp_path, capsys):
    """SIGKILL a real `privrelease release` process while it holds its reservation."""
    data, schema = example_paths("adult")  # the full bundled file: the release takes a few seconds
    led_path = tmp_path / "budget.sqlite"
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "privrelease.cli.app", "release", str(data), "--schema", str(schema), "-m", "laplace",
         "-e", "0.7", "--out", str(tmp_path / "killed.csv"), "--ledger", str(led_path), "--dataset-id", "adult",
         "--budget", "1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    led = Ledger(led_path)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if led.pending("adult").epsilon > 0:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the release finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(20)
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed.csv").exists()
    assert led.spent("adult").epsilon == 0.7 and led.pending("adult").epsilon == 0.7
    (entry,) = led.history("adult")

    small = tmp_path / "small.csv"
    pd.read_csv(data, nrows=100, dtype=str).to_csv(small, index=False)
    args = ["release", small, "--schema", schema, "-m", "laplace", "--seed", 0, "--ledger", led_path,
            "--dataset-id", "adult", "-e", 0.5, "--out", tmp_path / "next.csv"]
    code, _, err = _cli(capsys, *args)
    assert code == 2 and "pending epsilon=0.7" in err  # the pending charge counts as spent
    # the refusal names the pending entry and how to cancel it
    assert f"ledger entry {entry['id']} (epsilon=0.7" in err and "privrelease ledger cancel" in err
    code, out, _ = _cli(capsys, "ledger", "show", led_path, "--dataset-id", "adult")
    assert "1 pending" in out and "pending   epsilon=0.7" in out
    assert _cli(capsys, "ledger", "cancel", led_path, entry["id"], "--reason", "killed.csv does not exist")[0] == 0
    assert _cli(capsys, *args)[0] == 0
    assert (tmp_path / "next.csv").exists()
    assert led.spent("adult").epsilon == 0.5


def _interrupted_release(tmp_path, capsys, monkeypatch, where):
    """A CLI release with a ledger, interrupted by Ctrl-C during the fit or while its outputs are moved into
    place; returns (exit code, stderr, the ledger's entries)."""
    from privrelease.mechanisms.baselines.laplace import LaplaceIdentity
    from privrelease.release import transaction as tx

    data = tmp_path / "small.csv"
    pd.read_csv(example_paths("adult")[0], nrows=100, dtype=str).to_csv(data, index=False)
    if where == "fit":
        def interrupt(*a, **k):
            raise KeyboardInterrupt
        monkeypatch.setattr(LaplaceIdentity, "fit_stats", interrupt)
    else:
        real, calls = os.replace, []

        def interrupt_second_move(src, dst):
            calls.append(dst)
            if len(calls) == 2:
                raise KeyboardInterrupt
            return real(src, dst)
        monkeypatch.setattr(tx.os, "replace", interrupt_second_move)
    led_path = tmp_path / "budget.sqlite"
    code, _, err = _cli(capsys, "release", data, "--schema", example_paths("adult")[1], "-m", "laplace", "-e", 1,
                        "--seed", 0, "--out", tmp_path / "o.csv", "--certificate", tmp_path / "c.json",
                        "--ledger", led_path, "--dataset-id", "adult", "--budget", 3)
    return code, err, Ledger(led_path).history("adult")


def test_ctrl_c_before_anything_is_moved_cancels_the_charge(tmp_path, capsys, monkeypatch):
    """Pins 'interrupted: nothing was written' with the charge left pending (two Ctrl-C spent 2 of 3)."""
    code, err, (entry,) = _interrupted_release(tmp_path, capsys, monkeypatch, "fit")
    assert code == 130 and entry["status"] == "cancelled", err
    assert f"interrupted: nothing was written; ledger entry {entry['id']} cancelled (nothing was charged)" in err
    assert not (tmp_path / "o.csv").exists()


def test_ctrl_c_while_moving_outputs_leaves_the_charge_pending_and_says_so(tmp_path, capsys, monkeypatch):
    code, err, (entry,) = _interrupted_release(tmp_path, capsys, monkeypatch, "commit")
    assert code == 130 and entry["status"] == "pending", err
    assert f"ledger entry {entry['id']} stays pending" in err and "privrelease ledger cancel" in err


def test_a_pending_entry_is_named_when_the_next_release_still_fits(tmp_path, capsys):
    """Pins a pending charge counted silently by the next release."""
    from privrelease.dp.costs import PrivacyCost

    led_path = tmp_path / "budget.sqlite"
    led = Ledger(led_path)
    with pytest.raises(KeyboardInterrupt):
        with led.reserve("adult", PrivacyCost(0.5), budget=PrivacyCost(3, 1e-4)) as entry:
            raise KeyboardInterrupt  # as if killed: the caller cannot say that nothing was released
    data = tmp_path / "small.csv"
    pd.read_csv(example_paths("adult")[0], nrows=100, dtype=str).to_csv(data, index=False)
    code, _, err = _cli(capsys, "release", data, "--schema", example_paths("adult")[1], "-m", "laplace", "-e", 1,
                        "--seed", 0, "--out", tmp_path / "o.csv", "--ledger", led_path, "--dataset-id", "adult")
    assert code == 0, err
    (line,) = [ln for ln in err.splitlines() if f"ledger entry {entry} (epsilon=0.5" in ln]
    assert line.startswith("warning: ") and f"privrelease ledger cancel {led_path} {entry}" in line


def test_ctrl_c_during_a_dp_schema_draft_cancels_its_charge(tmp_path, capsys, monkeypatch):
    """The draft is printed after its charge's block: an interrupt inside it released nothing."""
    import privrelease.dp.draft as draft

    def interrupt(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(draft, "dp_draft", interrupt)
    data = tmp_path / "small.csv"
    pd.read_csv(example_paths("adult")[0], nrows=500, dtype=str).to_csv(data, index=False)
    led_path = tmp_path / "budget.sqlite"
    code, out, err = _cli(capsys, "schema", "draft", data, "--epsilon", 1, "--ledger", led_path, "--dataset-id", "a",
                          "--budget", "3,1e-4")
    (entry,) = Ledger(led_path).history("a")
    assert code == 130 and out == "" and entry["status"] == "cancelled", err
    assert "cancelled (nothing was charged)" in err

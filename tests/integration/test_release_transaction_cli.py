"""`privrelease release` as one transaction, its refusals (exit 2, one line) and the budget syntax."""

import json
import os
import sys

import pandas as pd
import pytest

from cli_helpers import run_cli
from privrelease.accounting.ledger import Ledger


def _release(capsys, data, schema, *extra, mechanism="laplace"):
    args = ["release", str(data), "--schema", str(schema), "-m", mechanism, "-e", "1", "--seed", "0",
            *[str(a) for a in extra]]
    return run_cli(args, capsys)


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


def _left(folder) -> set:
    return {p.name for p in folder.iterdir()}


# ---- issue: --budget declared a total delta of 0 -----------------------------------------------------

def test_budget_on_a_fresh_ledger_fits_the_default_mechanism(tmp_path, capsys, adult_slice):
    """First-use defect 1: `--budget 3` set a total delta of 0, so the default (epsilon, delta) mechanism
    was refused with a message blaming epsilon. A float budget now declares a total delta of min(1e-4, 1/n)."""
    data, schema = adult_slice
    led = tmp_path / "budget.sqlite"
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-e", "1", "--out", str(tmp_path / "o.csv"),
                            "--ledger", str(led), "--dataset-id", "d", "--budget", "3"], capsys)
    assert code == 0, err
    total = Ledger(led).budget("d")
    assert total.epsilon == 3 and total.delta == pytest.approx(1e-4)


def test_budget_takes_a_delta_and_the_refusal_names_delta(tmp_path, capsys, adult_slice):
    """First-use defect 1: `--budget EPS,DELTA`; a total delta of 0 is named as the cause of a refusal."""
    data, schema = adult_slice
    led = tmp_path / "budget.sqlite"
    common = ["--ledger", led, "--dataset-id", "d"]
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "a.csv", *common, "--budget", "3,0",
                            mechanism="gauss-pca")
    _one_line_error(code, err, "exceeded in delta", "total delta is 0", "--budget 3,1e-4")
    assert not (tmp_path / "a.csv").exists()
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "b.csv", "--ledger", led, "--dataset-id", "e",
                            "--budget", "3,1e-5", mechanism="gauss-pca")
    assert code == 0, err
    assert Ledger(led).budget("e").delta == 1e-5
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "c.csv", *common, "--budget", "3,x")
    _one_line_error(code, err, "EPSILON,DELTA")


def test_budget_or_dataset_id_without_ledger_is_refused(tmp_path, capsys, adult_slice):
    """Privacy defect 10 (CLI): --budget / --dataset-id without --ledger were silently ignored."""
    data, schema = adult_slice
    for extra in (["--budget", "3"], ["--dataset-id", "d"]):
        code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", *extra)
        _one_line_error(code, err, "need(s) a ledger")
        assert not (tmp_path / "o.csv").exists()


def test_non_finite_epsilon_exits_2_and_large_epsilon_warns(tmp_path, capsys, adult_slice):
    """Privacy defect 8 (CLI): --epsilon inf released laplace's input unchanged with exit 0."""
    data, schema = adult_slice
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "inf",
                            "--out", str(tmp_path / "o.csv")], capsys)
    _one_line_error(code, err, "epsilon")
    assert not (tmp_path / "o.csv").exists()
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "12",
                            "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 0 and "warning: epsilon = 12 is above 10" in err


# ---- issue: the certificate failed after the table was published and the ledger charged -------------

def test_unwritable_certificate_is_found_before_anything_happens(tmp_path, capsys, adult_slice, monkeypatch):
    """First-use defect 2: the table was published and the budget charged, then writing the certificate
    failed (exit 1); a retry spent the budget twice. Now nothing is read, charged or written."""
    from privrelease.mechanisms.baselines.laplace import LaplaceIdentity

    def never(*a, **k):
        raise AssertionError("the data were read although an output cannot be written")

    monkeypatch.setattr(LaplaceIdentity, "fit_stats", never)
    data, schema = adult_slice
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the certificate's folder should be")
    led = tmp_path / "budget.sqlite"
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--certificate", blocker / "c.json",
                            "--ledger", led, "--dataset-id", "d", "--budget", "1")
    _one_line_error(code, err, "cannot write the certificate")
    assert _left(tmp_path) - {"budget.sqlite", "budget.sqlite-wal", "budget.sqlite-shm"} == {"blocker"}
    assert Ledger(led).history("d") == []


def test_failure_while_moving_outputs_cancels_the_charge(tmp_path, capsys, adult_slice, monkeypatch):
    """First-use defect 2: table, certificate, diagnostics and ledger entry succeed together or not at all:
    a failure on the second move restores the first and cancels the charge."""
    from privrelease.release import transaction as tx

    real = os.replace
    calls = []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise PermissionError(13, "Permission denied")
        return real(src, dst)

    monkeypatch.setattr(tx.os, "replace", flaky)
    data, schema = adult_slice
    led = tmp_path / "budget.sqlite"
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--certificate", tmp_path / "c.json",
                            "--ledger", led, "--dataset-id", "d", "--budget", "1")
    _one_line_error(code, err, "cannot move the outputs into place")
    assert _left(tmp_path) - {"budget.sqlite", "budget.sqlite-wal", "budget.sqlite-shm"} == set()
    (entry,) = Ledger(led).history("d")
    assert entry["status"] == "cancelled" and Ledger(led).spent("d").epsilon == 0


def test_certificate_and_private_diagnostics_are_written_together(tmp_path, capsys, adult_slice):
    """Privacy defect 6 (CLI): the certificate holds no exact count; the diagnostics file says it is private."""
    data, schema = adult_slice
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--certificate", tmp_path / "c.json")
    assert code == 0 and "PRIVATE diagnostics" in err
    cert = json.loads((tmp_path / "c.json").read_text())
    assert "clip_counts" not in cert and "input_sha256" not in cert
    diag = tmp_path / "c.private-diagnostics.json"
    assert "PRIVATE" in diag.read_text().splitlines()[0] and "clip_counts" in json.loads(diag.read_text())
    assert diag.stat().st_mode & 0o077 == 0  # owner only


# ---- issue: --out equal to the input; silent overwrite --------------------------------------------------

def test_out_equal_to_input_is_refused(tmp_path, capsys, adult_slice):
    """First-use defect 3: `--out` equal to the input overwrote the private input."""
    data, schema = adult_slice
    copy = tmp_path / "in.csv"
    copy.write_bytes(data.read_bytes())
    code, _, err = _release(capsys, copy, schema, "--out", copy)
    _one_line_error(code, err, "is the input file")
    assert copy.read_bytes() == data.read_bytes()


def test_existing_output_needs_overwrite(tmp_path, capsys, adult_slice):
    """First-use defect 3: an existing output file was overwritten silently."""
    data, schema = adult_slice
    out = tmp_path / "o.csv"
    out.write_text("keep me")
    code, _, err = _release(capsys, data, schema, "--out", out)
    _one_line_error(code, err, "exists", "--overwrite")
    assert out.read_text() == "keep me"
    code, _, err = _release(capsys, data, schema, "--out", out, "--overwrite")
    assert code == 0, err
    assert len(pd.read_csv(out)) == 300


# ---- issue: exit 1 with raw exception names ---------------------------------------------------------------

def test_csv_named_parquet_exits_2(tmp_path, capsys, adult_slice):
    """First-use defect 4: ArrowInvalid (exit 1) for a CSV named .parquet."""
    data, schema = adult_slice
    fake = tmp_path / "in.parquet"
    fake.write_bytes(data.read_bytes())
    code, _, err = _release(capsys, fake, schema, "--out", tmp_path / "o.csv")
    _one_line_error(code, err, "cannot read", "PARQUET")
    assert "ArrowInvalid" not in err


def test_chunk_rows_zero_exits_2(tmp_path, capsys, adult_slice):
    """First-use defect 4: `ValueError: 'chunksize'` (exit 1) for --chunk-rows 0."""
    data, schema = adult_slice
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--chunk-rows", "0")
    _one_line_error(code, err, "--chunk-rows")


def test_dask_engine_without_dask_exits_2(tmp_path, capsys, adult_slice, monkeypatch):
    """First-use defect 4: ModuleNotFoundError (exit 1) for --engine dask without dask."""
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    data, schema = adult_slice
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--engine", "dask")
    _one_line_error(code, err, "dask[dataframe]")


def test_permission_error_on_the_output_folder_exits_2_before_reading(tmp_path, capsys, adult_slice, monkeypatch):
    """First-use defect 4: a PermissionError naming an internal temporary file (exit 1), found only after
    the statistics pass; now exit 2, one line naming the folder, before the data are read."""
    from privrelease.release import transaction as tx
    from privrelease.mechanisms.baselines.laplace import LaplaceIdentity

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    def never(*a, **k):
        raise AssertionError("the data were read although the output cannot be written")

    monkeypatch.setattr(tx.tempfile, "mkstemp", denied)
    monkeypatch.setattr(LaplaceIdentity, "fit_stats", never)
    data, schema = adult_slice
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv")
    _one_line_error(code, err, "cannot write the table into", "Permission denied")
    assert ".tmp" not in err


def test_n_synthetic_is_checked_before_the_data_are_read(tmp_path, capsys, adult_slice, monkeypatch):
    """A bad --n-synthetic was found only after the fit (ledger charged, then cancelled), and a row-aligned
    mechanism ignored it silently; both are refused before anything is read."""
    from privrelease.mechanisms.baselines.laplace import LaplaceIdentity

    data, schema = adult_slice
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--n-synthetic", "0",
                            mechanism="gauss-pca")
    _one_line_error(code, err, "--n-synthetic")
    monkeypatch.setattr(LaplaceIdentity, "fit_stats", lambda *a, **k: pytest.fail("the data were read"))
    code, _, err = _release(capsys, data, schema, "--out", tmp_path / "o.csv", "--n-synthetic", "10")
    _one_line_error(code, err, "synthetic mechanisms only")
    assert not (tmp_path / "o.csv").exists()

"""The persistent privacy-budget ledger: declaration, reservation, refusal, crashes, concurrency."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import time

import pytest

from privrelease.accounting import Ledger
from privrelease.errors import BudgetExceededError, ParameterError
from privrelease.dp.costs import PrivacyCost


@pytest.fixture
def led(tmp_path):
    return Ledger(tmp_path / "budget.sqlite")


def _reserve(led, ds, eps, **kw):
    with led.reserve(ds, PrivacyCost(eps), mechanism="laplace", details={"epsilon": eps}, **kw) as entry:
        return entry


# ---- declaration ---------------------------------------------------------------------------

def test_first_use_needs_a_budget(led):
    with pytest.raises(ParameterError, match="no budget"):
        _reserve(led, "adult", 0.1)
    assert led.datasets() == []


def test_budget_is_stored_and_reused(led):
    _reserve(led, "adult", 0.1, budget=1.0)
    _reserve(led, "adult", 0.1)  # no budget: the stored one
    _reserve(led, "adult", 0.1, budget=1.0)  # the same one: accepted
    assert led.budget("adult") == PrivacyCost(1.0, 0.0)
    assert led.spent("adult").epsilon == pytest.approx(0.3)


def test_different_budget_is_refused_and_nothing_charged(led):
    _reserve(led, "adult", 0.1, budget=1.0)
    with pytest.raises(ParameterError, match="declared with a total budget of epsilon=1"):
        _reserve(led, "adult", 0.1, budget=2.0)
    with pytest.raises(ParameterError):
        _reserve(led, "adult", 0.1, budget=PrivacyCost(1.0, 1e-5))  # a delta differs from the stored 0
    assert led.spent("adult").epsilon == pytest.approx(0.1)
    assert len(led.history("adult")) == 1


def test_float_budget_matches_epsilon_of_a_declared_delta_budget(led):
    led.declare("census", PrivacyCost(2.0, 1e-5))
    with led.reserve("census", PrivacyCost(0.5, 1e-6), budget=2.0):
        pass
    assert led.spent("census") == PrivacyCost(0.5, 1e-6)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan"), "1", True, PrivacyCost(1.0, 1.0)])
def test_invalid_budgets(led, bad):
    with pytest.raises(ParameterError):
        _reserve(led, "adult", 0.1, budget=bad)


def test_invalid_charges(led):
    with pytest.raises(ParameterError):
        with led.reserve("adult", 0.1, budget=1.0):
            pass
    with pytest.raises(ParameterError, match="finite"):
        with led.reserve("adult", PrivacyCost(float("inf")), budget=1.0):
            pass
    with pytest.raises(ParameterError, match="dataset id"):
        with led.reserve("", PrivacyCost(0.1), budget=1.0):
            pass
    assert led.history("adult") == []


# ---- reservation and refusal ------------------------------------------------------------------

def test_history_records_what_was_released(led):
    entry = _reserve(led, "adult", 0.25, budget=1.0)
    (h,) = led.history("adult")
    assert h["id"] == entry and h["status"] == "committed"
    assert h["mechanism"] == "laplace" and h["details"] == {"epsilon": 0.25}
    assert h["epsilon"] == 0.25 and h["delta"] == 0.0
    assert h["created_utc"] <= h["finished_utc"] and h["pid"] == os.getpid()
    assert led.datasets() == ["adult"]
    assert led.remaining("adult").epsilon == pytest.approx(0.75)


def test_row_is_pending_inside_the_block(led):
    with led.reserve("adult", PrivacyCost(0.4), budget=1.0):
        assert [h["status"] for h in led.history("adult")] == ["pending"]
        assert led.spent("adult").epsilon == 0.4 and led.pending("adult").epsilon == 0.4
    assert led.pending("adult").epsilon == 0.0


def test_refusal_message_and_nothing_recorded(led):
    _reserve(led, "adult", 0.7, budget=1.0)
    ran = []
    with pytest.raises(BudgetExceededError) as info:
        with led.reserve("adult", PrivacyCost(0.4)):
            ran.append(1)
    msg = str(info.value)
    assert "\n" not in msg
    assert "spent epsilon=0.7" in msg and "requested epsilon=0.4" in msg and "total epsilon=1" in msg
    assert ran == []  # the block never ran
    assert len(led.history("adult")) == 1


def test_total_equals_declared_budget_exactly(led):
    for _ in range(10):
        _reserve(led, "a", 0.1, budget=1.0)  # 0.1 * 10 rounds below 1.0 in floating point
    for _ in range(3):
        _reserve(led, "b", 0.1, budget=0.3)  # and 0.1 * 3 rounds above 0.3: the tolerance accepts both
    assert led.spent("a").epsilon == pytest.approx(1.0, abs=1e-12)
    assert led.spent("b").epsilon == pytest.approx(0.3, abs=1e-12)
    for ds in ("a", "b"):
        with pytest.raises(BudgetExceededError):
            _reserve(led, ds, 1e-6)  # anything above the float slack is refused
    assert led.remaining("a").epsilon == pytest.approx(0.0, abs=1e-12)


def test_delta_budget(led):
    _reserve(led, "pure", 0.1, budget=1.0)
    with pytest.raises(BudgetExceededError, match="delta"):
        with led.reserve("pure", PrivacyCost(0.1, 1e-6)):  # a float budget declares delta = 0
            pass
    led.declare("approx", PrivacyCost(1.0, 1e-5))
    with led.reserve("approx", PrivacyCost(0.2, 6e-6)):
        pass
    with pytest.raises(BudgetExceededError, match="requested epsilon=0.2, delta=6e-06"):
        with led.reserve("approx", PrivacyCost(0.2, 6e-6)):
            pass
    assert led.spent("approx") == PrivacyCost(0.2, 6e-6)


def test_datasets_are_independent(led):
    _reserve(led, "a", 1.0, budget=1.0)
    _reserve(led, "b", 1.0, budget=1.0)
    assert led.datasets() == ["a", "b"]


# ---- failures, interrupts, crashes ---------------------------------------------------------------

def test_failure_inside_block_cancels(led):
    with pytest.raises(RuntimeError, match="boom"):
        with led.reserve("adult", PrivacyCost(0.9), budget=1.0):
            raise RuntimeError("boom")
    (h,) = led.history("adult")
    assert h["status"] == "cancelled" and "boom" in h["note"]
    assert led.spent("adult").epsilon == 0.0
    _reserve(led, "adult", 0.9)  # the budget is still there


def test_interrupt_before_anything_left_the_process_cancels(led):
    """Pins an interrupt that kept the charge although the caller knew that nothing was released."""
    with pytest.raises(KeyboardInterrupt) as exc:
        with led.reserve("adult", PrivacyCost(0.6), budget=1.0, released=lambda: False) as entry:
            raise KeyboardInterrupt
    (h,) = led.history("adult")
    assert h["status"] == "cancelled" and led.spent("adult").epsilon == 0.0
    assert exc.value.__notes__ == [f"ledger entry {entry} cancelled (nothing was charged)"]


def test_interrupt_leaves_pending_which_counts_and_can_be_cancelled(led):
    with pytest.raises(KeyboardInterrupt):
        with led.reserve("adult", PrivacyCost(0.6), budget=1.0):
            raise KeyboardInterrupt
    (h,) = led.history("adult")
    assert h["status"] == "pending" and "interrupted" in h["note"]
    with pytest.raises(BudgetExceededError, match="pending epsilon=0.6"):
        _reserve(led, "adult", 0.6)
    with pytest.raises(ParameterError, match="reason"):
        led.cancel_pending(h["id"], "")
    led.cancel_pending(h["id"], "checked: no output file")
    assert led.spent("adult").epsilon == 0.0
    entry = _reserve(led, "adult", 0.6)
    with pytest.raises(ParameterError, match="only pending"):
        led.cancel_pending(entry, "committed entries are permanent")
    with pytest.raises(ParameterError, match="no entry"):
        led.cancel_pending(999, "x")


def _die_inside(path, ready):
    led = Ledger(path)
    with led.reserve("adult", PrivacyCost(0.5), budget=1.0, mechanism="jiang-pca"):
        ready.set()
        time.sleep(60)  # killed here, before any output exists or is committed


def _ctx():
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def test_killed_process_leaves_pending_charge(tmp_path):
    path = tmp_path / "budget.sqlite"
    ctx = _ctx()
    ready = ctx.Event()
    proc = ctx.Process(target=_die_inside, args=(str(path), ready))
    proc.start()
    try:
        assert ready.wait(20)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.join(20)
    assert proc.exitcode == -signal.SIGKILL
    led = Ledger(path)
    (h,) = led.history("adult")
    assert h["status"] == "pending" and h["finished_utc"] is None
    assert led.spent("adult").epsilon == 0.5
    with pytest.raises(BudgetExceededError):
        _reserve(led, "adult", 0.6)
    _reserve(led, "adult", 0.5)
    assert led.remaining("adult").epsilon == 0.0


# ---- concurrency ---------------------------------------------------------------------------------

def _worker(path, start, results, declare):
    led = Ledger(path)
    start.wait()
    try:
        with led.reserve("adult", PrivacyCost(0.3), budget=1.0 if declare else None, mechanism="laplace"):
            time.sleep(0.3)  # hold the reservation while the others try
        results.put("ok")
    except BudgetExceededError:
        results.put("refused")
    except Exception as exc:  # pragma: no cover - reported to the parent
        results.put(f"error: {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("declare_in_workers", [False, True], ids=["declared", "racing-declaration"])
def test_concurrent_processes_never_overspend(tmp_path, declare_in_workers):
    path = tmp_path / "budget.sqlite"
    led = Ledger(path)
    if not declare_in_workers:
        led.declare("adult", 1.0)
    ctx = _ctx()
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(str(path), start, results, declare_in_workers)) for _ in range(8)]
    for p in procs:
        p.start()
    start.set()
    peak = 0.0
    deadline = time.monotonic() + 30
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        peak = max(peak, led.spent("adult").epsilon)  # includes pending reservations
        time.sleep(0.01)
    for p in procs:
        p.join(10)
    outcomes = sorted(results.get(timeout=5) for _ in procs)
    assert outcomes == ["ok"] * 3 + ["refused"] * 5, outcomes
    assert peak <= 1.0 + 1e-9
    assert led.spent("adult").epsilon == pytest.approx(0.9)
    assert [h["status"] for h in led.history("adult")] == ["committed"] * 3
    assert led.datasets() == ["adult"]


# ---- files ----------------------------------------------------------------------------------------

def test_reading_an_absent_ledger_creates_nothing(tmp_path):
    led = Ledger(tmp_path / "none.sqlite")
    assert led.datasets() == [] and led.history("x") == [] and led.spent("x") == PrivacyCost(0.0)
    with pytest.raises(ParameterError, match="no budget"):
        led.remaining("x")
    assert not (tmp_path / "none.sqlite").exists()


def test_bad_paths(tmp_path):
    with pytest.raises(ParameterError, match="directory"):
        Ledger(tmp_path)
    with pytest.raises(ParameterError, match="does not exist"):
        Ledger(tmp_path / "missing" / "budget.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ParameterError, match="not a privrelease ledger"):
        _reserve(Ledger(junk), "a", 0.1, budget=1.0)
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(ParameterError, match="not a privrelease ledger"):
        _reserve(Ledger(other), "a", 0.1, budget=1.0)


def test_wal_mode_and_persistence(tmp_path):
    path = tmp_path / "budget.sqlite"
    _reserve(Ledger(path), "adult", 0.2, budget=1.0)
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    assert Ledger(path).spent("adult").epsilon == 0.2  # a new object (process) sees the charge


def _create_and_declare(path, start, results):
    start.wait()
    try:
        Ledger(path).declare("adult", 1.0)
        results.put("ok")
    except Exception as exc:  # pragma: no cover - reported to the parent
        results.put(f"error: {type(exc).__name__}: {exc}")


def test_many_processes_creating_one_new_ledger(tmp_path):
    """Switching a new file to WAL reports 'locked' without waiting; creators must retry, not fail."""
    ctx = _ctx()
    for r in range(3):
        path, start, results = str(tmp_path / f"new{r}.sqlite"), ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_create_and_declare, args=(path, start, results)) for _ in range(12)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(60)
        assert sorted(results.get(timeout=5) for _ in procs) == ["ok"] * 12

"""A persistent privacy-budget ledger in one SQLite file (stdlib ``sqlite3``).

A data custodian keeps one ledger file per set of protected datasets; every release
of a dataset is recorded in it and refused when it would overspend the dataset's
declared total budget.

Semantics
---------
Budget declaration
    The total budget of a dataset is declared at its *first* use (``budget`` is then
    required) and stored. ``budget`` is a float (a total epsilon; the total delta is
    then 0, so only pure epsilon-DP releases fit unless a delta is declared) or a
    :class:`~privrelease.dp.costs.PrivacyCost` (total epsilon and delta).
    A later call without ``budget`` uses the stored total. A later call with a budget
    is accepted only if it equals the stored one (a float is compared with the stored
    epsilon only, a PrivacyCost with both); anything else is refused with a
    :class:`~privrelease.errors.ParameterError`: a declared budget is never raised or
    lowered through a release.

Composition
    Sequential (basic) composition: the epsilons and the deltas of all releases of a
    dataset add (:func:`~privrelease.dp.costs.sequential`). This is valid
    for any mix of mechanisms and neighbouring relations on the same data; it is not
    the tightest bound for many Gaussian releases.

Reservation protocol (:meth:`Ledger.reserve`)
    In one ``BEGIN IMMEDIATE`` transaction (a write lock held across the check and
    the insert, so concurrent processes serialise) the ledger checks
    ``spent + pending + cost <= total`` (epsilon and delta separately, with a relative
    tolerance of 1e-9 for floating-point rounding) and inserts a ``pending`` row,
    BEFORE the caller computes or writes any output. Then:

    * the block completes -> the row becomes ``committed``;
    * the block raises an :class:`Exception` -> the row becomes ``cancelled``
      (the release code writes its output atomically as its last step, so nothing
      was released and nothing is charged);
    * the block is interrupted (``KeyboardInterrupt``, ``SystemExit``) -> the row
      becomes ``cancelled`` when the caller says that nothing has left the process yet
      (``released``, a callable asked at the interrupt, returns False: no output was
      moved into place); otherwise it stays ``pending`` with a note, because the
      interrupt may have come after an output was moved into place. Either way the
      interrupt carries a note (``__notes__``) saying which, for the user's message;
    * the process dies inside the block -> the row stays ``pending``; the next
      reservation of the dataset names it and ``privrelease ledger cancel`` (in its
      refusal, or in a :class:`~privrelease.errors.BudgetWarning` when it still fits).

    ``pending`` rows count as spent (conservative: their output may exist). A
    custodian who has checked that no output of a pending entry exists may cancel it
    with :meth:`Ledger.cancel_pending` (``privrelease ledger cancel``); committed
    entries can never be cancelled.

Refusal
    :class:`~privrelease.errors.BudgetExceededError` with a one-line message giving
    spent (committed + pending), requested and total; nothing is inserted.

Storage
    WAL journal mode and a busy timeout (default 60 s) so several processes on one
    machine can share a ledger; SQLite locking is unreliable on network file systems,
    so keep the ledger on a local disk. Every entry records the UTC timestamps of its
    reservation and resolution, the mechanism name, its parameters as JSON, the
    status, the process id and the host name. The file itself (tables, format mark, WAL,
    connections) is :mod:`.ledger_file`.

Examples
--------
>>> import os, tempfile
>>> from privrelease.dp.costs import PrivacyCost
>>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
>>> led = Ledger(path)
>>> with led.reserve("adult", PrivacyCost(0.4), budget=1.0, mechanism="laplace"):
...     pass  # fit and write the output here
>>> led.spent("adult").epsilon, round(led.remaining("adult").epsilon, 12)
(0.4, 0.6)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import socket
import sqlite3
import warnings
from pathlib import Path

from ..errors import BudgetExceededError, BudgetWarning, ParameterError
from ..dp.costs import ZERO, PrivacyCost, sequential
from .ledger_file import connect, has_tables, immediate

__all__ = ["Ledger", "PENDING", "COMMITTED", "CANCELLED"]

PENDING, COMMITTED, CANCELLED = "pending", "committed", "cancelled"
REL_TOL = 1e-9  # floating-point slack of the budget check (relative to the total)
ABS_TOL = 1e-15

def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def _fmt(c: PrivacyCost) -> str:
    s = f"epsilon={c.epsilon:.6g}"
    return s + (f", delta={c.delta:.3g}" if c.delta else "")


def _check_dataset_id(dataset_id) -> str:
    if not isinstance(dataset_id, str) or not dataset_id.strip():
        raise ParameterError(f"a ledger needs a non-empty dataset id, got {dataset_id!r}")
    return dataset_id


def _as_budget(budget) -> tuple[PrivacyCost, bool]:
    """Normalise a declared budget; the flag says whether a delta was given."""
    if isinstance(budget, PrivacyCost):
        eps, delta, has_delta = budget.epsilon, budget.delta, True
    elif isinstance(budget, (int, float)) and not isinstance(budget, bool):
        eps, delta, has_delta = float(budget), 0.0, False
    else:
        raise ParameterError(f"a budget must be a number (total epsilon) or a PrivacyCost, got {budget!r}")
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"a total budget epsilon must be a finite number > 0, got {eps}")
    if not (0 <= delta < 1):
        raise ParameterError(f"a total budget delta must be in [0, 1), got {delta}")
    return PrivacyCost(eps, delta), has_delta


def _check_cost(cost) -> PrivacyCost:
    if not isinstance(cost, PrivacyCost):
        raise ParameterError(f"a ledger charge must be a PrivacyCost, got {type(cost).__name__}")
    if not math.isfinite(cost.epsilon):
        raise ParameterError("a ledger can only record finite-epsilon releases")
    return PrivacyCost(float(cost.epsilon), float(cost.delta))


def _delta_cause(used: PrivacyCost, cost: PrivacyCost, total: PrivacyCost) -> str:
    """The exceeded part when only delta is over (named so that a zero total delta is not a mystery)."""
    if total.delta == 0:
        return (f" in delta (the dataset's total delta is 0, so a release with delta={cost.delta:.3g} never fits: "
                f"declare a total delta, e.g. --budget {total.epsilon:g},1e-4 at the first release or `privrelease "
                f"ledger declare --delta`)")
    return f" in delta (spent delta={used.delta:.3g} + requested {cost.delta:.3g} > total {total.delta:.3g})"


def _fits(used: float, request: float, total: float) -> bool:
    return used + request <= total + REL_TOL * total + ABS_TOL


class Ledger:
    """Persistent per-dataset privacy budget in a SQLite file (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The ledger file; created (with its tables) at the first write. Its folder must exist.
    timeout : float
        Seconds a process waits for another one's write lock before failing.

    Notes
    -----
    A Ledger object holds only the path: every method opens and closes its own
    connection, so one object can be shared by threads and forked processes.
    """

    def __init__(self, path, timeout: float = 60.0):
        self.path = Path(path)
        if self.path.is_dir():
            raise ParameterError(f"ledger path {self.path} is a directory; give a file such as budget.sqlite")
        if not self.path.parent.is_dir():
            raise ParameterError(f"the folder of the ledger {self.path} does not exist")
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # ---- connections ------------------------------------------------------------

    def _connect(self, write: bool):
        """A connection to the ledger file, as a context (see :func:`.ledger_file.connect`)."""
        return connect(self.path, self.timeout, write)

    # ---- budgets ------------------------------------------------------------------

    @staticmethod
    def _stored_budget(con, dataset_id) -> PrivacyCost | None:
        row = con.execute("SELECT epsilon_total, delta_total FROM datasets WHERE dataset_id = ?",
                          (dataset_id,)).fetchone()
        return None if row is None else PrivacyCost(row[0], row[1])

    def _no_budget(self, dataset_id) -> str:
        return (f"dataset '{dataset_id}' has no budget in the ledger {self.path.name}: declare its total "
                f"epsilon at its first release (--budget, or `privrelease ledger declare`)")

    def _resolve_budget(self, con, dataset_id, budget) -> PrivacyCost:
        """Inside a write transaction: the stored budget, declaring it at the first use."""
        stored = self._stored_budget(con, dataset_id)
        if budget is None:
            if stored is None:
                raise ParameterError(self._no_budget(dataset_id))
            return stored
        want, has_delta = _as_budget(budget)
        if stored is None:
            con.execute("INSERT INTO datasets(dataset_id, epsilon_total, delta_total, created_utc) "
                        "VALUES (?, ?, ?, ?)", (dataset_id, want.epsilon, want.delta, _now()))
            return want
        same = math.isclose(want.epsilon, stored.epsilon, rel_tol=1e-12, abs_tol=0.0) and (
            not has_delta or math.isclose(want.delta, stored.delta, rel_tol=1e-12, abs_tol=0.0))
        if not same:
            raise ParameterError(
                f"dataset '{dataset_id}' was declared with a total budget of {_fmt(stored)}; a different budget "
                f"({_fmt(want)}) is refused (omit the budget to use the declared one)")
        return stored

    def declare(self, dataset_id: str, budget) -> PrivacyCost:
        """Declare the total budget of a new dataset (or confirm the stored one); return it."""
        dataset_id = _check_dataset_id(dataset_id)
        if budget is None:
            raise ParameterError("declare needs a budget (total epsilon, or a PrivacyCost)")
        with self._connect(write=True) as con, immediate(con):
            return self._resolve_budget(con, dataset_id, budget)

    def budget(self, dataset_id: str) -> PrivacyCost | None:
        """The declared total budget of a dataset, or None if it was never declared."""
        with self._connect(write=False) as con:
            return None if con is None or not has_tables(con) else self._stored_budget(con, dataset_id)

    # ---- charging -------------------------------------------------------------------

    @staticmethod
    def _costs(con, dataset_id, statuses) -> PrivacyCost:
        marks = ",".join("?" * len(statuses))
        rows = con.execute(f"SELECT epsilon, delta FROM entries WHERE dataset_id = ? AND status IN ({marks}) "
                           "ORDER BY id", (dataset_id, *statuses)).fetchall()
        return sequential(*(PrivacyCost(r[0], r[1]) for r in rows))

    @contextlib.contextmanager
    def reserve(self, dataset_id: str, cost: PrivacyCost, *, budget=None, mechanism: str | None = None,
                details: dict | None = None, released=lambda: True):
        """Reserve ``cost`` for a release of ``dataset_id``; yields the entry id.

        Raises BudgetExceededError (nothing recorded) when committed + pending + cost
        exceeds the dataset's total. ``released`` is asked on an interrupt: False (nothing
        left the process) cancels the entry. See the module docstring for what happens to
        the reservation when the block completes, raises or is interrupted.
        """
        dataset_id = _check_dataset_id(dataset_id)
        cost = _check_cost(cost)
        try:
            details_json = json.dumps(details if details is not None else {}, sort_keys=True, default=str)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"ledger details must be JSON-serialisable: {exc}") from None
        if budget is None and not self.path.exists():  # refused before the file is made: a refusal leaves nothing
            raise ParameterError(self._no_budget(dataset_id))
        with self._connect(write=True) as con, immediate(con):
            total = self._resolve_budget(con, dataset_id, budget)
            used = self._costs(con, dataset_id, (COMMITTED, PENDING))
            eps_ok = _fits(used.epsilon, cost.epsilon, total.epsilon)
            pending = self._pending_entries(con, dataset_id)
            if not (eps_ok and _fits(used.delta, cost.delta, total.delta)):
                pend = self._costs(con, dataset_id, (PENDING,))
                raise BudgetExceededError(
                    f"privacy budget of dataset '{dataset_id}' exceeded"
                    + ("" if eps_ok else " in epsilon") + (_delta_cause(used, cost, total) if eps_ok else "")
                    + f": spent {_fmt(used)}"
                    + (f" (of which pending {_fmt(pend)})" if pend.epsilon or pend.delta else "")
                    + f", requested {_fmt(cost)}, total {_fmt(total)}; nothing was released"
                    + self._pending_advice(pending))
            cur = con.execute(
                "INSERT INTO entries(dataset_id, epsilon, delta, mechanism, details, status, created_utc, pid, "
                "host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (dataset_id, cost.epsilon, cost.delta, mechanism, details_json, PENDING, _now(), os.getpid(),
                 socket.gethostname()))
            entry_id = cur.lastrowid
        if pending:
            warnings.warn(f"dataset '{dataset_id}':" + self._pending_advice(pending)[1:], BudgetWarning,
                          stacklevel=3)
        try:
            yield entry_id
        except Exception as exc:
            self._finish(entry_id, CANCELLED, f"release failed: {type(exc).__name__}: {exc}"[:500])
            raise
        except BaseException as exc:
            self._interrupted(entry_id, exc, released)
            raise
        self._finish(entry_id, COMMITTED, None)

    def _interrupted(self, entry_id: int, exc: BaseException, released) -> None:
        """An interrupt inside a reservation: cancel the entry when nothing was released, else leave it pending;
        note on the interrupt which of the two happened."""
        if not released():
            self._finish(entry_id, CANCELLED, f"interrupted ({type(exc).__name__}) before any output was moved "
                                              f"into place")
            exc.add_note(f"ledger entry {entry_id} cancelled (nothing was charged)")
            return
        self._finish(entry_id, PENDING, f"interrupted ({type(exc).__name__}); output may exist: check, then "
                                        f"`privrelease ledger cancel` if none was written")
        exc.add_note(f"ledger entry {entry_id} stays pending (an output may have been moved into place): check, "
                     f"then `privrelease ledger cancel {self.path} {entry_id} --reason ...` if none exists")

    @staticmethod
    def _pending_entries(con, dataset_id) -> list:
        return con.execute("SELECT id, epsilon, delta, created_utc, pid, host FROM entries WHERE dataset_id = ? "
                           "AND status = ? ORDER BY id", (dataset_id, PENDING)).fetchall()

    def _pending_advice(self, pending: list) -> str:
        """``; entry N ... is pending ...``: the pending entries (left by a release that was killed or is still
        running) and how to cancel one whose output does not exist; empty when none is pending."""
        if not pending:
            return ""
        shown = ", ".join(f"{r[0]} ({_fmt(PrivacyCost(r[1], r[2]))}, reserved {r[3][:19]} by process {r[4]} on "
                          f"{r[5]})" for r in pending[:3]) + (", ..." if len(pending) > 3 else "")
        first = pending[0][0]
        return (f"; ledger entr{'y' if len(pending) == 1 else 'ies'} {shown} "
                f"{'is' if len(pending) == 1 else 'are'} pending and count{'s' if len(pending) == 1 else ''} as "
                f"spent: left by a release that was killed or is still running; if none of its output exists, "
                f"`privrelease ledger cancel {self.path} {first} --reason ...`")

    def _finish(self, entry_id: int, status: str, note: str | None):
        """Resolve a pending entry; on failure leave it pending (counted as spent) and warn."""
        try:
            with self._connect(write=True) as con, immediate(con):
                con.execute("UPDATE entries SET status = ?, finished_utc = ?, note = ? WHERE id = ? AND status = ?",
                            (status, None if status == PENDING else _now(), note, entry_id, PENDING))
        except (sqlite3.Error, ParameterError) as exc:
            warnings.warn(f"ledger entry {entry_id} could not be marked {status} ({exc}); it stays pending and "
                          f"counts as spent", RuntimeWarning, stacklevel=3)

    def cancel_pending(self, entry_id: int, reason: str) -> None:
        """Cancel a pending entry whose output the custodian has checked does not exist.

        Only ``pending`` entries (left by a crash or an interrupt) can be cancelled;
        committed entries are permanent. The reason is kept in the entry's note.
        """
        if not reason or not str(reason).strip():
            raise ParameterError("cancelling a pending entry needs a reason (what was checked)")
        with self._connect(write=True) as con, immediate(con):
            row = con.execute("SELECT status FROM entries WHERE id = ?", (int(entry_id),)).fetchone()
            if row is None:
                raise ParameterError(f"the ledger has no entry {entry_id}")
            if row[0] != PENDING:
                raise ParameterError(f"entry {entry_id} is {row[0]}; only pending entries can be cancelled")
            con.execute("UPDATE entries SET status = ?, finished_utc = ?, note = ? WHERE id = ?",
                        (CANCELLED, _now(), f"cancelled by custodian: {reason}", int(entry_id)))

    # ---- reading ------------------------------------------------------------------------

    def spent(self, dataset_id: str) -> PrivacyCost:
        """Sequential composition of the committed and pending entries of a dataset."""
        with self._connect(write=False) as con:
            if con is None or not has_tables(con):
                return ZERO
            return self._costs(con, dataset_id, (COMMITTED, PENDING))

    def pending(self, dataset_id: str) -> PrivacyCost:
        """The part of :meth:`spent` that is still pending."""
        with self._connect(write=False) as con:
            if con is None or not has_tables(con):
                return ZERO
            return self._costs(con, dataset_id, (PENDING,))

    def remaining(self, dataset_id: str) -> PrivacyCost:
        """Declared total minus spent (never negative); ParameterError if never declared."""
        with self._connect(write=False) as con:
            total = None if con is None or not has_tables(con) else self._stored_budget(con, dataset_id)
            if total is None:
                raise ParameterError(f"dataset '{dataset_id}' has no budget in the ledger {self.path.name}")
            used = self._costs(con, dataset_id, (COMMITTED, PENDING))
        return PrivacyCost(max(0.0, total.epsilon - used.epsilon), max(0.0, total.delta - used.delta))

    def history(self, dataset_id: str) -> list[dict]:
        """Every entry of a dataset, oldest first (cancelled ones included, with their status)."""
        with self._connect(write=False) as con:
            if con is None or not has_tables(con):
                return []
            rows = con.execute("SELECT * FROM entries WHERE dataset_id = ? ORDER BY id", (dataset_id,)).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            try:
                d["details"] = json.loads(d["details"]) if d["details"] else {}
            except ValueError:
                pass
            out.append(d)
        return out

    def datasets(self) -> list[str]:
        """The ids of every dataset with a declared budget, sorted."""
        with self._connect(write=False) as con:
            if con is None or not has_tables(con):
                return []
            return [r[0] for r in con.execute("SELECT dataset_id FROM datasets ORDER BY dataset_id")]

    def summary(self, dataset_id: str) -> dict:
        """Total, spent, pending and remaining of a dataset as plain numbers (for reports and the CLI)."""
        total = self.budget(dataset_id)
        if total is None:
            raise ParameterError(f"dataset '{dataset_id}' has no budget in the ledger {self.path.name}")
        hist = self.history(dataset_id)
        used = sequential(*(PrivacyCost(h["epsilon"], h["delta"]) for h in hist if h["status"] != CANCELLED))
        pend = sequential(*(PrivacyCost(h["epsilon"], h["delta"]) for h in hist if h["status"] == PENDING))
        return {
            "dataset_id": dataset_id,
            "epsilon_total": total.epsilon, "delta_total": total.delta,
            "epsilon_spent": used.epsilon, "delta_spent": used.delta,
            "epsilon_pending": pend.epsilon, "delta_pending": pend.delta,
            "epsilon_remaining": max(0.0, total.epsilon - used.epsilon),
            "delta_remaining": max(0.0, total.delta - used.delta),
            "n_committed": sum(h["status"] == COMMITTED for h in hist),
            "n_pending": sum(h["status"] == PENDING for h in hist),
            "n_cancelled": sum(h["status"] == CANCELLED for h in hist),
        }

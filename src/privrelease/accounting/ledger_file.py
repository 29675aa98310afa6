"""The SQLite file of a :class:`~privrelease.accounting.ledger.Ledger`: its tables and format mark,
WAL mode, connections and write transactions.

The budget rules (declaration, composition, reservation) live in :mod:`.ledger`; this module
only knows how the file is laid out and opened. A file is a privrelease ledger when its
``meta`` table says ``format = privrelease-ledger``; a version newer than
:data:`FORMAT_VERSION` is refused. Tables are created at the first write, inside one
``BEGIN IMMEDIATE`` transaction, so processes that create the same ledger together agree.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Iterator

from ..errors import ParameterError

FORMAT = "privrelease-ledger"
FORMAT_VERSION = 1

TABLES = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id    TEXT PRIMARY KEY,
    epsilon_total REAL NOT NULL,
    delta_total   REAL NOT NULL,
    created_utc   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id   TEXT NOT NULL REFERENCES datasets(dataset_id),
    epsilon      REAL NOT NULL,
    delta        REAL NOT NULL,
    mechanism    TEXT,
    details      TEXT,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'committed', 'cancelled')),
    created_utc  TEXT NOT NULL,
    finished_utc TEXT,
    pid          INTEGER,
    host         TEXT,
    note         TEXT
);
CREATE INDEX IF NOT EXISTS entries_dataset ON entries(dataset_id, status);
"""


@contextlib.contextmanager
def connect(path: Path, timeout: float, write: bool) -> Iterator[sqlite3.Connection | None]:
    """A connection in autocommit mode (transactions are explicit); None if absent for reads.

    A write connection creates the tables if needed; every connection checks the format.
    """
    if not write and not path.exists():
        yield None
        return
    try:
        con = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise ParameterError(f"cannot open the ledger {path}: {exc}") from None
    try:
        con.row_factory = sqlite3.Row
        con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if write:
            _initialise(con, path, timeout)
        else:
            check_format(con, path)
        yield con
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise ParameterError(f"{path} is not a privrelease ledger ({exc})") from None
        raise
    finally:
        con.close()


@contextlib.contextmanager
def immediate(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A ``BEGIN IMMEDIATE`` write transaction: committed when the block completes, rolled back when it
    raises (anything, interrupts included)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _initialise(con: sqlite3.Connection, path: Path, timeout: float):
    _enable_wal(con, timeout)
    con.execute("PRAGMA synchronous = FULL")
    if has_tables(con):
        check_format(con, path)
        return
    with immediate(con):
        check_format(con, path)  # refuse a foreign SQLite database before adding tables to it
        # statement by statement: executescript would commit the transaction
        for stmt in filter(str.strip, TABLES.split(";")):
            con.execute(stmt)
        con.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?)", (FORMAT,))
        con.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('version', ?)", (str(FORMAT_VERSION),))
    check_format(con, path)


def _enable_wal(con: sqlite3.Connection, timeout: float):
    """Switch the file to WAL mode, retrying while another process holds a lock.

    Changing the journal mode needs an exclusive lock and SQLite reports "database is
    locked" at once instead of calling the busy handler, so processes that create the
    same new ledger together must retry (with jitter) until one of them has switched it.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            if str(con.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            con.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay * (0.5 + os.urandom(1)[0] / 256))  # jitter: no global RNG
            delay = min(delay * 2, 0.2)


def has_tables(con) -> bool:
    """Whether the ledger's three tables exist (a new file has none until its first write)."""
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {"meta", "datasets", "entries"} <= names


def check_format(con, path: Path):
    """Refuse a file that is not a privrelease ledger, or one of a newer format version."""
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names:
        return  # empty database: nothing recorded yet
    if "meta" not in names:
        raise ParameterError(f"{path} is an SQLite file but not a privrelease ledger")
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("format") != FORMAT:
        raise ParameterError(f"{path} is an SQLite file but not a privrelease ledger")
    if int(meta.get("version", 0)) > FORMAT_VERSION:
        raise ParameterError(f"ledger {path} has format version {meta['version']}; "
                             f"this privrelease reads up to {FORMAT_VERSION}")

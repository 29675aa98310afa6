"""What every command of the command line shares: the run's state and small argument helpers.

Only light imports here (``privrelease --help`` must not load the numerical stack); the
commands import the library inside their bodies.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import List

import typer

STATE = {"debug": False, "bar": None}  # --debug, and the progress bar a warning must end first


@contextlib.contextmanager
def interrupt_notes():
    """Keep what the ledger noted on a Ctrl-C (charge cancelled, or left pending) for the exit message."""
    try:
        yield
    except KeyboardInterrupt as exc:
        STATE["interrupt_notes"] = list(getattr(exc, "__notes__", []))
        raise


def err(msg: str, code: int = 2):
    """Stop the command with the one-line ``error: MSG`` and exit code ``code``."""
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def parse_params(items: List[str]) -> dict:
    """``--param key=value`` items as a dict (values read as YAML scalars, dashes in keys as underscores)."""
    import yaml

    params = {}
    for item in items or []:
        if "=" not in item:
            err(f"--param expects key=value, got '{item}'")
        k, v = item.split("=", 1)
        try:
            params[k.strip().replace("-", "_")] = yaml.safe_load(v)
        except yaml.YAMLError:
            params[k.strip().replace("-", "_")] = v
    return params


def number_pair(text: str, what: str) -> tuple[float, float]:
    """``"lo,hi"`` as two floats (``what`` names the option in the error)."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        err(f"{what} expects two numbers lo,hi, got '{text}'")
    return lo, hi


def open_ledger(path: Path, must_exist: bool = True):
    """The ledger at ``path`` (an error when it must exist and does not)."""
    from ..accounting.ledger import Ledger

    if must_exist and not path.exists():
        err(f"no ledger at {path}")
    return Ledger(path)


def example_inputs(example, real, released, schema, test):
    """REAL, RELEASED, schema and test file: the bundled ones with ``--example`` (then only RELEASED is given)."""
    if example is not None:
        from ..datasets import example_paths

        if schema is not None or test is not None or (real is not None and released is not None):
            err("with --example give only RELEASED (the real table, schema and test file are the bundled ones)")
        released = released or real
        real, schema = example_paths(example)
        test = example_paths(example, "test")[0]
    if real is None or released is None or schema is None:
        err("give REAL RELEASED --schema SCHEMA.yaml (or --example adult RELEASED)")
    return real, released, schema, test

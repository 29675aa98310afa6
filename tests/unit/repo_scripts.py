"""Loading the repository's scripts (scripts/, benchmarks/) as modules in the tests."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_script(relpath: str):
    """The module of ``ROOT/relpath``; skips when the repository's scripts are not present."""
    path = ROOT / relpath
    if not path.exists():
        pytest.skip(f"{relpath} not present (installed package without the repository)")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

"""README's mechanism table is generated from the registry and must not drift from it."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "update_readme_table.py"


def _load():
    if not SCRIPT.exists():
        pytest.skip("scripts/ not present (installed package without the repository)")
    spec = importlib.util.spec_from_file_location("update_readme_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_table_matches_registry():
    mod = _load()
    text = mod.README.read_text(encoding="utf-8")
    assert mod.updated(text) == text, "README.md mechanism table is stale: run python scripts/update_readme_table.py"


def test_table_lists_every_mechanism_with_a_known_guarantee():
    from privrelease.mechanisms import list_mechanisms

    table = _load().render_table()
    for cls in list_mechanisms():
        assert f"`{cls.name}`" in table
        assert cls.guarantee in {"epsilon-DP", "(epsilon,delta)-DP", "distributional", "none (empirical)"}

"""README's mechanism table is generated from the registry and must not drift from it."""

from repo_scripts import load_script


def _load():
    return load_script("scripts/update_readme_table.py")


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

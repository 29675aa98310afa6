"""The comparison of the default with MST and AIM: one results file, and the README's and the docs'
tables rendered from it (scripts/update_comparison.py)."""

import copy
import json

from repo_scripts import load_script


def _load():
    return load_script("scripts/update_comparison.py")


def _block(mod, text):
    return text[text.index(mod.START) + len(mod.START):text.index(mod.END)].strip()


def test_results_file_is_built_from_the_committed_runs():
    mod = _load()
    on_disk = json.loads(mod.OUT.read_text(encoding="utf-8"))
    assert on_disk == json.loads(mod._dump(mod.build())), f"{mod.OUT.name} is stale: run {mod.BUILD_COMMAND}"


def test_every_source_names_its_commit_and_command():
    mod = _load()
    sources = json.loads(mod.OUT.read_text(encoding="utf-8"))["sources"]
    assert set(sources) == set(mod.SOURCES)
    for s in sources.values():
        assert len(s["commit"]) >= 7 and s["command"].startswith("PYTHONPATH=src python benchmarks/bench_mixed.py")


def test_readme_and_docs_tables_match_the_results_file():
    mod = _load()
    table = mod.render(json.loads(mod.OUT.read_text(encoding="utf-8")))
    for page in mod.PAGES:
        assert _block(mod, page.read_text(encoding="utf-8")) == table, \
            f"{page.name}'s comparison table disagrees with {mod.OUT.name}: run {mod.BUILD_COMMAND}"


def test_a_changed_number_is_caught():
    mod = _load()
    comparison = json.loads(mod.OUT.read_text(encoding="utf-8"))
    doctored = copy.deepcopy(comparison)
    row = doctored["tables"]["adult"]["releases"][0]
    row["metrics"]["tvd_2way"][0] += 0.001
    readme = mod.PAGES[0].read_text(encoding="utf-8")
    assert _block(mod, readme) != mod.render(doctored)
    assert json.loads(mod._dump(mod.build())) != doctored

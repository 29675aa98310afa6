"""Relative links in the README, CONTRIBUTING.md and docs/ point at files that exist (the docs site's
own build, ``mkdocs build --strict`` in .ci/run, checks the links between its pages; this also covers
the README's links into docs/ and the repository)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    if not page.exists():
        pytest.skip(f"{page.name} not present (installed package without the repository)")
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        path = target.split("#")[0]
        if path and not re.match(r"[a-z]+:", path) and not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"

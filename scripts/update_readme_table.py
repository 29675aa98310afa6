"""Regenerate the mechanism table in README.md from the mechanism registry.

The table between ``<!-- MECHANISM-TABLE -->`` and ``<!-- /MECHANISM-TABLE -->`` is
produced from ``Mechanism.info()`` of every registered mechanism, so the README
states exactly the guarantee and neighbouring relation the code declares.

Usage::

    python scripts/update_readme_table.py          # rewrite README.md in place
    python scripts/update_readme_table.py --check  # exit 1 if README.md is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

START, END = "<!-- MECHANISM-TABLE -->", "<!-- /MECHANISM-TABLE -->"
README = Path(__file__).resolve().parents[1] / "README.md"


def render_table() -> str:
    from privrelease.mechanisms import list_mechanisms

    rows = ["| name | guarantee | neighbouring relation | output | what it does |",
            "| --- | --- | --- | --- | --- |"]
    for cls in list_mechanisms():
        i = cls.info()
        cells = [f"`{i['name']}`", i["guarantee"], i["neighbouring_relation"], i["output"], i["summary"]]
        rows.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def updated(text: str) -> str:
    a, b = text.index(START) + len(START), text.index(END)
    return text[:a] + "\n" + render_table() + "\n" + text[b:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    args = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = updated(text)
    if args.check:
        if new != text:
            print("README.md mechanism table is stale: run python scripts/update_readme_table.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        tmp = README.with_suffix(".md.tmp")
        tmp.write_text(new, encoding="utf-8")
        tmp.replace(README)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

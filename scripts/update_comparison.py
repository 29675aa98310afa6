"""Build the comparison of the default with MST and AIM, and write its table into the README and the docs.

One results file, ``benchmarks/results/comparison.json``, holds the numbers: it is built from the
latest ``benchmarks/bench_mixed.py`` runs committed in ``benchmarks/results/`` (each source named
with the commit and the command that produced it), and the table between
``<!-- COMPARISON-TABLE -->`` and ``<!-- /COMPARISON-TABLE -->`` in ``README.md`` and in
``docs/benchmarks.md`` is rendered from that file alone. ``tests/unit/test_comparison_table.py``
fails when the file and its sources, or the tables and the file, disagree.

Usage::

    python scripts/update_comparison.py           # rebuild comparison.json, rewrite both tables
    python scripts/update_comparison.py --check   # exit 1 if anything is stale

When a new ``bench_mixed.py`` run lands, point ``SOURCES`` and ``ROWS`` at it and run the script.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = RESULTS / "comparison.json"
PAGES = (ROOT / "README.md", ROOT / "docs" / "benchmarks.md")
START, END = "<!-- COMPARISON-TABLE -->", "<!-- /COMPARISON-TABLE -->"
BUILD_COMMAND = "python scripts/update_comparison.py"

#: The bench_mixed.py result files the comparison reads, by a short name used in the table.
SOURCES = {
    "graphical-census": "graphical_census.json",  # the default (graphical model) beside MST
    "graphical-tables": "graphical_tables.json",  # the same on Adult, Diabetes 130-US and the census cut
    "graphical-adult-aim": "graphical_adult_aim.json",  # Adult: AIM (mbi 2.0) beside the default of d8b98ff
    "peers-same-run": "mixed_peers_same_run.json",  # OpenDP's AIM on Adult; AIM on Diabetes (did not finish)
    "census-small": "mixed_census_small.json",    # AIM on the Adult-shaped census-income cut
    "graphical-wide": "graphical_wide.json",      # the generated 101-column table: the default beside MST
}

#: The tables and, per table, the releases shown: (label, source, key in the source's releases).
TABLES = {
    "adult": ("Adult (bundled)", [
        ("gauss-copula (default)", "graphical-tables", "gauss-copula"),
        ("MST, mbi 2.0", "graphical-tables", "mst-mbi2"),
        ("AIM, mbi 2.0", "graphical-adult-aim", "aim-mbi2"),
        ("AIM, OpenDP 0.16", "peers-same-run", "aim-opendp"),
    ]),
    "diabetes130": ("Diabetes 130-US (bundled schema)", [
        ("gauss-copula (default)", "graphical-tables", "gauss-copula"),
        ("MST, mbi 2.0", "graphical-tables", "mst-mbi2"),
        ("AIM, mbi 2.0", "peers-same-run", "aim-mbi2"),
    ]),
    "census_small": ("census-income, Adult-shaped cut (tuning)", [
        ("gauss-copula (default)", "graphical-tables", "gauss-copula"),
        ("MST, mbi 2.0", "graphical-tables", "mst-mbi2"),
        ("AIM, mbi 2.0", "census-small", "aim-mbi2"),
    ]),
    "census_kdd": ("census-income (tuning)", [
        ("gauss-copula (default)", "graphical-census", "gauss-copula"),
        ("MST, mbi 2.0", "graphical-census", "mst-mbi2"),
    ]),
    "wide_mixed": ("generated from four factors (tuning)", [
        ("gauss-copula (default)", "graphical-wide", "gauss-copula"),
        ("MST, mbi 2.0", "graphical-wide", "mst-mbi2"),
    ]),
}

#: The columns of the table: (metric in the results, header, decimals).
METRICS = (
    ("lr_auc", "LR AUC", 3), ("gbdt_auc", "GBDT AUC", 3), ("tvd_1way", "1-way TVD", 4),
    ("tvd_2way", "2-way TVD", 4), ("tvd_3way", "3-way TVD", 4), ("ks_max", "KS worst column", 3),
    ("sdm_column_pair_trends", "pair trends", 3), ("cpu_seconds", "CPU s", 2),
    ("peak_rss_mb", "peak RSS MB", 0),
)

#: Streamed peak memory of the default, measured apart (bench_mixed.py does not record the peak
#: memory of the releases it runs in its own process).
STREAMED_MEMORY = {
    "commit": "87038a0",
    "command": "PYTHONPATH=src python benchmarks/bench_memory.py --mechanism gauss-copula "
               "--n 100000 300000 1000000 --p 10 --categorical 10",
    "table": "generated Parquet, 10 numeric and 10 categorical columns, chunks of 50,000 rows",
    "peak_rss_mb": {"100000": 724, "300000": 727, "1000000": 739},
    "record": "docs/history/mixed-pairs.md, \"Memory and passes\"",
}


def _source_info(name: str, result: dict) -> dict:
    cfg = result["config"]
    return {"file": f"benchmarks/results/{SOURCES[name]}", "commit": cfg["versions"].get("git_commit"),
            "command": "PYTHONPATH=src python benchmarks/" + cfg["command"], "started_utc": cfg["started_utc"],
            "machine": cfg.get("machine"), "epsilon": cfg["epsilon"], "delta": cfg["delta"],
            "peer_versions": cfg.get("peer_versions", {})}


def _mean_sd(values: list) -> list | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return [statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0]


def _release(label: str, source: str, entry: dict | None) -> dict:
    runs = (entry or {}).get("runs", [])
    ok = [r for r in runs if r.get("status") == "ok"]
    row = {"release": label, "source": source, "status": "ok" if ok else "did not finish",
           "statuses": sorted({r.get("status") for r in runs}) or ["not run"],
           "seeds": [r["seed"] for r in ok], "metrics": {}}
    for key, _, _ in METRICS:
        if key in ("cpu_seconds", "peak_rss_mb"):
            row["metrics"][key] = _mean_sd([r.get(key) for r in ok])
        else:
            row["metrics"][key] = _mean_sd([r["metrics"].get(key) for r in ok])
    return row


def build() -> dict:
    """The comparison, from the committed bench_mixed.py results alone."""
    results = {name: json.loads((RESULTS / file).read_text(encoding="utf-8")) for name, file in SOURCES.items()}
    tables = {}
    for key, (title, rows) in TABLES.items():
        first = results[rows[0][1]]["datasets"][key]
        tables[key] = {
            "title": f"{title}, {first['n_train']:,} records, {first['n_columns']} columns", "n_train": first["n_train"], "n_columns": first["n_columns"],
            "majority_rate": first["majority_rate"],
            "real": {"lr_auc": first["real"]["logistic_regression"]["auc"],
                     "gbdt_auc": first["real"]["gradient_boosting"]["auc"]},
            "releases": [_release(label, src, results[src]["datasets"].get(key, {}).get("releases", {}).get(name))
                         for label, src, name in rows],
        }
    return {
        "about": "The default against MST and AIM at epsilon 1, delta 1e-6 (benchmarks/bench_mixed.py): "
                 "mean and sample sd over the seeds that finished; CPU is the release's own process.",
        "built_by": BUILD_COMMAND,
        "sources": {name: _source_info(name, result) for name, result in results.items()},
        "tables": tables,
        "streamed_memory_of_the_default": STREAMED_MEMORY,
    }


def _cell(value: list | None, decimals: int) -> str:
    if value is None:
        return "-"
    mean, sd = value
    if decimals == 0:
        return f"{mean:,.0f}" + (f" ± {sd:,.0f}" if sd else "")
    return f"{mean:.{decimals}f} ± {sd:.{decimals}f}"


def render(comparison: dict) -> str:
    """The markdown table of ``comparison`` (the README and docs/benchmarks.md both show it)."""
    head = ["table", "release", "seeds", *(h for _, h, _ in METRICS), "commit"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 3 + ["---:"] * len(METRICS) + ["---"]) + " |"]
    for table in comparison["tables"].values():
        real = ["-"] * len(METRICS)
        real[0], real[1] = f"{table['real']['lr_auc']:.3f}", f"{table['real']['gbdt_auc']:.3f}"
        lines.append(f"| {table['title']} | train on the real data | - | " + " | ".join(real) + " | - |")
        for row in table["releases"]:
            commit = comparison["sources"][row["source"]]["commit"]
            name = f"**{row['release']}**" if "default" in row["release"] else row["release"]
            if row["status"] != "ok":
                what = ", ".join(row["statuses"])
                lines.append(f"| | {name} | none finished ({what}) | " + " | ".join(["-"] * len(METRICS))
                             + f" | {commit} |")
                continue
            seeds = ",".join(str(s) for s in row["seeds"])
            cells = [_cell(row["metrics"][k], d) for k, _, d in METRICS]
            lines.append(f"| | {name} | {seeds} | " + " | ".join(cells) + f" | {commit} |")
    return "\n".join(lines)


def updated(text: str, table: str) -> str:
    """``text`` with the block between the comparison markers replaced by ``table``."""
    a, b = text.index(START) + len(START), text.index(END)
    return text[:a] + "\n" + table + "\n" + text[b:]


def _dump(comparison: dict) -> str:
    return json.dumps(comparison, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the file and the tables are up to date")
    args = ap.parse_args(argv)
    comparison = build()
    files = {OUT: _dump(comparison)}
    table = render(comparison)
    for page in PAGES:
        files[page] = updated(page.read_text(encoding="utf-8"), table)
    stale = [p for p, new in files.items() if not p.exists() or p.read_text(encoding="utf-8") != new]
    if args.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is stale: run {BUILD_COMMAND}", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(files[p], encoding="utf-8")
        tmp.replace(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
